/*
 * Queues across processes: a QP of this process connected by number to a
 * shared QP of a forked child (or sending datagrams to one). The requester's
 * work lands in the child's registered memory, consumes the child's receives
 * and completes into the child's CQ; the child checks what it sees and sends
 * it back over a pipe. Errors come as the card's syndromes; a peer destroyed
 * or killed stops blocking the survivor.
 *
 * Both processes are the program: they write WQEs and receive WQEs in the
 * mlx5 layout, the doorbell records, and poll CQEs by owner bit. Waits for
 * work the other process or the engine thread does are bounded (a hang
 * guard, never a measurement).
 */
#include <endian.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fab_mr.h"
#include "hw_bell.h"
#include "fab_qmem.h"
#include "harness.h"
#include "hw_cq.h"
#include "hw_ids.h"
#include "hw_mem.h"
#include "hw_prm.h"
#include "hw_qp.h"
#include "hw_srq.h"

#define MEM_LEN (64u * 1024)
#define LOG_SQ 6
#define LOG_RQ 5
#define LOG_RQ_STRIDE 4 /* one data segment */
#define LOG_CQ 8
#define WAIT_MS 10000
#define QKEY 0x11223344u
#define RIGHTS (HW_ACCESS_LOCAL_WRITE | HW_ACCESS_REMOTE_READ | HW_ACCESS_REMOTE_WRITE | HW_ACCESS_REMOTE_ATOMIC)

struct poller {
	uint8_t *buf;
	uint32_t *dbrec;
	uint32_t cnt;
	uint32_t ci;
};

/* One process's end: numbers held device-wide, shared queues, shared memory. */
struct side {
	struct hw_pd *pd;
	uint32_t qpn, scqn, rcqn;
	struct hw_cq *scq, *rcq;
	struct hw_qp *qp;
	uint8_t *mem;
	uint32_t key, ro_key;
	struct fab_shared mb, rob;
	struct poller sc, rc;
	uint32_t sq_pi, rq_pi;
	uint32_t srqn;	   /* with_srq: the QP receives from this shared SRQ */
	struct hw_srq *srq;
};

#define LOG_SRQ 3
#define LOG_SRQ_STRIDE 5 /* the next segment and one data segment */

static bool with_srq; /* the next pair's child receives from an SRQ */
static volatile uint32_t srq_limit_events;

static void srq_limit_cb(void *arg, struct hw_srq *srq)
{
	(void)arg;
	(void)srq;
	__atomic_fetch_add(&srq_limit_events, 1, __ATOMIC_RELAXED);
}

/* What each side tells the other. */
struct hello {
	uint32_t qpn;
	uint32_t key;	 /* all remote rights */
	uint32_t ro_key; /* remote read only */
	uint64_t addr;
};

/* A command to the child and its answer. */
struct cmd {
	char op;
	uint32_t a, b, c;
};

struct ans {
	int32_t st;
	uint8_t op, synd;
	uint16_t idx;
	uint32_t byte_cnt, imm, qpn;
	uint64_t v;
};

static struct side me;
static pid_t kid = -1;
static int to_kid = -1, from_kid = -1;

/* ---- the program's side of the queues, as in test_hw_qp ---- */

static void poller_init(struct poller *p, struct hw_cq *cq)
{
	p->buf = (uint8_t *)hw_cq_ring(cq);
	p->dbrec = hw_cq_dbrec(cq);
	p->cnt = 1u << hw_cq_log_size(cq);
	p->ci = 0;
}

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

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* A CQE another process or the engine thread writes: waited for, within WAIT_MS. */
static const uint8_t *wait_cqe(struct poller *p)
{
	for (int ms = 0; ms < WAIT_MS; ms++) {
		const uint8_t *c = poll_cqe(p);

		if (c != NULL)
			return c;
		sleep_ms(1);
	}
	return NULL;
}

static uint32_t rd32(const uint8_t *p, size_t off)
{
	return (uint32_t)p[off] << 24 | (uint32_t)p[off + 1] << 16 | (uint32_t)p[off + 2] << 8 | p[off + 3];
}

static uint16_t rd16(const uint8_t *p, size_t off)
{
	return (uint16_t)(p[off] << 8 | p[off + 1]);
}

static struct ans cqe_ans(const uint8_t *c)
{
	struct ans a = { .op = 0xff };

	if (c == NULL)
		return a;
	a.op = c[63] >> 4;
	a.synd = c[55];
	a.idx = rd16(c, 60);
	a.byte_cnt = rd32(c, 44);
	a.imm = rd32(c, 36);
	a.qpn = rd32(c, 56) & 0xffffff;
	return a;
}

struct wqe {
	uint8_t b[256];
	uint32_t ds;
};

static void w_ctrl(struct wqe *w, uint8_t opcode, uint32_t imm)
{
	memset(w, 0, sizeof(*w));
	w->b[3] = opcode;
	w->b[11] = HW_WQE_CTRL_CQ_UPDATE;
	memcpy(w->b + 12, &(uint32_t){ htobe32(imm) }, 4);
	w->ds = 1;
}

