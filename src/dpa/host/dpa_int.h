/*
 * dpa_int — the DOCA DPA host library's objects (libdoca_dpa.so).
 *
 * A DPA context is a FlexIO process of the application (flexio.h, the
 * public FlexIO API only): DPA memory is the process's heap, kernel threads
 * are tasks of a command queue whose workers are the process's harts, and a
 * fault in a kernel is the process's error state. A watchdog thread bounds
 * how long a kernel runs.
 */
#ifndef DPA_INT_H_
#define DPA_INT_H_

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include <doca_dpa.h>
#include <libflexio/flexio.h>

#include "base_log.h"
#include "dpa_abi.h"

#define DPA_MAX_THREADS 16 /* per launch: the command queue's workers */
#define DPA_KERNELS 64	   /* kernels a context keeps the addresses of */

/* The device library's entries in an app. */
struct dpa_entries {
	flexio_func_t *entry;  /* a kernel thread */
	flexio_func_t *lookup; /* a kernel's addresses */
};

/* A kernel's addresses in the context's image. */
struct dpa_kernel {
	doca_dpa_func_t *func;
	void *fnp, *unpackp;
};

struct ibv_pd;

struct doca_dpa {
	struct doca_dev *dev;
	struct ibv_pd *pd; /* the device's (doca_dev_get_pd): the process's and registrations' */
	struct flexio_app *app;
	struct flexio_process *proc;
	struct mlx5dv_devx_uar *devx_uar; /* the print channel's */
	struct flexio_uar *uar;
	struct dpa_entries fns;
	pthread_mutex_t mu; /* q, launches, the watchdog's state */
	pthread_cond_t cv;
	struct flexio_cmdq *q; /* NULL once the context failed */
	struct dpa_launch *launches;
	_Atomic int failed; /* a kernel ran past the maximum run time */
	bool wd_stop;
	bool wd_up;
	pthread_t wd;
	uint64_t max_run_ns;
	pthread_mutex_t kmu; /* the kernels looked up */
	struct dpa_kernel kernels[DPA_KERNELS];
	uint32_t nkernels;
};

/* dpa_ctx.c: whether the context can still run kernels (logs why not). */
bool dpa_usable(struct doca_dpa *dpa);

/* dpa_launch.c */
void dpa_launches_reap(struct doca_dpa *dpa, bool all); /* under mu */
void *dpa_watchdog(void *arg);

/* dpa_entry.c: the entries of app, registered once per app; 0 or -1. */
int dpa_entries_of(struct flexio_app *app, struct dpa_entries *out);

/* dpa_conf.c: SOFTDPU_DPA_KERNEL_MAX_RUN_MS. */
uint64_t dpa_max_run_ns(void);

#endif /* DPA_INT_H_ */
