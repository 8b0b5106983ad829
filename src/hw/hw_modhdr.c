/*
 * hw_modhdr — header field set, add and copy on a frame (hw_modhdr.h).
 *
 * Each PRM field id is a place in one header: the layer, the bit where the
 * field starts (counted from the header's first bit, network order) and its
 * width. The frame's headers are found once per list; a field is read and
 * written bit by bit, so fields of any width and alignment share one path.
 */
#include <stdbool.h>
#include <string.h>

#include "hw_modhdr.h"
#include "hw_steer.h"

#define MH_SET 1
#define MH_ADD 2
#define MH_COPY 3

enum mh_layer {
	MH_L2,	  /* the Ethernet header */
	MH_TYPE,  /* the ethertype that names the L3 (after a tag) */
	MH_VLAN,  /* the 802.1Q tag: TPID then TCI */
	MH_IPV4,
	MH_IPV6,
	MH_TCP,
	MH_UDP,
	MH_REG,	  /* a metadata register: no place in a frame */
	MH_LAYERS,
};

struct mh_field {
	uint16_t id;
	uint8_t layer;
	uint16_t bit;
	uint8_t width;
};

/* MLX5_ACTION_IN_FIELD_OUT_* (mlx5_ifc.h); DSCP and ECN twice: their place in IPv4 and in IPv6. */
static const struct mh_field mh_fields[] = {
	{ 0x01, MH_L2, 48, 32 },    /* SMAC_47_16 */
	{ 0x02, MH_L2, 80, 16 },    /* SMAC_15_0 */
	{ 0x03, MH_TYPE, 0, 16 },   /* ETHERTYPE */
	{ 0x04, MH_L2, 0, 32 },	    /* DMAC_47_16 */
	{ 0x05, MH_L2, 32, 16 },    /* DMAC_15_0 */
	{ 0x06, MH_IPV4, 8, 6 },    /* IP_DSCP */
	{ 0x06, MH_IPV6, 4, 6 },
	{ 0x73, MH_IPV4, 14, 2 },   /* IP_ECN */
	{ 0x73, MH_IPV6, 10, 2 },
	{ 0x07, MH_TCP, 103, 9 },   /* TCP_FLAGS */
	{ 0x08, MH_TCP, 0, 16 },    /* TCP_SPORT */
	{ 0x09, MH_TCP, 16, 16 },   /* TCP_DPORT */
	{ 0x0a, MH_IPV4, 64, 8 },   /* IP_TTL */
	{ 0x0b, MH_UDP, 0, 16 },    /* UDP_SPORT */
	{ 0x0c, MH_UDP, 16, 16 },   /* UDP_DPORT */
	{ 0x0d, MH_IPV6, 64, 32 },  /* SIPV6_127_96 */
	{ 0x0e, MH_IPV6, 96, 32 },  /* SIPV6_95_64 */
	{ 0x0f, MH_IPV6, 128, 32 }, /* SIPV6_63_32 */
	{ 0x10, MH_IPV6, 160, 32 }, /* SIPV6_31_0 */
	{ 0x11, MH_IPV6, 192, 32 }, /* DIPV6_127_96 */
	{ 0x12, MH_IPV6, 224, 32 }, /* DIPV6_95_64 */
	{ 0x13, MH_IPV6, 256, 32 }, /* DIPV6_63_32 */
	{ 0x14, MH_IPV6, 288, 32 }, /* DIPV6_31_0 */
	{ 0x15, MH_IPV4, 96, 32 },  /* SIPV4 */
	{ 0x16, MH_IPV4, 128, 32 }, /* DIPV4 */
	{ 0x17, MH_VLAN, 20, 12 },  /* FIRST_VID */
	{ 0x47, MH_IPV6, 56, 8 },   /* IPV6_HOPLIMIT */
	{ 0x59, MH_TCP, 32, 32 },   /* TCP_SEQ_NUM */
	{ 0x5b, MH_TCP, 64, 32 },   /* TCP_ACK_NUM */
	{ 0x49, MH_REG, 0, 32 },    /* METADATA_REGA */
	{ 0x50, MH_REG, 0, 32 },    /* METADATA_REGB */
	{ 0x51, MH_REG, 0, 32 },    /* METADATA_REGC_0 .. 5 */
	{ 0x52, MH_REG, 0, 32 },
	{ 0x53, MH_REG, 0, 32 },
	{ 0x54, MH_REG, 0, 32 },
	{ 0x55, MH_REG, 0, 32 },
	{ 0x56, MH_REG, 0, 32 },
};

