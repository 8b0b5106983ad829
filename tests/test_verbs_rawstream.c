/*
 * Raw-doorbell streams handed to the engine thread (hw_trap.h): a program
 * that rings its doorbell page again and again without consuming the CQEs
 * of the doorbells before (16 doorbells in a row, each leaving 4 or more
 * CQEs unconsumed on the send CQ) has the page left writable — its stores
 * land, no trap — while the engine thread's look at send records runs
 * the WQEs; the engine thread write-protects the page again once the stream
 * stops, and the next doorbell traps again.
 * A ping-pong (each CQE consumed before the next doorbell) never opens the
 * page. A hand-over in which the engine thread ran little before the page
 * closed (it lost its core, or the stream was short) doubles the run the
 * next one needs. Every WQE's CQE is a requester's, in order, and its bytes land.
 */
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "hw_trap.h"
#include "rawdb_fixture.h"
#include "verbs_qp_fixture.h"

#define VRS_RUN 16     /* doorbells in a row that look like a stream's */
#define VRS_BACKLOG 4  /* CQEs each leaves unconsumed, at least */
#define VRS_HANG_S 20  /* a hang guard, not a timing threshold */

static uint8_t vrs[2][8192] __attribute__((aligned(4096)));

static int vrs_open(struct rdb_env *e)
{
	return rdb_open(e, vrs, sizeof(vrs), 255, 64);
}

static uint8_t vrs_val(uint32_t i)
{
	return (uint8_t)(1 + i % 251);
}

/* WQE number e->pi (an RDMA WRITE of 64 bytes into slot pi % 64 of vrs[1]) written and rung with an 8-byte store. */
static void vrs_ring(struct rdb_env *e)
{
	uint8_t *wqe = (uint8_t *)e->dq.sq.buf + (size_t)(e->pi & (e->dq.sq.wqe_cnt - 1)) * e->dq.sq.stride;
	struct mlx5_wqe_ctrl_seg *ctrl = (void *)wqe;
	struct mlx5_wqe_raddr_seg *rs = (void *)(ctrl + 1);
	struct mlx5_wqe_data_seg *ds = (void *)(rs + 1);
	uint32_t r = e->pi % 64;

	memset(vrs[0] + 64 * r, vrs_val(e->pi), 64);
	mlx5dv_set_ctrl_seg(ctrl, (uint16_t)e->pi, MLX5_OPCODE_RDMA_WRITE, 0, e->a->qp_num, MLX5_WQE_CTRL_CQ_UPDATE, 3, 0,
			    0);
	rs->raddr = htobe64((uintptr_t)vrs[1] + 64u * r);
	rs->rkey = htobe32(e->mr->rkey);
	rs->reserved = 0;
	mlx5dv_set_data_seg(ds, 64, e->mr->lkey, (uintptr_t)vrs[0] + 64u * r);
	e->pi++;
	__atomic_store_n(&e->dq.dbrec[MLX5_SND_DBR], htobe32(e->pi & 0xffff), __ATOMIC_SEQ_CST);
	*(volatile uint64_t *)e->dq.bf.reg = *(uint64_t *)(void *)ctrl;
}

static bool vrs_cqe_there(struct rdb_env *e)
{
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)e->dcq.buf + (e->ci & (e->dcq.cqe_cnt - 1));

	/* op_own read with acquire: the engine thread writes the CQE on its own thread. */
	uint8_t op_own = __atomic_load_n(&cqe->op_own, __ATOMIC_ACQUIRE);

	return (op_own >> 4) != MLX5_CQE_INVALID && (op_own & 1) == ((e->ci / e->dcq.cqe_cnt) & 1);
}

/*
 * The next CQE (waited for, under a hang guard: the engine thread's look at
 * records may be running the WQE when the trap returns): WQE e->ci's, a
 * requester's, its bytes landed.
 */
