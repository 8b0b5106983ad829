/*
 * DOCA DPA (doca_dpa.h) with a real device image (tests/dpa/dpa_test_dev.c,
 * built by DOCA DPA's dpacc with the vendor's options): contexts, kernels
 * on one and many threads with their arguments, wait and completion Sync
 * Events (update_set and update_add), events waited for and updated by
 * kernels, DPA memory (alloc, free, h2d copy, memset) read back byte for
 * byte through kernels, host memory registered and reached from device
 * code, workers and endpoints (RDMA WRITE from device code to another
 * context's host memory), device printf, and kernels gone wrong: a fault and
 * a fatal error (peek_at_last_error reports them, this program goes on), one
 * that never returns (ended at the maximum run time). Bad arguments return
 * their documented codes; the device calls not supported yet are fatal errors.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <doca_dev.h>
#include <doca_dpa.h>
#include <doca_sync_event.h>

#include "harness.h"

extern struct doca_dpa_app *dpa_test_app;
extern doca_dpa_func_t dpt_set, dpt_ranks, dpt_fill, dpt_read64, dpt_relay, dpt_print, dpt_fault, dpt_fatal,
	dpt_spin, dpt_host_xor, dpt_copy, dpt_transpose, dpt_rkey, dpt_put, dpt_ep_put, dpt_ep_put_signal, dpt_put_signal;

#define WAIT_MS 10000 /* hang guard */

static struct doca_devinfo **dev_list;
static struct doca_dev *dev;

static struct doca_dev *open_dev(void)
{
	uint32_t n;
	struct doca_dev *d = NULL;

	if (doca_devinfo_list_create(&dev_list, &n) != DOCA_SUCCESS)
		return NULL;
	for (uint32_t i = 0; i < n && d == NULL; i++)
		if (doca_dev_open(dev_list[i], &d) != DOCA_SUCCESS)
			d = NULL;
	return d;
}

static void dpa_destroy_cb(void *p)
{
	doca_dpa_destroy(p);
}

static struct doca_dpa *dpa_new(void)
{
	struct doca_dpa *dpa = NULL;

	if (doca_dpa_create(dev, dpa_test_app, &dpa, 0) != DOCA_SUCCESS)
		return NULL;
	th_defer(dpa_destroy_cb, dpa);
	return dpa;
}

static void se_destroy_cb(void *se)
{
	doca_sync_event_destroy(se);
}

/* A started event the DPA publishes (dpa_pub) or subscribes to, the host CPU on the other side. */
static struct doca_sync_event *event_new(struct doca_dpa *dpa, int dpa_pub)
{
	struct doca_sync_event *se = NULL;
	doca_error_t r;

	if (doca_sync_event_create(&se) != DOCA_SUCCESS)
		return NULL;
	th_defer(se_destroy_cb, se);
	r = dpa_pub ? doca_sync_event_publisher_add_location_dpa(se, dpa)
		    : doca_sync_event_subscriber_add_location_dpa(se, dpa);
	if (r == DOCA_SUCCESS)
		r = dpa_pub ? doca_sync_event_subscriber_add_location_cpu(se, dev)
			    : doca_sync_event_publisher_add_location_cpu(se, dev);
	if (r == DOCA_SUCCESS)
		r = doca_sync_event_start(se);
	return r == DOCA_SUCCESS ? se : NULL;
}

