/*
 * fxd_window — the thread's window and outbox (libflexio-dev). The thread
 * context keeps which window, key and outbox it uses; every access through
 * the window is checked by the host (ops->window_ptr: the window's domain,
 * the key's bounds and rights) and then made directly, as device and host
 * share one address space here.
 */
#include <string.h>

#include <libflexio-dev/flexio_dev.h>

#include "fxd_int.h"

static struct fxd_ctx *fxd_ctx_of(struct flexio_dev_thread_ctx *dtctx)
{
	return (struct fxd_ctx *)(void *)dtctx;
}

/* The host address of [haddr, haddr+len) through the thread's window, or NULL when refused. */
static void *fxd_window_ptr(struct fxd_ctx *c, uint64_t haddr, uint64_t len, int write)
{
	const struct fx_dev_ops *h = fxd_host();

	if (h == NULL || h->window_ptr == NULL)
		return NULL;
	return h->window_ptr(h->proc, c->window_id, c->window_mkey, haddr, len, write);
}

flexio_dev_status_t flexio_dev_outbox_config(struct flexio_dev_thread_ctx *dtctx, uint16_t outbox_config_id)
{
	const struct fx_dev_ops *h = fxd_host();

	if (dtctx == NULL || h == NULL || h->outbox_check == NULL || h->outbox_check(h->proc, outbox_config_id) != 0)
		return FLEXIO_DEV_STATUS_FAILED;
	fxd_ctx_of(dtctx)->outbox_id = outbox_config_id;
	return FLEXIO_DEV_STATUS_SUCCESS;
}

flexio_dev_status_t flexio_dev_window_config(struct flexio_dev_thread_ctx *dtctx, uint16_t window_config_id,
					     uint32_t mkey)
{
	struct fxd_ctx *c = fxd_ctx_of(dtctx);

	if (c == NULL)
		return FLEXIO_DEV_STATUS_FAILED;
	/* Checked at each access, as the device checks a window's key when it is used. */
	c->window_id = window_config_id;
	c->window_mkey = mkey;
	return FLEXIO_DEV_STATUS_SUCCESS;
}

flexio_dev_status_t flexio_dev_window_mkey_config(struct flexio_dev_thread_ctx *dtctx, uint32_t mkey)
{
	struct fxd_ctx *c = fxd_ctx_of(dtctx);

	if (c == NULL)
		return FLEXIO_DEV_STATUS_FAILED;
	c->window_mkey = mkey;
	return FLEXIO_DEV_STATUS_SUCCESS;
}

flexio_dev_status_t flexio_dev_window_ptr_acquire(struct flexio_dev_thread_ctx *dtctx, uint64_t haddr,
						  flexio_uintptr_t **daddr)
{
	void *p;

	if (daddr == NULL)
		return FLEXIO_DEV_STATUS_FAILED;
	*daddr = NULL;
	if (dtctx == NULL)
		return FLEXIO_DEV_STATUS_FAILED;
	/* The first byte: what lies beyond it is the program's to stay inside, as on the DPA. */
	p = fxd_window_ptr(fxd_ctx_of(dtctx), haddr, 1, 0);
	if (p == NULL)
		return FLEXIO_DEV_STATUS_FAILED;
	*daddr = p;
	return FLEXIO_DEV_STATUS_SUCCESS;
}

flexio_dev_status_t flexio_dev_window_copy_from_host(struct flexio_dev_thread_ctx *dtctx, void *daddr, uint64_t haddr,
						     uint32_t size)
{
	const void *src;

	if (dtctx == NULL || daddr == NULL || size == 0)
		return FLEXIO_DEV_STATUS_FAILED;
	src = fxd_window_ptr(fxd_ctx_of(dtctx), haddr, size, 0);
	if (src == NULL)
		return FLEXIO_DEV_STATUS_FAILED;
	memmove(daddr, src, size);
	return FLEXIO_DEV_STATUS_SUCCESS;
}

flexio_dev_status_t flexio_dev_window_copy_to_host(struct flexio_dev_thread_ctx *dtctx, uint64_t haddr,
						   const void *daddr, uint32_t size)
{
	void *dst;

	if (dtctx == NULL || daddr == NULL || size == 0)
		return FLEXIO_DEV_STATUS_FAILED;
	/* The whole range is checked before a byte moves: a refused copy leaves host memory as it was. */
	dst = fxd_window_ptr(fxd_ctx_of(dtctx), haddr, size, 1);
	if (dst == NULL)
		return FLEXIO_DEV_STATUS_FAILED;
	memmove(dst, daddr, size);
	return FLEXIO_DEV_STATUS_SUCCESS;
}
