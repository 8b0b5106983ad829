/*
 * FlexIO queues and event handlers (tests/flexio/fx_queue_dev.c): CQs and
 * an RC QP in DPA memory, connected to a host ibv QP; an event handler that
 * the receive CQ's events activate answers every message, for thousands of
 * messages one at a time and in bursts. Also the QP state machine, every
 * refusal of the create calls, and handlers that finish, crash or never
 * return. Outcomes asserted exactly: the answers' values, completion
 * statuses, the handler's own counters in DPA memory, error states.
 */
#include <endian.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <libflexio/flexio.h>

#include "flexio/fxq_fixture.h"
#include "harness.h"

extern struct flexio_app *fx_queue_dev;
flexio_func_t fxq_handler, fxq_bad_doorbells, fxq_post, fxq_eqe, fxq_eth_seg, fxq_unsupported;

/*
 * Reaps the host CQ until `answers` answers came: each must be 3v+1 of the
 * v sent in order from *next_v. The number of bad completions.
 */
static uint32_t host_reap(struct fx *f, uint32_t answers, uint64_t *next_v)
{
	uint32_t bad = 0;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (answers != 0) {
		struct ibv_wc wc;
		int n = ibv_poll_cq(f->hcq, 1, &wc);

		if (n == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if (t.tv_sec - t0.tv_sec > 10)
				return bad + answers; /* lost: the test fails, it does not hang */
			continue;
		}
		if (wc.status != IBV_WC_SUCCESS) {
			bad++;
			continue;
		}
		if (wc.opcode == IBV_WC_SEND)
			continue;
		if (wc.opcode != IBV_WC_RECV || wc.byte_len != 8 || f->hbuf[wc.wr_id % HOST_RX] != 3 * *next_v + 1)
			bad++;
		(*next_v)++;
		f->rx_done++;
		answers--;
		if (host_post_recv(f) != 0)
			bad++;
	}
	return bad;
}

static void test_ping_pong(void)
{
	struct fx *f = fx_up(fx_queue_dev, fxq_handler, FXQ_ECHO);
	uint64_t next = 0;
	uint32_t bad = 0;
	const uint32_t n = 5000;

	CHECK(f != NULL);
	if (f == NULL)
		return;
	for (uint32_t i = 0; i < HOST_RX; i++)
		CHECK_OK(host_post_recv(f));
	CHECK(flexio_event_handler_run(f->eh, f->ctx_d) == FLEXIO_STATUS_SUCCESS);
	for (uint32_t i = 0; i < n && bad == 0; i++) {
		CHECK_OK(host_send(f, i));
		bad += host_reap(f, 1, &next);
	}
	CHECK(bad == 0);
	CHECK(next == n);
	CHECK(f->c->msgs == n);
	CHECK(f->c->errors == 0 && f->c->arm_failures == 0);
	/* One message at a time: every message needed an activation of its own. */
	CHECK(f->c->activations >= n && f->c->activations <= n + 1);
	CHECK(f->c->last_arg == f->ctx_d);
	CHECK(flexio_err_status(f->p) == 0);
	fx_down(f);
}

static void test_bursts(void)
{
	struct fx *f = fx_up(fx_queue_dev, fxq_handler, FXQ_ECHO);
	uint64_t next = 0, sent = 0;
	uint32_t bad = 0;
	const uint32_t rounds = 300, burst = 16;

	CHECK(f != NULL);
	if (f == NULL)
		return;
	for (uint32_t i = 0; i < HOST_RX; i++)
		CHECK_OK(host_post_recv(f));
	CHECK(flexio_event_handler_run(f->eh, f->ctx_d) == FLEXIO_STATUS_SUCCESS);
	for (uint32_t r = 0; r < rounds && bad == 0; r++) {
		for (uint32_t i = 0; i < burst; i++)
			CHECK_OK(host_send(f, sent++));
		bad += host_reap(f, burst, &next);
	}
	CHECK(bad == 0);
	CHECK(next == (uint64_t)rounds * burst && f->c->msgs == next);
	CHECK(f->c->errors == 0 && f->c->arm_failures == 0);
	CHECK(f->c->activations >= 1 && f->c->activations <= next + 1);
	fx_down(f);
}

