/*
 * vb_srq — shared receive queues, on the hw SRQ's ring.
 *
 * The library keeps mlx5's free list of WQEs: post takes the WQE at head and
 * follows its next segment; a completed WQE is linked after tail. One WQE is
 * always left out of circulation (the tail), so a ring of 2^n WQEs takes
 * 2^n - 1 receives, and the program asks for max_wr that fit.
 * The limit event: modify with IBV_SRQ_LIMIT arms the device, whose
 * callback queues IBV_EVENT_SRQ_LIMIT_REACHED on the context. A limit above
 * what is posted now is reached already: the event is queued at once.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base_log.h"
#include "hw_ids.h"
#include "vb_export.h"
#include "vb_int.h"


static void vb_srq_limit_event(struct vb_srq *srq)
{
	struct ibv_async_event ev = {.event_type = IBV_EVENT_SRQ_LIMIT_REACHED};

	ev.element.srq = &srq->srq;
	__atomic_store_n(&srq->limit, 0, __ATOMIC_RELAXED); /* also from the engine thread (a limit crossed elsewhere) */
	if (vb_async_post(srq->ctx, &ev) != 0)
		BASE_ERR("SRQ %u: the limit event could not be queued", srq->srqn);
}

static void vb_srq_limit_cb(void *arg, struct hw_srq *hw)
{
	(void)hw;
	vb_srq_limit_event(arg);
}

static void vb_srq_free(struct vb_srq *srq)
{
	if (srq->hw != NULL)
		(void)hw_srq_destroy(srq->hw);
	vb_async_forget(srq->ctx, &srq->srq); /* after the fence: no limit event raised for it since */
	vb_tm_free(srq->tm);	 /* the device's list, after the SRQ that used it */
	vb_qmem_put(&srq->qmem); /* after the device's fence (hw_srq_destroy) */
	if (srq->srqn != 0)
		(void)hw_id_free(HW_ID_SRQN, srq->srqn);
	free(srq->wrid);
	pthread_spin_destroy(&srq->lock);
	free(srq);
}

static int vb_srq_sizes(struct vb_srq *srq, const struct ibv_srq_attr *a)
{
	uint32_t stride;

	/* max_wr 0 is mlx5's too: one WQE, the tail, so every post finds the SRQ full. */
	if (a->max_wr > VB_MAX_QP_WR - 1 || a->max_sge > VB_MAX_SGE + 1 || a->srq_limit > a->max_wr)
		return EINVAL;
	stride = sizeof(struct hw_wqe_srq_next_seg) + (a->max_sge > 0 ? a->max_sge : 1) * sizeof(struct hw_wqe_data_seg);
	srq->log_stride = vb_log2_up(stride);
	if (srq->log_stride < HW_SRQ_LOG_STRIDE_MIN)
		srq->log_stride = HW_SRQ_LOG_STRIDE_MIN;
	srq->max_gs = ((1u << srq->log_stride) - sizeof(struct hw_wqe_srq_next_seg)) / sizeof(struct hw_wqe_data_seg);
	srq->wqe_cnt = 1u << vb_log2_up(a->max_wr + 1);
	srq->max_wr = srq->wqe_cnt - 1;
	return srq->wqe_cnt > (1u << HW_SRQ_LOG_MAX) ? EINVAL : 0;
}

static struct vb_srq *vb_srq_create(struct vb_context *ctx, struct ibv_pd *pd, struct ibv_srq_init_attr *init,
				    struct vb_xrcd *xrcd, struct vb_cq *xcq, struct vb_tm *tm)
{
	struct hw_srq_attr ha = {.limit_cb = vb_srq_limit_cb, .shared = true};
	struct vb_srq *srq;
	enum hw_status st;
	int rc = ENOMEM;

