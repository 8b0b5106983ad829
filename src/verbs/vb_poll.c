/*
 * vb_poll — reading completions: ibv_poll_cq and the extended CQ's
 * start_poll / next_poll / end_poll / read_* slots.
 *
 * The CQE at the consumer index is the program's once its owner bit is the
 * index's wrap parity and its opcode is not INVALID (the device stores op_own
 * last, with release order). Each one is turned into an ibv_wc as mlx5's
 * poll does: the QP number finds the QP, the WQE counter the work request's
 * wr_id, error syndromes map to statuses one for one. The consumer index
 * reaches the doorbell record after the batch, which frees the slots for the
 * device. A CQ found empty resumes its send queues that wait out an RNR
 * timer: there is no engine thread to do it (docs/ARCHITECTURE.md).
 */
#include <stdatomic.h>
#include <time.h>

#include "hw_xm.h"
#include "vb_int.h"

static enum ibv_wc_status vb_syndrome_status(uint8_t synd)
{
	switch (synd) {
	case HW_CQE_SYNDROME_LOCAL_LENGTH_ERR:
		return IBV_WC_LOC_LEN_ERR;
	case HW_CQE_SYNDROME_LOCAL_QP_OP_ERR:
		return IBV_WC_LOC_QP_OP_ERR;
	case HW_CQE_SYNDROME_LOCAL_PROT_ERR:
		return IBV_WC_LOC_PROT_ERR;
	case HW_CQE_SYNDROME_WR_FLUSH_ERR:
		return IBV_WC_WR_FLUSH_ERR;
	case HW_CQE_SYNDROME_MW_BIND_ERR:
		return IBV_WC_MW_BIND_ERR;
	case HW_CQE_SYNDROME_BAD_RESP_ERR:
		return IBV_WC_BAD_RESP_ERR;
	case HW_CQE_SYNDROME_LOCAL_ACCESS_ERR:
		return IBV_WC_LOC_ACCESS_ERR;
	case HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR:
		return IBV_WC_REM_INV_REQ_ERR;
	case HW_CQE_SYNDROME_REMOTE_ACCESS_ERR:
		return IBV_WC_REM_ACCESS_ERR;
	case HW_CQE_SYNDROME_REMOTE_OP_ERR:
		return IBV_WC_REM_OP_ERR;
	case HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR:
		return IBV_WC_RETRY_EXC_ERR;
	case HW_CQE_SYNDROME_RNR_RETRY_EXC_ERR:
		return IBV_WC_RNR_RETRY_EXC_ERR;
	case HW_CQE_SYNDROME_REMOTE_ABORTED_ERR:
		return IBV_WC_REM_ABORT_ERR;
	default:
		return IBV_WC_GENERAL_ERR;
	}
}

static struct vb_qp *vb_cq_find_qp(struct vb_cq *cq, uint32_t qpn, bool send)
{
	struct vb_qp *qp = cq->last;

	if (qp != NULL && qp->qpx.qp_base.qp_num == qpn && (send ? qp->scq : qp->rcq) == cq)
		return qp;
	for (qp = send ? cq->sqps : cq->rqps; qp != NULL; qp = send ? qp->s_next : qp->r_next)
		if (qp->qpx.qp_base.qp_num == qpn)
			break;
	if (qp != NULL)
		cq->last = qp;
	return qp;
}

static void vb_wc_send(struct vb_qp *qp, const struct hw_cqe64 *cqe, struct ibv_wc *wc)
{
	uint32_t idx = hw_cqe_wqe_counter(cqe) & (qp->sq_wqe_cnt - 1);

	wc->wr_id = qp->sq_wrid[idx];
	wc->opcode = (enum ibv_wc_opcode)qp->sq_wc_op[idx];
	if (wc->opcode == IBV_WC_RDMA_READ)
		wc->byte_len = hw_cqe_byte_cnt(cqe);
	else if (wc->opcode == IBV_WC_COMP_SWAP || wc->opcode == IBV_WC_FETCH_ADD)
		wc->byte_len = 8;
	/* Every WQE up to this one is done: their room is the program's again. */
	atomic_store_explicit(&qp->sq_tail, qp->sq_wqe_head[idx] + 1, memory_order_release);
}

