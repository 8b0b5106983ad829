/*
 * vb_flow — ibv_create_flow / ibv_destroy_flow: a flow of a raw packet QP
 * is a rule of the Ethernet port's receive steering (hw_steer.h) whose
 * action is the QP's TIR, so a frame from the wire that matches it lands in
 * the QP's RQ. The verbs flows share one NIC receive domain with one table
 * (level 0), the kernel's root table, created with its first user and freed
 * with the last; each flow is a matcher of its priority (lower first, as
 * mlx5) and mask, with one rule. mlx5dv flow matchers (vb_dv_flow.c) put
 * their rules in the same root table, or in the NIC transmit one beside it.
 * mlx5dv_dr programs' domains are looked at beside them (creation order).
 *
 * Specs (rdma-core's ibv_flow_spec_*): ETH (destination and source MAC,
 * ethertype, VLAN tag), IPV4 and IPV4_EXT (addresses, protocol, TOS, TTL),
 * IPV6 (addresses, next header, traffic class, hop limit), TCP and UDP
 * (ports); each value under its mask, in network order as the frame has it.
 * ACTION_TAG gives the frames' receive completions its tag (24 bits, one
 * tag a flow: EINVAL beyond, as mlx5_ib). NORMAL flows only: sniffer,
 * default and egress flows, tunnels, inner headers and other actions are
 * EOPNOTSUPP, as on a card without them.
 */
#include <endian.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hw_steer.h"
#include "vb_export.h"
#include "vb_int.h"

/* Byte offsets in fte_match_set_lyr_2_4, as hw_steer_parse fills it. */
#define M_SMAC 0
#define M_ETHERTYPE 6
#define M_DMAC 8
#define M_VLAN 14
#define M_IP_PROTOCOL 16
#define M_IP_DSCP_ECN 17
#define M_FLAGS 18 /* ip_version in bits 12..9, cvlan_tag bit 15 */
#define M_TCP_SPORT 20
#define M_TCP_DPORT 22
#define M_TTL 27
#define M_UDP_SPORT 28
#define M_UDP_DPORT 30
#define M_SRC_IP 32
#define M_DST_IP 48
#define M_IP_VERSION_MASK (0xfu << 9)
#define M_CVLAN (1u << 15)
#define PROTO_TCP 6
#define PROTO_UDP 17
#define FLOW_SPEC_MAX 256 /* longer than any spec: a size beyond it is garbage */

struct vb_flow {
	struct ibv_flow flow;
	struct vb_qp *qp;	     /* held while the flow lives; NULL for a dv flow to a TIR or drop */
	struct hw_steer_matcher *m;  /* the flow's own; NULL for a dv flow (its matcher's) */
	struct hw_steer_rule *r;
	_Atomic uint32_t *m_users;   /* a dv flow's matcher's count of flows */
	_Atomic uint32_t *a_users;   /* a dv flow's flow action's count of flows (vb_dr_act.c) */
};

/* A flow's match being built: value and mask. */
struct flow_match {
	uint8_t v[HW_STEER_MATCH_BYTES];
	uint8_t m[HW_STEER_MATCH_BYTES];
	int ip_version; /* 0, 4 or 6: what an L3 spec said */
	bool tagged;
	uint32_t tag;
};

/* The root tables: [0] NIC receive, [1] NIC transmit (egress). */
static pthread_mutex_t flow_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hw_steer_domain *flow_dmn[2];
static struct hw_steer_table *flow_tbl[2];
static uint32_t flow_count[2]; /* users of flow_tbl: flows and dv matchers */

/* n bytes of value under mask at off (both as the spec has them: network order). */
static void flow_put(struct flow_match *f, uint32_t off, const void *val, const void *mask, uint32_t n)
{
	const uint8_t *v = val, *m = mask;

	for (uint32_t i = 0; i < n; i++) {
		f->m[off + i] |= m[i];
		f->v[off + i] = (uint8_t)((f->v[off + i] & ~m[i]) | (v[i] & m[i]));
	}
}

