/*
 * doca_workq — job ring, progress and event-driven signalling.
 *
 * Submit validates the job and copies it into a 64-byte entry of a
 * power-of-two ring sized at creation (no allocation, lock or system call on
 * the data path): as on the card, where submit writes a work-queue entry, the
 * caller's job struct is free again when submit returns.
 * doca_workq_progress_retrieve() executes the oldest entry inline on the
 * calling thread (the emulated engine's cheapest form for CPU copies) and
 * returns its event; a job that cannot complete yet (a Sync Event wait) moves
 * to the back of the ring, marked blocked, so it never holds up the jobs
 * behind it.
 *
 * Jobs of engine contexts (DMA) are not copied here: the context writes
 * their WQE on its engine queue and rings the doorbell, the engine runs them
 * there, and the entry keeps only what the event needs; retrieve reads their
 * CQEs, in ring order, from the work queue's CQ (docs/ARCHITECTURE.md).
 * Engine contexts whose jobs run at progress (SHA) are copied as above, and
 * retrieve has the context post the WQE then, on a queue with a CQ of its
 * own.
 *
 * Event-driven mode: the eventfd becomes readable when a job has completed or
 * can complete. Jobs that can run are signalled once per arm (at arm or at the
 * submit after it). When every queued job is blocked, arm hands the bells
 * those jobs wait on to the device's watch engine (hw_bell.c), which writes
 * the eventfd only when one of them rings: a pending wait costs no CPU until
 * its event is updated, here or in another process.
 *
 * DOCA graph nodes run as work items of an extra, hidden context slot
 * (DC_WQ_ITEM_IDX): the entry then holds a pointer to the graph's item, an
 * item whose completion does not end its graph instance returns
 * DC_JOB_NO_EVENT. Depth that graph instances hold but do not currently use
 * in the ring is counted in item_resv, so ring occupancy + item_resv never
 * exceeds the depth (docs/graph.md).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "dc_ctx.h"
#include "dc_log.h"
#include "hw_bell.h"
#include "hw_jobq.h"

#define DC_WQ_MAX_DEPTH (1u << 20)
#define DC_WQ_MAX_CTX 16
#define DC_WQ_ITEM_IDX DC_WQ_MAX_CTX /* graph work items: one slot past the contexts */

/* One work-queue entry: a copy of the job (or, for a graph item, the graph's pointer). */
struct dc_wq_slot {
	uint16_t ctx_idx;
	uint8_t blocked;  /* returned DOCA_ERROR_AGAIN when last run */
	uint8_t engine;	  /* posted to the context's engine queue: completes by a CQE */
	uint32_t seen;	  /* its bell's sequence before that run */
	union {
		const struct doca_job *item;
		struct doca_job job;
		unsigned char raw[DC_WQE_JOB_MAX];
	} u;
};

_Static_assert(sizeof(struct dc_wq_slot) == 64, "a work-queue entry is one cache line");

struct doca_workq {
	struct dc_wq_slot *ring;
	uint32_t mask;
	uint32_t depth;
	uint32_t head; /* free-running: next slot to progress */
	uint32_t tail; /* free-running: next slot to fill */
	uint32_t last_ctx; /* submit's first guess: jobs mostly target one context */
	uint32_t num_ctx;
	uint32_t item_resv; /* depth reserved by graph instances, not in the ring now */
	uint32_t nblocked; /* entries in the ring that cannot complete until their bell rings */
	uint32_t nengine;  /* entries in the ring whose CQE waits in the CQ */
	/* Completions of the engine queues, read by owner bit (created with the first engine context). */
	struct hw_cq *cq;
	const struct hw_cqe64 *cqes;
	uint32_t *cq_dbrec;
	uint32_t cq_log;
	uint32_t cq_mask; /* CQEs in the CQ - 1 */
	uint32_t cq_ci;
	uint32_t cq_sn;	  /* sequence number of the last CQ arm */
	uint32_t cq_seen; /* the CQ's event bell at that arm: a move means the CQ fired */
	struct hw_jobq *jq[DC_WQ_MAX_CTX + 1]; /* each engine context's queue on this work queue */
	/* The context's job_post where it has a queue here, else NULL: submit's one test for the engine path. */
	doca_error_t (*post[DC_WQ_MAX_CTX + 1])(struct doca_ctx *ctx, struct hw_jobq *q, const struct doca_job *job,
						 uint32_t cqe_idx);
	/* The context's job_issue and job_take (dc_ctx.h), else NULL. */
	doca_error_t (*issue[DC_WQ_MAX_CTX])(struct doca_ctx *ctx, const struct doca_job *job, struct doca_job *copy);
	doca_error_t (*take[DC_WQ_MAX_CTX + 1])(struct doca_ctx *ctx, const struct doca_job *job,
						 union doca_data *result);
	struct hw_cq *own_cq[DC_WQ_MAX_CTX + 1]; /* the CQ of a queue whose jobs run at progress */
	struct doca_ctx *ctx[DC_WQ_MAX_CTX + 1];
	uint32_t pending[DC_WQ_MAX_CTX + 1];
	uint32_t pins[DC_WQ_MAX_CTX]; /* graphs added to this work queue that use the context */
	bool event_driven;
	bool armed;
	int efd;
	struct hw_waiter waiter; /* the watch of an arm while every queued job is blocked */
};

