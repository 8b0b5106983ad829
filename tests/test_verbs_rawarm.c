/*
 * A CQ armed by the program's own writes (mlx5dv): the arm word
 * (sequence number << 28 | command | consumer index) to the doorbell
 * record's second word, then the 8-byte CQ doorbell (arm word << 32 | CQ
 * number, big-endian) to offset 0x20 of cq_uar — what rdma-core's
 * mlx5_arm_cq and UCX's uct_ib_mlx5dv_arm_cq write. As with
 * ibv_req_notify_cq, the CQ's completion event then reaches its channel:
 * at the next completion, or at once when a completion already waits past
 * the armed consumer index; an arm with the next sequence number after the
 * event was taken arms it again, and a SOLICITED arm fires at a solicited
 * receive. A doorbell naming no CQ of the context does nothing.
 */
#include <endian.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "rawdb_fixture.h"
#include "verbs_qp_fixture.h"

#define VRA_GUARD_MS 20000 /* hang guard only */
#define VRA_ARM_DB 1	    /* the doorbell record's arm word */

static uint8_t vra_buf[2][4096] __attribute__((aligned(4096)));
static int vra_ctx_tag;

struct vra_env {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_qp *a, *b;
	struct mlx5dv_cq dcq;
};

static void vra_open(struct vra_env *e)
{
	struct mlx5dv_obj obj;

	memset(e, 0, sizeof(*e));
	e->c = vf_open();
	CHECK(e->c != NULL);
	e->pd = vf_pd(e->c);
	e->ch = ibv_create_comp_channel(e->c);
	CHECK(e->pd != NULL && e->ch != NULL);
	th_defer(vq_destroy_channel_cb, e->ch);
	e->cq = ibv_create_cq(e->c, 63, &vra_ctx_tag, e->ch, 0);
	CHECK(e->cq != NULL);
	th_defer(vq_destroy_cq_cb, e->cq);
	e->mr = vq_mr(e->pd, vra_buf, sizeof(vra_buf), VQ_ACCESS_ALL);
	e->a = vq_qp(e->pd, IBV_QPT_RC, e->cq, e->cq, 16);
	e->b = vq_qp(e->pd, IBV_QPT_RC, e->cq, e->cq, 16);
	CHECK(e->mr != NULL && e->a != NULL && e->b != NULL);
	CHECK_OK(vq_up(e->a, e->b->qp_num, 0, 0));
	CHECK_OK(vq_up(e->b, e->a->qp_num, 0, 0));
	memset(&obj, 0, sizeof(obj));
	obj.cq.in = e->cq;
	obj.cq.out = &e->dcq;
	CHECK_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ));
}

/* The program's own arm: record, then the CQ doorbell of cq_uar naming cqn. */
static void vra_arm(struct vra_env *e, uint32_t cqn, uint32_t sn, uint32_t cmd, uint32_t ci)
{
	uint32_t word = (sn & 3) << 28 | cmd | (ci & 0xffffff);

	e->dcq.dbrec[VRA_ARM_DB] = htobe32(word);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	*(volatile uint64_t *)((uint8_t *)e->dcq.cq_uar + MLX5_CQ_DOORBELL) = htobe64((uint64_t)word << 32 | cqn);
}

/* A signaled RDMA WRITE of 64 bytes from a to b (its completion on the CQ). */
static void vra_write(struct vra_env *e, uint64_t wr_id)
{
	struct ibv_sge sge = {.addr = (uintptr_t)vra_buf[0], .length = 64, .lkey = e->mr->lkey};
	struct ibv_send_wr wr = {.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED};
	struct ibv_send_wr *bad = NULL;

	wr.wr.rdma.remote_addr = (uintptr_t)vra_buf[1];
	wr.wr.rdma.rkey = e->mr->rkey;
	CHECK_OK(ibv_post_send(e->a, &wr, &bad));
}

/* The channel has an event (hang guard), and it is this CQ's with its context. */
static void vra_take_event(struct vra_env *e)
{
	struct pollfd p = {.fd = e->ch->fd, .events = POLLIN};
	struct ibv_cq *got = NULL;
	void *ctx = NULL;

	CHECK(poll(&p, 1, VRA_GUARD_MS) == 1 && (p.revents & POLLIN));
	CHECK_OK(ibv_get_cq_event(e->ch, &got, &ctx));
	CHECK(got == e->cq && ctx == &vra_ctx_tag);
	ibv_ack_cq_events(e->cq, 1);
}

