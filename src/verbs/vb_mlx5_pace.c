/*
 * vb_mlx5_pace — libmlx5.so.1's packet-pacing entries and schedule
 * elements: each finds its device's table and calls libibverbs (vb_pace.c,
 * vb_sched.c). A device without the table answers as mlx5 does for an
 * operation it lacks: EOPNOTSUPP. Freeing, modifying and destroying take
 * the table an entry or element was made by (every device has the same
 * one), and read nothing of the handle: one already freed is looked up
 * among the live ones there (EINVAL, or nothing for mlx5dv_pp_free).
 */
#include <errno.h>
#include <stddef.h>

#include "vb_export.h"
#include "vb.h"

static const struct vb_dv_pace_ops *pace_made; /* __atomic builtins; the table of the first entry or element made */

static const struct vb_dv_pace_ops *vb_pace_of(struct ibv_context *c)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	const struct vb_dv_pace_ops *p = ctx != NULL && ctx->dev->dv != NULL ? ctx->dev->dv->pace : NULL;

	if (p != NULL && __atomic_load_n(&pace_made, __ATOMIC_ACQUIRE) == NULL)
		__atomic_store_n(&pace_made, p, __ATOMIC_RELEASE);
	return p;
}

static const struct vb_dv_pace_ops *vb_pace_of_se(const void *handle)
{
	(void)handle; /* not read: it may be one already destroyed */
	return __atomic_load_n(&pace_made, __ATOMIC_ACQUIRE);
}

VB_EXPORT struct mlx5dv_pp *mlx5dv_pp_alloc(struct ibv_context *context, size_t pp_context_sz, const void *pp_context,
					    uint32_t flags)
{
	const struct vb_dv_pace_ops *p = vb_pace_of(context);

	if (p == NULL) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return p->pp_alloc(context, pp_context_sz, pp_context, flags);
}

VB_EXPORT void mlx5dv_pp_free(struct mlx5dv_pp *pp)
{
	const struct vb_dv_pace_ops *p = vb_pace_of_se(pp);

	if (p != NULL)
		p->pp_free(pp);
}

VB_EXPORT struct mlx5dv_sched_node *mlx5dv_sched_node_create(struct ibv_context *context,
							     const struct mlx5dv_sched_attr *sched_attr)
{
	const struct vb_dv_pace_ops *p = vb_pace_of(context);

	if (p == NULL) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return p->node_create(context, sched_attr);
}

VB_EXPORT struct mlx5dv_sched_leaf *mlx5dv_sched_leaf_create(struct ibv_context *context,
							     const struct mlx5dv_sched_attr *sched_attr)
{
	const struct vb_dv_pace_ops *p = vb_pace_of(context);

	if (p == NULL) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	return p->leaf_create(context, sched_attr);
}

VB_EXPORT int mlx5dv_sched_node_modify(struct mlx5dv_sched_node *node, const struct mlx5dv_sched_attr *sched_attr)
{
	const struct vb_dv_pace_ops *p = vb_pace_of_se(node);

	return p != NULL ? p->node_modify(node, sched_attr) : EINVAL;
}

VB_EXPORT int mlx5dv_sched_leaf_modify(struct mlx5dv_sched_leaf *leaf, const struct mlx5dv_sched_attr *sched_attr)
{
	const struct vb_dv_pace_ops *p = vb_pace_of_se(leaf);

	return p != NULL ? p->leaf_modify(leaf, sched_attr) : EINVAL;
}

VB_EXPORT int mlx5dv_sched_node_destroy(struct mlx5dv_sched_node *node)
{
	const struct vb_dv_pace_ops *p = vb_pace_of_se(node);

	return p != NULL ? p->node_destroy(node) : EINVAL;
}

VB_EXPORT int mlx5dv_sched_leaf_destroy(struct mlx5dv_sched_leaf *leaf)
{
	const struct vb_dv_pace_ops *p = vb_pace_of_se(leaf);

	return p != NULL ? p->leaf_destroy(leaf) : EINVAL;
}

VB_EXPORT int mlx5dv_modify_qp_sched_elem(struct ibv_qp *qp, const struct mlx5dv_sched_leaf *requestor,
					  const struct mlx5dv_sched_leaf *responder)
{
	const struct vb_dv_pace_ops *p = qp != NULL ? vb_pace_of(qp->context) : NULL;

	return p != NULL ? p->modify_qp_sched_elem(qp, requestor, responder) : EOPNOTSUPP;
}
