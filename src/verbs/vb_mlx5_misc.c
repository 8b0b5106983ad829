/*
 * vb_mlx5_misc — libmlx5.so.1's port query, reserved QP numbers and UDP
 * source port: each finds the device's table and calls libibverbs
 * (vb_dvmisc.c). A device without the table answers as mlx5 does for an
 * operation it lacks: EOPNOTSUPP.
 */
#include <errno.h>

#include "vb_export.h"
#include "vb.h"

static const struct vb_dv_misc_ops *vb_misc_of(struct ibv_context *c)
{
	struct vb_context *ctx = vb_ctx_checked(c);

	return ctx != NULL && ctx->dev->dv != NULL ? ctx->dev->dv->misc : NULL;
}

VB_EXPORT int _mlx5dv_query_port(struct ibv_context *context, uint32_t port_num, struct mlx5dv_port *info,
				 size_t info_len)
{
	const struct vb_dv_misc_ops *m = vb_misc_of(context);

	return m != NULL ? m->query_port(context, port_num, info, info_len) : EOPNOTSUPP;
}

VB_EXPORT int mlx5dv_reserved_qpn_alloc(struct ibv_context *ctx, uint32_t *qpn)
{
	const struct vb_dv_misc_ops *m = vb_misc_of(ctx);

	return m != NULL ? m->reserved_qpn_alloc(ctx, qpn) : EOPNOTSUPP;
}

VB_EXPORT int mlx5dv_reserved_qpn_dealloc(struct ibv_context *ctx, uint32_t qpn)
{
	const struct vb_dv_misc_ops *m = vb_misc_of(ctx);

	return m != NULL ? m->reserved_qpn_dealloc(ctx, qpn) : EOPNOTSUPP;
}

VB_EXPORT int mlx5dv_modify_qp_udp_sport(struct ibv_qp *qp, uint16_t udp_sport)
{
	const struct vb_dv_misc_ops *m = qp != NULL ? vb_misc_of(qp->context) : NULL;

	return m != NULL ? m->modify_qp_udp_sport(qp, udp_sport) : EOPNOTSUPP;
}
