/*
 * The two floors a DPA thread's hand-over is compared with, measured between
 * two host threads: a futex round trip (FUTEX_WAKE / FUTEX_WAIT both ways, a
 * sleeping thread's floor) and a cache line passed back and forth between two
 * spinning threads (a polling one's). bench_flexio and bench_dpa share them.
 */
#ifndef SOFTDPU_BENCH_RT_H_
#define SOFTDPU_BENCH_RT_H_

#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bench_stats.h"

/* ---- the futex round trip ---- */

static _Atomic uint32_t ping, pong;
static uint32_t rt_rounds;

static void futex_wait(_Atomic uint32_t *w, uint32_t v)
{
	while (atomic_load(w) == v)
		syscall(SYS_futex, w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
}

static void futex_wake(_Atomic uint32_t *w)
{
	atomic_fetch_add(w, 1);
	syscall(SYS_futex, w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *futex_echo(void *arg)
{
	(void)arg;
	for (uint32_t i = 0; i < rt_rounds; i++) {
		futex_wait(&ping, i);
		futex_wake(&pong);
	}
	return NULL;
}

static struct stats futex_rt(uint32_t n, uint64_t *lat)
{
	pthread_t t;

	rt_rounds = n;
	atomic_store(&ping, 0);
	atomic_store(&pong, 0);
	pthread_create(&t, NULL, futex_echo, NULL);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t t0 = now_ns();

		futex_wake(&ping);
		futex_wait(&pong, i);
		lat[i] = now_ns() - t0;
	}
	pthread_join(t, NULL);
	return summarize(lat, n);
}

/* ---- the cache-line round trip ---- */

static _Alignas(64) _Atomic uint32_t line_ping;
static _Alignas(64) _Atomic uint32_t line_pong;

static void *line_echo(void *arg)
{
	(void)arg;
	for (uint32_t i = 1; i <= rt_rounds; i++) {
		while (atomic_load_explicit(&line_ping, memory_order_acquire) != i)
			;
		atomic_store_explicit(&line_pong, i, memory_order_release);
	}
	return NULL;
}

static struct stats line_rt(uint32_t n, uint64_t *lat)
{
	pthread_t t;

	rt_rounds = n;
	atomic_store(&line_ping, 0);
	atomic_store(&line_pong, 0);
	pthread_create(&t, NULL, line_echo, NULL);
	for (uint32_t i = 1; i <= n; i++) {
		uint64_t t0 = now_ns();

		atomic_store_explicit(&line_ping, i, memory_order_release);
		while (atomic_load_explicit(&line_pong, memory_order_acquire) != i)
			;
		lat[i - 1] = now_ns() - t0;
	}
	pthread_join(t, NULL);
	return summarize(lat, n);
}

#endif /* SOFTDPU_BENCH_RT_H_ */
