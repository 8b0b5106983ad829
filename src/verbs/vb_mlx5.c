/*
 * vb_mlx5 — libmlx5.so.1: the mlx5dv_* entries softdpu implements.
 *
 * This library is thin on purpose: the emulated device's state is static
 * data of libibverbs.so.1, and a second copy here would be a second device.
 * Each function finds the vb_dv_ops table of the device its object belongs
 * to and calls libibverbs through it; nothing internal is exported either
 * way. The unsupported entries are in vb_mlx5_stubs_gen.c.
 */
#include <stddef.h>
#include <time.h>

#include "vb_export.h"
#include "vb.h"

static const struct vb_dv_ops *vb_dv_of_ctx(struct ibv_context *c)
{
	struct vb_context *ctx = vb_ctx_checked(c);

	return ctx != NULL ? ctx->dev->dv : NULL;
}

VB_EXPORT bool mlx5dv_is_supported(struct ibv_device *device)
{
	return vb_dev_of(device) != NULL;
}

VB_EXPORT struct ibv_context *mlx5dv_open_device(struct ibv_device *device, struct mlx5dv_context_attr *attr)
{
	if (vb_dev_of(device) == NULL || attr == NULL || attr->comp_mask != 0 ||
	    (attr->flags & ~(uint32_t)MLX5DV_CONTEXT_FLAGS_DEVX)) {
		errno = vb_dev_of(device) == NULL ? EOPNOTSUPP : EINVAL;
		return NULL;
	}
	return ibv_open_device(device);
}

/*
 * The device's free-running clock counts nanoseconds of CLOCK_MONOTONIC
 * (libibverbs' vb_clock.c): the conversion mlx5dv_ts_to_ns makes from it is
 * one to one, anchored at the UTC time of this call as the kernel's clock
 * page anchors a card's cycles.
 */
