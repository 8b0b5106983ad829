/*
 * RSS QPs (ibv_create_qp_ex(3) with IBV_QP_INIT_ATTR_RX_HASH and
 * IBV_QP_INIT_ATTR_IND_TABLE, ibv_create_rwq_ind_table(3)): a flow to the
 * QP sends each frame to the WQ of the indirection table entry that the
 * Toeplitz hash of the selected fields picks, hash & (table size - 1), as
 * the PRM defines it. The expected WQ is computed here with a Toeplitz of
 * this file's own; every frame is compared byte for byte where it landed.
 * Refusals carry the errno rdma-core v44's provider and kernel give.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "raw_fixture.h"

#define LOG_TBL 2
#define N_WQ (1u << LOG_TBL)
#define N_FRAMES 24
#define RSS_KEY_LEN 40

static uint8_t rss_key[RSS_KEY_LEN] = {
	0x2c, 0xc6, 0x81, 0xd1, 0x5b, 0xdb, 0xf4, 0xf7, 0xfc, 0xa2, 0x83, 0x19, 0xdb, 0x1a,
	0x3e, 0x94, 0x6b, 0x9e, 0x38, 0xd9, 0x2c, 0x9c, 0x03, 0xd1, 0xad, 0x99, 0x44, 0xa7,
	0xd9, 0x56, 0x3d, 0x59, 0x06, 0x3c, 0x25, 0xf3, 0xfc, 0x1f, 0xdc, 0x2a,
};

/* Bit i of the key, counted from its first byte's top bit. */
static uint32_t key_bit(uint32_t i)
{
	return i / 8 < RSS_KEY_LEN ? (rss_key[i / 8] >> (7 - i % 8)) & 1u : 0;
}

/* Toeplitz: for every input bit set at position p, the key's 32 bits from p XORed in. */
static uint32_t toeplitz(const uint8_t *in, uint32_t n)
{
	uint32_t h = 0;

	for (uint32_t p = 0; p < n * 8; p++) {
		uint32_t w = 0;

		if (!((in[p / 8] >> (7 - p % 8)) & 1u))
			continue;
		for (uint32_t k = 0; k < 32; k++)
			w = w << 1 | key_bit(p + k);
		h ^= w;
	}
	return h;
}

struct rss {
	struct ibv_cq *cq;
	struct ibv_wq *wq[N_WQ];
	struct ibv_rwq_ind_table *tbl;
	struct ibv_qp *qp;
	uint8_t (*buf)[N_FRAMES][FRAME_MAX]; /* [wq][k] */
	struct ibv_mr *mr;
};

static void wq_cb(void *w)
{
	(void)ibv_destroy_wq(w);
}

static void tbl_cb(void *t)
{
	(void)ibv_destroy_rwq_ind_table(t);
}

static void free_cb(void *p)
{
	free(p);
}

static void mr_cb(void *m)
{
	(void)ibv_dereg_mr(m);
}

static struct ibv_wq *ready_wq(struct ibv_cq *cq)
{
	struct ibv_wq_init_attr a = {.wq_type = IBV_WQT_RQ, .max_wr = N_FRAMES, .max_sge = 1, .pd = env.pd, .cq = cq};
	struct ibv_wq_attr m = {.attr_mask = IBV_WQ_ATTR_STATE, .wq_state = IBV_WQS_RDY};
	struct ibv_wq *w = kept(ibv_create_wq(env.c, &a), wq_cb);

	return w != NULL && ibv_modify_wq(w, &m) == 0 ? w : NULL;
}

/* The WQs on their own CQ, their table, and receive memory for N_FRAMES each. */
static int rss_tables(struct rss *r)
{
	struct ibv_rwq_ind_table_init_attr ta = {.log_ind_tbl_size = LOG_TBL, .ind_tbl = r->wq};

	r->cq = kept(ibv_create_cq(env.c, 4 * N_FRAMES, NULL, NULL, 0), cq_cb);
	if (r->cq == NULL)
		return -1;
	for (uint32_t i = 0; i < N_WQ; i++)
		if ((r->wq[i] = ready_wq(r->cq)) == NULL)
			return -1;
	r->tbl = kept(ibv_create_rwq_ind_table(env.c, &ta), tbl_cb);
	r->buf = kept(calloc(N_WQ, sizeof(*r->buf)), free_cb);
	if (r->tbl == NULL || r->buf == NULL)
		return -1;
	r->mr = kept(ibv_reg_mr(env.pd, r->buf, N_WQ * sizeof(*r->buf), IBV_ACCESS_LOCAL_WRITE), mr_cb);
	return r->mr != NULL ? 0 : -1;
}

static void rss_attr(struct ibv_qp_init_attr_ex *a, struct rss *r, uint64_t fields)
{
	memset(a, 0, sizeof(*a));
	a->qp_type = IBV_QPT_RAW_PACKET;
	a->comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_RX_HASH | IBV_QP_INIT_ATTR_IND_TABLE;
	a->pd = env.pd;
	a->rwq_ind_tbl = r->tbl;
	a->rx_hash_conf.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	a->rx_hash_conf.rx_hash_key_len = RSS_KEY_LEN;
	a->rx_hash_conf.rx_hash_key = rss_key;
	a->rx_hash_conf.rx_hash_fields_mask = fields;
}

