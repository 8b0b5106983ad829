/*
 * The mlx5dv_dr actions that change or count frames, on real frames between
 * raw packet QPs, as mlx5dv_dr_flow(3) and
 * mlx5dv_create_flow_action_packet_reformat(3) describe them:
 * packet_reformat L2_TO_L2_TUNNEL (NIC transmit) puts the given tunnel
 * header before the frame, its outer lengths and IPv4 checksum set from
 * the frame carried (rdma-core's test_tx_packet_reformat lets only the
 * IPv4 id, checksum and UDP source port differ from the header given),
 * L2_TUNNEL_TO_L2 (NIC receive) takes it off again; modify_header sets,
 * adds to and copies the PRM's fields (set_action_in, add_action_in,
 * copy_action_in); a DevX FLOW_COUNTER counts the frames that take its
 * rules and their bytes (QUERY_FLOW_COUNTER); drop drops; a flow sampler
 * sends every frame on to its table and one in sample_ratio also to its
 * sample actions. Frames are compared byte for byte, counters exactly, and
 * bad input gets the errno rdma-core's provider gives.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "raw_fixture.h"

#define CRIT_OUTER 0x1
#define ENCAP_LEN 50 /* Ethernet, IPv4, UDP, VXLAN */
#define VXLAN_PORT 4789

struct match {
	size_t match_sz;
	uint64_t buf[8];
};