/* The first activation only: the events after it activate nothing. */
static void wait_quiet(void)
{
	usleep(50000);
}

static void test_finish(void)
{
	struct fx *f = fx_up(fx_queue_dev, fxq_handler, FXQ_FINISH);

	CHECK(f != NULL);
	if (f == NULL)
		return;
	CHECK(flexio_event_handler_run(f->eh, f->ctx_d) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_event_handler_run(f->eh, f->ctx_d) == FLEXIO_STATUS_FAILED); /* running already */
	CHECK_OK(host_send(f, 1));
	for (int i = 0; i < 10000 && __atomic_load_n(&f->c->activations, __ATOMIC_ACQUIRE) == 0; i++)
		usleep(100);
	CHECK(__atomic_load_n(&f->c->activations, __ATOMIC_ACQUIRE) == 1);
	/* The handler armed its CQ before it finished: the CQ fired, and more CQEs come, for a thread that is done. */
	CHECK_OK(host_send(f, 2));
	wait_quiet();
	CHECK(__atomic_load_n(&f->c->activations, __ATOMIC_ACQUIRE) == 1 && f->c->msgs == 0 && f->c->arm_failures == 0);
	CHECK(flexio_err_status(f->p) == 0);
	fx_down(f);
}

static void test_crash(void)
{
	struct fx *f = fx_up(fx_queue_dev, fxq_handler, FXQ_CRASH);
	struct pollfd pfd;

	CHECK(f != NULL);
	if (f == NULL)
		return;
	pfd.fd = flexio_err_handler_fd(f->p);
	pfd.events = POLLIN;
	CHECK(flexio_event_handler_run(f->eh, f->ctx_d) == FLEXIO_STATUS_SUCCESS);
	CHECK_OK(host_send(f, 1));
	CHECK(poll(&pfd, 1, 10000) == 1);
	CHECK(flexio_err_status(f->p) != 0);
	CHECK(__atomic_load_n(&f->c->activations, __ATOMIC_ACQUIRE) == 1);
	fx_down(f); /* the program goes on, and destroys what it made */
}

static void test_spin_stopped_by_destroy(void)
{
	struct fx *f = fx_up(fx_queue_dev, fxq_handler, FXQ_SPIN);

	CHECK(f != NULL);
	if (f == NULL)
		return;
	CHECK(flexio_event_handler_run(f->eh, f->ctx_d) == FLEXIO_STATUS_SUCCESS);
	CHECK_OK(host_send(f, 1));
	for (int i = 0; i < 10000 && __atomic_load_n(&f->c->activations, __ATOMIC_ACQUIRE) == 0; i++)
		usleep(100);
	CHECK(__atomic_load_n(&f->c->activations, __ATOMIC_ACQUIRE) == 1);
	/* The handler never returns: process destroy (here through the handler's destroy) stops it. */
	fx_down(f);
}

/* A QP destroyed while its handler rings its doorbell in a loop: the doorbell fails, nothing freed is touched. */
static void test_destroy_while_ringing(void)
{
	struct fx *f = fx_up(fx_queue_dev, fxq_handler, FXQ_RING);
	int i;

	CHECK(f != NULL);
	if (f == NULL)
		return;
	CHECK(flexio_event_handler_run(f->eh, f->ctx_d) == FLEXIO_STATUS_SUCCESS);
	CHECK_OK(host_send(f, 1));
	for (i = 0; i < 100000 && __atomic_load_n(&f->c->msgs, __ATOMIC_ACQUIRE) < 1000; i++)
		usleep(10);
	CHECK(__atomic_load_n(&f->c->msgs, __ATOMIC_ACQUIRE) >= 1000);
	CHECK(flexio_qp_destroy(f->qp) == FLEXIO_STATUS_SUCCESS);
	f->qp = NULL;
	for (i = 0; i < 100000 && __atomic_load_n(&f->c->errors, __ATOMIC_ACQUIRE) == 0; i++)
		usleep(10);
	CHECK(__atomic_load_n(&f->c->errors, __ATOMIC_ACQUIRE) == 1);
	CHECK(flexio_err_status(f->p) == 0);
	fx_down(f);
}

