/*
 * softdpu — DOCA buffer pool (DOCA 2.2 signatures).
 *
 * Fixed-size buffers carved out of one mmap's range; the application does
 * not choose addresses.
 */
#ifndef DOCA_BUFPOOL_H_
#define DOCA_BUFPOOL_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_buf.h"
#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_bufpool;
struct doca_mmap;

/**
 * Creates a stopped pool of num_elements buffers of element_size bytes each,
 * aligned to element_alignment (a power of 2, or 0 for none), inside the range
 * of a started mmap.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_create(const union doca_data *user_data, size_t num_elements, uint32_t extensions,
				 size_t element_size, size_t element_alignment, const struct doca_mmap *mmap,
				 struct doca_bufpool **bufpool);

__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_destroy(struct doca_bufpool *bufpool);

__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_start(struct doca_bufpool *bufpool);

__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_stop(struct doca_bufpool *bufpool);

__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_get_num_elements(const struct doca_bufpool *bufpool, uint32_t *num_of_elements);

__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_get_num_free_elements(const struct doca_bufpool *bufpool, uint32_t *num_of_free_elements);

__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_get_element_alignment(const struct doca_bufpool *bufpool, size_t *element_alignment);

__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_get_user_data(const struct doca_bufpool *bufpool, union doca_data *user_data);

/** Takes a buffer; DOCA_ERROR_EMPTY when none is free, DOCA_ERROR_BAD_STATE when stopped. */
__DOCA_EXPERIMENTAL
doca_error_t doca_bufpool_buf_alloc(struct doca_bufpool *bufpool, struct doca_buf **buf);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUFPOOL_H_ */
