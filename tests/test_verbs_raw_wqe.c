/*
 * mlx5dv_wr_raw_wqe (rdma-core v44 mlx5dv_wr_post(3)): a send WQE the
 * program builds whole, posted on an RC QP of mlx5dv_create_qp with
 * MLX5DV_QP_EX_WITH_RAW_WQE, among ordinary ibv_wr_* work requests. The
 * device executes it where it lands in the ring (wrapping a one-WQE ring),
 * its completion reads IBV_WC_DRIVER2 with the session's wr_id, and the
 * bytes it names arrive.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

#define RW_LEN 256
#define RW_ITERS 10

static uint8_t rw_src[RW_LEN] __attribute__((aligned(64)));
static uint8_t rw_dst[RW_LEN] __attribute__((aligned(64)));

struct rw {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq[2];
	struct ibv_qp *qp[2]; /* 0 sends (the mlx5dv QP), 1 receives */
	struct ibv_mr *mr[2];
	struct ibv_qp_ex *x;
	struct mlx5dv_qp_ex *dx;
};

static struct ibv_qp *rw_dv_qp(struct rw *r, uint64_t dv_ops)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = r->cq[0], .recv_cq = r->cq[0], .qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 1, .max_recv_wr = 4, .max_send_sge = 2, .max_recv_sge = 2},
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = r->pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND,
	};
	struct mlx5dv_qp_init_attr dv = {.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS,
					 .send_ops_flags = dv_ops};
	struct ibv_qp *qp = mlx5dv_create_qp(r->c, &a, &dv);

	if (qp != NULL)
		th_defer(vq_destroy_qp_cb, qp);
	return qp;
}

static void rw_open(struct rw *r, uint64_t dv_ops)
{
	memset(r, 0, sizeof(*r));
	r->c = vf_open();
	CHECK(r->c != NULL);
	r->pd = vf_pd(r->c);
	r->cq[0] = vq_cq(r->c, 16);
	r->cq[1] = vq_cq(r->c, 16);
	CHECK(r->pd != NULL && r->cq[0] != NULL && r->cq[1] != NULL);
	r->qp[0] = rw_dv_qp(r, dv_ops);
	r->qp[1] = vq_qp(r->pd, IBV_QPT_RC, r->cq[1], r->cq[1], 4);
	r->mr[0] = vq_mr(r->pd, rw_src, sizeof(rw_src), VQ_ACCESS_ALL);
	r->mr[1] = vq_mr(r->pd, rw_dst, sizeof(rw_dst), VQ_ACCESS_ALL);
	CHECK(r->qp[0] != NULL && r->qp[1] != NULL && r->mr[0] != NULL && r->mr[1] != NULL);
	CHECK(vq_up(r->qp[0], r->qp[1]->qp_num, 1, 7) == 0 && vq_up(r->qp[1], r->qp[0]->qp_num, 1, 7) == 0);
	r->x = ibv_qp_to_qp_ex(r->qp[0]);
	CHECK(r->x != NULL);
	r->dx = mlx5dv_qp_ex_from_ibv_qp_ex(r->x);
	CHECK(r->dx != NULL);
}

static void rw_recv(struct rw *r)
{
	struct ibv_sge sge = {.addr = (uintptr_t)rw_dst, .length = RW_LEN, .lkey = r->mr[1]->lkey};
	struct ibv_recv_wr wr = {.wr_id = 7, .sg_list = &sge, .num_sge = 1}, *bad;

	CHECK(ibv_post_recv(r->qp[1], &wr, &bad) == 0);
}

/* A SEND of rw_src in two data segments, signalled; the index field holds garbage the post replaces. */
static void rw_build(const struct rw *r, uint8_t ds, struct mlx5_wqe_ctrl_seg *ctrl, struct mlx5_wqe_data_seg *d)
{
	memset(ctrl, 0, sizeof(*ctrl));
	ctrl->opmod_idx_opcode = htobe32(0xabcdu << 8 | MLX5_OPCODE_SEND);
	ctrl->qpn_ds = htobe32(r->qp[0]->qp_num << 8 | ds);
	ctrl->fm_ce_se = MLX5_WQE_CTRL_CQ_UPDATE;
	for (int i = 0; i < 2; i++) {
		d[i].byte_count = htobe32(RW_LEN / 2);
		d[i].lkey = htobe32(r->mr[0]->lkey);
		d[i].addr = htobe64((uintptr_t)rw_src + (uint64_t)i * (RW_LEN / 2));
	}
}

