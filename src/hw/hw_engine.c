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
 * A responder that has no receive posted gets an RC requester's WQE back as
 * an RNR NAK would: nothing of it has happened, and the SQ waits at it for
 * the retry (hw_qp.h); UD has no RNR, the datagram is dropped. The SQ runs on
 * whichever thread rings or kicks it, one at a time (hw_qp_drive).
 *
 * A peer of another process is a view of its block (hw_qp_attach_num): the
 * requester consumes its receives and completes into its CQ directly, and
 * resolves its keys (hw_mkey_resolve) with their owner's bounds, rights and
 * domain. A view whose record moved (the peer destroyed) or whose owner died
 * answers nothing: TRANSPORT_RETRY_EXC, as an unreachable responder.
 *
 * Keys registered by UMR (hw_umr.h) enter a WQE's lists as pattern spans,
 * walked piece by piece by the same copy routine as plain memory; another
 * process's shared one (hw_mkey_share_umr) as its pattern rebuilt here.
 *
 * Not yet: UMR keys of another process not shared, keys of remote memory (refused
 * as a protection or access error), SEND with invalidate of a key of another
 * process (it invalidates this process's view only). Fences need nothing:
 * WQEs run one after the other.
 */
#include <endian.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base_log.h"
#include "hw_epoch.h"
#include "hw_dct.h"
#include "hw_dcs.h"
#include "hw_eng_fast.h"
#include "hw_eng_thread.h"
#include "hw_gid.h"
#include "hw_grh.h"
#include "hw_machine.h"
#include "hw_mcast.h"
#include "hw_pace.h"
#include "hw_qp.h"
#include "hw_sig.h"
#include "hw_srq.h"
#include "hw_xrc.h"
#include "hw_umr.h"
#include "hw_xm.h"
#include "hw_xatomic.h"

#define ENG_MAX_DS 63 /* the 6-bit ds field */
#define ENG_MAX_BBS ((ENG_MAX_DS * HW_WQE_DS_BYTES + HW_SEND_WQE_BB - 1) / HW_SEND_WQE_BB)
#define ENG_MAX_SPANS 64
#define ENG_CE_SIGNALED (2u << 2) /* CQ_UPDATE and CQ_UPDATE_AND_EQE share this bit */
#define ENG_ATOMIC_LEN 8

struct eng_span {
	uint8_t *p;
	uint32_t len;
	const struct hw_umr *u; /* non-NULL: len bytes of this pattern from data offset off, p unused */
	uint64_t off;
};

struct eng_list {
	struct eng_span s[ENG_MAX_SPANS];
	uint32_t n;
	uint64_t total;
	bool patterned; /* some span is a pattern span: the copy takes the piecewise path */
};

/* A WQE as copied out of the ring. */
struct eng_wqe {
	uint8_t b[ENG_MAX_BBS * HW_SEND_WQE_BB]; /* whole blocks: eng_load copies them so */
	uint8_t *p;   /* where the WQE starts in b: b, or after a DCI's address (eng_exec_dc) */
	uint32_t end; /* bytes from p the ds count covers */
	uint16_t idx;
	uint8_t opcode;
	uint8_t fm_ce_se;
	uint32_t imm; /* host order */
	struct hw_qp *dest; /* a DCI's WQE: the DCT it runs against (its address taken out); else NULL */
	uint32_t rqpn;	    /* with dest: the requester, as the DCT's receive CQE reports it */
	uint16_t slid;
	struct hw_srq *xsrq; /* an XRC initiator's WQE: the SRQ its XRC segment names (eng_exec_xrc); else NULL */
	uint8_t tm_fin[16];  /* a rendezvous SEND's FIN, owed to this QP after its CQE (eng_res.tm_fin) */
};

/* What one WQE did: syndrome 0 on success; rnr when the responder had no receive (nothing done). */
struct eng_res {
	uint8_t synd;
	bool rnr;
	bool retry; /* with rnr: no answer from a peer not ready yet, the request sent again later (eng_retry_wait) */
	bool tm_fin; /* the WQE's tm_fin goes to the QP's receive queue once its CQE is out (hw_eng_tm.h) */
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
static uint32_t eng_load_at(const struct hw_qp *qp, uint32_t ci, uint32_t avail, struct eng_wqe *w)
{
	const uint8_t *sq = qp->sq;
	uint32_t bbs = eng_sq_bbs(qp), pos = ci & (bbs - 1);
	const uint8_t *src = sq + (size_t)pos * HW_SEND_WQE_BB;
	const struct hw_wqe_ctrl_seg *ctrl = (const void *)src;
	uint32_t ds = hw_ctrl_ds(ctrl);
	uint32_t nbb = (ds * HW_WQE_DS_BYTES + HW_SEND_WQE_BB - 1) / HW_SEND_WQE_BB;
	size_t first;

	w->opcode = hw_ctrl_opcode(ctrl);
	w->fm_ce_se = ctrl->fm_ce_se;
	w->imm = be32toh(ctrl->imm);
	w->idx = (uint16_t)ci;
	w->end = ds * HW_WQE_DS_BYTES;
	w->p = w->b;
	w->dest = NULL;
	w->xsrq = NULL;
	w->rqpn = 0;
	if (ds == 0 || nbb > avail)
		return 0;
	if (pos + nbb <= bbs) {
		/* Whole blocks of a constant size: a few vector moves, no call (bytes past end are never parsed). */
		for (uint32_t i = 0; i < nbb; i++)
			memcpy(w->b + i * HW_SEND_WQE_BB, src + i * HW_SEND_WQE_BB, HW_SEND_WQE_BB);
		return nbb;
	}
	first = (size_t)(bbs - pos) * HW_SEND_WQE_BB;
	memcpy(w->b, src, first);
	memcpy(w->b + first, sq, w->end - first);
	return nbb;
}

static uint32_t eng_load(const struct hw_qp *qp, uint32_t avail, struct eng_wqe *w)
{
	return eng_load_at(qp, qp->sq_ci, avail, w);
}

/* Only the count and total: zeroing the span array would cost more than a small WQE's whole work. */
static void eng_list_init(struct eng_list *l)
{
	l->n = 0;
	l->total = 0;
	l->patterned = false;
}

static void eng_add(struct eng_list *l, uint8_t *p, uint32_t len)
{
	l->s[l->n].p = p;
	l->s[l->n].len = len;
	l->s[l->n].u = NULL;
	l->n++;
	l->total += len;
}

static void eng_add_umr(struct eng_list *l, const struct hw_umr *u, uint64_t off, uint32_t len)
{
	l->s[l->n].p = NULL;
	l->s[l->n].len = len;
	l->s[l->n].u = u;
	l->s[l->n].off = off;
	l->n++;
	l->total += len;
	l->patterned = true;
}

/* A key of this process, or on a miss one another process shared (a peer's); NULL for none. */
static const struct hw_mkey *eng_key(uint32_t key)
{
	const struct hw_mkey *mk = hw_mkey_lookup(key);

	return __builtin_expect(mk == NULL, 0) ? hw_mkey_resolve(key) : mk;
}

/* [addr, addr + len) through key appended to l: local memory, or a UMR key's pattern. */
static enum hw_status eng_translate_into(uint32_t key, uint32_t pd_id, uint64_t addr, uint64_t len, uint32_t access,
					 struct eng_list *l)
{
	const struct hw_mkey *mk = eng_key(key);
	enum hw_status st;
	uint8_t *p = NULL;

	if (mk == NULL)
		return HW_ERR_KEY;
	st = hw_mkey_check(mk, pd_id, addr, len, access, &p);
	if (st != HW_OK)
		return st;
	if (__builtin_expect(mk->umr != NULL, 0)) {
		if (!hw_umr_live(mk->umr)) /* an entry's key was deregistered */
			return HW_ERR_KEY;
		eng_add_umr(l, mk->umr, addr - mk->addr, (uint32_t)len); /* the pattern's offset: a DevX key's start_addr on */
		return HW_OK;
	}
	if (p == NULL)
		return HW_ERR_ACCESS;
	eng_add(l, p, (uint32_t)len);
	return HW_OK;
}

/* A local data segment of len bytes checked against the QP's domain: 0 or the local protection syndrome. */
static uint8_t eng_local_seg(uint32_t pd_id, const struct hw_wqe_data_seg *d, uint32_t len, uint32_t access,
			     struct eng_list *l)
{
	if (len == 0)
		return 0;
	if (eng_translate_into(hw_data_seg_lkey(d), pd_id, hw_data_seg_addr(d), len, access, l) != HW_OK)
		return HW_CQE_SYNDROME_LOCAL_PROT_ERR;
	return 0;
}

/*
 * The segment at off of a send WQE: its byte length and, for inline data,
 * true in *inl and the bytes it takes in *span (data segments take 16).
 * False when inline data runs past the WQE's end.
 */
static bool eng_seg_at(const struct eng_wqe *w, uint32_t off, bool *inl, uint32_t *len, uint32_t *span)
{
	const struct hw_wqe_inl_seg *s = (const void *)(w->p + off);
	uint32_t v = be32toh(s->byte_count);

	*inl = (v & HW_INLINE_SEG_FLAG) != 0 && v != HW_DATA_SEG_2G;
	*len = *inl ? v & ~HW_INLINE_SEG_FLAG : v;
	*span = HW_WQE_DS_BYTES;
	if (!*inl)
		return true;
	*span = (uint32_t)((sizeof(*s) + *len + HW_WQE_DS_BYTES - 1) & ~(HW_WQE_DS_BYTES - 1ul));
	return *len <= w->end - off - sizeof(*s);
}

/*
 * A segment at off failed with synd after total bytes before it: a message
 * longer than the port's max_msg_sz is a length error whatever its keys,
 * so the rest of the lengths are added up first.
 */
static uint8_t eng_len_first(const struct eng_wqe *w, uint32_t off, uint64_t total, uint8_t synd)
{
	while (off < w->end) {
		uint32_t len, span;
		bool inl;

		if (!eng_seg_at(w, off, &inl, &len, &span))
			break;
		total += len;
		off += span;
	}
	return total > HW_QP_MAX_MSG ? HW_CQE_SYNDROME_LOCAL_LENGTH_ERR : synd;
}

/*
 * The segments from off to the WQE's end: data segments, or inline data when
 * inl_ok. A message beyond the port's max_msg_sz fails with the card's
 * LOCAL_LENGTH_ERR before any key is looked at (the sum is 64-bit: no
 * length wraps it); inline data past the WQE or where none may be is a
 * LOCAL_QP_OP_ERR.
 */
static inline __attribute__((always_inline)) uint8_t eng_seg_list(const struct hw_qp *qp, struct eng_wqe *w,
								   uint32_t off, uint32_t access, bool inl_ok,
								   struct eng_list *l)
{
	eng_list_init(l);
	while (off < w->end) {
		uint32_t len, span;
		uint8_t synd;
		bool inl;

		if (!eng_seg_at(w, off, &inl, &len, &span) || (inl && !inl_ok))
			return HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		if (len > HW_QP_MAX_MSG - l->total)
			return HW_CQE_SYNDROME_LOCAL_LENGTH_ERR;
		if (inl) {
			if (len != 0)
				eng_add(l, w->p + off + sizeof(struct hw_wqe_inl_seg), len);
			off += span;
			continue;
		}
		synd = eng_local_seg(qp->pd_id, (const void *)(w->p + off), len, access, l);
		if (synd != 0)
			return eng_len_first(w, off + span, l->total + len, synd);
		off += span;
	}
	return 0;
}

/* A position in a span list whose spans may be pattern spans. */
struct eng_cur {
	const struct eng_list *l;
	uint32_t si;
	uint32_t soff;		/* bytes into span si */
	struct hw_umr_cur uc;	/* within a pattern span */
};

static void eng_cur_span(struct eng_cur *c)
{
	const struct eng_span *s = &c->l->s[c->si];

	if (c->si < c->l->n && s->u != NULL)
		hw_umr_cur_init(&c->uc, s->u, s->off + c->soff);
}

/* The contiguous bytes at the cursor (at most the span's rest). */
static uint8_t *eng_cur_piece(const struct eng_cur *c, uint32_t *len)
{
	const struct eng_span *s = &c->l->s[c->si];
	uint32_t rest = s->len - c->soff;
	uint8_t *p;

	if (s->u == NULL) {
		*len = rest;
		return s->p + c->soff;
	}
	p = hw_umr_cur_piece(&c->uc, len);
	if (*len > rest)
		*len = rest;
	return p;
}

static void eng_cur_advance(struct eng_cur *c, uint32_t k)
{
	const struct eng_span *s = &c->l->s[c->si];

	c->soff += k;
	if (c->soff == s->len) {
		c->si++;
		c->soff = 0;
		eng_cur_span(c);
	} else if (s->u != NULL) {
		hw_umr_cur_advance(&c->uc, k);
	}
}

/* The usual patterned copy, one plain span to or from one pattern span: the pattern's pieces straight. */
static void eng_copy_pattern1(const struct eng_span *pat, uint8_t *plain, bool into_pattern)
{
	struct hw_umr_cur c;
	uint32_t left = pat->len;

	hw_umr_cur_init(&c, pat->u, pat->off);
	for (;;) {
		uint32_t n;
		uint8_t *p = hw_umr_cur_piece(&c, &n);

		if (n > left)
			n = left;
		if (into_pattern)
			eng_move(p, plain, n);
		else
			eng_move(plain, p, n);
		left -= n;
		if (left == 0)
			return;
		plain += n;
		hw_umr_cur_advance(&c, n);
	}
}

static bool eng_has_sig(const struct eng_list *l)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (l->s[i].u != NULL && hw_sig_active(l->s[i].u->sig))
			return true;
	return false;
}

/* n bytes of a span from byte at on, out to buf or in from it; a signature key's through its transform. */
static void eng_span_io(const struct eng_span *s, uint64_t at, uint8_t *buf, uint32_t n, bool out)
{
	if (s->u == NULL) {
		if (out)
			memcpy(buf, s->p + at, n);
		else
			memcpy(s->p + at, buf, n);
	} else if (hw_sig_active(s->u->sig)) {
		if (out)
			(void)hw_sig_gather(s->u, s->off + at, n, buf);
		else
			(void)hw_sig_scatter(s->u, s->off + at, n, buf);
	} else if (out) {
		hw_umr_read(s->u, s->off + at, buf, n);
	} else {
		hw_umr_write(s->u, s->off + at, buf, n);
	}
}

/*
 * A copy through a signature key (hw_sig.h): the wire bytes are staged
 * whole, so each side's transform sees its whole range at once (fields
 * inserted, stripped and checked per block). Failed checks are the keys'.
 */
static void eng_copy_sig(const struct eng_list *dst, uint32_t skip, const struct eng_list *src)
{
	uint8_t *buf = malloc(src->total != 0 ? src->total : 1);
	uint64_t at = 0;
	uint32_t di = 0;

	if (buf == NULL) {
		BASE_ERR("signature copy of %llu bytes: out of memory", (unsigned long long)src->total);
		return;
	}
	for (uint32_t i = 0; i < src->n; i++) {
		eng_span_io(&src->s[i], 0, buf + at, src->s[i].len, true);
		at += src->s[i].len;
	}
	while (di < dst->n && skip >= dst->s[di].len)
		skip -= dst->s[di++].len;
	for (at = 0; at < src->total && di < dst->n; di++, skip = 0) {
		uint64_t k = dst->s[di].len - skip;

		if (k > src->total - at)
			k = src->total - at;
		eng_span_io(&dst->s[di], skip, buf + at, (uint32_t)k, false);
		at += k;
	}
	free(buf);
}

/* eng_copy_at for lists with pattern spans: both sides walked piece by piece. */
static void eng_copy_pieces(const struct eng_list *dst, uint32_t skip, const struct eng_list *src)
{
	struct eng_cur d = { .l = dst }, s = { .l = src };
	uint64_t left = src->total;

	if (eng_has_sig(src) || eng_has_sig(dst)) {
		eng_copy_sig(dst, skip, src);
		return;
	}
	if (skip == 0 && src->n == 1 && dst->n == 1 && (src->s[0].u == NULL) != (dst->s[0].u == NULL)) {
		if (dst->s[0].u != NULL)
			eng_copy_pattern1(&dst->s[0], src->s[0].p, true);
		else
			eng_copy_pattern1(&src->s[0], dst->s[0].p, false);
		return;
	}

	while (d.si < dst->n && skip >= dst->s[d.si].len) {
		skip -= dst->s[d.si].len;
		d.si++;
	}
	d.soff = skip;
	eng_cur_span(&d);
	eng_cur_span(&s);
	while (left != 0) {
		uint32_t dl, sl, n;
		uint8_t *dp = eng_cur_piece(&d, &dl);
		const uint8_t *sp = eng_cur_piece(&s, &sl);

		n = dl < sl ? dl : sl;
		eng_move(dp, sp, n);
		eng_cur_advance(&d, n);
		eng_cur_advance(&s, n);
		left -= n;
	}
}

/* Moves src's bytes into dst's spans in order, from byte skip of dst on; dst is long enough. */
static void eng_copy_at(const struct eng_list *dst, uint32_t skip, const struct eng_list *src)
{
	uint32_t di = 0, doff = skip;

	if (__builtin_expect(dst->patterned || src->patterned, 0)) {
		eng_copy_pieces(dst, skip, src);
		return;
	}

	/* The usual case, one span into one (a WRITE, a READ, a one-segment SEND): straight to the move. */
	if (src->n == 1 && dst->n != 0 && skip == 0 && src->s[0].len <= dst->s[0].len) {
		eng_move(dst->s[0].p, src->s[0].p, src->s[0].len);
		return;
	}
	while (di < dst->n && doff >= dst->s[di].len) {
		doff -= dst->s[di].len;
		di++;
	}
	for (uint32_t si = 0; si < src->n; si++) {
		const uint8_t *p = src->s[si].p;
		uint32_t left = src->s[si].len;

		while (left != 0) {
			uint32_t room = dst->s[di].len - doff;
			uint32_t n = left < room ? left : room;

			eng_move(dst->s[di].p + doff, p, n);
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

static void eng_copy(const struct eng_list *dst, const struct eng_list *src)
{
	eng_copy_at(dst, 0, src);
}

/*
 * The peer (a DCI's: the WQE's DCT), if it can take requests (RTR or RTS);
 * else as a fabric would: no answer, retries run out.
 */
static struct hw_qp *eng_peer(const struct hw_qp *qp, const struct eng_wqe *w)
{
	struct hw_qp *peer = __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE);
	enum hw_qp_state st;

	if (w->dest != NULL)
		return w->dest; /* checked live and in RTR when the address was resolved (hw_dc_target_get) */
	if (peer == NULL || !hw_qp_view_live(peer))
		return NULL;
	st = hw_qp_state_of(peer);
	return st == HW_QP_RTR || st == HW_QP_RTS ? peer : NULL;
}

/* The responder's domain for the request's keys: an XRC request's is its SRQ's (IB: the XRC SRQ's PD governs). */
static uint32_t eng_resp_pd(const struct hw_qp *peer, const struct eng_wqe *w)
{
	return w->xsrq != NULL ? w->xsrq->pd_id : peer->pd_id;
}

/*
 * An atomic's operand through a UMR key of a list pattern (KLM, KSM: the
 * atomic key UCX hands its peers is a DevX KSM key): the pattern's bytes at
 * the key's offset, when one entry holds all of them, aligned as the
 * operand, and every entry's key lives. NULL otherwise: an operand never
 * spans entries, an interleaved pattern's repetitions are not one memory,
 * and a signature key's pattern is not plain memory.
 */
static uint8_t *eng_umr_operand(const struct hw_mkey *mk, uint64_t addr, uint64_t len)
{
	struct hw_umr_cur c;
	uint32_t n;
	uint8_t *p;

	if (mk->umr->sig != NULL || mk->umr->repeat != 1 || !hw_umr_live(mk->umr))
		return NULL;
	hw_umr_cur_init(&c, mk->umr, addr - mk->addr);
	p = hw_umr_cur_piece(&c, &n);
	if (n < len || (uintptr_t)p % (len < 8 ? len : 8) != 0)
		return NULL;
	return p;
}

/* The remote range checked against the responder's domain and right: 0 or the remote access syndrome. */
static uint8_t eng_remote(uint32_t pd_id, const struct hw_wqe_raddr_seg *r, uint64_t len, uint32_t access,
			  uint8_t **p)
{
	uint32_t key = hw_raddr_seg_rkey(r);
	uint64_t addr = hw_raddr_seg_addr(r);
	const struct hw_mkey *mk;

	*p = NULL;
	if (len == 0)
		return 0; /* a zero-length request names no memory: its rkey is not checked */
	mk = eng_key(key);
	if (mk == NULL || hw_mkey_check(mk, pd_id, addr, len, access, p) != HW_OK)
		return HW_CQE_SYNDROME_REMOTE_ACCESS_ERR;
	if (*p == NULL && mk->umr != NULL)
		*p = eng_umr_operand(mk, addr, len);
	return *p != NULL ? 0 : HW_CQE_SYNDROME_REMOTE_ACCESS_ERR;
}

/* eng_remote for WRITE and READ: the range as a span list, which a UMR key's pattern may be. */
static uint8_t eng_remote_list(uint32_t pd_id, const struct hw_wqe_raddr_seg *r, uint64_t len,
			       uint32_t access, struct eng_list *l)
{
	eng_list_init(l);
	if (len == 0)
		return 0;
	if (eng_translate_into(hw_raddr_seg_rkey(r), pd_id, hw_raddr_seg_addr(r), len, access, l) != HW_OK)
		return HW_CQE_SYNDROME_REMOTE_ACCESS_ERR;
	return 0;
}

/* A receive WQE the responder took: from its RQ or its SRQ. */
struct eng_rcv {
	const uint8_t *segs; /* the first data segment */
	uint32_t nseg;
	uint32_t pd_id;	     /* the domain its keys belong to */
	uint16_t idx;	     /* wqe_counter of its CQE */
	uint32_t srqn;
	struct hw_cq *cq;    /* where it completes (its lock held from the take to the CQE) */
};

/* The receive WQE at an RQ's consumer counter, or NULL when none is posted. */
static const uint8_t *eng_rq_head(const struct hw_qp *peer, uint32_t rq_ci)
{
	uint32_t pi = be32toh(__atomic_load_n(&peer->dbrec[HW_QP_DBR_RCV], __ATOMIC_SEQ_CST));
	uint32_t posted = (pi - rq_ci) & HW_QP_COUNTER_MASK;

	if (posted == 0 || posted > (1u << peer->log_rq_size))
		return NULL;
	return hw_qp_rq_buf(peer) + ((size_t)(rq_ci & ((1u << peer->log_rq_size) - 1)) << peer->log_rq_stride);
}

static bool eng_srq_take(struct hw_qp *peer, struct hw_srq *srq, struct hw_cq *cq, struct eng_rcv *r)
{
	const uint8_t *wqe = hw_srq_take(srq, &r->idx);

	if (wqe == NULL)
		return false;
	r->cq = cq;
	/* Other QPs take from the SRQ under other locks: announced once its index is known. */
	hw_cq_claim_set(cq, &(struct hw_cq_claim){ .qpn = peer->qpn, .idx = r->idx, .srqn = srq->srqn,
							     .srq = true });
	r->segs = wqe + sizeof(struct hw_wqe_srq_next_seg);
	r->nseg = ((1u << srq->log_stride) - sizeof(struct hw_wqe_srq_next_seg)) / sizeof(struct hw_wqe_data_seg);
	r->pd_id = srq->pd_id;
	r->srqn = srq->srqn;
	return true;
}

/*
 * The RQ's next receive WQE and its index, under the receive CQ's producer
 * lock (taken here, given back here when none is posted): NULL when none is.
 * Nothing is taken yet: the holder may let it go (unlock) or take it.
 */
static const uint8_t *eng_rq_peek(struct hw_qp *peer, uint32_t *rq_ci)
{
	const uint8_t *wqe;

	hw_cq_lock(peer->recv_cq);
	hw_qp_claim_recover(peer->recv_cq);
	*rq_ci = __atomic_load_n(&peer->sh->rq_ci, __ATOMIC_ACQUIRE);
	wqe = eng_rq_head(peer, *rq_ci);
	if (wqe == NULL)
		hw_cq_unlock(peer->recv_cq);
	return wqe;
}

/* Takes the receive eng_rq_peek found: announced as a claim, then the RQ's counter moved past it. */
static void eng_rq_take(struct hw_qp *peer, uint32_t rq_ci, const uint8_t *wqe, struct eng_rcv *r)
{
	hw_cq_claim_set(peer->recv_cq, &(struct hw_cq_claim){ .qpn = peer->qpn, .idx = rq_ci });
	__atomic_store_n(&peer->sh->rq_ci, (rq_ci + 1) & HW_QP_COUNTER_MASK, __ATOMIC_RELEASE);
	r->cq = peer->recv_cq;
	r->segs = wqe;
	r->nseg = (1u << peer->log_rq_stride) / sizeof(struct hw_wqe_data_seg);
	r->pd_id = peer->pd_id;
	r->idx = (uint16_t)rq_ci;
	r->srqn = 0;
}

/*
 * Takes the responder's next receive WQE; false when none is posted. The
 * take, the data and the CQE happen under the receive CQ's producer lock
 * (held from here to eng_rcv_complete, released here on false), announced
 * as a claim first: a requester of another process that dies half way
 * leaves a claim the next holder settles (hw_qp_claim_recover), so a
 * receive is never lost and the CQEs keep the receives' order, which the
 * program's ring relies on. Requesters of several processes (UD), or a
 * flush, may take from one RQ: all under this lock.
 */
static bool eng_rcv_take(struct hw_qp *peer, const struct eng_wqe *w, struct eng_rcv *r)
{
	struct hw_srq *srq = w != NULL && w->xsrq != NULL ? w->xsrq : peer->srq;
	/* An XRC SRQ's receives complete into its own CQ, whichever target took them. */
	struct hw_cq *cq = srq != NULL && srq->xrcd != 0 ? srq->cq : peer->recv_cq;
	const uint8_t *wqe;
	uint32_t rq_ci;

	if (srq == NULL) {
		wqe = eng_rq_peek(peer, &rq_ci);
		if (wqe != NULL)
			eng_rq_take(peer, rq_ci, wqe, r);
		return wqe != NULL;
	}
	hw_cq_lock(cq);
	hw_qp_claim_recover(cq);
	if (eng_srq_take(peer, srq, cq, r))
		return true;
	hw_cq_unlock(cq);
	return false;
}

/* The receive WQE's scatter list in its domain: 0 or a local protection syndrome. */
static uint8_t eng_rcv_list(const struct eng_rcv *r, struct eng_list *l)
{
	eng_list_init(l);
	for (uint32_t i = 0; i < r->nseg; i++) {
		const struct hw_wqe_data_seg *d = (const void *)(r->segs + i * sizeof(*d));
		uint8_t synd;

		if (hw_data_seg_lkey(d) == HW_RQ_INVALID_LKEY)
			break;
		synd = eng_local_seg(r->pd_id, d, hw_data_seg_len(d), HW_ACCESS_LOCAL_WRITE, l);
		if (synd != 0)
			return synd;
	}
	return 0;
}

/* A DCT's receive reports the requester DCI and its port, as a UD receive does. */
static void eng_rcv_src(const struct eng_wqe *w, struct hw_cqe_fields *f)
{
	if (w->dest != NULL) {
		f->flags_rqpn = w->rqpn;
		f->slid = w->slid;
	}
}

/* The taken receive's CQE; the claim settled and the lock eng_rcv_take took released. */
static void eng_rcv_complete(struct hw_qp *peer, const struct eng_rcv *r, struct hw_cqe_fields *f)
{
	f->qpn = peer->qpn;
	f->wqe_counter = r->idx;
	f->srqn = r->srqn;
	(void)hw_cq_push_locked(r->cq, f); /* a full CQ latches its overrun flag */
	hw_cq_claim_clear(r->cq);
	hw_cq_unlock(r->cq);
}

/*
 * eng_rcv_complete of a receive whose len bytes (data) go into its CQE
 * instead of its buffer: the responder scatters to CQE (hw_qp_set_scatter).
 */
static __attribute__((noinline)) void eng_rcv_complete_scat(struct hw_qp *peer, const struct eng_rcv *r,
							    struct hw_cqe_fields *f, const uint8_t *data, uint32_t len)
{
	f->qpn = peer->qpn;
	f->wqe_counter = r->idx;
	f->srqn = r->srqn;
	(void)hw_cq_push_scat_locked(r->cq, f, data, len); /* a full CQ latches its overrun flag */
	hw_cq_claim_clear(r->cq);
	hw_cq_unlock(r->cq);
}

/* A responder-side failure: its receive completes in error, it goes to ERR; the requester's syndrome returned. */
static struct eng_res eng_resp_fail(struct hw_qp *peer, const struct eng_rcv *r, uint8_t resp_synd, uint8_t req_synd)
{
	struct hw_cqe_fields f = {
		.opcode = HW_CQE_RESP_ERR,
		.syndrome = resp_synd,
	};

	eng_rcv_complete(peer, r, &f);
	hw_qp_set_err(peer);
	return eng_fail(req_synd);
}

static struct eng_res eng_rnr(void)
{
	return (struct eng_res){ .rnr = true };
}

/*
 * No peer answered. One that exists but has not reached RTR yet (RESET or
 * INIT) drops the request as a card's would, and a requester with transport
 * retries (hw_qp_set_retry) sends it again later (eng_retry_wait); one gone,
 * in error or never set answers nothing ever.
 */
static struct eng_res eng_no_peer(const struct hw_qp *qp)
{
	struct hw_qp *peer = __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE);
	enum hw_qp_state st;

	if (qp->retransmit && peer != NULL && hw_qp_view_live(peer)) {
		st = hw_qp_state_of(peer);
		if (st == HW_QP_RESET || st == HW_QP_INIT)
			return (struct eng_res){ .rnr = true, .retry = true };
	}
	return eng_fail(HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
}

/* A rendezvous SEND run for another machine (hw_qp_exec_one_tm): its range; NULL for any other. */
static __thread const struct hw_xm_tm *eng_xm_tm;

#include "hw_eng_tm.h" /* the SENDs a tag matching SRQ receives: they use the helpers above */

/*
 * Whether the receive's entries that len bytes fill all name memory by plain
 * keys: the poll copies a scattered receive out of the CQE to the addresses
 * its entries name (as mlx5's), which only such keys make the program's own.
 */
static bool eng_rcv_plain(const struct eng_rcv *r, uint64_t len)
{
	for (uint32_t i = 0; i < r->nseg && len != 0; i++) {
		const struct hw_wqe_data_seg *d = (const void *)(r->segs + i * sizeof(*d));
		uint64_t n = hw_data_seg_len(d);

		if (hw_data_seg_lkey(d) == HW_RQ_INVALID_LKEY)
			break;
		n = n < len ? n : len;
		if (n != 0 && hw_mkey_plain(hw_data_seg_lkey(d), r->pd_id, hw_data_seg_addr(d), n,
					    HW_ACCESS_LOCAL_WRITE) == NULL)
			return false;
		len -= n;
	}
	return true;
}

/*
 * A SEND's gathered bytes (at most 64) into the receive's CQE, the responder
 * scattering to CQE; into its buffer (dst) as ever when an entry's key is
 * not plain.
 */
static __attribute__((noinline)) void eng_send_scat(struct hw_qp *peer, const struct eng_rcv *r,
						    struct hw_cqe_fields *f, struct eng_list *dst,
						    const struct eng_list *src)
{
	uint8_t b[64];
	struct eng_list t;

	if (!eng_rcv_plain(r, src->total)) {
		eng_copy(dst, src);
		eng_rcv_complete(peer, r, f);
		return;
	}
	eng_list_init(&t);
	eng_add(&t, b, (uint32_t)src->total);
	eng_copy(&t, src);
	eng_rcv_complete_scat(peer, r, f, b, (uint32_t)src->total);
}

/*
 * SEND, SEND_IMM and SEND_INVAL over RC: gather locally, scatter into the
 * peer's next receive. SEND_INVAL frees the key in its immediate, which must
 * be the responder's and invalidatable (hw_mem.h); otherwise the responder
 * fails the request as invalid and nothing lands.
 */
static struct eng_res eng_send(struct hw_qp *qp, struct eng_wqe *w)
{
	struct eng_list src, dst;
	struct eng_rcv r;
	struct hw_qp *peer;
	uint8_t synd = eng_seg_list(qp, w, sizeof(struct hw_wqe_ctrl_seg), HW_ACCESS_LOCAL_READ, true, &src);
	struct hw_cqe_fields f = { 0 };

	if (synd != 0)
		return eng_fail(synd);
	peer = eng_peer(qp, w);
	if (peer == NULL)
		return eng_no_peer(qp);
	if (__builtin_expect(peer->srq != NULL, 0) && peer->srq->tm != NULL && w->xsrq == NULL)
		return eng_send_tm(qp, peer, w, &src);
	if (!eng_rcv_take(peer, w, &r))
		return eng_rnr();
	if (eng_rcv_list(&r, &dst) != 0)
		return eng_resp_fail(peer, &r, HW_CQE_SYNDROME_LOCAL_PROT_ERR, HW_CQE_SYNDROME_REMOTE_OP_ERR);
	if (dst.total < src.total)
		return eng_resp_fail(peer, &r, HW_CQE_SYNDROME_LOCAL_LENGTH_ERR, HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
	if (w->opcode == HW_WQE_SEND_INVAL && hw_mkey_invalidate_remote(w->imm, eng_resp_pd(peer, w)) != HW_OK)
		return eng_resp_fail(peer, &r, HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR,
				     HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
	f.opcode = w->opcode == HW_WQE_SEND_IMM	   ? HW_CQE_RESP_SEND_IMM
		   : w->opcode == HW_WQE_SEND_INVAL ? HW_CQE_RESP_SEND_INV
						    : HW_CQE_RESP_SEND;
	f.solicited = (w->fm_ce_se & HW_WQE_CTRL_SOLICITED) != 0;
	f.byte_cnt = (uint32_t)src.total;
	f.imm = w->opcode == HW_WQE_SEND ? 0 : w->imm;
	eng_rcv_src(w, &f);
	/* 1 .. scat_max bytes (0 is off; an empty SEND has nothing to scatter) */
	if (src.total - 1 < __atomic_load_n(&peer->sh->scat_max, __ATOMIC_RELAXED)) {
		eng_send_scat(peer, &r, &f, &dst, &src);
		return (struct eng_res){ .byte_cnt = (uint32_t)src.total };
	}
	eng_copy(&dst, &src);
	eng_rcv_complete(peer, &r, &f);
	return (struct eng_res){ .byte_cnt = (uint32_t)src.total };
}

/* The transport to other machines (hw_xm.h); NULL until the fabric plugs it in. */
static const struct hw_xm_ops *_Atomic xm_ops;

/* Whether a destination GID is another machine's port (hw_gid.h): true and *machine. */
static bool eng_gid_elsewhere(const uint8_t gid[16], uint32_t *machine)
{
	struct hw_gid_dest d;

	hw_gid_route(gid, &d);
	if (machine != NULL)
		*machine = d.machine;
	return d.where == HW_GID_MACHINE;
}

/* The Q_Key a datagram carries: the AV's, or with its high bit set the sender's own. */
static uint32_t eng_ud_qkey(const struct hw_qp *qp, const struct hw_wqe_datagram_seg *av)
{
	uint32_t qkey = be32toh(av->qkey);

	return (qkey & HW_QKEY_USE_QP) ? __atomic_load_n(&qp->sh->qkey, __ATOMIC_ACQUIRE) : qkey;
}

/* Does a live UD QP in RTR or RTS with the datagram's Q_Key take it? */
static bool eng_ud_accepts_key(const struct hw_qp *dst, uint32_t qkey)
{
	enum hw_qp_state st;

	if (dst == NULL || dst->type != HW_QPT_UD || !hw_qp_view_live(dst))
		return false;
	st = hw_qp_state_of(dst);
	if (st != HW_QP_RTR && st != HW_QP_RTS)
		return false;
	return __atomic_load_n(&dst->sh->qkey, __ATOMIC_ACQUIRE) == qkey;
}

static bool eng_ud_accepts(const struct hw_qp *qp, const struct hw_qp *dst, const struct hw_wqe_datagram_seg *av)
{
	return eng_ud_accepts_key(dst, eng_ud_qkey(qp, av));
}

/* RoCE routes by GID alone: the QP of that number takes a datagram only on the port that has it (GID 0 first). */
static bool eng_ud_port_has(const struct hw_qp *dst, const uint8_t gid[16])
{
	return memcmp(gid, dst->sh->gid, 16) == 0 || hw_gid_port_has((uint16_t)dst->sh->lid, gid);
}

/*
 * Whether an InfiniBand address names a port of another machine
 * (hw_machine.h): a GRH to that machine's subnet, or without a GRH its LID.
 */
static bool eng_ib_elsewhere(const struct hw_wqe_datagram_seg *av, uint32_t *machine)
{
	uint32_t m;

	if ((be32toh(av->grh_gid_fl) & HW_AV_GRH) != 0)
		return eng_gid_elsewhere(av->rgid, machine);
	return hw_machine_of_lid(be16toh(av->rlid), machine != NULL ? machine : &m);
}

/* Does the UD destination take this datagram? When not, it is dropped as a fabric would. */
static bool eng_ud_takes(const struct hw_qp *qp, const struct hw_qp *dst, const struct hw_wqe_datagram_seg *av)
{
	if (dst == NULL || dst->type != HW_QPT_UD || !hw_qp_view_live(dst))
		return false;
	if (qp->roce && !eng_ud_port_has(dst, av->rgid))
		return false;
	if (!qp->roce && eng_ib_elsewhere(av, NULL))
		return false;
	return eng_ud_accepts(qp, dst, av);
}

/*
 * SEND and SEND_IMM over UD. The sender completes once the datagram leaves:
 * a missing destination, a qkey mismatch or no receive posted drop it
 * silently. The receive gets the GRH area first (written only when the
 * sender asked for a GRH) and byte_cnt counts it, as mlx5 reports; a receive
 * too small or with a bad key completes in error at the receiver.
 *
 * Senders of several processes may deliver into one RQ at once: the take,
 * the copy and the CQE happen under the receive CQ's producer lock, so the
 * CQEs come in the order of the receives, as the program's ring expects.
 *
 * eng_ud_put puts a datagram into peer's next receive: the GRH area (g;
 * NULL: none came, the area is left as it was) then src; f holds the CQE's
 * fields but the byte count.
 */
static void eng_ud_put(struct hw_qp *peer, uint8_t *g, const struct eng_list *src, struct hw_cqe_fields *f)
{
	struct eng_list dst, hdr;
	struct eng_rcv r;
	uint8_t synd = 0;

	if (!eng_rcv_take(peer, NULL, &r))
		return;
	if (eng_rcv_list(&r, &dst) != 0)
		synd = HW_CQE_SYNDROME_LOCAL_PROT_ERR;
	else if (dst.total < src->total + HW_UD_GRH_BYTES)
		synd = HW_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	if (synd != 0) {
		struct hw_cqe_fields e = { .opcode = HW_CQE_RESP_ERR, .syndrome = synd };

		eng_rcv_complete(peer, &r, &e);
		hw_qp_set_err(peer);
		return;
	}
	if (g != NULL) {
		eng_list_init(&hdr);
		eng_add(&hdr, g, HW_UD_GRH_BYTES);
		eng_copy(&dst, &hdr);
	}
	eng_copy_at(&dst, HW_UD_GRH_BYTES, src);
	f->byte_cnt = (uint32_t)src->total + HW_UD_GRH_BYTES;
	eng_rcv_complete(peer, &r, f);
}

/* The network header the sender's port puts on a datagram of len bytes (g, HW_UD_GRH_BYTES). */
static void eng_ud_grh(const struct hw_qp *qp, const struct hw_wqe_datagram_seg *av, uint32_t len, bool imm,
		       uint8_t *g)
{
	uint8_t sgid[16];
	enum hw_gid_type type;

	hw_grh_source(qp->lid, qp->gid, qp->roce, av, sgid, &type);
	hw_grh_write(g, sgid, type, av, len, imm);
}

/* A UD receive's CQE fields (but the byte count) for a datagram of opcode op from QP src_qpn. */
static struct hw_cqe_fields eng_ud_cqe(uint8_t op, uint8_t fm_ce_se, uint32_t imm, bool grh, uint8_t sl,
				       uint32_t src_qpn, uint16_t slid)
{
	bool with_imm = op == HW_WQE_SEND_IMM;

	return (struct hw_cqe_fields){
		.opcode = with_imm ? HW_CQE_RESP_SEND_IMM : HW_CQE_RESP_SEND,
		.solicited = (fm_ce_se & HW_WQE_CTRL_SOLICITED) != 0,
		.imm = with_imm ? imm : 0,
		.flags_rqpn = (grh ? 1u : 0u) << HW_CQE_RQPN_GRH_SHIFT | (uint32_t)(sl & 0xf) << HW_CQE_RQPN_SL_SHIFT | src_qpn,
		.slid = slid,
	};
}

static void eng_ud_deliver(struct hw_qp *qp, struct eng_wqe *w, struct hw_qp *peer, const struct eng_list *src)
{
	const struct hw_wqe_datagram_seg *av = (const void *)(w->p + sizeof(struct hw_wqe_ctrl_seg));
	/* RoCE packets always carry a GRH; the address's bit is reserved there (mlx5_create_ah). */
	bool grh = qp->roce || (be32toh(av->grh_gid_fl) & HW_AV_GRH) != 0;
	/* RoCE has no LIDs */
	struct hw_cqe_fields f = eng_ud_cqe(w->opcode, w->fm_ce_se, w->imm, grh, av->stat_rate_sl, qp->qpn,
					    qp->roce ? 0 : qp->lid);
	uint8_t g[HW_UD_GRH_BYTES];

	if (grh)
		eng_ud_grh(qp, av, (uint32_t)src->total, w->opcode == HW_WQE_SEND_IMM, g);
	eng_ud_put(peer, grh ? g : NULL, src, &f);
}

/*
 * A datagram to another machine: its network header (the GRH area the
 * receiver gets; zero on InfiniBand without a GRH) and payload go to that
 * machine, which delivers it there (hw_xm_ud_deliver), with the Q_Key it
 * carries. The sender completes as on the wire, whatever became of it; a
 * payload longer than the port's MTU does not leave.
 */
static struct eng_res eng_ud_xm(struct hw_qp *qp, struct eng_wqe *w, const struct hw_wqe_datagram_seg *av,
				const struct eng_list *src, uint32_t machine)
{
	const struct hw_xm_ops *ops = xm_ops;
	struct hw_xm_req q = { .machine = machine, .dest = be32toh(av->dqp_dct) & 0xffffffu, .src_qpn = qp->qpn,
			       .qp_type = HW_QPT_UD, .opcode = w->opcode, .fm_ce_se = w->fm_ce_se, .imm = w->imm,
			       .src_lid = qp->roce ? 0 : qp->lid, .len = HW_UD_GRH_BYTES + src->total };
	struct hw_wqe_datagram_seg *qav = (void *)q.av;
	bool grh = qp->roce || (be32toh(av->grh_gid_fl) & HW_AV_GRH) != 0;
	struct hw_xm_res res;
	struct eng_list body;
	uint8_t *buf;

	if (src->total > (qp->roce ? HW_UD_MTU_ROCE : HW_UD_MTU))
		return eng_fail(HW_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	if (ops == NULL)
		return (struct eng_res){ .byte_cnt = (uint32_t)src->total }; /* no path between machines: lost */
	buf = malloc(ops->headroom + q.len);
	if (buf == NULL)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	memcpy(q.av, av, sizeof(*av));
	qav->qkey = htobe32(eng_ud_qkey(qp, av));
	if (grh)
		eng_ud_grh(qp, av, (uint32_t)src->total, w->opcode == HW_WQE_SEND_IMM, buf + ops->headroom);
	else
		memset(buf + ops->headroom, 0, HW_UD_GRH_BYTES);
	eng_list_init(&body);
	eng_add(&body, buf + ops->headroom + HW_UD_GRH_BYTES, (uint32_t)src->total);
	if (src->total != 0)
		eng_copy(&body, src);
	ops->exec(&q, buf, NULL, &res);
	free(buf);
	return (struct eng_res){ .byte_cnt = (uint32_t)src->total };
}

/*
 * Puts d into peer's next receive when peer takes it (UD, RTR or RTS, the
 * Q_Key; unicast: on the port the address names). RoCE always carries the
 * network header; InfiniBand when the address has a GRH, else the LID
 * names the port.
 */
static void eng_xm_ud_put(struct hw_qp *peer, const struct hw_xm_ud *d, const struct hw_wqe_datagram_seg *av,
			  bool mcast)
{
	bool grh = peer != NULL && (peer->roce || (be32toh(av->grh_gid_fl) & HW_AV_GRH) != 0);
	struct hw_cqe_fields f;
	struct eng_list src;

	if (!eng_ud_accepts_key(peer, be32toh(av->qkey)))
		return;
	if (!mcast && !(grh ? eng_ud_port_has(peer, av->rgid) : peer->sh->lid == be16toh(av->rlid)))
		return;
	/* The sender's number is another machine's word: 24 bits, as a DETH carries it. */
	f = eng_ud_cqe(d->opcode, d->fm_ce_se, d->imm, grh, av->stat_rate_sl, d->src_qpn & 0xffffffu,
		       peer->roce ? 0 : d->slid);
	eng_list_init(&src);
	eng_add(&src, (uint8_t *)(uintptr_t)d->data, d->len);
	eng_ud_put(peer, grh ? (uint8_t *)(uintptr_t)d->grh : NULL, &src, &f);
}

/* A multicast datagram of another machine: to each member of the group here (hw_mcast.h). */
static void eng_xm_ud_mcast(const struct hw_xm_ud *d, const struct hw_wqe_datagram_seg *av)
{
	/* Without a GRH (InfiniBand) the multicast LID names the group; RoCE's address holds the group's GID. */
	bool by_lid = (be32toh(av->grh_gid_fl) & HW_AV_GRH) == 0 && !hw_mcast_gid(av->rgid);
	uint32_t qpns[HW_MCAST_GROUP_MAX];
	uint32_t n;

	/* No QPN of this machine is the sender: none is left out as its own. */
	n = hw_mcast_members(UINT32_MAX, av->rgid, be16toh(av->rlid), by_lid, qpns);
	for (uint32_t i = 0; i < n; i++) {
		struct hw_qp *peer = hw_qp_dest_get(qpns[i]);

		eng_xm_ud_put(peer, d, av, true);
		hw_qp_dest_put(peer);
	}
}

void hw_xm_ud_deliver(const struct hw_xm_ud *d)
{
	struct hw_wqe_datagram_seg av;
	struct hw_qp *peer;

	memcpy(&av, d->av, sizeof(av)); /* where it lies in a call, unaligned */
	hw_epoch_enter();
	if (d->dest == HW_MCAST_QPN) {
		eng_xm_ud_mcast(d, &av);
	} else {
		peer = hw_qp_dest_get(d->dest);
		eng_xm_ud_put(peer, d, &av, false);
		hw_qp_dest_put(peer);
	}
	hw_epoch_leave();
}

/*
 * Multicast between machines: no membership crosses them; the datagram goes
 * to every other machine of the network (hw_machine_others), as a switch
 * floods a group's frames, and each delivers it to its own members.
 */
static void eng_ud_mcast_out(struct hw_qp *qp, struct eng_wqe *w, const struct hw_wqe_datagram_seg *av,
			     const struct eng_list *src)
{
	const uint32_t *others;
	unsigned n = hw_machine_others(&others);

	for (unsigned i = 0; i < n; i++)
		(void)eng_ud_xm(qp, w, av, src, others[i]);
}

/*
 * A datagram to a multicast address (destination QPN 0xffffff): a copy to
 * every UD QP of the machine attached to the group (hw_mcast.h), each
 * checked as a unicast destination is; the sender's own QP too when it is
 * attached and did not block its loopback. On InfiniBand without a GRH the
 * multicast LID names the group.
 */
static void eng_ud_mcast(struct hw_qp *qp, struct eng_wqe *w, const struct hw_wqe_datagram_seg *av,
			 const struct eng_list *src)
{
	bool by_lid = !qp->roce && (be32toh(av->grh_gid_fl) & HW_AV_GRH) == 0;
	uint32_t qpns[HW_MCAST_GROUP_MAX];
	uint32_t n;

	if (!by_lid && !hw_mcast_gid(av->rgid))
		return;
	n = hw_mcast_members(qp->qpn, av->rgid, be16toh(av->rlid), by_lid, qpns);
	for (uint32_t i = 0; i < n; i++) {
		struct hw_qp *peer = hw_qp_dest_get(qpns[i]);

		if (eng_ud_accepts(qp, peer, av))
			eng_ud_deliver(qp, w, peer, src);
		hw_qp_dest_put(peer);
	}
	eng_ud_mcast_out(qp, w, av, src);
}

static struct eng_res eng_ud_send(struct hw_qp *qp, struct eng_wqe *w)
{
	const struct hw_wqe_datagram_seg *av = (const void *)(w->p + sizeof(struct hw_wqe_ctrl_seg));
	uint32_t off = sizeof(struct hw_wqe_ctrl_seg) + sizeof(*av);
	struct eng_list src;
	struct hw_qp *peer;
	uint32_t machine;
	uint8_t synd;
	bool taken;

	if (w->end < off)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	synd = eng_seg_list(qp, w, off, HW_ACCESS_LOCAL_READ, true, &src);
	if (synd != 0)
		return eng_fail(synd);
	/* The port's active MTU: a RoCE port's is 1024 (a 1500-byte netdev), an InfiniBand port's 4096. */
	if (src.total > (qp->roce ? HW_UD_MTU_ROCE : HW_UD_MTU))
		return eng_fail(HW_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	if ((be32toh(av->dqp_dct) & 0xffffffu) == HW_MCAST_QPN) {
		eng_ud_mcast(qp, w, av, &src);
		return (struct eng_res){ .byte_cnt = (uint32_t)src.total };
	}
	peer = hw_qp_dest_get(be32toh(av->dqp_dct) & 0xffffffu);
	taken = eng_ud_takes(qp, peer, av);
	if (taken)
		eng_ud_deliver(qp, w, peer, &src);
	hw_qp_dest_put(peer);
	/* Not for a QP here: another machine's GID or LID (looked up only now, off the path of datagrams taken here). */
	if (!taken && (qp->roce ? eng_gid_elsewhere(av->rgid, &machine) : eng_ib_elsewhere(av, &machine)))
		return eng_ud_xm(qp, w, av, &src, machine);
	return (struct eng_res){ .byte_cnt = (uint32_t)src.total };
}

/*
 * LOCAL_INV as mlx5 posts it: a UMR WQE of a UMR control segment (inline,
 * no translations, changing only the mkey's free state) and an mkey context
 * marked free; the key is the ctrl segment's immediate. A UMR whose mkey
 * context is not free registers a pattern (hw_umr_register). A key that is
 * not this domain's or may not be invalidated fails as the card's
 * memory-management (bind) error.
 */
/*
 * The UMR WQE mlx5 posts to bind a memory window (ibv_bind_mw,
 * IBV_WR_BIND_MW) or, with the context's free bit, to unbind a type 1 one:
 * the window's key (key, found by the index of the ctrl segment's immediate;
 * a type 2 window keeps its first key in the program's hands), its new tag (and, type 2,
 * the binding QP) in the context's qpn_mkey, its range and rights there too,
 * and one inline KLM naming the MR.
 */
static struct eng_res eng_bind_mw(struct hw_qp *qp, struct eng_wqe *w, uint32_t key)
{
	const struct hw_wqe_umr_ctrl_seg *uc = (const void *)(w->p + sizeof(struct hw_wqe_ctrl_seg));
	const struct hw_wqe_mkey_ctx_seg *mc = (const void *)(w->p + sizeof(struct hw_wqe_ctrl_seg) + sizeof(*uc));
	const struct hw_wqe_data_seg *klm = (const void *)(mc + 1);
	uint32_t hdr = sizeof(struct hw_wqe_ctrl_seg) + sizeof(*uc) + sizeof(*mc);
	bool unbind = mc->free == HW_MKEY_CTX_FREE;
	uint32_t qpn_mkey = be32toh(mc->qpn_mkey);
	struct hw_mw_bind b = { .key = key, .tag = (uint8_t)qpn_mkey, .pd_id = qp->pd_id, .qpn = qp->qpn,
				.check_free = (uc->flags & HW_UMR_CTRL_CHECK_FREE) != 0 };

	if (!(uc->flags & HW_UMR_CTRL_INLINE) || (!unbind && w->end < hdr + sizeof(*klm)))
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	if (!unbind) {
		b.len = be64toh(mc->len);
		b.addr = be64toh(mc->start_addr);
		b.mr_key = hw_data_seg_lkey(klm);
		b.mr_addr = hw_data_seg_addr(klm);
		b.access = ((mc->access_flags & HW_MKC_ACCESS_REMOTE_READ) ? HW_ACCESS_REMOTE_READ : 0) |
			   ((mc->access_flags & HW_MKC_ACCESS_REMOTE_WRITE) ? HW_ACCESS_REMOTE_WRITE : 0) |
			   ((mc->access_flags & HW_MKC_ACCESS_ATOMIC) ? HW_ACCESS_REMOTE_ATOMIC : 0);
		if (b.len == 0 || b.len != hw_data_seg_len(klm) || (qpn_mkey >> 8 != 0xffffffu && qpn_mkey >> 8 != qp->qpn))
			return eng_fail(HW_CQE_SYNDROME_MW_BIND_ERR);
	}
	return eng_fail(hw_mkey_bind_window(&b));
}


static struct eng_res eng_umr(struct hw_qp *qp, struct eng_wqe *w)
{
	const struct hw_wqe_umr_ctrl_seg *uc = (const void *)(w->p + sizeof(struct hw_wqe_ctrl_seg));
	const struct hw_wqe_mkey_ctx_seg *mc = (const void *)(w->p + sizeof(struct hw_wqe_ctrl_seg) + sizeof(*uc));
	uint64_t mask, want = HW_UMR_MASK_FREE | HW_UMR_MASK_MKEY;
	uint32_t hdr = sizeof(struct hw_wqe_ctrl_seg) + sizeof(*uc) + sizeof(*mc);
	uint8_t mw = 0;
	uint32_t mw_key;

	if (w->end < hdr)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	/* A window: its bind, or the unbind of a type 1 (a type 2 is invalidated as below). */
	mw_key = hw_mkey_window_key(w->imm, &mw);
	if (mw_key != 0 && (mc->free != HW_MKEY_CTX_FREE || mw == 1))
		return eng_bind_mw(qp, w, mw_key);

	if (w->end > hdr && mc->free != HW_MKEY_CTX_FREE)
		return eng_fail(hw_umr_register(qp->pd_id, w->imm, w->p + sizeof(struct hw_wqe_ctrl_seg),
						w->end - (uint32_t)sizeof(struct hw_wqe_ctrl_seg)));

	if (w->end != sizeof(struct hw_wqe_ctrl_seg) + sizeof(*uc) + sizeof(*mc))
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	mask = be64toh(uc->mkey_mask);
	if ((uc->flags & ~HW_UMR_CTRL_CHECK_QPN) != (HW_UMR_CTRL_INLINE | HW_UMR_CTRL_TRANSLATION_OFFSET) ||
	    uc->klm_octowords != 0 || (mask != want && mask != (want | HW_UMR_MASK_QPN)) ||
	    mc->free != HW_MKEY_CTX_FREE)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	if (hw_mkey_invalidate(w->imm, qp->pd_id) != HW_OK)
		return eng_fail(HW_CQE_SYNDROME_MW_BIND_ERR);
	return (struct eng_res){ 0 };
}

/* RDMA_WRITE and RDMA_WRITE_IMM. */
static struct eng_res eng_write(struct hw_qp *qp, struct eng_wqe *w)
{
	const struct hw_wqe_raddr_seg *r = (const void *)(w->p + sizeof(struct hw_wqe_ctrl_seg));
	struct eng_list src, dst;
	struct eng_rcv rcv;
	struct hw_qp *peer;
	uint8_t synd;
	struct hw_cqe_fields f = { 0 };

	if (w->end < 2 * HW_WQE_DS_BYTES)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	synd = eng_seg_list(qp, w, 2 * HW_WQE_DS_BYTES, HW_ACCESS_LOCAL_READ, true, &src);
	if (synd != 0)
		return eng_fail(synd);
	peer = eng_peer(qp, w);
	if (peer == NULL)
		return eng_no_peer(qp);
	synd = eng_remote_list(w->xsrq != NULL ? w->xsrq->pd_id : peer->wr_pd, r, src.total, HW_ACCESS_REMOTE_WRITE,
			       &dst);
	if (synd != 0)
		return eng_fail(synd);
	if (w->opcode == HW_WQE_RDMA_WRITE_IMM && !eng_rcv_take(peer, w, &rcv))
		return eng_rnr();
	if (src.n == 1 && !src.patterned && !dst.patterned)
		eng_move(dst.s[0].p, src.s[0].p, src.s[0].len);
	else if (src.total != 0)
		eng_copy(&dst, &src);
	if (w->opcode == HW_WQE_RDMA_WRITE_IMM) {
		f.opcode = HW_CQE_RESP_WR_IMM;
		f.solicited = (w->fm_ce_se & HW_WQE_CTRL_SOLICITED) != 0;
		f.byte_cnt = (uint32_t)src.total;
		f.imm = w->imm;
		eng_rcv_src(w, &f);
		eng_rcv_complete(peer, &rcv, &f);
	}
	return (struct eng_res){ .byte_cnt = (uint32_t)src.total };
}

static struct eng_res eng_read(struct hw_qp *qp, struct eng_wqe *w)
{
	const struct hw_wqe_raddr_seg *r = (const void *)(w->p + sizeof(struct hw_wqe_ctrl_seg));
	struct eng_list src, dst;
	struct hw_qp *peer;
	uint8_t synd;

	if (w->end < 2 * HW_WQE_DS_BYTES)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	synd = eng_seg_list(qp, w, 2 * HW_WQE_DS_BYTES, HW_ACCESS_LOCAL_WRITE, false, &dst);
	if (synd != 0)
		return eng_fail(synd);
	peer = eng_peer(qp, w);
	if (peer == NULL)
		return eng_no_peer(qp);
	synd = eng_remote_list(w->xsrq != NULL ? w->xsrq->pd_id : peer->rd_pd, r, dst.total, HW_ACCESS_REMOTE_READ,
			       &src);
	if (synd != 0)
		return eng_fail(synd);
	if (dst.n == 1 && !src.patterned && !dst.patterned)
		eng_move(dst.s[0].p, src.s[0].p, dst.s[0].len);
	else if (dst.total != 0)
		eng_copy(&dst, &src);
	return (struct eng_res){ .byte_cnt = (uint32_t)dst.total };
}

/* ATOMIC_CS and ATOMIC_FA on 8 aligned bytes of the peer; the old value lands in the local segment. */
static struct eng_res eng_atomic(struct hw_qp *qp, struct eng_wqe *w)
{
	const struct hw_wqe_raddr_seg *r = (const void *)(w->p + HW_WQE_DS_BYTES);
	const struct hw_wqe_atomic_seg *a = (const void *)(w->p + 2 * HW_WQE_DS_BYTES);
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
	peer = eng_peer(qp, w);
	if (peer == NULL)
		return eng_no_peer(qp);
	if (hw_raddr_seg_addr(r) % ENG_ATOMIC_LEN != 0)
		return eng_fail(HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
	/* A responder QP without remote atomics NAKs it as an invalid request, before any key is looked at. */
	if (!(__atomic_load_n(&peer->sh->rights, __ATOMIC_ACQUIRE) & HW_ACCESS_REMOTE_ATOMIC))
		return eng_fail(HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
	synd = eng_remote(eng_resp_pd(peer, w), r, ENG_ATOMIC_LEN, HW_ACCESS_REMOTE_ATOMIC, &rp);
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

/*
 * MASKED_CS and MASKED_FA (hw_xatomic.h): 4 or 8 bytes aligned to their size,
 * checked as the standard ones; the old value lands in the local segment.
 */
static struct eng_res eng_xatomic(struct hw_qp *qp, struct eng_wqe *w)
{
	const struct hw_wqe_raddr_seg *r = (const void *)(w->p + HW_WQE_DS_BYTES);
	struct hw_xatomic x;
	struct eng_list dst;
	struct hw_qp *peer;
	uint8_t *rp;
	uint8_t synd;

	if (!hw_xatomic_shape(w->opcode, hw_ctrl_opmod((const void *)w->p), &x) ||
	    w->end != 3 * HW_WQE_DS_BYTES + x.seg_len)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	hw_xatomic_load(&x, w->p + 2 * HW_WQE_DS_BYTES);
	synd = eng_seg_list(qp, w, 2 * HW_WQE_DS_BYTES + x.seg_len, HW_ACCESS_LOCAL_WRITE, false, &dst);
	if (synd != 0)
		return eng_fail(synd);
	if (dst.n != 1 || dst.total != x.size)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	peer = eng_peer(qp, w);
	if (peer == NULL)
		return eng_no_peer(qp);
	if (hw_raddr_seg_addr(r) % x.size != 0)
		return eng_fail(HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
	if (!(__atomic_load_n(&peer->sh->rights, __ATOMIC_ACQUIRE) & HW_ACCESS_REMOTE_ATOMIC))
		return eng_fail(HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
	synd = eng_remote(eng_resp_pd(peer, w), r, x.size, HW_ACCESS_REMOTE_ATOMIC, &rp);
	if (synd != 0)
		return eng_fail(synd);
	hw_xatomic_result(&x, hw_xatomic_run(&x, rp), dst.s[0].p);
	return (struct eng_res){ .byte_cnt = x.size };
}

/* ---- requests another machine runs (hw_xm.h) ---- */

void hw_xm_set_ops(const struct hw_xm_ops *ops)
{
	xm_ops = ops;
}

const struct hw_xm_ops *hw_xm_get_ops(void)
{
	return xm_ops;
}

/*
 * Where a WQE's local list starts and which right it needs, and the remote
 * part it carries, for the operations that reach a peer; false for others.
 */
static bool eng_xm_shape(const struct eng_wqe *w, struct hw_xm_req *q, uint32_t *off, uint32_t *access, bool *out)
{
	const struct hw_wqe_raddr_seg *r = (const void *)(w->p + HW_WQE_DS_BYTES);
	const struct hw_wqe_atomic_seg *a = (const void *)(w->p + 2 * HW_WQE_DS_BYTES);

	*out = w->opcode == HW_WQE_SEND || w->opcode == HW_WQE_SEND_IMM || w->opcode == HW_WQE_SEND_INVAL ||
	       w->opcode == HW_WQE_RDMA_WRITE || w->opcode == HW_WQE_RDMA_WRITE_IMM;
	*access = *out ? HW_ACCESS_LOCAL_READ : HW_ACCESS_LOCAL_WRITE;
	switch (w->opcode) {
	case HW_WQE_SEND:
	case HW_WQE_SEND_IMM:
	case HW_WQE_SEND_INVAL:
		*off = HW_WQE_DS_BYTES;
		return true;
	case HW_WQE_RDMA_WRITE:
	case HW_WQE_RDMA_WRITE_IMM:
	case HW_WQE_RDMA_READ:
		if (w->end < 2 * HW_WQE_DS_BYTES)
			return false;
		q->raddr = hw_raddr_seg_addr(r);
		q->rkey = hw_raddr_seg_rkey(r);
		*off = 2 * HW_WQE_DS_BYTES;
		return true;
	case HW_WQE_ATOMIC_CS:
	case HW_WQE_ATOMIC_FA:
		if (w->end != 4 * HW_WQE_DS_BYTES)
			return false;
		q->raddr = hw_raddr_seg_addr(r);
		q->rkey = hw_raddr_seg_rkey(r);
		q->swap_add = hw_atomic_seg_swap_add(a);
		q->compare = hw_atomic_seg_compare(a);
		*off = 3 * HW_WQE_DS_BYTES;
		return true;
	default:
		return false;
	}
}

/* Sends the request and, for a READ or an atomic, scatters what came back into the local list. */
static struct eng_res eng_xm_run(struct hw_qp *qp, const struct hw_xm_ops *ops, struct hw_xm_req *q,
				 struct eng_list *loc, const struct eng_list *rd, bool out)
{
	struct hw_xm_res res = { .synd = HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR };
	uint8_t *buf = malloc(ops->headroom + (out ? loc->total + rd->total : 0) + 1);
	uint8_t *rbuf = out ? NULL : malloc(ops->headroom + loc->total + 1);
	uint8_t *rdata = rbuf != NULL ? rbuf + ops->headroom : NULL;
	struct eng_list lin;

	if (buf == NULL || (!out && rbuf == NULL)) {
		free(buf);
		free(rbuf);
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	}
	q->len = loc->total + rd->total;
	eng_list_init(&lin);
	eng_add(&lin, out ? buf + ops->headroom : rdata, (uint32_t)loc->total);
	if (out && loc->total != 0)
		eng_copy(&lin, loc);
	if (out && rd->total != 0) {
		struct eng_list tail;

		eng_list_init(&tail);
		eng_add(&tail, buf + ops->headroom + loc->total, (uint32_t)rd->total);
		eng_copy(&tail, rd);
	}
	ops->exec(q, buf, rdata, &res);
	if (!out && res.synd == 0 && !res.rnr && loc->total != 0)
		eng_copy(loc, &lin);
	free(buf);
	free(rbuf);
	if (res.rnr) {
		qp->dc_rnr_timer = res.rnr_timer; /* eng_rnr_timer takes it as the responder's NAK carried it */
		return (struct eng_res){ .rnr = true };
	}
	return (struct eng_res){ .synd = res.synd, .byte_cnt = res.synd == 0 ? (uint32_t)loc->total : 0,
				 .tm_fin = res.synd == 0 && res.tm_fin };
}

/* An RC request names its target port as a DC one does: by the GID, in the address's place (fab_xm.h). */
static void eng_xm_rc_gid(const struct hw_qp *qp, struct hw_xm_req *q)
{
	memcpy(q->av + offsetof(struct hw_wqe_datagram_seg, rgid), qp->xm_gid, sizeof(qp->xm_gid));
}

/*
 * A WQE whose peer is on another machine: av is a DCI's address (NULL for
 * RC). NOP and UMR stay local; the rest is gathered here and sent.
 */
static struct eng_res eng_exec_xm(struct hw_qp *qp, struct eng_wqe *w, uint32_t machine, const uint8_t *av)
{
	const struct hw_xm_ops *ops = xm_ops;
	struct hw_xm_req q = { .machine = machine, .src_qpn = qp->qpn, .src_lid = qp->lid, .opcode = w->opcode,
			       .fm_ce_se = w->fm_ce_se, .imm = w->imm };
	struct eng_list loc, rd;
	struct eng_res r;
	uint32_t off, access;
	uint8_t synd;
	bool out;

	eng_list_init(&rd);
	if (!eng_xm_shape(w, &q, &off, &access, &out))
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	synd = eng_seg_list(qp, w, off, access, out, &loc);
	if (synd != 0)
		return eng_fail(synd);
	if (!out && q.opcode != HW_WQE_RDMA_READ && (loc.n != 1 || loc.total != ENG_ATOMIC_LEN))
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	if (ops == NULL)
		return eng_fail(HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR); /* no path between machines */
	if (av != NULL) {
		q.qp_type = HW_QPT_DCI;
		memcpy(q.av, av, HW_XM_AV_BYTES);
	} else {
		q.qp_type = HW_QPT_RC;
		q.dest = qp->xm_dest;
		eng_xm_rc_gid(qp, &q);
	}
	if (out && eng_tm_xm_rndv(w, &loc))
		eng_tm_xm_rd(qp, w, &loc, &q, &rd);
	r = eng_xm_run(qp, ops, &q, &loc, &rd, out);
	if (r.tm_fin && !(w->fm_ce_se & ENG_CE_SIGNALED)) {
		eng_tm_fin(qp, w->tm_fin); /* no CQE of its own to follow */
		r.tm_fin = false;
	}
	return r;
}

/*
 * A DMA MMO on a QP (mlx5dv_wr_memcpy): ctrl, the MMO segment (it names the
 * domain's opaque buffer, which a copy does not use), then a source and a
 * destination data segment of one length (0, as mlx5 writes 2 GiB, or 2 GiB
 * as this device writes it), both keys of the QP's domain, read and written
 * locally. Nothing goes to a peer.
 */
static struct eng_res eng_mmo_dma(struct hw_qp *qp, struct eng_wqe *w)
{
	const uint32_t at = sizeof(struct hw_wqe_ctrl_seg) + HW_WQE_DS_BYTES;
	const struct hw_wqe_data_seg *s = (const void *)(w->p + at), *d = s + 1;
	struct eng_list src, dst;
	uint32_t len;
	uint8_t synd;

	if (hw_ctrl_opmod((const void *)w->p) != HW_MMO_OPMOD_DMA || w->end != at + 2 * HW_WQE_DS_BYTES ||
	    hw_data_seg_len(s) != hw_data_seg_len(d))
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	len = hw_data_seg_len(s) != 0 ? hw_data_seg_len(s) : HW_DATA_SEG_2G;
	if (len > HW_DATA_SEG_2G)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_LENGTH_ERR);
	eng_list_init(&src);
	eng_list_init(&dst);
	synd = eng_local_seg(qp->pd_id, s, len, HW_ACCESS_LOCAL_READ, &src);
	if (synd == 0)
		synd = eng_local_seg(qp->pd_id, d, len, HW_ACCESS_LOCAL_WRITE, &dst);
	if (synd != 0)
		return eng_fail(synd);
	eng_copy(&dst, &src);
	return (struct eng_res){ .byte_cnt = len };
}

static struct eng_res eng_exec_ud(struct hw_qp *qp, struct eng_wqe *w)
{
	switch (w->opcode) {
	case HW_WQE_NOP:
		return (struct eng_res){ 0 };
	case HW_WQE_SEND:
	case HW_WQE_SEND_IMM:
		return eng_ud_send(qp, w);
	default:
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	}
}

static struct eng_res eng_exec_rc(struct hw_qp *qp, struct eng_wqe *w)
{
	uint32_t machine = __atomic_load_n(&qp->xm_machine, __ATOMIC_ACQUIRE);

	if (machine != 0 && w->dest == NULL && w->opcode != HW_WQE_NOP && w->opcode != HW_WQE_UMR &&
	    w->opcode != HW_WQE_MMO)
		return eng_exec_xm(qp, w, machine, NULL);
	switch (w->opcode) {
	case HW_WQE_NOP:
		return (struct eng_res){ 0 };
	case HW_WQE_SEND:
	case HW_WQE_SEND_IMM:
	case HW_WQE_SEND_INVAL:
		return eng_send(qp, w);
	case HW_WQE_RDMA_WRITE:
	case HW_WQE_RDMA_WRITE_IMM:
		return eng_write(qp, w);
	case HW_WQE_RDMA_READ:
		return eng_read(qp, w);
	case HW_WQE_ATOMIC_CS:
	case HW_WQE_ATOMIC_FA:
		return eng_atomic(qp, w);
	case HW_WQE_ATOMIC_MASKED_CS:
	case HW_WQE_ATOMIC_MASKED_FA:
		return eng_xatomic(qp, w);
	case HW_WQE_UMR:
		return eng_umr(qp, w);
	case HW_WQE_MMO:
		return eng_mmo_dma(qp, w);
	default:
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	}
}

/* The DCI stream a WQE names in its ctrl segment (hw_dcs.h); b keeps the ctrl where it was loaded. */
static uint16_t eng_stream(const struct eng_wqe *w)
{
	const struct hw_wqe_ctrl_seg *c = (const void *)w->b;

	return (uint16_t)(c->stream_id[0] << 8 | c->stream_id[1]);
}

/*
 * A WQE failed: the QP goes to ERR, but a DCI with streams puts the WQE's
 * stream in error instead, until the streams in error reach its limit; a
 * malformed WQE (no usable size, a local QP operation error) is the QP's.
 */
static void eng_qp_error(struct hw_qp *qp, const struct eng_wqe *w, uint32_t nbb, uint8_t synd)
{
	if (qp->dcs && nbb != 0 && synd != HW_CQE_SYNDROME_LOCAL_QP_OP_ERR && !hw_dcs_fail(qp, eng_stream(w)))
		return;
	hw_qp_set_err(qp);
}

/*
 * A DCI's WQE: the DC address after ctrl names the DCT; the rest is an RC
 * WQE's, run against that DCT from past the address (the ctrl segment is
 * copied up over it, which costs less than moving what follows).
 * A DCT that would not answer (gone, another port, a wrong key) leaves the
 * request unanswered, as on a card: the retries run out.
 */
static struct eng_res eng_exec_dc(struct hw_qp *qp, struct eng_wqe *w)
{
	const uint32_t at = sizeof(struct hw_wqe_ctrl_seg), av_len = sizeof(struct hw_wqe_datagram_seg);
	struct eng_res res;

	const struct hw_wqe_datagram_seg *av = (const void *)(w->b + at);
	uint8_t avc[sizeof(*av)];
	uint32_t machine;

	if (w->end < at + av_len)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	if (qp->dcs && hw_dcs_errored(qp, eng_stream(w)))
		return eng_fail(HW_CQE_SYNDROME_WR_FLUSH_ERR); /* its stream is in error: flushed, the DCI runs on */
	/* The own port's GID 0 (the usual DC address) is here without a look-up. */
	if ((qp->roce || (be32toh(av->grh_gid_fl) & HW_AV_GRH) != 0) && memcmp(av->rgid, qp->gid, sizeof(av->rgid)) != 0 &&
	    eng_gid_elsewhere(av->rgid, &machine)) {
		/* A DCT of another machine: the address goes with the request; what follows it is RC's. */
		memcpy(avc, av, sizeof(avc));
		memcpy(w->b + av_len, w->b, at);
		w->p = w->b + av_len;
		w->end -= av_len;
		return eng_exec_xm(qp, w, machine, avc);
	}
	w->dest = hw_dc_target_get((const void *)(w->b + at));
	if (w->dest == NULL)
		return eng_fail(HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
	if (w->rqpn == 0) { /* hw_qp_exec_one names the requester of another machine */
		w->rqpn = qp->qpn;
		w->slid = qp->roce ? 0 : qp->lid;
	}
	/* The ctrl segment moved up over the address: the WQE the RC code sees starts there. */
	memcpy(w->b + av_len, w->b, at);
	w->p = w->b + av_len;
	w->end -= av_len;
	res = eng_exec_rc(qp, w);
	if (res.rnr)
		qp->dc_rnr_timer = (uint8_t)__atomic_load_n(&w->dest->sh->min_rnr_timer, __ATOMIC_RELAXED);
	hw_qp_dest_put(w->dest);
	w->dest = NULL;
	return res;
}

/*
 * A UC WQE: an RC one without what needs an answer (READ, atomics: a local
 * QP operation error). Nothing is acknowledged, so whatever happens at the
 * responder — no receive, a refused key, a length error, no such QP — is
 * the message dropped, and the requester completes as if delivered.
 */
static struct eng_res eng_exec_uc(struct hw_qp *qp, struct eng_wqe *w)
{
	struct eng_res res;

	if (w->opcode == HW_WQE_RDMA_READ || w->opcode == HW_WQE_ATOMIC_CS || w->opcode == HW_WQE_ATOMIC_FA ||
	    w->opcode == HW_WQE_ATOMIC_MASKED_CS || w->opcode == HW_WQE_ATOMIC_MASKED_FA)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	res = eng_exec_rc(qp, w);
	if (res.rnr || (res.synd >= HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR && res.synd <= HW_CQE_SYNDROME_RNR_RETRY_EXC_ERR))
		return (struct eng_res){ 0 };
	return res;
}

/*
 * An XRC initiator's WQE: the XRC segment after ctrl names the SRQ at the
 * target; the rest is an RC WQE's, run with that SRQ in place of the
 * target's receive queue and domain (hw_xrc.h). An SRQ that is none of the
 * target's domain's XRC SRQs NAKs the request as invalid before any of it
 * runs. NOP and the UMR of LOCAL_INV or a bind are local and carry no
 * segment, as mlx5 writes them.
 */
static struct eng_res eng_exec_xrc(struct hw_qp *qp, struct eng_wqe *w)
{
	const uint32_t at = sizeof(struct hw_wqe_ctrl_seg), xl = sizeof(struct hw_wqe_xrc_seg);
	const struct hw_wqe_xrc_seg *xs = (const void *)(w->b + at);
	struct eng_res res;
	struct hw_qp *peer;
	struct hw_srq *srq;

	if (w->opcode == HW_WQE_NOP || w->opcode == HW_WQE_UMR)
		return eng_exec_rc(qp, w);
	if (w->end < at + xl)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
	peer = eng_peer(qp, w);
	if (peer == NULL)
		return eng_fail(HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR); /* a target gone or not ready answers nothing */
	srq = hw_xrc_srq_get(be32toh(xs->xrc_srqn));
	if (srq == NULL || srq->xrcd != __atomic_load_n(&peer->sh->xrcd, __ATOMIC_ACQUIRE))
		return eng_fail(HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
	memcpy(w->b + xl, w->b, at);
	w->p = w->b + xl;
	w->end -= xl;
	w->xsrq = srq;
	res = eng_exec_rc(qp, w);
	w->xsrq = NULL;
	return res;
}

static struct eng_res eng_exec(struct hw_qp *qp, struct eng_wqe *w)
{
	if (qp->type == HW_QPT_XRC_INI)
		return eng_exec_xrc(qp, w);
	if (qp->type == HW_QPT_XRC_TGT)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR); /* no send queue */
	if (qp->type == HW_QPT_UD)
		return eng_exec_ud(qp, w);
	/* NOP and the UMR of LOCAL_INV are local: no address. */
	if (qp->type == HW_QPT_DCI && w->opcode != HW_WQE_NOP && w->opcode != HW_WQE_UMR)
		return eng_exec_dc(qp, w);
	if (qp->type == HW_QPT_DCT)
		return eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR); /* no send queue */
	if (qp->type == HW_QPT_UC)
		return eng_exec_uc(qp, w);
	return eng_exec_rc(qp, w);
}

/* The responder's RNR timer code, as its NAK carries it. */
static uint8_t eng_rnr_code(const struct hw_qp *qp)
{
	const struct hw_qp *peer = __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE);

	if (qp->type == HW_QPT_DCI)
		return qp->dc_rnr_timer;
	return peer != NULL ? (uint8_t)__atomic_load_n(&peer->sh->min_rnr_timer, __ATOMIC_RELAXED) : 0;
}

enum hw_status hw_qp_exec_one(struct hw_qp *qp, const void *wqe, uint32_t len, uint32_t rqpn, uint16_t slid,
			      struct hw_xm_res *res)
{
	return hw_qp_exec_one_tm(qp, wqe, len, rqpn, slid, NULL, res);
}

enum hw_status hw_qp_exec_one_tm(struct hw_qp *qp, const void *wqe, uint32_t len, uint32_t rqpn, uint16_t slid,
				 const struct hw_xm_tm *tm, struct hw_xm_res *res)
{
	const struct hw_wqe_ctrl_seg *ctrl = wqe;
	struct eng_wqe *w;
	struct eng_res r;
	uint32_t ds;

	if (qp == NULL || wqe == NULL || res == NULL || len < sizeof(*ctrl) || (qp->type != HW_QPT_RC && qp->type != HW_QPT_DCI))
		return HW_ERR_INVAL;
	ds = hw_ctrl_ds(ctrl);
	if (ds == 0 || ds * HW_WQE_DS_BYTES > len || len > sizeof(w->b))
		return HW_ERR_INVAL;
	w = malloc(sizeof(*w)); /* too large for the service thread's stack to take lightly */
	if (w == NULL)
		return HW_ERR_NOMEM;
	memcpy(w->b, wqe, len);
	w->p = w->b;
	w->end = ds * HW_WQE_DS_BYTES;
	w->idx = 0;
	w->opcode = hw_ctrl_opcode(ctrl);
	w->fm_ce_se = ctrl->fm_ce_se;
	w->imm = be32toh(ctrl->imm);
	w->dest = NULL;
	w->xsrq = NULL;
	w->rqpn = rqpn;
	w->slid = slid;
	hw_epoch_enter();
	eng_xm_tm = tm;
	r = eng_exec(qp, w);
	eng_xm_tm = NULL;
	hw_epoch_leave();
	free(w);
	if (r.retry) /* another machine's requester: its own retries are the fabric's */
		r = eng_fail(HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR);
	*res = (struct hw_xm_res){ .synd = r.synd, .rnr = r.rnr, .byte_cnt = r.byte_cnt,
				   .rnr_timer = r.rnr ? eng_rnr_code(qp) : 0, .tm_fin = r.tm_fin };
	return HW_OK;
}

/* The requester's CQE of the WQE at idx (its opcode op), for what it did. */
static void eng_req_cqe(struct hw_qp *qp, uint16_t idx, uint8_t op, struct eng_res res)
{
	struct hw_cqe_fields f = {
		.opcode = res.synd != 0 ? HW_CQE_REQ_ERR : HW_CQE_REQ,
		.qpn = qp->qpn,
		.srqn = qp->uidx,
		.wqe_counter = idx,
		.byte_cnt = res.byte_cnt,
		.syndrome = res.synd,
		.wqe_opcode = op,
	};

	(void)hw_cq_push(qp->send_cq, &f); /* a full CQ latches its overrun flag */
}

static uint64_t eng_now(uint64_t now_ns)
{
	struct timespec ts;

	if (now_ns != 0)
		return now_ns;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* a vDSO read, and only when an RNR wait starts */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The responder's RNR timer, as its NAK would carry it. */
static uint64_t eng_rnr_timer(const struct hw_qp *qp)
{
	const struct hw_qp *peer = __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE);

	if (qp->type == HW_QPT_DCI || __atomic_load_n(&qp->xm_machine, __ATOMIC_RELAXED) != 0)
		return hw_rnr_timer_ns(qp->dc_rnr_timer);
	return hw_rnr_timer_ns(peer != NULL ? (uint8_t)__atomic_load_n(&peer->sh->min_rnr_timer, __ATOMIC_RELAXED) : 0);
}

/*
 * The WQE at sq_ci found its peer not ready (eng_no_peer): sent again each
 * time the QP's ack timeout passes, retry_cnt times, then
 * TRANSPORT_RETRY_EXC, as a card's requester retransmits. A timeout of 0 is
 * IB's "forever": sent again every ENG_RETRY_FOREVER_NS with no limit (a
 * card would wait for an answer without sending again; here a peer that
 * connects later still takes it). True while it keeps waiting; the deadline
 * is the RNR wait's, so the engine thread and the program's polls drive it
 * alike.
 */
#define ENG_RETRY_FOREVER_NS 4000000ull

static uint64_t eng_ack_timeout_ns(const struct hw_qp *qp)
{
	return qp->ack_timeout == 0 ? ENG_RETRY_FOREVER_NS : 4096ull << qp->ack_timeout;
}

static bool eng_retry_wait(struct hw_qp *qp, uint64_t now_ns, bool waiting)
{
	uint64_t deadline = __atomic_load_n(&qp->rnr_deadline, __ATOMIC_ACQUIRE);

	if (!waiting) {
		uint64_t dl = eng_now(now_ns) + eng_ack_timeout_ns(qp);

		qp->rnr_left = (uint8_t)(qp->retry_cnt + 1);
		__atomic_store_n(&qp->retry_wait, true, __ATOMIC_RELAXED);
		__atomic_store_n(&qp->rnr_deadline, dl, __ATOMIC_RELEASE);
		hw_eng_wake_by(dl);
		return true;
	}
	if (now_ns == 0 || now_ns < deadline)
		return true;
	if (qp->ack_timeout != 0 && --qp->rnr_left == 0)
		return false;
	__atomic_store_n(&qp->rnr_deadline, now_ns + eng_ack_timeout_ns(qp), __ATOMIC_RELEASE);
	return true;
}

/*
 * The WQE at sq_ci met an RNR NAK: true while it keeps waiting (the deadline
 * set), false when its retries are spent. A first NAK starts the wait; a NAK
 * at or after the deadline counts a retry; one before it changes nothing.
 */
static bool eng_rnr_wait(struct hw_qp *qp, uint64_t now_ns, bool waiting)
{
	uint64_t deadline = __atomic_load_n(&qp->rnr_deadline, __ATOMIC_ACQUIRE);

	if (!waiting) {
		if (qp->rnr_retry == 0)
			return false;
		uint64_t t0 = eng_now(now_ns), dl = t0 + eng_rnr_timer(qp);

		qp->rnr_left = qp->rnr_retry;
		__atomic_store_n(&qp->retry_wait, false, __ATOMIC_RELAXED);
		__atomic_store_n(&qp->rnr_deadline, dl, __ATOMIC_RELEASE);
		/* The engine thread kicks it at the deadline, and watches a responder of another process. */
		hw_eng_wake_by(dl < t0 + HW_ENG_RNR_GRACE_NS ? dl : t0 + HW_ENG_RNR_GRACE_NS);
		return true;
	}
	if (now_ns == 0 || now_ns < deadline)
		return true;
	if (qp->rnr_retry != HW_QP_RNR_RETRY_INFINITE && --qp->rnr_left == 0)
		return false;
	__atomic_store_n(&qp->rnr_deadline, now_ns + eng_rnr_timer(qp), __ATOMIC_RELEASE);
	return true;
}

/*
 * ---- an RC QP of another machine's peer: requests in flight ----
 *
 * Consecutive WQEs go together, up to HW_XM_BATCH of them and
 * ENG_XM_CALL_BYTES of data, as one call of the transport (what a WQE posted
 * meanwhile finds: nothing waits to fill a call), and up to ENG_XM_WINDOW
 * calls are in flight before the first is answered; each WQE is completed
 * in order when its answer is there. The target runs them in the order of
 * their sequence numbers and discards every one after a request it could
 * not do (an RNR NAK or an error), as an IB responder drops what follows a
 * NAK; the requester then waits out the RNR timer and sends again from that
 * WQE (go-back-N), or completes it in error and flushes the rest.
 */
#define ENG_XM_WINDOW 4
#define ENG_XM_CALL_BYTES (64u << 10)
#define ENG_XM_GAP_RETRIES 7

struct eng_xm_slot {
	void *h;		/* the transport's handle; NULL once res is known */
	uint8_t *buf, *rbuf;	/* requests (headroom + payload each) and answers (rep_headroom + data each) */
	uint32_t n;		/* WQEs the call carries */
	uint32_t done;		/* of them, completed */
	uint32_t seq;		/* the first one's sequence number */
	struct hw_xm_res res[HW_XM_BATCH];
	const uint8_t *data[HW_XM_BATCH];
};

struct hw_xm_flight {
	uint32_t issued;	/* SQ counter up to which WQEs were sent */
	uint32_t head, n;	/* the calls in flight, oldest first */
	uint32_t next_seq;
	uint32_t epoch;
	uint32_t resend_seq;	/* after a rewind: the sequence the oldest WQE is sent again with */
	bool rewind;		/* the oldest was not done: the rest are reaped, not completed */
	uint32_t gaps;		/* resends for a gap in the order since the last WQE done */
	struct eng_xm_slot s[ENG_XM_WINDOW];
};

struct hw_xm_flight *hw_eng_xm_new(void)
{
	static _Atomic uint32_t epochs;
	struct hw_xm_flight *f = calloc(1, sizeof(*f));

	if (f != NULL) {
		f->next_seq = 1;
		f->epoch = ((uint32_t)getpid() << 12) ^ ++epochs;
	}
	return f;
}

/* Answered (or known): true once the oldest call's res are there. */
static bool eng_xm_answered(const struct hw_xm_ops *ops, struct eng_xm_slot *sl)
{
	if (sl->h != NULL && ops->test(sl->h, sl->res, sl->data))
		sl->h = NULL;
	return sl->h == NULL;
}

static void eng_xm_pop(struct hw_xm_flight *f)
{
	struct eng_xm_slot *sl = &f->s[f->head];

	free(sl->buf);
	free(sl->rbuf);
	memset(sl, 0, sizeof(*sl));
	f->head = (f->head + 1) % ENG_XM_WINDOW;
	__atomic_store_n(&f->n, f->n - 1, __ATOMIC_RELAXED);
}

void hw_eng_xm_replace(struct hw_qp *qp, struct hw_xm_flight *f)
{
	struct hw_xm_flight *old;
	uint32_t none = 0;

	if (f == NULL && __atomic_load_n(&qp->xf, __ATOMIC_ACQUIRE) == NULL)
		return; /* never of another machine: nothing to take from a thread running the SQ */
	/* The SQ's running right, as hw_qp_drive takes it: no thread is inside eng_progress_xm meanwhile. */
	while (!__atomic_compare_exchange_n(&qp->drivers, &none, 1, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		none = 0;
		sched_yield();
	}
	old = __atomic_exchange_n(&qp->xf, f, __ATOMIC_ACQ_REL);
	hw_eng_xm_free(old);
	__atomic_store_n(&qp->xm_inflight, 0, __ATOMIC_RELEASE);
	/* Drives asked meanwhile found the SQ taken and left; what they wanted is this change's to decide. */
	for (uint32_t n = 1, left; (left = __atomic_sub_fetch(&qp->drivers, n, __ATOMIC_SEQ_CST)) != 0;)
		n = left;
}

void hw_eng_xm_free(struct hw_xm_flight *f)
{
	const struct hw_xm_ops *ops = xm_ops;

	if (f == NULL)
		return;
	while (f->n != 0) {
		while (!eng_xm_answered(ops, &f->s[f->head]))
			; /* each test progresses the transport; a call ends by its deadline */
		eng_xm_pop(f);
	}
	free(f);
}

/* A READ's or atomic's answer (data; NULL: none came) into the WQE's local list, read again from the ring (the WQE is at sq_ci). */
static uint8_t eng_xm_scatter(struct hw_qp *qp, uint32_t avail, const uint8_t *data)
{
	struct hw_xm_req q = { 0 };
	struct eng_list loc, lin;
	uint32_t off, access;
	struct eng_wqe w;
	bool out;

	if (eng_load(qp, avail, &w) == 0 || !eng_xm_shape(&w, &q, &off, &access, &out))
		return HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	if (out)
		return 0;
	if (eng_seg_list(qp, &w, off, access, false, &loc) != 0)
		return HW_CQE_SYNDROME_LOCAL_PROT_ERR; /* a key withdrawn meanwhile */
	if (loc.total == 0)
		return 0;
	if (data == NULL)
		return HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	eng_list_init(&lin);
	eng_add(&lin, (uint8_t *)(uintptr_t)data, (uint32_t)loc.total);
	eng_copy(&loc, &lin);
	return 0;
}

/* Completes the oldest WQE with res (its CQE when signalled or failed). */
static void eng_xm_complete(struct hw_qp *qp, uint32_t avail, struct eng_res res)
{
	struct eng_wqe w;
	uint32_t nbb = eng_load(qp, avail, &w);

	if (res.synd != 0 || (w.fm_ce_se & ENG_CE_SIGNALED))
		eng_req_cqe(qp, w.idx, w.opcode, res);
	if (res.synd != 0 && hw_qp_state_of(qp) != HW_QP_ERR)
		hw_qp_set_err(qp);
	__atomic_store_n(&qp->sq_ci, (qp->sq_ci + (nbb != 0 ? nbb : avail)) & HW_QP_COUNTER_MASK, __ATOMIC_RELEASE);
}

/* Reaps the oldest WQE whose call was answered; false when it is not answered yet (or nothing is in flight). */
static bool eng_xm_reap(struct hw_qp *qp, struct hw_xm_flight *f, const struct hw_xm_ops *ops, uint64_t now_ns)
{
	struct eng_xm_slot *sl = &f->s[f->head];
	uint32_t avail = (__atomic_load_n(&qp->sq_pi, __ATOMIC_ACQUIRE) - qp->sq_ci) & HW_QP_COUNTER_MASK;
	bool waiting = __atomic_load_n(&qp->rnr_deadline, __ATOMIC_ACQUIRE) != HW_QP_NO_DEADLINE;
	const struct hw_xm_res *r;
	struct eng_res res;

	if (f->n == 0 || !eng_xm_answered(ops, sl))
		return false;
	if (f->rewind) { /* discarded by the target, or answered before it learned: sent again later */
		eng_xm_pop(f);
		return true;
	}
	r = &sl->res[sl->done];
	if (r->rnr || r->discarded) {
		qp->dc_rnr_timer = r->rnr_timer;
		/*
		 * Discarded though all before it were done: it reached the target
		 * ahead of an earlier call (a large one the transport delivers
		 * later), as a packet out of sequence; sent again, a bounded
		 * number of times in a row, as IB's requester does on a NAK.
		 */
		if ((r->discarded && f->gaps++ < ENG_XM_GAP_RETRIES) ||
		    (!r->discarded && eng_rnr_wait(qp, eng_now(now_ns), waiting))) {
			if (r->discarded)
				BASE_DBG("qp 0x%x: request %u arrived out of order at the target; sent again", qp->qpn,
					 sl->seq + sl->done);
			f->rewind = true; /* the rest of this call was discarded as well */
			f->resend_seq = sl->seq + sl->done;
			eng_xm_pop(f);
			return true;
		}
		res = eng_fail(r->discarded ? HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR : HW_CQE_SYNDROME_RNR_RETRY_EXC_ERR);
	} else {
		f->gaps = 0;
		res = (struct eng_res){ .synd = r->synd, .byte_cnt = r->synd == 0 ? r->byte_cnt : 0 };
		if (res.synd == 0)
			res.synd = eng_xm_scatter(qp, avail, sl->data[sl->done]);
	}
	if (waiting)
		__atomic_store_n(&qp->rnr_deadline, HW_QP_NO_DEADLINE, __ATOMIC_RELEASE);
	eng_xm_complete(qp, avail, res);
	if (res.synd != 0)
		f->rewind = true; /* the rest are reaped; the ERR state flushes their WQEs */
	if (++sl->done == sl->n || f->rewind)
		eng_xm_pop(f);
	return true;
}

/*
 * The WQE at ci as a request of a call (q; *nbb its blocks). False when it
 * goes no call in flight: local work, a malformed WQE or one longer than a
 * call, run the synchronous way. *synd: a local fault found already (the
 * WQE then completes in error in its turn, sent nowhere).
 */
static bool eng_xm_req_at(struct hw_qp *qp, const struct hw_xm_flight *f, const struct hw_xm_ops *ops, uint32_t ci,
			  uint32_t avail, struct hw_xm_req *q, uint32_t *nbb, uint8_t *synd)
{
	uint32_t off, access;
	struct eng_list loc;
	struct eng_wqe w;
	bool out;

	*q = (struct hw_xm_req){ .machine = qp->xm_machine, .dest = qp->xm_dest, .src_qpn = qp->qpn,
				 .src_lid = qp->lid, .qp_type = HW_QPT_RC, .epoch = f->epoch };
	eng_xm_rc_gid(qp, q);
	*nbb = eng_load_at(qp, ci, avail, &w);
	if (*nbb == 0 || !eng_xm_shape(&w, q, &off, &access, &out))
		return false;
	*synd = eng_seg_list(qp, &w, off, access, out, &loc);
	if (*synd == 0 && !out && w.opcode != HW_WQE_RDMA_READ && (loc.n != 1 || loc.total != ENG_ATOMIC_LEN))
		*synd = HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	if (*synd == 0 && (loc.total > ops->async_max || (out && eng_tm_xm_rndv(&w, &loc))))
		return false; /* a rendezvous carries its range and may owe a FIN: the synchronous way */
	q->opcode = w.opcode;
	q->fm_ce_se = w.fm_ce_se;
	q->imm = w.imm;
	q->len = *synd == 0 ? loc.total : 0;
	return true;
}

/* Copies the payload of the n requests from ci on into buf behind each one's headroom; how many it could. */
static uint32_t eng_xm_gather(struct hw_qp *qp, uint32_t ci, const uint32_t *nbb, uint32_t n, uint8_t *buf,
			      size_t headroom)
{
	uint32_t i;

	for (i = 0; i < n; ci = (ci + nbb[i]) & HW_QP_COUNTER_MASK, i++) {
		struct hw_xm_req q;
		struct eng_list loc, lin;
		uint32_t off, access;
		struct eng_wqe w;
		bool out;

		(void)eng_load_at(qp, ci, nbb[i], &w);
		(void)eng_xm_shape(&w, &q, &off, &access, &out);
		buf += headroom;
		if (!out)
			continue;
		if (eng_seg_list(qp, &w, off, access, out, &loc) != 0)
			break; /* a key withdrawn since it was looked at: the call ends before it */
		eng_list_init(&lin);
		eng_add(&lin, buf, (uint32_t)loc.total);
		if (loc.total != 0)
			eng_copy(&lin, &loc);
		buf += loc.total;
	}
	return i;
}

/*
 * Gathers the requests from f->issued into q (at most HW_XM_BATCH, and
 * ENG_XM_CALL_BYTES of data, ops->call_max bytes to send); how many. *synd
 * as eng_xm_req_at; *more: the call could take more WQEs than are posted.
 */
static uint32_t eng_xm_collect(struct hw_qp *qp, struct hw_xm_flight *f, const struct hw_xm_ops *ops, uint32_t pi,
			       struct hw_xm_req *q, uint32_t *nbb, uint8_t *synd, bool *more)
{
	uint32_t n = 0, at = f->issued;
	uint64_t bytes = 0, out = 0;

	*synd = 0;
	*more = false;
	while (n < HW_XM_BATCH) {
		uint32_t avail = (pi - at) & HW_QP_COUNTER_MASK;
		uint64_t sent;
		uint8_t s = 0;

		if (avail == 0) {
			*more = true;
			break;
		}
		if (!eng_xm_req_at(qp, f, ops, at, avail, &q[n], &nbb[n], &s))
			break;
		sent = ops->headroom + (hw_xm_op_out(q[n].opcode) ? q[n].len : 0);
		if (s != 0 || (n != 0 && (bytes + q[n].len > ENG_XM_CALL_BYTES || out + sent > ops->call_max))) {
			if (n == 0) { /* a faulty WQE is a call of its own, answered at once */
				*synd = s;
				n = 1;
			}
			break;
		}
		q[n].seq = f->next_seq + n;
		bytes += q[n].len;
		out += sent;
		at = (at + nbb[n]) & HW_QP_COUNTER_MASK;
		n++;
		if (bytes >= ENG_XM_CALL_BYTES)
			break; /* full: it goes even behind calls in flight */
	}
	return n;
}

/* Sends the WQEs from f->issued as one call; false when it must wait (window, order, a local WQE behind requests). */
static bool eng_xm_issue(struct hw_qp *qp, struct hw_xm_flight *f, const struct hw_xm_ops *ops, uint32_t pi)
{
	struct eng_xm_slot *sl = &f->s[(f->head + f->n) % ENG_XM_WINDOW];
	struct hw_xm_req q[HW_XM_BATCH];
	uint32_t nbb[HW_XM_BATCH], n, blocks = 0;
	size_t blen = 0, rlen = 0;
	uint8_t synd;
	bool more;

	if (f->n == ENG_XM_WINDOW || f->rewind || hw_qp_state_of(qp) == HW_QP_ERR)
		return false;
	n = eng_xm_collect(qp, f, ops, pi, q, nbb, &synd, &more);
	/*
	 * A call goes at once when none is in flight; behind one, only full:
	 * the WQEs posted meanwhile gather into the next call, so the
	 * transport's cost per call is shared the more the busier the QP.
	 */
	if (n == 0 || (more && f->n != 0))
		return false;
	for (uint32_t i = 0; i < n; i++) {
		bool out = hw_xm_op_out(q[i].opcode);

		blen += ops->headroom + (out ? q[i].len : 0);
		rlen += ops->rep_headroom + (out ? 0 : q[i].len);
	}
	memset(sl, 0, sizeof(*sl));
	sl->seq = f->next_seq;
	if (synd == 0) {
		sl->buf = malloc(blen);
		sl->rbuf = malloc(rlen);
		if (sl->buf == NULL || sl->rbuf == NULL)
			synd = HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	}
	if (synd == 0 && (n = eng_xm_gather(qp, f->issued, nbb, n, sl->buf, ops->headroom)) == 0)
		synd = HW_CQE_SYNDROME_LOCAL_PROT_ERR;
	if (synd != 0)
		n = 1;
	sl->n = n;
	if (synd == 0)
		sl->h = ops->start(q, n, sl->buf, sl->rbuf, sl->res);
	else
		sl->res[0] = (struct hw_xm_res){ .synd = synd }; /* completes in its turn */
	for (uint32_t i = 0; i < n; i++)
		blocks += nbb[i];
	f->next_seq += n;
	f->issued = (f->issued + blocks) & HW_QP_COUNTER_MASK;
	__atomic_store_n(&f->n, f->n + 1, __ATOMIC_RELAXED);
	return true;
}

/*
 * Whether the peer QP on the other machine is still there: a probe (a NOP
 * request, unsequenced, so it leaves the order of the QP's requests alone),
 * answered by whether that QP exists and its owner lives, whatever its
 * state. False when the machine, the serving process or the QP is gone.
 */
bool hw_eng_xm_probe(struct hw_qp *qp)
{
	const struct hw_xm_ops *ops = xm_ops;
	struct hw_xm_req q = { .machine = __atomic_load_n(&qp->xm_machine, __ATOMIC_ACQUIRE), .dest = qp->xm_dest,
			       .src_qpn = qp->qpn, .src_lid = qp->lid, .qp_type = HW_QPT_RC,
			       .opcode = HW_WQE_NOP };
	struct hw_xm_res res = { 0 };
	uint8_t *buf;

	if (ops == NULL || q.machine == 0)
		return true;
	eng_xm_rc_gid(qp, &q);
	buf = malloc(ops->headroom + 1);
	if (buf == NULL)
		return true;
	ops->exec(&q, buf, NULL, &res);
	free(buf);
	return res.synd != HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR;
}

/*
 * The SQ of an RC QP whose peer is on another machine: reap what was
 * answered, send what was posted, and when the window is full wait for the
 * oldest (the transport's deadline bounds it). Local WQEs (NOP, UMR) and
 * requests longer than one call run the synchronous way once nothing is in
 * flight, so the order holds.
 */
static bool eng_progress_xm_run(struct hw_qp *qp, struct hw_xm_flight *f, uint64_t now_ns)
{
	const struct hw_xm_ops *ops = xm_ops;
	uint32_t pi = __atomic_load_n(&qp->sq_pi, __ATOMIC_ACQUIRE);
	uint64_t dl;

	if (ops == NULL || ops->start == NULL)
		return false;
	for (;;) {
		bool moved;

		if (f->n == 0 && !f->rewind)
			f->issued = qp->sq_ci; /* the common loop may have run WQEs meanwhile */
		moved = eng_xm_reap(qp, f, ops, now_ns);
		if (f->n == 0 && f->rewind) {
			f->rewind = false;
			f->issued = qp->sq_ci;
			f->next_seq = f->resend_seq != 0 ? f->resend_seq : f->next_seq;
			f->resend_seq = 0;
		}
		dl = __atomic_load_n(&qp->rnr_deadline, __ATOMIC_ACQUIRE);
		if (f->n == 0 && dl != HW_QP_NO_DEADLINE && (now_ns == 0 || now_ns < dl))
			return true; /* waiting out an RNR NAK: the engine thread kicks at the deadline */
		if (hw_qp_state_of(qp) == HW_QP_ERR && f->n == 0)
			return false; /* the flush is the common loop's */
		while (eng_xm_issue(qp, f, ops, pi))
			moved = true;
		if (f->n == 0)
			return f->issued != pi ? false : true; /* something to run the synchronous way, or all done */
		if (!moved)
			return true; /* all sent; the answers are reaped by the next drive */
	}
}

static bool eng_progress_xm(struct hw_qp *qp, uint64_t now_ns)
{
	struct hw_xm_flight *f = __atomic_load_n(&qp->xf, __ATOMIC_ACQUIRE);
	bool done;

	if (f == NULL)
		return false;
	done = eng_progress_xm_run(qp, f, now_ns);
	/* What the pollers look at (hw_qp_xm_busy), so they never reach into f, which a reset may free. */
	__atomic_store_n(&qp->xm_inflight, f->n, __ATOMIC_RELEASE);
	return done;
}

/* The receive WQE at rd names one entry: the only one, or one ended by the invalid key. */
static bool eng_rcv_one(const struct hw_qp *peer, const struct hw_wqe_data_seg *rd)
{
	return (1u << peer->log_rq_stride) == sizeof(*rd) || hw_data_seg_lkey(rd + 1) == HW_RQ_INVALID_LKEY;
}

/*
 * The first look's SEND (hw_eng_fast.h): a peer with an RQ whose next
 * receive is one plain entry, long enough, is taken, filled and completed
 * under the receive CQ's lock with its claim, as eng_rcv_take and
 * eng_rcv_complete do; anything else is let go before it is taken (-1),
 * and the general path does it all again, the RNR wait included.
 */
static int64_t eng_fast_send(struct hw_qp *qp, struct hw_qp *peer, const uint8_t *slot, uint8_t fm_ce_se)
{
	const struct hw_wqe_data_seg *d = (const void *)(slot + HW_WQE_DS_BYTES), *rd;
	uint32_t len = hw_data_seg_len(d), rlen, rq_ci;
	struct hw_cqe_fields f = { .opcode = HW_CQE_RESP_SEND, .solicited = (fm_ce_se & HW_WQE_CTRL_SOLICITED) != 0,
				   .byte_cnt = len };
	const uint8_t *src;
	uint8_t *dst = NULL;
	struct eng_rcv r;

	if (len - 1 >= HW_QP_MAX_MSG || peer->srq != NULL)
		return -1;
	src = hw_mkey_plain(hw_data_seg_lkey(d), qp->pd_id, hw_data_seg_addr(d), len, HW_ACCESS_LOCAL_READ);
	if (src == NULL)
		return -1;
	rd = (const void *)eng_rq_peek(peer, &rq_ci);
	if (rd == NULL)
		return -1;
	if (eng_rcv_one(peer, rd) && (rlen = hw_data_seg_len(rd)) >= len && rlen <= HW_QP_MAX_MSG)
		dst = hw_mkey_plain(hw_data_seg_lkey(rd), peer->pd_id, hw_data_seg_addr(rd), rlen,
				    HW_ACCESS_LOCAL_WRITE);
	if (dst == NULL) {
		hw_cq_unlock(peer->recv_cq); /* let go untaken */
		return -1;
	}
	eng_rq_take(peer, rq_ci, (const uint8_t *)rd, &r);
	if (__builtin_expect(len <= __atomic_load_n(&peer->sh->scat_max, __ATOMIC_RELAXED), 0)) {
		eng_rcv_complete_scat(peer, &r, &f, src, len);
		return len;
	}
	eng_move(dst, src, len);
	eng_rcv_complete(peer, &r, &f);
	return len;
}

/*
 * The posted WQEs the first look runs whole (hw_eng_fast.h), while the QP
 * is in RTS, its peer on this machine and nothing waits on RNR: true when
 * none is left for the general path. Out of line: the general path's
 * large frame is not set up for the work that does not need it.
 */
static __attribute__((noinline)) bool eng_fast_pass(struct hw_qp *qp)
{
	uint32_t ci = qp->sq_ci, pi = __atomic_load_n(&qp->sq_pi, __ATOMIC_ACQUIRE), left = 0;
	uint64_t moved = 0;
	struct hw_qp *peer = NULL;

	/*
	 * A signature-pipelining QP runs its WQEs one by one (eng_progress), each
	 * looked at for a signature error; a paced one waits for tokens there.
	 */
	if (qp->type != HW_QPT_RC || __atomic_load_n(&qp->xm_machine, __ATOMIC_ACQUIRE) != 0 ||
	    __atomic_load_n(&qp->rnr_deadline, __ATOMIC_ACQUIRE) != HW_QP_NO_DEADLINE ||
	    qp->no_fast != 0) /* a plain byte test (one cmpb): a change is seen from the next doorbell on */
		return false;
	for (uint32_t nbb = 0; ci != pi; ci = (ci + nbb) & HW_QP_COUNTER_MASK) {
		uint8_t op, fm_ce_se;
		int64_t n;

		if (hw_qp_state_of(qp) != HW_QP_RTS)
			return false;
		/* The peer as the first WQE of a doorbell finds it, looked at again every few WQEs or bytes. */
		if (left-- == 0 || moved >= ENG_FAST_PEER_BYTES) {
			peer = eng_fast_peer(qp);
			if (peer == NULL)
				return false;
			left = ENG_FAST_PEER_WQES - 1;
			moved = 0;
		}
		n = eng_fast(qp, peer, ci, (pi - ci) & HW_QP_COUNTER_MASK, &op, &fm_ce_se, &nbb);
		if (n < 0)
			return false;
		moved += (uint64_t)n;
		if (fm_ce_se & ENG_CE_SIGNALED)
			eng_req_cqe(qp, (uint16_t)ci, op, (struct eng_res){ .byte_cnt = (uint32_t)n });
		__atomic_store_n(&qp->sq_ci, (ci + nbb) & HW_QP_COUNTER_MASK, __ATOMIC_RELEASE);
	}
	return true;
}

/*
 * A paced QP's WQE (hw_pace.h): false while its buckets hold no token (the
 * engine thread runs the SQ again at pace_deadline); else it runs and its
 * bytes are taken from them. Out of line: unpaced QPs never come here.
 */
static __attribute__((noinline)) bool eng_exec_paced(struct hw_qp *qp, struct eng_wqe *w, struct eng_res *res)
{
	struct hw_pace *p = __atomic_load_n(&qp->pace, __ATOMIC_ACQUIRE);
	uint64_t now = hw_pace_now(), at, waited = __atomic_load_n(&qp->pace_deadline, __ATOMIC_ACQUIRE);

	if (p != NULL && !hw_pace_ready(p, now, &at)) {
		__atomic_store_n(&qp->pace_deadline, at, __ATOMIC_RELEASE);
		hw_eng_wake_by(at);
		return false;
	}
	*res = eng_exec(qp, w);
	if (waited != HW_QP_NO_DEADLINE)
		__atomic_store_n(&qp->pace_deadline, HW_QP_NO_DEADLINE, __ATOMIC_RELEASE);
	if (p != NULL && !res->rnr)
		hw_pace_charge(p, res->synd == 0 ? res->byte_cnt : 0, waited != HW_QP_NO_DEADLINE, now);
	return true;
}

/* Executes the SQ up to the rung counter, or up to a WQE that waits on RNR. */
static void eng_progress(struct hw_qp *qp, uint64_t now_ns)
{
	uint32_t pi, avail;

	/* A peer on another machine: requests in flight, the rest (local WQEs, flushes) below. */
	if (__atomic_load_n(&qp->xm_machine, __ATOMIC_ACQUIRE) != 0 && eng_progress_xm(qp, now_ns))
		return;
	pi = __atomic_load_n(&qp->sq_pi, __ATOMIC_ACQUIRE);
	avail = (pi - qp->sq_ci) & HW_QP_COUNTER_MASK;
	while (avail != 0) {
		bool waiting = __atomic_load_n(&qp->rnr_deadline, __ATOMIC_ACQUIRE) != HW_QP_NO_DEADLINE;
		struct eng_wqe w;
		uint32_t nbb = eng_load(qp, avail, &w);
		struct eng_res res;
		uint32_t sig_errs = 0;

		if (__builtin_expect(qp->sig_pipe, 0)) {
			if (hw_qp_sig_held(qp) && hw_qp_state_of(qp) != HW_QP_ERR)
				return; /* drained after a signature error: the rest waits for the release */
			sig_errs = hw_sig_thread_errs();
		}
		if (hw_qp_state_of(qp) == HW_QP_ERR) {
			res = eng_fail(HW_CQE_SYNDROME_WR_FLUSH_ERR);
		} else if (nbb == 0) {
			res = eng_fail(HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);
		} else {
			if (__builtin_expect(__atomic_load_n(&qp->pace, __ATOMIC_RELAXED) != NULL, 0)) {
				if (!eng_exec_paced(qp, &w, &res))
					return; /* waits for tokens (hw_pace.h) */
			} else {
				res = eng_exec(qp, &w);
			}
			if (__builtin_expect(res.rnr, 0)) {
				if (res.retry ? eng_retry_wait(qp, now_ns, waiting) : eng_rnr_wait(qp, now_ns, waiting))
					return;
				res = eng_fail(res.retry ? HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR
							 : HW_CQE_SYNDROME_RNR_RETRY_EXC_ERR);
			}
		}
		if (waiting)
			__atomic_store_n(&qp->rnr_deadline, HW_QP_NO_DEADLINE, __ATOMIC_RELEASE);
		if (res.synd != 0 || (w.fm_ce_se & ENG_CE_SIGNALED)) {
			eng_req_cqe(qp, w.idx, w.opcode, res);
			if (__builtin_expect(res.tm_fin, 0))
				eng_tm_fin(qp, w.tm_fin);
		}
		if (res.synd != 0 && hw_qp_state_of(qp) != HW_QP_ERR)
			eng_qp_error(qp, &w, nbb, res.synd);
		if (nbb == 0)
			nbb = avail; /* no usable size: the rest of the posted work goes with it */
		__atomic_store_n(&qp->sq_ci, (qp->sq_ci + nbb) & HW_QP_COUNTER_MASK, __ATOMIC_RELEASE);
		avail -= nbb;
		if (__builtin_expect(qp->sig_pipe, 0) && hw_sig_thread_errs() != sig_errs)
			hw_qp_sig_hold(qp);
	}
}

void hw_qp_fail_sq(struct hw_qp *qp)
{
	struct hw_cqe_fields f = { .opcode = HW_CQE_REQ_ERR, .qpn = qp->qpn, .srqn = qp->uidx,
				   .syndrome = HW_CQE_SYNDROME_LOCAL_QP_OP_ERR,
				   .wqe_counter = (uint16_t)__atomic_load_n(&qp->sq_ci, __ATOMIC_ACQUIRE) };

	hw_qp_set_err(qp);
	(void)hw_cq_push(qp->send_cq, &f); /* a full CQ latches its overrun flag */
}

/*
 * One thread runs a given SQ at a time: the first to raise drivers runs it and
 * goes round again while others asked meanwhile; the others return at once.
 * A kick's time is left in kick_ns for the running thread to see.
 */
static inline __attribute__((always_inline)) void eng_drive(struct hw_qp *qp, uint64_t now_ns)
{
	uint32_t n = 1;

	if (now_ns != 0)
		__atomic_store_n(&qp->kick_ns, now_ns, __ATOMIC_RELEASE);
	/* Sequentially consistent with the receive doorbells (hw_qp_resume_peer), as are the reads of their records. */
	if (__atomic_fetch_add(&qp->drivers, 1, __ATOMIC_SEQ_CST) != 0)
		return;
	hw_epoch_enter(); /* what the WQEs reach stays until they are done (hw_epoch.h) */
	/*
	 * A doorbell nobody else asked during: one pass and the release, two
	 * locked operations in all. A kick (its time in kick_ns) takes the loop.
	 */
	if (now_ns == 0 && __atomic_load_n(&qp->kick_ns, __ATOMIC_ACQUIRE) == 0) {
		uint32_t one = 1;

		if (!eng_fast_pass(qp))
			eng_progress(qp, 0);
		if (__atomic_compare_exchange_n(&qp->drivers, &one, 0, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
			hw_epoch_leave();
			return;
		}
		n = __atomic_sub_fetch(&qp->drivers, 1, __ATOMIC_SEQ_CST); /* others asked meanwhile */
	}
	while (n != 0) {
		/* Most doorbells carry no kick: a plain load spares the locked exchange. */
		uint64_t kicked = __atomic_load_n(&qp->kick_ns, __ATOMIC_ACQUIRE) != 0
					  ? __atomic_exchange_n(&qp->kick_ns, 0, __ATOMIC_ACQ_REL)
					  : 0;

		eng_progress(qp, kicked > now_ns ? kicked : now_ns);
		n = __atomic_sub_fetch(&qp->drivers, n, __ATOMIC_SEQ_CST);
	}
	hw_epoch_leave();
}

void hw_qp_drive(struct hw_qp *qp, uint64_t now_ns)
{
	eng_drive(qp, now_ns);
}

enum hw_status hw_qp_ring_sq(struct hw_qp *qp, uint32_t new_pi)
{
	enum hw_qp_state st;
	uint32_t avail;

	if (qp == NULL || qp->view != NULL)
		return HW_ERR_INVAL;
	st = hw_qp_state_now(qp); /* a state word another process overwrote is ERR now: the work is flushed, not left */
	if (st != HW_QP_RTS && st != HW_QP_ERR)
		return HW_ERR_INVAL;
	new_pi &= HW_QP_COUNTER_MASK;
	avail = (new_pi - __atomic_load_n(&qp->sq_ci, __ATOMIC_ACQUIRE)) & HW_QP_COUNTER_MASK;
	if (avail > eng_sq_bbs(qp))
		return HW_ERR_INVAL;
	__atomic_store_n(&qp->sq_pi, new_pi, __ATOMIC_RELEASE);
	eng_drive(qp, 0);
	return HW_OK;
}
