/*
 * The emulated Ethernet port: header parsing into the match layout, the
 * steering tables, and SQ -> steering -> loopback wire -> steering -> RQ.
 *
 * The test is the program: it writes send WQEs (control segment, Ethernet
 * segment with the inline header, data segments) into the SQ's ring in
 * basic blocks, receive WQEs into the RQ's ring, and polls CQEs by owner
 * bit. Steering is process-wide: every case removes what it created.
 */
#include <endian.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "hw_cq.h"
#include "hw_eth.h"
#include "hw_mem.h"
#include "hw_prm.h"
#include "hw_qp.h"
#include "hw_steer.h"

#define MEM_LEN (4u << 20)
#define LOG_CQ 10
#define LOG_SQ 6
#define LOG_RQ 6
#define LOG_RQ_STRIDE 5 /* two data segments */
#define SQN0 0x501
#define SQN1 0x502
#define RQN0 0x601
#define RQN1 0x602
#define MAX_OBJ 32

/* Offsets in the match layout (fte_match_set_lyr_2_4). */
#define M_ETHERTYPE 6
#define M_DMAC 8
#define M_IP_PROTOCOL 16
#define M_UDP_DPORT 30

struct poller {
	uint8_t *buf;
	uint32_t *dbrec;
	uint32_t cnt;
	uint32_t ci;
};

struct txq {
	struct hw_eth_sq *sq;
	struct hw_cq *cq;
	uint8_t *ring;
	uint32_t *dbrec;
	struct poller pc;
	uint32_t pi;
	uint32_t sqn;
};

struct rxq {
	struct hw_eth_rq *rq;
	struct hw_cq *cq;
	uint8_t *ring;
	uint32_t *dbrec;
	struct poller pc;
	uint32_t pi;
	uint32_t log_size;
	uint32_t log_stride;
};

static struct {
	struct hw_pd *pd;
	uint8_t *mem;
	uint32_t key;
	struct txq tx[2];
	struct rxq rx[2];
	uint32_t tirs[MAX_OBJ];
	uint32_t ntirs;
	struct hw_steer_rule *rules[MAX_OBJ];
	uint32_t nrules;
	struct hw_steer_matcher *matchers[MAX_OBJ];
	uint32_t nmatchers;
	struct hw_steer_table *tables[MAX_OBJ];
	uint32_t ntables;
	struct hw_steer_domain *domains[MAX_OBJ];
	uint32_t ndomains;
} E;

/* ---- Environment ---- */

static void txq_free(struct txq *t)
{
	hw_eth_sq_destroy(t->sq);
	hw_cq_destroy(t->cq);
	free(t->ring);
	free(t->dbrec);
	memset(t, 0, sizeof(*t));
}

static void rxq_free(struct rxq *r)
{
	hw_eth_rq_destroy(r->rq);
	hw_cq_destroy(r->cq);
	free(r->ring);
	free(r->dbrec);
	memset(r, 0, sizeof(*r));
}

/* Everything of the case, rules first: each layer refuses to go while the one above it lives. */
static void env_teardown(void *arg)
{
	(void)arg;
	while (E.nrules > 0)
		hw_steer_rule_destroy(E.rules[--E.nrules]);
	while (E.nmatchers > 0)
		(void)hw_steer_matcher_destroy(E.matchers[--E.nmatchers]);
	while (E.ntables > 0)
		(void)hw_steer_table_destroy(E.tables[--E.ntables]);
	while (E.ndomains > 0)
		(void)hw_steer_domain_destroy(E.domains[--E.ndomains]);
	while (E.ntirs > 0)
		(void)hw_eth_tir_destroy(E.tirs[--E.ntirs]);
	for (int i = 0; i < 2; i++) {
		txq_free(&E.tx[i]);
		rxq_free(&E.rx[i]);
	}
	if (E.key != 0)
		hw_mkey_dereg(E.key);
	free(E.mem);
	hw_pd_free(E.pd);
	memset(&E, 0, sizeof(E));
}

static void poller_init(struct poller *p, struct hw_cq *cq)
{
	p->buf = (uint8_t *)hw_cq_ring(cq);
	p->dbrec = hw_cq_dbrec(cq);
	p->cnt = 1u << hw_cq_log_size(cq);
	p->ci = 0;
}

static int txq_setup(struct txq *t, uint32_t sqn, uint32_t log_size, uint32_t log_cq)
{
	struct hw_cq_attr ca = { .log_size = log_cq };
	struct hw_eth_sq_attr a = { .sqn = sqn, .pd = E.pd, .log_size = log_size };

	t->ring = aligned_alloc(64, (size_t)64 << log_size);
	t->dbrec = aligned_alloc(64, 64);
	if (t->ring == NULL || t->dbrec == NULL || hw_cq_create(&ca, &t->cq) != HW_OK)
		return -1;
	memset(t->ring, 0, (size_t)64 << log_size);
	memset(t->dbrec, 0, 64);
	a.cq = t->cq;
	a.ring = t->ring;
	a.dbrec = &t->dbrec[1];
	t->sqn = sqn;
	poller_init(&t->pc, t->cq);
	return hw_eth_sq_create(&a, &t->sq) == HW_OK ? 0 : -1;
}

static int rxq_setup(struct rxq *r, uint32_t rqn, uint32_t log_size, uint32_t log_stride, uint32_t log_cq)
{
	struct hw_cq_attr ca = { .log_size = log_cq };
	struct hw_eth_rq_attr a = { .rqn = rqn, .pd = E.pd, .log_size = log_size, .log_stride = log_stride };
	size_t len = (size_t)1 << (log_size + log_stride);

	r->ring = aligned_alloc(64, len < 64 ? 64 : len);
	r->dbrec = aligned_alloc(64, 64);
	if (r->ring == NULL || r->dbrec == NULL || hw_cq_create(&ca, &r->cq) != HW_OK)
		return -1;
	memset(r->ring, 0, len);
	memset(r->dbrec, 0, 64);
	a.cq = r->cq;
	a.ring = r->ring;
	a.dbrec = &r->dbrec[0];
	r->log_size = log_size;
	r->log_stride = log_stride;
	poller_init(&r->pc, r->cq);
	return hw_eth_rq_create(&a, &r->rq) == HW_OK ? 0 : -1;
}

/* A domain, memory and its key; queues are the case's. */
static int env_setup(void)
{
	memset(&E, 0, sizeof(E));
	th_defer(env_teardown, NULL);
	E.pd = hw_pd_alloc_private(0);
	E.mem = aligned_alloc(4096, MEM_LEN);
	if (E.pd == NULL || E.mem == NULL)
		return -1;
	memset(E.mem, 0, MEM_LEN);
	return hw_mkey_reg(E.pd, E.mem, (uintptr_t)E.mem, MEM_LEN, HW_ACCESS_LOCAL_WRITE, &E.key) == HW_OK ? 0 : -1;
}

/* The usual port: SQ 0 and RQ 0. */
static int port_setup(void)
{
	if (env_setup() != 0 || txq_setup(&E.tx[0], SQN0, LOG_SQ, LOG_CQ) != 0)
		return -1;
	return rxq_setup(&E.rx[0], RQN0, LOG_RQ, LOG_RQ_STRIDE, LOG_CQ);
}

static uint32_t tir_of(uint32_t rqn)
{
	uint32_t t = 0;

	if (hw_eth_tir_create(rqn, &t) != HW_OK)
		return 0;
	E.tirs[E.ntirs++] = t;
	return t;
}

static struct hw_steer_domain *domain(enum hw_steer_domain_type type)
{
	struct hw_steer_domain *d = NULL;

	if (hw_steer_domain_create(type, &d) != HW_OK)
		return NULL;
	E.domains[E.ndomains++] = d;
	return d;
}

static struct hw_steer_table *table(struct hw_steer_domain *d, uint32_t level)
{
	struct hw_steer_table *t = NULL;