static void test_raw_and_plain_mixed(void)
{
	static struct rw r;
	struct {
		struct mlx5_wqe_ctrl_seg ctrl;
		struct mlx5_wqe_data_seg d[2];
	} wqe;
	struct ibv_wc wc;

	rw_open(&r, MLX5DV_QP_EX_WITH_RAW_WQE);
	rw_build(&r, 3, &wqe.ctrl, wqe.d);
	/* A one-WQE ring: each post lands where the previous one did, at the next index. */
	for (int i = 0; i < RW_ITERS; i++) {
		bool raw = i % 2 == 0;

		memset(rw_src, raw ? 's' : 'c', RW_LEN);
		memset(rw_dst, 0, RW_LEN);
		rw_recv(&r);
		ibv_wr_start(r.x);
		r.x->wr_id = 1000u + (unsigned)i;
		if (raw) {
			mlx5dv_wr_raw_wqe(r.dx, &wqe);
		} else {
			r.x->wr_flags = IBV_SEND_SIGNALED;
			ibv_wr_send(r.x);
			ibv_wr_set_sge(r.x, r.mr[0]->lkey, (uintptr_t)rw_src, RW_LEN);
		}
		CHECK_OK(ibv_wr_complete(r.x));
		CHECK(vq_poll1(r.cq[0], &wc) == 1);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 1000u + (unsigned)i);
		CHECK(wc.opcode == (raw ? IBV_WC_DRIVER2 : IBV_WC_SEND));
		CHECK(vq_poll1(r.cq[1], &wc) == 1);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.byte_len == RW_LEN && wc.wr_id == 7);
		for (int b = 0; b < RW_LEN; b++)
			CHECK(rw_dst[b] == (raw ? 's' : 'c'));
	}
}

static void test_raw_refused(void)
{
	static struct rw r;
	struct {
		struct mlx5_wqe_ctrl_seg ctrl;
		struct mlx5_wqe_data_seg d[2];
	} wqe;
	struct ibv_wc wc;

	/* Without MLX5DV_QP_EX_WITH_RAW_WQE the session fails with EOPNOTSUPP and nothing is posted. */
	rw_open(&r, MLX5DV_QP_EX_WITH_MR_LIST);
	rw_build(&r, 3, &wqe.ctrl, wqe.d);
	ibv_wr_start(r.x);
	mlx5dv_wr_raw_wqe(r.dx, &wqe);
	CHECK_ERR(ibv_wr_complete(r.x), EOPNOTSUPP);
	CHECK(ibv_poll_cq(r.cq[0], 1, &wc) == 0);
	/* With it: no segments at all, or more than the QP's WQEs were sized for, EINVAL. */
	rw_open(&r, MLX5DV_QP_EX_WITH_RAW_WQE);
	rw_build(&r, 0, &wqe.ctrl, wqe.d);
	ibv_wr_start(r.x);
	mlx5dv_wr_raw_wqe(r.dx, &wqe);
	CHECK_ERR(ibv_wr_complete(r.x), EINVAL);
	rw_build(&r, 63, &wqe.ctrl, wqe.d);
	ibv_wr_start(r.x);
	mlx5dv_wr_raw_wqe(r.dx, &wqe);
	CHECK_ERR(ibv_wr_complete(r.x), EINVAL);
	CHECK(ibv_poll_cq(r.cq[0], 1, &wc) == 0);
	/* The QP still works: a well-formed one after them completes. */
	memset(rw_src, 'k', RW_LEN);
	rw_recv(&r);
	rw_build(&r, 3, &wqe.ctrl, wqe.d);
	ibv_wr_start(r.x);
	r.x->wr_id = 5;
	mlx5dv_wr_raw_wqe(r.dx, &wqe);
	CHECK_OK(ibv_wr_complete(r.x));
	CHECK(vq_poll1(r.cq[0], &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_DRIVER2 && wc.wr_id == 5);
	CHECK(vq_poll1(r.cq[1], &wc) == 1 && wc.status == IBV_WC_SUCCESS && rw_dst[RW_LEN - 1] == 'k');
}

int main(void)
{
	RUN(test_raw_and_plain_mixed);
	RUN(test_raw_refused);
	return th_summary("test_verbs_raw_wqe");
}
