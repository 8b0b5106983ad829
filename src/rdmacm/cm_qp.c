/*
 * cm_qp — the QP of an id: made on the id's device and moved through its
 * states by the CM as librdmacm does (INIT at creation; RTR and RTS when the
 * peer's REQ or REP is in; ERR at disconnect). Public verbs only; the AH is
 * global (GRH with the peer's GID), which holds on IB and RoCE alike.
 */
#include <errno.h>
#include <fcntl.h>
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
	ah->grh.sgid_index = id->sgid_index;
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

/* A CQ of the id's own, with its completion channel (librdmacm's ucma_create_cqs). */
static int cm_make_cq(struct cm_id *id, uint32_t size, struct ibv_cq **cq, struct ibv_comp_channel **ch)
{
	*ch = ibv_create_comp_channel(id->id.verbs);
	if (*ch == NULL)
		return -1;
	*cq = ibv_create_cq(id->id.verbs, size != 0 ? (int)size : 1, &id->id, *ch, 0);
	if (*cq == NULL) {
		ibv_destroy_comp_channel(*ch);
		*ch = NULL;
		return -1;
	}
	return 0;
}

static void cm_drop_cq(struct ibv_cq **cq, struct ibv_comp_channel **ch)
{
	if (*cq != NULL)
		ibv_destroy_cq(*cq);
	if (*ch != NULL)
		ibv_destroy_comp_channel(*ch);
	*cq = NULL;
	*ch = NULL;
}

/* The CQs the CM made go with the last of the id's QP and SRQ that use them. */
static void cm_free_cqs(struct cm_id *id)
{
	if (id->id.qp != NULL || id->id.srq != NULL)
		return;
	if (id->own_send_cq)
		cm_drop_cq(&id->id.send_cq, &id->id.send_cq_channel);
	if (id->own_recv_cq)
		cm_drop_cq(&id->id.recv_cq, &id->id.recv_cq_channel);
	id->own_send_cq = id->own_recv_cq = false;
}

/* A QP or SRQ not made: the CQs made for it go, errno (ENOMEM when none was set) stays; -1. */
static int cm_create_failed(struct cm_id *id)
{
	int rc = errno != 0 ? errno : ENOMEM;

	cm_free_cqs(id);
	errno = rc;
	return -1;
}

/* The PD of a QP or SRQ made without one: the id's (rdma_create_ep), else the device's default. */
static struct ibv_pd *cm_default_pd(struct cm_id *id)
{
	return id->id.pd != NULL ? id->id.pd : id->dev->pd;
}

/* The QP's missing CQs: the id's (an XRC SRQ's receive CQ), else new ones of the id's own. */
static int cm_qp_cqs(struct cm_id *id, struct ibv_qp_init_attr_ex *a)
{
	if (a->send_cq == NULL && id->id.send_cq == NULL) {
		if (cm_make_cq(id, a->cap.max_send_wr, &id->id.send_cq, &id->id.send_cq_channel) != 0)
			return -1;
		id->own_send_cq = true;
	}
	if (a->recv_cq == NULL && id->id.recv_cq == NULL) {
		if (cm_make_cq(id, a->cap.max_recv_wr, &id->id.recv_cq, &id->id.recv_cq_channel) != 0)
			return -1;
		id->own_recv_cq = true;
	}
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
	/* librdmacm takes the QP's ECE (ibv_query_ece): this device's QPs have none. */
	memset(&cid->local_ece, 0, sizeof(cid->local_ece));
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
	return cm_create_failed(cid);
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

/* The device's XRC domain for XRC SRQs made without one (librdmacm's ucma_get_xrcd). */
static struct ibv_xrcd *cm_dev_xrcd(struct cm_dev *dev)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = -1,
		.oflags = O_CREAT,
	};

	pthread_mutex_lock(&cm_lock);
	if (dev->xrcd == NULL)
		dev->xrcd = ibv_open_xrcd(dev->verbs, &a);
	pthread_mutex_unlock(&cm_lock);
	return dev->xrcd;
}

/* An XRC SRQ's domain and CQ: the attributes', else the device's domain and a receive CQ of the id's. */
static int cm_srq_xrc(struct cm_id *id, struct ibv_srq_init_attr_ex *a)
{
	if (!(a->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) || a->xrcd == NULL) {
		a->xrcd = cm_dev_xrcd(id->dev);
		if (a->xrcd == NULL)
			return -1;
	}
	if (!(a->comp_mask & IBV_SRQ_INIT_ATTR_CQ) || a->cq == NULL) {
		if (id->id.recv_cq == NULL) {
			if (cm_make_cq(id, a->attr.max_wr, &id->id.recv_cq, &id->id.recv_cq_channel) != 0)
				return -1;
			id->own_recv_cq = true;
		}
		a->cq = id->id.recv_cq;
	}
	a->comp_mask |= IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	return 0;
}

CM_EXPORT int rdma_create_srq_ex(struct rdma_cm_id *id, struct ibv_srq_init_attr_ex *attr)
{
	struct cm_id *cid = (struct cm_id *)id;
	struct ibv_srq *srq;

	if (id == NULL || attr == NULL || cid->dev == NULL || id->srq != NULL ||
	    !(attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)) {
		errno = EINVAL;
		return -1;
	}
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || attr->pd == NULL) {
		attr->pd = cm_default_pd(cid);
		attr->comp_mask |= IBV_SRQ_INIT_ATTR_PD;
	}
	errno = 0;
	if (attr->srq_type == IBV_SRQT_XRC && cm_srq_xrc(cid, attr) != 0)
		goto fail;
	srq = ibv_create_srq_ex(id->verbs, attr);
	if (srq == NULL)
		goto fail;
	if (id->pd == NULL)
		id->pd = attr->pd;
	id->srq = srq;
	return 0;
fail:
	return cm_create_failed(cid);
}

/* As librdmacm: rdma_create_srq_ex with the PD given, an XRC SRQ on an XRC receive id. */
CM_EXPORT int rdma_create_srq(struct rdma_cm_id *id, struct ibv_pd *pd, struct ibv_srq_init_attr *attr)
{
	struct ibv_srq_init_attr_ex a;

	if (id == NULL || attr == NULL) {
		errno = EINVAL;
		return -1;
	}
	memset(&a, 0, sizeof(a));
	a.srq_context = attr->srq_context;
	a.attr = attr->attr;
	a.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD;
	a.srq_type = id->qp_type == IBV_QPT_XRC_RECV ? IBV_SRQT_XRC : IBV_SRQT_BASIC;
	a.pd = pd;
	if (rdma_create_srq_ex(id, &a) != 0)
		return -1;
	attr->attr = a.attr;
	return 0;
}

CM_EXPORT void rdma_destroy_srq(struct rdma_cm_id *id)
{
	if (id == NULL || id->srq == NULL)
		return;
	ibv_destroy_srq(id->srq);
	id->srq = NULL;
	cm_free_cqs((struct cm_id *)id);
}