	if (hw_steer_table_create(d, level, &t) != HW_OK)
		return NULL;
	E.tables[E.ntables++] = t;
	return t;
}

static struct hw_steer_matcher *matcher(struct hw_steer_table *t, uint16_t prio, const uint8_t *mask)
{
	struct hw_steer_matcher *m = NULL;

	if (hw_steer_matcher_create(t, prio, mask, &m) != HW_OK)
		return NULL;
	E.matchers[E.nmatchers++] = m;
	return m;
}

static enum hw_status rule(struct hw_steer_matcher *m, const uint8_t *value, struct hw_steer_action a)
{
	struct hw_steer_rule *r = NULL;
	enum hw_status st = hw_steer_rule_create(m, value, &a, 1, &r);

	if (st == HW_OK)
		E.rules[E.nrules++] = r;
	return st;
}

/* Destroys the case's latest rule (and forgets it). */
static void drop_last_rule(void)
{
	hw_steer_rule_destroy(E.rules[--E.nrules]);
}

static struct hw_steer_action act_tir(uint32_t tirn)
{
	return (struct hw_steer_action){ .type = HW_STEER_ACT_TIR, .tirn = tirn };
}

static struct hw_steer_action act_table(struct hw_steer_table *t)
{
	return (struct hw_steer_action){ .type = HW_STEER_ACT_TABLE, .table = t };
}

static struct hw_steer_action act(enum hw_steer_action_type type)
{
	return (struct hw_steer_action){ .type = type };
}

/* A mask (or value) of the destination MAC only. */
static void match_dmac(uint8_t b[HW_STEER_MATCH_BYTES], const uint8_t mac[6])
{
	memset(b, 0, HW_STEER_MATCH_BYTES);
	memcpy(b + M_DMAC, mac, 6);
}

static void match_udp(uint8_t b[HW_STEER_MATCH_BYTES], uint8_t proto, uint16_t dport)
{
	memset(b, 0, HW_STEER_MATCH_BYTES);
	b[M_IP_PROTOCOL] = proto;
	b[M_UDP_DPORT] = (uint8_t)(dport >> 8);
	b[M_UDP_DPORT + 1] = (uint8_t)dport;
}

static const uint8_t MAC_ALL[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t MAC_A[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0a };
static const uint8_t MAC_B[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0b };
static const uint8_t MAC_C[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x0c };
static const uint8_t MAC_SRC[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x02 };

/* ---- Frames ---- */

/* An IPv4/UDP frame of len bytes (>= 42) to dmac and dport; the payload a pattern of seed. */
static uint32_t udp_frame(uint8_t *f, uint32_t len, const uint8_t dmac[6], uint16_t dport, uint8_t seed)
{
	static const uint8_t ip[20] = { 0x45, 0xb8, 0x00, 0x20, 0x12, 0x34, 0x00, 0x00, 0x40, 0x11,
					0x00, 0x00, 0xc0, 0xa8, 0x01, 0x02, 0x0a, 0x00, 0x00, 0x01 };

	memcpy(f, dmac, 6);
	memcpy(f + 6, MAC_SRC, 6);
	f[12] = 0x08;
	f[13] = 0x00;
	memcpy(f + 14, ip, sizeof(ip));
	f[34] = 0x13; /* source port 5000 */
	f[35] = 0x88;
	f[36] = (uint8_t)(dport >> 8);
	f[37] = (uint8_t)dport;
	f[38] = 0x00;
	f[39] = 0x0c;
	f[40] = 0;
	f[41] = 0;
	for (uint32_t k = 42; k < len; k++)
		f[k] = (uint8_t)(seed * 31 + k * 7);
	return len;
}

/* ---- Parsing ---- */

static void expect_bytes(uint8_t *exp, uint32_t off, const uint8_t *b, uint32_t n)
{
	memcpy(exp + off, b, n);
}

static void test_parse_ipv4_udp(void)
{
	uint8_t f[64], got[64], exp[64] = { 0 };

	udp_frame(f, 46, MAC_A, 53, 1);
	hw_steer_parse(f, 46, got);
	expect_bytes(exp, 0, MAC_SRC, 6);
	exp[6] = 0x08;
	exp[7] = 0x00;
	expect_bytes(exp, 8, MAC_A, 6);
	exp[16] = 0x11;		    /* UDP */
	exp[17] = 0xb8;		    /* DSCP 46 (EF), ECN 0 */
	exp[18] = 0x08;		    /* ip_version 4 << 9 */
	exp[26] = 0x50;		    /* ihl 5 */
	exp[27] = 0x40;		    /* TTL 64 */
	exp[28] = 0x13, exp[29] = 0x88; /* 5000 */
	exp[31] = 53;
	expect_bytes(exp, 44, (const uint8_t[]){ 0xc0, 0xa8, 0x01, 0x02 }, 4);
	expect_bytes(exp, 60, (const uint8_t[]){ 0x0a, 0x00, 0x00, 0x01 }, 4);
	CHECK(memcmp(got, exp, 64) == 0);

	/* A first fragment (MF): frag set, no ports. */
	f[20] = 0x20;
	hw_steer_parse(f, 46, got);
	exp[18] = 0x28;
	memset(exp + 28, 0, 4);
	CHECK(memcmp(got, exp, 64) == 0);
	/* A later fragment (offset only). */
	f[20] = 0x00;
	f[21] = 0x10;
	hw_steer_parse(f, 46, got);
	CHECK(memcmp(got, exp, 64) == 0);
	/* The UDP header cut short: no ports, the IP fields stay. */
	f[21] = 0x00;
	hw_steer_parse(f, 41, got);
	exp[18] = 0x08;
	CHECK(memcmp(got, exp, 64) == 0);
}

static void test_parse_vlan_ipv4_tcp(void)
{
	static const uint8_t f[] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x0a, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x81, 0x00,
		0xa1, 0x23,			/* prio 5, cfi 0, vid 0x123 */
		0x08, 0x00,			/* IPv4 */
		0x46, 0x03, 0x00, 0x30,		/* ihl 6, ECN 3, total 48 */
		0xbe, 0xef, 0x40, 0x00,		/* DF only: not a fragment */
		0x20, 0x06, 0x00, 0x00,		/* TTL 32, TCP */
		0x01, 0x02, 0x03, 0x04,		/* source */
		0x05, 0x06, 0x07, 0x08,		/* destination */
		0x01, 0x01, 0x00, 0x00,		/* 4 bytes of options */
		0x12, 0x34, 0x00, 0x50,		/* ports 0x1234 -> 80 */
		0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
		0x51, 0x12,			/* data offset 5, NS; SYN|ACK */
		0xff, 0xff, 0x00, 0x00, 0x00, 0x00,
	};
	uint8_t got[64], exp[64] = { 0 };

	hw_steer_parse(f, sizeof(f), got);
	expect_bytes(exp, 0, MAC_SRC, 6);
	exp[6] = 0x08; /* the inner ethertype */
	expect_bytes(exp, 8, MAC_A, 6);
	exp[14] = 0xa1;
	exp[15] = 0x23;
	exp[16] = 0x06;
	exp[17] = 0x03;
	exp[18] = 0x89; /* cvlan 1 << 15 | 4 << 9 | tcp_flags 0x112 = 0x8912 */
	exp[19] = 0x12;
	exp[20] = 0x12, exp[21] = 0x34;
	exp[23] = 0x50;
	exp[26] = 0x60;
	exp[27] = 0x20;
	expect_bytes(exp, 44, (const uint8_t[]){ 1, 2, 3, 4 }, 4);
	expect_bytes(exp, 60, (const uint8_t[]){ 5, 6, 7, 8 }, 4);
	CHECK(memcmp(got, exp, 64) == 0);
}

