/*
 * Opening a device or a representor by PCI address, for tests that need a
 * given function of the topology (the comm channel pairs a PF with its
 * representor).
 */
#ifndef SOFTDPU_TEST_DEV_OPEN_H_
#define SOFTDPU_TEST_DEV_OPEN_H_

#include <stdint.h>

#include "doca_dev.h"

/* DOCA_ERROR_NOT_FOUND when no device has that address (or there is no list at all). */
static inline doca_error_t th_open_dev_pci(const char *pci, struct doca_dev **dev)
{
	struct doca_devinfo **list;
	doca_error_t ret = DOCA_ERROR_NOT_FOUND;
	uint32_t n;
	uint8_t eq;

	if (doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS)
		return DOCA_ERROR_NOT_FOUND;
	for (uint32_t i = 0; i < n && ret == DOCA_ERROR_NOT_FOUND; i++)
		if (doca_devinfo_get_is_pci_addr_equal(list[i], pci, &eq) == DOCA_SUCCESS && eq)
			ret = doca_dev_open(list[i], dev);
	doca_devinfo_list_destroy(list);
	return ret;
}

/* The network representor of pf with that address. */
static inline doca_error_t th_open_rep_pci(struct doca_dev *pf, const char *pci, struct doca_dev_rep **rep)
{
	struct doca_devinfo_rep **list;
	doca_error_t ret = DOCA_ERROR_NOT_FOUND;
	uint32_t n;
	uint8_t eq;

	if (doca_devinfo_rep_list_create(pf, DOCA_DEV_REP_FILTER_NET, &list, &n) != DOCA_SUCCESS)
		return DOCA_ERROR_NOT_FOUND;
	for (uint32_t i = 0; i < n && ret == DOCA_ERROR_NOT_FOUND; i++)
		if (doca_devinfo_rep_get_is_pci_addr_equal(list[i], pci, &eq) == DOCA_SUCCESS && eq)
			ret = doca_dev_rep_open(list[i], rep);
	doca_devinfo_rep_list_destroy(list);
	return ret;
}

#endif /* SOFTDPU_TEST_DEV_OPEN_H_ */
