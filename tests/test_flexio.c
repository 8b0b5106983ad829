/*
 * The FlexIO host runtime with a real device image (tests/flexio/fx_test_dev.c,
 * built by build_flexio_device.sh): apps and their functions, processes each
 * with their own device globals, RPC calls with arguments of every width,
 * the device heap, printing (sync and async), and device code gone wrong —
 * a crash, a fatal error, a function that never returns — which sets the
 * process's error state while this program goes on; the command queue's
 * tasks on many DPA threads, pending until running, and the same faults in a
 * task. The faults set the
 * process's error state while this program goes on. Every outcome asserted
 * exactly: values, statuses, bytes printed.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mlx5dv.h>
#include <infiniband/verbs.h>
#include <libflexio/flexio.h>

#include "harness.h"

extern struct flexio_app *fx_test_dev;
flexio_func_t fxt_err_seen;
flexio_func_t fxt_add, fxt_widths, fxt_count, fxt_sum, fxt_fill, fxt_print, fxt_crash, fxt_fatal, fxt_spin, fxt_task,
	fxt_task_stats, fxt_async_mark;

static struct ibv_context *ctx;

static void open_dev(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);

	ctx = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	ibv_free_device_list(l);
}

static void proc_destroy_cb(void *p)
{
	flexio_process_destroy(p);
}

static struct flexio_process *proc_new(void)
{
	struct flexio_process *p = NULL;

	if (flexio_process_create(ctx, fx_test_dev, NULL, &p) != FLEXIO_STATUS_SUCCESS)
		return NULL;
	th_defer(proc_destroy_cb, p);
	return p;
}

static void test_app_registry(void)
{
	struct flexio_app **list = NULL, *app = NULL;
	uint32_t n = 0, found = 0;
	char name[FLEXIO_MAX_NAME_LEN + 1], unpack[FLEXIO_MAX_NAME_LEN + 1];
	flexio_func_arg_pack_fn_t *pack = NULL;
	flexio_uintptr_t fa, ua;
	uint32_t pup = 0;
	size_t argsz = 0;
	uint8_t elf[4];

	CHECK(fx_test_dev != NULL); /* the device library's constructor registered it */
	CHECK(flexio_app_get_list(&list, &n) == FLEXIO_STATUS_SUCCESS);
	for (uint32_t i = 0; i < n; i++)
		found += list[i] == fx_test_dev;
	CHECK(flexio_app_list_free(list) == FLEXIO_STATUS_SUCCESS);
	CHECK(found == 1);
	CHECK(flexio_app_get_elf(fx_test_dev, (uint64_t *)(void *)elf, sizeof(elf)) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_func_get_register_info(fx_test_dev, fxt_widths, &pup, name, unpack, sizeof(name), &argsz, &pack,
					    &fa, &ua) == FLEXIO_STATUS_SUCCESS);
	CHECK(pup == 1 && strcmp(name, "fxt_widths") == 0 && strcmp(unpack, "__dpa_unpack_fxt_widths") == 0);
	CHECK(pack != NULL && argsz == 32); /* each argument aligned to its size: 1, 2, 4, 8, 2, 1 then 8 at 24 */
	CHECK(flexio_func_get_register_info(fx_test_dev, fxt_widths, &pup, name, unpack, 4, &argsz, &pack, &fa, &ua) ==
	      FLEXIO_STATUS_FAILED); /* names do not fit */
	CHECK(flexio_app_create(NULL, elf, sizeof(elf), &app) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_app_create("x", NULL, 4, &app) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_app_create("x", elf, 0, &app) == FLEXIO_STATUS_FAILED);
	CHECK(strcmp(flexio_app_get_name(fx_test_dev), "fx_test_dev") == 0 && flexio_app_get_elf_size(fx_test_dev) > 4);
	CHECK(flexio_app_get_name(NULL) == NULL && flexio_app_get_elf_size(NULL) == 0);
	CHECK(flexio_app_create("not-an-elf", elf, sizeof(elf), &app) == FLEXIO_STATUS_SUCCESS);
	{
		struct flexio_process *p = NULL;

		/* The bytes are not an image: the process cannot be made, and nothing is left behind. */
		CHECK(flexio_process_create(ctx, app, NULL, &p) == FLEXIO_STATUS_FAILED);
	}
	CHECK(flexio_app_destroy(app) == FLEXIO_STATUS_SUCCESS);
}