static const uint8_t all_ones[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const uint8_t mac_new[6] = {0x88, 0x88, 0x88, 0x88, 0x88, 0x88};

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

static void obj_cb(void *o)
{
	mlx5dv_devx_obj_destroy(o);
}

static void fmatcher_cb(void *m)
{
	mlx5dv_destroy_flow_matcher(m);
}

static void faction_cb(void *a)
{
	ibv_destroy_flow_action(a);
}

static struct mlx5dv_flow_match_parameters *smac(struct match *m, const uint8_t mac[6])
{
	memset(m, 0, sizeof(*m));
	memcpy(m->buf, mac, 6); /* fte_match_set_lyr_2_4: smac first */
	m->match_sz = 64;
	return (struct mlx5dv_flow_match_parameters *)m;
}

static struct mlx5dv_dr_domain *domain(enum mlx5dv_dr_domain_type t)
{
	return kept(mlx5dv_dr_domain_create(env.c, t), domain_cb);
}

static struct mlx5dv_dr_table *table(struct mlx5dv_dr_domain *d, uint32_t level)
{
	return kept(mlx5dv_dr_table_create(d, level), table_cb);
}

static struct mlx5dv_dr_matcher *smac_matcher_in(struct mlx5dv_dr_table *t, uint16_t prio)
{
	struct match m;

	return t != NULL ? kept(mlx5dv_dr_matcher_create(t, prio, CRIT_OUTER, smac(&m, all_ones)), matcher_cb) : NULL;
}

static struct mlx5dv_dr_matcher *smac_matcher(struct mlx5dv_dr_domain *d, uint32_t level)
{
	return smac_matcher_in(table(d, level), 0);
}

static struct mlx5dv_dr_rule *rule_on(struct mlx5dv_dr_matcher *m, const uint8_t mac[6], size_t n,
				      struct mlx5dv_dr_action **acts)
{
	struct match v;

	return kept(mlx5dv_dr_rule_create(m, smac(&v, mac), n, acts), rule_cb);
}

static struct mlx5dv_dr_action *action(struct mlx5dv_dr_action *a)
{
	return kept(a, action_cb);
}

static uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void wr16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* RFC 791's header checksum over 20 bytes, the field itself taken as 0. */
static uint16_t ipv4_csum(const uint8_t *ip)
{
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		if (i != 10)
			sum += rd16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* A VXLAN tunnel header (outer MACs as the inner frame's) whose lengths and checksums are wrong on purpose. */
static void vxlan_header(uint8_t *h)
{
	memset(h, 0, ENCAP_LEN);
	memcpy(h, mac_dst, 6);
	memcpy(h + 6, mac_src, 6);
	h[12] = 0x08;
	h[14] = 0x45;
	wr16(h + 16, 7);	 /* total length: set by the device */
	h[20] = 0x40;		 /* don't fragment */
	h[22] = 64;
	h[23] = 17;
	wr16(h + 24, 0x1234);	 /* checksum: computed by the device */
	h[26] = 10, h[29] = 1;	 /* 10.0.0.1 */
	h[30] = 10, h[33] = 2;	 /* 10.0.0.2 */
	wr16(h + 34, 49152);	 /* UDP source port */
	wr16(h + 36, VXLAN_PORT);
	wr16(h + 38, 9);	 /* length: set by the device */
	wr16(h + 40, 0x5555);	 /* checksum: 0, not computed */
	h[42] = 0x08;		 /* VXLAN: the I flag, */
	h[46] = 0x12;		 /* VNI 0x123456 */
	h[47] = 0x34;
	h[48] = 0x56;
}

/* What the device sends for header h before a frame of len bytes. */
static void vxlan_expected(uint8_t *e, const uint8_t *h, const uint8_t *frame, uint32_t len)
{
	memcpy(e, h, ENCAP_LEN);
	wr16(e + 16, ENCAP_LEN - 14 + len);
	wr16(e + 24, ipv4_csum(e + 14));
	wr16(e + 38, ENCAP_LEN - 34 + len);
	wr16(e + 40, 0);
	memcpy(e + ENCAP_LEN, frame, len);
}

/* Encap on transmit gives the tunnel frame, exact; decap on receive gives back the frame that was sent. */
static void test_encap_decap(void)
{
	struct mlx5dv_dr_domain *tx, *rx;
	struct mlx5dv_dr_action *encap, *decap, *to_b, *acts[2];
	struct mlx5dv_dr_matcher *mtx, *mrx;
	struct mlx5dv_dr_rule *r;
	uint8_t hdr[ENCAP_LEN], expect[FRAME_MAX];
	struct ibv_qp *qa, *qb;
	uint32_t len, got = 0;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	CHECK(qa != NULL && qb != NULL);
	tx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_TX);
	rx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	CHECK(tx != NULL && rx != NULL);
	vxlan_header(hdr);
	encap = action(mlx5dv_dr_action_create_packet_reformat(
		tx, MLX5DV_DR_ACTION_FLAGS_ROOT_LEVEL, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL,
		sizeof(hdr), hdr));
	decap = action(mlx5dv_dr_action_create_packet_reformat(rx, 0, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2,
							      0, NULL));
	to_b = action(mlx5dv_dr_action_create_dest_ibv_qp(qb));
	CHECK(encap != NULL && decap != NULL && to_b != NULL);
	mtx = smac_matcher(tx, 0);
	mrx = smac_matcher(rx, 1);
	CHECK(mtx != NULL && mrx != NULL);
	CHECK(rule_on(mtx, mac_src, 1, &encap) != NULL);
	/* Without decap the receiver gets the tunnel frame. */
	r = mlx5dv_dr_rule_create(mrx, smac(&(struct match){0}, mac_src), 1, &to_b);
	CHECK(r != NULL);
	len = make_frame(env.buf[0], 200, false);
	vxlan_expected(expect, hdr, env.buf[0], len);
	CHECK(send_one(qa, qb, len, &got) == 1);
	CHECK(got == len + ENCAP_LEN);
	CHECK(memcmp(env.buf[1], expect, len + ENCAP_LEN) == 0);
	CHECK_OK(mlx5dv_dr_rule_destroy(r));
	/* With decap before the QP: the frame as it was sent. */
	acts[0] = decap;
	acts[1] = to_b;
	CHECK(rule_on(mrx, mac_src, 2, acts) != NULL);
	CHECK(send_one(qa, qb, len, &got) == 1);
	CHECK(got == len);
	CHECK(memcmp(env.buf[1], env.buf[0], len) == 0);
	/* The actions go after their rules. */
	CHECK_ERR(mlx5dv_dr_action_destroy(encap), EBUSY);
}

/* Decap of a frame that is no VXLAN tunnel (not to the VXLAN port, or too short to hold a frame) leaves it as it is. */
static void test_decap_plain_frame(void)
{
	struct mlx5dv_dr_action *decap, *to_b, *acts[2];
	struct mlx5dv_dr_domain *rx;
	struct ibv_qp *qa, *qb;
	uint32_t len, got = 0;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	CHECK(qa != NULL && qb != NULL);
	rx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	CHECK(rx != NULL);
	decap = action(mlx5dv_dr_action_create_packet_reformat(rx, 0, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2,
							      0, NULL));
	to_b = action(mlx5dv_dr_action_create_dest_ibv_qp(qb));
	CHECK(decap != NULL && to_b != NULL);
	acts[0] = decap;
	acts[1] = to_b;
	CHECK(rule_on(smac_matcher(rx, 1), mac_src, 2, acts) != NULL);
	len = make_frame(env.buf[0], 120, false);
	CHECK(send_one(qa, qb, len, &got) == 1);
	CHECK(got == len);
	CHECK(memcmp(env.buf[1], env.buf[0], len) == 0);
	len = make_frame(env.buf[0], 63, false); /* UDP to the VXLAN port, a byte short of an inner Ethernet header */
	wr16(env.buf[0] + 36, VXLAN_PORT);
	CHECK(send_one(qa, qb, len, &got) == 1);
	CHECK(got == len);
	CHECK(memcmp(env.buf[1], env.buf[0], len) == 0);
}

static struct mlx5dv_dr_action *reformat(struct mlx5dv_dr_domain *d, uint32_t flags, int type, size_t sz, void *data)
{
	return action(mlx5dv_dr_action_create_packet_reformat(d, flags, type, sz, data));
}

#define REFUSED(expr, err)                                                                                             \
	do {                                                                                                           \
		errno = 0;                                                                                             \
		CHECK((expr) == NULL);                                                                                 \
		CHECK_ERR(errno, err);                                                                                 \
	} while (0)

/* rdma-core's reformat checks: the types each domain takes, data and size together; a header cut short. */
static void test_reformat_refused(void)
{
	struct mlx5dv_dr_domain *tx, *rx;
	uint8_t hdr[ENCAP_LEN];

	CHECK(env_open() == 0);
	tx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_TX);
	rx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	CHECK(tx != NULL && rx != NULL);
	vxlan_header(hdr);
	/* Encap on receive, decap on transmit: EINVAL. */
	REFUSED(reformat(rx, 0, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, sizeof(hdr), hdr), EINVAL);
	REFUSED(reformat(tx, 0, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2, 0, NULL), EINVAL);
	/* Data without a size and the other way round, an unknown type, unknown flags: EINVAL. */
	REFUSED(reformat(tx, 0, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, 0, hdr), EINVAL);
	REFUSED(reformat(tx, 0, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, sizeof(hdr), NULL), EINVAL);
	REFUSED(reformat(tx, 0, 7, sizeof(hdr), hdr), EINVAL);
	REFUSED(reformat(tx, 0x2, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, sizeof(hdr), hdr), EINVAL);
	REFUSED(reformat(NULL, 0, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, sizeof(hdr), hdr), EINVAL);
	/* A header cut short: within Ethernet, within the IPv4 header, within UDP. Longer than 128 bytes. */
	REFUSED(reformat(tx, 0, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, 10, hdr), EINVAL);
	REFUSED(reformat(tx, 0, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, 30, hdr), EINVAL);
	REFUSED(reformat(tx, 0, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, 38, hdr), EINVAL);
	{
		uint8_t big[129];

		memset(big, 0, sizeof(big));
		memcpy(big, hdr, 14);
		big[12] = 0x88, big[13] = 0xb5; /* no IP: any bytes may follow */
		REFUSED(reformat(tx, 0, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, sizeof(big), big),
			EINVAL);
		CHECK(reformat(tx, 0, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, 128, big) != NULL);
	}
	/* The L3 tunnels are not done: EOPNOTSUPP on the domains that would take them. */
	REFUSED(reformat(tx, 0, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L3_TUNNEL, sizeof(hdr), hdr), EOPNOTSUPP);
	REFUSED(reformat(rx, 0, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L3_TUNNEL_TO_L2, 14, hdr), EOPNOTSUPP);
}

/* PRM modify actions, big-endian: set/add (field, offset, length, data), copy (source and destination). */
static __be64 set_act(uint16_t field, uint8_t off, uint8_t len, uint32_t data)
{
	return htobe64((uint64_t)1 << 60 | (uint64_t)field << 48 | (uint64_t)(off & 0x1f) << 40 |
		       (uint64_t)(len & 0x1f) << 32 | data);
}

static __be64 add_act(uint16_t field, uint32_t data)
{
	return htobe64((uint64_t)2 << 60 | (uint64_t)field << 48 | data);
}

static __be64 copy_act(uint16_t src, uint8_t src_off, uint8_t len, uint16_t dst, uint8_t dst_off)
{
	return htobe64((uint64_t)3 << 60 | (uint64_t)src << 48 | (uint64_t)src_off << 40 | (uint64_t)len << 32 |
		       (uint64_t)dst << 16 | (uint64_t)dst_off << 8);
}

#define F_SMAC_47_16 0x1
#define F_SMAC_15_0 0x2
#define F_IP_TTL 0xa
#define F_UDP_SPORT 0xb
#define F_UDP_DPORT 0xc
#define F_DIPV4 0x16
#define F_REG_A 0x49

/*
 * On transmit: the source MAC set (its two halves), the TTL decremented
 * (add 0xff), the destination address set and the UDP source port copied
 * from the destination port's low byte; received exactly so, with the IPv4
 * checksum computed again.
 */
static void test_modify_header(void)
{
	__be64 acts_in[5];
	struct mlx5dv_dr_domain *tx, *rx;
	struct mlx5dv_dr_action *mod, *to_b;
	uint8_t expect[FRAME_MAX];
	struct ibv_qp *qa, *qb;
	uint32_t len, got = 0;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	CHECK(qa != NULL && qb != NULL);
	tx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_TX);
	rx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	CHECK(tx != NULL && rx != NULL);
	acts_in[0] = set_act(F_SMAC_47_16, 0, 0, 0x88888888);
	acts_in[1] = set_act(F_SMAC_15_0, 0, 16, 0x8888);
	acts_in[2] = add_act(F_IP_TTL, 0xff);
	acts_in[3] = set_act(F_DIPV4, 0, 0, 0xc0a80107);
	acts_in[4] = copy_act(F_UDP_DPORT, 0, 8, F_UDP_SPORT, 4);
	mod = action(mlx5dv_dr_action_create_modify_header(tx, MLX5DV_DR_ACTION_FLAGS_ROOT_LEVEL, sizeof(acts_in),
							     acts_in));
	to_b = action(mlx5dv_dr_action_create_dest_ibv_qp(qb));
	CHECK(mod != NULL && to_b != NULL);
	CHECK(rule_on(smac_matcher(tx, 0), mac_src, 1, &mod) != NULL);
	CHECK(rule_on(smac_matcher(rx, 1), mac_new, 1, &to_b) != NULL);
	len = make_frame(env.buf[0], 150, false);
	wr16(env.buf[0] + 34, 0x1111); /* UDP source port */
	wr16(env.buf[0] + 36, 0x2a5c); /* UDP destination port */
	wr16(env.buf[0] + 24, ipv4_csum(env.buf[0] + 14));
	memcpy(expect, env.buf[0], len);
	memcpy(expect + 6, mac_new, 6);
	expect[22] = 63;
	expect[30] = 192, expect[31] = 168, expect[32] = 1, expect[33] = 7;
	wr16(expect + 34, 0x15c1); /* 0x1111 with bits 4..11 the destination port's low byte, 0x5c */
	wr16(expect + 24, ipv4_csum(expect + 14));
	CHECK(send_one(qa, qb, len, &got) == 1);
	CHECK(got == len);
	CHECK(memcmp(env.buf[1], expect, len) == 0);
}

