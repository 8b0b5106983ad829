/*
 * softdpu — DOCA buffer inventory (DOCA 2.2 signatures).
 *
 * A fixed pool of doca_buf descriptors, allocated at creation. Buffers may
 * point at any started mmap.
 */
#ifndef DOCA_BUF_INVENTORY_H_
#define DOCA_BUF_INVENTORY_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_buf.h"
#include "doca_compat.h"
#include "doca_error.h"
#include "doca_mmap.h" /* as 2.2's: the mmap its buffers are taken from */
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf_inventory;
struct doca_mmap;

/** Creates a stopped inventory of num_elements buffers with the given extensions (enum doca_buf_extension). */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_create(const union doca_data *user_data, size_t num_elements, uint32_t extensions,
				       struct doca_buf_inventory **inventory);

/** Destroys it; DOCA_ERROR_IN_USE while buffers are out. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inventory);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inventory);

/** Stops handing out buffers; buffers already out stay valid. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inventory);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_get_num_elements(const struct doca_buf_inventory *inventory,
						 uint32_t *num_of_elements);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_get_num_free_elements(const struct doca_buf_inventory *inventory,
						      uint32_t *num_of_free_elements);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_get_user_data(const struct doca_buf_inventory *inventory,
					      union doca_data *user_data);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_get_buf_extensions(const struct doca_buf_inventory *inventory,
						   uint32_t *extensions);

/**
 * Takes a buffer whose region is [addr, addr + len) of mmap and whose data
 * segment is [data, data + data_len) inside it.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_buf_by_args(struct doca_buf_inventory *inventory, struct doca_mmap *mmap, void *addr,
					    size_t len, void *data, size_t data_len, struct doca_buf **buf);

/** Takes a buffer over [addr, addr + len) with an empty data segment at addr. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_buf_by_addr(struct doca_buf_inventory *inventory, struct doca_mmap *mmap, void *addr,
					    size_t len, struct doca_buf **buf);

/** Takes a buffer whose region and data segment are both [data, data + data_len). */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_buf_by_data(struct doca_buf_inventory *inventory, struct doca_mmap *mmap, void *data,
					    size_t data_len, struct doca_buf **buf);

/** Takes a buffer describing the same region and data segment as src_buf (a list is duplicated element-wise). */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_inventory_buf_dup(struct doca_buf_inventory *inventory, const struct doca_buf *src_buf,
					struct doca_buf **dst_buf);

#ifdef __cplusplus
}
#endif

/* DOCA 1.x signatures on request (docs/compat_1x.md). */
#ifdef DOCA_COMPAT_1X
#include "doca_compat_1x.h"
#endif

#endif /* DOCA_BUF_INVENTORY_H_ */
