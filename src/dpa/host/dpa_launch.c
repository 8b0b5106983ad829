/*
 * dpa_launch — kernel launches: a record (dpa_abi.h) and one command-queue
 * task per thread; and the watchdog that frees finished launches and ends
 * the context when a kernel runs past the maximum run time.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dpa_int.h"

#define DPA_WD_PERIOD_NS 10000000u /* how often the watchdog looks while launches are out */

static uint64_t dpa_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void dpa_launch_free(struct dpa_launch *l)
{
	free(l->argbuf);
	free(l);
}

void dpa_launches_reap(struct doca_dpa *dpa, bool all)
{
	struct dpa_launch **pp = &dpa->launches;

	while (*pp != NULL) {
		struct dpa_launch *l = *pp;

		if (all || atomic_load_explicit(&l->left, memory_order_acquire) == 0) {
			*pp = l->next;
			dpa_launch_free(l);
		} else {
			pp = &l->next;
		}
	}
}

/* Under mu: a launch that has run longer than allowed, or NULL. */
static struct dpa_launch *dpa_overdue(struct doca_dpa *dpa, uint64_t now)
{
	for (struct dpa_launch *l = dpa->launches; l != NULL; l = l->next) {
		uint64_t s = atomic_load(&l->start_ns);

		if (s != 0 && atomic_load(&l->left) != 0 && now - s > dpa->max_run_ns)
			return l;
	}
	return NULL;
}

/* Under mu (released meanwhile): the context fails; its queue's harts are made to leave device code. */
static void dpa_fail_overdue(struct doca_dpa *dpa, struct dpa_launch *l)
{
	struct flexio_cmdq *q = dpa->q;

	BASE_ERR("kernel %s ran longer than %llu ms: the DPA context failed", l->fn,
		 (unsigned long long)(dpa->max_run_ns / 1000000u));
	atomic_store(&dpa->failed, 1);
	dpa->q = NULL;
	pthread_mutex_unlock(&dpa->mu);
	if (q != NULL)
		flexio_cmdq_destroy(q);
	pthread_mutex_lock(&dpa->mu);
	dpa_launches_reap(dpa, true); /* no hart runs any of them now */
}

void *dpa_watchdog(void *arg)
{
	struct doca_dpa *dpa = arg;

	pthread_mutex_lock(&dpa->mu);
	while (!dpa->wd_stop) {
		struct dpa_launch *l;
		struct timespec ts;

		dpa_launches_reap(dpa, false);
		if (dpa->launches == NULL || dpa->q == NULL) {
			pthread_cond_wait(&dpa->cv, &dpa->mu);
			continue;
		}
		l = dpa_overdue(dpa, dpa_now_ns());
		if (l != NULL) {
			dpa_fail_overdue(dpa, l);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += DPA_WD_PERIOD_NS;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&dpa->cv, &dpa->mu, &ts);
	}
	pthread_mutex_unlock(&dpa->mu);
	return NULL;
}

/* The handle of an event for the launch (0 without one). */
static doca_error_t dpa_event(struct doca_dpa *dpa, struct doca_sync_event *ev, uint64_t *h)
{
	*h = 0;
	if (ev == NULL)
		return DOCA_SUCCESS;
	return doca_sync_event_export_to_dpa(ev, dpa, h);
}

/*
 * func's addresses in the context's image: kept per context, looked up at
 * its first launch by the lookup entry, run on the process's RPC hart.
 */
