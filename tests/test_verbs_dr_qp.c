/*
 * mlx5dv_dr rules that steer frames to raw packet QPs and edit them, as
 * mlx5dv_dr_flow(3) describes the actions: a dest_ibv_qp rule delivers a
 * matching frame into the QP's receive queue; push_vlan (NIC transmit)
 * inserts the 802.1Q header it was given after the MACs, pop_vlan (NIC
 * receive) takes it out; default_miss ends the domain's lookup as a miss,
 * so a transmit goes to the wire and a receive to what comes after the
 * domain (here a verbs flow); tag gives the receive completion its flow tag
 * (ibv_wc_read_flow_tag, the CQE's flow_tag); dest_array copies the frame
 * to each of its destinations. Frames are compared byte for byte.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "raw_fixture.h"

#define TAG 0x123

#define CRIT_OUTER 0x1
#define SMAC_OFF 0 /* fte_match_set_lyr_2_4: smac_47_16, smac_15_0 */

struct match {
	size_t match_sz;
	uint64_t buf[8];
};

static void domain_cb(void *a)
{
	mlx5dv_dr_domain_destroy(a);
}

static void table_cb(void *a)
{
	mlx5dv_dr_table_destroy(a);
}

static void matcher_cb(void *a)
{
	mlx5dv_dr_matcher_destroy(a);
}

static void rule_cb(void *a)
{
	mlx5dv_dr_rule_destroy(a);
}

static void action_cb(void *a)
{
	mlx5dv_dr_action_destroy(a);
}

/* A mask or value over the outer source MAC. */
static struct mlx5dv_flow_match_parameters *smac(struct match *m, const uint8_t mac[6])
{
	memset(m, 0, sizeof(*m));
	memcpy((uint8_t *)m->buf + SMAC_OFF, mac, 6);
	m->match_sz = 64;
	return (struct mlx5dv_flow_match_parameters *)m;
}

