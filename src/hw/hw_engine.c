/*
 * hw_engine — executes a queue pair's send WQEs at its doorbell.
 *
 * Each WQE is copied out of the ring first (it may wrap around the ring's
 * end, and the program may reuse the slot once the CQE is out), then every
 * key it names is checked before a byte moves, so a WQE that fails leaves
 * memory untouched. A failure is reported as the card does: one error CQE
 * for the failing WQE whether or not it asked for a CQE, the QP (and, for a
 * responder-side failure, the peer) to ERR, and every later posted WQE
 * completed with WR_FLUSH.
 *
 * Not yet: SEND with invalidate, LOCAL_INV, UMR, keys of remote memory
 * (refused as a protection or access error), RNR retries (the error comes
 * at once). Fences need nothing: WQEs run one after the other.
 */
#include <endian.h>
#include <string.h>

#include "hw_qp.h"

#define ENG_MAX_DS 63 /* the 6-bit ds field */
#define ENG_MAX_SPANS 64
#define ENG_CE_SIGNALED (2u << 2) /* CQ_UPDATE and CQ_UPDATE_AND_EQE share this bit */
#define ENG_ATOMIC_LEN 8
#define ENG_MAX_MSG (1ull << 31) /* the largest RC message */

struct eng_span {
	uint8_t *p;
	uint32_t len;
};

struct eng_list {
	struct eng_span s[ENG_MAX_SPANS];
	uint32_t n;
	uint64_t total;
};

/* A WQE as copied out of the ring. */
struct eng_wqe {
	uint8_t b[ENG_MAX_DS * HW_WQE_DS_BYTES];
	uint32_t end; /* bytes the ds count covers */
	uint16_t idx;
	uint8_t opcode;
	uint8_t fm_ce_se;
	uint32_t imm; /* host order */
};

/* What one WQE did: syndrome 0 on success. */
struct eng_res {
	uint8_t synd;
	uint32_t byte_cnt;
};

static struct eng_res eng_fail(uint8_t synd)
{
	return (struct eng_res){ .synd = synd };
}

static uint32_t eng_sq_bbs(const struct hw_qp *qp)
{
	return 1u << qp->log_sq_size;
}

/* Copies the WQE at sq_ci into w; the number of basic blocks it spans, 0 when its ds count is unusable. */
static uint32_t eng_load(const struct hw_qp *qp, uint32_t avail, struct eng_wqe *w)
{
	const uint8_t *sq = hw_qp_sq_buf(qp);
	uint32_t pos = qp->sq_ci & (eng_sq_bbs(qp) - 1);
	const struct hw_wqe_ctrl_seg *ctrl = (const void *)(sq + (size_t)pos * HW_SEND_WQE_BB);
	uint32_t ds = hw_ctrl_ds(ctrl);
	uint32_t nbb = (ds * HW_WQE_DS_BYTES + HW_SEND_WQE_BB - 1) / HW_SEND_WQE_BB;
	size_t first;

	w->opcode = hw_ctrl_opcode(ctrl);
	w->fm_ce_se = ctrl->fm_ce_se;
	w->imm = be32toh(ctrl->imm);
	w->idx = (uint16_t)qp->sq_ci;
	w->end = ds * HW_WQE_DS_BYTES;
	if (ds == 0 || nbb > avail)
		return 0;
	first = (size_t)(eng_sq_bbs(qp) - pos) * HW_SEND_WQE_BB;
	if (first > w->end)
		first = w->end;
	memcpy(w->b, sq + (size_t)pos * HW_SEND_WQE_BB, first);
	memcpy(w->b + first, sq, w->end - first);
	return nbb;
}

static void eng_add(struct eng_list *l, uint8_t *p, uint32_t len)
{
	l->s[l->n].p = p;
	l->s[l->n].len = len;
	l->n++;
	l->total += len;
}