/* RFC 768's checksum of the IPv4 UDP datagram of frame f (len bytes, UDP at 34): pseudo header, header, data. */
static uint16_t udp_csum(const uint8_t *f, uint32_t len)
{
	uint32_t sum = 17 + (len - 34);

	for (int i = 26; i < 34; i += 2)
		sum += rd16(f + i);
	for (uint32_t i = 34; i < len; i += 2)
		if (i != 40)
			sum += i + 1 < len ? rd16(f + i) : (uint32_t)f[i] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = (uint16_t)~sum;
	return sum == 0 ? 0xffff : (uint16_t)sum;
}

/* A UDP checksum that was right stays right when the address and a port change (the card updates it). */
static void test_modify_l4_checksum(void)
{
	__be64 acts_in[2];
	struct mlx5dv_dr_domain *tx, *rx;
	struct mlx5dv_dr_action *mod, *to_b;
	uint8_t expect[FRAME_MAX];
	struct ibv_qp *qa, *qb;
	uint32_t len, got = 0;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	CHECK(qa != NULL && qb != NULL);
	tx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_TX);
	rx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	CHECK(tx != NULL && rx != NULL);
	acts_in[0] = set_act(F_DIPV4, 0, 0, 0xac100305);
	acts_in[1] = set_act(F_UDP_DPORT, 0, 16, 0xbeef);
	mod = action(mlx5dv_dr_action_create_modify_header(tx, 0, sizeof(acts_in), acts_in));
	to_b = action(mlx5dv_dr_action_create_dest_ibv_qp(qb));
	CHECK(mod != NULL && to_b != NULL);
	CHECK(rule_on(smac_matcher(tx, 1), mac_src, 1, &mod) != NULL);
	CHECK(rule_on(smac_matcher(rx, 1), mac_src, 1, &to_b) != NULL);
	len = make_frame(env.buf[0], 171, false); /* an odd length: the last byte padded */
	env.buf[0][26] = 10, env.buf[0][29] = 1;
	env.buf[0][30] = 10, env.buf[0][33] = 2;
	wr16(env.buf[0] + 34, 1000);
	wr16(env.buf[0] + 36, 2000);
	wr16(env.buf[0] + 38, len - 34);
	wr16(env.buf[0] + 40, udp_csum(env.buf[0], len));
	wr16(env.buf[0] + 24, ipv4_csum(env.buf[0] + 14));
	memcpy(expect, env.buf[0], len);
	expect[30] = 172, expect[31] = 16, expect[32] = 3, expect[33] = 5;
	wr16(expect + 36, 0xbeef);
	wr16(expect + 24, ipv4_csum(expect + 14));
	wr16(expect + 40, udp_csum(expect, len));
	CHECK(rd16(expect + 40) != rd16(env.buf[0] + 40));
	CHECK(send_one(qa, qb, len, &got) == 1);
	CHECK(got == len);
	CHECK(memcmp(env.buf[1], expect, len) == 0);
}

