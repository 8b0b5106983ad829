/*
 * bench_dc — 64 B RDMA WRITE message rate from a DCI to DCTs against RC to
 * RC, in the same run and the same process, through the same ibv_wr_*
 * builders (a DC work request only adds mlx5dv_wr_set_dc_addr). Batches of
 * BATCH writes, the last one signalled, one wr_complete per batch.
 *
 * Prints the rate of each mode (best of ROUNDS) and DC/RC (target >= 0.80,
 * docs/PERFORMANCE.md).
 *
 * Usage: bench_dc [--quick]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#define MSG 64
#define BATCH 16
#define ROUNDS 5
#define NDCT 4
#define DC_KEY 0xdcdcdcdcull
#define ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

struct bench {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq, *rcq;
	struct ibv_srq *srq;
	struct ibv_qp *rc[2], *dci, *dct[NDCT];
	struct ibv_ah *ah;
	struct ibv_mr *lmr, *rmr;
	uint8_t *lbuf, *rbuf;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int die(const char *what)
{
	fprintf(stderr, "bench_dc: %s failed\n", what);
	exit(1);
}

static struct ibv_qp *make_rc(struct bench *b)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = b->cq,
		.recv_cq = b->cq,
		.cap = {.max_send_wr = 2 * BATCH, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1},
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = b->pd,
		.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE,
	};

	return ibv_create_qp_ex(b->ctx, &a);
}

static int rc_up(struct ibv_qp *qp, uint32_t dest, uint16_t lid)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = ACCESS};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096, .dest_qp_num = dest,
				 .max_dest_rd_atomic = 1, .min_rnr_timer = 1,
				 .ah_attr = {.dlid = lid, .port_num = 1, .is_global = 1, .grh = {.hop_limit = 1}}};
	if (ibv_query_gid(qp->context, 1, 0, &a.ah_attr.grh.dgid) != 0) /* RoCE: the own port by GID */
		return -1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -1;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
				 .max_rd_atomic = 1};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static struct ibv_qp *make_dc(struct bench *b, enum mlx5dv_dc_type t)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = b->cq,
		.recv_cq = t == MLX5DV_DCTYPE_DCT ? b->rcq : b->cq,
		.srq = t == MLX5DV_DCTYPE_DCT ? b->srq : NULL,
		.cap = {.max_send_wr = t == MLX5DV_DCTYPE_DCI ? 2 * BATCH : 0, .max_send_sge = 1},
		.qp_type = IBV_QPT_DRIVER,
		.comp_mask = IBV_QP_INIT_ATTR_PD | (t == MLX5DV_DCTYPE_DCI ? IBV_QP_INIT_ATTR_SEND_OPS_FLAGS : 0),
		.pd = b->pd,
		.send_ops_flags = t == MLX5DV_DCTYPE_DCI ? IBV_QP_EX_WITH_RDMA_WRITE : 0,
	};
	struct mlx5dv_qp_init_attr dv = {.comp_mask = MLX5DV_QP_INIT_ATTR_MASK_DC, .dc_init_attr = {.dc_type = t}};

	if (t == MLX5DV_DCTYPE_DCT)
		dv.dc_init_attr.dct_access_key = DC_KEY;
	return mlx5dv_create_qp(b->ctx, &a, &dv);
}

static int dci_up(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT))
		return -1;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096};
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU))
		return -1;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTS, .timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
				 .max_rd_atomic = 1};
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int dct_up(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {.qp_state = IBV_QPS_INIT, .port_num = 1, .qp_access_flags = ACCESS};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	a = (struct ibv_qp_attr){.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_4096, .min_rnr_timer = 1,
				 .ah_attr = {.port_num = 1, .is_global = 1, .grh = {.hop_limit = 1}}};
	if (ibv_query_gid(qp->context, 1, 0, &a.ah_attr.grh.dgid) != 0)
		return -1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV | IBV_QP_PATH_MTU);
}

static void setup(struct bench *b)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_srq_init_attr sa = {.attr = {.max_wr = 4, .max_sge = 1}};
	struct ibv_port_attr pa;
	struct ibv_ah_attr aa = {.port_num = 1};

	memset(b, 0, sizeof(*b));
	if (l == NULL || l[0] == NULL || (b->ctx = ibv_open_device(l[0])) == NULL)
		die("opening the device");
	ibv_free_device_list(l);
	b->pd = ibv_alloc_pd(b->ctx);
	b->cq = ibv_create_cq(b->ctx, 256, NULL, NULL, 0);
	b->rcq = ibv_create_cq(b->ctx, 16, NULL, NULL, 0);
	b->srq = b->pd != NULL ? ibv_create_srq(b->pd, &sa) : NULL;
	b->lbuf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b->rbuf = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->cq == NULL || b->rcq == NULL || b->srq == NULL || b->lbuf == MAP_FAILED || b->rbuf == MAP_FAILED)
		die("creating CQs, SRQ, buffers");
	b->lmr = ibv_reg_mr(b->pd, b->lbuf, 4096, ACCESS);
	b->rmr = ibv_reg_mr(b->pd, b->rbuf, 4096, ACCESS);
	if (b->lmr == NULL || b->rmr == NULL || ibv_query_port(b->ctx, 1, &pa) != 0)
		die("registering memory");
	b->rc[0] = make_rc(b);
	b->rc[1] = make_rc(b);
	if (b->rc[0] == NULL || b->rc[1] == NULL || rc_up(b->rc[0], b->rc[1]->qp_num, pa.lid) ||
	    rc_up(b->rc[1], b->rc[0]->qp_num, pa.lid))
		die("the RC pair");
	b->dci = make_dc(b, MLX5DV_DCTYPE_DCI);
	if (b->dci == NULL || dci_up(b->dci))
		die("the DCI");
	for (int i = 0; i < NDCT; i++) {
		b->dct[i] = make_dc(b, MLX5DV_DCTYPE_DCT);
		if (b->dct[i] == NULL || dct_up(b->dct[i]))
			die("a DCT");
	}
	aa.dlid = pa.lid;
	aa.is_global = 1; /* RoCE: the DCTs' port by its GID 0 */
	aa.grh.hop_limit = 1;
	if (ibv_query_gid(b->ctx, 1, 0, &aa.grh.dgid) != 0)
		die("the GID");
	b->ah = ibv_create_ah(b->pd, &aa);
	if (b->ah == NULL)
		die("the AH");
}

