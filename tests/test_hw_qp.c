/*
 * Queue pairs of the emulated device and the engine behind their doorbell.
 *
 * Two connected QPs in one process. The test is the program: it writes WQEs
 * into the send ring in the mlx5 layout (basic blocks, wrapping at the ring's
 * end), receive WQEs into the receive ring, the producer counters into the
 * doorbell record, rings the doorbell and polls CQEs by owner bit. The same
 * for an SRQ (kept as an mlx5 driver keeps its free list), UD datagrams and
 * RNR waits, which are driven with a synthetic clock passed to hw_qp_kick.
 */
#include <endian.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "hw_cq.h"
#include "hw_ids.h"
#include "hw_mem.h"
#include "hw_prm.h"
#include "hw_qp.h"
#include "hw_srq.h"

#define MEM_LEN (256u * 1024)
#define LOG_SQ 6
#define LOG_RQ 5
#define LOG_RQ_STRIDE 6 /* four data segments */
#define LOG_CQ 10
#define ALL_RIGHTS (HW_ACCESS_LOCAL_WRITE | HW_ACCESS_REMOTE_READ | HW_ACCESS_REMOTE_WRITE | HW_ACCESS_REMOTE_ATOMIC)

struct poller {
	uint8_t *buf;
	uint32_t *dbrec;
	uint32_t cnt;
	uint32_t ci;
};

struct side {
	struct hw_cq *scq, *rcq;
	struct hw_qp *qp;
	uint8_t *ring;	  /* given rings (pair_opts.given_rings), freed after the QP */
	uint32_t *dbrec;
	uint8_t *mem;
	uint32_t key;
	struct poller sc, rc;
	uint32_t sq_pi, rq_pi;
};

/* What a test asks of the pair beyond the defaults (zero: two RC QPs, RQs, no RNR retries). */
struct pair_opts {
	enum hw_qp_type type;
	uint32_t qkey;
	uint8_t min_rnr_timer; /* both sides */
	uint8_t rnr_retry;
	bool srq;	       /* side 1 receives from P.srq */
	bool given_rings;      /* side 0's rings and doorbell record are the test's memory */
};

static struct {
	struct hw_pd *pd;
	struct side s[2];
	struct hw_srq *srq;
	uint32_t srq_limit_events;
} P;

static void pair_teardown(void *arg)
{
	(void)arg;
	for (int i = 0; i < 2; i++) {
		struct side *s = &P.s[i];

		hw_qp_destroy(s->qp);
		free(s->ring);
		free(s->dbrec);
		hw_cq_destroy(s->scq);
		hw_cq_destroy(s->rcq);
		if (s->key != 0)
			hw_mkey_dereg(s->key);
		free(s->mem);
	}
	hw_srq_destroy(P.srq);
	hw_pd_free(P.pd);
	memset(&P, 0, sizeof(P));
}

static void poller_init(struct poller *p, struct hw_cq *cq)
{
	p->buf = (uint8_t *)hw_cq_ring(cq);
	p->dbrec = hw_cq_dbrec(cq);
	p->cnt = 1u << hw_cq_log_size(cq);
	p->ci = 0;
}

static void srq_limit_cb(void *arg, struct hw_srq *srq)
{
	(void)arg;
	if (srq == P.srq)
		P.srq_limit_events++;
}

static int side_setup(struct side *s, uint32_t qpn, const struct pair_opts *o, bool on_srq)
{
	struct hw_cq_attr ca = { .log_size = LOG_CQ };
	struct hw_qp_attr qa = { .qpn = qpn, .pd = P.pd, .log_sq_size = LOG_SQ, .log_rq_size = LOG_RQ,
				 .log_rq_stride = LOG_RQ_STRIDE, .type = o->type, .qkey = o->qkey,
				 .min_rnr_timer = o->min_rnr_timer, .rnr_retry = o->rnr_retry,
				 .srq = on_srq ? P.srq : NULL, .lid = (uint16_t)(qpn + 0x100) };

	if (hw_cq_create(&ca, &s->scq) != HW_OK || hw_cq_create(&ca, &s->rcq) != HW_OK)
		return -1;
	qa.send_cq = s->scq;
	qa.recv_cq = s->rcq;
	if (o->given_rings && qpn == 0x11) {
		size_t len = ((size_t)1 << (LOG_RQ + LOG_RQ_STRIDE)) + ((size_t)64 << LOG_SQ);

		s->ring = aligned_alloc(HW_QP_RING_ALIGN, len);
		s->dbrec = aligned_alloc(64, 64);
		if (s->ring == NULL || s->dbrec == NULL)
			return -1;
		memset(s->ring, 0, len);
		memset(s->dbrec, 0, 64);
		qa.ring = s->ring;
		qa.dbrec = s->dbrec;
	}
	if (hw_qp_create(&qa, &s->qp) != HW_OK)
		return -1;
	/* The RNR cases drive the clock themselves (hw_qp_kick); the engine thread leaves them alone. */
	if (hw_qp_set_caller_timers(s->qp, true) != HW_OK)
		return -1;
	s->mem = calloc(1, MEM_LEN);
	if (s->mem == NULL)
		return -1;
	if (hw_mkey_reg(P.pd, s->mem, (uintptr_t)s->mem, MEM_LEN, ALL_RIGHTS, &s->key) != HW_OK)
		return -1;
	poller_init(&s->sc, s->scq);
	poller_init(&s->rc, s->rcq);
	return 0;
}

#define LOG_SRQ 3
#define LOG_SRQ_STRIDE 6 /* the next segment and three data segments */

/* Two QPs connected to each other, both in RTS. */
static int pair_setup_opts(const struct pair_opts *o)
{
	struct hw_srq_attr sa = { .srqn = 0x77, .log_size = LOG_SRQ, .log_stride = LOG_SRQ_STRIDE,
				  .limit_cb = srq_limit_cb };

	memset(&P, 0, sizeof(P));
	th_defer(pair_teardown, NULL);
	P.pd = hw_pd_alloc(0);
	if (P.pd == NULL)
		return -1;
	sa.pd = P.pd;
	if (o->srq && hw_srq_create(&sa, &P.srq) != HW_OK)
		return -1;
	if (side_setup(&P.s[0], 0x11, o, false) != 0 || side_setup(&P.s[1], 0x22, o, o->srq) != 0)
		return -1;
	hw_qp_connect(P.s[0].qp, P.s[1].qp);
	hw_qp_connect(P.s[1].qp, P.s[0].qp);
	for (int i = 0; i < 2; i++)
		for (enum hw_qp_state st = HW_QP_INIT; st <= HW_QP_RTS; st++)
			if (hw_qp_modify(P.s[i].qp, st) != HW_OK)
				return -1;
	return 0;
}

static int pair_setup(void)
{
	static const struct pair_opts none;

	return pair_setup_opts(&none);
}

/* The CQE software owns at the consumer index, taken; NULL when none. */
static const uint8_t *poll_cqe(struct poller *p)
{
	const uint8_t *cqe = p->buf + (size_t)(p->ci & (p->cnt - 1)) * 64;
	uint8_t op_own = __atomic_load_n(&cqe[63], __ATOMIC_ACQUIRE);

	if ((op_own >> 4) == 0xf || ((op_own & 1) ^ !!(p->ci & p->cnt)))
		return NULL;
	p->ci++;
	__atomic_store_n(&p->dbrec[0], htobe32(p->ci & 0xffffff), __ATOMIC_RELEASE);
	return cqe;
}

static uint32_t rd32(const uint8_t *p, size_t off)
{
	return (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 | (uint32_t)p[off + 2] << 8 | p[off + 3];
}

static uint16_t rd16(const uint8_t *p, size_t off)
{
	return (uint16_t)(p[off] << 8 | p[off + 1]);
}

static uint8_t cqe_op(const uint8_t *c)
{
	return c[63] >> 4;
}

/* A WQE under construction, in 16-byte units. */
struct wqe {
	uint8_t b[1008];
	uint32_t ds;
};

static void w_ctrl(struct wqe *w, uint8_t opcode, uint8_t fm, uint32_t imm)
{
	memset(w, 0, sizeof(*w));
	/* index and ds are filled in by post() */
	w->b[3] = opcode;
	w->b[11] = fm;
	memcpy(w->b + 12, &(uint32_t){ htobe32(imm) }, 4);
	w->ds = 1;
}

static void w_raddr(struct wqe *w, const void *raddr, uint32_t rkey)
{
	hw_raddr_seg_set((void *)(w->b + w->ds * 16), (uintptr_t)raddr, rkey);
	w->ds++;
}

static void w_data(struct wqe *w, const void *addr, uint32_t len, uint32_t lkey)
{
	hw_data_seg_set((void *)(w->b + w->ds * 16), len, lkey, (uintptr_t)addr);
	w->ds++;
}

static void w_atomic(struct wqe *w, uint64_t swap_add, uint64_t compare)
{
	hw_atomic_seg_set((void *)(w->b + w->ds * 16), swap_add, compare);
	w->ds++;
}

static void w_inline(struct wqe *w, const void *data, uint32_t len)
{
	uint8_t *p = w->b + w->ds * 16;

	hw_inl_seg_set((void *)p, len);
	memcpy(p + 4, data, len);
	w->ds += (4 + len + 15) / 16;
}

/* Copies the WQE into side i's send ring at its producer counter; returns its index. */
static uint16_t post(int i, struct wqe *w)
{
	struct side *s = &P.s[i];
	uint8_t *sq = hw_qp_sq_buf(s->qp);
	uint32_t nbb = (w->ds * 16 + 63) / 64;
	uint16_t idx = (uint16_t)s->sq_pi;
	uint32_t opc = be32toh(*(uint32_t *)(void *)w->b) & 0xff;

	hw_ctrl_seg_set((void *)w->b, idx, (uint8_t)opc, 0, 0x11u * (uint32_t)(i + 1), w->b[11], (uint8_t)w->ds,
		    *(uint32_t *)(void *)(w->b + 12));
	for (uint32_t k = 0; k < nbb; k++)
		memcpy(sq + (size_t)((s->sq_pi + k) & ((1u << LOG_SQ) - 1)) * 64, w->b + k * 64, 64);
	s->sq_pi = (s->sq_pi + nbb) & 0xffff;
	__atomic_store_n(&hw_qp_dbrec(s->qp)[HW_QP_DBR_SND], htobe32(s->sq_pi), __ATOMIC_RELEASE);
	return idx;
}

static enum hw_status ring(int i)
{
	return hw_qp_ring_sq(P.s[i].qp, P.s[i].sq_pi);
}

/* A receive WQE on side i with up to four segments (len 0 entries end the list). */
static uint16_t post_recv(int i, const uint8_t *const addr[], const uint32_t len[], uint32_t n, uint32_t lkey)
{
	struct side *s = &P.s[i];
	uint8_t *slot = hw_qp_rq_buf(s->qp) + ((size_t)(s->rq_pi & ((1u << LOG_RQ) - 1)) << LOG_RQ_STRIDE);
	uint16_t idx = (uint16_t)s->rq_pi;

	for (uint32_t k = 0; k < 4; k++) {
		struct hw_wqe_data_seg *d = (void *)(slot + k * 16);

		if (k < n)
			hw_data_seg_set(d, len[k], lkey, (uintptr_t)addr[k]);
		else
			hw_data_seg_set(d, 0, HW_RQ_INVALID_LKEY, 0);
	}
	s->rq_pi = (s->rq_pi + 1) & 0xffff;
	__atomic_store_n(&hw_qp_dbrec(s->qp)[HW_QP_DBR_RCV], htobe32(s->rq_pi), __ATOMIC_RELEASE);
	return idx;
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t k = 0; k < n; k++)
		p[k] = (uint8_t)(seed * 131 + k * 7 + (k >> 8));
}

/* Checks a successful requester CQE. */
static int req_ok(const uint8_t *c, uint16_t idx, uint32_t qpn)
{
	return c != NULL && cqe_op(c) == HW_CQE_REQ && rd16(c, 60) == idx && (rd32(c, 56) & 0xffffff) == qpn;
}

static int err_cqe(const uint8_t *c, uint8_t op, uint8_t synd, uint16_t idx)
{
	return c != NULL && cqe_op(c) == op && c[55] == synd && rd16(c, 60) == idx;
}

static const uint32_t sizes[] = { 0, 1, 3, 8, 63, 64, 65, 1000, 4096, 65537 };

/* RDMA_WRITE of each size, at unaligned offsets: exact bytes land, the bytes around are untouched. */
static void test_write_sizes(void)
{
	CHECK(pair_setup() == 0);
	uint8_t *src = P.s[0].mem, *dst = P.s[1].mem;
	uint8_t *ref = malloc(MEM_LEN);

	CHECK(ref != NULL);
	th_defer(free, ref);
	for (unsigned int k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t n = sizes[k];
		struct wqe w;
		uint16_t idx;
		const uint8_t *c;

		fill(src, MEM_LEN, k);
		fill(dst, MEM_LEN, k + 100);
		memcpy(ref, dst, MEM_LEN);
		memcpy(ref + 7, src + 3, n);
		w_ctrl(&w, HW_WQE_RDMA_WRITE, HW_WQE_CTRL_CQ_UPDATE, 0);
		w_raddr(&w, dst + 7, P.s[1].key);
		if (n != 0) /* as rdma-core: a zero-length entry is left out */
			w_data(&w, src + 3, n, P.s[0].key);
		idx = post(0, &w);
		CHECK_ERR(ring(0), HW_OK);
		c = poll_cqe(&P.s[0].sc);
		CHECK(req_ok(c, idx, 0x11));
		CHECK(poll_cqe(&P.s[0].sc) == NULL && poll_cqe(&P.s[1].rc) == NULL);
		CHECK(memcmp(dst, ref, MEM_LEN) == 0);
	}
}

