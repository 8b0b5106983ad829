/*
 * DOCA log core: global limits, log sources, record formatting and dispatch,
 * and the sink through which the messages of every layer (base_log) reach
 * the SDK log limit.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "base_config.h"
#include "base_log.h"
#include "log_priv.h"

struct dlog_source {
	bool used;
	bool sdk;
	char name[DLOG_NAME_MAX];
};

struct dlog_state dlog_g = {
	.lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
	.lower = DOCA_LOG_LEVEL_INFO,
	.upper = DOCA_LOG_LEVEL_CRIT,
	.sdk = DOCA_LOG_LEVEL_ERROR,
	.sdk_source = -1,
};

static struct dlog_source dlog_sources[DLOG_MAX_SOURCES];
static pthread_once_t dlog_once = PTHREAD_ONCE_INIT;

static const char *const dlog_level_tags[] = { "DISABLE", "CRIT", "ERR", "WARN", "INFO", "DBG", "TRC" };

bool dlog_level_valid(uint32_t level)
{
	return level >= DOCA_LOG_LEVEL_DISABLE && level <= DOCA_LOG_LEVEL_TRACE && level % 10 == 0;
}

/* A message carries a real level; DISABLE only makes sense as a limit. */
bool dlog_msg_level_valid(uint32_t level)
{
	return dlog_level_valid(level) && level != DOCA_LOG_LEVEL_DISABLE;
}

static const char *dlog_level_tag(uint32_t level)
{
	return dlog_level_tags[level / 10 - 1];
}

/* The DOCA levels are base's levels: SOFTDPU_LOG_LEVEL and the layers' messages use the same numbers. */
_Static_assert((int)DOCA_LOG_LEVEL_DISABLE == (int)BASE_LOG_DISABLE && (int)DOCA_LOG_LEVEL_CRIT == (int)BASE_LOG_CRIT &&
		       (int)DOCA_LOG_LEVEL_ERROR == (int)BASE_LOG_ERROR &&
		       (int)DOCA_LOG_LEVEL_WARNING == (int)BASE_LOG_WARNING &&
		       (int)DOCA_LOG_LEVEL_INFO == (int)BASE_LOG_INFO && (int)DOCA_LOG_LEVEL_DEBUG == (int)BASE_LOG_DEBUG &&
		       (int)DOCA_LOG_LEVEL_TRACE == (int)BASE_LOG_TRACE,
	       "DOCA log levels and base log levels must have the same values");

static int dlog_source_alloc(const char *name, bool sdk)
{
	int i;

	for (i = 0; i < DLOG_MAX_SOURCES; i++) {
		if (dlog_sources[i].used)
			continue;
		dlog_sources[i].used = true;
		dlog_sources[i].sdk = sdk;
		snprintf(dlog_sources[i].name, sizeof(dlog_sources[i].name), "%s", name);
		return i;
	}
	return -1;
}

static void dlog_init_once(void)
{
	uint32_t level;

	if (base_config_log_level(&level)) {
		dlog_g.lower = level;
		dlog_g.sdk = level;
	}
	if (base_config_sdk_log_level(&level))
		dlog_g.sdk = level;
	dlog_g.sdk_source = dlog_source_alloc(DLOG_SDK_SOURCE_NAME, true);
}

void dlog_ensure_init(void)
{
	pthread_once(&dlog_once, dlog_init_once);
}

bool dlog_source_valid(int source)
{
	return source >= 0 && source < DLOG_MAX_SOURCES && dlog_sources[source].used;
}

__attribute__((destructor)) static void dlog_fini(void)
{
	pthread_mutex_lock(&dlog_g.lock);
	dlog_backends_free_all();
	pthread_mutex_unlock(&dlog_g.lock);
}

/* ---- global limits ------------------------------------------------------------------------------------------- */

