/*
 * doca_bufpool — fixed-size buffers carved from one started mmap.
 */
#include <stdlib.h>

#include "dc_core.h"
#include "dc_log.h"
#include "doca_bufpool.h"

struct doca_bufpool {
	struct dc_buf_src src;
	bool started;
	union doca_data user_data;
	struct doca_mmap *mmap;
	uint8_t *first;	    /* address of element 0 */
	size_t stride;	    /* element size rounded up to the alignment */
	size_t elem_size;
	size_t alignment;
	struct doca_buf *bufs;
};

static bool is_pow2_or_zero(size_t v)
{
	return (v & (v - 1)) == 0;
}

/* Lays the elements out in the mmap's range; false when they do not fit. */
static bool layout(struct doca_bufpool *bp, size_t num, const struct doca_mmap *mmap)
{
	size_t align = bp->alignment == 0 ? 1 : bp->alignment;
	uintptr_t base = (uintptr_t)mmap->addr, end = base + mmap->len;
	uintptr_t first = (base + align - 1) & ~(uintptr_t)(align - 1);

	bp->stride = (bp->elem_size + align - 1) & ~(align - 1);
	if (first < base || first > end || bp->stride < bp->elem_size)
		return false;
	if (num > (end - first) / bp->stride)
		return false;
	bp->first = (uint8_t *)first;
	return true;
}

doca_error_t doca_bufpool_create(const union doca_data *user_data, size_t num_elements, uint32_t extensions,
				 size_t element_size, size_t element_alignment, const struct doca_mmap *mmap,
				 struct doca_bufpool **bufpool)
{
	struct doca_bufpool *bp;

	if (bufpool == NULL || mmap == NULL || num_elements == 0 || num_elements > UINT32_MAX || element_size == 0 ||
	    !is_pow2_or_zero(element_alignment) || (extensions & ~(uint32_t)DOCA_BUF_EXTENSION_LINKED_LIST) != 0)
		return DOCA_ERROR_INVALID_VALUE;
	/* the layout needs the range now; the mmap itself must be started by doca_bufpool_start() */
	if (!mmap->has_range) {
		DC_ERR("bufpool needs an mmap with a memrange");
		return DOCA_ERROR_BAD_STATE;
	}
	bp = calloc(1, sizeof(*bp));
	if (bp == NULL)
		return DOCA_ERROR_NO_MEMORY;
	bp->elem_size = element_size;
	bp->alignment = element_alignment;
	if (!layout(bp, num_elements, mmap)) {
		DC_ERR("%zu elements of %zu bytes do not fit in the mmap", num_elements, element_size);
		free(bp);
		return DOCA_ERROR_INVALID_VALUE;
	}
	bp->bufs = dc_bufs_new(num_elements);
	if (bp->bufs == NULL) {
		free(bp);
		return DOCA_ERROR_NO_MEMORY;
	}
	dc_buf_src_init(&bp->src, bp->bufs, (uint32_t)num_elements, extensions);
	bp->mmap = (struct doca_mmap *)mmap;
	bp->mmap->num_holders++; /* the mmap must outlive the pool */
	if (user_data != NULL)
		bp->user_data = *user_data;
	*bufpool = bp;
	return DOCA_SUCCESS;
}

doca_error_t doca_bufpool_destroy(struct doca_bufpool *bufpool)
{
	if (bufpool == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (bufpool->src.num_free != bufpool->src.num_total)
		return DOCA_ERROR_IN_USE;
	bufpool->mmap->num_holders--;
	free(bufpool->bufs);
	free(bufpool);
	return DOCA_SUCCESS;
}

doca_error_t doca_bufpool_start(struct doca_bufpool *bufpool)
{
	if (bufpool == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (bufpool->started)
		return DOCA_ERROR_BAD_STATE;
	if (bufpool->mmap->state != DC_MMAP_STARTED) {
		DC_ERR("the mmap of the bufpool is not started");
		return DOCA_ERROR_BAD_STATE;
	}
	bufpool->started = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_bufpool_stop(struct doca_bufpool *bufpool)
{
	if (bufpool == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!bufpool->started)
		return DOCA_ERROR_BAD_STATE;
	bufpool->started = false;
	return DOCA_SUCCESS;
}

doca_error_t doca_bufpool_get_num_elements(const struct doca_bufpool *bufpool, uint32_t *num_of_elements)
{
	if (bufpool == NULL || num_of_elements == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*num_of_elements = bufpool->src.num_total;
	return DOCA_SUCCESS;
}

doca_error_t doca_bufpool_get_num_free_elements(const struct doca_bufpool *bufpool, uint32_t *num_of_free_elements)
{
	if (bufpool == NULL || num_of_free_elements == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*num_of_free_elements = bufpool->src.num_free;
	return DOCA_SUCCESS;
}

doca_error_t doca_bufpool_get_element_alignment(const struct doca_bufpool *bufpool, size_t *element_alignment)
{
	if (bufpool == NULL || element_alignment == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*element_alignment = bufpool->alignment;
	return DOCA_SUCCESS;
}

doca_error_t doca_bufpool_get_user_data(const struct doca_bufpool *bufpool, union doca_data *user_data)
{
	if (bufpool == NULL || user_data == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = bufpool->user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_bufpool_buf_alloc(struct doca_bufpool *bufpool, struct doca_buf **buf)
{
	struct doca_buf *b;
	uint8_t *addr;

	if (bufpool == NULL || buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!bufpool->started || bufpool->mmap->state != DC_MMAP_STARTED)
		return DOCA_ERROR_BAD_STATE;
	if (bufpool->src.num_free == 0)
		return DOCA_ERROR_NO_MEMORY; /* documented code for an exhausted pool */
	/* Each descriptor owns one fixed slot: its index in the descriptor array. */
	b = bufpool->src.free_list;
	addr = bufpool->first + (size_t)(b - bufpool->bufs) * bufpool->stride;
	*buf = dc_buf_take(&bufpool->src, bufpool->mmap, addr, bufpool->elem_size, addr, 0);
	return DOCA_SUCCESS;
}
