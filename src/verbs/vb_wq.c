/*
 * vb_wq — receive work queues (ibv_create_wq(3), IBV_WQT_RQ) and their
 * indirection tables (ibv_create_rwq_ind_table(3)) on the Ethernet port.
 *
 * A WQ is the receive side of a raw packet QP (vb_raw.c) kept out of the
 * program's sight: its number is the QP's, its receives complete into its
 * CQ as the QP's would, and RDY is the QP in RTR (receives handed to the
 * device). An indirection table lists WQs (a power of two of them) and
 * holds each; an RSS QP (vb_rss.c) spreads frames over it by a hash, and
 * holds it in turn.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "vb_export.h"
#include "vb_int.h"

#define VB_WQ_IND_LOG_MAX 8

VB_EXPORT int vb_destroy_qp(struct ibv_qp *qp);

struct vb_wq {
	struct ibv_wq wq;
	struct vb_qp *qp;	/* the raw packet QP whose receive side it is */
	_Atomic uint32_t users; /* indirection tables holding it */
};

struct vb_ind {
	struct ibv_rwq_ind_table t;
	_Atomic uint32_t users; /* RSS QPs over it */
	uint32_t n;
	struct vb_wq **wqs;
};

static int vb_wq_post_recv(struct ibv_wq *wq, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	return vb_raw_post_recv(((struct vb_wq *)wq)->qp, wr, bad);
}

struct ibv_wq *vb_create_wq(struct ibv_context *c, struct ibv_wq_init_attr *a)
{
	struct ibv_qp_init_attr_ex qa = {0};
	struct vb_wq *w;
	struct ibv_qp *qp;

	if (a == NULL || a->wq_type != IBV_WQT_RQ || a->pd == NULL || a->cq == NULL || a->comp_mask != 0) {
		errno = a != NULL && a->comp_mask != 0 ? EOPNOTSUPP : EINVAL;
		return NULL;
	}
	w = calloc(1, sizeof(*w));
	if (w == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	qa.qp_type = IBV_QPT_RAW_PACKET;
	qa.comp_mask = IBV_QP_INIT_ATTR_PD;
	qa.pd = a->pd;
	qa.send_cq = a->cq;
	qa.recv_cq = a->cq;
	qa.cap.max_recv_wr = a->max_wr;
	qa.cap.max_recv_sge = a->max_sge;
	qp = vb_create_qp_ex(c, &qa);
	if (qp == NULL) {
		free(w);
		return NULL; /* errno set: EINVAL on an InfiniBand port or for caps beyond the device's */
	}
	w->qp = vb_qp_of(qp);
	w->wq.context = c;
	w->wq.wq_context = a->wq_context;
	w->wq.pd = a->pd;
	w->wq.cq = a->cq;
	w->wq.wq_num = qp->qp_num;
	w->wq.handle = qp->qp_num;
	w->wq.state = IBV_WQS_RESET;
	w->wq.wq_type = IBV_WQT_RQ;
	w->wq.post_recv = vb_wq_post_recv;
	return &w->wq;
}

/* The QP's moves for a WQ state: RESET, RDY (INIT then RTR), ERR. */
static int vb_wq_move(struct vb_wq *w, enum ibv_wq_state to)
{
	struct ibv_qp_attr qa = {.port_num = 1};
	int rc;

	if (to == IBV_WQS_RESET || to == IBV_WQS_ERR) {
		qa.qp_state = to == IBV_WQS_RESET ? IBV_QPS_RESET : IBV_QPS_ERR;
		return vb_raw_modify(w->qp, &qa, IBV_QP_STATE);
	}
	if (w->wq.state == IBV_WQS_RDY)
		return 0;
	if (w->wq.state != IBV_WQS_RESET)
		return EINVAL; /* ERR goes back through RESET */
	qa.qp_state = IBV_QPS_INIT;
	rc = vb_raw_modify(w->qp, &qa, IBV_QP_STATE | IBV_QP_PORT);
	if (rc == 0) {
		qa.qp_state = IBV_QPS_RTR;
		rc = vb_raw_modify(w->qp, &qa, IBV_QP_STATE);
	}
	return rc;
}

int vb_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *a)
{
	struct vb_wq *w = (struct vb_wq *)wq;
	int rc;

	if (wq == NULL || a == NULL || (a->attr_mask & ~(uint32_t)(IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE)))
		return a != NULL && (a->attr_mask & IBV_WQ_ATTR_FLAGS) ? EOPNOTSUPP : EINVAL;
	if ((a->attr_mask & IBV_WQ_ATTR_CURR_STATE) && a->curr_wq_state != wq->state)
		return EINVAL;
	if (!(a->attr_mask & IBV_WQ_ATTR_STATE))
		return 0;
	if ((unsigned int)a->wq_state > IBV_WQS_ERR)
		return EINVAL;
	rc = vb_wq_move(w, a->wq_state);
	if (rc == 0)
		wq->state = a->wq_state;
	return rc;
}

