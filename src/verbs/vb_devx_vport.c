/*
 * vb_devx_vport — the vport and LAG queries of mlx5dv_devx_general_cmd:
 * QUERY_NIC_VPORT_CONTEXT (the function's own vport: roce_en, the MTU and
 * the permanent MAC), QUERY_HCA_VPORT_CONTEXT (the port as ibv_query_port
 * and ibv_query_device say it: states, GUIDs, capability mask, LIDs) and
 * QUERY_LAG (no link aggregation: lag_state 0, which
 * UCX reads before it trusts the dct bit). PRM layouts (kernel mlx5_ifc.h):
 * query_nic_vport_context_in has other_vport at bit 0x40 and vport_number
 * at bits 0x50..0x5f; the out is a 0x10-byte header and nic_vport_context
 * with roce_en at bit 0x1f, mtu at bits 0x130..0x13f and permanent_address's
 * MAC in bytes 0xf6..0xfb; query_hca_vport_context_in adds port_num (bits
 * 0x4c..0x4f, 0 or 1 on this one-port device), its out a 0x10-byte header
 * and hca_vport_context (offsets below); query_lag_out is the 8-byte header and lagc,
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
#define HVC_OUT_SZ 0x210
#define HVC_CTX 0x10
#define HVC_STATES 0x22	 /* port_physical_state, vport_state_policy; port_state, vport_state */
#define HVC_SYS_GUID 0x28
#define HVC_PORT_GUID 0x30
#define HVC_NODE_GUID 0x38
#define HVC_CAP_MASK1 0x40
#define HVC_LID 0x60
#define HVC_LMC 0x63	 /* lmc (3 bits), subnet_timeout (5) */
#define HVC_SM_LID 0x64
#define HVC_SM_SL 0x66	 /* the high nibble */
/*
 * The Ethernet MTU in the PRM's form: 1500 bytes with the Ethernet and VLAN
 * headers and FCS (what RoCE's 1024-byte active MTU assumes).
 */
#define NVC_HW_MTU (1500 + 14 + 4 + 4)

#define VB_STAT_BAD_PARAM 0x3
#define VB_SYND_VPORT_NUM 0x5d0c0041u /* a vport other than 0 without other_vport */
#define VB_SYND_OTHER_VPORT 0x5d0c0042u /* other vports: this function manages none */
#define VB_SYND_PORT_NUM 0x5d0c0043u	/* a port this device does not have */

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

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void hvc_fill(uint8_t *ctx, const struct ibv_device_attr *a, const struct ibv_port_attr *p,
		     const union ibv_gid *gid)
{
	ctx[HVC_STATES] = (uint8_t)(p->phys_state << 4);
	ctx[HVC_STATES + 1] = (uint8_t)(p->state << 4 | p->state);
	memcpy(ctx + HVC_SYS_GUID, &a->sys_image_guid, 8); /* both in network order */
	memcpy(ctx + HVC_PORT_GUID, gid->raw + 8, 8);	    /* GID 0's interface id */
	memcpy(ctx + HVC_NODE_GUID, &a->node_guid, 8);
	vb_prm_put32(ctx + HVC_CAP_MASK1, p->port_cap_flags);
	put16(ctx + HVC_LID, p->lid);
	ctx[HVC_LMC] = (uint8_t)((p->lmc & 0x7) << 5 | (p->subnet_timeout & 0x1f));
	put16(ctx + HVC_SM_LID, p->sm_lid);
	ctx[HVC_SM_SL] = (uint8_t)(p->sm_sl << 4);
}

int vb_devx_query_hca_vport(struct ibv_context *c, const uint8_t *in, uint8_t *out, size_t outlen)
{
	uint8_t full[HVC_OUT_SZ] = {0};
	struct ibv_device_attr a;
	struct ibv_port_attr p;
	union ibv_gid gid;
	unsigned port = in[9] & 0xf;
	int err = vport_own(in, out, outlen);

	if (err != 0)
		return err;
	if (port > VB_PORT)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_PORT_NUM);
	if (ibv_query_device(c, &a) != 0 || ibv_query_port(c, VB_PORT, &p) != 0 ||
	    ibv_query_gid(c, VB_PORT, 0, &gid) != 0)
		return EIO;
	hvc_fill(full + HVC_CTX, &a, &p, &gid);
	return vport_answer(out, outlen, full, sizeof(full));
}

int vb_devx_query_lag(uint8_t *out, size_t outlen)
{
	uint8_t full[LAG_OUT_SZ] = {0}; /* lag_state 0: no aggregation on the one port */

	return vport_answer(out, outlen, full, sizeof(full));
}
