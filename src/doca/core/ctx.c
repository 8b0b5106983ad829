/*
 * doca_ctx — devices, start/stop and work-queue attachment of a context.
 */
#include <stdatomic.h>
#include <string.h>

#include "dc_ctx.h"
#include "dc_dev.h"
#include "dc_log.h"

static atomic_uint num_ctx;

doca_error_t dc_ctx_init(struct doca_ctx *ctx, const struct dc_ctx_ops *ops)
{
	if (atomic_fetch_add(&num_ctx, 1) >= DC_MAX_NUM_CTX) {
		atomic_fetch_sub(&num_ctx, 1);
		DC_ERR("too many contexts (max %u)", DC_MAX_NUM_CTX);
		return DOCA_ERROR_NO_MEMORY;
	}
	memset(ctx, 0, sizeof(*ctx));
	ctx->ops = ops;
	if (pthread_mutex_init(&ctx->lock, NULL) != 0) {
		atomic_fetch_sub(&num_ctx, 1);
		return DOCA_ERROR_INITIALIZATION;
	}
	return DOCA_SUCCESS;
}

doca_error_t dc_ctx_fini(struct doca_ctx *ctx)
{
	pthread_mutex_lock(&ctx->lock);
	if (ctx->started || ctx->num_workqs != 0 || ctx->num_devs != 0) {
		pthread_mutex_unlock(&ctx->lock);
		DC_ERR("%s context still %s", ctx->ops->name,
		       ctx->started ? "started" : (ctx->num_workqs ? "has work queues" : "has devices"));
		return DOCA_ERROR_IN_USE;
	}
	pthread_mutex_unlock(&ctx->lock);
	pthread_mutex_destroy(&ctx->lock);
	atomic_fetch_sub(&num_ctx, 1);
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_get_max_num_ctx(uint32_t *max_num_ctx)
{
	if (max_num_ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*max_num_ctx = DC_MAX_NUM_CTX;
	return DOCA_SUCCESS;
}

static int find_dev(const struct doca_ctx *ctx, const struct doca_dev *dev)
{
	for (uint32_t i = 0; i < ctx->num_devs; i++)
		if (ctx->devs[i] == dev)
			return (int)i;
	return -1;
}

static doca_error_t dev_add_locked(struct doca_ctx *ctx, struct doca_dev *dev)
{
	doca_error_t ret;

	if (ctx->started)
		return DOCA_ERROR_BAD_STATE;
	if (find_dev(ctx, dev) >= 0)
		return DOCA_ERROR_IN_USE;
	/* No device is of use to such a context (a Sync Event's): the header's NOT_SUPPORTED case. */
	if (ctx->ops->max_devs == 0) {
		DC_ERR("%s context takes no device", ctx->ops->name);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (ctx->num_devs >= ctx->ops->max_devs) {
		DC_ERR("%s context takes at most %u device(s)", ctx->ops->name, ctx->ops->max_devs);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	ret = ctx->ops->dev_check(ctx, dev);
	if (ret != DOCA_SUCCESS)
		return ret;
	dc_dev_get(dev);
	ctx->devs[ctx->num_devs++] = dev;
	return DOCA_SUCCESS;
}

doca_error_t doca_ctx_dev_add(struct doca_ctx *ctx, struct doca_dev *dev)
{
	doca_error_t ret;

	if (ctx == NULL || dev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&ctx->lock);
	ret = dev_add_locked(ctx, dev);
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

/* A GPU data path needs a GPU and DOCA GPUNetIO's device-side queues; the device has neither. */
doca_error_t doca_ctx_set_datapath_on_gpu(struct doca_ctx *ctx, struct doca_gpu *gpu_dev)
{
	bool started;

	if (ctx == NULL || gpu_dev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&ctx->lock);
	started = ctx->started;
	pthread_mutex_unlock(&ctx->lock);
	if (started)
		return DOCA_ERROR_BAD_STATE;
	DC_ERR("a GPU data path is not supported: the device has no GPU");
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_ctx_dev_rm(struct doca_ctx *ctx, struct doca_dev *dev)
{
	doca_error_t ret = DOCA_SUCCESS;
	int idx;

	if (ctx == NULL || dev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&ctx->lock);
	idx = find_dev(ctx, dev);
	if (ctx->started) {
		ret = DOCA_ERROR_BAD_STATE;
	} else if (idx < 0) {
		ret = DOCA_ERROR_NOT_FOUND;
	} else {
		ctx->devs[idx] = ctx->devs[--ctx->num_devs];
		dc_dev_put(dev);
	}
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

doca_error_t doca_ctx_start(struct doca_ctx *ctx)
{
	doca_error_t ret = DOCA_SUCCESS;

	if (ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&ctx->lock);
	if (ctx->started) {
		ret = DOCA_ERROR_BAD_STATE;
	} else if (ctx->num_devs == 0 && ctx->ops->max_devs != 0) {
		DC_ERR("%s context has no device", ctx->ops->name);
		ret = DOCA_ERROR_INVALID_VALUE;
	} else if (ctx->ops->start == NULL || (ret = ctx->ops->start(ctx)) == DOCA_SUCCESS) {
		ctx->started = true;
	}
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

doca_error_t doca_ctx_stop(struct doca_ctx *ctx)
{
	doca_error_t ret = DOCA_SUCCESS;

	if (ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&ctx->lock);
	if (!ctx->started) {
		ret = DOCA_ERROR_BAD_STATE;
	} else if (ctx->num_workqs != 0) {
		DC_ERR("%s context still has work queues", ctx->ops->name);
		ret = DOCA_ERROR_NOT_PERMITTED;
	} else {
		if (ctx->ops->stop != NULL)
			ctx->ops->stop(ctx);
		ctx->started = false;
	}
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

doca_error_t doca_ctx_workq_add(struct doca_ctx *ctx, struct doca_workq *workq)
{
	doca_error_t ret;

	if (ctx == NULL || workq == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&ctx->lock);
	if (!ctx->started) {
		ret = DOCA_ERROR_BAD_STATE;
	} else if (dc_workq_event_driven(workq) && !ctx->ops->event_driven) {
		DC_ERR("%s context does not support event-driven work queues", ctx->ops->name);
		ret = DOCA_ERROR_NOT_SUPPORTED;
	} else {
		ret = dc_workq_attach(workq, ctx);
		if (ret == DOCA_SUCCESS)
			ctx->num_workqs++;
	}
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

doca_error_t doca_ctx_workq_rm(struct doca_ctx *ctx, struct doca_workq *workq)
{
	doca_error_t ret;

	if (ctx == NULL || workq == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&ctx->lock);
	if (!ctx->started) {
		ret = DOCA_ERROR_BAD_STATE;
	} else {
		ret = dc_workq_detach(workq, ctx);
		if (ret == DOCA_SUCCESS)
			ctx->num_workqs--;
	}
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

doca_error_t doca_ctx_get_event_driven_supported(struct doca_ctx *ctx, uint8_t *event_supported)
{
	if (ctx == NULL || event_supported == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*event_supported = ctx->ops->event_driven;
	return DOCA_SUCCESS;
}
