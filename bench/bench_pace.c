/*
 * Packet pacing: the rate a paced QP achieves against the one configured
 * (docs/PERFORMANCE.md, bench/pace.sh). A program of libibverbs.so.1 and
 * libmlx5.so.1:
 *   sched <Mbit/s>  an RC QP attached to a schedule leaf of that max_avg_bw
 *                   sends 4 KiB SENDs to its peer;
 *   rate <kbit/s>   a raw packet QP with that ibv_modify_qp_rate_limit sends
 *                   1500-byte frames (looped back to a second raw QP).
 * Rate 0 is no limit: what the QP achieves unpaced, the ceiling of the rest.
 * It keeps the send queue full for --seconds and prints the bytes the
 * completions reported over the time from the first post to the last
 * completion, as Mbit/s, beside the configured rate.
 *
 * Usage: bench_pace sched|rate <rate> [--seconds S]
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#define DEPTH 32
#define RC_MSG 4096u
#define RAW_MSG 1500u

static uint8_t sbuf[DEPTH * RC_MSG], rbuf[DEPTH * RC_MSG];

struct run {
	struct ibv_context *c;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *sq, *rq; /* the sender and the receiver */
	struct ibv_mr *smr, *rmr;
	uint32_t msg;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int die(const char *what)
{
	fprintf(stderr, "bench_pace: %s failed (%s)\n", what, strerror(errno));
	return 1;
}

static int post_send(struct run *r, uint32_t slot)
{
	struct ibv_sge sg = { .addr = (uintptr_t)sbuf + slot * r->msg, .length = r->msg, .lkey = r->smr->lkey };
	struct ibv_send_wr wr = { .wr_id = slot, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;

	return ibv_post_send(r->sq, &wr, &bad);
}

static int post_recv(struct run *r, uint32_t slot)
{
	struct ibv_sge sg = { .addr = (uintptr_t)rbuf + slot * RC_MSG, .length = RC_MSG, .lkey = r->rmr->lkey };
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sg, .num_sge = 1 }, *bad;

	return ibv_post_recv(r->rq, &wr, &bad);
}

static struct ibv_qp *qp_new(struct run *r, enum ibv_qp_type type, struct ibv_cq *scq, struct ibv_cq *rcq)
{
	struct ibv_qp_init_attr a = { .send_cq = scq, .recv_cq = rcq, .qp_type = type,
				      .cap = { .max_send_wr = DEPTH, .max_recv_wr = DEPTH, .max_send_sge = 1,
					       .max_recv_sge = 1 } };

	return ibv_create_qp(r->pd, &a);
}

static int rc_up(struct ibv_qp *qp, uint32_t dest)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE };
	union ibv_gid gid;

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0 ||
	    ibv_query_gid(qp->context, 1, 0, &gid) != 0)
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dest;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.hop_limit = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0)
		return -1;
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					     IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

static int raw_up(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT) != 0)
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE) != 0)
		return -1;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* RC pair, the sender under root -> leaf(max_avg_bw). */
static int setup_sched(struct run *r, uint32_t mbps)
{
	struct mlx5dv_sched_attr a = { 0 };
	struct mlx5dv_sched_node *root;
	struct mlx5dv_sched_leaf *leaf;

	r->msg = RC_MSG;
	r->sq = qp_new(r, IBV_QPT_RC, r->scq, r->scq);
	r->rq = qp_new(r, IBV_QPT_RC, r->rcq, r->rcq);
	if (r->sq == NULL || r->rq == NULL || rc_up(r->sq, r->rq->qp_num) != 0 || rc_up(r->rq, r->sq->qp_num) != 0)
		return die("RC QPs");
	root = mlx5dv_sched_node_create(r->c, &a);
	a.parent = root;
	a.flags = MLX5DV_SCHED_ELEM_ATTR_FLAGS_MAX_AVG_BW;
	a.max_avg_bw = mbps;
	leaf = root != NULL ? mlx5dv_sched_leaf_create(r->c, &a) : NULL;
	if (leaf == NULL)
		return die("schedule elements");
	errno = mlx5dv_modify_qp_sched_elem(r->sq, leaf, NULL);
	return errno != 0 ? die("mlx5dv_modify_qp_sched_elem") : 0;
}

