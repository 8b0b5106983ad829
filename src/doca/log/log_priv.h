/*
 * Internal state shared by the files of the DOCA log library.
 */
#ifndef DLOG_PRIV_H_
#define DLOG_PRIV_H_

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "doca_log.h"

#define DLOG_MAX_SOURCES 1024
#define DLOG_NAME_MAX 128
#define DLOG_LINE_MAX 2048
#define DLOG_SDK_SOURCE_NAME "softdpu"

enum dlog_kind {
	DLOG_KIND_FILE,
	DLOG_KIND_FD,
	DLOG_KIND_BUF,
	DLOG_KIND_SYSLOG,
};

struct doca_logger_backend {
	struct doca_logger_backend *next;
	enum dlog_kind kind;
	FILE *fp;
	int fd;
	char *buf;
	size_t capacity;
	log_flush_callback flush;
	char *ident;		/* syslog identity, owned */
	uint32_t lower;		/* most verbose level shown */
	uint32_t upper;		/* least verbose level shown */
	uint32_t sdk_level;	/* most verbose SDK level shown */
	bool lower_strict;	/* lower may not go above strict_lower */
	bool upper_strict;	/* upper may not go below strict_upper */
	uint32_t strict_lower;
	uint32_t strict_upper;
};

struct dlog_state {
	pthread_mutex_t lock; /* recursive: a flush handler may log */
	uint32_t lower;
	uint32_t upper;
	uint32_t sdk;
	struct doca_logger_backend *backends;
	bool have_standard;
	int sdk_source;
};

extern struct dlog_state dlog_g;

void dlog_ensure_init(void);
bool dlog_level_valid(uint32_t level);
bool dlog_msg_level_valid(uint32_t level);
bool dlog_source_valid(int source);
doca_error_t dlog_vemit(uint32_t level, int source, const char *func, int line, const char *fmt, va_list ap);

/* log_backend.c */
doca_error_t dlog_backend_apply_lower(struct doca_logger_backend *b, uint32_t level, bool clamp);
doca_error_t dlog_backend_apply_upper(struct doca_logger_backend *b, uint32_t level, bool clamp);
bool dlog_backend_accepts(const struct doca_logger_backend *b, uint32_t level, bool sdk);
void dlog_backend_write(struct doca_logger_backend *b, uint32_t level, const char *record, const char *body);
void dlog_backends_free_all(void);

/* log_rate.c */
void dlog_rate_release_source(int source);

#endif /* DLOG_PRIV_H_ */
