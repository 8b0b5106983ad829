/*
 * fx_process — FlexIO processes: an app's image loaded into this program
 * (a memfd of the ELF, dlopen'ed privately, so every process has its own
 * device globals and device runtime), its device heap, and RPC calls run on
 * its hart.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base_private.h"
#include "fx_evh.h"
#include "fx_int.h"
#include "fx_isolate.h"
#include "fx_queue.h"

/* A device call not supported yet: said once per process (the first one named). */
static void fx_dev_unsupported(void *proc, const char *name)
{
	struct flexio_process *p = proc;

	pthread_mutex_lock(&p->lock);
	if (!p->said_unsupported) {
		p->said_unsupported = true;
		pthread_mutex_unlock(&p->lock);
		BASE_WARN("app %s: device call %s is not supported by softdpu yet (FLEXIO_DEV_STATUS_FAILED)",
			  p->app->name, name != NULL ? name : "?");
		return;
	}
	pthread_mutex_unlock(&p->lock);
}

static int fx_load_image(struct flexio_process *p)
{
	char path[FLEXIO_MAX_NAME_LEN + 16];
	fx_dev_attach_fn attach;
	size_t off = 0;

	snprintf(path, sizeof(path), "flexio:%s", p->app->name); /* the name /proc/<pid>/maps shows */
	p->memfd = base_priv_memfd(path, MFD_CLOEXEC); /* the user's alone, like every shared file */
	if (p->memfd < 0) {
		BASE_ERR("memfd_create: %s", strerror(errno));
		return -1;
	}
	while (off < p->app->elf_size) {
		ssize_t n = write(p->memfd, (uint8_t *)p->app->elf + off, p->app->elf_size - off);

		if (n <= 0) {
			BASE_ERR("writing the image of app %s: %s", p->app->name, strerror(errno));
			return -1;
		}
		off += (size_t)n;
	}
	/*
	 * The loader records this path as the image's name, and debuggers open
	 * it from their own process: /proc/self would be theirs, /proc/<pid> is ours.
	 */
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)getpid(), p->memfd);
	/* A distinct file per process: the loader maps a copy of its own, globals included. */
	p->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (p->dl == NULL) {
		BASE_ERR("app %s: the image does not load: %s", p->app->name, dlerror());
		return -1;
	}
	attach = (fx_dev_attach_fn)dlsym(p->dl, FX_DEV_ATTACH_SYM);
	p->call = (fx_dev_call_fn)dlsym(p->dl, FX_DEV_CALL_SYM);
	if (attach == NULL || p->call == NULL) {
		BASE_ERR("app %s: the image has no FlexIO device runtime (not built by build_flexio_device.sh?)",
			 p->app->name);
		return -1;
	}
	if (attach(&p->ops) != 0) {
		BASE_ERR("app %s: the image's device runtime is of another version", p->app->name);
		return -1;
	}
	return 0;
}

