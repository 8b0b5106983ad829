/*
 * hw_eth — the Ethernet port: SQs that send frames, RQs that receive them,
 * TIRs that name RQs, and the loopback wire between them (hw_eth.h).
 *
 * An SQ runs on its ringing thread: each WQE is copied out of the ring (it
 * may wrap), its frame assembled in the SQ's own buffer (inline header, then
 * gathered data segments, every key checked before the frame leaves), and
 * the frame walked through the steering and, when it reaches the wire, back
 * in through the receive steering to a TIR.
 *
 * Locks: the RQ registry and the TIR table share one rwlock. Delivery holds
 * it for reading from the TIR lookup to the RQ's last CQE, so an RQ cannot
 * be destroyed under a frame; an RQ's own mutex orders the frames of several
 * SQs into its WQEs. The steering lock is never held with this one on the
 * data path (hw_steer_rx returns before delivery); the control path takes
 * them in the order steering, then registry (a rule's TIR check), and a TIR's
 * destruction drops the registry lock before asking the steering.
 *
 * Keys: local memory of this process or another process's shared keys (as
 * the RC engine resolves them). UMR patterns and remote memory have no local
 * address and are refused as protection errors here.
 */
#include <endian.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hw_eng_thread.h"
#include "hw_eth.h"
#include "hw_pace.h"
#include "hw_prm.h"
#include "hw_qp.h"
#include "hw_rss.h"
#include "hw_steer.h"

#define ETH_COUNTER_MASK 0xffffu
#define ETH_MAX_DS 63 /* the 6-bit ds field */
#define ETH_MAX_BBS ((ETH_MAX_DS * HW_WQE_DS_BYTES + HW_SEND_WQE_BB - 1) / HW_SEND_WQE_BB)
#define ETH_BUCKETS 64
#define ETH_RQ_MAX_SEGS ((1u << HW_ETH_RQ_LOG_STRIDE_MAX) / sizeof(struct hw_wqe_data_seg))
#define ETH_CE_SIGNALED HW_WQE_CTRL_CQ_UPDATE /* CQ_UPDATE and CQ_UPDATE_AND_EQE share this bit */
#define ETH_TIRN_MAX 0xffffffu

struct hw_eth_sq {
	uint32_t sqn;
	uint32_t pd_id;
	struct hw_cq *cq;
	uint32_t log_size;
	uint8_t *ring;
	uint32_t *dbrec;
	uint32_t ci;  /* basic blocks, 16 bits used */
	bool stopped; /* an error CQE went out: no more doorbells */
	/* A paced SQ (hw_pace.h): run under run_lock by its doorbell and the engine thread's timer. */
	struct hw_pace *pace;
	pthread_mutex_t run_lock;
	uint32_t pi;	  /* the last rung counter */
	bool waited;	  /* the WQE at ci waits for tokens */
	struct hw_pace_timer timer;
	uint8_t frame[HW_ETH_FRAME_MAX];
};

struct hw_eth_rq {
	struct hw_eth_rq *next; /* in its registry bucket */
	uint32_t rqn;
	uint32_t pd_id;
	struct hw_cq *cq;
	uint32_t log_size;
	uint32_t log_stride;
	uint8_t *ring;
	uint32_t *dbrec;
	pthread_mutex_t lock; /* frames of several SQs take WQEs in turn */
	uint32_t ci;	      /* under lock */
};

struct eth_tir {
	struct eth_tir *next;
	uint32_t tirn;
	uint32_t rqn;	    /* a direct TIR's */
	uint32_t n_rqs;	    /* an indirect (RSS) TIR's table: 0 for a direct TIR */
	uint32_t *rqns;
	struct hw_rss_conf rss;
	bool closing; /* hw_eth_tir_destroy is checking the steering: new rules may not name it */
};

static pthread_rwlock_t eth_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct hw_eth_rq *eth_rqs[ETH_BUCKETS];
static struct eth_tir *eth_tirs[ETH_BUCKETS];
static uint32_t eth_tir_next = 1; /* never reused: a stale TIR number finds nothing */

static _Atomic uint64_t st_tx_frames, st_tx_dropped, st_rx_frames, st_rx_dropped, st_rx_oob;