/* An event before run is kept: run activates the thread for it. */
static void test_event_before_run(void)
{
	struct fx *f = fx_up(fx_queue_dev, fxq_handler, FXQ_ECHO);
	uint64_t next = 0;

	CHECK(f != NULL);
	if (f == NULL)
		return;
	for (uint32_t i = 0; i < HOST_RX; i++)
		CHECK_OK(host_post_recv(f));
	CHECK_OK(host_send(f, 0));
	wait_quiet();
	CHECK(__atomic_load_n(&f->c->activations, __ATOMIC_ACQUIRE) == 0);
	CHECK(flexio_event_handler_run(f->eh, f->ctx_d) == FLEXIO_STATUS_SUCCESS);
	CHECK(host_reap(f, 1, &next) == 0);
	CHECK(f->c->activations == 1 && f->c->msgs == 1);
	fx_down(f);
}

static void test_doorbell_refusals(void)
{
	struct fx *f = fx_up(fx_queue_dev, fxq_handler, FXQ_ECHO);
	uint64_t r = 0;

	CHECK(f != NULL);
	if (f == NULL)
		return;
	CHECK(flexio_process_call(f->p, fxq_bad_doorbells, &r, flexio_outbox_get_id(f->outbox), f->c->qpn,
				  f->c->sq_cqn) == FLEXIO_STATUS_SUCCESS);
	/* no outbox: both fail; the outbox configured; unknown queues fail; a known CQ arms */
	CHECK(r == (1u << 0 | 1u << 1 | 1u << 3 | 1u << 4));
	CHECK(flexio_process_call(f->p, fxq_bad_doorbells, &r, 0xfff0u, f->c->qpn, f->c->sq_cqn) ==
	      FLEXIO_STATUS_SUCCESS);
	/* The RPC's thread keeps the outbox it configured before: a refused configuration changes nothing. */
	CHECK(r == (1u << 2 | 1u << 3 | 1u << 4));
	fx_down(f);
}

/* Every send WQE kind device code builds, executed by the queue engine against host memory. */
static void test_device_work_requests(void)
{
	struct fx *f = fx_up(fx_queue_dev, fxq_handler, FXQ_ECHO);
	uint64_t r = 0, next = 0;
	uint64_t *t;
	uint32_t rkey;

	CHECK(f != NULL);
	if (f == NULL)
		return;
	t = f->target;
	rkey = f->tmr->rkey;
	CHECK_OK(host_post_recv(f));
	/* RDMA WRITE (rdma and data segments) */
	CHECK(flexio_process_call(f->p, fxq_post, &r, f->ctx_d, 0u, (uint64_t)(uintptr_t)&t[1], rkey,
				  0x1122334455667788ull, 0ull) == FLEXIO_STATUS_SUCCESS);
	CHECK(r == 0 && t[1] == 0x1122334455667788ull && t[0] == 0 && t[2] == 0);
	/* RDMA READ */
	t[3] = 0xa5a5a5a55a5a5a5aull;
	CHECK(flexio_process_call(f->p, fxq_post, &r, f->ctx_d, 1u, (uint64_t)(uintptr_t)&t[3], rkey, 0ull, 0ull) ==
	      FLEXIO_STATUS_SUCCESS);
	CHECK(r == 0 && f->c->last_value == 0xa5a5a5a55a5a5a5aull);
	/* compare-and-swap: a match swaps, a mismatch does not; the old value comes back either way */
	t[4] = 7;
	CHECK(flexio_process_call(f->p, fxq_post, &r, f->ctx_d, 2u, (uint64_t)(uintptr_t)&t[4], rkey, 99ull, 7ull) ==
	      FLEXIO_STATUS_SUCCESS);
	CHECK(r == 0 && f->c->last_value == 7 && t[4] == 99);
	CHECK(flexio_process_call(f->p, fxq_post, &r, f->ctx_d, 2u, (uint64_t)(uintptr_t)&t[4], rkey, 5ull, 7ull) ==
	      FLEXIO_STATUS_SUCCESS);
	CHECK(r == 0 && f->c->last_value == 99 && t[4] == 99);
	/* SEND with its 8 bytes inline: the host's receive gets them */
	CHECK(flexio_process_call(f->p, fxq_post, &r, f->ctx_d, 3u, 0ull, 0u, 3ull * 41 + 1, 0ull) ==
	      FLEXIO_STATUS_SUCCESS);
	CHECK(r == 0);
	next = 41;
	CHECK(host_reap(f, 1, &next) == 0);
	/* A WRITE past the key's end: a requester error CQE (0xd), the memory untouched */
	CHECK(flexio_process_call(f->p, fxq_post, &r, f->ctx_d, 0u, (uint64_t)(uintptr_t)t + 4092, rkey, 1ull, 0ull) ==
	      FLEXIO_STATUS_SUCCESS);
	CHECK(r == 0xd && t[511] == 0);
	fx_down(f);
}

