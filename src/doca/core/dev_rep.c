/*
 * dev_rep — representors: the list a DPU PF manages, open and close, and the
 * representor properties.
 *
 * An open representor holds a user reference on its open parent PF, so the PF
 * cannot be closed underneath it (DOCA_ERROR_IN_USE); a comm channel endpoint
 * holds one on the representor it serves, for the same reason.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dc_dev.h"
#include "dc_dev_priv.h"
#include "dc_log.h"

#define CHECK_ARGS(cond)                                                                                               \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			DC_ERR("invalid argument: %s", #cond);                                                         \
			return DOCA_ERROR_INVALID_VALUE;                                                               \
		}                                                                                                      \
	} while (0)

_Static_assert(HW_FUNC_PF == (int)DOCA_PCI_FUNC_PF && HW_FUNC_VF == (int)DOCA_PCI_FUNC_VF &&
		       HW_FUNC_SF == (int)DOCA_PCI_FUNC_SF,
	       "hw function types must match enum doca_pci_func_type");

#define REP_FILTER_MASK (DOCA_DEV_REP_FILTER_NET | DOCA_DEV_REP_FILTER_EMULATED)

static struct doca_dev_rep *open_reps; /* under dc_dev_lock */

struct rep_list {
	struct doca_devinfo_rep *items;
	struct doca_devinfo_rep *ptrs[]; /* handed to the user, NULL-terminated */
};

/* ---- list ---- */

static bool rep_matches(const struct hw_function *f, int parent, int filter)
{
	if (!f->is_rep || f->parent != parent)
		return false;
	if (filter == DOCA_DEV_REP_FILTER_ALL)
		return true;
	return ((filter & DOCA_DEV_REP_FILTER_NET) && !f->emulated) ||
	       ((filter & DOCA_DEV_REP_FILTER_EMULATED) && f->emulated);
}

