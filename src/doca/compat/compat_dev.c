/*
 * DOCA 1.x devices: property getters and remote devices over the 2.x API.
 *
 * A 1.x remote device is a host function seen from the DPU; underneath it is
 * the representor of that function (doca_devinfo_rep / doca_dev_rep).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dc_log.h"
#include "doca_compat_1x.h"
#include "doca_dev.h"

struct doca_devinfo_remote {
	const struct doca_devinfo_rep *rep;
};

struct doca_dev_remote {
	struct doca_dev_rep *rep;
	struct doca_devinfo_remote info; /* outlives the list it was opened from */
};

/* The list the program iterates is ptrs; the header lets destroy find the rest. */
struct remote_list {
	struct doca_devinfo_rep **reps;
	struct doca_devinfo_remote *items;
	struct doca_devinfo_remote *ptrs[]; /* NULL-terminated */
};

doca_error_t doca_devinfo_list_create_1x(struct doca_devinfo ***devinfo_list)
{
	uint32_t n;

	/* the 2.x list is already NULL-terminated, as 1.x programs expect */
	return doca_devinfo_list_create(devinfo_list, &n);
}

doca_error_t doca_dev_as_devinfo_1x(struct doca_dev *dev, struct doca_devinfo **devinfo)
{
	if (dev == NULL || devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*devinfo = doca_dev_as_devinfo(dev);
	return DOCA_SUCCESS;
}

/* Strings may be read into a larger buffer; fixed-size values need their exact size. */
static doca_error_t size_check(uint32_t size, uint32_t want, int is_string)
{
	if (is_string ? size < want : size != want) {
		DC_ERR("property size %u, expected %s%u", size, is_string ? "at least " : "", want);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

static doca_error_t get_pci_bdf(const struct doca_devinfo *devinfo, uint8_t *value, uint32_t size)
{
	struct doca_pci_bdf bdf;
	doca_error_t ret = size_check(size, sizeof(bdf), 0);

	if (ret == DOCA_SUCCESS)
		ret = doca_devinfo_get_pci_addr(devinfo, &bdf);
	if (ret == DOCA_SUCCESS)
		memcpy(value, &bdf, sizeof(bdf));
	return ret;
}

doca_error_t doca_devinfo_property_get(const struct doca_devinfo *devinfo, enum doca_devinfo_property property,
				       uint8_t *value, uint32_t size)
{
	doca_error_t ret;

	if (devinfo == NULL || value == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	switch (property) {
	case DOCA_DEVINFO_PROPERTY_VUID:
		ret = size_check(size, DOCA_DEVINFO_VUID_SIZE, 1);
		return ret != DOCA_SUCCESS ? ret : doca_devinfo_get_vuid(devinfo, (char *)value, size);
	case DOCA_DEVINFO_PROPERTY_PCI_ADDR:
		return get_pci_bdf(devinfo, value, size);
	case DOCA_DEVINFO_PROPERTY_IPV4_ADDR:
		ret = size_check(size, DOCA_DEVINFO_IPV4_ADDR_SIZE, 0);
		return ret != DOCA_SUCCESS ? ret : doca_devinfo_get_ipv4_addr(devinfo, value, size);
	case DOCA_DEVINFO_PROPERTY_IPV6_ADDR:
		ret = size_check(size, DOCA_DEVINFO_IPV6_ADDR_SIZE, 0);
		return ret != DOCA_SUCCESS ? ret : doca_devinfo_get_ipv6_addr(devinfo, value, size);
	case DOCA_DEVINFO_PROPERTY_IFACE_NAME:
		ret = size_check(size, DOCA_DEVINFO_IFACE_NAME_SIZE, 1);
		return ret != DOCA_SUCCESS ? ret : doca_devinfo_get_iface_name(devinfo, (char *)value, size);
	case DOCA_DEVINFO_PROPERTY_IBDEV_NAME:
		ret = size_check(size, DOCA_DEVINFO_IBDEV_NAME_SIZE, 1);
		return ret != DOCA_SUCCESS ? ret : doca_devinfo_get_ibdev_name(devinfo, (char *)value, size);
	}
	DC_ERR("unknown device property %d", (int)property);
	return DOCA_ERROR_INVALID_VALUE;
}

/* ---- remote devices ---- */

/* Host functions only: the 1.x remote device is a network function the host manages, not an SF. */
static uint32_t keep_host_functions(struct doca_devinfo_rep **reps, uint32_t n, struct remote_list *l)
{
	uint32_t kept = 0;

	for (uint32_t i = 0; i < n; i++) {
		enum doca_pci_func_type t;

		if (doca_devinfo_rep_get_pci_func_type(reps[i], &t) != DOCA_SUCCESS || t == DOCA_PCI_FUNC_SF)
			continue;
		l->items[kept].rep = reps[i];
		l->ptrs[kept] = &l->items[kept];
		kept++;
	}
	l->ptrs[kept] = NULL;
	return kept;
}

doca_error_t doca_devinfo_remote_list_create(struct doca_dev *dev, struct doca_devinfo_remote ***devinfo_remote_list)
{
	struct doca_devinfo_rep **reps;
	struct remote_list *l;
	doca_error_t ret;
	uint32_t n;

	if (dev == NULL || devinfo_remote_list == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = doca_devinfo_rep_list_create(dev, DOCA_DEV_REP_FILTER_NET, &reps, &n);
	if (ret != DOCA_SUCCESS)
		return ret;
	l = calloc(1, sizeof(*l) + (n + 1) * sizeof(l->ptrs[0]));
	if (l == NULL)
		goto err_reps;
	l->items = calloc(n + 1, sizeof(*l->items));
	if (l->items == NULL)
		goto err_list;
	l->reps = reps;
	keep_host_functions(reps, n, l);
	*devinfo_remote_list = l->ptrs;
	return DOCA_SUCCESS;

err_list:
	free(l);
err_reps:
	doca_devinfo_rep_list_destroy(reps);
	return DOCA_ERROR_NO_MEMORY;
}

doca_error_t doca_devinfo_remote_list_destroy(struct doca_devinfo_remote **devinfo_remote_list)
{
	struct remote_list *l;

	if (devinfo_remote_list == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	l = (struct remote_list *)((char *)devinfo_remote_list - offsetof(struct remote_list, ptrs));
	doca_devinfo_rep_list_destroy(l->reps);
	free(l->items);
	free(l);
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_remote_property_get(const struct doca_devinfo_remote *devinfo_remote,
					      enum doca_devinfo_remote_property property, uint8_t *value,
					      uint32_t size)
{
	struct doca_pci_bdf bdf;
	doca_error_t ret;

	if (devinfo_remote == NULL || value == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	switch (property) {
	case DOCA_DEVINFO_REMOTE_PROPERTY_VUID:
		ret = size_check(size, DOCA_DEVINFO_REP_VUID_SIZE, 1);
		return ret != DOCA_SUCCESS ? ret : doca_devinfo_rep_get_vuid(devinfo_remote->rep, (char *)value, size);
	case DOCA_DEVINFO_REMOTE_PROPERTY_PCI_ADDR:
		ret = size_check(size, sizeof(bdf), 0);
		if (ret == DOCA_SUCCESS)
			ret = doca_devinfo_rep_get_pci_addr(devinfo_remote->rep, &bdf);
		if (ret == DOCA_SUCCESS)
			memcpy(value, &bdf, sizeof(bdf));
		return ret;
	}
	DC_ERR("unknown remote device property %d", (int)property);
	return DOCA_ERROR_INVALID_VALUE;
}

doca_error_t doca_dev_remote_open(struct doca_devinfo_remote *devinfo_remote, struct doca_dev_remote **dev_remote)
{
	struct doca_dev_remote *d;
	doca_error_t ret;

	if (devinfo_remote == NULL || dev_remote == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return DOCA_ERROR_NO_MEMORY;
	ret = doca_dev_rep_open((struct doca_devinfo_rep *)devinfo_remote->rep, &d->rep);
	if (ret != DOCA_SUCCESS) {
		free(d);
		return ret;
	}
	d->info.rep = doca_dev_rep_as_devinfo(d->rep);
	*dev_remote = d;
	return DOCA_SUCCESS;
}

doca_error_t doca_dev_remote_close(struct doca_dev_remote *dev_remote)
{
	doca_error_t ret;

	if (dev_remote == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = doca_dev_rep_close(dev_remote->rep);
	if (ret != DOCA_SUCCESS)
		return ret;
	free(dev_remote);
	return DOCA_SUCCESS;
}

doca_error_t doca_dev_remote_as_devinfo(struct doca_dev_remote *dev_remote,
					struct doca_devinfo_remote **devinfo_remote)
{
	if (dev_remote == NULL || devinfo_remote == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*devinfo_remote = &dev_remote->info;
	return DOCA_SUCCESS;
}
