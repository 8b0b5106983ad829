/*
 * DC queue pairs through libmlx5's public API, as mlx5dv_create_qp(3) and
 * mlx5dv_wr_post(3) describe them: a DCI (send only, each work request names
 * its DCT with mlx5dv_wr_set_dc_addr) and DCTs (receive side on an SRQ).
 * The refusals follow rdma-core v44's mlx5 provider and the kernel's mlx5
 * modify rules for DCI and DCT. DCI streams and their reset follow
 * mlx5dv_create_qp(3) and mlx5dv_dci_stream_id_reset(3), the AH-to-QP
 * mapping mlx5dv_map_ah_to_qp(3).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>

#include "th_proc.h"
#include "verbs_qp_fixture.h"

#define DC_KEY 0x1122334455667788ull
#define DC_BUF 4096
#define DC_NDCT 3

#define DCI_OPS                                                                                    \
	(IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
	 IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |   \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

static struct ibv_srq *dc_srq(struct ibv_pd *pd)
{
	struct ibv_srq_init_attr a = {.attr = {.max_wr = 16, .max_sge = 1}};
	struct ibv_srq *s = ibv_create_srq(pd, &a);

	if (s != NULL)
		th_defer(vq_destroy_srq_cb, s);
	return s;
}

/* mlx5dv_create_qp with the attributes given; the QP is destroyed when the case ends. */
static struct ibv_qp *dc_create(struct ibv_context *c, struct ibv_qp_init_attr_ex *a, struct mlx5dv_qp_init_attr *dv)
{
	struct ibv_qp *qp = mlx5dv_create_qp(c, a, dv);

	if (qp != NULL)
		th_defer(vq_destroy_qp_cb, qp);
	return qp;
}

static void dci_attrs(struct ibv_qp_init_attr_ex *a, struct mlx5dv_qp_init_attr *dv, struct ibv_pd *pd,
		      struct ibv_cq *cq)
{
	*a = (struct ibv_qp_init_attr_ex){
		.send_cq = cq,
		.recv_cq = cq,
		.cap = {.max_send_wr = 32, .max_send_sge = 2, .max_inline_data = 64},
		.qp_type = IBV_QPT_DRIVER,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = DCI_OPS,
	};
	*dv = (struct mlx5dv_qp_init_attr){
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
		.dc_init_attr = {.dc_type = MLX5DV_DCTYPE_DCI},
	};
}

static void dct_attrs(struct ibv_qp_init_attr_ex *a, struct mlx5dv_qp_init_attr *dv, struct ibv_pd *pd,
		      struct ibv_cq *cq, struct ibv_srq *srq, uint64_t key)
{
	*a = (struct ibv_qp_init_attr_ex){
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.qp_type = IBV_QPT_DRIVER,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	*dv = (struct mlx5dv_qp_init_attr){
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
		.dc_init_attr = {.dc_type = MLX5DV_DCTYPE_DCT, .dct_access_key = key},
	};
}

static int dci_up(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1};
	int rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT);

	if (rc != 0)
		return rc;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096, .ah_attr = {.port_num = 1}};
	if (vq_grh_self(qp->context, &a.ah_attr) != 0)
		return EINVAL;
	rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_AV);
	if (rc != 0)
		return rc;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
				 .max_rd_atomic = 1};
	return ibv_modify_qp(qp, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				     IBV_QP_MAX_QP_RD_ATOMIC);
}

static int dct_up(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = VQ_ACCESS_ALL};
	int rc = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);

	if (rc != 0)
		return rc;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096, .min_rnr_timer = 1,
				 .ah_attr = {.port_num = 1}};
	if (vq_grh_self(qp->context, &a.ah_attr) != 0)
		return EINVAL;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV | IBV_QP_PATH_MTU);
}

static enum ibv_qp_state qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia) != 0)
		return (enum ibv_qp_state)-1;
	return a.qp_state;
}

static uint16_t port_lid(struct ibv_context *c)
{
	struct ibv_port_attr pa;

	return ibv_query_port(c, 1, &pa) == 0 ? pa.lid : 0;
}

/* An address of the device's port (RoCE: its GID 0), or with other_port, of a GID no port has. */
static struct ibv_ah *dc_ah(struct ibv_pd *pd, bool other_port)
{
	struct ibv_ah_attr a = {.port_num = 1};
	struct ibv_ah *ah;

	if (vq_grh_self(pd->context, &a) != 0)
		return NULL;
	if (other_port)
		a.grh.dgid.raw[15] ^= 0x80;
	ah = ibv_create_ah(pd, &a);

	if (ah != NULL)
		th_defer(vq_destroy_ah_cb, ah);
	return ah;
}

/* One DCI in RTS, DC_NDCT DCTs in RTR with their buffers, one CQ per side. */
struct dc_env {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq;
	struct ibv_qp *dci, *dct[DC_NDCT];
	struct ibv_qp_ex *x;
	struct mlx5dv_qp_ex *mx;
	struct ibv_ah *ah;
	uint8_t *lbuf, *rbuf[DC_NDCT];
	struct ibv_mr *lmr, *rmr[DC_NDCT];
};

/*
 * Buffers are mappings of their own, not heap blocks: registering moves
 * their pages onto a memfd (shared with the device's other processes), which
 * a heap block would keep after free.
 */
static void dc_unmap_cb(void *p)
{
	munmap(p, DC_BUF);
}

static void dc_dereg_cb(void *mr)
{
	CHECK_OK(ibv_dereg_mr(mr));
}