static void test_parse_ipv6_tcp(void)
{
	static const uint8_t f[] = {
		0x02, 0x00, 0x00, 0x00, 0x00, 0x0b, 0x02, 0x00, 0x00, 0x00, 0x00, 0x02, 0x86, 0xdd,
		0x6a, 0xb1, 0x23, 0x45,		/* version 6, traffic class 0xab, flow 0x12345 */
		0x00, 0x14, 0x06, 0x3f,		/* payload 20, TCP, hop limit 63 */
		0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01,
		0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x02,
		0x04, 0x00, 0x01, 0xbb,		/* ports 1024 -> 443 */
		0, 0, 0, 0, 0, 0, 0, 0,
		0x50, 0x02,			/* SYN */
		0xff, 0xff, 0, 0, 0, 0,
	};
	uint8_t got[64], exp[64] = { 0 };

	hw_steer_parse(f, sizeof(f), got);
	expect_bytes(exp, 0, MAC_SRC, 6);
	exp[6] = 0x86;
	exp[7] = 0xdd;
	expect_bytes(exp, 8, MAC_B, 6);
	exp[16] = 0x06;
	exp[17] = 0xab;
	exp[18] = 0x0c; /* 6 << 9 | SYN = 0x0c02 */
	exp[19] = 0x02;
	exp[20] = 0x04, exp[21] = 0x00;
	exp[22] = 0x01, exp[23] = 0xbb;
	exp[27] = 0x3f;
	expect_bytes(exp, 32, f + 22, 16);
	expect_bytes(exp, 48, f + 38, 16);
	CHECK(memcmp(got, exp, 64) == 0);
}

static void test_parse_runt(void)
{
	uint8_t f[64], got[64], zero[64] = { 0 };

	udp_frame(f, 64, MAC_A, 53, 2);
	memset(got, 0xee, sizeof(got));
	hw_steer_parse(f, HW_ETH_FRAME_MIN - 1, got);
	CHECK(memcmp(got, zero, 64) == 0);
	/* Just the Ethernet header: addresses and ethertype, nothing of IP. */
	hw_steer_parse(f, HW_ETH_FRAME_MIN, got);
	CHECK(memcmp(got + 8, MAC_A, 6) == 0 && memcmp(got, MAC_SRC, 6) == 0);
	CHECK(got[6] == 0x08 && got[7] == 0x00 && memcmp(got + 14, zero, 50) == 0);
}

/* ---- Steering ---- */

/* The lookups on a frame of len bytes with no room to grow (no rule here edits). */
static struct hw_steer_verdict steer_rx(uint8_t *buf, uint32_t len)
{
	struct hw_steer_frame f = {.buf = buf, .len = len, .cap = len};

	return hw_steer_rx(&f);
}

static struct hw_steer_verdict steer_tx(uint8_t *buf, uint32_t len)
{
	struct hw_steer_frame f = {.buf = buf, .len = len, .cap = len};

	return hw_steer_tx(&f);
}

static int verdict_is(struct hw_steer_verdict v, enum hw_steer_action_type type, uint32_t tirn)
{
	return v.type == type && (type != HW_STEER_ACT_TIR || v.tirn == tirn);
}

static void test_steer_match_and_priority(void)
{
	uint8_t mask[64], val[64], f[64];
	struct hw_steer_domain *d;
	struct hw_steer_table *t;
	struct hw_steer_matcher *by_mac, *by_mac2, *by_udp;
	uint32_t tir1, tir2, tir3;

	CHECK(port_setup() == 0);
	tir1 = tir_of(RQN0);
	tir2 = tir_of(RQN0);
	tir3 = tir_of(RQN0);
	CHECK(tir1 != 0 && tir2 > tir1 && tir3 > tir2);
	CHECK((d = domain(HW_STEER_NIC_RX)) != NULL);
	CHECK((t = table(d, 0)) != NULL);
	match_dmac(mask, MAC_ALL);
	CHECK((by_mac = matcher(t, 1, mask)) != NULL);
	CHECK((by_mac2 = matcher(t, 1, mask)) != NULL); /* same priority, later: looked at after by_mac */
	match_udp(mask, 0xff, 0xffff);
	CHECK((by_udp = matcher(t, 0, mask)) != NULL); /* created last, looked at first */
	match_dmac(val, MAC_A);
	CHECK_OK(rule(by_mac, val, act_tir(tir1)));
	CHECK_OK(rule(by_mac2, val, act_tir(tir3)));
	match_udp(val, 17, 53);
	CHECK_OK(rule(by_udp, val, act_tir(tir2)));

	udp_frame(f, 64, MAC_A, 53, 0);
	CHECK(verdict_is(steer_rx(f, 64), HW_STEER_ACT_TIR, tir2));
	udp_frame(f, 64, MAC_A, 54, 0);
	CHECK(verdict_is(steer_rx(f, 64), HW_STEER_ACT_TIR, tir1));
	udp_frame(f, 64, MAC_B, 53, 0);
	CHECK(verdict_is(steer_rx(f, 64), HW_STEER_ACT_TIR, tir2));
	udp_frame(f, 64, MAC_B, 54, 0);
	CHECK(verdict_is(steer_rx(f, 64), HW_STEER_ACT_DROP, 0)); /* a miss */
	/* The udp rule gone, then the first mac rule: the later matcher of equal priority decides. */
	hw_steer_rule_destroy(E.rules[2]);
	E.nrules--;
	udp_frame(f, 64, MAC_A, 53, 0);
	CHECK(verdict_is(steer_rx(f, 64), HW_STEER_ACT_TIR, tir1));
	hw_steer_rule_destroy(E.rules[0]);
	E.rules[0] = E.rules[1];
	E.nrules--;
	CHECK(verdict_is(steer_rx(f, 64), HW_STEER_ACT_TIR, tir3));
	/* Transmit with no NIC transmit or FDB rule: the wire. */
	CHECK(verdict_is(steer_tx(f, 64), HW_STEER_ACT_WIRE, 0));
}

/* A rule of n actions, kept for the case's cleanup. */
static enum hw_status rule_n(struct hw_steer_matcher *m, const uint8_t *value, const struct hw_steer_action *a,
			     uint32_t n)
{
	struct hw_steer_rule *r = NULL;
	enum hw_status st = hw_steer_rule_create(m, value, a, n, &r);

	if (st == HW_OK)
		E.rules[E.nrules++] = r;
	return st;
}

/*
 * A dest array's rule: the verdict names each TIR and what its table's
 * lookup gives, with the rule's tag; the TIRs it names are held. Refused:
 * a destination that is neither TIR nor table, none, a TIR that does not
 * exist, a tag outside NIC receive; an RSS TIR of a table not a power of
 * two or over an RQ that does not exist.
 */