static void vrs_consume(struct rdb_env *e)
{
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)e->dcq.buf + (e->ci & (e->dcq.cqe_cnt - 1));
	const volatile uint8_t *dst = vrs[1] + 64 * (e->ci % 64);
	time_t until = time(NULL) + VRS_HANG_S;

	__asm__ volatile("" ::: "memory");
	while (!vrs_cqe_there(e) && time(NULL) < until)
		;
	CHECK(vrs_cqe_there(e));
	CHECK(mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_REQ);
	CHECK(be16toh(cqe->wqe_counter) == (uint16_t)e->ci);
	CHECK(dst[0] == vrs_val(e->ci) && dst[63] == vrs_val(e->ci));
	e->ci++;
	e->dcq.dbrec[0] = htobe32(e->ci & 0xffffff);
}

/*
 * Rings without consuming until the page opens (at most opener + 1
 * doorbells): how many were rung.
 */
static uint32_t vrs_ring_until_open(struct rdb_env *e, uint32_t opener)
{
	uint32_t n = 0;

	while (n < opener + 1 && !hw_trap_streaming(e->dq.bf.reg)) {
		vrs_ring(e);
		n++;
	}
	return n;
}

/* n doorbells, each CQE consumed before the next ring (a ping-pong's rhythm). */
static void vrs_pingpong(struct rdb_env *e, int n)
{
	for (int i = 0; i < n; i++) {
		vrs_ring(e);
		vrs_consume(e);
	}
}

/* Waits, under the hang guard, for the engine thread to close the page to the stream; true when it did. */
static bool vrs_wait_closed(struct rdb_env *e)
{
	time_t until = time(NULL) + VRS_HANG_S;

	while (hw_trap_streaming(e->dq.bf.reg) && time(NULL) < until)
		;
	return !hw_trap_streaming(e->dq.bf.reg);
}

static struct hw_trap_stats vrs_stats(void)
{
	struct hw_trap_stats s;

	hw_trap_stats(&s);
	return s;
}

/* Each CQE consumed before the next doorbell: every doorbell trapped and run on its store, the page never opened. */
static void test_pingpong_stays_trapped(void)
{
	struct rdb_env e;
	struct hw_trap_stats b, a;

	CHECK_OK(vrs_open(&e));
	b = vrs_stats();
	vrs_pingpong(&e, 8 * VRS_RUN);
	a = vrs_stats();
	CHECK(a.served == b.served + 8 * VRS_RUN);
	CHECK(a.streams == b.streams);
	CHECK(!hw_trap_streaming(e.dq.bf.reg));
}

/* Fewer unconsumed than a stream leaves (3 at most): trapped throughout. */
static void test_short_batches_stay_trapped(void)
{
	struct rdb_env e;
	struct hw_trap_stats b, a;

	CHECK_OK(vrs_open(&e));
	b = vrs_stats();
	for (int i = 0; i < 8 * VRS_RUN; i++) {
		vrs_ring(&e);
		if (e.pi - e.ci == VRS_BACKLOG - 1)
			while (e.ci != e.pi)
				vrs_consume(&e);
	}
	while (e.ci != e.pi)
		vrs_consume(&e);
	a = vrs_stats();
	CHECK(a.served == b.served + 8 * VRS_RUN);
	CHECK(a.streams == b.streams);
	CHECK(!hw_trap_streaming(e.dq.bf.reg));
}

/*
 * Doorbells rung without consuming: the one that makes a run of VRS_RUN
 * leaving VRS_BACKLOG or more opens the page; the next store lands and the
 * engine thread runs its WQE; once the stream stops the page traps again.
 */
static void test_stream_opens_then_rearms(void)
{
	const uint32_t opener = VRS_BACKLOG - 1 + VRS_RUN; /* doorbells rung when the page opens */
	struct rdb_env e;
	struct hw_trap_stats b, a;
	uint32_t rung;

	CHECK_OK(vrs_open(&e));
	hw_trap_streams_hold(true); /* the engine thread keeps the page open until told */
	b = vrs_stats();
	rung = vrs_ring_until_open(&e, opener);
	a = vrs_stats();
	CHECK(rung == opener);
	CHECK(a.served == b.served + rung && a.streams == b.streams + 1);
	CHECK(hw_trap_streaming(e.dq.bf.reg));
	/* Every WQE so far has run. */
	for (uint32_t i = 0; i < rung; i++)
		vrs_consume(&e);
	/* Open: the store lands (the register keeps it) and the engine thread runs the WQE. */
	vrs_ring(&e);
	CHECK(*(volatile uint64_t *)e.dq.bf.reg != 0);
	vrs_consume(&e);
	a = vrs_stats();
	CHECK(a.served == b.served + rung);
	/* The stream stopped: the engine thread write-protects the page again. */
	hw_trap_streams_hold(false);
	CHECK(vrs_wait_closed(&e));
	a = vrs_stats();
	if (a.closed != b.closed + 1)
		printf("  closed %llu -> %llu, streams %llu -> %llu\n", (unsigned long long)b.closed, (unsigned long long)a.closed,
		       (unsigned long long)b.streams, (unsigned long long)a.streams);
	CHECK(a.closed == b.closed + 1);
	/* Trapped again: the next doorbell is a trap's. */
	vrs_ring(&e);
	vrs_consume(&e);
	a = vrs_stats();
	CHECK(a.served == b.served + rung + 1 && a.streams == b.streams + 1);
}

