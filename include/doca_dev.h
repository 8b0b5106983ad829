/*
 * softdpu — DOCA devices and representors (DOCA 2.2 shape).
 *
 * A local device (doca_devinfo / doca_dev) is a PCI function of this process's
 * side: on the host its PFs and VFs, on the DPU its PFs and SFs. A representor
 * (doca_devinfo_rep / doca_dev_rep) exists only on the DPU: it stands for a
 * host function or an SF and carries that function's PCI address and VUID.
 * Representors are listed through the DPU PF that manages them.
 */
#ifndef DOCA_DEV_H_
#define DOCA_DEV_H_

#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Properties of a local device, as listed by doca_devinfo_list_create(). */
struct doca_devinfo;
/** Properties of a representor, as listed by doca_devinfo_rep_list_create(). */
struct doca_devinfo_rep;
/** An open local device: the handle DOCA objects are attached to. */
struct doca_dev;
/** An open representor. */
struct doca_dev_rep;

/** Which representors doca_devinfo_rep_list_create() returns (a bit mask; 0 means every kind). */
enum doca_dev_rep_filter {
	DOCA_DEV_REP_FILTER_ALL = 0,		/**< all representors of the device */
	DOCA_DEV_REP_FILTER_NET = 1 << 1,	/**< representors of network functions (PF, VF, SF) */
	DOCA_DEV_REP_FILTER_EMULATED = 1 << 2,	/**< representors of emulated (hot-pluggable) functions */
};

/* ---- lists, open and close ---- */

/**
 * Lists the local devices of this side. (*dev_list)[i] for i < *nb_devs stay
 * valid until doca_devinfo_list_destroy(). DOCA_ERROR_INVALID_VALUE on NULL
 * arguments, DOCA_ERROR_INITIALIZATION when the topology file was refused.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_list_create(struct doca_devinfo ***dev_list, uint32_t *nb_devs);

/** Frees a list; devices opened from it stay open. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_list_destroy(struct doca_devinfo **dev_list);

/**
 * Lists the representors managed by dev, a DPU PF (else DOCA_ERROR_NOT_SUPPORTED).
 * filter is a mask of enum doca_dev_rep_filter; unknown bits give DOCA_ERROR_INVALID_VALUE.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_list_create(struct doca_dev *dev, int filter, struct doca_devinfo_rep ***dev_list_rep,
					  uint32_t *nb_devs_rep);

/** Frees a representor list; representors opened from it stay open. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_list_destroy(struct doca_devinfo_rep **dev_list_rep);

/** Opens a local device. Opening an open device returns the same handle and counts one more open. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_open(struct doca_devinfo *devinfo, struct doca_dev **dev);

/** Drops one open. The last one fails with DOCA_ERROR_IN_USE while objects still use the device. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_close(struct doca_dev *dev);

/** Opens a representor; the same representor opened twice gives the same handle. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_rep_open(struct doca_devinfo_rep *devinfo, struct doca_dev_rep **dev_rep);

/** Drops one open of a representor. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_rep_close(struct doca_dev_rep *dev);

/** Properties of an open device; valid until the device is closed, whatever happened to the list. NULL for NULL. */
__DOCA_EXPERIMENTAL
struct doca_devinfo *doca_dev_as_devinfo(const struct doca_dev *dev);

/** Properties of an open representor; valid until it is closed. NULL for NULL. */
__DOCA_EXPERIMENTAL
struct doca_devinfo_rep *doca_dev_rep_as_devinfo(struct doca_dev_rep *dev_rep);

/* ---- local device properties ---- */

#define DOCA_DEVINFO_VUID_SIZE 128
#define DOCA_DEVINFO_IPV4_ADDR_SIZE 4
#define DOCA_DEVINFO_IPV6_ADDR_SIZE 16
#define DOCA_DEVINFO_MAC_ADDR_SIZE 6
#define DOCA_DEVINFO_IFACE_NAME_SIZE 256
#define DOCA_DEVINFO_IBDEV_NAME_SIZE 64
/** "DDDD:BB:DD.F" and its terminator. */
#define DOCA_DEVINFO_PCI_ADDR_SIZE 13
/** "BB:DD.F" and its terminator. */
#define DOCA_DEVINFO_PCI_BDF_SIZE 8

/** Vendor unique ID (stable name of the function); size >= DOCA_DEVINFO_VUID_SIZE. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_vuid(const struct doca_devinfo *devinfo, char *vuid, uint32_t size);

/** PCI bus, device and function (the domain is not part of struct doca_pci_bdf). */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_pci_addr(const struct doca_devinfo *devinfo, struct doca_pci_bdf *pci_addr);