static void test_steer_dests_and_tag(void)
{
	uint8_t mask[64], val[64], f[64];
	struct hw_steer_domain *d, *dtx;
	struct hw_steer_table *t0, *t1;
	struct hw_steer_matcher *m0, *m1, *mtx;
	struct hw_steer_action dests[3], acts[2];
	struct hw_steer_verdict v;
	struct hw_rss_conf conf = {.fields = HW_RSS_SRC_IPV4};
	uint32_t tir1, tir2, tir3, rqns[2] = {RQN0, RQN0 + 1}, t;

	CHECK(port_setup() == 0);
	tir1 = tir_of(RQN0);
	tir2 = tir_of(RQN0);
	tir3 = tir_of(RQN0);
	CHECK(tir1 != 0 && tir2 != 0 && tir3 != 0);
	CHECK((d = domain(HW_STEER_NIC_RX)) != NULL);
	CHECK((t0 = table(d, 0)) != NULL && (t1 = table(d, 1)) != NULL);
	match_dmac(mask, MAC_ALL);
	CHECK((m0 = matcher(t0, 0, mask)) != NULL && (m1 = matcher(t1, 0, mask)) != NULL);
	match_dmac(val, MAC_A);
	CHECK_OK(rule(m1, val, act_tir(tir3)));
	dests[0] = act_tir(tir1);
	dests[1] = act_tir(tir2);
	dests[2] = act_table(t1);
	acts[0] = (struct hw_steer_action){.type = HW_STEER_ACT_TAG, .tag = 0x42};
	acts[1] = (struct hw_steer_action){.type = HW_STEER_ACT_DESTS, .dests = dests, .n_dests = 3};
	CHECK_OK(rule_n(m0, val, acts, 2));
	udp_frame(f, 64, MAC_A, 53, 0);
	v = steer_rx(f, 64);
	CHECK(v.type == HW_STEER_ACT_TIR && v.n_tirs == 3 && v.flow_tag == 0x42);
	CHECK(v.tirns[0] == tir1 && v.tirns[1] == tir2 && v.tirns[2] == tir3 && v.tirn == tir1);
	CHECK(hw_eth_tir_destroy(tir2) == HW_ERR_INVAL); /* the array names it */
	/* Refusals. */
	match_dmac(val, MAC_B);
	dests[2] = act(HW_STEER_ACT_DROP);
	CHECK(rule_n(m0, val, acts, 2) == HW_ERR_INVAL);
	acts[1].n_dests = 0;
	CHECK(rule_n(m0, val, acts, 2) == HW_ERR_INVAL);
	dests[0] = act_tir(0xfffff0);
	acts[1].n_dests = 1;
	CHECK(rule_n(m0, val, acts, 2) == HW_ERR_KEY);
	CHECK((dtx = domain(HW_STEER_NIC_TX)) != NULL);
	CHECK((t = 0, mtx = matcher(table(dtx, 0), 0, mask)) != NULL);
	CHECK(rule_n(mtx, val, acts, 1) == HW_ERR_INVAL); /* a tag on transmit */
	CHECK(hw_eth_tir_create_rss(&conf, rqns, 2, &t) == HW_ERR_KEY); /* RQN0 + 1 is none */
	CHECK(hw_eth_tir_create_rss(&conf, rqns, 3, &t) == HW_ERR_INVAL);
	CHECK(t == 0);
}

static void test_steer_jumps(void)
{
	uint8_t mask[64], val[64], f[64];
	struct hw_steer_domain *d, *d2;
	struct hw_steer_table *t0, *t0b, *t5, *t5b, *other;
	struct hw_steer_matcher *m0, *m5;
	uint32_t tir;

	CHECK(port_setup() == 0);
	CHECK((tir = tir_of(RQN0)) != 0);
	CHECK((d = domain(HW_STEER_NIC_RX)) != NULL && (d2 = domain(HW_STEER_NIC_RX)) != NULL);
	CHECK((t5 = table(d, 5)) != NULL);   /* created first, but not the lowest level */
	CHECK((t0 = table(d, 0)) != NULL);   /* the root */
	CHECK((t0b = table(d, 0)) != NULL);  /* the same level, later: not the root */
	CHECK((t5b = table(d, 5)) != NULL);
	CHECK((other = table(d2, 9)) != NULL);
	match_dmac(mask, MAC_ALL);
	CHECK((m0 = matcher(t0, 0, mask)) != NULL);
	match_udp(mask, 0xff, 0xffff);
	CHECK((m5 = matcher(t5, 0, mask)) != NULL);
	CHECK(matcher(t0b, 0, mask) != NULL);
	match_dmac(val, MAC_A);
	CHECK_OK(rule(m0, val, act_table(t5)));
	match_udp(val, 17, 53);
	CHECK_OK(rule(m5, val, act_tir(tir)));
	/* A rule in the non-root table of level 0 that would catch everything: never looked at. */
	CHECK_OK(rule(E.matchers[2], val, act(HW_STEER_ACT_DROP)));

	udp_frame(f, 64, MAC_A, 53, 0);
	CHECK(verdict_is(steer_rx(f, 64), HW_STEER_ACT_TIR, tir));
	udp_frame(f, 64, MAC_A, 99, 0);
	CHECK(verdict_is(steer_rx(f, 64), HW_STEER_ACT_DROP, 0)); /* a miss in t5 ends the domain */

	/* Jumps only go up, within the domain. */
	CHECK_ERR(rule(m5, val, act_table(t0)), HW_ERR_INVAL);
	CHECK_ERR(rule(m5, val, act_table(t5b)), HW_ERR_INVAL);
	CHECK_ERR(rule(m0, val, act_table(other)), HW_ERR_INVAL);
	CHECK_ERR(rule(m0, val, act_table(NULL)), HW_ERR_INVAL);
	/* No wire in a NIC receive domain; no TIR that does not exist. */
	CHECK_ERR(rule(m0, val, act(HW_STEER_ACT_WIRE)), HW_ERR_INVAL);
	CHECK_ERR(rule(m0, val, act_tir(tir + 1000)), HW_ERR_KEY);
	/* One terminal action exactly. */
	{
		struct hw_steer_action two[2] = { act(HW_STEER_ACT_DROP), act_tir(tir) };
		struct hw_steer_rule *r = NULL;

		CHECK_ERR(hw_steer_rule_create(m0, val, two, 2, &r), HW_ERR_INVAL);
		CHECK_ERR(hw_steer_rule_create(m0, val, two, 0, &r), HW_ERR_INVAL);
		two[0].type = (enum hw_steer_action_type)77;
		CHECK_ERR(hw_steer_rule_create(m0, val, two, 1, &r), HW_ERR_INVAL);
	}
	/* Any level: software steering has no limit. */
	CHECK_OK(hw_steer_table_create(d, UINT32_MAX, &other));
	CHECK_OK(hw_steer_table_destroy(other));
	CHECK_ERR(hw_steer_domain_create((enum hw_steer_domain_type)9, &d2), HW_ERR_INVAL);
}

static void test_steer_destroy_order(void)
{
	uint8_t mask[64], val[64];
	struct hw_steer_domain *d;
	struct hw_steer_table *t0, *t1;
	struct hw_steer_matcher *m;
	uint32_t tir;

	CHECK(port_setup() == 0);
	CHECK((tir = tir_of(RQN0)) != 0);
	CHECK((d = domain(HW_STEER_NIC_RX)) != NULL);
	CHECK((t0 = table(d, 0)) != NULL && (t1 = table(d, 1)) != NULL);
	match_dmac(mask, MAC_ALL);
	CHECK((m = matcher(t0, 0, mask)) != NULL);
	match_dmac(val, MAC_A);
	CHECK_OK(rule(m, val, act_tir(tir)));
	match_dmac(val, MAC_B);
	CHECK_OK(rule(m, val, act_table(t1)));

	CHECK_ERR(hw_eth_tir_destroy(tir), HW_ERR_INVAL); /* a rule names it */
	CHECK(hw_steer_tir_in_use(tir));
	CHECK_ERR(hw_steer_domain_destroy(d), HW_ERR_INVAL);
	CHECK_ERR(hw_steer_table_destroy(t0), HW_ERR_INVAL); /* matchers */
	CHECK_ERR(hw_steer_table_destroy(t1), HW_ERR_INVAL); /* a rule jumps to it */
	CHECK_ERR(hw_steer_matcher_destroy(m), HW_ERR_INVAL);
	drop_last_rule();
	CHECK_OK(hw_steer_table_destroy(t1));
	E.tables[1] = NULL;
	E.ntables = 1;
	drop_last_rule();
	CHECK(!hw_steer_tir_in_use(tir));
	CHECK_OK(hw_eth_tir_destroy(tir));
	E.ntirs--;
	CHECK_ERR(hw_eth_tir_destroy(tir), HW_ERR_KEY);
	CHECK(!hw_eth_tir_exists(tir));
	CHECK_OK(hw_steer_matcher_destroy(m));
	E.nmatchers--;
	CHECK_OK(hw_steer_table_destroy(t0));
	E.ntables--;
	CHECK_OK(hw_steer_domain_destroy(d));
	E.ndomains--;
	/* TIR numbers are never reused; a TIR needs an RQ. */
	{
		uint32_t again = tir_of(RQN0);

		CHECK(again > tir);
	}
	CHECK_ERR(hw_eth_tir_create(0x7777, &tir), HW_ERR_KEY);
}

