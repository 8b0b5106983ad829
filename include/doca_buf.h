/*
 * softdpu — DOCA buffer (DOCA 2.2 signatures).
 *
 * A doca_buf describes a region [head, head + len) of an mmap and, inside it,
 * the data segment [data, data + data_len). Buffers can be chained into a
 * linked list for scatter/gather.
 */
#ifndef DOCA_BUF_H_
#define DOCA_BUF_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_error.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

struct doca_buf;
struct doca_dev;

/** Extensions of the buffers an inventory hands out. */
enum doca_buf_extension {
	DOCA_BUF_EXTENSION_NONE = 0,
	DOCA_BUF_EXTENSION_LINKED_LIST = 1 << 0, /**< Buffers can be chained into lists */
};

/** Not supported (as in DOCA 2.0-2.2): always DOCA_ERROR_NOT_SUPPORTED; a buffer has one reference. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_refcount_add(struct doca_buf *buf, uint16_t *refcount);

/** Drops a reference; at zero the buffer returns to its pool. refcount (optional) receives the count before. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_refcount_rm(struct doca_buf *buf, uint16_t *refcount);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_get_refcount(const struct doca_buf *buf, uint16_t *refcount);

/** Length of the whole buffer region. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_get_len(const struct doca_buf *buf, size_t *len);

/** Start of the whole buffer region. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_get_head(const struct doca_buf *buf, void **head);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_get_data_len(const struct doca_buf *buf, size_t *data_len);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_get_data(const struct doca_buf *buf, void **data);

/** Sets the data segment; it must lie inside [head, head + len). */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_set_data(struct doca_buf *buf, void *data, size_t data_len);

/** Resets the data segment to empty, starting at head. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_reset_data_len(struct doca_buf *buf);

/** Memory key a device uses for this buffer (a key of the emulated device's mkey table). */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_get_mkey(const struct doca_buf *buf, struct doca_dev *dev, uint32_t *mkey);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_get_next_in_list(struct doca_buf *buf, struct doca_buf **next_buf);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_get_last_in_list(struct doca_buf *buf, struct doca_buf **last_buf);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_is_first_in_list(const struct doca_buf *buf, uint8_t *is_first);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_is_last_in_list(const struct doca_buf *buf, uint8_t *is_last);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_is_in_list(const struct doca_buf *buf, uint8_t *is_in_list);

/** Number of elements in the list that starts at buf (buf must be its head). */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_get_list_len(const struct doca_buf *buf, uint32_t *num_elements);

/** Appends list2 (a list head) after the last element of list1 (a list head). */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_chain_list(struct doca_buf *list1, struct doca_buf *list2);

/** Splits list1 before element list2, which becomes the head of its own list. */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_unchain_list(struct doca_buf *list1, struct doca_buf *list2);

/*
 * DOCA 2.2's names of the list calls above (the same lists): the next
 * element (NULL after the last); the last element (buf itself when alone);
 * whether buf is the last / the first element; the number of elements of
 * the list buf heads (DOCA_ERROR_NOT_PERMITTED when buf is not a head);
 * list2 (a head) appended to list1 (a head); list1 split before its
 * element list2 (DOCA_ERROR_INVALID_VALUE when list2 is not in list1).
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_list_next(struct doca_buf *buf, struct doca_buf **next_buf);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_list_last(struct doca_buf *buf, struct doca_buf **last_buf);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_list_is_last(const struct doca_buf *buf, bool *is_last);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_list_is_first(const struct doca_buf *buf, bool *is_first);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_list_num_elements(const struct doca_buf *buf, uint32_t *num_elements);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_list_chain(struct doca_buf *list1, struct doca_buf *list2);

__DOCA_EXPERIMENTAL
doca_error_t doca_buf_list_unchain(struct doca_buf *list1, struct doca_buf *list2);

#ifdef __cplusplus
}
#endif

/* DOCA 1.x signatures on request (docs/compat_1x.md). */
#ifdef DOCA_COMPAT_1X
#include "doca_compat_1x.h"
#endif

#endif /* DOCA_BUF_H_ */