static const uint8_t all_ones[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* A table of domain d at level, with a source-MAC matcher of priority prio. */
static struct mlx5dv_dr_matcher *smac_matcher(struct mlx5dv_dr_domain *d, uint32_t level, uint16_t prio)
{
	struct mlx5dv_dr_table *t = kept(mlx5dv_dr_table_create(d, level), table_cb);
	struct match m;

	if (t == NULL)
		return NULL;
	return kept(mlx5dv_dr_matcher_create(t, prio, CRIT_OUTER, smac(&m, all_ones)), matcher_cb);
}

/* A rule on mac_src with n actions. */
static struct mlx5dv_dr_rule *smac_rule(struct mlx5dv_dr_matcher *m, size_t n, struct mlx5dv_dr_action **acts)
{
	struct match v;

	return kept(mlx5dv_dr_rule_create(m, smac(&v, mac_src), n, acts), rule_cb);
}

static struct mlx5dv_dr_domain *domain(enum mlx5dv_dr_domain_type t)
{
	return kept(mlx5dv_dr_domain_create(env.c, t), domain_cb);
}

static struct mlx5dv_dr_action *action(struct mlx5dv_dr_action *a)
{
	return kept(a, action_cb);
}

/* A NIC receive rule whose action is a raw QP delivers the matching frame into that QP, bytes intact. */
static void test_dest_qp(void)
{
	struct mlx5dv_dr_action *to_b;
	struct mlx5dv_dr_matcher *m;
	struct ibv_qp *qa, *qb;
	uint32_t len, got = 0;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	CHECK(qa != NULL && qb != NULL);
	to_b = action(mlx5dv_dr_action_create_dest_ibv_qp(qb));
	CHECK(to_b != NULL);
	m = smac_matcher(domain(MLX5DV_DR_DOMAIN_TYPE_NIC_RX), 1, 0);
	CHECK(m != NULL);
	CHECK(smac_rule(m, 1, &to_b) != NULL);
	len = make_frame(env.buf[0], 300, false);
	CHECK(send_one(qa, qb, len, &got) == 1);
	CHECK(got == len);
	CHECK(memcmp(env.buf[1], env.buf[0], len) == 0);
	/* The QP goes after the action naming it. */
	CHECK_ERR(ibv_destroy_qp(qb), EBUSY);
	/* Only NIC receive rules deliver to a QP. */
	{
		struct mlx5dv_dr_matcher *tx = smac_matcher(domain(MLX5DV_DR_DOMAIN_TYPE_NIC_TX), 0, 0);
		struct match v;

		CHECK(tx != NULL);
		errno = 0;
		CHECK(mlx5dv_dr_rule_create(tx, smac(&v, mac_src), 1, &to_b) == NULL);
		CHECK(errno == EOPNOTSUPP);
	}
}

/* A QP that receives no frames (RC) is no destination; NULL is EINVAL. */
static void test_dest_qp_refused(void)
{
	struct ibv_qp_init_attr a = {.send_cq = NULL, .recv_cq = NULL, .qp_type = IBV_QPT_RC,
				     .cap = {.max_send_wr = 1, .max_recv_wr = 1, .max_send_sge = 1, .max_recv_sge = 1}};
	struct ibv_qp *rc;

	CHECK(env_open() == 0);
	a.send_cq = env.cq;
	a.recv_cq = env.cq;
	rc = kept(ibv_create_qp(env.pd, &a), qp_cb);
	CHECK(rc != NULL);
	errno = 0;
	CHECK(mlx5dv_dr_action_create_dest_ibv_qp(rc) == NULL);
	CHECK(errno == EOPNOTSUPP);
	errno = 0;
	CHECK(mlx5dv_dr_action_create_dest_ibv_qp(NULL) == NULL);
	CHECK(errno == EINVAL);
}

/* push_vlan on transmit puts the given header after the MACs; pop_vlan on receive takes it out again. */
static void test_push_and_pop_vlan(void)
{
	struct mlx5dv_dr_domain *tx, *rx;
	struct mlx5dv_dr_action *push, *pop, *to_b, *acts[2];
	struct mlx5dv_dr_matcher *mtx, *mrx;
	struct mlx5dv_dr_rule *rrx;
	uint8_t expect[FRAME_MAX];
	struct ibv_qp *qa, *qb;
	uint32_t len, got = 0;
	uint32_t hdr;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	CHECK(qa != NULL && qb != NULL);
	tx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_TX);
	rx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	CHECK(tx != NULL && rx != NULL);
	memcpy(&hdr, vlan_hdr, sizeof(hdr));
	push = action(mlx5dv_dr_action_create_push_vlan(tx, hdr));
	pop = action(mlx5dv_dr_action_create_pop_vlan());
	to_b = action(mlx5dv_dr_action_create_dest_ibv_qp(qb));
	CHECK(push != NULL && pop != NULL && to_b != NULL);
	mtx = smac_matcher(tx, 1, 0);
	mrx = smac_matcher(rx, 1, 0);
	CHECK(mtx != NULL && mrx != NULL);
	/* Push alone: no terminal action, so the transmit's default, the wire. */
	CHECK(smac_rule(mtx, 1, &push) != NULL);
	rrx = smac_rule(mrx, 1, &to_b);
	CHECK(rrx != NULL);
	len = make_frame(env.buf[0], 200, false);
	make_frame(expect, len + VLAN_LEN, true);
	CHECK(send_one(qa, qb, len, &got) == 1);
	CHECK(got == len + VLAN_LEN);
	CHECK(memcmp(env.buf[1], expect, got) == 0);
	/* The receive side pops what the transmit side pushed: the frame as sent. */
	CHECK_OK(mlx5dv_dr_rule_destroy(rrx));
	th_undefer(rule_cb, rrx);
	acts[0] = pop;
	acts[1] = to_b;
	CHECK(smac_rule(mrx, 2, acts) != NULL);
	CHECK(send_one(qa, qb, len, &got) == 1);
	CHECK(got == len);
	CHECK(memcmp(env.buf[1], env.buf[0], len) == 0);
	/* Push on receive and pop on transmit are refused, as the domains cannot take them. */
	{
		struct mlx5dv_dr_action *push_rx = action(mlx5dv_dr_action_create_push_vlan(rx, hdr));
		struct match v;

		CHECK(push_rx != NULL);
		errno = 0;
		CHECK(mlx5dv_dr_rule_create(mrx, smac(&v, mac_src), 1, &push_rx) == NULL);
		CHECK(errno == EOPNOTSUPP);
		errno = 0;
		CHECK(mlx5dv_dr_rule_create(mtx, smac(&v, mac_src), 1, &pop) == NULL);
		CHECK(errno == EOPNOTSUPP);
		/* A push made for another domain: EINVAL. */
		errno = 0;
		CHECK(mlx5dv_dr_rule_create(mtx, smac(&v, mac_src), 1, &push_rx) == NULL);
		CHECK(errno == EINVAL);
	}
}