/* Receive goes through the FDB first, transmit through the NIC transmit domain first. */
static void test_steer_paths(void)
{
	uint8_t mask[64], val[64], f[64];
	struct hw_steer_domain *rx, *tx, *fdb;
	struct hw_steer_matcher *mrx, *mtx, *mfdb;
	uint32_t tir_nic, tir_fdb;

	CHECK(port_setup() == 0);
	tir_nic = tir_of(RQN0);
	tir_fdb = tir_of(RQN0);
	CHECK(tir_nic != 0 && tir_fdb != 0);
	CHECK((rx = domain(HW_STEER_NIC_RX)) != NULL && (tx = domain(HW_STEER_NIC_TX)) != NULL);
	CHECK((fdb = domain(HW_STEER_FDB)) != NULL);
	match_dmac(mask, MAC_ALL);
	CHECK((mrx = matcher(table(rx, 0), 0, mask)) != NULL);
	CHECK((mtx = matcher(table(tx, 0), 0, mask)) != NULL);
	CHECK((mfdb = matcher(table(fdb, 0), 0, mask)) != NULL);
	match_dmac(val, MAC_A);
	CHECK_OK(rule(mrx, val, act_tir(tir_nic)));
	CHECK_OK(rule(mfdb, val, act_tir(tir_fdb)));
	udp_frame(f, 64, MAC_A, 1, 0);
	CHECK(verdict_is(steer_rx(f, 64), HW_STEER_ACT_TIR, tir_fdb));
	CHECK(verdict_is(steer_tx(f, 64), HW_STEER_ACT_TIR, tir_fdb)); /* the FDB's loop to a local queue */
	/* An FDB rule to the uplink: the frame goes on to the NIC. */
	drop_last_rule();
	CHECK_OK(rule(mfdb, val, act(HW_STEER_ACT_WIRE)));
	CHECK(verdict_is(steer_rx(f, 64), HW_STEER_ACT_TIR, tir_nic));
	CHECK(verdict_is(steer_tx(f, 64), HW_STEER_ACT_WIRE, 0));
	/* NIC transmit drops before the FDB is asked. */
	CHECK_OK(rule(mtx, val, act(HW_STEER_ACT_DROP)));
	CHECK(verdict_is(steer_tx(f, 64), HW_STEER_ACT_DROP, 0));
	udp_frame(f, 64, MAC_B, 1, 0);
	CHECK(verdict_is(steer_tx(f, 64), HW_STEER_ACT_WIRE, 0));
	CHECK(verdict_is(steer_rx(f, 64), HW_STEER_ACT_DROP, 0));
}

/* ---- Data path ---- */

static const uint8_t *poll_cqe(struct poller *p)
{
	const uint8_t *cqe = p->buf + (size_t)(p->ci & (p->cnt - 1)) * 64;
	uint8_t op_own = __atomic_load_n(&cqe[63], __ATOMIC_ACQUIRE);

	if ((op_own >> 4) == 0xf || ((op_own & 1) ^ !!(p->ci & p->cnt)))
		return NULL;
	p->ci++;
	__atomic_store_n(&p->dbrec[0], htobe32(p->ci & 0xffffff), __ATOMIC_RELEASE);
	return cqe;
}

static const struct hw_cqe64 *cqe(const uint8_t *c)
{
	return (const struct hw_cqe64 *)(const void *)c;
}

static int req_ok(const uint8_t *c, uint16_t idx, uint32_t sqn)
{
	return c != NULL && hw_cqe_opcode(cqe(c)) == HW_CQE_REQ && hw_cqe_wqe_counter(cqe(c)) == idx &&
	       hw_cqe_qpn(cqe(c)) == sqn;
}

static int resp_ok(const uint8_t *c, uint16_t idx, uint32_t rqn, uint32_t len)
{
	return c != NULL && hw_cqe_opcode(cqe(c)) == HW_CQE_RESP_SEND && hw_cqe_wqe_counter(cqe(c)) == idx &&
	       hw_cqe_qpn(cqe(c)) == rqn && hw_cqe_byte_cnt(cqe(c)) == len;
}

static int err_ok(const uint8_t *c, uint8_t op, uint8_t synd, uint16_t idx, uint32_t qpn)
{
	return c != NULL && hw_cqe_opcode(cqe(c)) == op && hw_err_cqe_syndrome(cqe(c)) == synd &&
	       hw_cqe_wqe_counter(cqe(c)) == idx && hw_cqe_qpn(cqe(c)) == qpn;
}

/* A send WQE under construction. */
struct wqe {
	uint8_t b[1024];
	uint32_t ds;
};

/* Control segment (filled at post) and Ethernet segment with the frame's first inl bytes. */
static void w_begin(struct wqe *w, const uint8_t *frame, uint16_t inl)
{
	struct hw_eth_seg *e = (void *)(w->b + 16);

	memset(w, 0, sizeof(*w));
	e->inline_hdr_sz = htobe16(inl);
	memcpy(e->inline_hdr_start, frame, inl);
	w->ds = 2 + hw_eth_seg_inline_ds(inl);
}

static void w_data(struct wqe *w, const void *addr, uint32_t len, uint32_t lkey)
{
	hw_data_seg_set((void *)(w->b + w->ds * 16), len, lkey, (uintptr_t)addr);
	w->ds++;
}

/* Copies the WQE into the ring at the producer counter (wrapping by blocks); returns its index. */
static uint16_t tx_post(struct txq *t, struct wqe *w, uint8_t fm)
{
	uint32_t nbb = (w->ds * 16 + 63) / 64, mask = (1u << LOG_SQ) - 1;
	uint16_t idx = (uint16_t)t->pi;

	hw_ctrl_seg_set((void *)w->b, idx, HW_WQE_SEND, 0, t->sqn, fm, (uint8_t)w->ds, 0);
	for (uint32_t k = 0; k < nbb; k++)
		memcpy(t->ring + (size_t)((t->pi + k) & mask) * 64, w->b + k * 64, 64);
	t->pi = (t->pi + nbb) & 0xffff;
	__atomic_store_n(&t->dbrec[1], htobe32(t->pi), __ATOMIC_RELEASE);
	return idx;
}

static enum hw_status tx_ring(struct txq *t)
{
	return hw_eth_sq_ring(t->sq, t->pi);
}

/*
 * Posts frame: inl bytes inline, the rest from src (in the key's memory)
 * in nseg data segments; returns the WQE's index.
 */
static uint16_t tx_post_frame(struct txq *t, const uint8_t *frame, uint32_t len, uint16_t inl, uint32_t nseg,
			      uint8_t *src, uint8_t fm)
{
	struct wqe w;
	uint32_t rest = len - inl, first = nseg > 1 ? rest / 2 : rest;

	memcpy(src, frame + inl, rest);
	w_begin(&w, frame, inl);
	w_data(&w, src, first, E.key);
	if (nseg > 1)
		w_data(&w, src + first, rest - first, E.key);
	return tx_post(t, &w, fm);
}

/* The same, asking for a CQE. */
static uint16_t tx_send(struct txq *t, const uint8_t *frame, uint32_t len, uint16_t inl, uint32_t nseg, uint8_t *src)
{
	return tx_post_frame(t, frame, len, inl, nseg, src, HW_WQE_CTRL_CQ_UPDATE);
}