	srq = calloc(1, sizeof(*srq));
	if (srq == NULL)
		goto err;
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	srq->ctx = ctx;
	srq->pd = vb_pd_of(pd);
	rc = vb_srq_sizes(srq, &init->attr);
	if (rc == 0)
		rc = vb_alloc_type_errno("MLX_SRQ");
	if (rc == 0)
		rc = vb_qmem_get(&srq->qmem, pd, (size_t)srq->wqe_cnt << srq->log_stride, VB_QMEM_ALIGN,
				 MLX5DV_RES_TYPE_SRQ);
	if (rc != 0)
		goto err_free;
	rc = ENOMEM;
	srq->wrid = calloc(srq->wqe_cnt, sizeof(*srq->wrid));
	if (srq->wrid == NULL)
		goto err_free;
	st = hw_id_alloc(HW_ID_SRQN, &srq->srqn);
	if (st != HW_OK) {
		rc = vb_id_errno(st);
		goto err_free;
	}
	ha.srqn = srq->srqn;
	ha.pd = srq->pd->hw;
	ha.log_size = vb_log2_up(srq->wqe_cnt);
	ha.log_stride = srq->log_stride;
	ha.limit_arg = srq;
	ha.ring = srq->qmem.buf;
	ha.dbrec = srq->qmem.dbrec;
	ha.tm = tm != NULL ? vb_tm_hw(tm) : NULL;
	if (xrcd != NULL) {
		ha.xrcd = vb_xrcd_id(xrcd);
		ha.cq = xcq->hw;
	}
	st = hw_srq_create(&ha, &srq->hw);
	if (st != HW_OK) {
		srq->hw = NULL;
		rc = vb_qmem_errno(st);
		goto err_free;
	}
	srq->buf = hw_srq_buf(srq->hw);
	srq->dbrec = hw_srq_dbrec(srq->hw);
	srq->head = 0;
	srq->tail = srq->wqe_cnt - 1;
	srq->srq.context = &ctx->vctx.context;
	srq->srq.srq_context = init->srq_context;
	srq->srq.pd = pd;
	srq->srq.handle = srq->srqn;
	pthread_mutex_init(&srq->srq.mutex, NULL);
	pthread_cond_init(&srq->srq.cond, NULL);
	init->attr.max_wr = srq->max_wr;
	init->attr.max_sge = srq->max_gs;
	atomic_fetch_add(&srq->pd->users, 1);
	if (xrcd != NULL) {
		srq->xrcd = xrcd;
		srq->xcq = xcq;
		vb_xrc_srq_attach(srq);
	}
	vb_named_srq_add(srq);
	return srq;

err_free:
	vb_srq_free(srq);
err:
	errno = rc;
	return NULL;
}

VB_EXPORT struct ibv_srq *vb_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *srq_init_attr);
VB_EXPORT struct ibv_srq *vb_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *init)
{
	struct vb_context *ctx = pd != NULL ? vb_ctx_checked(pd->context) : NULL;
	struct vb_srq *srq;

	if (ctx == NULL || init == NULL) {
		errno = EINVAL;
		return NULL;
	}
	srq = vb_srq_create(ctx, pd, init, NULL, NULL, NULL);
	return srq != NULL ? &srq->srq : NULL;
}
VB_SYMVER(vb_create_srq, ibv_create_srq, "IBVERBS_1.1");

/*
 * An XRC SRQ (ibv_create_srq_ex(3)): a PD, an XRC domain and the CQ its
 * receives complete into, whichever XRC receive QP of the domain takes them.
 */
static struct ibv_srq *vb_create_xrc_srq(struct ibv_context *c, struct ibv_srq_init_attr_ex *a)
{
	const uint32_t need = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_XRCD |
			      IBV_SRQ_INIT_ATTR_CQ;
	struct vb_context *ctx = vb_ctx_checked(c);
	struct ibv_srq_init_attr init;
	struct vb_xrcd *x;
	struct vb_srq *srq;

	if (ctx == NULL || (a->comp_mask & need) != need || a->pd == NULL || a->pd->context != c || a->cq == NULL ||
	    a->cq->context != c || vb_xrcd_checked(ctx, a->xrcd, &x) != 0) {
		errno = EINVAL;
		return NULL;
	}
	init.srq_context = a->srq_context;
	init.attr = a->attr;
	srq = vb_srq_create(ctx, a->pd, &init, x, vb_cq_of(a->cq), NULL);
	if (srq == NULL)
		return NULL;
	a->attr = init.attr;
	return &srq->srq;
}

/*
 * A tag matching SRQ (ibv_create_srq_ex(3), IBV_SRQT_TM): a PD, the
 * extended CQ all its completions go to, and tm_cap within the device's
 * tm_caps (vb_tm.c).
 */
static struct ibv_srq *vb_create_tm_srq(struct ibv_context *c, struct ibv_srq_init_attr_ex *a)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	struct ibv_srq_init_attr init;
	struct vb_srq *srq;
	struct vb_tm *tm;
	int rc = ctx != NULL ? vb_tm_attr_ok(ctx, a) : EINVAL;

	if (rc == 0)
		tm = vb_tm_new(a, &rc);
	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	init.srq_context = a->srq_context;
	init.attr = a->attr;
	srq = vb_srq_create(ctx, a->pd, &init, NULL, NULL, tm);
	if (srq == NULL) {
		rc = errno;
		vb_tm_free(tm);
		errno = rc;
		return NULL;
	}
	vb_tm_attach(srq, tm);
	a->attr = init.attr;
	return &srq->srq;
}

struct ibv_srq *vb_create_srq_ex(struct ibv_context *c, struct ibv_srq_init_attr_ex *a)
{
	struct ibv_srq_init_attr init;
	struct ibv_srq *srq;

