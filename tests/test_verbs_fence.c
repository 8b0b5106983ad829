/*
 * Destroy is a fence (ibv_destroy_qp/cq/srq(3), ibv_dereg_mr(3)): when the
 * call returns, nothing of any thread or process reads or writes through
 * the object any more. Tried as an adversary would: another thread or
 * process keeps the object busy while it goes, many rounds, and what
 * follows is checked: no crash or write to freed memory (run under ASan in
 * CI), the statuses the card gives afterwards (RC: RETRY_EXC_ERR, then
 * flushes; a write through a deregistered key: REM_ACCESS_ERR), and not one
 * byte landing in a buffer after its deregistration returned.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "th_proc.h"
#include "verbs_qp_fixture.h"

#define ROUNDS 60
#define FILL 0xab
#define BIG (4u << 20)
#define CHUNK (1u << 20)

static unsigned fence_seed;

/*
 * Registered buffers get pages of their own, unmapped when freed: the pages
 * a registration shares must not come back as heap that the forks of the
 * multi-process cases use.
 */
static void *pages(size_t n)
{
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void pages_free(void *p, size_t n)
{
	if (p != NULL)
		munmap(p, n);
}

static void page_free_cb(void *p)
{
	pages_free(p, 4096);
}

static void pages8_free_cb(void *p)
{
	pages_free(p, 8 * 4096);
}

static void chunk_free_cb(void *p)
{
	pages_free(p, CHUNK);
}

static uint32_t rnd(void)
{
	return (uint32_t)rand_r(&fence_seed);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- a requester thread that keeps posting until its QP fails ---- */

struct sender {
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	enum ibv_wr_opcode op;
	struct ibv_mr *mr;     /* local source */
	uint64_t raddr;
	uint32_t rkey;
	uint32_t len;
	uint32_t span;	       /* bytes at raddr the writes cycle over */
	struct ibv_ah *ah;     /* UD */
	uint32_t remote_qpn;   /* UD */
	_Atomic int started;   /* a first completion came */
	_Atomic int stop;
	/* out */
	long ok;
	int first_err;	       /* -1: none */
	long after_first;      /* completions after the first error */
	long bad_after;	       /* of those, not WR_FLUSH_ERR */
	_Atomic long posted;
	long last_ok_id;       /* wr_id of the last SUCCESS, -1: none */
};

static int post_one(struct sender *s, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->mr->addr, .length = s->len, .lkey = s->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1, .opcode = s->op,
				  .send_flags = IBV_SEND_SIGNALED, .imm_data = htobe32((uint32_t)id) }, *bad;

	if (s->op == IBV_WR_RDMA_WRITE || s->op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		wr.wr.rdma.remote_addr = s->raddr + (id * s->len) % (s->span - s->len + 1);
		wr.wr.rdma.rkey = s->rkey;
	}
	if (s->ah != NULL) {
		wr.wr.ud.ah = s->ah;
		wr.wr.ud.remote_qpn = s->remote_qpn;
		wr.wr.ud.remote_qkey = 0x11111111;
	}
	return ibv_post_send(s->qp, &wr, &bad);
}

static void sender_note(struct sender *s, const struct ibv_wc *wc)
{
	if (wc->status == IBV_WC_SUCCESS && s->first_err < 0) {
		s->ok++;
		s->last_ok_id = (long)wc->wr_id;
		atomic_store(&s->started, 1);
		return;
	}
	if (s->first_err < 0) {
		s->first_err = wc->status;
		return;
	}
	s->after_first++;
	if (wc->status != IBV_WC_WR_FLUSH_ERR)
		s->bad_after++;
}

/* Posts one at a time (a few in flight) until an error CQE and a flush after it, or stop. */
static void *sender_main(void *arg)
{
	struct sender *s = arg;
	uint64_t id = 0, deadline = mono_ns() + 20000000000ull;
	int inflight = 0;

	s->first_err = -1;
	s->last_ok_id = -1;
	while (mono_ns() < deadline) {
		struct ibv_wc wc[4];
		int n;

		/* Counted before it goes: a request counted when the peer was dead may have gone before. */
		while (inflight < 4 && (atomic_store(&s->posted, (long)id + 1), post_one(s, id)) == 0) {
			id++;
			inflight++;
		}
		n = ibv_poll_cq(s->cq, 4, wc);
		for (int i = 0; i < n; i++)
			sender_note(s, &wc[i]);
		inflight -= n > 0 ? n : 0;
		if (s->after_first > 0 || (atomic_load(&s->stop) && s->first_err < 0 && s->ah != NULL && inflight == 0))
			break;
	}
	/* What is still posted ends too: drain it. */
	for (long spins = 0; inflight > 0 && spins < 100000000; spins++) {
		struct ibv_wc wc;

		if (ibv_poll_cq(s->cq, 1, &wc) == 1) {
			sender_note(s, &wc);
			inflight--;
		}
	}
	return NULL;
}

static void wait_started(struct sender *s)
{
	uint64_t end = mono_ns() + 10000000000ull;

	while (!atomic_load(&s->started) && mono_ns() < end)
		sched_yield();
}

static void busy_delay(void)
{
	uint64_t end = mono_ns() + rnd() % 300000;

	while (mono_ns() < end)
		;
}

/* ---- RC: the responder QP and its CQ destroyed under a stream of SENDs / WRITEs with immediate ---- */

struct rc_round {
	struct ibv_context *c;
	struct ibv_pd *pd;
	bool use_srq;
	enum ibv_wr_opcode op;
};

static struct ibv_qp *mk_qp(struct ibv_pd *pd, enum ibv_qp_type t, struct ibv_cq *cq, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = t,
		.cap = {.max_send_wr = 64, .max_recv_wr = 1024, .max_send_sge = 1, .max_recv_sge = 1},
	};

	return ibv_create_qp(pd, &a);
}