/* The receive's wr_id; true when the whole completion is written (a tag matching SRQ's, vb_tm.c). */
static bool vb_wc_recv_id(struct vb_qp *qp, const struct hw_cqe64 *cqe, struct ibv_wc *wc)
{
	uint32_t t;

	if (qp->srq != NULL) {
		uint16_t idx = hw_cqe_wqe_counter(cqe);

		if (__builtin_expect(cqe->app == HW_CQE_APP_TM, 0)) {
			vb_tm_cqe(qp->srq, cqe, wc);
			return true;
		}
		wc->wr_id = qp->srq->wrid[idx & (qp->srq->wqe_cnt - 1)];
		vb_srq_free_wqe(qp->srq, idx);
		return false;
	}
	t = atomic_load_explicit(&qp->rq_tail, memory_order_relaxed);
	wc->wr_id = qp->rq_wrid[t & (qp->rq_wqe_cnt - 1)];
	atomic_store_explicit(&qp->rq_tail, t + 1, memory_order_release);
	return false;
}

static void vb_wc_recv(const struct hw_cqe64 *cqe, uint8_t op, struct ibv_wc *wc)
{
	uint32_t rqpn = be32toh(cqe->flags_rqpn);

	wc->byte_len = hw_cqe_byte_cnt(cqe);
	switch (op) {
	case HW_CQE_RESP_WR_IMM:
		wc->opcode = IBV_WC_RECV_RDMA_WITH_IMM;
		wc->wc_flags = IBV_WC_WITH_IMM;
		wc->imm_data = cqe->imm_inval_pkey;
		break;
	case HW_CQE_RESP_SEND_IMM:
		wc->opcode = IBV_WC_RECV;
		wc->wc_flags = IBV_WC_WITH_IMM;
		wc->imm_data = cqe->imm_inval_pkey;
		break;
	case HW_CQE_RESP_SEND_INV:
		wc->opcode = IBV_WC_RECV;
		wc->wc_flags = IBV_WC_WITH_INV;
		wc->invalidated_rkey = be32toh(cqe->imm_inval_pkey);
		break;
	default:
		wc->opcode = IBV_WC_RECV;
		break;
	}
	wc->src_qp = rqpn & 0xffffffu;
	wc->sl = (rqpn >> HW_CQE_RQPN_SL_SHIFT) & 0xf;
	if ((rqpn >> HW_CQE_RQPN_GRH_SHIFT) & 0x3)
		wc->wc_flags |= IBV_WC_GRH;
	wc->slid = be16toh(cqe->slid);
	wc->dlid_path_bits = cqe->ml_path & 0x7f;
	wc->pkey_index = 0;
}

/*
 * A receive of an XRC SRQ, or of an SRQ a DevX DCT takes from: its QP (a
 * target of the domain, maybe another process's; the DCT) is none of the
 * CQ's; the CQE's srqn names the SRQ, whose wr_id it is. False when no such
 * SRQ has that number (destroyed).
 */
static bool vb_cqe_srq_recv(struct vb_cq *cq, const struct hw_cqe64 *cqe, uint8_t op, struct ibv_wc *wc)
{
	uint32_t srqn = be32toh(cqe->srqn_uidx) & 0xffffffu;
	struct vb_srq *srq = cq->xsrqs != NULL ? vb_xrc_cq_srq(cq, srqn) : NULL;
	uint16_t idx = hw_cqe_wqe_counter(cqe);

	if (srq == NULL)
		srq = vb_named_cq_srq(cq, srqn);

	if (srq == NULL)
		return false;
	if (cqe->app == HW_CQE_APP_TM) { /* a tag matching SRQ's, whose QP completes its own receives elsewhere */
		vb_tm_cqe(srq, cqe, wc);
		return true;
	}
	*wc = (struct ibv_wc){ .qp_num = hw_cqe_qpn(cqe), .status = IBV_WC_SUCCESS };
	wc->wr_id = srq->wrid[idx & (srq->wqe_cnt - 1)];
	vb_srq_free_wqe(srq, idx);
	if (op != HW_CQE_RESP_ERR)
		vb_wc_recv(cqe, op, wc);
	return true;
}

