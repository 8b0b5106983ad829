/*
 * doca_workq — job ring, progress and event-driven signalling.
 *
 * Submit validates the job and places it in a power-of-two ring sized at
 * creation (no allocation, lock or system call on the data path).
 * doca_workq_progress_retrieve() executes the oldest job inline on the
 * calling thread (the emulated engine's cheapest form for CPU copies) and
 * returns its event; a job that cannot complete yet (a Sync Event wait) moves
 * to the back of the ring, so it never blocks the jobs behind it. In
 * event-driven mode an eventfd signals that jobs wait to be progressed; it is
 * written once per arm, not per job.
 *
 * DOCA graph nodes run as work items of an extra, hidden context slot
 * (DC_WQ_ITEM_IDX): the slot loop is the same for them, and an item whose
 * completion does not end its graph instance returns DC_JOB_NO_EVENT. Depth
 * that graph instances hold but do not currently use in the ring is counted
 * in item_resv, so ring occupancy + item_resv never exceeds the depth
 * (docs/graph.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dc_ctx.h"
#include "dc_log.h"

#define DC_WQ_MAX_DEPTH (1u << 20)
#define DC_WQ_MAX_CTX 16
#define DC_WQ_ITEM_IDX DC_WQ_MAX_CTX /* graph work items: one slot past the contexts */

struct dc_wq_slot {
	const struct doca_job *job;
	uint32_t ctx_idx;
};

struct doca_workq {
	struct dc_wq_slot *ring;
	uint32_t mask;
	uint32_t depth;
	uint32_t head; /* free-running: next slot to progress */
	uint32_t tail; /* free-running: next slot to fill */
	uint32_t last_ctx; /* submit's first guess: jobs mostly target one context */
	uint32_t num_ctx;
	uint32_t item_resv; /* depth reserved by graph instances, not in the ring now */
	struct doca_ctx *ctx[DC_WQ_MAX_CTX + 1];
	uint32_t pending[DC_WQ_MAX_CTX + 1];
	uint32_t pins[DC_WQ_MAX_CTX]; /* graphs added to this work queue that use the context */
	bool event_driven;
	bool armed;
	int efd;
};

static uint32_t ring_size(uint32_t depth)
{
	uint32_t n = 1;

	while (n < depth)
		n <<= 1;
	return n;
}