/*
 * The hand-over before ran one WQE on the engine thread before the page
 * closed (it did not pay): the next needs twice the run, 32 stream
 * doorbells in a row, not 16.
 */
static void test_unpaid_handover_doubles_run(void)
{
	const uint32_t opener = VRS_BACKLOG - 1 + 2 * VRS_RUN;
	struct rdb_env e;
	struct hw_trap_stats b, a;
	uint32_t rung;

	CHECK_OK(vrs_open(&e));
	hw_trap_streams_hold(true);
	b = vrs_stats();
	rung = vrs_ring_until_open(&e, opener);
	a = vrs_stats();
	CHECK(rung == opener);
	if (a.served != b.served + rung || a.streams != b.streams + 1)
		printf("  rung %u: served %llu -> %llu, streams %llu -> %llu\n", rung, (unsigned long long)b.served,
		       (unsigned long long)a.served, (unsigned long long)b.streams, (unsigned long long)a.streams);
	CHECK(a.served == b.served + rung && a.streams == b.streams + 1);
	CHECK(hw_trap_streaming(e.dq.bf.reg));
	while (e.ci != e.pi)
		vrs_consume(&e);
	hw_trap_streams_hold(false);
	CHECK(vrs_wait_closed(&e));
}

/*
 * Back-to-back doorbells with no backlog (each CQE consumed before the next
 * ring, as a program asking for few completions leaves none): with the gap
 * that makes them a stream's set to never, they stay trapped; set to always,
 * a run of them opens the page (the engine thread then serves the stream).
 * The gap is the tests' to set: its real value is a timing, not a test's.
 */
static void test_quick_doorbells_open(void)
{
	struct rdb_env e;
	struct hw_trap_stats b, a;
	uint32_t rung = 0;

	CHECK_OK(vrs_open(&e));
	hw_trap_stream_gap(0);
	b = vrs_stats();
	vrs_pingpong(&e, 8 * VRS_RUN);
	a = vrs_stats();
	CHECK(a.streams == b.streams && !hw_trap_streaming(e.dq.bf.reg));
	hw_trap_stream_gap(UINT64_MAX);
	hw_trap_streams_hold(true);
	while (rung < 70000 && !hw_trap_streaming(e.dq.bf.reg)) { /* the run needed now, whatever the cases before left */
		vrs_ring(&e);
		vrs_consume(&e);
		rung++;
	}
	a = vrs_stats();
	CHECK(hw_trap_streaming(e.dq.bf.reg) && a.streams == b.streams + 1);
	hw_trap_stream_gap(HW_TRAP_STREAM_GAP_DEFAULT);
	hw_trap_streams_hold(false);
	CHECK(vrs_wait_closed(&e));
}

int main(void)
{
	if (rdb_traps_off("test_verbs_rawstream"))
		return 77;
	unsetenv("SOFTDPU_ENGINE_RAW_POLL"); /* the engine thread's look at records serves the stream */
	unsetenv("SOFTDPU_RAW_STREAM");
	RUN(test_pingpong_stays_trapped);
	RUN(test_short_batches_stay_trapped);
	RUN(test_stream_opens_then_rearms);
	RUN(test_unpaid_handover_doubles_run); /* after the one above */
	RUN(test_quick_doorbells_open);
	return th_summary("test_verbs_rawstream");
}