static int post_recvs(struct ibv_qp *qp, struct ibv_srq *srq, struct ibv_mr *mr, int n, uint32_t len)
{
	for (int i = 0; i < n; i++) {
		struct ibv_sge sge = { .addr = (uintptr_t)mr->addr + (uint64_t)(i % 8) * len, .length = len,
				       .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1 }, *bad;
		int rc = srq != NULL ? ibv_post_srq_recv(srq, &wr, &bad) : ibv_post_recv(qp, &wr, &bad);

		if (rc != 0)
			return rc;
	}
	return 0;
}

/* One round: 0, or the line that failed. The sender's statuses are checked by the caller. */
static int rc_round(const struct rc_round *r, struct sender *s, uint8_t *src, uint8_t *dst)
{
	struct ibv_cq *cqa = ibv_create_cq(r->c, 256, NULL, NULL, 0), *cqb = ibv_create_cq(r->c, 2048, NULL, NULL, 0);
	struct ibv_srq_init_attr sa = { .attr = {.max_wr = 1024, .max_sge = 1} };
	struct ibv_srq *srq = r->use_srq ? ibv_create_srq(r->pd, &sa) : NULL;
	struct ibv_mr *ms = ibv_reg_mr(r->pd, src, 4096, VQ_ACCESS_ALL), *md = ibv_reg_mr(r->pd, dst, 8 * 4096, VQ_ACCESS_ALL);
	struct ibv_qp *a = NULL, *b = NULL;
	pthread_t t;
	int line = 0;

	if (cqa == NULL || cqb == NULL || ms == NULL || md == NULL || (r->use_srq && srq == NULL))
		return __LINE__;
	a = mk_qp(r->pd, IBV_QPT_RC, cqa, NULL);
	b = mk_qp(r->pd, IBV_QPT_RC, cqb, srq);
	if (a == NULL || b == NULL || vq_up(a, b->qp_num, 1, 7) != 0 || vq_up(b, a->qp_num, 1, 7) != 0 ||
	    post_recvs(b, srq, md, 1024, 4096) != 0)
		return __LINE__;
	*s = (struct sender){ .qp = a, .cq = cqa, .op = r->op, .mr = ms, .len = 64 + rnd() % 512,
			      .raddr = (uintptr_t)dst, .rkey = md->rkey, .span = 8 * 4096 };
	if (pthread_create(&t, NULL, sender_main, s) != 0)
		return __LINE__;
	wait_started(s);
	busy_delay();
	/* The responder goes while requests stream at it: its QP, its SRQ, its CQ, its memory. */
	if (ibv_destroy_qp(b) != 0)
		line = __LINE__;
	if (srq != NULL && ibv_destroy_srq(srq) != 0)
		line = __LINE__;
	if (ibv_destroy_cq(cqb) != 0)
		line = __LINE__;
	if (ibv_dereg_mr(md) != 0)
		line = __LINE__;
	pthread_join(t, NULL);
	ibv_destroy_qp(a);
	ibv_destroy_cq(cqa);
	ibv_dereg_mr(ms);
	return line;
}

static void run_rc(bool use_srq, enum ibv_wr_opcode op)
{
	struct rc_round r = { .use_srq = use_srq, .op = op };
	uint8_t *src = pages(4096), *dst = pages(8 * 4096);
	long retry = 0, flushed = 0;

	r.c = vf_open();
	CHECK(r.c != NULL && src != NULL && dst != NULL);
	th_defer(page_free_cb, src);
	th_defer(pages8_free_cb, dst);
	r.pd = vf_pd(r.c);
	CHECK(r.pd != NULL);
	for (int i = 0; i < ROUNDS; i++) {
		struct sender s;
		int line = rc_round(&r, &s, src, dst);

		if (line != 0)
			TH_FAIL("round %d: setup or destroy failed at line %d", i, line);
		CHECK(line == 0);
		/* As on the card: the first request nobody answers exhausts its retries, the QP goes to ERR. */
		if (s.first_err != IBV_WC_RETRY_EXC_ERR || s.bad_after != 0)
			TH_FAIL("round %d: first error %d (want %d), %ld non-flush after it", i, s.first_err,
				IBV_WC_RETRY_EXC_ERR, s.bad_after);
		CHECK(s.first_err == IBV_WC_RETRY_EXC_ERR && s.bad_after == 0);
		retry++;
		flushed += s.after_first;
	}
	printf("  %d rounds: RETRY_EXC_ERR in each, %ld flushes after it\n", ROUNDS, flushed);
	CHECK(retry == ROUNDS);
}