/*
 * A receive of one of the CQ's QPs (vb_cqe_plain_recv took the common one),
 * its bytes copied from the CQE when it was scattered there (vb_scat.c).
 * Out of line: the send completions vb_cqe_parse reads carry nothing of it.
 */
static __attribute__((noinline)) void vb_cqe_recv(struct vb_qp *qp, const struct hw_cqe64 *cqe, uint8_t op,
						  struct ibv_wc *wc)
{
	if (vb_wc_recv_id(qp, cqe, wc) || op == HW_CQE_RESP_ERR)
		return;
	vb_wc_recv(cqe, op, wc);
	if (cqe->op_own & HW_CQE_FORMAT_MASK)
		vb_scat_recv(qp, cqe, wc);
}

bool vb_cqe_parse(struct vb_cq *cq, const struct hw_cqe64 *cqe, struct ibv_wc *wc)
{
	uint8_t op = hw_cqe_opcode(cqe);
	bool send = op == HW_CQE_REQ || op == HW_CQE_REQ_ERR;
	uint32_t qpn = hw_cqe_qpn(cqe);
	struct vb_qp *qp = vb_cq_find_qp(cq, qpn, send);

	if (qp == NULL && !send && vb_cqe_srq_recv(cq, cqe, op, wc))
		goto status;
	if (qp == NULL)
		return false; /* its QP was destroyed: the completion goes with it */
	wc->qp_num = qpn;
	wc->status = IBV_WC_SUCCESS;
	wc->vendor_err = 0;
	wc->wc_flags = 0;
	wc->byte_len = 0;
	wc->imm_data = 0;
	wc->src_qp = 0;
	wc->slid = 0;
	wc->sl = 0;
	wc->dlid_path_bits = 0;
	wc->pkey_index = 0;
	if (send) {
		vb_wc_send(qp, cqe, wc);
	} else {
		vb_cqe_recv(qp, cqe, op, wc);
	}
status:
	if (op == HW_CQE_REQ_ERR || op == HW_CQE_RESP_ERR) {
		wc->status = vb_syndrome_status(hw_err_cqe_syndrome(cqe));
		wc->vendor_err = hw_err_cqe_vendor_synd(cqe);
	}
	return true;
}

/* The next CQE the program owns, or NULL. */
static const struct hw_cqe64 *vb_cq_next(struct vb_cq *cq)
{
	const struct hw_cqe64 *cqe = vb_cq_cqe(cq, cq->cons_index);
	uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

	if ((op_own >> HW_CQE_OPCODE_SHIFT) == HW_CQE_INVALID ||
	    (op_own & HW_CQE_OWNER_MASK) != ((cq->cons_index >> cq->log_size) & 1))
		return NULL;
	return cqe;
}

/*
 * The completion a receiver polls most: a plain SEND received on the QP of
 * the CQ's last completion, with its own RQ. vb_cqe_parse's result for it,
 * written in one go; false (nothing written) for any other CQE.
 */
