/*
 * DOCA 2.2's names of the buffer-list calls (doca_buf_list_*), beside 2.0's
 * (buf.c): the same lists, the flags as bool where 2.2 gives bool.
 */
#include "dc_core.h"
#include "doca_buf.h"

doca_error_t doca_buf_list_next(struct doca_buf *buf, struct doca_buf **next_buf)
{
	return doca_buf_get_next_in_list(buf, next_buf);
}

doca_error_t doca_buf_list_last(struct doca_buf *buf, struct doca_buf **last_buf)
{
	return doca_buf_get_last_in_list(buf, last_buf);
}

/* A 2.0 flag call's answer as 2.2's bool. */
static doca_error_t buf_list_flag(doca_error_t (*get)(const struct doca_buf *, uint8_t *), const struct doca_buf *buf,
				  bool *out)
{
	uint8_t v = 0;
	doca_error_t err;

	if (out == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	err = get(buf, &v);
	if (err == DOCA_SUCCESS)
		*out = v != 0;
	return err;
}

doca_error_t doca_buf_list_is_last(const struct doca_buf *buf, bool *is_last)
{
	return buf_list_flag(doca_buf_is_last_in_list, buf, is_last);
}

doca_error_t doca_buf_list_is_first(const struct doca_buf *buf, bool *is_first)
{
	return buf_list_flag(doca_buf_is_first_in_list, buf, is_first);
}

doca_error_t doca_buf_list_num_elements(const struct doca_buf *buf, uint32_t *num_elements)
{
	return doca_buf_get_list_len(buf, num_elements);
}

doca_error_t doca_buf_list_chain(struct doca_buf *list1, struct doca_buf *list2)
{
	return doca_buf_chain_list(list1, list2);
}

doca_error_t doca_buf_list_unchain(struct doca_buf *list1, struct doca_buf *list2)
{
	return doca_buf_unchain_list(list1, list2);
}