static void teardown(struct bench *b)
{
	ibv_destroy_ah(b->ah);
	for (int i = 0; i < NDCT; i++)
		ibv_destroy_qp(b->dct[i]);
	ibv_destroy_qp(b->dci);
	ibv_destroy_qp(b->rc[0]);
	ibv_destroy_qp(b->rc[1]);
	ibv_dereg_mr(b->lmr);
	ibv_dereg_mr(b->rmr);
	ibv_destroy_srq(b->srq);
	ibv_destroy_cq(b->cq);
	ibv_destroy_cq(b->rcq);
	ibv_dealloc_pd(b->pd);
	ibv_close_device(b->ctx);
	munmap(b->lbuf, 4096);
	munmap(b->rbuf, 4096);
}

/* msgs writes of MSG bytes; ndct 0: RC, else DC over ndct DCTs in turn. Messages per second. */
static double run(struct bench *b, int ndct, long msgs)
{
	struct ibv_qp_ex *x = ibv_qp_to_qp_ex(ndct == 0 ? b->rc[0] : b->dci);
	struct mlx5dv_qp_ex *mx = ndct == 0 ? NULL : mlx5dv_qp_ex_from_ibv_qp_ex(x);
	uint64_t raddr = (uint64_t)(uintptr_t)b->rbuf, laddr = (uint64_t)(uintptr_t)b->lbuf;
	struct ibv_wc wc;
	double t0 = now_s();
	long n = 0;

	while (n < msgs) {
		int got = 0;

		ibv_wr_start(x);
		for (int k = 0; k < BATCH; k++, n++) {
			x->wr_id = (uint64_t)n;
			x->wr_flags = k == BATCH - 1 ? IBV_SEND_SIGNALED : 0;
			ibv_wr_rdma_write(x, b->rmr->rkey, raddr + (uint64_t)(k % 8) * MSG);
			ibv_wr_set_sge(x, b->lmr->lkey, laddr, MSG);
			if (mx != NULL)
				mlx5dv_wr_set_dc_addr(mx, b->ah, b->dct[n % ndct]->qp_num, DC_KEY);
		}
		if (ibv_wr_complete(x) != 0)
			die("ibv_wr_complete");
		for (long t = 0; t < 100000000L && got == 0; t++)
			got = ibv_poll_cq(b->cq, 1, &wc);
		if (got != 1 || wc.status != IBV_WC_SUCCESS)
			die("a completion");
	}
	return (double)msgs / (now_s() - t0);
}

int main(int argc, char **argv)
{
	int quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	long msgs = quick ? 20000 : 2000000;
	double rc = 0, dc1 = 0, dcn = 0;
	struct bench b;

	setup(&b);
	run(&b, 0, msgs / 10); /* warm-up */
	run(&b, 1, msgs / 10);
	for (int r = 0; r < (quick ? 1 : ROUNDS); r++) {
		double v;

		if ((v = run(&b, 0, msgs)) > rc)
			rc = v;
		if ((v = run(&b, 1, msgs)) > dc1)
			dc1 = v;
		if ((v = run(&b, NDCT, msgs)) > dcn)
			dcn = v;
	}
	teardown(&b);
	printf("== 64 B RDMA WRITE message rate, one process, ibv_wr_* batches of %d (best of %d) ==\n", BATCH,
	       quick ? 1 : ROUNDS);
	printf("%-28s %12s %8s\n", "mode", "Mmsg/s", "vs RC");
	printf("%-28s %12.2f %8s\n", "RC -> RC", rc / 1e6, "1.00");
	printf("%-28s %12.2f %8.2f\n", "DCI -> one DCT", dc1 / 1e6, dc1 / rc);
	printf("%-28s %12.2f %8.2f\n", "DCI -> 4 DCTs in turn", dcn / 1e6, dcn / rc);
	printf("target: DC >= 0.80 x RC%s\n", quick ? " (--quick: not meaningful)" : "");
	return 0;
}