/** PCI address as "DDDD:BB:DD.F"; pci_addr_str holds DOCA_DEVINFO_PCI_ADDR_SIZE bytes. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_pci_addr_str(const struct doca_devinfo *devinfo, char *pci_addr_str);

/**
 * *is_equal = 1 when pci_addr_str ("DDDD:BB:DD.F", or "BB:DD.F" for domain 0000)
 * is the device's address. A malformed address gives DOCA_ERROR_INVALID_VALUE.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_is_pci_addr_equal(const struct doca_devinfo *devinfo, const char *pci_addr_str,
						uint8_t *is_equal);

/** IPv4 address of the network interface, network byte order; size >= DOCA_DEVINFO_IPV4_ADDR_SIZE. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_ipv4_addr(const struct doca_devinfo *devinfo, uint8_t *ipv4_addr, uint32_t size);

/** IPv6 address of the network interface; size >= DOCA_DEVINFO_IPV6_ADDR_SIZE. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_ipv6_addr(const struct doca_devinfo *devinfo, uint8_t *ipv6_addr, uint32_t size);

/** MAC address; size >= DOCA_DEVINFO_MAC_ADDR_SIZE. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_mac_addr(const struct doca_devinfo *devinfo, uint8_t *mac_addr, uint32_t size);

/** Network interface name; size >= DOCA_DEVINFO_IFACE_NAME_SIZE. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_iface_name(const struct doca_devinfo *devinfo, char *iface_name, uint32_t size);

/** IB device name (mlx5_N); size >= DOCA_DEVINFO_IBDEV_NAME_SIZE. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_ibdev_name(const struct doca_devinfo *devinfo, char *ibdev_name, uint32_t size);

/** Port LID. The emulated ports are Ethernet: always DOCA_ERROR_NOT_SUPPORTED. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_lid(const struct doca_devinfo *devinfo, uint16_t *lid);

/* ---- local device capabilities ---- */

/** 1 when the device can hot-plug emulated PCI functions (DPU PFs). */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_is_hotplug_manager_supported(const struct doca_devinfo *devinfo,
							   uint8_t *is_hotplug_manager);

/** 1 when doca_mmap_export_dpu() works with this device (host functions). */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_is_mmap_export_dpu_supported(const struct doca_devinfo *devinfo, uint8_t *mmap_export);

/** 1 when doca_mmap_create_from_export() of a DPU export works with this device (DPU PFs). */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_is_mmap_from_export_dpu_supported(const struct doca_devinfo *devinfo,
								uint8_t *from_export);

/** 1 when the device can list representors with DOCA_DEV_REP_FILTER_ALL. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_is_list_all_supported(const struct doca_devinfo *devinfo, uint8_t *all_supported);

/** 1 when the device can list representors with DOCA_DEV_REP_FILTER_NET. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_is_list_net_supported(const struct doca_devinfo *devinfo, uint8_t *net_supported);

/** 1 when the device can list representors with DOCA_DEV_REP_FILTER_EMULATED. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_is_list_emulated_supported(const struct doca_devinfo *devinfo,
							     uint8_t *emulated_supported);

/* ---- representor properties ---- */

#define DOCA_DEVINFO_REP_VUID_SIZE 128
/** "DDDD:BB:DD.F" and its terminator. */
#define DOCA_DEVINFO_REP_PCI_ADDR_SIZE 13
/** "BB:DD.F" and its terminator. */
#define DOCA_DEVINFO_REP_PCI_BDF_SIZE 8

/** VUID of the represented function; size >= DOCA_DEVINFO_REP_VUID_SIZE. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_vuid(const struct doca_devinfo_rep *devinfo_rep, char *rep_vuid, uint32_t size);

/** PCI bus, device and function of the represented function. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_pci_addr(const struct doca_devinfo_rep *devinfo_rep, struct doca_pci_bdf *pci_addr);

/** PCI address as "DDDD:BB:DD.F"; pci_addr_str holds DOCA_DEVINFO_REP_PCI_ADDR_SIZE bytes. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_pci_addr_str(const struct doca_devinfo_rep *devinfo_rep, char *pci_addr_str);

/** As doca_devinfo_get_is_pci_addr_equal(), for a representor. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_is_pci_addr_equal(const struct doca_devinfo_rep *devinfo_rep,
						    const char *pci_addr_str, uint8_t *is_equal);

/** PF, VF or SF: the type of the represented function. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_pci_func_type(const struct doca_devinfo_rep *devinfo_rep,
						enum doca_pci_func_type *pci_func_type);

/** 1 when the represented function was hot-plugged, 0 when statically present. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_rep_get_is_hotplug(const struct doca_devinfo_rep *devinfo_rep, uint8_t *is_hotplug);

#ifdef __cplusplus
}
#endif

/* DOCA 1.x signatures on request (docs/compat_1x.md). */
#ifdef DOCA_COMPAT_1X
#include "doca_compat_1x.h"
#endif

#endif /* DOCA_DEV_H_ */
