/*
 * hw_grh — the network header a UD receiver finds ahead of the payload.
 */
#include "hw_grh.h"

#include <endian.h>
#include <string.h>

#define GRH_NEXT_BTH 0x1b
#define GRH_NEXT_UDP 0x11
#define GRH_BTH_DETH 20	 /* BTH 12 + DETH 8 */
#define GRH_UDP 8
#define GRH_ICRC 4
#define GRH_IPV4_DF 0x4000

/* What follows the network header: (UDP,) BTH, DETH, the immediate, the padded payload, the ICRC. */
static uint32_t grh_after(uint32_t len, bool imm, bool udp)
{
	return (udp ? GRH_UDP : 0) + GRH_BTH_DETH + (imm ? 4 : 0) + ((len + 3) & ~3u) + GRH_ICRC;
}

/* The IB GRH or the IPv6 header: the same 40 bytes, next header BTH or UDP. */
static void grh_v6(uint8_t *g, const uint8_t sgid[16], const struct hw_wqe_datagram_seg *av, uint16_t paylen,
		   uint8_t next)
{
	uint32_t w0 = htobe32(6u << 28 | (uint32_t)av->tclass << 20 | (be32toh(av->grh_gid_fl) & HW_AV_FLOW_LABEL_MASK));

	memcpy(g, &w0, 4);
	paylen = htobe16(paylen);
	memcpy(g + 4, &paylen, 2);
	g[6] = next;
	g[7] = av->hop_limit;
	memcpy(g + 8, sgid, 16);
	memcpy(g + 24, av->rgid, 16);
}

/* The IPv4 header checksum: the ones' complement of the ones' complement sum of its 16-bit words. */
static uint16_t grh_ipv4_csum(const uint8_t *h)
{
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static void grh_v4(uint8_t *g, const uint8_t sgid[16], const struct hw_wqe_datagram_seg *av, uint16_t total)
{
	uint8_t *h = g + 20;
	uint16_t v;

	memset(g, 0, 20);
	h[0] = 0x45; /* version 4, 5 words */
	h[1] = av->tclass;
	v = htobe16(total);
	memcpy(h + 2, &v, 2);
	memset(h + 4, 0, 2); /* identification */
	v = htobe16(GRH_IPV4_DF);
	memcpy(h + 6, &v, 2);
	h[8] = av->hop_limit;
	h[9] = GRH_NEXT_UDP;
	memset(h + 10, 0, 2);
	memcpy(h + 12, sgid + 12, 4);
	memcpy(h + 16, av->rgid + 12, 4);
	v = htobe16(grh_ipv4_csum(h));
	memcpy(h + 10, &v, 2);
}

static bool grh_is_v4(const uint8_t gid[16])
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(gid, mapped, sizeof(mapped)) == 0;
}

void hw_grh_write(uint8_t g[HW_UD_GRH_BYTES], const uint8_t sgid[16], enum hw_gid_type type,
		  const struct hw_wqe_datagram_seg *av, uint32_t len, bool imm)
{
	if (type != HW_GID_TYPE_ROCE_V2) {
		grh_v6(g, sgid, av, (uint16_t)grh_after(len, imm, false), GRH_NEXT_BTH);
		return;
	}
	if (grh_is_v4(sgid) && grh_is_v4(av->rgid))
		grh_v4(g, sgid, av, (uint16_t)(20 + grh_after(len, imm, true)));
	else
		grh_v6(g, sgid, av, (uint16_t)grh_after(len, imm, true), GRH_NEXT_UDP);
}

void hw_grh_source(uint16_t lid, const uint8_t gid0[16], bool roce, const struct hw_wqe_datagram_seg *av,
		   uint8_t sgid[16], enum hw_gid_type *type)
{
	uint32_t index = be32toh(av->grh_gid_fl) >> 20 & 0xff;
	struct hw_gid_entry e;

	if (roce && hw_gid_port_get(lid, index, &e)) {
		memcpy(sgid, e.gid, 16);
		*type = e.type;
		return;
	}
	/* InfiniBand (or an index the port does not have): the port's GID 0. */
	memcpy(sgid, gid0, 16);
	*type = roce ? HW_GID_TYPE_ROCE_V1 : HW_GID_TYPE_IB;
}