static void flow_put_u8(struct flow_match *f, uint32_t off, uint8_t val, uint8_t mask)
{
	flow_put(f, off, &val, &mask, 1);
}

static void flow_put_ip_version(struct flow_match *f, int ver)
{
	uint16_t v = htobe16((uint16_t)(ver << 9)), m = htobe16(M_IP_VERSION_MASK);

	flow_put(f, M_FLAGS, &v, &m, 2);
	f->ip_version = ver;
}

static int flow_eth(struct flow_match *f, const struct ibv_flow_spec_eth *s)
{
	const struct ibv_flow_eth_filter *v = &s->val, *m = &s->mask;

	flow_put(f, M_DMAC, v->dst_mac, m->dst_mac, 6);
	flow_put(f, M_SMAC, v->src_mac, m->src_mac, 6);
	flow_put(f, M_ETHERTYPE, &v->ether_type, &m->ether_type, 2);
	if (m->vlan_tag != 0) {
		uint16_t tag = htobe16(M_CVLAN);

		flow_put(f, M_VLAN, &v->vlan_tag, &m->vlan_tag, 2);
		flow_put(f, M_FLAGS, &tag, &tag, 2); /* a VLAN value matches tagged frames only */
	}
	return 0;
}

static int flow_ipv4(struct flow_match *f, const struct ibv_flow_spec_ipv4_ext *s, bool ext)
{
	const struct ibv_flow_ipv4_ext_filter *v = &s->val, *m = &s->mask;

	flow_put(f, M_SRC_IP + 12, &v->src_ip, &m->src_ip, 4);
	flow_put(f, M_DST_IP + 12, &v->dst_ip, &m->dst_ip, 4);
	if (ext) {
		if (m->flags != 0)
			return EOPNOTSUPP;
		flow_put_u8(f, M_IP_PROTOCOL, v->proto, m->proto);
		flow_put_u8(f, M_IP_DSCP_ECN, v->tos, m->tos);
		flow_put_u8(f, M_TTL, v->ttl, m->ttl);
	}
	flow_put_ip_version(f, 4);
	return 0;
}

static int flow_ipv6(struct flow_match *f, const struct ibv_flow_spec_ipv6 *s)
{
	const struct ibv_flow_ipv6_filter *v = &s->val, *m = &s->mask;

	if (m->flow_label != 0)
		return EOPNOTSUPP; /* not a field of the match layout */
	flow_put(f, M_SRC_IP, v->src_ip, m->src_ip, 16);
	flow_put(f, M_DST_IP, v->dst_ip, m->dst_ip, 16);
	flow_put_u8(f, M_IP_PROTOCOL, v->next_hdr, m->next_hdr);
	flow_put_u8(f, M_IP_DSCP_ECN, v->traffic_class, m->traffic_class);
	flow_put_u8(f, M_TTL, v->hop_limit, m->hop_limit);
	flow_put_ip_version(f, 6);
	return 0;
}

static int flow_l4(struct flow_match *f, const struct ibv_flow_spec_tcp_udp *s, bool tcp)
{
	const struct ibv_flow_tcp_udp_filter *v = &s->val, *m = &s->mask;

	flow_put_u8(f, M_IP_PROTOCOL, tcp ? PROTO_TCP : PROTO_UDP, 0xff);
	flow_put(f, tcp ? M_TCP_SPORT : M_UDP_SPORT, &v->src_port, &m->src_port, 2);
	flow_put(f, tcp ? M_TCP_DPORT : M_UDP_DPORT, &v->dst_port, &m->dst_port, 2);
	return 0;
}

