/*
 * hw_qp — queue pair objects: memory, state machine, flush of receives, the
 * registry UD destinations are found in, the receive doorbell.
 * The send side's execution is the engine's (hw_engine.c).
 */
#include <endian.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hw_qp.h"
#include "hw_srq.h"

#define QP_BUF_ALIGN 4096
#define QP_DBREC_ALIGN 64
#define QP_REG_SLOTS 4096 /* QPs of this process the device can find by number */
#define QP_REG_TOMB ((struct hw_qp *)(uintptr_t)1)

/*
 * The registry: open addressing on the QPN, written under a lock at create
 * and destroy, read without one (a removed entry becomes a tombstone so the
 * probe chains stay intact).
 */
static struct {
	pthread_mutex_t lock;
	struct hw_qp *slot[QP_REG_SLOTS];
} reg = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint32_t reg_hash(uint32_t qpn)
{
	return (qpn * 2654435761u) >> 20 & (QP_REG_SLOTS - 1);
}

static bool reg_add(struct hw_qp *qp)
{
	uint32_t h = reg_hash(qp->qpn);
	bool ok = false;

	pthread_mutex_lock(&reg.lock);
	for (uint32_t n = 0; n < QP_REG_SLOTS && !ok; n++) {
		struct hw_qp **s = &reg.slot[(h + n) & (QP_REG_SLOTS - 1)];

		if (*s == NULL || *s == QP_REG_TOMB) {
			__atomic_store_n(s, qp, __ATOMIC_RELEASE);
			ok = true;
		}
	}
	pthread_mutex_unlock(&reg.lock);
	return ok;
}

