/*
 * A program that drives a QP itself through mlx5dv_init_obj, as mlx5dv
 * programs do: it builds the WQE with mlx5dv_set_ctrl_seg / set_data_seg in
 * sq.buf, writes the send doorbell record, writes the doorbell register
 * (bf.reg) and polls the CQE by its owner bit in the CQ's buf, never calling
 * ibv_post_send or ibv_poll_cq.
 *
 * The device notices a doorbell written to memory through its engine
 * thread, which watches the record of every QP whose view was taken
 * (hw_qp_set_polled from mlx5dv_init_obj).
 */
#include <endian.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

#define VDR_ROUNDS 100
/*
 * How long a CQE may take before the test calls it lost: a hang detector,
 * in wall-clock time, since a spin count says nothing on a loaded machine.
 */
#define VDR_LOST_NS (10ull * 1000000000ull)

static uint64_t vdr_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint8_t vdr[2][8192] __attribute__((aligned(4096)));

static void test_raw_write(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_qp dq = {0};
	struct mlx5dv_cq dcq = {0};
	struct mlx5dv_obj obj;
	struct ibv_qp *a, *b;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	uint32_t pi = 0, ci = 0;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 15);
	CHECK(pd != NULL && cq != NULL);
	mr = vq_mr(pd, vdr, sizeof(vdr), VQ_ACCESS_ALL);
	CHECK(mr != NULL);
	a = vq_qp(pd, IBV_QPT_RC, cq, cq, 8);
	b = vq_qp(pd, IBV_QPT_RC, cq, cq, 8);
	CHECK(a != NULL && b != NULL);
	CHECK_OK(vq_up(a, b->qp_num, 0, 0));
	CHECK_OK(vq_up(b, a->qp_num, 0, 0));
	memset(&obj, 0, sizeof(obj));
	obj.qp.in = a;
	obj.qp.out = &dq;
	obj.cq.in = cq;
	obj.cq.out = &dcq;
	CHECK_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ));
	for (int r = 0; r < VDR_ROUNDS; r++) {
		uint8_t *wqe = (uint8_t *)dq.sq.buf + (size_t)(pi & (dq.sq.wqe_cnt - 1)) * dq.sq.stride;
		struct mlx5_wqe_ctrl_seg *ctrl = (void *)wqe;
		struct mlx5_wqe_raddr_seg *rs = (void *)(ctrl + 1);
		struct mlx5_wqe_data_seg *ds = (void *)(rs + 1);
		struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)dcq.buf + (ci & (dcq.cqe_cnt - 1));
		uint64_t lost_at;
		bool lost = false;

		memset(vdr[0], r + 1, 64);
		mlx5dv_set_ctrl_seg(ctrl, (uint16_t)pi, MLX5_OPCODE_RDMA_WRITE, 0, a->qp_num, MLX5_WQE_CTRL_CQ_UPDATE,
				    3, 0, 0);
		rs->raddr = htobe64((uintptr_t)vdr[1] + 64u * (uint64_t)(r % 64));
		rs->rkey = htobe32(mr->rkey);
		rs->reserved = 0;
		mlx5dv_set_data_seg(ds, 64, mr->lkey, (uintptr_t)vdr[0]);
		pi++;
		__atomic_thread_fence(__ATOMIC_RELEASE);
		dq.dbrec[MLX5_SND_DBR] = htobe32(pi & 0xffff);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		*(volatile uint64_t *)dq.bf.reg = *(uint64_t *)(void *)ctrl;
		lost_at = vdr_now() + VDR_LOST_NS;
		while (mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_INVALID ||
		       mlx5dv_get_cqe_owner(cqe) != ((ci / dcq.cqe_cnt) & 1)) {
			if (vdr_now() > lost_at) {
				lost = true;
				break;
			}
			/* The device writes the CQE behind the compiler's back: read it again each time. */
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
		}
		CHECK(!lost);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		CHECK(mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_REQ);
		CHECK(be16toh(cqe->wqe_counter) == (uint16_t)(pi - 1));
		ci++;
		dcq.dbrec[0] = htobe32(ci & 0xffffff);
		CHECK(vdr[1][64 * (r % 64)] == (uint8_t)(r + 1) && vdr[1][64 * (r % 64) + 63] == (uint8_t)(r + 1));
	}
}

int main(void)
{
	RUN(test_raw_write);
	return th_summary("test_verbs_dv_raw");
}