static void test_rc_send_destroy(void)
{
	run_rc(false, IBV_WR_SEND);
}

static void test_rc_write_imm_destroy(void)
{
	run_rc(false, IBV_WR_RDMA_WRITE_WITH_IMM);
}

static void test_rc_srq_destroy(void)
{
	run_rc(true, IBV_WR_SEND);
}

/* ---- UD: the destination and its CQ destroyed while datagrams stream at it ---- */

static int ud_round(struct ibv_context *c, struct ibv_pd *pd, uint8_t *src, uint8_t *dst, struct sender *s)
{
	struct ibv_cq *cqa = ibv_create_cq(c, 256, NULL, NULL, 0), *cqb = ibv_create_cq(c, 2048, NULL, NULL, 0);
	struct ibv_mr *ms = ibv_reg_mr(pd, src, 4096, VQ_ACCESS_ALL), *md = ibv_reg_mr(pd, dst, 8 * 4096, VQ_ACCESS_ALL);
	struct ibv_ah_attr aa = { .dlid = 1, .port_num = 1 };
	struct ibv_qp *a, *b;
	struct ibv_ah *ah;
	pthread_t t;
	int line = 0;

	if (cqa == NULL || cqb == NULL || ms == NULL || md == NULL)
		return __LINE__;
	a = mk_qp(pd, IBV_QPT_UD, cqa, NULL);
	b = mk_qp(pd, IBV_QPT_UD, cqb, NULL);
	ah = vq_grh_self(pd->context, &aa) == 0 ? ibv_create_ah(pd, &aa) : NULL;
	if (a == NULL || b == NULL || ah == NULL || vq_up(a, 0, 0, 0) != 0 || vq_up(b, 0, 0, 0) != 0 ||
	    post_recvs(b, NULL, md, 1024, 4096) != 0)
		return __LINE__;
	*s = (struct sender){ .qp = a, .cq = cqa, .op = IBV_WR_SEND, .mr = ms, .len = 64 + rnd() % (1024 - 64 + 1), .ah = ah,
			      .remote_qpn = b->qp_num };
	if (pthread_create(&t, NULL, sender_main, s) != 0)
		return __LINE__;
	wait_started(s);
	busy_delay();
	if (ibv_destroy_qp(b) != 0 || ibv_destroy_cq(cqb) != 0 || ibv_dereg_mr(md) != 0)
		line = __LINE__;
	/* UD has no acknowledgement: the sender goes on, its datagrams dropped. */
	usleep(1000);
	atomic_store(&s->stop, 1);
	pthread_join(t, NULL);
	ibv_destroy_qp(a);
	ibv_destroy_ah(ah);
	ibv_destroy_cq(cqa);
	ibv_dereg_mr(ms);
	return line;
}

static void test_ud_destroy(void)
{
	struct ibv_context *c = vf_open();
	uint8_t *src = pages(4096), *dst = pages(8 * 4096);
	struct ibv_pd *pd;

	CHECK(c != NULL && src != NULL && dst != NULL);
	th_defer(page_free_cb, src);
	th_defer(pages8_free_cb, dst);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	for (int i = 0; i < ROUNDS; i++) {
		struct sender s;
		int line = ud_round(c, pd, src, dst, &s);

		if (line != 0 || s.first_err != -1)
			TH_FAIL("round %d: line %d, first error %d", i, line, s.first_err);
		CHECK(line == 0 && s.first_err == -1); /* every datagram completes SUCCESS, delivered or dropped */
	}
}

/* ---- deregistration fences the key: no byte lands after ibv_dereg_mr returned ---- */

static long count_late(const uint8_t *p, size_t n)
{
	long late = 0;

	for (size_t i = 0; i < n; i++)
		late += p[i] != 0;
	return late;
}

