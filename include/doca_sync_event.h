/*
 * doca_sync_event.h — DOCA Sync Event (DOCA 2.2, work-queue era).
 *
 * A 64-bit counter shared by a publisher (sets or adds) and a subscriber
 * (reads or waits until it is greater than a value), usable from the host CPU
 * and, through an export, from the DPU CPU. Operated synchronously after
 * doca_sync_event_start(), or asynchronously through doca_sync_event_as_ctx()
 * and jobs submitted on a doca_workq.
 *
 * The API is thread unsafe, except that update_add is atomic against every
 * other update of the same counter, in this process or another one.
 * A DPA context (doca_dpa.h) of this process may publish or subscribe:
 * kernels use the handle doca_sync_event_export_to_dpa gives them.
 * GPU locations and handles are not supported: those functions return
 * DOCA_ERROR_NOT_SUPPORTED and log why.
 */
#ifndef DOCA_SYNC_EVENT_H_
#define DOCA_SYNC_EVENT_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_sync_event;
struct doca_dpa_sync_event;
struct doca_gpu_sync_event;
struct doca_dpa;
struct doca_gpu;

/* ---- Life cycle ---- */

/**
 * Creates a CPU handle (host CPU or DPU CPU).
 * DOCA_ERROR_INVALID_VALUE if event is NULL, DOCA_ERROR_NO_MEMORY.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_create(struct doca_sync_event **event);

/**
 * Creates a DPU handle from the data of doca_sync_event_export_to_dpu().
 * dev must be a DPU device able to import (see
 * doca_sync_event_get_create_from_export_supported). The handle cannot be
 * configured; it must be started before use.
 * DOCA_ERROR_INVALID_VALUE for NULL arguments or malformed data,
 * DOCA_ERROR_NOT_SUPPORTED when dev cannot import,
 * DOCA_ERROR_NOT_PERMITTED when the export is not (or no longer) valid.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_create_from_export(struct doca_dev *dev, const uint8_t *data, size_t sz,
						struct doca_sync_event **event);

/** DOCA_SUCCESS when the device can create a Sync Event from an export. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get_create_from_export_supported(const struct doca_devinfo *devinfo);

/**
 * Destroys the event, stopping it first when started synchronously. An
 * exporter's destroy revokes its export. DOCA_ERROR_IN_USE while its context
 * still has work queues.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_destroy(struct doca_sync_event *event);

/* ---- Configuration (before start only) ---- */

/** The CPU of dev's side publishes. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_publisher_add_location_cpu(struct doca_sync_event *event, struct doca_dev *dev);

/** A DPA context's kernels publish. DOCA_ERROR_INVALID_VALUE for NULL, DOCA_ERROR_BAD_STATE once set or started. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_publisher_add_location_dpa(struct doca_sync_event *event, struct doca_dpa *dpa);

/** Not supported: GPU locations. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_publisher_add_location_gpu(struct doca_sync_event *event, struct doca_gpu *gpu);

/** The DPU CPU publishes. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_publisher_add_location_dpu(struct doca_sync_event *event);

/** The CPU of dev's side subscribes. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_subscriber_add_location_cpu(struct doca_sync_event *event, struct doca_dev *dev);

/** A DPA context's kernels subscribe. DOCA_ERROR_INVALID_VALUE for NULL, DOCA_ERROR_BAD_STATE once set or started. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_subscriber_add_location_dpa(struct doca_sync_event *event, struct doca_dpa *dpa);

/** Not supported: GPU locations. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_subscriber_add_location_gpu(struct doca_sync_event *event, struct doca_gpu *gpu);

/** The DPU CPU subscribes. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_subscriber_add_location_dpu(struct doca_sync_event *event);

/**
 * Uses the caller's 8-byte, 8-byte aligned memory as the counter. The caller
 * keeps it valid until the event is destroyed. Such an event cannot be
 * exported to another process (DOCA_ERROR_NOT_SUPPORTED at export).
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_set_addr(struct doca_sync_event *event, uint64_t *addr);

/* ---- Operation modes ---- */

/**
 * Starts the event in synchronous mode. Needs one publisher and one
 * subscriber location (DOCA_ERROR_BAD_STATE otherwise); an event started this
 * way cannot be converted to a context.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_start(struct doca_sync_event *event);

/** Stops an event started with doca_sync_event_start(). */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_stop(struct doca_sync_event *event);

/**
 * The event as a DOCA context (asynchronous mode): start/stop/workq_add/
 * workq_rm/get_event_driven_supported; no device can be added. Fixes the
 * operation mode and the configuration. NULL for a NULL event, an event
 * started synchronously or one without both locations.
 */
__DOCA_EXPERIMENTAL
struct doca_ctx *doca_sync_event_as_ctx(struct doca_sync_event *event);