/* rdma-core's checks: a size in whole actions, known fields and types, offset and length within the field. */
static void test_modify_refused(void)
{
	struct mlx5dv_dr_domain *tx;
	__be64 a[2];

	CHECK(env_open() == 0);
	tx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_TX);
	CHECK(tx != NULL);
	a[0] = set_act(F_IP_TTL, 0, 8, 1);
	a[1] = set_act(F_SMAC_15_0, 0, 16, 1);
	REFUSED(mlx5dv_dr_action_create_modify_header(tx, 0, 12, a), EINVAL);
	REFUSED(mlx5dv_dr_action_create_modify_header(tx, 0, 0, a), EINVAL);
	REFUSED(mlx5dv_dr_action_create_modify_header(tx, 0x4, sizeof(a), a), EINVAL);
	REFUSED(mlx5dv_dr_action_create_modify_header(NULL, 0, sizeof(a), a), EINVAL);
	a[1] = set_act(0x30, 0, 8, 1); /* no such field */
	REFUSED(mlx5dv_dr_action_create_modify_header(tx, 0, sizeof(a), a), EINVAL);
	a[1] = set_act(F_IP_TTL, 4, 8, 1); /* bits 4..11 of an 8-bit field */
	REFUSED(mlx5dv_dr_action_create_modify_header(tx, 0, sizeof(a), a), EINVAL);
	a[1] = copy_act(F_UDP_DPORT, 0, 16, 0x31, 0);
	REFUSED(mlx5dv_dr_action_create_modify_header(tx, 0, sizeof(a), a), EINVAL);
	a[1] = htobe64((uint64_t)5 << 60 | (uint64_t)F_IP_TTL << 48); /* no such action type */
	REFUSED(mlx5dv_dr_action_create_modify_header(tx, 0, sizeof(a), a), EOPNOTSUPP);
	a[1] = set_act(F_REG_A, 0, 0, 1); /* a metadata register: no place in a frame here */
	REFUSED(mlx5dv_dr_action_create_modify_header(tx, 0, sizeof(a), a), EOPNOTSUPP);
	CHECK(action(mlx5dv_dr_action_create_modify_header(tx, 0, 8, a)) != NULL);
}

