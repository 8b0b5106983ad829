/*
 * hw_eng_tm — a SEND arriving on a QP of a tag matching SRQ (hw_tm.h);
 * included by hw_engine.c only, after the receive helpers it uses.
 *
 * The message's first bytes decide (hw_tm_classify). Matched EAGER: the data
 * after the TMH goes to the tag's buffer, one CQE (CONSUMED_MSG, the TMH in
 * it). Matched RNDV: the responder reads the RVH's range from the requester
 * into the tag's buffer; a first CQE (CONSUMED, the TMH) says the tag took
 * it, the requester's receive queue gets a FIN (the TMH with opcode FIN;
 * with no receive there, once one is posted), a second CQE (EXPECTED) says
 * the data is there. Run for another machine, the range came with the SEND
 * and the answer carries the FIN back (hw_xm.h). Anything else takes an
 * ordinary receive of the SRQ, TMH and all (UNEXPECTED or NO_TAG); with
 * none posted the requester waits as on an RNR NAK. A tag whose buffer is
 * too small or not writable completes in error; the requester's SEND still
 * succeeds: the message was delivered. All CQEs go to the SRQ's CQ.
 */
#ifndef HW_ENG_TM_H_
#define HW_ENG_TM_H_

#include <pthread.h>
#include <time.h>

#include "hw_tm.h"

/* The part [skip, skip + len) of src (within it) as a list of its own. */
static void eng_tm_sub(const struct eng_list *src, uint64_t skip, uint64_t len, struct eng_list *out)
{
	eng_list_init(out);
	for (uint32_t i = 0; i < src->n && len != 0; i++) {
		const struct eng_span *s = &src->s[i];
		uint32_t n;

		if (skip >= s->len) {
			skip -= s->len;
			continue;
		}
		n = s->len - (uint32_t)skip < len ? s->len - (uint32_t)skip : (uint32_t)len;
		if (s->u != NULL)
			eng_add_umr(out, s->u, s->off + skip, n);
		else
			eng_add(out, s->p + skip, n);
		len -= n;
		skip = 0;
	}
}

/* The first len bytes of src copied into buf. */
static void eng_tm_peek(const struct eng_list *src, uint8_t *buf, uint32_t len)
{
	struct eng_list head, dst;

	eng_tm_sub(src, 0, len, &head);
	eng_list_init(&dst);
	eng_add(&dst, buf, len);
	eng_copy(&dst, &head);
}

/* One CQE of the SRQ's CQ, under its producer lock. */
static void eng_tm_push(struct hw_cq *cq, struct hw_cqe_fields *f, const struct hw_cqe_tm *t)
{
	hw_cq_lock(cq);
	(void)hw_cq_push_tm_locked(cq, f, t); /* a full CQ latches its overrun flag */
	hw_cq_unlock(cq);
}

static uint8_t eng_tm_resp_op(const struct eng_wqe *w)
{
	return w->opcode == HW_WQE_SEND_IMM ? HW_CQE_RESP_SEND_IMM
	       : w->opcode == HW_WQE_SEND_INVAL ? HW_CQE_RESP_SEND_INV
						: HW_CQE_RESP_SEND;
}

/* The matched tag's buffer in the SRQ's domain: 0 or the local protection syndrome. */
static uint8_t eng_tm_buf(const struct hw_srq *srq, const struct hw_tm_hit *hit, struct eng_list *dst)
{
	eng_list_init(dst);
	if (hit->len == 0)
		return 0;
	if (eng_translate_into(hit->lkey, srq->pd_id, hit->addr, hit->len, HW_ACCESS_LOCAL_WRITE, dst) != HW_OK)
		return HW_CQE_SYNDROME_LOCAL_PROT_ERR;
	return 0;
}

/* A matched tag's CQE: app_op, the TMH when with_tmh; an error CQE when synd is set. */
static void eng_tm_tag_cqe(struct hw_qp *peer, const struct eng_wqe *w, const struct hw_tm_hit *hit, uint8_t app_op,
			   bool with_tmh, uint32_t byte_cnt, uint8_t synd)
{
	struct hw_cqe_fields f = { .opcode = synd != 0 ? HW_CQE_RESP_ERR : eng_tm_resp_op(w), .syndrome = synd,
				   .qpn = peer->qpn, .srqn = peer->srq->srqn, .byte_cnt = byte_cnt,
				   .imm = w->opcode == HW_WQE_SEND ? 0 : w->imm };
	struct hw_cqe_tm t;

	hw_tm_cqe(hit, app_op, with_tmh, &t);
	eng_tm_push(hw_tm_cq(peer->srq->tm), &f, &t);
}