int vb_destroy_wq(struct ibv_wq *wq)
{
	struct vb_wq *w = (struct vb_wq *)wq;
	int rc;

	if (wq == NULL)
		return EINVAL;
	if (atomic_load(&w->users) != 0)
		return EBUSY; /* an indirection table lists it */
	rc = vb_destroy_qp(&w->qp->qpx.qp_base);
	if (rc == 0)
		free(w);
	return rc;
}

struct ibv_rwq_ind_table *vb_create_rwq_ind_table(struct ibv_context *c, struct ibv_rwq_ind_table_init_attr *a)
{
	struct vb_ind *t;
	uint32_t n;

	if (a == NULL || a->ind_tbl == NULL || a->log_ind_tbl_size > VB_WQ_IND_LOG_MAX || a->comp_mask != 0) {
		errno = EINVAL;
		return NULL;
	}
	n = 1u << a->log_ind_tbl_size;
	for (uint32_t i = 0; i < n; i++)
		if (a->ind_tbl[i] == NULL || a->ind_tbl[i]->context != c) {
			errno = EINVAL;
			return NULL;
		}
	t = calloc(1, sizeof(*t));
	if (t != NULL)
		t->wqs = calloc(n, sizeof(*t->wqs));
	if (t == NULL || t->wqs == NULL) {
		free(t);
		errno = ENOMEM;
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++) {
		t->wqs[i] = (struct vb_wq *)a->ind_tbl[i];
		atomic_fetch_add(&t->wqs[i]->users, 1);
	}
	t->n = n;
	t->t.context = c;
	t->t.ind_tbl_num = (int)t->wqs[0]->wq.wq_num; /* a number of its own is not needed by anything it serves */
	t->t.ind_tbl_handle = t->t.ind_tbl_num;
	return &t->t;
}

int vb_destroy_rwq_ind_table(struct ibv_rwq_ind_table *tbl)
{
	struct vb_ind *t = (struct vb_ind *)tbl;

	if (tbl == NULL)
		return EINVAL;
	if (atomic_load(&t->users) != 0)
		return EBUSY; /* an RSS QP spreads over it, as the kernel's use count refuses */
	for (uint32_t i = 0; i < t->n; i++)
		atomic_fetch_sub(&t->wqs[i]->users, 1);
	free(t->wqs);
	free(t);
	return 0;
}

void vb_ind_rqns(struct ibv_rwq_ind_table *tbl, uint32_t *rqns, uint32_t *n)
{
	struct vb_ind *t = (struct vb_ind *)tbl;

	for (uint32_t i = 0; i < t->n; i++)
		rqns[i] = t->wqs[i]->wq.wq_num;
	*n = t->n;
}

void vb_ind_hold(struct ibv_rwq_ind_table *tbl, bool hold)
{
	struct vb_ind *t = (struct vb_ind *)tbl;

	if (hold)
		atomic_fetch_add(&t->users, 1);
	else
		atomic_fetch_sub(&t->users, 1);
}