/*
 * Rings and a doorbell record the creator gives (as FlexIO places a QP's in
 * device memory): the device reads the WQEs there and the record there, and
 * WRITE, READ and SEND work as with rings of its own. Refused: one without
 * the other, misaligned, or shared.
 */
static void test_given_rings(void)
{
	static const struct pair_opts o = { .given_rings = true };
	uint8_t *src, *dst;
	struct wqe w;
	uint16_t idx;

	CHECK(pair_setup_opts(&o) == 0);
	CHECK(hw_qp_sq_buf(P.s[0].qp) == P.s[0].ring + ((size_t)1 << (LOG_RQ + LOG_RQ_STRIDE)));
	CHECK(hw_qp_dbrec(P.s[0].qp) == P.s[0].dbrec);
	src = P.s[0].mem;
	dst = P.s[1].mem;
	for (uint32_t k = 0; k < 3 * (1u << LOG_SQ); k++) { /* round the given ring a few times */
		uint32_t n = 1 + (k * 977) % 5000;

		fill(src, n, k);
		w_ctrl(&w, HW_WQE_RDMA_WRITE, HW_WQE_CTRL_CQ_UPDATE, 0);
		w_raddr(&w, dst + 64, P.s[1].key);
		w_data(&w, src, n, P.s[0].key);
		idx = post(0, &w);
		CHECK_ERR(ring(0), HW_OK);
		CHECK(req_ok(poll_cqe(&P.s[0].sc), idx, 0x11));
		CHECK(memcmp(dst + 64, src, n) == 0);
		/* The record the device read is the given one. */
		CHECK(be32toh(__atomic_load_n(&P.s[0].dbrec[HW_QP_DBR_SND], __ATOMIC_ACQUIRE)) == P.s[0].sq_pi);
	}
	fill(dst + 9000, 300, 41);
	w_ctrl(&w, HW_WQE_RDMA_READ, HW_WQE_CTRL_CQ_UPDATE, 0);
	w_raddr(&w, dst + 9000, P.s[1].key);
	w_data(&w, src + 100, 300, P.s[0].key);
	idx = post(0, &w);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(req_ok(poll_cqe(&P.s[0].sc), idx, 0x11));
	CHECK(memcmp(src + 100, dst + 9000, 300) == 0);
	{
		struct hw_qp_attr a = { .qpn = 0x33, .pd = P.pd, .send_cq = P.s[0].scq, .recv_cq = P.s[0].rcq,
					.log_sq_size = LOG_SQ, .log_rq_size = LOG_RQ, .log_rq_stride = LOG_RQ_STRIDE };
		struct hw_qp *q = NULL;

		a.ring = P.s[0].ring;
		CHECK_ERR(hw_qp_create(&a, &q), HW_ERR_INVAL); /* no record */
		a.dbrec = P.s[0].dbrec;
		a.ring = P.s[0].ring + 8;
		CHECK_ERR(hw_qp_create(&a, &q), HW_ERR_INVAL); /* misaligned ring */
		a.ring = P.s[0].ring;
		a.dbrec = P.s[0].dbrec + 1;
		CHECK_ERR(hw_qp_create(&a, &q), HW_ERR_INVAL); /* misaligned record */
		a.dbrec = P.s[0].dbrec;
		a.shared = true;
		CHECK_ERR(hw_qp_create(&a, &q), HW_ERR_INVAL); /* given memory is not shared memory */
		CHECK(q == NULL);
	}
}

/*
 * A WRITE whose source and destination overlap in one registration (both
 * QPs share the domain): the bytes land as memmove would move them, for every
 * size the engine moves without a call and a few above.
 */
static void test_write_overlapping(void)
{
	static const int shifts[] = { -17, -8, -1, 1, 5, 16, 31 };

	CHECK(pair_setup() == 0);
	uint8_t *mem = P.s[1].mem;
	uint8_t *ref = malloc(256);

	CHECK(ref != NULL);
	th_defer(free, ref);
	for (uint32_t n = 1; n <= 80; n++)
		for (unsigned int k = 0; k < sizeof(shifts) / sizeof(shifts[0]); k++) {
			uint8_t *src = mem + 64, *dst = mem + 64 + shifts[k];
			struct wqe w;
			uint16_t idx;

			fill(mem, 256, n + k);
			memcpy(ref, mem, 256);
			memmove(ref + 64 + shifts[k], ref + 64, n);
			w_ctrl(&w, HW_WQE_RDMA_WRITE, HW_WQE_CTRL_CQ_UPDATE, 0);
			w_raddr(&w, dst, P.s[1].key);
			w_data(&w, src, n, P.s[1].key);
			idx = post(0, &w);
			CHECK_ERR(ring(0), HW_OK);
			CHECK(req_ok(poll_cqe(&P.s[0].sc), idx, 0x11));
			CHECK(memcmp(mem, ref, 256) == 0);
		}
}

/* A WRITE gathering from three entries, one of them inline data. */
static void test_write_gather_inline(void)
{
	CHECK(pair_setup() == 0);
	uint8_t *src = P.s[0].mem, *dst = P.s[1].mem;
	static const char inl[] = "inline bytes!";
	struct wqe w;

	fill(src, 4096, 1);
	w_ctrl(&w, HW_WQE_RDMA_WRITE, HW_WQE_CTRL_CQ_UPDATE, 0);
	w_raddr(&w, dst + 1, P.s[1].key);
	w_data(&w, src + 5, 17, P.s[0].key);
	w_inline(&w, inl, sizeof(inl));
	w_data(&w, src + 100, 300, P.s[0].key);
	uint16_t idx = post(0, &w);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(req_ok(poll_cqe(&P.s[0].sc), idx, 0x11));
	CHECK(dst[0] == 0 && memcmp(dst + 1, src + 5, 17) == 0);
	CHECK(memcmp(dst + 18, inl, sizeof(inl)) == 0);
	CHECK(memcmp(dst + 18 + sizeof(inl), src + 100, 300) == 0 && dst[18 + sizeof(inl) + 300] == 0);
}

/* RDMA_READ of each size into two local entries; byte_cnt is the length read. */
static void test_read_sizes(void)
{
	CHECK(pair_setup() == 0);
	uint8_t *local = P.s[0].mem, *remote = P.s[1].mem;
	uint8_t *ref = malloc(MEM_LEN);

	CHECK(ref != NULL);
	th_defer(free, ref);
	for (unsigned int k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		uint32_t n = sizes[k], a = n / 3, b = n - a;
		struct wqe w;
		const uint8_t *c;

		fill(remote, MEM_LEN, k + 7);
		memset(local, 0xee, MEM_LEN);
		memcpy(ref, local, MEM_LEN);
		memcpy(ref + 11, remote + 5, a);
		memcpy(ref + 20000, remote + 5 + a, b);
		w_ctrl(&w, HW_WQE_RDMA_READ, HW_WQE_CTRL_CQ_UPDATE, 0);
		w_raddr(&w, remote + 5, P.s[1].key);
		if (a != 0)
			w_data(&w, local + 11, a, P.s[0].key);
		if (b != 0)
			w_data(&w, local + 20000, b, P.s[0].key);
		uint16_t idx = post(0, &w);
		CHECK_ERR(ring(0), HW_OK);
		c = poll_cqe(&P.s[0].sc);
		CHECK(req_ok(c, idx, 0x11) && rd32(c, 44) == n);
		CHECK(memcmp(local, ref, MEM_LEN) == 0);
	}
}

/* SEND and SEND_IMM scatter into the posted receive; the responder's CQE says what arrived. */
static void test_send_and_imm(void)
{
	CHECK(pair_setup() == 0);
	uint8_t *src = P.s[0].mem, *dst = P.s[1].mem;
	const uint8_t *addr[3] = { dst + 1, dst + 1000, dst + 5000 };
	const uint32_t len[3] = { 10, 7, 500 };
	const uint8_t *c;
	struct wqe w;

	fill(src, 4096, 3);
	for (unsigned int k = 0; k < sizeof(sizes) / sizeof(sizes[0]) && sizes[k] <= 517; k++) {
		uint32_t n = sizes[k];
		bool imm = k % 2;

		memset(dst, 0, 8192);
		uint16_t ridx = post_recv(1, addr, len, 3, P.s[1].key);
		w_ctrl(&w, imm ? HW_WQE_SEND_IMM : HW_WQE_SEND, HW_WQE_CTRL_CQ_UPDATE | HW_WQE_CTRL_SOLICITED,
		       imm ? 0xabc00000u + k : 0);
		if (n > 2) {
			w_data(&w, src + 9, 2, P.s[0].key);
			w_data(&w, src + 300, n - 2, P.s[0].key);
		} else if (n != 0) {
			w_data(&w, src + 9, n, P.s[0].key);
		}
		uint16_t idx = post(0, &w);
		CHECK_ERR(ring(0), HW_OK);
		CHECK(req_ok(poll_cqe(&P.s[0].sc), idx, 0x11));
		c = poll_cqe(&P.s[1].rc);
		CHECK(c != NULL && cqe_op(c) == (imm ? HW_CQE_RESP_SEND_IMM : HW_CQE_RESP_SEND));
		CHECK(rd32(c, 44) == n && rd16(c, 60) == ridx && (rd32(c, 56) & 0xffffff) == 0x22);
		CHECK((c[63] & 2) != 0); /* solicited */
		if (imm)
			CHECK(rd32(c, 36) == 0xabc00000u + k);
		/* The reference: the message laid over the three entries in order. */
		uint8_t msg[600], got[600];
		uint32_t m = 0;
		if (n > 2) {
			memcpy(msg, src + 9, 2);
			memcpy(msg + 2, src + 300, n - 2);
		} else {
			memcpy(msg, src + 9, n);
		}
		for (int s = 0; s < 3; s++)
			for (uint32_t q = 0; q < len[s]; q++)
				got[m++] = addr[s][q];
		CHECK(memcmp(got, msg, n) == 0);
		for (uint32_t q = n; q < m; q++)
			CHECK(got[q] == 0);
		CHECK(dst[0] == 0 && dst[11] == 0 && dst[1007] == 0 && dst[5500] == 0);
	}
}

/* An inline SEND, and a SEND that signals nothing still completes at the responder. */
static void test_send_inline_unsignaled(void)
{
	CHECK(pair_setup() == 0);
	uint8_t *dst = P.s[1].mem;
	const uint8_t *addr[1] = { dst + 3 };
	const uint32_t len[1] = { 64 };
	static const char msg[] = "hello over an inline send";
	struct wqe w;

	post_recv(1, addr, len, 1, P.s[1].key);
	w_ctrl(&w, HW_WQE_SEND, 0, 0);
	w_inline(&w, msg, sizeof(msg));
	post(0, &w);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(poll_cqe(&P.s[0].sc) == NULL);
	const uint8_t *c = poll_cqe(&P.s[1].rc);
	CHECK(c != NULL && cqe_op(c) == HW_CQE_RESP_SEND && rd32(c, 44) == sizeof(msg) && (c[63] & 2) == 0);
	CHECK(memcmp(dst + 3, msg, sizeof(msg)) == 0 && dst[2] == 0 && dst[3 + sizeof(msg)] == 0);
}

/* RDMA_WRITE_IMM: the bytes land where the requester said; a receive is consumed for the immediate. */
static void test_write_imm(void)
{
	CHECK(pair_setup() == 0);
	uint8_t *src = P.s[0].mem, *dst = P.s[1].mem;
	const uint8_t *addr[1] = { dst + 60000 };
	const uint32_t len[1] = { 16 };
	struct wqe w;

	fill(src, 4096, 9);
	post_recv(1, addr, len, 1, P.s[1].key);
	uint16_t r1 = post_recv(1, addr, len, 1, P.s[1].key);
	for (int k = 0; k < 2; k++) {
		uint32_t n = k == 0 ? 333 : 0;

		w_ctrl(&w, HW_WQE_RDMA_WRITE_IMM, HW_WQE_CTRL_CQ_UPDATE, 0x12345678u + k);
		w_raddr(&w, dst + 77, P.s[1].key);
		if (n != 0)
			w_data(&w, src + 1, n, P.s[0].key);
		uint16_t idx = post(0, &w);
		CHECK_ERR(ring(0), HW_OK);
		CHECK(req_ok(poll_cqe(&P.s[0].sc), idx, 0x11));
		const uint8_t *c = poll_cqe(&P.s[1].rc);
		CHECK(c != NULL && cqe_op(c) == HW_CQE_RESP_WR_IMM && rd32(c, 44) == n);
		CHECK(rd32(c, 36) == 0x12345678u + k && rd16(c, 60) == (uint16_t)(r1 - 1 + k));
	}
	CHECK(memcmp(dst + 77, src + 1, 333) == 0 && dst[76] == 0 && dst[77 + 333] == 0);
	CHECK(dst[60000] == 0); /* the receive's buffer is not written */
}