static doca_dpa_dev_sync_event_t handle_of(struct doca_sync_event *se, struct doca_dpa *dpa)
{
	doca_dpa_dev_sync_event_t h = 0;

	return doca_sync_event_export_to_dpa(se, dpa, &h) == DOCA_SUCCESS ? h : 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Waits (bounded) until se's value is v; returns the value seen last. */
static uint64_t wait_value(struct doca_sync_event *se, uint64_t v)
{
	uint64_t got = 0, end = now_ms() + WAIT_MS;

	while (doca_sync_event_get(se, &got) == DOCA_SUCCESS && got != v && now_ms() < end)
		usleep(100);
	return got;
}

/* Waits (bounded) for the context's error state. */
static doca_error_t wait_error(struct doca_dpa *dpa, uint64_t ms)
{
	uint64_t end = now_ms() + ms;
	doca_error_t r;

	while ((r = doca_dpa_peek_at_last_error(dpa)) == DOCA_SUCCESS && now_ms() < end)
		usleep(1000);
	return r;
}

/* ---------------------------------------------------------------- cases */

static void test_create_destroy(void)
{
	struct doca_dpa *dpa = NULL;
	unsigned long long rt = 0;
	unsigned int mt = 0;

	CHECK_OK(doca_devinfo_get_is_dpa_supported(doca_dev_as_devinfo(dev)));
	CHECK_ERR(doca_devinfo_get_is_dpa_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_create(NULL, dpa_test_app, &dpa, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_create(dev, NULL, &dpa, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_create(dev, dpa_test_app, NULL, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_create(dev, dpa_test_app, &dpa, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dpa_create(dev, dpa_test_app, &dpa, 0));
	CHECK_OK(doca_dpa_get_kernel_max_run_time(dpa, &rt));
	CHECK(rt == 12);
	CHECK_OK(doca_dpa_get_max_threads_per_kernel(dpa, &mt));
	CHECK(mt == 16);
	CHECK_ERR(doca_dpa_get_kernel_max_run_time(dpa, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_get_max_threads_per_kernel(NULL, &mt), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dpa_peek_at_last_error(dpa));
	CHECK_ERR(doca_dpa_peek_at_last_error(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dpa_destroy(dpa));
}

/* A kernel sets an event it was given; the launch's completion event is set (update_set) to its count. */
static void test_launch_set(void)
{
	struct doca_dpa *dpa = dpa_new();
	struct doca_sync_event *out, *comp;

	CHECK(dpa != NULL);
	CHECK((out = event_new(dpa, 1)) != NULL && (comp = event_new(dpa, 1)) != NULL);
	CHECK_OK(doca_sync_event_update_set(comp, 100));
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, comp, 7, 1, &dpt_set, handle_of(out, dpa),
						   (uint64_t)0x1122334455667788ull));
	CHECK(wait_value(comp, 7) == 7);
	CHECK(wait_value(out, 0x1122334455667788ull) == 0x1122334455667788ull);
	CHECK_OK(doca_dpa_peek_at_last_error(dpa));
}

/* Sixteen threads: each rank once, each seeing the count; update_add adds the count once per launch. */
static void test_launch_threads_add(void)
{
	struct doca_dpa *dpa = dpa_new();
	struct doca_sync_event *bits, *comp;

	CHECK(dpa != NULL);
	CHECK((bits = event_new(dpa, 1)) != NULL && (comp = event_new(dpa, 1)) != NULL);
	CHECK_OK(doca_sync_event_update_set(comp, 5));
	CHECK_OK(doca_dpa_kernel_launch_update_add(dpa, NULL, 0, comp, 10, 16, &dpt_ranks, handle_of(bits, dpa), 16u));
	CHECK(wait_value(comp, 15) == 15);
	CHECK(wait_value(bits, 0xffff) == 0xffff);
	CHECK_OK(doca_sync_event_update_set(bits, 0));
	CHECK_OK(doca_dpa_kernel_launch_update_add(dpa, NULL, 0, comp, 10, 3, &dpt_ranks, handle_of(bits, dpa), 3u));
	CHECK(wait_value(comp, 25) == 25);
	CHECK(wait_value(bits, 0x7) == 0x7);
}

/* The launch's wait event holds the kernel until the host sets it past the threshold. */
static void test_launch_wait_event(void)
{
	struct doca_dpa *dpa = dpa_new();
	struct doca_sync_event *wait, *out, *comp;
	uint64_t v = 0;

	CHECK(dpa != NULL);
	CHECK((wait = event_new(dpa, 0)) != NULL && (out = event_new(dpa, 1)) != NULL &&
	      (comp = event_new(dpa, 1)) != NULL);
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, wait, 4, comp, 1, 1, &dpt_set, handle_of(out, dpa),
						   (uint64_t)9));
	CHECK_OK(doca_sync_event_update_set(wait, 4)); /* not greater: still held */
	usleep(50000);
	CHECK_OK(doca_sync_event_get(out, &v));
	CHECK(v == 0);
	CHECK_OK(doca_sync_event_get(comp, &v));
	CHECK(v == 0);
	CHECK_OK(doca_sync_event_update_set(wait, 5));
	CHECK(doca_sync_event_wait_gt(comp, 0, UINT64_MAX) == DOCA_SUCCESS);
	CHECK(wait_value(out, 9) == 9);
}

/* Kernels wait on and update events themselves: a chain of three relays, launched last first. */
static void test_kernel_waits(void)
{
	struct doca_dpa *dpa = dpa_new();
	struct doca_sync_event *e[4];

	CHECK(dpa != NULL);
	for (int i = 0; i < 4; i++)
		CHECK((e[i] = event_new(dpa, i != 0)) != NULL);
	CHECK_OK(doca_sync_event_publisher_add_location_dpa(e[0], dpa) == DOCA_ERROR_BAD_STATE ? DOCA_SUCCESS
												: DOCA_ERROR_UNKNOWN);
	for (int i = 2; i >= 0; i--)
		CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, NULL, 0, 1, &dpt_relay, handle_of(e[i], dpa),
							   (uint64_t)0, handle_of(e[i + 1], dpa)));
	CHECK_OK(doca_sync_event_update_set(e[0], 40));
	CHECK(wait_value(e[3], 43) == 43);
	CHECK(wait_value(e[1], 41) == 41 && wait_value(e[2], 42) == 42);
}

/* Reads n bytes of DPA memory at a through kernels, 8 at a time. */
static int read_dpa(struct doca_dpa *dpa, struct doca_sync_event *ev, struct doca_sync_event *comp, uint64_t *seq,
		    doca_dpa_dev_uintptr_t a, uint8_t *out, size_t n)
{
	for (size_t off = 0; off < n; off += 8) {
		uint64_t v = 0;

		++*seq;
		if (doca_dpa_kernel_launch_update_set(dpa, NULL, 0, comp, *seq, 1, &dpt_read64, handle_of(ev, dpa),
						      (doca_dpa_dev_uintptr_t)(a + off)) != DOCA_SUCCESS ||
		    wait_value(comp, *seq) != *seq || doca_sync_event_get(ev, &v) != DOCA_SUCCESS)
			return -1;
		memcpy(out + off, &v, 8);
	}
	return 0;
}

static void test_memory(void)
{
	struct doca_dpa *dpa = dpa_new();
	struct doca_sync_event *ev, *comp;
	doca_dpa_dev_uintptr_t a = 0, b = 0;
	uint8_t src[64], got[64], want[64];
	uint64_t seq = 0;

	CHECK(dpa != NULL);
	CHECK((ev = event_new(dpa, 1)) != NULL && (comp = event_new(dpa, 1)) != NULL);
	CHECK_ERR(doca_dpa_mem_alloc(dpa, 0, &a), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_mem_alloc(NULL, 64, &a), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_mem_alloc(dpa, 64, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_mem_alloc(dpa, (size_t)1 << 40, &a), DOCA_ERROR_NO_MEMORY);
	CHECK_OK(doca_dpa_mem_alloc(dpa, 64, &a));
	CHECK_OK(doca_dpa_mem_alloc(dpa, 64, &b));
	CHECK(a != 0 && b != 0 && a != b);
	for (int i = 0; i < 64; i++)
		src[i] = (uint8_t)(0xa5 ^ (i * 7));
	CHECK_OK(doca_dpa_h2d_memcpy(dpa, a, src, sizeof(src)));
	CHECK(read_dpa(dpa, ev, comp, &seq, a, got, 64) == 0);
	CHECK(memcmp(got, src, 64) == 0);
	CHECK_OK(doca_dpa_memset(dpa, a + 8, 0x3c, 40));
	memcpy(want, src, 64);
	memset(want + 8, 0x3c, 40);
	CHECK(read_dpa(dpa, ev, comp, &seq, a, got, 64) == 0);
	CHECK(memcmp(got, want, 64) == 0);
	/* A kernel writes DPA memory (arguments of 64, 32, 8 and 16 bits). */
	++seq;
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, comp, seq, 1, &dpt_fill, b, (uint32_t)64, (uint8_t)0xf0,
						   (uint16_t)3));
	CHECK(wait_value(comp, seq) == seq);
	for (int i = 0; i < 64; i++)
		want[i] = (uint8_t)(0xf0 + i * 3);
	CHECK(read_dpa(dpa, ev, comp, &seq, b, got, 64) == 0);
	CHECK(memcmp(got, want, 64) == 0);
	/* Out of an allocation, not DPA memory, bad arguments. */
	CHECK_ERR(doca_dpa_h2d_memcpy(dpa, a + 32, src, 64), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_memset(dpa, a + 60, 0, 8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_h2d_memcpy(dpa, a, NULL, 8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_h2d_memcpy(NULL, a, src, 8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_memset(dpa, 0, 0, 8), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_mem_free(dpa, a + 8), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dpa_mem_free(dpa, a));
	CHECK_ERR(doca_dpa_mem_free(dpa, a), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_mem_free(NULL, b), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dpa_mem_free(dpa, b));
}

/* Device printf reaches the program's standard output, byte for byte. */
static void test_printf(void)
{
	char path[] = "/tmp/test_dpa_printf.XXXXXX";
	int fd = mkstemp(path), saved;
	struct doca_dpa *dpa = NULL;
	struct doca_sync_event *comp = NULL;
	const char *want = "dpa thread 0 of 2 says 42\ndpa thread 1 of 2 says 42\n";
	const char *want2 = "dpa thread 1 of 2 says 42\ndpa thread 0 of 2 says 42\n";
	char buf[256] = { 0 };
	ssize_t n;

	CHECK(fd >= 0);
	unlink(path);
	fflush(stdout);
	saved = dup(1);
	CHECK(saved >= 0 && dup2(fd, 1) == 1);
	if (doca_dpa_create(dev, dpa_test_app, &dpa, 0) == DOCA_SUCCESS && (comp = event_new(dpa, 1)) != NULL &&
	    doca_dpa_kernel_launch_update_set(dpa, NULL, 0, comp, 1, 2, &dpt_print, (uint64_t)42) == DOCA_SUCCESS)
		wait_value(comp, 1);
	if (dpa != NULL)
		doca_dpa_destroy(dpa); /* the print channel is emptied */
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	CHECK(dpa != NULL && comp != NULL);
	CHECK(n == (ssize_t)strlen(want));
	CHECK(strcmp(buf, want) == 0 || strcmp(buf, want2) == 0);
}

/* A kernel that faults: the context reports it, launches nothing more, and this program goes on. */
static void test_fault(void)
{
	struct doca_dpa *dpa = dpa_new(), *other = dpa_new();
	struct doca_sync_event *comp, *ocomp, *out;
	uint64_t v = 1;

	CHECK(dpa != NULL && other != NULL);
	CHECK((comp = event_new(dpa, 1)) != NULL && (ocomp = event_new(other, 1)) != NULL &&
	      (out = event_new(other, 1)) != NULL);
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, comp, 1, 1, &dpt_fault, (uint64_t)16));
	CHECK_ERR(wait_error(dpa, WAIT_MS), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_dpa_peek_at_last_error(dpa), DOCA_ERROR_BAD_STATE); /* peeking keeps it */
	CHECK_OK(doca_sync_event_get(comp, &v));
	CHECK(v == 0); /* never completed */
	CHECK_ERR(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, comp, 1, 1, &dpt_set, handle_of(comp, dpa),
						    (uint64_t)1),
		  DOCA_ERROR_BAD_STATE);
	/* Another context of the same app is not touched. */
	CHECK_OK(doca_dpa_peek_at_last_error(other));
	CHECK_OK(doca_dpa_kernel_launch_update_set(other, NULL, 0, ocomp, 1, 1, &dpt_set, handle_of(out, other),
						   (uint64_t)3));
	CHECK(wait_value(ocomp, 1) == 1 && wait_value(out, 3) == 3);
}