static doca_error_t ring_alloc(struct doca_workq *wq, uint32_t depth)
{
	struct dc_wq_slot *ring = calloc(ring_size(depth), sizeof(*ring));

	if (ring == NULL)
		return DOCA_ERROR_NO_MEMORY;
	free(wq->ring);
	wq->ring = ring;
	wq->mask = ring_size(depth) - 1;
	wq->depth = depth;
	wq->head = wq->tail = 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_workq_create(uint32_t depth, struct doca_workq **workq)
{
	struct doca_workq *wq;

	if (workq == NULL || depth == 0 || depth > DC_WQ_MAX_DEPTH) {
		DC_ERR("invalid work queue depth %u (1..%u)", depth, DC_WQ_MAX_DEPTH);
		return DOCA_ERROR_INVALID_VALUE;
	}
	wq = calloc(1, sizeof(*wq));
	if (wq == NULL)
		return DOCA_ERROR_NO_MEMORY;
	wq->efd = -1;
	if (ring_alloc(wq, depth) != DOCA_SUCCESS) {
		free(wq);
		return DOCA_ERROR_NO_MEMORY;
	}
	*workq = wq;
	return DOCA_SUCCESS;
}

doca_error_t doca_workq_destroy(struct doca_workq *workq)
{
	if (workq == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (workq->num_ctx != 0) {
		DC_ERR("work queue is still added to %u context(s)", workq->num_ctx);
		return DOCA_ERROR_IN_USE;
	}
	if (workq->efd >= 0)
		close(workq->efd);
	free(workq->ring);
	free(workq);
	return DOCA_SUCCESS;
}

/* ---- attachment (called by ctx.c under the context lock) ---- */

static int ctx_index(const struct doca_workq *wq, const struct doca_ctx *ctx)
{
	for (uint32_t i = 0; i < DC_WQ_MAX_CTX; i++)
		if (wq->ctx[i] == ctx)
			return (int)i;
	return -1;
}

doca_error_t dc_workq_attach(struct doca_workq *wq, struct doca_ctx *ctx)
{
	int free_idx;

	if (ctx_index(wq, ctx) >= 0)
		return DOCA_ERROR_IN_USE;
	free_idx = ctx_index(wq, NULL);
	if (free_idx < 0) {
		DC_ERR("work queue already serves %u contexts", DC_WQ_MAX_CTX);
		return DOCA_ERROR_NO_MEMORY;
	}
	wq->ctx[free_idx] = ctx;
	wq->pending[free_idx] = 0;
	wq->pins[free_idx] = 0;
	wq->num_ctx++;
	return DOCA_SUCCESS;
}

doca_error_t dc_workq_detach(struct doca_workq *wq, struct doca_ctx *ctx)
{
	int idx = ctx_index(wq, ctx);

	if (idx < 0)
		return DOCA_ERROR_NOT_FOUND;
	if (wq->pending[idx] != 0) {
		DC_ERR("%u jobs of this context are still pending on the work queue", wq->pending[idx]);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (wq->pins[idx] != 0) {
		DC_ERR("%u graph(s) added to the work queue use this context", wq->pins[idx]);
		return DOCA_ERROR_IN_USE;
	}
	wq->ctx[idx] = NULL;
	wq->num_ctx--;
	return DOCA_SUCCESS;
}

bool dc_workq_event_driven(const struct doca_workq *wq)
{
	return wq->event_driven;
}

/* ---- data path ---- */

static void signal_event(struct doca_workq *wq)
{
	uint64_t one = 1;

	wq->armed = false;
	if (write(wq->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		DC_ERR("event handle write failed: errno %d", errno);
}

static inline int submit_ctx_index(struct doca_workq *wq, const struct doca_ctx *ctx)
{
	if (wq->ctx[wq->last_ctx] == ctx)
		return (int)wq->last_ctx;
	return ctx_index(wq, ctx);
}

doca_error_t doca_workq_submit(struct doca_workq *workq, struct doca_job const *job)
{
	struct doca_ctx *ctx;
	doca_error_t ret;
	int idx;

	if (workq == NULL || job == NULL || job->ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ctx = job->ctx;
	idx = submit_ctx_index(workq, ctx);
	if (idx < 0)
		return DOCA_ERROR_NOT_FOUND;
	if (!ctx->started)
		return DOCA_ERROR_BAD_STATE;
	if (workq->tail - workq->head + workq->item_resv >= workq->depth)
		return DOCA_ERROR_NO_MEMORY;
	ret = ctx->ops->job_check(ctx, job);
	if (ret != DOCA_SUCCESS)
		return ret;
	workq->ring[workq->tail & workq->mask] = (struct dc_wq_slot){ .job = job, .ctx_idx = (uint32_t)idx };
	workq->tail++;
	workq->pending[idx]++;
	workq->last_ctx = (uint32_t)idx;
	if (workq->armed)
		signal_event(workq);
	return DOCA_SUCCESS;
}

doca_error_t doca_workq_progress_retrieve(struct doca_workq *workq, struct doca_event *ev, int flags)
{
	struct dc_wq_slot slot;
	struct doca_ctx *ctx;
	doca_error_t st;

	if (workq == NULL || ev == NULL || flags != DOCA_WORKQ_RETRIEVE_FLAGS_NONE)
		return DOCA_ERROR_INVALID_VALUE;
	/* Each queued job at most once per call: jobs that cannot complete yet go to the back. */
	for (uint32_t n = workq->tail - workq->head; n != 0; n--) {
		slot = workq->ring[workq->head & workq->mask];
		ctx = workq->ctx[slot.ctx_idx];
		workq->head++;
		st = ctx->ops->job_exec(ctx, slot.job, &ev->result);
		if (st == DOCA_ERROR_AGAIN) {
			workq->ring[workq->tail++ & workq->mask] = slot;
			continue;
		}
		workq->pending[slot.ctx_idx]--;
		if (st == DC_JOB_NO_EVENT)
			continue;
		ev->type = slot.job->type;
		ev->user_data = slot.job->user_data;
		return st == DOCA_SUCCESS ? DOCA_SUCCESS : DOCA_ERROR_IO_FAILED;
	}
	return DOCA_ERROR_AGAIN;
}

/* ---- graph work items (called by src/doca/graph) ---- */

doca_error_t dc_workq_pin(struct doca_workq *wq, const struct doca_ctx *ctx)
{
	int idx = ctx_index(wq, ctx);

	if (idx < 0)
		return DOCA_ERROR_NOT_FOUND;
	wq->pins[idx]++;
	return DOCA_SUCCESS;
}

void dc_workq_unpin(struct doca_workq *wq, const struct doca_ctx *ctx)
{
	int idx = ctx_index(wq, ctx);

	if (idx >= 0 && wq->pins[idx] != 0)
		wq->pins[idx]--;
}

void dc_workq_unreserve(struct doca_workq *wq, uint32_t units)
{
	wq->item_resv -= units;
}

void dc_workq_item_push(struct doca_workq *wq, struct doca_ctx *item_ctx, const struct doca_job *item)
{
	/* The unit was reserved: it moves from the reserve into the ring, so the ring cannot overflow. */
	wq->item_resv--;
	wq->ctx[DC_WQ_ITEM_IDX] = item_ctx;
	wq->ring[wq->tail & wq->mask] = (struct dc_wq_slot){ .job = item, .ctx_idx = DC_WQ_ITEM_IDX };
	wq->tail++;
	wq->pending[DC_WQ_ITEM_IDX]++;
	if (wq->armed)
		signal_event(wq);
}

doca_error_t dc_workq_item_submit(struct doca_workq *wq, uint32_t units, struct doca_ctx *item_ctx,
				  const struct doca_job *item)
{
	if ((uint64_t)(wq->tail - wq->head) + wq->item_resv + units > wq->depth)
		return DOCA_ERROR_NO_MEMORY;
	wq->item_resv += units;
	dc_workq_item_push(wq, item_ctx, item);
	return DOCA_SUCCESS;
}

void dc_workq_item_done(struct doca_workq *wq)
{
	wq->item_resv++;
}

/* ---- properties and event-driven mode ---- */

doca_error_t doca_workq_get_depth(const struct doca_workq *workq, uint32_t *depth)
{
	if (workq == NULL || depth == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*depth = workq->depth;
	return DOCA_SUCCESS;
}

doca_error_t doca_workq_set_depth(struct doca_workq *workq, uint32_t depth)
{
	if (workq == NULL || depth == 0 || depth > DC_WQ_MAX_DEPTH)
		return DOCA_ERROR_INVALID_VALUE;
	if (workq->num_ctx != 0) {
		DC_ERR("depth can change only while the work queue is not added to a context");
		return DOCA_ERROR_BAD_STATE;
	}
	return ring_alloc(workq, depth);
}

doca_error_t doca_workq_get_event_driven_enable(struct doca_workq *workq, uint8_t *enabled)
{
	if (workq == NULL || enabled == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*enabled = workq->event_driven;
	return DOCA_SUCCESS;
}

doca_error_t doca_workq_set_event_driven_enable(struct doca_workq *workq, uint8_t enable)
{
	if (workq == NULL || enable > 1)
		return DOCA_ERROR_INVALID_VALUE;
	if (workq->num_ctx != 0)
		return DOCA_ERROR_BAD_STATE;
	if (enable && workq->efd < 0) {
		workq->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (workq->efd < 0)
			return DOCA_ERROR_OPERATING_SYSTEM;
	}
	workq->event_driven = enable;
	workq->armed = false;
	return DOCA_SUCCESS;
}

doca_error_t doca_workq_get_event_handle(struct doca_workq *workq, doca_event_handle_t *handle)
{
	if (workq == NULL || handle == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!workq->event_driven)
		return DOCA_ERROR_BAD_STATE;
	*handle = workq->efd;
	return DOCA_SUCCESS;
}

doca_error_t doca_workq_event_handle_arm(struct doca_workq *workq)
{
	if (workq == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!workq->event_driven)
		return DOCA_ERROR_BAD_STATE;
	workq->armed = true;
	/* Jobs already waiting must wake the waiter, or it would sleep forever. */
	if (workq->head != workq->tail)
		signal_event(workq);
	return DOCA_SUCCESS;
}

doca_error_t doca_workq_event_handle_clear(struct doca_workq *workq, doca_event_handle_t handle)
{
	uint64_t cnt;

	if (workq == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!workq->event_driven)
		return DOCA_ERROR_BAD_STATE;
	if (handle != workq->efd)
		return DOCA_ERROR_INVALID_VALUE;
	if (read(workq->efd, &cnt, sizeof(cnt)) < 0 && errno != EAGAIN)
		return DOCA_ERROR_OPERATING_SYSTEM;
	return DOCA_SUCCESS;
}
