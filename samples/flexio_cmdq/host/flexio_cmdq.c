/*
 * flexio_cmdq — a FlexIO host program in the SDK's style: a command queue of
 * several DPA threads (8, or argv[1]) created pending, 10000 tasks added to
 * it, then started and drained; every task marks its own slot of a table in
 * device memory, and RPCs check that each ran exactly once and that more
 * than one DPA thread took part.
 *
 * Build: as a vendor sample, with the SDK's build_flexio_device.sh for the
 * device side and pkg-config libflexio libibverbs libmlx5 (meson.build).
 * Usage: flexio_cmdq [workers, 2..64]
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, nanosleep, in a strict C11 build */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <infiniband/verbs.h>
#include <libflexio/flexio.h>

extern struct flexio_app *flexio_cmdq_device;
flexio_func_t cmdq_set_table, cmdq_task, cmdq_missed, cmdq_threads;

#define N_TASKS 10000
#define DEFAULT_WORKERS 8
#define MAX_WORKERS 64 /* the device side tells apart this many threads */
#define BATCH_SIZE 32
#define DRAIN_TIMEOUT_MS 30000.0

struct sample {
	struct ibv_context *ctx;
	struct flexio_process *process;
	flexio_uintptr_t table; /* N_TASKS slots of 64 bits in DPA memory */
	struct flexio_cmdq *cmdq;
	int workers;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_us(long us)
{
	struct timespec ts = { .tv_sec = us / 1000000, .tv_nsec = (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static int failed(const char *what)
{
	fprintf(stderr, "flexio_cmdq: %s failed\n", what);
	return -1;
}

static int parse_workers(int argc, char **argv, int *workers)
{
	char *end;
	long v;

	if (argc < 2)
		return 0;
	errno = 0;
	v = strtol(argv[1], &end, 10);
	/* One thread could not show tasks spread over threads. */
	if (argc > 2 || errno != 0 || end == argv[1] || *end != '\0' || v < 2 || v > MAX_WORKERS) {
		fprintf(stderr, "usage: %s [workers, 2..%d]\n", argv[0], MAX_WORKERS);
		return -1;
	}
	*workers = (int)v;
	return 0;
}

static int open_device(struct ibv_context **ctx)
{
	struct ibv_device **list = ibv_get_device_list(NULL);

	*ctx = list != NULL && list[0] != NULL ? ibv_open_device(list[0]) : NULL;
	if (list != NULL)
		ibv_free_device_list(list);
	if (*ctx == NULL) {
		fprintf(stderr, "flexio_cmdq: no device\n");
		return -1;
	}
	return 0;
}

/* A zeroed table in DPA memory, made known to the device code (tasks get only their slot). */
static int table_create(struct sample *s)
{
	const size_t size = N_TASKS * sizeof(uint64_t);
	uint64_t ret = 1;

	if (flexio_buf_dev_alloc(s->process, size, &s->table) != FLEXIO_STATUS_SUCCESS)
		return failed("flexio_buf_dev_alloc");
	if (flexio_buf_dev_memset(s->process, 0, size, s->table) != FLEXIO_STATUS_SUCCESS ||
	    flexio_process_call(s->process, cmdq_set_table, &ret, s->table, (uint64_t)N_TASKS) !=
		    FLEXIO_STATUS_SUCCESS ||
	    ret != 0) {
		flexio_buf_dev_free(s->process, s->table);
		return failed("handing the table to the device");
	}
	return 0;
}

/* Pending: the tasks only queue up, so all workers find work when it starts. */
static int cmdq_create(struct sample *s)
{
	struct flexio_cmdq_attr qa = { .workers = s->workers, .batch_size = BATCH_SIZE,
				       .state = FLEXIO_CMDQ_STATE_PENDING };

	if (flexio_cmdq_create(s->process, &qa, &s->cmdq) != FLEXIO_STATUS_SUCCESS)
		return failed("flexio_cmdq_create");
	return 0;
}

/* Task i gets slot i: the table shows each task's runs apart from the others'. */
static int cmdq_fill(struct sample *s)
{
	for (uint64_t i = 0; i < N_TASKS; i++)
		if (flexio_cmdq_task_add(s->cmdq, cmdq_task, i) != FLEXIO_STATUS_SUCCESS)
			return failed("flexio_cmdq_task_add");
	return 0;
}

/* Starts the queue and waits for it to empty; *ms is how long that took. */
static int cmdq_drain(struct sample *s, double *ms)
{
	double start = now_ms();

	if (flexio_cmdq_state_running(s->cmdq) != FLEXIO_STATUS_SUCCESS)
		return failed("flexio_cmdq_state_running");
	while (!flexio_cmdq_is_empty(s->cmdq)) {
		if (now_ms() - start > DRAIN_TIMEOUT_MS)
			return failed("waiting for the queue to empty");
		sleep_us(100);
	}
	*ms = now_ms() - start;
	return 0;
}

/* Reads the verdict from the device: every task ran once, on more than one thread. */
static int check(struct sample *s, uint64_t *threads)
{
	uint64_t missed = 0;

	if (flexio_process_call(s->process, cmdq_missed, &missed) != FLEXIO_STATUS_SUCCESS ||
	    flexio_process_call(s->process, cmdq_threads, threads) != FLEXIO_STATUS_SUCCESS)
		return failed("reading the table back (flexio_process_call)");
	if (missed != 0) {
		fprintf(stderr, "flexio_cmdq: %llu of %d tasks did not run exactly once\n",
			(unsigned long long)missed, N_TASKS);
		return -1;
	}
	if (*threads < 2 || *threads > (uint64_t)s->workers) {
		fprintf(stderr, "flexio_cmdq: %llu DPA threads ran the tasks (expected 2..%d)\n",
			(unsigned long long)*threads, s->workers);
		return -1;
	}
	/* A task that faulted sets the process's error state, its worker goes on. */
	if (flexio_err_status(s->process) != 0)
		return failed("a task (the process is in an error state)");
	return 0;
}

int main(int argc, char **argv)
{
	struct sample s = { .workers = DEFAULT_WORKERS };
	uint64_t threads = 0;
	double ms = 0;
	int rc = 1;

	if (parse_workers(argc, argv, &s.workers) != 0)
		return 2;
	if (open_device(&s.ctx) != 0)
		goto out;
	if (flexio_process_create(s.ctx, flexio_cmdq_device, NULL, &s.process) != FLEXIO_STATUS_SUCCESS) {
		failed("flexio_process_create");
		goto close_device;
	}
	if (table_create(&s) != 0)
		goto destroy_process;
	if (cmdq_create(&s) != 0)
		goto free_table;
	if (cmdq_fill(&s) != 0 || cmdq_drain(&s, &ms) != 0 || check(&s, &threads) != 0)
		goto destroy_cmdq;
	printf("flexio_cmdq: %d tasks, %d workers, %llu DPA threads took part, %.1f ms\n", N_TASKS, s.workers,
	       (unsigned long long)threads, ms);
	rc = 0;
	/* Teardown can fail too (a worker that would not stop, a buffer unknown to the process). */
destroy_cmdq:
	if (flexio_cmdq_destroy(s.cmdq) != FLEXIO_STATUS_SUCCESS) {
		failed("flexio_cmdq_destroy");
		rc = 1;
	}
free_table:
	if (flexio_buf_dev_free(s.process, s.table) != FLEXIO_STATUS_SUCCESS) {
		failed("flexio_buf_dev_free");
		rc = 1;
	}
destroy_process:
	if (flexio_err_status(s.process) != 0)
		flexio_err_display(s.process);
	if (flexio_process_destroy(s.process) != FLEXIO_STATUS_SUCCESS) {
		failed("flexio_process_destroy");
		rc = 1;
	}
close_device:
	ibv_close_device(s.ctx);
out:
	printf("flexio_cmdq: %s\n", rc == 0 ? "OK" : "FAILED");
	return rc;
}
