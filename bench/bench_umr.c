/*
 * bench_umr — RDMA WRITE of contiguous data into a strided layout through a
 * UMR-interleaved mkey (bytes_count of every bytes_count + bytes_skip bytes),
 * against the same scatter done by hand in the same run: one memcpy per block
 * from the contiguous source into the strided destination.
 *
 * Both sides move the same bytes between the same buffers; the UMR figure
 * includes posting the WQE and polling its completion. Each case reports the
 * median over its iterations of both, in GB/s of data, and their ratio.
 * The destination is compared with the expected bytes once per case: a wrong
 * result exits non-zero.
 *
 * Usage: bench_umr [--quick]
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "bench_stats.h"

#define ACCESS_ALL (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

struct rig {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
	struct ibv_qp_ex *x;
	struct mlx5dv_qp_ex *dx;
	struct ibv_mr *src_mr, *dst_mr;
	uint8_t *src, *dst;
	size_t data_max, span_max;
};

static int rig_qp(struct rig *r, int i)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = r->cq, .recv_cq = r->cq, .qp_type = IBV_QPT_RC,
		.cap = {.max_send_wr = 16, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS, .pd = r->pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_LOCAL_INV,
	};
	struct mlx5dv_qp_init_attr dv = {.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS,
					 .send_ops_flags = MLX5DV_QP_EX_WITH_MR_INTERLEAVED};

	r->qp[i] = mlx5dv_create_qp(r->c, &a, &dv);
	return r->qp[i] == NULL ? -1 : 0;
}

static int rig_up(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = ACCESS_ALL};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024, .dest_qp_num = dest,
				 .max_dest_rd_atomic = 1,
				 .ah_attr = {.dlid = 1, .port_num = 1, .is_global = 1, .grh = {.hop_limit = 1}}};
	if (ibv_query_gid(qp->context, 1, 0, &a.ah_attr.grh.dgid) != 0) /* RoCE: the own port by GID */
		return -1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .max_rd_atomic = 1};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) ? -1 : 0;
}

static int rig_open(struct rig *r, size_t data_max, size_t span_max)
{
	struct ibv_device **l = ibv_get_device_list(NULL);

	if (l == NULL || l[0] == NULL)
		return -1;
	r->c = ibv_open_device(l[0]);
	ibv_free_device_list(l);
	if (r->c == NULL || (r->pd = ibv_alloc_pd(r->c)) == NULL || (r->cq = ibv_create_cq(r->c, 64, NULL, NULL, 0)) == NULL)
		return -1;
	r->src = aligned_alloc(4096, data_max);
	r->dst = aligned_alloc(4096, span_max);
	if (r->src == NULL || r->dst == NULL)
		return -1;
	memset(r->dst, 0, span_max);
	for (size_t i = 0; i < data_max; i++)
		r->src[i] = (uint8_t)(i * 131 + 7);
	r->src_mr = ibv_reg_mr(r->pd, r->src, data_max, ACCESS_ALL);
	r->dst_mr = ibv_reg_mr(r->pd, r->dst, span_max, ACCESS_ALL);
	if (r->src_mr == NULL || r->dst_mr == NULL || rig_qp(r, 0) || rig_qp(r, 1))
		return -1;
	if (rig_up(r->qp[0], r->qp[1]->qp_num) || rig_up(r->qp[1], r->qp[0]->qp_num))
		return -1;
	r->x = ibv_qp_to_qp_ex(r->qp[0]);
	r->dx = mlx5dv_qp_ex_from_ibv_qp_ex(r->x);
	r->data_max = data_max;
	r->span_max = span_max;
	return r->dx == NULL ? -1 : 0;
}

static void rig_close(struct rig *r)
{
	for (int i = 0; i < 2; i++)
		if (r->qp[i] != NULL)
			ibv_destroy_qp(r->qp[i]);
	if (r->src_mr != NULL)
		ibv_dereg_mr(r->src_mr);
	if (r->dst_mr != NULL)
		ibv_dereg_mr(r->dst_mr);
	if (r->cq != NULL)
		ibv_destroy_cq(r->cq);
	if (r->pd != NULL)
		ibv_dealloc_pd(r->pd);
	if (r->c != NULL)
		ibv_close_device(r->c);
	free(r->src);
	free(r->dst);
}

static int poll1(struct ibv_cq *cq, enum ibv_wc_status *st)
{
	struct ibv_wc wc;
	int n;

	while ((n = ibv_poll_cq(cq, 1, &wc)) == 0)
		;
	*st = wc.status;
	return n == 1 && wc.status == IBV_WC_SUCCESS ? 0 : -1;
}

