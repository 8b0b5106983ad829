/*
 * vb_mlx5_evch — libmlx5's DevX event channel entry points: the checks on
 * the program's handles, then the device's implementation (vb_devx_evch.c)
 * through the context's DevX ops.
 */
#include <errno.h>

#include <infiniband/mlx5dv.h>

#include "vb.h"
#include "vb_export.h"

/* The table of the context's device: NULL with errno EINVAL (no context) or EOPNOTSUPP (not ours). */
static const struct vb_dv_ops *vb_dv_of(struct ibv_context *c)
{
	struct vb_context *ctx = vb_ctx_checked(c);

	if (ctx == NULL)
		errno = c == NULL ? EINVAL : EOPNOTSUPP;
	return ctx != NULL ? ctx->dev->dv : NULL;
}

VB_EXPORT struct mlx5dv_devx_event_channel *
mlx5dv_devx_create_event_channel(struct ibv_context *context, enum mlx5_ib_uapi_devx_create_event_channel_flags flags)
{
	const struct vb_dv_ops *dv = vb_dv_of(context);

	return dv != NULL ? dv->devx->evch_create(context, (uint32_t)flags) : NULL;
}

VB_EXPORT void mlx5dv_devx_destroy_event_channel(struct mlx5dv_devx_event_channel *event_channel)
{
	struct vb_evch_head *h = (struct vb_evch_head *)event_channel;

	if (h != NULL)
		h->dv->devx->evch_destroy(event_channel);
}

VB_EXPORT int mlx5dv_devx_subscribe_devx_event(struct mlx5dv_devx_event_channel *event_channel,
					       struct mlx5dv_devx_obj *obj, uint16_t events_sz, uint16_t *events_num,
					       uint64_t cookie)
{
	struct vb_evch_head *h = (struct vb_evch_head *)event_channel;

	/* events_sz is in bytes: the length of the kernel's attribute. */
	if (h == NULL || obj == NULL || obj->magic != VB_MAGIC_DEVX_OBJ || events_sz % sizeof(uint16_t) != 0)
		return EINVAL;
	return h->dv->devx->evch_subscribe(event_channel, -1, obj, events_sz / sizeof(uint16_t), events_num, cookie);
}

VB_EXPORT int mlx5dv_devx_subscribe_devx_event_fd(struct mlx5dv_devx_event_channel *event_channel, int fd,
						  struct mlx5dv_devx_obj *obj, uint16_t event_num)
{
	struct vb_evch_head *h = (struct vb_evch_head *)event_channel;

	if (h == NULL || fd < 0 || obj == NULL || obj->magic != VB_MAGIC_DEVX_OBJ)
		return EINVAL;
	return h->dv->devx->evch_subscribe(event_channel, fd, obj, 1, &event_num, 0);
}

VB_EXPORT ssize_t mlx5dv_devx_get_event(struct mlx5dv_devx_event_channel *event_channel,
					struct mlx5_ib_uapi_devx_async_event_hdr *event_data, size_t event_resp_len)
{
	struct vb_evch_head *h = (struct vb_evch_head *)event_channel;

	if (h == NULL) {
		errno = EINVAL;
		return -1;
	}
	return h->dv->devx->evch_get_event(event_channel, event_data, event_resp_len);
}