static void *dc_buf(void)
{
	void *p = mmap(NULL, DC_BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	th_defer(dc_unmap_cb, p);
	return p;
}

static void dc_env_up(struct dc_env *e)
{
	struct ibv_qp_init_attr_ex a;
	struct mlx5dv_qp_init_attr dv;

	memset(e, 0, sizeof(*e));
	e->c = vf_open();
	CHECK(e->c != NULL);
	e->pd = vf_pd(e->c);
	e->scq = vq_cq(e->c, 64);
	e->rcq = vq_cq(e->c, 64);
	CHECK(e->pd != NULL && e->scq != NULL && e->rcq != NULL);
	e->srq = dc_srq(e->pd);
	CHECK(e->srq != NULL);
	dci_attrs(&a, &dv, e->pd, e->scq);
	e->dci = dc_create(e->c, &a, &dv);
	CHECK(e->dci != NULL);
	CHECK_OK(dci_up(e->dci));
	e->x = ibv_qp_to_qp_ex(e->dci);
	CHECK(e->x != NULL);
	e->mx = mlx5dv_qp_ex_from_ibv_qp_ex(e->x);
	CHECK(e->mx != NULL);
	e->lbuf = dc_buf();
	CHECK(e->lbuf != NULL);
	e->lmr = vq_mr(e->pd, e->lbuf, DC_BUF, VQ_ACCESS_ALL);
	CHECK(e->lmr != NULL);
	for (int i = 0; i < DC_NDCT; i++) {
		dct_attrs(&a, &dv, e->pd, e->rcq, e->srq, DC_KEY + (uint64_t)i);
		e->dct[i] = dc_create(e->c, &a, &dv);
		CHECK(e->dct[i] != NULL);
		CHECK_OK(dct_up(e->dct[i]));
		e->rbuf[i] = dc_buf();
		CHECK(e->rbuf[i] != NULL);
		e->rmr[i] = vq_mr(e->pd, e->rbuf[i], DC_BUF, VQ_ACCESS_ALL);
		CHECK(e->rmr[i] != NULL);
	}
	e->ah = dc_ah(e->pd, false);
	CHECK(e->ah != NULL);
}

/* One signalled RDMA WRITE of len bytes of lbuf+loff to DCT i (key given) at roff; ibv_wr_complete's result. */
static int dc_write(struct dc_env *e, int i, uint64_t key, uint32_t loff, uint32_t roff, uint32_t len)
{
	ibv_wr_start(e->x);
	e->x->wr_id = 100 + (uint64_t)i;
	e->x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(e->x, e->rmr[i]->rkey, (uint64_t)(uintptr_t)(e->rbuf[i] + roff));
	ibv_wr_set_sge(e->x, e->lmr->lkey, (uint64_t)(uintptr_t)(e->lbuf + loff), len);
	mlx5dv_wr_set_dc_addr(e->mx, e->ah, e->dct[i]->qp_num, key);
	return ibv_wr_complete(e->x);
}

static void test_create_dci_dct(void)
{
	struct dc_env e;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr ia;

	dc_env_up(&e);
	CHECK(e.dci->qp_type == IBV_QPT_DRIVER);
	CHECK(e.dci->qp_num != 0);
	for (int i = 0; i < DC_NDCT; i++) {
		CHECK(e.dct[i]->qp_num != 0 && e.dct[i]->qp_num != e.dci->qp_num);
		CHECK(qp_state(e.dct[i]) == IBV_QPS_RTR);
	}
	CHECK(e.dct[0]->qp_num != e.dct[1]->qp_num);
	CHECK_OK(ibv_query_qp(e.dci, &qa, IBV_QP_STATE, &ia));
	CHECK(qa.qp_state == IBV_QPS_RTS);
	CHECK(ia.qp_type == IBV_QPT_DRIVER);
	CHECK(ia.cap.max_send_wr >= 32);
}

/* Expects mlx5dv_create_qp to fail with err. */
#define CHECK_CREATE_ERR(c, a, dv, err)                                                            \
	do {                                                                                       \
		errno = 0;                                                                         \
		CHECK(mlx5dv_create_qp((c), (a), (dv)) == NULL);                                   \
		CHECK_ERR(errno, (err));                                                           \
	} while (0)

static void test_create_refusals(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp_init_attr_ex a;
	struct mlx5dv_qp_init_attr dv;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 16);
	CHECK(pd != NULL && cq != NULL);
	srq = dc_srq(pd);
	CHECK(srq != NULL);
	/* The DC mask on a type other than IBV_QPT_DRIVER. */
	dci_attrs(&a, &dv, pd, cq);
	a.qp_type = IBV_QPT_RC;
	CHECK_CREATE_ERR(c, &a, &dv, EINVAL);
	/* IBV_QPT_DRIVER without the DC mask, and without mlx5dv attributes. */
	dci_attrs(&a, &dv, pd, cq);
	dv.comp_mask = 0;
	CHECK_CREATE_ERR(c, &a, &dv, EINVAL);
	dci_attrs(&a, &dv, pd, cq);
	CHECK_CREATE_ERR(c, &a, NULL, EINVAL);
	/* A dc_type that is neither. */
	dci_attrs(&a, &dv, pd, cq);
	dv.dc_init_attr.dc_type = (enum mlx5dv_dc_type)7;
	CHECK_CREATE_ERR(c, &a, &dv, EINVAL);
	/* An mlx5dv comp_mask bit the provider does not know. */
	dci_attrs(&a, &dv, pd, cq);
	dv.comp_mask |= 1ull << 20;
	CHECK_CREATE_ERR(c, &a, &dv, EINVAL);
	/* Scatter-to-CQE both disabled and allowed. */
	dci_attrs(&a, &dv, pd, cq);
	dv.comp_mask |= MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS;
	dv.create_flags = MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE | MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE;
	CHECK_CREATE_ERR(c, &a, &dv, EINVAL);
	/* DCI: an operation a DCI has not, DCI streams beyond the device's, mlx5dv send ops. */
	dci_attrs(&a, &dv, pd, cq);
	a.send_ops_flags |= IBV_QP_EX_WITH_TSO;
	CHECK_CREATE_ERR(c, &a, &dv, EOPNOTSUPP);
	dci_attrs(&a, &dv, pd, cq);
	dv.comp_mask |= MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
	dv.dc_init_attr.dci_streams.log_num_concurent = 5;
	CHECK_CREATE_ERR(c, &a, &dv, EINVAL);
	dci_attrs(&a, &dv, pd, cq);
	dv.comp_mask |= MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS;
	dv.send_ops_flags = MLX5DV_QP_EX_WITH_MEMCPY;
	CHECK_CREATE_ERR(c, &a, &dv, EOPNOTSUPP);
	/* DCT: send ops, no SRQ, DCI streams, a missing CQ. */
	dct_attrs(&a, &dv, pd, cq, srq, DC_KEY);
	a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	a.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE;
	CHECK_CREATE_ERR(c, &a, &dv, EINVAL);
	dct_attrs(&a, &dv, pd, cq, NULL, DC_KEY);
	CHECK_CREATE_ERR(c, &a, &dv, EINVAL);
	dct_attrs(&a, &dv, pd, cq, srq, DC_KEY);
	dv.comp_mask |= MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
	CHECK_CREATE_ERR(c, &a, &dv, EINVAL);
	dct_attrs(&a, &dv, pd, cq, srq, DC_KEY);
	a.recv_cq = NULL;
	CHECK_CREATE_ERR(c, &a, &dv, EINVAL);
	/* Both DC kinds work with what was refused taken away. */
	dct_attrs(&a, &dv, pd, cq, srq, DC_KEY);
	CHECK(dc_create(c, &a, &dv) != NULL);
	dci_attrs(&a, &dv, pd, cq);
	CHECK(dc_create(c, &a, &dv) != NULL);
}

static void test_modify_dci(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = c != NULL ? vf_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? vq_cq(c, 16) : NULL;
	struct ibv_qp_init_attr_ex a;
	struct mlx5dv_qp_init_attr dv;
	struct ibv_qp *qp;
	struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1, .path_mtu = IBV_MTU_1024, .timeout = 14,
				.retry_cnt = 7, .rnr_retry = 7, .max_rd_atomic = 1, .dest_qp_num = 0x123};
	const int rts = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			IBV_QP_MAX_QP_RD_ATOMIC;

	CHECK(pd != NULL && cq != NULL);
	dci_attrs(&a, &dv, pd, cq);
	qp = dc_create(c, &a, &dv);
	CHECK(qp != NULL);
	/* RESET->INIT: pkey and port, no access flags (a DCI is a requester only). */
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS), EINVAL);
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PORT), EINVAL);
	CHECK(qp_state(qp) == IBV_QPS_RESET);
	m.qp_state = IBV_QPS_ERR;
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE), EINVAL); /* RESET->ERR is not a DCI transition */
	m.qp_state = IBV_QPS_INIT;
	CHECK_OK(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT));
	/* INIT->RTR: the path MTU; no destination QP, no RQ PSN. */
	m.qp_state = IBV_QPS_RTR;
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_AV), EINVAL);
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN), EINVAL);
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_MIN_RNR_TIMER), EINVAL);
	CHECK(qp_state(qp) == IBV_QPS_INIT);
	CHECK_OK(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PATH_MTU));
	/* RTR->RTS: RC's requester attributes; the min RNR timer optional. */
	m.qp_state = IBV_QPS_RTS;
	CHECK_ERR(ibv_modify_qp(qp, &m, rts & ~IBV_QP_SQ_PSN), EINVAL);
	CHECK_ERR(ibv_modify_qp(qp, &m, rts | IBV_QP_ACCESS_FLAGS), EINVAL);
	CHECK(qp_state(qp) == IBV_QPS_RTR);
	CHECK_OK(ibv_modify_qp(qp, &m, rts | IBV_QP_MIN_RNR_TIMER));
	CHECK(qp_state(qp) == IBV_QPS_RTS);
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_TIMEOUT), EINVAL);
	CHECK_OK(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER));
	/* To ERR and back to RESET: the state alone. */
	m.qp_state = IBV_QPS_ERR;
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PORT), EINVAL);
	CHECK_OK(ibv_modify_qp(qp, &m, IBV_QP_STATE));
	CHECK(qp_state(qp) == IBV_QPS_ERR);
	m.qp_state = IBV_QPS_RESET;
	CHECK_OK(ibv_modify_qp(qp, &m, IBV_QP_STATE));
	CHECK(qp_state(qp) == IBV_QPS_RESET);
}

