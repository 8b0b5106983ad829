/*
 * mlx5dv_create_flow_matcher(3) and mlx5dv_create_flow(3): matchers over
 * the PRM's fte_match_param (the outer headers), flows that steer frames
 * to a raw packet QP (bytes compared), drop them (receive or, for an
 * egress matcher, transmit) or take the default miss; the destroy order
 * (matcher after its flows, QP after the flows naming it) and the
 * refusals: unknown attributes EINVAL, what the steering cannot do
 * (FDB tables, masks beyond the outer headers, counters, a tag on
 * transmit) EOPNOTSUPP. A tag action gives the frames' receive completions
 * its flow tag.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>

#include "raw_fixture.h"

#define CRIT_NONE 0x0
#define CRIT_OUTER 0x1
#define CRIT_MISC 0x2
#define PARAM_SZ 0x180 /* fte_match_param up to misc3, as rdma-core's suite sizes its empty mask */
#define PARAM_MAX 0x1c0 /* with misc4 and misc5 (mlx5_ifc.h) */

struct param {
	size_t match_sz;
	uint64_t buf[PARAM_MAX / 8 + 1];
};

static void matcher_cb(void *m)
{
	(void)mlx5dv_destroy_flow_matcher(m);
}

/* A parameter of sz bytes: the source MAC (the first 6 bytes of the outer headers) set to mac, or zeros. */
static struct mlx5dv_flow_match_parameters *smac(struct param *p, size_t sz, const uint8_t *mac)
{
	memset(p, 0, sizeof(*p));
	if (mac != NULL)
		memcpy(p->buf, mac, 6);
	p->match_sz = sz;
	return (struct mlx5dv_flow_match_parameters *)p;
}

