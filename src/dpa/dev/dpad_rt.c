/*
 * dpad_rt — the DOCA DPA device library (libdoca_dpa_dev.a), linked whole
 * into every image dpacc builds for DOCA DPA: the entry each kernel thread
 * runs, the thread's rank, and printing.
 *
 * The kernel is named in the launch by its device function and unpacker;
 * they are looked up in this image (the one the entry itself is in), as the
 * FlexIO runtime finds device functions.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <doca_dpa_dev.h>
#include <libflexio-dev/flexio_dev.h>
#include <libflexio-dev/flexio_dev_err.h>

#include "dpa_abi.h"
#include "dpad_int.h"


static __thread uint32_t dpad_rank, dpad_nthreads;

typedef uint64_t(dpad_unpack_fn)(void *argbuf, void *fn);

uint64_t __doca_dpa_rt_entry(uint64_t arg) __attribute__((visibility("default")));

static uint64_t dpad_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Looks name up in the image this function is in (a reference dropped at once: the process unloads it). */
static void *dpad_lookup(const char *name)
{
	Dl_info info;
	void *h, *sym;

	if (dladdr((void *)(uintptr_t)&__doca_dpa_rt_entry, &info) == 0 || info.dli_fname == NULL)
		return NULL;
	h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
	if (h == NULL)
		return NULL;
	sym = dlsym(h, name);
	dlclose(h);
	return sym;
}

/*
 * Kernels found so far, by name: a lookup takes the loader's lock (tens of
 * microseconds), so each kernel is looked up once per image (this table is
 * the image's own, as every global of device code is its process's).
 */
#define DPAD_KERNELS 64

struct dpad_kernel {
	char name[DPA_NAME_MAX];
	void *fn, *unpack;
};

static struct dpad_kernel dpad_kernels[DPAD_KERNELS];
static _Atomic uint32_t dpad_nkernels; /* entries published (filled before the count moves) */
static atomic_flag dpad_kernels_lock = ATOMIC_FLAG_INIT;

static const struct dpad_kernel *dpad_cached(const char *name)
{
	uint32_t n = atomic_load_explicit(&dpad_nkernels, memory_order_acquire);

	for (uint32_t i = 0; i < n; i++)
		if (strcmp(dpad_kernels[i].name, name) == 0)
			return &dpad_kernels[i];
	return NULL;
}

/* The kernel l names, its device function and unpacker; NULL when the image has no such function. */
static const struct dpad_kernel *dpad_resolve(const struct dpa_launch *l)
{
	static __thread struct dpad_kernel miss; /* a full table: this thread's own copy */
	const struct dpad_kernel *k = dpad_cached(l->fn);
	struct dpad_kernel nk;
	uint32_t n;

	if (k != NULL)
		return k;
	strncpy(nk.name, l->fn, sizeof(nk.name) - 1);
	nk.name[sizeof(nk.name) - 1] = '\0';
	nk.fn = dpad_lookup(l->fn);
	nk.unpack = dpad_lookup(l->unpack);
	if (nk.fn == NULL || nk.unpack == NULL)
		return NULL;
	while (atomic_flag_test_and_set_explicit(&dpad_kernels_lock, memory_order_acquire))
		;
	k = dpad_cached(l->fn);
	n = atomic_load_explicit(&dpad_nkernels, memory_order_relaxed);
	if (k == NULL && n < DPAD_KERNELS) {
		dpad_kernels[n] = nk;
		atomic_store_explicit(&dpad_nkernels, n + 1, memory_order_release);
		k = &dpad_kernels[n];
	}
	atomic_flag_clear_explicit(&dpad_kernels_lock, memory_order_release);
	if (k == NULL) {
		miss = nk;
		k = &miss;
	}
	return k;
}

static void dpad_complete(uint64_t h, uint64_t val, uint32_t add)
{
	if (h == 0)
		return;
	if (add)
		doca_dpa_dev_sync_event_update_add(h, val);
	else
		doca_dpa_dev_sync_event_update_set(h, val);
}

uint64_t __doca_dpa_rt_entry(uint64_t arg)
{
	struct dpa_thread *t = (struct dpa_thread *)(uintptr_t)arg;
	struct dpa_launch *l = t->l;
	uint64_t none = 0, comp_h = l->comp_h, comp_val = l->comp_val;
	uint32_t comp_add = l->comp_add;
	const struct dpad_kernel *k;

	if (l->wait_h != 0)
		doca_dpa_dev_sync_event_wait_gt(l->wait_h, l->wait_thr, UINT64_MAX);
	atomic_compare_exchange_strong(&l->start_ns, &none, dpad_now_ns());
	k = dpad_resolve(l);
	if (k == NULL)
		flexio_dev_error(DPAD_ERR_RESOLVE);
	dpad_rank = t->rank;
	dpad_nthreads = l->nthreads;
	((dpad_unpack_fn *)(uintptr_t)k->unpack)(l->argbuf, k->fn);
	/* The last thread out completes the launch (the host may free it from then on: copies taken before). */
	if (atomic_fetch_sub_explicit(&l->left, 1, memory_order_acq_rel) == 1)
		dpad_complete(comp_h, comp_val, comp_add);
	return 0;
}

unsigned int doca_dpa_dev_thread_rank(void)
{
	return dpad_rank;
}

unsigned int doca_dpa_dev_num_threads(void)
{
	return dpad_nthreads;
}

void doca_dpa_dev_printf(const char *format, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, format);
	vsnprintf(buf, sizeof(buf), format, ap);
	va_end(ap);
	flexio_dev_print("%s", buf);
}
