/*
 * dpa_ctx — DPA context life cycle, capabilities and error state.
 */
#include <stdlib.h>

#include <doca_rdma_bridge.h>
#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>

#include "dpa_int.h"

#define DPA_PRINT_BYTES (64u * 1024u)

/* The device printf channel: the process's FlexIO print, to stdout at once. */
static doca_error_t dpa_print_init(struct doca_dpa *dpa, struct ibv_context *ibv)
{
	dpa->devx_uar = mlx5dv_devx_alloc_uar(ibv, MLX5DV_UAR_ALLOC_TYPE_NC);
	if (dpa->devx_uar == NULL || flexio_uar_create(dpa->proc, dpa->devx_uar, &dpa->uar) != FLEXIO_STATUS_SUCCESS ||
	    flexio_print_init(dpa->proc, dpa->uar, DPA_PRINT_BYTES, stdout, 0, NULL) != FLEXIO_STATUS_SUCCESS)
		return DOCA_ERROR_DRIVER;
	return DOCA_SUCCESS;
}

static doca_error_t dpa_queue_init(struct doca_dpa *dpa)
{
	struct flexio_cmdq_attr qa = { .workers = DPA_MAX_THREADS, .batch_size = 1, .state = FLEXIO_CMDQ_STATE_RUNNING };

	if (flexio_cmdq_create(dpa->proc, &qa, &dpa->q) != FLEXIO_STATUS_SUCCESS)
		return DOCA_ERROR_DRIVER;
	if (pthread_create(&dpa->wd, NULL, dpa_watchdog, dpa) != 0)
		return DOCA_ERROR_OPERATING_SYSTEM;
	dpa->wd_up = true;
	return DOCA_SUCCESS;
}

/* Stops the watchdog and every kernel, then releases what the context holds. */
static void dpa_free(struct doca_dpa *dpa)
{
	struct flexio_cmdq *q;

	pthread_mutex_lock(&dpa->mu);
	dpa->wd_stop = true;
	pthread_cond_broadcast(&dpa->cv);
	q = dpa->q;
	dpa->q = NULL;
	pthread_mutex_unlock(&dpa->mu);
	if (dpa->wd_up)
		pthread_join(dpa->wd, NULL);
	if (q != NULL)
		flexio_cmdq_destroy(q); /* makes kernels still running leave */
	dpa_launches_reap(dpa, true);
	if (dpa->proc != NULL) {
		if (dpa->uar != NULL) {
			flexio_print_destroy(dpa->proc);
			flexio_uar_destroy(dpa->uar);
		}
		flexio_process_destroy(dpa->proc);
	}
	if (dpa->devx_uar != NULL)
		mlx5dv_devx_free_uar(dpa->devx_uar);
	pthread_cond_destroy(&dpa->cv);
	pthread_mutex_destroy(&dpa->mu);
	pthread_mutex_destroy(&dpa->kmu);
	free(dpa);
}

doca_error_t doca_devinfo_get_is_dpa_supported(const struct doca_devinfo *devinfo)
{
	if (devinfo == NULL) {
		BASE_ERR("devinfo must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_dpa_create(struct doca_dev *dev, struct doca_dpa_app *app, struct doca_dpa **dpa, unsigned int flags)
{
	struct flexio_process_attr pa = { 0 };
	struct doca_dpa *d;
	struct ibv_pd *pd;
	doca_error_t ret;

	if (dev == NULL || app == NULL || dpa == NULL || flags != 0) {
		BASE_ERR("invalid argument (device, app, context pointer, flags must be 0)");
		return DOCA_ERROR_INVALID_VALUE;
	}
	ret = doca_dev_get_pd(dev, &pd);
	if (ret != DOCA_SUCCESS)
		return ret;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return DOCA_ERROR_NO_MEMORY;
	pthread_mutex_init(&d->mu, NULL);
	pthread_mutex_init(&d->kmu, NULL);
	pthread_cond_init(&d->cv, NULL);
	d->dev = dev;
	d->pd = pd;
	d->app = (struct flexio_app *)app; /* dpacc's app is the FlexIO app of the image */
	d->max_run_ns = dpa_max_run_ns();
	pa.pd = pd;
	if (dpa_entries_of(d->app, &d->fns) != 0 || flexio_process_create(pd->context, d->app, &pa, &d->proc) != FLEXIO_STATUS_SUCCESS) {
		BASE_ERR("cannot load DPA application %s", flexio_app_get_name(d->app));
		ret = DOCA_ERROR_DRIVER;
		goto err;
	}
	ret = dpa_print_init(d, pd->context);
	if (ret == DOCA_SUCCESS)
		ret = dpa_queue_init(d);
	if (ret != DOCA_SUCCESS)
		goto err;
	*dpa = d;
	return DOCA_SUCCESS;
err:
	dpa_free(d);
	return ret;
}

doca_error_t doca_dpa_destroy(struct doca_dpa *dpa)
{
	if (dpa == NULL) {
		BASE_ERR("dpa must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	dpa_free(dpa);
	return DOCA_SUCCESS;
}

doca_error_t doca_dpa_get_kernel_max_run_time(struct doca_dpa *dpa, unsigned long long *value)
{
	if (dpa == NULL || value == NULL) {
		BASE_ERR("dpa and value must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*value = (dpa->max_run_ns + 999999999u) / 1000000000u; /* whole seconds, rounded up */
	return DOCA_SUCCESS;
}

doca_error_t doca_dpa_get_max_threads_per_kernel(struct doca_dpa *dpa, unsigned int *value)
{
	if (dpa == NULL || value == NULL) {
		BASE_ERR("dpa and value must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	*value = DPA_MAX_THREADS;
	return DOCA_SUCCESS;
}

bool dpa_usable(struct doca_dpa *dpa)
{
	if (atomic_load(&dpa->failed) != 0 || flexio_err_status(dpa->proc) != 0) {
		BASE_ERR("the DPA context failed (a kernel faulted or ran too long): it runs nothing more");
		return false;
	}
	return true;
}

doca_error_t doca_dpa_peek_at_last_error(struct doca_dpa *dpa)
{
	if (dpa == NULL) {
		BASE_ERR("dpa must not be NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (atomic_load(&dpa->failed) != 0 || flexio_err_status(dpa->proc) != 0)
		return DOCA_ERROR_BAD_STATE;
	return DOCA_SUCCESS;
}
