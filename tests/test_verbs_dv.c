/*
 * libmlx5.so.1: mlx5dv_init_obj's views of a QP, CQ and SRQ are the rings
 * and doorbell records the device uses — the WQE ibv_post_send wrote is in
 * sq.buf, the CQE ibv_poll_cq read is in the CQ's buf with the owner bit
 * the program expects, the consumer index is in the record — with the sizes
 * and strides mlx5 reports and a doorbell register the program may write.
 */
#include <endian.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

static uint8_t vdm[2][8192] __attribute__((aligned(4096)));

static void test_views(void)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 7, .max_sge = 1}};
	struct ibv_context *c = vf_open();
	struct mlx5dv_qp dqa = {0}, dqb = {0};
	struct mlx5dv_cq dcq = {0};
	struct mlx5dv_srq dsrq = {.comp_mask = MLX5DV_SRQ_MASK_SRQN};
	struct mlx5dv_obj obj;
	struct ibv_send_wr wr, *bad;
	struct ibv_qp *a, *b;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	struct mlx5_cqe64 *cqe;
	struct mlx5_wqe_ctrl_seg *ctrl;
	struct mlx5_wqe_raddr_seg *rseg;
	struct mlx5_wqe_data_seg *dseg;
	uint32_t srqn = 0;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 7);
	CHECK(pd != NULL && cq != NULL);
	mr = vq_mr(pd, vdm, sizeof(vdm), VQ_ACCESS_ALL);
	CHECK(mr != NULL);
	srq = ibv_create_srq(pd, &sa);
	CHECK(srq != NULL);
	th_defer(vq_destroy_srq_cb, srq);
	a = vq_qp(pd, IBV_QPT_RC, cq, cq, 8);
	b = vq_qp(pd, IBV_QPT_RC, cq, cq, 8);
	CHECK(a != NULL && b != NULL);
	CHECK_OK(vq_up(a, b->qp_num, 0, 0));
	CHECK_OK(vq_up(b, a->qp_num, 0, 0));
	memset(&obj, 0, sizeof(obj));
	obj.qp.in = a;
	obj.qp.out = &dqa;
	obj.cq.in = cq;
	obj.cq.out = &dcq;
	obj.srq.in = srq;
	obj.srq.out = &dsrq;
	CHECK_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ | MLX5DV_OBJ_SRQ));
	/* Sizes: 8 WRs of 192-byte RC WQEs in 32 basic blocks; receives of 4 segments, 8 of them. */
	CHECK(dqa.sq.stride == 64 && dqa.sq.wqe_cnt == 32 && dqa.sq.buf != NULL);
	CHECK(dqa.rq.stride == 64 && dqa.rq.wqe_cnt == 8 && dqa.rq.buf != NULL);
	/* Two rings, neither inside the other (the send ring is the process's own memory: docs/ARCHITECTURE.md). */
	CHECK((uint8_t *)dqa.sq.buf >= (uint8_t *)dqa.rq.buf + 8 * 64 ||
	      (uint8_t *)dqa.sq.buf + 32 * 64 <= (uint8_t *)dqa.rq.buf);
	CHECK(dqa.dbrec != NULL && dqa.bf.reg != NULL && ((uintptr_t)dqa.bf.reg & 0xfff) == 0x800);
	CHECK(dcq.cqe_cnt == 8 && dcq.cqe_size == 64 && dcq.buf != NULL && dcq.dbrec != NULL && dcq.cq_uar != NULL);
	CHECK(dsrq.stride == 32 && dsrq.head == 0 && dsrq.tail == 7 && dsrq.comp_mask == MLX5DV_SRQ_MASK_SRQN);
	CHECK_OK(ibv_get_srq_num(srq, &srqn));
	CHECK(dsrq.srqn == srqn);
	/* The doorbell page is the program's to write. */
	*(volatile uint64_t *)dqa.bf.reg = 0;
	/* A WQE as post_send wrote it. */
	memset(vdm[0], 0x42, 32);
	sge = (struct ibv_sge){.addr = (uintptr_t)vdm[0], .length = 32, .lkey = mr->lkey};
	wr = (struct ibv_send_wr){.wr_id = 3, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_WRITE,
				  .send_flags = IBV_SEND_SIGNALED};
	wr.wr.rdma.remote_addr = (uintptr_t)vdm[1];
	wr.wr.rdma.rkey = mr->rkey;
	CHECK_OK(ibv_post_send(a, &wr, &bad));
	ctrl = dqa.sq.buf;
	CHECK((be32toh(ctrl->opmod_idx_opcode) & 0xff) == MLX5_OPCODE_RDMA_WRITE);
	CHECK(((be32toh(ctrl->opmod_idx_opcode) >> 8) & 0xffff) == 0);
	CHECK(be32toh(ctrl->qpn_ds) == (a->qp_num << 8 | 3));
	CHECK(ctrl->fm_ce_se == MLX5_WQE_CTRL_CQ_UPDATE);
	rseg = (void *)(ctrl + 1);
	CHECK(be64toh(rseg->raddr) == (uintptr_t)vdm[1] && be32toh(rseg->rkey) == mr->rkey);
	dseg = (void *)(rseg + 1);
	CHECK(be32toh(dseg->byte_count) == 32 && be32toh(dseg->lkey) == mr->lkey &&
	      be64toh(dseg->addr) == (uintptr_t)vdm[0]);
	CHECK(be32toh(dqa.dbrec[MLX5_SND_DBR]) == 1);
	/* The CQE, by owner bit, as the program would poll it. */
	cqe = dcq.buf;
	CHECK(mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_REQ && mlx5dv_get_cqe_owner(cqe) == 0);
	CHECK(be16toh(cqe->wqe_counter) == 0 && (be32toh(cqe->sop_drop_qpn) & 0xffffff) == a->qp_num);
	CHECK(mlx5dv_get_cqe_opcode(cqe + 1) == MLX5_CQE_INVALID);
	CHECK(ibv_poll_cq(cq, 1, &wc) == 1 && wc.wr_id == 3 && wc.status == IBV_WC_SUCCESS);
	/* The record: the consumer index in word 0, the last arm word in word 1. */
	CHECK(be32toh(dcq.dbrec[0]) == 1);
	CHECK(memcmp(vdm[1], vdm[0], 32) == 0);
	/* Arming writes the arm word to the record. */
	CHECK_OK(ibv_req_notify_cq(cq, 0));
	CHECK((be32toh(dcq.dbrec[1]) & 0xffffff) == 1);
	/* The receive view: post_recv's WQE. */
	{
		struct ibv_recv_wr rw = {.wr_id = 1, .sg_list = &sge, .num_sge = 1}, *rbad;

		obj.qp.in = b;
		obj.qp.out = &dqb;
		CHECK_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP));
		CHECK_OK(ibv_post_recv(b, &rw, &rbad));
		dseg = dqb.rq.buf;
		CHECK(be32toh(dseg[0].byte_count) == 32 && be32toh(dseg[0].lkey) == mr->lkey);
		CHECK(be32toh(dseg[1].lkey) == MLX5_INVALID_LKEY);
		CHECK(be32toh(dqb.dbrec[MLX5_RCV_DBR]) == 1);
	}
	/* Refusals fill nothing. */
	memset(&dcq, 0, sizeof(dcq));
	obj.cq.in = NULL;
	CHECK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_QP | MLX5DV_OBJ_CQ) == EINVAL);
	CHECK(dcq.buf == NULL);
}