VB_EXPORT int mlx5dv_get_clock_info(struct ibv_context *context, struct mlx5dv_clock_info *clock_info)
{
	struct timespec mono, real;

	if (vb_ctx_checked(context) == NULL || clock_info == NULL)
		return EINVAL;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	*clock_info = (struct mlx5dv_clock_info){
		.nsec = (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec,
		.last_cycles = (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec,
		.mult = 1,
		.shift = 0,
		.mask = UINT64_MAX,
	};
	return 0;
}

VB_EXPORT int mlx5dv_query_device(struct ibv_context *ctx_in, struct mlx5dv_context *attrs_out)
{
	const struct vb_dv_ops *dv = vb_dv_of_ctx(ctx_in);

	return dv != NULL ? dv->query_device(ctx_in, attrs_out) : EOPNOTSUPP;
}

/* The context of the first object the caller passes: every object leads to one. */
static struct ibv_context *vb_obj_context(struct mlx5dv_obj *obj, uint64_t type)
{
	if ((type & MLX5DV_OBJ_QP) && obj->qp.in != NULL)
		return obj->qp.in->context;
	if ((type & MLX5DV_OBJ_CQ) && obj->cq.in != NULL)
		return obj->cq.in->context;
	if ((type & MLX5DV_OBJ_SRQ) && obj->srq.in != NULL)
		return obj->srq.in->context;
	if ((type & MLX5DV_OBJ_RWQ) && obj->rwq.in != NULL)
		return obj->rwq.in->context;
	if ((type & MLX5DV_OBJ_AH) && obj->ah.in != NULL)
		return obj->ah.in->context;
	if ((type & MLX5DV_OBJ_PD) && obj->pd.in != NULL)
		return obj->pd.in->context;
	if ((type & MLX5DV_OBJ_DM) && obj->dm.in != NULL)
		return obj->dm.in->context;
	return NULL;
}

static int vb_init_obj(struct mlx5dv_obj *obj, uint64_t obj_type)
{
	const struct vb_dv_ops *dv;

	if (obj == NULL)
		return EINVAL;
	dv = vb_dv_of_ctx(vb_obj_context(obj, obj_type));
	return dv != NULL ? dv->init_obj(obj, obj_type) : EINVAL;
}

/* MLX5_1.2 is the default; MLX5_1.0 programs call the same function (the structs only grew). */
VB_EXPORT int vb_mlx5dv_init_obj_1_2(struct mlx5dv_obj *obj, uint64_t obj_type);
VB_EXPORT int vb_mlx5dv_init_obj_1_2(struct mlx5dv_obj *obj, uint64_t obj_type)
{
	return vb_init_obj(obj, obj_type);
}
VB_SYMVER(vb_mlx5dv_init_obj_1_2, mlx5dv_init_obj, "MLX5_1.2");

VB_EXPORT int vb_mlx5dv_init_obj_1_0(struct mlx5dv_obj *obj, uint64_t obj_type);
VB_EXPORT int vb_mlx5dv_init_obj_1_0(struct mlx5dv_obj *obj, uint64_t obj_type)
{
	return vb_init_obj(obj, obj_type);
}
VB_SYMVER_OLD(vb_mlx5dv_init_obj_1_0, mlx5dv_init_obj, "MLX5_1.0");

VB_EXPORT struct mlx5dv_devx_uar *mlx5dv_devx_alloc_uar(struct ibv_context *context, uint32_t flags)
{
	const struct vb_dv_ops *dv = vb_dv_of_ctx(context);

	if (dv == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return dv->devx_alloc_uar(context, flags);
}

VB_EXPORT void mlx5dv_devx_free_uar(struct mlx5dv_devx_uar *devx_uar)
{
	if (devx_uar != NULL)
		((struct vb_uar *)devx_uar)->dv->devx_free_uar(devx_uar);
}

VB_EXPORT struct mlx5dv_devx_umem *mlx5dv_devx_umem_reg(struct ibv_context *ctx, void *addr, size_t size,
							 uint32_t access)
{
	const struct vb_dv_ops *dv = vb_dv_of_ctx(ctx);

	if (dv == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return dv->devx_umem_reg(ctx, addr, size, access);
}

VB_EXPORT struct mlx5dv_devx_umem *mlx5dv_devx_umem_reg_ex(struct ibv_context *ctx,
							    struct mlx5dv_devx_umem_in *umem_in)
{
	const struct vb_dv_ops *dv = vb_dv_of_ctx(ctx);

	if (dv == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return dv->devx_umem_reg_ex(ctx, umem_in);
}

VB_EXPORT int mlx5dv_devx_umem_dereg(struct mlx5dv_devx_umem *umem)
{
	if (umem == NULL)
		return EINVAL;
	return ((struct vb_umem *)umem)->dv->devx_umem_dereg(umem);
}

/* The QP's mlx5dv_qp_ex lives next to its ibv_qp_ex (vb.h); its slots report what this device lacks. */
VB_EXPORT struct mlx5dv_qp_ex *mlx5dv_qp_ex_from_ibv_qp_ex(struct ibv_qp_ex *qp)
{
	if (qp == NULL || vb_ctx_checked(qp->qp_base.context) == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return &((struct vb_qp *)qp)->dv;
}

VB_EXPORT struct mlx5dv_mkey *mlx5dv_create_mkey(struct mlx5dv_mkey_init_attr *attr)
{
	const struct vb_dv_ops *dv = attr != NULL && attr->pd != NULL ? vb_dv_of_ctx(attr->pd->context) : NULL;

	if (dv == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return dv->create_mkey(attr);
}

VB_EXPORT int mlx5dv_destroy_mkey(struct mlx5dv_mkey *mkey)
{
	struct vb_mkey *mk = (struct vb_mkey *)mkey;

	if (mkey == NULL || mk->magic != VB_MAGIC_MKEY)
		return EINVAL;
	return mk->dv->destroy_mkey(mkey);
}

/*
 * DCI, DCT, and the plain QP types (vb_dc.c in libibverbs). A context not of
 * this device: EOPNOTSUPP, as rdma-core's; no context at all: EINVAL.
 */
VB_EXPORT struct ibv_qp *mlx5dv_create_qp(struct ibv_context *context, struct ibv_qp_init_attr_ex *qp_attr,
					  struct mlx5dv_qp_init_attr *mlx5_qp_attr)
{
	const struct vb_dv_ops *dv = vb_dv_of_ctx(context);

	if (dv == NULL) {
		errno = context == NULL ? EINVAL : EOPNOTSUPP;
		return NULL;
	}
	return dv->create_qp(context, qp_attr, mlx5_qp_attr);
}

/* 64 or 128-byte CQEs, padding, compression (vb_dvcq.c in libibverbs); a context not of this device: EOPNOTSUPP. */
VB_EXPORT struct ibv_cq_ex *mlx5dv_create_cq(struct ibv_context *context, struct ibv_cq_init_attr_ex *cq_attr,
					     struct mlx5dv_cq_init_attr *mlx5_cq_attr)
{
	const struct vb_dv_ops *dv = vb_dv_of_ctx(context);

	if (dv == NULL) {
		errno = context == NULL ? EINVAL : EOPNOTSUPP;
		return NULL;
	}
	return dv->create_cq(context, cq_attr, mlx5_cq_attr);
}
