/*
 * vb_tm — tag matching SRQs (ibv_create_srq_ex with IBV_SRQT_TM,
 * ibv_post_srq_ops, the TM completions), the driver side of hw_tm.h.
 *
 * As mlx5's driver: the tags are a free list of max_num_tags + 1 entries
 * (one always stays the tail, so max_num_tags may be listed at once), each
 * counting the CQEs it still expects (its consumption, and its signaled list
 * operations); an entry goes back to the free list when none is left. A
 * list operation runs at the device when posted; max_ops of them may be
 * outstanding, a signaled one's CQE retiring it and the unsignaled ones
 * before it. The program's count of unexpected messages handled (reported
 * with IBV_OPS_TM_SYNC) is kept with each added tag; a CQE whose device
 * count differs, or more than 0x3fff unexpected messages not yet reported,
 * carries IBV_WC_TM_SYNC_REQ.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hw_tm.h"
#include "vb_int.h"

#define VB_TM_MAX_SYNC_DIFF 0x3fff
#define VB_TM_NONE UINT32_MAX

struct vb_tm_tag {
	uint64_t wr_id;
	uint32_t next;	     /* free list, VB_TM_NONE at its end */
	uint32_t expect_cqe; /* 0: free */
	uint16_t phase_cnt;  /* the program's unexpected count when added */
};

struct vb_tm_op {
	uint32_t tag; /* VB_TM_NONE: a sync */
	uint64_t wr_id;
	uint32_t pos; /* its place among all operations posted */
};

struct vb_tm {
	struct hw_tm *hw;
	struct vb_cq *cq;
	uint32_t max_tags, max_ops;
	struct vb_tm_tag *tags;	 /* max_tags + 1 */
	uint32_t head, tail;	 /* free list */
	struct vb_tm_op *ops;	 /* signaled operations awaiting their CQE, a ring of max_ops */
	uint32_t op_head, op_tail;
	uint32_t posted, retired; /* operations posted; retired by a CQE */
	uint16_t unexp_in, unexp_out;
};

void vb_tm_caps(struct ibv_device_attr_ex *a)
{
	a->tm_caps.max_rndv_hdr_size = HW_TM_RNDV_HDR;
	a->tm_caps.max_num_tags = HW_TM_MAX_TAGS;
	a->tm_caps.flags = IBV_TM_CAP_RC;
	a->tm_caps.max_ops = HW_TM_MAX_OPS;
	a->tm_caps.max_sge = HW_TM_MAX_SGE;
}