static void test_fatal(void)
{
	struct doca_dpa *dpa = dpa_new();

	CHECK(dpa != NULL);
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, NULL, 0, 4, &dpt_fatal));
	CHECK_ERR(wait_error(dpa, WAIT_MS), DOCA_ERROR_BAD_STATE);
}

/* A kernel that never returns is ended at the maximum run time (set to 300 ms here). */
static __attribute__((unused)) void test_max_run_time(void)
{
	struct doca_dpa *dpa;
	struct doca_sync_event *comp;
	unsigned long long rt = 0;
	uint64_t v = 1;

	setenv("SOFTDPU_DPA_KERNEL_MAX_RUN_MS", "300", 1);
	dpa = dpa_new();
	unsetenv("SOFTDPU_DPA_KERNEL_MAX_RUN_MS");
	CHECK(dpa != NULL);
	CHECK_OK(doca_dpa_get_kernel_max_run_time(dpa, &rt));
	CHECK(rt == 1); /* whole seconds, rounded up */
	CHECK((comp = event_new(dpa, 1)) != NULL);
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, comp, 1, 2, &dpt_spin));
	CHECK_OK(doca_dpa_peek_at_last_error(dpa));
	CHECK_ERR(wait_error(dpa, WAIT_MS), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_sync_event_get(comp, &v));
	CHECK(v == 0);
	CHECK_ERR(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, NULL, 0, 1, &dpt_spin), DOCA_ERROR_BAD_STATE);
	/* destroy (the deferred cleanup) returns with no hart left in device code */
}

