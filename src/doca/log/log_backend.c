/*
 * DOCA log backends: creation, per-backend limits, filtering and output.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "log_priv.h"

/* ---- filtering ----------------------------------------------------------------------------------------------- */

bool dlog_backend_accepts(const struct doca_logger_backend *b, uint32_t level, bool sdk)
{
	if (level < b->upper)
		return false;
	if (!sdk)
		return level <= b->lower;
	if (level > dlog_g.sdk || level > b->sdk_level)
		return false;
	/* A frozen lower limit bounds SDK messages too (the standard stderr backend stays at WARNING and up). */
	return !b->lower_strict || level <= b->strict_lower;
}

doca_error_t dlog_backend_apply_lower(struct doca_logger_backend *b, uint32_t level, bool clamp)
{
	if (b->lower_strict && level > b->strict_lower) {
		if (!clamp)
			return DOCA_ERROR_NOT_PERMITTED;
		level = b->strict_lower;
	}
	b->lower = level;
	return DOCA_SUCCESS;
}

doca_error_t dlog_backend_apply_upper(struct doca_logger_backend *b, uint32_t level, bool clamp)
{
	if (b->upper_strict && level < b->strict_upper) {
		if (!clamp)
			return DOCA_ERROR_NOT_PERMITTED;
		level = b->strict_upper;
	}
	b->upper = level;
	return DOCA_SUCCESS;
}

/* ---- output -------------------------------------------------------------------------------------------------- */

static void dlog_write_fd(int fd, const char *text)
{
	size_t left = strlen(text);
	ssize_t n;

	while (left > 0) {
		n = write(fd, text, left);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		text += n;
		left -= (size_t)n;
	}
}

static int dlog_syslog_priority(uint32_t level)
{
	switch (level) {
	case DOCA_LOG_LEVEL_CRIT:
		return LOG_CRIT;
	case DOCA_LOG_LEVEL_ERROR:
		return LOG_ERR;
	case DOCA_LOG_LEVEL_WARNING:
		return LOG_WARNING;
	case DOCA_LOG_LEVEL_INFO:
		return LOG_INFO;
	default:
		return LOG_DEBUG;
	}
}

void dlog_backend_write(struct doca_logger_backend *b, uint32_t level, const char *record, const char *body)
{
	switch (b->kind) {
	case DLOG_KIND_FILE:
		fputs(record, b->fp);
		fflush(b->fp);
		break;
	case DLOG_KIND_FD:
		dlog_write_fd(b->fd, record);
		break;
	case DLOG_KIND_BUF:
		snprintf(b->buf, b->capacity, "%s", record);
		b->flush(b->buf);
		break;
	case DLOG_KIND_SYSLOG:
		syslog(dlog_syslog_priority(level), "%s", body);
		break;
	}
}

/* ---- creation and destruction -------------------------------------------------------------------------------- */

static doca_error_t dlog_backend_new(enum dlog_kind kind, struct doca_logger_backend **out)
{
	struct doca_logger_backend *b = calloc(1, sizeof(*b));

	if (b == NULL)
		return DOCA_ERROR_NO_MEMORY;
	dlog_ensure_init();
	b->kind = kind;
	b->fd = -1;
	b->sdk_level = DOCA_LOG_LEVEL_TRACE;
	*out = b;
	return DOCA_SUCCESS;
}

/* New backends start from the current global limits. Caller holds the lock. */
static void dlog_backend_attach(struct doca_logger_backend *b)
{
	b->lower = dlog_g.lower;
	b->upper = dlog_g.upper;
	b->next = dlog_g.backends;
	dlog_g.backends = b;
}

static void dlog_backend_free(struct doca_logger_backend *b)
{
	free(b->ident);
	free(b);
}

static struct doca_logger_backend *dlog_find_syslog(void)
{
	struct doca_logger_backend *b;

	for (b = dlog_g.backends; b != NULL; b = b->next)
		if (b->kind == DLOG_KIND_SYSLOG)
			return b;
	return NULL;
}

