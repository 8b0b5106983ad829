/*
 * SHA capabilities of a device, read from its devinfo snapshot (no lock).
 */
#include "sha_priv.h"

doca_error_t doca_sha_job_get_supported(const struct doca_devinfo *devinfo, enum doca_sha_job_type job_type)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!dc_sha_type_valid((int)job_type) || !dc_sha_devinfo_has_engine(devinfo))
		return DOCA_ERROR_NOT_SUPPORTED;
	return DOCA_SUCCESS;
}

doca_error_t doca_sha_get_max_list_buf_num_elem(const struct doca_devinfo *devinfo, uint32_t *max_list_num_elem)
{
	if (devinfo == NULL || max_list_num_elem == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!dc_sha_devinfo_has_engine(devinfo))
		return DOCA_ERROR_NOT_SUPPORTED;
	*max_list_num_elem = DC_SHA_MAX_LIST_ELEMS;
	return DOCA_SUCCESS;
}

doca_error_t doca_sha_get_max_src_buffer_size(const struct doca_devinfo *devinfo, uint64_t *max_buffer_size)
{
	if (devinfo == NULL || max_buffer_size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!dc_sha_devinfo_has_engine(devinfo))
		return DOCA_ERROR_NOT_SUPPORTED;
	*max_buffer_size = DC_SHA_MAX_SRC_SIZE;
	return DOCA_SUCCESS;
}

doca_error_t doca_sha_get_min_dst_buffer_size(const struct doca_devinfo *devinfo, enum doca_sha_job_type job_type,
					      uint32_t *min_buffer_size)
{
	if (devinfo == NULL || min_buffer_size == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!dc_sha_type_valid((int)job_type) || !dc_sha_devinfo_has_engine(devinfo))
		return DOCA_ERROR_NOT_SUPPORTED;
	*min_buffer_size = hw_sha_digest_size(dc_sha_alg((int)job_type));
	return DOCA_SUCCESS;
}

/*
 * The emulated device hashes in its own engine (hw_sha), so programs take
 * their hardware path; there is no separate software fallback to report.
 */
doca_error_t doca_sha_get_hardware_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return dc_sha_devinfo_has_engine(devinfo) ? DOCA_SUCCESS : DOCA_ERROR_NOT_SUPPORTED;
}