static uint16_t post_atomic(uint8_t op, uint64_t *target, uint64_t *result, uint64_t swap_add, uint64_t compare)
{
	struct wqe w;

	w_ctrl(&w, op, HW_WQE_CTRL_CQ_UPDATE, 0);
	w_raddr(&w, target, P.s[1].key);
	w_atomic(&w, swap_add, compare);
	w_data(&w, result, 8, P.s[0].key);
	return post(0, &w);
}

static void test_atomics(void)
{
	CHECK(pair_setup() == 0);
	uint64_t *target = (uint64_t *)(void *)(P.s[1].mem + 64);
	uint64_t *result = (uint64_t *)(void *)(P.s[0].mem + 128);
	const uint8_t *c;

	*target = 100;
	uint16_t i1 = post_atomic(HW_WQE_ATOMIC_CS, target, result, 555, 100); /* matches: swaps */
	uint16_t i2 = post_atomic(HW_WQE_ATOMIC_CS, target, result + 1, 777, 100); /* no match */
	uint16_t i3 = post_atomic(HW_WQE_ATOMIC_FA, target, result + 2, 0xffffffffffffffffull, 0); /* - 1 */
	CHECK_ERR(ring(0), HW_OK);
	c = poll_cqe(&P.s[0].sc);
	CHECK(req_ok(c, i1, 0x11) && rd32(c, 44) == 8);
	CHECK(req_ok(poll_cqe(&P.s[0].sc), i2, 0x11));
	CHECK(req_ok(poll_cqe(&P.s[0].sc), i3, 0x11));
	CHECK(result[0] == 100 && result[1] == 555 && result[2] == 555 && *target == 554);
}

/* Unsignaled WQEs write no CQE; the signaled one after them reports its own index. */
static void test_unsignaled(void)
{
	CHECK(pair_setup() == 0);
	struct wqe w;

	fill(P.s[0].mem, 64, 2);
	w_ctrl(&w, HW_WQE_RDMA_WRITE, 0, 0);
	w_raddr(&w, P.s[1].mem, P.s[1].key);
	w_data(&w, P.s[0].mem, 64, P.s[0].key);
	post(0, &w);
	w_ctrl(&w, HW_WQE_NOP, 0, 0);
	post(0, &w);
	w_ctrl(&w, HW_WQE_NOP, HW_WQE_CTRL_CQ_UPDATE, 0);
	uint16_t idx = post(0, &w);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(req_ok(poll_cqe(&P.s[0].sc), idx, 0x11) && idx == 2);
	CHECK(poll_cqe(&P.s[0].sc) == NULL);
	CHECK(memcmp(P.s[1].mem, P.s[0].mem, 64) == 0);
}

/* Posts an unsignaled WRITE and NOP behind a failing WQE; checks the failure and both flushes. */
static void expect_fail_and_flush(uint16_t bad_idx, uint8_t bad_op, uint8_t synd)
{
	struct wqe w;

	w_ctrl(&w, HW_WQE_RDMA_WRITE, 0, 0);
	w_raddr(&w, P.s[1].mem + 100, P.s[1].key);
	w_data(&w, P.s[0].mem, 8, P.s[0].key);
	uint16_t f1 = post(0, &w);
	w_ctrl(&w, HW_WQE_NOP, HW_WQE_CTRL_CQ_UPDATE, 0);
	uint16_t f2 = post(0, &w);
	CHECK_ERR(ring(0), HW_OK);
	const uint8_t *c = poll_cqe(&P.s[0].sc);
	CHECK(err_cqe(c, HW_CQE_REQ_ERR, synd, bad_idx) && (rd32(c, 56) >> 24) == bad_op);
	CHECK((rd32(c, 56) & 0xffffff) == 0x11);
	CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, f1));
	CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, f2));
	CHECK(poll_cqe(&P.s[0].sc) == NULL);
	CHECK(hw_qp_state(P.s[0].qp) == HW_QP_ERR);
	/* Work posted after the error is flushed at its doorbell too. */
	w_ctrl(&w, HW_WQE_NOP, 0, 0);
	uint16_t f3 = post(0, &w);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, f3));
	for (uint32_t k = 0; k < 200; k++)
		CHECK(P.s[1].mem[k] == 0xcd);
}

static void dereg_cb(void *arg)
{
	hw_mkey_dereg((uint32_t)(uintptr_t)arg);
}

static void pair_setup_err_case(void)
{
	memset(P.s[0].mem, 0xab, 4096);
	memset(P.s[1].mem, 0xcd, 4096);
}

/* A WRITE past the end of the remote key, and one to a key without remote write. */
static void test_remote_access_errors(void)
{
	for (int variant = 0; variant < 3; variant++) {
		CHECK(pair_setup() == 0);
		pair_setup_err_case();
		uint32_t rokey = 0;
		struct wqe w;

		CHECK_ERR(hw_mkey_reg(P.pd, P.s[1].mem, (uintptr_t)P.s[1].mem, 4096, HW_ACCESS_REMOTE_READ, &rokey),
			  HW_OK);
		w_ctrl(&w, variant == 2 ? HW_WQE_ATOMIC_FA : HW_WQE_RDMA_WRITE, HW_WQE_CTRL_CQ_UPDATE, 0);
		if (variant == 0)
			w_raddr(&w, P.s[1].mem + MEM_LEN - 10, P.s[1].key); /* 10 bytes left, 16 asked */
		else
			w_raddr(&w, P.s[1].mem + 8, rokey);
		if (variant == 2)
			w_atomic(&w, 1, 0);
		w_data(&w, P.s[0].mem, variant == 2 ? 8 : 16, P.s[0].key);
		uint16_t bad = post(0, &w);
		expect_fail_and_flush(bad, variant == 2 ? HW_WQE_ATOMIC_FA : HW_WQE_RDMA_WRITE,
				      HW_CQE_SYNDROME_REMOTE_ACCESS_ERR);
		for (uint32_t k = MEM_LEN - 16; k < MEM_LEN; k++)
			CHECK(P.s[1].mem[k] == 0);
		CHECK(P.s[0].mem[0] == 0xab);
		hw_mkey_dereg(rokey);
		th_undefer(pair_teardown, NULL);
		pair_teardown(NULL);
	}
}

/* A READ whose remote key lacks the read right changes no local byte. */
static void test_read_access_error(void)
{
	CHECK(pair_setup() == 0);
	pair_setup_err_case();
	uint32_t wokey = 0;
	struct wqe w;

	CHECK_ERR(hw_mkey_reg(P.pd, P.s[1].mem, (uintptr_t)P.s[1].mem, 4096, HW_ACCESS_REMOTE_WRITE, &wokey), HW_OK);
	th_defer(dereg_cb, (void *)(uintptr_t)wokey);
	w_ctrl(&w, HW_WQE_RDMA_READ, 0, 0);
	w_raddr(&w, P.s[1].mem, wokey);
	w_data(&w, P.s[0].mem + 200, 64, P.s[0].key);
	uint16_t bad = post(0, &w);
	expect_fail_and_flush(bad, HW_WQE_RDMA_READ, HW_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	for (uint32_t k = 0; k < 4096; k++)
		CHECK(P.s[0].mem[k] == 0xab);
}

/* A bad or stale lkey: local protection error, nothing sent. */
static void test_bad_lkey(void)
{
	CHECK(pair_setup() == 0);
	pair_setup_err_case();
	struct wqe w;

	w_ctrl(&w, HW_WQE_RDMA_WRITE, 0, 0);
	w_raddr(&w, P.s[1].mem, P.s[1].key);
	w_data(&w, P.s[0].mem, 16, P.s[0].key ^ 0x1); /* wrong tag */
	uint16_t bad = post(0, &w);
	expect_fail_and_flush(bad, HW_WQE_RDMA_WRITE, HW_CQE_SYNDROME_LOCAL_PROT_ERR);
}

static void pd_free_cb(void *arg)
{
	hw_pd_free(arg);
}

/* A key of another protection domain is refused like a bad one. */
static void test_lkey_of_other_pd(void)
{
	CHECK(pair_setup() == 0);
	pair_setup_err_case();
	struct hw_pd *other = hw_pd_alloc(0);
	uint32_t key = 0;
	struct wqe w;

	CHECK(other != NULL);
	th_defer(pd_free_cb, other);
	CHECK_ERR(hw_mkey_reg(other, P.s[0].mem, (uintptr_t)P.s[0].mem, 4096, ALL_RIGHTS, &key), HW_OK);
	th_defer(dereg_cb, (void *)(uintptr_t)key);
	w_ctrl(&w, HW_WQE_RDMA_WRITE, 0, 0);
	w_raddr(&w, P.s[1].mem, P.s[1].key);
	w_data(&w, P.s[0].mem, 16, key);
	uint16_t bad = post(0, &w);
	expect_fail_and_flush(bad, HW_WQE_RDMA_WRITE, HW_CQE_SYNDROME_LOCAL_PROT_ERR);
}

/* A two-block WQE that starts in the ring's last block continues at its start. */
static void test_wqe_wraps_ring_end(void)
{
	CHECK(pair_setup() == 0);
	uint8_t *src = P.s[0].mem, *dst = P.s[1].mem;
	static const char inl[] = "wrapped inline";
	struct wqe w;

	fill(src, 4096, 5);
	for (uint32_t k = 0; k < (1u << LOG_SQ) - 1; k++) {
		w_ctrl(&w, HW_WQE_NOP, 0, 0);
		post(0, &w);
	}
	CHECK_ERR(ring(0), HW_OK);
	w_ctrl(&w, HW_WQE_RDMA_WRITE, HW_WQE_CTRL_CQ_UPDATE, 0);
	w_raddr(&w, dst, P.s[1].key);
	w_data(&w, src, 40, P.s[0].key);
	w_data(&w, src + 1000, 24, P.s[0].key);
	w_inline(&w, inl, sizeof(inl));
	w_data(&w, src + 2000, 100, P.s[0].key);
	CHECK(w.ds > 4);
	uint16_t idx = post(0, &w);
	CHECK(idx == (1u << LOG_SQ) - 1);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(req_ok(poll_cqe(&P.s[0].sc), idx, 0x11));
	CHECK(memcmp(dst, src, 40) == 0 && memcmp(dst + 40, src + 1000, 24) == 0);
	CHECK(memcmp(dst + 64, inl, sizeof(inl)) == 0 && memcmp(dst + 64 + sizeof(inl), src + 2000, 100) == 0);
	CHECK(dst[64 + sizeof(inl) + 100] == 0);
}

/* A READ into memory whose key lacks local write is a local protection error. */
static void test_read_into_readonly(void)
{
	CHECK(pair_setup() == 0);
	pair_setup_err_case();
	uint32_t rkey = 0;
	struct wqe w;

	CHECK_ERR(hw_mkey_reg(P.pd, P.s[0].mem, (uintptr_t)P.s[0].mem, 4096, HW_ACCESS_LOCAL_READ, &rkey), HW_OK);
	th_defer(dereg_cb, (void *)(uintptr_t)rkey);
	w_ctrl(&w, HW_WQE_RDMA_READ, 0, 0);
	w_raddr(&w, P.s[1].mem, P.s[1].key);
	w_data(&w, P.s[0].mem, 16, rkey);
	uint16_t bad = post(0, &w);
	expect_fail_and_flush(bad, HW_WQE_RDMA_READ, HW_CQE_SYNDROME_LOCAL_PROT_ERR);
	CHECK(P.s[0].mem[0] == 0xab);
}

/* No receive posted and rnr_retry 0 (the default): the RNR error comes at once. */
static void test_send_without_receive(void)
{
	CHECK(pair_setup() == 0);
	pair_setup_err_case();
	struct wqe w;

	w_ctrl(&w, HW_WQE_SEND, HW_WQE_CTRL_CQ_UPDATE, 0);
	w_data(&w, P.s[0].mem, 16, P.s[0].key);
	uint16_t bad = post(0, &w);
	expect_fail_and_flush(bad, HW_WQE_SEND, HW_CQE_SYNDROME_RNR_RETRY_EXC_ERR);
	CHECK(poll_cqe(&P.s[1].rc) == NULL && hw_qp_state(P.s[1].qp) == HW_QP_RTS);
}

/* A message longer than the receive: both sides fail, the receive completes in error. */
static void test_send_too_long(void)
{
	CHECK(pair_setup() == 0);
	pair_setup_err_case();
	const uint8_t *addr[1] = { P.s[1].mem + 1000 };
	const uint32_t len[1] = { 8 };
	struct wqe w;

	uint16_t r0 = post_recv(1, addr, len, 1, P.s[1].key);
	uint16_t r1 = post_recv(1, addr, len, 1, P.s[1].key);
	w_ctrl(&w, HW_WQE_SEND, 0, 0);
	w_data(&w, P.s[0].mem, 9, P.s[0].key);
	uint16_t bad = post(0, &w);
	expect_fail_and_flush(bad, HW_WQE_SEND, HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
	CHECK(err_cqe(poll_cqe(&P.s[1].rc), HW_CQE_RESP_ERR, HW_CQE_SYNDROME_LOCAL_LENGTH_ERR, r0));
	CHECK(err_cqe(poll_cqe(&P.s[1].rc), HW_CQE_RESP_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, r1));
	CHECK(hw_qp_state(P.s[1].qp) == HW_QP_ERR);
}

/* An unknown opcode, and a ds count running past the posted work. */
static void test_bad_wqe(void)
{
	CHECK(pair_setup() == 0);
	pair_setup_err_case();
	struct wqe w;

	w_ctrl(&w, 0x7f, 0, 0);
	uint16_t bad = post(0, &w);
	expect_fail_and_flush(bad, 0x7f, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);

	th_undefer(pair_teardown, NULL);
	pair_teardown(NULL);
	CHECK(pair_setup() == 0);
	pair_setup_err_case();
	/* A WRITE whose inline segment claims more bytes than its ds count holds. */
	w_ctrl(&w, HW_WQE_RDMA_WRITE, 0, 0);
	w_raddr(&w, P.s[1].mem, P.s[1].key);
	w_inline(&w, "abcd", 4);
	hw_inl_seg_set((void *)(w.b + 32), 40);
	bad = post(0, &w);
	expect_fail_and_flush(bad, HW_WQE_RDMA_WRITE, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR);

	th_undefer(pair_teardown, NULL);
	pair_teardown(NULL);
	CHECK(pair_setup() == 0);
	/* ds says 8 units (two basic blocks) but only one block was posted. */
	w_ctrl(&w, HW_WQE_NOP, HW_WQE_CTRL_CQ_UPDATE, 0);
	w.ds = 1;
	bad = post(0, &w);
	uint8_t *ctrl = hw_qp_sq_buf(P.s[0].qp) + (size_t)bad * 64;
	ctrl[7] = 8;
	CHECK_ERR(ring(0), HW_OK);
	CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, bad));
	CHECK(poll_cqe(&P.s[0].sc) == NULL && hw_qp_state(P.s[0].qp) == HW_QP_ERR);
}

