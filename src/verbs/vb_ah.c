/*
 * vb_ah — address handles: the mlx5 address vector a UD send WQE carries,
 * built once at create and copied into each WQE's datagram segment.
 *
 * On an Ethernet port, as mlx5_create_ah builds it: a GRH is required, the
 * vector's GRH bit stays clear (RoCE packets always carry one), the SL is
 * shifted left by one, rlid carries the UDP source port of a RoCE v2
 * source GID, and rmac the destination's MAC.
 */
#include <stdlib.h>
#include <string.h>

#include "vb_export.h"
#include "vb_int.h"

/*
 * The destination MAC of a RoCE GID, as the kernel resolves it: from the
 * EUI-64 of a link-local GID, else from the port that owns the GID (this
 * machine's, or another machine's by its form). Zero when nobody does.
 */
void vb_dmac(const uint8_t dgid[16], uint8_t mac[6])
{
	static const uint8_t ll[8] = { 0xfe, 0x80 };
	struct hw_gid_dest d;

	if (memcmp(dgid, ll, sizeof(ll)) == 0 && dgid[11] == 0xff && dgid[12] == 0xfe) {
		mac[0] = dgid[8] ^ 0x02, mac[1] = dgid[9], mac[2] = dgid[10];
		mac[3] = dgid[13], mac[4] = dgid[14], mac[5] = dgid[15];
		return;
	}
	hw_gid_route(dgid, &d);
	memcpy(mac, d.mac, 6);
}

/* The RoCE v2 UDP source port: from the flow label, else any in the range (mlx5_ah_set_udp_sport). */
static uint16_t vb_udp_sport(uint32_t fl)
{
	static _Atomic uint32_t seed = 0x9e3779b9u;
	uint32_t x;

	if (fl != 0)
		return ibv_flow_label_to_udp_sport(fl);
	x = atomic_fetch_add(&seed, 0x9e3779b9u);
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	return (uint16_t)(x % (IB_ROCE_UDP_ENCAP_VALID_PORT_MAX + 1 - IB_ROCE_UDP_ENCAP_VALID_PORT_MIN) +
			  IB_ROCE_UDP_ENCAP_VALID_PORT_MIN);
}

/* The checks of an address on the device's port: 0 or EINVAL (vb_int.h). */
int vb_ah_attr_ok(const struct vb_device *dev, const struct ibv_ah_attr *attr)
{
	struct hw_gid_entry e;

	if (attr->port_num != 0 && attr->port_num != VB_PORT)
		return EINVAL;
	if (!dev->roce)
		return attr->is_global && attr->grh.sgid_index >= hw_gid_tbl_len(&dev->fn) ? EINVAL : 0;
	/* RoCE routes by the GRH alone; its source GID must be a valid entry (rdma_check_ah_attr, rdma_fill_sgid_attr). */
	if (!attr->is_global || !hw_gid_get(&dev->fn, attr->grh.sgid_index, &e))
		return EINVAL;
	return 0;
}

static void vb_av_roce(const struct vb_device *dev, const struct ibv_ah_attr *attr, struct hw_wqe_datagram_seg *av)
{
	struct hw_gid_entry e;

	(void)hw_gid_get(&dev->fn, attr->grh.sgid_index, &e);
	if (e.type == HW_GID_TYPE_ROCE_V2)
		av->rlid = htobe16(vb_udp_sport(attr->grh.flow_label & HW_AV_FLOW_LABEL_MASK));
	av->stat_rate_sl = (uint8_t)((attr->sl & 0x7) << 1);
	av->tclass = attr->grh.traffic_class;
	av->hop_limit = attr->grh.hop_limit;
	av->grh_gid_fl = htobe32((uint32_t)attr->grh.sgid_index << 20 | (attr->grh.flow_label & HW_AV_FLOW_LABEL_MASK));
	memcpy(av->rgid, attr->grh.dgid.raw, sizeof(av->rgid));
	vb_dmac(attr->grh.dgid.raw, av->rmac);
}

static void vb_av_ib(const struct ibv_ah_attr *attr, struct hw_wqe_datagram_seg *av)
{
	av->stat_rate_sl = attr->sl & 0xf;
	av->fl_mlid = attr->src_path_bits & 0x7f;
	av->rlid = htobe16(attr->dlid);
	if (attr->is_global) {
		av->tclass = attr->grh.traffic_class;
		av->hop_limit = attr->grh.hop_limit;
		av->grh_gid_fl = htobe32(HW_AV_GRH | attr->grh.sgid_index << 20 |
					 (attr->grh.flow_label & HW_AV_FLOW_LABEL_MASK));
		memcpy(av->rgid, attr->grh.dgid.raw, sizeof(av->rgid));
	}
}

VB_EXPORT struct ibv_ah *vb_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
VB_EXPORT struct ibv_ah *vb_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct vb_context *ctx = pd != NULL ? vb_ctx_checked(pd->context) : NULL;
	struct vb_ah *ah;

	if (ctx == NULL || attr == NULL || attr->sl > 15 || vb_ah_attr_ok(ctx->dev, attr) != 0) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (ctx->dev->roce)
		vb_av_roce(ctx->dev, attr, &ah->av);
	else
		vb_av_ib(attr, &ah->av);
	ah->ah.context = pd->context;
	ah->ah.pd = pd;
	ah->global = attr->is_global != 0;
	return &ah->ah;
}
VB_SYMVER(vb_create_ah, ibv_create_ah, "IBVERBS_1.1");