/* A local data segment checked against the QP's domain: 0 or the local protection syndrome. */
static uint8_t eng_local_seg(uint32_t pd_id, const struct hw_wqe_data_seg *d, uint32_t access, struct eng_list *l)
{
	uint32_t len = hw_data_seg_len(d);
	uint8_t *p = NULL;

	if (len == 0)
		return 0;
	if (hw_mkey_translate(hw_data_seg_lkey(d), pd_id, hw_data_seg_addr(d), len, access, &p) != HW_OK || p == NULL)
		return HW_CQE_SYNDROME_LOCAL_PROT_ERR;
	eng_add(l, p, len);
	return 0;
}

/* The segments from off to the WQE's end: data segments, or inline data when inl_ok. */
static uint8_t eng_seg_list(const struct hw_qp *qp, struct eng_wqe *w, uint32_t off, uint32_t access, bool inl_ok,
			    struct eng_list *l)
{
	l->n = 0;
	l->total = 0;
	while (off < w->end) {
		struct hw_wqe_inl_seg *inl = (void *)(w->b + off);
		int is_inl;
		uint32_t len = hw_inl_seg_len(inl, &is_inl);
		uint8_t synd;

		if (is_inl) {
			uint32_t span = (uint32_t)((sizeof(*inl) + len + HW_WQE_DS_BYTES - 1) & ~(HW_WQE_DS_BYTES - 1ul));

			if (!inl_ok || len > w->end - off - sizeof(*inl))
				return HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
			if (len != 0)
				eng_add(l, w->b + off + sizeof(*inl), len);
			off += span;
			continue;
		}
		synd = eng_local_seg(qp->pd_id, (const void *)(w->b + off), access, l);
		if (synd != 0)
			return synd;
		off += sizeof(struct hw_wqe_data_seg);
	}
	return l->total > ENG_MAX_MSG ? HW_CQE_SYNDROME_LOCAL_LENGTH_ERR : 0;
}

/* Moves src's bytes into dst's spans in order; dst is at least as long. */
static void eng_copy(const struct eng_list *dst, const struct eng_list *src)
{
	uint32_t di = 0, doff = 0;

	for (uint32_t si = 0; si < src->n; si++) {
		const uint8_t *p = src->s[si].p;
		uint32_t left = src->s[si].len;

		while (left != 0) {
			uint32_t room = dst->s[di].len - doff;
			uint32_t n = left < room ? left : room;

			memmove(dst->s[di].p + doff, p, n);
			p += n;
			left -= n;
			doff += n;
			if (doff == dst->s[di].len) {
				di++;
				doff = 0;
			}
		}
	}
}

/* The peer, if it can take requests (RTR or RTS); else as a fabric would: no answer, retries run out. */
static struct hw_qp *eng_peer(const struct hw_qp *qp)
{
	struct hw_qp *peer = qp->peer;

	if (peer == NULL || (peer->state != HW_QP_RTR && peer->state != HW_QP_RTS))
		return NULL;
	return peer;
}

/* The remote range checked against the peer's domain and right: 0 or the remote access syndrome. */
static uint8_t eng_remote(const struct hw_qp *peer, const struct hw_wqe_raddr_seg *r, uint64_t len, uint32_t access,
			  uint8_t **p)
{
	*p = NULL;
	if (len == 0)
		return 0; /* a zero-length request names no memory: its rkey is not checked */
	if (hw_mkey_translate(hw_raddr_seg_rkey(r), peer->pd_id, hw_raddr_seg_addr(r), len, access, p) != HW_OK ||
	    *p == NULL)
		return HW_CQE_SYNDROME_REMOTE_ACCESS_ERR;
	return 0;
}

/* The receive WQE at the peer's consumer counter, or NULL when none is posted. */
static uint8_t *eng_rq_head(const struct hw_qp *peer)
{
	uint32_t pi = be32toh(__atomic_load_n(&peer->dbrec[HW_QP_DBR_RCV], __ATOMIC_ACQUIRE));
	uint32_t posted = (pi - peer->rq_ci) & HW_QP_COUNTER_MASK;

	if (posted == 0 || posted > (1u << peer->log_rq_size))
		return NULL;
	return hw_qp_rq_buf(peer) + ((size_t)(peer->rq_ci & ((1u << peer->log_rq_size) - 1)) << peer->log_rq_stride);
}