/* A receive WQE with up to two segments (len 0: the terminator in its place). */
static uint16_t rx_post(struct rxq *r, uint8_t *a0, uint32_t l0, uint8_t *a1, uint32_t l1, uint32_t lkey)
{
	uint8_t *slot = r->ring + ((size_t)(r->pi & ((1u << r->log_size) - 1)) << r->log_stride);
	struct hw_wqe_data_seg *d = (void *)slot;
	uint32_t nseg = (1u << r->log_stride) / 16;
	uint16_t idx = (uint16_t)r->pi;

	hw_data_seg_set(&d[0], l0, lkey, (uintptr_t)a0);
	if (nseg > 1) {
		if (l1 != 0)
			hw_data_seg_set(&d[1], l1, lkey, (uintptr_t)a1);
		else
			hw_data_seg_set(&d[1], 0, HW_RQ_INVALID_LKEY, 0);
	}
	r->pi = (r->pi + 1) & 0xffff;
	__atomic_store_n(&r->dbrec[0], htobe32(r->pi), __ATOMIC_RELEASE);
	return idx;
}

/* NIC receive: dmac MAC_A to a TIR of RQ 0. */
static int steer_to_rq0(void)
{
	uint8_t mask[64], val[64];
	struct hw_steer_domain *d = domain(HW_STEER_NIC_RX);
	struct hw_steer_matcher *m;
	uint32_t tir = tir_of(RQN0);

	match_dmac(mask, MAC_ALL);
	if (d == NULL || tir == 0 || (m = matcher(table(d, 0), 0, mask)) == NULL)
		return -1;
	match_dmac(val, MAC_A);
	return rule(m, val, act_tir(tir)) == HW_OK ? 0 : -1;
}

static void test_send_receive(void)
{
	static const struct {
		uint32_t len;
		uint16_t inl;
		uint32_t nseg;
	} shapes[] = { { 60, 14, 1 }, { 200, 18, 2 }, { 128, 40, 1 }, { 1514, 40, 2 }, { 64, 0, 1 }, { 300, 14, 2 } };
	struct hw_eth_stats s0, s1;
	uint8_t *src, *rcv, frame[2048];
	uint16_t widx[8];

	CHECK(port_setup() == 0);
	CHECK(steer_to_rq0() == 0);
	src = E.mem;
	rcv = E.mem + (1u << 20);
	hw_eth_get_stats(&s0);
	for (uint32_t k = 0; k < 6; k++) {
		/* Each receive WQE scatters over two segments: 64 bytes, then the rest. */
		rx_post(&E.rx[0], rcv + k * 4096, 64, rcv + k * 4096 + 100, 2000, E.key);
	}
	for (uint32_t k = 0; k < 6; k++) {
		udp_frame(frame, shapes[k].len, MAC_A, (uint16_t)k, (uint8_t)k);
		widx[k] = tx_send(&E.tx[0], frame, shapes[k].len, shapes[k].inl, shapes[k].nseg, src + k * 4096);
	}
	CHECK_OK(tx_ring(&E.tx[0]));
	for (uint32_t k = 0; k < 6; k++) {
		uint32_t len = shapes[k].len, head = len < 64 ? len : 64;

		CHECK(req_ok(poll_cqe(&E.tx[0].pc), widx[k], SQN0));
		CHECK(resp_ok(poll_cqe(&E.rx[0].pc), (uint16_t)k, RQN0, len));
		udp_frame(frame, len, MAC_A, (uint16_t)k, (uint8_t)k);
		CHECK(memcmp(rcv + k * 4096, frame, head) == 0);
		CHECK(memcmp(rcv + k * 4096 + 100, frame + head, len - head) == 0);
	}
	CHECK(widx[1] == 1 && widx[2] == 3); /* the first WQE one block, the second two (ds 5) */
	CHECK(poll_cqe(&E.tx[0].pc) == NULL && poll_cqe(&E.rx[0].pc) == NULL);
	hw_eth_get_stats(&s1);
	CHECK(s1.tx_frames - s0.tx_frames == 6 && s1.rx_frames - s0.rx_frames == 6);
	CHECK(s1.rx_dropped == s0.rx_dropped && s1.tx_dropped == s0.tx_dropped);
}

/* WQEs that wrap the ring's end, unsignaled ones, inline data segments. */
static void test_send_wraps_and_unsignaled(void)
{
	uint8_t frame[256], *rcv;
	struct wqe w;
	uint16_t idx = 0;

	CHECK(port_setup() == 0);
	CHECK(steer_to_rq0() == 0);
	rcv = E.mem + (1u << 20);
	/* One block first: the two-block WQEs after it straddle the ring's end. */
	udp_frame(frame, 60, MAC_A, 1, 1);
	rx_post(&E.rx[0], rcv, 256, NULL, 0, E.key);
	CHECK(tx_send(&E.tx[0], frame, 60, 14, 1, E.mem + 4096) == 0);
	CHECK_OK(tx_ring(&E.tx[0]));
	CHECK(req_ok(poll_cqe(&E.tx[0].pc), 0, SQN0) && resp_ok(poll_cqe(&E.rx[0].pc), 0, RQN0, 60));
	for (uint32_t k = 0; k < 100; k++) {
		uint8_t *p = E.mem + 8192 + (k % 4) * 256;

		udp_frame(frame, 90, MAC_A, (uint16_t)k, (uint8_t)k);
		rx_post(&E.rx[0], rcv + (k % 64) * 256, 256, NULL, 0, E.key);
		w_begin(&w, frame, 18);
		memcpy(p, frame + 18, 40);
		w_data(&w, p, 40, E.key);
		/* The last 32 bytes as an inline data segment. */
		hw_inl_seg_set((void *)(w.b + w.ds * 16), 32);
		memcpy(w.b + w.ds * 16 + 4, frame + 58, 32);
		w.ds += 3;
		idx = tx_post(&E.tx[0], &w, k % 10 == 9 ? HW_WQE_CTRL_CQ_UPDATE : 0);
		CHECK_OK(tx_ring(&E.tx[0]));
		CHECK(resp_ok(poll_cqe(&E.rx[0].pc), (uint16_t)(k + 1), RQN0, 90));
		CHECK(memcmp(rcv + (k % 64) * 256, frame, 90) == 0);
		if (k % 10 == 9)
			CHECK(req_ok(poll_cqe(&E.tx[0].pc), idx, SQN0));
		else
			CHECK(poll_cqe(&E.tx[0].pc) == NULL);
	}
	CHECK(idx == 1 + 99 * 2); /* ds 7: two blocks each, wrapping the 64-block ring several times */
}

static void test_receive_errors(void)
{
	struct hw_eth_stats s0, s1;
	uint8_t frame[256], *rcv;
	uint16_t i;

	CHECK(port_setup() == 0);
	CHECK(steer_to_rq0() == 0);
	rcv = E.mem + (1u << 20);
	udp_frame(frame, 100, MAC_A, 7, 7);

	/* No receive posted: counted, no CQE on the RQ, the send completes. */
	hw_eth_get_stats(&s0);
	i = tx_send(&E.tx[0], frame, 100, 14, 1, E.mem);
	CHECK_OK(tx_ring(&E.tx[0]));
	CHECK(req_ok(poll_cqe(&E.tx[0].pc), i, SQN0));
	CHECK(poll_cqe(&E.rx[0].pc) == NULL);
	hw_eth_get_stats(&s1);
	CHECK(s1.rx_out_of_buffer - s0.rx_out_of_buffer == 1 && s1.rx_frames == s0.rx_frames);

	/* Too small a WQE: RESP_ERR LOCAL_LENGTH_ERR, the WQE consumed. */
	rx_post(&E.rx[0], rcv, 32, rcv + 64, 16, E.key);
	rx_post(&E.rx[0], rcv + 4096, 1024, NULL, 0, E.key);
	i = tx_send(&E.tx[0], frame, 100, 14, 1, E.mem);
	CHECK_OK(tx_ring(&E.tx[0]));
	CHECK(req_ok(poll_cqe(&E.tx[0].pc), i, SQN0));
	CHECK(err_ok(poll_cqe(&E.rx[0].pc), HW_CQE_RESP_ERR, HW_CQE_SYNDROME_LOCAL_LENGTH_ERR, 0, RQN0));
	i = tx_send(&E.tx[0], frame, 100, 14, 1, E.mem);
	CHECK_OK(tx_ring(&E.tx[0]));
	CHECK(req_ok(poll_cqe(&E.tx[0].pc), i, SQN0));
	CHECK(resp_ok(poll_cqe(&E.rx[0].pc), 1, RQN0, 100));
	CHECK(memcmp(rcv + 4096, frame, 100) == 0);

	/* A receive key the RQ's domain cannot write: LOCAL_PROT_ERR. */
	rx_post(&E.rx[0], rcv, 1024, NULL, 0, E.key ^ 0x5a);
	i = tx_send(&E.tx[0], frame, 100, 14, 1, E.mem);
	CHECK_OK(tx_ring(&E.tx[0]));
	CHECK(req_ok(poll_cqe(&E.tx[0].pc), i, SQN0));
	CHECK(err_ok(poll_cqe(&E.rx[0].pc), HW_CQE_RESP_ERR, HW_CQE_SYNDROME_LOCAL_PROT_ERR, 2, RQN0));

	/* A frame no rule takes: dropped by the receive steering. */
	hw_eth_get_stats(&s0);
	udp_frame(frame, 100, MAC_C, 7, 7);
	i = tx_send(&E.tx[0], frame, 100, 14, 1, E.mem);
	CHECK_OK(tx_ring(&E.tx[0]));
	CHECK(req_ok(poll_cqe(&E.tx[0].pc), i, SQN0));
	hw_eth_get_stats(&s1);
	CHECK(s1.rx_dropped - s0.rx_dropped == 1 && s1.tx_frames - s0.tx_frames == 1);
	CHECK(poll_cqe(&E.rx[0].pc) == NULL);
}

