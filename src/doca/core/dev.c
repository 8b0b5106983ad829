/*
 * dev — DOCA local devices: the device list, open and close, and what the rest
 * of DOCA Core needs from a device (dc_dev.h).
 *
 * A devinfo is a snapshot copy of one topology function, so it never points
 * into the topology. An open device embeds its own devinfo, which therefore
 * outlives the list it was opened from. Open devices are kept in a registry
 * keyed by VUID: opening an open function returns the same handle.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dc_dev.h"
#include "dc_dev_priv.h"
#include "dc_log.h"
#include "hw_topology.h"

/* The device capability behind each DOCA capability. */
static const uint32_t dc_cap_hw[] = {
	[DC_CAP_DMA] = HW_CAP_DMA,
	[DC_CAP_MMAP_EXPORT_DPU] = HW_CAP_MMAP_EXPORT_DPU,
	[DC_CAP_MMAP_FROM_EXPORT_DPU] = HW_CAP_MMAP_FROM_EXPORT_DPU,
	[DC_CAP_MMAP_EXPORT_RDMA] = HW_CAP_MMAP_EXPORT_RDMA,
	[DC_CAP_MMAP_FROM_EXPORT_RDMA] = HW_CAP_MMAP_FROM_EXPORT_RDMA,
	[DC_CAP_HOTPLUG_MANAGER] = HW_CAP_HOTPLUG_MANAGER,
	[DC_CAP_REP_FILTER_ALL] = HW_CAP_REP_FILTER_ALL,
	[DC_CAP_REP_FILTER_NET] = HW_CAP_REP_FILTER_NET,
	[DC_CAP_REP_FILTER_EMULATED] = HW_CAP_REP_FILTER_EMULATED,
	[DC_CAP_SHA] = HW_CAP_SHA,
};
_Static_assert(sizeof(dc_cap_hw) / sizeof(dc_cap_hw[0]) == DC_CAP_SHA + 1, "every enum dc_cap needs its hw_cap");

pthread_mutex_t dc_dev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct doca_dev *open_devs; /* under dc_dev_lock */

struct devinfo_list {
	struct doca_devinfo *items;
	struct doca_devinfo *ptrs[]; /* handed to the user, NULL-terminated */
};

/* ---- device list ---- */

static struct devinfo_list *devinfo_list_of(struct doca_devinfo **ptrs)
{
	return (struct devinfo_list *)((char *)ptrs - offsetof(struct devinfo_list, ptrs));
}

static uint32_t count_local(const struct hw_topology *topo, enum hw_side side)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < hw_topo_count(topo); i++) {
		const struct hw_function *f = hw_topo_func(topo, (int)i);

		n += !f->is_rep && f->side == side;
	}
	return n;
}

static struct devinfo_list *devinfo_list_alloc(uint32_t n)
{
	struct devinfo_list *l = calloc(1, sizeof(*l) + (n + 1) * sizeof(l->ptrs[0]));

	if (l == NULL)
		return NULL;
	l->items = calloc(n > 0 ? n : 1, sizeof(*l->items));
	if (l->items == NULL) {
		free(l);
		return NULL;
	}
	return l;
}

