/*
 * cm_qp — the QP of an id: made on the id's device and moved through its
 * states by the CM as librdmacm does (INIT at creation; RTR and RTS when the
 * peer's REQ or REP is in; ERR at disconnect). Public verbs only; the AH is
 * global (GRH with the peer's GID), which holds on IB and RoCE alike.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base_log.h"
#include "cm_int.h"

#define CM_MIN_RNR_TIMER 12
#define CM_ACK_TIMEOUT 14
#define CM_HOP_LIMIT 64

static int cm_init_attr(struct cm_id *id, struct ibv_qp_attr *a, int *mask)
{
	a->qp_state = IBV_QPS_INIT;
	a->pkey_index = 0;
	a->port_num = id->dev->port_num;
	*mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (id->id.qp_type == IBV_QPT_UD) {
		a->qkey = RDMA_UDP_QKEY;
		*mask |= IBV_QP_QKEY;
	} else {
		a->qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
		*mask |= IBV_QP_ACCESS_FLAGS;
	}
	return 0;
}

/* The address of the peer's port as an AH (UD events and the RC path alike). */
void cm_ud_ah_attr(struct cm_id *id, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->dlid = id->remote.lid;
	ah->port_num = id->dev != NULL ? id->dev->port_num : 1;
	ah->is_global = 1;
	ah->grh.dgid = id->remote.gid;
	ah->grh.sgid_index = 0;
	ah->grh.hop_limit = CM_HOP_LIMIT;
}

static int cm_rtr_attr(struct cm_id *id, struct ibv_qp_attr *a, int *mask)
{
	a->qp_state = IBV_QPS_RTR;
	*mask = IBV_QP_STATE;
	if (id->id.qp_type == IBV_QPT_UD)
		return 0;
	if (id->state != CM_REQ_RCVD && id->state != CM_CONNECT && id->state != CM_REP_RCVD &&
	    id->state != CM_ACCEPT && id->state != CM_CONNECTED)
		return EINVAL;
	a->path_mtu = id->dev->mtu;
	a->dest_qp_num = id->remote.qpn;
	a->rq_psn = id->remote.psn;
	a->max_dest_rd_atomic = id->responder_resources;
	a->min_rnr_timer = CM_MIN_RNR_TIMER;
	cm_ud_ah_attr(id, &a->ah_attr);
	*mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
		 IBV_QP_MIN_RNR_TIMER;
	return 0;
}

static int cm_rts_attr(struct cm_id *id, struct ibv_qp_attr *a, int *mask)
{
	a->qp_state = IBV_QPS_RTS;
	a->sq_psn = id->psn;
	*mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (id->id.qp_type == IBV_QPT_UD)
		return 0;
	a->timeout = CM_ACK_TIMEOUT;
	a->retry_cnt = id->retry_count;
	a->rnr_retry = id->state == CM_CONNECT ? id->remote.rnr_retry_count : id->rnr_retry_count;
	a->max_rd_atomic = id->initiator_depth;
	*mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;
	return 0;
}

static int cm_modify(struct cm_id *id, int (*fill)(struct cm_id *, struct ibv_qp_attr *, int *))
{
	struct ibv_qp_attr a;
	int mask, rc;

	memset(&a, 0, sizeof(a));
	rc = fill(id, &a, &mask);
	if (rc == 0)
		rc = ibv_modify_qp(id->id.qp, &a, mask);
	if (rc != 0)
		BASE_ERR("QP %u to %d: %s", id->id.qp->qp_num, (int)a.qp_state, strerror(rc));
	return rc;
}

int cm_qp_init(struct cm_id *id)
{
	int rc = cm_modify(id, cm_init_attr);

	/* UD has no peer to wait for: librdmacm takes it to RTS at once. */
	if (rc == 0 && id->id.qp_type == IBV_QPT_UD) {
		id->psn = 0;
		rc = cm_modify(id, cm_rtr_attr);
		if (rc == 0)
			rc = cm_modify(id, cm_rts_attr);
	}
	return rc;
}

int cm_qp_rtr_rts(struct cm_id *id)
{
	int rc = cm_modify(id, cm_rtr_attr);

	return rc != 0 ? rc : cm_modify(id, cm_rts_attr);
}

int cm_qp_err(struct cm_id *id)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	if (id->id.qp == NULL || id->id.qp_type == IBV_QPT_UD)
		return 0;
	return ibv_modify_qp(id->id.qp, &a, IBV_QP_STATE);
}

CM_EXPORT int rdma_init_qp_attr(struct rdma_cm_id *id, struct ibv_qp_attr *qp_attr, int *qp_attr_mask)
{
	struct cm_id *cid = (struct cm_id *)id;
	int rc;

	if (id == NULL || qp_attr == NULL || qp_attr_mask == NULL || cid->dev == NULL) {
		errno = EINVAL;
		return -1;
	}
	pthread_mutex_lock(&cm_lock);
	switch (qp_attr->qp_state) {
	case IBV_QPS_INIT:
		rc = cm_init_attr(cid, qp_attr, qp_attr_mask);
		break;
	case IBV_QPS_RTR:
		rc = cm_rtr_attr(cid, qp_attr, qp_attr_mask);
		break;
	case IBV_QPS_RTS:
		rc = cm_rts_attr(cid, qp_attr, qp_attr_mask);
		break;
	default:
		rc = EINVAL;
	}
	pthread_mutex_unlock(&cm_lock);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}

