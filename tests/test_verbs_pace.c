/*
 * Packet pacing and schedule elements: mlx5dv_pp_alloc(3),
 * mlx5dv_sched_node_create(3) and its family, mlx5dv_modify_qp_sched_elem(3),
 * ibv_modify_qp_rate_limit(3) and ibv_modify_qp's IBV_QP_RATE_LIMIT on a raw
 * packet QP, against the device underneath (linked statically, so the test
 * reaches the libmlx5 entries through the device's table, which the
 * mlx5dv_* functions call, and sees the engine's token accounting).
 *
 * The caps are a ConnectX-6 Dx's (1 kbit/s .. 100 Gbit/s on raw packet QPs;
 * the QoS page with packet pacing and NIC scheduling). Bad input gets the
 * documented errno. The rate is checked as a count, on a virtual clock the
 * test moves itself: a send starts only while its buckets hold a token and
 * takes its bytes from them, so with a bucket shallower than one message
 * each move of the clock lets exactly one more go; none is dropped, every
 * byte arrives, and the bytes the bucket accounted are the bytes sent.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <infiniband/mlx5_user_ioctl_verbs.h>

#include "harness.h"
#include "hw_pace.h"
#include "hw_qp.h"
#include "vb_int.h"
#include "verbs_fixture.h"
#include "verbs_qp_fixture.h"

#define MSG 2000u
#define NMSG 4
#define SECOND 1000000000ull

static uint8_t sbuf[NMSG * MSG], rbuf[NMSG * MSG];

static const struct vb_dv_pace_ops *ops(struct ibv_context *c)
{
	return vb_ctx_checked(c)->dev->dv->pace;
}

static void clock_real_cb(void *arg)
{
	(void)arg;
	hw_pace_clock_virtual(false);
}

static void node_destroy_cb(void *n)
{
	(void)vb_sched_node_destroy(n);
}

static void leaf_destroy_cb(void *l)
{
	(void)vb_sched_leaf_destroy(l);
}

static uint32_t be32_at(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

/* ibv_query_device_ex(3)'s packet_pacing_caps and the QoS page of QUERY_HCA_CAP, as a ConnectX-6 Dx. */
static void test_caps(void)
{
	static uint8_t page[0x1000];
	struct ibv_context *c = vf_open();
	struct ibv_device_attr_ex ax;

	CHECK(c != NULL);
	memset(&ax, 0, sizeof(ax));
	CHECK_OK(ibv_query_device_ex(c, NULL, &ax));
	CHECK(ax.packet_pacing_caps.qp_rate_limit_min == 1);
	CHECK(ax.packet_pacing_caps.qp_rate_limit_max == 100000000);
	CHECK(ax.packet_pacing_caps.supported_qpts == 1u << IBV_QPT_RAW_PACKET);
	memset(page, 0, sizeof(page));
	CHECK_OK(vb_devx_cap_page(c, 0, page));
	CHECK(page[539 / 8] & (0x80 >> (539 % 8))); /* cmd_hca_cap.qos */
	CHECK(page[290 / 8] & (0x80 >> (290 % 8))); /* qpc_extension */
	memset(page, 0, sizeof(page));
	CHECK_OK(vb_devx_cap_page(c, 0xc, page));
	CHECK(page[0] == 0x86);			/* packet_pacing, burst bound, typical size */
	CHECK(page[1] == 0xf0);			/* nic_sq_scheduling, nic_bw_share, nic_rate_limit, pp uid */
	CHECK(page[4] == 0x40);			/* nic_qp_scheduling */
	CHECK(be32_at(page + 8) == 100000000);	/* packet_pacing_max_rate */
	CHECK(be32_at(page + 12) == 1);		/* packet_pacing_min_rate */
	CHECK(be32_at(page + 16) == 128);	/* packet_pacing_rate_table_size */
	CHECK(be32_at(page + 28) == 100);	/* max_tsar_bw_share */
	CHECK(be32_at(page + 32) == 0x00110001); /* nic_element_type TSAR | QUEUE_GROUP, nic_tsar_type DWRR */
}