/* A context destroyed while kernels wait and run: they are stopped, nothing is left behind. */
static __attribute__((unused)) void test_destroy_busy(void)
{
	struct doca_dpa *dpa = NULL;
	struct doca_sync_event *wait;

	CHECK_OK(doca_dpa_create(dev, dpa_test_app, &dpa, 0));
	if ((wait = event_new(dpa, 0)) == NULL) {
		doca_dpa_destroy(dpa);
		CHECK(0);
	}
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, wait, 0, NULL, 0, 4, &dpt_spin));
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, NULL, 0, 2, &dpt_spin));
	usleep(20000);
	CHECK_OK(doca_dpa_destroy(dpa));
}

static void test_bad_launch(void)
{
	struct doca_dpa *dpa = dpa_new();
	struct doca_sync_event *cpu_only = NULL, *comp, *unstarted = NULL;

	CHECK(dpa != NULL);
	CHECK((comp = event_new(dpa, 1)) != NULL);
	CHECK_ERR(doca_dpa_kernel_launch_update_set(NULL, NULL, 0, NULL, 0, 1, &dpt_spin), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, NULL, 0, 1, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_kernel_launch_update_add(dpa, NULL, 0, NULL, 0, 0, &dpt_spin), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_kernel_launch_update_add(dpa, NULL, 0, NULL, 0, 17, &dpt_spin), DOCA_ERROR_INVALID_VALUE);
	/* Not a kernel of the app: any host function. */
	CHECK_ERR(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, NULL, 0, 1, (doca_dpa_func_t *)&test_bad_launch),
		  DOCA_ERROR_INVALID_VALUE);
	/* Events the DPA has no location on, or not started. */
	CHECK_OK(doca_sync_event_create(&cpu_only));
	th_defer(se_destroy_cb, cpu_only);
	CHECK_OK(doca_sync_event_publisher_add_location_cpu(cpu_only, dev));
	CHECK_OK(doca_sync_event_subscriber_add_location_cpu(cpu_only, dev));
	CHECK_OK(doca_sync_event_start(cpu_only));
	CHECK_ERR(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, cpu_only, 1, 1, &dpt_fatal), DOCA_ERROR_NOT_PERMITTED);
	CHECK_OK(doca_sync_event_create(&unstarted));
	th_defer(se_destroy_cb, unstarted);
	CHECK_OK(doca_sync_event_subscriber_add_location_dpa(unstarted, dpa));
	CHECK_ERR(doca_dpa_kernel_launch_update_set(dpa, unstarted, 0, comp, 1, 1, &dpt_fatal), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_dpa_peek_at_last_error(dpa)); /* nothing was launched */
}