VB_EXPORT int vb_destroy_ah(struct ibv_ah *ah);
VB_EXPORT int vb_destroy_ah(struct ibv_ah *ah)
{
	if (ah == NULL)
		return EINVAL;
	free(ah);
	return 0;
}
VB_SYMVER(vb_destroy_ah, ibv_destroy_ah, "IBVERBS_1.1");

/*
 * The address back to the sender of a UD receive, as rdma-core v44's
 * ibv_init_ah_from_wc reads it: the completion's slid, sl and path bits; with
 * a GRH, the network header the device wrote ahead of the payload (hw_grh.h)
 * gives the sender's GID, the local GID index of the receiving address (of
 * the header's kind: RoCE v2 behind UDP or an IPv4 header, else IB/RoCE v1),
 * hop limit and traffic class. A multicast destination names no local entry:
 * EINVAL.
 */
#define VB_GRH_NEXT_BTH 0x1b
#define VB_GRH_NEXT_UDP 0x11

/* The index of gid, of kind v2 or not, in the port's table (empty entries read as zero, RoCE v1); -1 when none. */
static int vb_gid_find(struct vb_context *ctx, const uint8_t gid[16], bool v2)
{
	uint32_t n = hw_gid_tbl_len(&ctx->dev->fn);
	struct hw_gid_entry e;

	for (uint32_t i = 0; i < n && i <= UINT8_MAX; i++) {
		if (!hw_gid_get(&ctx->dev->fn, i, &e))
			memset(&e, 0, sizeof(e));
		if ((e.type == HW_GID_TYPE_ROCE_V2) == v2 && memcmp(e.gid, gid, 16) == 0)
			return (int)i;
	}
	errno = EINVAL; /* the scan ran past the table, as ibv_query_gid fails there */
	return -1;
}

/* The IPv4 header's checksum is right (rdma-core trusts an IPv4 header only then). */
static bool vb_ipv4_csum_ok(const uint8_t *h)
{
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/* 4 or 6 for the header's IP version (IB's GRH counts as 6); -1 with EPROTONOSUPPORT. */
static int vb_grh_version(const struct ibv_grh *grh)
{
	const uint8_t *ip4 = (const uint8_t *)grh + 20;

	if ((be32toh(grh->version_tclass_flow) >> 28) != 6) {
		if (ip4[0] >> 4 == 4)
			return 4;
		errno = EPROTONOSUPPORT;
		return -1;
	}
	return (ip4[0] & 0xf) == 5 && vb_ipv4_csum_ok(ip4) ? 4 : 6;
}

static void vb_gid_v4(const uint8_t *ip, uint8_t gid[16])
{
	memset(gid, 0, 10);
	gid[10] = 0xff, gid[11] = 0xff;
	memcpy(gid + 12, ip, 4);
}

static int vb_ah_by_ipv4(struct vb_context *ctx, const uint8_t *h, struct ibv_ah_attr *a)
{
	uint8_t gid[16];
	int idx;

	if ((h[16] & 0xf0) == 0xe0) { /* class D: a multicast destination */
		errno = EINVAL;
		return -1;
	}
	vb_gid_v4(h + 16, gid);
	idx = vb_gid_find(ctx, gid, true);
	if (idx < 0)
		return -1;
	vb_gid_v4(h + 12, a->grh.dgid.raw);
	a->grh.sgid_index = (uint8_t)idx;
	a->grh.hop_limit = h[8];
	a->grh.traffic_class = h[1];
	return 0;
}

static int vb_ah_by_ipv6(struct vb_context *ctx, const struct ibv_grh *grh, struct ibv_ah_attr *a)
{
	int idx;

	if (grh->dgid.raw[0] == 0xff) {
		errno = EINVAL;
		return -1;
	}
	if (grh->next_hdr != VB_GRH_NEXT_UDP && grh->next_hdr != VB_GRH_NEXT_BTH) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	a->grh.dgid = grh->sgid;
	idx = vb_gid_find(ctx, grh->dgid.raw, grh->next_hdr == VB_GRH_NEXT_UDP);
	if (idx < 0)
		return -1;
	a->grh.sgid_index = (uint8_t)idx;
	a->grh.hop_limit = grh->hop_limit;
	a->grh.traffic_class = (uint8_t)(be32toh(grh->version_tclass_flow) >> 20);
	return 0;
}

VB_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context, uint8_t port_num, struct ibv_wc *wc,
				  struct ibv_grh *grh, struct ibv_ah_attr *ah_attr)
{
	struct vb_context *ctx = vb_ctx_checked(context);
	int v;

	if (ctx == NULL || wc == NULL || grh == NULL || ah_attr == NULL) {
		errno = EINVAL;
		return -1;
	}
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->grh.flow_label = be32toh(grh->version_tclass_flow) & 0xfffff;
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	ah_attr->is_global = 1;
	v = vb_grh_version(grh);
	if (v == 4)
		return vb_ah_by_ipv4(ctx, (const uint8_t *)grh + 20, ah_attr);
	return v == 6 ? vb_ah_by_ipv6(ctx, grh, ah_attr) : -1;
}

VB_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd, struct ibv_wc *wc, struct ibv_grh *grh,
					       uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (pd == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr) != 0)
		return NULL;
	return vb_create_ah(pd, &attr);
}
