/*
 * vb_mlx5_memvar — libmlx5.so.1's mlx5dv_dm_map_op_addr (vb_memic.c) and
 * mlx5dv_alloc_var / mlx5dv_free_var (vb_var.c). Each checks that the object
 * handed in is one of ours (a NULL or foreign context is EINVAL) and calls
 * libibverbs through the context's vb_dv_ops.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>

#include "vb_export.h"
#include "vb.h"

static const struct vb_dv_ops *vb_memvar_dv(struct ibv_context *c)
{
	struct vb_context *ctx = vb_ctx_checked(c);

	if (ctx == NULL)
		errno = EINVAL;
	return ctx != NULL ? ctx->dev->dv : NULL;
}

VB_EXPORT void *mlx5dv_dm_map_op_addr(struct ibv_dm *dm, uint8_t op)
{
	const struct vb_dv_ops *dv = dm != NULL ? vb_memvar_dv(dm->context) : NULL;

	if (dv == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return dv->dm_map_op_addr(dm, op);
}

/*
 * A VAR names no context, and mlx5dv_free_var must not read a freed one:
 * the VAR table libibverbs gave the first allocation serves the frees (every
 * device has the same one).
 */
static const struct vb_dv_var_ops *_Atomic var_ops;

VB_EXPORT struct mlx5dv_var *mlx5dv_alloc_var(struct ibv_context *context, uint32_t flags)
{
	const struct vb_dv_ops *dv = vb_memvar_dv(context);

	if (dv == NULL)
		return NULL;
	atomic_store(&var_ops, dv->var);
	return dv->var->alloc_var(context, flags);
}

VB_EXPORT void mlx5dv_free_var(struct mlx5dv_var *dv_var)
{
	const struct vb_dv_var_ops *ops = atomic_load(&var_ops);

	if (ops == NULL) {
		errno = EINVAL; /* no VAR was ever made */
		return;
	}
	ops->free_var(dv_var);
}