static void test_modify_dct(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_pd *pd = c != NULL ? vf_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? vq_cq(c, 16) : NULL;
	struct ibv_srq *srq = pd != NULL ? dc_srq(pd) : NULL;
	struct ibv_qp_init_attr_ex a;
	struct mlx5dv_qp_init_attr dv;
	struct ibv_qp *qp;
	struct ibv_qp_attr m = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = VQ_ACCESS_ALL,
				.path_mtu = IBV_MTU_1024, .min_rnr_timer = 12,
				.ah_attr = {.port_num = 1, .is_global = 1, .grh = {.hop_limit = 64}}};
	const int rtr = IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV | IBV_QP_PATH_MTU;

	CHECK(srq != NULL && cq != NULL);
	dct_attrs(&a, &dv, pd, cq, srq, DC_KEY);
	qp = dc_create(c, &a, &dv);
	CHECK(qp != NULL);
	/* RESET->INIT: access flags, pkey and port, nothing else. */
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT), EINVAL);
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS |
						 IBV_QP_QKEY),
		  EINVAL);
	CHECK(qp_state(qp) == IBV_QPS_RESET);
	CHECK_OK(ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	CHECK(qp_state(qp) == IBV_QPS_INIT);
	/* INIT->RTR: min RNR timer, address and path MTU. */
	m.qp_state = IBV_QPS_RTR;
	CHECK_ERR(ibv_modify_qp(qp, &m, rtr & ~IBV_QP_MIN_RNR_TIMER), EINVAL);
	CHECK_ERR(ibv_modify_qp(qp, &m, rtr | IBV_QP_DEST_QPN), EINVAL);
	CHECK(qp_state(qp) == IBV_QPS_INIT);
	CHECK_OK(ibv_modify_qp(qp, &m, rtr));
	CHECK(qp_state(qp) == IBV_QPS_RTR);
	/* RTR is where a DCT works: no RTS, no ERR, no way back. */
	m.qp_state = IBV_QPS_RTS;
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE), EINVAL);
	m.qp_state = IBV_QPS_ERR;
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE), EINVAL);
	m.qp_state = IBV_QPS_RESET;
	CHECK_ERR(ibv_modify_qp(qp, &m, IBV_QP_STATE), EINVAL);
	CHECK(qp_state(qp) == IBV_QPS_RTR);
}

/* One WR after another to different DCTs: WRITE, READ, both atomics; memory compared. */
static void test_ops_to_several_dcts(void)
{
	struct dc_env e;
	struct ibv_wc wc;
	uint64_t v;

	dc_env_up(&e);
	for (int i = 0; i < DC_NDCT; i++) {
		memset(e.lbuf + 64 * i, 0xa0 + i, 64);
		CHECK_OK(dc_write(&e, i, DC_KEY + (uint64_t)i, 64 * (uint32_t)i, 128, 64));
		CHECK(vq_poll1(e.scq, &wc) == 1);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_WRITE && wc.wr_id == 100 + (uint64_t)i);
		CHECK(wc.qp_num == e.dci->qp_num);
	}
	for (int i = 0; i < DC_NDCT; i++) {
		for (int k = 0; k < 64; k++)
			CHECK(e.rbuf[i][128 + k] == 0xa0 + i);
		CHECK(e.rbuf[i][127] == 0 && e.rbuf[i][192] == 0);
	}
	/* READ back from DCT 2, then both atomics on DCT 1, batched in one wr_start. */
	memcpy(e.rbuf[1] + 512, &(uint64_t){40}, 8);
	ibv_wr_start(e.x);
	e.x->wr_flags = IBV_SEND_SIGNALED;
	e.x->wr_id = 1;
	ibv_wr_rdma_read(e.x, e.rmr[2]->rkey, (uint64_t)(uintptr_t)(e.rbuf[2] + 128));
	mlx5dv_wr_set_dc_addr(e.mx, e.ah, e.dct[2]->qp_num, DC_KEY + 2);
	ibv_wr_set_sge(e.x, e.lmr->lkey, (uint64_t)(uintptr_t)(e.lbuf + 1024), 64);
	e.x->wr_id = 2;
	ibv_wr_atomic_cmp_swp(e.x, e.rmr[1]->rkey, (uint64_t)(uintptr_t)(e.rbuf[1] + 512), 40, 50);
	ibv_wr_set_sge(e.x, e.lmr->lkey, (uint64_t)(uintptr_t)(e.lbuf + 2048), 8);
	mlx5dv_wr_set_dc_addr(e.mx, e.ah, e.dct[1]->qp_num, DC_KEY + 1);
	e.x->wr_id = 3;
	ibv_wr_atomic_fetch_add(e.x, e.rmr[1]->rkey, (uint64_t)(uintptr_t)(e.rbuf[1] + 512), 7);
	mlx5dv_wr_set_dc_addr(e.mx, e.ah, e.dct[1]->qp_num, DC_KEY + 1);
	ibv_wr_set_sge(e.x, e.lmr->lkey, (uint64_t)(uintptr_t)(e.lbuf + 2056), 8);
	CHECK_OK(ibv_wr_complete(e.x));
	for (uint64_t id = 1; id <= 3; id++) {
		CHECK(vq_poll1(e.scq, &wc) == 1);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == id);
		CHECK(wc.opcode == (id == 1 ? IBV_WC_RDMA_READ : id == 2 ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD));
	}
	for (int k = 0; k < 64; k++)
		CHECK(e.lbuf[1024 + k] == 0xa2);
	memcpy(&v, e.lbuf + 2048, 8);
	CHECK(v == 40);
	memcpy(&v, e.lbuf + 2056, 8);
	CHECK(v == 50);
	memcpy(&v, e.rbuf[1] + 512, 8);
	CHECK(v == 57);
}

