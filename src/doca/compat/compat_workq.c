/*
 * DOCA 1.x work queue properties, through the public 2.x getters and setters.
 */
#include <string.h>

#include "dc_log.h"
#include "doca_compat_1x.h"
#include "doca_ctx.h"

doca_error_t doca_workq_property_set(struct doca_workq *workq, enum doca_workq_property property,
				     const uint8_t *value, uint32_t size)
{
	uint32_t depth;

	if (workq == NULL || value == NULL || property != DOCA_WORKQ_PROPERTY_DEPTH || size != sizeof(depth)) {
		DC_ERR("invalid work queue property %d or size %u", (int)property, size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	memcpy(&depth, value, sizeof(depth));
	return doca_workq_set_depth(workq, depth);
}

doca_error_t doca_workq_property_get(const struct doca_workq *workq, enum doca_workq_property property,
				     uint8_t *value, uint32_t size)
{
	doca_error_t ret;
	uint32_t depth;

	if (workq == NULL || value == NULL || property != DOCA_WORKQ_PROPERTY_DEPTH || size != sizeof(depth)) {
		DC_ERR("invalid work queue property %d or size %u", (int)property, size);
		return DOCA_ERROR_INVALID_VALUE;
	}
	ret = doca_workq_get_depth(workq, &depth);
	if (ret == DOCA_SUCCESS)
		memcpy(value, &depth, sizeof(depth));
	return ret;
}
