/*
 * se_event — Sync Event life cycle: create, configure, start, stop, destroy.
 */
#include <sched.h>
#include <stdlib.h>

#include "dc_dev.h"
#include "dc_log.h"
#include "se_priv.h"

doca_error_t dse_alloc(struct doca_sync_event **out)
{
	struct doca_sync_event *ev = calloc(1, sizeof(*ev));

	if (ev == NULL)
		return DOCA_ERROR_NO_MEMORY;
	ev->state = DSE_CONFIG;
	ev->shm.fd = -1;
	atomic_init(&ev->own_value, 0);
	*out = ev;
	return DOCA_SUCCESS;
}

void dse_free(struct doca_sync_event *ev)
{
	/* A DPA thread's update seen by the host may still be ringing the bell (se_dpa_handle.h). */
	while (atomic_load_explicit(&ev->dpa_h.busy, memory_order_acquire) != 0)
		sched_yield();
	dse_export_release(ev);
	dc_dev_put(ev->pub_dev);
	dc_dev_put(ev->sub_dev);
	dc_dev_put(ev->import_dev);
	free(ev);
}

bool dse_configured(const struct doca_sync_event *ev)
{
	return ev->imported || (ev->pub != DSE_LOC_NONE && ev->sub != DSE_LOC_NONE);
}

bool dse_has_dpu_loc(const struct doca_sync_event *ev)
{
	return ev->pub == DSE_LOC_DPU || ev->sub == DSE_LOC_DPU;
}

