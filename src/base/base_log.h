/*
 * base_log — the one logging entry of every layer.
 *
 * hw, fabric and the API families log through base_log(); where a message
 * ends up is decided by a sink an upper layer plugs in (the DOCA log library
 * installs one that applies the SDK log limit). Without a sink, errors and
 * critical messages go to stderr so that nothing serious is lost, and the
 * rest is dropped.
 */
#ifndef BASE_LOG_H_
#define BASE_LOG_H_

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

/* Lower is more severe; the numbers are the ones SOFTDPU_LOG_LEVEL accepts. */
enum base_log_level {
	BASE_LOG_DISABLE = 10, /* a limit only: nothing is shown */
	BASE_LOG_CRIT = 20,
	BASE_LOG_ERROR = 30,
	BASE_LOG_WARNING = 40,
	BASE_LOG_INFO = 50,
	BASE_LOG_DEBUG = 60,
	BASE_LOG_TRACE = 70,
};

typedef void (*base_log_sink_fn)(int level, const char *func, const char *fmt, va_list ap);

/* Routes every later message to sink (NULL: back to the stderr fallback). */
void base_log_set_sink(base_log_sink_fn sink);

/*
 * Installs sink only where no sink is plugged yet. The verbs libraries use
 * it: in a process that also loads the DOCA library, the DOCA log (whose
 * constructor may run first or second) stays where every message goes.
 */
void base_log_set_default_sink(base_log_sink_fn sink);

/*
 * A stderr sink for a library without a log of its own (verbs, FlexIO):
 * messages up to SOFTDPU_LOG_LEVEL (default: warnings), one line each,
 * "[softdpu][lib][func] text".
 */
void base_log_stderr(const char *lib, int level, const char *func, const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

void base_log(int level, const char *func, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void base_vlog(int level, const char *func, const char *fmt, va_list ap) __attribute__((format(printf, 3, 0)));

/* Parses a level number ("30") or name ("error", "warn", ...); false when it is neither. */
bool base_log_level_parse(const char *text, uint32_t *level);

/*
 * A message of library tag: the stderr sink names tag in its line whichever
 * library plugged the sink (one sink serves the whole process). A library
 * defines BASE_LOG_TAG (its build's c_args) for the macros below to use it.
 */
void base_log_tagged(const char *tag, int level, const char *func, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#ifdef BASE_LOG_TAG
#define BASE_LOG_AT(level, ...) base_log_tagged(BASE_LOG_TAG, level, __func__, __VA_ARGS__)
#else
#define BASE_LOG_AT(level, ...) base_log(level, __func__, __VA_ARGS__)
#endif

#define BASE_CRIT(...) BASE_LOG_AT(BASE_LOG_CRIT, __VA_ARGS__)
#define BASE_ERR(...) BASE_LOG_AT(BASE_LOG_ERROR, __VA_ARGS__)
#define BASE_WARN(...) BASE_LOG_AT(BASE_LOG_WARNING, __VA_ARGS__)
#define BASE_INFO(...) BASE_LOG_AT(BASE_LOG_INFO, __VA_ARGS__)
#define BASE_DBG(...) BASE_LOG_AT(BASE_LOG_DEBUG, __VA_ARGS__)

#endif /* BASE_LOG_H_ */