doca_error_t doca_devinfo_list_create(struct doca_devinfo ***dev_list, uint32_t *nb_devs)
{
	const struct hw_topology *topo;
	struct devinfo_list *l;
	enum hw_side side;
	uint32_t n = 0;

	if (dev_list == NULL || nb_devs == NULL) {
		DC_ERR("dev_list and nb_devs must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	topo = hw_topo_get();
	if (topo == NULL) {
		/* The emulated card's counterpart of an RDMA device list that cannot be read. */
		DC_ERR("no device topology (the topology file was refused)");
		return DOCA_ERROR_NOT_FOUND;
	}
	side = hw_topo_side();
	l = devinfo_list_alloc(count_local(topo, side));
	if (l == NULL) {
		DC_ERR("out of memory for the device list");
		return DOCA_ERROR_NO_MEMORY;
	}
	for (uint32_t i = 0; i < hw_topo_count(topo); i++) {
		const struct hw_function *f = hw_topo_func(topo, (int)i);

		if (f->is_rep || f->side != side)
			continue;
		l->items[n].fn = *f;
		l->ptrs[n] = &l->items[n];
		n++;
	}
	*dev_list = l->ptrs;
	*nb_devs = n;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_list_destroy(struct doca_devinfo **dev_list)
{
	struct devinfo_list *l;

	if (dev_list == NULL) {
		DC_ERR("dev_list must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	l = devinfo_list_of(dev_list);
	free(l->items);
	free(l);
	return DOCA_SUCCESS;
}

/* ---- open and close ---- */

struct doca_dev *dc_dev_find_locked(const char *vuid)
{
	for (struct doca_dev *d = open_devs; d != NULL; d = d->next)
		if (!d->from_pd && strcmp(d->info.fn.vuid, vuid) == 0)
			return d;
	return NULL;
}

struct doca_dev *dc_dev_first_locked(void)
{
	return open_devs;
}

void dc_dev_link_locked(struct doca_dev *dev)
{
	dev->next = open_devs;
	open_devs = dev;
}

bool dc_dev_is_open_locked(const struct doca_dev *dev)
{
	for (const struct doca_dev *d = open_devs; d != NULL; d = d->next)
		if (d == dev)
			return true;
	return false;
}

static doca_error_t dev_create_locked(const struct doca_devinfo *devinfo, struct doca_dev **out)
{
	struct doca_dev *d = calloc(1, sizeof(*d));

	if (d == NULL)
		goto err_nomem;
	d->info = *devinfo;
	d->pd = hw_pd_alloc(devinfo->fn.id);
	if (d->pd == NULL)
		goto err_free;
	d->opens = 1;
	dc_dev_link_locked(d);
	*out = d;
	return DOCA_SUCCESS;

err_free:
	free(d);
err_nomem:
	DC_ERR("out of memory opening %s", devinfo->fn.name);
	return DOCA_ERROR_NO_MEMORY;
}

doca_error_t doca_dev_open(struct doca_devinfo *devinfo, struct doca_dev **dev)
{
	struct doca_dev *d;
	doca_error_t ret = DOCA_SUCCESS;

	if (devinfo == NULL || dev == NULL) {
		DC_ERR("devinfo and dev must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&dc_dev_lock);
	d = dc_dev_find_locked(devinfo->fn.vuid);
	if (d != NULL) {
		d->opens++;
		*dev = d;
	} else {
		ret = dev_create_locked(devinfo, dev);
	}
	pthread_mutex_unlock(&dc_dev_lock);
	return ret;
}

static void dev_unlink_locked(struct doca_dev *dev)
{
	struct doca_dev **pp = &open_devs;

	while (*pp != dev)
		pp = &(*pp)->next;
	*pp = dev->next;
}

doca_error_t doca_dev_close(struct doca_dev *dev)
{
	if (dev == NULL) {
		DC_ERR("dev must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	pthread_mutex_lock(&dc_dev_lock);
	if (!dc_dev_is_open_locked(dev)) {
		pthread_mutex_unlock(&dc_dev_lock);
		DC_ERR("device %p is not open", (void *)dev);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (dev->opens == 1 && dev->users > 0) {
		uint32_t users = dev->users;

		pthread_mutex_unlock(&dc_dev_lock);
		DC_ERR("device %s is still used by %u object(s)", dev->info.fn.name, users);
		return DOCA_ERROR_IN_USE;
	}
	if (dev->opens == 1 && !dev->from_pd && dev->ibpd != NULL && hw_pd_unwrap(dev->ibpd) != 0) {
		pthread_mutex_unlock(&dc_dev_lock);
		DC_ERR("device %s: the ibv_pd doca_dev_get_pd gave still has MRs, QPs or SRQs", dev->info.fn.name);
		return DOCA_ERROR_IN_USE;
	}
	if (--dev->opens > 0) {
		pthread_mutex_unlock(&dc_dev_lock);
		return DOCA_SUCCESS;
	}
	dev_unlink_locked(dev);
	pthread_mutex_unlock(&dc_dev_lock);
	hw_pd_free(dev->pd);
	free(dev);
	return DOCA_SUCCESS;
}

struct doca_devinfo *doca_dev_as_devinfo(const struct doca_dev *dev)
{
	if (dev == NULL) {
		DC_ERR("dev must not be NULL");
		return NULL;
	}
	return (struct doca_devinfo *)&dev->info;
}

/* ---- internal contract (dc_dev.h) ---- */

bool dc_devinfo_cap(const struct doca_devinfo *info, enum dc_cap cap)
{
	if (info == NULL || (unsigned int)cap > DC_CAP_SHA)
		return false;
	return (info->fn.caps & dc_cap_hw[cap]) != 0;
}

bool dc_dev_cap(const struct doca_dev *dev, enum dc_cap cap)
{
	return dev != NULL && dc_devinfo_cap(&dev->info, cap);
}

struct hw_pd *dc_dev_pd(const struct doca_dev *dev)
{
	return dev != NULL ? dev->pd : NULL;
}

const struct hw_function *dc_dev_fn(const struct doca_dev *dev)
{
	return &dev->info.fn;
}

const struct hw_function *dc_devinfo_fn(const struct doca_devinfo *info)
{
	return &info->fn;
}

bool dc_dev_on_dpu(const struct doca_dev *dev)
{
	return dev != NULL && dev->info.fn.side == HW_SIDE_DPU;
}

void dc_dev_get(struct doca_dev *dev)
{
	if (dev == NULL)
		return;
	pthread_mutex_lock(&dc_dev_lock);
	dev->users++;
	pthread_mutex_unlock(&dc_dev_lock);
}

void dc_dev_put(struct doca_dev *dev)
{
	bool underflow;

	if (dev == NULL)
		return;
	pthread_mutex_lock(&dc_dev_lock);
	underflow = dev->users == 0;
	if (!underflow)
		dev->users--;
	pthread_mutex_unlock(&dc_dev_lock);
	if (underflow)
		DC_ERR("device %s: reference released more often than taken", dev->info.fn.name);
}
