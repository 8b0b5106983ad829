/*
 * dpad_ep — device code's endpoint calls: RDMA WRITEs posted through the
 * endpoint's record (dpa_abi.h) by a host function, and waited for. A
 * failed operation, a local buffer outside registered memory or an unknown
 * endpoint is a fatal error of the context. The signalling puts follow the
 * data with a WRITE or FETCH_ADD of a remote Sync Event's counter
 * (doca_sync_event_export_remote's handle, se_dpa_handle.h).
 */
#include <libflexio-dev/flexio_dev_err.h>

#include "doca_dpa_dev_sync_event.h"
#include "dpa_abi.h"
#include "se_dpa_handle.h"
#include "dpad_int.h"

static void dpad_fatal(const char *name, const char *why, enum dpad_err code) __attribute__((noreturn));
static void dpad_fatal(const char *name, const char *why, enum dpad_err code)
{
	doca_dpa_dev_printf("doca_dpa_dev: %s: %s\n", name, why);
	flexio_dev_error(code);
}

static const struct dpa_dev_ep *dpad_ep(doca_dpa_dev_ep_t ep, const char *name)
{
	const struct dpa_dev_ep *e = (const struct dpa_dev_ep *)(uintptr_t)ep;

	if (e == NULL || e->magic != DPA_EP_MAGIC)
		dpad_fatal(name, "not an endpoint", DPAD_ERR_EP);
	return e;
}

void doca_dpa_dev_put_nb(doca_dpa_dev_ep_t ep, uint64_t local_addr, size_t length, doca_dpa_dev_mem_t local_mem,
			 uint64_t raddr, uint32_t rkey)
{
	const struct dpa_dev_ep *e = dpad_ep(ep, __func__);
	const struct dpa_dev_mem *m = (const struct dpa_dev_mem *)(uintptr_t)local_mem;

	if (m == NULL || m->magic != DPA_MEM_MAGIC)
		dpad_fatal(__func__, "the local buffer is not registered memory", DPAD_ERR_MEM);
	dpad_mem_check(local_mem, local_addr, length);
	if (e->put(e->ep, local_addr, length, m->lkey, raddr, rkey) != 0)
		dpad_fatal(__func__, "the write failed", DPAD_ERR_EP);
}

void doca_dpa_dev_ep_synchronize(doca_dpa_dev_ep_t ep)
{
	const struct dpa_dev_ep *e = dpad_ep(ep, __func__);

	if (e->sync(e->ep) != 0)
		dpad_fatal(__func__, "an operation of the endpoint failed", DPAD_ERR_EP);
}

/* A put, then the remote Sync Event's signal on the same QP (so after the data). */
static void dpad_put_signal(const char *name, doca_dpa_dev_ep_t ep, uint64_t local_addr, doca_dpa_dev_mem_t local_mem,
			    size_t length, uint64_t raddr, uint32_t rkey, doca_dpa_dev_sync_event_remote_t event,
			    uint64_t value, bool add)
{
	const struct dpa_dev_ep *e = dpad_ep(ep, name);

	if (event.data[1] >> 32 != SE_REMOTE_MAGIC)
		dpad_fatal(name, "not a remote Sync Event (doca_sync_event_export_remote)", DPAD_ERR_EP);
	doca_dpa_dev_put_nb(ep, local_addr, length, local_mem, raddr, rkey);
	if (e->signal(e->ep, event.data[0], (uint32_t)event.data[1], value, add) != 0)
		dpad_fatal(name, "the signal failed", DPAD_ERR_EP);
}

void doca_dpa_dev_put_signal_add_nb(doca_dpa_dev_ep_t ep, uint64_t local_addr, doca_dpa_dev_mem_t local_mem,
				    size_t length, uint64_t raddr, uint32_t rkey, doca_dpa_dev_sync_event_remote_t event,
				    uint64_t comp_count)
{
	dpad_put_signal(__func__, ep, local_addr, local_mem, length, raddr, rkey, event, comp_count, true);
}

void doca_dpa_dev_put_signal_set_nb(doca_dpa_dev_ep_t ep, uint64_t local_addr, doca_dpa_dev_mem_t local_mem,
				    size_t length, uint64_t raddr, uint32_t rkey, doca_dpa_dev_sync_event_remote_t event,
				    uint64_t comp_count)
{
	dpad_put_signal(__func__, ep, local_addr, local_mem, length, raddr, rkey, event, comp_count, false);
}
