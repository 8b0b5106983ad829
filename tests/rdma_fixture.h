/*
 * DOCA RDMA test pieces: one side (device, context, work queue, local and
 * exported memory, an inventory) and the steps the vendor samples take
 * between two sides (export, connect, import the peer's memory).
 */
#ifndef SOFTDPU_TEST_RDMA_FIXTURE_H_
#define SOFTDPU_TEST_RDMA_FIXTURE_H_

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_mmap.h"
#include "doca_rdma.h"

#define RX_LEN 4096
#define RX_HANG_NS (10ull * 1000000000ull) /* a hang guard, not a timing check */

struct rx_side {
	struct doca_devinfo **list;
	uint32_t nlist;
	struct doca_dev *dev;
	struct doca_rdma *rdma;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
	uint8_t *mem; /* RX_LEN bytes: local buffers at 0, the exported part at RX_LEN / 2 */
	struct doca_mmap *mmap;
	struct doca_mmap *remote; /* the peer's exported memory, imported */
	struct doca_buf_inventory *inv;
};

static inline uint64_t rx_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static inline void rx_close(struct rx_side *s)
{
	if (s->wq != NULL) {
		doca_ctx_workq_rm(s->ctx, s->wq);
		doca_workq_destroy(s->wq);
	}
	if (s->rdma != NULL) {
		doca_ctx_stop(s->ctx);
		doca_ctx_dev_rm(s->ctx, s->dev);
		doca_rdma_destroy(s->rdma);
	}
	if (s->inv != NULL) {
		doca_buf_inventory_stop(s->inv);
		doca_buf_inventory_destroy(s->inv);
	}
	if (s->remote != NULL)
		doca_mmap_destroy(s->remote);
	if (s->mmap != NULL)
		doca_mmap_destroy(s->mmap);
	if (s->dev != NULL)
		doca_dev_close(s->dev);
	if (s->list != NULL)
		doca_devinfo_list_destroy(s->list);
	free(s->mem);
	memset(s, 0, sizeof(*s));
}

static inline void rx_cleanup(void *s)
{
	rx_close(s);
}

/*
 * Opens the device and its memory (mmap permissions mperm), creates the
 * context with RDMA permissions rperm (0: left at its default) and, unless
 * started is false, starts it with a work queue of depth 32 (event-driven
 * when evd). 0 when all is up.
 */
static inline int rx_open(struct rx_side *s, uint32_t mperm, uint32_t rperm, bool start, bool evd)
{
	memset(s, 0, sizeof(*s));
	s->mem = calloc(1, RX_LEN);
	if (s->mem == NULL || doca_devinfo_list_create(&s->list, &s->nlist) != DOCA_SUCCESS || s->nlist == 0 ||
	    doca_dev_open(s->list[0], &s->dev) != DOCA_SUCCESS)
		return -1;
	if (doca_mmap_create(NULL, &s->mmap) != DOCA_SUCCESS || doca_mmap_dev_add(s->mmap, s->dev) != DOCA_SUCCESS ||
	    doca_mmap_set_memrange(s->mmap, s->mem, RX_LEN) != DOCA_SUCCESS ||
	    doca_mmap_set_permissions(s->mmap, mperm) != DOCA_SUCCESS || doca_mmap_start(s->mmap) != DOCA_SUCCESS)
		return -2;
	if (doca_buf_inventory_create(NULL, 64, 0, &s->inv) != DOCA_SUCCESS ||
	    doca_buf_inventory_start(s->inv) != DOCA_SUCCESS)
		return -3;
	if (doca_rdma_create(&s->rdma) != DOCA_SUCCESS)
		return -4;
	s->ctx = doca_rdma_as_ctx(s->rdma);
	if (doca_ctx_dev_add(s->ctx, s->dev) != DOCA_SUCCESS)
		return -5;
	if (rperm != 0 && doca_rdma_set_permissions(s->rdma, rperm) != DOCA_SUCCESS)
		return -6;
	if (!start)
		return 0;
	if (doca_ctx_start(s->ctx) != DOCA_SUCCESS || doca_workq_create(32, &s->wq) != DOCA_SUCCESS)
		return -7;
	if (evd && doca_workq_set_event_driven_enable(s->wq, 1) != DOCA_SUCCESS)
		return -8;
	if (doca_ctx_workq_add(s->ctx, s->wq) != DOCA_SUCCESS)
		return -9;
	return 0;
}

/* Imports the peer's memory export: what the sample requester does with the responder's file. */
static inline doca_error_t rx_import(struct rx_side *s, const void *desc, size_t len)
{
	return doca_mmap_create_from_export(NULL, desc, len, s->dev, &s->remote);
}

