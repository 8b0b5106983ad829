/*
 * libmlx5.so.1: DevX TIR objects and the mlx5dv_dr steering API, as the
 * man page (mlx5dv_dr_flow.3) and the PRM describe them: each function's
 * objects and refusals, then frames an SQ of the port sends that a rule
 * steers into an RQ through a TIR. The port's queues are made with hw_eth
 * directly (libsoftdpu.so.0, the device every library of the process uses):
 * the verbs libraries have no raw Ethernet QP to make them with.
 */
#include <endian.h>
#include <stddef.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>

#include "hw_eth.h"
#include "hw_ids.h"
#include "verbs_fixture.h"

/* The PRM's create_tir_in / create_tir_out (mlx5_ifc tirc, create_tir_in/out). */
#define OP_CREATE_TIR 0x900
#define TIR_IN_SZ 0x110
#define TIR_OUT_SZ 0x10
#define TIRC 0x20
#define STAT_BAD_OP 0x2
#define STAT_BAD_PARAM 0x3

#define CRIT_OUTER 0x1
#define CRIT_MISC 0x2
#define MATCH_SZ 448	  /* fte_match_param: seven 64-byte parts */
#define DMAC_OFF 8	  /* fte_match_set_lyr_2_4: dmac_47_16, dmac_15_0 */
#define UPLINK 0xffff

struct match {
	size_t match_sz;
	uint64_t buf[MATCH_SZ / 8];
};

static const uint8_t mac_a[6] = {0x02, 0x00, 0x00, 0x00, 0xaa, 0x01};
static const uint8_t mac_b[6] = {0x02, 0x00, 0x00, 0x00, 0xbb, 0x02};

static struct mlx5dv_flow_match_parameters *mp(struct match *m, size_t sz)
{
	m->match_sz = sz;
	return (struct mlx5dv_flow_match_parameters *)m;
}

/* A mask or value over the outer dmac only. */
static struct mlx5dv_flow_match_parameters *dmac_param(struct match *m, const uint8_t mac[6])
{
	memset(m, 0, sizeof(*m));
	memcpy((uint8_t *)m->buf + DMAC_OFF, mac, 6);
	return mp(m, 64);
}

