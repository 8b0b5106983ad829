/*
 * bench_rdma_ref — the physical references the RDMA benchmark (bench/rdma.sh)
 * sets its figures against, measured on this machine in the same run:
 *
 *   cacheline   one shared cache line bounced between two processes: the
 *               round trip of a write seen by the other core and answered.
 *               An RDMA write across processes cannot be faster than half
 *               of it (the data must reach the other core, the completion
 *               must come back).
 *   memcpy      bandwidth of memcpy between two buffers of one process at
 *               the sizes of perftest's -a sweep: what one core can move.
 *
 * Output is one "key value" pair per line so the driver script can parse it:
 *   cacheline_rtt_ns <median> / cacheline_rtt_p99_ns <p99>
 *   memcpy_MBps <size> <MB/s>
 *
 * Usage: bench_rdma_ref cacheline [iterations]
 *        bench_rdma_ref memcpy <min-size> <max-size>
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench_stats.h"

#define LINE 64
#define BATCH 100 /* round trips per timed sample: the clock read costs ~20 ns */

struct line {
	_Alignas(LINE) _Atomic uint64_t ping;
	_Alignas(LINE) _Atomic uint64_t pong;
};

/* Keeps the two processes on different cores when there are at least two. */
static void pin(int cpu)
{
	cpu_set_t set;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static void responder(struct line *l, uint64_t rounds)
{
	pin(1);
	for (uint64_t i = 1; i <= rounds; i++) {
		while (atomic_load_explicit(&l->ping, memory_order_acquire) != i)
			;
		atomic_store_explicit(&l->pong, i, memory_order_release);
	}
	_exit(0);
}

static int cacheline(uint64_t samples)
{
	uint64_t rounds = samples * BATCH, *ns = calloc(samples, sizeof(*ns));
	struct line *l = mmap(NULL, sizeof(*l), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid;
	int st = 0;

	if (ns == NULL || l == MAP_FAILED)
		return 1;
	memset(l, 0, sizeof(*l));
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0)
		responder(l, rounds);
	pin(0);
	for (uint64_t s = 0, i = 1; s < samples; s++) {
		uint64_t t0 = now_ns();

		for (uint32_t b = 0; b < BATCH; b++, i++) {
			atomic_store_explicit(&l->ping, i, memory_order_release);
			while (atomic_load_explicit(&l->pong, memory_order_acquire) != i)
				;
		}
		ns[s] = (now_ns() - t0) / BATCH;
	}
	waitpid(pid, &st, 0);
	struct stats r = summarize(ns, (uint32_t)samples);
	printf("cacheline_rtt_ns %.1f\ncacheline_rtt_p99_ns %.1f\n", r.median_us * 1e3, r.p99_us * 1e3);
	free(ns);
	munmap(l, sizeof(*l));
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}

/* Repeats the copy for about 0.2 s of work, at least 4 times. */
static double copy_rate(uint8_t *dst, const uint8_t *src, size_t size)
{
	uint64_t reps = 0, t0 = now_ns(), t;

	do {
		for (int i = 0; i < 16; i++, reps++) {
			memcpy(dst, src, size);
			__asm__ volatile("" : : "r"(dst) : "memory");
		}
		t = now_ns() - t0;
	} while (t < 200000000ull);
	return (double)size * (double)reps / ((double)t / 1e9) / 1e6;
}

static int memcpy_sweep(size_t lo, size_t hi)
{
	uint8_t *src = aligned_alloc(4096, hi), *dst = aligned_alloc(4096, hi);

	if (src == NULL || dst == NULL || lo == 0 || lo > hi)
		return 1;
	memset(src, 0x5a, hi);
	memset(dst, 0, hi);
	for (size_t s = lo; s <= hi; s *= 2)
		printf("memcpy_MBps %zu %.0f\n", s, copy_rate(dst, src, s));
	free(src);
	free(dst);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "cacheline") == 0)
		return cacheline(argc > 2 ? strtoull(argv[2], NULL, 0) : 20000);
	if (argc == 4 && strcmp(argv[1], "memcpy") == 0)
		return memcpy_sweep(strtoull(argv[2], NULL, 0), strtoull(argv[3], NULL, 0));
	fprintf(stderr, "usage: %s cacheline [samples] | memcpy <min-size> <max-size>\n", argv[0]);
	return 2;
}