/* ---- Flow counters ---- */

static struct mlx5dv_devx_obj *counter(uint32_t *id)
{
	uint8_t in[16] = {0x09, 0x39}, out[16] = {0};
	struct mlx5dv_devx_obj *o = kept(mlx5dv_devx_obj_create(env.c, in, sizeof(in), out, sizeof(out)), obj_cb);

	*id = (uint32_t)out[8] << 24 | (uint32_t)out[9] << 16 | (uint32_t)out[10] << 8 | out[11];
	return out[0] == 0 ? o : NULL;
}

static uint64_t be64_at(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* QUERY_FLOW_COUNTER: 0 with packets and bytes, or the errno. */
static int query(struct mlx5dv_devx_obj *o, uint32_t id, bool clear, uint64_t *packets, uint64_t *bytes)
{
	uint8_t in[32] = {0x09, 0x3b}, out[32];
	int rc;

	in[24] = clear ? 0x80 : 0;
	in[28] = (uint8_t)(id >> 24), in[29] = (uint8_t)(id >> 16), in[30] = (uint8_t)(id >> 8), in[31] = (uint8_t)id;
	memset(out, 0xee, sizeof(out));
	rc = mlx5dv_devx_obj_query(o, in, sizeof(in), out, sizeof(out));
	if (rc == 0) {
		*packets = be64_at(out + 16);
		*bytes = be64_at(out + 24);
	}
	return rc;
}

/* A counter on a NIC receive rule counts each frame that takes it and its bytes; a clear starts again from 0. */
static void test_counter(void)
{
	struct mlx5dv_dr_action *count, *to_b, *acts[2];
	struct mlx5dv_devx_obj *o;
	struct ibv_qp *qa, *qb;
	uint64_t packets = 9, bytes = 9;
	uint32_t id = 0, got = 0;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	CHECK(qa != NULL && qb != NULL);
	o = counter(&id);
	CHECK(o != NULL && id != 0);
	CHECK_OK(query(o, id, false, &packets, &bytes));
	CHECK(packets == 0 && bytes == 0);
	count = action(mlx5dv_dr_action_create_flow_counter(o, 0));
	to_b = action(mlx5dv_dr_action_create_dest_ibv_qp(qb));
	CHECK(count != NULL && to_b != NULL);
	acts[0] = to_b;
	acts[1] = count;
	CHECK(rule_on(smac_matcher(domain(MLX5DV_DR_DOMAIN_TYPE_NIC_RX), 1), mac_src, 2, acts) != NULL);
	CHECK(send_one(qa, qb, make_frame(env.buf[0], 100, false), &got) == 1);
	CHECK(send_one(qa, qb, make_frame(env.buf[0], 333, false), &got) == 1);
	CHECK(send_one(qa, qb, make_frame(env.buf[0], 64, false), &got) == 1);
	CHECK_OK(query(o, id, false, &packets, &bytes));
	CHECK(packets == 3 && bytes == 497);
	CHECK_OK(query(o, id, true, &packets, &bytes));
	CHECK(packets == 3 && bytes == 497);
	CHECK_OK(query(o, id, false, &packets, &bytes));
	CHECK(packets == 0 && bytes == 0);
	/* The counter object stays while an action names it. */
	CHECK_ERR(mlx5dv_devx_obj_destroy(o), EBUSY);
}

/* A rule of counter and drop counts the frames and nothing reaches the QP the next rule names; without it they do. */
static void test_counter_and_drop(void)
{
	struct mlx5dv_dr_action *count, *drop, *to_b, *acts[2];
	struct mlx5dv_dr_table *t;
	struct mlx5dv_dr_rule *r;
	struct mlx5dv_devx_obj *o;
	struct ibv_qp *qa, *qb;
	uint64_t packets = 9, bytes = 9;
	uint32_t id = 0, got = 0, len;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	CHECK(qa != NULL && qb != NULL);
	o = counter(&id);
	count = action(mlx5dv_dr_action_create_flow_counter(o, 0));
	drop = action(mlx5dv_dr_action_create_drop());
	to_b = action(mlx5dv_dr_action_create_dest_ibv_qp(qb));
	CHECK(o != NULL && count != NULL && drop != NULL && to_b != NULL);
	t = table(domain(MLX5DV_DR_DOMAIN_TYPE_NIC_RX), 0);
	CHECK(rule_on(smac_matcher_in(t, 1), mac_src, 1, &to_b) != NULL);
	acts[0] = count;
	acts[1] = drop;
	r = mlx5dv_dr_rule_create(smac_matcher_in(t, 0), smac(&(struct match){0}, mac_src), 2, acts);
	CHECK(r != NULL);
	len = make_frame(env.buf[0], 80, false);
	CHECK(send_one(qa, qb, len, &got) == 0);
	CHECK(send_one(qa, qb, len, &got) == 0);
	CHECK_OK(query(o, id, false, &packets, &bytes));
	CHECK(packets == 2 && bytes == 160);
	CHECK_OK(mlx5dv_dr_rule_destroy(r));
	CHECK(send_one(qa, qb, len, &got) == 1); /* the receive posted for the dropped ones takes it */
	CHECK(got == len);
	CHECK_OK(query(o, id, false, &packets, &bytes));
	CHECK(packets == 2);
}

/* Bad counter objects, offsets and queries. */
static void test_counter_refused(void)
{
	uint8_t in[32] = {0x09, 0x39}, out[32];
	struct mlx5dv_devx_obj *o;
	uint64_t p, b;
	uint32_t id = 0;

	CHECK(env_open() == 0);
	o = counter(&id);
	CHECK(o != NULL);
	REFUSED(mlx5dv_dr_action_create_flow_counter(o, 1), EINVAL);
	REFUSED(mlx5dv_dr_action_create_flow_counter(NULL, 0), EINVAL);
	CHECK_ERR(query(o, id + 1, false, &p, &b), EINVAL); /* another counter's id */
	/* A bulk of counters: the card's bad parameter. */
	in[15] = 1;
	memset(out, 0, sizeof(out));
	REFUSED(mlx5dv_devx_obj_create(env.c, in, 16, out, 16), EINVAL);
	CHECK(out[0] == 0x3);
	/* Another query opcode on the counter: bad opcode. */
	memset(in, 0, sizeof(in));
	in[0] = 0x09, in[1] = 0x3c;
	CHECK_ERR(mlx5dv_devx_obj_query(o, in, sizeof(in), out, sizeof(out)), EOPNOTSUPP);
	CHECK(out[0] == 0x2);
	CHECK_ERR(mlx5dv_devx_obj_query(NULL, in, sizeof(in), out, sizeof(out)), EINVAL);
}

/* ---- The flow sampler ---- */

/*
 * Ratio 4: every frame to the default table (its counter counts all 8),
 * the 1st and 5th also to the sample actions (their counter counts 2, the
 * QP receives those two).
 */
static void test_sampler(void)
{
	struct mlx5dv_dr_action *c1, *c2, *to_b, *sampler, *samples[2];
	struct mlx5dv_dr_flow_sampler_attr attr = {0};
	struct mlx5dv_dr_domain *rx;
	struct mlx5dv_dr_table *deflt;
	struct mlx5dv_devx_obj *o1, *o2;
	struct ibv_qp *qa, *qb;
	uint64_t p1 = 0, b1 = 0, p2 = 0, b2 = 0;
	uint32_t id1 = 0, id2 = 0, got = 0, len;
	int received[8];

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	CHECK(qa != NULL && qb != NULL);
	o1 = counter(&id1);
	o2 = counter(&id2);
	CHECK(o1 != NULL && o2 != NULL && id1 != id2);
	c1 = action(mlx5dv_dr_action_create_flow_counter(o1, 0));
	c2 = action(mlx5dv_dr_action_create_flow_counter(o2, 0));
	to_b = action(mlx5dv_dr_action_create_dest_ibv_qp(qb));
	CHECK(c1 != NULL && c2 != NULL && to_b != NULL);
	rx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_RX);
	deflt = table(rx, 2);
	CHECK(rx != NULL && deflt != NULL);
	CHECK(rule_on(smac_matcher_in(deflt, 0), mac_src, 1, &c2) != NULL);
	samples[0] = c1;
	samples[1] = to_b;
	attr.sample_ratio = 4;
	attr.default_next_table = deflt;
	attr.num_sample_actions = 2;
	attr.sample_actions = samples;
	sampler = action(mlx5dv_dr_action_create_flow_sampler(&attr));
	CHECK(sampler != NULL);
	CHECK(rule_on(smac_matcher(rx, 1), mac_src, 1, &sampler) != NULL);
	len = make_frame(env.buf[0], 90, false);
	for (int i = 0; i < 8; i++)
		received[i] = send_one(qa, qb, len, &got);
	for (int i = 0; i < 8; i++)
		CHECK(received[i] == (i % 4 == 0 ? 1 : 0));
	CHECK_OK(query(o1, id1, false, &p1, &b1));
	CHECK_OK(query(o2, id2, false, &p2, &b2));
	CHECK(p1 == 2 && b1 == 2u * len);
	CHECK(p2 == 8 && b2 == 8u * len);
	/* The default table and the sample actions stay while the sampler lives. */
	CHECK_ERR(mlx5dv_dr_table_destroy(deflt), EBUSY);
	CHECK_ERR(mlx5dv_dr_action_destroy(c1), EBUSY);
	/* Refused: ratio 0 or no actions (EINVAL); a transmit table, a drop among the samples (EOPNOTSUPP). */
	attr.sample_ratio = 0;
	REFUSED(mlx5dv_dr_action_create_flow_sampler(&attr), EINVAL);
	attr.sample_ratio = 4;
	attr.num_sample_actions = 0;
	REFUSED(mlx5dv_dr_action_create_flow_sampler(&attr), EINVAL);
	attr.num_sample_actions = 1;
	samples[0] = action(mlx5dv_dr_action_create_drop());
	REFUSED(mlx5dv_dr_action_create_flow_sampler(&attr), EOPNOTSUPP);
	samples[0] = c1;
	attr.default_next_table = table(domain(MLX5DV_DR_DOMAIN_TYPE_NIC_TX), 2);
	REFUSED(mlx5dv_dr_action_create_flow_sampler(&attr), EOPNOTSUPP);
}