/* SEND with immediate to a DCT: a receive of its SRQ, completed on its CQ as a DCT reports it. */
static void test_send_to_dct(void)
{
	struct dc_env e;
	struct ibv_wc wc;
	struct ibv_sge sge;
	struct ibv_recv_wr rw = {.wr_id = 77, .sg_list = &sge, .num_sge = 1}, *bad;
	const char msg[] = "to the DCT";

	dc_env_up(&e);
	sge = (struct ibv_sge){.addr = (uint64_t)(uintptr_t)e.rbuf[0], .length = 256, .lkey = e.rmr[0]->lkey};
	CHECK_OK(ibv_post_srq_recv(e.srq, &rw, &bad));
	memcpy(e.lbuf, msg, sizeof(msg));
	ibv_wr_start(e.x);
	e.x->wr_id = 5;
	e.x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED;
	ibv_wr_send_imm(e.x, htobe32(0xabcdef01));
	mlx5dv_wr_set_dc_addr(e.mx, e.ah, e.dct[2]->qp_num, DC_KEY + 2);
	ibv_wr_set_sge(e.x, e.lmr->lkey, (uint64_t)(uintptr_t)e.lbuf, sizeof(msg));
	CHECK_OK(ibv_wr_complete(e.x));
	CHECK(vq_poll1(e.scq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND && wc.wr_id == 5);
	CHECK(vq_poll1(e.rcq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == 77);
	CHECK(wc.byte_len == sizeof(msg));
	CHECK((wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htobe32(0xabcdef01));
	CHECK(wc.qp_num == e.dct[2]->qp_num);
	CHECK(wc.src_qp == e.dci->qp_num);
	CHECK(wc.slid == port_lid(e.c));
	CHECK(memcmp(e.rbuf[0], msg, sizeof(msg)) == 0);
}

/* A new DCI of e in RTS (the failed one stays in ERR). */
static void dc_new_dci(struct dc_env *e)
{
	struct ibv_qp_init_attr_ex a;
	struct mlx5dv_qp_init_attr dv;

	dci_attrs(&a, &dv, e->pd, e->scq);
	e->dci = dc_create(e->c, &a, &dv);
	CHECK(e->dci != NULL);
	CHECK_OK(dci_up(e->dci));
	e->x = ibv_qp_to_qp_ex(e->dci);
	e->mx = mlx5dv_qp_ex_from_ibv_qp_ex(e->x);
	CHECK(e->mx != NULL);
}

/* A wrong key: the DCT drops the request, the DCI's retries run out; memory untouched; the DCT still serves. */
static void test_wrong_key(void)
{
	struct dc_env e;
	struct ibv_wc wc;

	dc_env_up(&e);
	memset(e.lbuf, 0x5a, 64);
	CHECK_OK(dc_write(&e, 0, DC_KEY + 1, 0, 0, 64));
	CHECK(vq_poll1(e.scq, &wc) == 1);
	CHECK(wc.status == IBV_WC_RETRY_EXC_ERR && wc.wr_id == 100);
	for (int k = 0; k < 64; k++)
		CHECK(e.rbuf[0][k] == 0);
	CHECK(qp_state(e.dci) == IBV_QPS_ERR);
	CHECK(qp_state(e.dct[0]) == IBV_QPS_RTR);
	/* The DCI's later work is flushed; a fresh DCI with the right key gets through. */
	CHECK_OK(dc_write(&e, 0, DC_KEY, 0, 0, 64));
	CHECK(vq_poll1(e.scq, &wc) == 1);
	CHECK(wc.status == IBV_WC_WR_FLUSH_ERR);
	dc_new_dci(&e);
	CHECK_OK(dc_write(&e, 0, DC_KEY, 0, 0, 64));
	CHECK(vq_poll1(e.scq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS);
	CHECK(e.rbuf[0][0] == 0x5a && e.rbuf[0][63] == 0x5a);
}

/* A DCT destroyed, a number no DCT has, an address of another port: as an RC peer that is gone. */
static void test_unreachable(void)
{
	struct dc_env e;
	struct ibv_wc wc;
	uint32_t gone;

	dc_env_up(&e);
	gone = e.dct[1]->qp_num;
	CHECK(th_undefer(vq_destroy_qp_cb, e.dct[1]) == 1);
	CHECK_OK(ibv_destroy_qp(e.dct[1]));
	ibv_wr_start(e.x);
	e.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(e.x, e.rmr[1]->rkey, (uint64_t)(uintptr_t)e.rbuf[1]);
	ibv_wr_set_sge(e.x, e.lmr->lkey, (uint64_t)(uintptr_t)e.lbuf, 8);
	mlx5dv_wr_set_dc_addr(e.mx, e.ah, gone, DC_KEY + 1);
	CHECK_OK(ibv_wr_complete(e.x));
	CHECK(vq_poll1(e.scq, &wc) == 1);
	CHECK(wc.status == IBV_WC_RETRY_EXC_ERR);
	/* A number no QP of the device holds (QPNs are 24 bits, allocated from 0x100 up). */
	dc_new_dci(&e);
	ibv_wr_start(e.x);
	e.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(e.x, e.rmr[0]->rkey, (uint64_t)(uintptr_t)e.rbuf[0]);
	ibv_wr_set_sge(e.x, e.lmr->lkey, (uint64_t)(uintptr_t)e.lbuf, 8);
	mlx5dv_wr_set_dc_addr(e.mx, e.ah, 0xfffffe, DC_KEY);
	CHECK_OK(ibv_wr_complete(e.x));
	CHECK(vq_poll1(e.scq, &wc) == 1);
	CHECK(wc.status == IBV_WC_RETRY_EXC_ERR);
	/* The number of the DCI itself is not a DCT. */
	dc_new_dci(&e);
	memset(e.lbuf, 1, 8);
	ibv_wr_start(e.x);
	e.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(e.x, e.rmr[0]->rkey, (uint64_t)(uintptr_t)e.rbuf[0]);
	ibv_wr_set_sge(e.x, e.lmr->lkey, (uint64_t)(uintptr_t)e.lbuf, 8);
	mlx5dv_wr_set_dc_addr(e.mx, e.ah, e.dci->qp_num, DC_KEY);
	CHECK_OK(ibv_wr_complete(e.x));
	CHECK(vq_poll1(e.scq, &wc) == 1);
	CHECK(wc.status == IBV_WC_RETRY_EXC_ERR);
	/* An address of a GID this device's port has not. */
	dc_new_dci(&e);
	e.ah = dc_ah(e.pd, true);
	CHECK(e.ah != NULL);
	CHECK_OK(dc_write(&e, 0, DC_KEY, 0, 0, 8));
	CHECK(vq_poll1(e.scq, &wc) == 1);
	CHECK(wc.status == IBV_WC_RETRY_EXC_ERR);
	CHECK(e.rbuf[0][0] == 0);
}

/* What the builders refuse on a DCI: no address, the UD setter, ibv_post_send. */
static void test_builder_refusals(void)
{
	struct dc_env e;
	struct ibv_send_wr wr = {.opcode = IBV_WR_RDMA_WRITE}, *bad = NULL;

	dc_env_up(&e);
	ibv_wr_start(e.x);
	ibv_wr_rdma_write(e.x, e.rmr[0]->rkey, (uint64_t)(uintptr_t)e.rbuf[0]);
	ibv_wr_set_sge(e.x, e.lmr->lkey, (uint64_t)(uintptr_t)e.lbuf, 8);
	CHECK_ERR(ibv_wr_complete(e.x), EINVAL); /* no DC address */
	ibv_wr_start(e.x);
	ibv_wr_rdma_write(e.x, e.rmr[0]->rkey, (uint64_t)(uintptr_t)e.rbuf[0]);
	ibv_wr_set_ud_addr(e.x, e.ah, e.dct[0]->qp_num, 0);
	ibv_wr_set_sge(e.x, e.lmr->lkey, (uint64_t)(uintptr_t)e.lbuf, 8);
	CHECK_ERR(ibv_wr_complete(e.x), EINVAL);
	CHECK_ERR(ibv_post_send(e.dci, &wr, &bad), EINVAL);
	CHECK(bad == &wr);
	CHECK(e.rbuf[0][0] == 0);
}

/* One signalled 8-byte RDMA WRITE from e's DCI to DCT dctn with the right key; its completion status. */
static enum ibv_wc_status dc_write8(struct dc_env *e, unsigned int dctn, unsigned int rkey, unsigned long long addr)
{
	struct ibv_wc wc = {.status = IBV_WC_GENERAL_ERR};

	ibv_wr_start(e->x);
	e->x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(e->x, rkey, addr);
	ibv_wr_set_sge(e->x, e->lmr->lkey, (uint64_t)(uintptr_t)e->lbuf, 8);
	mlx5dv_wr_set_dc_addr(e->mx, e->ah, dctn, DC_KEY);
	if (ibv_wr_complete(e->x) != 0 || vq_poll1(e->scq, &wc) != 1)
		return IBV_WC_GENERAL_ERR;
	return wc.status;
}

/*
 * The DCT role, another process of the device: it creates a DCT and its
 * memory, says where they are, and after "check" reports what landed.
 */
static int role_dct(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_context *c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	struct ibv_pd *pd = c != NULL ? ibv_alloc_pd(c) : NULL;
	struct ibv_cq *cq = c != NULL ? ibv_create_cq(c, 16, NULL, NULL, 0) : NULL;
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_srq *srq = pd != NULL ? ibv_create_srq(pd, &sa) : NULL;
	uint8_t *buf = mmap(NULL, DC_BUF, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct ibv_mr *mr, *imr;
	struct ibv_qp_init_attr_ex a;
	struct mlx5dv_qp_init_attr dv;
	struct ibv_qp *dct;
	struct ibv_sge sge;
	struct ibv_recv_wr rw = {.wr_id = 9, .sg_list = &sge, .num_sge = 1}, *bad;
	struct ibv_wc wc = {.status = IBV_WC_GENERAL_ERR};
	char line[64];
	int ok, n = 0;

	if (srq == NULL || cq == NULL || buf == MAP_FAILED)
		return 2;
	mr = ibv_reg_mr(pd, buf, DC_BUF, VQ_ACCESS_ALL);
	imr = ibv_reg_mr(pd, NULL, SIZE_MAX, VQ_ACCESS_ALL | IBV_ACCESS_ON_DEMAND);
	dct_attrs(&a, &dv, pd, cq, srq, DC_KEY);
	dct = mlx5dv_create_qp(c, &a, &dv);
	if (mr == NULL || imr == NULL || dct == NULL || dct_up(dct) != 0)
		return 3;
	sge = (struct ibv_sge){.addr = (uint64_t)(uintptr_t)(buf + 2048), .length = 64, .lkey = mr->lkey};
	if (ibv_post_srq_recv(srq, &rw, &bad) != 0)
		return 4;
	/* Then this process's implicit key, which the device's other processes cannot use. */
	printf("DCT %u %u %llu %u\n", dct->qp_num, mr->rkey, (unsigned long long)(uintptr_t)buf, imr->rkey);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL || strncmp(line, "check", 5) != 0)
		return 5;
	/* The requester's SEND completes here, from its DCI. */
	for (long i = 0; i < VQ_POLL_TRIES && n == 0; i++)
		n = ibv_poll_cq(cq, 1, &wc);
	ok = n == 1 && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.qp_num == dct->qp_num &&
	     wc.byte_len == 5 && memcmp(buf + 2048, "hello", 5) == 0;
	for (int k = 0; k < 256; k++)
		ok = ok && buf[k] == (uint8_t)(k ^ 0x3c);
	ok = ok && buf[256] == 0;
	printf("RESULT %d %u\n", ok, wc.src_qp);
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 6;
	ibv_destroy_qp(dct);
	ibv_dereg_mr(imr);
	ibv_dereg_mr(mr);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(c);
	ibv_free_device_list(l);
	munmap(buf, DC_BUF);
	return 0;
}

static void test_dct_other_process(void)
{
	struct th_proc *p = th_proc_start(NULL, "dct", NULL);
	unsigned int dctn = 0, rkey = 0, src = 0;
	unsigned long long addr = 0;
	const char *l;
	struct dc_env e;
	struct ibv_wc wc;
	int ok = 0;

	CHECK(p != NULL);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "DCT %u %u %llu", &dctn, &rkey, &addr) == 3);
	dc_env_up(&e);
	for (int k = 0; k < 256; k++)
		e.lbuf[k] = (uint8_t)(k ^ 0x3c);
	memcpy(e.lbuf + 512, "hello", 5);
	ibv_wr_start(e.x);
	e.x->wr_flags = IBV_SEND_SIGNALED;
	e.x->wr_id = 1;
	ibv_wr_rdma_write(e.x, rkey, addr);
	ibv_wr_set_sge(e.x, e.lmr->lkey, (uint64_t)(uintptr_t)e.lbuf, 256);
	mlx5dv_wr_set_dc_addr(e.mx, e.ah, dctn, DC_KEY);
	e.x->wr_id = 2;
	ibv_wr_send(e.x);
	mlx5dv_wr_set_dc_addr(e.mx, e.ah, dctn, DC_KEY);
	ibv_wr_set_sge(e.x, e.lmr->lkey, (uint64_t)(uintptr_t)(e.lbuf + 512), 5);
	e.x->wr_id = 3;
	ibv_wr_rdma_read(e.x, rkey, addr + 100);
	ibv_wr_set_sge(e.x, e.lmr->lkey, (uint64_t)(uintptr_t)(e.lbuf + 1024), 16);
	mlx5dv_wr_set_dc_addr(e.mx, e.ah, dctn, DC_KEY);
	CHECK_OK(ibv_wr_complete(e.x));
	for (uint64_t id = 1; id <= 3; id++) {
		CHECK(vq_poll1(e.scq, &wc) == 1);
		CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == id);
	}
	CHECK(memcmp(e.lbuf + 1024, e.lbuf + 100, 16) == 0);
	CHECK(th_proc_send(p, "check") == 0);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "RESULT %d %u", &ok, &src) == 2);
	CHECK(ok == 1);
	CHECK(src == e.dci->qp_num);
	CHECK(th_proc_send(p, "bye") == 0);
	CHECK(th_proc_wait(p) == 0);
	/* The role's DCT went with it: the DCI's next request finds no one. */
	dc_new_dci(&e);
	CHECK(dc_write8(&e, dctn, rkey, addr) == IBV_WC_RETRY_EXC_ERR);
}

