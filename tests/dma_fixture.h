/*
 * A ready DMA setup for tests: one open device, a source and a destination
 * mmap, an inventory, a started DMA context and a work queue added to it.
 */
#ifndef SOFTDPU_TEST_DMA_FIXTURE_H_
#define SOFTDPU_TEST_DMA_FIXTURE_H_

#include <stdlib.h>
#include <string.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_dma.h"
#include "doca_mmap.h"

struct fx {
	struct doca_devinfo **list;
	uint32_t ndev;
	struct doca_dev *dev;
	uint8_t *src, *dst;
	size_t len;
	struct doca_mmap *src_mmap, *dst_mmap;
	struct doca_buf_inventory *inv;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
};

static inline struct doca_mmap *fx_mmap(struct doca_dev *dev, void *mem, size_t len, uint32_t perm)
{
	struct doca_mmap *m = NULL;

	if (doca_mmap_create(NULL, &m) != DOCA_SUCCESS)
		return NULL;
	if (doca_mmap_dev_add(m, dev) != DOCA_SUCCESS || doca_mmap_set_memrange(m, mem, len) != DOCA_SUCCESS ||
	    doca_mmap_set_permissions(m, perm) != DOCA_SUCCESS || doca_mmap_start(m) != DOCA_SUCCESS) {
		doca_mmap_destroy(m);
		return NULL;
	}
	return m;
}

/* Returns 0 when everything is up. */
static inline int fx_setup(struct fx *f, size_t len, uint32_t depth, uint32_t dst_perm)
{
	memset(f, 0, sizeof(*f));
	f->len = len;
	if (doca_devinfo_list_create(&f->list, &f->ndev) != DOCA_SUCCESS || f->ndev == 0)
		return -1;
	if (doca_dev_open(f->list[0], &f->dev) != DOCA_SUCCESS)
		return -1;
	f->src = aligned_alloc(64, (len + 63) & ~(size_t)63);
	f->dst = aligned_alloc(64, (len + 63) & ~(size_t)63);
	if (f->src == NULL || f->dst == NULL)
		return -1;
	for (size_t i = 0; i < len; i++) {
		f->src[i] = (uint8_t)(i * 7 + 3);
		f->dst[i] = 0;
	}
	f->src_mmap = fx_mmap(f->dev, f->src, len, DOCA_ACCESS_LOCAL_READ_WRITE);
	f->dst_mmap = fx_mmap(f->dev, f->dst, len, dst_perm);
	if (f->src_mmap == NULL || f->dst_mmap == NULL)
		return -1;
	if (doca_buf_inventory_create(NULL, 1024, DOCA_BUF_EXTENSION_LINKED_LIST, &f->inv) != DOCA_SUCCESS ||
	    doca_buf_inventory_start(f->inv) != DOCA_SUCCESS)
		return -1;
	if (doca_dma_create(&f->dma) != DOCA_SUCCESS)
		return -1;
	f->ctx = doca_dma_as_ctx(f->dma);
	if (doca_ctx_dev_add(f->ctx, f->dev) != DOCA_SUCCESS || doca_ctx_start(f->ctx) != DOCA_SUCCESS)
		return -1;
	if (doca_workq_create(depth, &f->wq) != DOCA_SUCCESS || doca_ctx_workq_add(f->ctx, f->wq) != DOCA_SUCCESS)
		return -1;
	return 0;
}

static inline void fx_teardown(struct fx *f)
{
	if (f->wq != NULL) {
		doca_ctx_workq_rm(f->ctx, f->wq);
		doca_workq_destroy(f->wq);
	}
	if (f->dma != NULL) {
		doca_ctx_stop(f->ctx);
		doca_ctx_dev_rm(f->ctx, f->dev);
		doca_dma_destroy(f->dma);
	}
	if (f->inv != NULL) {
		doca_buf_inventory_stop(f->inv);
		doca_buf_inventory_destroy(f->inv);
	}
	if (f->src_mmap != NULL)
		doca_mmap_destroy(f->src_mmap);
	if (f->dst_mmap != NULL)
		doca_mmap_destroy(f->dst_mmap);
	if (f->dev != NULL)
		doca_dev_close(f->dev);
	if (f->list != NULL)
		doca_devinfo_list_destroy(f->list);
	free(f->src);
	free(f->dst);
	memset(f, 0, sizeof(*f));
}

/* Submits one memcpy and spins until its event; returns the retrieve status. */
static inline doca_error_t fx_copy(struct fx *f, struct doca_buf *dst, struct doca_buf *src, struct doca_event *ev)
{
	struct doca_dma_job_memcpy job = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = f->ctx,
						     .user_data.u64 = 0x5eed },
					   .dst_buff = dst, .src_buff = src };
	doca_error_t r = doca_workq_submit(f->wq, &job.base);

	if (r != DOCA_SUCCESS)
		return r;
	while ((r = doca_workq_progress_retrieve(f->wq, ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) == DOCA_ERROR_AGAIN)
		;
	return r;
}

#endif /* SOFTDPU_TEST_DMA_FIXTURE_H_ */