/* A flow of every frame to mac_dst. */
static struct ibv_flow *dmac_flow(struct ibv_qp *qp)
{
	struct {
		struct ibv_flow_attr attr;
		struct ibv_flow_spec_eth eth;
	} f = {
		.attr = {.type = IBV_FLOW_ATTR_NORMAL, .size = sizeof(f), .num_of_specs = 1, .port = 1},
		.eth = {.type = IBV_FLOW_SPEC_ETH, .size = sizeof(struct ibv_flow_spec_eth)},
	};

	memcpy(f.eth.val.dst_mac, mac_dst, 6);
	memset(f.eth.mask.dst_mac, 0xff, 6);
	return kept(ibv_create_flow(qp, &f.attr), flow_cb);
}

/* Frame i: make_frame's UDP frame with source 10.0.i.(i*7), destination 192.168.1.2, ports 1000+i and 4791. */
static uint32_t rss_frame(uint8_t *f, uint32_t i)
{
	uint32_t len = make_frame(f, 128 + i, false);
	uint8_t *ip = f + 14, *udp = ip + 20;

	ip[12] = 10, ip[13] = 0, ip[14] = (uint8_t)i, ip[15] = (uint8_t)(i * 7);
	ip[16] = 192, ip[17] = 168, ip[18] = 1, ip[19] = 2;
	udp[0] = (uint8_t)((1000 + i) >> 8), udp[1] = (uint8_t)(1000 + i);
	udp[2] = 4791 >> 8, udp[3] = 4791 & 0xff;
	return len;
}

/* The hash input of frame f for the two selections used here: the addresses, or addresses and UDP ports. */
static uint32_t expected_wq(const uint8_t *f, bool ports)
{
	uint8_t in[12];

	memcpy(in, f + 14 + 12, 8);
	memcpy(in + 8, f + 34, 4);
	return toeplitz(in, ports ? 12 : 8) & (N_WQ - 1);
}

static int post_wq(struct rss *r, uint32_t w, uint32_t k)
{
	struct ibv_sge s = {.addr = (uintptr_t)r->buf[w][k], .length = FRAME_MAX, .lkey = r->mr->lkey};
	struct ibv_recv_wr wr = {.wr_id = w << 8 | k, .sg_list = &s, .num_sge = 1}, *bad = NULL;

	return ibv_post_wq_recv(r->wq[w], &wr, &bad);
}

/* Sends N_FRAMES frames from a raw QP; each must land, whole, in the WQ its hash picks. */
static void spread_and_check(struct rss *r, bool ports)
{
	struct ibv_qp *qa = raw_qp();
	uint32_t seen[N_WQ] = {0}, used = 0;

	CHECK(qa != NULL);
	for (uint32_t w = 0; w < N_WQ; w++)
		for (uint32_t k = 0; k < N_FRAMES; k++)
			CHECK_OK(post_wq(r, w, k));
	for (uint32_t i = 0; i < N_FRAMES; i++) {
		struct ibv_wc wc[2];
		uint32_t len = rss_frame(env.buf[0], i), w = expected_wq(env.buf[0], ports);

		CHECK_OK(post_frame(qa, 0, len, 0xa0 + i));
		CHECK(ibv_poll_cq(env.cq, 2, wc) == 1);
		CHECK(wc[0].status == IBV_WC_SUCCESS && wc[0].wr_id == 0xa0 + i);
		CHECK(ibv_poll_cq(r->cq, 2, wc) == 1);
		CHECK(wc[0].status == IBV_WC_SUCCESS);
		CHECK(wc[0].opcode == IBV_WC_RECV);
		CHECK(wc[0].qp_num == r->wq[w]->wq_num);
		CHECK(wc[0].wr_id == (w << 8 | seen[w]));
		CHECK(wc[0].byte_len == len);
		CHECK(memcmp(r->buf[w][seen[w]], env.buf[0], len) == 0);
		used |= 1u << w;
		seen[w]++;
	}
	CHECK(used == (1u << N_WQ) - 1); /* these addresses reach every WQ: the hash spreads them */
}

static void test_rss_spreads_by_toeplitz(void)
{
	struct ibv_qp_init_attr_ex a;
	struct rss r;

	CHECK(env_open() == 0);
	CHECK(rss_tables(&r) == 0);
	rss_attr(&a, &r, IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4);
	r.qp = kept(ibv_create_qp_ex(env.c, &a), qp_cb);
	CHECK(r.qp != NULL);
	CHECK(dmac_flow(r.qp) != NULL);
	spread_and_check(&r, false);
}

static void test_rss_udp_ports(void)
{
	struct ibv_qp_init_attr_ex a;
	struct rss r;

	CHECK(env_open() == 0);
	CHECK(rss_tables(&r) == 0);
	rss_attr(&a, &r, IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 | IBV_RX_HASH_SRC_PORT_UDP |
				 IBV_RX_HASH_DST_PORT_UDP);
	r.qp = kept(ibv_create_qp_ex(env.c, &a), qp_cb);
	CHECK(r.qp != NULL);
	CHECK(dmac_flow(r.qp) != NULL);
	spread_and_check(&r, true);
}

