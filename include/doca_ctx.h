/*
 * softdpu — DOCA contexts, jobs, events and work queues (DOCA 2.2 work-queue API).
 */
#ifndef DOCA_CTX_H_
#define DOCA_CTX_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Each library owns a range of 2^16 job types. */
#define DOCA_ACTION_SDK_RANGE 16

enum doca_action_type {
	DOCA_ACTION_NONE = 0,
	DOCA_ACTION_DMA_FIRST = 1 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_DEVEMU_FIRST = 2 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_DEVEMU_BLOCK_FIRST = 3 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_VIRTIO_FIRST = 4 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_VBLK_FIRST = 5 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_REGEX_FIRST = 6 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_NVME_FIRST = 7 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_APPSHIELD_FIRST = 8 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_SHA_FIRST = 9 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_COMPRESS_FIRST = 10 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_IPSEC_FIRST = 11 << DOCA_ACTION_SDK_RANGE,
	DOCA_ACTION_RMAX_FIRST = 12 << DOCA_ACTION_SDK_RANGE,
	/* Jobs of DOCA RDMA (doca_rdma.h). */
	DOCA_ACTION_RDMA_FIRST = 14 << DOCA_ACTION_SDK_RANGE,
	/* Completion events of DOCA graph instances (doca_graph.h: DOCA_GRAPH_JOB). */
	DOCA_ACTION_GRAPH_FIRST = 17 << DOCA_ACTION_SDK_RANGE,
};

enum doca_job_flags {
	DOCA_JOB_FLAGS_NONE = 0,
};

/** Common head of every library job. */
struct doca_job {
	int type;		   /**< Job type, from the library's range of enum doca_action_type. */
	int flags;		   /**< enum doca_job_flags. */
	struct doca_ctx *ctx;	   /**< Context that executes the job. */
	union doca_data user_data; /**< Returned unchanged in the completion event. */
};

/** Completion of a submitted job (or an event a context raises). */
struct doca_event {
	int type;		   /**< Type of the job that completed. */
	union doca_data user_data; /**< The job's user_data. */
	union doca_data result;	   /**< Per job type; a status fits in result.u64. */
};

struct doca_workq;
struct doca_ctx;
struct doca_gpu;

/* ---- Work queue ---- */

/** Creates a work queue holding at most depth in-flight jobs. */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_create(uint32_t depth, struct doca_workq **workq);

/** Destroys it; DOCA_ERROR_IN_USE while it is still added to a context. */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_destroy(struct doca_workq *workq);

/**
 * Submits a job. DOCA_ERROR_NO_MEMORY when the queue is full,
 * DOCA_ERROR_NOT_FOUND when job->ctx does not have this work queue,
 * DOCA_ERROR_BAD_STATE when the context is stopped.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_submit(struct doca_workq *workq, struct doca_job const *job);

/** Asks for a signal on the event handle at the next completion. */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_event_handle_arm(struct doca_workq *workq);

/** Clears a received signal. */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_event_handle_clear(struct doca_workq *workq, doca_event_handle_t handle);

enum doca_workq_retrieve_flags {
	DOCA_WORKQ_RETRIEVE_FLAGS_NONE,
};

/**
 * Progresses submitted jobs and retrieves one event: DOCA_SUCCESS (ev set),
 * DOCA_ERROR_AGAIN (nothing yet), DOCA_ERROR_IO_FAILED (ev set, the job failed;
 * the reason is in the job type's result), DOCA_ERROR_INVALID_VALUE.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_progress_retrieve(struct doca_workq *workq, struct doca_event *ev, int flags);

/** Maximal number of contexts an application may create. */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_get_max_num_ctx(uint32_t *max_num_ctx);

__DOCA_EXPERIMENTAL
doca_error_t doca_workq_get_depth(const struct doca_workq *workq, uint32_t *depth);

__DOCA_EXPERIMENTAL
doca_error_t doca_workq_get_event_driven_enable(struct doca_workq *workq, uint8_t *enabled);

/** Handle (a file descriptor) to wait on with epoll/select; needs event-driven mode. */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_get_event_handle(struct doca_workq *workq, doca_event_handle_t *handle);

/** Changes the depth; only while the work queue is not added to any context. */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_set_depth(struct doca_workq *workq, uint32_t depth);

/** Enables event-driven mode; only while the work queue is not added to any context. */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_set_event_driven_enable(struct doca_workq *workq, uint8_t enable);

/* ---- Context ---- */

__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_dev_add(struct doca_ctx *ctx, struct doca_dev *dev);

__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_dev_rm(struct doca_ctx *ctx, struct doca_dev *dev);

/**
 * Runs the context's data path on a GPU (DOCA 2.2, with DOCA GPUNetIO). The device has no GPU:
 * DOCA_ERROR_NOT_SUPPORTED, logged; NULL arguments: DOCA_ERROR_INVALID_VALUE; a started context:
 * DOCA_ERROR_BAD_STATE.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_set_datapath_on_gpu(struct doca_ctx *ctx, struct doca_gpu *gpu_dev);

__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_start(struct doca_ctx *ctx);

__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_stop(struct doca_ctx *ctx);

__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_workq_add(struct doca_ctx *ctx, struct doca_workq *workq);

__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_workq_rm(struct doca_ctx *ctx, struct doca_workq *workq);

__DOCA_EXPERIMENTAL
doca_error_t doca_ctx_get_event_driven_supported(struct doca_ctx *ctx, uint8_t *event_supported);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_CTX_H_ */
