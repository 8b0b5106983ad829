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