/* ---- mlx5dv_create_flow with a reformat flow action ---- */

/* An egress flow with the encap flow action sends the tunnel frame; the action stays while the flow lives. */
static void test_flow_encap(void)
{
	struct mlx5dv_flow_matcher_attr ma = {.type = IBV_FLOW_ATTR_NORMAL,
					      .comp_mask = MLX5DV_FLOW_MATCHER_MASK_FT_TYPE};
	struct mlx5dv_flow_action_attr fa = {.type = MLX5DV_FLOW_ACTION_IBV_FLOW_ACTION};
	struct mlx5dv_flow_action_attr to_b = {.type = MLX5DV_FLOW_ACTION_DEST_IBV_QP};
	struct mlx5dv_flow_matcher *mtx, *mrx;
	struct ibv_flow_action *encap;
	struct ibv_flow *ftx;
	uint8_t hdr[ENCAP_LEN], expect[FRAME_MAX];
	struct match empty = {.match_sz = 64};
	struct ibv_qp *qa, *qb;
	uint32_t len, got = 0;

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	CHECK(qa != NULL && qb != NULL);
	vxlan_header(hdr);
	ma.match_mask = (struct mlx5dv_flow_match_parameters *)&empty;
	ma.ft_type = MLX5DV_FLOW_TABLE_TYPE_NIC_TX;
	mtx = kept(mlx5dv_create_flow_matcher(env.c, &ma), fmatcher_cb);
	ma.ft_type = MLX5DV_FLOW_TABLE_TYPE_NIC_RX;
	mrx = kept(mlx5dv_create_flow_matcher(env.c, &ma), fmatcher_cb);
	CHECK(mtx != NULL && mrx != NULL);
	/* Encap for a receive table, decap for a transmit one: EINVAL; an FDB table: EOPNOTSUPP. */
	REFUSED(mlx5dv_create_flow_action_packet_reformat(env.c, sizeof(hdr), hdr,
							  MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL,
							  MLX5DV_FLOW_TABLE_TYPE_NIC_RX),
		EINVAL);
	REFUSED(mlx5dv_create_flow_action_packet_reformat(env.c, 0, NULL,
							  MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2,
							  MLX5DV_FLOW_TABLE_TYPE_NIC_TX),
		EINVAL);
	REFUSED(mlx5dv_create_flow_action_packet_reformat(env.c, sizeof(hdr), hdr,
							  MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL,
							  MLX5DV_FLOW_TABLE_TYPE_FDB),
		EOPNOTSUPP);
	REFUSED(mlx5dv_create_flow_action_packet_reformat(env.c, 12, hdr,
							  MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL,
							  MLX5DV_FLOW_TABLE_TYPE_NIC_TX),
		EINVAL);
	encap = mlx5dv_create_flow_action_packet_reformat(env.c, sizeof(hdr), hdr,
							  MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL,
							  MLX5DV_FLOW_TABLE_TYPE_NIC_TX);
	CHECK(kept(encap, faction_cb) != NULL);
	fa.action = encap;
	to_b.qp = qb;
	/* The encap action on the receive matcher: EINVAL. */
	errno = 0;
	CHECK(mlx5dv_create_flow(mrx, (struct mlx5dv_flow_match_parameters *)&empty, 1, &fa) == NULL);
	CHECK(errno == EINVAL);
	ftx = mlx5dv_create_flow(mtx, (struct mlx5dv_flow_match_parameters *)&empty, 1, &fa);
	CHECK(ftx != NULL);
	CHECK(kept(mlx5dv_create_flow(mrx, (struct mlx5dv_flow_match_parameters *)&empty, 1, &to_b),
		   flow_cb) != NULL);
	len = make_frame(env.buf[0], 256, false);
	vxlan_expected(expect, hdr, env.buf[0], len);
	CHECK(send_one(qa, qb, len, &got) == 1);
	CHECK(got == len + ENCAP_LEN);
	CHECK(memcmp(env.buf[1], expect, len + ENCAP_LEN) == 0);
	CHECK_ERR(ibv_destroy_flow_action(encap), EBUSY);
	CHECK_OK(ibv_destroy_flow(ftx));
	CHECK(send_one(qa, qb, len, &got) == 1);
	CHECK(got == len);
	CHECK(memcmp(env.buf[1], env.buf[0], len) == 0);
}

