/*
 * dev_bridge — DOCA's RDMA bridge (doca_rdma_bridge.h): a DOCA device over a
 * verbs protection domain, and the verbs domain of a DOCA device.
 *
 * libdoca_common and libibverbs run on the one device of libsoftdpu.so.0, so
 * a domain is the same hw_pd on both sides: an ibv_pd carries its number as
 * its handle, and a DOCA device opened from it holds a reference to it. Keys
 * a DOCA mmap registers for such a device are keys of that domain, so verbs
 * work requests take them as lkeys and rkeys, and the reverse.
 */
#include <errno.h>
#include <stdlib.h>

#include <infiniband/verbs.h>

#include "dc_dev.h"
#include "dc_dev_priv.h"
#include "dc_log.h"
#include "doca_rdma_bridge.h"

static const struct hw_function *local_function(uint32_t id)
{
	const struct hw_topology *topo = hw_topo_get();

	for (uint32_t i = 0; topo != NULL && i < hw_topo_count(topo); i++) {
		const struct hw_function *f = hw_topo_func(topo, (int)i);

		if (f->id == id && !f->is_rep)
			return f;
	}
	return NULL;
}

/* A device already stands for this ibv_pd: opened from it, or the one that made it. */
static struct doca_dev *holder_of_locked(const struct ibv_pd *pd)
{
	for (struct doca_dev *d = dc_dev_first_locked(); d != NULL; d = d->next)
		if (d->ibpd == pd)
			return d;
	return NULL;
}

static doca_error_t open_from_pd_locked(struct ibv_pd *pd, struct doca_dev **dev)
{
	const struct hw_function *f;
	struct doca_dev *d;
	struct hw_pd *hw;

	d = holder_of_locked(pd);
	if (d != NULL) {
		DC_ERR("the protection domain is already %s DOCA device %s",
		       d->from_pd ? "bridged to" : "the domain of", d->info.fn.name);
		return DOCA_ERROR_INVALID_VALUE;
	}
	hw = hw_pd_get(pd->handle);
	if (hw == NULL) {
		DC_ERR("ibv_pd %p (handle %u) is not a live protection domain of this process", (void *)pd, pd->handle);
		return DOCA_ERROR_INVALID_VALUE;
	}
	f = local_function(hw_pd_function(hw));
	d = f != NULL ? calloc(1, sizeof(*d)) : NULL;
	if (d == NULL) {
		hw_pd_free(hw);
		if (f == NULL) {
			DC_ERR("the domain's function is not in the topology");
			return DOCA_ERROR_NOT_FOUND;
		}
		DC_ERR("out of memory");
		return DOCA_ERROR_NO_MEMORY;
	}
	d->info.fn = *f;
	d->pd = hw;
	d->from_pd = true;
	d->ibpd = pd;
	d->opens = 1;
	dc_dev_link_locked(d);
	*dev = d;
	return DOCA_SUCCESS;
}

doca_error_t doca_dev_open_from_pd(struct ibv_pd *pd, struct doca_dev **dev)
{
	doca_error_t ret;

	if (pd == NULL || dev == NULL) {
		DC_ERR("pd and dev must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&dc_dev_lock);
	ret = open_from_pd_locked(pd, dev);
	pthread_mutex_unlock(&dc_dev_lock);
	return ret;
}

doca_error_t doca_dev_get_pd(const struct doca_dev *dev, struct ibv_pd **pd)
{
	struct doca_dev *d = (struct doca_dev *)dev; /* the handle is ours; the cached ibv_pd is not the caller's state */
	doca_error_t ret = DOCA_SUCCESS;

	if (dev == NULL || pd == NULL) {
		DC_ERR("dev and pd must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&dc_dev_lock);
	if (!dc_dev_is_open_locked(d)) {
		DC_ERR("device %p is not open", (void *)dev);
		ret = DOCA_ERROR_INVALID_VALUE;
	} else if (d->ibpd == NULL) {
		errno = 0;
		d->ibpd = hw_pd_wrap(d->pd);
		if (d->ibpd == NULL) {
			ret = errno == ENOSYS ? DOCA_ERROR_NOT_SUPPORTED : DOCA_ERROR_BAD_STATE;
			if (ret == DOCA_ERROR_NOT_SUPPORTED)
				DC_ERR("libibverbs.so.1 is not loaded: no ibv_pd can be made");
			else
				DC_ERR("no ibv_pd could be made for device %s", d->info.fn.name);
		}
	}
	if (ret == DOCA_SUCCESS)
		*pd = d->ibpd;
	pthread_mutex_unlock(&dc_dev_lock);
	return ret;
}
