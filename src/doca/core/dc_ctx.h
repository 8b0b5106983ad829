/*
 * dc_ctx — the context base every DOCA library embeds, and its operations.
 *
 * A library (DMA, later SHA, ...) embeds struct doca_ctx as its first member
 * and supplies a dc_ctx_ops table; ctx.c and workq.c do the life cycle and the
 * submit/retrieve path common to all of them.
 */
#ifndef DC_CTX_H_
#define DC_CTX_H_

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "doca_ctx.h"

struct hw_bell;
struct hw_cqe64;
struct hw_jobq;
struct hw_jobq_attr;

#define DC_CTX_MAX_DEVS 4
#define DC_MAX_NUM_CTX 1024

struct dc_ctx_ops {
	const char *name;
	uint32_t max_devs; /* 0: the context takes no device and starts without one */
	bool event_driven;
	/* Whether dev can serve this context (doca_ctx_dev_add). */
	doca_error_t (*dev_check)(struct doca_ctx *ctx, struct doca_dev *dev);
	/*
	 * Checks the job at submit time; the work queue refuses it on error.
	 * On success *size is the size of the job's struct (its type's), which
	 * submit copies into the ring: the caller's struct is free again when
	 * submit returns, as on the card, where submit writes a work-queue entry.
	 */
	doca_error_t (*job_check)(struct doca_ctx *ctx, const struct doca_job *job, size_t *size);
	/*
	 * Runs the job; returns DOCA_SUCCESS or the job's failure reason, which
	 * the work queue reports as an IO_FAILED event. result receives the
	 * job type's result (for a status-only result, the status).
	 * DOCA_ERROR_AGAIN: the job cannot complete yet (a wait); it stays
	 * queued and is tried again on a later progress call.
	 */
	doca_error_t (*job_exec)(struct doca_ctx *ctx, const struct doca_job *job, union doca_data *result);
	/*
	 * Optional: the doorbell a job that returned DOCA_ERROR_AGAIN waits on
	 * (it may complete once the bell rings). Without one, an armed event
	 * handle signals at once while such a job is queued.
	 */
	struct hw_bell *(*job_bell)(struct doca_ctx *ctx, const struct doca_job *job);
	/*
	 * Optional: true when the producer that would ring the bell (another
	 * process) is gone. Called on the watch engine's thread while a watch is
	 * armed, which a context leaving the work queue disarms first.
	 */
	bool (*peer_gone)(void *ctx);
	/*
	 * Engine contexts (DMA, SHA): each work queue the context is added to
	 * gives it an engine queue (src/hw/hw_jobq.h) completing into the work
	 * queue's CQ. jobq_attr fills in the domain and engines of that queue.
	 * job_post checks the job as job_check does (refusing it the same way),
	 * writes its WQE (the copy of the job, so the caller's struct is free
	 * when submit returns) and rings the doorbell; the engine has run the job
	 * when the doorbell returns, and job_post grows the destination's data
	 * length from the job's CQE (index cqe_idx of the CQ) right then, so a
	 * job submitted next sees the buffer as the engine left it.
	 * DC_JOB_NOT_POSTED when the job passed the checks but has no WQE form
	 * (the work queue then copies it and runs it through job_exec, as a
	 * graph node runs). job_done gives the result of a posted job whose CQE
	 * is an error, at retrieve: what job_exec would have returned.
	 */
	void (*jobq_attr)(struct doca_ctx *ctx, struct hw_jobq_attr *attr);
	/*
	 * Engine contexts whose jobs run at progress (SHA: a job reads its
	 * buffers and session when it runs, not when it is submitted): submit
	 * copies the job as for job_exec, and retrieve calls job_run instead,
	 * which writes the WQE on the context's engine queue, rings the doorbell
	 * and reads the CQE, from a CQ of the queue's own (so it never mixes
	 * with the CQEs of jobs posted at submit), then returns as job_exec.
	 */
	doca_error_t (*job_run)(struct doca_ctx *ctx, struct hw_jobq *q, const struct doca_job *job,
				union doca_data *result);
	doca_error_t (*job_post)(struct doca_ctx *ctx, struct hw_jobq *q, const struct doca_job *job,
				 uint32_t cqe_idx);
	doca_error_t (*job_done)(struct doca_ctx *ctx, const struct doca_job *job, const struct hw_cqe64 *cqe,
				 union doca_data *result);
	/*
	 * Optional, contexts whose jobs start at submit and end at a completion
	 * of their own queues (RDMA). job_issue replaces job_check at submit:
	 * it checks the job as job_check does and starts it, in one call, with
	 * the work-queue entry's copy of the job's header (all the entry keeps),
	 * which it marks (its flags) to find the job's state at job_exec. An
	 * error refuses the submit and starts nothing. job_take is retrieve's
	 * first look at such a job: when the context already knows the job
	 * complete, it completes it as job_exec would; otherwise it returns
	 * DOCA_ERROR_AGAIN having read and changed nothing, and retrieve goes
	 * the usual way (the job's bell read before job_exec looks).
	 */
	doca_error_t (*job_issue)(struct doca_ctx *ctx, const struct doca_job *job, struct doca_job *copy);
	doca_error_t (*job_take)(struct doca_ctx *ctx, const struct doca_job *job, union doca_data *result);
	/* Optional: doca_ctx_start and doca_ctx_stop's own work (under the context's lock). */
	doca_error_t (*start)(struct doca_ctx *ctx);
	void (*stop)(struct doca_ctx *ctx);
};