/*
 * default_miss on transmit: the frame leaves by the wire although a later
 * matcher would drop it. On receive: the domain's lookup ends and the frame
 * goes on to what follows (a verbs flow), not to the QP of a later matcher.
 */
static void test_default_miss(void)
{
	struct mlx5dv_dr_action *miss, *drop, *to_b, *to_c;
	struct mlx5dv_dr_table *ttx, *trx0, *trx1;
	struct mlx5dv_dr_domain *tx, *rx;
	struct ibv_qp *qa, *qb, *qc;
	struct ibv_flow *fl;
	struct match mk;
	uint32_t len, got = 0;
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} f;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	qc = raw_qp();
	CHECK(qa != NULL && qb != NULL && qc != NULL);
	tx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_TX);
	rx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	CHECK(tx != NULL && rx != NULL);
	miss = action(mlx5dv_dr_action_create_default_miss());
	drop = action(mlx5dv_dr_action_create_drop());
	to_b = action(mlx5dv_dr_action_create_dest_ibv_qp(qb));
	to_c = action(mlx5dv_dr_action_create_dest_ibv_qp(qc));
	CHECK(miss != NULL && drop != NULL && to_b != NULL && to_c != NULL);
	ttx = kept(mlx5dv_dr_table_create(tx, 1), table_cb);
	trx1 = kept(mlx5dv_dr_table_create(rx, 1), table_cb);
	CHECK(ttx != NULL && trx1 != NULL);
	/* Transmit: the miss (priority 1) before the drop (priority 2) of the same table. */
	{
		struct mlx5dv_dr_matcher *m1 = kept(mlx5dv_dr_matcher_create(ttx, 1, CRIT_OUTER, smac(&mk, all_ones)),
						    matcher_cb);
		struct mlx5dv_dr_matcher *m2 = kept(mlx5dv_dr_matcher_create(ttx, 2, CRIT_OUTER, smac(&mk, all_ones)),
						    matcher_cb);
		struct mlx5dv_dr_matcher *r1 = kept(mlx5dv_dr_matcher_create(trx1, 0, CRIT_OUTER, smac(&mk, all_ones)),
						    matcher_cb);

		CHECK(m1 != NULL && m2 != NULL && r1 != NULL);
		CHECK(smac_rule(m2, 1, &drop) != NULL);
		CHECK(smac_rule(m1, 1, &miss) != NULL);
		CHECK(smac_rule(r1, 1, &to_b) != NULL);
	}
	len = make_frame(env.buf[0], 128, false);
	CHECK(send_one(qa, qb, len, &got) == 1);
	CHECK(got == len && memcmp(env.buf[1], env.buf[0], len) == 0);
	/*
	 * Receive: a level-0 table whose rule is the miss ends the domain's
	 * lookup before its level-1 rule to B; the verbs flow to C takes it.
	 */
	trx0 = kept(mlx5dv_dr_table_create(rx, 0), table_cb);
	CHECK(trx0 != NULL);
	{
		struct mlx5dv_dr_matcher *r0 = kept(mlx5dv_dr_matcher_create(trx0, 0, CRIT_OUTER, smac(&mk, all_ones)),
						    matcher_cb);

		CHECK(r0 != NULL);
		CHECK(smac_rule(r0, 1, &miss) != NULL);
	}
	memset(&f, 0, sizeof(f));
	f.attr.type = IBV_FLOW_ATTR_NORMAL;
	f.attr.size = sizeof(f);
	f.attr.num_of_specs = 1;
	f.attr.port = 1;
	f.eth.type = IBV_FLOW_SPEC_ETH;
	f.eth.size = sizeof(f.eth);
	memcpy(f.eth.val.dst_mac, mac_dst, 6);
	memset(f.eth.mask.dst_mac, 0xff, 6);
	fl = kept(ibv_create_flow(qc, &f.attr), flow_cb);
	CHECK(fl != NULL);
	CHECK(send_one(qa, qc, len, &got) == 1);
	CHECK(got == len && memcmp(env.buf[1], env.buf[0], len) == 0);
	/* Without the verbs flow, nothing after the domain takes it: no QP receives. */
	CHECK_OK(ibv_destroy_flow(fl));
	th_undefer(flow_cb, fl);
	CHECK(send_one(qa, qb, len, &got) == 0);
}