/* Two raw QPs, a flow of the frames' destination to the second, the first's rate. */
static int setup_rate(struct run *r, uint32_t kbps)
{
	static const uint8_t dmac[6] = { 0x02, 0, 0, 0, 0x9a, 0xce };
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} f = { .attr = { .type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(f), .num_of_specs = 1, .port = 1 },
		.eth = { .type = IBV_FLOW_SPEC_ETH, .size = sizeof(f.eth) } };
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = kbps };

	r->msg = RAW_MSG;
	r->sq = qp_new(r, IBV_QPT_RAW_PACKET, r->scq, r->scq);
	r->rq = qp_new(r, IBV_QPT_RAW_PACKET, r->rcq, r->rcq);
	if (r->sq == NULL || r->rq == NULL || raw_up(r->sq) != 0 || raw_up(r->rq) != 0)
		return die("raw QPs");
	memcpy(f.eth.val.dst_mac, dmac, 6);
	memset(f.eth.mask.dst_mac, 0xff, 6);
	if (ibv_create_flow(r->rq, &f.attr) == NULL)
		return die("ibv_create_flow");
	for (uint32_t i = 0; i < DEPTH; i++) {
		uint8_t *fr = sbuf + i * RAW_MSG;

		memcpy(fr, dmac, 6);
		fr[12] = 0x08; /* IPv4 */
	}
	errno = ibv_modify_qp_rate_limit(r->sq, &rl);
	return errno != 0 ? die("ibv_modify_qp_rate_limit") : 0;
}

/* Keeps DEPTH sends posted for secs; the achieved Mbit/s. */
static double drive(struct run *r, double secs)
{
	uint64_t bytes = 0;
	double t0, t1, end;
	struct ibv_wc wc[DEPTH];

	for (uint32_t i = 0; i < DEPTH; i++)
		if (post_recv(r, i) != 0 || post_send(r, i) != 0)
			return -1;
	t0 = now_s();
	end = t0 + secs;
	t1 = t0;
	for (;;) {
		int n = ibv_poll_cq(r->scq, DEPTH, wc);
		bool more = now_s() < end;

		for (int i = 0; i < n; i++) {
			if (wc[i].status != IBV_WC_SUCCESS)
				return -1;
			bytes += r->msg;
			t1 = now_s();
			if (more && post_send(r, (uint32_t)wc[i].wr_id) != 0)
				return -1;
		}
		n = ibv_poll_cq(r->rcq, DEPTH, wc);
		for (int i = 0; i < n; i++)
			if (post_recv(r, (uint32_t)wc[i].wr_id) != 0)
				return -1;
		if (!more && t1 + 0.5 < now_s())
			break; /* the last sends completed a while ago */
	}
	return (double)bytes * 8 / (t1 - t0) / 1e6;
}

int main(int argc, char **argv)
{
	struct run r = { 0 };
	struct ibv_device **l;
	double secs = 2, got, want;
	uint32_t rate;
	bool sched;

	if (argc < 3 || (strcmp(argv[1], "sched") != 0 && strcmp(argv[1], "rate") != 0)) {
		fprintf(stderr, "usage: bench_pace sched|rate <rate> [--seconds S]\n");
		return 2;
	}
	sched = strcmp(argv[1], "sched") == 0;
	rate = (uint32_t)strtoul(argv[2], NULL, 0);
	if (argc == 5 && strcmp(argv[3], "--seconds") == 0)
		secs = atof(argv[4]);
	l = ibv_get_device_list(NULL);
	r.c = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	if (r.c == NULL)
		return die("ibv_open_device");
	r.pd = ibv_alloc_pd(r.c);
	r.scq = ibv_create_cq(r.c, 2 * DEPTH, NULL, NULL, 0);
	r.rcq = ibv_create_cq(r.c, 2 * DEPTH, NULL, NULL, 0);
	r.smr = r.pd != NULL ? ibv_reg_mr(r.pd, sbuf, sizeof(sbuf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	r.rmr = r.pd != NULL ? ibv_reg_mr(r.pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE) : NULL;
	if (r.scq == NULL || r.rcq == NULL || r.smr == NULL || r.rmr == NULL)
		return die("PD, CQs and MRs");
	if ((sched ? setup_sched(&r, rate) : setup_rate(&r, rate)) != 0)
		return 1;
	got = drive(&r, secs);
	if (got < 0)
		return die("the sends");
	want = sched ? rate : rate / 1000.0;
	if (rate == 0) /* no limit: what the QP does unpaced, the ceiling of the others */
		printf("%-6s configured  unlimited        achieved %10.3f Mbit/s\n", argv[1], got);
	else
		printf("%-6s configured %10.3f Mbit/s achieved %10.3f Mbit/s (%.2f %%)\n", argv[1], want, got,
		       100.0 * got / want);
	return 0; /* the objects go with the process */
}