/* The largest job struct a context accepts: one work-queue entry holds it. */
#define DC_WQE_JOB_MAX 56

struct doca_ctx {
	const struct dc_ctx_ops *ops;
	pthread_mutex_t lock; /* contexts are thread-safe on the control path */
	bool started;
	uint32_t num_devs;
	struct doca_dev *devs[DC_CTX_MAX_DEVS];
	uint32_t num_workqs; /* a work queue with pending jobs cannot leave, so this covers in-flight jobs */
};

doca_error_t dc_ctx_init(struct doca_ctx *ctx, const struct dc_ctx_ops *ops);
/* DOCA_ERROR_IN_USE while started or while work queues or devices are attached. */
doca_error_t dc_ctx_fini(struct doca_ctx *ctx);

/* Work queue side of doca_ctx_workq_add/rm (workq.c). */
doca_error_t dc_workq_attach(struct doca_workq *wq, struct doca_ctx *ctx);
doca_error_t dc_workq_detach(struct doca_workq *wq, struct doca_ctx *ctx);
bool dc_workq_event_driven(const struct doca_workq *wq);

/*
 * DOCA graph work items (src/doca/graph, docs/graph.md).
 *
 * A graph node runs as an item of the work queue: a struct doca_job the graph
 * owns, executed by item_ctx->ops->job_exec inside
 * doca_workq_progress_retrieve like any job. The item's job_exec returns
 * DC_JOB_NO_EVENT when the node completed without completing its instance:
 * the work queue then drops the slot and returns no event for it.
 */
#define DC_JOB_NO_EVENT ((doca_error_t)0x10000)
/* job_post: the job is valid but has no WQE form (src/doca/core/dc_ctx.h, engine contexts). */
#define DC_JOB_NOT_POSTED ((doca_error_t)0x10001)

/* A graph added to wq uses ctx: ctx cannot leave wq until unpinned. DOCA_ERROR_NOT_FOUND: ctx not added. */
doca_error_t dc_workq_pin(struct doca_workq *wq, const struct doca_ctx *ctx);
void dc_workq_unpin(struct doca_workq *wq, const struct doca_ctx *ctx);
/*
 * Depth held by a graph instance: item_submit reserves units (DOCA_ERROR_NO_MEMORY when they are not free)
 * and queues the instance's item on the first; item_push queues an item on another reserved unit, which
 * item_done returns to the reserve; unreserve gives the units back when the instance completes.
 */
doca_error_t dc_workq_item_submit(struct doca_workq *wq, uint32_t units, struct doca_ctx *item_ctx,
				  const struct doca_job *item);
void dc_workq_item_push(struct doca_workq *wq, struct doca_ctx *item_ctx, const struct doca_job *item);
void dc_workq_item_done(struct doca_workq *wq);
void dc_workq_unreserve(struct doca_workq *wq, uint32_t units);

#endif /* DC_CTX_H_ */