static void refused(struct ibv_qp_init_attr_ex *a, int err)
{
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp_ex(env.c, a);
	if (qp != NULL)
		(void)ibv_destroy_qp(qp);
	CHECK(qp == NULL);
	CHECK(errno == err);
}

static void test_rss_refusals(void)
{
	struct ibv_qp_init_attr_ex a;
	uint8_t long_key[RSS_KEY_LEN + 1] = {0};
	struct rss r;

	CHECK(env_open() == 0);
	CHECK(rss_tables(&r) == 0);
	rss_attr(&a, &r, IBV_RX_HASH_SRC_IPV4);
	a.rx_hash_conf.rx_hash_function = 2; /* not Toeplitz */
	refused(&a, EOPNOTSUPP);
	rss_attr(&a, &r, IBV_RX_HASH_SRC_IPV4);
	a.rx_hash_conf.rx_hash_key_len = 20;
	refused(&a, EINVAL);
	a.rx_hash_conf.rx_hash_key = long_key;
	a.rx_hash_conf.rx_hash_key_len = sizeof(long_key);
	refused(&a, EINVAL);
	rss_attr(&a, &r, IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV6);
	refused(&a, EINVAL);
	rss_attr(&a, &r, IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_UDP);
	refused(&a, EINVAL);
	rss_attr(&a, &r, IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_INNER);
	refused(&a, EOPNOTSUPP);
	rss_attr(&a, &r, IBV_RX_HASH_SRC_IPV4);
	a.comp_mask &= ~(uint32_t)IBV_QP_INIT_ATTR_IND_TABLE;
	refused(&a, EINVAL);
	rss_attr(&a, &r, IBV_RX_HASH_SRC_IPV4);
	a.recv_cq = env.cq; /* the WQs receive */
	refused(&a, EINVAL);
	rss_attr(&a, &r, IBV_RX_HASH_SRC_IPV4);
	a.cap.max_recv_wr = 1;
	refused(&a, EINVAL);
	rss_attr(&a, &r, IBV_RX_HASH_SRC_IPV4);
	a.send_cq = env.cq;
	refused(&a, EINVAL);
	rss_attr(&a, &r, 0); /* no fields over four WQs */
	refused(&a, EINVAL);
	rss_attr(&a, &r, IBV_RX_HASH_SRC_IPV4);
	a.qp_type = IBV_QPT_UD;
	refused(&a, EOPNOTSUPP);
}

/* No state, no attributes, no queues: modify and query EOPNOTSUPP, posting ENOMEM; the table and QP held. */
static void test_rss_qp_ops(void)
{
	struct ibv_qp_attr qa = {.qp_state = IBV_QPS_INIT, .port_num = 1};
	struct ibv_qp_init_attr init;
	struct ibv_qp_init_attr_ex a;
	struct ibv_recv_wr rwr = {.wr_id = 1}, *rbad = NULL;
	struct ibv_send_wr swr = {.wr_id = 1, .opcode = IBV_WR_SEND}, *sbad = NULL;
	struct ibv_flow *fl;
	struct rss r;

	CHECK(env_open() == 0);
	CHECK(rss_tables(&r) == 0);
	rss_attr(&a, &r, IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4);
	r.qp = kept(ibv_create_qp_ex(env.c, &a), qp_cb);
	CHECK(r.qp != NULL);
	CHECK(r.qp->qp_type == IBV_QPT_RAW_PACKET);
	CHECK_ERR(ibv_modify_qp(r.qp, &qa, IBV_QP_STATE | IBV_QP_PORT), EOPNOTSUPP);
	CHECK_ERR(ibv_query_qp(r.qp, &qa, IBV_QP_STATE, &init), EOPNOTSUPP);
	CHECK_ERR(ibv_post_recv(r.qp, &rwr, &rbad), ENOMEM);
	CHECK(rbad == &rwr);
	CHECK_ERR(ibv_post_send(r.qp, &swr, &sbad), ENOMEM);
	CHECK(sbad == &swr);
	CHECK_ERR(ibv_destroy_rwq_ind_table(r.tbl), EBUSY);
	fl = dmac_flow(r.qp);
	CHECK(fl != NULL);
	CHECK_ERR(ibv_destroy_qp(r.qp), EBUSY);
	CHECK_OK(ibv_destroy_flow(fl));
	th_undefer(flow_cb, fl);
	CHECK_OK(ibv_destroy_qp(r.qp));
	th_undefer(qp_cb, r.qp);
	CHECK_OK(ibv_destroy_rwq_ind_table(r.tbl)); /* free again once the QP is gone */
	th_undefer(tbl_cb, r.tbl);
}

int main(void)
{
	RUN(test_rss_spreads_by_toeplitz);
	RUN(test_rss_udp_ports);
	RUN(test_rss_refusals);
	RUN(test_rss_qp_ops);
	return th_summary("test_verbs_rss");
}
