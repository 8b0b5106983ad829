/*
 * vb_mlx5_flow — libmlx5.so.1's mlx5dv flow matcher entries: each checks
 * the object handed in is ours (NULL or foreign: EINVAL, where rdma-core
 * would crash) and calls libibverbs through vb_dv_ops (vb_dv_flow.c). The
 * flows they make are ibv_flows, destroyed with ibv_destroy_flow.
 */
#include <errno.h>
#include <stdlib.h>

#include "vb_export.h"
#include "vb.h"

VB_EXPORT struct mlx5dv_flow_matcher *mlx5dv_create_flow_matcher(struct ibv_context *context,
								 struct mlx5dv_flow_matcher_attr *matcher_attr)
{
	struct vb_context *ctx = vb_ctx_checked(context);

	if (ctx == NULL) {
		errno = context == NULL ? EINVAL : EOPNOTSUPP;
		return NULL;
	}
	return ctx->dev->dv->flow_matcher_create(context, matcher_attr);
}

VB_EXPORT int mlx5dv_destroy_flow_matcher(struct mlx5dv_flow_matcher *matcher)
{
	if (matcher == NULL || matcher->magic != VB_MAGIC_FLOW_MATCHER)
		return EINVAL;
	return matcher->dv->flow_matcher_destroy(matcher);
}

VB_EXPORT struct ibv_flow *mlx5dv_create_flow(struct mlx5dv_flow_matcher *matcher,
					      struct mlx5dv_flow_match_parameters *match_value, size_t num_actions,
					      struct mlx5dv_flow_action_attr actions_attr[])
{
	if (matcher == NULL || matcher->magic != VB_MAGIC_FLOW_MATCHER) {
		errno = EINVAL;
		return NULL;
	}
	return matcher->dv->flow_create(matcher, match_value, num_actions, actions_attr);
}