/* The DCT's owner killed without destroying it: the DCIs' next request goes unanswered (retries exceeded). */
static void test_dct_owner_killed(void)
{
	struct th_proc *p = th_proc_start(NULL, "dct", NULL);
	unsigned int dctn = 0, rkey = 0;
	unsigned long long addr = 0;
	const char *l;
	struct dc_env e;

	CHECK(p != NULL);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "DCT %u %u %llu", &dctn, &rkey, &addr) == 3);
	dc_env_up(&e);
	CHECK(dc_write8(&e, dctn, rkey, addr) == IBV_WC_SUCCESS);
	th_proc_kill(p);
	CHECK(th_proc_wait(p) != 0);
	/* As on a card, the first request after the death is unanswered: no SUCCESS into a dead process. */
	CHECK(dc_write8(&e, dctn, rkey, addr) == IBV_WC_RETRY_EXC_ERR);
}

/* ---- a DCT, its SRQ and its CQ destroyed while a DCI streams SENDs at it ---- */

struct dc_stream {
	struct dc_env *e;
	unsigned int dctn;
	_Atomic int started;
	int first_err; /* -1: none */
	long bad_after; /* completions after the first error that are not WR_FLUSH_ERR */
};

static void *dc_stream_main(void *arg)
{
	struct dc_stream *s = arg;
	long after = 0;

	s->first_err = -1;
	for (long n = 0; n < 10000000 && after < 4; n++) {
		struct ibv_wc wc;

		ibv_wr_start(s->e->x);
		s->e->x->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_send(s->e->x);
		ibv_wr_set_sge(s->e->x, s->e->lmr->lkey, (uint64_t)(uintptr_t)s->e->lbuf, 64);
		mlx5dv_wr_set_dc_addr(s->e->mx, s->e->ah, s->dctn, DC_KEY);
		if (ibv_wr_complete(s->e->x) != 0 || vq_poll1(s->e->scq, &wc) != 1)
			break;
		if (wc.status == IBV_WC_SUCCESS && s->first_err < 0) {
			atomic_store(&s->started, 1);
			continue;
		}
		if (s->first_err < 0) {
			s->first_err = wc.status;
			continue;
		}
		after++;
		s->bad_after += wc.status != IBV_WC_WR_FLUSH_ERR;
	}
	return NULL;
}