/** Job types of the Sync Event context (see DOCA_ACTION_SDK_RANGE). */
enum doca_sync_event_job_types {
	DOCA_SYNC_EVENT_JOB_WAIT_GT = (13 << DOCA_ACTION_SDK_RANGE) + 1, /**< Complete when value & mask > threshold */
	DOCA_SYNC_EVENT_JOB_GET,					  /**< Read the value */
	DOCA_SYNC_EVENT_JOB_UPDATE_SET,					  /**< Set the value */
	DOCA_SYNC_EVENT_JOB_UPDATE_ADD,					  /**< Add atomically */
};

/** Result of a Sync Event job, held in doca_event::result.u64. */
struct doca_sync_event_result {
	doca_error_t result; /**< Operation status */
};

/** DOCA_SUCCESS when the device can execute jobs of this type. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_job_get_supported(struct doca_devinfo *devinfo, enum doca_sync_event_job_types type);

/** Completes once (event value & mask) > value. */
struct doca_sync_event_job_wait {
	struct doca_job base; /**< type DOCA_SYNC_EVENT_JOB_WAIT_GT */
	uint64_t value;	      /**< Threshold */
	uint64_t mask;	      /**< Applied to the event value before comparing */
};

/** Reads the event value into *value. */
struct doca_sync_event_job_get {
	struct doca_job base; /**< type DOCA_SYNC_EVENT_JOB_GET */
	uint64_t *value;      /**< Receives the value */
};

/** Sets the event value. */
struct doca_sync_event_job_update_set {
	struct doca_job base; /**< type DOCA_SYNC_EVENT_JOB_UPDATE_SET */
	uint64_t value;	      /**< New value */
};

/** Adds to the event value atomically. */
struct doca_sync_event_job_update_add {
	struct doca_job base; /**< type DOCA_SYNC_EVENT_JOB_UPDATE_ADD */
	uint64_t value;	      /**< Increment */
	uint64_t *fetched;    /**< Receives the value before the addition */
};

/* ---- Export ---- */

/**
 * Describes the started event for the DPU: data (owned by the event, valid
 * until it is destroyed) goes to the DPU, which calls
 * doca_sync_event_create_from_export(). The event needs a DPU location and
 * dev a host device able to export (doca_sync_event_get_export_to_dpu_supported).
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_dpu(struct doca_sync_event *event, struct doca_dev *dev, const uint8_t **data,
					   size_t *sz);

/** DOCA_SUCCESS when the device can export a Sync Event to the DPU. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get_export_to_dpu_supported(const struct doca_devinfo *devinfo);

/** DPA sync event handle. */
typedef uint64_t doca_dpa_dev_sync_event_t;

/**
 * The handle kernels of dpa use for the event. DOCA_ERROR_INVALID_VALUE for
 * NULL, DOCA_ERROR_NOT_PERMITTED without a DPA location, DOCA_ERROR_BAD_STATE
 * before start.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_dpa(struct doca_sync_event *event, struct doca_dpa *dpa,
					   doca_dpa_dev_sync_event_t *dpa_dev_se_handle);

/** DOCA_SUCCESS: every device's DPA takes exported Sync Events. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get_export_to_dpa_supported(const struct doca_devinfo *devinfo);

/** GPU sync event handle. */
typedef uint64_t doca_gpu_dev_sync_event_t;

/** Not supported: GPU handles. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_to_gpu(struct doca_sync_event *event, struct doca_gpu *gpu,
					   doca_gpu_dev_sync_event_t **gpu_dev_se);

/** DOCA_ERROR_NOT_SUPPORTED: no device exports to a GPU. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get_export_to_gpu_supported(const struct doca_devinfo *devinfo);

/** Handle for a remote node. */
typedef struct doca_sync_event_remote {
	uint64_t data[2];
} doca_sync_event_remote_t;

/**
 * Exports a started event for a remote node's RDMA (a DPA endpoint's
 * put_signal): the counter and a key with remote write and atomic rights on
 * it, in the domain of the event's CPU location's device. BAD_STATE before
 * start; NOT_PERMITTED without a CPU location, or for an imported event.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_export_remote(struct doca_sync_event *event, doca_sync_event_remote_t *handle);

/* ---- Data path (started events) ---- */

/** Reads the value. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_get(struct doca_sync_event *event, uint64_t *value);

/** Adds value atomically; *fetched receives the value before the addition. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_update_add(struct doca_sync_event *event, uint64_t value, uint64_t *fetched);

/** Sets the value. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_update_set(struct doca_sync_event *event, uint64_t value);

/** Busy-waits until (event value & mask) > value. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_gt(struct doca_sync_event *event, uint64_t value, uint64_t mask);

/** As doca_sync_event_wait_gt, yielding the CPU (sched_yield) between polls. */
__DOCA_EXPERIMENTAL
doca_error_t doca_sync_event_wait_gt_yield(struct doca_sync_event *event, uint64_t value, uint64_t mask);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_SYNC_EVENT_H_ */
