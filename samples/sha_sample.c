/*
 * sha_sample — hashes a text with SHA-256 through a DOCA SHA job and prints
 * the digest in hex. Written against the plain DOCA 2.x API only.
 *
 * Usage: sha_sample [TEXT]   (default: a fixed sentence)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_sha.h>

DOCA_LOG_REGISTER(SHA_SAMPLE);

#define DEFAULT_TEXT "The quick brown fox jumps over the lazy dog"

struct sha_resources {
	struct doca_devinfo **list;
	struct doca_dev *dev;
	struct doca_mmap *src_mmap, *dst_mmap;
	struct doca_buf_inventory *inv;
	struct doca_sha *sha;
	struct doca_workq *wq;
	bool started, wq_added;
};

/* Opens the first device that can run SHA-256 jobs. */
static doca_error_t open_sha_device(struct sha_resources *r)
{
	uint32_t n = 0;
	doca_error_t ret = doca_devinfo_list_create(&r->list, &n);

	if (ret != DOCA_SUCCESS)
		return ret;
	for (uint32_t i = 0; i < n; i++)
		if (doca_sha_job_get_supported(r->list[i], DOCA_SHA_JOB_SHA256) == DOCA_SUCCESS)
			return doca_dev_open(r->list[i], &r->dev);
	return DOCA_ERROR_NOT_FOUND;
}

static doca_error_t make_mmap(struct doca_dev *dev, void *addr, size_t len, struct doca_mmap **mmap)
{
	doca_error_t ret = doca_mmap_create(NULL, mmap);

	if (ret == DOCA_SUCCESS)
		ret = doca_mmap_dev_add(*mmap, dev);
	if (ret == DOCA_SUCCESS)
		ret = doca_mmap_set_memrange(*mmap, addr, len);
	if (ret == DOCA_SUCCESS)
		ret = doca_mmap_set_permissions(*mmap, DOCA_ACCESS_LOCAL_READ_WRITE);
	if (ret == DOCA_SUCCESS)
		ret = doca_mmap_start(*mmap);
	return ret;
}

static doca_error_t setup(struct sha_resources *r, char *text, size_t len, uint8_t *digest)
{
	doca_error_t ret = open_sha_device(r);

	if (ret == DOCA_SUCCESS)
		ret = make_mmap(r->dev, text, len, &r->src_mmap);
	if (ret == DOCA_SUCCESS)
		ret = make_mmap(r->dev, digest, DOCA_SHA256_BYTE_COUNT, &r->dst_mmap);
	if (ret == DOCA_SUCCESS)
		ret = doca_buf_inventory_create(NULL, 2, DOCA_BUF_EXTENSION_NONE, &r->inv);
	if (ret == DOCA_SUCCESS)
		ret = doca_buf_inventory_start(r->inv);
	if (ret == DOCA_SUCCESS)
		ret = doca_sha_create(&r->sha);
	if (ret == DOCA_SUCCESS)
		ret = doca_ctx_dev_add(doca_sha_as_ctx(r->sha), r->dev);
	if (ret == DOCA_SUCCESS)
		ret = doca_ctx_start(doca_sha_as_ctx(r->sha));
	r->started = ret == DOCA_SUCCESS;
	if (ret == DOCA_SUCCESS)
		ret = doca_workq_create(1, &r->wq);
	if (ret == DOCA_SUCCESS)
		ret = doca_ctx_workq_add(doca_sha_as_ctx(r->sha), r->wq);
	r->wq_added = ret == DOCA_SUCCESS;
	return ret;
}

static void cleanup(struct sha_resources *r)
{
	struct doca_ctx *ctx = r->sha != NULL ? doca_sha_as_ctx(r->sha) : NULL;

	if (r->wq_added)
		doca_ctx_workq_rm(ctx, r->wq);
	if (r->wq != NULL)
		doca_workq_destroy(r->wq);
	if (r->started)
		doca_ctx_stop(ctx);
	if (r->sha != NULL) {
		doca_ctx_dev_rm(ctx, r->dev);
		doca_sha_destroy(r->sha);
	}
	if (r->inv != NULL) {
		doca_buf_inventory_stop(r->inv);
		doca_buf_inventory_destroy(r->inv);
	}
	if (r->src_mmap != NULL)
		doca_mmap_destroy(r->src_mmap);
	if (r->dst_mmap != NULL)
		doca_mmap_destroy(r->dst_mmap);
	if (r->dev != NULL)
		doca_dev_close(r->dev);
	if (r->list != NULL)
		doca_devinfo_list_destroy(r->list);
}

/* Submits one SHA-256 job and polls for its completion. */
static doca_error_t hash(struct sha_resources *r, char *text, size_t len, uint8_t *digest)
{
	struct doca_buf *src = NULL, *dst = NULL;
	struct doca_event ev = { 0 };
	doca_error_t ret;

	ret = doca_buf_inventory_buf_by_args(r->inv, r->src_mmap, text, len + 1, text, len, &src);
	if (ret == DOCA_SUCCESS)
		ret = doca_buf_inventory_buf_by_addr(r->inv, r->dst_mmap, digest, DOCA_SHA256_BYTE_COUNT, &dst);
	if (ret == DOCA_SUCCESS) {
		struct doca_sha_job job = {
			.base = { .type = DOCA_SHA_JOB_SHA256, .ctx = doca_sha_as_ctx(r->sha) },
			.req_buf = src,
			.resp_buf = dst,
			.flags = DOCA_SHA_JOB_FLAGS_NONE,
		};

		ret = doca_workq_submit(r->wq, &job.base);
		while (ret == DOCA_SUCCESS &&
		       (ret = doca_workq_progress_retrieve(r->wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) ==
			       DOCA_ERROR_AGAIN)
			;
		if (ret == DOCA_ERROR_IO_FAILED)
			ret = (doca_error_t)ev.result.u64;
	}
	if (src != NULL)
		doca_buf_refcount_rm(src, NULL);
	if (dst != NULL)
		doca_buf_refcount_rm(dst, NULL);
	return ret;
}

int main(int argc, char **argv)
{
	char *text = strdup(argc > 1 ? argv[1] : DEFAULT_TEXT);
	uint8_t digest[DOCA_SHA256_BYTE_COUNT] = { 0 };
	struct sha_resources r = { 0 };
	doca_error_t ret;
	size_t len;

	if (text == NULL)
		return EXIT_FAILURE;
	len = strlen(text);
	/* The range includes the terminator, so that an empty text still maps one byte. */
	ret = setup(&r, text, len + 1, digest);
	if (ret == DOCA_SUCCESS)
		ret = hash(&r, text, len, digest);
	cleanup(&r);
	free(text);
	if (ret != DOCA_SUCCESS) {
		DOCA_LOG_ERR("SHA-256 job failed: %s", doca_get_error_string(ret));
		return EXIT_FAILURE;
	}
	for (size_t i = 0; i < DOCA_SHA256_BYTE_COUNT; i++)
		printf("%02x", digest[i]);
	printf("\n");
	return EXIT_SUCCESS;
}
