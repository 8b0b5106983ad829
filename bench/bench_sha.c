/*
 * bench_sha — DOCA SHA jobs against OpenSSL's EVP interface called directly,
 * on the same buffers, in the same run.
 *
 * One thread, polling. For every (algorithm, size) case, `depth` one-shot jobs
 * are submitted and then retrieved, over and over; jobs and buffers are made
 * before the timed loop, so it measures doca_workq_submit +
 * doca_workq_progress_retrieve (plus doca_buf_reset_data_len to reuse a
 * response). The reference hashes the same slots in the same order with one
 * reused EVP_MD_CTX and an explicitly fetched algorithm — the cheapest way to
 * call OpenSSL for many messages. DOCA and OpenSSL windows alternate, so a
 * change of clock speed hits both.
 *
 * Slots rotate across a 64 MiB source region: sizes of 1 MiB and more stream
 * from memory, smaller ones stay in cache, for both sides alike.
 *
 * Usage: bench_sha [--quick] [--time SECONDS] [--size BYTES] (--size runs that size only, e.g. under a profiler)
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in strict C11 */

#include <openssl/evp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_mmap.h>
#include <doca_sha.h>

#define KIB ((size_t)1 << 10)
#define MIB ((size_t)1 << 20)
#define REGION (64 * MIB)
#define DEPTH 16u
#define ROUNDS 5

static const size_t sizes[] = { 64, KIB, 64 * KIB, MIB, 16 * MIB };
static const char *const alg_name[3] = { "SHA-1", "SHA-256", "SHA-512" };
static const char *const alg_fetch[3] = { "SHA1", "SHA256", "SHA512" };
static const size_t digest_len[3] = { DOCA_SHA1_BYTE_COUNT, DOCA_SHA256_BYTE_COUNT, DOCA_SHA512_BYTE_COUNT };
static const int alg_type[3] = { DOCA_SHA_JOB_SHA1, DOCA_SHA_JOB_SHA256, DOCA_SHA_JOB_SHA512 };

#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

