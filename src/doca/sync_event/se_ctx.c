/*
 * se_ctx — the asynchronous mode: the Sync Event as a DOCA context whose
 * jobs (wait, get, set, add) run on the work queues added to it.
 *
 * A wait job whose condition does not hold yet reports DOCA_ERROR_AGAIN to
 * the work queue, which keeps it queued: progress_retrieve returns
 * DOCA_ERROR_AGAIN until the value passes the threshold (or the exporter of
 * an imported event goes away, which fails the job with NOT_CONNECTED).
 */
#include "dc_log.h"
#include "se_priv.h"

static struct doca_sync_event *ev_of(struct doca_ctx *ctx)
{
	return (struct doca_sync_event *)ctx; /* the context is the first member */
}

static doca_error_t se_dev_check(struct doca_ctx *ctx, struct doca_dev *dev)
{
	(void)ctx;
	(void)dev;
	DC_ERR("no device can be added to a Sync Event context");
	return DOCA_ERROR_NOT_PERMITTED;
}

static doca_error_t se_job_check(struct doca_ctx *ctx, const struct doca_job *job, size_t *size)
{
	(void)ctx;
	switch (job->type) {
	case DOCA_SYNC_EVENT_JOB_WAIT_GT:
		*size = sizeof(struct doca_sync_event_job_wait);
		return DOCA_SUCCESS;
	case DOCA_SYNC_EVENT_JOB_UPDATE_SET:
		*size = sizeof(struct doca_sync_event_job_update_set);
		return DOCA_SUCCESS;
	case DOCA_SYNC_EVENT_JOB_GET:
		*size = sizeof(struct doca_sync_event_job_get);
		if (((const struct doca_sync_event_job_get *)job)->value != NULL)
			return DOCA_SUCCESS;
		DC_ERR("get job without a value pointer");
		return DOCA_ERROR_INVALID_VALUE;
	case DOCA_SYNC_EVENT_JOB_UPDATE_ADD:
		*size = sizeof(struct doca_sync_event_job_update_add);
		if (((const struct doca_sync_event_job_update_add *)job)->fetched != NULL)
			return DOCA_SUCCESS;
		DC_ERR("add job without a fetched pointer");
		return DOCA_ERROR_INVALID_VALUE;
	default:
		DC_ERR("job type %d is not a Sync Event job", job->type);
		return DOCA_ERROR_INVALID_VALUE;
	}
}

static doca_error_t exec_wait(struct doca_sync_event *ev, const struct doca_sync_event_job_wait *j)
{
	doca_error_t st;

	if (dse_gt(ev, j->value, j->mask))
		return DOCA_SUCCESS;
	st = dse_peer_check(ev);
	return st == DOCA_SUCCESS ? DOCA_ERROR_AGAIN : st;
}

static doca_error_t exec_job(struct doca_sync_event *ev, const struct doca_job *job)
{
	if (ev->seg != NULL && atomic_load_explicit(&ev->seg->revoked, memory_order_acquire) != 0)
		return DOCA_ERROR_NOT_CONNECTED;
	switch (job->type) {
	case DOCA_SYNC_EVENT_JOB_WAIT_GT:
		return exec_wait(ev, (const struct doca_sync_event_job_wait *)job);
	case DOCA_SYNC_EVENT_JOB_GET:
		*((const struct doca_sync_event_job_get *)job)->value =
			atomic_load_explicit(ev->value, memory_order_acquire);
		return DOCA_SUCCESS;
	case DOCA_SYNC_EVENT_JOB_UPDATE_SET:
		atomic_store_explicit(ev->value, ((const struct doca_sync_event_job_update_set *)job)->value,
				      memory_order_release);
		hw_bell_ring(ev->bell);
		return DOCA_SUCCESS;
	default: {
		const struct doca_sync_event_job_update_add *a = (const struct doca_sync_event_job_update_add *)job;

		*a->fetched = atomic_fetch_add_explicit(ev->value, a->value, memory_order_acq_rel);
		hw_bell_ring(ev->bell);
		return DOCA_SUCCESS;
	}
	}
}

