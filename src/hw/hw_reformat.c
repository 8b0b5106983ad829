/*
 * hw_reformat — tunnel encap and decap on a frame (hw_reformat.h).
 *
 * Both walk the same outer headers: Ethernet, an optional 802.1Q tag, IPv4
 * (its IHL) or IPv6 (no extension headers), UDP. The walk stops where the
 * bytes or the types stop; what it found says what an encap header may be
 * fixed up in and whether a frame is a VXLAN tunnel.
 */
#include <string.h>

#include "hw_reformat.h"

#define RF_ETH 14
#define RF_VLAN 4
#define RF_IPV4_MIN 20
#define RF_IPV6 40
#define RF_UDP 8
#define RF_VXLAN 8
#define RF_TPID_8021Q 0x8100
#define RF_TYPE_IPV4 0x0800
#define RF_TYPE_IPV6 0x86dd
#define RF_PROTO_UDP 17
#define RF_PORT_VXLAN 4789

/* What the walk found: offsets of the layers present (0: absent) and whether one was cut short. */
struct rf_hdrs {
	uint32_t l3;	 /* the IP header */
	uint32_t l4;	 /* the UDP header */
	uint32_t end;	 /* past the last complete header */
	bool ipv6;
	bool cut;	 /* a type announced a header the bytes do not hold */
};

static uint16_t rf_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void rf_wr16(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* The IP layer at h->l3 of type type: its header, and UDP after it. */
static void rf_walk_ip(const uint8_t *b, uint32_t n, uint16_t type, struct rf_hdrs *h)
{
	uint32_t l3 = h->l3, hl;
	uint8_t proto;

	if (type == RF_TYPE_IPV4) {
		hl = n > l3 ? (b[l3] & 0xfu) * 4u : 0;
		if (n < l3 + RF_IPV4_MIN || hl < RF_IPV4_MIN || n < l3 + hl) {
			h->cut = true;
			return;
		}
		proto = b[l3 + 9];
	} else {
		hl = RF_IPV6;
		if (n < l3 + hl) {
			h->cut = true;
			return;
		}
		proto = b[l3 + 6];
		h->ipv6 = true;
	}
	h->end = l3 + hl;
	if (proto != RF_PROTO_UDP)
		return;
	if (n < h->end + RF_UDP) {
		h->cut = true;
		return;
	}
	h->l4 = h->end;
	h->end += RF_UDP;
}

static struct rf_hdrs rf_walk(const uint8_t *b, uint32_t n)
{
	struct rf_hdrs h = { .end = RF_ETH };
	uint16_t type;

	if (n < RF_ETH) {
		h.cut = true;
		return h;
	}
	type = rf_rd16(b + 12);
	if (type == RF_TPID_8021Q) {
		if (n < RF_ETH + RF_VLAN) {
			h.cut = true;
			return h;
		}
		type = rf_rd16(b + 16);
		h.end += RF_VLAN;
	}
	if (type != RF_TYPE_IPV4 && type != RF_TYPE_IPV6)
		return h;
	h.l3 = h.end;
	rf_walk_ip(b, n, type, &h);
	return h;
}

enum hw_status hw_reformat_init(struct hw_reformat *r, enum hw_reformat_type type, const void *data, size_t len)
{
	if (r == NULL)
		return HW_ERR_INVAL;
	memset(r, 0, sizeof(*r));
	r->type = type;
	switch (type) {
	case HW_REFORMAT_L2_DECAP:
		return data == NULL && len == 0 ? HW_OK : HW_ERR_INVAL;
	case HW_REFORMAT_L2_ENCAP:
		if (data == NULL || len == 0 || len > HW_REFORMAT_DATA_MAX || rf_walk(data, (uint32_t)len).cut)
			return HW_ERR_INVAL;
		memcpy(r->data, data, len);
		r->len = (uint32_t)len;
		return HW_OK;
	default:
		return HW_ERR_INVAL;
	}
}

bool hw_reformat_fits(const struct hw_reformat *r, enum hw_steer_domain_type d)
{
	if (d == HW_STEER_FDB)
		return true;
	return r->type == HW_REFORMAT_L2_DECAP ? d == HW_STEER_NIC_RX : d == HW_STEER_NIC_TX;
}

/* The one's-complement sum of the IPv4 header at ip (hl bytes), its checksum field taken as 0. */
static uint16_t rf_ipv4_csum(const uint8_t *ip, uint32_t hl)
{
	uint32_t sum = 0;

	for (uint32_t i = 0; i < hl; i += 2)
		if (i != 10)
			sum += rf_rd16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffffu) + (sum >> 16);
	return (uint16_t)~sum;
}

/* The outer lengths (and IPv4 checksum) of a frame of total bytes whose first headers are h. */
static void rf_fix_lengths(uint8_t *b, uint32_t total, const struct rf_hdrs *h)
{
	if (h->l3 == 0)
		return;
	if (h->ipv6) {
		rf_wr16(b + h->l3 + 4, total - h->l3 - RF_IPV6);
	} else {
		uint32_t hl = (b[h->l3] & 0xfu) * 4u;

		rf_wr16(b + h->l3 + 2, total - h->l3);
		rf_wr16(b + h->l3 + 10, rf_ipv4_csum(b + h->l3, hl));
	}
	if (h->l4 != 0) {
		rf_wr16(b + h->l4 + 4, total - h->l4);
		rf_wr16(b + h->l4 + 6, 0);
	}
}

static bool rf_encap(const struct hw_reformat *r, struct hw_steer_frame *f)
{
	struct rf_hdrs h;

	if (f->cap - f->len < r->len)
		return false;
	memmove(f->buf + r->len, f->buf, f->len);
	memcpy(f->buf, r->data, r->len);
	f->len += r->len;
	/* The header was checked complete at init: the walk over it finds the same layers here. */
	h = rf_walk(r->data, r->len);
	rf_fix_lengths(f->buf, f->len, &h);
	return true;
}

static void rf_decap(struct hw_steer_frame *f)
{
	struct rf_hdrs h = rf_walk(f->buf, f->len);
	uint32_t inner;

	if (h.l4 == 0 || rf_rd16(f->buf + h.l4 + 2) != RF_PORT_VXLAN)
		return;
	inner = h.end + RF_VXLAN;
	if (f->len < inner + RF_ETH)
		return; /* no inner frame to keep: not a tunnel this action opens */
	memmove(f->buf, f->buf + inner, f->len - inner);
	f->len -= inner;
}

bool hw_reformat_apply(const struct hw_reformat *r, struct hw_steer_frame *f)
{
	if (r->type == HW_REFORMAT_L2_ENCAP)
		return rf_encap(r, f);
	rf_decap(f);
	return true;
}
