/*
 * mlx5dv_wr_memcpy (rdma-core v44 mlx5dv_wr_post(3)): a DMA copy between two
 * local keys of an RC QP's domain, on a QP of mlx5dv_create_qp with
 * MLX5DV_QP_EX_WITH_MEMCPY. Its completion is MLX5DV_WC_MEMCPY, the bytes
 * arrive; a key of another domain or without local write is
 * IBV_WC_LOC_PROT_ERR with the destination untouched; lengths of 0 or past
 * max_wr_memcpy_length (mlx5dv_query_device) fail the session with EINVAL.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "harness.h"
#include "verbs_qp_fixture.h"

#define MC_LEN 1024

static uint8_t mc_src[MC_LEN] __attribute__((aligned(64)));
static uint8_t mc_dst[MC_LEN] __attribute__((aligned(64)));

struct mc {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_qp_ex *x;
	struct mlx5dv_qp_ex *dx;
	struct ibv_mr *src;
};

static struct ibv_qp *mc_qp(struct mc *m, uint64_t dv_ops, uint64_t comp_mask)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = m->cq, .recv_cq = m->cq, .qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1},
		.comp_mask = comp_mask, .pd = m->pd, .send_ops_flags = IBV_QP_EX_WITH_SEND,
	};
	struct mlx5dv_qp_init_attr dv = {.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS, .send_ops_flags = dv_ops};
	struct ibv_qp *qp = mlx5dv_create_qp(m->c, &a, &dv);

	if (qp != NULL)
		th_defer(vq_destroy_qp_cb, qp);
	return qp;
}

static void mc_open(struct mc *m, uint64_t dv_ops)
{
	memset(m, 0, sizeof(*m));
	m->c = vf_open();
	CHECK(m->c != NULL);
	m->pd = vf_pd(m->c);
	m->cq = vq_cq(m->c, 16);
	CHECK(m->pd != NULL && m->cq != NULL);
	m->qp = mc_qp(m, dv_ops, IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
	CHECK(m->qp != NULL);
	CHECK(vq_up(m->qp, m->qp->qp_num, 1, 7) == 0);
	m->x = ibv_qp_to_qp_ex(m->qp);
	CHECK(m->x != NULL);
	m->dx = mlx5dv_qp_ex_from_ibv_qp_ex(m->x);
	m->src = vq_mr(m->pd, mc_src, MC_LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(m->dx != NULL && m->src != NULL);
	for (int i = 0; i < MC_LEN; i++)
		mc_src[i] = (uint8_t)(i * 7 + 3);
	memset(mc_dst, 0xee, MC_LEN);
}

/* One signalled memcpy: wr_complete's value; on 0, the completion in *wc. */
static int mc_post(struct mc *m, uint32_t dkey, uint32_t skey, size_t len, struct ibv_wc *wc)
{
	int rc;

	ibv_wr_start(m->x);
	m->x->wr_id = 77;
	m->x->wr_flags = IBV_SEND_SIGNALED;
	mlx5dv_wr_memcpy(m->dx, dkey, (uintptr_t)mc_dst, skey, (uintptr_t)mc_src, len);
	rc = ibv_wr_complete(m->x);
	if (rc == 0 && vq_poll1(m->cq, wc) != 1)
		return -1;
	return rc;
}

static void test_caps(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_context d = {.comp_mask = MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH};

	CHECK(c != NULL);
	CHECK_OK(mlx5dv_query_device(c, &d));
	CHECK(d.comp_mask == MLX5DV_CONTEXT_MASK_WR_MEMCPY_LENGTH);
	CHECK(d.max_wr_memcpy_length == (size_t)1 << 31);
}

