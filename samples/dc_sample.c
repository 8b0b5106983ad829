/*
 * dc_sample — an RDMA WRITE over the Dynamically Connected transport, in the
 * flow of mlx5dv_wr_post(3): a DCI created with mlx5dv_create_qp and
 * send_ops_flags, ibv_wr_start, ibv_wr_rdma_write, ibv_wr_set_sge,
 * mlx5dv_wr_set_dc_addr, ibv_wr_complete; the target is a DCT (on an SRQ)
 * whose memory the program then checks. Written against libibverbs and
 * libmlx5's public API only.
 *
 * Usage: dc_sample [BYTES]   (default 4096)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#define DC_KEY 0x5eed5eed5eed5eedull
#define POLL_TRIES 100000000L

struct dc_res {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_srq *srq;
	struct ibv_qp *dci, *dct;
	struct ibv_ah *ah;
	struct ibv_mr *src_mr, *dst_mr;
	uint8_t *src, *dst;
};

static int open_device(struct dc_res *r)
{
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 16, .max_sge = 1}};
	int n = 0;

	r->list = ibv_get_device_list(&n);
	if (r->list == NULL || n < 1) {
		fprintf(stderr, "dc_sample: no RDMA device\n");
		return -1;
	}
	r->ctx = ibv_open_device(r->list[0]);
	if (r->ctx == NULL)
		return -1;
	r->pd = ibv_alloc_pd(r->ctx);
	r->cq = ibv_create_cq(r->ctx, 64, NULL, NULL, 0);
	r->srq = r->pd != NULL ? ibv_create_srq(r->pd, &sa) : NULL;
	return r->pd != NULL && r->cq != NULL && r->srq != NULL ? 0 : -1;
}

/* The DCI: IBV_QPT_DRIVER, the DC type, and the operations it will build. */
static int create_dci(struct dc_res *r)
{
	struct ibv_qp_init_attr_ex attr_ex = {
		.send_cq = r->cq,
		.recv_cq = r->cq,
		.cap = {.max_send_wr = 16, .max_send_sge = 1},
		.qp_type = IBV_QPT_DRIVER,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = r->pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE,
	};
	struct mlx5dv_qp_init_attr attr_dv = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
		.dc_init_attr = {.dc_type = MLX5DV_DCTYPE_DCI},
	};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1};

	r->dci = mlx5dv_create_qp(r->ctx, &attr_ex, &attr_dv);
	if (r->dci == NULL) {
		fprintf(stderr, "dc_sample: DCI: %s\n", strerror(errno));
		return -1;
	}
	if (ibv_modify_qp(r->dci, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT) != 0)
		return -1;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096};
	if (ibv_modify_qp(r->dci, &a, IBV_QP_STATE | IBV_QP_PATH_MTU) != 0)
		return -1;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
				 .max_rd_atomic = 1};
	return ibv_modify_qp(r->dci, &a,
			     IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				     IBV_QP_MAX_QP_RD_ATOMIC);
}

/* The DCT: the receive side, on the SRQ, reached with its number and access key. */
static int create_dct(struct dc_res *r)
{
	struct ibv_qp_init_attr_ex attr_ex = {
		.send_cq = r->cq,
		.recv_cq = r->cq,
		.srq = r->srq,
		.qp_type = IBV_QPT_DRIVER,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = r->pd,
	};
	struct mlx5dv_qp_init_attr attr_dv = {
		.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC,
		.dc_init_attr = {.dc_type = MLX5DV_DCTYPE_DCT, .dct_access_key = DC_KEY},
	};
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1,
				.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ};

	r->dct = mlx5dv_create_qp(r->ctx, &attr_ex, &attr_dv);
	if (r->dct == NULL) {
		fprintf(stderr, "dc_sample: DCT: %s\n", strerror(errno));
		return -1;
	}
	if (ibv_modify_qp(r->dct, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0)
		return -1;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096, .min_rnr_timer = 12,
				 .ah_attr = {.port_num = 1, .is_global = 1, .grh = {.hop_limit = 1}}};
	/* RoCE: an address carries a GRH; the DCT's port is this device's, its GID 0. */
	if (ibv_query_gid(r->ctx, 1, 0, &a.ah_attr.grh.dgid) != 0)
		return -1;
	return ibv_modify_qp(r->dct, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV | IBV_QP_PATH_MTU);
}