/*
 * ibv_destroy_qp(3) of a DCT (and of its SRQ and CQ) is a fence: the DCI
 * streaming at it from another thread never writes freed memory (ASan in
 * CI), and its first request after the DCT went is unanswered, as a card's:
 * RETRY_EXC_ERR, the DCI to ERR, then flushes.
 */
static void test_dct_destroyed_while_in_use(void)
{
	struct dc_env e;

	dc_env_up(&e);
	for (int round = 0; round < 30; round++) {
		struct ibv_qp_init_attr_ex a;
		struct mlx5dv_qp_init_attr dv;
		struct ibv_srq_init_attr sa = {.attr = {.max_wr = 512, .max_sge = 1}};
		struct ibv_cq *cq = ibv_create_cq(e.c, 1024, NULL, NULL, 0);
		struct ibv_srq *srq = ibv_create_srq(e.pd, &sa);
		struct ibv_qp *dct;
		struct dc_stream s = {.e = &e};
		pthread_t t;

		CHECK(cq != NULL && srq != NULL);
		dct_attrs(&a, &dv, e.pd, cq, srq, DC_KEY);
		dct = mlx5dv_create_qp(e.c, &a, &dv);
		CHECK(dct != NULL && dct_up(dct) == 0);
		for (int i = 0; i < 512; i++) {
			struct ibv_sge sge = {.addr = (uintptr_t)e.rbuf[0], .length = 64, .lkey = e.rmr[0]->lkey};
			struct ibv_recv_wr wr = {.wr_id = (uint64_t)i, .sg_list = &sge, .num_sge = 1}, *bad;

			CHECK_OK(ibv_post_srq_recv(srq, &wr, &bad));
		}
		s.dctn = dct->qp_num;
		CHECK(pthread_create(&t, NULL, dc_stream_main, &s) == 0);
		for (long spins = 0; !atomic_load(&s.started) && spins < 100000000; spins++)
			;
		for (volatile uint32_t d = (uint32_t)rand() % 100000; d > 0; d--)
			;
		CHECK_OK(ibv_destroy_qp(dct));
		CHECK_OK(ibv_destroy_srq(srq));
		CHECK_OK(ibv_destroy_cq(cq));
		pthread_join(t, NULL);
		if (s.first_err != IBV_WC_RETRY_EXC_ERR || s.bad_after != 0)
			TH_FAIL("round %d: first error %d (want %d), %ld not flushed after it", round, s.first_err,
				IBV_WC_RETRY_EXC_ERR, s.bad_after);
		CHECK(s.first_err == IBV_WC_RETRY_EXC_ERR && s.bad_after == 0);
		/* The DCI back to RTS for the next round. */
		{
			struct ibv_qp_attr r = {.qp_state = IBV_QPS_RESET};

			CHECK_OK(ibv_modify_qp(e.dci, &r, IBV_QP_STATE));
			CHECK_OK(dci_up(e.dci));
		}
	}
}

/* mlx5dv_query_device(3): a ConnectX-6 Dx's DC on-demand paging (a DCI's requests, a DCT's SRQ receives). */
static void test_dc_odp_caps(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_context a = {.comp_mask = MLX5DV_CONTEXT_MASK_DC_ODP_CAPS};

	CHECK(c != NULL);
	CHECK_OK(mlx5dv_query_device(c, &a));
	CHECK(a.comp_mask == MLX5DV_CONTEXT_MASK_DC_ODP_CAPS);
	CHECK(a.dc_odp_caps == (IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
				IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV));
}

/* One signalled DC request already built on e->x, sent to DCT 0; the status of its completion. */
static int dc_odp_post(struct dc_env *e, uint32_t lkey, void *laddr, uint32_t len)
{
	struct ibv_wc wc;

	mlx5dv_wr_set_dc_addr(e->mx, e->ah, e->dct[0]->qp_num, DC_KEY);
	ibv_wr_set_sge(e->x, lkey, (uint64_t)(uintptr_t)laddr, len);
	if (ibv_wr_complete(e->x) != 0 || vq_poll1(e->scq, &wc) != 1)
		return -1;
	return (int)wc.status;
}

/*
 * ODP MRs over DC as over RC: an explicit ODP MR and the implicit one take
 * SEND into the DCT's SRQ, WRITE, READ and atomics; through the implicit
 * key, a page mapped without the right asked fails the request with
 * IBV_WC_REM_ACCESS_ERR and the DCI goes to ERR.
 */
static void test_dc_odp_traffic(void)
{
	struct dc_env e;
	struct ibv_mr *odp, *im;
	struct ibv_sge sge;
	struct ibv_recv_wr rw = {.wr_id = 31, .sg_list = &sge, .num_sge = 1}, *bad;
	uint8_t *ob, *heap = calloc(1, 512);
	struct ibv_wc wc;
	uint64_t v;

	CHECK(heap != NULL);
	th_defer(free, heap);
	dc_env_up(&e);
	ob = dc_buf();
	CHECK(ob != NULL);
	odp = vq_mr(e.pd, ob, DC_BUF, VQ_ACCESS_ALL | IBV_ACCESS_ON_DEMAND);
	im = ibv_reg_mr(e.pd, NULL, SIZE_MAX, VQ_ACCESS_ALL | IBV_ACCESS_ON_DEMAND);
	CHECK(odp != NULL && im != NULL);
	th_defer(dc_dereg_cb, im);
	/* SEND from the explicit ODP MR into an SRQ receive on the heap through the implicit key. */
	memcpy(ob, "on demand", 9);
	sge = (struct ibv_sge){.addr = (uint64_t)(uintptr_t)heap, .length = 64, .lkey = im->lkey};
	CHECK_OK(ibv_post_srq_recv(e.srq, &rw, &bad));
	ibv_wr_start(e.x);
	e.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send(e.x);
	CHECK(dc_odp_post(&e, odp->lkey, ob, 9) == IBV_WC_SUCCESS);
	CHECK(vq_poll1(e.rcq, &wc) == 1 && wc.status == IBV_WC_SUCCESS && wc.wr_id == 31 && wc.byte_len == 9);
	CHECK(memcmp(heap, "on demand", 9) == 0 && heap[9] == 0);
	/* WRITE from the heap to the explicit ODP MR by the implicit rkey, READ back into the heap. */
	for (int i = 0; i < 128; i++)
		heap[64 + i] = (uint8_t)(i ^ 0x5c);
	ibv_wr_start(e.x);
	e.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(e.x, im->rkey, (uint64_t)(uintptr_t)(ob + 1024));
	CHECK(dc_odp_post(&e, im->lkey, heap + 64, 128) == IBV_WC_SUCCESS);
	CHECK(memcmp(ob + 1024, heap + 64, 128) == 0 && ob[1024 + 128] == 0);
	ibv_wr_start(e.x);
	e.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_read(e.x, odp->rkey, (uint64_t)(uintptr_t)(ob + 1024));
	CHECK(dc_odp_post(&e, im->lkey, heap + 256, 128) == IBV_WC_SUCCESS);
	CHECK(memcmp(heap + 256, heap + 64, 128) == 0);
	/* A fetch-and-add on the heap by the implicit rkey. */
	v = 100;
	memcpy(heap + 448, &v, 8);
	ibv_wr_start(e.x);
	e.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_fetch_add(e.x, im->rkey, (uint64_t)(uintptr_t)(heap + 448), 5);
	CHECK(dc_odp_post(&e, odp->lkey, ob + 2048, 8) == IBV_WC_SUCCESS);
	memcpy(&v, ob + 2048, 8);
	CHECK(v == 100);
	memcpy(&v, heap + 448, 8);
	CHECK(v == 105);
	/* A WRITE into a read-only page by the implicit rkey. */
	CHECK_OK(mprotect(ob, DC_BUF, PROT_READ));
	ibv_wr_start(e.x);
	e.x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(e.x, im->rkey, (uint64_t)(uintptr_t)(ob + 3072));
	CHECK(dc_odp_post(&e, im->lkey, heap, 8) == IBV_WC_REM_ACCESS_ERR);
	CHECK(qp_state(e.dci) == IBV_QPS_ERR);
	CHECK(ob[3072] == 0);
	CHECK_OK(mprotect(ob, DC_BUF, PROT_READ | PROT_WRITE));
}

