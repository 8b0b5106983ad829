/*
 * softdpu — DOCA memory map (DOCA 2.2 signatures).
 *
 * A memory map holds one memory range and the devices allowed to reach it,
 * with access permissions. It can be exported for the DPU or for RDMA peers;
 * the importer gets an mmap that is not backed by its own memory.
 */
#ifndef DOCA_MMAP_H_
#define DOCA_MMAP_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_mmap;

/** Called on destroy for the memory range the mmap was given. */
typedef void(doca_mmap_memrange_free_cb_t)(void *addr, size_t len, void *opaque);

/** Creates a stopped, empty mmap. user_data is optional (NULL: zero). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_create(const union doca_data *user_data, struct doca_mmap **mmap);

/** Destroys the mmap; DOCA_ERROR_NOT_PERMITTED while buffers point into it. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_destroy(struct doca_mmap *mmap);

/** Starts the mmap: registers the range with every added device. Needs a memrange. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_start(struct doca_mmap *mmap);

/** Stops the mmap; DOCA_ERROR_NOT_PERMITTED while buffers point into it. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_stop(struct doca_mmap *mmap);

/** Adds a device; allowed before start, and after start while not exported. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_dev_add(struct doca_mmap *mmap, struct doca_dev *dev);

/** Removes a previously added device. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_dev_rm(struct doca_mmap *mmap, struct doca_dev *dev);

/** Sets the memory range (once, before start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_set_memrange(struct doca_mmap *mmap, void *addr, size_t len);

/**
 * Sets the memory range from a dma-buf (DOCA 2.2): dmabuf_fd exports the memory, addr is where the
 * program's buffers address it, the range starts dmabuf_offset bytes into the dma-buf. Once, before start;
 * an fd that is not a dma-buf or a range past its end: DOCA_ERROR_INVALID_VALUE.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_set_dmabuf_memrange(struct doca_mmap *mmap, int dmabuf_fd, void *addr, size_t dmabuf_offset,
					   size_t len);

/** Sets the callback that frees the memory range on destroy (before start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_set_free_cb(struct doca_mmap *mmap, doca_mmap_memrange_free_cb_t *free_cb, void *opaque);

/** Sets access permissions, a mask of enum doca_access_flags (before start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_set_permissions(struct doca_mmap *mmap, uint32_t access_mask);

/** Sets the maximal number of devices (before start). Default 1. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_set_max_num_devices(struct doca_mmap *mmap, uint32_t max_num_devices);

/** Exports a started mmap for the DPU; needs DOCA_ACCESS_DPU_* permission. The descriptor lives as long as the mmap. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_export_dpu(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				  size_t *export_desc_len);

/** Exports a started mmap for RDMA peers; needs DOCA_ACCESS_RDMA_* permission. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_export_rdma(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				   size_t *export_desc_len);

/** Creates a started mmap reaching the memory an export descriptor names. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_create_from_export(const union doca_data *user_data, const void *export_desc,
					  size_t export_desc_len, struct doca_dev *dev, struct doca_mmap **mmap);

__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_user_data(const struct doca_mmap *mmap, union doca_data *user_data);

__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_max_num_devices(const struct doca_mmap *mmap, uint32_t *max_num_devices);

/** Number of doca_buf objects currently pointing into the mmap. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_num_bufs(const struct doca_mmap *mmap, uint32_t *num_bufs);

__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_exported(const struct doca_mmap *mmap, uint8_t *exported);

__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_from_export(const struct doca_mmap *mmap, uint8_t *from_export);

__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_memrange(const struct doca_mmap *mmap, void **addr, size_t *len);

__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_permissions(const struct doca_mmap *mmap, uint32_t *access_mask);

/** Number of devices currently added. */
__DOCA_EXPERIMENTAL
doca_error_t doca_mmap_get_num_devices(const struct doca_mmap *mmap, uint32_t *num_devices);

#ifdef __cplusplus
}
#endif

/* DOCA 1.x signatures on request (docs/compat_1x.md). */
#ifdef DOCA_COMPAT_1X
#include "doca_compat_1x.h"
#endif

#endif /* DOCA_MMAP_H_ */
