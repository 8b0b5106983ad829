/*
 * fx_queue — FlexIO CQs and QPs: queues of the emulated device whose rings
 * and doorbell records lie in the process's DPA memory, where device code
 * reads and writes them as it would on the card. The queue engine (hw_cq,
 * hw_qp) executes them as it executes a verbs queue; a QP connects to any
 * RC QP of the device by number, a host program's ibv QP included.
 *
 * A CQ that names a DPA thread wakes it when an armed event fires
 * (fx_evh.c); device code arms it again through its outbox (ops->cq_arm).
 */
#include <endian.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "fx_evh.h"
#include "fx_int.h"
#include "fx_isolate.h"
#include "fx_queue.h"
#include "hw_cq.h"
#include "hw_ids.h"
#include "hw_qp.h"

#define FX_CQE_BYTES 64u
#define FX_RQ_LOG_STRIDE 4u /* a FlexIO receive WQE: one 16-byte data segment */
#define FX_SQ_WQE_BYTES 64u
#define FX_DBR_BYTES 8u

struct flexio_cq {
	struct flexio_cq *next;
	struct flexio_process *proc;
	struct hw_cq *hw;
	uint32_t cqn;
	struct flexio_thread *thread; /* the DPA thread its events wake, or NULL */
	uint32_t arm_sn;	      /* the next arm's sequence number (atomic: device threads arm) */
	uint16_t mod_count, mod_period, mod_mode;
	uint32_t users; /* QPs completing into it (under the process lock) */
	uint32_t ringing; /* device doorbells on it in progress (atomic): destroy waits for them */
};

struct flexio_qp {
	struct flexio_qp *next;
	struct flexio_process *proc;
	struct hw_qp *hw;
	struct hw_pd *pd;
	uint32_t qpn;
	struct flexio_cq *sq_cq, *rq_cq;
	enum flexio_qp_state state;
	int access;
	uint32_t ringing; /* device doorbells on it in progress (atomic): destroy waits for them */
};

/* ---- lookups (under the process lock) ---- */

static struct flexio_cq *fx_cq_find(struct flexio_process *p, uint32_t cqn)
{
	for (struct flexio_cq *c = p->cqs; c != NULL; c = c->next)
		if (c->cqn == cqn)
			return c;
	return NULL;
}

static struct flexio_qp *fx_qp_find(struct flexio_process *p, uint32_t qpn)
{
	for (struct flexio_qp *q = p->qps; q != NULL; q = q->next)
		if (q->qpn == qpn)
			return q;
	return NULL;
}

/*
 * A doorbell of device code holds its queue from the lookup (under the
 * process lock) to its end; destroy, having unlinked the queue so no new
 * doorbell finds it, waits for those in progress: a handler ringing a queue
 * the program destroys meanwhile fails its doorbell instead of using freed
 * memory.
 */
void fx_ring_wait(uint32_t *ringing)
{
	while (__atomic_load_n(ringing, __ATOMIC_ACQUIRE) != 0)
		sched_yield();
}

/* ---- CQs ---- */

/* What softdpu's CQ cannot do yet, named in the log; 0 when the attributes are all supported. */
static const char *fx_cq_unsupported(const struct flexio_cq_attr *a)
{
	if (a->element_type == FLEXIO_CQ_ELEMENT_TYPE_EXT_EQ ||
	    a->element_type == FLEXIO_CQ_ELEMENT_TYPE_DPA_MSIX_EMULATED_CQ)
		return "a CQ reporting to an EQ or an emulated MSI-X";
	if (a->cq_ring_qmem.memtype != FLEXIO_MEMTYPE_DPA)
		return "a CQ ring in host memory (UMEM)";
	if (a->cqe_comp_type != FLEXIO_CQE_COMP_NONE || a->cc)
		return "CQE compression or collapsed CQEs";
	if (a->always_armed || a->overrun_ignore)
		return "always-armed or overrun-ignoring CQs";
	return NULL;
}