/* The doorbell runs nothing before RTS; the state machine refuses skipped steps. */
/* Connecting by number finds the QP of that number; an unknown number or a UD QP is refused. */
static void test_connect_qpn(void)
{
	CHECK(pair_setup() == 0);
	hw_qp_connect(P.s[0].qp, NULL);
	CHECK_ERR(hw_qp_connect_qpn(P.s[0].qp, 0x999), HW_ERR_KEY);
	CHECK(P.s[0].qp->peer == NULL);
	CHECK_ERR(hw_qp_connect_qpn(P.s[0].qp, 0x22), HW_OK);
	CHECK(P.s[0].qp->peer == P.s[1].qp);
	CHECK_ERR(hw_qp_connect_qpn(NULL, 0x22), HW_ERR_INVAL);
}

static void test_states(void)
{
	CHECK(pair_setup() == 0);
	struct hw_qp *qp = P.s[0].qp;
	struct wqe w;

	CHECK_ERR(hw_qp_modify(qp, HW_QP_RESET), HW_OK);
	P.s[0].sq_pi = 0;
	CHECK_ERR(hw_qp_modify(qp, HW_QP_RTR), HW_ERR_INVAL);
	CHECK(hw_qp_state(qp) == HW_QP_RESET);
	w_ctrl(&w, HW_WQE_NOP, HW_WQE_CTRL_CQ_UPDATE, 0);
	post(0, &w);
	CHECK_ERR(ring(0), HW_ERR_INVAL);
	CHECK_ERR(hw_qp_modify(qp, HW_QP_INIT), HW_OK);
	CHECK_ERR(ring(0), HW_ERR_INVAL);
	CHECK_ERR(hw_qp_modify(qp, HW_QP_RTS), HW_ERR_INVAL);
	CHECK_ERR(hw_qp_modify(qp, HW_QP_RTR), HW_OK);
	CHECK_ERR(ring(0), HW_ERR_INVAL);
	CHECK(poll_cqe(&P.s[0].sc) == NULL);
	CHECK_ERR(hw_qp_modify(qp, HW_QP_RTS), HW_OK);
	CHECK_ERR(ring(0), HW_OK); /* the WQE posted earlier runs now */
	CHECK(req_ok(poll_cqe(&P.s[0].sc), 0, 0x11));
	/* A counter more than a ring ahead is refused. */
	CHECK_ERR(hw_qp_ring_sq(qp, P.s[0].sq_pi + (1u << LOG_SQ) + 1), HW_ERR_INVAL);
	/* A peer not ready to receive: the requester's retries run out. */
	CHECK_ERR(hw_qp_modify(P.s[1].qp, HW_QP_RESET), HW_OK);
	w_ctrl(&w, HW_WQE_RDMA_WRITE, 0, 0);
	w_raddr(&w, P.s[1].mem, P.s[1].key);
	w_data(&w, P.s[0].mem, 4, P.s[0].key);
	uint16_t bad = post(0, &w);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, bad));
	/* Bad attributes. */
	struct hw_qp_attr qa = { .pd = P.pd, .send_cq = P.s[0].scq, .recv_cq = P.s[0].rcq, .log_rq_stride = 3 };
	struct hw_qp *q = NULL;
	CHECK_ERR(hw_qp_create(&qa, &q), HW_ERR_INVAL);
	qa.log_rq_stride = 4;
	qa.log_sq_size = HW_QP_LOG_SQ_MAX + 1;
	CHECK_ERR(hw_qp_create(&qa, &q), HW_ERR_INVAL);
	qa.log_sq_size = 0;
	qa.recv_cq = NULL;
	CHECK_ERR(hw_qp_create(&qa, &q), HW_ERR_INVAL);
	CHECK(q == NULL);
}

/*
 * The QP's state word sits in its block, memory another process of the user
 * may write. Whatever it writes there other than what the owner set, the
 * owner's next doorbell finds the QP in ERR: the WQE completes WR_FLUSH_ERR
 * (never left waiting for a state the owner did not set), the posted
 * receive is flushed, and the word says ERR again. The same word written
 * back unchanged changes nothing.
 */
static void test_state_word_overwritten(void)
{
	static const uint32_t garbage[] = { HW_QP_RESET, HW_QP_INIT, HW_QP_RTR, 0xdeadbeefu, HW_QP_RTS };

	for (size_t g = 0; g < sizeof(garbage) / sizeof(garbage[0]); g++) {
		CHECK(pair_setup() == 0);
		const uint8_t *addr[1] = { P.s[0].mem + 2048 };
		const uint32_t len[1] = { 64 };
		struct wqe w;

		uint16_t r = post_recv(0, addr, len, 1, P.s[0].key);
		__atomic_store_n(&P.s[0].qp->sh->state, garbage[g], __ATOMIC_RELEASE); /* as another process would */
		w_ctrl(&w, HW_WQE_NOP, HW_WQE_CTRL_CQ_UPDATE, 0);
		uint16_t idx = post(0, &w);
		CHECK_ERR(ring(0), HW_OK);
		if (garbage[g] == HW_QP_RTS) {
			CHECK(req_ok(poll_cqe(&P.s[0].sc), idx, 0x11));
			CHECK(hw_qp_state(P.s[0].qp) == HW_QP_RTS);
			continue;
		}
		CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, idx));
		CHECK(poll_cqe(&P.s[0].sc) == NULL);
		CHECK(err_cqe(poll_cqe(&P.s[0].rc), HW_CQE_RESP_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, r));
		CHECK(hw_qp_state(P.s[0].qp) == HW_QP_ERR);
		CHECK(__atomic_load_n(&P.s[0].qp->sh->state, __ATOMIC_ACQUIRE) == HW_QP_ERR);
		/* Its peer is untouched: still RTS, its own work runs. */
		CHECK(hw_qp_state(P.s[1].qp) == HW_QP_RTS);
		/* The owner's RESET takes it back. */
		CHECK_ERR(hw_qp_modify(P.s[0].qp, HW_QP_RESET), HW_OK);
		CHECK(hw_qp_state(P.s[0].qp) == HW_QP_RESET);
	}
}

/* ---- RNR retries ---- */

/* A signaled SEND of 16 bytes and a signaled NOP behind it; the SEND's index returned. */
static uint16_t post_send_and_nop(uint16_t *nop)
{
	struct wqe w;
	uint16_t idx;

	w_ctrl(&w, HW_WQE_SEND, HW_WQE_CTRL_CQ_UPDATE, 0);
	w_data(&w, P.s[0].mem, 16, P.s[0].key);
	idx = post(0, &w);
	w_ctrl(&w, HW_WQE_NOP, HW_WQE_CTRL_CQ_UPDATE, 0);
	*nop = post(0, &w);
	return idx;
}

static void test_rnr_timer_table(void)
{
	CHECK(hw_rnr_timer_ns(0) == 655360000ull);
	CHECK(hw_rnr_timer_ns(1) == 10000ull);
	CHECK(hw_rnr_timer_ns(14) == 1280000ull);
	CHECK(hw_rnr_timer_ns(31) == 491520000ull);
	CHECK(pair_setup() == 0);
	CHECK_ERR(hw_qp_set_rnr(P.s[0].qp, 32, 0), HW_ERR_INVAL);
	CHECK_ERR(hw_qp_set_rnr(P.s[0].qp, 0, 8), HW_ERR_INVAL);
	CHECK_ERR(hw_qp_set_rnr(P.s[0].qp, 31, 7), HW_OK);
	CHECK(P.s[0].qp->sh->min_rnr_timer == 31 && P.s[0].qp->rnr_retry == 7);
	CHECK_ERR(hw_qp_kick(NULL, 1), HW_ERR_INVAL);
	CHECK(hw_qp_deadline(P.s[0].qp) == HW_QP_NO_DEADLINE);
	struct hw_qp_attr qa = { .pd = P.pd, .send_cq = P.s[0].scq, .recv_cq = P.s[0].rcq, .log_rq_stride = 4,
				 .rnr_retry = 8 };
	struct hw_qp *q = NULL;
	CHECK_ERR(hw_qp_create(&qa, &q), HW_ERR_INVAL);
	CHECK(q == NULL);
}

/* rnr_retry 3: the SQ waits; each kick at the deadline is one retry; the third fails it, the NOP is flushed. */
static void test_rnr_retry_finite(void)
{
	struct pair_opts o = { .min_rnr_timer = 14, .rnr_retry = 3 };
	uint64_t t = hw_rnr_timer_ns(14);
	uint16_t nop;

	CHECK(pair_setup_opts(&o) == 0);
	pair_setup_err_case();
	uint16_t idx = post_send_and_nop(&nop);
	CHECK_ERR(ring(0), HW_OK);
	uint64_t d = hw_qp_deadline(P.s[0].qp);
	CHECK(d != HW_QP_NO_DEADLINE);
	CHECK(poll_cqe(&P.s[0].sc) == NULL && hw_qp_state(P.s[0].qp) == HW_QP_RTS);
	/* Before the deadline nothing is counted. */
	CHECK_ERR(hw_qp_kick(P.s[0].qp, d - 1), HW_OK);
	CHECK(hw_qp_deadline(P.s[0].qp) == d);
	CHECK_ERR(ring(0), HW_OK); /* a doorbell while waiting changes nothing either */
	CHECK(hw_qp_deadline(P.s[0].qp) == d);
	for (int retry = 1; retry <= 2; retry++) {
		CHECK_ERR(hw_qp_kick(P.s[0].qp, d), HW_OK);
		CHECK(hw_qp_deadline(P.s[0].qp) == d + t);
		CHECK(poll_cqe(&P.s[0].sc) == NULL);
		d += t;
	}
	CHECK_ERR(hw_qp_kick(P.s[0].qp, d + 5), HW_OK);
	const uint8_t *c = poll_cqe(&P.s[0].sc);
	CHECK(err_cqe(c, HW_CQE_REQ_ERR, HW_CQE_SYNDROME_RNR_RETRY_EXC_ERR, idx) && c[56] == HW_WQE_SEND);
	CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, nop));
	CHECK(poll_cqe(&P.s[0].sc) == NULL && poll_cqe(&P.s[1].rc) == NULL);
	CHECK(hw_qp_deadline(P.s[0].qp) == HW_QP_NO_DEADLINE && hw_qp_state(P.s[0].qp) == HW_QP_ERR);
	CHECK(hw_qp_state(P.s[1].qp) == HW_QP_RTS);
}