	if (a == NULL || !(a->comp_mask & IBV_SRQ_INIT_ATTR_PD)) {
		errno = EINVAL;
		return NULL;
	}
	if ((a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && a->srq_type == IBV_SRQT_XRC &&
	    !(a->comp_mask & IBV_SRQ_INIT_ATTR_TM))
		return vb_create_xrc_srq(c, a);
	if ((a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && a->srq_type == IBV_SRQT_TM)
		return vb_create_tm_srq(c, a);
	if ((a->comp_mask & IBV_SRQ_INIT_ATTR_TYPE) && a->srq_type != IBV_SRQT_BASIC) {
		errno = EINVAL; /* as mlx5: no such type */
		return NULL;
	}
	if (a->comp_mask & ~(uint32_t)(IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (a->pd == NULL || a->pd->context != c) {
		errno = EINVAL;
		return NULL;
	}
	init.srq_context = a->srq_context;
	init.attr = a->attr;
	srq = vb_create_srq(a->pd, &init);
	if (srq != NULL)
		a->attr = init.attr;
	return srq;
}

VB_EXPORT int vb_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr, int srq_attr_mask);
VB_EXPORT int vb_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr, int mask)
{
	struct vb_srq *srq = vb_srq_of(ibsrq);

	if (ibsrq == NULL || attr == NULL || (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT)))
		return EINVAL;
	if (mask & IBV_SRQ_MAX_WR)
		return EINVAL; /* as mlx5: an SRQ is not resized */
	if (!(mask & IBV_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->max_wr)
		return EINVAL;
	pthread_spin_lock(&srq->lock);
	__atomic_store_n(&srq->limit, attr->srq_limit, __ATOMIC_RELAXED);
	if (attr->srq_limit != 0 && attr->srq_limit > hw_srq_posted(srq->hw)) {
		pthread_spin_unlock(&srq->lock);
		vb_srq_limit_event(srq);
		return 0;
	}
	if (hw_srq_arm(srq->hw, attr->srq_limit) != HW_OK) {
		__atomic_store_n(&srq->limit, 0, __ATOMIC_RELAXED);
		pthread_spin_unlock(&srq->lock);
		return EINVAL;
	}
	pthread_spin_unlock(&srq->lock);
	return 0;
}
VB_SYMVER(vb_modify_srq, ibv_modify_srq, "IBVERBS_1.1");

VB_EXPORT int vb_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
VB_EXPORT int vb_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct vb_srq *srq = vb_srq_of(ibsrq);

	if (ibsrq == NULL || attr == NULL)
		return EINVAL;
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_gs;
	attr->srq_limit = __atomic_load_n(&srq->limit, __ATOMIC_RELAXED);
	return 0;
}
VB_SYMVER(vb_query_srq, ibv_query_srq, "IBVERBS_1.1");

VB_EXPORT int vb_destroy_srq(struct ibv_srq *srq);
VB_EXPORT int vb_destroy_srq(struct ibv_srq *ibsrq)
{
	struct vb_srq *srq = vb_srq_of(ibsrq);

	if (ibsrq == NULL)
		return EINVAL;
	if (vb_named_srq_del(srq) != 0)
		return EBUSY;
	if (srq->xrcd != NULL)
		vb_xrc_srq_detach(srq);
	if (srq->tm != NULL)
		vb_tm_detach(srq);
	atomic_fetch_sub(&srq->pd->users, 1);
	pthread_mutex_destroy(&srq->srq.mutex);
	pthread_cond_destroy(&srq->srq.cond);
	vb_srq_free(srq);
	return 0;
}
VB_SYMVER(vb_destroy_srq, ibv_destroy_srq, "IBVERBS_1.1");

int vb_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num)
{
	if (srq == NULL || srq_num == NULL)
		return EINVAL;
	*srq_num = vb_srq_of(srq)->srqn;
	return 0;
}

static uint8_t *vb_srq_wqe(const struct vb_srq *srq, uint32_t i)
{
	return srq->buf + ((size_t)i << srq->log_stride);
}

/* mlx5_free_srq_wqe: the completed WQE goes after the tail. */
void vb_srq_free_wqe(struct vb_srq *srq, uint16_t idx)
{
	struct hw_wqe_srq_next_seg *tail;

	idx &= (uint16_t)(srq->wqe_cnt - 1);
	pthread_spin_lock(&srq->lock);
	tail = (void *)vb_srq_wqe(srq, srq->tail);
	tail->next_wqe_index = htobe16(idx);
	srq->tail = idx;
	pthread_spin_unlock(&srq->lock);
}

int vb_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct vb_srq *srq = vb_srq_of(ibsrq);
	uint32_t nreq = 0;
	int err = 0;

	pthread_spin_lock(&srq->lock);
	for (; wr != NULL; wr = wr->next, nreq++) {
		struct hw_wqe_srq_next_seg *next;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > srq->max_gs) {
			err = EINVAL;
			break;
		}
		if (srq->head == srq->tail) {
			err = ENOMEM;
			break;
		}
		next = (void *)vb_srq_wqe(srq, srq->head);
		srq->wrid[srq->head] = wr->wr_id;
		vb_recv_wqe((uint8_t *)(next + 1), srq->max_gs, wr);
		srq->head = be16toh(next->next_wqe_index) & (srq->wqe_cnt - 1);
	}
	if (err != 0)
		*bad = wr;
	if (nreq != 0) {
		srq->counter += nreq;
		(void)hw_srq_ring(srq->hw, srq->counter);
	}
	pthread_spin_unlock(&srq->lock);
	return err;
}