static void fx_process_free(struct flexio_process *p)
{
	fx_hart_destroy(p->rpc);
	fx_evh_stop_all(p);
	fx_eth_fini(p);
	fx_queue_fini(p);
	fx_evh_fini(p);
	fx_print_fini(p);
	fx_window_fini(p);
	fx_iso_proc_fini(p); /* no device code of p runs any more */
	if (p->dl != NULL)
		dlclose(p->dl);
	if (p->memfd >= 0)
		close(p->memfd);
	if (p->err_fd >= 0)
		close(p->err_fd);
	fx_heap_fini(&p->heap);
	free(p->targets);
	if (p->own_pd && p->pd != NULL)
		ibv_dealloc_pd(p->pd);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

flexio_status flexio_process_create(struct ibv_context *ibv_ctx, struct flexio_app *app,
				    const struct flexio_process_attr *process_attr, struct flexio_process **process_ptr)
{
	struct flexio_process *p;

	if (ibv_ctx == NULL || app == NULL || process_ptr == NULL) {
		BASE_ERR("invalid argument (device context, app, process pointer)");
		return FLEXIO_STATUS_FAILED;
	}
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return FLEXIO_STATUS_FAILED;
	p->app = app;
	p->ibv_ctx = ibv_ctx;
	p->memfd = -1;
	p->pkey = -1;
	p->err_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	pthread_mutex_init(&p->lock, NULL);
	p->ops = (struct fx_dev_ops){ .version = FX_DEV_ABI_VERSION, .proc = p, .print = fx_print_put,
				      .finish = fx_hart_finish, .reschedule = fx_hart_reschedule,
				      .fatal = fx_hart_fatal, .window_ptr = fx_window_ptr,
				      .outbox_check = fx_outbox_check, .sq_ring_db = fx_dev_sq_ring_db,
				      .cq_arm = fx_dev_cq_arm, .unsupported = fx_dev_unsupported };
	p->pd = process_attr != NULL ? process_attr->pd : NULL;
	if (p->pd == NULL) {
		p->pd = ibv_alloc_pd(ibv_ctx);
		p->own_pd = true;
	}
	if (p->err_fd < 0 || p->pd == NULL || fx_heap_init(&p->heap, fx_heap_bytes()) != 0 || fx_load_image(p) != 0) {
		BASE_ERR("cannot create a process of app %s", app->name);
		fx_process_free(p);
		return FLEXIO_STATUS_FAILED;
	}
	fx_iso_proc_init(p);
	fx_app_get(app);
	*process_ptr = p;
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_process_destroy(struct flexio_process *process)
{
	struct flexio_app *app;
	uint32_t users;

	if (process == NULL)
		return FLEXIO_STATUS_FAILED;
	pthread_mutex_lock(&process->lock);
	users = process->users;
	pthread_mutex_unlock(&process->lock);
	if (users != 0) {
		BASE_ERR("the process still has %u objects (command queues): destroy them first", users);
		return FLEXIO_STATUS_FAILED;
	}
	app = process->app;
	fx_process_free(process);
	fx_app_put(app);
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_process_error_handler_set(struct flexio_process *process, const char *handler)
{
	void *fn;
	bool threads;

	if (process == NULL || handler == NULL || strnlen(handler, FLEXIO_MAX_NAME_LEN + 1) > FLEXIO_MAX_NAME_LEN) {
		BASE_ERR("invalid argument (process, handler name)");
		return FLEXIO_STATUS_FAILED;
	}
	fn = dlsym(process->dl, handler);
	if (fn == NULL) {
		BASE_ERR("no function %s in the image of app %s", handler, process->app->name);
		return FLEXIO_STATUS_FAILED;
	}
	pthread_mutex_lock(&process->lock);
	threads = process->rpc != NULL || process->evhs != NULL || process->users != 0;
	pthread_mutex_unlock(&process->lock);
	if (threads) {
		BASE_ERR("the error handler is set before the process's first thread (RPC, event handler, command queue)");
		return FLEXIO_STATUS_FAILED;
	}
	snprintf(process->err_handler, sizeof(process->err_handler), "%s", handler);
	process->err_handler_fn = fn;
	return FLEXIO_STATUS_SUCCESS;
}

/* Under p->lock: the image's addresses of f, resolved once per process. */
static struct fx_target *fx_target_locked(struct flexio_process *p, struct fx_func *f)
{
	struct fx_target *t;

	for (uint32_t i = 0; i < p->ntargets; i++)
		if (p->targets[i].f == f)
			return &p->targets[i];
	if (p->ntargets % 16 == 0) {
		t = realloc(p->targets, (p->ntargets + 16) * sizeof(*t));
		if (t == NULL)
			return NULL;
		p->targets = t;
	}
	t = &p->targets[p->ntargets];
	*t = (struct fx_target){ .f = f, .fn = dlsym(p->dl, f->name),
				 .unpack = f->pup ? dlsym(p->dl, f->unpack_name) : NULL };
	if (t->fn == NULL || (f->pup && t->unpack == NULL)) {
		BASE_ERR("app %s: %s is not in the image", p->app->name, t->fn == NULL ? f->name : f->unpack_name);
		return NULL; /* not kept: a name not in the image is refused each time */
	}
	p->ntargets++;
	return t;
}

flexio_status fx_dev_target(struct flexio_process *p, flexio_func_t *host_func, struct fx_func **fo,
			    struct fx_dev_frame *fr)
{
	struct fx_func *f = host_func != NULL ? fx_func_find(p->app, host_func) : NULL;
	struct fx_target *t;

	if (f == NULL) {
		BASE_ERR("not a function of app %s", p->app->name);
		return FLEXIO_STATUS_FAILED;
	}
	pthread_mutex_lock(&p->lock);
	t = fx_target_locked(p, f);
	if (t != NULL) {
		fr->fn = t->fn;
		fr->unpack = t->unpack;
	}
	pthread_mutex_unlock(&p->lock);
	if (t == NULL)
		return FLEXIO_STATUS_FAILED;
	fr->kind = f->pup ? FX_DEV_RPC_UNPACK : FX_DEV_RPC_RAW;
	*fo = f;
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_process_call(struct flexio_process *process, flexio_func_t *host_func, uint64_t *func_ret, ...)
{
	struct fx_dev_frame fr = { 0 };
	uint8_t small[256], *args = small;
	struct fx_func *f;
	flexio_status st;
	va_list ap;

	if (process == NULL || host_func == NULL) {
		BASE_ERR("invalid argument (process, function)");
		return FLEXIO_STATUS_FAILED;
	}
	st = fx_dev_target(process, host_func, &f, &fr);
	if (st != FLEXIO_STATUS_SUCCESS)
		return st;
	pthread_mutex_lock(&process->lock);
	if (process->rpc == NULL)
		process->rpc = fx_hart_new(process);
	pthread_mutex_unlock(&process->lock);
	if (process->rpc == NULL)
		return FLEXIO_STATUS_FAILED;
	if (f->pup && f->argbuf_size > sizeof(small) && (args = calloc(1, f->argbuf_size)) == NULL)
		return FLEXIO_STATUS_FAILED;
	va_start(ap, func_ret);
	if (f->pup) {
		memset(args, 0, f->argbuf_size);
		f->pack(args, ap);
	} else {
		fr.arg = va_arg(ap, uint64_t);
	}
	va_end(ap);
	st = fx_hart_run(process->rpc, &fr, args, f->pup ? f->argbuf_size : 0, f->name, fx_call_timeout_ms(),
			 func_ret);
	if (args != small)
		free(args);
	return st;
}

/* ---- the device heap ---- */

flexio_status flexio_buf_dev_alloc(struct flexio_process *process, size_t buff_bsize, flexio_uintptr_t *dest_daddr_p)
{
	if (dest_daddr_p != NULL)
		*dest_daddr_p = 0;
	if (process == NULL || dest_daddr_p == NULL || buff_bsize == 0) {
		BASE_ERR("invalid argument (process, size, address pointer)");
		return FLEXIO_STATUS_FAILED;
	}
	pthread_mutex_lock(&process->lock);
	*dest_daddr_p = fx_heap_alloc(&process->heap, buff_bsize);
	pthread_mutex_unlock(&process->lock);
	if (*dest_daddr_p == 0) {
		BASE_ERR("device heap of app %s: no room for %zu bytes", process->app->name, buff_bsize);
		return FLEXIO_STATUS_FAILED;
	}
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_buf_dev_free(struct flexio_process *process, flexio_uintptr_t daddr)
{
	int rc;

	if (process == NULL)
		return FLEXIO_STATUS_FAILED;
	if (daddr == 0)
		return FLEXIO_STATUS_SUCCESS;
	pthread_mutex_lock(&process->lock);
	rc = fx_heap_free(&process->heap, daddr);
	pthread_mutex_unlock(&process->lock);
	if (rc != 0) {
		BASE_ERR("%#llx is not a device buffer of this process", (unsigned long long)daddr);
		return FLEXIO_STATUS_FAILED;
	}
	return FLEXIO_STATUS_SUCCESS;
}

bool fx_dev_span(struct flexio_process *p, flexio_uintptr_t daddr, uint64_t len, uint64_t align)
{
	bool ok;

	if (daddr % align != 0)
		return false;
	pthread_mutex_lock(&p->lock);
	ok = fx_heap_owns(&p->heap, daddr, len);
	pthread_mutex_unlock(&p->lock);
	return ok;
}

/* fx_dev_span for a host copy: refused with a log line naming the range. */
static bool fx_dev_range(struct flexio_process *p, flexio_uintptr_t daddr, size_t len)
{
	if (fx_dev_span(p, daddr, len, 1))
		return true;
	BASE_ERR("[%#llx, +%zu) is not inside a device buffer of this process", (unsigned long long)daddr, len);
	return false;
}

flexio_status flexio_buf_dev_memset(struct flexio_process *process, int value, size_t buff_bsize,
				    flexio_uintptr_t dest_daddr)
{
	if (process == NULL || buff_bsize == 0 || !fx_dev_range(process, dest_daddr, buff_bsize))
		return FLEXIO_STATUS_FAILED;
	memset((void *)(uintptr_t)dest_daddr, value, buff_bsize);
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_host2dev_memcpy(struct flexio_process *process, void *src_haddr, size_t buff_bsize,
				     flexio_uintptr_t dest_daddr)
{
	if (process == NULL || src_haddr == NULL || buff_bsize == 0 || !fx_dev_range(process, dest_daddr, buff_bsize))
		return FLEXIO_STATUS_FAILED;
	memcpy((void *)(uintptr_t)dest_daddr, src_haddr, buff_bsize);
	return FLEXIO_STATUS_SUCCESS;
}

flexio_status flexio_copy_from_host(struct flexio_process *process, void *src_haddr, size_t buff_bsize,
				    flexio_uintptr_t *dest_daddr_p)
{
	flexio_status st;

	if (src_haddr == NULL) {
		if (dest_daddr_p != NULL)
			*dest_daddr_p = 0;
		return FLEXIO_STATUS_FAILED;
	}
	st = flexio_buf_dev_alloc(process, buff_bsize, dest_daddr_p);
	if (st == FLEXIO_STATUS_SUCCESS)
		memcpy((void *)(uintptr_t)*dest_daddr_p, src_haddr, buff_bsize);
	return st;
}

struct ibv_pd *flexio_process_get_pd(struct flexio_process *process)
{
	return process != NULL ? process->pd : NULL;
}
