/*
 * vb_devx_vport — the vport and LAG queries of mlx5dv_devx_general_cmd:
 * QUERY_NIC_VPORT_CONTEXT (the function's own vport: roce_en, the MTU and
 * the permanent MAC) and QUERY_LAG (no link aggregation: lag_state 0, which
 * UCX reads before it trusts the dct bit). PRM layouts (kernel mlx5_ifc.h):
 * query_nic_vport_context_in has other_vport at bit 0x40 and vport_number
 * at bits 0x50..0x5f; the out is a 0x10-byte header and nic_vport_context
 * with roce_en at bit 0x1f, mtu at bits 0x130..0x13f and permanent_address's
 * MAC in bytes 0xf6..0xfb; query_lag_out is the 8-byte header and lagc,
 * lag_state in the low 3 bits of its byte 3.
 */
#include <string.h>

#include "vb_devx_prm.h"
#include "vb_int.h"

#define NVC_IN_SZ 0x10
#define NVC_OUT_SZ 0x110
#define NVC_CTX 0x10	      /* nic_vport_context in out */
#define NVC_ROCE_EN_BYTE 3    /* bit 0x1f */
#define NVC_MTU_BYTE 0x26     /* bits 0x130..0x13f */
#define NVC_MAC_BYTE 0xf6     /* permanent_address: mac_addr_47_32, mac_addr_31_0 */
#define LAG_OUT_SZ 0x10
/* The Ethernet MTU in the PRM's form: 1500 bytes with the Ethernet and VLAN headers and FCS (as RoCE's 1024-byte active MTU assumes). */
#define NVC_HW_MTU (1500 + 14 + 4 + 4)

#define VB_STAT_BAD_PARAM 0x3
#define VB_SYND_VPORT_NUM 0x5d0c0041u /* a vport other than 0 without other_vport */
#define VB_SYND_OTHER_VPORT 0x5d0c0042u /* other vports: this function manages none */

/* Copies what fits of a full answer into out (the card's mailbox, as QUERY_HCA_CAP). */
static int vport_answer(uint8_t *out, size_t outlen, const uint8_t *full, size_t n)
{
	memcpy(out, full, outlen < n ? outlen : n);
	return 0;
}

/* The vport fields of the input: 0 without other_vport, the vport refused otherwise. */
static int vport_own(const uint8_t *in, uint8_t *out, size_t outlen)
{
	bool other = (in[8] & 0x80) != 0;
	uint16_t num = (uint16_t)(in[10] << 8 | in[11]);

	if (other) { /* not here rather than wrong: EOPNOTSUPP */
		vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_OTHER_VPORT);
		return EOPNOTSUPP;
	}
	if (num != 0) /* the card's bad parameter */
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_VPORT_NUM);
	return 0;
}

int vb_devx_query_nic_vport(struct ibv_context *c, const uint8_t *in, uint8_t *out, size_t outlen)
{
	uint8_t full[NVC_OUT_SZ] = {0};
	struct ibv_port_attr p;
	union ibv_gid gid;
	int err = vport_own(in, out, outlen);

	if (err != 0)
		return err;
	if (ibv_query_port(c, VB_PORT, &p) != 0)
		return EIO;
	if (p.link_layer == IBV_LINK_LAYER_ETHERNET) {
		if (ibv_query_gid(c, VB_PORT, 0, &gid) != 0)
			return EIO;
		full[NVC_CTX + NVC_ROCE_EN_BYTE] = 0x01;
		full[NVC_CTX + NVC_MTU_BYTE] = (uint8_t)(NVC_HW_MTU >> 8);
		full[NVC_CTX + NVC_MTU_BYTE + 1] = (uint8_t)NVC_HW_MTU;
		vb_dmac(gid.raw, full + NVC_CTX + NVC_MAC_BYTE); /* GID 0 is the port MAC's link-local */
	}
	return vport_answer(out, outlen, full, sizeof(full));
}

int vb_devx_query_lag(uint8_t *out, size_t outlen)
{
	uint8_t full[LAG_OUT_SZ] = {0}; /* lag_state 0: no aggregation on the one port */

	return vport_answer(out, outlen, full, sizeof(full));
}