/* Connects a and b both ways, as two samples exchanging their descriptor files. */
static inline doca_error_t rx_pair(struct rx_side *a, struct rx_side *b)
{
	const void *da, *db;
	size_t la, lb;
	doca_error_t ret;

	ret = doca_rdma_export(a->rdma, &da, &la);
	if (ret == DOCA_SUCCESS)
		ret = doca_rdma_export(b->rdma, &db, &lb);
	if (ret == DOCA_SUCCESS)
		ret = doca_rdma_connect(a->rdma, db, lb);
	if (ret == DOCA_SUCCESS)
		ret = doca_rdma_connect(b->rdma, da, la);
	return ret;
}

/* b's memory at RX_LEN / 2, exported for RDMA and imported by a. */
static inline doca_error_t rx_share(struct rx_side *a, struct rx_side *b)
{
	const void *d;
	size_t l;
	doca_error_t ret = doca_mmap_export_rdma(b->mmap, b->dev, &d, &l);

	return ret == DOCA_SUCCESS ? rx_import(a, d, l) : ret;
}

/* Retrieves the next event, result written into *res; gives up (DOCA_ERROR_TIME_OUT) after the hang guard. */
static inline doca_error_t rx_retrieve(struct rx_side *s, struct doca_event *ev, struct doca_rdma_result *res)
{
	uint64_t end = rx_now() + RX_HANG_NS;
	doca_error_t ret;

	do {
		memset(ev, 0, sizeof(*ev));
		memset(res, 0xee, sizeof(*res));
		ev->result.ptr = res;
		ret = doca_workq_progress_retrieve(s->wq, ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE);
	} while (ret == DOCA_ERROR_AGAIN && rx_now() < end);
	return ret == DOCA_ERROR_AGAIN ? DOCA_ERROR_TIME_OUT : ret;
}

static inline doca_error_t rx_submit_recv(struct rx_side *s, struct doca_buf *dst, uint64_t ud)
{
	struct doca_rdma_job_recv j = { .base = { .type = DOCA_RDMA_JOB_RECV, .ctx = s->ctx, .user_data.u64 = ud },
					.dst_buff = dst };

	return doca_workq_submit(s->wq, &j.base);
}

static inline doca_error_t rx_submit_send(struct rx_side *s, int type, const struct doca_buf *src, uint32_t imm_be,
					  uint64_t ud)
{
	struct doca_rdma_job_send j = { .base = { .type = type, .ctx = s->ctx, .user_data.u64 = ud },
					.src_buff = src, .immediate_data = imm_be };

	return doca_workq_submit(s->wq, &j.base);
}

static inline doca_error_t rx_submit_rw(struct rx_side *s, int type, struct doca_buf *dst, const struct doca_buf *src,
					uint32_t imm_be, uint64_t ud)
{
	struct doca_rdma_job_read_write j = { .base = { .type = type, .ctx = s->ctx, .user_data.u64 = ud },
					      .dst_buff = dst, .src_buff = src, .immediate_data = imm_be };

	return doca_workq_submit(s->wq, &j.base);
}

static inline doca_error_t rx_submit_atomic(struct rx_side *s, int type, struct doca_buf *target,
					    struct doca_buf *result, uint64_t swap_add, uint64_t cmp, uint64_t ud)
{
	struct doca_rdma_job_atomic j = { .base = { .type = type, .ctx = s->ctx, .user_data.u64 = ud },
					  .cmp_or_add_dest_buff = target, .result_buff = result,
					  .swap_or_add_data = swap_add, .cmp_data = cmp };

	return doca_workq_submit(s->wq, &j.base);
}

/* A buffer of the side's own memory at off: len bytes of room, data_len bytes of data. */
static inline struct doca_buf *rx_buf(struct rx_side *s, size_t off, size_t len, size_t data_len)
{
	struct doca_buf *b = NULL;

	if (doca_buf_inventory_buf_by_args(s->inv, s->mmap, s->mem + off, len, s->mem + off, data_len, &b) !=
	    DOCA_SUCCESS)
		return NULL;
	return b;
}

/* A buffer of the peer's imported memory at off of its exported half (the peer's addresses). */
static inline struct doca_buf *rx_rbuf(struct rx_side *s, size_t off, size_t len, size_t data_len)
{
	struct doca_buf *b = NULL;
	void *base;
	size_t rl;

	if (doca_mmap_get_memrange(s->remote, &base, &rl) != DOCA_SUCCESS)
		return NULL;
	if (doca_buf_inventory_buf_by_args(s->inv, s->remote, (uint8_t *)base + off, len, (uint8_t *)base + off,
					   data_len, &b) != DOCA_SUCCESS)
		return NULL;
	return b;
}

#endif /* SOFTDPU_TEST_RDMA_FIXTURE_H_ */