/* CQs of their own for a QP created without them (rdma_create_ep's QPs). */
static int cm_make_cqs(struct cm_id *id, struct ibv_qp_init_attr *a)
{
	struct ibv_context *v = id->id.verbs;

	id->id.recv_cq_channel = ibv_create_comp_channel(v);
	id->id.send_cq_channel = ibv_create_comp_channel(v);
	if (id->id.recv_cq_channel == NULL || id->id.send_cq_channel == NULL)
		return -1;
	id->id.recv_cq = ibv_create_cq(v, (int)(a->cap.max_recv_wr ? a->cap.max_recv_wr : 1), &id->id,
				       id->id.recv_cq_channel, 0);
	id->id.send_cq = ibv_create_cq(v, (int)(a->cap.max_send_wr ? a->cap.max_send_wr : 1), &id->id,
				       id->id.send_cq_channel, 0);
	if (id->id.recv_cq == NULL || id->id.send_cq == NULL)
		return -1;
	id->own_qp_cqs = true;
	return 0;
}

static void cm_free_cqs(struct cm_id *id)
{
	if (!id->own_qp_cqs)
		return;
	if (id->id.send_cq != NULL)
		ibv_destroy_cq(id->id.send_cq);
	if (id->id.recv_cq != NULL)
		ibv_destroy_cq(id->id.recv_cq);
	if (id->id.send_cq_channel != NULL)
		ibv_destroy_comp_channel(id->id.send_cq_channel);
	if (id->id.recv_cq_channel != NULL)
		ibv_destroy_comp_channel(id->id.recv_cq_channel);
	id->id.send_cq = id->id.recv_cq = NULL;
	id->id.send_cq_channel = id->id.recv_cq_channel = NULL;
	id->own_qp_cqs = false;
}

/* The PD of a QP or SRQ made without one: the id's (rdma_create_ep), else the device's default. */
static struct ibv_pd *cm_default_pd(struct cm_id *id)
{
	return id->id.pd != NULL ? id->id.pd : id->dev->pd;
}

static int cm_qp_cqs(struct cm_id *id, struct ibv_qp_init_attr_ex *a)
{
	struct ibv_qp_init_attr cq_attr;

	if (a->send_cq != NULL && a->recv_cq != NULL)
		return 0;
	memset(&cq_attr, 0, sizeof(cq_attr));
	cq_attr.cap = a->cap;
	if (cm_make_cqs(id, &cq_attr) != 0)
		return -1;
	if (a->send_cq == NULL)
		a->send_cq = id->id.send_cq;
	if (a->recv_cq == NULL)
		a->recv_cq = id->id.recv_cq;
	return 0;
}

CM_EXPORT int rdma_create_qp_ex(struct rdma_cm_id *id, struct ibv_qp_init_attr_ex *attr)
{
	struct cm_id *cid = (struct cm_id *)id;
	struct ibv_qp_init_attr_ex a;
	struct ibv_qp *qp;
	int rc;

	if (id == NULL || attr == NULL || cid->dev == NULL || id->qp != NULL) {
		errno = EINVAL;
		return -1;
	}
	a = *attr;
	if (!(a.comp_mask & IBV_QP_INIT_ATTR_PD) || a.pd == NULL) {
		a.pd = cm_default_pd(cid);
		a.comp_mask |= IBV_QP_INIT_ATTR_PD;
	}
	if (a.pd == NULL || a.pd->context != id->verbs) {
		errno = EINVAL;
		return -1;
	}
	if (a.qp_type == 0)
		a.qp_type = id->qp_type;
	if (a.srq == NULL)
		a.srq = id->srq;
	errno = 0;
	if (cm_qp_cqs(cid, &a) != 0)
		goto fail;
	qp = ibv_create_qp_ex(id->verbs, &a);
	if (qp == NULL)
		goto fail;
	id->qp = qp;
	id->pd = qp->pd;
	pthread_mutex_lock(&cm_lock);
	rc = cm_qp_init(cid);
	pthread_mutex_unlock(&cm_lock);
	if (rc != 0) {
		id->qp = NULL;
		ibv_destroy_qp(qp);
		errno = rc;
		goto fail;
	}
	attr->cap = a.cap;
	return 0;
fail:
	rc = errno != 0 ? errno : ENOMEM;
	cm_free_cqs(cid);
	errno = rc;
	return -1;
}

CM_EXPORT int rdma_create_qp(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_qp_init_attr *qp_init_attr)
{
	struct ibv_qp_init_attr_ex a;

	if (id == NULL || qp_init_attr == NULL) {
		errno = EINVAL;
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.qp_context = qp_init_attr->qp_context;
	a.send_cq = qp_init_attr->send_cq;
	a.recv_cq = qp_init_attr->recv_cq;
	a.srq = qp_init_attr->srq;
	a.cap = qp_init_attr->cap;
	a.qp_type = qp_init_attr->qp_type;
	a.sq_sig_all = qp_init_attr->sq_sig_all;
	a.pd = pd;
	a.comp_mask = pd != NULL ? IBV_QP_INIT_ATTR_PD : 0;
	if (rdma_create_qp_ex(id, &a) != 0)
		return -1;
	qp_init_attr->cap = a.cap;
	return 0;
}

CM_EXPORT void rdma_destroy_qp(struct rdma_cm_id *id)
{
	if (id == NULL || id->qp == NULL)
		return;
	ibv_destroy_qp(id->qp);
	id->qp = NULL;
	cm_free_cqs((struct cm_id *)id);
}

CM_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct cm_id *cid = (struct cm_id *)id;

	if (id == NULL || attr == NULL || cid->dev == NULL) {
		errno = EINVAL;
		return -1;
	}
	if (pd == NULL)
		pd = cm_default_pd(cid);
	id->srq = pd != NULL ? ibv_create_srq(pd, attr) : NULL;
	return id->srq != NULL ? 0 : -1;
}

CM_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (id == NULL || id->srq == NULL)
		return;
	ibv_destroy_srq(id->srq);
	id->srq = NULL;
}
