/*
 * doca_sha — the SHA context: life cycle and the operations table that lets
 * the common context and work-queue code run its jobs.
 */
#include <stdlib.h>

#include "dc_log.h"
#include "sha_priv.h"

static doca_error_t sha_dev_check(struct doca_ctx *ctx, struct doca_dev *dev)
{
	(void)ctx;
	if (!dc_sha_dev_has_engine(dev)) {
		DC_ERR("device has no SHA engine");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

static const struct dc_ctx_ops sha_ops = {
	.name = "SHA",
	.max_devs = 1,
	.event_driven = true,
	.dev_check = sha_dev_check,
	.job_check = dc_sha_job_check,
	.job_exec = dc_sha_job_exec,
	.jobq_attr = dc_sha_jobq_attr,
	.job_run = dc_sha_job_run,
};

doca_error_t doca_sha_create(struct doca_sha **ctx)
{
	struct doca_sha *sha;
	doca_error_t ret;

	if (ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	sha = calloc(1, sizeof(*sha));
	if (sha == NULL)
		return DOCA_ERROR_NO_MEMORY;
	/* The engine's lanes are made here so that no job ever allocates. */
	sha->eng = hw_sha_engine_new();
	if (sha->eng == NULL) {
		DC_ERR("cannot set up the SHA engine (OpenSSL)");
		ret = DOCA_ERROR_NO_MEMORY;
		goto err_free;
	}
	ret = dc_ctx_init(&sha->ctx, &sha_ops);
	if (ret != DOCA_SUCCESS)
		goto err_engine;
	*ctx = sha;
	return DOCA_SUCCESS;

err_engine:
	hw_sha_engine_free(sha->eng);
err_free:
	free(sha);
	return ret;
}

doca_error_t doca_sha_destroy(struct doca_sha *ctx)
{
	doca_error_t ret;

	if (ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = dc_ctx_fini(&ctx->ctx);
	if (ret != DOCA_SUCCESS)
		return ret;
	/* Sessions live in the context: they end with it. */
	for (uint32_t i = 0; i < DC_SHA_MAX_SESSIONS; i++)
		hw_sha_state_free(ctx->sessions[i].st);
	hw_sha_engine_free(ctx->eng);
	free(ctx);
	return DOCA_SUCCESS;
}

struct doca_ctx *doca_sha_as_ctx(struct doca_sha *ctx)
{
	return ctx == NULL ? NULL : &ctx->ctx;
}