struct bench {
	struct doca_devinfo **list;
	struct doca_dev *dev;
	uint8_t *src, *dst, *ref_dst;
	struct doca_mmap *src_mmap, *dst_mmap;
	struct doca_buf_inventory *inv;
	struct doca_sha *sha;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
	struct doca_buf *req[DEPTH], *resp[DEPTH];
	struct doca_sha_job job[DEPTH];
	EVP_MD_CTX *md;
	EVP_MD *alg[3];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct doca_mmap *mk_mmap(struct doca_dev *dev, void *mem, size_t len)
{
	struct doca_mmap *m = NULL;

	if (doca_mmap_create(NULL, &m) != DOCA_SUCCESS)
		return NULL;
	if (doca_mmap_dev_add(m, dev) != DOCA_SUCCESS || doca_mmap_set_memrange(m, mem, len) != DOCA_SUCCESS ||
	    doca_mmap_set_permissions(m, DOCA_ACCESS_LOCAL_READ_WRITE) != DOCA_SUCCESS ||
	    doca_mmap_start(m) != DOCA_SUCCESS) {
		doca_mmap_destroy(m);
		return NULL;
	}
	return m;
}

static int setup(struct bench *b)
{
	uint32_t n = 0;

	memset(b, 0, sizeof(*b));
	if (doca_devinfo_list_create(&b->list, &n) != DOCA_SUCCESS || n == 0 ||
	    doca_dev_open(b->list[0], &b->dev) != DOCA_SUCCESS)
		return -1;
	b->src = aligned_alloc(4096, REGION);
	b->dst = aligned_alloc(64, DEPTH * 64);
	b->ref_dst = aligned_alloc(64, DEPTH * 64);
	if (b->src == NULL || b->dst == NULL || b->ref_dst == NULL)
		return -1;
	for (size_t i = 0; i < REGION; i++)
		b->src[i] = (uint8_t)(i * 2654435761u >> 13);
	b->src_mmap = mk_mmap(b->dev, b->src, REGION);
	b->dst_mmap = mk_mmap(b->dev, b->dst, DEPTH * 64);
	if (b->src_mmap == NULL || b->dst_mmap == NULL)
		return -1;
	if (doca_buf_inventory_create(NULL, 2 * DEPTH, DOCA_BUF_EXTENSION_NONE, &b->inv) != DOCA_SUCCESS ||
	    doca_buf_inventory_start(b->inv) != DOCA_SUCCESS || doca_sha_create(&b->sha) != DOCA_SUCCESS)
		return -1;
	b->ctx = doca_sha_as_ctx(b->sha);
	if (doca_ctx_dev_add(b->ctx, b->dev) != DOCA_SUCCESS || doca_ctx_start(b->ctx) != DOCA_SUCCESS ||
	    doca_workq_create(DEPTH, &b->wq) != DOCA_SUCCESS || doca_ctx_workq_add(b->ctx, b->wq) != DOCA_SUCCESS)
		return -1;
	b->md = EVP_MD_CTX_new();
	for (int a = 0; a < 3; a++)
		if ((b->alg[a] = EVP_MD_fetch(NULL, alg_fetch[a], NULL)) == NULL)
			return -1;
	return b->md == NULL ? -1 : 0;
}

static void teardown(struct bench *b)
{
	for (int a = 0; a < 3; a++)
		EVP_MD_free(b->alg[a]);
	EVP_MD_CTX_free(b->md);
	if (b->wq != NULL) {
		doca_ctx_workq_rm(b->ctx, b->wq);
		doca_workq_destroy(b->wq);
	}
	if (b->sha != NULL) {
		doca_ctx_stop(b->ctx);
		doca_ctx_dev_rm(b->ctx, b->dev);
		doca_sha_destroy(b->sha);
	}
	if (b->inv != NULL) {
		doca_buf_inventory_stop(b->inv);
		doca_buf_inventory_destroy(b->inv);
	}
	if (b->src_mmap != NULL)
		doca_mmap_destroy(b->src_mmap);
	if (b->dst_mmap != NULL)
		doca_mmap_destroy(b->dst_mmap);
	if (b->dev != NULL)
		doca_dev_close(b->dev);
	if (b->list != NULL)
		doca_devinfo_list_destroy(b->list);
	free(b->src);
	free(b->dst);
	free(b->ref_dst);
}

/* Source offset of slot i: consecutive slots, wrapping inside the region. */
static size_t slot_off(size_t size, uint32_t i)
{
	return (i * size) % (REGION / size * size);
}

static int prepare(struct bench *b, int alg, size_t size)
{
	for (uint32_t i = 0; i < DEPTH; i++) {
		if (doca_buf_inventory_buf_by_data(b->inv, b->src_mmap, b->src + slot_off(size, i), size, &b->req[i]) !=
			    DOCA_SUCCESS ||
		    doca_buf_inventory_buf_by_addr(b->inv, b->dst_mmap, b->dst + i * 64, 64, &b->resp[i]) != DOCA_SUCCESS)
			return -1;
		b->job[i] = (struct doca_sha_job){ .base = { .type = alg_type[alg], .ctx = b->ctx },
						   .req_buf = b->req[i], .resp_buf = b->resp[i] };
	}
	return 0;
}

static void release(struct bench *b)
{
	for (uint32_t i = 0; i < DEPTH; i++) {
		doca_buf_refcount_rm(b->req[i], NULL);
		doca_buf_refcount_rm(b->resp[i], NULL);
	}
}

/* One batch of DEPTH jobs through the work queue; -1 on any failure. */
static int doca_batch(struct bench *b)
{
	struct doca_event ev;
	doca_error_t r;

	for (uint32_t i = 0; i < DEPTH; i++) {
		doca_buf_reset_data_len(b->resp[i]);
		if (doca_workq_submit(b->wq, &b->job[i].base) != DOCA_SUCCESS)
			return -1;
	}
	for (uint32_t done = 0; done < DEPTH;) {
		r = doca_workq_progress_retrieve(b->wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE);
		if (r == DOCA_SUCCESS)
			done++;
		else if (r != DOCA_ERROR_AGAIN)
			return -1;
	}
	return 0;
}

/* The same slots straight through OpenSSL. */
static int evp_batch(struct bench *b, int alg, size_t size)
{
	unsigned int len;

	for (uint32_t i = 0; i < DEPTH; i++) {
		if (EVP_DigestInit_ex2(b->md, b->alg[alg], NULL) != 1 ||
		    EVP_DigestUpdate(b->md, b->src + slot_off(size, i), size) != 1 ||
		    EVP_DigestFinal_ex(b->md, b->ref_dst + i * 64, &len) != 1)
			return -1;
	}
	return 0;
}

/* Runs batches for about `secs`; returns bytes hashed per second, or -1. */
static double timed(struct bench *b, int alg, size_t size, double secs, bool doca)
{
	double t0 = now(), t;
	uint64_t batches = 0;

	do {
		for (int k = 0; k < 4; k++)
			if ((doca ? doca_batch(b) : evp_batch(b, alg, size)) != 0)
				return -1;
		batches += 4;
		t = now();
	} while (t - t0 < secs);
	return (double)batches * DEPTH * (double)size / (t - t0);
}

static int run_case(struct bench *b, int alg, size_t size, double secs)
{
	double d = 0, e = 0, dr, er;

	if (prepare(b, alg, size) != 0)
		return -1;
	for (int r = 0; r < ROUNDS; r++) {
		dr = timed(b, alg, size, secs / ROUNDS, true);
		er = timed(b, alg, size, secs / ROUNDS, false);
		if (dr < 0 || er < 0)
			goto err;
		d += dr / ROUNDS;
		e += er / ROUNDS;
	}
	/* Both sides hashed the same slots: their digests must agree. */
	for (uint32_t i = 0; i < DEPTH; i++) {
		if (memcmp(b->dst + i * 64, b->ref_dst + i * 64, digest_len[alg]) != 0) {
			fprintf(stderr, "bench_sha: digests differ\n");
			goto err;
		}
	}
	printf("%-8s %9zu %12.3f %12.3f %10.0f %10.0f %7.1f%%\n", alg_name[alg], size, d / 1e9, e / 1e9,
	       (double)size / d * 1e9, (double)size / e * 1e9, 100.0 * d / e);
	release(b);
	return 0;
err:
	release(b);
	return -1;
}

int main(int argc, char **argv)
{
	double secs = 2.0;
	size_t only = 0;
	struct bench b;
	int ret = 1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			secs = 0.05;
		} else if (strcmp(argv[i], "--time") == 0 && i + 1 < argc) {
			secs = atof(argv[++i]);
		} else if (strcmp(argv[i], "--size") == 0 && i + 1 < argc) {
			only = (size_t)strtoull(argv[++i], NULL, 0);
		} else {
			fprintf(stderr, "usage: bench_sha [--quick] [--time SECONDS] [--size BYTES]\n");
			return 2;
		}
	}
	if (setup(&b) != 0) {
		fprintf(stderr, "bench_sha: setup failed\n");
		goto out;
	}
	printf("DOCA SHA one-shot jobs vs OpenSSL EVP direct (same buffers), depth %u, %.2f s per case\n", DEPTH, secs);
	printf("%-8s %9s %12s %12s %10s %10s %8s\n", "alg", "bytes", "DOCA GB/s", "EVP GB/s", "DOCA ns", "EVP ns",
	       "ratio");
	for (int a = 0; a < 3; a++)
		for (size_t s = 0; s < NSIZES; s++)
			if ((only == 0 || only == sizes[s]) && run_case(&b, a, sizes[s], secs) != 0)
				goto out;
	ret = 0;
out:
	teardown(&b);
	return ret;
}