static struct eng_res eng_tm_eager(struct hw_qp *peer, const struct eng_wqe *w, const struct eng_list *src,
				   const struct hw_tm_hit *hit)
{
	struct eng_list dst, body;
	uint8_t synd = eng_tm_buf(peer->srq, hit, &dst);

	eng_tm_sub(src, HW_TMH_BYTES, src->total - HW_TMH_BYTES, &body);
	if (synd == 0 && dst.total < body.total)
		synd = HW_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	if (synd == 0 && body.total != 0)
		eng_copy(&dst, &body);
	eng_tm_tag_cqe(peer, w, hit, HW_TM_OP_CONSUMED_MSG, true, (uint32_t)body.total, synd);
	return (struct eng_res){ .byte_cnt = (uint32_t)src->total };
}

/*
 * FINs owed to a QP whose receive queue had none posted: a card's responder
 * sends the FIN as a SEND, and the requester's RNR NAK makes it try again
 * until a receive is there. They wait here, in order, and the engine
 * thread tries them again at its passes, at least every
 * HW_ENG_TM_FIN_RETRY_NS while some wait (hw_qp.c, pass_tm_fins), so a
 * program that posts its FIN receive after the rendezvous still gets it;
 * the receive doorbell pays nothing for it.
 */
#define ENG_TM_FINS_MAX 256 /* owed at once; beyond, a FIN is lost (logged), as after RNR retries run out */

struct hw_tm_fins {
	pthread_mutex_t lock;
	uint32_t head, n;
	uint8_t fin[ENG_TM_FINS_MAX][HW_TMH_BYTES];
};

/* The FIN into the QP's next receive; false when none is posted. */
static bool eng_tm_fin_put(struct hw_qp *qp, const uint8_t *fin)
{
	struct hw_cqe_fields f = { .opcode = HW_CQE_RESP_SEND, .byte_cnt = HW_TMH_BYTES };
	struct eng_list dst, src;
	struct eng_rcv r;

	if (!eng_rcv_take(qp, NULL, &r))
		return false;
	if (eng_rcv_list(&r, &dst) != 0 || dst.total < HW_TMH_BYTES) {
		f = (struct hw_cqe_fields){ .opcode = HW_CQE_RESP_ERR, .syndrome = HW_CQE_SYNDROME_LOCAL_LENGTH_ERR };
		eng_rcv_complete(qp, &r, &f);
		return true;
	}
	eng_list_init(&src);
	eng_add(&src, (uint8_t *)(uintptr_t)fin, HW_TMH_BYTES);
	eng_copy(&dst, &src);
	eng_rcv_complete(qp, &r, &f);
	return true;
}

static struct hw_tm_fins *eng_tm_fins_of(struct hw_qp *qp)
{
	struct hw_tm_fins *q = __atomic_load_n(&qp->tm_fins, __ATOMIC_ACQUIRE), *none = NULL;

