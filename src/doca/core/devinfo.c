/*
 * devinfo — properties and capabilities of a local device.
 *
 * All getters read the devinfo snapshot only, so they need no lock.
 */
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

bool dc_pci_match(const struct hw_pci_addr *addr, const char *pci_addr_str, uint8_t *is_equal)
{
	struct hw_pci_addr want;

	if (!hw_pci_parse(pci_addr_str, true, &want))
		return false;
	*is_equal = hw_pci_equal(addr, &want) ? 1 : 0;
	return true;
}

/* Copies a string property when the caller's buffer has at least the documented size. */
static doca_error_t get_str(const char *api, const char *val, char *out, uint32_t size, uint32_t min_size)
{
	if (size < min_size) {
		dc_log(DC_LOG_ERROR, api, "buffer of %u bytes is smaller than the required %u", size, min_size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	strcpy(out, val); /* val is shorter than every min_size (HW_TOPO_* sizes) */
	return DOCA_SUCCESS;
}

static doca_error_t get_bytes(const char *api, const uint8_t *val, size_t len, uint8_t *out, uint32_t size)
{
	if (size < len) {
		dc_log(DC_LOG_ERROR, api, "buffer of %u bytes is smaller than the required %zu", size, len);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(out, val, len);
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_get_vuid(const struct doca_devinfo *devinfo, char *vuid, uint32_t size)
{
	CHECK_ARGS(devinfo != NULL && vuid != NULL);
	return get_str(__func__, devinfo->fn.vuid, vuid, size, DOCA_DEVINFO_VUID_SIZE);
}

doca_error_t doca_devinfo_get_pci_addr(const struct doca_devinfo *devinfo, struct doca_pci_bdf *pci_addr)
{
	CHECK_ARGS(devinfo != NULL && pci_addr != NULL);
	pci_addr->raw = 0;
	pci_addr->bus = devinfo->fn.pci.bus;
	pci_addr->device = devinfo->fn.pci.device & 0x1f;
	pci_addr->function = devinfo->fn.pci.function & 0x7;
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_get_pci_addr_str(const struct doca_devinfo *devinfo, char *pci_addr_str)
{
	CHECK_ARGS(devinfo != NULL && pci_addr_str != NULL);
	memcpy(pci_addr_str, devinfo->fn.pci_str, DOCA_DEVINFO_PCI_ADDR_SIZE);
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_get_is_pci_addr_equal(const struct doca_devinfo *devinfo, const char *pci_addr_str,
						uint8_t *is_equal)
{
	CHECK_ARGS(devinfo != NULL && pci_addr_str != NULL && is_equal != NULL);
	if (!dc_pci_match(&devinfo->fn.pci, pci_addr_str, is_equal)) {
		DC_ERR("'%.16s' is not a PCI address (DDDD:BB:DD.F or BB:DD.F)", pci_addr_str);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_devinfo_get_ipv4_addr(const struct doca_devinfo *devinfo, uint8_t *ipv4_addr, uint32_t size)
{
	CHECK_ARGS(devinfo != NULL && ipv4_addr != NULL);
	return get_bytes(__func__, devinfo->fn.ipv4, DOCA_DEVINFO_IPV4_ADDR_SIZE, ipv4_addr, size);
}

doca_error_t doca_devinfo_get_ipv6_addr(const struct doca_devinfo *devinfo, uint8_t *ipv6_addr, uint32_t size)
{
	CHECK_ARGS(devinfo != NULL && ipv6_addr != NULL);
	return get_bytes(__func__, devinfo->fn.ipv6, DOCA_DEVINFO_IPV6_ADDR_SIZE, ipv6_addr, size);
}

doca_error_t doca_devinfo_get_mac_addr(const struct doca_devinfo *devinfo, uint8_t *mac_addr, uint32_t size)
{
	CHECK_ARGS(devinfo != NULL && mac_addr != NULL);
	return get_bytes(__func__, devinfo->fn.mac, DOCA_DEVINFO_MAC_ADDR_SIZE, mac_addr, size);
}

doca_error_t doca_devinfo_get_iface_name(const struct doca_devinfo *devinfo, char *iface_name, uint32_t size)
{
	CHECK_ARGS(devinfo != NULL && iface_name != NULL);
	return get_str(__func__, devinfo->fn.iface, iface_name, size, DOCA_DEVINFO_IFACE_NAME_SIZE);
}

doca_error_t doca_devinfo_get_ibdev_name(const struct doca_devinfo *devinfo, char *ibdev_name, uint32_t size)
{
	CHECK_ARGS(devinfo != NULL && ibdev_name != NULL);
	return get_str(__func__, devinfo->fn.ibdev, ibdev_name, size, DOCA_DEVINFO_IBDEV_NAME_SIZE);
}

doca_error_t doca_devinfo_get_lid(const struct doca_devinfo *devinfo, uint16_t *lid)
{
	CHECK_ARGS(devinfo != NULL && lid != NULL);
	DC_ERR("%s: the emulated ports are Ethernet, they have no LID", devinfo->fn.name);
	return DOCA_ERROR_NOT_SUPPORTED;
}

/* ---- capabilities ---- */

/* A macro, so refusals are logged under the API function's name. */
#define GET_CAP(devinfo, cap, out)                                                                                     \
	do {                                                                                                           \
		CHECK_ARGS((devinfo) != NULL && (out) != NULL);                                                        \
		*(out) = dc_devinfo_cap((devinfo), (cap)) ? 1 : 0;                                                     \
		return DOCA_SUCCESS;                                                                                   \
	} while (0)

doca_error_t doca_devinfo_get_is_hotplug_manager_supported(const struct doca_devinfo *devinfo,
							   uint8_t *is_hotplug_manager)
{
	GET_CAP(devinfo, DC_CAP_HOTPLUG_MANAGER, is_hotplug_manager);
}

doca_error_t doca_devinfo_get_is_mmap_export_dpu_supported(const struct doca_devinfo *devinfo, uint8_t *mmap_export)
{
	GET_CAP(devinfo, DC_CAP_MMAP_EXPORT_DPU, mmap_export);
}

doca_error_t doca_devinfo_get_is_mmap_from_export_dpu_supported(const struct doca_devinfo *devinfo,
								uint8_t *from_export)
{
	GET_CAP(devinfo, DC_CAP_MMAP_FROM_EXPORT_DPU, from_export);
}

doca_error_t doca_devinfo_rep_get_is_list_all_supported(const struct doca_devinfo *devinfo, uint8_t *all_supported)
{
	GET_CAP(devinfo, DC_CAP_REP_FILTER_ALL, all_supported);
}

doca_error_t doca_devinfo_rep_get_is_list_net_supported(const struct doca_devinfo *devinfo, uint8_t *net_supported)
{
	GET_CAP(devinfo, DC_CAP_REP_FILTER_NET, net_supported);
}

doca_error_t doca_devinfo_rep_get_is_list_emulated_supported(const struct doca_devinfo *devinfo,
							     uint8_t *emulated_supported)
{
	GET_CAP(devinfo, DC_CAP_REP_FILTER_EMULATED, emulated_supported);
}