/*
 * Two FlexIO processes' device QPs connected to each other: device code of
 * one writes and reads the other's DPA memory through its device MKey.
 * The engine runs on the writer's DPA thread, so this is also the doorbell
 * running as host code: the other process's memory is under a protection
 * key the writer's device code may not touch.
 */
static void test_two_processes(void)
{
	struct fx *a = fx_up(fx_queue_dev, fxq_handler, FXQ_ECHO), *b = fx_up(fx_queue_dev, fxq_handler, FXQ_ECHO);
	uint64_t r = 0, *bmem;
	uint32_t bkey;

	CHECK(a != NULL && b != NULL);
	if (a == NULL || b == NULL)
		goto out;
	CHECK_OK(fx_qp_move(a->qp, FLEXIO_QP_STATE_RST, 0));
	CHECK_OK(fx_qp_move(b->qp, FLEXIO_QP_STATE_RST, 0));
	CHECK_OK(fx_qp_move(a->qp, FLEXIO_QP_STATE_INIT, 0));
	CHECK_OK(fx_qp_move(b->qp, FLEXIO_QP_STATE_INIT, 0));
	CHECK_OK(fx_qp_move(a->qp, FLEXIO_QP_STATE_RTR, b->c->qpn));
	CHECK_OK(fx_qp_move(b->qp, FLEXIO_QP_STATE_RTR, a->c->qpn));
	CHECK_OK(fx_qp_move(a->qp, FLEXIO_QP_STATE_RTS, 0));
	a->c->sq_pi = 0; /* RST emptied the SQ's counters */
	bmem = (uint64_t *)(uintptr_t)b->bufs_d;
	bkey = flexio_mkey_get_id(b->mkey);
	bmem[5] = 0x0123456789abcdefull;
	CHECK(flexio_process_call(a->p, fxq_post, &r, a->ctx_d, 0u, (uint64_t)(uintptr_t)&bmem[2], bkey,
				  0xfeedfacecafebeefull, 0ull) == FLEXIO_STATUS_SUCCESS);
	CHECK(r == 0 && bmem[2] == 0xfeedfacecafebeefull);
	CHECK(flexio_process_call(a->p, fxq_post, &r, a->ctx_d, 1u, (uint64_t)(uintptr_t)&bmem[5], bkey, 0ull,
				  0ull) == FLEXIO_STATUS_SUCCESS);
	CHECK(r == 0 && a->c->last_value == 0x0123456789abcdefull);
	CHECK(flexio_err_status(a->p) == 0 && flexio_err_status(b->p) == 0);
out:
	if (a != NULL)
		fx_down(a);
	if (b != NULL)
		fx_down(b);
}