/* rnr_retry 7 waits forever; the receive's doorbell resumes the requester, which delivers in order. */
static void test_rnr_retry_infinite_then_receive(void)
{
	struct pair_opts o = { .min_rnr_timer = 1, .rnr_retry = HW_QP_RNR_RETRY_INFINITE };
	const uint8_t *addr[1];
	const uint32_t len[1] = { 64 };
	uint16_t nop;

	CHECK(pair_setup_opts(&o) == 0);
	pair_setup_err_case();
	addr[0] = P.s[1].mem + 500;
	uint16_t idx = post_send_and_nop(&nop);
	CHECK_ERR(ring(0), HW_OK);
	for (int k = 0; k < 1000; k++)
		CHECK_ERR(hw_qp_kick(P.s[0].qp, hw_qp_deadline(P.s[0].qp)), HW_OK);
	CHECK(hw_qp_deadline(P.s[0].qp) != HW_QP_NO_DEADLINE && poll_cqe(&P.s[0].sc) == NULL);
	CHECK(P.s[1].mem[500] == 0xcd);
	uint16_t ridx = post_recv(1, addr, len, 1, P.s[1].key);
	CHECK_ERR(hw_qp_ring_rq(P.s[1].qp, P.s[1].rq_pi), HW_OK);
	CHECK(req_ok(poll_cqe(&P.s[0].sc), idx, 0x11));
	CHECK(req_ok(poll_cqe(&P.s[0].sc), nop, 0x11));
	const uint8_t *c = poll_cqe(&P.s[1].rc);
	CHECK(c != NULL && cqe_op(c) == HW_CQE_RESP_SEND && rd16(c, 60) == ridx && rd32(c, 44) == 16);
	CHECK(memcmp(P.s[1].mem + 500, P.s[0].mem, 16) == 0 && P.s[1].mem[516] == 0xcd);
	CHECK(hw_qp_deadline(P.s[0].qp) == HW_QP_NO_DEADLINE);
	/* Bad receive doorbells. */
	CHECK_ERR(hw_qp_ring_rq(P.s[1].qp, P.s[1].rq_pi + (1u << LOG_RQ) + 1), HW_ERR_INVAL);
	CHECK_ERR(hw_qp_ring_rq(NULL, 0), HW_ERR_INVAL);
}

/* A WRITE_IMM waiting on RNR writes nothing until its receive comes; a kick after it runs the WQE. */
static void test_rnr_write_imm_resume_by_kick(void)
{
	struct pair_opts o = { .min_rnr_timer = 0, .rnr_retry = 2 };
	const uint8_t *addr[1];
	const uint32_t len[1] = { 8 };
	struct wqe w;

	CHECK(pair_setup_opts(&o) == 0);
	pair_setup_err_case();
	addr[0] = P.s[1].mem + 3000;
	w_ctrl(&w, HW_WQE_RDMA_WRITE_IMM, HW_WQE_CTRL_CQ_UPDATE, 0x5151);
	w_raddr(&w, P.s[1].mem + 40, P.s[1].key);
	w_data(&w, P.s[0].mem, 32, P.s[0].key);
	uint16_t idx = post(0, &w);
	CHECK_ERR(ring(0), HW_OK);
	uint64_t d = hw_qp_deadline(P.s[0].qp);
	CHECK(d != HW_QP_NO_DEADLINE);
	CHECK_ERR(hw_qp_kick(P.s[0].qp, d), HW_OK); /* one retry spent, one left */
	CHECK(hw_qp_deadline(P.s[0].qp) == d + hw_rnr_timer_ns(0));
	for (int k = 0; k < 4096; k++)
		CHECK(P.s[1].mem[k] == 0xcd);
	/* The receive is posted without its doorbell call: the next kick finds it. */
	uint16_t ridx = post_recv(1, addr, len, 1, P.s[1].key);
	CHECK_ERR(hw_qp_kick(P.s[0].qp, 1), HW_OK);
	CHECK(req_ok(poll_cqe(&P.s[0].sc), idx, 0x11));
	const uint8_t *c = poll_cqe(&P.s[1].rc);
	CHECK(c != NULL && cqe_op(c) == HW_CQE_RESP_WR_IMM && rd16(c, 60) == ridx && rd32(c, 36) == 0x5151);
	CHECK(memcmp(P.s[1].mem + 40, P.s[0].mem, 32) == 0 && P.s[1].mem[3000] == 0xcd);
}

/* Moving a waiting requester to ERR flushes the waiting WQE and the ones behind it. */
static void test_rnr_wait_then_error(void)
{
	struct pair_opts o = { .rnr_retry = HW_QP_RNR_RETRY_INFINITE };
	uint16_t nop;

	CHECK(pair_setup_opts(&o) == 0);
	uint16_t idx = post_send_and_nop(&nop);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(poll_cqe(&P.s[0].sc) == NULL);
	CHECK_ERR(hw_qp_modify(P.s[0].qp, HW_QP_ERR), HW_OK);
	CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, idx));
	CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, nop));
	CHECK(poll_cqe(&P.s[0].sc) == NULL && hw_qp_deadline(P.s[0].qp) == HW_QP_NO_DEADLINE);
}

/* A CQE the engine thread writes: waited for (a bound against hangs, never a measurement). */
static const uint8_t *wait_cqe(struct poller *p)
{
	for (int ms = 0; ms < 10000; ms++) {
		const uint8_t *c = poll_cqe(p);
		struct timespec ts = { .tv_nsec = 1000000 };

		if (c != NULL)
			return c;
		nanosleep(&ts, NULL);
	}
	return NULL;
}

/* Nobody kicks: the engine thread retries at each deadline and fails the SEND when no receive comes. */
static void test_rnr_timer_by_engine_thread(void)
{
	struct pair_opts o = { .min_rnr_timer = 1, .rnr_retry = 3 };
	uint16_t nop;

	CHECK(pair_setup_opts(&o) == 0);
	CHECK_ERR(hw_qp_set_caller_timers(P.s[0].qp, false), HW_OK);
	CHECK_ERR(hw_qp_set_caller_timers(NULL, false), HW_ERR_INVAL);
	uint16_t idx = post_send_and_nop(&nop);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(err_cqe(wait_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_RNR_RETRY_EXC_ERR, idx));
	CHECK(err_cqe(wait_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, nop));
	CHECK(hw_qp_state(P.s[0].qp) == HW_QP_ERR && hw_qp_deadline(P.s[0].qp) == HW_QP_NO_DEADLINE);
}

/* Shared objects used within one process: numbers this process holds, records published, peers found. */
static void test_shared_in_process(void)
{
	struct hw_pd *pd = hw_pd_alloc(0);
	uint32_t cqn = 0, qpn = 0, srqn = 0;
	struct hw_cq *cq = NULL;
	struct hw_qp *qp = NULL, *v = NULL;
	struct hw_srq *srq = NULL;

	CHECK(pd != NULL);
	th_defer((th_cleanup_fn)hw_pd_free, pd);
	CHECK_ERR(hw_id_alloc(HW_ID_CQN, &cqn), HW_OK);
	CHECK_ERR(hw_id_alloc(HW_ID_QPN, &qpn), HW_OK);
	CHECK_ERR(hw_id_alloc(HW_ID_SRQN, &srqn), HW_OK);
	struct hw_cq_attr ca = { .log_size = 4, .cqn = cqn, .shared = true };
	CHECK_ERR(hw_cq_create(&ca, &cq), HW_OK);
	struct hw_srq_attr sa = { .srqn = srqn, .pd = pd, .log_size = 2, .log_stride = 5, .shared = true };
	CHECK_ERR(hw_srq_create(&sa, &srq), HW_OK);
	struct hw_qp_attr qa = { .qpn = qpn, .pd = pd, .send_cq = cq, .recv_cq = cq, .srq = srq, .log_sq_size = 2,
				 .shared = true };
	CHECK_ERR(hw_qp_create(&qa, &qp), HW_OK);
	/* Its own view, as another process builds one: the same rings and state. */
	CHECK_ERR(hw_qp_attach_num(qpn, &v), HW_OK);
	CHECK(v->sh == qp->sh || memcmp(v->sh, qp->sh, sizeof(*qp->sh)) == 0);
	CHECK(v->srq != NULL && hw_srq_srqn(v->srq) == srqn && hw_cq_cqn(v->recv_cq) == cqn);
	CHECK(hw_qp_view_live(v));
	CHECK_ERR(hw_qp_modify(qp, HW_QP_INIT), HW_OK);
	CHECK(hw_qp_state(v) == HW_QP_INIT);
	CHECK_ERR(hw_qp_ring_sq(v, 0), HW_ERR_INVAL); /* a view is no requester here */
	hw_qp_destroy(qp);
	CHECK(!hw_qp_view_live(v)); /* the record went with it */
	hw_qp_detach(v);
	CHECK_ERR(hw_qp_attach_num(qpn, &v), HW_ERR_KEY);
	CHECK_ERR(hw_srq_destroy(srq), HW_OK);
	hw_cq_destroy(cq);
	CHECK_ERR(hw_id_free(HW_ID_QPN, qpn), HW_OK);
	CHECK_ERR(hw_id_free(HW_ID_CQN, cqn), HW_OK);
	CHECK_ERR(hw_id_free(HW_ID_SRQN, srqn), HW_OK);
	/* A number this process does not hold cannot be published: the shared CQ is refused. */
	ca.cqn = cqn;
	CHECK_ERR(hw_cq_create(&ca, &cq), HW_ERR_KEY);
}

/* A responder gone to RESET while the requester waits: the next retry finds no answer at all. */
static void test_rnr_peer_gone(void)
{
	struct pair_opts o = { .min_rnr_timer = 3, .rnr_retry = HW_QP_RNR_RETRY_INFINITE };
	uint16_t nop;

	CHECK(pair_setup_opts(&o) == 0);
	uint16_t idx = post_send_and_nop(&nop);
	CHECK_ERR(ring(0), HW_OK);
	CHECK_ERR(hw_qp_modify(P.s[1].qp, HW_QP_RESET), HW_OK);
	CHECK_ERR(hw_qp_kick(P.s[0].qp, hw_qp_deadline(P.s[0].qp)), HW_OK);
	CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, idx));
	CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, nop));
}

/* A responder of this process destroyed: the requester's next work finds no one, never freed memory. */
static void test_peer_destroyed_in_process(void)
{
	uint16_t nop, idx;

	CHECK(pair_setup() == 0);
	hw_qp_destroy(P.s[1].qp);
	P.s[1].qp = NULL;
	CHECK(P.s[0].qp->peer == NULL);
	idx = post_send_and_nop(&nop);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, idx));
	CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, nop));
}

/* ---- SRQ ---- */

/* The program's side of an SRQ, as an mlx5 driver keeps it: a free list from head to tail. */
static struct {
	uint32_t head, tail, counter;
} SP;

static struct hw_wqe_srq_next_seg *srq_wqe_at(uint32_t idx)
{
	return (void *)(hw_srq_buf(P.srq) + ((size_t)idx << LOG_SRQ_STRIDE));
}

static void srq_prog_init(void)
{
	SP.head = 0;
	SP.tail = (1u << LOG_SRQ) - 1;
	SP.counter = 0;
}

/* Posts one receive of one entry at the head of the free list; its index, or -1 when the list is full. */
static int srq_post(uint8_t *addr, uint32_t len, uint32_t lkey, bool doorbell)
{
	uint32_t idx = SP.head;
	uint8_t *w = (uint8_t *)srq_wqe_at(idx);

	if (SP.head == SP.tail)
		return -1;
	hw_data_seg_set((void *)(w + 16), len, lkey, (uintptr_t)addr);
	hw_data_seg_set((void *)(w + 32), 0, HW_RQ_INVALID_LKEY, 0);
	SP.head = be16toh(srq_wqe_at(idx)->next_wqe_index);
	SP.counter++;
	if (doorbell)
		return hw_srq_ring(P.srq, SP.counter) == HW_OK ? (int)idx : -2;
	__atomic_store_n(hw_srq_dbrec(P.srq), htobe32(SP.counter & 0xffff), __ATOMIC_RELEASE);
	return (int)idx;
}

/* A completed WQE goes back at the tail, as the driver's poll does. */
static void srq_free(uint32_t idx)
{
	srq_wqe_at(SP.tail)->next_wqe_index = htobe16((uint16_t)idx);
	SP.tail = idx;
}

static uint16_t send_bytes(const uint8_t *src, uint32_t n)
{
	struct wqe w;

	w_ctrl(&w, HW_WQE_SEND, HW_WQE_CTRL_CQ_UPDATE, 0);
	if (n != 0)
		w_data(&w, src, n, P.s[0].key);
	return post(0, &w);
}

