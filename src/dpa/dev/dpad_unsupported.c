/*
 * dpad_unsupported — device calls of endpoints, which softdpu does not run
 * yet (the host cannot make an endpoint: doca_dpa_ep_create returns
 * DOCA_ERROR_NOT_SUPPORTED). A call is a fatal error of the context, with a
 * line on the print channel naming it.
 */
#include <libflexio-dev/flexio_dev_err.h>

#include "dpad_int.h"

static void dpad_unsupported(const char *name) __attribute__((noreturn));
static void dpad_unsupported(const char *name)
{
	doca_dpa_dev_printf("doca_dpa_dev: %s is not supported\n", name);
	flexio_dev_error(DPAD_ERR_UNSUPPORTED);
}

void doca_dpa_dev_put_nb(doca_dpa_dev_ep_t ep, uint64_t local_addr, size_t length, doca_dpa_dev_mem_t local_mem,
			 uint64_t raddr, uint32_t rkey)
{
	(void)ep, (void)local_addr, (void)length, (void)local_mem, (void)raddr, (void)rkey;
	dpad_unsupported(__func__);
}

void doca_dpa_dev_put_signal_add_nb(doca_dpa_dev_ep_t ep, uint64_t local_addr, doca_dpa_dev_mem_t local_mem,
				    size_t length, uint64_t raddr, uint32_t rkey, doca_dpa_dev_sync_event_remote_t event,
				    uint64_t comp_count)
{
	(void)ep, (void)local_addr, (void)local_mem, (void)length, (void)raddr, (void)rkey, (void)event,
		(void)comp_count;
	dpad_unsupported(__func__);
}

void doca_dpa_dev_put_signal_set_nb(doca_dpa_dev_ep_t ep, uint64_t local_addr, doca_dpa_dev_mem_t local_mem,
				    size_t length, uint64_t raddr, uint32_t rkey, doca_dpa_dev_sync_event_remote_t event,
				    uint64_t comp_count)
{
	(void)ep, (void)local_addr, (void)local_mem, (void)length, (void)raddr, (void)rkey, (void)event,
		(void)comp_count;
	dpad_unsupported(__func__);
}

void doca_dpa_dev_ep_synchronize(doca_dpa_dev_ep_t ep)
{
	(void)ep;
	dpad_unsupported(__func__);
}