static inline bool vb_cqe_plain_recv(struct vb_cq *cq, const struct hw_cqe64 *cqe, struct ibv_wc *wc)
{
	struct vb_qp *qp = cq->last;
	uint32_t qpn = hw_cqe_qpn(cqe), rqpn, t;

	/* The opcode and format bits in one test: a SEND scattered into its CQE takes vb_cqe_parse. */
	if ((cqe->op_own & ~(HW_CQE_SE_MASK | HW_CQE_OWNER_MASK)) != HW_CQE_RESP_SEND << HW_CQE_OPCODE_SHIFT ||
	    qp == NULL || qp->qpx.qp_base.qp_num != qpn ||
	    qp->rcq != cq || qp->srq != NULL)
		return false;
	rqpn = be32toh(cqe->flags_rqpn);
	t = atomic_load_explicit(&qp->rq_tail, memory_order_relaxed);
	*wc = (struct ibv_wc){
		.wr_id = qp->rq_wrid[t & (qp->rq_wqe_cnt - 1)],
		.status = IBV_WC_SUCCESS,
		.opcode = IBV_WC_RECV,
		.byte_len = hw_cqe_byte_cnt(cqe),
		.qp_num = qpn,
		.src_qp = rqpn & 0xffffffu,
		.wc_flags = ((rqpn >> HW_CQE_RQPN_GRH_SHIFT) & 0x3) ? IBV_WC_GRH : 0,
		.slid = be16toh(cqe->slid),
		.sl = (rqpn >> HW_CQE_RQPN_SL_SHIFT) & 0xf,
		.dlid_path_bits = cqe->ml_path & 0x7f,
	};
	atomic_store_explicit(&qp->rq_tail, t + 1, memory_order_release);
	return true;
}

/* Takes the next completion of a known QP into wc; false when none. */
static inline __attribute__((always_inline)) bool vb_cq_take(struct vb_cq *cq, struct ibv_wc *wc)
{
	const struct hw_cqe64 *cqe;

	while ((cqe = vb_cq_next(cq)) != NULL) {
		bool ok = vb_cqe_plain_recv(cq, cqe, wc) || vb_cqe_parse(cq, cqe, wc);

		cq->cur_ts = be64toh(cqe->timestamp);
		cq->cur_flow_tag = hw_cqe_flow_tag(cqe);
		cq->cons_index++;
		if (ok)
			return true;
	}
	return false;
}

static void vb_cq_update_ci(struct vb_cq *cq)
{
	__atomic_store_n(&cq->dbrec[HW_CQ_DBR_SET_CI], htobe32(cq->cons_index & HW_CQ_CI_MASK), __ATOMIC_RELEASE);
}

/* Resumes the send queues on this CQ whose RNR wait has run out (the CQ's lock held). */
static void vb_cq_kick(struct vb_cq *cq)
{
	struct timespec ts;
	uint64_t now = 0;

	for (struct vb_qp *qp = cq->sqps; qp != NULL; qp = qp->s_next) {
		uint64_t dl = hw_qp_deadline(qp->hw);

		if (hw_qp_xm_busy(qp->hw)) /* answers of another machine: reaped by this drive */
			(void)hw_qp_kick(qp->hw, 0);
		if (dl == HW_QP_NO_DEADLINE)
			continue;
		if (dl == 0) { /* receives arrived: resumed now, no clock needed (no retry is counted) */
			(void)hw_qp_kick(qp->hw, 0);
			continue;
		}
		if (now == 0) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
		}
		if (now >= dl)
			(void)hw_qp_kick(qp->hw, now);
	}
}

int vb_poll_cq(struct ibv_cq *ibcq, int n, struct ibv_wc *wc)
{
	struct vb_cq *cq = vb_cq_of(ibcq);
	uint32_t ci;
	int i = 0;

	if (n < 0)
		return -1;
	pthread_spin_lock(&cq->lock);
	ci = cq->cons_index;
	while (i < n && vb_cq_take(cq, &wc[i]))
		i++;
	if (cq->cons_index != ci)
		vb_cq_update_ci(cq);
	else if (cq->sqps != NULL)
		vb_cq_kick(cq);
	pthread_spin_unlock(&cq->lock);
	vb_cq_check_overrun(cq);
	return i;
}

/* The extended CQ: start_poll takes the lock, end_poll releases it, as mlx5's. */
/* Whether the slot at index i is the program's (its owner bit is i's wrap parity). */
static bool vb_cq_owned_at(const struct vb_cq *cq, uint32_t i)
{
	const struct hw_cqe64 *cqe = vb_cq_cqe(cq, i);
	uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

	return (op_own >> HW_CQE_OPCODE_SHIFT) != HW_CQE_INVALID &&
	       (op_own & HW_CQE_OWNER_MASK) == ((i >> cq->log_size) & 1);
}

