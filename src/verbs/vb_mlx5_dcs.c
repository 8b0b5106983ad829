/*
 * vb_mlx5_dcs — libmlx5.so.1's DCI stream reset and AH-to-QP mapping: each
 * finds the device's table and calls libibverbs (vb_dcs.c). A device without
 * the table answers as mlx5 does for an operation it lacks: EOPNOTSUPP.
 */
#include <errno.h>

#include "vb_export.h"
#include "vb.h"

static const struct vb_dv_dcs_ops *vb_dcs_of(struct ibv_context *c)
{
	struct vb_context *ctx = c != NULL ? vb_ctx_checked(c) : NULL;

	return ctx != NULL && ctx->dev->dv != NULL ? ctx->dev->dv->dcs : NULL;
}

VB_EXPORT int mlx5dv_dci_stream_id_reset(struct ibv_qp *qp, uint16_t stream_id)
{
	const struct vb_dv_dcs_ops *d = qp != NULL ? vb_dcs_of(qp->context) : NULL;

	return d != NULL ? d->dci_stream_id_reset(qp, stream_id) : EOPNOTSUPP;
}

VB_EXPORT int mlx5dv_map_ah_to_qp(struct ibv_ah *ah, uint32_t qp_num)
{
	const struct vb_dv_dcs_ops *d = ah != NULL ? vb_dcs_of(ah->context) : NULL;

	return d != NULL ? d->map_ah_to_qp(ah, qp_num) : EOPNOTSUPP;
}