static void test_rpc(void)
{
	struct flexio_process *a = proc_new(), *b;
	uint64_t r = 0, want;
	int dummy;

	CHECK(a != NULL);
	CHECK(flexio_process_call(a, fxt_add, &r, (uint64_t)40, (uint64_t)2) == FLEXIO_STATUS_SUCCESS && r == 42);
	want = (uint64_t)(int64_t)-5 * 3 + 0xfffeu * 5 + (uint64_t)(int64_t)-70000 * 7 + 0x123456789abcull * 11 +
	       (uint64_t)(int64_t)-2 * 13 + 200u * 17 + (uint64_t)(uintptr_t)&dummy;
	CHECK(flexio_process_call(a, fxt_widths, &r, (int8_t)-5, (uint16_t)0xfffe, (int32_t)-70000,
				  (uint64_t)0x123456789abcull, (int16_t)-2, (uint8_t)200, (void *)&dummy) ==
	      FLEXIO_STATUS_SUCCESS);
	CHECK(r == want);
	/* Device globals are each process's own. */
	b = proc_new();
	CHECK(b != NULL);
	for (uint64_t i = 1; i <= 3; i++)
		CHECK(flexio_process_call(a, fxt_count, &r) == FLEXIO_STATUS_SUCCESS && r == i);
	CHECK(flexio_process_call(b, fxt_count, &r) == FLEXIO_STATUS_SUCCESS && r == 1);
	/* The process's own PD (none was given); the error handler: a function of the image, before any thread. */
	CHECK(flexio_process_get_pd(a) != NULL && flexio_process_get_pd(NULL) == NULL);
	CHECK(flexio_process_error_handler_set(b, "fxt_no_such_function") == FLEXIO_STATUS_FAILED);
	CHECK(flexio_process_error_handler_set(b, NULL) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_process_error_handler_set(b, "fxt_fatal") == FLEXIO_STATUS_FAILED); /* b has run calls */
	{
		struct flexio_process *c = proc_new();

		CHECK(c != NULL && flexio_process_error_handler_set(c, "fxt_fatal") == FLEXIO_STATUS_SUCCESS);
	}
	/* A function of no app of ours, and a NULL process. */
	CHECK(flexio_process_call(a, (flexio_func_t *)open_dev, &r) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_process_call(NULL, fxt_add, &r, (uint64_t)1, (uint64_t)2) == FLEXIO_STATUS_FAILED);
}

#define RPC_THREADS 4
#define RPC_CALLS 500

struct rpc_caller {
	struct flexio_process *p;
	uint64_t base;
	int wrong; /* calls that failed or returned another call's result */
};

static void *rpc_caller_main(void *arg)
{
	struct rpc_caller *c = arg;

	for (uint64_t i = 0; i < RPC_CALLS; i++) {
		uint64_t r = 0;

		if (flexio_process_call(c->p, fxt_add, &r, c->base, i) != FLEXIO_STATUS_SUCCESS || r != c->base + i)
			c->wrong++;
	}
	return NULL;
}

/* Host threads calling one process at once: each call runs once and returns its own result to its own caller. */
static void test_rpc_concurrent(void)
{
	struct rpc_caller c[RPC_THREADS];
	pthread_t t[RPC_THREADS];
	struct flexio_process *p = proc_new();

	CHECK(p != NULL);
	for (int i = 0; i < RPC_THREADS; i++) {
		c[i] = (struct rpc_caller){ .p = p, .base = (uint64_t)(i + 1) << 32 };
		CHECK(pthread_create(&t[i], NULL, rpc_caller_main, &c[i]) == 0);
	}
	for (int i = 0; i < RPC_THREADS; i++) {
		pthread_join(t[i], NULL);
		CHECK(c[i].wrong == 0);
	}
	CHECK(flexio_err_status(p) == 0);
}

