/*
 * Timing helpers the latency benchmarks share: a monotonic clock in
 * nanoseconds and the median / p99 of a sample, in microseconds.
 */
#ifndef SOFTDPU_BENCH_STATS_H_
#define SOFTDPU_BENCH_STATS_H_

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct stats {
	double median_us, p99_us;
};

/* Sorts ns in place. */
static inline struct stats summarize(uint64_t *ns, uint32_t n)
{
	qsort(ns, n, sizeof(*ns), cmp_u64);
	return (struct stats){ .median_us = (double)ns[n / 2] / 1e3,
			       .p99_us = (double)ns[(uint32_t)((uint64_t)n * 99 / 100)] / 1e3 };
}

#endif /* SOFTDPU_BENCH_STATS_H_ */
