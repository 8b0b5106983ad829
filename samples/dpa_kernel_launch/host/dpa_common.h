/*
 * dpa_common — what the DPA samples share: a device with its DPA context,
 * and Sync Events for kernels to wait on or complete.
 */
#ifndef DPA_COMMON_H_
#define DPA_COMMON_H_

#include <doca_dev.h>
#include <doca_dpa.h>
#include <doca_error.h>
#include <doca_sync_event.h>

/* The application dpacc built (--app-name=dpa_sample_app). */
extern struct doca_dpa_app *dpa_sample_app;

struct dpa_resources {
	struct doca_dev *doca_device;
	struct doca_dpa *doca_dpa;
};

doca_error_t allocate_dpa_resources(struct dpa_resources *resources);
doca_error_t destroy_dpa_resources(struct dpa_resources *resources);
/* An event the host CPU publishes and the DPA waits on. */
doca_error_t create_doca_dpa_wait_sync_event(struct doca_dpa *dpa, struct doca_dev *dev,
					     struct doca_sync_event **event);
/* An event the DPA publishes and the host CPU waits on. */
doca_error_t create_doca_dpa_completion_sync_event(struct doca_dpa *dpa, struct doca_dev *dev,
						   struct doca_sync_event **event);

#endif /* DPA_COMMON_H_ */