/*
 * Sends buf[0] from qa to qb (receiving into cqx's CQ, whose ring is dv);
 * checks the CQE's flow_tag as mlx5dv reads it at ring index idx, then the
 * completion through the extended poll, its flow tag and the bytes.
 */
static void tagged_one(struct ibv_qp *qa, struct ibv_qp *qb, struct ibv_cq_ex *cqx, const struct mlx5dv_cq *dv,
		       uint32_t idx, uint32_t len, uint32_t tag)
{
	struct ibv_poll_cq_attr pa = {0};
	/* A 128-byte entry holds the 64-byte CQE in its second half, as mlx5 reads it. */
	struct mlx5_cqe64 *cqe = (void *)((uint8_t *)dv->buf + (size_t)idx * dv->cqe_size + (dv->cqe_size - 64));
	struct ibv_wc wc;

	CHECK_OK(post_recv(qb, 1, 0xb1));
	CHECK_OK(post_frame(qa, 0, len, 0xa1));
	CHECK(ibv_poll_cq(env.cq, 1, &wc) == 1 && wc.wr_id == 0xa1 && wc.status == IBV_WC_SUCCESS);
	CHECK(mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_RESP_SEND);
	CHECK((be32toh(cqe->sop_drop_qpn) & 0xffffff) == (tag != 0 ? tag : qb->qp_num));
	CHECK_OK(ibv_start_poll(cqx, &pa));
	CHECK(cqx->wr_id == 0xb1 && cqx->status == IBV_WC_SUCCESS);
	CHECK(ibv_wc_read_opcode(cqx) == IBV_WC_RECV);
	CHECK(ibv_wc_read_qp_num(cqx) == qb->qp_num);
	CHECK(ibv_wc_read_byte_len(cqx) == len);
	CHECK(ibv_wc_read_flow_tag(cqx) == tag);
	CHECK(ibv_next_poll(cqx) == ENOENT);
	ibv_end_poll(cqx);
	CHECK(memcmp(env.buf[1], env.buf[0], len) == 0);
}

