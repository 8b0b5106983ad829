/*
 * se_export — sharing a Sync Event with the DPU side, which is another
 * process: the exporter's counter lives in a sealed memfd page (fab_shm); the
 * descriptor (se_blob) names it and carries a capability key the page's
 * header must match. Destroying the exporter revokes the page; a killed
 * exporter's page disappears from /proc with it. See docs/sync_event.md.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dc_dev.h"
#include "dc_log.h"
#include "hw_mem.h"
#include "se_blob.h"
#include "se_priv.h"

static const uint8_t dse_seg_magic[8] = { 'S', 'D', 'P', 'U', 'S', 'E', 'G', '1' };

static bool key_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	uint8_t diff = 0;

	/* Constant time: the comparison must not tell how much of a guess was right. */
	for (size_t i = 0; i < n; i++)
		diff |= (uint8_t)(a[i] ^ b[i]);
	return diff == 0;
}

doca_error_t dse_seg_create(struct doca_sync_event *ev)
{
	struct dse_seg *seg;

	if (fab_shm_create(&ev->shm, DSE_SEG_TAG, DSE_SEG_LEN) != FAB_SHM_OK) {
		DC_ERR("cannot create the shared page of the Sync Event");
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	seg = ev->shm.base;
	if (fab_random_bytes(seg->cap_key, sizeof(seg->cap_key)) != 0) {
		fab_shm_close(&ev->shm);
		DC_ERR("no random bytes for the Sync Event capability key");
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	memcpy(seg->magic, dse_seg_magic, sizeof(seg->magic));
	seg->version = DSE_SEG_VERSION;
	seg->exporter_pid = (uint32_t)getpid();
	atomic_init(&seg->revoked, 0);
	atomic_init(&seg->value, 0);
	ev->seg = seg;
	ev->value = &seg->value;
	ev->bell = &seg->bell;
	return DOCA_SUCCESS;
}

void dse_export_release(struct doca_sync_event *ev)
{
	if (ev->remote_key != 0) {
		(void)hw_mkey_dereg(ev->remote_key); /* a fence: no peer's write lands after it */
		ev->remote_key = 0;
	}
	if (ev->seg != NULL && !ev->imported) {
		atomic_store_explicit(&ev->seg->revoked, 1, memory_order_release);
		hw_bell_ring(&ev->seg->bell); /* importers' waits fail now instead of sleeping on */
	}
	fab_shm_close(&ev->shm); /* the exporter's close frees the memfd once importers unmap */
	ev->seg = NULL;
	ev->value = NULL;
	ev->bell = NULL;
	free(ev->blob);
	ev->blob = NULL;
}

/* ---- exporter ---- */

static doca_error_t export_check(const struct doca_sync_event *ev, const struct doca_dev *dev)
{
	if (ev->imported) {
		DC_ERR("only the exporting process can export a Sync Event");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (dc_dev_on_dpu(dev) || !dc_dev_cap(dev, DC_CAP_MMAP_EXPORT_DPU)) {
		DC_ERR("device cannot export a Sync Event to the DPU");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (ev->user_addr != NULL) {
		DC_ERR("a Sync Event backed by user memory (doca_sync_event_set_addr) cannot be shared with another process");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (!dse_has_dpu_loc(ev)) {
		DC_ERR("Sync Event has no DPU publisher or subscriber location");
		return DOCA_ERROR_BAD_STATE;
	}
	if (!dse_started(ev)) {
		DC_ERR("Sync Event must be started before export");
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t make_blob(struct doca_sync_event *ev)
{
	struct dse_blob b = { .pid = ev->shm.pid, .fd = ev->shm.owner_fd, .seg_len = (uint32_t)ev->shm.len };

	ev->blob = malloc(DSE_BLOB_LEN);
	if (ev->blob == NULL)
		return DOCA_ERROR_NO_MEMORY;
	memcpy(b.name_key, ev->shm.key, sizeof(b.name_key));
	memcpy(b.cap_key, ev->seg->cap_key, sizeof(b.cap_key));
	fab_host_id(b.host_id);
	dse_blob_encode(&b, ev->blob);
	ev->blob_len = DSE_BLOB_LEN;
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_export_to_dpu(struct doca_sync_event *event, struct doca_dev *dev, const uint8_t **data,
					   size_t *sz)
{
	doca_error_t ret;

	if (event == NULL || dev == NULL || data == NULL || sz == NULL) {
		DC_ERR("event, dev, data and sz must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	ret = export_check(event, dev);
	if (ret != DOCA_SUCCESS)
		return ret;
	if (event->blob == NULL) {
		ret = make_blob(event);
		if (ret != DOCA_SUCCESS)
			return ret;
	}
	*data = event->blob;
	*sz = event->blob_len;
	return DOCA_SUCCESS;
}

/* ---- importer ---- */

static doca_error_t attach(struct doca_sync_event *ev, const struct dse_blob *b)
{
	enum fab_shm_status st = fab_shm_attach(&ev->shm, b->pid, b->fd, b->name_key, DSE_SEG_TAG, b->seg_len);
	struct dse_seg *seg;

	if (st == FAB_SHM_OS) {
		DC_ERR("cannot map the exported Sync Event");
		return DOCA_ERROR_OPERATING_SYSTEM;
	}
	if (st != FAB_SHM_OK) {
		DC_ERR("Sync Event export is stale (exporter destroyed the event or exited)");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	seg = ev->shm.base;
	if (memcmp(seg->magic, dse_seg_magic, sizeof(seg->magic)) != 0 || seg->version != DSE_SEG_VERSION ||
	    !key_equal(seg->cap_key, b->cap_key, sizeof(b->cap_key)) ||
	    atomic_load_explicit(&seg->revoked, memory_order_acquire) != 0) {
		fab_shm_close(&ev->shm);
		DC_ERR("Sync Event export refused: capability does not match or export revoked");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	ev->seg = seg;
	ev->value = &seg->value;
	ev->bell = &seg->bell;
	return DOCA_SUCCESS;
}

static doca_error_t parse_blob(const uint8_t *data, size_t sz, struct dse_blob *b)
{
	uint8_t host[FAB_HOST_ID_LEN];

	if (!dse_blob_decode(data, sz, b) || b->seg_len != DSE_SEG_LEN) {
		DC_ERR("malformed Sync Event export (%zu bytes)", sz);
		return DOCA_ERROR_INVALID_VALUE;
	}
	fab_host_id(host);
	if (memcmp(host, b->host_id, sizeof(host)) != 0) {
		DC_ERR("Sync Event exported on another machine: not supported");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_create_from_export(struct doca_dev *dev, const uint8_t *data, size_t sz,
						struct doca_sync_event **event)
{
	struct doca_sync_event *ev;
	struct dse_blob b;
	doca_error_t ret;

	if (dev == NULL || data == NULL || event == NULL) {
		DC_ERR("dev, data and event must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!dc_dev_on_dpu(dev) || !dc_dev_cap(dev, DC_CAP_MMAP_FROM_EXPORT_DPU)) {
		DC_ERR("device cannot create a Sync Event from an export (DPU side only)");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	ret = parse_blob(data, sz, &b);
	if (ret != DOCA_SUCCESS)
		return ret;
	ret = dse_alloc(&ev);
	if (ret != DOCA_SUCCESS)
		return ret;
	ev->imported = true;
	ret = attach(ev, &b);
	if (ret != DOCA_SUCCESS)
		goto err_free;
	dc_dev_get(dev);
	ev->import_dev = dev;
	*event = ev;
	return DOCA_SUCCESS;

err_free:
	dse_free(ev);
	return ret;
}

/* ---- capabilities ---- */

doca_error_t doca_sync_event_get_create_from_export_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return dc_devinfo_cap(devinfo, DC_CAP_MMAP_FROM_EXPORT_DPU) ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_sync_event_get_export_to_dpu_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return dc_devinfo_cap(devinfo, DC_CAP_MMAP_EXPORT_DPU) ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}

/* Every device has a DPA here: DPA contexts run on the FlexIO runtime of the host process. */
doca_error_t doca_sync_event_get_export_to_dpa_supported(const struct doca_devinfo *devinfo)
{
	return devinfo == NULL ? DOCA_ERROR_INVALID_VALUE : DOCA_SUCCESS;
}

doca_error_t doca_sync_event_get_export_to_gpu_supported(const struct doca_devinfo *devinfo)
{
	return devinfo == NULL ? DOCA_ERROR_INVALID_VALUE : DOCA_ERROR_NOT_SUPPORTED;
}

/* ---- not supported: GPU and remote-node handles ---- */

static doca_error_t unsupported_export(const void *event, const void *a, const void *b, const char *what)
{
	if (event == NULL || a == NULL || b == NULL) {
		DC_ERR("arguments must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	DC_ERR("Sync Event export to %s is not supported", what);
	return DOCA_ERROR_NOT_SUPPORTED;
}

static void dse_dpa_ring(void *bell)
{
	hw_bell_ring(bell);
}

/*
 * The handle is the address of the event's record for device code: DPA
 * threads run in this process (se_dpa_handle.h). The event must be started
 * (its counter exists) and have a DPA location.
 */
doca_error_t doca_sync_event_export_to_dpa(struct doca_sync_event *event, struct doca_dpa *dpa,
					   doca_dpa_dev_sync_event_t *dpa_dev_se_handle)
{
	if (event == NULL || dpa == NULL || dpa_dev_se_handle == NULL) {
		DC_ERR("arguments must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (event->pub != DSE_LOC_DPA && event->sub != DSE_LOC_DPA) {
		DC_ERR("Sync Event has no DPA publisher or subscriber location");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (!dse_started(event)) {
		DC_ERR("Sync Event is not started");
		return DOCA_ERROR_BAD_STATE;
	}
	/* Filled once: device code may be updating through it while it is exported again. */
	if (event->dpa_h.magic != SE_DPA_HANDLE_MAGIC) {
		event->dpa_h.value = event->value;
		event->dpa_h.bell = event->bell;
		event->dpa_h.ring = dse_dpa_ring;
		atomic_init(&event->dpa_h.busy, 0);
		event->dpa_h.magic = SE_DPA_HANDLE_MAGIC;
	}
	*dpa_dev_se_handle = (doca_dpa_dev_sync_event_t)(uintptr_t)&event->dpa_h;
	return DOCA_SUCCESS;
}

doca_error_t doca_sync_event_export_to_gpu(struct doca_sync_event *event, struct doca_gpu *gpu,
					   doca_gpu_dev_sync_event_t **gpu_dev_se)
{
	return unsupported_export(event, gpu, gpu_dev_se, "a GPU");
}

/*
 * A remote handle names the counter for a peer's RDMA (a DPA endpoint's
 * put_signal writes or adds there after its data): its address and a key of
 * the device's domain with remote write and atomic rights on those 8 bytes
 * alone. The device is the event's CPU location's (the publisher's, else the
 * subscriber's); the key lives until the event is destroyed.
 */
doca_error_t doca_sync_event_export_remote(struct doca_sync_event *event, doca_sync_event_remote_t *handle)
{
	struct doca_dev *dev;
	uint64_t addr;

	if (event == NULL || handle == NULL) {
		DC_ERR("arguments must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (event->imported) {
		DC_ERR("only the creator of a Sync Event can export it to a remote node");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (event->state != DSE_SYNC_STARTED || event->value == NULL) {
		DC_ERR("a Sync Event is exported to a remote node once started (synchronous mode)");
		return DOCA_ERROR_BAD_STATE;
	}
	dev = event->pub_dev != NULL ? event->pub_dev : event->sub_dev;
	if (dev == NULL) {
		DC_ERR("a Sync Event exported to a remote node needs a CPU location on a device");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	addr = (uint64_t)(uintptr_t)event->value;
	if (event->remote_key == 0 &&
	    hw_mkey_reg(dc_dev_pd(dev), (void *)event->value, addr, sizeof(uint64_t),
			HW_ACCESS_LOCAL_WRITE | HW_ACCESS_REMOTE_WRITE | HW_ACCESS_REMOTE_ATOMIC,
			&event->remote_key) != HW_OK) {
		event->remote_key = 0;
		DC_ERR("no memory key for the Sync Event's counter");
		return DOCA_ERROR_NO_MEMORY;
	}
	handle->data[0] = addr;
	handle->data[1] = (uint64_t)SE_REMOTE_MAGIC << 32 | event->remote_key;
	return DOCA_SUCCESS;
}
