/*
 * doca_buf_arr — CPU-side configuration of a GPU/DPA buffer array.
 *
 * The emulated device has no GPU or DPA data path yet, so the array can be
 * configured, started and stopped, but targets and handles are refused.
 */
#include <stdlib.h>

#include "dc_core.h"
#include "dc_log.h"
#include "doca_buf_array.h"

struct doca_buf_arr {
	struct doca_mmap *mmap;
	size_t elem_size;
	uint32_t num_elem;
	uint64_t start_offset;
	bool has_params;
	bool started;
};

doca_error_t doca_buf_arr_create(struct doca_mmap *mmap, struct doca_buf_arr **buf_arr)
{
	struct doca_buf_arr *ba;

	if (mmap == NULL || buf_arr == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ba = calloc(1, sizeof(*ba));
	if (ba == NULL)
		return DOCA_ERROR_NO_MEMORY;
	ba->mmap = mmap;
	mmap->num_holders++; /* the mmap must outlive the array */
	*buf_arr = ba;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_arr_destroy(struct doca_buf_arr *buf_arr)
{
	if (buf_arr == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf_arr->started)
		return DOCA_ERROR_BAD_STATE;
	buf_arr->mmap->num_holders--;
	free(buf_arr);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_arr_set_params(struct doca_buf_arr *buf_arr, size_t elem_size, uint32_t num_elem,
				     uint64_t start_offset)
{
	if (buf_arr == NULL || elem_size == 0 || num_elem == 0)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf_arr->started)
		return DOCA_ERROR_BAD_STATE;
	buf_arr->elem_size = elem_size;
	buf_arr->num_elem = num_elem;
	buf_arr->start_offset = start_offset;
	buf_arr->has_params = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_arr_set_target_gpu(struct doca_buf_arr *buf_arr, struct doca_gpu *gpu_handler)
{
	if (buf_arr == NULL || gpu_handler == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf_arr->started)
		return DOCA_ERROR_BAD_STATE;
	DC_ERR("the emulated device has no GPU: buffer array GPU target not supported");
	return DOCA_ERROR_NOT_SUPPORTED;
}

/* The elements must fit in the mmap's range from start_offset on. */
static bool fits(const struct doca_buf_arr *ba)
{
	const struct doca_mmap *m = ba->mmap;
	uint64_t need;

	if (!m->has_range || ba->start_offset > m->len)
		return false;
	if (ba->elem_size > (m->len - ba->start_offset) / ba->num_elem)
		return false;
	need = (uint64_t)ba->elem_size * ba->num_elem;
	return need <= m->len - ba->start_offset;
}

doca_error_t doca_buf_arr_start(struct doca_buf_arr *buf_arr)
{
	if (buf_arr == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (buf_arr->started || !buf_arr->has_params)
		return DOCA_ERROR_BAD_STATE;
	if (buf_arr->mmap->state != DC_MMAP_STARTED) {
		DC_ERR("the mmap of the buffer array is not started");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (!fits(buf_arr)) {
		DC_ERR("buffer array does not fit in its mmap");
		return DOCA_ERROR_INVALID_VALUE;
	}
	buf_arr->started = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_arr_stop(struct doca_buf_arr *buf_arr)
{
	if (buf_arr == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!buf_arr->started)
		return DOCA_ERROR_BAD_STATE;
	buf_arr->started = false;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_arr_get_gpu_handle(const struct doca_buf_arr *buf_arr, struct doca_gpu_buf_arr **gpu_buf_arr)
{
	if (buf_arr == NULL || gpu_buf_arr == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!buf_arr->started)
		return DOCA_ERROR_BAD_STATE;
	DC_ERR("the emulated device has no GPU: buffer array GPU handle not supported");
	return DOCA_ERROR_NOT_SUPPORTED;
}