/* The extended QP's mlx5dv slots exist; what this device has not is reported by wr_complete. */
static void test_dv_qp_ex(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_qp_init_attr_ex ax;
	struct mlx5dv_qp_ex *dx;
	struct ibv_qp_ex *x;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 8);
	CHECK(pd != NULL && cq != NULL);
	ax = (struct ibv_qp_init_attr_ex){.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC, .pd = pd,
					  .comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
					  .send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE,
					  .cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1}};
	qp = ibv_create_qp_ex(c, &ax);
	CHECK(qp != NULL);
	th_defer(vq_destroy_qp_cb, qp);
	CHECK_OK(vq_up(qp, qp->qp_num, 0, 0)); /* in RESET every session fails EINVAL, as mlx5's */
	x = ibv_qp_to_qp_ex(qp);
	CHECK(x != NULL);
	dx = mlx5dv_qp_ex_from_ibv_qp_ex(x);
	CHECK(dx != NULL && dx->wr_memcpy != NULL && dx->wr_set_dc_addr != NULL);
	ibv_wr_start(x);
	mlx5dv_wr_memcpy(dx, 0, 0, 0, 0, 8);
	CHECK(ibv_wr_complete(x) == EOPNOTSUPP);
	CHECK(mlx5dv_qp_ex_from_ibv_qp_ex(NULL) == NULL && errno == EINVAL);
}

/* The PRM's query_hca_cap_in / _out and the device-memory capability page (mlx5_ifc). */
#define OP_QUERY_HCA_CAP 0x100
#define CAP_IN_SZ 0x10
#define CAP_OUT_SZ 0x1010
#define CAP_DEV_MEM 0xf
#define CAP_ROCE 0x4

