/*
 * bench_chunks — DOCA 1.x maps with many populated chunks: the cost of
 * doca_buf_inventory_buf_by_addr + doca_buf_refcount_rm, and of a 64 B DMA
 * memcpy job, when the map holds 1, 16, 256, 4096 or 65536 chunks.
 *
 * Chunks are 128 B with 64 B gaps; accesses go to chunks picked by a
 * pseudo-random sequence, so the chunk search is not helped by locality.
 * The control columns make the same accesses through a map of one chunk
 * over the same memory: what the memory itself costs (caches, TLB) without
 * any chunk search.
 * Each figure is the best of three runs of at least --time seconds.
 *
 * Usage: bench_chunks [--time SECONDS]
 */
#define DOCA_COMPAT_1X

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_mmap.h>

#define CHUNK 128
#define STRIDE 192
#define MAX_CHUNKS 65536
#define REPEATS 3
#define BATCH 4096

static struct {
	struct doca_devinfo **list;
	struct doca_dev *dev;
	struct doca_buf_inventory *inv;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
	uint8_t *src, *dst;
	struct doca_mmap *sm, *dm;
	uint32_t n;
	double min_time;
} B = { .min_time = 0.2 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline uint32_t next_chunk(uint32_t *seed)
{
	*seed = *seed * 1664525u + 1013904223u;
	return (*seed >> 8) % B.n;
}

static uint64_t buf_loop(uint64_t iters)
{
	uint32_t seed = 1;
	uint64_t fails = 0;

	for (uint64_t i = 0; i < iters; i++) {
		struct doca_buf *b;
		char *a = (char *)B.src + (size_t)next_chunk(&seed) * STRIDE;

		if (doca_buf_inventory_buf_by_addr(B.inv, B.sm, a, 64, &b) != DOCA_SUCCESS ||
		    doca_buf_refcount_rm(b, NULL) != DOCA_SUCCESS)
			fails++;
	}
	return fails;
}

/* Buffers are made once; only the jobs are timed, as in bench_dma. */
static struct doca_buf *sbuf[BATCH], *dbuf[BATCH];

static int make_bufs(void)
{
	uint32_t seed = 7;

	for (int i = 0; i < BATCH; i++) {
		char *s = (char *)B.src + (size_t)next_chunk(&seed) * STRIDE;
		char *d = (char *)B.dst + (size_t)next_chunk(&seed) * STRIDE;

		if (doca_buf_inventory_buf_by_addr(B.inv, B.sm, s, 64, &sbuf[i]) != DOCA_SUCCESS ||
		    doca_buf_set_data(sbuf[i], s, 64) != DOCA_SUCCESS ||
		    doca_buf_inventory_buf_by_addr(B.inv, B.dm, d, 64, &dbuf[i]) != DOCA_SUCCESS)
			return -1;
	}
	return 0;
}

static void drop_bufs(void)
{
	for (int i = 0; i < BATCH; i++) {
		doca_buf_refcount_rm(sbuf[i], NULL);
		doca_buf_refcount_rm(dbuf[i], NULL);
	}
}

static uint64_t dma_loop(uint64_t iters)
{
	struct doca_dma_job_memcpy job = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = B.ctx } };
	struct doca_event ev;
	uint64_t fails = 0;

	for (uint64_t i = 0; i < iters; i++) {
		job.src_buff = sbuf[i % BATCH];
		job.dst_buff = dbuf[i % BATCH];
		doca_buf_reset_data_len(job.dst_buff);
		if (doca_workq_submit(B.wq, &job.base) != DOCA_SUCCESS)
			fails++;
		else
			while (doca_workq_progress_retrieve(B.wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE) ==
			       DOCA_ERROR_AGAIN)
				;
		if (ev.result.u64 != DOCA_SUCCESS)
			fails++;
	}
	return fails;
}

/* Nanoseconds per iteration, best of REPEATS runs of at least min_time each. */
static double measure(uint64_t (*loop)(uint64_t), uint64_t *fails)
{
	double best = 1e30;

	for (int r = 0; r < REPEATS; r++) {
		uint64_t iters = 0, chunk = 100000;
		double t0 = now(), t;

		do {
			*fails += loop(chunk);
			iters += chunk;
			t = now() - t0;
		} while (t < B.min_time);
		if (t / (double)iters < best)
			best = t / (double)iters;
	}
	return best * 1e9;
}

/* n chunks of CHUNK bytes, or (whole) one chunk over the same span: the control. */
static struct doca_mmap *chunked_map(uint8_t *mem, uint32_t n, int whole)
{
	size_t len = whole ? (size_t)n * STRIDE : CHUNK;
	struct doca_mmap *m;

