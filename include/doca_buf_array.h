/*
 * softdpu — DOCA buffer array (DOCA 2.2 signatures).
 *
 * The CPU-side configuration object of an array of fixed-size buffers in one
 * mmap. Its data-path handles live on a GPU or DPA, which the emulated device
 * does not have yet: the target setters and handle getters return
 * DOCA_ERROR_NOT_SUPPORTED.
 */
#ifndef DOCA_BUF_ARRAY_H_
#define DOCA_BUF_ARRAY_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_buf.h" /* as 2.2's */
#include "doca_compat.h"
#include "doca_error.h"
#include "doca_mmap.h" /* as 2.2's: the mmap the array is over */
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf_arr;
struct doca_mmap;
struct doca_gpu;
struct doca_gpu_buf_arr;

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_create(struct doca_mmap *mmap, struct doca_buf_arr **buf_arr);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_destroy(struct doca_buf_arr *buf_arr);

/** Sets element size, number of elements and the offset of the first element in the mmap range (before start). */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_params(struct doca_buf_arr *buf_arr, size_t elem_size, uint32_t num_elem,
				     uint64_t start_offset);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_set_target_gpu(struct doca_buf_arr *buf_arr, struct doca_gpu *gpu_handler);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_start(struct doca_buf_arr *buf_arr);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_stop(struct doca_buf_arr *buf_arr);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_arr_get_gpu_handle(const struct doca_buf_arr *buf_arr, struct doca_gpu_buf_arr **gpu_buf_arr);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_BUF_ARRAY_H_ */