static doca_error_t dpa_kernel_of(struct doca_dpa *dpa, doca_dpa_func_t *func, const struct dpa_lookup *names,
				  void **fnp, void **unpackp)
{
	struct dpa_lookup *q = NULL;
	doca_error_t ret = DOCA_SUCCESS;
	uint64_t found = 0;
	uint32_t i;

	pthread_mutex_lock(&dpa->kmu);
	for (i = 0; i < dpa->nkernels && dpa->kernels[i].func != func; i++)
		;
	if (i < dpa->nkernels)
		goto out;
	q = malloc(sizeof(*q));
	if (q == NULL) {
		ret = DOCA_ERROR_NO_MEMORY;
		goto out;
	}
	*q = *names;
	if (flexio_process_call(dpa->proc, dpa->fns.lookup, &found, (uint64_t)(uintptr_t)q) != FLEXIO_STATUS_SUCCESS ||
	    !found) {
		BASE_ERR("kernel %s is not in the image of application %s", names->fn, flexio_app_get_name(dpa->app));
		ret = DOCA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (i == DPA_KERNELS) { /* a full table: the oldest entry gives way */
		memmove(&dpa->kernels[0], &dpa->kernels[1], (DPA_KERNELS - 1) * sizeof(dpa->kernels[0]));
		i = DPA_KERNELS - 1;
	} else {
		dpa->nkernels++;
	}
	dpa->kernels[i] = (struct dpa_kernel){ .func = func, .fnp = q->fnp, .unpackp = q->unpackp };
out:
	if (ret == DOCA_SUCCESS) {
		*fnp = dpa->kernels[i].fnp;
		*unpackp = dpa->kernels[i].unpackp;
	}
	pthread_mutex_unlock(&dpa->kmu);
	free(q);
	return ret;
}

/* A launch record for func, its arguments packed from ap. */
static doca_error_t dpa_launch_make(struct doca_dpa *dpa, doca_dpa_func_t *func, unsigned int n, va_list ap,
				    struct dpa_launch **out)
{
	flexio_func_arg_pack_fn_t *pack;
	flexio_uintptr_t fa, ua;
	struct dpa_lookup names;
	struct dpa_launch *l;
	size_t argbuf_size;
	doca_error_t ret;
	uint32_t pup;

	if (flexio_func_get_register_info(dpa->app, (flexio_func_t *)func, &pup, names.fn, names.unpack,
					  sizeof(names.fn), &argbuf_size, &pack, &fa, &ua) != FLEXIO_STATUS_SUCCESS ||
	    !pup) {
		BASE_ERR("the kernel is not a __dpa_global__ function of this context's application");
		return DOCA_ERROR_INVALID_VALUE;
	}
	l = calloc(1, sizeof(*l) + n * sizeof(l->t[0]));
	if (l == NULL)
		return DOCA_ERROR_NO_MEMORY;
	ret = dpa_kernel_of(dpa, func, &names, &l->fnp, &l->unpackp);
	if (ret != DOCA_SUCCESS) {
		free(l);
		return ret;
	}
	memcpy(l->fn, names.fn, sizeof(l->fn));
	l->argbuf = calloc(1, argbuf_size != 0 ? argbuf_size : 1);
	if (l->argbuf == NULL) {
		free(l);
		return DOCA_ERROR_NO_MEMORY;
	}
	pack(l->argbuf, ap);
	l->nthreads = n;
	atomic_init(&l->left, n);
	atomic_init(&l->start_ns, 0);
	for (unsigned int i = 0; i < n; i++)
		l->t[i] = (struct dpa_thread){ .l = l, .rank = i };
	*out = l;
	return DOCA_SUCCESS;
}

/* Under mu: one task per thread on the context's queue. */
static doca_error_t dpa_launch_post(struct doca_dpa *dpa, struct dpa_launch *l)
{
	bool idle = dpa->launches == NULL;

	if (dpa->q == NULL || !dpa_usable(dpa))
		return DOCA_ERROR_BAD_STATE;
	l->next = dpa->launches;
	dpa->launches = l;
	for (uint32_t i = 0; i < l->nthreads; i++) {
		if (flexio_cmdq_task_add(dpa->q, dpa->fns.entry, (uint64_t)(uintptr_t)&l->t[i]) != FLEXIO_STATUS_SUCCESS) {
			/* Threads already queued run; the launch never completes (kept until destroy). */
			BASE_ERR("cannot queue thread %u of kernel %s", i, l->fn);
			return DOCA_ERROR_DRIVER;
		}
	}
	if (idle) /* the watchdog sleeps without a timeout only when no launch is out */
		pthread_cond_broadcast(&dpa->cv);
	return DOCA_SUCCESS;
}

static doca_error_t dpa_launch(struct doca_dpa *dpa, struct doca_sync_event *wait_event, uint64_t wait_threshold,
			       struct doca_sync_event *comp_event, uint64_t comp_count, unsigned int num_threads,
			       doca_dpa_func_t *func, bool add, va_list ap)
{
	uint64_t wh, ch;
	struct dpa_launch *l;
	doca_error_t ret;

	if (dpa == NULL || func == NULL || num_threads == 0 || num_threads > DPA_MAX_THREADS) {
		BASE_ERR("invalid argument (dpa, kernel, 1..%d threads)", DPA_MAX_THREADS);
		return DOCA_ERROR_INVALID_VALUE;
	}
	ret = dpa_event(dpa, wait_event, &wh);
	if (ret == DOCA_SUCCESS)
		ret = dpa_event(dpa, comp_event, &ch);
	if (ret != DOCA_SUCCESS)
		return ret;
	ret = dpa_launch_make(dpa, func, num_threads, ap, &l);
	if (ret != DOCA_SUCCESS)
		return ret;
	l->wait_h = wh;
	l->wait_thr = wait_threshold;
	l->comp_h = ch;
	l->comp_val = comp_count;
	l->comp_add = add;
	pthread_mutex_lock(&dpa->mu);
	ret = dpa_launch_post(dpa, l);
	pthread_mutex_unlock(&dpa->mu);
	if (ret == DOCA_ERROR_BAD_STATE)
		dpa_launch_free(l); /* not listed: nothing was queued */
	return ret;
}

doca_error_t doca_dpa_kernel_launch_update_add(struct doca_dpa *dpa, struct doca_sync_event *wait_event,
					       uint64_t wait_threshold, struct doca_sync_event *comp_event,
					       uint64_t comp_count, unsigned int num_threads, doca_dpa_func_t *func,
					       ...)
{
	doca_error_t ret;
	va_list ap;

	va_start(ap, func);
	ret = dpa_launch(dpa, wait_event, wait_threshold, comp_event, comp_count, num_threads, func, true, ap);
	va_end(ap);
	return ret;
}

doca_error_t doca_dpa_kernel_launch_update_set(struct doca_dpa *dpa, struct doca_sync_event *wait_event,
					       uint64_t wait_threshold, struct doca_sync_event *comp_event,
					       uint64_t comp_count, unsigned int num_threads, doca_dpa_func_t *func,
					       ...)
{
	doca_error_t ret;
	va_list ap;

	va_start(ap, func);
	ret = dpa_launch(dpa, wait_event, wait_threshold, comp_event, comp_count, num_threads, func, false, ap);
	va_end(ap);
	return ret;
}