/* The device follows next_wqe_index from its head: the program's free order decides the receive order. */
static void test_srq_order_and_index(void)
{
	struct pair_opts o = { .srq = true };
	uint8_t *dst;
	int expect[7];
	uint32_t n = 0;

	CHECK(pair_setup_opts(&o) == 0);
	dst = P.s[1].mem;
	srq_prog_init();
	fill(P.s[0].mem, 4096, 77);
	CHECK(hw_qp_rq_buf(P.s[1].qp) == (uint8_t *)hw_qp_dbrec(P.s[1].qp)); /* no receive ring of its own: the record first */
	for (int k = 0; k < 3; k++)
		CHECK(srq_post(dst + k * 256, 256, P.s[1].key, true) == k);
	for (int k = 0; k < 3; k++)
		send_bytes(P.s[0].mem + k, 10 + (uint32_t)k);
	CHECK_ERR(ring(0), HW_OK);
	for (int k = 0; k < 3; k++) {
		const uint8_t *c = poll_cqe(&P.s[1].rc);

		CHECK(c != NULL && cqe_op(c) == HW_CQE_RESP_SEND && rd16(c, 60) == k && rd32(c, 32) == 0x77);
		CHECK(rd32(c, 44) == 10u + (uint32_t)k && (rd32(c, 56) & 0xffffff) == 0x22);
		CHECK(memcmp(dst + k * 256, P.s[0].mem + k, 10 + (size_t)k) == 0);
		CHECK(req_ok(poll_cqe(&P.s[0].sc), (uint16_t)k, 0x11));
	}
	/* Freed out of order: 2, 0, 1 join the list after 3..7. */
	srq_free(2);
	srq_free(0);
	srq_free(1);
	memset(dst, 0, 8 * 256);
	for (int k = 0; k < 7; k++) {
		expect[k] = srq_post(dst + 256 * (k + 1) % 2048, 256, P.s[1].key, true);
		CHECK(expect[k] >= 0);
	}
	CHECK(srq_post(dst, 256, P.s[1].key, true) == -1); /* head met tail: the list is full */
	CHECK(expect[0] == 3 && expect[4] == 7 && expect[5] == 2 && expect[6] == 0);
	CHECK(hw_srq_posted(P.srq) == 7);
	for (int k = 0; k < 7; k++)
		send_bytes(P.s[0].mem + 100 + k, 20);
	CHECK_ERR(ring(0), HW_OK);
	for (const uint8_t *c; (c = poll_cqe(&P.s[1].rc)) != NULL; n++) {
		CHECK(cqe_op(c) == HW_CQE_RESP_SEND && rd16(c, 60) == expect[n] && rd32(c, 32) == 0x77);
		CHECK(memcmp(dst + 256 * (n + 1) % 2048, P.s[0].mem + 100 + n, 20) == 0);
	}
	CHECK(n == 7 && hw_srq_posted(P.srq) == 0);
	/* The SRQ QP has no receive doorbell; bad arguments. */
	CHECK_ERR(hw_qp_ring_rq(P.s[1].qp, 1), HW_ERR_INVAL);
	CHECK_ERR(hw_srq_ring(P.srq, SP.counter + (1u << LOG_SRQ) + 1), HW_ERR_INVAL);
	CHECK_ERR(hw_srq_destroy(P.srq), HW_ERR_INVAL); /* a QP still receives there */
	struct hw_srq_attr sa = { .pd = P.pd, .log_size = 3, .log_stride = 4 };
	struct hw_srq *bad = NULL;
	CHECK_ERR(hw_srq_create(&sa, &bad), HW_ERR_INVAL);
	sa.log_stride = 5;
	sa.log_size = HW_SRQ_LOG_MAX + 1;
	CHECK_ERR(hw_srq_create(&sa, &bad), HW_ERR_INVAL);
	sa.log_size = 3;
	sa.pd = NULL;
	CHECK_ERR(hw_srq_create(&sa, &bad), HW_ERR_INVAL);
	CHECK(bad == NULL);
}

/* The limit fires once when the posted count drops below it; arming above the count is refused. */
static void test_srq_limit_event(void)
{
	struct pair_opts o = { .srq = true };

	CHECK(pair_setup_opts(&o) == 0);
	srq_prog_init();
	for (int k = 0; k < 4; k++)
		CHECK(srq_post(P.s[1].mem + k * 64, 64, P.s[1].key, true) == k);
	CHECK_ERR(hw_srq_arm(P.srq, 5), HW_ERR_INVAL);
	CHECK_ERR(hw_srq_arm(P.srq, 2), HW_OK);
	uint32_t events[4];
	for (int k = 0; k < 4; k++) {
		send_bytes(P.s[0].mem, 4);
		CHECK_ERR(ring(0), HW_OK);
		CHECK(poll_cqe(&P.s[1].rc) != NULL);
		events[k] = P.srq_limit_events;
	}
	/* 3 and 2 left: not below 2; 1 left: the event; 0 left: disarmed, no more. */
	CHECK(events[0] == 0 && events[1] == 0 && events[2] == 1 && events[3] == 1);
	CHECK_ERR(hw_srq_arm(P.srq, 1), HW_ERR_INVAL);
	CHECK_ERR(hw_srq_arm(P.srq, 0), HW_OK);
}

/* An SRQ receive posted later resumes a requester waiting on RNR; a failing receive leaves the SRQ's others. */
static void test_srq_rnr_resume_and_error(void)
{
	struct pair_opts o = { .srq = true, .rnr_retry = 1 };
	uint16_t nop;

	CHECK(pair_setup_opts(&o) == 0);
	pair_setup_err_case();
	srq_prog_init();
	uint16_t idx = post_send_and_nop(&nop);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(hw_qp_deadline(P.s[0].qp) != HW_QP_NO_DEADLINE && poll_cqe(&P.s[0].sc) == NULL);
	CHECK(srq_post(P.s[1].mem + 200, 16, P.s[1].key, true) == 0);
	CHECK(req_ok(poll_cqe(&P.s[0].sc), idx, 0x11) && req_ok(poll_cqe(&P.s[0].sc), nop, 0x11));
	const uint8_t *c = poll_cqe(&P.s[1].rc);
	CHECK(c != NULL && cqe_op(c) == HW_CQE_RESP_SEND && rd16(c, 60) == 0 && rd32(c, 32) == 0x77);
	CHECK(memcmp(P.s[1].mem + 200, P.s[0].mem, 16) == 0);
	/* A receive too small: the responder errs, the SRQ keeps its other WQE. */
	CHECK(srq_post(P.s[1].mem + 300, 4, P.s[1].key, true) == 1);
	CHECK(srq_post(P.s[1].mem + 400, 64, P.s[1].key, true) == 2);
	idx = send_bytes(P.s[0].mem, 16);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, idx));
	c = poll_cqe(&P.s[1].rc);
	CHECK(err_cqe(c, HW_CQE_RESP_ERR, HW_CQE_SYNDROME_LOCAL_LENGTH_ERR, 1) && rd32(c, 32) == 0x77);
	CHECK(poll_cqe(&P.s[1].rc) == NULL && hw_qp_state(P.s[1].qp) == HW_QP_ERR);
	CHECK(hw_srq_posted(P.srq) == 1 && P.s[1].mem[300] == 0xcd);
}

/* ---- UD ---- */

#define QKEY 0x1234567u

static void w_dgram(struct wqe *w, uint32_t dqpn, uint32_t qkey, bool grh, uint8_t sl)
{
	struct hw_wqe_datagram_seg *av = (void *)(w->b + w->ds * 16);

	memset(av, 0, sizeof(*av));
	av->qkey = htobe32(qkey);
	av->dqp_dct = htobe32(0x80000000u | dqpn);
	av->stat_rate_sl = sl;
	av->rlid = htobe16(0x122);
	av->tclass = 0x2a;
	av->hop_limit = 64;
	if (grh)
		av->grh_gid_fl = htobe32(HW_AV_GRH | 0x12345);
	for (int k = 0; k < 16; k++)
		av->rgid[k] = (uint8_t)(0xf0 + k);
	w->ds += 3;
}

static int ud_setup(void)
{
	struct pair_opts o = { .type = HW_QPT_UD, .qkey = QKEY };

	if (pair_setup_opts(&o) != 0)
		return -1;
	for (int k = 0; k < 16; k++)
		P.s[0].qp->gid[k] = (uint8_t)(0xa0 + k);
	return 0;
}

static uint16_t ud_send(uint8_t op, uint32_t dqpn, uint32_t qkey, bool grh, const uint8_t *src, uint32_t n,
			uint32_t imm)
{
	struct wqe w;

	w_ctrl(&w, op, HW_WQE_CTRL_CQ_UPDATE, imm);
	w_dgram(&w, dqpn, qkey, grh, 5);
	if (n != 0)
		w_data(&w, src, n, P.s[0].key);
	return post(0, &w);
}

/* A datagram with and without a GRH: the GRH area first, byte_cnt counting it, the sender named in the CQE. */
static void test_ud_delivery(void)
{
	CHECK(ud_setup() == 0);
	uint8_t *src = P.s[0].mem, *dst = P.s[1].mem;
	const uint8_t *addr[2] = { dst, dst + 1000 };
	const uint32_t len[2] = { 50, 200 }; /* the GRH area spans both entries */

	fill(src, 4096, 31);
	for (int grh = 0; grh < 2; grh++) {
		memset(dst, 0xee, 2048);
		uint16_t ridx = post_recv(1, addr, len, 2, P.s[1].key);
		uint16_t idx = ud_send(grh ? HW_WQE_SEND : HW_WQE_SEND_IMM, 0x22, QKEY, grh, src + 7, 100, 0xfeed);
		CHECK_ERR(ring(0), HW_OK);
		const uint8_t *c = poll_cqe(&P.s[0].sc);
		CHECK(req_ok(c, idx, 0x11) && c[56] == (grh ? HW_WQE_SEND : HW_WQE_SEND_IMM));
		c = poll_cqe(&P.s[1].rc);
		CHECK(c != NULL && cqe_op(c) == (grh ? HW_CQE_RESP_SEND : HW_CQE_RESP_SEND_IMM));
		CHECK(rd16(c, 60) == ridx && (rd32(c, 56) & 0xffffff) == 0x22 && rd32(c, 44) == 140);
		CHECK(rd32(c, 24) == ((grh ? 1u << 28 : 0) | 5u << 24 | 0x11) && rd16(c, 22) == 0x111);
		if (!grh)
			CHECK(rd32(c, 36) == 0xfeed);
		/* the payload: 10 bytes after the GRH area in the first entry, the rest in the second */
		CHECK(memcmp(dst + 40, src + 7, 10) == 0 && memcmp(dst + 1000, src + 17, 90) == 0);
		CHECK(dst[1090] == 0xee);
		if (!grh) {
			for (int k = 0; k < 40; k++)
				CHECK(dst[k] == 0xee);
			continue;
		}
		CHECK(rd32(dst, 0) == (6u << 28 | 0x2au << 20 | 0x12345) && rd16(dst, 4) == 12 + 8 + 100 + 4);
		CHECK(dst[6] == 0x1b && dst[7] == 64 && dst[8] == 0xa0 && dst[23] == 0xaf);
		CHECK(dst[24] == 0xf0 && dst[39] == 0xff);
	}
	CHECK(hw_qp_state(P.s[0].qp) == HW_QP_RTS && hw_qp_state(P.s[1].qp) == HW_QP_RTS);
}

/* A wrong qkey, an unknown QPN or no receive: the sender completes, nothing arrives, the receive stays. */
static void test_ud_drops(void)
{
	CHECK(ud_setup() == 0);
	uint8_t *dst = P.s[1].mem;
	const uint8_t *addr[1] = { dst };
	const uint32_t len[1] = { 256 };
	uint16_t i[4];

	memset(dst, 0xee, 512);
	i[0] = ud_send(HW_WQE_SEND, 0x22, QKEY + 1, false, P.s[0].mem, 16, 0); /* no receive posted yet */
	CHECK_ERR(ring(0), HW_OK);
	uint16_t ridx = post_recv(1, addr, len, 1, P.s[1].key);
	i[1] = ud_send(HW_WQE_SEND, 0x22, QKEY + 1, false, P.s[0].mem, 16, 0);
	i[2] = ud_send(HW_WQE_SEND, 0x999, QKEY, false, P.s[0].mem, 16, 0);
	/* a qkey with the top bit takes the sender QP's own, which is QKEY: delivered */
	i[3] = ud_send(HW_WQE_SEND, 0x22, 0x80000000u, false, P.s[0].mem, 16, 0);
	CHECK_ERR(ring(0), HW_OK);
	for (int k = 0; k < 4; k++)
		CHECK(req_ok(poll_cqe(&P.s[0].sc), i[k], 0x11));
	const uint8_t *c = poll_cqe(&P.s[1].rc);
	CHECK(c != NULL && cqe_op(c) == HW_CQE_RESP_SEND && rd16(c, 60) == ridx && rd32(c, 44) == 56);
	CHECK(poll_cqe(&P.s[1].rc) == NULL);
	/* a destination that is not UD drops too */
	struct hw_qp_attr qa = { .qpn = 0x33, .pd = P.pd, .send_cq = P.s[1].scq, .recv_cq = P.s[1].rcq,
				 .log_rq_stride = 4 };
	struct hw_qp *rc = NULL;
	CHECK_ERR(hw_qp_create(&qa, &rc), HW_OK);
	CHECK(hw_qp_lookup(0x33) == rc && hw_qp_lookup(0x22) == P.s[1].qp && hw_qp_lookup(0x44) == NULL);
	i[0] = ud_send(HW_WQE_SEND, 0x33, QKEY, false, P.s[0].mem, 16, 0);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(req_ok(poll_cqe(&P.s[0].sc), i[0], 0x11) && poll_cqe(&P.s[1].rc) == NULL);
	hw_qp_destroy(rc);
	CHECK(hw_qp_lookup(0x33) == NULL && hw_qp_lookup(0x22) == P.s[1].qp);
	CHECK_ERR(hw_qp_set_qkey(P.s[1].qp, 7), HW_OK);
	CHECK(P.s[1].qp->sh->qkey == 7);
}