/* A function of DOCA 2.2's asynchronous RPC type (void, __dpa_global__) called as an RPC: it runs, and returns 0. */
static void test_async_rpc_type(void)
{
	struct flexio_process *p = proc_new();
	flexio_uintptr_t word = 0;
	uint64_t r = 77, v = 0;

	CHECK(p != NULL);
	CHECK(flexio_buf_dev_alloc(p, sizeof(uint64_t), &word) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_buf_dev_memset(p, 0, sizeof(uint64_t), word) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_process_call(p, fxt_async_mark, &r, (uint64_t)word) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_process_call(p, fxt_async_mark, &r, (uint64_t)word) == FLEXIO_STATUS_SUCCESS && r == 0);
	/* The word's bytes summed by device code: it was added to twice. */
	CHECK(flexio_process_call(p, fxt_sum, &v, word, (uint32_t)sizeof(uint64_t)) == FLEXIO_STATUS_SUCCESS && v == 2);
}

static void test_raw_register(void)
{
	struct flexio_process *p = proc_new();
	flexio_func_t *raw = NULL, *missing = NULL;
	uint64_t r = 0;

	CHECK(p != NULL);
	CHECK(flexio_func_register(fx_test_dev, "fxt_raw", &raw) == FLEXIO_STATUS_SUCCESS && raw != NULL);
	CHECK(flexio_process_call(p, raw, &r, (uint64_t)41) == FLEXIO_STATUS_SUCCESS && r == 42);
	CHECK(flexio_func_register(fx_test_dev, "fxt_no_such", &missing) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_process_call(p, missing, &r, (uint64_t)1) == FLEXIO_STATUS_FAILED); /* not in the image */
	CHECK(flexio_func_register(NULL, "fxt_raw", &raw) == FLEXIO_STATUS_FAILED);
}

static void test_heap(void)
{
	struct flexio_process *p = proc_new();
	flexio_uintptr_t d = 1, e = 0, big = 0;
	uint8_t host[1000];
	uint64_t r = 0, want = 0;

	CHECK(p != NULL);
	CHECK(flexio_buf_dev_alloc(p, 0, &d) == FLEXIO_STATUS_FAILED && d == 0);
	CHECK(flexio_buf_dev_alloc(p, sizeof(host), &d) == FLEXIO_STATUS_SUCCESS && d != 0);
	for (size_t i = 0; i < sizeof(host); i++) {
		host[i] = (uint8_t)(i * 31 + 7);
		want += host[i] * (i + 1);
	}
	CHECK(flexio_host2dev_memcpy(p, host, sizeof(host), d) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_process_call(p, fxt_sum, &r, d, (uint32_t)sizeof(host)) == FLEXIO_STATUS_SUCCESS && r == want);
	CHECK(flexio_buf_dev_memset(p, 3, sizeof(host), d) == FLEXIO_STATUS_SUCCESS);
	want = 0;
	for (size_t i = 0; i < sizeof(host); i++)
		want += 3 * (i + 1);
	CHECK(flexio_process_call(p, fxt_sum, &r, d, (uint32_t)sizeof(host)) == FLEXIO_STATUS_SUCCESS && r == want);
	/* Ranges past the buffer, or not in the heap at all, are refused and change nothing. */
	CHECK(flexio_buf_dev_memset(p, 0, sizeof(host) + 64, d) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_host2dev_memcpy(p, host, 8, (flexio_uintptr_t)(uintptr_t)host) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_process_call(p, fxt_sum, &r, d, (uint32_t)sizeof(host)) == FLEXIO_STATUS_SUCCESS && r == want);
	CHECK(flexio_copy_from_host(p, host, 100, &e) == FLEXIO_STATUS_SUCCESS && e != 0 && e != d);
	CHECK(memcmp((void *)(uintptr_t)e, host, 100) == 0);
	CHECK(flexio_process_call(p, fxt_fill, &r, e, (uint32_t)100, (uint8_t)9) == FLEXIO_STATUS_SUCCESS && r == 100);
	for (uint32_t i = 0; i < 100; i++)
		CHECK(((uint8_t *)(uintptr_t)e)[i] == (uint8_t)(9 + i * 7u));
	CHECK(flexio_buf_dev_free(p, d + 8) == FLEXIO_STATUS_FAILED); /* not a buffer's start */
	CHECK(flexio_buf_dev_free(p, d) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_buf_dev_free(p, d) == FLEXIO_STATUS_FAILED); /* twice */
	CHECK(flexio_buf_dev_free(p, 0) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_buf_dev_free(p, e) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_buf_dev_alloc(p, (size_t)1 << 40, &big) == FLEXIO_STATUS_FAILED && big == 0);
}