static uint32_t ring_size(uint32_t depth)
{
	uint32_t n = 1;

	while (n < depth)
		n <<= 1;
	return n;
}

static void cq_free(struct doca_workq *wq)
{
	hw_cq_destroy(wq->cq);
	wq->cq = NULL;
}

/* One CQE per ring entry: the CQ can never overflow. */
static doca_error_t cq_alloc(struct doca_workq *wq)
{
	struct hw_cq_attr attr = { .log_size = (uint32_t)__builtin_ctz(wq->mask + 1) };

	if (hw_cq_create(&attr, &wq->cq) != HW_OK)
		return DOCA_ERROR_NO_MEMORY;
	wq->cqes = hw_cq_ring(wq->cq);
	wq->cq_dbrec = hw_cq_dbrec(wq->cq);
	wq->cq_log = attr.log_size;
	wq->cq_mask = (1u << attr.log_size) - 1;
	wq->cq_ci = 0;
	return DOCA_SUCCESS;
}

static doca_error_t ring_alloc(struct doca_workq *wq, uint32_t depth)
{
	size_t bytes = (size_t)ring_size(depth) * sizeof(struct dc_wq_slot);
	struct dc_wq_slot *ring = aligned_alloc(64, bytes);

	if (ring == NULL)
		return DOCA_ERROR_NO_MEMORY;
	memset(ring, 0, bytes);
	free(wq->ring);
	wq->ring = ring;
	wq->mask = ring_size(depth) - 1;
	wq->depth = depth;
	wq->head = wq->tail = 0;
	wq->nblocked = 0;
	wq->nengine = 0;
	cq_free(wq); /* sized by the ring: made again for the next engine context */
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
	if (workq->efd >= 0) {
		hw_waiter_disarm(&workq->waiter);
		close(workq->efd);
	}
	cq_free(workq);
	free(workq->ring);
	free(workq);
	return DOCA_SUCCESS;
}

static void signal_event(struct doca_workq *wq);
static void cq_arm(struct doca_workq *wq);

/* ---- attachment (called by ctx.c under the context lock) ---- */

static int ctx_index(const struct doca_workq *wq, const struct doca_ctx *ctx)
{
	for (uint32_t i = 0; i < DC_WQ_MAX_CTX; i++)
		if (wq->ctx[i] == ctx)
			return (int)i;
	return -1;
}

static void jobq_close(struct doca_workq *wq, uint32_t idx)
{
	hw_jobq_destroy(wq->jq[idx]);
	wq->jq[idx] = NULL;
	wq->post[idx] = NULL;
	hw_cq_destroy(wq->own_cq[idx]);
	wq->own_cq[idx] = NULL;
}

/*
 * The context's engine queue on this work queue, completing into the work
 * queue's CQ, or into a CQ of its own when its jobs run at progress (one job
 * in flight at a time: as many CQEs as the ring has blocks is plenty).
 */