/* A NIC receive rule's tag reaches the receive completion of the QP it sends to; without one the tag is 0. */
static void tag_case(bool big_cqe)
{
	struct ibv_cq_init_attr_ex ca = {.cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_FLOW_TAG};
	struct mlx5dv_cq_init_attr da = {.comp_mask = MLX5DV_CQ_INIT_ATTR_MASK_CQE_SIZE, .cqe_size = 128};
	struct mlx5dv_dr_action *tag, *to_b, *acts[2];
	struct mlx5dv_dr_matcher *m;
	struct mlx5dv_dr_rule *r;
	struct mlx5dv_obj obj;
	struct mlx5dv_cq dv;
	struct ibv_cq_ex *cqx;
	struct ibv_qp *qa, *qb;
	uint32_t len;

	CHECK(env_open() == 0);
	cqx = kept(big_cqe ? mlx5dv_create_cq(env.c, &ca, &da) : ibv_create_cq_ex(env.c, &ca), cqx_cb);
	CHECK(cqx != NULL);
	obj.cq.in = ibv_cq_ex_to_cq(cqx);
	obj.cq.out = &dv;
	CHECK_OK(mlx5dv_init_obj(&obj, MLX5DV_OBJ_CQ));
	CHECK(dv.cqe_size == (big_cqe ? 128u : 64u));
	qa = raw_qp();
	qb = raw_qp_on(ibv_cq_ex_to_cq(cqx));
	CHECK(qa != NULL && qb != NULL);
	tag = action(mlx5dv_dr_action_create_tag(0xff000000u | TAG)); /* 24 bits kept */
	to_b = action(mlx5dv_dr_action_create_dest_ibv_qp(qb));
	CHECK(tag != NULL && to_b != NULL);
	m = smac_matcher(domain(MLX5DV_DR_DOMAIN_TYPE_NIC_RX), 1, 0);
	CHECK(m != NULL);
	acts[0] = tag;
	acts[1] = to_b;
	r = smac_rule(m, 2, acts);
	CHECK(r != NULL);
	len = make_frame(env.buf[0], 160, false);
	tagged_one(qa, qb, cqx, &dv, 0, len, TAG);
	/* The same QP through a rule without a tag: 0, and the CQE names the QP. */
	CHECK_OK(mlx5dv_dr_rule_destroy(r));
	th_undefer(rule_cb, r);
	CHECK(smac_rule(m, 1, &to_b) != NULL);
	tagged_one(qa, qb, cqx, &dv, 1, len, 0);
	/* Tags are the receive side's: a NIC transmit rule refuses one. */
	{
		struct mlx5dv_dr_matcher *tx = smac_matcher(domain(MLX5DV_DR_DOMAIN_TYPE_NIC_TX), 0, 0);
		struct match v;

		CHECK(tx != NULL);
		errno = 0;
		CHECK(mlx5dv_dr_rule_create(tx, smac(&v, mac_src), 1, &tag) == NULL);
		CHECK(errno == EOPNOTSUPP);
	}
}

static void test_tag(void)
{
	tag_case(false);
}

/* The same with 128-byte CQEs (mlx5dv_create_cq): the tag sits in the entry's 64-byte CQE. */
static void test_tag_cqe128(void)
{
	tag_case(true);
}

