/*
 * vb_ah — address handles: the mlx5 address vector a UD send WQE carries,
 * built once at create and copied into each WQE's datagram segment.
 */
#include <stdlib.h>
#include <string.h>

#include "vb_export.h"
#include "vb_int.h"

VB_EXPORT struct ibv_ah *vb_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
VB_EXPORT struct ibv_ah *vb_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct vb_ah *ah;

	if (pd == NULL || attr == NULL || vb_ctx_checked(pd->context) == NULL ||
	    (attr->port_num != 0 && attr->port_num != VB_PORT) || attr->sl > 15 ||
	    (attr->is_global && attr->grh.sgid_index >= VB_GID_TBL_LEN)) {
		errno = EINVAL;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (ah == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	ah->av.stat_rate_sl = attr->sl & 0xf;
	ah->av.fl_mlid = attr->src_path_bits & 0x7f;
	ah->av.rlid = htobe16(attr->dlid);
	if (attr->is_global) {
		ah->av.tclass = attr->grh.traffic_class;
		ah->av.hop_limit = attr->grh.hop_limit;
		ah->av.grh_gid_fl = htobe32(HW_AV_GRH | attr->grh.sgid_index << 20 |
					   (attr->grh.flow_label & HW_AV_FLOW_LABEL_MASK));
		memcpy(ah->av.rgid, attr->grh.dgid.raw, sizeof(ah->av.rgid));
	}
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