/* What a tmpfile holds from the start. */
static size_t file_text(FILE *f, char *buf, size_t cap)
{
	size_t n;

	fflush(f);
	rewind(f);
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	return n;
}

static void uar_free_cb(void *u)
{
	mlx5dv_devx_free_uar(u);
}

static void test_print(void)
{
	struct flexio_process *p = proc_new(), *q = proc_new();
	struct mlx5dv_devx_uar *du = mlx5dv_devx_alloc_uar(ctx, MLX5DV_UAR_ALLOC_TYPE_NC);
	struct flexio_uar *u = NULL, *v = NULL;
	FILE *fs = tmpfile(), *fa = tmpfile();
	char text[256];
	uint64_t r;

	CHECK(p != NULL && q != NULL && du != NULL && fs != NULL && fa != NULL);
	th_defer(uar_free_cb, du);
	CHECK(flexio_uar_create(p, du, &u) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_uar_get_id(u) == du->page_id && flexio_uar_get_id(NULL) == 0);
	CHECK(flexio_uar_create(p, NULL, &v) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_uar_create(NULL, du, &v) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_uar_create(q, du, &v) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_print_init(p, u, 3000, fs, 0, NULL) == FLEXIO_STATUS_FAILED);   /* not a power of two */
	CHECK(flexio_print_init(p, u, 1024, fs, 0, NULL) == FLEXIO_STATUS_FAILED);   /* under 2 KiB */
	CHECK(flexio_print_init(p, NULL, 4096, fs, 0, NULL) == FLEXIO_STATUS_FAILED); /* no UAR */
	CHECK(flexio_print_init(p, u, 4096, fs, 0, NULL) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_print_init(p, u, 4096, fs, 0, NULL) == FLEXIO_STATUS_FAILED); /* twice */
	CHECK(flexio_print_init(q, v, 2048, fa, 1, NULL) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_process_call(p, fxt_print, &r, (uint64_t)7) == FLEXIO_STATUS_SUCCESS && r == 7);
	CHECK(flexio_process_call(q, fxt_print, &r, (uint64_t)8) == FLEXIO_STATUS_SUCCESS && r == 8);
	/* Sync: the writer thread has it (poll a little); async: nothing before the flush. */
	for (int i = 0; i < 500 && file_text(fs, text, sizeof(text)) < 25; i++)
		usleep(2000);
	CHECK(strcmp(text, "device says 7\nand puts\n") == 0);
	CHECK(file_text(fa, text, sizeof(text)) == 0);
	CHECK(flexio_print_flush(q) == FLEXIO_STATUS_SUCCESS);
	file_text(fa, text, sizeof(text));
	CHECK(strcmp(text, "device says 8\nand puts\n") == 0);
	CHECK(flexio_print_destroy(q) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_print_destroy(q) == FLEXIO_STATUS_FAILED);
	/* Printing after destroy goes nowhere; set up again, it goes to the new FILE. */
	CHECK(flexio_process_call(q, fxt_print, &r, (uint64_t)9) == FLEXIO_STATUS_SUCCESS && r == 9);
	{
		FILE *f2 = tmpfile();

		CHECK(f2 != NULL && flexio_print_init(q, v, 2048, f2, 1, NULL) == FLEXIO_STATUS_SUCCESS);
		CHECK(flexio_process_call(q, fxt_print, &r, (uint64_t)10) == FLEXIO_STATUS_SUCCESS);
		CHECK(flexio_print_flush(q) == FLEXIO_STATUS_SUCCESS);
		file_text(f2, text, sizeof(text));
		CHECK(strcmp(text, "device says 10\nand puts\n") == 0);
		CHECK(flexio_print_destroy(q) == FLEXIO_STATUS_SUCCESS);
		fclose(f2);
	}
	file_text(fa, text, sizeof(text));
	CHECK(strcmp(text, "device says 8\nand puts\n") == 0); /* nothing of 9 or 10 */
	CHECK(flexio_print_destroy(p) == FLEXIO_STATUS_SUCCESS); /* its writer thread is done with fs */
	CHECK(flexio_uar_destroy(u) == FLEXIO_STATUS_SUCCESS && flexio_uar_destroy(v) == FLEXIO_STATUS_SUCCESS);
	fclose(fs);
	fclose(fa);
}

static bool fd_readable(int fd)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };

	return poll(&pf, 1, 0) == 1 && (pf.revents & POLLIN);
}