/* A receive flow with a modify-header flow action and a QP: the QP gets the frame with its source MAC set. */
static void test_flow_modify(void)
{
	struct mlx5dv_flow_matcher_attr ma = {.type = IBV_FLOW_ATTR_NORMAL,
					      .comp_mask = MLX5DV_FLOW_MATCHER_MASK_FT_TYPE,
					      .ft_type = MLX5DV_FLOW_TABLE_TYPE_NIC_RX};
	struct mlx5dv_flow_action_attr acts[2] = {{.type = MLX5DV_FLOW_ACTION_DEST_IBV_QP},
						  {.type = MLX5DV_FLOW_ACTION_IBV_FLOW_ACTION}};
	struct match empty = {.match_sz = 64};
	struct mlx5dv_flow_matcher *mrx;
	struct ibv_flow_action *mod, *tx_mod;
	struct ibv_flow *fl;
	uint8_t expect[FRAME_MAX];
	struct ibv_qp *qa, *qb;
	uint32_t len, got = 0;
	uint64_t prm[2];

	CHECK(env_open() == 0);
	qa = raw_qp();
	qb = raw_qp();
	CHECK(qa != NULL && qb != NULL);
	ma.match_mask = (struct mlx5dv_flow_match_parameters *)&empty;
	mrx = kept(mlx5dv_create_flow_matcher(env.c, &ma), fmatcher_cb);
	CHECK(mrx != NULL);
	prm[0] = set_act(F_SMAC_47_16, 0, 0, 0x88888888);
	prm[1] = set_act(F_SMAC_15_0, 0, 16, 0x8888);
	REFUSED(mlx5dv_create_flow_action_modify_header(env.c, 12, prm, MLX5DV_FLOW_TABLE_TYPE_NIC_RX), EINVAL);
	REFUSED(mlx5dv_create_flow_action_modify_header(env.c, sizeof(prm), prm, MLX5DV_FLOW_TABLE_TYPE_FDB),
		EOPNOTSUPP);
	mod = kept(mlx5dv_create_flow_action_modify_header(env.c, sizeof(prm), prm, MLX5DV_FLOW_TABLE_TYPE_NIC_RX),
		   faction_cb);
	tx_mod = kept(mlx5dv_create_flow_action_modify_header(env.c, sizeof(prm), prm, MLX5DV_FLOW_TABLE_TYPE_NIC_TX),
		      faction_cb);
	CHECK(mod != NULL && tx_mod != NULL);
	acts[0].qp = qb;
	acts[1].action = tx_mod; /* a transmit action on a receive matcher: EINVAL */
	errno = 0;
	CHECK(mlx5dv_create_flow(mrx, (struct mlx5dv_flow_match_parameters *)&empty, 2, acts) == NULL);
	CHECK(errno == EINVAL);
	acts[1].action = mod;
	fl = kept(mlx5dv_create_flow(mrx, (struct mlx5dv_flow_match_parameters *)&empty, 2, acts), flow_cb);
	CHECK(fl != NULL);
	len = make_frame(env.buf[0], 128, false);
	memcpy(expect, env.buf[0], len);
	memcpy(expect + 6, mac_new, 6);
	CHECK(send_one(qa, qb, len, &got) == 1);
	CHECK(got == len);
	CHECK(memcmp(env.buf[1], expect, len) == 0);
	CHECK_ERR(ibv_destroy_flow_action(mod), EBUSY);
}

