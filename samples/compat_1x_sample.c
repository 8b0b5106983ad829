/*
 * compat_1x_sample — a DOCA 1.x program, region-based flow (DOCA Core guide
 * §6.2): one mmap holding every known memory range, buffers taken anywhere
 * inside them on the data path, DMA between them.
 *
 * Built with DOCA_COMPAT_1X, so it uses the 1.x signatures unchanged.
 */
#define DOCA_COMPAT_1X

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_mmap.h>

#define NUM_RANGES 8
#define RANGE_SIZE 4096

struct state {
	struct doca_devinfo **list;
	struct doca_dev *dev;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
	char *ranges[NUM_RANGES]; /* still ours: not yet populated */
	char *chunk[NUM_RANGES];  /* the populated ranges; the mmap frees them on destroy */
};

static void free_range(void *addr, size_t len, void *opaque)
{
	(void)len;
	(void)opaque;
	free(addr);
}

/* Control path: every range known up front goes into one mmap. */
static doca_error_t control_path(struct state *s)
{
	uint32_t max_chunks = NUM_RANGES;
	doca_error_t r;

	r = doca_devinfo_list_create(&s->list);
	if (r != DOCA_SUCCESS || s->list[0] == NULL)
		return r != DOCA_SUCCESS ? r : DOCA_ERROR_NOT_FOUND;
	r = doca_dev_open(s->list[0], &s->dev);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_create("sample_mmap", &s->mmap);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_property_set(s->mmap, DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS, (const uint8_t *)&max_chunks,
					   sizeof(max_chunks));
	if (r == DOCA_SUCCESS)
		r = doca_mmap_start(s->mmap);
	for (int i = 0; i < NUM_RANGES && r == DOCA_SUCCESS; i++) {
		s->ranges[i] = calloc(1, RANGE_SIZE);
		if (s->ranges[i] == NULL)
			return DOCA_ERROR_NO_MEMORY;
		r = doca_mmap_populate(s->mmap, s->ranges[i], RANGE_SIZE, 4096, free_range, NULL);
		if (r == DOCA_SUCCESS) {
			s->chunk[i] = s->ranges[i];
			s->ranges[i] = NULL;
		}
	}
	if (r == DOCA_SUCCESS)
		r = doca_mmap_dev_add(s->mmap, s->dev);
	if (r == DOCA_SUCCESS)
		r = doca_buf_inventory_create("sample_inventory", 2, DOCA_BUF_EXTENSION_NONE, &s->inv);
	if (r == DOCA_SUCCESS)
		r = doca_buf_inventory_start(s->inv);
	if (r == DOCA_SUCCESS)
		r = doca_dma_create(&s->dma);
	if (r != DOCA_SUCCESS)
		return r;
	s->ctx = doca_dma_as_ctx(s->dma);
	r = doca_ctx_dev_add(s->ctx, s->dev);
	if (r == DOCA_SUCCESS)
		r = doca_ctx_start(s->ctx);
	if (r == DOCA_SUCCESS)
		r = doca_workq_create(8, &s->wq);
	if (r == DOCA_SUCCESS)
		r = doca_ctx_workq_add(s->ctx, s->wq);
	return r;
}

/* Data path: one (address, length) pair to copy into another. */
static doca_error_t copy_pair(struct state *s, char *dst, char *src, size_t len)
{
	struct doca_dma_job_memcpy job = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = s->ctx } };
	struct doca_buf *sb, *db;
	struct doca_event ev;
	doca_error_t r;

	r = doca_buf_inventory_buf_by_addr(s->inv, s->mmap, src, len, &sb);
	if (r != DOCA_SUCCESS)
		return r;
	r = doca_buf_inventory_buf_by_addr(s->inv, s->mmap, dst, len, &db);
	if (r != DOCA_SUCCESS)
		goto out_src;
	r = doca_buf_set_data(sb, src, len); /* the 2.2 job copies the source's data segment */
	if (r != DOCA_SUCCESS)
		goto out_dst;
	job.src_buff = sb;
	job.dst_buff = db;
	r = doca_workq_submit(s->wq, &job.base);
	while (r == DOCA_SUCCESS &&
	       (r = doca_workq_progress_retrieve(s->wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) == DOCA_ERROR_AGAIN)
		;
out_dst:
	doca_buf_refcount_rm(db, NULL);
out_src:
	doca_buf_refcount_rm(sb, NULL);
	return r;
}

static void cleanup(struct state *s)
{
	if (s->wq != NULL) {
		doca_ctx_workq_rm(s->ctx, s->wq);
		doca_workq_destroy(s->wq);
	}
	if (s->dma != NULL) {
		doca_ctx_stop(s->ctx);
		doca_ctx_dev_rm(s->ctx, s->dev);
		doca_dma_destroy(s->dma);
	}
	if (s->inv != NULL) {
		doca_buf_inventory_stop(s->inv);
		doca_buf_inventory_destroy(s->inv);
	}
	if (s->mmap != NULL)
		doca_mmap_destroy(s->mmap); /* frees the populated ranges */
	for (int i = 0; i < NUM_RANGES; i++)
		free(s->ranges[i]);
	if (s->dev != NULL)
		doca_dev_close(s->dev);
	if (s->list != NULL)
		doca_devinfo_list_destroy(s->list);
}

/* Copies a pattern through every range in turn and checks it arrived. */
static doca_error_t data_path(struct state *s)
{
	const char msg[] = "softdpu: DOCA 1.x region-based DMA";
	doca_error_t r;

	memcpy(s->chunk[0] + 100, msg, sizeof(msg));
	for (int i = 1; i < NUM_RANGES; i++) {
		/* anywhere inside the ranges: offsets differ per hop */
		r = copy_pair(s, s->chunk[i] + 37 * i, s->chunk[i - 1] + (i == 1 ? 100 : 37 * (i - 1)), sizeof(msg));
		if (r != DOCA_SUCCESS)
			return r;
	}
	if (memcmp(s->chunk[NUM_RANGES - 1] + 37 * (NUM_RANGES - 1), msg, sizeof(msg)) != 0)
		return DOCA_ERROR_UNEXPECTED;
	printf("%s: %d hops across %d chunks of one mmap\n", msg, NUM_RANGES - 1, NUM_RANGES);
	return DOCA_SUCCESS;
}

int main(void)
{
	struct state s = { 0 };
	doca_error_t r = control_path(&s);

	if (r == DOCA_SUCCESS)
		r = data_path(&s);
	if (r != DOCA_SUCCESS)
		fprintf(stderr, "compat_1x_sample failed: %s\n", doca_get_error_string(r));
	cleanup(&s);
	return r == DOCA_SUCCESS ? 0 : 1;
}