/*
 * From the newest completion back to the oldest, as mlx5's __mlx5_cq_clean:
 * each kept one moves up by the number dropped below it, keeping its new
 * slot's owner bit; then the consumer index passes the freed slots. The
 * device writes only beyond the newest one the program owns, so it may go
 * on meanwhile.
 */
void vb_cq_clean(struct vb_cq *cq, uint32_t qpn, struct vb_srq *srq)
{
	uint32_t mask = (1u << cq->log_size) - 1, ci, pi, nfreed = 0;

	pthread_spin_lock(&cq->lock);
	ci = cq->cons_index;
	for (pi = ci; pi - ci <= mask && vb_cq_owned_at(cq, pi); pi++)
		;
	while (pi-- != ci) {
		struct hw_cqe64 *cqe = vb_cq_cqe(cq, pi);

		if (hw_cqe_qpn(cqe) == qpn) {
			uint8_t op = hw_cqe_opcode(cqe);

			if (srq != NULL && op != HW_CQE_REQ && op != HW_CQE_REQ_ERR && vb_tm_cqe_took_wqe(cqe))
				vb_srq_free_wqe(srq, hw_cqe_wqe_counter(cqe));
			else if (srq != NULL && op != HW_CQE_REQ && op != HW_CQE_REQ_ERR)
				vb_tm_cqe_dropped(srq, cqe); /* its tag is freed as the poll would have */
			nfreed++;
		} else if (nfreed != 0) {
			struct hw_cqe64 *dest = vb_cq_cqe(cq, pi + nfreed);
			uint8_t owner = dest->op_own & HW_CQE_OWNER_MASK;
			size_t pad = (1u << cq->cqe_log) - sizeof(*dest); /* a 128-byte CQE moves whole */

			memcpy((uint8_t *)dest - pad, (const uint8_t *)cqe - pad, pad + sizeof(*dest));
			dest->op_own = (uint8_t)((dest->op_own & ~HW_CQE_OWNER_MASK) | owner);
		}
	}
	if (nfreed != 0) {
		cq->cons_index += nfreed;
		if (cq->last != NULL && cq->last->qpx.qp_base.qp_num == qpn)
			cq->last = NULL;
		vb_cq_update_ci(cq);
	}
	pthread_spin_unlock(&cq->lock);
}

static struct vb_cq *vb_cqx(struct ibv_cq_ex *c)
{
	return (struct vb_cq *)c;
}

static void vb_cqx_publish(struct vb_cq *cq)
{
	cq->cqx.wr_id = cq->cur.wr_id;
	cq->cqx.status = cq->cur.status;
}

static int vb_start_poll(struct ibv_cq_ex *c, struct ibv_poll_cq_attr *attr)
{
	struct vb_cq *cq = vb_cqx(c);

	if (attr != NULL && attr->comp_mask != 0)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	if (!vb_cq_take(cq, &cq->cur)) {
		if (cq->sqps != NULL)
			vb_cq_kick(cq);
		vb_cq_update_ci(cq);
		pthread_spin_unlock(&cq->lock);
		vb_cq_check_overrun(cq);
		return ENOENT;
	}
	vb_cqx_publish(cq);
	return 0;
}

static int vb_next_poll(struct ibv_cq_ex *c)
{
	struct vb_cq *cq = vb_cqx(c);

	if (!vb_cq_take(cq, &cq->cur))
		return ENOENT;
	vb_cqx_publish(cq);
	return 0;
}

static void vb_end_poll(struct ibv_cq_ex *c)
{
	struct vb_cq *cq = vb_cqx(c);

	vb_cq_update_ci(cq);
	pthread_spin_unlock(&cq->lock);
	vb_cq_check_overrun(cq);
}