static void test_crash(void)
{
	struct flexio_process *p = proc_new();
	uint64_t r = 0;
	int fd;

	CHECK(p != NULL);
	fd = flexio_err_handler_fd(p);
	CHECK(fd >= 0 && !fd_readable(fd) && flexio_err_status(p) == 0);
	CHECK(flexio_process_call(p, fxt_crash, &r, (uint64_t)8) == FLEXIO_STATUS_FATAL_ERR);
	CHECK(flexio_err_status(p) != 0 && fd_readable(fd));
	CHECK(flexio_err_status(p) != 0); /* asking again does not reset it */
	flexio_err_display(p);
	CHECK(flexio_err_status(p) == 0 && !fd_readable(fd));
	/* The process goes on: the next call works. */
	CHECK(flexio_process_call(p, fxt_add, &r, (uint64_t)1, (uint64_t)2) == FLEXIO_STATUS_SUCCESS && r == 3);
	/* A fatal error with a user code. */
	CHECK(flexio_process_call(p, fxt_fatal, &r, (uint64_t)0x55) == FLEXIO_STATUS_FATAL_ERR);
	CHECK(flexio_err_status(p) != 0 && fd_readable(fd));
	flexio_err_display(p);
	CHECK(flexio_err_status(p) == 0);
}

/*
 * The process's error handler runs on the thread that failed, with that
 * thread's context and the error (the signal, or flexio_dev_error's code),
 * which flexio_dev_get_errno also gives; the error state is set as without it.
 */
static void test_error_handler(void)
{
	struct flexio_process *p = proc_new();
	uint64_t r = 0;

	CHECK(p != NULL);
	CHECK(flexio_process_error_handler_set(p, "fxt_on_error") == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_process_call(p, fxt_crash, &r, (uint64_t)8) == FLEXIO_STATUS_FATAL_ERR);
	CHECK(flexio_err_status(p) != 0);
	CHECK(flexio_process_call(p, fxt_err_seen, &r) == FLEXIO_STATUS_SUCCESS);
	CHECK(r == (1ull | (uint64_t)SIGSEGV << 8 | 1ull << 40 | (uint64_t)SIGSEGV << 48));
	flexio_err_display(p);
	CHECK(flexio_process_call(p, fxt_fatal, &r, (uint64_t)0x55) == FLEXIO_STATUS_FATAL_ERR);
	CHECK(flexio_process_call(p, fxt_err_seen, &r) == FLEXIO_STATUS_SUCCESS);
	CHECK(r == (2ull | 0x55ull << 8 | 1ull << 40 | 0x55ull << 48));
	CHECK(flexio_err_status(p) != 0);
	flexio_err_display(p);
	/* Set after the process's first thread: refused. */
	CHECK(flexio_process_error_handler_set(p, "fxt_on_error") == FLEXIO_STATUS_FAILED);
}

static __attribute__((unused)) void test_timeout_and_stop(void)
{
	struct flexio_process *p = NULL;
	uint64_t r = 0;

	setenv("SOFTDPU_FLEXIO_CALL_TIMEOUT_MS", "200", 1);
	CHECK(flexio_process_create(ctx, fx_test_dev, NULL, &p) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_process_call(p, fxt_spin, &r, (uint64_t)0) == FLEXIO_STATUS_TIMEOUT);
	CHECK(flexio_process_call(p, fxt_add, &r, (uint64_t)1, (uint64_t)1) == FLEXIO_STATUS_TIMEOUT); /* hart busy */
	unsetenv("SOFTDPU_FLEXIO_CALL_TIMEOUT_MS");
	/* Stops the spinning hart; a destroy that hangs is caught by the test's timeout. */
	CHECK(flexio_process_destroy(p) == FLEXIO_STATUS_SUCCESS);
}

static uint64_t stat(struct flexio_process *p, uint64_t which)
{
	uint64_t r = ~0ull;

	return flexio_process_call(p, fxt_task_stats, &r, which) == FLEXIO_STATUS_SUCCESS ? r : ~0ull;
}

/* Waits (up to 20 s) for the queue to empty. */
static bool cmdq_drain(struct flexio_cmdq *q)
{
	for (int i = 0; i < 20000 && !flexio_cmdq_is_empty(q); i++)
		usleep(1000);
	return flexio_cmdq_is_empty(q) != 0;
}