/* Host memory registered with the context: device code loads and stores it, copies to and from DPA memory. */
static void test_host_memory(void)
{
	struct doca_dpa *dpa = dpa_new();
	struct doca_sync_event *comp, *ev;
	struct doca_dpa_mem *m1 = NULL, *m2 = NULL;
	doca_dpa_dev_mem_t h1 = 0, h2 = 0;
	doca_dpa_dev_uintptr_t d = 0;
	uint8_t a[96], b[96], want[96];
	uint16_t t_src[6] = { 1, 2, 3, 4, 5, 6 }, t_dst[6] = { 0 }, t_want[6] = { 1, 4, 2, 5, 3, 6 };
	struct doca_dpa_mem *mt1 = NULL, *mt2 = NULL;
	doca_dpa_dev_mem_t ht1 = 0, ht2 = 0;
	uint64_t seq = 0, rkey = 0;
	unsigned int rw = DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_WRITE;

	CHECK(dpa != NULL);
	CHECK((comp = event_new(dpa, 1)) != NULL && (ev = event_new(dpa, 1)) != NULL);
	for (int i = 0; i < 96; i++)
		a[i] = (uint8_t)(i * 5 + 1);
	memset(b, 0, sizeof(b));
	CHECK_ERR(doca_dpa_mem_host_register(NULL, a, 96, rw, &m1, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_mem_host_register(dpa, NULL, 96, rw, &m1, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_mem_host_register(dpa, a, 0, rw, &m1, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_mem_host_register(dpa, a, 96, rw, NULL, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_mem_host_register(dpa, a, 96, rw, &m1, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_mem_host_register(dpa, a, 96, DOCA_ACCESS_DPU_READ_WRITE, &m1, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_mem_host_register(dpa, a, 96, DOCA_ACCESS_RDMA_WRITE, &m1, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_mem_unregister(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dpa_mem_host_register(dpa, a, 96, rw, &m1, 0));
	CHECK_OK(doca_dpa_mem_host_register(dpa, b, 96, rw, &m2, 0));
	CHECK_ERR(doca_dpa_mem_dev_export(m1, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_mem_dev_export(NULL, &h1), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dpa_mem_dev_export(m1, &h1));
	CHECK_OK(doca_dpa_mem_dev_export(m2, &h2));
	CHECK(h1 != 0 && h2 != 0 && h1 != h2);
	/* Loads and stores: bytes 8..71 of a, xor 0x5a. */
	memcpy(want, a, 96);
	for (int i = 8; i < 72; i++)
		want[i] ^= 0x5a;
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, comp, ++seq, 1, &dpt_host_xor, h1,
						   (uint64_t)(uintptr_t)(a + 8), (uint32_t)64, (uint8_t)0x5a));
	CHECK(wait_value(comp, seq) == seq);
	CHECK(memcmp(a, want, 96) == 0);
	/* Host a -> DPA memory -> host b, by device copies. */
	CHECK_OK(doca_dpa_mem_alloc(dpa, 96, &d));
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, comp, ++seq, 1, &dpt_copy, d, (doca_dpa_dev_mem_t)0,
						   (uint64_t)(uintptr_t)a, h1, (uint64_t)96));
	CHECK(wait_value(comp, seq) == seq);
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, comp, ++seq, 1, &dpt_copy, (uint64_t)(uintptr_t)b, h2,
						   d, (doca_dpa_dev_mem_t)0, (uint64_t)96));
	CHECK(wait_value(comp, seq) == seq);
	CHECK(memcmp(b, want, 96) == 0);
	CHECK_OK(doca_dpa_mem_free(dpa, d));
	/* A 2x3 array of 16-bit elements transposed into a 3x2 one. */
	CHECK_OK(doca_dpa_mem_host_register(dpa, t_src, sizeof(t_src), DOCA_ACCESS_LOCAL_READ_WRITE, &mt1, 0));
	CHECK_OK(doca_dpa_mem_host_register(dpa, t_dst, sizeof(t_dst), DOCA_ACCESS_LOCAL_READ_WRITE, &mt2, 0));
	CHECK_OK(doca_dpa_mem_dev_export(mt1, &ht1));
	CHECK_OK(doca_dpa_mem_dev_export(mt2, &ht2));
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, comp, ++seq, 1, &dpt_transpose,
						   (uint64_t)(uintptr_t)t_dst, ht2, (uint64_t)(uintptr_t)t_src, ht1,
						   (uint32_t)2, (uint32_t)3));
	CHECK(wait_value(comp, seq) == seq);
	CHECK(memcmp(t_dst, t_want, sizeof(t_want)) == 0);
	/* The remote key device code reads is the registration's (nonzero: RDMA rights asked). */
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, comp, ++seq, 1, &dpt_rkey, handle_of(ev, dpa), h1));
	CHECK(wait_value(comp, seq) == seq);
	CHECK_OK(doca_sync_event_get(ev, &rkey));
	CHECK(rkey != 0);
	CHECK_OK(doca_dpa_mem_unregister(mt1));
	CHECK_OK(doca_dpa_mem_unregister(mt2));
	CHECK_OK(doca_dpa_mem_unregister(m2));
	/* Past the registered range: a fatal error of the context; the host buffer is untouched. */
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, comp, ++seq, 1, &dpt_host_xor, h1,
						   (uint64_t)(uintptr_t)(a + 90), (uint32_t)6, (uint8_t)1));
	CHECK(wait_value(comp, seq) == seq); /* in range: runs */
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, comp, ++seq, 1, &dpt_host_xor, h1,
						   (uint64_t)(uintptr_t)(a + 96), (uint32_t)1, (uint8_t)1));
	CHECK_ERR(wait_error(dpa, WAIT_MS), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_dpa_mem_unregister(m1));
}