static enum ibv_wc_opcode vb_read_opcode(struct ibv_cq_ex *c)
{
	return vb_cqx(c)->cur.opcode;
}

static uint32_t vb_read_vendor_err(struct ibv_cq_ex *c)
{
	return vb_cqx(c)->cur.vendor_err;
}

static uint32_t vb_read_byte_len(struct ibv_cq_ex *c)
{
	return vb_cqx(c)->cur.byte_len;
}

/* ibv_wc_read_invalidated_rkey reads this slot too, and converts from big-endian. */
static __be32 vb_read_imm_data(struct ibv_cq_ex *c)
{
	const struct ibv_wc *wc = &vb_cqx(c)->cur;

	return (wc->wc_flags & IBV_WC_WITH_INV) ? htobe32(wc->invalidated_rkey) : wc->imm_data;
}

static uint32_t vb_read_qp_num(struct ibv_cq_ex *c)
{
	return vb_cqx(c)->cur.qp_num;
}

static uint32_t vb_read_src_qp(struct ibv_cq_ex *c)
{
	return vb_cqx(c)->cur.src_qp;
}

static unsigned int vb_read_wc_flags(struct ibv_cq_ex *c)
{
	return vb_cqx(c)->cur.wc_flags;
}

static uint32_t vb_read_slid(struct ibv_cq_ex *c)
{
	return vb_cqx(c)->cur.slid;
}

static uint8_t vb_read_sl(struct ibv_cq_ex *c)
{
	return vb_cqx(c)->cur.sl;
}

static uint8_t vb_read_dlid_path_bits(struct ibv_cq_ex *c)
{
	return vb_cqx(c)->cur.dlid_path_bits;
}

/* No VLANs and no flow steering on this device: both read zero. */
static uint16_t vb_read_cvlan(struct ibv_cq_ex *c)
{
	(void)c;
	return 0;
}

static uint64_t vb_read_completion_ts(struct ibv_cq_ex *c)
{
	return vb_cqx(c)->cur_ts;
}

/* The completion's device time as UTC nanoseconds (vb_clock.c). */
static uint64_t vb_read_completion_wallclock_ns(struct ibv_cq_ex *c)
{
	return vb_clock_wall_of(vb_cqx(c)->cur_ts);
}

/* A steering rule's tag of the frame received (0: none), as mlx5 reads its CQE's flow_tag. */
static uint32_t vb_read_flow_tag(struct ibv_cq_ex *c)
{
	return vb_cqx(c)->cur_flow_tag;
}

/* As mlx5's: read from the CQE being read, still in the ring until end_poll. */
static void vb_read_tm_info(struct ibv_cq_ex *c, struct ibv_wc_tm_info *ti)
{
	struct vb_cq *cq = vb_cqx(c);

	vb_tm_info(vb_cq_cqe(cq, cq->cons_index - 1), ti);
}

void vb_cq_ex_fill(struct vb_cq *cq)
{
	struct ibv_cq_ex *x = &cq->cqx;

	x->start_poll = vb_start_poll;
	x->next_poll = vb_next_poll;
	x->end_poll = vb_end_poll;
	x->read_opcode = vb_read_opcode;
	x->read_vendor_err = vb_read_vendor_err;
	x->read_byte_len = vb_read_byte_len;
	x->read_imm_data = vb_read_imm_data;
	x->read_qp_num = vb_read_qp_num;
	x->read_src_qp = vb_read_src_qp;
	x->read_wc_flags = vb_read_wc_flags;
	x->read_slid = vb_read_slid;
	x->read_sl = vb_read_sl;
	x->read_dlid_path_bits = vb_read_dlid_path_bits;
	x->read_cvlan = vb_read_cvlan;
	x->read_flow_tag = vb_read_flow_tag;
	x->read_completion_ts = vb_read_completion_ts;
	x->read_completion_wallclock_ns = vb_read_completion_wallclock_ns;
	x->read_tm_info = vb_read_tm_info;
}