	if (whole)
		n = 1;

	if (doca_mmap_create("bench", &m) != DOCA_SUCCESS)
		return NULL;
	if (doca_mmap_property_set(m, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (uint8_t *)&n, sizeof(n)) != DOCA_SUCCESS ||
	    doca_mmap_dev_add(m, B.dev) != DOCA_SUCCESS || doca_mmap_start(m) != DOCA_SUCCESS)
		goto err;
	for (uint32_t i = 0; i < n; i++)
		if (doca_mmap_populate(m, (char *)mem + (size_t)i * STRIDE, len, 64, NULL, NULL) != DOCA_SUCCESS)
			goto err;
	return m;
err:
	doca_mmap_destroy(m);
	return NULL;
}

/* Both figures for n chunks (whole: one chunk over the same memory, same accesses). */
static int run_maps(uint32_t n, int whole, double *buf_ns, double *dma_ns)
{
	uint64_t fails = 0;

	B.n = n;
	B.sm = chunked_map(B.src, n, whole);
	B.dm = chunked_map(B.dst, n, whole);
	if (B.sm == NULL || B.dm == NULL || make_bufs() != 0) {
		fprintf(stderr, "setup of %u chunks failed\n", n);
		return -1;
	}
	*dma_ns = measure(dma_loop, &fails);
	drop_bufs();
	*buf_ns = measure(buf_loop, &fails);
	doca_mmap_destroy(B.sm);
	doca_mmap_destroy(B.dm);
	return fails == 0 ? 0 : -1;
}

static int run_case(uint32_t n)
{
	double buf_ns, dma_ns, buf1_ns, dma1_ns;

	if (run_maps(n, 0, &buf_ns, &dma_ns) != 0 || run_maps(n, 1, &buf1_ns, &dma1_ns) != 0)
		return -1;
	printf("%6u  %18.1f  %16.1f  %20.1f  %17.1f\n", n, buf_ns, dma_ns, buf1_ns, dma1_ns);
	return 0;
}

static int setup(void)
{
	B.src = malloc((size_t)MAX_CHUNKS * STRIDE);
	B.dst = malloc((size_t)MAX_CHUNKS * STRIDE);
	if (B.src == NULL || B.dst == NULL)
		return -1;
	memset(B.src, 0x5a, (size_t)MAX_CHUNKS * STRIDE);
	memset(B.dst, 0, (size_t)MAX_CHUNKS * STRIDE);
	if (doca_devinfo_list_create(&B.list) != DOCA_SUCCESS || B.list[0] == NULL ||
	    doca_dev_open(B.list[0], &B.dev) != DOCA_SUCCESS)
		return -1;
	if (doca_buf_inventory_create(NULL, 2 * BATCH + 16, DOCA_BUF_EXTENSION_NONE, &B.inv) != DOCA_SUCCESS ||
	    doca_buf_inventory_start(B.inv) != DOCA_SUCCESS || doca_dma_create(&B.dma) != DOCA_SUCCESS)
		return -1;
	B.ctx = doca_dma_as_ctx(B.dma);
	if (doca_ctx_dev_add(B.ctx, B.dev) != DOCA_SUCCESS || doca_ctx_start(B.ctx) != DOCA_SUCCESS ||
	    doca_workq_create(32, &B.wq) != DOCA_SUCCESS || doca_ctx_workq_add(B.ctx, B.wq) != DOCA_SUCCESS)
		return -1;
	return 0;
}

static void teardown(void)
{
	doca_ctx_workq_rm(B.ctx, B.wq);
	doca_workq_destroy(B.wq);
	doca_ctx_stop(B.ctx);
	doca_ctx_dev_rm(B.ctx, B.dev);
	doca_dma_destroy(B.dma);
	doca_buf_inventory_stop(B.inv);
	doca_buf_inventory_destroy(B.inv);
	doca_dev_close(B.dev);
	doca_devinfo_list_destroy(B.list);
	free(B.src);
	free(B.dst);
}

int main(int argc, char **argv)
{
	static const uint32_t counts[] = { 1, 16, 256, 4096, 65536 };
	int ret = 0;

	if (argc == 3 && strcmp(argv[1], "--time") == 0)
		B.min_time = atof(argv[2]);
	if (setup() != 0) {
		fprintf(stderr, "setup failed\n");
		return 1;
	}
	printf("== bench_chunks: DOCA 1.x mmap with N populated chunks (random chunk per access) ==\n");
	printf("chunks  buf_by_addr+rm ns  64 B DMA job ns  control: buf+rm ns  control: DMA ns\n");
	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]) && ret == 0; i++)
		ret = run_case(counts[i]);
	teardown();
	return ret == 0 ? 0 : 1;
}
