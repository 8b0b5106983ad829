/*
 * fxd_rt — the device runtime, linked into every device image (so every
 * FlexIO process has its own copy of this state): the entry the host's
 * harts call device code through, the current DPA thread's context, and the
 * thread, print and error calls of libflexio-dev. It reaches the host only
 * through the operations table the host hands it at load (fx_dev_abi.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <libflexio-dev/flexio_dev.h>
#include <libflexio-dev/flexio_dev_err.h>

#include "fx_dev_abi.h"
#include "fxd_int.h"

static const struct fx_dev_ops *fxd_ops;
static __thread struct fx_dev_frame *fxd_frame;

__attribute__((visibility("default"))) int __flexio_dev_rt_attach(const struct fx_dev_ops *ops)
{
	if (ops == NULL || ops->version != FX_DEV_ABI_VERSION)
		return -1;
	fxd_ops = ops;
	return 0;
}

__attribute__((visibility("default"))) void __flexio_dev_rt_call(struct fx_dev_frame *f)
{
	struct fxd_ctx *c = f->ctx;

	_Static_assert(sizeof(struct fxd_ctx) <= FX_DEV_CTX_BYTES, "the host keeps room for the context");
	c->thread_id = f->thread_id;
	c->tls = f->tls;
	c->frame = f;
	fxd_frame = f;
	switch (f->kind) {
	case FX_DEV_RPC_UNPACK:
		f->ret = ((flexio_dev_arg_unpack_func_t *)f->unpack)(f->argbuf, f->fn);
		break;
	case FX_DEV_RPC_RAW:
		f->ret = ((flexio_dev_rpc_handler_t *)f->fn)(f->arg);
		break;
	case FX_DEV_HANDLER:
		((flexio_dev_event_handler_t *)f->fn)(f->arg);
		f->ret = 0;
		break;
	case FX_DEV_ERR_HANDLER:
		/* As the SDK's: the failed thread's context and the error, which flexio_dev_get_errno also reads. */
		fxd_set_errno(f->arg);
		((void (*)(uint64_t, uint64_t))f->fn)((uint64_t)(uintptr_t)c, f->arg);
		f->ret = 0;
		break;
	default:
		f->ret = 0;
		break;
	}
	fxd_frame = NULL;
}

struct fxd_ctx *fxd_cur(void)
{
	return fxd_frame != NULL ? fxd_frame->ctx : NULL;
}

const struct fx_dev_ops *fxd_host(void)
{
	return fxd_ops;
}

int flexio_dev_get_thread_ctx(struct flexio_dev_thread_ctx **dtctx)
{
	if (dtctx == NULL || fxd_frame == NULL)
		return -1;
	*dtctx = (struct flexio_dev_thread_ctx *)fxd_frame->ctx;
	return 0;
}

uint32_t flexio_dev_get_thread_id(struct flexio_dev_thread_ctx *dtctx)
{
	return dtctx != NULL ? ((struct fxd_ctx *)(void *)dtctx)->thread_id : 0;
}

flexio_uintptr_t flexio_dev_get_thread_local_storage(struct flexio_dev_thread_ctx *dtctx)
{
	return dtctx != NULL ? ((struct fxd_ctx *)(void *)dtctx)->tls : 0;
}

void flexio_dev_finish(void)
{
	if (fxd_frame != NULL)
		fxd_ops->finish(fxd_frame->host_thread);
	__builtin_trap(); /* not on a hart: nothing to return to */
}

void flexio_dev_reschedule(void)
{
	if (fxd_frame != NULL)
		fxd_ops->reschedule(fxd_frame->host_thread);
	__builtin_trap();
}

int flexio_dev_print(const char *format, ...)
{
	char buf[FXD_PRINT_MAX];
	va_list ap;
	int n;

	va_start(ap, format);
	n = vsnprintf(buf, sizeof(buf), format, ap);
	va_end(ap);
	if (n < 0 || fxd_ops == NULL)
		return -1;
	if ((size_t)n >= sizeof(buf))
		n = sizeof(buf) - 1; /* the SDK's print is bounded too */
	return (int)fxd_ops->print(fxd_ops->proc, buf, (size_t)n);
}

int flexio_dev_puts(struct flexio_dev_thread_ctx *dtctx, char *str)
{
	(void)dtctx;
	if (str == NULL || fxd_ops == NULL)
		return -1;
	return (int)fxd_ops->print(fxd_ops->proc, str, strlen(str));
}

/* ---- device errors ---- */

static __thread uint64_t fxd_errno;

void flexio_dev_error(uint8_t error)
{
	if (fxd_frame != NULL)
		fxd_ops->fatal(fxd_frame->host_thread, error);
	__builtin_trap();
}

uint64_t flexio_dev_get_errno(struct flexio_dev_thread_ctx *dtctx)
{
	(void)dtctx;
	return fxd_errno;
}

void flexio_dev_rst_errno(struct flexio_dev_thread_ctx *dtctx)
{
	(void)dtctx;
	fxd_errno = 0;
}

uint64_t flexio_dev_get_and_rst_errno(struct flexio_dev_thread_ctx *dtctx)
{
	uint64_t e = fxd_errno;

	(void)dtctx;
	fxd_errno = 0;
	return e;
}

void fxd_set_errno(uint64_t e)
{
	fxd_errno = e;
}