/* A thread streams 1 MiB WRITEs into a fresh heap block; the owner deregisters, zeroes it and looks. */
static void test_dereg_fence_thread(void)
{
	struct ibv_context *c = vf_open();
	uint8_t *src = pages(CHUNK);
	struct ibv_pd *pd;
	long late = 0, rem_access = 0;

	CHECK(c != NULL && src != NULL);
	th_defer(chunk_free_cb, src);
	memset(src, FILL, CHUNK);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	for (int i = 0; i < ROUNDS / 2; i++) {
		struct ibv_cq *cqa = ibv_create_cq(c, 64, NULL, NULL, 0), *cqb = ibv_create_cq(c, 64, NULL, NULL, 0);
		struct ibv_qp *a = mk_qp(pd, IBV_QPT_RC, cqa, NULL), *b = mk_qp(pd, IBV_QPT_RC, cqb, NULL);
		uint8_t *dst = pages(BIG);
		struct ibv_mr *ms = ibv_reg_mr(pd, src, CHUNK, VQ_ACCESS_ALL), *md;
		struct sender s;
		pthread_t t;

		CHECK(cqa != NULL && cqb != NULL && a != NULL && b != NULL && dst != NULL && ms != NULL);
		md = ibv_reg_mr(pd, dst, BIG, VQ_ACCESS_ALL);
		CHECK(md != NULL);
		CHECK(vq_up(a, b->qp_num, 1, 7) == 0 && vq_up(b, a->qp_num, 1, 7) == 0);
		s = (struct sender){ .qp = a, .cq = cqa, .op = IBV_WR_RDMA_WRITE, .mr = ms, .len = CHUNK,
				     .raddr = (uintptr_t)dst, .rkey = md->rkey, .span = BIG };
		CHECK(pthread_create(&t, NULL, sender_main, &s) == 0);
		wait_started(&s);
		busy_delay();
		CHECK(ibv_dereg_mr(md) == 0);
		memset(dst, 0, BIG);
		usleep(2000); /* a write still running would land now */
		late += count_late(dst, BIG);
		pthread_join(t, NULL);
		rem_access += s.first_err == IBV_WC_REM_ACCESS_ERR;
		if (s.first_err != IBV_WC_REM_ACCESS_ERR || s.bad_after != 0)
			TH_FAIL("round %d: first error %d (want %d)", i, s.first_err, IBV_WC_REM_ACCESS_ERR);
		ibv_destroy_qp(a);
		ibv_destroy_qp(b);
		ibv_destroy_cq(cqa);
		ibv_destroy_cq(cqb);
		ibv_dereg_mr(ms);
		pages_free(dst, BIG);
		CHECK(s.first_err == IBV_WC_REM_ACCESS_ERR);
	}
	printf("  %d rounds: %ld late bytes, %ld ended in REM_ACCESS_ERR\n", ROUNDS / 2, late, rem_access);
	CHECK(late == 0);
}

/* ---- the same with the writer in another process ---- */

static struct ibv_qp *cycle_qp(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr r = { .qp_state = IBV_QPS_RESET };

	if (ibv_modify_qp(qp, &r, IBV_QP_STATE) != 0 || vq_up(qp, dest, 1, 7) != 0)
		return NULL;
	return qp;
}

/* The role: a requester of its own process, told where to write, streaming until its QP fails. */
struct writer {
	struct ibv_device **l;
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	uint8_t *src;
	struct ibv_mr *ms;
};

static void writer_free(struct writer *w)
{
	if (w->qp != NULL)
		ibv_destroy_qp(w->qp);
	if (w->cq != NULL)
		ibv_destroy_cq(w->cq);
	if (w->ms != NULL)
		ibv_dereg_mr(w->ms);
	if (w->pd != NULL)
		ibv_dealloc_pd(w->pd);
	if (w->c != NULL)
		ibv_close_device(w->c);
	if (w->l != NULL)
		ibv_free_device_list(w->l);
	pages_free(w->src, CHUNK);
}

/* A role's device, queue and registered pages (reg bytes of them); what failed is NULL. */
static void writer_open(struct writer *w, enum ibv_qp_type t, size_t reg)
{
	w->l = ibv_get_device_list(NULL);
	w->c = w->l != NULL && w->l[0] != NULL ? ibv_open_device(w->l[0]) : NULL;
	w->pd = w->c != NULL ? ibv_alloc_pd(w->c) : NULL;
	w->cq = w->pd != NULL ? ibv_create_cq(w->c, 64, NULL, NULL, 0) : NULL;
	w->qp = w->cq != NULL ? mk_qp(w->pd, t, w->cq, NULL) : NULL;
	w->src = pages(CHUNK);
	w->ms = w->src != NULL && w->pd != NULL ? ibv_reg_mr(w->pd, w->src, reg, VQ_ACCESS_ALL) : NULL;
}

/* One signalled 8-byte WRITE of the role's pattern: its completion status, -1 when none came. */
static int write_one(struct writer *w, uint64_t addr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)w->src, .length = 8, .lkey = w->ms->lkey };
	struct ibv_send_wr wr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	wr.wr.rdma.remote_addr = addr;
	wr.wr.rdma.rkey = rkey;
	if (ibv_post_send(w->qp, &wr, &bad) != 0 || vq_poll1(w->cq, &wc) != 1)
		return -1;
	return wc.status;
}