/* openlog() keeps the identity pointer: switch to a surviving syslog backend or close. */
static void dlog_syslog_detached(void)
{
	struct doca_logger_backend *other = dlog_find_syslog();

	if (other != NULL)
		openlog(other->ident, LOG_PID, LOG_USER);
	else
		closelog();
}

static bool dlog_unlink(struct doca_logger_backend *b)
{
	struct doca_logger_backend **pp;

	for (pp = &dlog_g.backends; *pp != NULL; pp = &(*pp)->next) {
		if (*pp == b) {
			*pp = b->next;
			return true;
		}
	}
	return false;
}

doca_error_t doca_log_backend_destroy(struct doca_logger_backend *backend)
{
	doca_error_t ret = DOCA_ERROR_INVALID_VALUE;

	if (backend == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&dlog_g.lock);
	if (dlog_unlink(backend)) {
		if (backend->kind == DLOG_KIND_SYSLOG)
			dlog_syslog_detached();
		dlog_backend_free(backend);
		ret = DOCA_SUCCESS;
	}
	pthread_mutex_unlock(&dlog_g.lock);
	return ret;
}

void dlog_backends_free_all(void)
{
	struct doca_logger_backend *b;
	bool had_syslog = dlog_find_syslog() != NULL;

	while ((b = dlog_g.backends) != NULL) {
		dlog_g.backends = b->next;
		dlog_backend_free(b);
	}
	if (had_syslog)
		closelog();
	dlog_g.have_standard = false;
}

