/*
 * dpad_rt — the DOCA DPA device library (libdoca_dpa_dev.a), linked whole
 * into every image dpacc builds for DOCA DPA: the entry each kernel thread
 * runs, the thread's rank, and printing.
 *
 * A kernel's device function and unpacker are looked up in this image (the
 * one the entries are in) by the lookup entry, as the FlexIO runtime finds
 * device functions; launches carry the addresses.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
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

uint64_t __doca_dpa_rt_lookup(uint64_t arg) __attribute__((visibility("default")));

uint64_t __doca_dpa_rt_lookup(uint64_t arg)
{
	struct dpa_lookup *q = (struct dpa_lookup *)(uintptr_t)arg;

	q->fnp = dpad_lookup(q->fn);
	q->unpackp = dpad_lookup(q->unpack);
	return q->fnp != NULL && q->unpackp != NULL;
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
	if (l->wait_h != 0)
		doca_dpa_dev_sync_event_wait_gt(l->wait_h, l->wait_thr, UINT64_MAX);
	atomic_compare_exchange_strong(&l->start_ns, &none, dpad_now_ns());
	dpad_rank = t->rank;
	dpad_nthreads = l->nthreads;
	((dpad_unpack_fn *)(uintptr_t)l->unpackp)(l->argbuf, l->fnp);
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