doca_error_t doca_log_level_set_global_lower_limit(uint32_t lower_limit)
{
	struct doca_logger_backend *b;

	if (!dlog_level_valid(lower_limit))
		return DOCA_ERROR_INVALID_VALUE;
	dlog_ensure_init();
	pthread_mutex_lock(&dlog_g.lock);
	__atomic_store_n(&dlog_g.lower, lower_limit, __ATOMIC_RELAXED);
	for (b = dlog_g.backends; b != NULL; b = b->next)
		(void)dlog_backend_apply_lower(b, lower_limit, true);
	pthread_mutex_unlock(&dlog_g.lock);
	return DOCA_SUCCESS;
}

doca_error_t doca_log_level_set_global_upper_limit(uint32_t upper_limit)
{
	struct doca_logger_backend *b;

	if (!dlog_level_valid(upper_limit))
		return DOCA_ERROR_INVALID_VALUE;
	dlog_ensure_init();
	pthread_mutex_lock(&dlog_g.lock);
	__atomic_store_n(&dlog_g.upper, upper_limit, __ATOMIC_RELAXED);
	for (b = dlog_g.backends; b != NULL; b = b->next)
		(void)dlog_backend_apply_upper(b, upper_limit, true);
	pthread_mutex_unlock(&dlog_g.lock);
	return DOCA_SUCCESS;
}

uint32_t doca_log_level_get_global_lower_limit(void)
{
	dlog_ensure_init();
	return __atomic_load_n(&dlog_g.lower, __ATOMIC_RELAXED);
}

uint32_t doca_log_level_get_global_upper_limit(void)
{
	dlog_ensure_init();
	return __atomic_load_n(&dlog_g.upper, __ATOMIC_RELAXED);
}

doca_error_t doca_log_level_set_global_sdk_limit(uint32_t level)
{
	if (!dlog_level_valid(level))
		return DOCA_ERROR_INVALID_VALUE;
	dlog_ensure_init();
	__atomic_store_n(&dlog_g.sdk, level, __ATOMIC_RELAXED);
	return DOCA_SUCCESS;
}

uint32_t doca_log_level_get_global_sdk_limit(void)
{
	dlog_ensure_init();
	return __atomic_load_n(&dlog_g.sdk, __ATOMIC_RELAXED);
}

doca_error_t doca_log_global_level_set(uint32_t level)
{
	return doca_log_level_set_global_lower_limit(level);
}

uint32_t doca_log_global_level_get(void)
{
	return doca_log_level_get_global_lower_limit();
}

/* ---- sources ------------------------------------------------------------------------------------------------- */