/* Called once the operation mode is fixed (start or as_ctx). */
doca_error_t dse_storage_setup(struct doca_sync_event *ev)
{
	if (ev->value != NULL)
		return DOCA_SUCCESS; /* imported: the exporter's page, mapped at creation */
	if (ev->user_addr != NULL) {
		/* Same size and alignment as uint64_t: the atomic view of the user's word. */
		ev->value = (_Atomic uint64_t *)ev->user_addr;
		ev->bell = &ev->own_bell;
		return DOCA_SUCCESS;
	}
	if (dse_has_dpu_loc(ev))
		return dse_seg_create(ev);
	ev->value = &ev->own_value;
	ev->bell = &ev->own_bell;
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_create(struct doca_sync_event **event)
{
	if (event == NULL) {
		DC_ERR("event must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return dse_alloc(event);
}

doca_error_t doca_sync_event_destroy(struct doca_sync_event *event)
{
	doca_error_t ret;

	if (event == NULL) {
		DC_ERR("event must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (event->state == DSE_CTX_MODE) {
		ret = dse_ctx_fini(event);
		if (ret != DOCA_SUCCESS)
			return ret;
	}
	/* A synchronously started event has no dependants here: destroy stops it. */
	dse_free(event);
	return DOCA_SUCCESS;
}

/* ---- configuration ---- */

static doca_error_t config_check(const struct doca_sync_event *ev)
{
	if (ev->imported) {
		DC_ERR("a Sync Event created from an export cannot be configured");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (ev->state != DSE_CONFIG) {
		DC_ERR("a Sync Event can be configured only before it is started");
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t add_location(struct doca_sync_event *ev, bool publisher, enum dse_loc loc, struct doca_dev *dev)
{
	enum dse_loc *slot = publisher ? &ev->pub : &ev->sub;
	struct doca_dev **dev_slot = publisher ? &ev->pub_dev : &ev->sub_dev;
	doca_error_t ret = config_check(ev);

	if (ret != DOCA_SUCCESS)
		return ret;
	if (*slot != DSE_LOC_NONE) {
		DC_ERR("the %s location is already set (one per Sync Event)", publisher ? "publisher" : "subscriber");
		return DOCA_ERROR_BAD_STATE;
	}
	dc_dev_get(dev);
	*slot = loc;
	*dev_slot = dev;
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_publisher_add_location_cpu(struct doca_sync_event *event, struct doca_dev *dev)
{
	if (event == NULL || dev == NULL) {
		DC_ERR("event and dev must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return add_location(event, true, DSE_LOC_CPU, dev);
}

doca_error_t doca_sync_event_subscriber_add_location_cpu(struct doca_sync_event *event, struct doca_dev *dev)
{
	if (event == NULL || dev == NULL) {
		DC_ERR("event and dev must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return add_location(event, false, DSE_LOC_CPU, dev);
}

doca_error_t doca_sync_event_publisher_add_location_dpu(struct doca_sync_event *event)
{
	if (event == NULL) {
		DC_ERR("event must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return add_location(event, true, DSE_LOC_DPU, NULL);
}

doca_error_t doca_sync_event_subscriber_add_location_dpu(struct doca_sync_event *event)
{
	if (event == NULL) {
		DC_ERR("event must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return add_location(event, false, DSE_LOC_DPU, NULL);
}

static doca_error_t unsupported_location(const void *event, const void *unit, const char *what)
{
	if (event == NULL || unit == NULL) {
		DC_ERR("event and %s must not be NULL", what);
		return DOCA_ERROR_INVALID_VALUE;
	}
	DC_ERR("Sync Event %s locations are not supported", what);
	return DOCA_ERROR_NOT_SUPPORTED;
}

/*
 * A DPA location: the DPA context is above this library, so it is taken as
 * it is (not looked into); its threads run in this process, so the counter
 * is process-local storage as for a CPU location.
 */
static doca_error_t dpa_location(struct doca_sync_event *event, const struct doca_dpa *dpa, bool publisher)
{
	if (event == NULL || dpa == NULL) {
		DC_ERR("event and DPA must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return add_location(event, publisher, DSE_LOC_DPA, NULL);
}

doca_error_t doca_sync_event_publisher_add_location_dpa(struct doca_sync_event *event, struct doca_dpa *dpa)
{
	return dpa_location(event, dpa, true);
}

doca_error_t doca_sync_event_publisher_add_location_gpu(struct doca_sync_event *event, struct doca_gpu *gpu)
{
	return unsupported_location(event, gpu, "GPU");
}

doca_error_t doca_sync_event_subscriber_add_location_dpa(struct doca_sync_event *event, struct doca_dpa *dpa)
{
	return dpa_location(event, dpa, false);
}

doca_error_t doca_sync_event_subscriber_add_location_gpu(struct doca_sync_event *event, struct doca_gpu *gpu)
{
	return unsupported_location(event, gpu, "GPU");
}

doca_error_t doca_sync_event_set_addr(struct doca_sync_event *event, uint64_t *addr)
{
	doca_error_t ret;

	if (event == NULL || addr == NULL) {
		DC_ERR("event and addr must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	ret = config_check(event);
	if (ret != DOCA_SUCCESS)
		return ret;
	/* Atomic 64-bit access needs natural alignment. */
	if (((uintptr_t)addr & (sizeof(uint64_t) - 1)) != 0) {
		DC_ERR("addr %p is not 8-byte aligned", (void *)addr);
		return DOCA_ERROR_INVALID_VALUE;
	}
	event->user_addr = addr;
	return DOCA_SUCCESS;
}

/* ---- synchronous mode ---- */

doca_error_t doca_sync_event_start(struct doca_sync_event *event)
{
	doca_error_t ret;

	if (event == NULL) {
		DC_ERR("event must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (event->state != DSE_CONFIG) {
		DC_ERR("Sync Event already started (or converted to a context, or stopped)");
		return DOCA_ERROR_BAD_STATE;
	}
	if (!dse_configured(event)) {
		DC_ERR("Sync Event needs a publisher and a subscriber location before start");
		return DOCA_ERROR_BAD_STATE;
	}
	ret = dse_storage_setup(event);
	if (ret != DOCA_SUCCESS)
		return ret;
	event->state = DSE_SYNC_STARTED;
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_stop(struct doca_sync_event *event)
{
	if (event == NULL) {
		DC_ERR("event must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (event->state != DSE_SYNC_STARTED) {
		DC_ERR("Sync Event was not started with doca_sync_event_start");
		return DOCA_ERROR_BAD_STATE;
	}
	event->state = DSE_STOPPED;
	return DOCA_SUCCESS;
}