static int setup_memory(struct dc_res *r, size_t len)
{
	struct ibv_port_attr pa;
	struct ibv_ah_attr ah = {.port_num = 1};

	r->src = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	r->dst = aligned_alloc(4096, (len + 4095) & ~(size_t)4095);
	if (r->src == NULL || r->dst == NULL)
		return -1;
	for (size_t i = 0; i < len; i++)
		r->src[i] = (uint8_t)(i * 13 + 1);
	memset(r->dst, 0, len);
	r->src_mr = ibv_reg_mr(r->pd, r->src, len, IBV_ACCESS_LOCAL_WRITE);
	r->dst_mr = ibv_reg_mr(r->pd, r->dst, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (r->src_mr == NULL || r->dst_mr == NULL || ibv_query_port(r->ctx, 1, &pa) != 0)
		return -1;
	ah.dlid = pa.lid;
	/* The DCT is on this port: RoCE addresses it by GID (its GID 0), InfiniBand by LID. */
	ah.is_global = 1;
	ah.grh.hop_limit = 1;
	if (ibv_query_gid(r->ctx, 1, 0, &ah.grh.dgid) != 0)
		return -1;
	r->ah = ibv_create_ah(r->pd, &ah);
	return r->ah != NULL ? 0 : -1;
}

/* The work request, as mlx5dv_wr_post(3) shows it, and its completion. */
static int write_to_dct(struct dc_res *r, size_t len)
{
	struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(r->dci);
	struct mlx5dv_qp_ex *mqpx = qpx != NULL ? mlx5dv_qp_ex_from_ibv_qp_ex(qpx) : NULL;
	struct ibv_wc wc;
	int ret, n = 0;

	if (mqpx == NULL)
		return -1;
	ibv_wr_start(qpx);
	qpx->wr_id = 1;
	qpx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qpx, r->dst_mr->rkey, (uint64_t)(uintptr_t)r->dst);
	ibv_wr_set_sge(qpx, r->src_mr->lkey, (uint64_t)(uintptr_t)r->src, (uint32_t)len);
	mlx5dv_wr_set_dc_addr(mqpx, r->ah, r->dct->qp_num, DC_KEY);
	ret = ibv_wr_complete(qpx);
	if (ret != 0) {
		fprintf(stderr, "dc_sample: ibv_wr_complete: %s\n", strerror(ret));
		return -1;
	}
	for (long i = 0; i < POLL_TRIES && n == 0; i++)
		n = ibv_poll_cq(r->cq, 1, &wc);
	if (n != 1 || wc.status != IBV_WC_SUCCESS) {
		fprintf(stderr, "dc_sample: completion: %s\n", n == 1 ? ibv_wc_status_str(wc.status) : "none");
		return -1;
	}
	return 0;
}

static void release(struct dc_res *r)
{
	if (r->dci != NULL)
		ibv_destroy_qp(r->dci);
	if (r->dct != NULL)
		ibv_destroy_qp(r->dct);
	if (r->ah != NULL)
		ibv_destroy_ah(r->ah);
	if (r->src_mr != NULL)
		ibv_dereg_mr(r->src_mr);
	if (r->dst_mr != NULL)
		ibv_dereg_mr(r->dst_mr);
	if (r->srq != NULL)
		ibv_destroy_srq(r->srq);
	if (r->cq != NULL)
		ibv_destroy_cq(r->cq);
	if (r->pd != NULL)
		ibv_dealloc_pd(r->pd);
	if (r->ctx != NULL)
		ibv_close_device(r->ctx);
	if (r->list != NULL)
		ibv_free_device_list(r->list);
	free(r->src);
	free(r->dst);
}

int main(int argc, char **argv)
{
	struct dc_res r = {0};
	size_t len = argc > 1 ? strtoul(argv[1], NULL, 0) : 4096;
	int ok = 0;

	if (len == 0 || len > (1u << 30)) {
		fprintf(stderr, "usage: dc_sample [BYTES (1..1GiB)]\n");
		return 2;
	}
	if (open_device(&r) == 0 && create_dci(&r) == 0 && create_dct(&r) == 0 && setup_memory(&r, len) == 0 &&
	    write_to_dct(&r, len) == 0)
		ok = memcmp(r.src, r.dst, len) == 0;
	if (ok)
		printf("dc_sample: wrote %zu bytes from DCI 0x%x to DCT 0x%x: verified\n", len, r.dci->qp_num,
		       r.dct->qp_num);
	else
		fprintf(stderr, "dc_sample: FAILED\n");
	release(&r);
	return ok ? 0 : 1;
}