/* The EQE getters and the Ethernet segment, against the PRM's byte layout. */
static void test_eqe_and_eth_layout(void)
{
	struct fx *f = fx_up(fx_queue_dev, fxq_handler, FXQ_ECHO);
	uint8_t eqe[64] = { 0 }, seg[16];
	const uint8_t want[16] = { 0, 0, 0, 0, 0xc0, 0x00, 0x05, 0xb4, 0, 0, 0, 0, 0x00, 0x02, 0xab, 0xcd };
	flexio_uintptr_t d;
	uint64_t r = 0;

	CHECK(f != NULL);
	if (f == NULL)
		return;
	d = dpa_alloc(f->p, 64);
	eqe[0x38 + 1] = 0x12; /* cqn, 24 bits big-endian at 0x39 */
	eqe[0x38 + 2] = 0x34;
	eqe[0x38 + 3] = 0x56;
	eqe[0x3f] = 1;
	CHECK(flexio_host2dev_memcpy(f->p, eqe, sizeof(eqe), d) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_process_call(f->p, fxq_eqe, &r, d) == FLEXIO_STATUS_SUCCESS);
	CHECK(r == (0x123456ull | 1ull << 32));
	memset((void *)(uintptr_t)d, 0xee, 16);
	CHECK(flexio_process_call(f->p, fxq_eth_seg, &r, d) == FLEXIO_STATUS_SUCCESS && r == 0);
	memcpy(seg, (void *)(uintptr_t)d, sizeof(seg));
	CHECK(memcmp(seg, want, sizeof(want)) == 0);
	fx_down(f);
}

static void test_cq_refusals(void)
{
	struct fx *f = fx_up(fx_queue_dev, fxq_handler, FXQ_ECHO);
	struct flexio_cq_attr a = { .log_cq_depth = 4, .element_type = FLEXIO_CQ_ELEMENT_TYPE_NON_DPA_CQ };
	struct flexio_cq *cq = (struct flexio_cq *)1;
	uint16_t cnt, per, mode;
	uint8_t stack[64];

	CHECK(f != NULL);
	if (f == NULL)
		return;
	a.cq_ring_qmem.daddr = cq_ring(f->p, 4);
	a.cq_dbr_daddr = dpa_alloc(f->p, 8);
	CHECK(flexio_cq_create(NULL, NULL, &a, &cq) == FLEXIO_STATUS_FAILED && cq == NULL);
	CHECK(flexio_cq_create(f->p, NULL, NULL, &cq) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_cq_create(f->p, NULL, &a, NULL) == FLEXIO_STATUS_FAILED);
	a.log_cq_depth = 23;
	CHECK(flexio_cq_create(f->p, NULL, &a, &cq) == FLEXIO_STATUS_FAILED);
	a.log_cq_depth = 5; /* a ring bigger than its buffer */
	CHECK(flexio_cq_create(f->p, NULL, &a, &cq) == FLEXIO_STATUS_FAILED);
	a.log_cq_depth = 4;
	a.cq_ring_qmem.daddr += 8; /* misaligned */
	CHECK(flexio_cq_create(f->p, NULL, &a, &cq) == FLEXIO_STATUS_FAILED);
	a.cq_ring_qmem.daddr = (uintptr_t)stack; /* not DPA memory */
	CHECK(flexio_cq_create(f->p, NULL, &a, &cq) == FLEXIO_STATUS_FAILED);
	a.cq_ring_qmem.daddr = cq_ring(f->p, 4);
	a.element_type = FLEXIO_CQ_ELEMENT_TYPE_DPA_THREAD; /* without a thread */
	CHECK(flexio_cq_create(f->p, NULL, &a, &cq) == FLEXIO_STATUS_FAILED);
	a.element_type = FLEXIO_CQ_ELEMENT_TYPE_EXT_EQ;
	CHECK(flexio_cq_create(f->p, NULL, &a, &cq) == FLEXIO_STATUS_FAILED);
	a.element_type = 0x5;
	CHECK(flexio_cq_create(f->p, NULL, &a, &cq) == FLEXIO_STATUS_FAILED);
	a.element_type = FLEXIO_CQ_ELEMENT_TYPE_NON_DPA_CQ;
	a.cqe_comp_type = FLEXIO_CQE_COMP_BASIC;
	CHECK(flexio_cq_create(f->p, NULL, &a, &cq) == FLEXIO_STATUS_FAILED);
	a.cqe_comp_type = FLEXIO_CQE_COMP_NONE;
	a.cq_max_count = 8;
	a.cq_period = 16;
	a.cq_period_mode = FLEXIO_CQ_PERIOD_MODE_CQE;
	CHECK(flexio_cq_create(f->p, NULL, &a, &cq) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_cq_get_cq_num(cq) != 0 && flexio_cq_get_cq_num(cq) != f->c->rq_cqn);
	CHECK(flexio_cq_query_moderation(cq, &cnt, &per, &mode) == FLEXIO_STATUS_SUCCESS);
	CHECK(cnt == 8 && per == 16 && mode == FLEXIO_CQ_PERIOD_MODE_CQE);
	CHECK(flexio_cq_modify_moderation(cq, 3, 4, FLEXIO_CQ_PERIOD_MODE_EVENT) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_cq_modify_moderation(cq, 3, 4, 7) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_cq_query_moderation(cq, &cnt, &per, &mode) == FLEXIO_STATUS_SUCCESS);
	CHECK(cnt == 3 && per == 4 && mode == FLEXIO_CQ_PERIOD_MODE_EVENT);
	CHECK(flexio_cq_query_moderation(cq, NULL, &per, &mode) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_cq_modify_moderation(NULL, 1, 1, 0) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_cq_destroy(cq) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_cq_destroy(NULL) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_cq_get_cq_num(NULL) == 0);
	CHECK(flexio_cq_destroy(f->rq_cq) == FLEXIO_STATUS_FAILED); /* its QP still completes into it */
	fx_down(f);
}