doca_error_t doca_log_source_register(const char *source_name, int *source)
{
	int id;

	if (source_name == NULL || *source_name == '\0' || source == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	dlog_ensure_init();
	pthread_mutex_lock(&dlog_g.lock);
	id = dlog_source_alloc(source_name, false);
	pthread_mutex_unlock(&dlog_g.lock);
	if (id < 0)
		return DOCA_ERROR_FULL;
	*source = id;
	return DOCA_SUCCESS;
}

doca_error_t doca_log_source_destroy(int source)
{
	doca_error_t ret = DOCA_SUCCESS;

	dlog_ensure_init();
	pthread_mutex_lock(&dlog_g.lock);
	if (!dlog_source_valid(source) || dlog_sources[source].sdk) {
		ret = DOCA_ERROR_INVALID_VALUE;
	} else {
		memset(&dlog_sources[source], 0, sizeof(dlog_sources[source]));
		dlog_rate_release_source(source);
	}
	pthread_mutex_unlock(&dlog_g.lock);
	return ret;
}

/* ---- formatting and dispatch --------------------------------------------------------------------------------- */

/* "[SOURCE][LEVEL][func:line] message" — what syslog receives. */
static void dlog_format_body(char *out, size_t cap, uint32_t level, const char *src, const char *func, int line,
			     const char *fmt, va_list ap)
{
	int n;

	if (func == NULL) /* the older entry points know the line only */
		n = snprintf(out, cap, "[%s][%s][line %d] ", src, dlog_level_tag(level), line);
	else if (line > 0)
		n = snprintf(out, cap, "[%s][%s][%s:%d] ", src, dlog_level_tag(level), func, line);
	else
		n = snprintf(out, cap, "[%s][%s][%s] ", src, dlog_level_tag(level), func);
	if (n < 0 || (size_t)n >= cap)
		return;
	vsnprintf(out + n, cap - (size_t)n, fmt, ap);
}

/* "[HH:MM:SS:usec][pid]" + body + newline — what streams and buffers receive. */
static void dlog_format_record(char *out, size_t cap, const char *body)
{
	struct timeval tv;
	struct tm tm;
	size_t len;

	gettimeofday(&tv, NULL);
	localtime_r(&tv.tv_sec, &tm);
	snprintf(out, cap, "[%02d:%02d:%02d:%06ld][%d]%s", tm.tm_hour, tm.tm_min, tm.tm_sec, (long)tv.tv_usec,
		 (int)getpid(), body);
	len = strlen(out);
	if (len + 1 < cap) {
		out[len] = '\n';
		out[len + 1] = '\0';
	} else {
		out[cap - 2] = '\n';
	}
}

/* With no backend at all, errors must not vanish: fall back to stderr. */
static bool dlog_fallback_accepts(uint32_t level, bool sdk)
{
	if (sdk)
		return level <= dlog_g.sdk;
	return level >= dlog_g.upper && level <= dlog_g.lower;
}

static bool dlog_anyone_accepts(uint32_t level, bool sdk)
{
	const struct doca_logger_backend *b;

	if (dlog_g.backends == NULL)
		return dlog_fallback_accepts(level, sdk);
	for (b = dlog_g.backends; b != NULL; b = b->next)
		if (dlog_backend_accepts(b, level, sdk))
			return true;
	return false;
}

static void dlog_dispatch(uint32_t level, bool sdk, const char *record, const char *body)
{
	struct doca_logger_backend *b;

	if (dlog_g.backends == NULL) {
		fputs(record, stderr);
		fflush(stderr);
		return;
	}
	for (b = dlog_g.backends; b != NULL; b = b->next)
		if (dlog_backend_accepts(b, level, sdk))
			dlog_backend_write(b, level, record, body);
}

doca_error_t dlog_vemit(uint32_t level, int source, const char *func, int line, const char *fmt, va_list ap)
{
	char body[DLOG_LINE_MAX];
	char record[DLOG_LINE_MAX + 64];
	bool sdk;

	dlog_ensure_init();
	if (!dlog_msg_level_valid(level) || fmt == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&dlog_g.lock);
	if (!dlog_source_valid(source)) {
		pthread_mutex_unlock(&dlog_g.lock);
		return DOCA_ERROR_INVALID_VALUE;
	}
	sdk = dlog_sources[source].sdk;
	if (dlog_anyone_accepts(level, sdk)) {
		dlog_format_body(body, sizeof(body), level, dlog_sources[source].name, func, line, fmt,
				 ap);
		dlog_format_record(record, sizeof(record), body);
		dlog_dispatch(level, sdk, record, body);
	}
	pthread_mutex_unlock(&dlog_g.lock);
	return DOCA_SUCCESS;
}

doca_error_t priv_doca_log_developer(uint32_t level, int source, const char *fname, int line, const char *func,
				     const char *format, ...)
{
	doca_error_t ret;
	va_list ap;

	(void)fname;
	va_start(ap, format);
	ret = dlog_vemit(level, source, func, line, format, ap);
	va_end(ap);
	return ret;
}

doca_error_t doca_log_developer(uint32_t level, int source, int line, const char *format, ...)
{
	doca_error_t ret;
	va_list ap;

	va_start(ap, format);
	ret = dlog_vemit(level, source, NULL, line, format, ap);
	va_end(ap);
	return ret;
}

/* Messages of every layer (base_log) go out as the library's SDK source, under the SDK limit. */
static void dlog_sdk_sink(int level, const char *func, const char *fmt, va_list ap)
{
	dlog_ensure_init();
	(void)dlog_vemit((uint32_t)level, dlog_g.sdk_source, func, 0, fmt, ap);
}

/* Plugged in when the library is loaded, before any layer can log. */
__attribute__((constructor)) static void dlog_plug_sink(void)
{
	base_log_set_sink(dlog_sdk_sink);
}