static void vra_poll_one(struct vra_env *e, uint64_t wr_id, enum ibv_wc_opcode op)
{
	struct ibv_wc wc;

	CHECK(vq_poll1(e->cq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == wr_id && wc.opcode == op);
}

/* Armed (NEXT), then a completion: the event reaches the channel; twice, the sequence number moved on. */
static void test_raw_arm_then_completion(void)
{
	struct vra_env e;

	vra_open(&e);
	for (uint32_t r = 0; r < 6; r++) {
		vra_arm(&e, e.dcq.cqn, r, MLX5_CQ_DB_REQ_NOT, r);
		vra_write(&e, 100 + r);
		vra_take_event(&e);
		vra_poll_one(&e, 100 + r, IBV_WC_RDMA_WRITE);
	}
}

/* A completion already waiting past the armed consumer index: the arm fires at once. */
static void test_raw_arm_with_completion_waiting(void)
{
	struct vra_env e;
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	volatile struct mlx5_cqe64 *cqe;

	vra_open(&e);
	vra_write(&e, 7);
	/* The write completes on the caller's thread or the engine's: wait (bounded) for its CQE in the ring. */
	cqe = (struct mlx5_cqe64 *)((uint8_t *)e.dcq.buf + e.dcq.cqe_size - sizeof(struct mlx5_cqe64));
	for (long i = 0; i < VQ_POLL_TRIES && mlx5dv_get_cqe_opcode((struct mlx5_cqe64 *)cqe) == MLX5_CQE_INVALID; i++)
		CHECK_OK(ibv_query_qp(e.a, &attr, IBV_QP_STATE, &init));
	CHECK(mlx5dv_get_cqe_opcode((struct mlx5_cqe64 *)cqe) == MLX5_CQE_REQ);
	vra_arm(&e, e.dcq.cqn, 0, MLX5_CQ_DB_REQ_NOT, 0);
	vra_take_event(&e);
	vra_poll_one(&e, 7, IBV_WC_RDMA_WRITE);
}

/* Armed SOLICITED: a SEND with IBV_SEND_SOLICITED to b fires it (its receive completion carries the event). */
static void test_raw_arm_solicited(void)
{
	struct vra_env e;
	struct ibv_sge rs = {.addr = (uintptr_t)vra_buf[1], .length = 64};
	struct ibv_recv_wr rwr = {.wr_id = 50, .sg_list = &rs, .num_sge = 1};
	struct ibv_recv_wr *rbad = NULL;
	struct ibv_sge ss = {.addr = (uintptr_t)vra_buf[0], .length = 64};
	struct ibv_send_wr swr = {.wr_id = 51, .sg_list = &ss, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SOLICITED};
	struct ibv_send_wr *sbad = NULL;
	struct ibv_wc wc;

	vra_open(&e);
	rs.lkey = e.mr->lkey;
	ss.lkey = e.mr->lkey;
	memset(vra_buf[0], 0x5a, 64);
	CHECK_OK(ibv_post_recv(e.b, &rwr, &rbad));
	vra_arm(&e, e.dcq.cqn, 0, MLX5_CQ_DB_REQ_NOT_SOL, 0);
	CHECK_OK(ibv_post_send(e.a, &swr, &sbad));
	vra_take_event(&e);
	CHECK(vq_poll1(e.cq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 50 && wc.opcode == IBV_WC_RECV && wc.byte_len == 64);
	CHECK(vra_buf[1][0] == 0x5a && vra_buf[1][63] == 0x5a);
}

/* A doorbell naming no CQ of the context: the store returns, the CQ stays unarmed, the page reads 0. */
static void test_raw_arm_other_cqn(void)
{
	struct vra_env e;
	struct pollfd p;

	vra_open(&e);
	vra_arm(&e, e.dcq.cqn ^ 0x800000, 0, MLX5_CQ_DB_REQ_NOT, 0);
	CHECK(*(volatile uint64_t *)((uint8_t *)e.dcq.cq_uar + MLX5_CQ_DOORBELL) == 0);
	/* Armed properly afterwards, the one event comes; the CQ was not armed by the stray store. */
	vra_arm(&e, e.dcq.cqn, 0, MLX5_CQ_DB_REQ_NOT, 0);
	vra_write(&e, 9);
	vra_take_event(&e);
	vra_poll_one(&e, 9, IBV_WC_RDMA_WRITE);
	p = (struct pollfd){.fd = e.ch->fd, .events = POLLIN};
	CHECK(poll(&p, 1, 0) == 0);
}

int main(void)
{
	if (rdb_traps_off("test_verbs_rawarm"))
		return 77;
	RUN(test_raw_arm_then_completion);
	RUN(test_raw_arm_with_completion_waiting);
	RUN(test_raw_arm_solicited);
	RUN(test_raw_arm_other_cqn);
	return th_summary("test_verbs_rawarm");
}