doca_error_t doca_log_create_file_backend(FILE *fptr, struct doca_logger_backend **backend)
{
	struct doca_logger_backend *b;
	doca_error_t ret;

	if (fptr == NULL || backend == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = dlog_backend_new(DLOG_KIND_FILE, &b);
	if (ret != DOCA_SUCCESS)
		return ret;
	b->fp = fptr;
	pthread_mutex_lock(&dlog_g.lock);
	dlog_backend_attach(b);
	pthread_mutex_unlock(&dlog_g.lock);
	*backend = b;
	return DOCA_SUCCESS;
}

doca_error_t doca_log_create_fd_backend(int fd, struct doca_logger_backend **backend)
{
	struct doca_logger_backend *b;
	doca_error_t ret;

	if (fd < 0 || backend == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = dlog_backend_new(DLOG_KIND_FD, &b);
	if (ret != DOCA_SUCCESS)
		return ret;
	b->fd = fd;
	pthread_mutex_lock(&dlog_g.lock);
	dlog_backend_attach(b);
	pthread_mutex_unlock(&dlog_g.lock);
	*backend = b;
	return DOCA_SUCCESS;
}

doca_error_t doca_log_create_buffer_backend(char *buffer, size_t capacity, log_flush_callback handler,
					    struct doca_logger_backend **backend)
{
	struct doca_logger_backend *b;
	doca_error_t ret;

	/* A record needs at least one character and its terminator. */
	if (buffer == NULL || capacity < 2 || handler == NULL || backend == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = dlog_backend_new(DLOG_KIND_BUF, &b);
	if (ret != DOCA_SUCCESS)
		return ret;
	b->buf = buffer;
	b->capacity = capacity;
	b->flush = handler;
	pthread_mutex_lock(&dlog_g.lock);
	dlog_backend_attach(b);
	pthread_mutex_unlock(&dlog_g.lock);
	*backend = b;
	return DOCA_SUCCESS;
}

doca_error_t doca_log_create_syslog_backend(const char *name, struct doca_logger_backend **backend)
{
	struct doca_logger_backend *b;
	doca_error_t ret;

	if (name == NULL || *name == '\0' || backend == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = dlog_backend_new(DLOG_KIND_SYSLOG, &b);
	if (ret != DOCA_SUCCESS)
		return ret;
	b->ident = strdup(name);
	if (b->ident == NULL) {
		dlog_backend_free(b);
		return DOCA_ERROR_NO_MEMORY;
	}
	pthread_mutex_lock(&dlog_g.lock);
	openlog(b->ident, LOG_PID, LOG_USER);
	dlog_backend_attach(b);
	pthread_mutex_unlock(&dlog_g.lock);
	*backend = b;
	return DOCA_SUCCESS;
}

/* stdout: INFO and more verbose; stderr: WARNING and more severe. Created once. */
doca_error_t doca_log_create_standard_backend(void)
{
	struct doca_logger_backend *out, *err;
	doca_error_t ret;

	dlog_ensure_init();
	pthread_mutex_lock(&dlog_g.lock);
	if (dlog_g.have_standard) {
		ret = DOCA_SUCCESS;
		goto unlock;
	}
	ret = dlog_backend_new(DLOG_KIND_FILE, &out);
	if (ret != DOCA_SUCCESS)
		goto unlock;
	ret = dlog_backend_new(DLOG_KIND_FILE, &err);
	if (ret != DOCA_SUCCESS)
		goto free_out;
	out->fp = stdout;
	err->fp = stderr;
	dlog_backend_attach(out);
	dlog_backend_attach(err);
	/* Freeze the split point, then re-apply the global limits through the clamps. */
	out->strict_upper = DOCA_LOG_LEVEL_INFO;
	out->upper_strict = true;
	(void)dlog_backend_apply_upper(out, dlog_g.upper, true);
	err->strict_lower = DOCA_LOG_LEVEL_WARNING;
	err->lower_strict = true;
	(void)dlog_backend_apply_lower(err, dlog_g.lower, true);
	dlog_g.have_standard = true;
	goto unlock;

free_out:
	dlog_backend_free(out);
unlock:
	pthread_mutex_unlock(&dlog_g.lock);
	return ret;
}

/* ---- per-backend limits -------------------------------------------------------------------------------------- */

static doca_error_t dlog_backend_set(struct doca_logger_backend *logger, uint32_t level,
				     doca_error_t (*apply)(struct doca_logger_backend *, uint32_t, bool))
{
	doca_error_t ret;

	if (logger == NULL || !dlog_level_valid(level))
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&dlog_g.lock);
	ret = apply(logger, level, false);
	pthread_mutex_unlock(&dlog_g.lock);
	return ret;
}

doca_error_t doca_log_backend_set_level_lower_limit(struct doca_logger_backend *logger, uint32_t lower_limit)
{
	return dlog_backend_set(logger, lower_limit, dlog_backend_apply_lower);
}

doca_error_t doca_log_backend_set_level_upper_limit(struct doca_logger_backend *logger, uint32_t upper_limit)
{
	return dlog_backend_set(logger, upper_limit, dlog_backend_apply_upper);
}

doca_error_t doca_log_backend_level_set(struct doca_logger_backend *logger, uint32_t level)
{
	return doca_log_backend_set_level_lower_limit(logger, level);
}

doca_error_t doca_log_backend_set_level_lower_limit_strict(struct doca_logger_backend *logger)
{
	if (logger == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&dlog_g.lock);
	logger->strict_lower = logger->lower;
	logger->lower_strict = true;
	pthread_mutex_unlock(&dlog_g.lock);
	return DOCA_SUCCESS;
}

doca_error_t doca_log_backend_set_level_upper_limit_strict(struct doca_logger_backend *logger)
{
	if (logger == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&dlog_g.lock);
	logger->strict_upper = logger->upper;
	logger->upper_strict = true;
	pthread_mutex_unlock(&dlog_g.lock);
	return DOCA_SUCCESS;
}

doca_error_t doca_log_backend_set_sdk_level(struct doca_logger_backend *logger, uint32_t level)
{
	if (logger == NULL || !dlog_level_valid(level))
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&dlog_g.lock);
	logger->sdk_level = level;
	pthread_mutex_unlock(&dlog_g.lock);
	return DOCA_SUCCESS;
}
