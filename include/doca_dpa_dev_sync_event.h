/*
 * doca_dpa_dev_sync_event.h — DOCA Sync Events as device code uses them
 * (DOCA 2.2): a handle from doca_sync_event_export_to_dpa, read, updated
 * and waited on by kernels.
 */
#ifndef DOCA_DPA_DEV_SYNC_EVENT_H_
#define DOCA_DPA_DEV_SYNC_EVENT_H_

#include "doca_dpa_dev.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A Sync Event as device code names it. */
typedef uint64_t doca_dpa_dev_sync_event_t;
/** A remote peer's Sync Event (opaque). */
struct doca_dpa_dev_sync_event_remote {
	uint64_t data[2];
};

/** Reads the counter into *value. */
DOCA_EXPERIMENTAL
void doca_dpa_dev_sync_event_get(doca_dpa_dev_sync_event_t dpa_dev_se_handle, uint64_t *value);

/** Adds value to the counter, atomically. */
DOCA_EXPERIMENTAL
void doca_dpa_dev_sync_event_update_add(doca_dpa_dev_sync_event_t dpa_dev_se_handle, uint64_t value);

/** Sets the counter to value. */
DOCA_EXPERIMENTAL
void doca_dpa_dev_sync_event_update_set(doca_dpa_dev_sync_event_t dpa_dev_se_handle, uint64_t value);

/** Polls until (counter & mask) is greater than value. */
DOCA_EXPERIMENTAL
void doca_dpa_dev_sync_event_wait_gt(doca_dpa_dev_sync_event_t dpa_dev_se_handle, uint64_t value, uint64_t mask);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DPA_DEV_SYNC_EVENT_H_ */