static int writer_rounds(struct writer *w)
{
	char line[256];

	while (fgets(line, sizeof(line), stdin) != NULL) {
		unsigned long long addr;
		unsigned rkey, dest;
		struct sender s;
		pthread_t t;

		if (sscanf(line, "ONE %u %llx %x", &dest, &addr, &rkey) == 3) {
			printf("DONE %d\n", cycle_qp(w->qp, dest) != NULL ? write_one(w, addr, rkey) : -1);
			fflush(stdout);
			continue;
		}
		if (sscanf(line, "GO %u %llx %x", &dest, &addr, &rkey) != 3)
			return 4;
		if (cycle_qp(w->qp, dest) == NULL)
			return 2;
		s = (struct sender){ .qp = w->qp, .cq = w->cq, .op = IBV_WR_RDMA_WRITE, .mr = w->ms, .len = CHUNK,
				     .raddr = addr, .rkey = rkey, .span = BIG };
		if (pthread_create(&t, NULL, sender_main, &s) != 0)
			return 3;
		wait_started(&s);
		printf("STARTED\n");
		fflush(stdout);
		pthread_join(t, NULL);
		printf("DONE %d %ld %ld\n", s.first_err, s.ok, s.bad_after);
		fflush(stdout);
	}
	return 0;
}

static int writer_role(void)
{
	struct writer w = { 0 };
	int rc = 1;

	writer_open(&w, IBV_QPT_RC, CHUNK);
	if (w.qp != NULL && w.ms != NULL) {
		memset(w.src, FILL, CHUNK);
		printf("QPN %u\n", w.qp->qp_num);
		fflush(stdout);
		rc = writer_rounds(&w);
	}
	writer_free(&w);
	return rc;
}

static void test_dereg_fence_process(void)
{
	struct ibv_context *c = vf_open();
	struct th_proc *p = th_proc_start(NULL, "writer", NULL);
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	unsigned peer = 0;
	long late = 0;
	const char *l;

	CHECK(c != NULL && p != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 64);
	CHECK(pd != NULL && cq != NULL);
	qp = vq_qp(pd, IBV_QPT_RC, cq, cq, 16);
	CHECK(qp != NULL);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "QPN %u", &peer) == 1);
	for (int i = 0; i < ROUNDS / 2; i++) {
		uint8_t *dst = pages(BIG);
		struct ibv_mr *md;
		int err = -1;
		long ok = 0, bad = 0;

		CHECK(dst != NULL);
		md = ibv_reg_mr(pd, dst, BIG, VQ_ACCESS_ALL);
		CHECK(md != NULL && cycle_qp(qp, peer) != NULL);
		CHECK(th_proc_send(p, "GO %u %llx %x", qp->qp_num, (unsigned long long)(uintptr_t)dst, md->rkey) == 0);
		l = th_proc_line(p);
		CHECK(l != NULL && strcmp(l, "STARTED") == 0);
		busy_delay();
		CHECK(ibv_dereg_mr(md) == 0);
		memset(dst, 0, BIG);
		usleep(2000);
		late += count_late(dst, BIG);
		l = th_proc_line(p);
		CHECK(l != NULL && sscanf(l, "DONE %d %ld %ld", &err, &ok, &bad) == 3);
		pages_free(dst, BIG);
		if (err != IBV_WC_REM_ACCESS_ERR || bad != 0)
			TH_FAIL("round %d: the writer's first error %d (want %d)", i, err, IBV_WC_REM_ACCESS_ERR);
		CHECK(err == IBV_WC_REM_ACCESS_ERR && bad == 0);
	}
	printf("  %d rounds: %ld late bytes\n", ROUNDS / 2, late);
	CHECK(late == 0);
	th_proc_close_input(p);
	CHECK(th_proc_wait(p) == 0);
}

/*
 * ---- memory of many registrations of another process: each new key
 * reaches its memory (the mappings of deregistered ones go) ----
 */
static void test_many_remote_ranges(void)
{
	struct ibv_context *c = vf_open();
	struct th_proc *p = th_proc_start(NULL, "writer", NULL);
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	unsigned peer = 0;
	const char *l;

	CHECK(c != NULL && p != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 64);
	CHECK(pd != NULL && cq != NULL);
	qp = vq_qp(pd, IBV_QPT_RC, cq, cq, 16);
	CHECK(qp != NULL);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "QPN %u", &peer) == 1);
	for (int i = 0; i < 320; i++) { /* beyond the 256 mappings a process keeps */
		uint8_t *dst = pages(4096);
		struct ibv_mr *md = dst != NULL ? ibv_reg_mr(pd, dst, 4096, VQ_ACCESS_ALL) : NULL;
		int st = -2;

		CHECK(md != NULL && cycle_qp(qp, peer) != NULL);
		CHECK(th_proc_send(p, "ONE %u %llx %x", qp->qp_num, (unsigned long long)(uintptr_t)dst, md->rkey) == 0);
		l = th_proc_line(p);
		CHECK(l != NULL && sscanf(l, "DONE %d", &st) == 1);
		if (st != IBV_WC_SUCCESS || dst[0] != FILL)
			TH_FAIL("registration %d: the write completed %d, byte %#x", i, st, dst[0]);
		CHECK(st == IBV_WC_SUCCESS && dst[0] == FILL);
		CHECK(ibv_dereg_mr(md) == 0);
		pages_free(dst, 4096);
	}
	th_proc_close_input(p);
	CHECK(th_proc_wait(p) == 0);
}