static const uint8_t all_ones[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

/* ---- Cleanups: every object goes when the case ends, unless the case destroyed it. ---- */

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

static void obj_cb(void *a)
{
	mlx5dv_devx_obj_destroy(a);
}

static void *kept(void *obj, th_cleanup_fn fn)
{
	if (obj != NULL)
		th_defer(fn, obj);
	return obj;
}

static struct mlx5dv_dr_domain *domain(struct ibv_context *c, enum mlx5dv_dr_domain_type t)
{
	return kept(mlx5dv_dr_domain_create(c, t), domain_cb);
}

static struct mlx5dv_dr_table *table(struct mlx5dv_dr_domain *d, uint32_t level)
{
	return kept(mlx5dv_dr_table_create(d, level), table_cb);
}

static struct mlx5dv_dr_matcher *matcher(struct mlx5dv_dr_table *t, uint16_t prio, uint8_t crit,
					 struct mlx5dv_flow_match_parameters *mask)
{
	return kept(mlx5dv_dr_matcher_create(t, prio, crit, mask), matcher_cb);
}

static struct mlx5dv_dr_matcher *dmac_matcher(struct mlx5dv_dr_table *t, uint16_t prio)
{
	struct match m;

	return matcher(t, prio, CRIT_OUTER, dmac_param(&m, all_ones));
}

static struct mlx5dv_dr_rule *rule(struct mlx5dv_dr_matcher *m, struct mlx5dv_flow_match_parameters *v,
				   struct mlx5dv_dr_action *a)
{
	return kept(mlx5dv_dr_rule_create(m, v, 1, &a), rule_cb);
}

static struct mlx5dv_dr_rule *dmac_rule(struct mlx5dv_dr_matcher *m, const uint8_t mac[6], struct mlx5dv_dr_action *a)
{
	struct match v;

	return rule(m, dmac_param(&v, mac), a);
}

static struct mlx5dv_dr_action *action(struct mlx5dv_dr_action *a)
{
	return kept(a, action_cb);
}

/* Destroys what a helper above registered, leaving no cleanup behind. */
static int destroyed(int rc, th_cleanup_fn fn, void *obj)
{
	if (rc == 0)
		th_undefer(fn, obj);
	return rc;
}

#define DESTROY(fn, cb, obj) destroyed(fn(obj), cb, obj)

/* ---- The port: memory, an RQ and an SQ of hw_eth, as a driver makes them. ---- */

#define MEM_LEN 65536
#define LOG_RQ 4	  /* 16 WQEs of one data segment */
#define RQ_STRIDE 16
#define LOG_SQ 4	  /* 16 basic blocks */
#define RX_BUF 2048
#define TX_OFF (MEM_LEN / 2)
#define INLINE_HDR 18	  /* as rdma-core's raw packet QPs inline the L2 header */

static struct {
	struct hw_pd *pd;
	uint8_t *mem;
	uint32_t key;
	uint32_t rqn, sqn;
	struct hw_cq *rcq, *scq;
	struct hw_eth_rq *rq;
	struct hw_eth_sq *sq;
	uint8_t *rq_ring, *sq_ring;
	uint32_t *rq_db, *sq_db;
	uint32_t rq_pi;		  /* receive WQEs posted */
	uint32_t sq_pi;		  /* send basic blocks posted */
} P;

static void port_free(void *arg)
{
	(void)arg;
	if (P.sq != NULL)
		hw_eth_sq_destroy(P.sq);
	if (P.rq != NULL)
		hw_eth_rq_destroy(P.rq);
	if (P.scq != NULL)
		hw_cq_destroy(P.scq);
	if (P.rcq != NULL)
		hw_cq_destroy(P.rcq);
	if (P.rqn != 0)
		hw_id_free(HW_ID_QPN, P.rqn);
	if (P.sqn != 0)
		hw_id_free(HW_ID_QPN, P.sqn);
	if (P.key != 0)
		hw_mkey_dereg(P.key);
	if (P.pd != NULL)
		hw_pd_free(P.pd);
	free(P.mem);
	free(P.rq_ring);
	free(P.sq_ring);
	free(P.rq_db);
	free(P.sq_db);
	memset(&P, 0, sizeof(P));
}

static int port_mem(void)
{
	P.pd = hw_pd_alloc_private(0);
	P.mem = aligned_alloc(4096, MEM_LEN);
	P.rq_ring = aligned_alloc(64, RQ_STRIDE << LOG_RQ);
	P.sq_ring = aligned_alloc(64, 64 << LOG_SQ);
	P.rq_db = aligned_alloc(64, 64);
	P.sq_db = aligned_alloc(64, 64);
	if (P.pd == NULL || P.mem == NULL || P.rq_ring == NULL || P.sq_ring == NULL || P.rq_db == NULL ||
	    P.sq_db == NULL)
		return -1;
	memset(P.mem, 0, MEM_LEN);
	memset(P.rq_ring, 0, RQ_STRIDE << LOG_RQ);
	memset(P.sq_ring, 0, 64 << LOG_SQ);
	memset(P.rq_db, 0, 64);
	memset(P.sq_db, 0, 64);
	return hw_mkey_reg(P.pd, P.mem, (uintptr_t)P.mem, MEM_LEN, HW_ACCESS_LOCAL_WRITE, &P.key) == HW_OK ? 0 : -1;
}

static int port_queues(void)
{
	struct hw_cq_attr ca = {.log_size = 4};
	struct hw_eth_rq_attr ra = {.log_size = LOG_RQ, .log_stride = 4, .pd = P.pd};
	struct hw_eth_sq_attr sa = {.log_size = LOG_SQ, .pd = P.pd};

	if (hw_id_alloc(HW_ID_QPN, &P.rqn) != HW_OK || hw_id_alloc(HW_ID_QPN, &P.sqn) != HW_OK ||
	    hw_cq_create(&ca, &P.rcq) != HW_OK || hw_cq_create(&ca, &P.scq) != HW_OK)
		return -1;
	ra.rqn = P.rqn;
	ra.cq = P.rcq;
	ra.ring = P.rq_ring;
	ra.dbrec = &P.rq_db[0];
	sa.sqn = P.sqn;
	sa.cq = P.scq;
	sa.ring = P.sq_ring;
	sa.dbrec = &P.sq_db[1];
	if (hw_eth_rq_create(&ra, &P.rq) != HW_OK)
		return -1;
	return hw_eth_sq_create(&sa, &P.sq) == HW_OK ? 0 : -1;
}

static int port_setup(void)
{
	memset(&P, 0, sizeof(P));
	th_defer(port_free, NULL);
	return port_mem() == 0 && port_queues() == 0 ? 0 : -1;
}

/* Posts one receive WQE: RX_BUF bytes at slot i of the receive area (the first half of memory). */
static void rq_post(void)
{
	struct mlx5_wqe_data_seg *d = (void *)(P.rq_ring + (P.rq_pi % (1u << LOG_RQ)) * RQ_STRIDE);
	uint8_t *buf = P.mem + (P.rq_pi % (TX_OFF / RX_BUF)) * RX_BUF;

	mlx5dv_set_data_seg(d, RX_BUF, P.key, (uintptr_t)buf);
	P.rq_pi++;
	__atomic_store_n(&P.rq_db[0], htobe32(P.rq_pi & 0xffff), __ATOMIC_RELEASE);
}

static uint8_t *rx_buf(uint32_t i)
{
	return P.mem + (i % (TX_OFF / RX_BUF)) * RX_BUF;
}

/* A frame to dmac from mac_b, its payload a pattern seeded by seed. */
static uint32_t frame(uint8_t *f, const uint8_t dmac[6], uint32_t len, uint8_t seed)
{
	memcpy(f, dmac, 6);
	memcpy(f + 6, mac_b, 6);
	f[12] = 0x88;		  /* a local experimental ethertype */
	f[13] = 0xb5;
	for (uint32_t i = 14; i < len; i++)
		f[i] = (uint8_t)(seed + i * 7);
	return len;
}

/*
 * Sends len bytes at the transmit area, as a raw packet driver: control,
 * Ethernet segment with the L2 header inline, one data segment for the rest.
 */
static enum hw_status sq_send(uint32_t len)
{
	uint8_t *f = P.mem + TX_OFF;
	uint8_t *w = P.sq_ring + (P.sq_pi % (1u << LOG_SQ)) * 64;
	struct mlx5_wqe_eth_seg *eth = (void *)(w + sizeof(struct mlx5_wqe_ctrl_seg));
	struct mlx5_wqe_data_seg *d = (void *)(w + 48);

	memset(w, 0, 64);
	/* ds: control, Ethernet segment, the inline header's 16 bytes past it, data */
	mlx5dv_set_ctrl_seg((void *)w, (uint16_t)P.sq_pi, MLX5_OPCODE_SEND, 0, P.sqn, MLX5_WQE_CTRL_CQ_UPDATE, 4, 0, 0);
	eth->inline_hdr_sz = htobe16(INLINE_HDR);
	memcpy((uint8_t *)eth + offsetof(struct mlx5_wqe_eth_seg, inline_hdr_start), f, INLINE_HDR);
	mlx5dv_set_data_seg(d, len - INLINE_HDR, P.key, (uintptr_t)(f + INLINE_HDR));
	P.sq_pi++;
	__atomic_store_n(&P.sq_db[1], htobe32(P.sq_pi & 0xffff), __ATOMIC_RELEASE);
	return hw_eth_sq_ring(P.sq, P.sq_pi);
}

/* A direct TIR over rqn through mlx5dv_devx_obj_create, released when the case ends. */
static struct mlx5dv_devx_obj *tir(struct ibv_context *c, uint32_t rqn, uint32_t *tirn)
{
	uint8_t in[TIR_IN_SZ] = {0}, out[TIR_OUT_SZ];
	struct mlx5dv_devx_obj *o;
	uint32_t w = htobe32(rqn & 0xffffff);

	in[0] = OP_CREATE_TIR >> 8;
	in[1] = OP_CREATE_TIR & 0xff;
	memcpy(in + TIRC + 0x1c, &w, 4);
	memset(out, 0xee, sizeof(out));
	o = kept(mlx5dv_devx_obj_create(c, in, sizeof(in), out, sizeof(out)), obj_cb);
	if (o != NULL && tirn != NULL) {
		memcpy(&w, out + 8, 4);
		*tirn = be32toh(w) & 0xffffff;
	}
	return o != NULL && out[0] == 0 ? o : NULL;
}

/* ---- DevX objects ---- */

static void test_devx_unknown_opcode(void)
{
	struct ibv_context *c = vf_open();
	uint8_t in[0x40] = {0x09, 0x08}, out[0x10];
	uint32_t synd;

	CHECK(c != NULL);
	memset(out, 0, sizeof(out));
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(c, in, sizeof(in), out, sizeof(out)) == NULL); /* CREATE_RQ: not here */
	CHECK(errno == EOPNOTSUPP);
	CHECK(out[0] == STAT_BAD_OP);
	memcpy(&synd, out + 4, 4);
	CHECK(synd != 0);
	/* No room for the status: still refused, nothing written. */
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(c, in, sizeof(in), NULL, 0) == NULL);
	CHECK(errno == EOPNOTSUPP);
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(NULL, in, sizeof(in), out, sizeof(out)) == NULL);
	CHECK(errno == EINVAL);
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(c, in, 1, out, sizeof(out)) == NULL);
	CHECK(errno == EINVAL);
	CHECK_ERR(mlx5dv_devx_obj_destroy(NULL), EINVAL);
}

