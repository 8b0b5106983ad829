/*
 * softdpu — DOCA 1.x (1.3-era) signatures over the DOCA 2.2 implementation.
 *
 * A program written for DOCA 1.x defines DOCA_COMPAT_1X before including the
 * DOCA headers (or builds with -DDOCA_COMPAT_1X). The headers then declare the
 * 1.x functions; where a 1.x function has the name of a 2.x one but another
 * signature, a macro maps the name onto a distinct exported symbol (*_1x), so
 * both generations live in one library. Without DOCA_COMPAT_1X nothing here is
 * renamed; the 1.x-only symbols are exported either way.
 *
 * Details, and which 1.x behaviour is kept: docs/compat_1x.md.
 */
#ifndef DOCA_COMPAT_1X_H_
#define DOCA_COMPAT_1X_H_

/* Every 2.x prototype must be seen before the renaming macros below exist. */
#include <stddef.h>
#include <stdint.h>

#include "doca_buf.h"
#include "doca_buf_inventory.h"
#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_mmap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- property enums ---- */

/** Properties of a local device (all read-only). */
enum doca_devinfo_property {
	DOCA_DEVINFO_PROPERTY_VUID = 0,	   /**< char[DOCA_DEVINFO_VUID_SIZE] */
	DOCA_DEVINFO_PROPERTY_PCI_ADDR,	   /**< struct doca_pci_bdf */
	DOCA_DEVINFO_PROPERTY_IPV4_ADDR,   /**< uint8_t[DOCA_DEVINFO_IPV4_ADDR_SIZE] */
	DOCA_DEVINFO_PROPERTY_IPV6_ADDR,   /**< uint8_t[DOCA_DEVINFO_IPV6_ADDR_SIZE] */
	DOCA_DEVINFO_PROPERTY_IFACE_NAME,  /**< char[DOCA_DEVINFO_IFACE_NAME_SIZE] */
	DOCA_DEVINFO_PROPERTY_IBDEV_NAME,  /**< char[DOCA_DEVINFO_IBDEV_NAME_SIZE] */
};

/** Properties of a remote (host) device seen from the DPU (all read-only). */
enum doca_devinfo_remote_property {
	DOCA_DEVINFO_REMOTE_PROPERTY_VUID = 0, /**< char[DOCA_DEVINFO_REP_VUID_SIZE] */
	DOCA_DEVINFO_REMOTE_PROPERTY_PCI_ADDR, /**< struct doca_pci_bdf */
};

/** Properties of a buffer inventory (all read-only, uint32_t). */
enum doca_buf_inventory_property {
	DOCA_BUF_INVENTORY_PROPERTY_NUM_ELEMENTS = 0,
	DOCA_BUF_INVENTORY_PROPERTY_NUM_FREE_ELEMENTS,
	DOCA_BUF_INVENTORY_PROPERTY_EXTENSIONS,
};

/** Properties of a memory map. */
enum doca_mmap_property {
	DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS = 0, /**< uint32_t; settable before the first start; default 1 */
	DOCA_MMAP_PROPERTY_MAX_NUM_DEVICES,    /**< uint32_t; settable before the first start; default 1 */
	DOCA_MMAP_PROPERTY_NUM_BUFS,	       /**< uint32_t; read-only */
	DOCA_MMAP_PROPERTY_EXPORTED,	       /**< uint8_t; read-only */
	DOCA_MMAP_PROPERTY_FROM_EXPORT,	       /**< uint8_t; read-only */
	DOCA_MMAP_PROPERTY_ACCESS_FLAGS,       /**< uint32_t (enum doca_access_flags); settable before the first start */
};

/** Properties of a work queue. */
enum doca_workq_property {
	DOCA_WORKQ_PROPERTY_DEPTH = 0, /**< uint32_t; settable while the work queue is in no context */
};

/* doca_ctx.h may be only half read when this header is reached through it. */
struct doca_workq;

/** A host function as seen from the DPU (its representor underneath). */
struct doca_devinfo_remote;
/** An open remote device. */
struct doca_dev_remote;

/* ---- same names as 2.x, other signatures: distinct symbols ---- */

/** NULL-terminated list of the local devices; destroy with doca_devinfo_list_destroy(). */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_list_create_1x(struct doca_devinfo ***devinfo_list);

