/*
 * dpa_unsupported — what DOCA DPA has that softdpu does not run yet:
 * workers and endpoints (RDMA from device code). Each
 * returns DOCA_ERROR_NOT_SUPPORTED with a log line, so programs link.
 */
#include "dpa_int.h"

static doca_error_t dpa_unsupported(const char *what)
{
	BASE_ERR("DOCA DPA %s is not supported", what);
	return DOCA_ERROR_NOT_SUPPORTED;
}

doca_error_t doca_dpa_worker_create(struct doca_dpa *dpa, struct doca_dpa_worker **worker, unsigned int flags)
{
	(void)dpa, (void)worker, (void)flags;
	return dpa_unsupported("worker");
}

doca_error_t doca_dpa_worker_destroy(struct doca_dpa_worker *worker)
{
	(void)worker;
	return dpa_unsupported("worker");
}

doca_error_t doca_dpa_ep_create(struct doca_dpa_worker *worker, unsigned int access_flags, struct doca_dpa_ep **ep)
{
	(void)worker, (void)access_flags, (void)ep;
	return dpa_unsupported("endpoint");
}

doca_error_t doca_dpa_ep_destroy(struct doca_dpa_ep *ep)
{
	(void)ep;
	return dpa_unsupported("endpoint");
}

doca_error_t doca_dpa_ep_addr_get(struct doca_dpa_ep *ep, struct doca_dpa_ep_addr **addr, size_t *addr_length)
{
	(void)ep, (void)addr, (void)addr_length;
	return dpa_unsupported("endpoint");
}

doca_error_t doca_dpa_ep_addr_free(struct doca_dpa_ep_addr *addr)
{
	(void)addr;
	return dpa_unsupported("endpoint");
}

doca_error_t doca_dpa_ep_connect(struct doca_dpa_ep *ep, struct doca_dpa_ep_addr *addr)
{
	(void)ep, (void)addr;
	return dpa_unsupported("endpoint");
}

doca_error_t doca_dpa_ep_dev_export(struct doca_dpa_ep *ep, doca_dpa_dev_ep_t *handle)
{
	(void)ep, (void)handle;
	return dpa_unsupported("endpoint");
}