/* Above the MTU the sender fails with a local length error; at it the message goes. Other opcodes are refused. */
static void test_ud_mtu_and_opcodes(void)
{
	CHECK(ud_setup() == 0);
	const uint8_t *addr[1] = { P.s[1].mem };
	const uint32_t len[1] = { HW_UD_MTU + HW_UD_GRH_BYTES };
	struct wqe w;

	post_recv(1, addr, len, 1, P.s[1].key);
	uint16_t idx = ud_send(HW_WQE_SEND, 0x22, QKEY, false, P.s[0].mem, HW_UD_MTU, 0);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(req_ok(poll_cqe(&P.s[0].sc), idx, 0x11));
	const uint8_t *c = poll_cqe(&P.s[1].rc);
	CHECK(c != NULL && rd32(c, 44) == HW_UD_MTU + HW_UD_GRH_BYTES);
	idx = ud_send(HW_WQE_SEND, 0x22, QKEY, false, P.s[0].mem, HW_UD_MTU + 1, 0);
	w_ctrl(&w, HW_WQE_NOP, HW_WQE_CTRL_CQ_UPDATE, 0);
	uint16_t nop = post(0, &w);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_LOCAL_LENGTH_ERR, idx));
	CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, nop));
	CHECK(hw_qp_state(P.s[0].qp) == HW_QP_ERR && poll_cqe(&P.s[1].rc) == NULL);

	for (int k = 0; k < 2; k++) {
		th_undefer(pair_teardown, NULL);
		pair_teardown(NULL);
		CHECK(ud_setup() == 0);
		w_ctrl(&w, k == 0 ? HW_WQE_RDMA_WRITE : HW_WQE_SEND_INVAL, HW_WQE_CTRL_CQ_UPDATE, 0);
		w_dgram(&w, 0x22, QKEY, false, 0);
		w_data(&w, P.s[0].mem, 8, P.s[0].key);
		idx = post(0, &w);
		CHECK_ERR(ring(0), HW_OK);
		CHECK(err_cqe(poll_cqe(&P.s[0].sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, idx));
	}
}

/* A receive too small for the GRH area and the payload completes in error at the receiver only. */
static void test_ud_short_receive(void)
{
	CHECK(ud_setup() == 0);
	const uint8_t *addr[1] = { P.s[1].mem };
	const uint32_t len[1] = { HW_UD_GRH_BYTES + 10 };

	memset(P.s[1].mem, 0xee, 64);
	uint16_t ridx = post_recv(1, addr, len, 1, P.s[1].key);
	post_recv(1, addr, len, 1, P.s[1].key);
	uint16_t idx = ud_send(HW_WQE_SEND, 0x22, QKEY, true, P.s[0].mem, 11, 0);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(req_ok(poll_cqe(&P.s[0].sc), idx, 0x11) && hw_qp_state(P.s[0].qp) == HW_QP_RTS);
	CHECK(err_cqe(poll_cqe(&P.s[1].rc), HW_CQE_RESP_ERR, HW_CQE_SYNDROME_LOCAL_LENGTH_ERR, ridx));
	CHECK(err_cqe(poll_cqe(&P.s[1].rc), HW_CQE_RESP_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, (uint16_t)(ridx + 1)));
	CHECK(hw_qp_state(P.s[1].qp) == HW_QP_ERR && P.s[1].mem[0] == 0xee && P.s[1].mem[63] == 0xee);
}

/* ---- SEND with invalidate, LOCAL_INV ---- */

/* A key over side i's first 4 KiB that invalidation may free. */
static uint32_t inv_key(int i)
{
	uint32_t key = 0;

	if (hw_mkey_reg(P.pd, P.s[i].mem, (uintptr_t)P.s[i].mem, 4096, ALL_RIGHTS, &key) != HW_OK)
		return 0;
	th_defer(dereg_cb, (void *)(uintptr_t)key);
	return hw_mkey_set_invalidatable(key) == HW_OK ? key : 0;
}

static void test_send_inval(void)
{
	CHECK(pair_setup() == 0);
	pair_setup_err_case();
	uint32_t k = inv_key(1);
	CHECK(k != 0);
	const uint8_t *addr[1] = { P.s[1].mem + 2000 };
	const uint32_t len[1] = { 64 };
	uint8_t *p;
	struct wqe w;

	uint16_t ridx = post_recv(1, addr, len, 1, P.s[1].key);
	w_ctrl(&w, HW_WQE_SEND_INVAL, HW_WQE_CTRL_CQ_UPDATE, k);
	w_data(&w, P.s[0].mem, 24, P.s[0].key);
	uint16_t idx = post(0, &w);
	CHECK_ERR(ring(0), HW_OK);
	const uint8_t *c = poll_cqe(&P.s[0].sc);
	CHECK(req_ok(c, idx, 0x11) && c[56] == HW_WQE_SEND_INVAL);
	c = poll_cqe(&P.s[1].rc);
	CHECK(c != NULL && cqe_op(c) == HW_CQE_RESP_SEND_INV && rd32(c, 36) == k && rd16(c, 60) == ridx);
	CHECK(rd32(c, 44) == 24 && memcmp(P.s[1].mem + 2000, P.s[0].mem, 24) == 0);
	CHECK_ERR(hw_mkey_translate(k, 0, (uintptr_t)P.s[1].mem, 8, 0, &p), HW_ERR_KEY);
	/* the freed rkey is refused to a WRITE */
	w_ctrl(&w, HW_WQE_RDMA_WRITE, HW_WQE_CTRL_CQ_UPDATE, 0);
	w_raddr(&w, P.s[1].mem, k);
	w_data(&w, P.s[0].mem, 8, P.s[0].key);
	uint16_t bad = post(0, &w);
	expect_fail_and_flush(bad, HW_WQE_RDMA_WRITE, HW_CQE_SYNDROME_REMOTE_ACCESS_ERR);
	CHECK_ERR(hw_mkey_revalidate(k), HW_OK);
	CHECK_ERR(hw_mkey_translate(k, 0, (uintptr_t)P.s[1].mem, 8, 0, &p), HW_OK);
}

/* Invalidating a key that may not be (a plain registration) or is unknown: the responder refuses, nothing lands. */
static void test_send_inval_refused(void)
{
	for (int variant = 0; variant < 2; variant++) {
		CHECK(pair_setup() == 0);
		pair_setup_err_case();
		const uint8_t *addr[1] = { P.s[1].mem + 2000 };
		const uint32_t len[1] = { 64 };
		uint8_t *p;
		struct wqe w;

		uint16_t ridx = post_recv(1, addr, len, 1, P.s[1].key);
		w_ctrl(&w, HW_WQE_SEND_INVAL, HW_WQE_CTRL_CQ_UPDATE, variant == 0 ? P.s[1].key : 0xdead00u);
		w_data(&w, P.s[0].mem, 24, P.s[0].key);
		uint16_t bad = post(0, &w);
		expect_fail_and_flush(bad, HW_WQE_SEND_INVAL, HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR);
		CHECK(err_cqe(poll_cqe(&P.s[1].rc), HW_CQE_RESP_ERR, HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR, ridx));
		CHECK(hw_qp_state(P.s[1].qp) == HW_QP_ERR && P.s[1].mem[2000] == 0xcd);
		CHECK_ERR(hw_mkey_translate(P.s[1].key, 0, (uintptr_t)P.s[1].mem, 8, 0, &p), HW_OK);
		th_undefer(pair_teardown, NULL);
		pair_teardown(NULL);
	}
}

/* LOCAL_INV as mlx5's post_send builds it: ctrl, UMR control segment, mkey context marked free. */
static uint16_t post_local_inv(uint32_t key, uint8_t ctx_free)
{
	struct wqe w;
	uint8_t *uc, *mc;

	w_ctrl(&w, HW_WQE_UMR, HW_WQE_CTRL_CQ_UPDATE | HW_WQE_CTRL_SMALL_FENCE, key);
	uc = w.b + 16;
	uc[0] = HW_UMR_CTRL_INLINE | HW_UMR_CTRL_TRANSLATION_OFFSET | HW_UMR_CTRL_CHECK_QPN;
	memcpy(uc + 8, &(uint64_t){ htobe64(HW_UMR_MASK_FREE | HW_UMR_MASK_MKEY | HW_UMR_MASK_QPN) }, 8);
	mc = w.b + 64;
	mc[0] = ctx_free;
	memcpy(mc + 4, &(uint32_t){ htobe32(0xffffff00u) }, 4);
	w.ds = 8;
	return post(0, &w);
}

static void test_local_inv(void)
{
	CHECK(pair_setup() == 0);
	pair_setup_err_case();
	uint32_t k = inv_key(0);
	CHECK(k != 0);
	uint8_t *p;

	uint16_t idx = post_local_inv(k, HW_MKEY_CTX_FREE);
	CHECK_ERR(ring(0), HW_OK);
	const uint8_t *c = poll_cqe(&P.s[0].sc);
	CHECK(req_ok(c, idx, 0x11) && c[56] == HW_WQE_UMR);
	CHECK_ERR(hw_mkey_translate(k, 0, (uintptr_t)P.s[0].mem, 8, 0, &p), HW_ERR_KEY);
	/* invalidating a free key again is no error */
	idx = post_local_inv(k, HW_MKEY_CTX_FREE);
	CHECK_ERR(ring(0), HW_OK);
	CHECK(req_ok(poll_cqe(&P.s[0].sc), idx, 0x11));
	/* the freed lkey: a local protection error, nothing written */
	struct wqe w;
	w_ctrl(&w, HW_WQE_RDMA_WRITE, 0, 0);
	w_raddr(&w, P.s[1].mem, P.s[1].key);
	w_data(&w, P.s[0].mem, 16, k);
	uint16_t bad = post(0, &w);
	expect_fail_and_flush(bad, HW_WQE_RDMA_WRITE, HW_CQE_SYNDROME_LOCAL_PROT_ERR);
}

/* LOCAL_INV of a plain key fails as a bind error; a UMR of another form is a bad WQE for now. */
static void test_local_inv_refused(void)
{
	uint8_t *p;

	for (int variant = 0; variant < 3; variant++) {
		CHECK(pair_setup() == 0);
		pair_setup_err_case();
		struct hw_pd *other = hw_pd_alloc(0);
		uint32_t okey = 0;

		CHECK(other != NULL);
		th_defer(pd_free_cb, other);
		CHECK_ERR(hw_mkey_reg(other, P.s[0].mem, (uintptr_t)P.s[0].mem, 64, ALL_RIGHTS, &okey), HW_OK);
		th_defer(dereg_cb, (void *)(uintptr_t)okey);
		CHECK_ERR(hw_mkey_set_invalidatable(okey), HW_OK);
		uint16_t bad = variant == 0   ? post_local_inv(P.s[0].key, HW_MKEY_CTX_FREE)
			       : variant == 1 ? post_local_inv(okey, HW_MKEY_CTX_FREE) /* another domain's key */
					      : post_local_inv(inv_key(0), 0);
		expect_fail_and_flush(bad, HW_WQE_UMR,
				      variant == 2 ? HW_CQE_SYNDROME_LOCAL_QP_OP_ERR : HW_CQE_SYNDROME_MW_BIND_ERR);
		CHECK_ERR(hw_mkey_translate(P.s[0].key, 0, (uintptr_t)P.s[0].mem, 8, 0, &p), HW_OK);
		CHECK_ERR(hw_mkey_translate(okey, 0, (uintptr_t)P.s[0].mem, 8, 0, &p), HW_OK);
		th_undefer(pair_teardown, NULL);
		pair_teardown(NULL);
	}
}

/* ---- RNR across threads ---- */

#define THR_MSGS 3000
#define THR_SPIN_MAX 200000000ull

struct thr_result {
	uint32_t done;
	uint32_t bad;
};

/* The requester: SENDs numbered messages, at most 32 outstanding, and reaps its CQEs. */
static void *thr_requester(void *arg)
{
	struct thr_result *r = arg;
	uint32_t posted = 0;

	for (uint64_t spin = 0; r->done < THR_MSGS && spin < THR_SPIN_MAX; spin++) {
		const uint8_t *c;

		if (posted < THR_MSGS && posted - r->done < 32) {
			uint8_t *slot = P.s[0].mem + (posted % 64) * 8;
			struct wqe w;

			memcpy(slot, &posted, sizeof(posted));
			w_ctrl(&w, HW_WQE_SEND, HW_WQE_CTRL_CQ_UPDATE, 0);
			w_data(&w, slot, 8, P.s[0].key);
			post(0, &w);
			if (ring(0) != HW_OK)
				r->bad++;
			posted++;
		}
		while ((c = poll_cqe(&P.s[0].sc)) != NULL) {
			if (!req_ok(c, (uint16_t)r->done, 0x11))
				r->bad++;
			r->done++;
		}
		sched_yield();
	}
	return NULL;
}