/** 1.x form: the devinfo through an output parameter. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_as_devinfo_1x(struct doca_dev *dev, struct doca_devinfo **devinfo);

/** Empty 1.x mmap (ranges come from doca_mmap_populate()); the name is not used. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_create_1x(const char *name, struct doca_mmap **mmap);

/** Import of a doca_mmap_export() descriptor; the name is not used. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_create_from_export_1x(const char *name, const uint8_t *export_desc, size_t export_desc_len,
					     struct doca_dev *dev, struct doca_mmap **mmap);

/** Inventory of num_elements buffers; the name is not used. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_create_1x(const char *name, size_t num_elements, uint32_t extensions,
					  struct doca_buf_inventory **buf_inventory);

/* ---- 1.x-only functions ---- */

/** Reads a device property; size must be the property's size (strings: at least it). */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_property_get(const struct doca_devinfo *devinfo, enum doca_devinfo_property property,
				       uint8_t *value, uint32_t size);

/** NULL-terminated list of the host functions a DPU device reaches; DOCA_ERROR_NOT_SUPPORTED on the host. */
__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_remote_list_create(struct doca_dev *dev, struct doca_devinfo_remote ***devinfo_remote_list);

__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_remote_list_destroy(struct doca_devinfo_remote **devinfo_remote_list);

__DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_remote_property_get(const struct doca_devinfo_remote *devinfo_remote,
					      enum doca_devinfo_remote_property property, uint8_t *value,
					      uint32_t size);

__DOCA_EXPERIMENTAL
doca_error_t doca_dev_remote_open(struct doca_devinfo_remote *devinfo_remote, struct doca_dev_remote **dev_remote);

__DOCA_EXPERIMENTAL
doca_error_t doca_dev_remote_close(struct doca_dev_remote *dev_remote);

__DOCA_EXPERIMENTAL
doca_error_t doca_dev_remote_as_devinfo(struct doca_dev_remote *dev_remote,
					struct doca_devinfo_remote **devinfo_remote);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_head_get(struct doca_buf *buf, uint8_t **head);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_len_get(struct doca_buf *buf, size_t *len);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_refcount_get(struct doca_buf *buf, uint16_t *refcount);

/** Every inventory property is read-only: set refuses with DOCA_ERROR_NOT_PERMITTED. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_property_set(struct doca_buf_inventory *inventory,
					     enum doca_buf_inventory_property property, const uint8_t *value,
					     uint32_t size);

/** value is written (declared const as in the 1.x headers). */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_property_get(struct doca_buf_inventory *inventory,
					     enum doca_buf_inventory_property property, const uint8_t *value,
					     uint32_t size);

__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_property_set(struct doca_mmap *mmap, enum doca_mmap_property property, const uint8_t *value,
				    uint32_t size);

/** value is written (declared const as in the 1.x headers). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_property_get(struct doca_mmap *mmap, enum doca_mmap_property property, const uint8_t *value,
				    uint32_t size);

/**
 * Adds the chunk [addr, addr + len) to a 1.x mmap, before or after start.
 * DOCA_ERROR_NOT_PERMITTED when it overlaps a chunk or the map is exported or
 * imported, DOCA_ERROR_NO_MEMORY beyond max_num_chunks, DOCA_ERROR_BAD_STATE
 * when stopped. pg_sz: a power of two. free_cb (may be NULL) gets the chunk on destroy.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_populate(struct doca_mmap *mmap, char *addr, size_t len, size_t pg_sz,
				doca_mmap_memrange_free_cb_t *free_cb, void *opaque);

/** Host -> DPU export of a started, single-chunk mmap; free(*export_desc) when done. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_export(struct doca_mmap *mmap, const struct doca_dev *dev, uint8_t **export_desc,
			      size_t *export_desc_len);

__DOCA_EXPERIMENTAL
doca_error_t doca_workq_property_set(struct doca_workq *workq, enum doca_workq_property property,
				     const uint8_t *value, uint32_t size);

__DOCA_EXPERIMENTAL
doca_error_t doca_workq_property_get(const struct doca_workq *workq, enum doca_workq_property property,
				     uint8_t *value, uint32_t size);

#ifdef DOCA_COMPAT_1X
#define doca_devinfo_list_create doca_devinfo_list_create_1x
#define doca_dev_as_devinfo doca_dev_as_devinfo_1x
#define doca_mmap_create doca_mmap_create_1x
#define doca_mmap_create_from_export doca_mmap_create_from_export_1x
#define doca_buf_inventory_create doca_buf_inventory_create_1x
#endif

#ifdef __cplusplus
}
#endif

#endif /* DOCA_COMPAT_1X_H_ */