static void ep_destroy_cb(void *ep)
{
	doca_dpa_ep_destroy(ep);
}

static void worker_destroy_cb(void *w)
{
	doca_dpa_worker_destroy(w);
}

static void mem_unregister_cb(void *m)
{
	doca_dpa_mem_unregister(m);
}

/* A connected endpoint of dpa's worker w to peer (another context's endpoint). */
static struct doca_dpa_ep *ep_new(struct doca_dpa_worker *w, unsigned int access)
{
	struct doca_dpa_ep *ep = NULL;

	if (doca_dpa_ep_create(w, access, &ep) != DOCA_SUCCESS)
		return NULL;
	th_defer(ep_destroy_cb, ep);
	return ep;
}

static int ep_connect(struct doca_dpa_ep *a, struct doca_dpa_ep *b)
{
	struct doca_dpa_ep_addr *aa = NULL, *ba = NULL;
	size_t la = 0, lb = 0;
	int ok = doca_dpa_ep_addr_get(a, &aa, &la) == DOCA_SUCCESS && doca_dpa_ep_addr_get(b, &ba, &lb) == DOCA_SUCCESS &&
		 la != 0 && la == lb && doca_dpa_ep_connect(a, ba) == DOCA_SUCCESS &&
		 doca_dpa_ep_connect(b, aa) == DOCA_SUCCESS;

	if (aa != NULL)
		doca_dpa_ep_addr_free(aa);
	if (ba != NULL)
		doca_dpa_ep_addr_free(ba);
	return ok;
}

/*
 * Workers and endpoints: kernels of one context write host memory
 * registered with another over a pair of endpoints (RDMA WRITE on 4
 * threads), byte for byte; a wrong key is a fatal error of the writer.
 */