/* One spec at p: its size in *used; 0, EINVAL (malformed) or EOPNOTSUPP. */
static int flow_spec(struct flow_match *f, const uint8_t *p, size_t *used)
{
	/* Copied out: specs follow each other at 4-byte steps, the union wants more. */
	union {
		struct ibv_flow_spec s;
		uint8_t b[FLOW_SPEC_MAX];
	} u;
	const struct ibv_flow_spec *s = &u.s;

	memset(&u, 0, sizeof(u));
	memcpy(&u, p, sizeof(u.s.hdr));
	if (s->hdr.size < sizeof(s->hdr) || s->hdr.size > FLOW_SPEC_MAX)
		return EINVAL;
	memcpy(&u, p, s->hdr.size);
	*used = s->hdr.size;
	switch (s->hdr.type) {
	case IBV_FLOW_SPEC_ETH:
		return s->hdr.size < sizeof(s->eth) ? EINVAL : flow_eth(f, &s->eth);
	case IBV_FLOW_SPEC_IPV4:
		if (s->hdr.size < sizeof(s->ipv4))
			return EINVAL;
		return flow_ipv4(f, (const struct ibv_flow_spec_ipv4_ext *)(const void *)&s->ipv4, false);
	case IBV_FLOW_SPEC_IPV4_EXT:
		return s->hdr.size < sizeof(s->ipv4_ext) ? EINVAL : flow_ipv4(f, &s->ipv4_ext, true);
	case IBV_FLOW_SPEC_IPV6:
		return s->hdr.size < sizeof(s->ipv6) ? EINVAL : flow_ipv6(f, &s->ipv6);
	case IBV_FLOW_SPEC_TCP:
	case IBV_FLOW_SPEC_UDP:
		if (s->hdr.size < sizeof(s->tcp_udp))
			return EINVAL;
		return flow_l4(f, &s->tcp_udp, s->hdr.type == IBV_FLOW_SPEC_TCP);
	case IBV_FLOW_SPEC_ACTION_TAG:
		if (s->hdr.size < sizeof(s->flow_tag) || s->flow_tag.tag_id >= (1u << 24) || f->tagged)
			return EINVAL;
		f->tagged = true;
		f->tag = s->flow_tag.tag_id;
		return 0;
	default:
		return EOPNOTSUPP; /* tunnels, inner headers, ESP, MPLS, other actions */
	}
}

static int flow_attr_ok(const struct vb_qp *qp, const struct ibv_flow_attr *a)
{
	if (qp->raw == NULL)
		return EOPNOTSUPP; /* steering delivers frames to raw packet QPs only */
	if (a->comp_mask != 0 || a->port != VB_PORT)
		return EINVAL;
	if (a->type != IBV_FLOW_ATTR_NORMAL || a->flags != 0)
		return EOPNOTSUPP;
	return 0;
}

/*
 * The specs follow the attribute, each as long as its own size says; the
 * attribute's size is not used (libibverbs walks the specs the same way,
 * and pyverbs leaves it at the attribute's own size).
 */
static int flow_parse(const struct ibv_flow_attr *a, struct flow_match *f)
{
	const uint8_t *p = (const uint8_t *)(a + 1);
	size_t used;
	int rc;

	for (uint8_t i = 0; i < a->num_of_specs; i++) {
		rc = flow_spec(f, p, &used);
		if (rc != 0)
			return rc;
		p += used;
	}
	return 0;
}

/* The shared table of a direction, made with its first user (flow_lock held). */
static int flow_table_get(int dir)
{
	static const enum hw_steer_domain_type type[2] = {HW_STEER_NIC_RX, HW_STEER_NIC_TX};

	if (flow_tbl[dir] != NULL)
		return 0;
	if (hw_steer_domain_create(type[dir], &flow_dmn[dir]) != HW_OK)
		return ENOMEM;
	if (hw_steer_table_create(flow_dmn[dir], 0, &flow_tbl[dir]) != HW_OK) {
		(void)hw_steer_domain_destroy(flow_dmn[dir]);
		flow_dmn[dir] = NULL;
		return ENOMEM;
	}
	return 0;
}

/* With the last user, the table and domain go (flow_lock held). */
static void flow_table_put(int dir)
{
	if (flow_count[dir] != 0 || flow_tbl[dir] == NULL)
		return;
	(void)hw_steer_table_destroy(flow_tbl[dir]);
	(void)hw_steer_domain_destroy(flow_dmn[dir]);
	flow_tbl[dir] = NULL;
	flow_dmn[dir] = NULL;
}

