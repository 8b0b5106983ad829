/*
 * softdpu — DOCA logging (DOCA 2.2 shape).
 *
 * Messages carry a verbosity level and a log source (one per source file,
 * registered by DOCA_LOG_REGISTER). Every logging backend (a FILE*, a file
 * descriptor, a caller buffer or syslog) shows a message when its level lies
 * between the backend's upper limit (least verbose level shown, CRIT by
 * default) and its lower limit (most verbose level shown, INFO by default).
 * Library-internal (SDK) messages are filtered by a separate global SDK limit.
 */
#ifndef DOCA_LOG_H_
#define DOCA_LOG_H_

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "doca_compat.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Verbosity levels, from the least verbose to the most verbose. */
enum doca_log_level {
	DOCA_LOG_LEVEL_DISABLE = 10, /**< show nothing */
	DOCA_LOG_LEVEL_CRIT = 20,    /**< critical */
	DOCA_LOG_LEVEL_ERROR = 30,   /**< error */
	DOCA_LOG_LEVEL_WARNING = 40, /**< warning */
	DOCA_LOG_LEVEL_INFO = 50,    /**< information */
	DOCA_LOG_LEVEL_DEBUG = 60,   /**< debug */
	DOCA_LOG_LEVEL_TRACE = 70,   /**< trace */
};

/** A destination for log records (opaque). */
struct doca_logger_backend;

/** Called by a buffer backend once a record has been written to its buffer. */
typedef void (*log_flush_callback)(char *buffer);

/* ---- global limits -------------------------------------------------------------------------------------------- */

/** Most verbose level shown for application messages, applied to every backend. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_level_set_global_lower_limit(uint32_t lower_limit);

/** Least verbose level shown for application messages, applied to every backend. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_level_set_global_upper_limit(uint32_t upper_limit);

DOCA_EXPERIMENTAL
uint32_t doca_log_level_get_global_lower_limit(void);

DOCA_EXPERIMENTAL
uint32_t doca_log_level_get_global_upper_limit(void);

/** Most verbose level shown for SDK (library-internal) messages. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_level_set_global_sdk_limit(uint32_t level);

DOCA_EXPERIMENTAL
uint32_t doca_log_level_get_global_sdk_limit(void);

/** DOCA 2.0 names of the global lower limit. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_global_level_set(uint32_t level);

DOCA_EXPERIMENTAL
uint32_t doca_log_global_level_get(void);

/* ---- per-backend limits --------------------------------------------------------------------------------------- */

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_lower_limit(struct doca_logger_backend *logger, uint32_t lower_limit);

DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_upper_limit(struct doca_logger_backend *logger, uint32_t upper_limit);

/** Freeze the lower limit: later changes may make the backend less verbose, never more. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_lower_limit_strict(struct doca_logger_backend *logger);

/** Freeze the upper limit: later changes may hide more severe levels, never show them. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_level_upper_limit_strict(struct doca_logger_backend *logger);

/** Most verbose SDK message level this backend shows (the global SDK limit applies too). */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_set_sdk_level(struct doca_logger_backend *logger, uint32_t level);

/** DOCA 2.0 name of doca_log_backend_set_level_lower_limit(). */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_level_set(struct doca_logger_backend *logger, uint32_t level);

/* ---- sources -------------------------------------------------------------------------------------------------- */

/** Register a log source name (e.g. "DPI::Parser"); prefer DOCA_LOG_REGISTER. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_source_register(const char *source_name, int *source);

/** Release a log source id. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_source_destroy(int source);

/* ---- backends ------------------------------------------------------------------------------------------------- */

/** stdout shows global lower limit .. INFO, stderr shows WARNING .. global upper limit. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_create_standard_backend(void);

DOCA_EXPERIMENTAL
doca_error_t doca_log_create_file_backend(FILE *fptr, struct doca_logger_backend **backend);

DOCA_EXPERIMENTAL
doca_error_t doca_log_create_fd_backend(int fd, struct doca_logger_backend **backend);

/** Each record is written (NUL-terminated, truncated to capacity) at the start of buffer, then handler(buffer). */
DOCA_EXPERIMENTAL
doca_error_t doca_log_create_buffer_backend(char *buffer, size_t capacity, log_flush_callback handler,
					    struct doca_logger_backend **backend);

DOCA_EXPERIMENTAL
doca_error_t doca_log_create_syslog_backend(const char *name, struct doca_logger_backend **backend);

/** softdpu extension: detach and free a backend (all remaining backends are freed at exit). */
DOCA_EXPERIMENTAL
doca_error_t doca_log_backend_destroy(struct doca_logger_backend *backend);

/* ---- rate limiting -------------------------------------------------------------------------------------------- */

/** Length in seconds of a rate-limit window. */
DOCA_EXPERIMENTAL
uint16_t doca_log_get_bucket_time(void);

DOCA_EXPERIMENTAL
void doca_log_set_bucket_time(uint16_t bucket_time);

/** Messages a bucket lets through per window. */
DOCA_EXPERIMENTAL
uint16_t doca_log_get_quantity(void);

DOCA_EXPERIMENTAL
void doca_log_set_quantity(uint16_t quantity);

DOCA_EXPERIMENTAL
doca_error_t doca_log_rate_bucket_register(int source, int *bucket);

/* ---- emitting (use the macros below) -------------------------------------------------------------------------- */

DOCA_EXPERIMENTAL
doca_error_t priv_doca_log_developer(uint32_t level, int source, const char *fname, int line, const char *func,
				     const char *format, ...) __attribute__((format(printf, 6, 7)));

