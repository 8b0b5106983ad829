/*
 * doca_buf — data segment, reference counting and linked lists.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dc_core.h"
#include "dc_log.h"
#include "doca_buf.h"

struct doca_buf *dc_bufs_new(size_t n)
{
	struct doca_buf *bufs;

	if (n == 0 || n > SIZE_MAX / sizeof(*bufs))
		return NULL;
	bufs = aligned_alloc(64, n * sizeof(*bufs));
	if (bufs != NULL)
		memset(bufs, 0, n * sizeof(*bufs));
	return bufs;
}

void dc_buf_src_init(struct dc_buf_src *src, struct doca_buf *bufs, uint32_t n, uint32_t extensions)
{
	src->free_list = NULL;
	for (uint32_t i = n; i-- > 0;) {
		bufs[i].src = src;
		bufs[i].next = src->free_list;
		src->free_list = &bufs[i];
	}
	src->num_total = n;
	src->num_free = n;
	src->extensions = extensions;
}

/* A live buffer has references; a pointer to a free one is a use after free. */
static inline bool live(const struct doca_buf *buf)
{
	return buf != NULL && buf->refcount != 0;
}

/*
 * DOCA 2.0-2.2 document this call as not supported: a buffer has exactly one
 * reference, its holder's, so releasing a list head releases the whole list.
 */
doca_error_t doca_buf_refcount_add(struct doca_buf *buf, uint16_t *refcount)
{
	(void)buf;
	(void)refcount;
	DC_ERR("doca_buf_refcount_add is not supported (as documented for DOCA 2.0-2.2)");
	return DOCA_ERROR_NOT_SUPPORTED;
}

/* Gives back every element of the list headed by buf, whose reference just went. */
static void release_list(struct doca_buf *buf)
{
	struct doca_buf *next;

	for (; buf != NULL; buf = next) {
		next = buf->next;
		dc_buf_give_back(buf);
	}
}

doca_error_t doca_buf_refcount_rm(struct doca_buf *buf, uint16_t *refcount)
{
	if (!live(buf))
		return DOCA_ERROR_INVALID_VALUE;
	if (!buf->is_head) {
		DC_ERR("buffer is an inner element of a list; release the list head");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (refcount != NULL)
		*refcount = buf->refcount;
	if (--buf->refcount == 0)
		release_list(buf);
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_refcount(const struct doca_buf *buf, uint16_t *refcount)
{
	if (!live(buf) || refcount == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*refcount = buf->refcount;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_len(const struct doca_buf *buf, size_t *len)
{
	if (!live(buf) || len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*len = buf->len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_head(const struct doca_buf *buf, void **head)
{
	if (!live(buf) || head == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*head = buf->head;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_data_len(const struct doca_buf *buf, size_t *data_len)
{
	if (!live(buf) || data_len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*data_len = buf->data_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data)
{
	if (!live(buf) || data == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*data = buf->data;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_set_data(struct doca_buf *buf, void *data, size_t data_len)
{
	uintptr_t d = (uintptr_t)data, h;

	if (!live(buf) || data == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	h = (uintptr_t)buf->head;
	if (d < h || data_len > buf->len || d - h > buf->len - data_len) {
		DC_ERR("data segment lies outside the buffer");
		return DOCA_ERROR_INVALID_VALUE;
	}
	buf->data = data;
	buf->data_len = data_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_reset_data_len(struct doca_buf *buf)
{
	if (!live(buf))
		return DOCA_ERROR_INVALID_VALUE;
	buf->data = buf->head;
	buf->data_len = 0;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_mkey(const struct doca_buf *buf, struct doca_dev *dev, uint32_t *mkey)
{
	uint32_t key;

	if (!live(buf) || dev == NULL || mkey == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	key = dc_mmap_mkey(buf->mmap, dev);
	/* Memory of an RDMA export is named by the exporter's key: what a verbs work request carries as rkey. */
	if (key != 0 && buf->mmap->origin == DC_MMAP_FROM_EXPORT_RDMA)
		key = buf->mmap->devs[0].rkey;
	if (key == 0) {
		DC_ERR("buffer's mmap is not registered with this device");
		return DOCA_ERROR_NOT_FOUND;
	}
	*mkey = key;
	return DOCA_SUCCESS;
}

/* ---- lists ---- */

doca_error_t doca_buf_get_next_in_list(struct doca_buf *buf, struct doca_buf **next_buf)
{
	if (!live(buf) || next_buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*next_buf = buf->next;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_last_in_list(struct doca_buf *buf, struct doca_buf **last_buf)
{
	struct doca_buf *el;

	if (!live(buf) || last_buf == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	for (el = buf; el->next != NULL; el = el->next)
		;
	*last_buf = el;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_first_in_list(const struct doca_buf *buf, uint8_t *is_first)
{
	if (!live(buf) || is_first == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*is_first = buf->is_head;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_last_in_list(const struct doca_buf *buf, uint8_t *is_last)
{
	if (!live(buf) || is_last == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*is_last = buf->next == NULL;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_is_in_list(const struct doca_buf *buf, uint8_t *is_in_list)
{
	if (!live(buf) || is_in_list == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*is_in_list = !buf->is_head || buf->next != NULL;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_get_list_len(const struct doca_buf *buf, uint32_t *num_elements)
{
	if (!live(buf) || num_elements == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!buf->is_head) {
		DC_ERR("list length is kept by the list head");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	*num_elements = buf->list_len;
	return DOCA_SUCCESS;
}

static struct doca_buf *last_of(struct doca_buf *buf)
{
	while (buf->next != NULL)
		buf = buf->next;
	return buf;
}

doca_error_t doca_buf_chain_list(struct doca_buf *list1, struct doca_buf *list2)
{
	if (!live(list1) || !live(list2) || list1 == list2)
		return DOCA_ERROR_INVALID_VALUE;
	if (!list1->is_head || !list2->is_head) {
		DC_ERR("both arguments must be list heads");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if ((uint64_t)list1->list_len + list2->list_len > UINT32_MAX)
		return DOCA_ERROR_TOO_BIG;
	last_of(list1)->next = list2;
	list1->list_len += list2->list_len;
	list2->is_head = false;
	return DOCA_SUCCESS;
}

doca_error_t doca_buf_unchain_list(struct doca_buf *list1, struct doca_buf *list2)
{
	struct doca_buf *prev;
	uint32_t k = 1;

	if (!live(list1) || !live(list2) || list1 == list2 || !list1->is_head)
		return DOCA_ERROR_INVALID_VALUE;
	for (prev = list1; prev->next != NULL && prev->next != list2; prev = prev->next)
		k++;
	if (prev->next != list2) {
		DC_ERR("second buffer is not an element of the first list");
		return DOCA_ERROR_INVALID_VALUE;
	}
	prev->next = NULL;
	list2->is_head = true;
	list2->list_len = list1->list_len - k;
	list1->list_len = k;
	return DOCA_SUCCESS;
}