/* The rule dump has a record of each action, in rdma-core's numbering (dr_dbg.c): the counter's with its id. */
static void test_dump(void)
{
	struct mlx5dv_dr_action *acts[3];
	struct mlx5dv_dr_domain *tx;
	struct mlx5dv_dr_rule *r;
	struct mlx5dv_devx_obj *o;
	uint8_t hdr[ENCAP_LEN];
	__be64 mod[1];
	char *text = NULL, want[64];
	size_t size = 0;
	uint32_t id = 0;
	FILE *f;

	CHECK(env_open() == 0);
	tx = domain(MLX5DV_DR_DOMAIN_TYPE_NIC_TX);
	o = counter(&id);
	CHECK(tx != NULL && o != NULL);
	vxlan_header(hdr);
	mod[0] = set_act(F_IP_TTL, 0, 8, 1);
	acts[0] = action(mlx5dv_dr_action_create_modify_header(tx, 0, sizeof(mod), mod));
	acts[1] = reformat(tx, 0, MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL, sizeof(hdr), hdr);
	acts[2] = action(mlx5dv_dr_action_create_flow_counter(o, 0));
	CHECK(acts[0] != NULL && acts[1] != NULL && acts[2] != NULL);
	r = rule_on(smac_matcher(tx, 1), mac_src, 3, acts);
	CHECK(r != NULL);
	f = open_memstream(&text, &size);
	CHECK(f != NULL);
	CHECK_OK(mlx5dv_dump_dr_rule(f, r));
	fclose(f);
	CHECK(text != NULL && strstr(text, "\n3402,") != NULL && strstr(text, "\n3400,") != NULL);
	snprintf(want, sizeof(want), ",0x%x\n", id);
	CHECK(strstr(text, "\n3406,") != NULL && strstr(strstr(text, "\n3406,"), want) != NULL);
	free(text);
}

int main(void)
{
	unsetenv("SOFTDPU_MACHINE");
	unsetenv("SOFTDPU_TOPOLOGY");
	unsetenv("SOFTDPU_SIDE");
	RUN(test_encap_decap);
	RUN(test_decap_plain_frame);
	RUN(test_reformat_refused);
	RUN(test_modify_header);
	RUN(test_modify_l4_checksum);
	RUN(test_modify_refused);
	RUN(test_counter);
	RUN(test_counter_and_drop);
	RUN(test_counter_refused);
	RUN(test_sampler);
	RUN(test_flow_encap);
	RUN(test_flow_modify);
	RUN(test_dump);
	return th_summary("test_verbs_dr_act");
}
