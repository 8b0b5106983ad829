/*
 * dpa_mem — DPA memory: the FlexIO process's heap.
 */
#include "dpa_int.h"

doca_error_t doca_dpa_mem_alloc(struct doca_dpa *dpa, size_t size, doca_dpa_dev_uintptr_t *dev_ptr)
{
	flexio_uintptr_t a;

	if (dpa == NULL || dev_ptr == NULL || size == 0) {
		BASE_ERR("invalid argument (dpa, dev_ptr, size 0)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (flexio_buf_dev_alloc(dpa->proc, size, &a) != FLEXIO_STATUS_SUCCESS) {
		BASE_ERR("no %zu bytes of DPA memory left", size);
		return DOCA_ERROR_NO_MEMORY;
	}
	*dev_ptr = a;
	return DOCA_SUCCESS;
}

doca_error_t doca_dpa_mem_free(struct doca_dpa *dpa, doca_dpa_dev_uintptr_t dev_ptr)
{
	if (dpa == NULL || dev_ptr == 0) {
		BASE_ERR("invalid argument (dpa, dev_ptr)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (flexio_buf_dev_free(dpa->proc, dev_ptr) != FLEXIO_STATUS_SUCCESS) {
		BASE_ERR("0x%llx is not DPA memory of this context", (unsigned long long)dev_ptr);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_dpa_h2d_memcpy(struct doca_dpa *dpa, doca_dpa_dev_uintptr_t dst_ptr, void *src_ptr, size_t size)
{
	if (dpa == NULL || src_ptr == NULL || dst_ptr == 0 || size == 0) {
		BASE_ERR("invalid argument (dpa, dst_ptr, src_ptr, size 0)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (flexio_host2dev_memcpy(dpa->proc, src_ptr, size, dst_ptr) != FLEXIO_STATUS_SUCCESS) {
		BASE_ERR("[0x%llx, +%zu) is not inside one DPA allocation", (unsigned long long)dst_ptr, size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_dpa_memset(struct doca_dpa *dpa, doca_dpa_dev_uintptr_t dev_ptr, int value, size_t size)
{
	if (dpa == NULL || dev_ptr == 0 || size == 0) {
		BASE_ERR("invalid argument (dpa, dev_ptr, size 0)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (flexio_buf_dev_memset(dpa->proc, value, size, dev_ptr) != FLEXIO_STATUS_SUCCESS) {
		BASE_ERR("[0x%llx, +%zu) is not inside one DPA allocation", (unsigned long long)dev_ptr, size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}