/* Posts one signaled work request built by the caller's step and waits for it. */
static int rig_umr(struct rig *r, struct mlx5dv_mkey *m, uint32_t block, uint32_t skip, uint32_t repeat)
{
	struct mlx5dv_mr_interleaved d = {.addr = (uintptr_t)r->dst, .bytes_count = block, .bytes_skip = skip,
					  .lkey = r->dst_mr->lkey};
	enum ibv_wc_status st;

	ibv_wr_start(r->x);
	r->x->wr_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	mlx5dv_wr_mr_interleaved(r->dx, m, IBV_ACCESS_REMOTE_WRITE, repeat, 1, &d);
	if (ibv_wr_complete(r->x) != 0)
		return -1;
	return poll1(r->cq, &st);
}

static int rig_write(struct rig *r, uint32_t rkey, uint32_t len)
{
	enum ibv_wc_status st;

	ibv_wr_start(r->x);
	r->x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(r->x, rkey, 0);
	ibv_wr_set_sge(r->x, r->src_mr->lkey, (uintptr_t)r->src, len);
	if (ibv_wr_complete(r->x) != 0)
		return -1;
	return poll1(r->cq, &st);
}

/* The reference: the same scatter by hand. */
static void strided_copy(uint8_t *dst, const uint8_t *src, uint32_t block, uint32_t stride, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		memcpy(dst + (size_t)i * stride, src + (size_t)i * block, block);
}

static bool verify(const struct rig *r, uint32_t block, uint32_t stride, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (memcmp(r->dst + (size_t)i * stride, r->src + (size_t)i * block, block) != 0)
			return false;
	return true;
}

static int run_case(struct rig *r, uint32_t block, uint32_t skip, uint32_t data, int iters)
{
	struct mlx5dv_mkey_init_attr a = {.pd = r->pd, .create_flags = MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT,
					  .max_entries = 2};
	uint32_t n = data / block, stride = block + skip;
	uint64_t *t_umr = calloc((size_t)iters, sizeof(uint64_t)), *t_ref = calloc((size_t)iters, sizeof(uint64_t));
	struct mlx5dv_mkey *m = mlx5dv_create_mkey(&a);
	struct stats su, sr;
	int rc = -1;

	if (m == NULL || t_umr == NULL || t_ref == NULL || rig_umr(r, m, block, skip, n) != 0)
		goto out;
	if (rig_write(r, m->rkey, data) != 0 || !verify(r, block, stride, n)) {
		fprintf(stderr, "bench_umr: the UMR write did not land as the pattern says\n");
		goto out;
	}
	memset(r->dst, 0, (size_t)n * stride);
	strided_copy(r->dst, r->src, block, stride, n);
	if (!verify(r, block, stride, n))
		goto out;
	/* Interleaved so both see the same cache and frequency conditions. */
	for (int i = 0; i < iters; i++) {
		uint64_t t0 = now_ns();

		if (rig_write(r, m->rkey, data) != 0)
			goto out;
		t_umr[i] = now_ns() - t0;
		t0 = now_ns();
		strided_copy(r->dst, r->src, block, stride, n);
		__asm__ volatile("" : : "r"(r->dst) : "memory");
		t_ref[i] = now_ns() - t0;
	}
	su = summarize(t_umr, (uint32_t)iters);
	sr = summarize(t_ref, (uint32_t)iters);
	printf("%8u B  %3u of %3u B  %9.2f GB/s  %9.2f GB/s  %6.2f\n", data, block, stride,
	       data / (su.median_us * 1e3), data / (sr.median_us * 1e3), sr.median_us / su.median_us);
	rc = 0;
out:
	if (m != NULL)
		mlx5dv_destroy_mkey(m);
	free(t_umr);
	free(t_ref);
	return rc;
}

int main(int argc, char **argv)
{
	bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	struct rig r = {0};
	int rc = 0;

	if (rig_open(&r, 1u << 20, 2u << 20) != 0) {
		fprintf(stderr, "bench_umr: no device or QP\n");
		rig_close(&r);
		return 1;
	}
	printf("== RDMA WRITE through a UMR-interleaved mkey vs a strided memcpy loop (medians) ==\n");
	printf("%10s  %-14s  %14s  %14s  %6s\n", "data", "layout", "UMR write", "memcpy loop", "ratio");
	rc |= run_case(&r, 64, 64, 1u << 20, quick ? 5 : 200);
	rc |= run_case(&r, 64, 64, 4096, quick ? 5 : 20000);
	rc |= run_case(&r, 512, 512, 1u << 20, quick ? 5 : 200);
	rig_close(&r);
	return rc != 0;
}