static void reg_del(struct hw_qp *qp)
{
	uint32_t h = reg_hash(qp->qpn);

	pthread_mutex_lock(&reg.lock);
	for (uint32_t n = 0; n < QP_REG_SLOTS; n++) {
		struct hw_qp **s = &reg.slot[(h + n) & (QP_REG_SLOTS - 1)];

		if (*s == NULL)
			break;
		if (*s == qp) {
			__atomic_store_n(s, QP_REG_TOMB, __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_mutex_unlock(&reg.lock);
}

struct hw_qp *hw_qp_lookup(uint32_t qpn)
{
	uint32_t h;

	qpn &= 0xffffffu;
	h = reg_hash(qpn);
	for (uint32_t n = 0; n < QP_REG_SLOTS; n++) {
		struct hw_qp *qp = __atomic_load_n(&reg.slot[(h + n) & (QP_REG_SLOTS - 1)], __ATOMIC_ACQUIRE);

		if (qp == NULL)
			return NULL;
		if (qp != QP_REG_TOMB && qp->qpn == qpn)
			return qp;
	}
	return NULL;
}

/* The IB RNR timer codes in units of 10 us; code 0 is the longest. */
static const uint32_t rnr_timer_10us[HW_QP_RNR_TIMER_MAX + 1] = {
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

uint64_t hw_rnr_timer_ns(uint8_t code)
{
	return (uint64_t)rnr_timer_10us[code & HW_QP_RNR_TIMER_MAX] * 10000u;
}

static bool qp_attr_ok(const struct hw_qp_attr *a)
{
	if (a->pd == NULL || a->send_cq == NULL || a->recv_cq == NULL)
		return false;
	if (a->type != HW_QPT_RC && a->type != HW_QPT_UD)
		return false;
	if (a->min_rnr_timer > HW_QP_RNR_TIMER_MAX || a->rnr_retry > HW_QP_RNR_RETRY_INFINITE)
		return false;
	if (a->srq != NULL)
		return a->log_sq_size <= HW_QP_LOG_SQ_MAX;
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
	qp->type = attr->type;
	qp->srq = attr->srq;
	qp->qkey = attr->qkey;
	qp->min_rnr_timer = attr->min_rnr_timer;
	qp->rnr_retry = attr->rnr_retry;
	qp->lid = attr->lid;
	memcpy(qp->gid, attr->gid, sizeof(qp->gid));
	qp->rnr_deadline = HW_QP_NO_DEADLINE;
	qp->log_rq_size = attr->srq != NULL ? 0 : attr->log_rq_size;
	qp->log_rq_stride = attr->srq != NULL ? 0 : attr->log_rq_stride;
	qp->sq_off = attr->srq != NULL ? 0 : (size_t)1 << (attr->log_rq_size + attr->log_rq_stride);
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
	if (!reg_add(qp))
		goto err_reg;
	if (qp->srq != NULL)
		hw_srq_attach(qp->srq, qp);
	*out = qp;
	return HW_OK;

err_reg:
	free(qp->dbrec);
	free(qp->buf);
	free(qp);
	return HW_ERR_NOMEM;
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
	if (qp->srq != NULL)
		hw_srq_detach(qp->srq, qp);
	reg_del(qp);
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
	uint32_t ci = __atomic_load_n(&qp->rq_ci, __ATOMIC_ACQUIRE);

	if (qp->srq != NULL)
		return; /* the SRQ's WQEs stay for the other QPs */
	while (((pi - ci) & HW_QP_COUNTER_MASK) != 0 && ((pi - ci) & HW_QP_COUNTER_MASK) <= (1u << qp->log_rq_size)) {
		f.wqe_counter = (uint16_t)ci;
		(void)hw_cq_push(qp->recv_cq, &f); /* a full CQ latches its overrun flag */
		ci = (ci + 1) & HW_QP_COUNTER_MASK;
		__atomic_store_n(&qp->rq_ci, ci, __ATOMIC_RELEASE);
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
		__atomic_store_n(&qp->sq_ci, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&qp->rq_ci, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&qp->sq_pi, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&qp->rnr_deadline, HW_QP_NO_DEADLINE, __ATOMIC_RELEASE);
		return HW_OK;
	case HW_QP_ERR:
		hw_qp_set_err(qp);
		hw_qp_drive(qp, 0); /* an SQ stopped by RNR is flushed now */
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

enum hw_status hw_qp_set_rnr(struct hw_qp *qp, uint8_t min_rnr_timer, uint8_t rnr_retry)
{
	if (qp == NULL || min_rnr_timer > HW_QP_RNR_TIMER_MAX || rnr_retry > HW_QP_RNR_RETRY_INFINITE)
		return HW_ERR_INVAL;
	qp->min_rnr_timer = min_rnr_timer;
	qp->rnr_retry = rnr_retry;
	return HW_OK;
}

enum hw_status hw_qp_set_qkey(struct hw_qp *qp, uint32_t qkey)
{
	if (qp == NULL || qp->type != HW_QPT_UD)
		return HW_ERR_INVAL;
	qp->qkey = qkey;
	return HW_OK;
}

uint64_t hw_qp_deadline(const struct hw_qp *qp)
{
	return qp == NULL ? HW_QP_NO_DEADLINE : __atomic_load_n(&qp->rnr_deadline, __ATOMIC_ACQUIRE);
}

void hw_qp_resume_peer(struct hw_qp *qp)
{
	struct hw_qp *peer = qp->peer;

	if (qp->type != HW_QPT_RC || peer == NULL || peer->peer != qp)
		return;
	/*
	 * The receive was published (sequentially consistent) before this; a peer
	 * SQ running now may have looked before it and be about to wait, so a
	 * running one is driven too (it goes round again). drivers is read first,
	 * sequentially consistent against hw_qp_drive's increment: read as 0
	 * after a run ended, it makes that run's deadline visible.
	 */
	if (__atomic_load_n(&peer->drivers, __ATOMIC_SEQ_CST) != 0 ||
	    __atomic_load_n(&peer->rnr_deadline, __ATOMIC_ACQUIRE) != HW_QP_NO_DEADLINE)
		hw_qp_drive(peer, 0);
}

enum hw_status hw_qp_ring_rq(struct hw_qp *qp, uint32_t pi)
{
	if (qp == NULL || qp->srq != NULL)
		return HW_ERR_INVAL;
	pi &= HW_QP_COUNTER_MASK;
	if (((pi - __atomic_load_n(&qp->rq_ci, __ATOMIC_ACQUIRE)) & HW_QP_COUNTER_MASK) > (1u << qp->log_rq_size))
		return HW_ERR_INVAL;
	__atomic_store_n(&qp->dbrec[HW_QP_DBR_RCV], htobe32(pi), __ATOMIC_SEQ_CST);
	hw_qp_resume_peer(qp);
	return HW_OK;
}

enum hw_status hw_qp_kick(struct hw_qp *qp, uint64_t now_ns)
{
	if (qp == NULL)
		return HW_ERR_INVAL;
	hw_qp_drive(qp, now_ns == 0 ? 1 : now_ns);
	return HW_OK;
}