/* The receive WQE's scatter list in the peer's domain: 0 or a local protection syndrome. */
static uint8_t eng_rq_list(const struct hw_qp *peer, const uint8_t *rwqe, struct eng_list *l)
{
	uint32_t nseg = (1u << peer->log_rq_stride) / sizeof(struct hw_wqe_data_seg);

	l->n = 0;
	l->total = 0;
	for (uint32_t i = 0; i < nseg; i++) {
		const struct hw_wqe_data_seg *d = (const void *)(rwqe + i * sizeof(*d));
		uint8_t synd;

		if (hw_data_seg_lkey(d) == HW_RQ_INVALID_LKEY)
			break;
		synd = eng_local_seg(peer->pd_id, d, HW_ACCESS_LOCAL_WRITE, l);
		if (synd != 0)
			return synd;
	}
	return 0;
}

/* Completes the peer's head receive WQE and moves its counter on. */
static void eng_rq_complete(struct hw_qp *peer, const struct hw_cqe_fields *f)
{
	(void)hw_cq_push(peer->recv_cq, f); /* a full CQ latches its overrun flag */
	peer->rq_ci = (peer->rq_ci + 1) & HW_QP_COUNTER_MASK;
}

/* A responder-side failure: its receive completes in error, it goes to ERR; the requester's syndrome returned. */
static struct eng_res eng_resp_fail(struct hw_qp *peer, uint8_t resp_synd, uint8_t req_synd)
{
	struct hw_cqe_fields f = {
		.opcode = HW_CQE_RESP_ERR,
		.qpn = peer->qpn,
		.wqe_counter = (uint16_t)peer->rq_ci,
		.syndrome = resp_synd,
	};

	eng_rq_complete(peer, &f);
	hw_qp_set_err(peer);
	return eng_fail(req_synd);
}

/* SEND and SEND_IMM: gather locally, scatter into the peer's next receive. */
static struct eng_res eng_send(struct hw_qp *qp, struct eng_wqe *w)
{
	struct eng_list src, dst;
	struct hw_qp *peer;
	uint8_t *rwqe;
	uint8_t synd = eng_seg_list(qp, w, sizeof(struct hw_wqe_ctrl_seg), HW_ACCESS_LOCAL_READ, true, &src);
	struct hw_cqe_fields f = { 0 };