/*
 * An implicit key is its process's only: another process's DCI writing
 * through it fails as through a key it does not know (IBV_WC_REM_ACCESS_ERR,
 * the DCI to ERR), while the same process's ordinary key works.
 */
static void test_dc_implicit_other_process(void)
{
	struct th_proc *p = th_proc_start(NULL, "dct", NULL);
	unsigned int dctn = 0, rkey = 0, irkey = 0;
	unsigned long long addr = 0;
	const char *l;
	struct dc_env e;

	CHECK(p != NULL);
	l = th_proc_line(p);
	CHECK(l != NULL && sscanf(l, "DCT %u %u %llu %u", &dctn, &rkey, &addr, &irkey) == 4);
	dc_env_up(&e);
	CHECK(dc_write8(&e, dctn, irkey, addr) == IBV_WC_REM_ACCESS_ERR);
	CHECK(qp_state(e.dci) == IBV_QPS_ERR);
	dc_new_dci(&e);
	CHECK(dc_write8(&e, dctn, rkey, addr) == IBV_WC_SUCCESS);
}

/*
 * DCI streams (mlx5dv_create_qp(3), mlx5dv_dci_stream_id_reset(3)): the
 * device's caps as mlx5dv_query_device reports them bound what a DCI may
 * ask; more concurrent or errored streams than that: EINVAL.
 */
static void test_dci_streams_caps(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_context dc = {.comp_mask = MLX5DV_CONTEXT_MASK_DCI_STREAMS};
	struct ibv_qp_init_attr_ex a;
	struct mlx5dv_qp_init_attr dv;
	struct ibv_pd *pd;
	struct ibv_cq *cq;

	CHECK(c != NULL);
	CHECK_OK(mlx5dv_query_device(c, &dc));
	CHECK(dc.comp_mask & MLX5DV_CONTEXT_MASK_DCI_STREAMS);
	CHECK(dc.dci_streams_caps.max_log_num_concurent == 4);
	CHECK(dc.dci_streams_caps.max_log_num_errored == 3);
	pd = vf_pd(c);
	cq = vq_cq(c, 16);
	CHECK(pd != NULL && cq != NULL);
	dci_attrs(&a, &dv, pd, cq);
	dv.comp_mask |= MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
	dv.dc_init_attr.dci_streams = (struct mlx5dv_dci_streams){.log_num_concurent = 5, .log_num_errored = 0};
	CHECK_CREATE_ERR(c, &a, &dv, EINVAL);
	dv.dc_init_attr.dci_streams = (struct mlx5dv_dci_streams){.log_num_concurent = 0, .log_num_errored = 4};
	CHECK_CREATE_ERR(c, &a, &dv, EINVAL);
	/* The caps themselves, and more errored streams than concurrent ones, are taken. */
	dv.dc_init_attr.dci_streams = (struct mlx5dv_dci_streams){.log_num_concurent = 4, .log_num_errored = 3};
	CHECK(dc_create(c, &a, &dv) != NULL);
	dv.dc_init_attr.dci_streams = (struct mlx5dv_dci_streams){.log_num_concurent = 2, .log_num_errored = 3};
	CHECK(dc_create(c, &a, &dv) != NULL);
}

/* The env's DCI replaced by one in RTS with 2^lc streams, 2^le of them allowed in error. */
static void dc_stream_dci(struct dc_env *e, uint8_t lc, uint8_t le)
{
	struct ibv_qp_init_attr_ex a;
	struct mlx5dv_qp_init_attr dv;

	dci_attrs(&a, &dv, e->pd, e->scq);
	dv.comp_mask |= MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
	dv.dc_init_attr.dci_streams = (struct mlx5dv_dci_streams){.log_num_concurent = lc, .log_num_errored = le};
	e->dci = dc_create(e->c, &a, &dv);
	CHECK(e->dci != NULL);
	CHECK_OK(dci_up(e->dci));
	e->x = ibv_qp_to_qp_ex(e->dci);
	e->mx = mlx5dv_qp_ex_from_ibv_qp_ex(e->x);
	CHECK(e->mx != NULL);
}

/* One signalled 64-byte WRITE on stream to DCT 0 at roff (rkey and lkey given); its completion's status, -1 if none. */
static enum ibv_wc_status dc_write_stream(struct dc_env *e, uint16_t stream, uint32_t rkey, uint32_t lkey,
					  uint32_t roff)
{
	struct ibv_wc wc;

	ibv_wr_start(e->x);
	e->x->wr_id = 1000u + stream;
	e->x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(e->x, rkey, (uint64_t)(uintptr_t)(e->rbuf[0] + roff));
	ibv_wr_set_sge(e->x, lkey, (uint64_t)(uintptr_t)e->lbuf, 64);
	mlx5dv_wr_set_dc_addr_stream(e->mx, e->ah, e->dct[0]->qp_num, DC_KEY, stream);
	if (ibv_wr_complete(e->x) != 0 || vq_poll1(e->scq, &wc) != 1 || wc.wr_id != 1000u + stream)
		return (enum ibv_wc_status)-1; /* not posted, no completion or another WR's */
	return wc.status;
}

static bool dc_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0)
			return false;
	return true;
}

/*
 * A request failing on one stream (a bad rkey at the DCT, an lkey of another
 * PD) puts that stream alone in error: its later work is flushed, also under
 * an id naming the same stream (id + 4 of 4 streams), while the other
 * streams' WRITEs land; the DCI stays in RTS.
 */
