/*
 * doca_buf_inventory — a fixed pool of buffer descriptors, any mmap.
 */
#include <stdlib.h>

#include "dc_core.h"
#include "dc_log.h"
#include "doca_buf_inventory.h"

#define DC_INVENTORY_MAX_ELEMENTS (1u << 26)

struct doca_buf_inventory {
	struct dc_buf_src src; /* first: buffers point back at it */
	bool started;
	union doca_data user_data;
	struct doca_buf *bufs;
};

doca_error_t doca_buf_inventory_create(const union doca_data *user_data, size_t num_elements, uint32_t extensions,
				       struct doca_buf_inventory **inventory)
{
	struct doca_buf_inventory *inv;

	if (inventory == NULL || num_elements == 0 || num_elements > DC_INVENTORY_MAX_ELEMENTS ||
	    (extensions & ~(uint32_t)DOCA_BUF_EXTENSION_LINKED_LIST) != 0) {
		DC_ERR("invalid inventory arguments");
		return DOCA_ERROR_INVALID_VALUE;
	}
	inv = calloc(1, sizeof(*inv));
	if (inv == NULL)
		return DOCA_ERROR_NO_MEMORY;
	inv->bufs = dc_bufs_new(num_elements);
	if (inv->bufs == NULL) {
		free(inv);
		return DOCA_ERROR_NO_MEMORY;
	}
	dc_buf_src_init(&inv->src, inv->bufs, (uint32_t)num_elements, extensions);
	if (user_data != NULL)
		inv->user_data = *user_data;
	*inventory = inv;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_destroy(struct doca_buf_inventory *inventory)
{
	if (inventory == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (inventory->src.num_free != inventory->src.num_total) {
		DC_ERR("%u buffers are still in use", inventory->src.num_total - inventory->src.num_free);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	free(inventory->bufs);
	free(inventory);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_start(struct doca_buf_inventory *inventory)
{
	if (inventory == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (inventory->started)
		return DOCA_ERROR_BAD_STATE;
	inventory->started = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_stop(struct doca_buf_inventory *inventory)
{
	if (inventory == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!inventory->started)
		return DOCA_ERROR_BAD_STATE;
	inventory->started = false;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_get_num_elements(const struct doca_buf_inventory *inventory, uint32_t *num_of_elements)
{
	if (inventory == NULL || num_of_elements == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*num_of_elements = inventory->src.num_total;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_get_num_free_elements(const struct doca_buf_inventory *inventory,
						      uint32_t *num_of_free_elements)
{
	if (inventory == NULL || num_of_free_elements == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*num_of_free_elements = inventory->src.num_free;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_get_user_data(const struct doca_buf_inventory *inventory, union doca_data *user_data)
{
	if (inventory == NULL || user_data == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = inventory->user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_get_buf_extensions(const struct doca_buf_inventory *inventory, uint32_t *extensions)
{
	if (inventory == NULL || extensions == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*extensions = inventory->src.extensions;
	return DOCA_SUCCESS;
}

/* The common checks of every allocation; the data path stays branch-light. */
static doca_error_t take_check(const struct doca_buf_inventory *inv, const struct doca_mmap *mmap, void *addr,
			       size_t len)
{
	if (inv == NULL || mmap == NULL || addr == NULL || len == 0)
		return DOCA_ERROR_INVALID_VALUE;
	if (!inv->started || mmap->state != DC_MMAP_STARTED)
		return DOCA_ERROR_BAD_STATE;
	if (inv->src.num_free == 0)
		return DOCA_ERROR_NO_MEMORY;
	if (!dc_mmap_holds(mmap, addr, len)) {
		DC_ERR("buffer range is outside the mmap (or not inside one of its chunks)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_buf_by_args(struct doca_buf_inventory *inventory, struct doca_mmap *mmap, void *addr,
					    size_t len, void *data, size_t data_len, struct doca_buf **buf)
{
	doca_error_t ret = take_check(inventory, mmap, addr, len);
	uintptr_t d = (uintptr_t)data, a = (uintptr_t)addr;

	if (ret != DOCA_SUCCESS)
		return ret;
	if (buf == NULL || data == NULL || d < a || data_len > len || d - a > len - data_len)
		return DOCA_ERROR_INVALID_VALUE;
	*buf = dc_buf_take(&inventory->src, mmap, addr, len, data, data_len);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_buf_by_addr(struct doca_buf_inventory *inventory, struct doca_mmap *mmap, void *addr,
					    size_t len, struct doca_buf **buf)
{
	doca_error_t ret = take_check(inventory, mmap, addr, len);

	if (ret != DOCA_SUCCESS)
		return ret;
	if (buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*buf = dc_buf_take(&inventory->src, mmap, addr, len, addr, 0);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_inventory_buf_by_data(struct doca_buf_inventory *inventory, struct doca_mmap *mmap, void *data,
					    size_t data_len, struct doca_buf **buf)
{
	doca_error_t ret = take_check(inventory, mmap, data, data_len);

	if (ret != DOCA_SUCCESS)
		return ret;
	if (buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*buf = dc_buf_take(&inventory->src, mmap, data, data_len, data, data_len);
	return DOCA_SUCCESS;
}

/* Undoes a partial list duplication. */
static void drop_list(struct doca_buf *head)
{
	if (head != NULL)
		doca_buf_refcount_rm(head, NULL);
}

doca_error_t doca_buf_inventory_buf_dup(struct doca_buf_inventory *inventory, const struct doca_buf *src_buf,
					struct doca_buf **dst_buf)
{
	struct doca_buf *head = NULL, *tail = NULL, *copy;
	const struct doca_buf *el;

	if (inventory == NULL || src_buf == NULL || dst_buf == NULL || src_buf->refcount == 0)
		return DOCA_ERROR_INVALID_VALUE;
	if (!inventory->started) {
		DC_ERR("buffers are duplicated into a started inventory only");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (src_buf->src->extensions != inventory->src.extensions) {
		DC_ERR("the buffer's inventory and the target inventory have different extensions");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (src_buf->is_head && inventory->src.num_free < src_buf->list_len)
		return DOCA_ERROR_NO_MEMORY;
	for (el = src_buf; el != NULL; el = el->next) {
		if (inventory->src.num_free == 0 || el->mmap->state != DC_MMAP_STARTED) {
			/* decide before drop_list() gives the partial copy back */
			doca_error_t ret = inventory->src.num_free == 0 ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_NOT_PERMITTED;

			drop_list(head);
			return ret;
		}
		copy = dc_buf_take(&inventory->src, el->mmap, el->head, el->len, el->data, el->data_len);
		if (head == NULL) {
			head = copy;
		} else {
			tail->next = copy;
			head->list_len++;
			copy->is_head = false;
		}
		tail = copy;
	}
	*dst_buf = head;
	return DOCA_SUCCESS;
}