	if (synd != 0)
		return eng_fail(synd);
	peer = eng_peer(qp);
	if (peer == NULL)
		return eng_fail(HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
	rwqe = eng_rq_head(peer);
	if (rwqe == NULL)
		return eng_fail(HW_CQE_SYNDROME_RNR_RETRY_EXC_ERR);
	if (eng_rq_list(peer, rwqe, &dst) != 0)
		return eng_resp_fail(peer, HW_CQE_SYNDROME_LOCAL_PROT_ERR, HW_CQE_SYNDROME_REMOTE_OP_ERR);
	if (dst.total < src.total)
		return eng_resp_fail(peer, HW_CQE_SYNDROME_LOCAL_LENGTH_ERR, HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
	eng_copy(&dst, &src);
	f.opcode = w->opcode == HW_WQE_SEND_IMM ? HW_CQE_RESP_SEND_IMM : HW_CQE_RESP_SEND;
	f.solicited = (w->fm_ce_se & HW_WQE_CTRL_SOLICITED) != 0;
	f.qpn = peer->qpn;
	f.wqe_counter = (uint16_t)peer->rq_ci;
	f.byte_cnt = (uint32_t)src.total;
	f.imm = w->opcode == HW_WQE_SEND_IMM ? w->imm : 0;
	eng_rq_complete(peer, &f);
	return (struct eng_res){ .byte_cnt = (uint32_t)src.total };
}

/* RDMA_WRITE and RDMA_WRITE_IMM. */
static struct eng_res eng_write(struct hw_qp *qp, struct eng_wqe *w)
{
	const struct hw_wqe_raddr_seg *r = (const void *)(w->b + sizeof(struct hw_wqe_ctrl_seg));
	struct eng_list src, dst = { .n = 0 };
	struct hw_qp *peer;
	uint8_t *rp;
	uint8_t synd;
	struct hw_cqe_fields f = { 0 };

	if (w->end < 2 * HW_WQE_DS_BYTES)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	synd = eng_seg_list(qp, w, 2 * HW_WQE_DS_BYTES, HW_ACCESS_LOCAL_READ, true, &src);
	if (synd != 0)
		return eng_fail(synd);
	peer = eng_peer(qp);
	if (peer == NULL)
		return eng_fail(HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
	synd = eng_remote(peer, r, src.total, HW_ACCESS_REMOTE_WRITE, &rp);
	if (synd != 0)
		return eng_fail(synd);
	if (w->opcode == HW_WQE_RDMA_WRITE_IMM && eng_rq_head(peer) == NULL)
		return eng_fail(HW_CQE_SYNDROME_RNR_RETRY_EXC_ERR);
	if (src.total != 0) {
		eng_add(&dst, rp, (uint32_t)src.total);
		eng_copy(&dst, &src);
	}
	if (w->opcode == HW_WQE_RDMA_WRITE_IMM) {
		f.opcode = HW_CQE_RESP_WR_IMM;
		f.solicited = (w->fm_ce_se & HW_WQE_CTRL_SOLICITED) != 0;
		f.qpn = peer->qpn;
		f.wqe_counter = (uint16_t)peer->rq_ci;
		f.byte_cnt = (uint32_t)src.total;
		f.imm = w->imm;
		eng_rq_complete(peer, &f);
	}
	return (struct eng_res){ .byte_cnt = (uint32_t)src.total };
}

static struct eng_res eng_read(struct hw_qp *qp, struct eng_wqe *w)
{
	const struct hw_wqe_raddr_seg *r = (const void *)(w->b + sizeof(struct hw_wqe_ctrl_seg));
	struct eng_list src = { .n = 0 }, dst;
	struct hw_qp *peer;
	uint8_t *rp;
	uint8_t synd;

	if (w->end < 2 * HW_WQE_DS_BYTES)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	synd = eng_seg_list(qp, w, 2 * HW_WQE_DS_BYTES, HW_ACCESS_LOCAL_WRITE, false, &dst);
	if (synd != 0)
		return eng_fail(synd);
	peer = eng_peer(qp);
	if (peer == NULL)
		return eng_fail(HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
	synd = eng_remote(peer, r, dst.total, HW_ACCESS_REMOTE_READ, &rp);
	if (synd != 0)
		return eng_fail(synd);
	if (dst.total != 0) {
		eng_add(&src, rp, (uint32_t)dst.total);
		eng_copy(&dst, &src);
	}
	return (struct eng_res){ .byte_cnt = (uint32_t)dst.total };
}

/* ATOMIC_CS and ATOMIC_FA on 8 aligned bytes of the peer; the old value lands in the local segment. */
static struct eng_res eng_atomic(struct hw_qp *qp, struct eng_wqe *w)
{
	const struct hw_wqe_raddr_seg *r = (const void *)(w->b + HW_WQE_DS_BYTES);
	const struct hw_wqe_atomic_seg *a = (const void *)(w->b + 2 * HW_WQE_DS_BYTES);
	struct eng_list dst;
	struct hw_qp *peer;
	uint64_t *target, old;
	uint8_t *rp;
	uint8_t synd;

	if (w->end != 4 * HW_WQE_DS_BYTES)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	synd = eng_seg_list(qp, w, 3 * HW_WQE_DS_BYTES, HW_ACCESS_LOCAL_WRITE, false, &dst);
	if (synd != 0)
		return eng_fail(synd);
	if (dst.n != 1 || dst.total != ENG_ATOMIC_LEN)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	peer = eng_peer(qp);
	if (peer == NULL)
		return eng_fail(HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
	if (hw_raddr_seg_addr(r) % ENG_ATOMIC_LEN != 0)
		return eng_fail(HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
	synd = eng_remote(peer, r, ENG_ATOMIC_LEN, HW_ACCESS_REMOTE_ATOMIC, &rp);
	if (synd != 0)
		return eng_fail(synd);
	target = (uint64_t *)(void *)rp;
	if (w->opcode == HW_WQE_ATOMIC_CS) {
		old = hw_atomic_seg_compare(a);
		__atomic_compare_exchange_n(target, &old, hw_atomic_seg_swap_add(a), false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	} else {
		old = __atomic_fetch_add(target, hw_atomic_seg_swap_add(a), __ATOMIC_SEQ_CST);
	}
	memcpy(dst.s[0].p, &old, sizeof(old));
	return (struct eng_res){ .byte_cnt = ENG_ATOMIC_LEN };
}

static struct eng_res eng_exec(struct hw_qp *qp, struct eng_wqe *w)
{
	switch (w->opcode) {
	case HW_WQE_NOP:
		return (struct eng_res){ 0 };
	case HW_WQE_SEND:
	case HW_WQE_SEND_IMM:
		return eng_send(qp, w);
	case HW_WQE_RDMA_WRITE:
	case HW_WQE_RDMA_WRITE_IMM:
		return eng_write(qp, w);
	case HW_WQE_RDMA_READ:
		return eng_read(qp, w);
	case HW_WQE_ATOMIC_CS:
	case HW_WQE_ATOMIC_FA:
		return eng_atomic(qp, w);
	default:
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	}
}

static void eng_req_cqe(struct hw_qp *qp, const struct eng_wqe *w, struct eng_res res)
{
	struct hw_cqe_fields f = {
		.opcode = res.synd != 0 ? HW_CQE_REQ_ERR : HW_CQE_REQ,
		.qpn = qp->qpn,
		.wqe_counter = w->idx,
		.byte_cnt = res.byte_cnt,
		.syndrome = res.synd,
		.wqe_opcode = w->opcode,
	};

	(void)hw_cq_push(qp->send_cq, &f); /* a full CQ latches its overrun flag */
}

enum hw_status hw_qp_ring_sq(struct hw_qp *qp, uint32_t new_pi)
{
	uint32_t avail;

	if (qp == NULL || (qp->state != HW_QP_RTS && qp->state != HW_QP_ERR))
		return HW_ERR_INVAL;
	new_pi &= HW_QP_COUNTER_MASK;
	avail = (new_pi - qp->sq_ci) & HW_QP_COUNTER_MASK;
	if (avail > eng_sq_bbs(qp))
		return HW_ERR_INVAL;
	while (avail != 0) {
		struct eng_wqe w;
		uint32_t nbb = eng_load(qp, avail, &w);
		struct eng_res res;

		if (qp->state == HW_QP_ERR)
			res = eng_fail(HW_CQE_SYNDROME_WR_FLUSH_ERR);
		else if (nbb == 0)
			res = eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
		else
			res = eng_exec(qp, &w);
		if (nbb == 0)
			nbb = avail; /* no usable size: the rest of the posted work goes with it */
		if (res.synd != 0 || (w.fm_ce_se & ENG_CE_SIGNALED))
			eng_req_cqe(qp, &w, res);
		if (res.synd != 0 && qp->state != HW_QP_ERR)
			hw_qp_set_err(qp);
		qp->sq_ci = (qp->sq_ci + nbb) & HW_QP_COUNTER_MASK;
		avail -= nbb;
	}
	return HW_OK;
}