static void test_qp_state_machine(void)
{
	struct fx *f = fx_up(fx_queue_dev, fxq_handler, FXQ_ECHO);
	struct flexio_qp *saved;
	struct flexio_qp_attr a;

	CHECK(f != NULL);
	if (f == NULL)
		return;
	saved = f->qp;
	CHECK(qp_new(f) == 0); /* a second QP on the same CQs, in RST */
	CHECK(flexio_qp_get_qp_num(f->qp) != 0 && flexio_qp_get_qp_num(f->qp) != flexio_qp_get_qp_num(saved));
	CHECK(fx_qp_move(f->qp, FLEXIO_QP_STATE_RTR, f->hqp->qp_num) == -1); /* RST to RTR */
	CHECK(fx_qp_move(f->qp, FLEXIO_QP_STATE_RTS, 0) == -1);
	CHECK_OK(fx_qp_move(f->qp, FLEXIO_QP_STATE_INIT, 0));
	CHECK(fx_qp_move(f->qp, FLEXIO_QP_STATE_RTS, 0) == -1);		      /* INIT to RTS */
	CHECK(fx_qp_move(f->qp, FLEXIO_QP_STATE_RTR, 0xfedcba) == -1);	      /* no such peer: stays INIT */
	CHECK_OK(fx_qp_move(f->qp, FLEXIO_QP_STATE_RTR, f->hqp->qp_num));
	CHECK_OK(fx_qp_move(f->qp, FLEXIO_QP_STATE_RTS, 0));
	CHECK_OK(fx_qp_move(f->qp, FLEXIO_QP_STATE_ERR, 0));
	CHECK(fx_qp_move(f->qp, FLEXIO_QP_STATE_RTS, 0) == -1);
	CHECK_OK(fx_qp_move(f->qp, FLEXIO_QP_STATE_RST, 0));
	CHECK_OK(fx_qp_move(f->qp, FLEXIO_QP_STATE_INIT, 0));
	CHECK(flexio_qp_modify(f->qp, NULL, NULL) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_qp_modify(NULL, &a, NULL) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_qp_destroy(f->qp) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_qp_destroy(NULL) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_qp_get_qp_num(NULL) == 0);
	f->qp = saved;
	fx_down(f);
}