static void cap_in(uint8_t *in, uint16_t opcode, uint16_t op_mod)
{
	memset(in, 0, CAP_IN_SZ);
	in[0] = (uint8_t)(opcode >> 8);
	in[1] = (uint8_t)opcode;
	in[6] = (uint8_t)(op_mod >> 8);
	in[7] = (uint8_t)op_mod;
}

/*
 * mlx5dv_devx_general_cmd: QUERY_HCA_CAP of the device-memory page answers
 * (status 0, maximum and current alike) a BlueField-2's MEMIC: the memic bit,
 * 256 KiB (memic_bar_size and max_memic_size, as ibv_query_device_ex's
 * max_dm_size), 64-byte allocation units, alignments up to 2^6 units; no MEMIC
 * operations and no software-owned ICM (every other byte zero). A page not answered (RoCE) or another command is
 * EOPNOTSUPP with the card's status in out (0x3 bad parameter, 0x2 bad
 * opcode); an output shorter than the page gets what fits; one without
 * room for the header, a short input or no context EINVAL.
 */
static void test_devx_general_cmd(void)
{
	struct mlx5dv_context_attr da = {.flags = MLX5DV_CONTEXT_FLAGS_DEVX};
	struct ibv_device_attr_ex ax;
	struct ibv_device **list;
	struct ibv_context *c;
	static uint8_t out[CAP_OUT_SZ];
	uint8_t in[CAP_IN_SZ];
	int n;

	list = ibv_get_device_list(&n);
	CHECK(list != NULL && n > 0);
	c = mlx5dv_open_device(list[0], &da);
	ibv_free_device_list(list);
	CHECK(c != NULL);
	th_defer(vf_close_cb, c);
	CHECK_OK(ibv_query_device_ex(c, NULL, &ax));
	CHECK(ax.max_dm_size == 256 * 1024);
	for (uint16_t cur = 0; cur < 2; cur++) {
		/* MEMIC atomic increment and test-and-set (memic_operations bits 0, 1) on single bytes (bytes 4, 6). */
		static const uint8_t want[68] = {0x80, 0, 0, 0, 1, 6, 1, 6, 0, 0, 0, 0, 0, 0, 0, 0,
						 0, 0x04, 0, 0, 0, 0x04, 0, 0, [67] = 0x03};

		cap_in(in, OP_QUERY_HCA_CAP, (uint16_t)(CAP_DEV_MEM << 1 | cur));
		memset(out, 0xee, sizeof(out));
		CHECK_OK(mlx5dv_devx_general_cmd(c, in, sizeof(in), out, sizeof(out)));
		for (size_t i = 0; i < 16; i++)
			CHECK(out[i] == 0);
		CHECK(memcmp(out + 16, want, sizeof(want)) == 0);
		for (size_t i = 16 + sizeof(want); i < sizeof(out); i++)
			CHECK(out[i] == 0);
	}
	cap_in(in, OP_QUERY_HCA_CAP, CAP_ROCE << 1 | 1); /* the general and flow-table pages: test_verbs_devx_caps */
	memset(out, 0, sizeof(out));
	CHECK(mlx5dv_devx_general_cmd(c, in, sizeof(in), out, sizeof(out)) == EOPNOTSUPP);
	CHECK(out[0] == 0x3 && (out[4] | out[5] | out[6] | out[7]) != 0);
	cap_in(in, 0x101, 0); /* QUERY_ADAPTER */
	memset(out, 0, sizeof(out));
	CHECK(mlx5dv_devx_general_cmd(c, in, sizeof(in), out, sizeof(out)) == EOPNOTSUPP);
	CHECK(out[0] == 0x2);
	cap_in(in, OP_QUERY_HCA_CAP, CAP_DEV_MEM << 1 | 1);
	/* A shorter output gets what fits (the card's mailbox); one without room for the header: EINVAL. */
	memset(out, 0xee, sizeof(out));
	CHECK_OK(mlx5dv_devx_general_cmd(c, in, sizeof(in), out, 0x810));
	CHECK(out[0x80f] == 0 && out[0x810] == 0xee);
	CHECK(mlx5dv_devx_general_cmd(c, in, sizeof(in), out, 0xf) == EINVAL);
	CHECK(mlx5dv_devx_general_cmd(c, in, CAP_IN_SZ - 1, out, sizeof(out)) == EINVAL);
	CHECK(mlx5dv_devx_general_cmd(NULL, in, sizeof(in), out, sizeof(out)) == EINVAL);
}

int main(void)
{
	RUN(test_views);
	RUN(test_dv_qp_ex);
	RUN(test_devx_general_cmd);
	return th_summary("test_verbs_dv");
}