#define MH_NFIELDS (sizeof(mh_fields) / sizeof(mh_fields[0]))
#define MH_NONE 0xff

/* The first entry of id (the IPv4 one of DSCP and ECN), or MH_NONE. */
static uint8_t mh_find(uint16_t id)
{
	for (uint8_t i = 0; i < MH_NFIELDS; i++)
		if (mh_fields[i].id == id)
			return i;
	return MH_NONE;
}

static enum hw_status mh_field_ok(uint16_t id, uint8_t off, uint8_t len, uint8_t *idx)
{
	*idx = mh_find(id);
	if (*idx == MH_NONE)
		return HW_ERR_INVAL;
	if (mh_fields[*idx].layer == MH_REG)
		return HW_ERR_NOTSUP;
	return (unsigned)off + len > mh_fields[*idx].width ? HW_ERR_INVAL : HW_OK;
}

/* One action (host order) into op. */
static enum hw_status mh_parse(uint64_t a, struct hw_modhdr_op *op)
{
	uint8_t len = (uint8_t)((a >> 32) & 0x1f);
	enum hw_status st;

	memset(op, 0, sizeof(*op));
	op->type = (uint8_t)(a >> 60);
	op->len = len != 0 ? len : 32;
	switch (op->type) {
	case MH_SET:
		op->dst_off = (uint8_t)((a >> 40) & 0x1f);
		op->data = (uint32_t)a;
		return mh_field_ok((uint16_t)((a >> 48) & 0xfff), op->dst_off, op->len, &op->dst);
	case MH_ADD:
		op->data = (uint32_t)a;
		st = mh_field_ok((uint16_t)((a >> 48) & 0xfff), 0, 0, &op->dst);
		op->len = st == HW_OK ? mh_fields[op->dst].width : 0;
		return st;
	case MH_COPY:
		op->src_off = (uint8_t)((a >> 40) & 0x1f);
		op->dst_off = (uint8_t)((a >> 8) & 0x1f);
		st = mh_field_ok((uint16_t)((a >> 48) & 0xfff), op->src_off, op->len, &op->src);
		if (st == HW_OK)
			st = mh_field_ok((uint16_t)((a >> 16) & 0xfff), op->dst_off, op->len, &op->dst);
		return st;
	default:
		return HW_ERR_NOTSUP;
	}
}

static uint64_t mh_be64(uint64_t v)
{
	const uint8_t *b = (const uint8_t *)&v;
	uint64_t h = 0;

	for (int i = 0; i < 8; i++)
		h = h << 8 | b[i];
	return h;
}

enum hw_status hw_modhdr_init(struct hw_modhdr *m, const uint64_t *actions, size_t n)
{
	if (m == NULL || actions == NULL || n == 0 || n > HW_MODHDR_MAX)
		return HW_ERR_INVAL;
	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < n; i++) {
		enum hw_status st = mh_parse(mh_be64(actions[i]), &m->ops[i]);

		if (st != HW_OK)
			return st;
	}
	m->n = (uint32_t)n;
	return HW_OK;
}

/* ---- Applying ---- */

/* Where each layer starts in the frame (0: absent; the Ethernet header is at 0 and always there). */
struct mh_hdrs {
	uint32_t at[MH_LAYERS];
	uint32_t len[MH_LAYERS];
};

static uint16_t mh_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void mh_l4(uint32_t n, uint8_t proto, uint32_t l4, struct mh_hdrs *h)
{
	if (proto == 6 && n >= l4 + 20) {
		h->at[MH_TCP] = l4;
		h->len[MH_TCP] = 20;
	} else if (proto == 17 && n >= l4 + 8) {
		h->at[MH_UDP] = l4;
		h->len[MH_UDP] = 8;
	}
}