static void test_endpoints(void)
{
	struct doca_dpa *a = dpa_new(), *b = dpa_new();
	doca_dpa_worker_t wa = NULL, wb = NULL;
	struct doca_dpa_ep *ea, *eb;
	struct doca_dpa_mem *src_m = NULL, *dst_m = NULL;
	doca_dpa_dev_mem_t src_h = 0;
	doca_dpa_dev_ep_t eah = 0;
	struct doca_sync_event *comp;
	uint8_t src[256], dst[256] = { 0 };
	unsigned int rw = DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_WRITE | DOCA_ACCESS_RDMA_READ;
	uint32_t rkey;

	CHECK(a != NULL && b != NULL);
	CHECK_ERR(doca_dpa_worker_create(NULL, &wa, 0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_worker_create(a, &wa, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dpa_worker_create(a, &wa, 0));
	th_defer(worker_destroy_cb, wa);
	CHECK_OK(doca_dpa_worker_create(b, &wb, 0));
	th_defer(worker_destroy_cb, wb);
	CHECK_ERR(doca_dpa_ep_create(NULL, rw, &ea), DOCA_ERROR_INVALID_VALUE);
	CHECK((ea = ep_new(wa, rw)) != NULL && (eb = ep_new(wb, rw)) != NULL);
	CHECK_ERR(doca_dpa_worker_destroy(wa), DOCA_ERROR_IN_USE);
	CHECK(ep_connect(ea, eb));
	CHECK_ERR(doca_dpa_ep_connect(ea, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_ep_dev_export(ea, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dpa_ep_dev_export(ea, &eah));
	for (int i = 0; i < 256; i++)
		src[i] = (uint8_t)(i * 31 + 7);
	CHECK_OK(doca_dpa_mem_host_register(a, src, sizeof(src), DOCA_ACCESS_LOCAL_READ_WRITE, &src_m, 0));
	th_defer(mem_unregister_cb, src_m);
	CHECK_OK(doca_dpa_mem_host_register(b, dst, sizeof(dst), rw, &dst_m, 0));
	th_defer(mem_unregister_cb, dst_m);
	CHECK_OK(doca_dpa_mem_dev_export(src_m, &src_h));
	/* The remote key of dst, as b's device code reads it. */
	{
		struct doca_sync_event *k = event_new(b, 1), *kc = event_new(b, 1);
		doca_dpa_dev_mem_t dst_h = 0;
		uint64_t v = 0;

		CHECK(k != NULL && kc != NULL);
		CHECK_OK(doca_dpa_mem_dev_export(dst_m, &dst_h));
		CHECK_OK(doca_dpa_kernel_launch_update_set(b, NULL, 0, kc, 1, 1, &dpt_rkey, handle_of(k, b), dst_h));
		CHECK(wait_value(kc, 1) == 1);
		CHECK_OK(doca_sync_event_get(k, &v));
		rkey = (uint32_t)v;
		/* The host reads the same key. */
		CHECK_ERR(doca_dpa_mem_rkey_get(dst_m, NULL), DOCA_ERROR_INVALID_VALUE);
		CHECK_ERR(doca_dpa_mem_rkey_get(NULL, &rkey), DOCA_ERROR_INVALID_VALUE);
		CHECK_OK(doca_dpa_mem_rkey_get(dst_m, &rkey));
		CHECK(rkey == (uint32_t)v);
	}
	CHECK((comp = event_new(a, 1)) != NULL);
	CHECK_OK(doca_dpa_kernel_launch_update_set(a, NULL, 0, comp, 1, 4, &dpt_ep_put, eah, (uint64_t)(uintptr_t)src,
						   src_h, (uint32_t)256, (uint64_t)(uintptr_t)dst, rkey));
	CHECK(wait_value(comp, 1) == 1);
	CHECK(memcmp(dst, src, 256) == 0);
	CHECK_OK(doca_dpa_peek_at_last_error(a));
	/* A wrong key: the write fails, and so does the context that made it; the target is untouched. */
	memset(dst, 0, sizeof(dst));
	CHECK_OK(doca_dpa_kernel_launch_update_set(a, NULL, 0, comp, 2, 1, &dpt_ep_put, eah, (uint64_t)(uintptr_t)src,
						   src_h, (uint32_t)256, (uint64_t)(uintptr_t)dst, rkey ^ 0x5a5a00u));
	CHECK_ERR(wait_error(a, WAIT_MS), DOCA_ERROR_BAD_STATE);
	for (int i = 0; i < 256; i++)
		CHECK(dst[i] == 0);
	CHECK_OK(doca_dpa_peek_at_last_error(b));
}

/*
 * Signalling puts: the data lands, then the remote Sync Event (exported by
 * the receiving side) is set, then increased; its handle crosses the launch
 * as a struct by value. A handle that is no remote Sync Event is a fatal
 * error of the context.
 */
static void test_put_signal(void)
{
	struct doca_dpa *a = dpa_new(), *b = dpa_new();
	doca_dpa_worker_t wa = NULL, wb = NULL;
	struct doca_dpa_ep *ea, *eb;
	struct doca_dpa_mem *src_m = NULL, *dst_m = NULL;
	doca_dpa_dev_mem_t src_h = 0;
	doca_dpa_dev_ep_t eah = 0;
	struct doca_sync_event *comp, *sig, *unstarted = NULL;
	doca_sync_event_remote_t rh;
	uint8_t src[64], dst[64] = { 0 };
	unsigned int rw = DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_WRITE;
	uint32_t rkey = 0;

	CHECK(a != NULL && b != NULL);
	CHECK_OK(doca_dpa_worker_create(a, &wa, 0));
	th_defer(worker_destroy_cb, wa);
	CHECK_OK(doca_dpa_worker_create(b, &wb, 0));
	th_defer(worker_destroy_cb, wb);
	CHECK((ea = ep_new(wa, rw)) != NULL && (eb = ep_new(wb, rw | DOCA_ACCESS_RDMA_ATOMIC)) != NULL);
	CHECK(ep_connect(ea, eb));
	CHECK_OK(doca_dpa_ep_dev_export(ea, &eah));
	for (int i = 0; i < 64; i++)
		src[i] = (uint8_t)(i * 7 + 3);
	CHECK_OK(doca_dpa_mem_host_register(a, src, sizeof(src), DOCA_ACCESS_LOCAL_READ_WRITE, &src_m, 0));
	th_defer(mem_unregister_cb, src_m);
	CHECK_OK(doca_dpa_mem_host_register(b, dst, sizeof(dst), rw, &dst_m, 0));
	th_defer(mem_unregister_cb, dst_m);
	CHECK_OK(doca_dpa_mem_dev_export(src_m, &src_h));
	CHECK_OK(doca_dpa_mem_rkey_get(dst_m, &rkey));
	/* The event b's host waits on, written by a's device code. */
	CHECK((sig = event_new(b, 1)) != NULL && (comp = event_new(a, 1)) != NULL);
	CHECK_ERR(doca_sync_event_export_remote(NULL, &rh), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_export_remote(sig, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sync_event_create(&unstarted));
	CHECK_ERR(doca_sync_event_export_remote(unstarted, &rh), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_sync_event_destroy(unstarted));
	CHECK_OK(doca_sync_event_export_remote(sig, &rh));
	CHECK_OK(doca_dpa_kernel_launch_update_set(a, NULL, 0, comp, 1, 1, &dpt_ep_put_signal, eah,
						   (uint64_t)(uintptr_t)src, src_h, (uint32_t)32,
						   (uint64_t)(uintptr_t)dst, rkey, rh, (uint64_t)5, (uint8_t)0));
	CHECK(wait_value(sig, 5) == 5);
	CHECK(memcmp(dst, src, 32) == 0 && dst[32] == 0);
	CHECK(wait_value(comp, 1) == 1);
	CHECK_OK(doca_dpa_kernel_launch_update_set(a, NULL, 0, comp, 2, 1, &dpt_ep_put_signal, eah,
						   (uint64_t)(uintptr_t)src + 32, src_h, (uint32_t)32,
						   (uint64_t)(uintptr_t)dst + 32, rkey, rh, (uint64_t)3, (uint8_t)1));
	CHECK(wait_value(sig, 8) == 8);
	CHECK(memcmp(dst, src, 64) == 0);
	CHECK(wait_value(comp, 2) == 2);
	CHECK_OK(doca_dpa_peek_at_last_error(a));
}

static void test_not_supported(void)
{
	struct doca_dpa *dpa = dpa_new();
	struct doca_dpa_worker *w = NULL;
	struct doca_dpa_ep *ep = NULL;
	doca_dpa_dev_ep_t eh = 0;

	CHECK(dpa != NULL);
	CHECK_OK(doca_dpa_worker_create(dpa, &w, 0));
	th_defer(worker_destroy_cb, w);
	CHECK((ep = ep_new(w, DOCA_ACCESS_LOCAL_READ_WRITE)) != NULL);
	CHECK_OK(doca_dpa_ep_dev_export(ep, &eh));
	/* A signalling put to what is no remote Sync Event: a fatal error of the context. */
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, NULL, 0, 1, &dpt_put_signal, eh));
	CHECK_ERR(wait_error(dpa, WAIT_MS), DOCA_ERROR_BAD_STATE);
}

/* Endpoint calls on what is not an endpoint: a fatal error of the context. */
static void test_not_an_endpoint(void)
{
	struct doca_dpa *dpa = dpa_new();

	CHECK(dpa != NULL);
	CHECK_OK(doca_dpa_kernel_launch_update_set(dpa, NULL, 0, NULL, 0, 1, &dpt_put));
	CHECK_ERR(wait_error(dpa, WAIT_MS), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_dpa_worker_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_dpa_ep_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_dpa_ep_addr_free(NULL)); /* nothing to free, as free(NULL) */
	CHECK_ERR(doca_dpa_ep_addr_get(NULL, NULL, NULL), DOCA_ERROR_INVALID_VALUE);
}

int main(void)
{
	dev = open_dev();
	if (dev == NULL) {
		printf("no DOCA device\n");
		return 1;
	}
	RUN(test_create_destroy);
	RUN(test_launch_set);
	RUN(test_launch_threads_add);
	RUN(test_launch_wait_event);
	RUN(test_kernel_waits);
	RUN(test_memory);
	RUN(test_printf);
	RUN(test_fault);
	RUN(test_fatal);
#ifndef __SANITIZE_THREAD__
	/* ThreadSanitizer defers signals to its own calls: a kernel loop making none never sees the stop. */
	RUN(test_max_run_time);
	RUN(test_destroy_busy);
#endif
	RUN(test_bad_launch);
	RUN(test_host_memory);
	RUN(test_endpoints);
	RUN(test_put_signal);
	RUN(test_not_supported);
	RUN(test_not_an_endpoint);
	doca_dev_close(dev);
	doca_devinfo_list_destroy(dev_list);
	return th_summary("test_dpa");
}