/* The responder: posts receives one at a time through the doorbell that resumes the requester. */
static void *thr_responder(void *arg)
{
	struct thr_result *r = arg;
	uint32_t posted = 0;
	const uint32_t len[1] = { 8 };

	for (uint64_t spin = 0; r->done < THR_MSGS && spin < THR_SPIN_MAX; spin++) {
		const uint8_t *c;

		if (posted < THR_MSGS && posted - r->done < (1u << LOG_RQ)) {
			const uint8_t *addr[1] = { P.s[1].mem + (posted % (1u << LOG_RQ)) * 8 };

			post_recv(1, addr, len, 1, P.s[1].key);
			if (hw_qp_ring_rq(P.s[1].qp, P.s[1].rq_pi) != HW_OK)
				r->bad++;
			posted++;
		}
		while ((c = poll_cqe(&P.s[1].rc)) != NULL) {
			uint32_t seq;

			memcpy(&seq, P.s[1].mem + (r->done % (1u << LOG_RQ)) * 8, sizeof(seq));
			if (cqe_op(c) != HW_CQE_RESP_SEND || seq != r->done)
				r->bad++;
			r->done++;
		}
		sched_yield();
	}
	return NULL;
}

/* Requester and responder on two threads with rnr_retry 7: every message arrives once, in order. */
static void test_rnr_threads(void)
{
	struct pair_opts o = { .rnr_retry = HW_QP_RNR_RETRY_INFINITE };
	struct thr_result req = { 0 }, resp = { 0 };
	pthread_t a, b;

	CHECK(pair_setup_opts(&o) == 0);
	CHECK(pthread_create(&a, NULL, thr_requester, &req) == 0);
	CHECK(pthread_create(&b, NULL, thr_responder, &resp) == 0);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	CHECK(req.done == THR_MSGS && resp.done == THR_MSGS);
	CHECK(req.bad == 0 && resp.bad == 0);
	CHECK(hw_qp_state(P.s[0].qp) == HW_QP_RTS && hw_qp_state(P.s[1].qp) == HW_QP_RTS);
}

/* xorshift: a fixed sequence, so a failure repeats. */
static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(uint32_t n)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return (uint32_t)(rnd_state % n);
}

#define RAND_OPS 4000
#define RAND_MAX_LEN 3000

/* One random WQE from side 0 to side 1, applied to the reference memories too. */
static uint8_t random_wqe(uint8_t *lref, uint8_t *rref)
{
	uint8_t *lm = P.s[0].mem, *rm = P.s[1].mem;
	uint32_t kind = rnd(5), n = rnd(RAND_MAX_LEN + 1), lo = rnd(MEM_LEN - n), ro = rnd(MEM_LEN - n);
	struct wqe w;

	if (kind == 0) { /* WRITE, split over two entries */
		uint32_t a = rnd(n + 1);

		w_ctrl(&w, HW_WQE_RDMA_WRITE, HW_WQE_CTRL_CQ_UPDATE, 0);
		w_raddr(&w, rm + ro, P.s[1].key);
		if (a != 0)
			w_data(&w, lm + lo, a, P.s[0].key);
		if (n - a != 0)
			w_data(&w, lm + lo + a, n - a, P.s[0].key);
		memmove(rref + ro, lref + lo, n);
	} else if (kind == 1) { /* READ */
		w_ctrl(&w, HW_WQE_RDMA_READ, HW_WQE_CTRL_CQ_UPDATE, 0);
		w_raddr(&w, rm + ro, P.s[1].key);
		if (n != 0)
			w_data(&w, lm + lo, n, P.s[0].key);
		memmove(lref + lo, rref + ro, n);
	} else if (kind == 2) { /* SEND into a receive of two entries */
		uint32_t a = rnd(n + 1);
		const uint8_t *addr[2] = { rm + ro, rm + ro + a };
		const uint32_t len[2] = { a, n - a };

		post_recv(1, addr, len, 2, P.s[1].key);
		w_ctrl(&w, HW_WQE_SEND, HW_WQE_CTRL_CQ_UPDATE, 0);
		if (n != 0)
			w_data(&w, lm + lo, n, P.s[0].key);
		memmove(rref + ro, lref + lo, n);
	} else { /* atomics on an aligned word */
		uint32_t t = rnd(MEM_LEN / 8) * 8, r = rnd(MEM_LEN / 8) * 8;
		uint64_t cur, add = (uint64_t)rnd(1000) << 20 | rnd(1000);

		memcpy(&cur, rref + t, 8);
		if (kind == 3) {
			uint64_t cmp = rnd(2) ? cur : cur + 1;

			w_ctrl(&w, HW_WQE_ATOMIC_CS, HW_WQE_CTRL_CQ_UPDATE, 0);
			w_raddr(&w, rm + t, P.s[1].key);
			w_atomic(&w, add, cmp);
			if (cmp == cur)
				memcpy(rref + t, &add, 8);
		} else {
			uint64_t sum = cur + add;

			w_ctrl(&w, HW_WQE_ATOMIC_FA, HW_WQE_CTRL_CQ_UPDATE, 0);
			w_raddr(&w, rm + t, P.s[1].key);
			w_atomic(&w, add, 0);
			memcpy(rref + t, &sum, 8);
		}
		w_data(&w, lm + r, 8, P.s[0].key);
		memcpy(lref + r, &cur, 8);
	}
	post(0, &w);
	return w.b[3]; /* the opcode byte of the ctrl segment */
}

/* Thousands of mixed WQEs in batches (the ring wraps), compared byte for byte against a model. */
static void test_random_against_model(void)
{
	CHECK(pair_setup() == 0);
	uint8_t *lref = malloc(MEM_LEN), *rref = malloc(MEM_LEN);

	CHECK(lref != NULL && rref != NULL);
	th_defer(free, lref);
	th_defer(free, rref);
	fill(P.s[0].mem, MEM_LEN, 41);
	fill(P.s[1].mem, MEM_LEN, 42);
	memcpy(lref, P.s[0].mem, MEM_LEN);
	memcpy(rref, P.s[1].mem, MEM_LEN);
	for (uint32_t done = 0; done < RAND_OPS;) {
		uint32_t batch = 1 + rnd(16);
		uint8_t op[16];

		for (uint32_t k = 0; k < batch; k++)
			op[k] = random_wqe(lref, rref);
		CHECK_ERR(ring(0), HW_OK);
		for (uint32_t k = 0; k < batch; k++) {
			const uint8_t *c = poll_cqe(&P.s[0].sc);

			CHECK(c != NULL && cqe_op(c) == HW_CQE_REQ);
			CHECK(c[56] == op[k]); /* the WQE's opcode, which a provider turns into wc.opcode */
		}
		CHECK(poll_cqe(&P.s[0].sc) == NULL);
		while (poll_cqe(&P.s[1].rc) != NULL)
			;
		done += batch;
	}
	CHECK(hw_qp_state(P.s[0].qp) == HW_QP_RTS);
	CHECK(memcmp(P.s[0].mem, lref, MEM_LEN) == 0);
	CHECK(memcmp(P.s[1].mem, rref, MEM_LEN) == 0);
}

/* SENDs of random sizes into SRQ receives freed back in random order, against a model of memory. */
static void test_random_srq(void)
{
	struct pair_opts o = { .srq = true };

	CHECK(pair_setup_opts(&o) == 0);
	srq_prog_init();
	uint8_t *rref = malloc(MEM_LEN);
	CHECK(rref != NULL);
	th_defer(free, rref);
	fill(P.s[0].mem, MEM_LEN, 51);
	fill(P.s[1].mem, MEM_LEN, 52);
	memcpy(rref, P.s[1].mem, MEM_LEN);
	for (uint32_t done = 0; done < RAND_OPS / 4;) {
		uint32_t batch = 1 + rnd((1u << LOG_SRQ) - 1), got[8];
		int idx[8];

		for (uint32_t k = 0; k < batch; k++) {
			uint32_t n = rnd(RAND_MAX_LEN + 1), lo = rnd(MEM_LEN - n), ro = rnd(MEM_LEN - n);

			idx[k] = srq_post(P.s[1].mem + ro, n, P.s[1].key, true);
			CHECK(idx[k] >= 0);
			send_bytes(P.s[0].mem + lo, n);
			memmove(rref + ro, P.s[0].mem + lo, n);
		}
		CHECK_ERR(ring(0), HW_OK);
		for (uint32_t k = 0; k < batch; k++) {
			const uint8_t *c = poll_cqe(&P.s[1].rc);

			CHECK(c != NULL && cqe_op(c) == HW_CQE_RESP_SEND && rd16(c, 60) == idx[k]);
			CHECK(req_ok(poll_cqe(&P.s[0].sc), (uint16_t)(done + k), 0x11));
			got[k] = (uint32_t)idx[k];
		}
		for (uint32_t k = batch; k > 1; k--) { /* back to the free list in a random order */
			uint32_t j = rnd(k), t = got[k - 1];

			got[k - 1] = got[j];
			got[j] = t;
		}
		for (uint32_t k = 0; k < batch; k++)
			srq_free(got[k]);
		done += batch;
	}
	CHECK(memcmp(P.s[1].mem, rref, MEM_LEN) == 0);
}

/* UD SEND / SEND_IMM of random sizes, with and without a GRH, into random receives, against a model. */
static void test_random_ud(void)
{
	CHECK(ud_setup() == 0);
	uint8_t *rref = malloc(MEM_LEN);
	CHECK(rref != NULL);
	th_defer(free, rref);
	fill(P.s[0].mem, MEM_LEN, 61);
	fill(P.s[1].mem, MEM_LEN, 62);
	memcpy(rref, P.s[1].mem, MEM_LEN);
	for (uint32_t k = 0; k < RAND_OPS / 4; k++) {
		uint32_t n = rnd(HW_UD_MTU + 1), lo = rnd(MEM_LEN - n), ro = rnd(MEM_LEN - n - HW_UD_GRH_BYTES);
		uint32_t a = rnd(n + HW_UD_GRH_BYTES + 1);
		bool grh = rnd(2), imm = rnd(2);
		const uint8_t *addr[2] = { P.s[1].mem + ro, P.s[1].mem + ro + a };
		const uint32_t len[2] = { a, n + HW_UD_GRH_BYTES - a };

		uint16_t ridx = post_recv(1, addr, len, 2, P.s[1].key);
		uint16_t idx = ud_send(imm ? HW_WQE_SEND_IMM : HW_WQE_SEND, 0x22, QKEY, grh, P.s[0].mem + lo, n, k);
		CHECK_ERR(ring(0), HW_OK);
		CHECK(req_ok(poll_cqe(&P.s[0].sc), idx, 0x11));
		const uint8_t *c = poll_cqe(&P.s[1].rc);
		CHECK(c != NULL && rd16(c, 60) == ridx && rd32(c, 44) == n + HW_UD_GRH_BYTES);
		CHECK(cqe_op(c) == (imm ? HW_CQE_RESP_SEND_IMM : HW_CQE_RESP_SEND) && (rd32(c, 24) >> 28) == grh);
		if (grh) { /* the GRH's own fields are checked in test_ud_delivery; here its place */
			CHECK(P.s[1].mem[ro + 6] == 0x1b && rd16(P.s[1].mem + ro, 4) == 24 + ((n + 3) & ~3u) + (imm ? 4 : 0));
			memcpy(rref + ro, P.s[1].mem + ro, HW_UD_GRH_BYTES);
		}
		memmove(rref + ro + HW_UD_GRH_BYTES, P.s[0].mem + lo, n);
	}
	CHECK(memcmp(P.s[1].mem, rref, MEM_LEN) == 0);
}

int main(void)
{
	RUN(test_write_sizes);
	RUN(test_write_overlapping);
	RUN(test_given_rings);
	RUN(test_write_gather_inline);
	RUN(test_read_sizes);
	RUN(test_send_and_imm);
	RUN(test_send_inline_unsignaled);
	RUN(test_write_imm);
	RUN(test_atomics);
	RUN(test_unsignaled);
	RUN(test_remote_access_errors);
	RUN(test_read_access_error);
	RUN(test_bad_lkey);
	RUN(test_lkey_of_other_pd);
	RUN(test_wqe_wraps_ring_end);
	RUN(test_read_into_readonly);
	RUN(test_send_without_receive);
	RUN(test_send_too_long);
	RUN(test_bad_wqe);
	RUN(test_states);
	RUN(test_connect_qpn);
	RUN(test_rnr_timer_table);
	RUN(test_rnr_retry_finite);
	RUN(test_rnr_retry_infinite_then_receive);
	RUN(test_rnr_write_imm_resume_by_kick);
	RUN(test_rnr_wait_then_error);
	RUN(test_rnr_peer_gone);
	RUN(test_peer_destroyed_in_process);
	RUN(test_rnr_timer_by_engine_thread);
	RUN(test_shared_in_process);
	RUN(test_srq_order_and_index);
	RUN(test_srq_limit_event);
	RUN(test_srq_rnr_resume_and_error);
	RUN(test_ud_delivery);
	RUN(test_ud_drops);
	RUN(test_ud_mtu_and_opcodes);
	RUN(test_ud_short_receive);
	RUN(test_send_inval);
	RUN(test_send_inval_refused);
	RUN(test_local_inv);
	RUN(test_local_inv_refused);
	RUN(test_rnr_threads);
	RUN(test_random_against_model);
	RUN(test_random_srq);
	RUN(test_random_ud);
	RUN(test_state_word_overwritten);
	return th_summary("test_hw_qp");
}