static void mh_l3(const uint8_t *b, uint32_t n, uint16_t type, uint32_t l3, struct mh_hdrs *h)
{
	uint32_t hl;

	if (type == 0x0800 && n >= l3 + 20 && b[l3] >> 4 == 4) {
		hl = (b[l3] & 0xfu) * 4u;
		if (hl < 20 || n < l3 + hl)
			return;
		h->at[MH_IPV4] = l3;
		h->len[MH_IPV4] = hl;
		if ((mh_rd16(b + l3 + 6) & 0x3fff) == 0) /* the first (or only) fragment holds the ports */
			mh_l4(n, b[l3 + 9], l3 + hl, h);
	} else if (type == 0x86dd && n >= l3 + 40 && b[l3] >> 4 == 6) {
		h->at[MH_IPV6] = l3;
		h->len[MH_IPV6] = 40;
		mh_l4(n, b[l3 + 6], l3 + 40, h);
	}
}

/* The frame's headers; false for a frame shorter than an Ethernet header. */
static bool mh_find_hdrs(const uint8_t *b, uint32_t n, struct mh_hdrs *h)
{
	uint32_t l3 = 14;

	memset(h, 0, sizeof(*h));
	if (n < 14)
		return false;
	h->len[MH_L2] = 14;
	h->at[MH_TYPE] = 12;
	h->len[MH_TYPE] = 2;
	if (mh_rd16(b + 12) == 0x8100 && n >= 18) {
		h->at[MH_VLAN] = 12;
		h->len[MH_VLAN] = 4;
		h->at[MH_TYPE] = 16;
		l3 = 18;
	}
	mh_l3(b, n, mh_rd16(b + h->at[MH_TYPE]), l3, h);
	return true;
}

/* The entry for field index i in this frame (DSCP and ECN: the IPv6 one for an IPv6 frame); NULL when absent. */
static const struct mh_field *mh_place(uint8_t i, const struct mh_hdrs *h, uint32_t *at)
{
	const struct mh_field *f = &mh_fields[i];

	if (f->layer == MH_IPV4 && h->len[MH_IPV4] == 0 && i + 1u < MH_NFIELDS &&
	    mh_fields[i + 1].id == f->id)
		f = &mh_fields[i + 1];
	if (h->len[f->layer] == 0)
		return NULL;
	*at = h->at[f->layer];
	return f;
}

/* Bits [off, off + n) of the field (off from its lowest bit), n <= 32. */
static uint32_t mh_get(const uint8_t *b, uint32_t at, const struct mh_field *f, unsigned off, unsigned n)
{
	uint32_t v = 0;

	for (unsigned i = 0; i < n; i++) {
		uint32_t bit = at * 8 + f->bit + f->width - 1 - (off + i); /* the field's bit off + i */

		v |= (uint32_t)((b[bit / 8] >> (7 - bit % 8)) & 1u) << i;
	}
	return v;
}

static void mh_put(uint8_t *b, uint32_t at, const struct mh_field *f, unsigned off, unsigned n, uint32_t v)
{
	for (unsigned i = 0; i < n; i++) {
		uint32_t bit = at * 8 + f->bit + f->width - 1 - (off + i);
		uint8_t m = (uint8_t)(0x80u >> (bit % 8));

		if ((v >> i) & 1u)
			b[bit / 8] |= m;
		else
			b[bit / 8] &= (uint8_t)~m;
	}
}

/* One action; true when it changed an IPv4 header. */
static bool mh_do(const struct hw_modhdr_op *op, uint8_t *b, const struct mh_hdrs *h)
{
	const struct mh_field *d, *s;
	uint32_t dat, sat, v;

	d = mh_place(op->dst, h, &dat);
	if (d == NULL)
		return false;
	if (op->type == MH_SET) {
		v = op->data;
	} else if (op->type == MH_ADD) {
		v = mh_get(b, dat, d, 0, d->width) + op->data;
	} else {
		s = mh_place(op->src, h, &sat);
		if (s == NULL)
			return false;
		v = mh_get(b, sat, s, op->src_off, op->len);
	}
	mh_put(b, dat, d, op->dst_off, op->len, v);
	return d->layer == MH_IPV4;
}