DOCA_EXPERIMENTAL
doca_error_t priv_doca_log_rate_limit(uint32_t level, int source, const char *fname, int line, const char *func,
				      int bucket, const char *format, ...) __attribute__((format(printf, 7, 8)));

/* Older names (DOCA 1.x to 2.2) for the two above, without the file and function of the call site. */
DOCA_EXPERIMENTAL
doca_error_t doca_log_developer(uint32_t level, int source, int line, const char *format, ...)
	__attribute__((format(printf, 4, 5)));

DOCA_EXPERIMENTAL
doca_error_t doca_log_rate_limit(uint32_t level, int source, int line, int bucket, const char *format, ...)
	__attribute__((format(printf, 5, 6)));

/**
 * Declare the log source of this file: a static id registered before main()
 * and released at exit. Use once per source file, at file scope.
 */
#define DOCA_LOG_REGISTER(SOURCE)                                                                                      \
	static int log_source = -1;                                                                                    \
	__attribute__((constructor(65535), used)) static void priv_doca_log_source_ctor(void)                          \
	{                                                                                                              \
		(void)doca_log_source_register(#SOURCE, &log_source);                                                  \
	}                                                                                                              \
	__attribute__((destructor(65535), used)) static void priv_doca_log_source_dtor(void)                           \
	{                                                                                                              \
		(void)doca_log_source_destroy(log_source);                                                             \
	}                                                                                                              \
	typedef int priv_doca_log_register_needs_semicolon_

/* The format string travels inside __VA_ARGS__ so that a bare DOCA_LOG_INFO("text") is valid ISO C. */
#define DOCA_LOG(level, ...) priv_doca_log_developer((level), log_source, __FILE__, __LINE__, __func__, __VA_ARGS__)

#define DOCA_LOG_CRIT(...) DOCA_LOG(DOCA_LOG_LEVEL_CRIT, __VA_ARGS__)
#define DOCA_LOG_ERR(...) DOCA_LOG(DOCA_LOG_LEVEL_ERROR, __VA_ARGS__)
#define DOCA_LOG_WARN(...) DOCA_LOG(DOCA_LOG_LEVEL_WARNING, __VA_ARGS__)
#define DOCA_LOG_INFO(...) DOCA_LOG(DOCA_LOG_LEVEL_INFO, __VA_ARGS__)
#define DOCA_LOG_DBG(...) DOCA_LOG(DOCA_LOG_LEVEL_DEBUG, __VA_ARGS__)

#ifdef DOCA_LOGGING_ALLOW_TRACE
#define DOCA_LOG_TRC(...) DOCA_LOG(DOCA_LOG_LEVEL_TRACE, __VA_ARGS__)
#else
/* Trace messages compile away unless DOCA_LOGGING_ALLOW_TRACE is defined. */
#define DOCA_LOG_TRC(...)                                                                                              \
	do {                                                                                                           \
	} while (0)
#endif

/*
 * Development messages: compiled in only when DOCA_LOGGING_ALLOW_DLOG is defined. Otherwise the call is
 * never made and its arguments are not evaluated, but the format is still checked against them.
 */
#ifdef DOCA_LOGGING_ALLOW_DLOG
#define DOCA_DLOG(level, ...) DOCA_LOG(level, __VA_ARGS__)
#else
#define DOCA_DLOG(level, ...)                                                                                          \
	do {                                                                                                           \
		if (0)                                                                                                 \
			DOCA_LOG(level, __VA_ARGS__);                                                                  \
	} while (0)
#endif

#define DOCA_DLOG_CRIT(...) DOCA_DLOG(DOCA_LOG_LEVEL_CRIT, __VA_ARGS__)
#define DOCA_DLOG_ERR(...) DOCA_DLOG(DOCA_LOG_LEVEL_ERROR, __VA_ARGS__)
#define DOCA_DLOG_WARN(...) DOCA_DLOG(DOCA_LOG_LEVEL_WARNING, __VA_ARGS__)
#define DOCA_DLOG_INFO(...) DOCA_DLOG(DOCA_LOG_LEVEL_INFO, __VA_ARGS__)
#define DOCA_DLOG_DBG(...) DOCA_DLOG(DOCA_LOG_LEVEL_DEBUG, __VA_ARGS__)

/* At most doca_log_get_quantity() messages per doca_log_get_bucket_time() seconds from this call site. */
#define DOCA_LOG_RATE_LIMIT(level, ...)                                                                                \
	do {                                                                                                           \
		static int priv_doca_log_bucket_ = -1;                                                                 \
		if (priv_doca_log_bucket_ == -1)                                                                       \
			(void)doca_log_rate_bucket_register(log_source, &priv_doca_log_bucket_);                       \
		priv_doca_log_rate_limit((level), log_source, __FILE__, __LINE__, __func__, priv_doca_log_bucket_,     \
					 __VA_ARGS__);                                                                 \
	} while (0)

#define DOCA_LOG_RATE_LIMIT_CRIT(...) DOCA_LOG_RATE_LIMIT(DOCA_LOG_LEVEL_CRIT, __VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_ERR(...) DOCA_LOG_RATE_LIMIT(DOCA_LOG_LEVEL_ERROR, __VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_WARN(...) DOCA_LOG_RATE_LIMIT(DOCA_LOG_LEVEL_WARNING, __VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_INFO(...) DOCA_LOG_RATE_LIMIT(DOCA_LOG_LEVEL_INFO, __VA_ARGS__)
#define DOCA_LOG_RATE_LIMIT_DBG(...) DOCA_LOG_RATE_LIMIT(DOCA_LOG_LEVEL_DEBUG, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif /* DOCA_LOG_H_ */