static void test_qp_refusals(void)
{
	struct fx *f = fx_up(fx_queue_dev, fxq_handler, FXQ_ECHO);
	struct flexio_qp_attr a = { .transport_type = FLEXIO_QPC_ST_RC, .log_sq_depth = 2, .log_rq_depth = 2 };
	struct flexio_qp *qp = (struct flexio_qp *)1;

	CHECK(f != NULL);
	if (f == NULL)
		return;
	a.sq_cqn = f->c->sq_cqn;
	a.rq_cqn = f->c->rq_cqn;
	a.qp_wq_buff_qmem.daddr = dpa_alloc(f->p, (16u << 2) + (64u << 2));
	a.qp_wq_dbr_qmem.daddr = dpa_alloc(f->p, 8);
	CHECK(flexio_qp_create(NULL, NULL, &a, &qp) == FLEXIO_STATUS_FAILED && qp == NULL);
	CHECK(flexio_qp_create(f->p, NULL, NULL, &qp) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_qp_create(f->p, NULL, &a, NULL) == FLEXIO_STATUS_FAILED);
	a.transport_type = FLEXIO_QPC_ST_UD;
	CHECK(flexio_qp_create(f->p, NULL, &a, &qp) == FLEXIO_STATUS_FAILED);
	a.transport_type = FLEXIO_QPC_ST_RC;
	a.log_sq_depth = 3; /* rings bigger than their buffer */
	CHECK(flexio_qp_create(f->p, NULL, &a, &qp) == FLEXIO_STATUS_FAILED);
	a.log_sq_depth = 16;
	CHECK(flexio_qp_create(f->p, NULL, &a, &qp) == FLEXIO_STATUS_FAILED);
	a.log_sq_depth = 2;
	a.sq_cqn = 0xabcdef; /* not a CQ of the process */
	CHECK(flexio_qp_create(f->p, NULL, &a, &qp) == FLEXIO_STATUS_FAILED);
	a.sq_cqn = f->c->sq_cqn;
	a.rq_type = FLEXIO_QP_QPC_RQ_TYPE_SRQ_RMP_XRC_SRQ_XRQ;
	CHECK(flexio_qp_create(f->p, NULL, &a, &qp) == FLEXIO_STATUS_FAILED);
	a.rq_type = FLEXIO_QP_QPC_RQ_TYPE_REGULAR;
	a.qp_wq_dbr_qmem.daddr += 4; /* misaligned record */
	CHECK(flexio_qp_create(f->p, NULL, &a, &qp) == FLEXIO_STATUS_FAILED);
	a.qp_wq_dbr_qmem.daddr -= 4;
	CHECK(flexio_qp_create(f->p, NULL, &a, &qp) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_qp_destroy(qp) == FLEXIO_STATUS_SUCCESS);
	fx_down(f);
}

/*
 * What softdpu does not run — EQs and emulated functions — fails as
 * documented: FLEXIO_STATUS_FAILED, the out pointer NULL, ids 0, nothing
 * made; the device calls FAILED.
 */
