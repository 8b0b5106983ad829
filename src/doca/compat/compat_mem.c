/*
 * DOCA 1.x memory objects: mmap, buffers and inventories over the 2.x code.
 * A 1.x mmap is a 2.x mmap marked chunked (mmap.c keeps its chunk list).
 */
#include <stdlib.h>
#include <string.h>

#include "dc_core.h"
#include "dc_log.h"
#include "doca_compat_1x.h"

/* 1.x maps may be exported to the DPU without a permission call, as in 1.x. */
#define COMPAT_DEFAULT_ACCESS (DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_DPU_READ_WRITE)

doca_error_t doca_mmap_create_1x(const char *name, struct doca_mmap **mmap)
{
	doca_error_t ret;

	(void)name; /* the name plays no role */
	ret = doca_mmap_create(NULL, mmap);
	if (ret != DOCA_SUCCESS)
		return ret;
	dc_mmap_make_chunked(*mmap);
	(*mmap)->access = COMPAT_DEFAULT_ACCESS;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_create_from_export_1x(const char *name, const uint8_t *export_desc, size_t export_desc_len,
					     struct doca_dev *dev, struct doca_mmap **mmap)
{
	(void)name;
	return doca_mmap_create_from_export(NULL, export_desc, export_desc_len, dev, mmap);
}

doca_error_t doca_buf_inventory_create_1x(const char *name, size_t num_elements, uint32_t extensions,
					  struct doca_buf_inventory **buf_inventory)
{
	(void)name;
	return doca_buf_inventory_create(NULL, num_elements, extensions, buf_inventory);
}

/* ---- buffers ---- */

doca_error_t doca_buf_head_get(struct doca_buf *buf, uint8_t **head)
{
	return doca_buf_get_head(buf, (void **)head);
}

doca_error_t doca_buf_len_get(struct doca_buf *buf, size_t *len)
{
	return doca_buf_get_len(buf, len);
}

doca_error_t doca_buf_refcount_get(struct doca_buf *buf, uint16_t *refcount)
{
	return doca_buf_get_refcount(buf, refcount);
}

/* ---- inventory properties ---- */

doca_error_t doca_buf_inventory_property_set(struct doca_buf_inventory *inventory,
					     enum doca_buf_inventory_property property, const uint8_t *value,
					     uint32_t size)
{
	if (inventory == NULL || value == NULL || property > DOCA_BUF_INVENTORY_PROPERTY_EXTENSIONS)
		return DOCA_ERROR_INVALID_VALUE;
	(void)size;
	DC_ERR("buffer inventory property %d is read-only", (int)property);
	return DOCA_ERROR_NOT_PERMITTED;
}

doca_error_t doca_buf_inventory_property_get(struct doca_buf_inventory *inventory,
					     enum doca_buf_inventory_property property, const uint8_t *value,
					     uint32_t size)
{
	uint32_t *out = (uint32_t *)(uintptr_t)value; /* an output despite the 1.x const */
	uint32_t v;
	doca_error_t ret;

	if (inventory == NULL || value == NULL || size != sizeof(uint32_t))
		return DOCA_ERROR_INVALID_VALUE;
	switch (property) {
	case DOCA_BUF_INVENTORY_PROPERTY_NUM_ELEMENTS:
		ret = doca_buf_inventory_get_num_elements(inventory, &v);
		break;
	case DOCA_BUF_INVENTORY_PROPERTY_NUM_FREE_ELEMENTS:
		ret = doca_buf_inventory_get_num_free_elements(inventory, &v);
		break;
	case DOCA_BUF_INVENTORY_PROPERTY_EXTENSIONS:
		ret = doca_buf_inventory_get_buf_extensions(inventory, &v);
		break;
	default:
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (ret == DOCA_SUCCESS)
		memcpy(out, &v, sizeof(v));
	return ret;
}

/* ---- mmap properties ---- */

static bool mmap_prop_known(enum doca_mmap_property p)
{
	return p >= DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS && p <= DOCA_MMAP_PROPERTY_ACCESS_FLAGS;
}

static uint32_t mmap_prop_size(enum doca_mmap_property p)
{
	return p == DOCA_MMAP_PROPERTY_EXPORTED || p == DOCA_MMAP_PROPERTY_FROM_EXPORT ? sizeof(uint8_t)
										     : sizeof(uint32_t);
}

doca_error_t doca_mmap_property_set(struct doca_mmap *mmap, enum doca_mmap_property property, const uint8_t *value,
				    uint32_t size)
{
	uint32_t v = 0;

	if (mmap == NULL || value == NULL || !mmap_prop_known(property) || size != mmap_prop_size(property))
		return DOCA_ERROR_INVALID_VALUE;
	if (mmap->exported || mmap->origin != DC_MMAP_LOCAL) {
		DC_ERR("properties of an exported or imported mmap cannot change");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	memcpy(&v, value, size); /* size was checked: 1 or 4 bytes */
	switch (property) {
	case DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS:
		if (!mmap->chunked)
			return DOCA_ERROR_NOT_SUPPORTED; /* a 2.x map holds exactly its memrange */
		return dc_mmap_set_max_chunks(mmap, v);
	case DOCA_MMAP_PROPERTY_MAX_NUM_DEVICES:
		return doca_mmap_set_max_num_devices(mmap, v);
	case DOCA_MMAP_PROPERTY_ACCESS_FLAGS:
		return doca_mmap_set_permissions(mmap, v);
	default:
		DC_ERR("mmap property %d is read-only", (int)property);
		return DOCA_ERROR_NOT_PERMITTED;
	}
}

static uint32_t max_chunks_of(const struct doca_mmap *m)
{
	return m->chunked ? m->max_chunks : 1; /* a 2.x or imported map: its one (remote) range */
}

doca_error_t doca_mmap_property_get(struct doca_mmap *mmap, enum doca_mmap_property property, const uint8_t *value,
				    uint32_t size)
{
	uint8_t *out = (uint8_t *)(uintptr_t)value; /* an output despite the 1.x const */
	uint32_t v = 0;

	if (mmap == NULL || value == NULL || !mmap_prop_known(property) || size != mmap_prop_size(property))
		return DOCA_ERROR_INVALID_VALUE;
	switch (property) {
	case DOCA_MMAP_PROPERTY_MAX_NUM_CHUNKS:
		v = max_chunks_of(mmap);
		break;
	case DOCA_MMAP_PROPERTY_MAX_NUM_DEVICES:
		v = mmap->max_devs;
		break;
	case DOCA_MMAP_PROPERTY_NUM_BUFS:
		v = mmap->num_bufs;
		break;
	case DOCA_MMAP_PROPERTY_EXPORTED:
		*out = mmap->exported;
		return DOCA_SUCCESS;
	case DOCA_MMAP_PROPERTY_FROM_EXPORT:
		*out = mmap->origin != DC_MMAP_LOCAL;
		return DOCA_SUCCESS;
	case DOCA_MMAP_PROPERTY_ACCESS_FLAGS:
		v = mmap->access;
		break;
	}
	memcpy(out, &v, sizeof(v));
	return DOCA_SUCCESS;
}

/* ---- populate and export ---- */

doca_error_t doca_mmap_populate(struct doca_mmap *mmap, char *addr, size_t len, size_t pg_sz,
				doca_mmap_memrange_free_cb_t *free_cb, void *opaque)
{
	if (pg_sz == 0 || (pg_sz & (pg_sz - 1)) != 0) {
		DC_ERR("page size %zu is not a power of two", pg_sz);
		return DOCA_ERROR_INVALID_VALUE;
	}
	return dc_mmap_populate(mmap, addr, len, free_cb, opaque);
}

static doca_error_t export_1x_check(const struct doca_mmap *m)
{
	if (m->exported || m->origin != DC_MMAP_LOCAL) {
		DC_ERR("an exported or imported mmap cannot be exported");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (m->state != DC_MMAP_STARTED) {
		DC_ERR("mmap must be started before export");
		return DOCA_ERROR_BAD_STATE;
	}
	if (m->chunked && m->num_chunks != 1) {
		DC_ERR("only an mmap of a single chunk can be exported (it holds %u)", m->num_chunks);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_export(struct doca_mmap *mmap, const struct doca_dev *dev, uint8_t **export_desc,
			      size_t *export_desc_len)
{
	const void *desc;
	doca_error_t ret;
	size_t len;
	uint8_t *copy;

	if (mmap == NULL || dev == NULL || export_desc == NULL || export_desc_len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = export_1x_check(mmap);
	if (ret != DOCA_SUCCESS)
		return ret;
	ret = doca_mmap_export_dpu(mmap, dev, &desc, &len);
	if (ret != DOCA_SUCCESS)
		return ret;
	/* 1.x hands the caller a descriptor it frees itself */
	copy = malloc(len);
	if (copy == NULL)
		return DOCA_ERROR_NO_MEMORY;
	memcpy(copy, desc, len);
	*export_desc = copy;
	*export_desc_len = len;
	return DOCA_SUCCESS;
}