static bool fx_cq_attr_ok(struct flexio_process *p, const struct flexio_cq_attr *a)
{
	uint64_t ring_len = (uint64_t)FX_CQE_BYTES << a->log_cq_depth;

	if (a->log_cq_depth > HW_CQ_LOG_SIZE_MAX) {
		BASE_ERR("log_cq_depth %u is above %u", a->log_cq_depth, HW_CQ_LOG_SIZE_MAX);
		return false;
	}
	if (a->element_type != FLEXIO_CQ_ELEMENT_TYPE_DPA_THREAD &&
	    a->element_type != FLEXIO_CQ_ELEMENT_TYPE_NON_DPA_CQ) {
		BASE_ERR("element type %#x is not one of FLEXIO_CQ_ELEMENT_TYPE_*", a->element_type);
		return false;
	}
	if (a->element_type == FLEXIO_CQ_ELEMENT_TYPE_DPA_THREAD && !fx_thread_of(p, a->thread)) {
		BASE_ERR("a CQ of element type DPA_THREAD names a thread of this process (flexio_event_handler_get_thread)");
		return false;
	}
	if (!fx_dev_span(p, a->cq_ring_qmem.daddr, ring_len, HW_CQ_RING_ALIGN) ||
	    !fx_dev_span(p, a->cq_dbr_daddr, FX_DBR_BYTES, HW_CQ_DBREC_ALIGN)) {
		BASE_ERR("the CQ ring (%llu bytes, %u-aligned) and doorbell record (8 bytes) must lie in DPA memory "
			 "of this process (flexio_buf_dev_alloc)",
			 (unsigned long long)ring_len, HW_CQ_RING_ALIGN);
		return false;
	}
	return true;
}

static void fx_cq_event(void *arg)
{
	struct flexio_cq *cq = arg;

	fx_thread_wake(cq->thread);
}

/* Arms cq at consumer index ci with its next sequence number, as the card's CQ doorbell does. */
static int fx_cq_arm_at(struct flexio_cq *cq, uint32_t ci)
{
	uint32_t sn = __atomic_fetch_add(&cq->arm_sn, 1, __ATOMIC_RELAXED) & HW_CQ_ARM_SN_MASK;
	uint32_t word = sn << HW_CQ_ARM_SN_SHIFT | (ci & HW_CQ_CI_MASK);

	__atomic_store_n(&hw_cq_dbrec(cq->hw)[HW_CQ_DBR_ARM], htobe32(word), __ATOMIC_RELEASE);
	return hw_cq_arm(cq->hw, word) == HW_OK ? 0 : -1;
}