int vb_flow_root_matcher(bool egress, uint16_t priority, const uint8_t *mask, struct hw_steer_matcher **m)
{
	int dir = egress ? 1 : 0, rc;

	pthread_mutex_lock(&flow_lock);
	rc = flow_table_get(dir);
	if (rc == 0 && hw_steer_matcher_create(flow_tbl[dir], priority, mask, m) != HW_OK)
		rc = ENOMEM;
	if (rc == 0)
		flow_count[dir]++;
	flow_table_put(dir);
	pthread_mutex_unlock(&flow_lock);
	return rc;
}

int vb_flow_root_matcher_destroy(bool egress, struct hw_steer_matcher *m)
{
	int dir = egress ? 1 : 0;

	pthread_mutex_lock(&flow_lock);
	if (hw_steer_matcher_destroy(m) != HW_OK) {
		pthread_mutex_unlock(&flow_lock);
		return EBUSY;
	}
	flow_count[dir]--;
	flow_table_put(dir);
	pthread_mutex_unlock(&flow_lock);
	return 0;
}

static int flow_install(struct vb_flow *fl, const struct flow_match *f, uint16_t priority)
{
	struct hw_steer_action act[2] = {{.type = HW_STEER_ACT_TIR, .tirn = vb_raw_tirn(fl->qp)},
					 {.type = HW_STEER_ACT_TAG, .tag = f->tag}};
	int rc;

	rc = vb_flow_root_matcher(false, priority, f->m, &fl->m);
	if (rc != 0)
		return rc;
	if (hw_steer_rule_create(fl->m, f->v, act, f->tagged ? 2 : 1, &fl->r) != HW_OK) {
		(void)vb_flow_root_matcher_destroy(false, fl->m);
		return ENOMEM;
	}
	return 0;
}

struct ibv_flow *vb_flow_wrap(struct ibv_context *c, struct vb_qp *qp, struct hw_steer_rule *r,
			      _Atomic uint32_t *m_users)
{
	struct vb_flow *fl = calloc(1, sizeof(*fl));

	if (fl == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	fl->flow.context = c;
	fl->qp = qp;
	fl->r = r;
	fl->m_users = m_users;
	return &fl->flow;
}

void vb_flow_hold_action(struct ibv_flow *flow, _Atomic uint32_t *users)
{
	struct vb_flow *fl = (struct vb_flow *)flow;

	fl->a_users = users;
	atomic_fetch_add(users, 1);
}

struct ibv_flow *vb_create_flow(struct ibv_qp *ibqp, struct ibv_flow_attr *a)
{
	struct vb_qp *qp = vb_qp_of(ibqp);
	struct flow_match f = {0};
	struct vb_flow *fl;
	int rc = EINVAL;

	if (ibqp == NULL || a == NULL)
		goto err;
	rc = flow_attr_ok(qp, a);
	if (rc == 0)
		rc = flow_parse(a, &f);
	if (rc != 0)
		goto err;
	rc = ENOMEM;
	fl = calloc(1, sizeof(*fl));
	if (fl == NULL)
		goto err;
	fl->qp = qp;
	fl->flow.context = ibqp->context;
	rc = flow_install(fl, &f, a->priority);
	if (rc != 0) {
		free(fl);
		goto err;
	}
	vb_raw_flow_hold(qp, true);
	return &fl->flow;
err:
	errno = rc;
	return NULL;
}

int vb_destroy_flow(struct ibv_flow *flow)
{
	struct vb_flow *fl = (struct vb_flow *)flow;

	if (flow == NULL)
		return EINVAL;
	hw_steer_rule_destroy(fl->r);
	if (fl->m != NULL)
		(void)vb_flow_root_matcher_destroy(false, fl->m);
	if (fl->m_users != NULL)
		atomic_fetch_sub(fl->m_users, 1);
	if (fl->a_users != NULL)
		atomic_fetch_sub(fl->a_users, 1);
	if (fl->qp != NULL)
		vb_raw_flow_hold(fl->qp, false);
	free(fl);
	return 0;
}