static doca_error_t se_job_exec(struct doca_ctx *ctx, const struct doca_job *job, union doca_data *result)
{
	doca_error_t st = exec_job(ev_of(ctx), job);

	if (st != DOCA_ERROR_AGAIN)
		result->u64 = (uint64_t)st; /* struct doca_sync_event_result */
	return st;
}

/* A wait that cannot complete yet may once the counter changes: every update rings the event's bell. */
static struct hw_bell *se_job_bell(struct doca_ctx *ctx, const struct doca_job *job)
{
	(void)job;
	return ev_of(ctx)->bell;
}

/* An imported event's exporter killed without revoking rings no more: the watch engine asks this. */
static bool se_peer_gone(void *ctx)
{
	struct doca_sync_event *ev = ctx;

	if (!ev->imported || ev->seg == NULL || fab_shm_owner_alive(&ev->shm))
		return false;
	atomic_store_explicit(&ev->exporter_gone, true, memory_order_release);
	return true;
}

_Static_assert(sizeof(struct doca_sync_event_job_update_add) <= DC_WQE_JOB_MAX, "Sync Event jobs fit an entry");

static const struct dc_ctx_ops dse_ctx_ops = {
	.name = "Sync Event",
	.max_devs = 0, /* DOCA: a device cannot be attached to a Sync Event context */
	.event_driven = true,
	.dev_check = se_dev_check,
	.job_check = se_job_check,
	.job_exec = se_job_exec,
	.job_bell = se_job_bell,
	.peer_gone = se_peer_gone,
};

struct doca_ctx *doca_sync_event_as_ctx(struct doca_sync_event *event)
{
	if (event == NULL) {
		DC_ERR("event must not be NULL");
		return NULL;
	}
	if (event->state == DSE_CTX_MODE)
		return &event->ctx;
	if (event->state != DSE_CONFIG) {
		DC_ERR("a Sync Event started with doca_sync_event_start (or stopped) cannot become a context");
		return NULL;
	}
	if (!dse_configured(event)) {
		DC_ERR("Sync Event needs a publisher and a subscriber location before it becomes a context");
		return NULL;
	}
	if (dc_ctx_init(&event->ctx, &dse_ctx_ops) != DOCA_SUCCESS)
		return NULL;
	if (dse_storage_setup(event) != DOCA_SUCCESS) {
		dc_ctx_fini(&event->ctx);
		return NULL;
	}
	event->state = DSE_CTX_MODE;
	return &event->ctx;
}

doca_error_t dse_ctx_fini(struct doca_sync_event *ev)
{
	struct doca_ctx *ctx = &ev->ctx;

	pthread_mutex_lock(&ctx->lock);
	if (ctx->num_workqs != 0) {
		pthread_mutex_unlock(&ctx->lock);
		DC_ERR("Sync Event context still has work queues");
		return DOCA_ERROR_IN_USE;
	}
	ctx->started = false; /* no work queue, so nothing in flight: destroy stops it */
	pthread_mutex_unlock(&ctx->lock);
	return dc_ctx_fini(ctx);
}

doca_error_t doca_sync_event_job_get_supported(struct doca_devinfo *devinfo, enum doca_sync_event_job_types type)
{
	if (devinfo == NULL) {
		DC_ERR("devinfo must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (type < DOCA_SYNC_EVENT_JOB_WAIT_GT || type > DOCA_SYNC_EVENT_JOB_UPDATE_ADD) {
		DC_ERR("%d is not a Sync Event job type", (int)type);
		return DOCA_ERROR_INVALID_VALUE;
	}
	/* The emulated device is BlueField-3 class: asynchronous wait included. */
	return DOCA_SUCCESS;
}