static void test_copy(void)
{
	static struct mc m;
	struct ibv_mr *dst;
	struct ibv_wc wc;

	mc_open(&m, MLX5DV_QP_EX_WITH_MEMCPY);
	dst = vq_mr(m.pd, mc_dst, MC_LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(dst != NULL);
	CHECK(mc_post(&m, dst->lkey, m.src->lkey, MC_LEN, &wc) == 0);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 77 && wc.opcode == (enum ibv_wc_opcode)MLX5DV_WC_MEMCPY);
	CHECK(memcmp(mc_dst, mc_src, MC_LEN) == 0);
	/* A shorter one after it, into the same place: only its bytes change. */
	memset(mc_dst, 0, MC_LEN);
	CHECK(mc_post(&m, dst->lkey, m.src->lkey, 100, &wc) == 0 && wc.status == IBV_WC_SUCCESS);
	CHECK(memcmp(mc_dst, mc_src, 100) == 0 && mc_dst[100] == 0 && mc_dst[MC_LEN - 1] == 0);
}

static void test_protection(void)
{
	static struct mc m;
	struct ibv_pd *other;
	struct ibv_mr *dst;
	struct ibv_wc wc;

	/* A destination of another domain. */
	mc_open(&m, MLX5DV_QP_EX_WITH_MEMCPY);
	other = vf_pd(m.c);
	CHECK(other != NULL);
	dst = vq_mr(other, mc_dst, MC_LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(dst != NULL);
	CHECK(mc_post(&m, dst->lkey, m.src->lkey, MC_LEN, &wc) == 0);
	CHECK(wc.status == IBV_WC_LOC_PROT_ERR && wc.wr_id == 77);
	CHECK(mc_dst[0] == 0xee && mc_dst[MC_LEN - 1] == 0xee);
	/* A destination without local write. */
	mc_open(&m, MLX5DV_QP_EX_WITH_MEMCPY);
	dst = vq_mr(m.pd, mc_dst, MC_LEN, IBV_ACCESS_REMOTE_READ);
	CHECK(dst != NULL);
	CHECK(mc_post(&m, dst->lkey, m.src->lkey, MC_LEN, &wc) == 0);
	CHECK(wc.status == IBV_WC_LOC_PROT_ERR && mc_dst[0] == 0xee);
	/* A source no key covers (past the registration's end). */
	mc_open(&m, MLX5DV_QP_EX_WITH_MEMCPY);
	dst = vq_mr(m.pd, mc_dst, MC_LEN, IBV_ACCESS_LOCAL_WRITE);
	CHECK(dst != NULL);
	CHECK(mc_post(&m, dst->lkey, m.src->lkey, MC_LEN + 1, &wc) == 0);
	CHECK(wc.status == IBV_WC_LOC_PROT_ERR && mc_dst[0] == 0xee);
}

static void test_refusals(void)
{
	static struct mc m;
	struct ibv_wc wc;

	mc_open(&m, MLX5DV_QP_EX_WITH_MEMCPY);
	CHECK(mc_post(&m, m.src->lkey, m.src->lkey, 0, &wc) == EINVAL);
	CHECK(mc_post(&m, m.src->lkey, m.src->lkey, ((size_t)1 << 31) + 1, &wc) == EINVAL);
	CHECK(ibv_poll_cq(m.cq, 1, &wc) == 0);
	/* Without MLX5DV_QP_EX_WITH_MEMCPY the builder fails the session. */
	mc_open(&m, MLX5DV_QP_EX_WITH_RAW_WQE);
	CHECK(mc_post(&m, m.src->lkey, m.src->lkey, 8, &wc) == EOPNOTSUPP);
	/* As mlx5: the copy needs the QP's domain named (IBV_QP_INIT_ATTR_PD). */
	errno = 0;
	CHECK(mc_qp(&m, MLX5DV_QP_EX_WITH_MEMCPY, IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) == NULL && errno == EINVAL);
}

int main(void)
{
	RUN(test_caps);
	RUN(test_copy);
	RUN(test_protection);
	RUN(test_refusals);
	return th_summary("test_verbs_memcpy");
}