static void test_devx_tir_refused(void)
{
	struct ibv_context *c = vf_open();
	uint8_t in[TIR_IN_SZ] = {OP_CREATE_TIR >> 8, OP_CREATE_TIR & 0xff}, out[TIR_OUT_SZ];
	uint32_t w = htobe32(0xabcdef), synd;

	CHECK(c != NULL);
	memcpy(in + TIRC + 0x1c, &w, 4);
	/* No RQ of that number: bad parameter. */
	memset(out, 0, sizeof(out));
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(c, in, sizeof(in), out, sizeof(out)) == NULL);
	CHECK(errno == EINVAL);
	CHECK(out[0] == STAT_BAD_PARAM);
	memcpy(&synd, out + 4, 4);
	CHECK(synd != 0);
	/* Buffers shorter than the PRM's layouts. */
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(c, in, TIR_IN_SZ - 4, out, sizeof(out)) == NULL);
	CHECK(errno == EINVAL);
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(c, in, sizeof(in), out, TIR_OUT_SZ - 4) == NULL);
	CHECK(errno == EINVAL);
	/* An indirect TIR (disp_type 1: RSS over an RQ table). */
	in[TIRC + 4] = 0x10;
	errno = 0;
	CHECK(mlx5dv_devx_obj_create(c, in, sizeof(in), out, sizeof(out)) == NULL);
	CHECK(errno == EOPNOTSUPP);
	CHECK(mlx5dv_dr_action_create_dest_devx_tir(NULL) == NULL);
	CHECK(errno == EINVAL);
}

static void test_devx_tir(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_devx_obj *o;
	struct mlx5dv_dr_action *a;
	uint32_t tirn = 0;

	CHECK(c != NULL);
	CHECK(port_setup() == 0);
	o = tir(c, P.rqn, &tirn);
	CHECK(o != NULL);
	CHECK(tirn != 0);
	a = action(mlx5dv_dr_action_create_dest_devx_tir(o));
	CHECK(a != NULL);
	CHECK_OK(DESTROY(mlx5dv_dr_action_destroy, action_cb, a));
	CHECK_OK(DESTROY(mlx5dv_devx_obj_destroy, obj_cb, o));
}

/* ---- Domains, tables, matchers ---- */

