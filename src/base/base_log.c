/*
 * base_log — message routing to the plugged-in sink, or to stderr.
 */
#include "base_log.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "base_config.h"

static _Atomic(base_log_sink_fn) base_sink;

void base_log_set_sink(base_log_sink_fn sink)
{
	atomic_store_explicit(&base_sink, sink, memory_order_release);
}

void base_log_set_default_sink(base_log_sink_fn sink)
{
	base_log_sink_fn none = NULL;

	atomic_compare_exchange_strong_explicit(&base_sink, &none, sink, memory_order_acq_rel, memory_order_acquire);
}

static const char *level_tag(int level)
{
	return level <= BASE_LOG_CRIT ? "CRIT" : "ERR";
}

void base_vlog(int level, const char *func, const char *fmt, va_list ap)
{
	base_log_sink_fn sink = atomic_load_explicit(&base_sink, memory_order_acquire);
	char line[1024];

	if (sink != NULL) {
		sink(level, func, fmt, ap);
		return;
	}
	if (level > BASE_LOG_ERROR)
		return;
	/* One write per message, so lines of concurrent threads do not interleave. */
	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "[softdpu][%s][%s] %s\n", level_tag(level), func != NULL ? func : "?", line);
}

/* The tag of the message being logged on this thread (base_log_tagged), for the stderr sink. */
static __thread const char *base_log_cur_tag;

void base_log_stderr(const char *lib, int level, const char *func, const char *fmt, va_list ap)
{
	uint32_t limit = BASE_LOG_WARNING;
	char line[512];

	base_config_log_level(&limit);
	if ((uint32_t)level > limit)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	fprintf(stderr, "[softdpu][%s][%s] %s\n", base_log_cur_tag != NULL ? base_log_cur_tag : lib,
		func != NULL ? func : "?", line);
}

void base_log(int level, const char *func, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	base_vlog(level, func, fmt, ap);
	va_end(ap);
}

void base_log_tagged(const char *tag, int level, const char *func, const char *fmt, ...)
{
	const char *outer = base_log_cur_tag;
	va_list ap;

	base_log_cur_tag = tag;
	va_start(ap, fmt);
	base_vlog(level, func, fmt, ap);
	va_end(ap);
	base_log_cur_tag = outer;
}

bool base_log_level_parse(const char *text, uint32_t *level)
{
	static const struct {
		const char *name;
		uint32_t level;
	} names[] = {
		{ "disable", BASE_LOG_DISABLE }, { "crit", BASE_LOG_CRIT },	  { "critical", BASE_LOG_CRIT },
		{ "error", BASE_LOG_ERROR },	 { "err", BASE_LOG_ERROR },	  { "warning", BASE_LOG_WARNING },
		{ "warn", BASE_LOG_WARNING },	 { "info", BASE_LOG_INFO },	  { "debug", BASE_LOG_DEBUG },
		{ "dbg", BASE_LOG_DEBUG },	 { "trace", BASE_LOG_TRACE },	  { "trc", BASE_LOG_TRACE },
	};
	char *end;
	long value;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcasecmp(text, names[i].name) == 0) {
			*level = names[i].level;
			return true;
		}
	}
	value = strtol(text, &end, 10);
	if (end == text || *end != '\0' || value < BASE_LOG_DISABLE || value > BASE_LOG_TRACE || value % 10 != 0)
		return false;
	*level = (uint32_t)value;
	return true;
}
