/*
 * A ready DMA setup for tests: the memory of tests/mem_fixture.h (one open
 * device, a source and a destination mmap, an inventory), a started DMA
 * context and a work queue added to it.
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
#include "mem_fixture.h"

struct fx {
	MEM_FX_EMBED; /* dev, src/dst and their mmaps, inventory */
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
};

/* The mmap builder of tests/mem_fixture.h, by its older name. */
static inline struct doca_mmap *fx_mmap(struct doca_dev *dev, void *mem, size_t len, uint32_t perm)
{
	return mem_fx_mmap(dev, mem, len, perm);
}

static inline void fx_close(struct fx *f)
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
	f->wq = NULL;
	f->dma = NULL;
	f->ctx = NULL;
	mem_fx_close(&f->mem);
}

static inline void fx_cleanup(void *f)
{
	fx_close(f);
}

/* Returns 0 when everything is up; released by fx_teardown, or by the harness if the case stops first. */
static inline int fx_setup(struct fx *f, size_t len, uint32_t depth, uint32_t dst_perm)
{
	struct mem_fx_cfg cfg = { .len = len, .dst_len = len, .dst_perm = dst_perm, .inv_num = 1024 };

	memset(f, 0, sizeof(*f));
	th_defer_local(fx_cleanup, f);
	if (mem_fx_open(&f->mem, &cfg) != 0)
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
	th_undefer(fx_cleanup, f);
	fx_close(f);
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