/* ---- a responder that dies: no request succeeds after it, the first one fails with retries exceeded ---- */

static int responder_role(void)
{
	struct writer w = { 0 };
	char line[64];
	unsigned peer;
	int rc = 1;

	writer_open(&w, IBV_QPT_RC, 4096);
	if (w.qp != NULL && w.ms != NULL) {
		printf("QPN %u %llx %x\n", w.qp->qp_num, (unsigned long long)(uintptr_t)w.src, w.ms->rkey);
		fflush(stdout);
		if (fgets(line, sizeof(line), stdin) != NULL && sscanf(line, "CONNECT %u", &peer) == 1 &&
		    vq_up(w.qp, peer, 1, 7) == 0) {
			printf("UP\n");
			fflush(stdout);
			while (fgets(line, sizeof(line), stdin) != NULL) /* until killed, or the test ends */
				;
			rc = 0;
		}
	}
	writer_free(&w);
	return rc;
}

static void test_dead_responder(void)
{
	struct ibv_context *c = vf_open();
	uint8_t *src = pages(4096);
	struct ibv_pd *pd;
	struct ibv_mr *ms;

	CHECK(c != NULL && src != NULL);
	th_defer(page_free_cb, src);
	pd = vf_pd(c);
	CHECK(pd != NULL);
	ms = vq_mr(pd, src, 4096, VQ_ACCESS_ALL);
	CHECK(ms != NULL);
	for (int i = 0; i < 8; i++) {
		struct th_proc *p = th_proc_start(NULL, "responder", NULL);
		struct ibv_cq *cq = vq_cq(c, 64);
		struct ibv_qp *qp = cq != NULL ? mk_qp(pd, IBV_QPT_RC, cq, NULL) : NULL;
		unsigned long long raddr = 0;
		unsigned rqpn = 0, rkey = 0;
		struct sender s;
		const char *l;
		long dead_mark;
		pthread_t t;

		CHECK(p != NULL && qp != NULL);
		l = th_proc_line(p);
		if (l == NULL || sscanf(l, "QPN %u %llx %x", &rqpn, &raddr, &rkey) != 3)
			TH_FAIL("round %d: the responder said \"%s\" (status %d)", i, l != NULL ? l : "(nothing)", th_proc_wait(p));
		CHECK(l != NULL && rkey != 0);
		CHECK(vq_up(qp, rqpn, 1, 7) == 0 && th_proc_send(p, "CONNECT %u", qp->qp_num) == 0);
		l = th_proc_line(p);
		CHECK(l != NULL && strcmp(l, "UP") == 0);
		s = (struct sender){ .qp = qp, .cq = cq, .op = IBV_WR_RDMA_WRITE, .mr = ms, .len = 64, .raddr = raddr,
				     .rkey = rkey, .span = 4096 };
		CHECK(pthread_create(&t, NULL, sender_main, &s) == 0);
		wait_started(&s);
		busy_delay();
		th_proc_kill(p);
		th_proc_wait(p);
		dead_mark = atomic_load(&s.posted); /* every request from here on was posted to a dead process */
		pthread_join(t, NULL);
		ibv_destroy_qp(qp);
		if (s.first_err != IBV_WC_RETRY_EXC_ERR || s.bad_after != 0 || s.last_ok_id >= dead_mark)
			TH_FAIL("round %d: first error %d (want %d), %ld non-flush after it, last SUCCESS wr_id %ld "
				"with %ld posted when the responder was dead", i, s.first_err, IBV_WC_RETRY_EXC_ERR,
				s.bad_after, s.last_ok_id, dead_mark);
		CHECK(s.first_err == IBV_WC_RETRY_EXC_ERR && s.bad_after == 0 && s.last_ok_id < dead_mark);
	}
}

/* ---- UD senders that die while delivering: every SUCCESS names the buffer holding its datagram ---- */

#define UD_MAGIC 0x55445047u
#define UD_BUF 1152 /* GRH + the longest datagram */
#define UD_NRECV 1024

struct ud_hdr {
	uint32_t magic, sender, seq, len;
};

static uint8_t ud_byte(uint32_t sender, uint32_t seq, uint32_t i)
{
	return (uint8_t)(sender * 31u + seq * 7u + i);
}

static uint32_t ud_len(uint32_t seq)
{
	return 64 + (seq * 37u) % 1000u;
}