static void w_raddr(struct wqe *w, uint64_t raddr, uint32_t rkey)
{
	hw_raddr_seg_set((void *)(w->b + w->ds * 16), raddr, rkey);
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

static void w_av(struct wqe *w, uint32_t dqpn, uint32_t qkey)
{
	struct hw_wqe_datagram_seg *av = (void *)(w->b + w->ds * 16);

	memset(av, 0, sizeof(*av));
	av->dqp_dct = htobe32(dqpn);
	av->qkey = htobe32(qkey);
	w->ds += sizeof(*av) / 16;
}

/* Copies the WQE into the send ring and moves the send record; the doorbell is the caller's. */
static uint16_t post(struct side *s, struct wqe *w)
{
	uint8_t *sq = hw_qp_sq_buf(s->qp);
	uint32_t nbb = (w->ds * 16 + 63) / 64;
	uint16_t idx = (uint16_t)s->sq_pi;
	uint32_t opc = w->b[3];

	hw_ctrl_seg_set((void *)w->b, idx, (uint8_t)opc, 0, s->qpn, w->b[11], (uint8_t)w->ds,
			*(uint32_t *)(void *)(w->b + 12));
	for (uint32_t k = 0; k < nbb; k++)
		memcpy(sq + (size_t)((s->sq_pi + k) & ((1u << LOG_SQ) - 1)) * 64, w->b + k * 64, 64);
	s->sq_pi = (s->sq_pi + nbb) & 0xffff;
	__atomic_store_n(&hw_qp_dbrec(s->qp)[HW_QP_DBR_SND], htobe32(s->sq_pi), __ATOMIC_RELEASE);
	return idx;
}

static enum hw_status ring(struct side *s)
{
	return hw_qp_ring_sq(s->qp, s->sq_pi);
}

/* The SRQ's WQEs are taken in their initial order (each linked to the next) as long as none is freed. */
static uint16_t post_srq(struct side *s, uint32_t off, uint32_t len)
{
	uint16_t idx = (uint16_t)(s->rq_pi & ((1u << LOG_SRQ) - 1));
	uint8_t *slot = hw_srq_buf(s->srq) + ((size_t)idx << LOG_SRQ_STRIDE);

	hw_data_seg_set((void *)(slot + sizeof(struct hw_wqe_srq_next_seg)), len, s->key, (uintptr_t)(s->mem + off));
	s->rq_pi = (s->rq_pi + 1) & 0xffff;
	__atomic_store_n(&hw_srq_dbrec(s->srq)[0], htobe32(s->rq_pi), __ATOMIC_RELEASE);
	(void)hw_srq_ring(s->srq, s->rq_pi);
	return idx;
}

/* One receive of one segment at mem + off; the receive doorbell rung. */
static uint16_t post_recv(struct side *s, uint32_t off, uint32_t len)
{
	if (s->srq != NULL)
		return post_srq(s, off, len);

	uint8_t *slot = hw_qp_rq_buf(s->qp) + ((size_t)(s->rq_pi & ((1u << LOG_RQ) - 1)) << LOG_RQ_STRIDE);
	uint16_t idx = (uint16_t)s->rq_pi;

	hw_data_seg_set((void *)slot, len, s->key, (uintptr_t)(s->mem + off));
	s->rq_pi = (s->rq_pi + 1) & 0xffff;
	__atomic_store_n(&hw_qp_dbrec(s->qp)[HW_QP_DBR_RCV], htobe32(s->rq_pi), __ATOMIC_RELEASE);
	(void)hw_qp_ring_rq(s->qp, s->rq_pi);
	return idx;
}

static void fill(uint8_t *p, size_t n, unsigned int seed)
{
	for (size_t k = 0; k < n; k++)
		p[k] = (uint8_t)(seed * 131 + k * 7 + (k >> 8));
}

/* ---- one side's objects ---- */

static void side_free(struct side *s)
{
	hw_qp_destroy(s->qp);
	if (s->qpn != 0)
		hw_id_free(HW_ID_QPN, s->qpn);
	hw_srq_destroy(s->srq);
	if (s->srqn != 0)
		hw_id_free(HW_ID_SRQN, s->srqn);
	hw_cq_destroy(s->scq);
	hw_cq_destroy(s->rcq);
	if (s->scqn != 0)
		hw_id_free(HW_ID_CQN, s->scqn);
	if (s->rcqn != 0)
		hw_id_free(HW_ID_CQN, s->rcqn);
	if (s->key != 0) {
		hw_mkey_dereg(s->key);
		fab_mr_unshare(&s->mb);
	}
	if (s->ro_key != 0) {
		hw_mkey_dereg(s->ro_key);
		fab_mr_unshare(&s->rob);
	}
	if (s->mem != NULL)
		munmap(s->mem, MEM_LEN);
	hw_pd_free(s->pd);
	memset(s, 0, sizeof(*s));
}

static int side_setup(struct side *s, enum hw_qp_type type)
{
	struct hw_cq_attr ca = { .log_size = LOG_CQ, .shared = true };
	struct hw_qp_attr qa = { .type = type, .log_sq_size = LOG_SQ, .log_rq_size = LOG_RQ,
				 .log_rq_stride = LOG_RQ_STRIDE, .qkey = QKEY, .shared = true };
	void *m;

	memset(s, 0, sizeof(*s));
	s->pd = hw_pd_alloc(0);
	if (s->pd == NULL || hw_id_alloc(HW_ID_QPN, &s->qpn) != HW_OK || hw_id_alloc(HW_ID_CQN, &s->scqn) != HW_OK ||
	    hw_id_alloc(HW_ID_CQN, &s->rcqn) != HW_OK)
		return -1;
	ca.cqn = s->scqn;
	if (hw_cq_create(&ca, &s->scq) != HW_OK)
		return -1;
	ca.cqn = s->rcqn;
	if (hw_cq_create(&ca, &s->rcq) != HW_OK)
		return -1;
	if (with_srq) {
		struct hw_srq_attr sa = { .pd = s->pd, .log_size = LOG_SRQ, .log_stride = LOG_SRQ_STRIDE,
					  .limit_cb = srq_limit_cb, .shared = true };

		if (hw_id_alloc(HW_ID_SRQN, &s->srqn) != HW_OK)
			return -1;
		sa.srqn = s->srqn;
		if (hw_srq_create(&sa, &s->srq) != HW_OK)
			return -1;
		qa.srq = s->srq;
	}
	qa.qpn = s->qpn;
	qa.pd = s->pd;
	qa.send_cq = s->scq;
	qa.recv_cq = s->rcq;
	if (hw_qp_create(&qa, &s->qp) != HW_OK)
		return -1;
	m = mmap(NULL, MEM_LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	s->mem = m;
	if (hw_mkey_reg(s->pd, s->mem, (uintptr_t)s->mem, MEM_LEN, RIGHTS, &s->key) != HW_OK ||
	    fab_mr_share(s->key, s->mem, MEM_LEN, &s->mb) != 0)
		return -1;
	if (hw_mkey_reg(s->pd, s->mem, (uintptr_t)s->mem, MEM_LEN, HW_ACCESS_REMOTE_READ, &s->ro_key) != HW_OK ||
	    fab_mr_share(s->ro_key, s->mem, MEM_LEN, &s->rob) != 0)
		return -1;
	poller_init(&s->sc, s->scq);
	poller_init(&s->rc, s->rcq);
	return 0;
}

static int side_rts(struct side *s)
{
	for (enum hw_qp_state st = HW_QP_INIT; st <= HW_QP_RTS; st++)
		if (hw_qp_modify(s->qp, st) != HW_OK)
			return -1;
	return 0;
}

static struct hello side_hello(const struct side *s)
{
	return (struct hello){ .qpn = s->qpn, .key = s->key, .ro_key = s->ro_key, .addr = (uintptr_t)s->mem };
}

/* ---- the child ---- */

static int xread(int fd, void *p, size_t n)
{
	return read(fd, p, n) == (ssize_t)n ? 0 : -1;
}

static int xwrite(int fd, const void *p, size_t n)
{
	return write(fd, p, n) == (ssize_t)n ? 0 : -1;
}

static struct ans child_do(struct side *s, const struct hello *peer, const struct cmd *c)
{
	struct ans a = { 0 };
	struct wqe w;

	switch (c->op) {
	case 'P': /* ping: set up and in RTS */
		break;
	case 'R': /* post a receive */
		a.idx = post_recv(s, c->a, c->b);
		break;
	case 'C': /* the next receive CQE, waited for */
		return cqe_ans(wait_cqe(&s->rc));
	case 'N': /* a receive CQE now, or none */
		return cqe_ans(poll_cqe(&s->rc));
	case 'F': /* fill memory */
		fill(s->mem + c->a, c->b, c->c);
		break;
	case 'V': /* the 8 bytes at off */
		memcpy(&a.v, s->mem + c->a, 8);
		break;
	case 'S': /* SEND_IMM from mem + a, b bytes, to the peer; its requester CQE */
		w_ctrl(&w, HW_WQE_SEND_IMM, c->c);
		w_data(&w, s->mem + c->a, c->b, s->key);
		post(s, &w);
		a.st = ring(s);
		return a.st != HW_OK ? a : cqe_ans(wait_cqe(&s->sc));
	case 'T': /* the responder's RNR timer */
		a.st = hw_qp_set_rnr(s->qp, (uint8_t)c->a, 0);
		break;
	case 'U': /* c->a datagrams to its own UD QP, each 8 bytes: sender 2, sequence */
		for (uint32_t k = 0; k < c->a && a.st == 0; k++) {
			uint64_t tag = 2ull << 32 | k;

			memcpy(s->mem + 60000 + k * 8, &tag, 8);
			w_ctrl(&w, HW_WQE_SEND, 0);
			w_av(&w, s->qpn, QKEY);
			w_data(&w, s->mem + 60000 + k * 8, 8, s->key);
			post(s, &w);
			a.st = ring(s);
		}
		break;
	case 'L': /* arm the SRQ limit */
		a.st = hw_srq_arm(s->srq, c->a);
		break;
	case 'E': /* limit events reported here, waited for until there are c->a */
		for (int ms = 0; ms < WAIT_MS && __atomic_load_n(&srq_limit_events, __ATOMIC_RELAXED) < c->a; ms++)
			sleep_ms(1);
		a.v = __atomic_load_n(&srq_limit_events, __ATOMIC_RELAXED);
		break;
	case 'D': /* destroy the QP (its number stays held) */
		hw_qp_destroy(s->qp);
		s->qp = NULL;
		break;
	default:
		a.st = -1;
	}
	(void)peer;
	return a;
}

/* The child: its side set up, connected to the parent's QP (RC), then commands until 'Q'. */
static void child_main(int in, int out, enum hw_qp_type type)
{
	struct side s;
	struct hello h, peer;
	struct cmd c;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (side_setup(&s, type) != 0)
		_exit(2);
	h = side_hello(&s);
	if (xwrite(out, &h, sizeof(h)) != 0 || xread(in, &peer, sizeof(peer)) != 0)
		_exit(3);
	if (type == HW_QPT_RC && hw_qp_connect_qpn(s.qp, peer.qpn) != HW_OK)
		_exit(4);
	if (side_rts(&s) != 0)
		_exit(5);
	while (xread(in, &c, sizeof(c)) == 0 && c.op != 'Q') {
		struct ans a = child_do(&s, &peer, &c);

		if (c.op == 'M') { /* memory [a, a + b) */
			if (xwrite(out, s.mem + c.a, c.b) != 0)
				_exit(6);
			continue;
		}
		if (xwrite(out, &a, sizeof(a)) != 0)
			_exit(6);
	}
	side_free(&s);
	_exit(0);
}

/* ---- the parent ---- */

static void teardown(void *arg)
{
	(void)arg;
	if (kid > 0) {
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
	}
	kid = -1;
	if (to_kid >= 0)
		close(to_kid);
	if (from_kid >= 0)
		close(from_kid);
	to_kid = from_kid = -1;
	side_free(&me);
}

static struct ans ask(char op, uint32_t a, uint32_t b, uint32_t c)
{
	struct cmd m = { .op = op, .a = a, .b = b, .c = c };
	struct ans r = { .st = -100, .op = 0xfe };

	if (xwrite(to_kid, &m, sizeof(m)) != 0 || xread(from_kid, &r, sizeof(r)) != 0)
		r.st = -100;
	return r;
}

static int kid_mem(uint32_t off, uint32_t len, uint8_t *dst)
{
	struct cmd m = { .op = 'M', .a = off, .b = len };

	return xwrite(to_kid, &m, sizeof(m)) == 0 && xread(from_kid, dst, len) == 0 ? 0 : -1;
}

/*
 * The child is forked first (the parent holds no queue then), both set up,
 * exchange hellos, and connect to each other by number (RC).
 */
static int pair_start(enum hw_qp_type type, struct hello *peer)
{
	int a[2], b[2];
	struct hello h;

	th_defer(teardown, NULL);
	if (pipe(a) != 0 || pipe(b) != 0)
		return -1;
	kid = fork();
	if (kid < 0)
		return -1;
	if (kid == 0) {
		close(a[1]);
		close(b[0]);
		child_main(a[0], b[1], type);
	}
	close(a[0]);
	close(b[1]);
	to_kid = a[1];
	from_kid = b[0];
	with_srq = false; /* the child only */
	if (side_setup(&me, type) != 0 || xread(from_kid, peer, sizeof(*peer)) != 0)
		return -1;
	h = side_hello(&me);
	if (xwrite(to_kid, &h, sizeof(h)) != 0)
		return -1;
	if (type == HW_QPT_RC && hw_qp_connect_qpn(me.qp, peer->qpn) != HW_OK)
		return -1;
	if (side_rts(&me) != 0)
		return -1;
	return ask('P', 0, 0, 0).st == 0 ? 0 : -1; /* the child is in RTS */
}

static int req_ok(const uint8_t *c, uint16_t idx, uint32_t byte_cnt)
{
	struct ans a = cqe_ans(c);

	return a.op == HW_CQE_REQ && a.idx == idx && a.qpn == me.qpn && a.byte_cnt == byte_cnt;
}

static int err_cqe(const uint8_t *c, uint8_t op, uint8_t synd, uint16_t idx)
{
	struct ans a = cqe_ans(c);

	return a.op == op && a.synd == synd && a.idx == idx;
}

/* Every RC operation between the two processes: bytes land, each side's CQEs as the card's. */
static void test_rc_ops(void)
{
	struct hello peer;
	uint8_t *got = malloc(MEM_LEN);
	struct wqe w;
	uint16_t idx;
	struct ans r;

	CHECK(got != NULL);
	th_defer(free, got);
	CHECK(pair_start(HW_QPT_RC, &peer) == 0);
	fill(me.mem, MEM_LEN, 1);
	CHECK(ask('F', 0, MEM_LEN, 2).st == 0);

	/* WRITE: 3000 bytes at an odd offset; the bytes around stay. */
	w_ctrl(&w, HW_WQE_RDMA_WRITE, 0);
	w_raddr(&w, peer.addr + 101, peer.key);
	w_data(&w, me.mem + 7, 3000, me.key);
	idx = post(&me, &w);
	CHECK_ERR(ring(&me), HW_OK);
	CHECK(req_ok(poll_cqe(&me.sc), idx, 3000));
	CHECK(kid_mem(0, MEM_LEN, got) == 0);
	{
		uint8_t *ref = malloc(MEM_LEN);

		CHECK(ref != NULL);
		fill(ref, MEM_LEN, 2);
		memcpy(ref + 101, me.mem + 7, 3000);
		int same = memcmp(got, ref, MEM_LEN) == 0;
		free(ref);
		CHECK(same);
	}
	CHECK(ask('N', 0, 0, 0).op == 0xff); /* a WRITE consumes no receive */

	/* WRITE_IMM: lands and consumes the child's receive, whose CQE carries the immediate. */
	r = ask('R', 8192, 64, 0);
	w_ctrl(&w, HW_WQE_RDMA_WRITE_IMM, 0xabcd1234);
	w_raddr(&w, peer.addr + 4096, peer.key);
	w_data(&w, me.mem + 500, 200, me.key);
	idx = post(&me, &w);
	CHECK_ERR(ring(&me), HW_OK);
	CHECK(req_ok(poll_cqe(&me.sc), idx, 200));
	struct ans c = ask('C', 0, 0, 0);
	CHECK(c.op == HW_CQE_RESP_WR_IMM && c.imm == 0xabcd1234 && c.byte_cnt == 200 && c.idx == r.idx &&
	      c.qpn == peer.qpn);
	CHECK(kid_mem(4096, 200, got) == 0 && memcmp(got, me.mem + 500, 200) == 0);

	/* SEND and SEND_IMM into the child's receives. */
	for (int k = 0; k < 2; k++) {
		uint8_t op = k == 0 ? HW_WQE_SEND : HW_WQE_SEND_IMM;

		r = ask('R', 16384 + (uint32_t)k * 1024, 1024, 0);
		w_ctrl(&w, op, 0x5150u + (uint32_t)k);
		w_data(&w, me.mem + 1000 + k, 777, me.key);
		idx = post(&me, &w);
		CHECK_ERR(ring(&me), HW_OK);
		CHECK(req_ok(poll_cqe(&me.sc), idx, 777));
		c = ask('C', 0, 0, 0);
		CHECK(c.op == (k == 0 ? HW_CQE_RESP_SEND : HW_CQE_RESP_SEND_IMM) && c.byte_cnt == 777 && c.idx == r.idx);
		CHECK(k == 0 || c.imm == 0x5151);
		CHECK(kid_mem(16384 + (uint32_t)k * 1024, 777, got) == 0 && memcmp(got, me.mem + 1000 + k, 777) == 0);
	}

	/* READ: the child's bytes come here. */
	w_ctrl(&w, HW_WQE_RDMA_READ, 0);
	w_raddr(&w, peer.addr + 30000, peer.key);
	w_data(&w, me.mem + 40000, 5000, me.key);
	idx = post(&me, &w);
	CHECK_ERR(ring(&me), HW_OK);
	CHECK(req_ok(poll_cqe(&me.sc), idx, 5000));
	CHECK(kid_mem(30000, 5000, got) == 0 && memcmp(got, me.mem + 40000, 5000) == 0);

	/* CAS that matches, CAS that does not, FA: old values here, new value there. */
	uint64_t old;
	CHECK(kid_mem(50000, 8, got) == 0);
	memcpy(&old, got, 8);
	w_ctrl(&w, HW_WQE_ATOMIC_CS, 0);
	w_raddr(&w, peer.addr + 50000, peer.key);
	w_atomic(&w, 0x1111222233334444ull, old);
	w_data(&w, me.mem + 60000, 8, me.key);
	idx = post(&me, &w);
	w_ctrl(&w, HW_WQE_ATOMIC_CS, 0);
	w_raddr(&w, peer.addr + 50000, peer.key);
	w_atomic(&w, 0x9999ull, old); /* no longer equal: nothing swapped */
	w_data(&w, me.mem + 60008, 8, me.key);
	post(&me, &w);
	w_ctrl(&w, HW_WQE_ATOMIC_FA, 0);
	w_raddr(&w, peer.addr + 50000, peer.key);
	w_atomic(&w, 5, 0);
	w_data(&w, me.mem + 60016, 8, me.key);
	post(&me, &w);
	CHECK_ERR(ring(&me), HW_OK);
	CHECK(req_ok(poll_cqe(&me.sc), idx, 8));
	CHECK(req_ok(poll_cqe(&me.sc), (uint16_t)(idx + 1), 8) && req_ok(poll_cqe(&me.sc), (uint16_t)(idx + 2), 8));
	uint64_t v[3];
	memcpy(v, me.mem + 60000, 24);
	CHECK(v[0] == old && v[1] == 0x1111222233334444ull && v[2] == 0x1111222233334444ull);
	CHECK(ask('V', 50000, 0, 0).v == 0x1111222233334444ull + 5);

	/* The other way: the child's SEND_IMM lands in a receive of this process. */
	uint16_t ridx = post_recv(&me, 20000, 512);
	fill(got, 300, 9);
	r = ask('S', 100, 300, 0x77);
	CHECK(r.op == HW_CQE_REQ && r.byte_cnt == 300 && r.qpn == peer.qpn);
	c = cqe_ans(poll_cqe(&me.rc));
	CHECK(c.op == HW_CQE_RESP_SEND_IMM && c.imm == 0x77 && c.byte_cnt == 300 && c.idx == ridx && c.qpn == me.qpn);
	CHECK(kid_mem(100, 300, got) == 0 && memcmp(got, me.mem + 20000, 300) == 0);
	CHECK(hw_qp_state(me.qp) == HW_QP_RTS);
}

static void close_cb(void *arg)
{
	close((int)(intptr_t)arg);
}

static void waiter_disarm_cb(void *arg)
{
	hw_waiter_disarm(arg);
}

/* A CQ armed here fires its completion event when a requester of another process completes into it. */
static void test_event_from_other_process(void)
{
	struct hello peer;
	struct hw_watch_set set = { 0 };
	struct hw_waiter w;
	struct pollfd pfd;
	uint64_t v = 0;
	int efd;

	CHECK(pair_start(HW_QPT_RC, &peer) == 0);
	efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	CHECK(efd >= 0);
	th_defer(close_cb, (void *)(intptr_t)efd);
	hw_waiter_init(&w, efd);
	th_defer_local(waiter_disarm_cb, &w);
	uint16_t ridx = post_recv(&me, 0, 64);
	CHECK_ERR(hw_watch_set_add(&set, hw_cq_event_bell(me.rcq), hw_bell_seq(hw_cq_event_bell(me.rcq)), NULL, NULL),
		  HW_OK);
	me.rc.dbrec[1] = htobe32(me.rc.ci & 0xffffff); /* arm NEXT, sequence 0, at the consumer index */
	CHECK_ERR(hw_cq_arm(me.rcq, me.rc.ci & 0xffffff), HW_OK);
	CHECK_ERR(hw_waiter_arm(&w, &set), HW_OK);
	pfd = (struct pollfd){ .fd = efd, .events = POLLIN };
	CHECK(poll(&pfd, 1, 0) == 0);
	CHECK(ask('S', 0, 32, 9).op == HW_CQE_REQ);
	CHECK(poll(&pfd, 1, WAIT_MS) == 1);
	CHECK(read(efd, &v, sizeof(v)) == sizeof(v) && v >= 1);
	struct ans c = cqe_ans(poll_cqe(&me.rc));
	CHECK(c.op == HW_CQE_RESP_SEND_IMM && c.idx == ridx && c.imm == 9);
	hw_waiter_disarm(&w);
	th_undefer(waiter_disarm_cb, &w);
}

/* Outside the key's range, and without the right: REMOTE_ACCESS_ERR, the child's memory untouched. */
static void test_remote_access_errors(void)
{
	struct hello peer;
	uint8_t *got = malloc(MEM_LEN), *ref = malloc(MEM_LEN);
	struct wqe w;
	uint16_t idx;

	CHECK(got != NULL && ref != NULL);
	th_defer(free, got);
	th_defer(free, ref);
	CHECK(pair_start(HW_QPT_RC, &peer) == 0);
	CHECK(ask('F', 0, MEM_LEN, 3).st == 0);
	fill(ref, MEM_LEN, 3);
	for (int k = 0; k < 2; k++) {
		w_ctrl(&w, HW_WQE_RDMA_WRITE, 0);
		if (k == 0) /* the last 100 bytes lie past the end */
			w_raddr(&w, peer.addr + MEM_LEN - 100, peer.key);
		else /* a read-only key */
			w_raddr(&w, peer.addr + 64, peer.ro_key);
		w_data(&w, me.mem, 200, me.key);
		idx = post(&me, &w);
		CHECK_ERR(ring(&me), HW_OK);
		CHECK(err_cqe(poll_cqe(&me.sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_REMOTE_ACCESS_ERR, idx));
		CHECK(hw_qp_state(me.qp) == HW_QP_ERR);
		CHECK(kid_mem(0, MEM_LEN, got) == 0 && memcmp(got, ref, MEM_LEN) == 0);
		/* Back to RTS for the next case; the peer did not change. */
		CHECK_ERR(hw_qp_modify(me.qp, HW_QP_RESET), HW_OK);
		me.sq_pi = 0;
		CHECK(side_rts(&me) == 0);
	}
	/* The read-only key reads. */
	w_ctrl(&w, HW_WQE_RDMA_READ, 0);
	w_raddr(&w, peer.addr + 64, peer.ro_key);
	w_data(&w, me.mem, 200, me.key);
	idx = post(&me, &w);
	CHECK_ERR(ring(&me), HW_OK);
	CHECK(req_ok(poll_cqe(&me.sc), idx, 200));
	CHECK(memcmp(me.mem, ref + 64, 200) == 0);
}

/* A datagram to a UD QP of another process: its receive gets the GRH area and the payload. */
static void test_ud_to_other_process(void)
{
	struct hello peer;
	uint8_t got[600];
	struct wqe w;
	uint16_t idx;

	CHECK(pair_start(HW_QPT_UD, &peer) == 0);
	fill(me.mem, 4096, 4);
	struct ans r = ask('R', 0, 600, 0);
	w_ctrl(&w, HW_WQE_SEND_IMM, 0x4242);
	w_av(&w, peer.qpn, QKEY);
	w_data(&w, me.mem + 11, 500, me.key);
	idx = post(&me, &w);
	CHECK_ERR(ring(&me), HW_OK);
	CHECK(req_ok(poll_cqe(&me.sc), idx, 500));
	struct ans c = ask('C', 0, 0, 0);
	CHECK(c.op == HW_CQE_RESP_SEND_IMM && c.byte_cnt == 500 + HW_UD_GRH_BYTES && c.imm == 0x4242 &&
	      c.idx == r.idx && c.qpn == peer.qpn);
	CHECK(kid_mem(HW_UD_GRH_BYTES, 500, got) == 0 && memcmp(got, me.mem + 11, 500) == 0);
	/* A wrong qkey is dropped: the sender completes, the receiver sees nothing. */
	(void)ask('R', 0, 600, 0);
	w_ctrl(&w, HW_WQE_SEND, 0);
	w_av(&w, peer.qpn, QKEY + 1);
	w_data(&w, me.mem, 10, me.key);
	idx = post(&me, &w);
	CHECK_ERR(ring(&me), HW_OK);
	CHECK(req_ok(poll_cqe(&me.sc), idx, 10));
	CHECK(ask('N', 0, 0, 0).op == 0xff);
}

/*
 * Two processes send datagrams into one RQ at the same time: every datagram
 * lands once, in its own receive, and the CQEs come in the receives' order.
 */
static void test_ud_two_senders_one_rq(void)
{
	enum { N = 16 };
	struct hello peer;
	uint8_t got[2 * N * 128];
	uint32_t next[3] = { 0 };
	struct cmd m = { .op = 'U', .a = N };
	struct ans r;
	struct wqe w;

	CHECK(pair_start(HW_QPT_UD, &peer) == 0);
	for (uint32_t i = 0; i < 2 * N; i++)
		CHECK(ask('R', i * 128, 128, 0).idx == i);
	CHECK(xwrite(to_kid, &m, sizeof(m)) == 0); /* the child sends while this process does */
	for (uint32_t k = 0; k < N; k++) {
		uint64_t tag = 1ull << 32 | k;

		memcpy(me.mem + k * 8, &tag, 8);
		w_ctrl(&w, HW_WQE_SEND, 0);
		w_av(&w, peer.qpn, QKEY);
		w_data(&w, me.mem + k * 8, 8, me.key);
		post(&me, &w);
		CHECK_ERR(ring(&me), HW_OK);
	}
	CHECK(xread(from_kid, &r, sizeof(r)) == 0 && r.st == 0);
	for (uint32_t i = 0; i < 2 * N; i++) {
		struct ans c = ask('C', 0, 0, 0);

		CHECK(c.op == HW_CQE_RESP_SEND && c.idx == i && c.byte_cnt == 8 + HW_UD_GRH_BYTES);
	}
	CHECK(ask('N', 0, 0, 0).op == 0xff);
	CHECK(kid_mem(0, sizeof(got), got) == 0);
	for (uint32_t i = 0; i < 2 * N; i++) {
		uint64_t tag;

		memcpy(&tag, got + i * 128 + HW_UD_GRH_BYTES, 8);
		CHECK((tag >> 32) == 1 || (tag >> 32) == 2);
		CHECK((uint32_t)tag == next[tag >> 32]); /* each sender's datagrams in its order, none twice */
		next[tag >> 32]++;
	}
	CHECK(next[1] == N && next[2] == N);
}

/*
 * RNR across processes: the waiting requester learns of the child's receive
 * at its next retry (the engine thread kicks it); with retries left at none,
 * RNR_RETRY_EXC.
 */
static void test_rnr_across_processes(void)
{
	struct hello peer;
	uint8_t got[64];
	struct wqe w;
	uint16_t idx;

	CHECK(pair_start(HW_QPT_RC, &peer) == 0);
	CHECK(ask('T', 1, 0, 0).st == 0); /* 10 us between retries */
	CHECK_ERR(hw_qp_set_rnr(me.qp, 0, HW_QP_RNR_RETRY_INFINITE), HW_OK);
	fill(me.mem, 64, 5);
	w_ctrl(&w, HW_WQE_SEND, 0);
	w_data(&w, me.mem, 64, me.key);
	idx = post(&me, &w);
	CHECK_ERR(ring(&me), HW_OK);
	CHECK(poll_cqe(&me.sc) == NULL && hw_qp_deadline(me.qp) != HW_QP_NO_DEADLINE);
	struct ans r = ask('R', 256, 64, 0);
	CHECK(req_ok(wait_cqe(&me.sc), idx, 64));
	struct ans c = ask('C', 0, 0, 0);
	CHECK(c.op == HW_CQE_RESP_SEND && c.idx == r.idx && c.byte_cnt == 64);
	CHECK(kid_mem(256, 64, got) == 0 && memcmp(got, me.mem, 64) == 0);
	/* Three retries and no receive. */
	CHECK_ERR(hw_qp_set_rnr(me.qp, 0, 3), HW_OK);
	w_ctrl(&w, HW_WQE_SEND, 0);
	w_data(&w, me.mem, 64, me.key);
	idx = post(&me, &w);
	CHECK_ERR(ring(&me), HW_OK);
	CHECK(err_cqe(wait_cqe(&me.sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_RNR_RETRY_EXC_ERR, idx));
	CHECK(hw_qp_state(me.qp) == HW_QP_ERR && ask('N', 0, 0, 0).op == 0xff);
}

/*
 * A receive posted in another process resumes the requester waiting on RNR
 * for it when it is posted, as one posted in the same process does: on a
 * card the responder takes the SEND as soon as the receive is there. The
 * requester's RNR deadlines are left to its caller (hw_qp_set_caller_timers)
 * and this test never kicks them while the receive comes, so no retry can
 * run the SEND: it completes only because the child's receive woke it. The
 * responder's timer is the longest (code 0, 655.36 ms) and retries are
 * unlimited, as a program that counts on its receives would set them. Twice,
 * so the watch is set again after it fired. Then a card's accounting with
 * no receive: a kick before the deadline counts nothing, each at the
 * deadline one retry, and the last of rnr_retry ends in RNR_RETRY_EXC.
 * The child's QP receives from its RQ, or from its SRQ (srq).
 */
static void rnr_recv_wakes(bool srq)
{
	struct hello peer;
	uint8_t got[200];
	struct wqe w;
	uint16_t idx;
	uint64_t d;

	with_srq = srq;
	CHECK(pair_start(HW_QPT_RC, &peer) == 0);
	CHECK(ask('T', 0, 0, 0).st == 0);
	CHECK_ERR(hw_qp_set_rnr(me.qp, 0, HW_QP_RNR_RETRY_INFINITE), HW_OK);
	CHECK_ERR(hw_qp_set_caller_timers(me.qp, true), HW_OK);
	fill(me.mem, 400, 9);
	for (uint32_t k = 0; k < 2; k++) {
		w_ctrl(&w, HW_WQE_SEND, 0);
		w_data(&w, me.mem + 200 * k, 200, me.key);
		idx = post(&me, &w);
		CHECK_ERR(ring(&me), HW_OK);
		CHECK(poll_cqe(&me.sc) == NULL && hw_qp_deadline(me.qp) != HW_QP_NO_DEADLINE);
		struct ans r = ask('R', 1024 * k, 200, 0);
		CHECK(req_ok(wait_cqe(&me.sc), idx, 200));
		CHECK(hw_qp_deadline(me.qp) == HW_QP_NO_DEADLINE);
		struct ans c = ask('C', 0, 0, 0);
		CHECK(c.op == HW_CQE_RESP_SEND && c.idx == r.idx && c.byte_cnt == 200);
		CHECK(kid_mem(1024 * k, 200, got) == 0 && memcmp(got, me.mem + 200 * k, 200) == 0);
	}
	CHECK_ERR(hw_qp_set_rnr(me.qp, 0, 3), HW_OK);
	w_ctrl(&w, HW_WQE_SEND, 0);
	w_data(&w, me.mem, 64, me.key);
	idx = post(&me, &w);
	CHECK_ERR(ring(&me), HW_OK);
	d = hw_qp_deadline(me.qp);
	CHECK(d != HW_QP_NO_DEADLINE);
	CHECK_ERR(hw_qp_kick(me.qp, d - 1), HW_OK);
	CHECK(poll_cqe(&me.sc) == NULL && hw_qp_deadline(me.qp) == d);
	for (uint32_t k = 0; k < 2; k++) {
		CHECK_ERR(hw_qp_kick(me.qp, d), HW_OK);
		CHECK(poll_cqe(&me.sc) == NULL && hw_qp_deadline(me.qp) > d);
		d = hw_qp_deadline(me.qp);
	}
	CHECK_ERR(hw_qp_kick(me.qp, d), HW_OK);
	CHECK(err_cqe(poll_cqe(&me.sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_RNR_RETRY_EXC_ERR, idx));
	CHECK(hw_qp_state(me.qp) == HW_QP_ERR && ask('N', 0, 0, 0).op == 0xff);
}

static void test_rnr_recv_wakes_other_process(void)
{
	rnr_recv_wakes(false);
}

static void test_rnr_srq_recv_wakes_other_process(void)
{
	rnr_recv_wakes(true);
}

/*
 * The peer's process killed: as on a card, the first request after it is
 * unanswered (TRANSPORT_RETRY_EXC, the QP to ERR), its posted receives and
 * the requests behind it flushed; an idle QP learns nothing until it sends.
 */
static void test_peer_killed(void)
{
	struct hello peer;
	uint16_t r0, r1, idx, idx2;
	struct wqe w;

	CHECK(pair_start(HW_QPT_RC, &peer) == 0);
	r0 = post_recv(&me, 0, 64);
	r1 = post_recv(&me, 64, 64);
	CHECK(kill(kid, SIGKILL) == 0);
	CHECK(waitpid(kid, NULL, 0) == kid);
	kid = -1;
	CHECK(hw_qp_state(me.qp) == HW_QP_RTS && poll_cqe(&me.rc) == NULL);
	w_ctrl(&w, HW_WQE_RDMA_WRITE, 0);
	w_raddr(&w, peer.addr, peer.key);
	w_data(&w, me.mem, 8, me.key);
	idx = post(&me, &w);
	idx2 = post(&me, &w);
	CHECK_ERR(ring(&me), HW_OK);
	CHECK(err_cqe(poll_cqe(&me.sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, idx));
	CHECK(err_cqe(poll_cqe(&me.sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, idx2));
	CHECK(hw_qp_state(me.qp) == HW_QP_ERR);
	CHECK(err_cqe(wait_cqe(&me.rc), HW_CQE_RESP_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, r0));
	CHECK(err_cqe(wait_cqe(&me.rc), HW_CQE_RESP_ERR, HW_CQE_SYNDROME_WR_FLUSH_ERR, r1));
}

/* The peer QP destroyed: the next WQE finds no responder (TRANSPORT_RETRY_EXC), the QP goes to ERR. */
static void test_peer_destroyed(void)
{
	struct hello peer;
	struct wqe w;
	uint16_t idx;

	CHECK(pair_start(HW_QPT_RC, &peer) == 0);
	CHECK(ask('D', 0, 0, 0).st == 0);
	w_ctrl(&w, HW_WQE_RDMA_WRITE, 0);
	w_raddr(&w, peer.addr, peer.key);
	w_data(&w, me.mem, 8, me.key);
	idx = post(&me, &w);
	CHECK_ERR(ring(&me), HW_OK);
	CHECK(err_cqe(poll_cqe(&me.sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR, idx));
	CHECK(hw_qp_state(me.qp) == HW_QP_ERR);
	/* Connecting to it again finds nothing. */
	CHECK_ERR(hw_qp_connect_qpn(me.qp, peer.qpn), HW_ERR_KEY);
}

/* SENDs into a QP of another process that receives from a shared SRQ; its limit event reaches its owner. */
static void test_srq_across_processes(void)
{
	struct hello peer;
	uint8_t got[128];
	struct wqe w;

	with_srq = true;
	CHECK(pair_start(HW_QPT_RC, &peer) == 0);
	fill(me.mem, 4096, 7);
	for (uint32_t k = 0; k < 3; k++)
		CHECK(ask('R', 1024 * k, 128, 0).idx == k);
	CHECK(ask('L', 2, 0, 0).st == 0);
	for (uint32_t k = 0; k < 2; k++) {
		uint16_t idx;

		w_ctrl(&w, HW_WQE_SEND, 0);
		w_data(&w, me.mem + 100 * k, 128, me.key);
		idx = post(&me, &w);
		CHECK_ERR(ring(&me), HW_OK);
		CHECK(req_ok(poll_cqe(&me.sc), idx, 128));
		struct ans c = ask('C', 0, 0, 0);
		CHECK(c.op == HW_CQE_RESP_SEND && c.idx == k && c.byte_cnt == 128);
		CHECK(kid_mem(1024 * k, 128, got) == 0 && memcmp(got, me.mem + 100 * k, 128) == 0);
	}
	/* Two taken of three: fewer than the limit left once, one event, reported in the child. */
	CHECK(ask('E', 1, 0, 0).v == 1);
}

/* Numbers that name no reachable QP: never held, held but unpublished, a UD QP for RC. */
static void test_forged_qpn(void)
{
	struct hello peer;
	uint32_t bare = 0;

	CHECK(pair_start(HW_QPT_RC, &peer) == 0);
	CHECK_ERR(hw_qp_connect_qpn(me.qp, 0xfffff0), HW_ERR_KEY);
	CHECK_ERR(hw_id_alloc(HW_ID_QPN, &bare), HW_OK);
	CHECK_ERR(hw_qp_connect_qpn(me.qp, bare), HW_ERR_KEY);
	CHECK_ERR(hw_id_free(HW_ID_QPN, bare), HW_OK);
	CHECK_ERR(hw_qp_connect_qpn(me.qp, me.scqn), HW_ERR_KEY); /* a CQ's number is no QP */
	CHECK_ERR(hw_qp_connect_qpn(me.qp, peer.qpn), HW_OK);	  /* the real one still connects */
	CHECK(hw_qp_state(me.qp) == HW_QP_RTS);
}

/* A program that writes the WQE and the send record itself and calls nothing: the engine thread runs it. */
static void test_polled_doorbell(void)
{
	struct hello peer;
	uint8_t got[256];
	struct wqe w;
	uint16_t idx;

	CHECK(pair_start(HW_QPT_RC, &peer) == 0);
	CHECK_ERR(hw_qp_set_polled(me.qp, true), HW_OK);
	CHECK_ERR(hw_qp_set_polled(NULL, true), HW_ERR_INVAL);
	fill(me.mem, 256, 6);
	w_ctrl(&w, HW_WQE_RDMA_WRITE, 0);
	w_raddr(&w, peer.addr + 1000, peer.key);
	w_data(&w, me.mem, 256, me.key);
	idx = post(&me, &w); /* the record moves; no doorbell call */
	CHECK(req_ok(wait_cqe(&me.sc), idx, 256));
	CHECK(kid_mem(1000, 256, got) == 0 && memcmp(got, me.mem, 256) == 0);
	/* And again, twice in one record update. */
	w_ctrl(&w, HW_WQE_RDMA_WRITE, 0);
	w_raddr(&w, peer.addr + 2000, peer.key);
	w_data(&w, me.mem + 10, 100, me.key);
	idx = post(&me, &w);
	w_ctrl(&w, HW_WQE_RDMA_READ, 0);
	w_raddr(&w, peer.addr + 2000, peer.key);
	w_data(&w, me.mem + 300, 100, me.key);
	post(&me, &w);
	CHECK(req_ok(wait_cqe(&me.sc), idx, 100) && req_ok(wait_cqe(&me.sc), (uint16_t)(idx + 1), 100));
	CHECK(memcmp(me.mem + 300, me.mem + 10, 100) == 0);
	/*
	 * A send record more than a ring ahead (written over by another
	 * process): the QP fails with an error CQE for the WQE it stood at,
	 * never a silent stall.
	 */
	idx = (uint16_t)(idx + 2);
	__atomic_store_n(&hw_qp_dbrec(me.qp)[HW_QP_DBR_SND], htobe32((uint32_t)idx + 0x8000u), __ATOMIC_RELEASE);
	CHECK(err_cqe(wait_cqe(&me.sc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, idx));
	CHECK(hw_qp_state(me.qp) == HW_QP_ERR);
}

int main(void)
{
	fab_qmem_init();
	fab_mr_init();
	RUN(test_rc_ops);
	RUN(test_remote_access_errors);
	RUN(test_ud_to_other_process);
	RUN(test_ud_two_senders_one_rq);
	RUN(test_rnr_across_processes);
	RUN(test_rnr_recv_wakes_other_process);
	RUN(test_rnr_srq_recv_wakes_other_process);
	RUN(test_srq_across_processes);
	RUN(test_peer_killed);
	RUN(test_peer_destroyed);
	RUN(test_forged_qpn);
	RUN(test_polled_doorbell);
	/*
	 * Last: its watch starts the device's watch engine thread, which lives
	 * on, and ThreadSanitizer cannot follow threads a child of a
	 * multi-threaded process starts.
	 */
	RUN(test_event_from_other_process);
	return th_summary("test_hw_xq");
}