/* A dest array copies the frame to each destination: two QPs and a table whose rule sends to a third. */
static void test_dest_array(void)
{
	struct mlx5dv_dr_action_dest_attr d[3], *dp[3] = {&d[0], &d[1], &d[2]};
	struct mlx5dv_dr_action *to_b, *to_c, *to_d, *to_t2, *arr, *push;
	struct mlx5dv_dr_domain *rx;
	struct mlx5dv_dr_table *t2;
	struct mlx5dv_dr_matcher *m1, *m2;
	struct ibv_qp *qa, *qb, *qc, *qd;
	struct ibv_wc wc[8];
	struct match mk;
	uint32_t len;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	qc = raw_qp();
	qd = raw_qp();
	CHECK(qa != NULL && qb != NULL && qc != NULL && qd != NULL);
	rx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	CHECK(rx != NULL);
	m1 = smac_matcher(rx, 1, 0);
	t2 = kept(mlx5dv_dr_table_create(rx, 2), table_cb);
	CHECK(m1 != NULL && t2 != NULL);
	m2 = kept(mlx5dv_dr_matcher_create(t2, 0, CRIT_OUTER, smac(&mk, all_ones)), matcher_cb);
	to_b = action(mlx5dv_dr_action_create_dest_ibv_qp(qb));
	to_c = action(mlx5dv_dr_action_create_dest_ibv_qp(qc));
	to_d = action(mlx5dv_dr_action_create_dest_ibv_qp(qd));
	to_t2 = action(mlx5dv_dr_action_create_dest_table(t2));
	CHECK(m2 != NULL && to_b != NULL && to_c != NULL && to_d != NULL && to_t2 != NULL);
	CHECK(smac_rule(m2, 1, &to_d) != NULL);
	d[0] = (struct mlx5dv_dr_action_dest_attr){.type = MLX5DV_DR_ACTION_DEST, .dest = to_b};
	d[1] = (struct mlx5dv_dr_action_dest_attr){.type = MLX5DV_DR_ACTION_DEST, .dest = to_c};
	d[2] = (struct mlx5dv_dr_action_dest_attr){.type = MLX5DV_DR_ACTION_DEST, .dest = to_t2};
	arr = action(mlx5dv_dr_action_create_dest_array(rx, 3, dp));
	CHECK(arr != NULL);
	CHECK(smac_rule(m1, 1, &arr) != NULL);
	len = make_frame(env.buf[0], 333, false);
	CHECK_OK(post_recv(qb, 1, 0xb1));
	CHECK_OK(post_recv(qc, 2, 0xb2));
	CHECK_OK(post_recv(qd, 3, 0xb3));
	CHECK_OK(post_frame(qa, 0, len, 0xa1));
	CHECK(poll_all(wc, 8) == 4);
	CHECK(wc[0].wr_id == 0xa1 && wc[0].status == IBV_WC_SUCCESS);
	CHECK(wc[1].wr_id == 0xb1 && wc[1].qp_num == qb->qp_num && wc[1].status == IBV_WC_SUCCESS);
	CHECK(wc[2].wr_id == 0xb2 && wc[2].qp_num == qc->qp_num && wc[2].status == IBV_WC_SUCCESS);
	CHECK(wc[3].wr_id == 0xb3 && wc[3].qp_num == qd->qp_num && wc[3].status == IBV_WC_SUCCESS);
	for (int i = 1; i <= 3; i++) {
		CHECK(wc[i].byte_len == len);
		CHECK(memcmp(env.buf[i], env.buf[0], len) == 0);
	}
	/* Its destinations are held while it lives. */
	CHECK_ERR(mlx5dv_dr_action_destroy(to_b), EBUSY);
	/* Fewer than two: EINVAL; a transmit domain, or an edit as a destination: EOPNOTSUPP. */
	errno = 0;
	CHECK(mlx5dv_dr_action_create_dest_array(rx, 1, dp) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(mlx5dv_dr_action_create_dest_array(domain(MLX5DV_DR_DOMAIN_TYPE_NIC_TX), 2, dp) == NULL);
	CHECK(errno == EOPNOTSUPP);
	push = action(mlx5dv_dr_action_create_pop_vlan());
	CHECK(push != NULL);
	d[1].dest = push;
	errno = 0;
	CHECK(mlx5dv_dr_action_create_dest_array(rx, 2, dp) == NULL && errno == EOPNOTSUPP);
}

int main(void)
{
	unsetenv("SOFTDPU_MACHINE");
	unsetenv("SOFTDPU_TOPOLOGY");
	unsetenv("SOFTDPU_SIDE");
	RUN(test_dest_qp);
	RUN(test_dest_qp_refused);
	RUN(test_push_and_pop_vlan);
	RUN(test_default_miss);
	RUN(test_tag);
	RUN(test_tag_cqe128);
	RUN(test_dest_array);
	return th_summary("test_verbs_dr_qp");
}