	if (q != NULL)
		return q;
	q = calloc(1, sizeof(*q));
	if (q == NULL)
		return NULL;
	pthread_mutex_init(&q->lock, NULL);
	if (__atomic_compare_exchange_n(&qp->tm_fins, &none, q, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return q;
	pthread_mutex_destroy(&q->lock);
	free(q);
	return none; /* another thread's, installed first */
}

/* Under q->lock: the owed FINs, oldest first, into the receives posted. */
static void eng_tm_fins_drain_locked(struct hw_qp *qp, struct hw_tm_fins *q)
{
	while (q->n != 0 && eng_tm_fin_put(qp, q->fin[q->head])) {
		q->head = (q->head + 1) % ENG_TM_FINS_MAX;
		q->n--;
	}
	__atomic_store_n(&qp->tm_fins_owed, q->n, __ATOMIC_RELEASE);
}

/* The rendezvous's FIN (fin: a TMH) into the requester's next receive; none posted: owed until one is. */
static void eng_tm_fin(struct hw_qp *qp, const uint8_t *fin)
{
	struct hw_tm_fins *q;

	if (__atomic_load_n(&qp->tm_fins_owed, __ATOMIC_ACQUIRE) == 0 && eng_tm_fin_put(qp, fin))
		return;
	q = eng_tm_fins_of(qp);
	if (q == NULL) {
		BASE_WARN("qp 0x%x: a rendezvous FIN found no receive and no memory to wait in: lost", qp->qpn);
		return;
	}
	pthread_mutex_lock(&q->lock);
	if (q->n == ENG_TM_FINS_MAX)
		BASE_WARN("qp 0x%x: %u rendezvous FINs wait for a receive already: one more lost", qp->qpn,
			  ENG_TM_FINS_MAX);
	else
		memcpy(q->fin[(q->head + q->n++) % ENG_TM_FINS_MAX], fin, HW_TMH_BYTES);
	eng_tm_fins_drain_locked(qp, q); /* a receive posted meanwhile, or the ones owed before */
	pthread_mutex_unlock(&q->lock);
	if (__atomic_load_n(&qp->tm_fins_owed, __ATOMIC_ACQUIRE) != 0) {
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		hw_eng_wake_by((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec + HW_ENG_TM_FIN_RETRY_NS);
	}
}

/* The RVH's range as a run for another machine brought it (eng_xm_tm): 0 or the syndrome the READ would get. */
static uint8_t eng_tm_xm_src(const struct hw_qp *qp, const struct hw_xm_tm *x, uint32_t len, struct eng_list *rd)
{
	if (!(x->flags & HW_XM_TM_RD) || x->len != len ||
	    eng_translate_into(x->lkey, qp->pd_id, x->addr, len, HW_ACCESS_LOCAL_READ, rd) != HW_OK)
		return HW_CQE_SYNDROME_REMOTE_ACCESS_ERR;
	return 0;
}

static struct eng_res eng_tm_rndv(struct hw_qp *qp, struct hw_qp *peer, struct eng_wqe *w,
				  const struct eng_list *src, const struct hw_tm_hit *hit)
{
	const struct hw_xm_tm *x = eng_xm_tm;
	bool owed = false;
	uint64_t va;
	uint32_t rkey, len;
	struct eng_list dst, rd;
	uint8_t synd = eng_tm_buf(peer->srq, hit, &dst);

	memcpy(&va, hit->rvh, 8);
	memcpy(&rkey, hit->rvh + 8, 4);
	memcpy(&len, hit->rvh + 12, 4);
	va = be64toh(va);
	rkey = be32toh(rkey);
	len = be32toh(len);
	eng_tm_tag_cqe(peer, w, hit, HW_TM_OP_CONSUMED, true, (uint32_t)src->total, 0);
	if (synd == 0 && dst.total < len)
		synd = HW_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	eng_list_init(&rd);
	if (synd == 0 && len != 0 && x != NULL)
		synd = eng_tm_xm_src(qp, x, len, &rd); /* read on the requester's machine, sent with the SEND */
	else if (synd == 0 && len != 0 &&
		 eng_translate_into(rkey, qp->pd_id, va, len, HW_ACCESS_REMOTE_READ, &rd) != HW_OK)
		synd = HW_CQE_SYNDROME_REMOTE_ACCESS_ERR;
	if (synd == 0 && len != 0)
		eng_copy(&dst, &rd);
	if (synd == 0) {
		memcpy(w->tm_fin, hit->tmh, HW_TMH_BYTES);
		w->tm_fin[0] = HW_TMH_FIN;
		/* After the SEND's own CQE when it has one, as the READ and the FIN follow its ACK on the wire; run for another machine, the answer carries it there. */
		owed = x != NULL || (w->fm_ce_se & ENG_CE_SIGNALED) != 0;
		if (!owed)
			eng_tm_fin(qp, w->tm_fin);
	}
	eng_tm_tag_cqe(peer, w, hit, HW_TM_OP_EXPECTED, false, len, synd);
	return (struct eng_res){ .byte_cnt = (uint32_t)src->total, .tm_fin = owed };
}

/* UNEXPECTED or NO_TAG: an ordinary receive of the SRQ takes the whole message. */
static struct eng_res eng_tm_ordinary(struct hw_qp *peer, const struct eng_wqe *w, const struct eng_list *src,
				      const struct hw_tm_hit *hit)
{
	struct hw_srq *srq = peer->srq;
	struct hw_cq *cq = hw_tm_cq(srq->tm);
	struct hw_cqe_fields f = { .opcode = eng_tm_resp_op(w), .byte_cnt = (uint32_t)src->total,
				   .solicited = (w->fm_ce_se & HW_WQE_CTRL_SOLICITED) != 0,
				   .imm = w->opcode == HW_WQE_SEND ? 0 : w->imm };
	bool unexp = hit->kind == HW_TM_UNEXPECTED;
	struct hw_cqe_tm t;
	struct eng_list dst;
	struct eng_rcv r;

	hw_cq_lock(cq);
	hw_qp_claim_recover(cq);
	if (!eng_srq_take(peer, srq, cq, &r)) {
		hw_cq_unlock(cq);
		return eng_rnr();
	}
	if (eng_rcv_list(&r, &dst) != 0)
		return eng_resp_fail(peer, &r, HW_CQE_SYNDROME_LOCAL_PROT_ERR, HW_CQE_SYNDROME_REMOTE_OP_ERR);
	if (dst.total < src->total)
		return eng_resp_fail(peer, &r, HW_CQE_SYNDROME_LOCAL_LENGTH_ERR, HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
	eng_copy(&dst, src);
	if (unexp)
		hw_tm_unexpected(srq->tm); /* counted before the program can see it */
	hw_tm_cqe(hit, unexp ? HW_TM_OP_UNEXPECTED : HW_TM_OP_NO_TAG, false, &t);
	f.qpn = peer->qpn;
	f.wqe_counter = r.idx;
	f.srqn = r.srqn;
	(void)hw_cq_push_tm_locked(cq, &f, &t);
	hw_cq_claim_clear(cq);
	hw_cq_unlock(cq);
	return (struct eng_res){ .byte_cnt = (uint32_t)src->total };
}

static struct eng_res eng_send_tm(struct hw_qp *qp, struct hw_qp *peer, struct eng_wqe *w,
				  const struct eng_list *src)
{
	uint8_t hdr[HW_TMH_BYTES + HW_RVH_BYTES] = { 0 };
	uint32_t n = src->total < sizeof(hdr) ? (uint32_t)src->total : (uint32_t)sizeof(hdr);
	struct hw_tm_hit hit;

	if (n != 0)
		eng_tm_peek(src, hdr, n);
	hw_tm_classify(peer->srq->tm, hdr, n, &hit);
	if (hit.kind != HW_TM_MATCHED)
		return eng_tm_ordinary(peer, w, src, &hit);
	if (hit.op == HW_TMH_EAGER)
		return eng_tm_eager(peer, w, src, &hit);
	return eng_tm_rndv(qp, peer, w, src, &hit);
}

/* A SEND to another machine (its gathered list loc) that starts with a rendezvous TMH and an RVH. */
static bool eng_tm_xm_rndv(const struct eng_wqe *w, const struct eng_list *loc)
{
	uint8_t op;

	if (w->opcode == HW_WQE_RDMA_WRITE || w->opcode == HW_WQE_RDMA_WRITE_IMM ||
	    loc->total < HW_TMH_BYTES + HW_RVH_BYTES)
		return false;
	eng_tm_peek(loc, &op, 1);
	return op == HW_TMH_RNDV;
}

/*
 * Its RVH's range, read here as the responder's READ would read it (the
 * requester's rkey and PD), goes with it (hw_xm.h); w->tm_fin is the FIN
 * the answer may owe.
 */
static void eng_tm_xm_rd(struct hw_qp *qp, struct eng_wqe *w, const struct eng_list *loc, struct hw_xm_req *q,
			 struct eng_list *rd)
{
	uint8_t hdr[HW_TMH_BYTES + HW_RVH_BYTES];
	uint64_t va;
	uint32_t rkey, len;

	eng_tm_peek(loc, hdr, sizeof(hdr));
	memcpy(w->tm_fin, hdr, HW_TMH_BYTES);
	w->tm_fin[0] = HW_TMH_FIN;
	memcpy(&va, hdr + HW_TMH_BYTES, 8);
	memcpy(&rkey, hdr + HW_TMH_BYTES + 8, 4);
	memcpy(&len, hdr + HW_TMH_BYTES + 12, 4);
	va = be64toh(va);
	rkey = be32toh(rkey);
	len = be32toh(len);
	eng_list_init(rd);
	if (len != 0 && eng_translate_into(rkey, qp->pd_id, va, len, HW_ACCESS_REMOTE_READ, rd) != HW_OK) {
		eng_list_init(rd);
		q->tm_flags = HW_XM_TM_RD_FAULT;
		return;
	}
	q->tm_flags = HW_XM_TM_RD;
	q->tm_rd_len = len;
}

void hw_eng_tm_fins_run(struct hw_qp *qp)
{
	struct hw_tm_fins *q = __atomic_load_n(&qp->tm_fins, __ATOMIC_ACQUIRE);

	if (q == NULL)
		return;
	hw_epoch_enter(); /* the receive's memory and CQ stay while it is filled */
	pthread_mutex_lock(&q->lock);
	eng_tm_fins_drain_locked(qp, q);
	pthread_mutex_unlock(&q->lock);
	hw_epoch_leave();
}

void hw_eng_tm_fins_free(struct hw_qp *qp)
{
	struct hw_tm_fins *q = __atomic_exchange_n(&qp->tm_fins, NULL, __ATOMIC_ACQ_REL);

	if (q == NULL)
		return;
	pthread_mutex_destroy(&q->lock);
	free(q);
}

#endif /* HW_ENG_TM_H_ */