static struct mlx5dv_pp *pp_rate(struct ibv_context *c, uint32_t kbps, size_t sz, uint32_t flags)
{
	uint8_t ctx[64] = { 0 };
	uint32_t be = htobe32(kbps);

	memcpy(ctx, &be, sizeof(be));
	return ops(c)->pp_alloc(c, sz, ctx, flags);
}

/* mlx5dv_pp_alloc(3): shared and dedicated indexes, the rate's range, the context's size, flags, a double free. */
static void test_pp_entries(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_pp *a, *b, *d, *e;

	CHECK(c != NULL);
	a = pp_rate(c, 100, 4, 0);
	CHECK(a != NULL && a->index >= 1 && a->index <= 127);
	b = pp_rate(c, 100, 4, 0);
	CHECK(b != NULL && b->index == a->index); /* the same context shares its entry */
	d = pp_rate(c, 100, 4, MLX5_IB_UAPI_PP_ALLOC_FLAGS_DEDICATED_INDEX);
	CHECK(d != NULL && d->index != a->index);
	errno = 0;
	CHECK(pp_rate(c, 0, 4, 0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(pp_rate(c, 100000001, 4, 0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(pp_rate(c, 100, 3, 0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(pp_rate(c, 100, 49, 0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(pp_rate(c, 100, 4, 2) == NULL && errno == EOPNOTSUPP);
	/* Freed twice: the second free does nothing, b still holds the entry. */
	ops(c)->pp_free(a);
	ops(c)->pp_free(a);
	e = pp_rate(c, 100, 48, 0);
	CHECK(e != NULL && e->index == b->index);
	ops(c)->pp_free(e);
	ops(c)->pp_free(b);
	ops(c)->pp_free(d);
}

/* mlx5dv_sched_node_create(3) and the rest: attribute checks, EBUSY under children, EINVAL once destroyed. */
static void test_sched_errors(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_sched_attr a = { 0 };
	struct mlx5dv_sched_node *root, *n1;
	struct mlx5dv_sched_leaf *leaf;

	CHECK(c != NULL);
	root = ops(c)->node_create(c, &a);
	CHECK(root != NULL);
	a.flags = MLX5DV_SCHED_ELEM_ATTR_FLAGS_BW_SHARE; /* a root takes no values */
	errno = 0;
	CHECK(ops(c)->node_create(c, &a) == NULL && errno == EINVAL);
	a.flags = 0;
	errno = 0;
	CHECK(ops(c)->leaf_create(c, &a) == NULL && errno == EINVAL); /* a leaf has a parent */
	a.parent = root;
	a.comp_mask = 1;
	errno = 0;
	CHECK(ops(c)->node_create(c, &a) == NULL && errno == EINVAL);
	a.comp_mask = 0;
	a.flags = 4;
	errno = 0;
	CHECK(ops(c)->node_create(c, &a) == NULL && errno == EINVAL);
	a.flags = MLX5DV_SCHED_ELEM_ATTR_FLAGS_BW_SHARE;
	a.bw_share = 101;
	errno = 0;
	CHECK(ops(c)->node_create(c, &a) == NULL && errno == EINVAL);
	a.flags = MLX5DV_SCHED_ELEM_ATTR_FLAGS_MAX_AVG_BW;
	a.max_avg_bw = 100001;
	errno = 0;
	CHECK(ops(c)->leaf_create(c, &a) == NULL && errno == EINVAL);
	a.flags = MLX5DV_SCHED_ELEM_ATTR_FLAGS_MAX_AVG_BW | MLX5DV_SCHED_ELEM_ATTR_FLAGS_BW_SHARE;
	a.max_avg_bw = 10;
	a.bw_share = 2;
	n1 = ops(c)->node_create(c, &a);
	CHECK(n1 != NULL);
	a.parent = n1;
	leaf = ops(c)->leaf_create(c, &a);
	CHECK(leaf != NULL);
	a.parent = (struct mlx5dv_sched_node *)leaf; /* a leaf is no parent */
	errno = 0;
	CHECK(ops(c)->leaf_create(c, &a) == NULL && errno == EINVAL);
	a.parent = n1;
	a.max_avg_bw = 3;
	CHECK_OK(ops(c)->leaf_modify(leaf, &a));
	CHECK_ERR(ops(c)->node_destroy(root), EBUSY);
	CHECK_ERR(ops(c)->node_destroy(n1), EBUSY);
	CHECK_OK(ops(c)->leaf_destroy(leaf));
	CHECK_ERR(ops(c)->leaf_destroy(leaf), EINVAL);
	CHECK_ERR(ops(c)->leaf_modify(leaf, &a), EINVAL);
	CHECK_OK(ops(c)->node_destroy(n1));
	CHECK_OK(ops(c)->node_destroy(root));
	CHECK_ERR(ops(c)->node_destroy(root), EINVAL);
}

/* mlx5dv_modify_qp_sched_elem(3): the QP's type and state decide. */
static void test_sched_qp_states(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_sched_attr a = { 0 };
	struct mlx5dv_sched_node *root;
	struct mlx5dv_sched_leaf *leaf;
	struct ibv_qp *rc, *ud;
	struct ibv_cq *cq;
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 16);
	CHECK(pd != NULL && cq != NULL);
	root = ops(c)->node_create(c, &a);
	CHECK(root != NULL);
	th_defer(node_destroy_cb, root);
	a.parent = root;
	leaf = ops(c)->leaf_create(c, &a);
	CHECK(leaf != NULL);
	th_defer(leaf_destroy_cb, leaf);
	rc = vq_qp(pd, IBV_QPT_RC, cq, cq, 4);
	ud = vq_qp(pd, IBV_QPT_UD, cq, cq, 4);
	CHECK(rc != NULL && ud != NULL);
	CHECK_ERR(ops(c)->modify_qp_sched_elem(rc, leaf, leaf), EOPNOTSUPP); /* RESET */
	CHECK_ERR(ops(c)->modify_qp_sched_elem(ud, leaf, leaf), EINVAL);    /* UD has no responder element */
	CHECK_OK(vq_to_init(rc));
	CHECK_OK(ops(c)->modify_qp_sched_elem(rc, leaf, leaf));
	CHECK_OK(ops(c)->modify_qp_sched_elem(rc, NULL, NULL));
}

/* ibv_modify_qp_rate_limit(3) and IBV_QP_RATE_LIMIT: raw packet QPs in RTS, rates within the caps. */
static void test_rate_limit_errors(void)
{
	struct ibv_context *c = vf_open();
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RAW_PACKET,
				       .cap = { .max_send_wr = 4, .max_recv_wr = 4, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = 1000 };
	struct ibv_qp *raw, *rc;
	struct ibv_pd *pd;

	CHECK(c != NULL);
	pd = vf_pd(c);
	ia.send_cq = ia.recv_cq = vq_cq(c, 16);
	CHECK(pd != NULL && ia.send_cq != NULL);
	raw = ibv_create_qp(pd, &ia);
	CHECK(raw != NULL);
	th_defer(vq_destroy_qp_cb, raw);
	CHECK_OK(ibv_modify_qp(raw, &m, IBV_QP_STATE | IBV_QP_PORT));
	CHECK_ERR(ibv_modify_qp_rate_limit(raw, &rl), EINVAL); /* INIT */
	m.qp_state = IBV_QPS_RTR;
	CHECK_OK(ibv_modify_qp(raw, &m, IBV_QP_STATE));
	m.qp_state = IBV_QPS_RTS;
	m.rate_limit = 100000001;
	CHECK_ERR(ibv_modify_qp(raw, &m, IBV_QP_STATE | IBV_QP_RATE_LIMIT), EINVAL);
	CHECK(raw->state == IBV_QPS_RTR);
	m.rate_limit = 1000;
	CHECK_OK(ibv_modify_qp(raw, &m, IBV_QP_STATE | IBV_QP_RATE_LIMIT));
	CHECK(raw->state == IBV_QPS_RTS);
	rl.comp_mask = 1;
	CHECK_ERR(ibv_modify_qp_rate_limit(raw, &rl), EINVAL);
	rl.comp_mask = 0;
	rl.rate_limit = 0;
	rl.max_burst_sz = 1500; /* a burst needs a rate */
	CHECK_ERR(ibv_modify_qp_rate_limit(raw, &rl), EINVAL);
	rl.rate_limit = 100000001;
	CHECK_ERR(ibv_modify_qp_rate_limit(raw, &rl), EINVAL);
	rl.rate_limit = 100000000;
	CHECK_OK(ibv_modify_qp_rate_limit(raw, &rl));
	rl.rate_limit = 0;
	rl.max_burst_sz = 0;
	CHECK_OK(ibv_modify_qp_rate_limit(raw, &rl)); /* no limit again */
	rc = vq_qp(pd, IBV_QPT_RC, ia.send_cq, ia.send_cq, 4);
	CHECK(rc != NULL);
	CHECK_OK(vq_up(rc, rc->qp_num, 0, 0));
	rl.rate_limit = 1000;
	CHECK_ERR(ibv_modify_qp_rate_limit(rc, &rl), EINVAL);
	CHECK_ERR(ibv_modify_qp(rc, &m, IBV_QP_RATE_LIMIT), EINVAL);
}

static void post_sends(struct ibv_qp *qp, struct ibv_mr *mr, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct ibv_sge sg = { .addr = (uintptr_t)sbuf + i * MSG, .length = MSG, .lkey = mr->lkey };
		struct ibv_send_wr wr = { .wr_id = i, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		CHECK_OK(ibv_post_send(qp, &wr, &bad));
	}
}

static void post_recvs(struct ibv_qp *qp, struct ibv_mr *mr, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct ibv_sge sg = { .addr = (uintptr_t)rbuf + i * MSG, .length = MSG, .lkey = mr->lkey };
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sg, .num_sge = 1 }, *bad;

		CHECK_OK(ibv_post_recv(qp, &wr, &bad));
	}
}

static void fill_sbuf(void)
{
	for (uint32_t i = 0; i < sizeof(sbuf); i++)
		sbuf[i] = (uint8_t)(i * 31 + 7);
	memset(rbuf, 0, sizeof(rbuf));
}

/*
 * An RC QP attached to a leaf of max_avg_bw 1 Mbit/s (125000 bytes/s, a
 * bucket of 10 ms: 1250 bytes) under a node of 2 Mbit/s: the first 2000-byte
 * SEND goes at once and leaves the leaf 750 bytes in debt, the others wait;
 * each move of the clock (by far more than the refill takes) lets exactly
 * one more go. The leaf's accounting: every byte sent, three waits.
 */
static void test_sched_paces_rc(void)
{
	struct mlx5dv_sched_attr a = { 0 };
	struct mlx5dv_sched_node *root, *node;
	struct mlx5dv_sched_leaf *leaf;
	struct hw_pace_stats st;
	struct ibv_wc wc;
	struct vq_pair p;
	struct vq_pair_spec s = { .buf = { sbuf, rbuf }, .len = sizeof(sbuf),
				  .access = { VQ_ACCESS_ALL, VQ_ACCESS_ALL }, .type = IBV_QPT_RC };

	hw_pace_clock_virtual(true);
	th_defer(clock_real_cb, NULL);
	vq_pair_open(&p, &s);
	vq_pair_up(&p);
	fill_sbuf();
	root = ops(p.c)->node_create(p.c, &a);
	CHECK(root != NULL);
	th_defer(node_destroy_cb, root);
	a.parent = root;
	a.flags = MLX5DV_SCHED_ELEM_ATTR_FLAGS_MAX_AVG_BW;
	a.max_avg_bw = 2;
	node = ops(p.c)->node_create(p.c, &a);
	CHECK(node != NULL);
	th_defer(node_destroy_cb, node);
	a.parent = node;
	a.max_avg_bw = 1;
	leaf = ops(p.c)->leaf_create(p.c, &a);
	CHECK(leaf != NULL);
	th_defer(leaf_destroy_cb, leaf);
	CHECK_OK(ops(p.c)->modify_qp_sched_elem(p.qp[0], leaf, NULL));
	post_recvs(p.qp[1], p.mr[1], NMSG);
	post_sends(p.qp[0], p.mr[0], NMSG);
	/* The doorbell ran what the bucket allowed before returning. */
	CHECK(ibv_poll_cq(p.cq[0], 1, &wc) == 1 && wc.wr_id == 0 && wc.status == IBV_WC_SUCCESS);
	CHECK(ibv_poll_cq(p.cq[0], 1, &wc) == 0);
	vb_pace_qp_stats(p.qp[0], &st);
	CHECK(st.bytes == MSG && st.wqes == 1 && st.deferred == 0 && st.tokens == 1250 - (int64_t)MSG);
	for (uint64_t i = 1; i < NMSG; i++) {
		hw_pace_clock_advance(SECOND);
		CHECK(vq_poll1(p.cq[0], &wc) == 1);
		CHECK(wc.wr_id == i && wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND);
		CHECK(ibv_poll_cq(p.cq[0], 1, &wc) == 0); /* the next waits for the next move */
	}
	vb_pace_qp_stats(p.qp[0], &st);
	CHECK(st.bytes == NMSG * MSG && st.wqes == NMSG && st.deferred == NMSG - 1);
	for (uint64_t i = 0; i < NMSG; i++) {
		CHECK(vq_poll1(p.cq[1], &wc) == 1);
		CHECK(wc.wr_id == i && wc.status == IBV_WC_SUCCESS && wc.byte_len == MSG);
	}
	CHECK(memcmp(sbuf, rbuf, sizeof(sbuf)) == 0);
	/* Detached while a SEND waits: it goes at once, unpaced, and the bucket counts it no more. */
	hw_pace_clock_advance(SECOND);
	post_recvs(p.qp[1], p.mr[1], 2);
	post_sends(p.qp[0], p.mr[0], 2);
	CHECK(ibv_poll_cq(p.cq[0], 1, &wc) == 1 && wc.wr_id == 0 && wc.status == IBV_WC_SUCCESS);
	CHECK(ibv_poll_cq(p.cq[0], 1, &wc) == 0);
	CHECK_OK(ops(p.c)->modify_qp_sched_elem(p.qp[0], NULL, NULL));
	CHECK(vq_poll1(p.cq[0], &wc) == 1 && wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS);
	CHECK(hw_qp_deadline(vb_qp_of(p.qp[0])->hw) == HW_QP_NO_DEADLINE); /* nothing left to kick it for */
	vb_pace_qp_stats(p.qp[0], &st);
	CHECK(st.bytes == 0 && st.wqes == 0);
	for (uint64_t i = 0; i < 2; i++)
		CHECK(vq_poll1(p.cq[1], &wc) == 1 && wc.wr_id == i && wc.status == IBV_WC_SUCCESS);
}

/*
 * A node's max_avg_bw caps what passes through a leaf of no limit under it:
 * a node of 1 Mbit/s (1250 bytes deep) lets one 2000-byte SEND go and holds
 * the next. The leaf, the node and the root destroyed meanwhile (the leaf
 * first, then nothing is under the node) leave the QP paced as before: the
 * held SEND goes at the next move of the clock, and its bytes are counted.
 */
static void test_sched_node_caps_leaf(void)
{
	struct mlx5dv_sched_attr a = { 0 };
	struct mlx5dv_sched_node *root, *node;
	struct mlx5dv_sched_leaf *leaf;
	struct hw_pace_stats st;
	struct ibv_wc wc;
	struct vq_pair p;
	struct vq_pair_spec s = { .buf = { sbuf, rbuf }, .len = sizeof(sbuf),
				  .access = { VQ_ACCESS_ALL, VQ_ACCESS_ALL }, .type = IBV_QPT_RC };

	hw_pace_clock_virtual(true);
	th_defer(clock_real_cb, NULL);
	vq_pair_open(&p, &s);
	vq_pair_up(&p);
	fill_sbuf();
	root = ops(p.c)->node_create(p.c, &a);
	CHECK(root != NULL);
	a.parent = root;
	a.flags = MLX5DV_SCHED_ELEM_ATTR_FLAGS_MAX_AVG_BW;
	a.max_avg_bw = 1;
	node = ops(p.c)->node_create(p.c, &a);
	CHECK(node != NULL);
	a.parent = node;
	a.flags = 0;
	leaf = ops(p.c)->leaf_create(p.c, &a);
	CHECK(leaf != NULL);
	CHECK_OK(ops(p.c)->modify_qp_sched_elem(p.qp[0], leaf, NULL));
	post_recvs(p.qp[1], p.mr[1], 2);
	post_sends(p.qp[0], p.mr[0], 2);
	CHECK(ibv_poll_cq(p.cq[0], 1, &wc) == 1 && wc.wr_id == 0 && wc.status == IBV_WC_SUCCESS);
	CHECK(ibv_poll_cq(p.cq[0], 1, &wc) == 0);
	CHECK_ERR(ops(p.c)->node_destroy(node), EBUSY);
	CHECK_OK(ops(p.c)->leaf_destroy(leaf));
	CHECK_OK(ops(p.c)->node_destroy(node));
	CHECK_OK(ops(p.c)->node_destroy(root));
	CHECK(ibv_poll_cq(p.cq[0], 1, &wc) == 0);
	hw_pace_clock_advance(SECOND);
	CHECK(vq_poll1(p.cq[0], &wc) == 1 && wc.wr_id == 1 && wc.status == IBV_WC_SUCCESS);
	vb_pace_qp_stats(p.qp[0], &st);
	CHECK(st.bytes == 2 * MSG && st.wqes == 2 && st.deferred == 1);
	for (uint64_t i = 0; i < 2; i++) {
		CHECK(vq_poll1(p.cq[1], &wc) == 1);
		CHECK(wc.wr_id == i && wc.status == IBV_WC_SUCCESS && wc.byte_len == MSG);
	}
	CHECK(memcmp(sbuf, rbuf, 2 * MSG) == 0);
}

/* A flow of one ETH spec (destination MAC) to qp. */
static struct ibv_flow *flow_to(struct ibv_qp *qp, const uint8_t *dmac)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} f; /* no padding: both are multiples of 8 bytes */

	memset(&f, 0, sizeof(f));
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	f.attr.size = sizeof(f);
	f.attr.num_of_specs = 1;
	f.attr.port = 1;
	f.eth.type = IBV_FLOW_SPEC_ETH;
	f.eth.size = sizeof(f.eth);
	memcpy(f.eth.val.dst_mac, dmac, 6);
	memset(f.eth.mask.dst_mac, 0xff, 6);
	return ibv_create_flow(qp, &f.attr);
}

static void flow_destroy_cb(void *f)
{
	(void)ibv_destroy_flow(f);
}

static struct ibv_qp *raw_rts(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = { .qp_type = IBV_QPT_RAW_PACKET, .send_cq = cq, .recv_cq = cq,
				       .cap = { .max_send_wr = 8, .max_recv_wr = 8, .max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (qp == NULL)
		return NULL;
	th_defer(vq_destroy_qp_cb, qp);
	if (ibv_modify_qp(qp, &m, IBV_QP_STATE | IBV_QP_PORT) != 0)
		return NULL;
	m.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &m, IBV_QP_STATE) != 0)
		return NULL;
	m.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &m, IBV_QP_STATE) == 0 ? qp : NULL;
}

/*
 * A raw packet QP at 1000 kbit/s (125000 bytes/s) with a burst of 1000
 * bytes: of three 600-byte frames two go at once (1000 tokens, then 400),
 * the third waits for the clock; all three reach the receiving QP intact.
 */
static void test_rate_paces_raw(void)
{
	static const uint8_t dmac[6] = { 0x02, 0x00, 0x00, 0x00, 0x9a, 0xce };
	struct ibv_qp_rate_limit_attr rl = { .rate_limit = 1000, .max_burst_sz = 1000 };
	struct ibv_context *c = vf_open();
	const uint32_t len = 600;
	struct hw_pace_stats st;
	struct ibv_qp *qa, *qb;
	struct ibv_wc wc[8];
	struct ibv_flow *fl;
	struct ibv_mr *mr;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	int got = 0;

	hw_pace_clock_virtual(true);
	th_defer(clock_real_cb, NULL);
	CHECK(c != NULL);
	pd = vf_pd(c);
	cq = vq_cq(c, 32);
	CHECK(pd != NULL && cq != NULL);
	fill_sbuf();
	for (uint32_t i = 0; i < 3; i++)
		memcpy(sbuf + i * MSG, dmac, 6); /* each frame to dmac, the rest of it its own pattern */
	mr = vq_mr(pd, sbuf, sizeof(sbuf), IBV_ACCESS_LOCAL_WRITE);
	CHECK(mr != NULL);
	{
		struct ibv_mr *rmr = vq_mr(pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);

		CHECK(rmr != NULL);
		qa = raw_rts(pd, cq);
		qb = raw_rts(pd, cq);
		CHECK(qa != NULL && qb != NULL);
		fl = flow_to(qb, dmac);
		CHECK(fl != NULL);
		th_defer(flow_destroy_cb, fl);
		post_recvs(qb, rmr, 3);
	}
	CHECK_OK(ibv_modify_qp_rate_limit(qa, &rl));
	for (uint32_t i = 0; i < 3; i++) {
		struct ibv_sge sg = { .addr = (uintptr_t)sbuf + i * MSG, .length = len, .lkey = mr->lkey };
		struct ibv_send_wr wr = { .wr_id = 0xa0 + i, .sg_list = &sg, .num_sge = 1, .opcode = IBV_WR_SEND,
					  .send_flags = IBV_SEND_SIGNALED }, *bad;

		CHECK_OK(ibv_post_send(qa, &wr, &bad));
	}
	/* Two frames sent, two received; the third waits. */
	CHECK(ibv_poll_cq(cq, 8, wc) == 4);
	vb_pace_qp_stats(qa, &st);
	CHECK(st.bytes == 2 * len && st.wqes == 2 && st.deferred == 0 && st.tokens == 1000 - 2 * (int64_t)len);
	hw_pace_clock_advance(SECOND);
	while (got < 2 && vq_poll1(cq, &wc[got]) == 1)
		got++;
	CHECK(got == 2);
	CHECK(ibv_poll_cq(cq, 8, wc) == 0);
	vb_pace_qp_stats(qa, &st);
	CHECK(st.bytes == 3 * len && st.wqes == 3 && st.deferred == 1);
	for (uint32_t i = 0; i < 3; i++)
		CHECK(memcmp(rbuf + i * MSG, sbuf + i * MSG, len) == 0);
}

int main(void)
{
	RUN(test_caps);
	RUN(test_pp_entries);
	RUN(test_sched_errors);
	RUN(test_sched_qp_states);
	RUN(test_rate_limit_errors);
	RUN(test_sched_paces_rc);
	RUN(test_sched_node_caps_leaf);
	RUN(test_rate_paces_raw);
	return th_summary("test_verbs_pace");
}
