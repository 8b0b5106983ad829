/*
 * bench_buf — the cost of taking and returning one DOCA buffer
 * (doca_buf_inventory_buf_by_addr + doca_buf_refcount_rm), next to a
 * malloc(64) + free pair and an empty loop, measured in the same run.
 *
 * Each case runs at least 10 M iterations and at least --time seconds; the
 * best of three runs is reported (the minimum is the least disturbed one).
 *
 * Usage: bench_buf [--quick] [--time SECONDS]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>

#define MIN_ITERS 10000000ull
#define REPEATS 3

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct env {
	struct doca_dev *dev;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	uint8_t mem[4096];
};

static struct env E;

static uint64_t pair_loop(uint64_t n)
{
	uint64_t fails = 0;

	for (uint64_t i = 0; i < n; i++) {
		struct doca_buf *buf;

		if (doca_buf_inventory_buf_by_addr(E.inv, E.mmap, E.mem + (i & 63) * 64, 64, &buf) != DOCA_SUCCESS ||
		    doca_buf_refcount_rm(buf, NULL) != DOCA_SUCCESS)
			fails++;
	}
	return fails;
}

static uint64_t malloc_loop(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		void *p = malloc(64);

		/* The asm makes p escape, so the compiler cannot pair malloc with free away. */
		__asm__ volatile("" : : "r"(p) : "memory");
		free(p);
	}
	return 0;
}

static uint64_t empty_loop(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		__asm__ volatile("" : : "r"(i) : "memory");
	return 0;
}

static double run_once(uint64_t (*loop)(uint64_t), uint64_t n)
{
	double t0 = now();

	if (loop(n) != 0)
		return -1;
	return now() - t0;
}

/* ns per iteration: min_iters iterations (also the warm-up), scaled to last tmin, best of REPEATS. */
static double measure(uint64_t (*loop)(uint64_t), double tmin, uint64_t min_iters, uint64_t *iters_out)
{
	uint64_t n = min_iters;
	double t = run_once(loop, n), best;

	if (t < 0)
		return -1;
	if (t < tmin)
		n = (uint64_t)((double)n * tmin / (t > 1e-6 ? t : 1e-6) * 1.05) + 1;
	best = 1e30;
	for (int r = 0; r < REPEATS; r++) {
		t = run_once(loop, n);
		if (t < 0)
			return -1;
		if (t / (double)n < best)
			best = t / (double)n;
	}
	*iters_out = n;
	return best * 1e9;
}

static int setup(void)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;
	doca_error_t r;

	if (doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS || n == 0)
		return -1;
	r = doca_dev_open(list[0], &E.dev);
	doca_devinfo_list_destroy(list);
	if (r != DOCA_SUCCESS)
		return -1;
	if (doca_mmap_create(NULL, &E.mmap) != DOCA_SUCCESS || doca_mmap_dev_add(E.mmap, E.dev) != DOCA_SUCCESS ||
	    doca_mmap_set_memrange(E.mmap, E.mem, sizeof(E.mem)) != DOCA_SUCCESS ||
	    doca_mmap_set_permissions(E.mmap, DOCA_ACCESS_LOCAL_READ_WRITE) != DOCA_SUCCESS ||
	    doca_mmap_start(E.mmap) != DOCA_SUCCESS)
		return -1;
	if (doca_buf_inventory_create(NULL, 1024, 0, &E.inv) != DOCA_SUCCESS ||
	    doca_buf_inventory_start(E.inv) != DOCA_SUCCESS)
		return -1;
	return 0;
}

static void teardown(void)
{
	if (E.inv != NULL) {
		doca_buf_inventory_stop(E.inv);
		doca_buf_inventory_destroy(E.inv);
	}
	if (E.mmap != NULL)
		doca_mmap_destroy(E.mmap);
	if (E.dev != NULL)
		doca_dev_close(E.dev);
}

int main(int argc, char **argv)
{
	double tmin = 0.3, pair, mal, empty;
	uint64_t min_iters = MIN_ITERS, n_pair = 0, n_mal = 0, n_empty = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			tmin = 0.01;
			min_iters = 100000;
		} else if (strcmp(argv[i], "--time") == 0 && i + 1 < argc) {
			tmin = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: %s [--quick] [--time SECONDS]\n", argv[0]);
			return 2;
		}
	}
	if (setup() != 0) {
		fprintf(stderr, "bench_buf: DOCA setup failed\n");
		teardown();
		return 1;
	}
	pair = measure(pair_loop, tmin, min_iters, &n_pair);
	mal = measure(malloc_loop, tmin, min_iters, &n_mal);
	empty = measure(empty_loop, tmin, min_iters, &n_empty);
	teardown();
	if (pair < 0) {
		fprintf(stderr, "bench_buf: buffer pair failed\n");
		return 1;
	}

	printf("== bench_buf: one buffer take + release ==\n");
	printf("%-48s %12s %10s %12s\n", "operation", "iterations", "ns/op", "vs malloc");
	printf("%-48s %12llu %10.2f %11.2fx\n", "doca_buf_inventory_buf_by_addr + refcount_rm",
	       (unsigned long long)n_pair, pair, pair / mal);
	printf("%-48s %12llu %10.2f %11.2fx\n", "malloc(64) + free (glibc, tcache)", (unsigned long long)n_mal, mal,
	       1.0);
	printf("%-48s %12llu %10.2f %11.2fx\n", "empty loop (loop overhead)", (unsigned long long)n_empty, empty,
	       empty / mal);
	printf("best of %d runs per row; ns/op includes the loop overhead of the last row\n", REPEATS);
	return 0;
}
