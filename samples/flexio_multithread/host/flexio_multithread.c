/*
 * flexio_multithread — a FlexIO host program in the SDK's style, several
 * host threads calling device code at once: A and B go to DPA memory, C is
 * host memory the device code writes through a window, and each of
 * THREADS host threads calls the RPC for its share of C's elements, one
 * call per element with its own configuration in DPA memory. The host
 * prints C and checks it against its own product.
 *
 * Build: as a vendor sample, with the SDK's build_flexio_device.sh for the
 * device side and pkg-config libflexio libibverbs libmlx5 (meson.build).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>
#include <libflexio/flexio.h>

#include "../flexio_multithread_common.h"

#define THREADS 4

extern struct flexio_app *flexio_multithread_device;
flexio_func_t flexio_multithread_rpc;

struct app {
	struct flexio_process *process;
	struct flexio_window *window;
	struct ibv_mr *mr;
	int32_t a[N * N], b[N * N];
	int32_t *c; /* host memory, under mr */
	flexio_uintptr_t a_daddr, b_daddr;
};

struct worker {
	struct app *app;
	int first; /* elements first, first + THREADS, ... */
	int failed;
};

/* One element: its configuration into DPA memory, the RPC, the configuration freed. */
static int element(struct app *app, int e)
{
	struct host_to_device_config cfg = {
		.mat_a_daddr = app->a_daddr, .mat_b_daddr = app->b_daddr, .haddr = (uint64_t)(uintptr_t)app->c,
		.window_id = flexio_window_get_id(app->window), .mkey = app->mr->lkey,
		.row = (uint32_t)(e / N), .col = (uint32_t)(e % N),
	};
	flexio_uintptr_t daddr = 0;
	uint64_t ret = 0;
	int rc = -1;

	if (flexio_copy_from_host(app->process, &cfg, sizeof(cfg), &daddr) != FLEXIO_STATUS_SUCCESS)
		return -1;
	if (flexio_process_call(app->process, flexio_multithread_rpc, &ret, daddr) == FLEXIO_STATUS_SUCCESS)
		rc = 0;
	flexio_buf_dev_free(app->process, daddr);
	return rc;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	for (int e = w->first; e < N * N && !w->failed; e += THREADS)
		w->failed = element(w->app, e) != 0;
	return NULL;
}

static int run_threads(struct app *app)
{
	struct worker w[THREADS];
	pthread_t t[THREADS];
	int started = 0, failed = 0;

	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct worker){ .app = app, .first = i };
		if (pthread_create(&t[i], NULL, worker_main, &w[i]) != 0)
			break;
		started++;
	}
	for (int i = 0; i < started; i++) {
		pthread_join(t[i], NULL);
		failed |= w[i].failed;
	}
	return started == THREADS && !failed ? 0 : -1;
}

/* C printed, and compared with the host's own A x B. */
static int check(const struct app *app)
{
	int bad = 0;

	printf("flexio_multithread: C = A x B computed by %d host threads' RPCs:\n", THREADS);
	for (int r = 0; r < N; r++) {
		for (int col = 0; col < N; col++) {
			int32_t want = 0;

			for (int i = 0; i < N; i++)
				want += app->a[r * N + i] * app->b[i * N + col];
			bad += app->c[r * N + col] != want;
			printf(" %6d", app->c[r * N + col]);
		}
		printf("\n");
	}
	printf("flexio_multithread: %d of %d elements differ from the host's product\n", bad, N * N);
	return bad == 0 ? 0 : -1;
}

static int setup(struct app *app, struct ibv_context *ctx)
{
	for (int i = 0; i < N * N; i++) {
		app->a[i] = (i % 7) - 3;
		app->b[i] = (i * 5) % 11;
	}
	app->c = calloc(N * N, sizeof(int32_t));
	if (app->c == NULL ||
	    flexio_process_create(ctx, flexio_multithread_device, NULL, &app->process) != FLEXIO_STATUS_SUCCESS)
		return -1;
	/* The window works in the process's PD: device code reaches memory registered there. */
	app->mr = ibv_reg_mr(flexio_process_get_pd(app->process), app->c, N * N * sizeof(int32_t),
			     IBV_ACCESS_LOCAL_WRITE);
	if (app->mr == NULL ||
	    flexio_window_create(app->process, flexio_process_get_pd(app->process), &app->window) !=
		    FLEXIO_STATUS_SUCCESS ||
	    flexio_copy_from_host(app->process, app->a, sizeof(app->a), &app->a_daddr) != FLEXIO_STATUS_SUCCESS ||
	    flexio_copy_from_host(app->process, app->b, sizeof(app->b), &app->b_daddr) != FLEXIO_STATUS_SUCCESS)
		return -1;
	return 0;
}

static void teardown(struct app *app)
{
	if (app->window != NULL)
		flexio_window_destroy(app->window);
	if (app->mr != NULL)
		ibv_dereg_mr(app->mr); /* before the process, whose PD it is on */
	if (app->process != NULL) {
		if (flexio_err_status(app->process) != 0)
			flexio_err_display(app->process);
		flexio_process_destroy(app->process); /* its DPA memory with it */
	}
	free(app->c);
}

int main(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = list != NULL && list[0] != NULL ? ibv_open_device(list[0]) : NULL;
	struct app *app = calloc(1, sizeof(*app));
	int rc = 1;

	if (list != NULL)
		ibv_free_device_list(list);
	if (ctx == NULL || app == NULL) {
		fprintf(stderr, "flexio_multithread: no device\n");
		goto out;
	}
	if (setup(app, ctx) == 0 && run_threads(app) == 0 && check(app) == 0 && flexio_err_status(app->process) == 0)
		rc = 0;
	teardown(app);
out:
	free(app);
	if (ctx != NULL)
		ibv_close_device(ctx);
	printf("flexio_multithread: %s\n", rc == 0 ? "OK" : "FAILED");
	return rc;
}