static doca_error_t jobq_open(struct doca_workq *wq, struct doca_ctx *ctx, uint32_t idx)
{
	struct hw_jobq_attr attr = { .qpn = idx };
	struct hw_cq_attr ca = { .log_size = HW_JOBQ_LOG_BBS };

	if (ctx->ops->job_run != NULL) {
		if (hw_cq_create(&ca, &wq->own_cq[idx]) != HW_OK)
			return DOCA_ERROR_NO_MEMORY;
		attr.cq = wq->own_cq[idx];
	} else {
		if (wq->cq == NULL && cq_alloc(wq) != DOCA_SUCCESS)
			return DOCA_ERROR_NO_MEMORY;
		attr.cq = wq->cq;
	}
	ctx->ops->jobq_attr(ctx, &attr);
	if (hw_jobq_create(&attr, &wq->jq[idx]) != HW_OK) {
		jobq_close(wq, idx);
		return DOCA_ERROR_NO_MEMORY;
	}
	if (wq->armed && ctx->ops->job_run == NULL)
		cq_arm(wq); /* armed before the CQ existed */
	wq->post[idx] = ctx->ops->job_post;
	return DOCA_SUCCESS;
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
	if ((ctx->ops->job_post != NULL || ctx->ops->job_run != NULL) &&
	    jobq_open(wq, ctx, (uint32_t)free_idx) != DOCA_SUCCESS) {
		DC_ERR("cannot create the engine queue of the %s context", ctx->ops->name);
		return DOCA_ERROR_NO_MEMORY;
	}
	wq->issue[free_idx] = ctx->ops->job_issue;
	wq->take[free_idx] = ctx->ops->job_take;
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
	/* An armed watch may name this context's bell, whose memory may go: wake the waiter instead. */
	if (wq->event_driven && hw_waiter_disarm(&wq->waiter))
		signal_event(wq);
	jobq_close(wq, (uint32_t)idx);
	wq->issue[idx] = NULL;
	wq->take[idx] = NULL;
	wq->ctx[idx] = NULL;
	wq->num_ctx--;
	return DOCA_SUCCESS;
}

bool dc_workq_event_driven(const struct doca_workq *wq)
{
	return wq->event_driven;
}

/* ---- data path ---- */

/*
 * Every job struct is 32 to 56 bytes (a 24-byte header and at least one
 * field): two overlapping 32-byte moves copy any of them without a library
 * call, never reading past the caller's struct.
 */
static inline void wqe_copy(unsigned char *dst, const void *src, size_t size)
{
	const unsigned char *s = src;

	if (size < 32 || size > DC_WQE_JOB_MAX) {
		memcpy(dst, s, size);
		return;
	}
	__builtin_memcpy(dst, s, 32);
	__builtin_memcpy(dst + size - 32, s + size - 32, 32);
}