static void test_transmit_drop(void)
{
	uint8_t mask[64], val[64], frame[128];
	struct hw_steer_domain *d;
	struct hw_steer_matcher *m;
	struct hw_eth_stats s0, s1;
	uint16_t i;

	CHECK(port_setup() == 0);
	CHECK(steer_to_rq0() == 0);
	CHECK((d = domain(HW_STEER_NIC_TX)) != NULL);
	match_dmac(mask, MAC_ALL);
	CHECK((m = matcher(table(d, 0), 0, mask)) != NULL);
	match_dmac(val, MAC_A);
	CHECK_OK(rule(m, val, act(HW_STEER_ACT_DROP)));
	rx_post(&E.rx[0], E.mem + 65536, 1024, NULL, 0, E.key);
	hw_eth_get_stats(&s0);
	udp_frame(frame, 80, MAC_A, 1, 1);
	i = tx_send(&E.tx[0], frame, 80, 14, 1, E.mem);
	CHECK_OK(tx_ring(&E.tx[0]));
	CHECK(req_ok(poll_cqe(&E.tx[0].pc), i, SQN0)); /* dropped on the way, sent all the same */
	hw_eth_get_stats(&s1);
	CHECK(s1.tx_dropped - s0.tx_dropped == 1 && s1.tx_frames == s0.tx_frames && s1.rx_frames == s0.rx_frames);
	CHECK(poll_cqe(&E.rx[0].pc) == NULL);
}