static void mh_ipv4_csum(uint8_t *ip, uint32_t hl)
{
	uint32_t sum = 0;

	ip[10] = ip[11] = 0;
	for (uint32_t i = 0; i < hl; i += 2)
		sum += mh_rd16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffffu) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;
}

/* What the TCP or UDP checksum covers that an action may change: the addresses and the L4 header. */
struct mh_l4_snap {
	uint32_t addr_at, addr_len, l4_at, l4_len, csum_at;
	uint8_t addr[32];
	uint8_t l4[20];
};

/* The bytes before the actions; false when the frame has no checksum to keep (no TCP or UDP, or UDP's 0). */
static bool mh_l4_save(const uint8_t *b, const struct mh_hdrs *h, struct mh_l4_snap *s)
{
	bool v6 = h->len[MH_IPV6] != 0;
	uint32_t l3 = v6 ? h->at[MH_IPV6] : h->at[MH_IPV4];

	if (h->len[MH_TCP] != 0) {
		s->l4_at = h->at[MH_TCP];
		s->l4_len = h->len[MH_TCP];
		s->csum_at = s->l4_at + 16;
	} else if (h->len[MH_UDP] != 0) {
		s->l4_at = h->at[MH_UDP];
		s->l4_len = h->len[MH_UDP];
		s->csum_at = s->l4_at + 6;
		if (mh_rd16(b + s->csum_at) == 0)
			return false; /* IPv4 UDP without a checksum keeps none */
	} else {
		return false;
	}
	s->addr_at = l3 + (v6 ? 8 : 12);
	s->addr_len = v6 ? 32 : 8;
	memcpy(s->addr, b + s->addr_at, s->addr_len);
	memcpy(s->l4, b + s->l4_at, s->l4_len);
	return true;
}

/* RFC 1624's update, HC' = ~(~HC + ~m + m'), for each 16-bit word of old that changed in now. */
static uint32_t mh_csum_delta(uint32_t sum, const uint8_t *old, const uint8_t *now, uint32_t n)
{
	for (uint32_t i = 0; i < n; i += 2) {
		uint16_t o = mh_rd16(old + i), w = mh_rd16(now + i);

		if (o != w)
			sum += (uint16_t)~o + (uint32_t)w;
	}
	return sum;
}

static void mh_l4_fix(uint8_t *b, const struct mh_l4_snap *s, bool udp)
{
	uint32_t sum = (uint16_t)~mh_rd16(b + s->csum_at);

	sum = mh_csum_delta(sum, s->addr, b + s->addr_at, s->addr_len);
	sum = mh_csum_delta(sum, s->l4, b + s->l4_at, s->l4_len);
	while (sum >> 16)
		sum = (sum & 0xffffu) + (sum >> 16);
	sum = (uint16_t)~sum;
	if (udp && sum == 0)
		sum = 0xffff; /* 0 would say "no checksum" */
	b[s->csum_at] = (uint8_t)(sum >> 8);
	b[s->csum_at + 1] = (uint8_t)sum;
}

void hw_modhdr_apply(const struct hw_modhdr *m, struct hw_steer_frame *f)
{
	struct mh_l4_snap snap;
	struct mh_hdrs h;
	bool ipv4 = false, l4;

	if (!mh_find_hdrs(f->buf, f->len, &h))
		return;
	l4 = mh_l4_save(f->buf, &h, &snap);
	/* A set of the ethertype or the IP version moves no header: the places found stay as they were. */
	for (uint32_t i = 0; i < m->n; i++)
		ipv4 |= mh_do(&m->ops[i], f->buf, &h);
	if (ipv4)
		mh_ipv4_csum(f->buf + h.at[MH_IPV4], h.len[MH_IPV4]);
	if (l4)
		mh_l4_fix(f->buf, &snap, h.len[MH_UDP] != 0);
}