static flexio_status fx_cq_build(const struct flexio_cq_attr *a, struct flexio_cq *cq)
{
	struct hw_cq_attr ha = {
		.log_size = a->log_cq_depth,
		.ring = (struct hw_cqe64 *)(uintptr_t)a->cq_ring_qmem.daddr,
		.dbrec = (uint32_t *)(uintptr_t)a->cq_dbr_daddr,
	};

	if (hw_id_alloc(HW_ID_CQN, &cq->cqn) != HW_OK) {
		BASE_ERR("no CQ number left");
		return FLEXIO_STATUS_FAILED;
	}
	ha.cqn = cq->cqn;
	if (cq->thread != NULL) {
		ha.on_event = fx_cq_event;
		ha.on_event_arg = cq;
	}
	if (hw_cq_create(&ha, &cq->hw) != HW_OK) {
		BASE_ERR("the device refused the CQ");
		hw_id_free(HW_ID_CQN, cq->cqn);
		return FLEXIO_STATUS_FAILED;
	}
	if (!a->no_arm)
		(void)fx_cq_arm_at(cq, 0);
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_cq_create(struct flexio_process *process, struct ibv_context *ibv_ctx,
			       const struct flexio_cq_attr *fattr, struct flexio_cq **cq)
{
	struct flexio_cq *c;
	const char *why;

	if (cq != NULL)
		*cq = NULL;
	if (process == NULL || fattr == NULL || cq == NULL) {
		BASE_ERR("invalid argument (process, attributes, CQ pointer)");
		return FLEXIO_STATUS_FAILED;
	}
	(void)ibv_ctx; /* another context names the same emulated device: its queues are the same engine's */
	why = fx_cq_unsupported(fattr);
	if (why != NULL) {
		BASE_WARN("%s: not supported by softdpu (FLEXIO_STATUS_FAILED)", why);
		return FLEXIO_STATUS_FAILED;
	}
	if (!fx_cq_attr_ok(process, fattr))
		return FLEXIO_STATUS_FAILED;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return FLEXIO_STATUS_FAILED;
	c->proc = process;
	c->thread = fattr->element_type == FLEXIO_CQ_ELEMENT_TYPE_DPA_THREAD ? fattr->thread : NULL;
	c->mod_count = fattr->cq_max_count;
	c->mod_period = fattr->cq_period;
	c->mod_mode = (uint16_t)fattr->cq_period_mode;
	if (fx_cq_build(fattr, c) != FLEXIO_STATUS_SUCCESS) {
		free(c);
		return FLEXIO_STATUS_FAILED;
	}
	pthread_mutex_lock(&process->lock);
	c->next = process->cqs;
	process->cqs = c;
	pthread_mutex_unlock(&process->lock);
	*cq = c;
	return FLEXIO_STATUS_SUCCESS;
}

static void fx_cq_free(struct flexio_cq *c)
{
	hw_cq_destroy(c->hw);
	hw_id_free(HW_ID_CQN, c->cqn);
	free(c);
}

flexio_status flexio_cq_destroy(struct flexio_cq *cq)
{
	struct flexio_process *p;
	struct flexio_cq **pp;

	if (cq == NULL)
		return FLEXIO_STATUS_FAILED;
	p = cq->proc;
	pthread_mutex_lock(&p->lock);
	if (cq->users != 0) {
		pthread_mutex_unlock(&p->lock);
		BASE_ERR("CQ %#x still has %u QPs completing into it: destroy them first", cq->cqn, cq->users);
		return FLEXIO_STATUS_FAILED;
	}
	for (pp = &p->cqs; *pp != NULL && *pp != cq; pp = &(*pp)->next)
		;
	if (*pp == cq)
		*pp = cq->next;
	pthread_mutex_unlock(&p->lock);
	fx_ring_wait(&cq->ringing);
	fx_cq_free(cq);
	return FLEXIO_STATUS_SUCCESS;
}

uint32_t flexio_cq_get_cq_num(struct flexio_cq *cq)
{
	return cq != NULL ? cq->cqn : 0;
}

/*
 * Moderation is kept and reported; the emulated CQ fires at the first CQE
 * after an arm (moderation only ever delays an event on the card).
 */
flexio_status flexio_cq_modify_moderation(struct flexio_cq *cq, uint16_t max_count, uint16_t period, uint16_t mode)
{
	if (cq == NULL || (mode != FLEXIO_CQ_PERIOD_MODE_EVENT && mode != FLEXIO_CQ_PERIOD_MODE_CQE)) {
		BASE_ERR("invalid argument (CQ, mode FLEXIO_CQ_PERIOD_MODE_EVENT or _CQE)");
		return FLEXIO_STATUS_FAILED;
	}
	pthread_mutex_lock(&cq->proc->lock);
	cq->mod_count = max_count;
	cq->mod_period = period;
	cq->mod_mode = mode;
	pthread_mutex_unlock(&cq->proc->lock);
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_cq_query_moderation(struct flexio_cq *cq, uint16_t *max_count, uint16_t *period, uint16_t *mode)
{
	if (cq == NULL || max_count == NULL || period == NULL || mode == NULL) {
		BASE_ERR("invalid argument (CQ, output pointers)");
		return FLEXIO_STATUS_FAILED;
	}
	pthread_mutex_lock(&cq->proc->lock);
	*max_count = cq->mod_count;
	*period = cq->mod_period;
	*mode = cq->mod_mode;
	pthread_mutex_unlock(&cq->proc->lock);
	return FLEXIO_STATUS_SUCCESS;
}

struct flexio_cq *fx_cq_take(struct flexio_process *p, uint32_t cqn)
{
	struct flexio_cq *c;

	pthread_mutex_lock(&p->lock);
	c = fx_cq_find(p, cqn & 0xffffffu);
	if (c != NULL)
		c->users++;
	pthread_mutex_unlock(&p->lock);
	return c;
}

void fx_cq_drop(struct flexio_cq *cq)
{
	pthread_mutex_lock(&cq->proc->lock);
	cq->users--;
	pthread_mutex_unlock(&cq->proc->lock);
}

struct hw_cq *fx_cq_hw(const struct flexio_cq *cq)
{
	return cq->hw;
}

/* ---- QPs ---- */

static uint64_t fx_qp_ring_bytes(const struct flexio_qp_attr *a)
{
	uint64_t rq = a->rq_type == FLEXIO_QP_QPC_RQ_TYPE_ZERO_SIZE_RQ ? 0 : 1ull << (a->log_rq_depth + FX_RQ_LOG_STRIDE);
	uint64_t sq = a->no_sq ? 0 : (uint64_t)FX_SQ_WQE_BYTES << a->log_sq_depth;

	return rq + sq;
}

static const char *fx_qp_unsupported(const struct flexio_qp_attr *a)
{
	if (a->transport_type != FLEXIO_QPC_ST_RC)
		return "a FlexIO QP other than RC";
	if (a->rq_type == FLEXIO_QP_QPC_RQ_TYPE_SRQ_RMP_XRC_SRQ_XRQ)
		return "a FlexIO QP on an SRQ/RMP";
	if (a->qp_wq_buff_qmem.memtype != FLEXIO_MEMTYPE_DPA || a->qp_wq_dbr_qmem.memtype != FLEXIO_MEMTYPE_DPA)
		return "a QP ring in host memory (UMEM)";
	return NULL;
}

static bool fx_qp_attr_ok(struct flexio_process *p, const struct flexio_qp_attr *a)
{
	if (a->log_sq_depth < 0 || a->log_sq_depth > HW_QP_LOG_SQ_MAX || a->log_rq_depth < 0 ||
	    a->log_rq_depth > HW_QP_LOG_RQ_MAX ||
	    (a->rq_type != FLEXIO_QP_QPC_RQ_TYPE_REGULAR && a->rq_type != FLEXIO_QP_QPC_RQ_TYPE_ZERO_SIZE_RQ)) {
		BASE_ERR("queue depths (log 0..%u) or rq_type out of range", HW_QP_LOG_SQ_MAX);
		return false;
	}
	if (!fx_dev_span(p, a->qp_wq_buff_qmem.daddr, fx_qp_ring_bytes(a), HW_QP_RING_ALIGN) ||
	    !fx_dev_span(p, a->qp_wq_dbr_qmem.daddr, FX_DBR_BYTES, 8)) {
		BASE_ERR("the QP's rings (%llu bytes, RQ then SQ, %u-aligned) and doorbell record (8 bytes) must lie in "
			 "DPA memory of this process",
			 (unsigned long long)fx_qp_ring_bytes(a), HW_QP_RING_ALIGN);
		return false;
	}
	return true;
}

/* Under the process lock: the QP's CQs, counted. */
static bool fx_qp_take_cqs(struct flexio_process *p, const struct flexio_qp_attr *a, struct flexio_qp *q)
{
	q->sq_cq = fx_cq_find(p, a->sq_cqn);
	q->rq_cq = fx_cq_find(p, a->rq_cqn);
	if (q->sq_cq == NULL || q->rq_cq == NULL)
		return false;
	q->sq_cq->users++;
	q->rq_cq->users++;
	return true;
}

static void fx_qp_drop_cqs(struct flexio_qp *q)
{
	q->sq_cq->users--;
	q->rq_cq->users--;
}

static flexio_status fx_qp_build(struct flexio_process *p, const struct flexio_qp_attr *a, struct flexio_qp *q)
{
	struct ibv_pd *pd = a->pd != NULL ? a->pd : p->pd;
	struct hw_qp_attr ha = {
		.type = HW_QPT_RC,
		.send_cq = q->sq_cq->hw,
		.recv_cq = q->rq_cq->hw,
		.log_sq_size = a->no_sq ? 0 : (uint32_t)a->log_sq_depth,
		.log_rq_size = a->rq_type == FLEXIO_QP_QPC_RQ_TYPE_ZERO_SIZE_RQ ? 0 : (uint32_t)a->log_rq_depth,
		.log_rq_stride = FX_RQ_LOG_STRIDE,
		.ring = (void *)(uintptr_t)a->qp_wq_buff_qmem.daddr,
		.dbrec = (uint32_t *)(uintptr_t)a->qp_wq_dbr_qmem.daddr,
		.min_rnr_timer = 1,
	};

	q->pd = hw_pd_get(pd->handle);
	if (q->pd == NULL || hw_id_alloc(HW_ID_QPN, &q->qpn) != HW_OK) {
		BASE_ERR("%s", q->pd == NULL ? "the QP's PD is not a live PD of the device" : "no QP number left");
		goto err;
	}
	ha.pd = q->pd;
	ha.qpn = q->qpn;
	if (hw_qp_create(&ha, &q->hw) != HW_OK) {
		BASE_ERR("the device refused the QP");
		goto err_qpn;
	}
	return FLEXIO_STATUS_SUCCESS;

err_qpn:
	hw_id_free(HW_ID_QPN, q->qpn);
err:
	if (q->pd != NULL)
		hw_pd_free(q->pd);
	return FLEXIO_STATUS_FAILED;
}

flexio_status flexio_qp_create(struct flexio_process *process, struct ibv_context *ibv_ctx,
			       struct flexio_qp_attr *qp_fattr, struct flexio_qp **qp_ptr)
{
	struct flexio_qp *q;
	const char *why;

	if (qp_ptr != NULL)
		*qp_ptr = NULL;
	(void)ibv_ctx; /* as for a CQ: any context of the device */
	if (process == NULL || qp_fattr == NULL || qp_ptr == NULL) {
		BASE_ERR("invalid argument (process, attributes, QP pointer)");
		return FLEXIO_STATUS_FAILED;
	}
	why = fx_qp_unsupported(qp_fattr);
	if (why != NULL) {
		BASE_WARN("%s: not supported by softdpu (FLEXIO_STATUS_FAILED)", why);
		return FLEXIO_STATUS_FAILED;
	}
	if (!fx_qp_attr_ok(process, qp_fattr))
		return FLEXIO_STATUS_FAILED;
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return FLEXIO_STATUS_FAILED;
	q->proc = process;
	q->access = qp_fattr->qp_access_mask;
	pthread_mutex_lock(&process->lock);
	if (!fx_qp_take_cqs(process, qp_fattr, q)) {
		pthread_mutex_unlock(&process->lock);
		BASE_ERR("sq_cqn %#x / rq_cqn %#x: not CQs of this process", qp_fattr->sq_cqn, qp_fattr->rq_cqn);
		free(q);
		return FLEXIO_STATUS_FAILED;
	}
	pthread_mutex_unlock(&process->lock);
	if (fx_qp_build(process, qp_fattr, q) != FLEXIO_STATUS_SUCCESS)
		goto err;
	pthread_mutex_lock(&process->lock);
	q->next = process->qps;
	process->qps = q;
	pthread_mutex_unlock(&process->lock);
	*qp_ptr = q;
	return FLEXIO_STATUS_SUCCESS;

err:
	pthread_mutex_lock(&process->lock);
	fx_qp_drop_cqs(q);
	pthread_mutex_unlock(&process->lock);
	free(q);
	return FLEXIO_STATUS_FAILED;
}

static enum hw_qp_state fx_hw_state(enum flexio_qp_state s)
{
	switch (s) {
	case FLEXIO_QP_STATE_INIT:
		return HW_QP_INIT;
	case FLEXIO_QP_STATE_RTR:
		return HW_QP_RTR;
	case FLEXIO_QP_STATE_RTS:
		return HW_QP_RTS;
	case FLEXIO_QP_STATE_ERR:
		return HW_QP_ERR;
	default:
		return HW_QP_RESET;
	}
}

/* The legal moves of the QP state machine, as the card's modify commands (RST2INIT, INIT2RTR, RTR2RTS, 2ERR, 2RST). */
static bool fx_qp_move_ok(enum flexio_qp_state from, enum flexio_qp_state to)
{
	if (to == FLEXIO_QP_STATE_ERR || to == FLEXIO_QP_STATE_RST)
		return true;
	return (from == FLEXIO_QP_STATE_RST && to == FLEXIO_QP_STATE_INIT) ||
	       (from == FLEXIO_QP_STATE_INIT && to == FLEXIO_QP_STATE_RTR) ||
	       (from == FLEXIO_QP_STATE_RTR && to == FLEXIO_QP_STATE_RTS);
}

/* INIT to RTR: the peer, and the responder's RNR timer. */
static flexio_status fx_qp_to_rtr(struct flexio_qp *qp, const struct flexio_qp_attr *a)
{
	uint8_t timer = (uint8_t)(a->min_rnr_nak_timer <= HW_QP_RNR_TIMER_MAX ? a->min_rnr_nak_timer : 0);

	if (a->min_rnr_nak_timer > HW_QP_RNR_TIMER_MAX) {
		BASE_ERR("min_rnr_nak_timer %u is above %u", a->min_rnr_nak_timer, HW_QP_RNR_TIMER_MAX);
		return FLEXIO_STATUS_FAILED;
	}
	if (hw_qp_connect_qpn(qp->hw, a->remote_qp_num) != HW_OK) {
		BASE_ERR("remote QP %#x: no such RC QP on the device", a->remote_qp_num);
		return FLEXIO_STATUS_FAILED;
	}
	(void)hw_qp_set_rnr(qp->hw, timer, HW_QP_RNR_RETRY_INFINITE);
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_qp_modify(struct flexio_qp *qp, struct flexio_qp_attr *fattr,
			       struct flexio_qp_attr_opt_param_mask *mask)
{
	enum flexio_qp_state to;

	if (qp == NULL || fattr == NULL) {
		BASE_ERR("invalid argument (QP, attributes)");
		return FLEXIO_STATUS_FAILED;
	}
	to = fattr->next_state;
	if (!fx_qp_move_ok(qp->state, to)) {
		BASE_ERR("QP %#x: no transition from state %d to %d", qp->qpn, (int)qp->state, (int)to);
		return FLEXIO_STATUS_FAILED;
	}
	if (to == FLEXIO_QP_STATE_RTR && fx_qp_to_rtr(qp, fattr) != FLEXIO_STATUS_SUCCESS)
		return FLEXIO_STATUS_FAILED;
	if (hw_qp_modify(qp->hw, fx_hw_state(to)) != HW_OK) {
		BASE_ERR("QP %#x: the device refused the move to state %d", qp->qpn, (int)to);
		return FLEXIO_STATUS_FAILED;
	}
	if (to == FLEXIO_QP_STATE_INIT || (mask != NULL && mask->qp_access_mask))
		qp->access = fattr->qp_access_mask;
	qp->state = to;
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_qp_destroy(struct flexio_qp *qp)
{
	struct flexio_process *p;
	struct flexio_qp **pp;

	if (qp == NULL)
		return FLEXIO_STATUS_FAILED;
	p = qp->proc;
	pthread_mutex_lock(&p->lock);
	for (pp = &p->qps; *pp != NULL && *pp != qp; pp = &(*pp)->next)
		;
	if (*pp == qp)
		*pp = qp->next;
	pthread_mutex_unlock(&p->lock);
	fx_ring_wait(&qp->ringing);
	hw_qp_destroy(qp->hw);
	hw_id_free(HW_ID_QPN, qp->qpn);
	hw_pd_free(qp->pd);
	pthread_mutex_lock(&p->lock);
	fx_qp_drop_cqs(qp);
	pthread_mutex_unlock(&p->lock);
	free(qp);
	return FLEXIO_STATUS_SUCCESS;
}

uint32_t flexio_qp_get_qp_num(struct flexio_qp *qp)
{
	return qp != NULL ? qp->qpn : 0;
}

/* ---- doorbells of device code (fx_dev_ops) ---- */

int fx_dev_sq_ring_db(void *proc, uint32_t outbox_id, uint32_t qnum, uint32_t pi)
{
	struct flexio_process *p = proc;
	struct flexio_qp *q;
	enum hw_status st;

	if (fx_outbox_check(p, outbox_id) != 0) {
		BASE_ERR("SQ doorbell of QP %#x without an outbox configured (flexio_dev_outbox_config)", qnum);
		return -1;
	}
	pthread_mutex_lock(&p->lock);
	q = fx_qp_find(p, qnum & 0xffffffu);
	if (q != NULL)
		__atomic_add_fetch(&q->ringing, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&p->lock);
	if (q == NULL) {
		int rc = fx_eth_ring(p, qnum & 0xffffffu, pi);

		if (rc == 1)
			BASE_ERR("SQ doorbell: %#x is not a QP or SQ of this process", qnum);
		return rc == 0 ? 0 : -1;
	}
	/*
	 * The queue engine runs the WQEs now, on this DPA thread, as the card
	 * would on its own: as host code, which may write any memory an MKey
	 * names (another process's DPA memory too), so with every key granted.
	 */
	fx_iso_host();
	st = hw_qp_ring_sq(q->hw, pi & 0xffffu);
	__atomic_sub_fetch(&q->ringing, 1, __ATOMIC_ACQ_REL);
	fx_iso_device(p);
	if (st != HW_OK) {
		BASE_ERR("SQ doorbell of QP %#x refused (state, or a producer index more than a ring ahead)", qnum);
		return -1;
	}
	return 0;
}

int fx_dev_cq_arm(void *proc, uint32_t outbox_id, uint32_t cqn, uint32_t ci)
{
	struct flexio_process *p = proc;
	struct flexio_cq *c;
	int rc;

	if (fx_outbox_check(p, outbox_id) != 0) {
		BASE_ERR("CQ arm of CQ %#x without an outbox configured (flexio_dev_outbox_config)", cqn);
		return -1;
	}
	pthread_mutex_lock(&p->lock);
	c = fx_cq_find(p, cqn & 0xffffffu);
	if (c != NULL)
		__atomic_add_fetch(&c->ringing, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&p->lock);
	if (c == NULL) {
		BASE_ERR("CQ arm: %#x is not a CQ of this process", cqn);
		return -1;
	}
	rc = fx_cq_arm_at(c, ci);
	__atomic_sub_fetch(&c->ringing, 1, __ATOMIC_ACQ_REL);
	return rc;
}

/* Process destroy: the QPs, then the CQs the program left. */
void fx_queue_fini(struct flexio_process *p)
{
	while (p->qps != NULL)
		(void)flexio_qp_destroy(p->qps);
	while (p->cqs != NULL) {
		struct flexio_cq *c = p->cqs;

		p->cqs = c->next;
		fx_cq_free(c);
	}
}
