/*
 * base_clock — time for bounded waits.
 *
 * Every bounded wait (a withdrawal waiting for accesses in flight, a socket
 * waiting for a slow peer) is measured as elapsed time on the monotonic
 * clock against a deadline fixed when the wait starts: counting the sleeps a
 * loop asked for overshoots the bound by whatever each sleep overran (timer
 * slack, preemption), and the wall clock can jump.
 */
#ifndef BASE_CLOCK_H_
#define BASE_CLOCK_H_

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

/* Nanoseconds on CLOCK_MONOTONIC. */
static inline uint64_t base_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The deadline of a wait of limit_ns starting now. */
static inline uint64_t base_deadline_ns(uint64_t limit_ns)
{
	return base_clock_ns() + limit_ns;
}

static inline bool base_deadline_passed(uint64_t deadline)
{
	return base_clock_ns() >= deadline;
}

/* Whole milliseconds left until deadline, rounded up (for poll), 0 once it passed. */
static inline int base_deadline_ms_left(uint64_t deadline)
{
	uint64_t now = base_clock_ns();
	uint64_t ms = now >= deadline ? 0 : (deadline - now + 999999u) / 1000000u;

	return ms > (uint64_t)INT32_MAX ? INT32_MAX : (int)ms;
}

#endif /* BASE_CLOCK_H_ */