static void signal_event(struct doca_workq *wq)
{
	uint64_t one = 1;

	wq->armed = false;
	hw_waiter_disarm(&wq->waiter);
	if (write(wq->efd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		DC_ERR("event handle write failed: errno %d", errno);
}

static inline bool cq_fired(const struct doca_workq *wq)
{
	return hw_bell_seq(hw_cq_event_bell(wq->cq)) != wq->cq_seen;
}

/* The entry at the tail holds a job of context idx that is not the engine's: it joins the ring. */
static inline doca_error_t queued(struct doca_workq *wq, int idx)
{
	wq->tail++;
	wq->pending[idx]++;
	wq->last_ctx = (uint32_t)idx;
	if (wq->armed)
		signal_event(wq); /* an armed handle fires while such a job is queued (job_bell) */
	return DOCA_SUCCESS;
}

/*
 * A job the engine cannot take: the context checks it and the entry keeps a
 * copy, run at progress. Out of line, so the engine path of
 * doca_workq_submit keeps few registers across its call to job_post.
 */
static __attribute__((noinline)) doca_error_t submit_copied(struct doca_workq *wq, int idx, const struct doca_job *job)
{
	struct doca_ctx *ctx = job->ctx;
	struct dc_wq_slot *slot = &wq->ring[wq->tail & wq->mask];
	doca_error_t ret;
	size_t size;

	ret = ctx->ops->job_check(ctx, job, &size);
	if (ret != DOCA_SUCCESS)
		return ret;
	slot->ctx_idx = (uint16_t)idx;
	slot->blocked = 0;
	slot->engine = 0;
	wqe_copy(slot->u.raw, job, size);
	return queued(wq, idx);
}

/*
 * A job its context starts at submit on queues of its own (job_issue): the
 * entry keeps the header, which the context marks. The slot is past the
 * tail until the job started: a refused one leaves it unused.
 */
static inline __attribute__((always_inline)) doca_error_t submit_issued(struct doca_workq *wq, int idx, const struct doca_job *job)
{
	struct dc_wq_slot *slot = &wq->ring[wq->tail & wq->mask];
	doca_error_t ret;

	slot->ctx_idx = (uint16_t)idx;
	slot->blocked = 0;
	slot->engine = 0;
	slot->u.job = *job;
	ret = wq->issue[idx](job->ctx, job, &slot->u.job);
	return ret == DOCA_SUCCESS ? queued(wq, idx) : ret;
}

/*
 * An armed handle is signalled when the CQE of the job just posted fired the
 * armed CQ. Out of line (it is rare) and the submit's last call, so submit
 * keeps nothing across it.
 */
static __attribute__((noinline)) doca_error_t submit_signal(struct doca_workq *wq)
{
	if (cq_fired(wq))
		signal_event(wq);
	return DOCA_SUCCESS;
}

doca_error_t doca_workq_submit(struct doca_workq *workq, struct doca_job const *job)
{
	doca_error_t (*post)(struct doca_ctx *, struct hw_jobq *, const struct doca_job *, uint32_t);
	struct dc_wq_slot *slot;
	struct doca_ctx *ctx;
	doca_error_t ret;
	int idx;

	if (workq == NULL || job == NULL || job->ctx == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ctx = job->ctx;
	/* Stopped first: a stopped context is never attached, so the other order hid BAD_STATE. */
	if (!ctx->started)
		return DOCA_ERROR_BAD_STATE;
	idx = (int)workq->last_ctx;
	if (__builtin_expect(workq->ctx[idx] != ctx, 0)) {
		idx = ctx_index(workq, ctx);
		if (idx < 0)
			return DOCA_ERROR_NOT_FOUND;
	}
	if (workq->tail - workq->head + workq->item_resv >= workq->depth)
		return DOCA_ERROR_NO_MEMORY;
	post = workq->post[idx];
	if (post == NULL)
		return workq->issue[idx] != NULL ? submit_issued(workq, idx, job) : submit_copied(workq, idx, job);
	/*
	 * The entry of a job the engine runs keeps only what its event needs
	 * (the WQE holds the job). Filled before the call, which then needs
	 * nothing of it: the slot is past the tail, so a job the engine refuses
	 * leaves it unused.
	 */
	slot = &workq->ring[workq->tail & workq->mask];
	slot->ctx_idx = (uint16_t)idx;
	slot->blocked = 0;
	slot->engine = 1;
	slot->u.job.type = job->type;
	slot->u.job.user_data = job->user_data;
	/*
	 * The context checks the job (as job_check would: submit does not check
	 * it again), writes its WQE and rings the doorbell: the engine runs it
	 * there.
	 */
	ret = post(ctx, workq->jq[idx], job, workq->cq_ci + workq->nengine);
	if (__builtin_expect(ret != DOCA_SUCCESS, 0))
		return ret == DC_JOB_NOT_POSTED ? submit_copied(workq, idx, job) : ret;
	workq->nengine++;
	workq->tail++;
	workq->pending[idx]++;
	workq->last_ctx = (uint32_t)idx;
	if (__builtin_expect(workq->armed, 0))
		return submit_signal(workq);
	return DOCA_SUCCESS;
}

/*
 * Back of the ring for an entry that cannot complete yet. An item's entry is
 * rebuilt from its pointer: the item's own run may have reused the slot.
 */
static void requeue_blocked(struct doca_workq *wq, const struct dc_wq_slot *from, uint32_t idx,
			    const struct doca_job *item, uint32_t seen)
{
	struct dc_wq_slot *to = &wq->ring[wq->tail++ & wq->mask];

	if (idx == DC_WQ_ITEM_IDX)
		to->u.item = item;
	else if (to != from)
		to->u = from->u;
	to->ctx_idx = (uint16_t)idx;
	to->blocked = 1;
	to->engine = 0;
	to->seen = seen;
	wq->nblocked++;
}

/* The oldest entry ran on the engine: its CQE is the next one in the CQ. */
static doca_error_t retrieve_cqe(struct doca_workq *wq, struct doca_ctx *ctx, uint32_t idx, const struct doca_job *job,
				 struct doca_event *ev)
{
	const struct hw_cqe64 *cqe = NULL;
	int op = hw_cqe_poll_op(wq->cqes, wq->cq_log, wq->cq_ci, &cqe);
	doca_error_t st;

	if (__builtin_expect(op < 0, 0)) {
		wq->head--; /* not completed yet: stays the oldest */
		return DOCA_ERROR_AGAIN;
	}
	ev->result.u64 = DOCA_SUCCESS;
	st = op == HW_CQE_REQ ? DOCA_SUCCESS : ctx->ops->job_done(ctx, job, cqe, &ev->result);
	hw_cq_set_ci(wq->cq_dbrec, ++wq->cq_ci);
	wq->nengine--;
	wq->pending[idx]--;
	ev->type = job->type;
	ev->user_data = job->user_data;
	return st == DOCA_SUCCESS ? DOCA_SUCCESS : DOCA_ERROR_IO_FAILED;
}

/*
 * The oldest entry ran on the engine and its CQE is a success: the common
 * retrieve, kept free of calls so that it needs no frame. Anything else
 * (no CQE yet, an error CQE, other entries) takes retrieve_slow.
 */
static inline bool retrieve_engine_ok(struct doca_workq *wq, const struct dc_wq_slot *slot, struct doca_event *ev)
{
	/* hw_cqe_poll_op's test for the one opcode wanted (REQ is never INVALID), with the mask kept. */
	uint32_t ci = wq->cq_ci;
	uint8_t op_own = atomic_load_explicit((const _Atomic uint8_t *)&wq->cqes[ci & wq->cq_mask].op_own,
					      memory_order_acquire);

	if ((op_own >> HW_CQE_OPCODE_SHIFT) != HW_CQE_REQ || (op_own & HW_CQE_OWNER_MASK) != ((ci >> wq->cq_log) & 1))
		return false;
	wq->head++;
	hw_cq_set_ci(wq->cq_dbrec, ++wq->cq_ci);
	wq->nengine--;
	wq->pending[slot->ctx_idx]--;
	ev->type = slot->u.job.type;
	ev->user_data = slot->u.job.user_data;
	ev->result.u64 = DOCA_SUCCESS;
	return true;
}

/*
 * The oldest entry is a job its context may know complete (job_take): taken
 * without reading its bell. DOCA_ERROR_AGAIN: retrieve_slow looks at it.
 */
static doca_error_t retrieve_taken(struct doca_workq *wq, const struct dc_wq_slot *slot, struct doca_event *ev)
{
	uint32_t idx = slot->ctx_idx;
	doca_error_t st = wq->take[idx](wq->ctx[idx], &slot->u.job, &ev->result);

	if (st == DOCA_ERROR_AGAIN)
		return st;
	wq->head++;
	wq->nblocked -= slot->blocked;
	wq->pending[idx]--;
	ev->type = slot->u.job.type;
	ev->user_data = slot->u.job.user_data;
	/* The next retrieve's entry, written a ring ago: the submits since have likely pushed it out of L1. */
	__builtin_prefetch(&wq->ring[wq->head & wq->mask]);
	return st == DOCA_SUCCESS ? DOCA_SUCCESS : DOCA_ERROR_IO_FAILED;
}

__attribute__((noinline)) static doca_error_t retrieve_slow(struct doca_workq *workq, struct doca_event *ev)
{
	const struct doca_job *job;
	struct dc_wq_slot *slot;
	struct hw_bell *bell;
	struct doca_ctx *ctx;
	doca_error_t st;
	uint32_t idx, seen;

	/* Each queued job at most once per call: jobs that cannot complete yet go to the back. */
	for (uint32_t n = workq->tail - workq->head; n != 0; n--) {
		slot = &workq->ring[workq->head++ & workq->mask];
		idx = slot->ctx_idx;
		ctx = workq->ctx[idx];
		job = idx == DC_WQ_ITEM_IDX ? slot->u.item : &slot->u.job;
		if (slot->engine)
			return retrieve_cqe(workq, ctx, idx, job, ev);
		workq->nblocked -= slot->blocked;
		/* The bell's sequence before the look: a ring after it wakes a later watch. */
		bell = ctx->ops->job_bell != NULL ? ctx->ops->job_bell(ctx, job) : NULL;
		seen = bell != NULL ? hw_bell_seq(bell) : 0;
		if (ctx->ops->job_run != NULL && workq->jq[idx] != NULL)
			st = ctx->ops->job_run(ctx, workq->jq[idx], job, &ev->result);
		else
			st = ctx->ops->job_exec(ctx, job, &ev->result);
		if (st == DOCA_ERROR_AGAIN) {
			requeue_blocked(workq, slot, idx, job, seen);
			continue;
		}
		workq->pending[idx]--;
		if (st == DC_JOB_NO_EVENT)
			continue;
		ev->type = job->type;
		ev->user_data = job->user_data;
		return st == DOCA_SUCCESS ? DOCA_SUCCESS : DOCA_ERROR_IO_FAILED;
	}
	return DOCA_ERROR_AGAIN;
}

doca_error_t doca_workq_progress_retrieve(struct doca_workq *workq, struct doca_event *ev, int flags)
{
	if (workq == NULL || ev == NULL || flags != DOCA_WORKQ_RETRIEVE_FLAGS_NONE)
		return DOCA_ERROR_INVALID_VALUE;
	if (workq->head != workq->tail) {
		const struct dc_wq_slot *slot = &workq->ring[workq->head & workq->mask];

		if (slot->engine) {
			if (retrieve_engine_ok(workq, slot, ev))
				return DOCA_SUCCESS;
		} else if (workq->take[slot->ctx_idx] != NULL) {
			doca_error_t st = retrieve_taken(workq, slot, ev);

			if (st != DOCA_ERROR_AGAIN)
				return st;
		}
	}
	return retrieve_slow(workq, ev);
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
	wq->ring[wq->tail & wq->mask] = (struct dc_wq_slot){ .ctx_idx = DC_WQ_ITEM_IDX, .u.item = item };
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
	hw_waiter_init(&workq->waiter, workq->efd);
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

/* Every queued entry is blocked: watch their bells. DOCA_ERROR_NOT_SUPPORTED if one has none. */
static doca_error_t watch_blocked(struct doca_workq *wq)
{
	struct hw_watch_set set = { .n = 0 };

	for (uint32_t i = wq->head; i != wq->tail; i++) {
		const struct dc_wq_slot *slot = &wq->ring[i & wq->mask];
		struct doca_ctx *ctx = wq->ctx[slot->ctx_idx];
		const struct doca_job *job = slot->ctx_idx == DC_WQ_ITEM_IDX ? slot->u.item : &slot->u.job;
		struct hw_bell *bell = ctx->ops->job_bell != NULL ? ctx->ops->job_bell(ctx, job) : NULL;

		if (bell == NULL || hw_watch_set_add(&set, bell, slot->seen, ctx->ops->peer_gone, ctx) != HW_OK)
			return DOCA_ERROR_NOT_SUPPORTED;
	}
	return hw_waiter_arm(&wq->waiter, &set) == HW_OK ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

/*
 * Arms the CQ for its next CQE past what was consumed, with a new sequence
 * number (the last arm's event was taken). It fires at once when a CQE
 * already waits. Only this thread writes the CQ (its doorbells run the jobs)
 * or arms it, so the work queue sees the bell move right after either and
 * writes the event handle itself instead of waking the watch engine.
 */
static void cq_arm(struct doca_workq *wq)
{
	wq->cq_sn = (wq->cq_sn + 1) & HW_CQ_ARM_SN_MASK;
	wq->cq_seen = hw_bell_seq(hw_cq_event_bell(wq->cq));
	hw_cq_arm(wq->cq, wq->cq_sn << HW_CQ_ARM_SN_SHIFT | HW_CQ_ARM_CMD_NEXT | (wq->cq_ci & HW_CQ_CI_MASK));
}

doca_error_t doca_workq_event_handle_arm(struct doca_workq *workq)
{
	if (workq == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!workq->event_driven)
		return DOCA_ERROR_BAD_STATE;
	workq->armed = true;
	if (workq->cq != NULL)
		cq_arm(workq);
	if (workq->head == workq->tail)
		return DOCA_SUCCESS; /* the next submit signals (an engine job through the CQ) */
	/* Jobs that can complete now must wake the waiter, or it would sleep forever. */
	if (workq->nengine != 0 && cq_fired(workq))
		signal_event(workq);
	else if (workq->tail - workq->head != workq->nblocked || watch_blocked(workq) != DOCA_SUCCESS)
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