static void cmdq_destroy_cb(void *q)
{
	flexio_cmdq_destroy(q);
}

static void test_cmdq(void)
{
	struct flexio_process *p = proc_new();
	struct flexio_cmdq_attr a = { .workers = 4, .batch_size = 8, .state = FLEXIO_CMDQ_STATE_PENDING };
	struct flexio_cmdq *q = NULL;
	const uint64_t n = 400;
	uint64_t threads;

	CHECK(p != NULL);
	CHECK(flexio_cmdq_create(p, &a, &q) == FLEXIO_STATUS_SUCCESS && q != NULL);
	th_defer(cmdq_destroy_cb, q);
	CHECK(flexio_cmdq_is_empty(q));
	for (uint64_t i = 1; i <= n; i++)
		CHECK(flexio_cmdq_task_add(q, fxt_task, i) == FLEXIO_STATUS_SUCCESS);
	usleep(20000);
	CHECK(!flexio_cmdq_is_empty(q) && stat(p, 0) == 0); /* pending: nothing ran */
	CHECK(flexio_process_destroy(p) == FLEXIO_STATUS_FAILED); /* the queue is still there */
	CHECK(flexio_cmdq_state_running(q) == FLEXIO_STATUS_SUCCESS);
	CHECK(cmdq_drain(q));
	CHECK(stat(p, 0) == n && stat(p, 1) == n * (n + 1) / 2);
	threads = stat(p, 2);
	CHECK(threads != 0 && (threads & ~0xfull) == 0);    /* ids 0..3 only */
	CHECK(__builtin_popcountll(threads) >= 2);           /* several workers took tasks */
	/* A running queue; a task that crashes sets the error state, the others still run. */
	CHECK(stat(p, 3) != ~0ull);
	CHECK(flexio_cmdq_task_add(q, fxt_task, 10) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_cmdq_task_add(q, fxt_task, 999999) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_cmdq_task_add(q, fxt_task, 20) == FLEXIO_STATUS_SUCCESS);
	CHECK(cmdq_drain(q));
	CHECK(stat(p, 0) == 2 && stat(p, 1) == 30);
	CHECK(flexio_err_status(p) != 0);
	flexio_err_display(p);
	/* Refusals. */
	CHECK(flexio_cmdq_task_add(q, fxt_add, 1) == FLEXIO_STATUS_FAILED); /* two arguments */
	CHECK(flexio_cmdq_task_add(q, NULL, 1) == FLEXIO_STATUS_FAILED);
	CHECK(flexio_cmdq_task_add(NULL, fxt_task, 1) == FLEXIO_STATUS_FAILED);
	{
		struct flexio_cmdq *r = NULL;
		struct flexio_cmdq_attr bad[] = {
			{ .workers = 0, .batch_size = 1, .state = FLEXIO_CMDQ_STATE_RUNNING },
			{ .workers = 255, .batch_size = 1, .state = FLEXIO_CMDQ_STATE_RUNNING },
			{ .workers = 1, .batch_size = 0, .state = FLEXIO_CMDQ_STATE_RUNNING },
			{ .workers = 1, .batch_size = 1, .state = (enum flexio_cmdq_state)7 },
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			CHECK(flexio_cmdq_create(p, &bad[i], &r) == FLEXIO_STATUS_FAILED && r == NULL);
		CHECK(flexio_cmdq_create(NULL, &a, &r) == FLEXIO_STATUS_FAILED);
		CHECK(flexio_cmdq_create(p, NULL, &r) == FLEXIO_STATUS_FAILED);
	}
}

int main(void)
{
	open_dev();
	if (ctx == NULL) {
		fprintf(stderr, "no device\n");
		return 1;
	}
	RUN(test_app_registry);
	RUN(test_rpc);
	RUN(test_rpc_concurrent);
	RUN(test_async_rpc_type);
	RUN(test_raw_register);
	RUN(test_heap);
	RUN(test_print);
	RUN(test_crash);
	RUN(test_error_handler);
#ifndef __SANITIZE_THREAD__
	/* ThreadSanitizer defers signals to its own calls: a device loop making none never sees the stop. */
	RUN(test_timeout_and_stop);
#endif
	RUN(test_cmdq);
	ibv_close_device(ctx);
	return th_summary("test_flexio");
}