static void test_domain(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_dr_domain *rx, *tx, *fdb;
	struct mlx5dv_dr_table *t;

	CHECK(c != NULL);
	rx = domain(c, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	tx = domain(c, MLX5DV_DR_DOMAIN_TYPE_NIC_TX);
	fdb = domain(c, MLX5DV_DR_DOMAIN_TYPE_FDB);
	CHECK(rx != NULL && tx != NULL && fdb != NULL);
	errno = 0;
	CHECK(mlx5dv_dr_domain_create(c, (enum mlx5dv_dr_domain_type)3) == NULL);
	CHECK(errno == EOPNOTSUPP);
	errno = 0;
	CHECK(mlx5dv_dr_domain_create(NULL, MLX5DV_DR_DOMAIN_TYPE_NIC_RX) == NULL);
	CHECK(errno == EINVAL);
	CHECK_OK(mlx5dv_dr_domain_sync(rx, MLX5DV_DR_DOMAIN_SYNC_FLAGS_SW | MLX5DV_DR_DOMAIN_SYNC_FLAGS_HW |
						   MLX5DV_DR_DOMAIN_SYNC_FLAGS_MEM));
	CHECK_OK(mlx5dv_dr_domain_sync(tx, 0));
	CHECK_ERR(mlx5dv_dr_domain_sync(fdb, 1u << 3), EOPNOTSUPP);
	CHECK_ERR(mlx5dv_dr_domain_sync(NULL, 0), EINVAL);
	/* A domain goes after its tables. */
	t = table(rx, 0);
	CHECK(t != NULL);
	CHECK_ERR(mlx5dv_dr_domain_destroy(rx), EBUSY);
	CHECK_OK(DESTROY(mlx5dv_dr_table_destroy, table_cb, t));
	CHECK_OK(DESTROY(mlx5dv_dr_domain_destroy, domain_cb, rx));
	CHECK_OK(DESTROY(mlx5dv_dr_domain_destroy, domain_cb, tx));
	CHECK_OK(DESTROY(mlx5dv_dr_domain_destroy, domain_cb, fdb));
	CHECK_ERR(mlx5dv_dr_domain_destroy(NULL), EINVAL);
}

static void test_table(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_dr_domain *d;
	struct mlx5dv_dr_table *t0, *t1, *t63;
	struct mlx5dv_dr_matcher *m;
	struct mlx5dv_dr_action *jump;

	CHECK(c != NULL);
	d = domain(c, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	CHECK(d != NULL);
	t0 = table(d, 0);
	t1 = table(d, 1);
	t63 = table(d, 63);
	CHECK(t0 != NULL && t1 != NULL && t63 != NULL);
	/* Software steering levels have no limit (the suite's dest-array case uses 0xff). */
	CHECK(table(d, 0xff) != NULL && table(d, UINT32_MAX) != NULL);
	errno = 0;
	CHECK(mlx5dv_dr_table_create(NULL, 1) == NULL);
	CHECK(errno == EINVAL);
	/* The root table is where lookups start, never a destination. */
	errno = 0;
	CHECK(mlx5dv_dr_action_create_dest_table(t0) == NULL);
	CHECK(errno == EINVAL);
	errno = 0;
	CHECK(mlx5dv_dr_action_create_dest_table(NULL) == NULL);
	CHECK(errno == EINVAL);
	/* A table goes after its matchers and the actions jumping to it. */
	jump = action(mlx5dv_dr_action_create_dest_table(t1));
	CHECK(jump != NULL);
	CHECK_ERR(mlx5dv_dr_table_destroy(t1), EBUSY);
	CHECK_OK(DESTROY(mlx5dv_dr_action_destroy, action_cb, jump));
	m = dmac_matcher(t1, 0);
	CHECK(m != NULL);
	CHECK_ERR(mlx5dv_dr_table_destroy(t1), EBUSY);
	CHECK_OK(DESTROY(mlx5dv_dr_matcher_destroy, matcher_cb, m));
	CHECK_OK(DESTROY(mlx5dv_dr_table_destroy, table_cb, t1));
	CHECK_ERR(mlx5dv_dr_table_destroy(NULL), EINVAL);
}

static void test_matcher(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_dr_domain *d;
	struct mlx5dv_dr_table *t;
	struct match m;

	CHECK(c != NULL);
	d = domain(c, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	t = d != NULL ? table(d, 1) : NULL;
	CHECK(t != NULL);
	CHECK(dmac_matcher(t, 0) != NULL);
	CHECK(dmac_matcher(t, 0) != NULL);	/* same priority: both kept */
	CHECK(matcher(t, 5, 0, NULL) != NULL);	/* no criteria: matches everything */
	/* The whole fte_match_param, misc enabled but its mask zero: accepted. */
	dmac_param(&m, all_ones);
	CHECK(matcher(t, 1, CRIT_OUTER | CRIT_MISC, mp(&m, MATCH_SZ)) != NULL);
	/* A misc mask: not matched here. */
	((uint8_t *)m.buf)[64 + 4] = 0xff;
	errno = 0;
	CHECK(mlx5dv_dr_matcher_create(t, 1, CRIT_OUTER | CRIT_MISC, mp(&m, MATCH_SZ)) == NULL);
	CHECK(errno == EOPNOTSUPP);
	/* ... unless the criteria leave misc out: then that part is not read. */
	CHECK(matcher(t, 1, CRIT_OUTER, mp(&m, MATCH_SZ)) != NULL);
	/* Inner headers (criteria bit 2), masked. */
	dmac_param(&m, all_ones);
	((uint8_t *)m.buf)[128 + DMAC_OFF] = 0xff;
	errno = 0;
	CHECK(mlx5dv_dr_matcher_create(t, 1, CRIT_OUTER | 0x4, mp(&m, MATCH_SZ)) == NULL);
	CHECK(errno == EOPNOTSUPP);
	/* A mask shorter than the outer part: what it leaves out is zero (pyverbs passes 8 bytes of smac). */
	CHECK(matcher(t, 1, CRIT_OUTER, mp(&m, 32)) != NULL);
	/* Sizes and criteria out of range. */
	errno = 0;
	CHECK(mlx5dv_dr_matcher_create(t, 1, CRIT_OUTER, mp(&m, MATCH_SZ + 8)) == NULL);
	CHECK(errno == EINVAL);
	errno = 0;
	CHECK(mlx5dv_dr_matcher_create(t, 1, 0x80, dmac_param(&m, all_ones)) == NULL);
	CHECK(errno == EINVAL);
	errno = 0;
	CHECK(mlx5dv_dr_matcher_create(NULL, 1, CRIT_OUTER, dmac_param(&m, all_ones)) == NULL);
	CHECK(errno == EINVAL);
	CHECK_ERR(mlx5dv_dr_matcher_destroy(NULL), EINVAL);
}

/* mlx5dv_dr_matcher_set_layout: resizable and a rule-count hint above the root; refused at the root and for unknown flags. */
static void test_matcher_layout(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_dr_matcher_layout l = {.flags = MLX5DV_DR_MATCHER_LAYOUT_NUM_RULE, .log_num_of_rules_hint = 5};
	struct mlx5dv_dr_domain *d;
	struct mlx5dv_dr_matcher *m0, *m1;

	CHECK(c != NULL);
	d = domain(c, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	CHECK(d != NULL);
	m0 = dmac_matcher(table(d, 0), 0);
	m1 = dmac_matcher(table(d, 1), 0);
	CHECK(m0 != NULL && m1 != NULL);
	CHECK_OK(mlx5dv_dr_matcher_set_layout(m1, &l));
	l.log_num_of_rules_hint = 6;
	CHECK_OK(mlx5dv_dr_matcher_set_layout(m1, &l));
	l.flags = MLX5DV_DR_MATCHER_LAYOUT_RESIZABLE;
	CHECK_OK(mlx5dv_dr_matcher_set_layout(m1, &l));
	CHECK_ERR(mlx5dv_dr_matcher_set_layout(m0, &l), EOPNOTSUPP);
	l.flags = 0x4;
	CHECK_ERR(mlx5dv_dr_matcher_set_layout(m1, &l), EOPNOTSUPP);
	l.flags = MLX5DV_DR_MATCHER_LAYOUT_NUM_RULE;
	l.log_num_of_rules_hint = 25; /* beyond log_max_ft_size */
	CHECK_ERR(mlx5dv_dr_matcher_set_layout(m1, &l), EOPNOTSUPP);
	CHECK_ERR(mlx5dv_dr_matcher_set_layout(NULL, &l), EINVAL);
}

/* ---- Rules and actions ---- */

static void test_rule(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_dr_domain *d, *d2;
	struct mlx5dv_dr_table *t0, *t1, *t2, *other;
	struct mlx5dv_dr_matcher *m0, *m1;
	struct mlx5dv_dr_action *drop, *miss, *to1, *to0_other, *two[2];
	struct mlx5dv_dr_rule *r, *r2;
	struct match v;

	CHECK(c != NULL);
	d = domain(c, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	d2 = domain(c, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	CHECK(d != NULL && d2 != NULL);
	t0 = table(d, 0);
	t1 = table(d, 1);
	t2 = table(d, 2);
	other = table(d2, 1);
	CHECK(t0 != NULL && t1 != NULL && t2 != NULL && other != NULL);
	m0 = dmac_matcher(t0, 0);
	m1 = dmac_matcher(t2, 0);
	drop = action(mlx5dv_dr_action_create_drop());
	miss = action(mlx5dv_dr_action_create_default_miss());
	to1 = action(mlx5dv_dr_action_create_dest_table(t1));
	to0_other = action(mlx5dv_dr_action_create_dest_table(other));
	CHECK(m0 != NULL && m1 != NULL && drop != NULL && miss != NULL && to1 != NULL && to0_other != NULL);
	/* Rules in the root table, dropping or jumping on. */
	r = dmac_rule(m0, mac_a, drop);
	CHECK(r != NULL);
	CHECK(dmac_rule(m0, mac_b, to1) != NULL);
	CHECK(dmac_rule(m0, mac_b, drop) != NULL); /* the same value again: duplicates are allowed */
	/* A short value (whole words, the rest zero) and an empty one. */
	dmac_param(&v, mac_a);
	CHECK(rule(m0, mp(&v, 16), drop) != NULL);
	CHECK(rule(m0, mp(&v, 0), drop) != NULL);
	/* Values the mask does not cover, or of bad sizes. */
	((uint8_t *)v.buf)[0] = 0x01;	  /* smac: not in the mask */
	errno = 0;
	CHECK(mlx5dv_dr_rule_create(m0, mp(&v, 64), 1, &drop) == NULL);
	CHECK(errno == EINVAL);
	/* Not in whole words: the root's rule is the kernel's flow, which takes any length; above it EINVAL. */
	dmac_param(&v, mac_a);
	CHECK(rule(m0, mp(&v, 62), drop) != NULL);
	CHECK(rule(m0, mp(&v, 6), drop) != NULL);
	errno = 0;
	CHECK(mlx5dv_dr_rule_create(m1, mp(&v, 62), 1, &drop) == NULL);
	CHECK(errno == EINVAL);
	errno = 0;
	CHECK(mlx5dv_dr_rule_create(m0, mp(&v, MATCH_SZ + 8), 1, &drop) == NULL);
	CHECK(errno == EINVAL);
	errno = 0;
	CHECK(mlx5dv_dr_rule_create(m0, NULL, 1, &drop) == NULL);
	CHECK(errno == EINVAL);
	/* Actions: none, two terminal ones, a table not deeper or of another domain. */
	errno = 0;
	CHECK(mlx5dv_dr_rule_create(m0, mp(&v, 64), 0, &drop) == NULL);
	CHECK(errno == EINVAL);
	two[0] = drop;
	two[1] = to1;
	errno = 0;
	CHECK(mlx5dv_dr_rule_create(m0, mp(&v, 64), 2, two) == NULL);
	CHECK(errno == EOPNOTSUPP);
	errno = 0;
	CHECK(mlx5dv_dr_rule_create(m1, mp(&v, 64), 1, &to1) == NULL); /* level 2 to level 1 */
	CHECK(errno == EINVAL);
	errno = 0;
	CHECK(mlx5dv_dr_rule_create(m0, mp(&v, 64), 1, &to0_other) == NULL);
	CHECK(errno == EINVAL);
	errno = 0;
	CHECK(mlx5dv_dr_rule_create(NULL, mp(&v, 64), 1, &drop) == NULL);
	CHECK(errno == EINVAL);
	/* Destroy order: a matcher and an action go after their rules. */
	r2 = dmac_rule(m1, mac_a, drop);
	CHECK(r2 != NULL);
	CHECK_ERR(mlx5dv_dr_matcher_destroy(m1), EBUSY);
	CHECK_ERR(mlx5dv_dr_action_destroy(drop), EBUSY);
	CHECK_OK(DESTROY(mlx5dv_dr_rule_destroy, rule_cb, r2));
	CHECK_OK(DESTROY(mlx5dv_dr_matcher_destroy, matcher_cb, m1));
	CHECK_ERR(mlx5dv_dr_rule_destroy(NULL), EINVAL);
	CHECK_ERR(mlx5dv_dr_action_destroy(NULL), EINVAL);
	CHECK_OK(DESTROY(mlx5dv_dr_action_destroy, action_cb, miss));
}

static void test_vport(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_dr_domain *rx, *fdb, *fdb2;
	struct mlx5dv_dr_matcher *m, *m2;
	struct mlx5dv_dr_action *wire;
	struct mlx5dv_dr_table *t, *t2;
	struct match v;

	CHECK(c != NULL);
	rx = domain(c, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	fdb = domain(c, MLX5DV_DR_DOMAIN_TYPE_FDB);
	fdb2 = domain(c, MLX5DV_DR_DOMAIN_TYPE_FDB);
	CHECK(rx != NULL && fdb != NULL && fdb2 != NULL);
	errno = 0;
	CHECK(mlx5dv_dr_action_create_dest_vport(rx, UPLINK) == NULL); /* FDB only */
	CHECK(errno == EOPNOTSUPP);
	errno = 0;
	CHECK(mlx5dv_dr_action_create_dest_vport(fdb, 0) == NULL);	/* no vports but the uplink */
	CHECK(errno == EOPNOTSUPP);
	errno = 0;
	CHECK(mlx5dv_dr_action_create_dest_vport(fdb, UPLINK + 1) == NULL);
	CHECK(errno == EINVAL);
	errno = 0;
	CHECK(mlx5dv_dr_action_create_dest_vport(NULL, UPLINK) == NULL);
	CHECK(errno == EINVAL);
	wire = action(mlx5dv_dr_action_create_dest_vport(fdb, UPLINK));
	CHECK(wire != NULL);
	t = table(fdb, 0);
	t2 = table(fdb2, 0);
	m = t != NULL ? dmac_matcher(t, 0) : NULL;
	m2 = t2 != NULL ? dmac_matcher(t2, 0) : NULL;
	CHECK(m != NULL && m2 != NULL);
	CHECK(dmac_rule(m, mac_b, wire) != NULL);
	/* The uplink of another domain. */
	errno = 0;
	CHECK(mlx5dv_dr_rule_create(m2, dmac_param(&v, mac_b), 1, &wire) == NULL);
	CHECK(errno == EINVAL);
}

/* A TIR action outside NIC_RX, and a TIR's lifetime under rules. */
static void test_tir_action(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_dr_domain *rx, *tx;
	struct mlx5dv_dr_matcher *mrx, *mtx;
	struct mlx5dv_dr_action *to_tir;
	struct mlx5dv_devx_obj *o;
	struct mlx5dv_dr_rule *r;
	struct mlx5dv_dr_table *t;
	struct match v;

	CHECK(c != NULL);
	CHECK(port_setup() == 0);
	o = tir(c, P.rqn, NULL);
	CHECK(o != NULL);
	to_tir = action(mlx5dv_dr_action_create_dest_devx_tir(o));
	CHECK(to_tir != NULL);
	rx = domain(c, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	tx = domain(c, MLX5DV_DR_DOMAIN_TYPE_NIC_TX);
	CHECK(rx != NULL && tx != NULL);
	t = table(tx, 0);
	mtx = t != NULL ? dmac_matcher(t, 0) : NULL;
	t = table(rx, 0);
	mrx = t != NULL ? dmac_matcher(t, 0) : NULL;
	CHECK(mtx != NULL && mrx != NULL);
	errno = 0;
	CHECK(mlx5dv_dr_rule_create(mtx, dmac_param(&v, mac_a), 1, &to_tir) == NULL);
	CHECK(errno == EOPNOTSUPP);
	r = dmac_rule(mrx, mac_a, to_tir);
	CHECK(r != NULL);
	/* The TIR stays while a rule sends frames to it. */
	CHECK_ERR(mlx5dv_devx_obj_destroy(o), EBUSY);
	CHECK_OK(DESTROY(mlx5dv_dr_rule_destroy, rule_cb, r));
	CHECK_OK(DESTROY(mlx5dv_devx_obj_destroy, obj_cb, o));
	/* Named by number, the action outlives it; a new rule finds no TIR. */
	errno = 0;
	CHECK(mlx5dv_dr_rule_create(mrx, dmac_param(&v, mac_a), 1, &to_tir) == NULL);
	CHECK(errno == EINVAL);
}

/* ---- Frames ---- */

static void check_delivered(uint32_t slot, const uint8_t *sent, uint32_t len)
{
	struct mlx5_cqe64 *cqe = (struct mlx5_cqe64 *)hw_cq_ring(P.rcq) + slot;

	CHECK(memcmp(rx_buf(slot), sent, len) == 0);
	CHECK(mlx5dv_get_cqe_opcode(cqe) == MLX5_CQE_RESP_SEND);
	CHECK(be32toh(cqe->byte_cnt) == len);
	CHECK((be32toh(cqe->sop_drop_qpn) & 0xffffff) == P.rqn);
}

/* A NIC_RX rule on dmac steers the SQ's frame to the RQ through a TIR; another dmac is dropped. */
static void test_frames_to_tir(void)
{
	struct ibv_context *c = vf_open();
	uint8_t *tx = NULL;
	struct hw_eth_stats s0, s1;
	struct mlx5dv_dr_action *to_tir;
	struct mlx5dv_dr_matcher *m;
	struct mlx5dv_devx_obj *o;
	struct mlx5dv_dr_table *t;
	struct mlx5dv_dr_domain *d;
	uint32_t len;

	CHECK(c != NULL);
	CHECK(port_setup() == 0);
	tx = P.mem + TX_OFF;
	o = tir(c, P.rqn, NULL);
	CHECK(o != NULL);
	to_tir = action(mlx5dv_dr_action_create_dest_devx_tir(o));
	d = domain(c, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	t = d != NULL ? table(d, 0) : NULL;
	m = t != NULL ? dmac_matcher(t, 0) : NULL;
	CHECK(to_tir != NULL && m != NULL);
	CHECK(dmac_rule(m, mac_a, to_tir) != NULL);
	CHECK_OK(mlx5dv_dr_domain_sync(d, MLX5DV_DR_DOMAIN_SYNC_FLAGS_SW));
	rq_post();
	rq_post();
	hw_eth_get_stats(&s0);
	len = frame(tx, mac_a, 200, 1);
	CHECK_OK(sq_send(len));
	check_delivered(0, tx, len);
	/* Another dmac: no rule, dropped by the receive steering, the RQ's next WQE untouched. */
	frame(tx, mac_b, 90, 2);
	CHECK_OK(sq_send(90));
	hw_eth_get_stats(&s1);
	CHECK(s1.rx_frames == s0.rx_frames + 1);
	CHECK(s1.rx_dropped == s0.rx_dropped + 1);
	CHECK(s1.tx_frames == s0.tx_frames + 2);
	CHECK(rx_buf(1)[0] == 0);
	/* The first dmac again: the next WQE. */
	len = frame(tx, mac_a, 1500, 3);
	CHECK_OK(sq_send(len));
	check_delivered(1, tx, len);
}

/* The root table jumps to level 1, whose rule names the TIR; a drop rule in the root wins for its dmac. */
static void test_frames_through_tables(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_dr_action *to_tir, *to1, *drop;
	struct mlx5dv_dr_matcher *m0, *m1, *all;
	struct mlx5dv_dr_table *t0, *t1;
	struct mlx5dv_dr_domain *d;
	struct hw_eth_stats s0, s1;
	struct mlx5dv_devx_obj *o;
	uint8_t *tx;
	uint32_t len;

	CHECK(c != NULL);
	CHECK(port_setup() == 0);
	tx = P.mem + TX_OFF;
	o = tir(c, P.rqn, NULL);
	d = domain(c, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	CHECK(o != NULL && d != NULL);
	t0 = table(d, 0);
	t1 = table(d, 1);
	CHECK(t0 != NULL && t1 != NULL);
	to_tir = action(mlx5dv_dr_action_create_dest_devx_tir(o));
	to1 = action(mlx5dv_dr_action_create_dest_table(t1));
	drop = action(mlx5dv_dr_action_create_drop());
	m0 = dmac_matcher(t0, 0);
	all = matcher(t0, 10, 0, NULL);		/* after m0: everything else */
	m1 = matcher(t1, 0, 0, NULL);
	CHECK(to_tir != NULL && to1 != NULL && drop != NULL && m0 != NULL && all != NULL && m1 != NULL);
	CHECK(dmac_rule(m0, mac_b, drop) != NULL);
	CHECK(rule(all, NULL, to1) == NULL);	/* a NULL value is refused */
	CHECK(kept(mlx5dv_dr_rule_create(all, &(struct mlx5dv_flow_match_parameters){.match_sz = 0}, 1, &to1),
		   rule_cb) != NULL);
	CHECK(kept(mlx5dv_dr_rule_create(m1, &(struct mlx5dv_flow_match_parameters){.match_sz = 0}, 1, &to_tir),
		   rule_cb) != NULL);
	rq_post();
	hw_eth_get_stats(&s0);
	frame(tx, mac_b, 64, 4);
	CHECK_OK(sq_send(64));
	len = frame(tx, mac_a, 333, 5);
	CHECK_OK(sq_send(len));
	hw_eth_get_stats(&s1);
	CHECK(s1.rx_dropped == s0.rx_dropped + 1);
	CHECK(s1.rx_frames == s0.rx_frames + 1);
	check_delivered(0, tx, len);
}

/* mlx5dv_dr_domain_allow_duplicate_rules: a second rule of the same value in a matcher above level 0 is EEXIST when refused. */
static void test_duplicates(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_dr_domain *d;
	struct mlx5dv_dr_table *t0, *t1;
	struct mlx5dv_dr_matcher *m0, *m1;
	struct mlx5dv_dr_action *drop;
	struct match v;

	CHECK(c != NULL);
	d = domain(c, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	CHECK(d != NULL);
	t0 = table(d, 0);
	t1 = table(d, 1);
	CHECK(t0 != NULL && t1 != NULL);
	m0 = dmac_matcher(t0, 0);
	m1 = dmac_matcher(t1, 0);
	drop = action(mlx5dv_dr_action_create_drop());
	CHECK(m0 != NULL && m1 != NULL && drop != NULL);
	/* Allowed by default. */
	CHECK(dmac_rule(m1, mac_a, drop) != NULL);
	CHECK(dmac_rule(m1, mac_a, drop) != NULL);
	mlx5dv_dr_domain_allow_duplicate_rules(d, false);
	errno = 0;
	CHECK(mlx5dv_dr_rule_create(m1, dmac_param(&v, mac_a), 1, &drop) == NULL);
	CHECK(errno == EEXIST);
	CHECK(dmac_rule(m1, mac_b, drop) != NULL);	/* another value */
	CHECK(dmac_rule(m0, mac_a, drop) != NULL);	/* the root table: not checked */
	CHECK(dmac_rule(m0, mac_a, drop) != NULL);
	mlx5dv_dr_domain_allow_duplicate_rules(d, true);
	CHECK(dmac_rule(m1, mac_b, drop) != NULL);
	mlx5dv_dr_domain_allow_duplicate_rules(NULL, false); /* not a domain: nothing happens */
}

/* ---- Dump (mlx5dv_dump(3); records as rdma-core's dr_dbg.c writes them) ---- */

/* The dump of obj by fn into a string (freed when the case ends). */
#define DUMP(fn, obj, out)                                                                                             \
	do {                                                                                                           \
		size_t n_;                                                                                             \
		FILE *f_ = open_memstream(&(out), &n_);                                                                \
		CHECK(f_ != NULL);                                                                                     \
		CHECK_OK(fn(f_, obj));                                                                                 \
		CHECK(fclose(f_) == 0);                                                                                \
		th_defer(free, (out));                                                                                 \
	} while (0)

static void test_dump(void)
{
	struct ibv_context *c = vf_open();
	struct mlx5dv_dr_domain *d;
	struct mlx5dv_dr_table *t;
	struct mlx5dv_dr_matcher *m;
	struct mlx5dv_dr_action *drop, *push;
	struct mlx5dv_dr_rule *r;
	struct mlx5dv_dr_action *acts[2];
	struct match v;
	char *out = NULL, dom[160], tbl[96], mat[96], mask[256], rul[96], act[128];
	char hex[129] = {0};
	unsigned long long did;
	uint32_t hdr = htobe32(0x8100a123);

	CHECK(c != NULL);
	d = domain(c, MLX5DV_DR_DOMAIN_TYPE_NIC_TX);
	t = d != NULL ? table(d, 1) : NULL;
	CHECK(t != NULL);
	m = dmac_matcher(t, 2);
	drop = action(mlx5dv_dr_action_create_drop());
	push = action(mlx5dv_dr_action_create_push_vlan(d, hdr));
	CHECK(m != NULL && drop != NULL && push != NULL);
	acts[0] = push;
	acts[1] = drop;
	r = kept(mlx5dv_dr_rule_create(m, dmac_param(&v, mac_a), 2, acts), rule_cb);
	CHECK(r != NULL);
	did = ((unsigned long long)getpid() << 8) | MLX5DV_DR_DOMAIN_TYPE_NIC_TX;
	snprintf(dom, sizeof(dom), "3000,0x%llx,1,00,1,44.0,%s,0,0,0,0\n", did, c->device->dev_name);
	snprintf(tbl, sizeof(tbl), "3100,0x%llx,0x%llx,1,1\n", (unsigned long long)(uintptr_t)t, did);
	snprintf(mat, sizeof(mat), "3200,0x%llx,0x%llx,2\n", (unsigned long long)(uintptr_t)m,
		 (unsigned long long)(uintptr_t)t);
	for (int i = 0; i < 64; i++)
		sprintf(hex + 2 * i, "%02x", i >= DMAC_OFF && i < DMAC_OFF + 6 ? 0xff : 0);
	snprintf(mask, sizeof(mask), "3205,0x%llx,%s,,,,,,\n", (unsigned long long)(uintptr_t)m, hex);
	snprintf(rul, sizeof(rul), "3300,0x%llx,0x%llx\n", (unsigned long long)(uintptr_t)r,
		 (unsigned long long)(uintptr_t)m);
	snprintf(act, sizeof(act), "3412,0x%llx,0x%llx,0x%x\n3403,0x%llx,0x%llx\n", (unsigned long long)(uintptr_t)push,
		 (unsigned long long)(uintptr_t)r, hdr, (unsigned long long)(uintptr_t)drop,
		 (unsigned long long)(uintptr_t)r);
	{
		char want[1024];

		snprintf(want, sizeof(want), "%s%s%s%s%s%s", dom, tbl, mat, mask, rul, act);
		DUMP(mlx5dv_dump_dr_domain, d, out);
		CHECK(strcmp(out, want) == 0);
		DUMP(mlx5dv_dump_dr_table, t, out);
		CHECK(strcmp(out, want) == 0);
		DUMP(mlx5dv_dump_dr_matcher, m, out);
		CHECK(strcmp(out, want) == 0);
		DUMP(mlx5dv_dump_dr_rule, r, out);
		CHECK(strcmp(out, want) == 0);
	}
	/* An empty domain: its record alone. */
	{
		struct mlx5dv_dr_domain *rx = domain(c, MLX5DV_DR_DOMAIN_TYPE_NIC_RX);

		CHECK(rx != NULL);
		snprintf(dom, sizeof(dom), "3000,0x%llx,0,00,1,44.0,%s,0,0,0,0\n",
			 ((unsigned long long)getpid() << 8) | MLX5DV_DR_DOMAIN_TYPE_NIC_RX, c->device->dev_name);
		DUMP(mlx5dv_dump_dr_domain, rx, out);
		CHECK(strcmp(out, dom) == 0);
		/* A tag action's record: rdma-core's ACTION_TAG with the tag. */
		{
			struct mlx5dv_dr_table *rt = table(rx, 1);
			struct mlx5dv_dr_matcher *rm = rt != NULL ? dmac_matcher(rt, 0) : NULL;
			struct mlx5dv_dr_action *tag = action(mlx5dv_dr_action_create_tag(0x123));
			struct mlx5dv_dr_rule *rr;

			CHECK(rm != NULL && tag != NULL);
			acts[0] = tag;
			acts[1] = drop;
			rr = kept(mlx5dv_dr_rule_create(rm, dmac_param(&v, mac_a), 2, acts), rule_cb);
			CHECK(rr != NULL);
			snprintf(act, sizeof(act), "3407,0x%llx,0x%llx,0x123\n", (unsigned long long)(uintptr_t)tag,
				 (unsigned long long)(uintptr_t)rr);
			DUMP(mlx5dv_dump_dr_rule, rr, out);
			CHECK(strstr(out, act) != NULL);
		}
	}
	CHECK_ERR(mlx5dv_dump_dr_domain(NULL, d), EINVAL);
	CHECK_ERR(mlx5dv_dump_dr_domain(stdout, NULL), EINVAL);
	CHECK_ERR(mlx5dv_dump_dr_table(stdout, NULL), EINVAL);
	CHECK_ERR(mlx5dv_dump_dr_matcher(stdout, NULL), EINVAL);
	CHECK_ERR(mlx5dv_dump_dr_rule(stdout, NULL), EINVAL);
}

int main(void)
{
	RUN(test_devx_unknown_opcode);
	RUN(test_devx_tir_refused);
	RUN(test_devx_tir);
	RUN(test_domain);
	RUN(test_table);
	RUN(test_matcher);
	RUN(test_matcher_layout);
	RUN(test_rule);
	RUN(test_vport);
	RUN(test_tir_action);
	RUN(test_frames_to_tir);
	RUN(test_frames_through_tables);
	RUN(test_duplicates);
	RUN(test_dump);
	return th_summary("test_verbs_dr");
}