/* The device must be an open DPU PF with the capability of every asked filter. */
static doca_error_t check_rep_source(struct doca_dev *dev, int filter)
{
	bool open;

	pthread_mutex_lock(&dc_dev_lock);
	open = dc_dev_is_open_locked(dev);
	pthread_mutex_unlock(&dc_dev_lock);
	if (!open) {
		DC_ERR("device %p is not open", (void *)dev);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (dev->info.fn.side != HW_SIDE_DPU || dev->info.fn.type != HW_FUNC_PF) {
		DC_ERR("%s is not a DPU PF: it manages no representors", dev->info.fn.name);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if ((filter == DOCA_DEV_REP_FILTER_ALL && !dc_dev_cap(dev, DC_CAP_REP_FILTER_ALL)) ||
	    ((filter & DOCA_DEV_REP_FILTER_NET) && !dc_dev_cap(dev, DC_CAP_REP_FILTER_NET)) ||
	    ((filter & DOCA_DEV_REP_FILTER_EMULATED) && !dc_dev_cap(dev, DC_CAP_REP_FILTER_EMULATED))) {
		DC_ERR("%s cannot list representors with filter %#x", dev->info.fn.name, (unsigned int)filter);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

/* Index of the device's function in the current topology (by VUID), or -1. */
static int topo_index_of(const struct hw_topology *topo, const struct doca_dev *dev)
{
	for (uint32_t i = 0; i < hw_topo_count(topo); i++) {
		const struct hw_function *f = hw_topo_func(topo, (int)i);

		if (!f->is_rep && f->side == HW_SIDE_DPU && strcmp(f->vuid, dev->info.fn.vuid) == 0)
			return (int)i;
	}
	return -1;
}

static struct rep_list *rep_list_alloc(uint32_t n)
{
	struct rep_list *l = calloc(1, sizeof(*l) + (n + 1) * sizeof(l->ptrs[0]));

	if (l == NULL)
		return NULL;
	l->items = calloc(n > 0 ? n : 1, sizeof(*l->items));
	if (l->items == NULL) {
		free(l);
		return NULL;
	}
	return l;
}

static doca_error_t rep_list_fill(const struct hw_topology *topo, const struct doca_dev *dev, int parent,
				  int filter, struct rep_list **out, uint32_t *nb)
{
	uint32_t n = 0, count = 0;
	struct rep_list *l;

	for (uint32_t i = 0; i < hw_topo_count(topo); i++)
		count += rep_matches(hw_topo_func(topo, (int)i), parent, filter);
	l = rep_list_alloc(count);
	if (l == NULL) {
		DC_ERR("out of memory for the representor list");
		return DOCA_ERROR_NO_MEMORY;
	}
	for (uint32_t i = 0; i < hw_topo_count(topo); i++) {
		const struct hw_function *f = hw_topo_func(topo, (int)i);

		if (!rep_matches(f, parent, filter))
			continue;
		l->items[n].fn = *f;
		memcpy(l->items[n].parent_vuid, dev->info.fn.vuid, sizeof(l->items[n].parent_vuid));
		l->ptrs[n] = &l->items[n];
		n++;
	}
	*out = l;
	*nb = n;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_rep_list_create(struct doca_dev *dev, int filter, struct doca_devinfo_rep ***dev_list_rep,
					  uint32_t *nb_devs_rep)
{
	const struct hw_topology *topo;
	struct rep_list *l;
	doca_error_t ret;
	int parent;

	CHECK_ARGS(dev != NULL && dev_list_rep != NULL && nb_devs_rep != NULL);
	if ((filter & ~REP_FILTER_MASK) != 0) {
		DC_ERR("unknown representor filter %#x", (unsigned int)filter);
		return DOCA_ERROR_INVALID_VALUE;
	}
	ret = check_rep_source(dev, filter);
	if (ret != DOCA_SUCCESS)
		return ret;
	topo = hw_topo_get();
	parent = topo != NULL ? topo_index_of(topo, dev) : -1;
	if (parent < 0) {
		/* The driver query of the real card: its answer no longer knows this PF. */
		DC_ERR("%s is no longer in the device topology", dev->info.fn.name);
		return DOCA_ERROR_DRIVER;
	}
	ret = rep_list_fill(topo, dev, parent, filter, &l, nb_devs_rep);
	if (ret == DOCA_SUCCESS)
		*dev_list_rep = l->ptrs;
	return ret;
}

doca_error_t doca_devinfo_rep_list_destroy(struct doca_devinfo_rep **dev_list_rep)
{
	struct rep_list *l;

	CHECK_ARGS(dev_list_rep != NULL);
	l = (struct rep_list *)((char *)dev_list_rep - offsetof(struct rep_list, ptrs));
	free(l->items);
	free(l);
	return DOCA_SUCCESS;
}

/* ---- open and close ---- */

static struct doca_dev_rep *rep_find_locked(const struct doca_devinfo_rep *info)
{
	for (struct doca_dev_rep *r = open_reps; r != NULL; r = r->next)
		if (strcmp(r->info.fn.vuid, info->fn.vuid) == 0 && strcmp(r->info.parent_vuid, info->parent_vuid) == 0)
			return r;
	return NULL;
}

static bool rep_is_open_locked(const struct doca_dev_rep *rep)
{
	for (const struct doca_dev_rep *r = open_reps; r != NULL; r = r->next)
		if (r == rep)
			return true;
	return false;
}

static doca_error_t rep_create_locked(const struct doca_devinfo_rep *info, struct doca_dev_rep **out)
{
	struct doca_dev *parent = dc_dev_find_locked(info->parent_vuid);
	struct doca_dev_rep *r;

	if (parent == NULL) {
		DC_ERR("representor %s: its device is closed; open it first", info->fn.name);
		return DOCA_ERROR_BAD_STATE;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		DC_ERR("out of memory opening representor %s", info->fn.name);
		return DOCA_ERROR_NO_MEMORY;
	}
	r->info = *info;
	r->parent = parent;
	r->opens = 1;
	parent->users++;
	r->next = open_reps;
	open_reps = r;
	*out = r;
	return DOCA_SUCCESS;
}

doca_error_t doca_dev_rep_open(struct doca_devinfo_rep *devinfo, struct doca_dev_rep **dev_rep)
{
	struct doca_dev_rep *r;
	doca_error_t ret = DOCA_SUCCESS;

	CHECK_ARGS(devinfo != NULL && dev_rep != NULL);
	pthread_mutex_lock(&dc_dev_lock);
	r = rep_find_locked(devinfo);
	if (r != NULL) {
		r->opens++;
		*dev_rep = r;
	} else {
		ret = rep_create_locked(devinfo, dev_rep);
	}
	pthread_mutex_unlock(&dc_dev_lock);
	return ret;
}

doca_error_t doca_dev_rep_close(struct doca_dev_rep *dev)
{
	struct doca_dev_rep **pp;

	CHECK_ARGS(dev != NULL);
	pthread_mutex_lock(&dc_dev_lock);
	if (!rep_is_open_locked(dev)) {
		pthread_mutex_unlock(&dc_dev_lock);
		DC_ERR("representor %p is not open", (void *)dev);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (dev->opens == 1 && dev->users > 0) {
		uint32_t users = dev->users;

		pthread_mutex_unlock(&dc_dev_lock);
		DC_ERR("representor %s is still used by %u object(s)", dev->info.fn.name, users);
		return DOCA_ERROR_IN_USE;
	}
	if (--dev->opens > 0) {
		pthread_mutex_unlock(&dc_dev_lock);
		return DOCA_SUCCESS;
	}
	for (pp = &open_reps; *pp != dev; pp = &(*pp)->next)
		;
	*pp = dev->next;
	dev->parent->users--;
	pthread_mutex_unlock(&dc_dev_lock);
	free(dev);
	return DOCA_SUCCESS;
}

struct doca_devinfo_rep *doca_dev_rep_as_devinfo(struct doca_dev_rep *dev_rep)
{
	if (dev_rep == NULL) {
		DC_ERR("dev_rep must not be NULL");
		return NULL;
	}
	return &dev_rep->info;
}

void dc_dev_rep_get(struct doca_dev_rep *rep)
{
	if (rep == NULL)
		return;
	pthread_mutex_lock(&dc_dev_lock);
	rep->users++;
	pthread_mutex_unlock(&dc_dev_lock);
}

void dc_dev_rep_put(struct doca_dev_rep *rep)
{
	bool underflow;

	if (rep == NULL)
		return;
	pthread_mutex_lock(&dc_dev_lock);
	underflow = rep->users == 0;
	if (!underflow)
		rep->users--;
	pthread_mutex_unlock(&dc_dev_lock);
	if (underflow)
		DC_ERR("representor %s: reference released more often than taken", rep->info.fn.name);
}

/* ---- properties ---- */

doca_error_t doca_devinfo_rep_get_vuid(const struct doca_devinfo_rep *devinfo_rep, char *rep_vuid, uint32_t size)
{
	CHECK_ARGS(devinfo_rep != NULL && rep_vuid != NULL);
	if (size < DOCA_DEVINFO_REP_VUID_SIZE) {
		DC_ERR("buffer of %u bytes is smaller than the required %d", size, DOCA_DEVINFO_REP_VUID_SIZE);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(rep_vuid, devinfo_rep->fn.vuid);
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_rep_get_pci_addr(const struct doca_devinfo_rep *devinfo_rep, struct doca_pci_bdf *pci_addr)
{
	CHECK_ARGS(devinfo_rep != NULL && pci_addr != NULL);
	pci_addr->raw = 0;
	pci_addr->bus = devinfo_rep->fn.pci.bus;
	pci_addr->device = devinfo_rep->fn.pci.device & 0x1f;
	pci_addr->function = devinfo_rep->fn.pci.function & 0x7;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_rep_get_pci_addr_str(const struct doca_devinfo_rep *devinfo_rep, char *pci_addr_str)
{
	CHECK_ARGS(devinfo_rep != NULL && pci_addr_str != NULL);
	memcpy(pci_addr_str, devinfo_rep->fn.pci_str, DOCA_DEVINFO_REP_PCI_ADDR_SIZE);
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_rep_get_is_pci_addr_equal(const struct doca_devinfo_rep *devinfo_rep,
						    const char *pci_addr_str, uint8_t *is_equal)
{
	CHECK_ARGS(devinfo_rep != NULL && pci_addr_str != NULL && is_equal != NULL);
	if (!dc_pci_match(&devinfo_rep->fn.pci, pci_addr_str, is_equal)) {
		DC_ERR("'%.16s' is not a PCI address (DDDD:BB:DD.F or BB:DD.F)", pci_addr_str);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_rep_get_pci_func_type(const struct doca_devinfo_rep *devinfo_rep,
						enum doca_pci_func_type *pci_func_type)
{
	CHECK_ARGS(devinfo_rep != NULL && pci_func_type != NULL);
	*pci_func_type = (enum doca_pci_func_type)devinfo_rep->fn.type;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_rep_get_is_hotplug(const struct doca_devinfo_rep *devinfo_rep, uint8_t *is_hotplug)
{
	CHECK_ARGS(devinfo_rep != NULL && is_hotplug != NULL);
	*is_hotplug = devinfo_rep->fn.hotplug ? 1 : 0;
	return DOCA_SUCCESS;
}
