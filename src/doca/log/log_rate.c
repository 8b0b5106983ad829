/*
 * DOCA log rate limiting: each bucket lets `quantity` messages through per
 * window of `bucket_time` seconds; the window starts at the first message.
 */
#include <time.h>

#include "log_priv.h"

#define DLOG_MAX_BUCKETS 4096
#define DLOG_NSEC_PER_SEC 1000000000ull

struct dlog_bucket {
	bool used;
	int source;
	bool window_open;
	uint64_t window_start_ns;
	uint32_t count;
};

static struct dlog_bucket dlog_buckets[DLOG_MAX_BUCKETS];
static uint16_t dlog_bucket_time = 1;
static uint16_t dlog_quantity = 10;

uint16_t doca_log_get_bucket_time(void)
{
	return __atomic_load_n(&dlog_bucket_time, __ATOMIC_RELAXED);
}

void doca_log_set_bucket_time(uint16_t bucket_time)
{
	__atomic_store_n(&dlog_bucket_time, bucket_time, __ATOMIC_RELAXED);
}

uint16_t doca_log_get_quantity(void)
{
	return __atomic_load_n(&dlog_quantity, __ATOMIC_RELAXED);
}

void doca_log_set_quantity(uint16_t quantity)
{
	__atomic_store_n(&dlog_quantity, quantity, __ATOMIC_RELAXED);
}

doca_error_t doca_log_rate_bucket_register(int source, int *bucket)
{
	doca_error_t ret = DOCA_ERROR_FULL;
	int i;

	if (bucket == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	dlog_ensure_init();
	pthread_mutex_lock(&dlog_g.lock);
	if (!dlog_source_valid(source)) {
		ret = DOCA_ERROR_INVALID_VALUE;
		goto unlock;
	}
	for (i = 0; i < DLOG_MAX_BUCKETS; i++) {
		if (dlog_buckets[i].used)
			continue;
		dlog_buckets[i] = (struct dlog_bucket){ .used = true, .source = source };
		*bucket = i;
		ret = DOCA_SUCCESS;
		break;
	}
unlock:
	pthread_mutex_unlock(&dlog_g.lock);
	return ret;
}

/* Buckets die with their source. Caller holds the lock. */
void dlog_rate_release_source(int source)
{
	int i;

	for (i = 0; i < DLOG_MAX_BUCKETS; i++)
		if (dlog_buckets[i].used && dlog_buckets[i].source == source)
			dlog_buckets[i].used = false;
}

static uint64_t dlog_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * DLOG_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Counts the message against its bucket; false when the window's quota is used up. Caller holds the lock. */
static bool dlog_bucket_admit(struct dlog_bucket *b)
{
	uint64_t now = dlog_now_ns();
	uint64_t span = (uint64_t)doca_log_get_bucket_time() * DLOG_NSEC_PER_SEC;

	if (!b->window_open || now - b->window_start_ns >= span) {
		b->window_open = true;
		b->window_start_ns = now;
		b->count = 0;
	}
	if (b->count >= doca_log_get_quantity())
		return false;
	b->count++;
	return true;
}

static doca_error_t dlog_rate_vemit(uint32_t level, int source, const char *func, int line, int bucket,
				   const char *format, va_list ap)
{
	doca_error_t ret = DOCA_SUCCESS;

	if (!dlog_msg_level_valid(level) || format == NULL || bucket < 0 || bucket >= DLOG_MAX_BUCKETS)
		return DOCA_ERROR_INVALID_VALUE;
	dlog_ensure_init();
	pthread_mutex_lock(&dlog_g.lock);
	if (!dlog_buckets[bucket].used || dlog_buckets[bucket].source != source)
		ret = DOCA_ERROR_INVALID_VALUE;
	else if (dlog_bucket_admit(&dlog_buckets[bucket]))
		ret = dlog_vemit(level, source, func, line, format, ap);
	pthread_mutex_unlock(&dlog_g.lock);
	return ret;
}

doca_error_t priv_doca_log_rate_limit(uint32_t level, int source, const char *fname, int line, const char *func,
				      int bucket, const char *format, ...)
{
	doca_error_t ret;
	va_list ap;

	(void)fname;
	va_start(ap, format);
	ret = dlog_rate_vemit(level, source, func, line, bucket, format, ap);
	va_end(ap);
	return ret;
}

doca_error_t doca_log_rate_limit(uint32_t level, int source, int line, int bucket, const char *format, ...)
{
	doca_error_t ret;
	va_list ap;

	va_start(ap, format);
	ret = dlog_rate_vemit(level, source, NULL, line, bucket, format, ap);
	va_end(ap);
	return ret;
}
