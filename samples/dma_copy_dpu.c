/*
 * DMA copy, DPU side (run with SOFTDPU_SIDE=dpu, before dma_copy_host):
 * serves the comm channel on the representor of host pf0, receives the host's
 * export descriptor and buffer address, imports the host memory, reads it
 * with a DMA job, and writes an answer back into it with another.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_log.h>
#include <doca_mmap.h>

#include "dma_copy_proto.h"
#include "sample_common.h"

DOCA_LOG_REGISTER(DMA_COPY_DPU);

struct dpu_state {
	struct doca_dev *dev;
	struct doca_dev_rep *rep;
	struct doca_mmap *remote, *local;
	struct doca_buf_inventory *inv;
	struct doca_dma *dma;
	struct doca_workq *wq;
	uint8_t *buf;
};

static doca_error_t setup_dma(struct dpu_state *s, size_t len)
{
	doca_error_t r;

	s->buf = malloc(len);
	if (s->buf == NULL)
		return DOCA_ERROR_NO_MEMORY;
	r = doca_mmap_create(NULL, &s->local);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_dev_add(s->local, s->dev);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_set_memrange(s->local, s->buf, len);
	if (r == DOCA_SUCCESS)
		r = doca_mmap_start(s->local);
	if (r == DOCA_SUCCESS)
		r = doca_buf_inventory_create(NULL, 4, 0, &s->inv);
	if (r == DOCA_SUCCESS)
		r = doca_buf_inventory_start(s->inv);
	if (r == DOCA_SUCCESS)
		r = doca_dma_create(&s->dma);
	if (r == DOCA_SUCCESS)
		r = doca_ctx_dev_add(doca_dma_as_ctx(s->dma), s->dev);
	if (r == DOCA_SUCCESS)
		r = doca_ctx_start(doca_dma_as_ctx(s->dma));
	if (r == DOCA_SUCCESS)
		r = doca_workq_create(8, &s->wq);
	if (r == DOCA_SUCCESS)
		r = doca_ctx_workq_add(doca_dma_as_ctx(s->dma), s->wq);
	return r;
}

/* One memcpy job from src to dst, waited for. */
static doca_error_t dma(struct dpu_state *s, struct doca_buf *dst, struct doca_buf *src)
{
	struct doca_dma_job_memcpy job = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = doca_dma_as_ctx(s->dma) },
					   .dst_buff = dst, .src_buff = src };
	struct doca_event ev = { 0 };
	doca_error_t r = doca_workq_submit(s->wq, &job.base);

	while (r == DOCA_SUCCESS && (r = doca_workq_progress_retrieve(s->wq, &ev, 0)) == DOCA_ERROR_AGAIN)
		;
	if (r == DOCA_ERROR_IO_FAILED)
		r = (doca_error_t)ev.result.u64;
	return r;
}

/* Reads the host buffer, then writes the answer over it. */
static doca_error_t copy_both_ways(struct dpu_state *s, const struct dma_copy_info *info, uint64_t *checksum)
{
	void *host = (void *)(uintptr_t)info->addr;
	struct doca_buf *hb = NULL, *lb = NULL;
	doca_error_t r;

	r = doca_buf_inventory_buf_by_data(s->inv, s->remote, host, info->len, &hb);
	if (r == DOCA_SUCCESS)
		r = doca_buf_inventory_buf_by_addr(s->inv, s->local, s->buf, info->len, &lb);
	if (r == DOCA_SUCCESS)
		r = dma(s, lb, hb);
	if (r == DOCA_SUCCESS) {
		*checksum = dma_copy_checksum(s->buf, info->len);
		printf("dpu: read %llu bytes of host memory, checksum %#llx\n", (unsigned long long)info->len,
		       (unsigned long long)*checksum);
		for (size_t i = 0; i < info->len; i++)
			s->buf[i] = dma_copy_answer(i);
		doca_buf_reset_data_len(hb);
		r = dma(s, hb, lb);
	}
	if (hb != NULL)
		doca_buf_refcount_rm(hb, NULL);
	if (lb != NULL)
		doca_buf_refcount_rm(lb, NULL);
	return r;
}

static void teardown(struct dpu_state *s)
{
	if (s->wq != NULL) {
		doca_ctx_workq_rm(doca_dma_as_ctx(s->dma), s->wq);
		doca_workq_destroy(s->wq);
	}
	if (s->dma != NULL) {
		doca_ctx_stop(doca_dma_as_ctx(s->dma));
		doca_ctx_dev_rm(doca_dma_as_ctx(s->dma), s->dev);
		doca_dma_destroy(s->dma);
	}
	if (s->inv != NULL)
		doca_buf_inventory_destroy(s->inv);
	if (s->remote != NULL)
		doca_mmap_destroy(s->remote);
	if (s->local != NULL)
		doca_mmap_destroy(s->local);
	free(s->buf);
}

int main(void)
{
	struct dpu_state s = { 0 };
	struct sample_cc cc = { 0 };
	struct dma_copy_info info;
	struct dma_copy_done done = { .magic = DMA_COPY_MAGIC };
	uint8_t desc[4096];
	size_t desc_len = sizeof(desc), n = sizeof(info);
	doca_error_t r;

	r = sample_open_dev(SAMPLE_DPU_PCI, &s.dev);
	if (r == DOCA_SUCCESS)
		r = sample_open_rep(s.dev, SAMPLE_HOST_PCI, &s.rep);
	if (r == DOCA_SUCCESS)
		r = sample_cc_service(&cc, s.dev, s.rep, DMA_COPY_SERVICE);
	if (r == DOCA_SUCCESS)
		printf("dpu: waiting for the host on comm channel service \"%s\"\n", DMA_COPY_SERVICE);
	if (r == DOCA_SUCCESS)
		r = sample_cc_recv(&cc, desc, &desc_len);
	if (r == DOCA_SUCCESS)
		r = sample_cc_recv(&cc, &info, &n);
	if (r == DOCA_SUCCESS && (n != sizeof(info) || info.magic != DMA_COPY_MAGIC || info.len > DMA_COPY_MAX))
		r = DOCA_ERROR_INVALID_VALUE;
	if (r == DOCA_SUCCESS)
		r = doca_mmap_create_from_export(NULL, desc, desc_len, s.dev, &s.remote);
	if (r == DOCA_SUCCESS)
		r = setup_dma(&s, info.len);
	if (r == DOCA_SUCCESS)
		r = copy_both_ways(&s, &info, &done.checksum);
	done.status = r;
	if (cc.peer != NULL)
		sample_cc_send(&cc, &done, sizeof(done));
	if (r != DOCA_SUCCESS)
		DOCA_LOG_ERR("DMA copy failed: %s", doca_get_error_string(r));
	teardown(&s);
	sample_cc_close(&cc);
	if (s.rep != NULL)
		doca_dev_rep_close(s.rep);
	if (s.dev != NULL)
		doca_dev_close(s.dev);
	return r == DOCA_SUCCESS ? 0 : 1;
}