/* Send-side errors: an error CQE and the SQ stopped; what followed is not executed. */
static void test_send_errors(void)
{
	uint8_t frame[128];
	struct wqe w;
	uint16_t i;

	CHECK(port_setup() == 0);
	CHECK(steer_to_rq0() == 0);
	udp_frame(frame, 80, MAC_A, 1, 1);

	/* A bad lkey, then a good WQE behind it in the same doorbell. */
	rx_post(&E.rx[0], E.mem + 65536, 1024, NULL, 0, E.key);
	w_begin(&w, frame, 14);
	w_data(&w, E.mem, 66, E.key + 0x100);
	i = tx_post(&E.tx[0], &w, 0);
	tx_send(&E.tx[0], frame, 80, 14, 1, E.mem);
	CHECK_OK(tx_ring(&E.tx[0]));
	{
		const uint8_t *c = poll_cqe(&E.tx[0].pc);

		CHECK(err_ok(c, HW_CQE_REQ_ERR, HW_CQE_SYNDROME_LOCAL_PROT_ERR, i, SQN0));
		CHECK(hw_err_cqe_wqe_opcode(cqe(c)) == HW_WQE_SEND);
	}
	CHECK(poll_cqe(&E.tx[0].pc) == NULL && poll_cqe(&E.rx[0].pc) == NULL);
	CHECK_ERR(tx_ring(&E.tx[0]), HW_ERR_INVAL);
	CHECK_ERR(hw_eth_sq_ring(E.tx[0].sq, E.tx[0].pi + 1), HW_ERR_INVAL);

	/* A range running past the key's end. */
	txq_free(&E.tx[0]);
	CHECK(txq_setup(&E.tx[0], SQN0, LOG_SQ, LOG_CQ) == 0);
	w_begin(&w, frame, 14);
	w_data(&w, E.mem + MEM_LEN - 10, 66, E.key);
	i = tx_post(&E.tx[0], &w, HW_WQE_CTRL_CQ_UPDATE);
	CHECK_OK(tx_ring(&E.tx[0]));
	CHECK(err_ok(poll_cqe(&E.tx[0].pc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_LOCAL_PROT_ERR, i, SQN0));

	/* A frame under the minimum. */
	txq_free(&E.tx[0]);
	CHECK(txq_setup(&E.tx[0], SQN0, LOG_SQ, LOG_CQ) == 0);
	w_begin(&w, frame, 12);
	i = tx_post(&E.tx[0], &w, 0);
	CHECK_OK(tx_ring(&E.tx[0]));
	CHECK(err_ok(poll_cqe(&E.tx[0].pc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_LOCAL_LENGTH_ERR, i, SQN0));

	/* A frame over the maximum. */
	txq_free(&E.tx[0]);
	CHECK(txq_setup(&E.tx[0], SQN0, LOG_SQ, LOG_CQ) == 0);
	w_begin(&w, frame, 14);
	w_data(&w, E.mem, HW_ETH_FRAME_MAX - 14, E.key);
	w_data(&w, E.mem, 1, E.key);
	i = tx_post(&E.tx[0], &w, 0);
	CHECK_OK(tx_ring(&E.tx[0]));
	CHECK(err_ok(poll_cqe(&E.tx[0].pc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_LOCAL_LENGTH_ERR, i, SQN0));

	/* Another opcode; then an inline header longer than the WQE. */
	txq_free(&E.tx[0]);
	CHECK(txq_setup(&E.tx[0], SQN0, LOG_SQ, LOG_CQ) == 0);
	w_begin(&w, frame, 14);
	w_data(&w, E.mem, 66, E.key);
	i = tx_post(&E.tx[0], &w, 0);
	E.tx[0].ring[(size_t)i * 64 + 3] = HW_WQE_RDMA_WRITE;
	CHECK_OK(tx_ring(&E.tx[0]));
	CHECK(err_ok(poll_cqe(&E.tx[0].pc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, i, SQN0));
	txq_free(&E.tx[0]);
	CHECK(txq_setup(&E.tx[0], SQN0, LOG_SQ, LOG_CQ) == 0);
	w_begin(&w, frame, 14);
	w.ds = 2; /* the inline header's segment left out of the count */
	i = tx_post(&E.tx[0], &w, 0);
	CHECK_OK(tx_ring(&E.tx[0]));
	CHECK(err_ok(poll_cqe(&E.tx[0].pc), HW_CQE_REQ_ERR, HW_CQE_SYNDROME_LOCAL_QP_OP_ERR, i, SQN0));

	/* A counter more than a ring ahead: refused, nothing done. */
	txq_free(&E.tx[0]);
	CHECK(txq_setup(&E.tx[0], SQN0, LOG_SQ, LOG_CQ) == 0);
	CHECK_ERR(hw_eth_sq_ring(E.tx[0].sq, (1u << LOG_SQ) + 1), HW_ERR_INVAL);
	CHECK_OK(hw_eth_sq_ring(E.tx[0].sq, 0));
	CHECK(poll_cqe(&E.tx[0].pc) == NULL);
}

static void test_create_refusals(void)
{
	struct hw_eth_sq_attr sa;
	struct hw_eth_rq_attr ra;
	struct hw_eth_sq *sq;
	struct hw_eth_rq *rq;

	CHECK(port_setup() == 0);
	sa = (struct hw_eth_sq_attr){ .sqn = 9, .pd = E.pd, .cq = E.tx[0].cq, .log_size = HW_ETH_LOG_WQ_MAX + 1,
				      .ring = E.mem, .dbrec = (uint32_t *)(void *)E.mem };
	CHECK_ERR(hw_eth_sq_create(&sa, &sq), HW_ERR_INVAL);
	sa.log_size = 2;
	sa.ring = E.mem + 16;
	CHECK_ERR(hw_eth_sq_create(&sa, &sq), HW_ERR_INVAL);
	ra = (struct hw_eth_rq_attr){ .rqn = 9, .pd = E.pd, .cq = E.rx[0].cq, .log_size = 2,
				      .log_stride = HW_ETH_RQ_LOG_STRIDE_MIN - 1, .ring = E.mem,
				      .dbrec = (uint32_t *)(void *)E.mem };
	CHECK_ERR(hw_eth_rq_create(&ra, &rq), HW_ERR_INVAL);
	ra.log_stride = HW_ETH_RQ_LOG_STRIDE_MAX + 1;
	CHECK_ERR(hw_eth_rq_create(&ra, &rq), HW_ERR_INVAL);
	ra.log_stride = 4;
	ra.rqn = RQN0; /* taken */
	CHECK_ERR(hw_eth_rq_create(&ra, &rq), HW_ERR_INVAL);
	CHECK(hw_eth_sq_num(E.tx[0].sq) == SQN0 && hw_eth_rq_num(E.rx[0].rq) == RQN0);
}

/* A TIR whose RQ is gone drops what is steered to it. */
static void test_rq_gone(void)
{
	struct hw_eth_stats s0, s1;
	uint8_t frame[128];

	CHECK(port_setup() == 0);
	CHECK(steer_to_rq0() == 0);
	rxq_free(&E.rx[0]);
	hw_eth_get_stats(&s0);
	udp_frame(frame, 80, MAC_A, 1, 1);
	tx_send(&E.tx[0], frame, 80, 14, 1, E.mem);
	CHECK_OK(tx_ring(&E.tx[0]));
	hw_eth_get_stats(&s1);
	CHECK(s1.rx_dropped - s0.rx_dropped == 1);
}

/* ---- Concurrency ---- */

#define CONC_FRAMES 10000
#define CONC_LEN 64
#define CONC_SLOT 64
#define CONC_LOG_RQ 15

struct sender {
	struct txq *t;
	uint8_t id;
	uint8_t *src;
	int failed;
};

static void *sender_main(void *arg)
{
	struct sender *s = arg;
	uint8_t frame[CONC_LEN];

	udp_frame(frame, CONC_LEN, MAC_A, 9, 0);
	frame[11] = s->id; /* the source MAC tells the senders apart */
	for (uint32_t k = 0; k < CONC_FRAMES; k++) {
		memcpy(frame + 42, &k, sizeof(k));
		tx_post_frame(s->t, frame, CONC_LEN, 14, 1, s->src, 0);
		if (hw_eth_sq_ring(s->t->sq, s->t->pi) != HW_OK)
			s->failed = 1;
	}
	return NULL;
}

struct churner {
	struct hw_steer_matcher *m;
	uint32_t tirn;
	_Atomic int stop;
	int failed;
};

/* Rule changes while frames flow: an unrelated rule added and removed over and over. */
static void *churn_main(void *arg)
{
	struct churner *c = arg;
	uint8_t val[64];
	struct hw_steer_action a = act_tir(c->tirn);

	match_dmac(val, MAC_B);
	while (!atomic_load(&c->stop)) {
		struct hw_steer_rule *r;

		if (hw_steer_rule_create(c->m, val, &a, 1, &r) != HW_OK) {
			c->failed = 1;
			return NULL;
		}
		hw_steer_rule_destroy(r);
	}
	return NULL;
}

static void test_two_senders_one_rq(void)
{
	struct sender snd[2];
	struct churner ch = { 0 };
	pthread_t th[3];
	uint8_t *rcv, *seen;
	uint32_t total = 2 * CONC_FRAMES;

	CHECK(env_setup() == 0);
	CHECK(txq_setup(&E.tx[0], SQN0, LOG_SQ, LOG_CQ) == 0 && txq_setup(&E.tx[1], SQN1, LOG_SQ, LOG_CQ) == 0);
	CHECK(rxq_setup(&E.rx[0], RQN0, CONC_LOG_RQ, HW_ETH_RQ_LOG_STRIDE_MIN, CONC_LOG_RQ) == 0);
	CHECK(steer_to_rq0() == 0);
	ch.m = E.matchers[0];
	ch.tirn = E.tirs[0];
	rcv = E.mem + (1u << 20);
	CHECK((size_t)total * CONC_SLOT + (1u << 20) <= MEM_LEN);
	for (uint32_t k = 0; k < total; k++)
		rx_post(&E.rx[0], rcv + (size_t)k * CONC_SLOT, CONC_SLOT, NULL, 0, E.key);
	for (int i = 0; i < 2; i++) {
		snd[i] = (struct sender){ .t = &E.tx[i], .id = (uint8_t)(0x10 + i), .src = E.mem + i * 4096 };
		CHECK(pthread_create(&th[i], NULL, sender_main, &snd[i]) == 0);
	}
	CHECK(pthread_create(&th[2], NULL, churn_main, &ch) == 0);
	pthread_join(th[0], NULL);
	pthread_join(th[1], NULL);
	atomic_store(&ch.stop, 1);
	pthread_join(th[2], NULL);
	CHECK(!snd[0].failed && !snd[1].failed && !ch.failed);

	seen = calloc(2, CONC_FRAMES);
	CHECK(seen != NULL);
	th_defer(free, seen);
	for (uint32_t n = 0; n < total; n++) {
		const uint8_t *c = poll_cqe(&E.rx[0].pc);
		const uint8_t *f;
		uint32_t seq;
		int who;

		CHECK(c != NULL && hw_cqe_opcode(cqe(c)) == HW_CQE_RESP_SEND && hw_cqe_byte_cnt(cqe(c)) == CONC_LEN);
		CHECK(hw_cqe_wqe_counter(cqe(c)) == (uint16_t)n);
		f = rcv + (size_t)n * CONC_SLOT;
		who = f[11] - 0x10;
		memcpy(&seq, f + 42, sizeof(seq));
		CHECK((who == 0 || who == 1) && seq < CONC_FRAMES);
		CHECK(seen[who * CONC_FRAMES + seq] == 0);
		seen[who * CONC_FRAMES + seq] = 1;
	}
	CHECK(poll_cqe(&E.rx[0].pc) == NULL);
}

int main(void)
{
	RUN(test_parse_ipv4_udp);
	RUN(test_parse_vlan_ipv4_tcp);
	RUN(test_parse_ipv6_tcp);
	RUN(test_parse_runt);
	RUN(test_steer_match_and_priority);
	RUN(test_steer_jumps);
	RUN(test_steer_dests_and_tag);
	RUN(test_steer_destroy_order);
	RUN(test_steer_paths);
	RUN(test_send_receive);
	RUN(test_send_wraps_and_unsignaled);
	RUN(test_receive_errors);
	RUN(test_transmit_drop);
	RUN(test_send_errors);
	RUN(test_create_refusals);
	RUN(test_rq_gone);
	RUN(test_two_senders_one_rq);
	return th_summary("test_hw_eth");
}
