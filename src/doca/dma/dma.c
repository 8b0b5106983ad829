/*
 * doca_dma — the DMA library: a context whose memcpy jobs run on the
 * emulated device's DMA engine (src/hw/hw_dma.c).
 */
#include <stdlib.h>

#include "dc_core.h"
#include "dc_ctx.h"
#include "dc_dev.h"
#include "dc_log.h"
#include "doca_dma.h"
#include "hw_dma.h"
#include "hw_jobq.h"

#define DC_DMA_MAX_LIST_ELEMS 64
#define DC_DMA_MAX_BUF_SIZE (1ull << 31)

struct doca_dma {
	struct doca_ctx ctx; /* first: doca_dma_as_ctx() and back are casts */
};

static doca_error_t dma_dev_check(struct doca_ctx *ctx, struct doca_dev *dev)
{
	(void)ctx;
	if (!dc_dev_cap(dev, DC_CAP_DMA)) {
		DC_ERR("device has no DMA engine");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

_Static_assert(sizeof(struct doca_dma_job_memcpy) <= DC_WQE_JOB_MAX, "a DMA job fits a work-queue entry");

static inline doca_error_t dma_check(const struct doca_job *job)
{
	const struct doca_dma_job_memcpy *j = (const struct doca_dma_job_memcpy *)job;

	if (job->type != DOCA_DMA_JOB_MEMCPY) {
		DC_ERR("job type %d is not a DMA job", job->type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (j->dst_buff == NULL || j->src_buff == NULL || j->dst_buff->refcount == 0 || j->src_buff->refcount == 0)
		return DOCA_ERROR_INVALID_VALUE;
	return DOCA_SUCCESS;
}

static doca_error_t dma_job_check(struct doca_ctx *ctx, const struct doca_job *job, size_t *size)
{
	(void)ctx;
	*size = sizeof(struct doca_dma_job_memcpy);
	return dma_check(job);
}

static doca_error_t status_to_error(enum hw_status st)
{
	switch (st) {
	case HW_OK:
		return DOCA_SUCCESS;
	case HW_ERR_KEY:
	case HW_ERR_PD:
	case HW_ERR_ACCESS:
		return DOCA_ERROR_NOT_PERMITTED;
	case HW_ERR_NOMEM:
		return DOCA_ERROR_NO_MEMORY;
	case HW_ERR_REVOKED:
		return DOCA_ERROR_NOT_PERMITTED; /* the exporter withdrew the memory */
	case HW_ERR_PEER_GONE:
		return DOCA_ERROR_CONNECTION_ABORTED;
	case HW_ERR_TIMEOUT:
		return DOCA_ERROR_TIME_OUT;
	case HW_ERR_REMOTE_IO:
		return DOCA_ERROR_DRIVER;
	default:
		return DOCA_ERROR_INVALID_VALUE;
	}
}

/* Source elements: their data segments. */
static doca_error_t gather_src(const struct doca_buf *b, const struct doca_dev *dev, struct hw_sge *sge,
			       uint32_t *n)
{
	uint64_t total = 0;
	uint32_t i = 0;

	for (; b != NULL; b = b->next, i++) {
		if (i == DC_DMA_MAX_LIST_ELEMS)
			return DOCA_ERROR_INVALID_VALUE;
		sge[i] = (struct hw_sge){ .key = dc_mmap_mkey(b->mmap, dev), .access = b->mmap->rd_access,
					  .addr = (uint64_t)(uintptr_t)b->data, .len = b->data_len };
		total += b->data_len;
	}
	*n = i;
	return total > DC_DMA_MAX_BUF_SIZE ? DOCA_ERROR_INVALID_VALUE : DOCA_SUCCESS;
}

/* Destination elements: the room after their data segments. */
static doca_error_t gather_dst(const struct doca_buf *b, const struct doca_dev *dev, struct hw_sge *sge,
			       uint32_t *n)
{
	uint32_t i = 0;

	for (; b != NULL; b = b->next, i++) {
		const uint8_t *tail = b->data + b->data_len;

		if (i == DC_DMA_MAX_LIST_ELEMS)
			return DOCA_ERROR_INVALID_VALUE;
		sge[i] = (struct hw_sge){ .key = dc_mmap_mkey(b->mmap, dev), .access = b->mmap->wr_access,
					  .addr = (uint64_t)(uintptr_t)tail,
					  .len = (uint64_t)(b->head + b->len - tail) };
	}
	*n = i;
	return DOCA_SUCCESS;
}

/* Grows the destination data segments by the bytes written, element by element. */
static void account_dst(struct doca_buf *b, uint64_t copied)
{
	for (; b != NULL && copied != 0; b = b->next) {
		uint64_t room = (uint64_t)(b->head + b->len - (b->data + b->data_len));
		uint64_t n = copied < room ? copied : room;

		b->data_len += n;
		copied -= n;
	}
}

__attribute__((noinline)) static doca_error_t dma_copy(const struct doca_dma_job_memcpy *j, const struct doca_dev *dev, uint32_t pd_id)
{
	struct hw_sge src[DC_DMA_MAX_LIST_ELEMS], dst[DC_DMA_MAX_LIST_ELEMS];
	uint32_t ns, nd;
	uint64_t copied = 0;
	enum hw_status st;

	if (gather_src(j->src_buff, dev, src, &ns) != DOCA_SUCCESS ||
	    gather_dst(j->dst_buff, dev, dst, &nd) != DOCA_SUCCESS) {
		DC_DBG("buffer list longer than %u elements or job larger than %llu bytes", DC_DMA_MAX_LIST_ELEMS,
		       DC_DMA_MAX_BUF_SIZE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	st = hw_dma_copy(pd_id, src, ns, dst, nd, &copied);
	if (st != HW_OK) {
		if (st >= HW_ERR_REVOKED)
			DC_ERR("DMA memcpy failed: %s", hw_status_str(st));
		else
			DC_DBG("DMA memcpy refused: %s", hw_status_str(st));
		return status_to_error(st);
	}
	account_dst(j->dst_buff, copied);
	return DOCA_SUCCESS;
}

/* One buffer to one buffer: the common case, without lists or a table walk. */
static doca_error_t dma_copy_one(struct doca_buf *dst, const struct doca_buf *src, const struct doca_dev *dev)
{
	const struct dc_mmap_dev *sd = dc_mmap_dev_of(src->mmap, dev), *dd = dc_mmap_dev_of(dst->mmap, dev);
	const uint8_t *tail = dst->data + dst->data_len;
	enum hw_status st;

	if (sd == NULL || dd == NULL)
		return DOCA_ERROR_NOT_PERMITTED;
	if (src->data_len > DC_DMA_MAX_BUF_SIZE)
		return DOCA_ERROR_INVALID_VALUE;
	st = hw_dma_copy1(dd->pd_id, sd->hwk, sd->mkey, (uint64_t)(uintptr_t)src->data, src->data_len,
			  src->mmap->rd_access, dd->hwk, dd->mkey, (uint64_t)(uintptr_t)tail,
			  (uint64_t)(dst->head + dst->len - tail), dst->mmap->wr_access);
	if (st != HW_OK) {
		DC_DBG("DMA memcpy refused: %s", hw_status_str(st));
		return status_to_error(st);
	}
	dst->data_len += src->data_len;
	return DOCA_SUCCESS;
}

static doca_error_t dma_job_exec(struct doca_ctx *ctx, const struct doca_job *job, union doca_data *result)
{
	const struct doca_dma_job_memcpy *j = (const struct doca_dma_job_memcpy *)job;
	struct doca_dev *dev = ctx->devs[0];
	doca_error_t st;

	if (j->src_buff->next == NULL && j->dst_buff->next == NULL && j->src_buff->mmap->fab == NULL &&
	    j->dst_buff->mmap->fab == NULL)
		st = dma_copy_one(j->dst_buff, j->src_buff, dev);
	else
		st = dma_copy(j, dev, hw_pd_id(dc_dev_pd(dev)));
	result->u64 = (uint64_t)st;
	return st;
}

/* ---- on the engine queue (src/hw/hw_jobq.h) ---- */

static void dma_jobq_attr(struct doca_ctx *ctx, struct hw_jobq_attr *attr)
{
	attr->pd_id = hw_pd_id(dc_dev_pd(ctx->devs[0]));
}

/* A source element's (key, address, length); the key is 0 where the mmap has none for dev (refused by the engine). */
static inline struct hw_sge src_sge(const struct doca_buf *b, const struct doca_dev *dev)
{
	const struct dc_mmap_dev *md = dc_mmap_dev_of(b->mmap, dev);

	return (struct hw_sge){ .key = md != NULL ? md->mkey : 0, .access = b->mmap->rd_access,
				.addr = (uint64_t)(uintptr_t)b->data, .len = b->data_len };
}

/* A destination element: the room after its data segment (at most 2 GiB, more than any job moves). */
static inline struct hw_sge dst_sge(const struct doca_buf *b, const struct doca_dev *dev)
{
	const struct dc_mmap_dev *md = dc_mmap_dev_of(b->mmap, dev);
	const uint8_t *tail = b->data + b->data_len;
	uint64_t room = (uint64_t)(b->head + b->len - tail);

	return (struct hw_sge){ .key = md != NULL ? md->mkey : 0, .access = b->mmap->wr_access,
				.addr = (uint64_t)(uintptr_t)tail, .len = room < HW_JOBQ_MAX_LEN ? room : HW_JOBQ_MAX_LEN };
}

static doca_error_t dma_post_list(struct hw_jobq *q, const struct doca_dma_job_memcpy *j, const struct doca_dev *dev)
{
	struct hw_sge src[HW_JOBQ_MAX_SEGS], dst[HW_JOBQ_MAX_SEGS];
	uint32_t ns = 0, nd = 0;
	uint64_t total = 0;

	for (const struct doca_buf *b = j->src_buff; b != NULL; b = b->next, ns++) {
		if (ns == HW_JOBQ_MAX_SEGS)
			return DOCA_ERROR_NOT_SUPPORTED;
		src[ns] = src_sge(b, dev);
		total += b->data_len;
	}
	for (const struct doca_buf *b = j->dst_buff; b != NULL; b = b->next, nd++) {
		if (ns + nd == HW_JOBQ_MAX_SEGS)
			return DOCA_ERROR_NOT_SUPPORTED;
		dst[nd] = dst_sge(b, dev);
	}
	/* Larger than a job may be, or mixed rights on a side: job_exec reports or runs it. */
	if (total > DC_DMA_MAX_BUF_SIZE || hw_jobq_post_dma(q, src, ns, dst, nd) != HW_OK)
		return DOCA_ERROR_NOT_SUPPORTED;
	return DOCA_SUCCESS;
}

/* A posted job whose CQE the doorbell did not hand back: its outcome is read from the CQ. */
static doca_error_t dma_post_read_cqe(const struct hw_jobq *q, const struct doca_dma_job_memcpy *j, uint32_t cqe_idx)
{
	const struct hw_cqe64 *cqe;

	if (__builtin_expect(hw_cqe_poll_op(q->cqes, q->cq_log, cqe_idx, &cqe) == HW_CQE_REQ, 1)) {
		if (j->dst_buff->next == NULL)
			j->dst_buff->data_len += hw_cqe_byte_cnt(cqe);
		else
			account_dst(j->dst_buff, hw_cqe_byte_cnt(cqe));
	}
	return DOCA_SUCCESS;
}

/*
 * Every job but the common one: checks, lists, a buffer whose mmap has this
 * device elsewhere than first. Out of line: its lists need a large frame.
 */
static __attribute__((noinline)) doca_error_t dma_job_post_any(struct doca_ctx *ctx, struct hw_jobq *q,
							       const struct doca_job *job, uint32_t cqe_idx)
{
	const struct doca_dma_job_memcpy *j = (const struct doca_dma_job_memcpy *)job;
	const struct doca_dev *dev = ctx->devs[0];
	doca_error_t ret = dma_check(job);
	uint32_t bytes;

	if (ret != DOCA_SUCCESS)
		return ret;
	if (j->src_buff->next == NULL && j->dst_buff->next == NULL) {
		struct hw_sge s = src_sge(j->src_buff, dev), d = dst_sge(j->dst_buff, dev);
		enum hw_jobq_bf bf;

		if (s.len > DC_DMA_MAX_BUF_SIZE)
			return DC_JOB_NOT_POSTED;
		/* The doorbell hands back its REQ CQE's byte count; any other outcome is read from the CQ below. */
		bf = hw_jobq_post_bf_dma1(q, &s, &d, &bytes);
		if (bf == HW_JOBQ_BF_DONE) {
			j->dst_buff->data_len += bytes;
			return DOCA_SUCCESS;
		}
		if (bf == HW_JOBQ_BF_FULL)
			return DC_JOB_NOT_POSTED;
	} else if (dma_post_list(q, j, dev) != DOCA_SUCCESS) {
		return DC_JOB_NOT_POSTED;
	} else {
		hw_jobq_ring(q);
	}
	return dma_post_read_cqe(q, j, cqe_idx);
}

/*
 * The common job, one buffer to one buffer, of mmaps whose first
 * registration is on this device and vouches for the side (the mmap's
 * dma_src and dma_dst, dc_mmap_dma_sync): the checks of dma_check, then the
 * keys and their table entries go to the engine, which checks per job only
 * what can change (each entry still holds its key) instead of looking the
 * keys up and checking them again. Anything else takes dma_job_post_any.
 */
static doca_error_t dma_job_post(struct doca_ctx *ctx, struct hw_jobq *q, const struct doca_job *job, uint32_t cqe_idx)
{
	const struct doca_dma_job_memcpy *j = (const struct doca_dma_job_memcpy *)job;
	const struct doca_buf *src = j->src_buff;
	struct doca_buf *dst = j->dst_buff;
	const struct dc_mmap_dma *sv, *dv;
	const uint8_t *tail;
	struct hw_sge s, d;
	enum hw_jobq_bf bf;
	uint64_t room;
	uint32_t bytes;

	if (__builtin_expect(job->type != DOCA_DMA_JOB_MEMCPY || src == NULL || dst == NULL, 0))
		return dma_job_post_any(ctx, q, job, cqe_idx);
	if (__builtin_expect(src->refcount == 0 || dst->refcount == 0 ||
				     ((uintptr_t)src->next | (uintptr_t)dst->next) != 0,
			     0))
		return dma_job_post_any(ctx, q, job, cqe_idx);
	sv = &src->mmap->dma_src;
	dv = &dst->mmap->dma_dst;
	if (__builtin_expect(sv->dev != ctx->devs[0] || dv->dev != ctx->devs[0] || src->data_len > DC_DMA_MAX_BUF_SIZE,
			     0))
		return dma_job_post_any(ctx, q, job, cqe_idx);
	tail = dst->data + dst->data_len;
	room = (uint64_t)(dst->head + dst->len - tail);
	s = (struct hw_sge){ .key = sv->key, .access = sv->access, .addr = (uint64_t)(uintptr_t)src->data,
			     .len = src->data_len };
	d = (struct hw_sge){ .key = dv->key, .access = dv->access, .addr = (uint64_t)(uintptr_t)tail,
			     .len = room < HW_JOBQ_MAX_LEN ? room : HW_JOBQ_MAX_LEN };
	bf = hw_jobq_post_bf_dma1_vouched(q, &s, sv->hwk, &d, dv->hwk, &bytes);
	if (__builtin_expect(bf == HW_JOBQ_BF_DONE, 1)) {
		dst->data_len += bytes;
		return DOCA_SUCCESS;
	}
	if (bf == HW_JOBQ_BF_FULL)
		return DC_JOB_NOT_POSTED;
	return dma_post_read_cqe(q, j, cqe_idx);
}

static doca_error_t dma_job_done(struct doca_ctx *ctx, const struct doca_job *job, const struct hw_cqe64 *cqe,
				 union doca_data *result)
{
	doca_error_t st = DOCA_SUCCESS;

	(void)ctx;
	(void)job;
	if (__builtin_expect(hw_cqe_opcode(cqe) != HW_CQE_REQ, 0)) {
		enum hw_status hs = (enum hw_status)hw_err_cqe_vendor_synd(cqe);

		if (hs >= HW_ERR_REVOKED)
			DC_ERR("DMA memcpy failed: %s", hw_status_str(hs));
		else
			DC_DBG("DMA memcpy refused: %s", hw_status_str(hs));
		st = status_to_error(hs);
	}
	result->u64 = (uint64_t)st;
	return st;
}

static const struct dc_ctx_ops dma_ops = {
	.name = "DMA",
	.max_devs = 1,
	.event_driven = true,
	.dev_check = dma_dev_check,
	.job_check = dma_job_check,
	.job_exec = dma_job_exec,
	.jobq_attr = dma_jobq_attr,
	.job_post = dma_job_post,
	.job_done = dma_job_done,
};

doca_error_t doca_dma_create(struct doca_dma **dma)
{
	struct doca_dma *d;
	doca_error_t ret;

	if (dma == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return DOCA_ERROR_NO_MEMORY;
	ret = dc_ctx_init(&d->ctx, &dma_ops);
	if (ret != DOCA_SUCCESS) {
		free(d);
		return ret;
	}
	*dma = d;
	return DOCA_SUCCESS;
}

doca_error_t doca_dma_destroy(struct doca_dma *dma)
{
	doca_error_t ret;

	if (dma == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = dc_ctx_fini(&dma->ctx);
	if (ret != DOCA_SUCCESS)
		return ret;
	free(dma);
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_dma_as_ctx(struct doca_dma *dma)
{
	return dma == NULL ? NULL : &dma->ctx;
}

doca_error_t doca_dma_job_get_supported(struct doca_devinfo *devinfo, enum doca_dma_job_types job_type)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (job_type != DOCA_DMA_JOB_MEMCPY || !dc_devinfo_cap(devinfo, DC_CAP_DMA))
		return DOCA_ERROR_NOT_SUPPORTED;
	return DOCA_SUCCESS;
}

doca_error_t doca_dma_get_max_list_buf_num_elem(const struct doca_devinfo *devinfo, uint32_t *max_list_num_elem)
{
	if (devinfo == NULL || max_list_num_elem == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!dc_devinfo_cap(devinfo, DC_CAP_DMA))
		return DOCA_ERROR_NOT_SUPPORTED;
	*max_list_num_elem = DC_DMA_MAX_LIST_ELEMS;
	return DOCA_SUCCESS;
}

doca_error_t doca_dma_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *buf_size)
{
	if (devinfo == NULL || buf_size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!dc_devinfo_cap(devinfo, DC_CAP_DMA))
		return DOCA_ERROR_NOT_SUPPORTED;
	*buf_size = DC_DMA_MAX_BUF_SIZE;
	return DOCA_SUCCESS;
}