/* The role: streams datagrams to a QPN until killed, each one saying who sent it and how to check it. */
static int udsender_role(uint32_t dqpn, uint32_t id)
{
	struct writer w = { 0 };
	struct ibv_ah_attr aa = { .dlid = 1, .port_num = 1 };
	struct ibv_ah *ah = NULL;
	int rc = 1;

	writer_open(&w, IBV_QPT_UD, CHUNK);
	ah = w.pd != NULL && vq_grh_self(w.pd->context, &aa) == 0 ? ibv_create_ah(w.pd, &aa) : NULL;
	if (w.qp != NULL && w.ms != NULL && ah != NULL && vq_up(w.qp, 0, 0, 0) == 0) {
		struct sender s = { .qp = w.qp, .cq = w.cq, .op = IBV_WR_SEND, .mr = w.ms, .ah = ah, .remote_qpn = dqpn };

		/* 256 datagrams made once: the loop is mostly deliveries, where a death hurts. */
		for (uint32_t seq = 0; seq < 256; seq++) {
			uint8_t *m = w.src + seq * 2048;
			struct ud_hdr h = { UD_MAGIC, id, seq, ud_len(seq) };

			for (uint32_t i = 0; i < h.len; i++)
				m[i] = ud_byte(id, seq, i);
			memcpy(m, &h, sizeof(h));
		}
		for (uint32_t seq = 0;; seq++) {
			uint8_t *m = w.src + (seq % 256) * 2048;
			struct ibv_sge sge = { .addr = (uintptr_t)m, .length = ud_len(seq % 256), .lkey = w.ms->lkey };
			struct ibv_send_wr wr = { .wr_id = seq, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
						  .send_flags = IBV_SEND_SIGNALED }, *bad;
			struct ibv_wc wc;

			wr.wr.ud.ah = s.ah;
			wr.wr.ud.remote_qpn = dqpn;
			wr.wr.ud.remote_qkey = 0x11111111;
			if (ibv_post_send(w.qp, &wr, &bad) != 0)
				break;
			while (ibv_poll_cq(w.cq, 1, &wc) == 0)
				;
			if (wc.status != IBV_WC_SUCCESS)
				break;
			if (seq == 0) {
				printf("SENDING\n"); /* its death may now come at any point of a delivery */
				fflush(stdout);
			}
		}
		rc = 2;
	}
	if (ah != NULL)
		ibv_destroy_ah(ah);
	writer_free(&w);
	return rc;
}

/*
 * The buffer holds a whole datagram of the length the CQE gives: 1; else 0.
 * Every 16th is compared byte for byte, the others by header and length
 * (a buffer named but never written has the 0xee marker there).
 */
static int ud_check(const uint8_t *b, uint32_t byte_cnt, long n)
{
	const uint8_t *m = b + 40; /* after the GRH */
	struct ud_hdr h;

	memcpy(&h, m, sizeof(h));
	if (h.magic != UD_MAGIC || h.len != ud_len(h.seq) || byte_cnt != h.len + 40)
		return 0;
	for (uint32_t i = sizeof(h); n % 16 == 0 && i < h.len; i++)
		if (m[i] != ud_byte(h.sender, h.seq, i))
			return 0;
	return 1;
}

struct ud_rx {
	struct ibv_qp *qp;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	uint8_t *buf;
	bool posted[UD_NRECV];
	long ok, bad, errs, dup;
};

static int ud_repost(struct ud_rx *x, uint32_t i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)(x->buf + (size_t)i * UD_BUF), .length = UD_BUF, .lkey = x->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(x->buf + (size_t)i * UD_BUF, 0xee, 64); /* a receive named but never written shows */
	x->posted[i] = true;
	return x->srq != NULL ? ibv_post_srq_recv(x->srq, &wr, &bad) : ibv_post_recv(x->qp, &wr, &bad);
}

static void ud_take(struct ud_rx *x, const struct ibv_wc *wc)
{
	uint32_t i = (uint32_t)wc->wr_id;

	if (i >= UD_NRECV || !x->posted[i]) {
		x->dup++;
		return;
	}
	x->posted[i] = false;
	if (wc->status != IBV_WC_SUCCESS)
		x->errs++;
	else if (ud_check(x->buf + (size_t)i * UD_BUF, wc->byte_len, x->ok))
		x->ok++;
	else
		x->bad++;
}

/*
 * reap: each killed sender is reaped at once; otherwise it stays a zombie
 * until the case ends, and a lock it died holding must be taken over all the same.
 */