static void test_dci_stream_error_isolated(void)
{
	struct dc_env e;
	struct ibv_pd *pd2;
	struct ibv_mr *mr2;

	dc_env_up(&e);
	dc_stream_dci(&e, 2, 2);
	memset(e.lbuf, 0x6b, 64);
	CHECK(dc_write_stream(&e, 1, e.rmr[0]->rkey + 0x100, e.lmr->lkey, 0) == IBV_WC_REM_ACCESS_ERR);
	CHECK(qp_state(e.dci) == IBV_QPS_RTS);
	CHECK(dc_write_stream(&e, 2, e.rmr[0]->rkey, e.lmr->lkey, 128) == IBV_WC_SUCCESS);
	CHECK(e.rbuf[0][128] == 0x6b && e.rbuf[0][191] == 0x6b);
	CHECK(dc_write_stream(&e, 1, e.rmr[0]->rkey, e.lmr->lkey, 256) == IBV_WC_WR_FLUSH_ERR);
	CHECK(dc_write_stream(&e, 5, e.rmr[0]->rkey, e.lmr->lkey, 256) == IBV_WC_WR_FLUSH_ERR);
	CHECK(dc_zero(e.rbuf[0] + 256, 64));
	CHECK(dc_zero(e.rbuf[0], 64));
	/* A local protection error (the local key in another PD) is a stream's error too. */
	pd2 = vf_pd(e.c);
	CHECK(pd2 != NULL);
	mr2 = vq_mr(pd2, e.lbuf, 64, VQ_ACCESS_ALL);
	CHECK(mr2 != NULL);
	CHECK(dc_write_stream(&e, 3, e.rmr[0]->rkey, mr2->lkey, 320) == IBV_WC_LOC_PROT_ERR);
	CHECK(qp_state(e.dci) == IBV_QPS_RTS);
	CHECK(dc_write_stream(&e, 0, e.rmr[0]->rkey, e.lmr->lkey, 384) == IBV_WC_SUCCESS);
	CHECK(e.rbuf[0][384] == 0x6b && e.rbuf[0][447] == 0x6b);
	CHECK(dc_write_stream(&e, 3, e.rmr[0]->rkey, e.lmr->lkey, 320) == IBV_WC_WR_FLUSH_ERR);
	CHECK(dc_zero(e.rbuf[0] + 320, 64));
}

/*
 * mlx5dv_dci_stream_id_reset brings a stream in error back; a stream not in
 * error is refused (EINVAL), as are a DCI without streams (EINVAL) and a QP
 * not in RTS (EOPNOTSUPP). When the streams in error reach 2^log_num_errored,
 * the DCI goes to ERR and flushes everything; back through RESET, all its
 * streams run again.
 */
static void test_dci_stream_reset(void)
{
	struct ibv_qp_init_attr_ex a;
	struct mlx5dv_qp_init_attr dv;
	struct ibv_qp_attr qa = {.qp_state = IBV_QPS_RESET};
	struct ibv_qp *fresh;
	struct dc_env e;
	uint32_t bad, rk, lk;

	dc_env_up(&e);
	CHECK_ERR(mlx5dv_dci_stream_id_reset(e.dci, 0), EINVAL); /* the env's DCI has no streams */
	dc_stream_dci(&e, 2, 1);
	rk = e.rmr[0]->rkey;
	lk = e.lmr->lkey;
	bad = rk + 0x100;
	memset(e.lbuf, 0x33, 64);
	CHECK(dc_write_stream(&e, 1, bad, lk, 0) == IBV_WC_REM_ACCESS_ERR);
	CHECK_ERR(mlx5dv_dci_stream_id_reset(e.dci, 2), EINVAL);
	CHECK_OK(mlx5dv_dci_stream_id_reset(e.dci, 1));
	CHECK_ERR(mlx5dv_dci_stream_id_reset(e.dci, 1), EINVAL); /* no longer in error */
	CHECK(dc_write_stream(&e, 1, rk, lk, 0) == IBV_WC_SUCCESS);
	CHECK(e.rbuf[0][0] == 0x33 && e.rbuf[0][63] == 0x33);
	/* Two streams in error of 2 allowed: the second error takes the DCI to ERR. */
	CHECK(dc_write_stream(&e, 2, bad, lk, 64) == IBV_WC_REM_ACCESS_ERR);
	CHECK(qp_state(e.dci) == IBV_QPS_RTS);
	CHECK(dc_write_stream(&e, 3, bad, lk, 64) == IBV_WC_REM_ACCESS_ERR);
	CHECK(qp_state(e.dci) == IBV_QPS_ERR);
	CHECK(dc_write_stream(&e, 0, rk, lk, 128) == IBV_WC_WR_FLUSH_ERR);
	CHECK(dc_zero(e.rbuf[0] + 64, 128));
	CHECK_ERR(mlx5dv_dci_stream_id_reset(e.dci, 2), EOPNOTSUPP);
	CHECK_OK(ibv_modify_qp(e.dci, &qa, IBV_QP_STATE));
	CHECK_OK(dci_up(e.dci));
	for (uint16_t s = 0; s < 4; s++)
		CHECK(dc_write_stream(&e, s, rk, lk, 64u * (s + 1)) == IBV_WC_SUCCESS);
	CHECK(e.rbuf[0][64] == 0x33 && e.rbuf[0][255] == 0x33);
	CHECK_ERR(mlx5dv_dci_stream_id_reset(e.dci, 2), EINVAL);
	/* A DCI with streams not yet in RTS, and a DCT: EOPNOTSUPP, as mlx5 checks the state first. */
	dci_attrs(&a, &dv, e.pd, e.scq);
	dv.comp_mask |= MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS;
	dv.dc_init_attr.dci_streams = (struct mlx5dv_dci_streams){.log_num_concurent = 1, .log_num_errored = 1};
	fresh = dc_create(e.c, &a, &dv);
	CHECK(fresh != NULL);
	CHECK_ERR(mlx5dv_dci_stream_id_reset(fresh, 0), EOPNOTSUPP);
	CHECK_ERR(mlx5dv_dci_stream_id_reset(e.dct[0], 0), EOPNOTSUPP);
}

/*
 * mlx5dv_map_ah_to_qp(3): a global AH mapped to a QP succeeds, a second
 * mapping is ignored (success), a number no QP has is refused (EINVAL); the
 * AH then carries the DCI's traffic as before.
 */
static void test_map_ah_to_qp(void)
{
	struct dc_env e;
	struct ibv_wc wc;

	dc_env_up(&e);
	CHECK_OK(mlx5dv_map_ah_to_qp(e.ah, e.dci->qp_num));
	CHECK_OK(mlx5dv_map_ah_to_qp(e.ah, e.dct[1]->qp_num));
	CHECK_ERR(mlx5dv_map_ah_to_qp(e.ah, 0xfffffe), EINVAL);
	memset(e.lbuf, 0x4d, 64);
	CHECK_OK(dc_write(&e, 0, DC_KEY, 0, 0, 64));
	CHECK(vq_poll1(e.scq, &wc) == 1);
	CHECK(wc.status == IBV_WC_SUCCESS);
	CHECK(e.rbuf[0][0] == 0x4d && e.rbuf[0][63] == 0x4d);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "dct") == 0)
		return role_dct();
	RUN(test_create_dci_dct);
	RUN(test_create_refusals);
	RUN(test_modify_dci);
	RUN(test_modify_dct);
	RUN(test_ops_to_several_dcts);
	RUN(test_send_to_dct);
	RUN(test_wrong_key);
	RUN(test_unreachable);
	RUN(test_builder_refusals);
	RUN(test_dct_other_process);
	RUN(test_dct_owner_killed);
	RUN(test_dct_destroyed_while_in_use);
	RUN(test_dc_odp_caps);
	RUN(test_dc_odp_traffic);
	RUN(test_dc_implicit_other_process);
	RUN(test_dci_streams_caps);
	RUN(test_dci_stream_error_isolated);
	RUN(test_dci_stream_reset);
	RUN(test_map_ah_to_qp);
	return th_summary("test_verbs_dc");
}