int vb_tm_attr_ok(struct vb_context *ctx, const struct ibv_srq_init_attr_ex *a)
{
	const uint32_t need = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM;
	struct ibv_context *c = &ctx->vctx.context;

	if ((a->comp_mask & need) != need || (a->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || a->pd == NULL ||
	    a->pd->context != c || a->cq == NULL || a->cq->context != c)
		return EINVAL;
	/* as mlx5: the TM information is read from an extended CQ */
	if (!vb_cq_of(a->cq)->ext)
		return EINVAL;
	if (a->tm_cap.max_num_tags == 0 || a->tm_cap.max_num_tags > HW_TM_MAX_TAGS || a->tm_cap.max_ops == 0 ||
	    a->tm_cap.max_ops > HW_TM_MAX_OPS)
		return EINVAL;
	return 0;
}

void vb_tm_free(struct vb_tm *tm)
{
	if (tm == NULL)
		return;
	hw_tm_destroy(tm->hw);
	free(tm->tags);
	free(tm->ops);
	free(tm);
}

struct vb_tm *vb_tm_new(const struct ibv_srq_init_attr_ex *a, int *err)
{
	struct vb_tm *tm = calloc(1, sizeof(*tm));
	uint32_t n = a->tm_cap.max_num_tags;

	*err = ENOMEM;
	if (tm == NULL)
		return NULL;
	tm->cq = vb_cq_of(a->cq);
	tm->max_tags = n;
	tm->max_ops = a->tm_cap.max_ops;
	tm->tags = calloc(n + 1, sizeof(*tm->tags));
	tm->ops = calloc(tm->max_ops, sizeof(*tm->ops));
	if (tm->tags == NULL || tm->ops == NULL)
		goto err;
	if (hw_tm_create(n, tm->cq->hw, &tm->hw) != HW_OK)
		goto err;
	for (uint32_t i = 0; i < n; i++)
		tm->tags[i].next = i + 1;
	tm->tags[n].next = VB_TM_NONE;
	tm->head = 0;
	tm->tail = n;
	*err = 0;
	return tm;

err:
	vb_tm_free(tm);
	return NULL;
}

struct hw_tm *vb_tm_hw(const struct vb_tm *tm)
{
	return tm->hw;
}

/* The SRQ joins its CQ's list, so the CQ's TM CQEs find it by number. */
void vb_tm_attach(struct vb_srq *srq, struct vb_tm *tm)
{
	struct vb_cq *cq = tm->cq;

	srq->tm = tm;
	atomic_fetch_add(&cq->users, 1);
	pthread_spin_lock(&cq->lock);
	srq->x_next = cq->xsrqs;
	cq->xsrqs = srq;
	pthread_spin_unlock(&cq->lock);
}

void vb_tm_detach(struct vb_srq *srq)
{
	struct vb_cq *cq = srq->tm->cq;

	pthread_spin_lock(&cq->lock);
	for (struct vb_srq **p = &cq->xsrqs; *p != NULL; p = &(*p)->x_next) {
		if (*p == srq) {
			*p = srq->x_next;
			break;
		}
	}
	pthread_spin_unlock(&cq->lock);
	atomic_fetch_sub(&cq->users, 1);
}

/* mlx5_tm_release_tag: a CQE it expected came; with none left it is free again. */
static void vb_tm_release(struct vb_tm *tm, uint32_t i)
{
	struct vb_tm_tag *t = &tm->tags[i];

	if (t->expect_cqe == 0 || --t->expect_cqe != 0)
		return;
	t->next = VB_TM_NONE;
	tm->tags[tm->tail].next = i;
	tm->tail = i;
}

static void vb_tm_add_op(struct vb_tm *tm, uint32_t tag, uint64_t wr_id)
{
	struct vb_tm_op *op = &tm->ops[tm->op_tail++ % tm->max_ops];

	op->tag = tag;
	op->wr_id = wr_id;
	op->pos = tm->posted;
	if (tag != VB_TM_NONE)
		tm->tags[tag].expect_cqe++;
}

/* IBV_WR_TAG_ADD: the free list's head, listed at the device. */
static int vb_tm_add(struct vb_tm *tm, struct ibv_ops_wr *wr, struct hw_tm_op *h)
{
	uint32_t i = tm->head;
	struct vb_tm_tag *t = &tm->tags[i];

	if (wr->tm.add.num_sge > HW_TM_MAX_SGE || (wr->tm.add.num_sge != 0 && wr->tm.add.sg_list == NULL))
		return EINVAL;
	if (t->next == VB_TM_NONE)
		return ENOMEM; /* the list is full */
	tm->head = t->next;
	t->next = VB_TM_NONE;
	t->wr_id = wr->tm.add.recv_wr_id;
	if (wr->flags & IBV_OPS_TM_SYNC)
		tm->unexp_out = (uint16_t)wr->tm.unexpected_cnt;
	t->phase_cnt = tm->unexp_out;
	t->expect_cqe = 1; /* its consumption */
	h->op = HW_TM_LIST_APPEND;
	h->index = (uint16_t)i;
	h->tag = wr->tm.add.tag;
	h->mask = wr->tm.add.mask;
	if (wr->tm.add.num_sge != 0 && wr->tm.add.sg_list[0].length != 0) {
		h->addr = wr->tm.add.sg_list[0].addr;
		h->len = wr->tm.add.sg_list[0].length;
		h->lkey = wr->tm.add.sg_list[0].lkey;
	}
	if (wr->flags & IBV_OPS_SIGNALED)
		vb_tm_add_op(tm, i, wr->wr_id);
	wr->tm.handle = i;
	return 0;
}

/* IBV_WR_TAG_DEL: the entry named by the handle ADD returned, while the device holds it. */
static int vb_tm_del(struct vb_tm *tm, const struct ibv_ops_wr *wr, struct hw_tm_op *h)
{
	uint32_t i = wr->tm.handle;

	if (i > tm->max_tags || tm->tags[i].expect_cqe == 0)
		return EINVAL;
	if (wr->flags & IBV_OPS_TM_SYNC)
		tm->unexp_out = (uint16_t)wr->tm.unexpected_cnt;
	h->op = HW_TM_LIST_REMOVE;
	h->index = (uint16_t)i;
	if (wr->flags & IBV_OPS_SIGNALED)
		vb_tm_add_op(tm, i, wr->wr_id);
	else
		vb_tm_release(tm, i); /* no CQE for its consumption any more */
	return 0;
}

static int vb_tm_sync(struct vb_tm *tm, const struct ibv_ops_wr *wr, struct hw_tm_op *h)
{
	if (wr->flags & IBV_OPS_TM_SYNC)
		tm->unexp_out = (uint16_t)wr->tm.unexpected_cnt;
	h->op = HW_TM_LIST_NOP;
	if (wr->flags & IBV_OPS_SIGNALED)
		vb_tm_add_op(tm, VB_TM_NONE, wr->wr_id);
	return 0;
}

static int vb_tm_post_one(struct vb_tm *tm, struct ibv_ops_wr *wr)
{
	struct hw_tm_op h = { .signaled = (wr->flags & IBV_OPS_SIGNALED) != 0,
			      .sync = (wr->flags & IBV_OPS_TM_SYNC) != 0,
			      .sw_cnt = (uint16_t)wr->tm.unexpected_cnt };
	int rc;

	if (wr->flags & ~(uint32_t)(IBV_OPS_SIGNALED | IBV_OPS_TM_SYNC))
		return EINVAL;
	if (tm->posted - tm->retired >= tm->max_ops)
		return ENOMEM; /* max_ops outstanding, as mlx5's command queue full */
	switch (wr->opcode) {
	case IBV_WR_TAG_ADD:
		rc = vb_tm_add(tm, wr, &h);
		break;
	case IBV_WR_TAG_DEL:
		rc = vb_tm_del(tm, wr, &h);
		break;
	case IBV_WR_TAG_SYNC:
		rc = vb_tm_sync(tm, wr, &h);
		break;
	default:
		return EINVAL;
	}
	if (rc != 0)
		return rc;
	tm->posted++;
	(void)hw_tm_post(tm->hw, &h); /* a full CQ latches its overrun, as for any CQE */
	return 0;
}

int vb_post_srq_ops(struct ibv_srq *ibsrq, struct ibv_ops_wr *wr, struct ibv_ops_wr **bad)
{
	struct vb_srq *srq = ibsrq != NULL ? vb_srq_of(ibsrq) : NULL;
	int rc = 0;

	if (bad == NULL)
		return EINVAL;
	if (srq == NULL || srq->tm == NULL) {
		*bad = wr;
		return EINVAL; /* as mlx5: an SRQ without tag matching has no list */
	}
	pthread_spin_lock(&srq->lock);
	for (; wr != NULL; wr = wr->next) {
		rc = vb_tm_post_one(srq->tm, wr);
		if (rc != 0) {
			*bad = wr;
			break;
		}
	}
	pthread_spin_unlock(&srq->lock);
	return rc;
}

/* ---- completions ---- */

/* A list operation's CQE: its signaled operation, in posting order. */
static void vb_tm_op_cqe(struct vb_tm *tm, const struct hw_cqe64 *cqe, struct ibv_wc *wc)
{
	struct vb_tm_op *op;
	uint32_t success;
	uint16_t phase;

	if (tm->op_head == tm->op_tail) {
		wc->status = IBV_WC_GENERAL_ERR;
		return;
	}
	op = &tm->ops[tm->op_head++ % tm->max_ops];
	memcpy(&success, cqe, sizeof(success));
	memcpy(&phase, (const uint8_t *)cqe + 4, sizeof(phase));
	wc->wr_id = op->wr_id;
	tm->retired = op->pos + 1; /* the unsignaled ones before it are done too */
	wc->opcode = cqe->app_op == HW_TM_OP_APPEND ? IBV_WC_TM_ADD
		     : cqe->app_op == HW_TM_OP_REMOVE ? IBV_WC_TM_DEL
						       : IBV_WC_TM_SYNC;
	if (cqe->app_op == HW_TM_OP_REMOVE && !(be32toh(success) & HW_TM_SUCCESS))
		wc->status = IBV_WC_TM_ERR; /* a message took the tag first: its own CQE releases it */
	if (op->tag == VB_TM_NONE)
		return;
	vb_tm_release(tm, op->tag);
	if (cqe->app_op == HW_TM_OP_REMOVE && wc->status == IBV_WC_SUCCESS)
		vb_tm_release(tm, op->tag); /* removed: no consumption CQE will come */
	if (be16toh(phase) != tm->tags[op->tag].phase_cnt)
		wc->wc_flags |= IBV_WC_TM_SYNC_REQ;
}

/* A message a tag took: the tag's wr_id; the last CQE of it frees the tag. */
static void vb_tm_tag_cqe(struct vb_tm *tm, const struct hw_cqe64 *cqe, struct ibv_wc *wc)
{
	uint32_t i = be16toh(cqe->app_info);

	wc->opcode = IBV_WC_TM_RECV;
	if (i > tm->max_tags || tm->tags[i].expect_cqe == 0) {
		wc->status = IBV_WC_GENERAL_ERR;
		return;
	}
	wc->wr_id = tm->tags[i].wr_id;
	wc->wc_flags |= cqe->app_op == HW_TM_OP_CONSUMED_MSG ? IBV_WC_TM_MATCH | IBV_WC_TM_DATA_VALID
			: cqe->app_op == HW_TM_OP_CONSUMED   ? IBV_WC_TM_MATCH
							     : IBV_WC_TM_DATA_VALID;
	if (cqe->app_op != HW_TM_OP_CONSUMED)
		vb_tm_release(tm, i);
}

void vb_tm_cqe(struct vb_srq *srq, const struct hw_cqe64 *cqe, struct ibv_wc *wc)
{
	struct vb_tm *tm = srq->tm;
	uint8_t op = hw_cqe_opcode(cqe);

	*wc = (struct ibv_wc){ .qp_num = hw_cqe_qpn(cqe), .status = IBV_WC_SUCCESS };
	if (tm == NULL) {
		wc->status = IBV_WC_GENERAL_ERR;
		return;
	}
	if (op != HW_CQE_NO_PACKET) {
		wc->byte_len = hw_cqe_byte_cnt(cqe);
		if (op == HW_CQE_RESP_SEND_IMM) {
			wc->wc_flags = IBV_WC_WITH_IMM;
			wc->imm_data = cqe->imm_inval_pkey;
		}
	}
	pthread_spin_lock(&srq->lock);
	switch (cqe->app_op) {
	case HW_TM_OP_APPEND:
	case HW_TM_OP_REMOVE:
	case HW_TM_OP_NOOP:
		vb_tm_op_cqe(tm, cqe, wc);
		break;
	case HW_TM_OP_CONSUMED:
	case HW_TM_OP_CONSUMED_MSG:
	case HW_TM_OP_EXPECTED:
		vb_tm_tag_cqe(tm, cqe, wc);
		break;
	default: /* UNEXPECTED, NO_TAG: an ordinary receive took it */
		if (cqe->app_op == HW_TM_OP_UNEXPECTED && (uint16_t)(++tm->unexp_in - tm->unexp_out) > VB_TM_MAX_SYNC_DIFF)
			wc->wc_flags |= IBV_WC_TM_SYNC_REQ;
		wc->opcode = cqe->app_op == HW_TM_OP_UNEXPECTED ? IBV_WC_TM_RECV : IBV_WC_TM_NO_TAG;
		wc->wr_id = srq->wrid[hw_cqe_wqe_counter(cqe) & (srq->wqe_cnt - 1)];
		pthread_spin_unlock(&srq->lock);
		vb_srq_free_wqe(srq, hw_cqe_wqe_counter(cqe));
		return;
	}
	pthread_spin_unlock(&srq->lock);
}

void vb_tm_cqe_dropped(struct vb_srq *srq, const struct hw_cqe64 *cqe)
{
	struct ibv_wc wc;

	/* a tag's CQE only: ordinary receives are the caller's (vb_srq_free_wqe), list operations name no QP */
	if (srq->tm == NULL || cqe->app != HW_CQE_APP_TM ||
	    (cqe->app_op != HW_TM_OP_CONSUMED && cqe->app_op != HW_TM_OP_CONSUMED_MSG &&
	     cqe->app_op != HW_TM_OP_EXPECTED))
		return;
	vb_tm_cqe(srq, cqe, &wc); /* what polling it would have done to the tag */
}

bool vb_tm_cqe_took_wqe(const struct hw_cqe64 *cqe)
{
	return cqe->app != HW_CQE_APP_TM || cqe->app_op == HW_TM_OP_UNEXPECTED || cqe->app_op == HW_TM_OP_NO_TAG;
}

/* As mlx5 reads it: the TMH the CQE carries (a matched message's); zeros for any other. */
void vb_tm_info(const struct hw_cqe64 *cqe, struct ibv_wc_tm_info *ti)
{
	uint64_t tag;
	uint32_t ctx;

	memset(ti, 0, sizeof(*ti));
	if (cqe->app != HW_CQE_APP_TM || hw_cqe_opcode(cqe) == HW_CQE_NO_PACKET)
		return;
	memcpy(&ctx, (const uint8_t *)cqe + 4, sizeof(ctx));
	memcpy(&tag, (const uint8_t *)cqe + 8, sizeof(tag));
	ti->tag = be64toh(tag);
	ti->priv = be32toh(ctx);
}