static void run_ud_dying(bool use_srq, bool reap)
{
	struct ibv_context *c = vf_open();
	struct ud_rx *x = calloc(1, sizeof(*x));
	struct ibv_srq_init_attr sa = { .attr = {.max_wr = UD_NRECV, .max_sge = 1} };
	struct th_proc *dying = NULL, *steady;
	uint64_t end, kill_at = 0;
	bool sending = false;
	char qpn[16];
	int kills = 0;
	struct ibv_pd *pd;

	CHECK(c != NULL && x != NULL);
	th_defer(free, x);
	pd = vf_pd(c);
	x->buf = pages((size_t)UD_NRECV * UD_BUF);
	CHECK(pd != NULL && x->buf != NULL);
	x->mr = vq_mr(pd, x->buf, (size_t)UD_NRECV * UD_BUF, VQ_ACCESS_ALL);
	x->cq = vq_cq(c, 2 * UD_NRECV);
	if (use_srq) {
		x->srq = ibv_create_srq(pd, &sa);
		CHECK(x->srq != NULL);
		th_defer(vq_destroy_srq_cb, x->srq);
	}
	CHECK(x->mr != NULL && x->cq != NULL);
	x->qp = vq_qp_srq(pd, IBV_QPT_UD, x->cq, x->cq, x->srq, UD_NRECV);
	CHECK(x->qp != NULL && vq_up(x->qp, 0, 0, 0) == 0);
	for (uint32_t i = 0; i < UD_NRECV; i++)
		CHECK(ud_repost(x, i) == 0);
	snprintf(qpn, sizeof(qpn), "%u", x->qp->qp_num);
	steady = th_proc_start(NULL, "udsender", qpn, "1", NULL);
	CHECK(steady != NULL);
	end = mono_ns() + 2000000000ull;
	while (mono_ns() < end) {
		struct ibv_wc wc[16];
		int n = ibv_poll_cq(x->cq, 16, wc);

		for (int k = 0; k < n; k++) {
			ud_take(x, &wc[k]);
			CHECK(ud_repost(x, (uint32_t)wc[k].wr_id % UD_NRECV) == 0);
		}
		if (dying != NULL && !sending && poll(&(struct pollfd){ .fd = dying->out, .events = POLLIN }, 1, 0) == 1) {
			sending = true; /* it streams: it dies 5-25 ms from now */
			kill_at = mono_ns() + 5000000ull + rnd() % 20000000ull;
		}
		if (dying == NULL || (sending && mono_ns() >= kill_at)) { /* the other sender dies and a new one starts */
			if (dying != NULL) {
				th_proc_kill(dying);
				if (reap)
					th_proc_wait(dying);
				kills++;
			}
			dying = th_proc_start(NULL, "udsender", qpn, "2", NULL);
			CHECK(dying != NULL);
			sending = false;
		}
	}
	th_proc_kill(dying);
	th_proc_kill(steady);
	th_proc_wait(dying);
	th_proc_wait(steady);
	if (!use_srq) { /* every receive still posted comes back once, flushed */
		struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };
		struct ibv_wc wc;

		CHECK(ibv_modify_qp(x->qp, &a, IBV_QP_STATE) == 0);
		while (vq_poll1(x->cq, &wc) == 1) {
			ud_take(x, &wc);
			bool left = false;
			for (uint32_t i = 0; i < UD_NRECV; i++)
				left |= x->posted[i];
			if (!left)
				break;
		}
		for (uint32_t i = 0; i < UD_NRECV; i++)
			if (x->posted[i])
				TH_FAIL("receive %u never completed", i);
	}
	printf("  %d kills: %ld datagrams checked, %ld named a buffer not holding them, %ld errors, %ld duplicate "
	       "completions\n", kills, x->ok, x->bad, x->errs, x->dup);
	CHECK(x->ok > 0 && x->bad == 0 && x->dup == 0);
}

static void test_ud_dying_sender(void)
{
	run_ud_dying(false, true);
}

static void test_ud_dying_sender_zombie(void)
{
	run_ud_dying(false, false);
}

static void test_ud_srq_dying_sender(void)
{
	run_ud_dying(true, true);
}

int main(int argc, char **argv)
{
	const char *seed = getenv("SOFTDPU_TEST_SEED");

	if (argc > 1 && strcmp(argv[1], "writer") == 0)
		return writer_role();
	if (argc > 1 && strcmp(argv[1], "responder") == 0)
		return responder_role();
	if (argc > 3 && strcmp(argv[1], "udsender") == 0)
		return udsender_role((uint32_t)strtoul(argv[2], NULL, 0), (uint32_t)strtoul(argv[3], NULL, 0));
	fence_seed = seed != NULL ? (unsigned)strtoul(seed, NULL, 0) : (unsigned)time(NULL);
	printf("seed %u (SOFTDPU_TEST_SEED replays it)\n", fence_seed);
	RUN(test_rc_send_destroy);
	RUN(test_rc_write_imm_destroy);
	RUN(test_rc_srq_destroy);
	RUN(test_ud_destroy);
	RUN(test_dereg_fence_thread);
	RUN(test_dereg_fence_process);
	RUN(test_many_remote_ranges);
	RUN(test_dead_responder);
	RUN(test_ud_dying_sender);
	RUN(test_ud_dying_sender_zombie);
	RUN(test_ud_srq_dying_sender);
	return th_summary("test_verbs_fence");
}