static const uint8_t ones[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

static struct mlx5dv_flow_matcher *matcher(uint16_t prio, uint8_t crit, struct mlx5dv_flow_match_parameters *mask,
					   bool egress)
{
	struct mlx5dv_flow_matcher_attr a = {
		.type = IBV_FLOW_ATTR_NORMAL,
		.flags = egress ? IBV_FLOW_ATTR_FLAGS_EGRESS : 0,
		.priority = prio,
		.match_criteria_enable = crit,
		.match_mask = mask,
	};

	return kept(mlx5dv_create_flow_matcher(env.c, &a), matcher_cb);
}

static struct ibv_flow *flow(struct mlx5dv_flow_matcher *m, struct mlx5dv_flow_match_parameters *v,
			     struct mlx5dv_flow_action_attr *a)
{
	return kept(mlx5dv_create_flow(m, v, 1, a), flow_cb);
}

/* Empty and source-MAC matchers are made; the refusals the man pages and the device give. */
static void test_matchers(void)
{
	struct mlx5dv_flow_matcher_attr a = {.type = IBV_FLOW_ATTR_NORMAL, .match_criteria_enable = CRIT_OUTER};
	struct param p;

	CHECK(env_open() == 0);
	CHECK(matcher(0, CRIT_NONE, smac(&p, PARAM_SZ, NULL), false) != NULL);
	CHECK(matcher(0, CRIT_OUTER, smac(&p, 6, ones), false) != NULL);
	CHECK(matcher(3, CRIT_OUTER, smac(&p, 6, ones), true) != NULL);
	a.match_mask = smac(&p, 6, ones);
	a.comp_mask = MLX5DV_FLOW_MATCHER_MASK_FT_TYPE;
	a.ft_type = MLX5DV_FLOW_TABLE_TYPE_NIC_TX;
	CHECK(kept(mlx5dv_create_flow_matcher(env.c, &a), matcher_cb) != NULL);
	/* The FDB and RDMA tables: not steered here. */
	a.ft_type = MLX5DV_FLOW_TABLE_TYPE_FDB;
	errno = 0;
	CHECK(mlx5dv_create_flow_matcher(env.c, &a) == NULL && errno == EOPNOTSUPP);
	a.ft_type = MLX5DV_FLOW_TABLE_TYPE_RDMA_RX;
	errno = 0;
	CHECK(mlx5dv_create_flow_matcher(env.c, &a) == NULL && errno == EOPNOTSUPP);
	/* A comp_mask bit not defined: EINVAL; a sniffer matcher: EOPNOTSUPP. */
	a.comp_mask = 0x2;
	errno = 0;
	CHECK(mlx5dv_create_flow_matcher(env.c, &a) == NULL && errno == EINVAL);
	a.comp_mask = 0;
	a.type = IBV_FLOW_ATTR_SNIFFER;
	errno = 0;
	CHECK(mlx5dv_create_flow_matcher(env.c, &a) == NULL && errno == EOPNOTSUPP);
	/* A misc mask (source port): not a field the steering matches. */
	a.type = IBV_FLOW_ATTR_NORMAL;
	a.match_criteria_enable = CRIT_OUTER | CRIT_MISC;
	smac(&p, PARAM_SZ, ones);
	((uint8_t *)p.buf)[64 + 4] = 0xff;
	a.match_mask = (struct mlx5dv_flow_match_parameters *)&p;
	errno = 0;
	CHECK(mlx5dv_create_flow_matcher(env.c, &a) == NULL && errno == EOPNOTSUPP);
	errno = 0;
	CHECK(mlx5dv_create_flow_matcher(NULL, &a) == NULL && errno == EINVAL);
	CHECK_ERR(mlx5dv_destroy_flow_matcher(NULL), EINVAL);
}

/* A flow to B's QP on the source MAC (a 6-byte value): B receives the frame A sends, bytes intact. */
static void test_flow_to_qp(void)
{
	struct mlx5dv_flow_action_attr to_b = {.type = MLX5DV_FLOW_ACTION_DEST_IBV_QP};
	struct mlx5dv_flow_matcher *m;
	struct ibv_qp *qa, *qb;
	struct ibv_flow *fl;
	struct param p, v;
	uint32_t len, got = 0;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	CHECK(qa != NULL && qb != NULL);
	m = matcher(0, CRIT_OUTER, smac(&p, 6, ones), false);
	CHECK(m != NULL);
	to_b.qp = qb;
	fl = flow(m, smac(&v, 6, mac_src), &to_b);
	CHECK(fl != NULL);
	len = make_frame(env.buf[0], 256, false);
	CHECK(send_one(qa, qb, len, &got) == 1);
	CHECK(got == len && memcmp(env.buf[1], env.buf[0], len) == 0);
	/* The matcher goes after its flows, the QP after the flows naming it. */
	CHECK_ERR(mlx5dv_destroy_flow_matcher(m), EBUSY);
	CHECK_ERR(ibv_destroy_qp(qb), EBUSY);
	/* Another source MAC misses: nothing arrives. */
	CHECK_OK(ibv_destroy_flow(fl));
	th_undefer(flow_cb, fl);
	CHECK(flow(m, smac(&v, 6, mac_dst), &to_b) != NULL);
	CHECK(send_one(qa, qb, len, &got) == 0);
}

/* Drop on receive (the higher priority wins), drop on transmit, and the default miss. */
static void test_drop_and_miss(void)
{
	struct mlx5dv_flow_action_attr to_b = {.type = MLX5DV_FLOW_ACTION_DEST_IBV_QP};
	struct mlx5dv_flow_action_attr drop = {.type = MLX5DV_FLOW_ACTION_DROP};
	struct mlx5dv_flow_action_attr miss = {.type = MLX5DV_FLOW_ACTION_DEFAULT_MISS};
	struct mlx5dv_flow_matcher *m0, *m1, *tx;
	struct ibv_flow *f0, *ftx;
	struct ibv_qp *qa, *qb;
	struct param p, v;
	uint32_t len, got = 0;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	CHECK(qa != NULL && qb != NULL);
	to_b.qp = qb;
	m0 = matcher(0, CRIT_OUTER, smac(&p, 6, ones), false);
	m1 = matcher(1, CRIT_OUTER, smac(&p, 6, ones), false);
	tx = matcher(0, CRIT_OUTER, smac(&p, 6, ones), true);
	CHECK(m0 != NULL && m1 != NULL && tx != NULL);
	CHECK(flow(m1, smac(&v, 6, mac_src), &to_b) != NULL);
	len = make_frame(env.buf[0], 100, false);
	f0 = flow(m0, smac(&v, 6, mac_src), &drop);
	CHECK(f0 != NULL);
	CHECK(send_one(qa, qb, len, &got) == 0);
	/* The default miss at priority 0: the lookup of the table ends there, so priority 1 is not reached. */
	CHECK_OK(ibv_destroy_flow(f0));
	th_undefer(flow_cb, f0);
	f0 = flow(m0, smac(&v, 6, mac_src), &miss);
	CHECK(f0 != NULL);
	CHECK(send_one(qa, qb, len, &got) == 0);
	CHECK_OK(ibv_destroy_flow(f0));
	th_undefer(flow_cb, f0);
	CHECK(send_one(qa, qb, len, &got) == 1);
	CHECK(got == len && memcmp(env.buf[1], env.buf[0], len) == 0);
	/* An egress drop: the frame never reaches the wire. */
	ftx = flow(tx, smac(&v, 6, mac_src), &drop);
	CHECK(ftx != NULL);
	CHECK(send_one(qa, qb, len, &got) == 0);
	/* A QP destination on transmit: EOPNOTSUPP. */
	errno = 0;
	CHECK(mlx5dv_create_flow(tx, smac(&v, 6, mac_src), 1, &to_b) == NULL && errno == EOPNOTSUPP);
}

/* Actions the steering has not: EOPNOTSUPP (and a log line); malformed calls EINVAL. */
static void test_flow_refusals(void)
{
	struct mlx5dv_flow_action_attr a[2] = {{.type = MLX5DV_FLOW_ACTION_COUNTERS_DEVX}};
	struct mlx5dv_flow_matcher *m;
	struct ibv_qp_init_attr rc = {.qp_type = IBV_QPT_RC,
				      .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *q;
	struct param p, v;

	CHECK(env_open() == 0);
	m = matcher(0, CRIT_OUTER, smac(&p, 6, ones), false);
	CHECK(m != NULL);
	smac(&v, 6, mac_src);
	a[0].obj = NULL;
	errno = 0;
	CHECK(mlx5dv_create_flow(m, (void *)&v, 1, a) == NULL && errno == EOPNOTSUPP);
	/* An RC QP receives no frames. */
	rc.send_cq = env.cq;
	rc.recv_cq = env.cq;
	q = kept(ibv_create_qp(env.pd, &rc), qp_cb);
	CHECK(q != NULL);
	a[0].type = MLX5DV_FLOW_ACTION_DEST_IBV_QP;
	a[0].qp = q;
	errno = 0;
	CHECK(mlx5dv_create_flow(m, (void *)&v, 1, a) == NULL && errno == EOPNOTSUPP);
	/* Two destinations, none, a value longer than the parameters, no matcher: EINVAL. */
	a[0].type = MLX5DV_FLOW_ACTION_DROP;
	a[1].type = MLX5DV_FLOW_ACTION_DROP;
	errno = 0;
	CHECK(mlx5dv_create_flow(m, (void *)&v, 2, a) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(mlx5dv_create_flow(m, (void *)&v, 0, a) == NULL && errno == EINVAL);
	v.match_sz = PARAM_MAX + 8;
	errno = 0;
	CHECK(mlx5dv_create_flow(m, (void *)&v, 1, a) == NULL && errno == EINVAL);
	v.match_sz = 6;
	errno = 0;
	CHECK(mlx5dv_create_flow(NULL, (void *)&v, 1, a) == NULL && errno == EINVAL);
}

/*
 * A tag action with a QP destination: the frame completes with that flow
 * tag; a tag of more than 24 bits or two tags EINVAL, a tag on an egress
 * matcher EOPNOTSUPP.
 */
static void test_flow_tag(void)
{
	struct ibv_cq_init_attr_ex ca = {.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_FLOW_TAG};
	struct mlx5dv_flow_action_attr a[3];
	struct ibv_poll_cq_attr pa = {0};
	struct mlx5dv_flow_matcher *m, *tx;
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qa, *qb;
	struct ibv_flow *f;
	struct param p, v;
	struct ibv_wc wc;
	uint32_t len;

	CHECK(env_open() == 0);
	cqx = kept(ibv_create_cq_ex(env.c, &ca), cqx_cb);
	CHECK(cqx != NULL);
	qa = raw_qp();
	qb = raw_qp_on(ibv_cq_ex_to_cq(cqx));
	CHECK(qa != NULL && qb != NULL);
	m = matcher(0, CRIT_OUTER, smac(&p, 6, ones), false);
	tx = matcher(0, CRIT_OUTER, smac(&p, 6, ones), true);
	CHECK(m != NULL && tx != NULL);
	a[0] = (struct mlx5dv_flow_action_attr){.type = MLX5DV_FLOW_ACTION_TAG, .tag_value = 0x5a5a5a};
	a[1] = (struct mlx5dv_flow_action_attr){.type = MLX5DV_FLOW_ACTION_DEST_IBV_QP, .qp = qb};
	a[2] = (struct mlx5dv_flow_action_attr){.type = MLX5DV_FLOW_ACTION_TAG, .tag_value = 1};
	f = kept(mlx5dv_create_flow(m, smac(&v, 6, mac_src), 2, a), flow_cb);
	CHECK(f != NULL);
	len = make_frame(env.buf[0], 90, false);
	CHECK_OK(post_recv(qb, 1, 0xb1));
	CHECK_OK(post_frame(qa, 0, len, 0xa1));
	CHECK(ibv_poll_cq(env.cq, 1, &wc) == 1 && wc.wr_id == 0xa1 && wc.status == IBV_WC_SUCCESS);
	CHECK_OK(ibv_start_poll(cqx, &pa));
	CHECK(cqx->wr_id == 0xb1 && cqx->status == IBV_WC_SUCCESS);
	CHECK(ibv_wc_read_byte_len(cqx) == len && ibv_wc_read_qp_num(cqx) == qb->qp_num);
	CHECK(ibv_wc_read_flow_tag(cqx) == 0x5a5a5a);
	ibv_end_poll(cqx);
	CHECK(memcmp(env.buf[1], env.buf[0], len) == 0);
	errno = 0;
	CHECK(mlx5dv_create_flow(m, smac(&v, 6, mac_dst), 3, a) == NULL && errno == EINVAL); /* two tags */
	a[0].tag_value = 1u << 24;
	errno = 0;
	CHECK(mlx5dv_create_flow(m, smac(&v, 6, mac_dst), 2, a) == NULL && errno == EINVAL);
	a[0].tag_value = 3;
	a[1].type = MLX5DV_FLOW_ACTION_DROP;
	errno = 0;
	CHECK(mlx5dv_create_flow(tx, smac(&v, 6, mac_dst), 2, a) == NULL && errno == EOPNOTSUPP);
}

int main(void)
{
	unsetenv("SOFTDPU_MACHINE");
	unsetenv("SOFTDPU_TOPOLOGY");
	unsetenv("SOFTDPU_SIDE");
	RUN(test_matchers);
	RUN(test_flow_to_qp);
	RUN(test_drop_and_miss);
	RUN(test_flow_refusals);
	RUN(test_flow_tag);
	return th_summary("test_verbs_dv_flow");
}