static void test_unsupported(void)
{
	struct fx *f = fx_up(fx_queue_dev, fxq_handler, FXQ_ECHO);
	struct flexio_emu_db_to_cq_ctx *db = (struct flexio_emu_db_to_cq_ctx *)1;
	struct flexio_emu_device_msix_map *map = (struct flexio_emu_device_msix_map *)1;
	struct flexio_msix *msix = (struct flexio_msix *)1;
	uint64_t r = 0;

	CHECK(f != NULL);
	if (f == NULL)
		return;
	CHECK(flexio_emu_db_to_cq_map(ctx, 1, 1, f->rq_cq, &db) == FLEXIO_STATUS_FAILED && db == NULL);
	CHECK(flexio_emu_db_to_cq_unmap(NULL) == FLEXIO_STATUS_FAILED && flexio_emu_db_to_cq_ctx_get_id(NULL) == 0);
	CHECK(flexio_emulated_device_msix_map_create(f->p, 1, 4, &map) == FLEXIO_STATUS_FAILED && map == NULL);
	CHECK(flexio_emulated_device_msix_map_free(NULL) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_emulated_device_msix_create(f->p, ctx, 0, 0, 0, NULL, &msix) == FLEXIO_STATUS_FAILED &&
	      msix == NULL);
	CHECK(flexio_emulated_device_msix_destroy(NULL) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_process_call(f->p, fxq_unsupported, &r, f->c->rq_cqn) == FLEXIO_STATUS_SUCCESS);
	CHECK(r == 0xf);
	CHECK(flexio_err_status(f->p) == 0);
	fx_down(f);
}

static void test_handler_refusals(void)
{
	struct flexio_process *p = NULL;
	struct flexio_event_handler_attr ea = { .host_stub_func = fxq_handler };
	struct flexio_event_handler *eh = (struct flexio_event_handler *)1;

	CHECK(flexio_process_create(ctx, fx_queue_dev, NULL, &p) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_event_handler_create(NULL, &ea, NULL, NULL, &eh) == FLEXIO_STATUS_FAILED && eh == NULL);
	CHECK(flexio_event_handler_create(p, NULL, NULL, NULL, &eh) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_event_handler_create(p, &ea, NULL, NULL, NULL) == FLEXIO_STATUS_FAILED);
	ea.host_stub_func = (flexio_func_t *)(void *)test_handler_refusals; /* not a device function */
	CHECK(flexio_event_handler_create(p, &ea, NULL, NULL, &eh) == FLEXIO_STATUS_FAILED);
	ea.host_stub_func = fxq_handler;
	ea.affinity.type = (enum flexio_affinity_type)9;
	CHECK(flexio_event_handler_create(p, &ea, NULL, NULL, &eh) == FLEXIO_STATUS_FAILED);
	ea.affinity.type = FLEXIO_AFFINITY_NONE;
	CHECK(flexio_event_handler_create(p, &ea, NULL, NULL, &eh) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_event_handler_get_id(eh) != 0 && flexio_event_handler_get_thread(eh) != NULL);
	CHECK(flexio_event_handler_get_id(NULL) == 0 && flexio_event_handler_get_thread(NULL) == NULL);
	CHECK(flexio_event_handler_run(NULL, 0) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_event_handler_destroy(eh) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_event_handler_destroy(NULL) == FLEXIO_STATUS_FAILED);
	/* Handlers left to the process: destroyed with it. */
	CHECK(flexio_event_handler_create(p, &ea, NULL, NULL, &eh) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_event_handler_run(eh, 0) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_process_destroy(p) == FLEXIO_STATUS_SUCCESS);
}

int main(void)
{
	open_dev();
	if (ctx == NULL) {
		fprintf(stderr, "no device\n");
		return 1;
	}
	RUN(test_ping_pong);
	RUN(test_bursts);
	RUN(test_event_before_run);
	RUN(test_finish);
	RUN(test_crash);
	RUN(test_spin_stopped_by_destroy);
	RUN(test_destroy_while_ringing);
	RUN(test_doorbell_refusals);
	RUN(test_device_work_requests);
	RUN(test_eqe_and_eth_layout);
	RUN(test_two_processes);
	RUN(test_cq_refusals);
	RUN(test_qp_state_machine);
	RUN(test_qp_refusals);
	RUN(test_handler_refusals);
	RUN(test_unsupported);
	ibv_close_device(ctx);
	return th_summary("test_flexio_queue");
}