static void stat_inc(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

void hw_eth_get_stats(struct hw_eth_stats *s)
{
	s->tx_frames = atomic_load_explicit(&st_tx_frames, memory_order_relaxed);
	s->tx_dropped = atomic_load_explicit(&st_tx_dropped, memory_order_relaxed);
	s->rx_frames = atomic_load_explicit(&st_rx_frames, memory_order_relaxed);
	s->rx_dropped = atomic_load_explicit(&st_rx_dropped, memory_order_relaxed);
	s->rx_out_of_buffer = atomic_load_explicit(&st_rx_oob, memory_order_relaxed);
}

/*
 * A data segment's memory, as the RC engine reaches it: a key of this
 * process, or on a miss one another process shared. NULL when the domain
 * may not take that access or the key has no local address.
 */
static uint8_t *eth_key_ptr(uint32_t lkey, uint32_t pd_id, uint64_t addr, uint32_t len, uint32_t access)
{
	const struct hw_mkey *mk = hw_mkey_lookup(lkey);
	uint8_t *p = NULL;

	if (__builtin_expect(mk == NULL, 0))
		mk = hw_mkey_resolve(lkey);
	if (mk == NULL || hw_mkey_check(mk, pd_id, addr, len, access, &p) != HW_OK)
		return NULL;
	return p;
}

/* ---- Registry: RQs by number, TIRs ---- */

static struct hw_eth_rq *rq_find(uint32_t rqn)
{
	struct hw_eth_rq *rq = eth_rqs[rqn % ETH_BUCKETS];

	while (rq != NULL && rq->rqn != rqn)
		rq = rq->next;
	return rq;
}

static struct eth_tir *tir_find(uint32_t tirn)
{
	struct eth_tir *t = eth_tirs[tirn % ETH_BUCKETS];

	while (t != NULL && t->tirn != tirn)
		t = t->next;
	return t;
}

static void tir_unlink(struct eth_tir *t)
{
	struct eth_tir **l = &eth_tirs[t->tirn % ETH_BUCKETS];

	while (*l != t)
		l = &(*l)->next;
	*l = t->next;
}

static void tir_free(struct eth_tir *t)
{
	free(t->rqns);
	free(t);
}

/* Numbers t and enters it, once every RQ it names exists; frees it on failure. */
static enum hw_status tir_insert(struct eth_tir *t, uint32_t *tirn)
{
	enum hw_status st = HW_OK;

	pthread_rwlock_wrlock(&eth_lock);
	for (uint32_t i = 0; i < (t->n_rqs != 0 ? t->n_rqs : 1); i++)
		if (rq_find(t->n_rqs != 0 ? t->rqns[i] : t->rqn) == NULL)
			st = HW_ERR_KEY;
	if (st == HW_OK && eth_tir_next > ETH_TIRN_MAX)
		st = HW_ERR_NOMEM;
	if (st != HW_OK) {
		pthread_rwlock_unlock(&eth_lock);
		tir_free(t);
		return st;
	}
	t->tirn = eth_tir_next++;
	t->next = eth_tirs[t->tirn % ETH_BUCKETS];
	eth_tirs[t->tirn % ETH_BUCKETS] = t;
	*tirn = t->tirn;
	pthread_rwlock_unlock(&eth_lock);
	return HW_OK;
}

enum hw_status hw_eth_tir_create(uint32_t rqn, uint32_t *tirn)
{
	struct eth_tir *t;

	if (tirn == NULL)
		return HW_ERR_INVAL;
	t = calloc(1, sizeof(*t));
	if (t == NULL)
		return HW_ERR_NOMEM;
	t->rqn = rqn & 0xffffffu;
	return tir_insert(t, tirn);
}

enum hw_status hw_eth_tir_create_rss(const struct hw_rss_conf *conf, const uint32_t *rqns, uint32_t n, uint32_t *tirn)
{
	struct eth_tir *t;

	if (conf == NULL || rqns == NULL || tirn == NULL || n == 0 || n > HW_ETH_RSS_TABLE_MAX || (n & (n - 1)) != 0)
		return HW_ERR_INVAL;
	t = calloc(1, sizeof(*t));
	if (t != NULL)
		t->rqns = calloc(n, sizeof(*t->rqns));
	if (t == NULL || t->rqns == NULL) {
		free(t);
		return HW_ERR_NOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		t->rqns[i] = rqns[i] & 0xffffffu;
	t->n_rqs = n;
	t->rss = *conf;
	return tir_insert(t, tirn);
}

bool hw_eth_tir_exists(uint32_t tirn)
{
	const struct eth_tir *t;
	bool live;

	pthread_rwlock_rdlock(&eth_lock);
	t = tir_find(tirn);
	live = t != NULL && !t->closing;
	pthread_rwlock_unlock(&eth_lock);
	return live;
}

/*
 * Two steps, so that the steering is asked without the registry lock held:
 * marked closing, a rule can no longer be created naming it (its check runs
 * under the steering's write lock, which the in-use question waits for).
 */
enum hw_status hw_eth_tir_destroy(uint32_t tirn)
{
	struct eth_tir *t;

	pthread_rwlock_wrlock(&eth_lock);
	t = tir_find(tirn);
	if (t == NULL || t->closing) {
		pthread_rwlock_unlock(&eth_lock);
		return HW_ERR_KEY;
	}
	t->closing = true;
	pthread_rwlock_unlock(&eth_lock);
	if (hw_steer_tir_in_use(tirn)) {
		pthread_rwlock_wrlock(&eth_lock);
		t->closing = false;
		pthread_rwlock_unlock(&eth_lock);
		return HW_ERR_INVAL;
	}
	pthread_rwlock_wrlock(&eth_lock);
	tir_unlink(t);
	pthread_rwlock_unlock(&eth_lock);
	tir_free(t);
	return HW_OK;
}

/* ---- RQ ---- */

static bool eth_aligned(const void *p, uintptr_t a)
{
	return p != NULL && ((uintptr_t)p & (a - 1)) == 0;
}

static bool rq_attr_ok(const struct hw_eth_rq_attr *a)
{
	return a->pd != NULL && a->cq != NULL && a->log_size <= HW_ETH_LOG_WQ_MAX &&
	       a->log_stride >= HW_ETH_RQ_LOG_STRIDE_MIN && a->log_stride <= HW_ETH_RQ_LOG_STRIDE_MAX &&
	       eth_aligned(a->ring, HW_WQE_DS_BYTES) && eth_aligned(a->dbrec, sizeof(uint32_t));
}

enum hw_status hw_eth_rq_create(const struct hw_eth_rq_attr *attr, struct hw_eth_rq **out)
{
	struct hw_eth_rq *rq;
	uint32_t b;

	if (attr == NULL || out == NULL || !rq_attr_ok(attr))
		return HW_ERR_INVAL;
	rq = calloc(1, sizeof(*rq));
	if (rq == NULL)
		return HW_ERR_NOMEM;
	rq->rqn = attr->rqn & 0xffffffu;
	rq->pd_id = hw_pd_id(attr->pd);
	rq->cq = attr->cq;
	rq->log_size = attr->log_size;
	rq->log_stride = attr->log_stride;
	rq->ring = attr->ring;
	rq->dbrec = attr->dbrec;
	pthread_mutex_init(&rq->lock, NULL);
	b = rq->rqn % ETH_BUCKETS;
	pthread_rwlock_wrlock(&eth_lock);
	if (rq_find(rq->rqn) != NULL)
		goto taken;
	rq->next = eth_rqs[b];
	eth_rqs[b] = rq;
	pthread_rwlock_unlock(&eth_lock);
	*out = rq;
	return HW_OK;
taken:
	pthread_rwlock_unlock(&eth_lock);
	pthread_mutex_destroy(&rq->lock);
	free(rq);
	return HW_ERR_INVAL;
}

void hw_eth_rq_destroy(struct hw_eth_rq *rq)
{
	struct hw_eth_rq **l;

	if (rq == NULL)
		return;
	/* The write lock waits out every delivery into it. */
	pthread_rwlock_wrlock(&eth_lock);
	l = &eth_rqs[rq->rqn % ETH_BUCKETS];
	while (*l != rq)
		l = &(*l)->next;
	*l = rq->next;
	pthread_rwlock_unlock(&eth_lock);
	pthread_mutex_destroy(&rq->lock);
	free(rq);
}

uint32_t hw_eth_rq_num(const struct hw_eth_rq *rq)
{
	return rq->rqn;
}

/* The WQE at the consumer counter, or NULL when the program posted none. */
static const struct hw_wqe_data_seg *rq_head(const struct hw_eth_rq *rq)
{
	uint32_t pi = be32toh(__atomic_load_n(rq->dbrec, __ATOMIC_ACQUIRE)) & ETH_COUNTER_MASK;
	uint32_t posted = (pi - rq->ci) & ETH_COUNTER_MASK;

	if (posted == 0 || posted > (1u << rq->log_size))
		return NULL;
	return (const void *)(rq->ring + ((size_t)(rq->ci & ((1u << rq->log_size) - 1)) << rq->log_stride));
}

/* One scatter entry of a receive WQE. */
struct rq_span {
	uint8_t *p;
	uint32_t len;
};

/* The WQE's segments up to the invalid-lkey terminator: 0 or an error syndrome; *room their bytes. */
static uint8_t rq_spans(const struct hw_eth_rq *rq, const struct hw_wqe_data_seg *d, struct rq_span *s,
			uint32_t *n, uint64_t *room)
{
	uint32_t nseg = (1u << rq->log_stride) / sizeof(*d);

	*n = 0;
	*room = 0;
	for (uint32_t i = 0; i < nseg && hw_data_seg_lkey(&d[i]) != HW_RQ_INVALID_LKEY; i++) {
		uint32_t len = hw_data_seg_len(&d[i]);
		uint8_t *p;

		if (len == 0)
			continue;
		p = eth_key_ptr(hw_data_seg_lkey(&d[i]), rq->pd_id, hw_data_seg_addr(&d[i]), len,
				HW_ACCESS_LOCAL_WRITE);
		if (p == NULL)
			return HW_CQE_SYNDROME_LOCAL_PROT_ERR;
		s[(*n)++] = (struct rq_span){ .p = p, .len = len };
		*room += len;
	}
	return 0;
}

static void rq_scatter(const struct rq_span *s, const uint8_t *frame, uint32_t len)
{
	for (uint32_t i = 0; len != 0; i++) {
		uint32_t k = len < s[i].len ? len : s[i].len;

		memcpy(s[i].p, frame, k);
		frame += k;
		len -= k;
	}
}

/* A frame into the RQ's next WQE: a RESP_SEND or RESP_ERR CQE, or counted out of buffer. */
static void rq_receive(struct hw_eth_rq *rq, const uint8_t *frame, uint32_t len, uint32_t tag)
{
	struct rq_span s[ETH_RQ_MAX_SEGS];
	struct hw_cqe_fields f = { .opcode = HW_CQE_RESP_SEND, .qpn = rq->rqn, .byte_cnt = len, .flow_tag = tag };
	const struct hw_wqe_data_seg *wqe;
	uint64_t room;
	uint32_t n;
	uint8_t synd;

	pthread_mutex_lock(&rq->lock);
	wqe = rq_head(rq);
	if (wqe == NULL) {
		pthread_mutex_unlock(&rq->lock);
		stat_inc(&st_rx_oob);
		return;
	}
	synd = rq_spans(rq, wqe, s, &n, &room);
	if (synd == 0 && room < len)
		synd = HW_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	if (synd == 0)
		rq_scatter(s, frame, len);
	if (synd != 0) {
		f.opcode = HW_CQE_RESP_ERR;
		f.syndrome = synd;
		f.byte_cnt = 0;
		f.flow_tag = 0;
	}
	f.wqe_counter = (uint16_t)rq->ci;
	rq->ci = (rq->ci + 1) & ETH_COUNTER_MASK;
	(void)hw_cq_push(rq->cq, &f); /* a full CQ latches its overrun: the CQE is lost, as on the card */
	pthread_mutex_unlock(&rq->lock);
	if (synd == 0)
		stat_inc(&st_rx_frames);
}

/* ---- The wire ---- */

/* The RQ an indirect TIR's hash picks: entry hash & (size - 1) of its table. */
static uint32_t tir_rss_rqn(const struct eth_tir *t, const uint8_t *frame, uint32_t len)
{
	uint8_t fields[HW_STEER_MATCH_BYTES];

	hw_steer_parse(frame, len, fields);
	return t->rqns[hw_rss_hash(&t->rss, fields) & (t->n_rqs - 1)];
}

/* Through TIR tirn to its RQ, tagged; a TIR or RQ that is gone drops the frame. */
static void eth_deliver(uint32_t tirn, const uint8_t *frame, uint32_t len, uint32_t tag)
{
	const struct eth_tir *t;
	struct hw_eth_rq *rq = NULL;

	pthread_rwlock_rdlock(&eth_lock);
	t = tir_find(tirn);
	if (t != NULL)
		rq = rq_find(t->n_rqs != 0 ? tir_rss_rqn(t, frame, len) : t->rqn);
	if (rq != NULL)
		rq_receive(rq, frame, len, tag);
	pthread_rwlock_unlock(&eth_lock);
	if (rq == NULL)
		stat_inc(&st_rx_dropped);
}

/* The same bytes to each TIR of the verdict (a dest array's copies), with its tag. */
static void eth_deliver_all(const struct hw_steer_verdict *v, const uint8_t *frame, uint32_t len)
{
	for (uint32_t i = 0; i < v->n_tirs; i++)
		eth_deliver(v->tirns[i], frame, len, v->flow_tag);
}

/* A frame an SQ sent (in a buffer of cap bytes, which steering may edit): the transmit steering, the wire, the receive steering. */
static void eth_transmit(uint8_t *frame, uint32_t len, uint32_t cap)
{
	struct hw_steer_frame f = { .buf = frame, .len = len, .cap = cap };
	struct hw_steer_verdict v = hw_steer_tx(&f);

	if (v.type == HW_STEER_ACT_DROP) {
		stat_inc(&st_tx_dropped);
		return;
	}
	if (v.type == HW_STEER_ACT_TIR) {
		eth_deliver_all(&v, f.buf, f.len);
		return;
	}
	stat_inc(&st_tx_frames);
	v = hw_steer_rx(&f);
	if (v.type == HW_STEER_ACT_TIR)
		eth_deliver_all(&v, f.buf, f.len);
	else
		stat_inc(&st_rx_dropped);
}

/* ---- SQ ---- */

static void sq_timer_fn(void *arg);

static bool sq_attr_ok(const struct hw_eth_sq_attr *a)
{
	return a->pd != NULL && a->cq != NULL && a->log_size <= HW_ETH_LOG_WQ_MAX &&
	       eth_aligned(a->ring, HW_SEND_WQE_BB) && eth_aligned(a->dbrec, sizeof(uint32_t));
}

enum hw_status hw_eth_sq_create(const struct hw_eth_sq_attr *attr, struct hw_eth_sq **out)
{
	struct hw_eth_sq *sq;

	if (attr == NULL || out == NULL || !sq_attr_ok(attr))
		return HW_ERR_INVAL;
	sq = calloc(1, sizeof(*sq));
	if (sq == NULL)
		return HW_ERR_NOMEM;
	sq->sqn = attr->sqn & 0xffffffu;
	sq->pd_id = hw_pd_id(attr->pd);
	sq->cq = attr->cq;
	sq->log_size = attr->log_size;
	sq->ring = attr->ring;
	sq->dbrec = attr->dbrec;
	pthread_mutex_init(&sq->run_lock, NULL);
	sq->timer.fn = sq_timer_fn;
	sq->timer.arg = sq;
	*out = sq;
	return HW_OK;
}

void hw_eth_sq_destroy(struct hw_eth_sq *sq)
{
	if (sq == NULL)
		return;
	hw_eth_sq_set_pace(sq, NULL);
	pthread_mutex_destroy(&sq->run_lock);
	free(sq);
}

uint32_t hw_eth_sq_num(const struct hw_eth_sq *sq)
{
	return sq->sqn;
}

/* A WQE as copied out of the ring. */
struct sq_wqe {
	uint8_t b[ETH_MAX_BBS * HW_SEND_WQE_BB];
	uint32_t end; /* bytes the ds count covers */
	uint16_t idx;
	uint8_t opcode;
	uint8_t fm_ce_se;
};

/* Copies the WQE at the consumer counter; the basic blocks it spans, 0 when its ds count is unusable. */
static uint32_t sq_load(const struct hw_eth_sq *sq, uint32_t avail, struct sq_wqe *w)
{
	uint32_t bbs = 1u << sq->log_size, pos = sq->ci & (bbs - 1);
	const struct hw_wqe_ctrl_seg *ctrl = (const void *)(sq->ring + (size_t)pos * HW_SEND_WQE_BB);
	uint32_t ds = hw_ctrl_ds(ctrl);
	uint32_t nbb = (ds * HW_WQE_DS_BYTES + HW_SEND_WQE_BB - 1) / HW_SEND_WQE_BB;
	uint32_t first;

	w->opcode = hw_ctrl_opcode(ctrl);
	w->fm_ce_se = ctrl->fm_ce_se;
	w->idx = (uint16_t)sq->ci;
	w->end = ds * HW_WQE_DS_BYTES;
	if (ds == 0 || nbb > avail)
		return 0;
	first = pos + nbb <= bbs ? nbb : bbs - pos;
	memcpy(w->b, ctrl, (size_t)first * HW_SEND_WQE_BB);
	memcpy(w->b + (size_t)first * HW_SEND_WQE_BB, sq->ring, (size_t)(nbb - first) * HW_SEND_WQE_BB);
	return nbb;
}

/* Appends n bytes to the frame: LOCAL_LENGTH_ERR past the largest frame. */
static uint8_t sq_append(struct hw_eth_sq *sq, uint32_t *len, const uint8_t *p, uint64_t n)
{
	if (n > HW_ETH_FRAME_MAX - *len)
		return HW_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	memcpy(sq->frame + *len, p, n);
	*len += (uint32_t)n;
	return 0;
}

/* One segment after the inline header: inline data or a data segment read through the SQ's domain. */
static uint8_t sq_segment(struct hw_eth_sq *sq, const struct sq_wqe *w, uint32_t *off, uint32_t *len)
{
	const struct hw_wqe_inl_seg *inl = (const void *)(w->b + *off);
	const struct hw_wqe_data_seg *d = (const void *)(w->b + *off);
	int is_inl;
	uint32_t n = hw_inl_seg_len(inl, &is_inl);
	const uint8_t *p;

	if (is_inl) {
		if (n > w->end - *off - sizeof(*inl))
			return HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
		*off += (uint32_t)((sizeof(*inl) + n + HW_WQE_DS_BYTES - 1) & ~(HW_WQE_DS_BYTES - 1ul));
		return sq_append(sq, len, (const uint8_t *)(inl + 1), n);
	}
	*off += sizeof(*d);
	n = hw_data_seg_len(d);
	if (n == 0)
		return 0;
	p = eth_key_ptr(hw_data_seg_lkey(d), sq->pd_id, hw_data_seg_addr(d), n, HW_ACCESS_LOCAL_READ);
	if (p == NULL)
		return HW_CQE_SYNDROME_LOCAL_PROT_ERR;
	return sq_append(sq, len, p, n);
}

/* The WQE's frame into sq->frame: 0 and its length, or the error syndrome. */
static uint8_t sq_frame(struct hw_eth_sq *sq, const struct sq_wqe *w, uint32_t *len)
{
	const struct hw_eth_seg *eth = (const void *)(w->b + sizeof(struct hw_wqe_ctrl_seg));
	uint32_t isz, off;
	uint8_t synd;

	if (w->opcode != HW_WQE_SEND || w->end < sizeof(struct hw_wqe_ctrl_seg) + sizeof(*eth))
		return HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	isz = hw_eth_seg_inline_sz(eth);
	off = (uint32_t)(sizeof(struct hw_wqe_ctrl_seg) + sizeof(*eth)) + hw_eth_seg_inline_ds(isz) * HW_WQE_DS_BYTES;
	if (off > w->end)
		return HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	*len = 0;
	/* The inline bytes are contiguous from inline_hdr_start on. */
	synd = sq_append(sq, len, eth->inline_hdr_start, isz);
	while (synd == 0 && off < w->end)
		synd = sq_segment(sq, w, &off, len);
	if (synd == 0 && *len < HW_ETH_FRAME_MIN)
		synd = HW_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	return synd;
}

static void sq_cqe(const struct hw_eth_sq *sq, const struct sq_wqe *w, uint8_t synd, uint32_t len)
{
	struct hw_cqe_fields f = {
		.opcode = synd != 0 ? HW_CQE_REQ_ERR : HW_CQE_REQ,
		.qpn = sq->sqn,
		.wqe_counter = w->idx,
		.byte_cnt = synd != 0 ? 0 : len,
		.syndrome = synd,
		.wqe_opcode = synd != 0 ? w->opcode : HW_WQE_SEND,
	};

	(void)hw_cq_push(sq->cq, &f); /* a full CQ latches its overrun flag */
}

/* Executes one WQE; the basic blocks it took, *synd its outcome and *len the frame's length. */
static uint32_t sq_exec_one(struct hw_eth_sq *sq, uint32_t avail, uint8_t *synd, uint32_t *flen)
{
	struct sq_wqe w;
	uint32_t nbb = sq_load(sq, avail, &w), len = 0;

	if (nbb == 0) {
		nbb = avail; /* no usable size: the rest of the posted work goes with it */
		*synd = HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	} else {
		*synd = sq_frame(sq, &w, &len);
	}
	if (*synd == 0)
		eth_transmit(sq->frame, len, sizeof(sq->frame));
	if (*synd != 0 || (w.fm_ce_se & ETH_CE_SIGNALED))
		sq_cqe(sq, &w, *synd, len);
	*flen = len;
	return nbb;
}

/*
 * A paced SQ, run lock held: each WQE starts when the bucket holds a token
 * (its frame's bytes are then taken); until then the SQ stops there and the
 * engine thread's timer runs it again at the time the bucket says.
 */
static void sq_run_paced(struct hw_eth_sq *sq)
{
	uint32_t avail = (sq->pi - sq->ci) & ETH_COUNTER_MASK;

	while (avail != 0 && !sq->stopped) {
		uint64_t now = hw_pace_now(), at;
		uint32_t nbb, len;
		uint8_t synd;

		if (sq->pace != NULL && !hw_pace_ready(sq->pace, now, &at)) {
			sq->waited = true;
			hw_pace_timer_arm(&sq->timer, at);
			return;
		}
		nbb = sq_exec_one(sq, avail, &synd, &len);
		if (sq->pace != NULL)
			hw_pace_charge(sq->pace, synd == 0 ? len : 0, sq->waited, now);
		sq->waited = false;
		sq->ci = (sq->ci + nbb) & ETH_COUNTER_MASK;
		avail -= nbb;
		if (synd != 0)
			sq->stopped = true; /* what follows the failed WQE is not executed */
	}
}

static void sq_timer_fn(void *arg)
{
	struct hw_eth_sq *sq = arg;

	pthread_mutex_lock(&sq->run_lock);
	sq_run_paced(sq);
	pthread_mutex_unlock(&sq->run_lock);
}

/* Out of line: an unpaced SQ's doorbell never comes here. */
static __attribute__((noinline)) enum hw_status sq_ring_paced(struct hw_eth_sq *sq, uint32_t pi)
{
	pthread_mutex_lock(&sq->run_lock);
	if (sq->stopped) {
		pthread_mutex_unlock(&sq->run_lock);
		return HW_ERR_INVAL;
	}
	sq->pi = pi;
	sq_run_paced(sq);
	pthread_mutex_unlock(&sq->run_lock);
	return HW_OK;
}

void hw_eth_sq_set_pace(struct hw_eth_sq *sq, struct hw_pace *p)
{
	struct hw_pace *old;

	if (p != NULL)
		hw_pace_get(p);
	pthread_mutex_lock(&sq->run_lock);
	old = sq->pace;
	__atomic_store_n(&sq->pace, p, __ATOMIC_RELEASE);
	if (old == NULL)
		sq->pi = sq->ci; /* the doorbells so far ran whole */
	if (old != NULL || p != NULL)
		sq_run_paced(sq); /* a WQE that waited goes by the new bucket, or at once */
	pthread_mutex_unlock(&sq->run_lock);
	if (p == NULL && old != NULL)
		hw_pace_timer_cancel(&sq->timer);
	if (old == NULL && p != NULL)
		hw_eng_get(); /* the engine thread runs the timer */
	if (old != NULL) {
		hw_pace_put(old);
		if (p == NULL)
			hw_eng_put();
	}
}

void hw_eth_sq_pace_stats(struct hw_eth_sq *sq, struct hw_pace_stats *s)
{
	pthread_mutex_lock(&sq->run_lock);
	if (sq->pace != NULL)
		hw_pace_stats(sq->pace, s);
	else
		*s = (struct hw_pace_stats){ 0 };
	pthread_mutex_unlock(&sq->run_lock);
}

enum hw_status hw_eth_sq_ring(struct hw_eth_sq *sq, uint32_t pi)
{
	uint32_t avail;

	if (sq == NULL || sq->stopped)
		return HW_ERR_INVAL;
	avail = (pi - sq->ci) & ETH_COUNTER_MASK;
	if (avail > (1u << sq->log_size))
		return HW_ERR_INVAL;
	if (__builtin_expect(__atomic_load_n(&sq->pace, __ATOMIC_RELAXED) != NULL, 0))
		return sq_ring_paced(sq, pi);
	while (avail != 0) {
		uint8_t synd;
		uint32_t len, nbb = sq_exec_one(sq, avail, &synd, &len);

		sq->ci = (sq->ci + nbb) & ETH_COUNTER_MASK;
		avail -= nbb;
		if (synd != 0) {
			sq->stopped = true; /* what follows the failed WQE is not executed */
			break;
		}
	}
	return HW_OK;
}
