/*
 * hw_qp — queue pair objects: memory, state machine, flush of receives.
 * The send side's execution is the engine's (hw_engine.c).
 */
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include "hw_qp.h"

#define QP_BUF_ALIGN 4096
#define QP_DBREC_ALIGN 64

static bool qp_attr_ok(const struct hw_qp_attr *a)
{
	if (a->pd == NULL || a->send_cq == NULL || a->recv_cq == NULL)
		return false;
	if (a->log_sq_size > HW_QP_LOG_SQ_MAX || a->log_rq_size > HW_QP_LOG_RQ_MAX)
		return false;
	return a->log_rq_stride >= HW_QP_LOG_RQ_STRIDE_MIN && a->log_rq_stride <= HW_QP_LOG_RQ_STRIDE_MAX;
}

enum hw_status hw_qp_create(const struct hw_qp_attr *attr, struct hw_qp **out)
{
	struct hw_qp *qp;
	void *p;

	if (attr == NULL || out == NULL || !qp_attr_ok(attr))
		return HW_ERR_INVAL;
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return HW_ERR_NOMEM;
	qp->qpn = attr->qpn & 0xffffffu;
	qp->pd_id = hw_pd_id(attr->pd);
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->log_sq_size = attr->log_sq_size;
	qp->log_rq_size = attr->log_rq_size;
	qp->log_rq_stride = attr->log_rq_stride;
	qp->sq_off = (size_t)1 << (attr->log_rq_size + attr->log_rq_stride);
	qp->buf_len = qp->sq_off + ((size_t)HW_SEND_WQE_BB << attr->log_sq_size);
	if (posix_memalign(&p, QP_BUF_ALIGN, qp->buf_len) != 0)
		goto err_buf;
	qp->buf = p;
	memset(qp->buf, 0, qp->buf_len);
	if (posix_memalign(&p, QP_DBREC_ALIGN, 2 * sizeof(uint32_t)) != 0)
		goto err_dbrec;
	qp->dbrec = p;
	qp->dbrec[HW_QP_DBR_RCV] = 0;
	qp->dbrec[HW_QP_DBR_SND] = 0;
	qp->state = HW_QP_RESET;
	*out = qp;
	return HW_OK;

err_dbrec:
	free(qp->buf);
err_buf:
	free(qp);
	return HW_ERR_NOMEM;
}

void hw_qp_destroy(struct hw_qp *qp)
{
	if (qp == NULL)
		return;
	free(qp->dbrec);
	free(qp->buf);
	free(qp);
}

uint8_t *hw_qp_sq_buf(const struct hw_qp *qp)
{
	return qp->buf + qp->sq_off;
}

uint8_t *hw_qp_rq_buf(const struct hw_qp *qp)
{
	return qp->buf;
}

uint32_t *hw_qp_dbrec(const struct hw_qp *qp)
{
	return qp->dbrec;
}

enum hw_qp_state hw_qp_state(const struct hw_qp *qp)
{
	return qp->state;
}

void hw_qp_connect(struct hw_qp *qp, struct hw_qp *peer)
{
	qp->peer = peer;
}

/* Every posted receive completes in error: the program gets each buffer back. */
static void qp_flush_rq(struct hw_qp *qp)
{
	uint32_t pi = be32toh(__atomic_load_n(&qp->dbrec[HW_QP_DBR_RCV], __ATOMIC_ACQUIRE));
	struct hw_cqe_fields f = {
		.opcode = HW_CQE_RESP_ERR,
		.qpn = qp->qpn,
		.syndrome = HW_CQE_SYNDROME_WR_FLUSH_ERR,
	};

	while (((pi - qp->rq_ci) & HW_QP_COUNTER_MASK) != 0 &&
	       ((pi - qp->rq_ci) & HW_QP_COUNTER_MASK) <= (1u << qp->log_rq_size)) {
		f.wqe_counter = (uint16_t)qp->rq_ci;
		(void)hw_cq_push(qp->recv_cq, &f); /* a full CQ latches its overrun flag */
		qp->rq_ci = (qp->rq_ci + 1) & HW_QP_COUNTER_MASK;
	}
}

void hw_qp_set_err(struct hw_qp *qp)
{
	qp->state = HW_QP_ERR;
	qp_flush_rq(qp);
}

enum hw_status hw_qp_modify(struct hw_qp *qp, enum hw_qp_state to)
{
	if (qp == NULL)
		return HW_ERR_INVAL;
	switch (to) {
	case HW_QP_RESET:
		qp->state = HW_QP_RESET;
		qp->sq_ci = 0;
		qp->rq_ci = 0;
		return HW_OK;
	case HW_QP_ERR:
		hw_qp_set_err(qp);
		return HW_OK;
	case HW_QP_INIT:
	case HW_QP_RTR:
	case HW_QP_RTS:
		if (qp->state != to - 1)
			return HW_ERR_INVAL;
		qp->state = to;
		return HW_OK;
	}
	return HW_ERR_INVAL;
}
