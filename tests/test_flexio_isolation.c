/*
 * DPA memory isolation between FlexIO processes (fx_isolate.c): device code
 * of one process that reads or writes another's heap buffer or device
 * global crashes, and the crash is its own process's error state while the
 * other process goes on; host code, on this program's threads (one created
 * after the processes, one whose PKRU denies every key), reaches every
 * process's memory; protection keys go back when processes go, and
 * processes beyond the keys run unisolated. Without protection keys the
 * cross-process cases are skipped (counted as skipped, not passed), the rest
 * runs, and the library says at the first process that isolation is off.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <infiniband/verbs.h>
#include <libflexio/flexio.h>

#include "harness.h"

extern struct flexio_app *fx_iso_dev;
flexio_func_t fxi_sum, fxi_load, fxi_store, fxi_global_addr;

#define BUF_LEN 4096u
#define MANY 16 /* more processes than the 15 keys a CPU has */

static struct ibv_context *ctx;
static bool pku; /* the machine has protection keys: cross-process access must fail */

static void open_dev(void)
{
	struct ibv_device **l = ibv_get_device_list(NULL);

	ctx = l != NULL && l[0] != NULL ? ibv_open_device(l[0]) : NULL;
	ibv_free_device_list(l);
}

#if defined(__x86_64__)
static uint32_t rdpkru(void)
{
	uint32_t eax, edx;

	__asm__ volatile(".byte 0x0f, 0x01, 0xee" : "=a"(eax), "=d"(edx) : "c"(0));
	return eax;
}

static void wrpkru(uint32_t v)
{
	__asm__ volatile(".byte 0x0f, 0x01, 0xef" : : "a"(v), "c"(0), "d"(0) : "memory");
}

/* Protection keys usable here (the CPU has them, the kernel turned them on, a key can be had). */
static bool pku_probe(const char **why)
{
	unsigned a, b, c, d;
	int k;

	if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !(c & bit_OSPKE)) {
		*why = "the CPU (or valgrind's) reports no OS-enabled protection keys";
		return false;
	}
	k = pkey_alloc(0, 0);
	if (k < 0 && errno != ENOSPC) {
		*why = "pkey_alloc fails";
		return false;
	}
	if (k >= 0)
		pkey_free(k);
	return true;
}
#else
static uint32_t rdpkru(void)
{
	return 0;
}

static void wrpkru(uint32_t v)
{
	(void)v;
}

static bool pku_probe(const char **why)
{
	*why = "not x86-64";
	return false;
}
#endif

static void proc_destroy_cb(void *p)
{
	flexio_process_destroy(p);
}

static struct flexio_process *proc_new(void)
{
	struct flexio_process *p = NULL;

	if (flexio_process_create(ctx, fx_iso_dev, NULL, &p) != FLEXIO_STATUS_SUCCESS)
		return NULL;
	th_defer(proc_destroy_cb, p);
	return p;
}

/* Destroys p now (not at the case's end); whether that succeeded. */
static bool proc_end(struct flexio_process *p)
{
	th_undefer(proc_destroy_cb, p);
	return flexio_process_destroy(p) == FLEXIO_STATUS_SUCCESS;
}

static uint64_t weighted_sum(const uint8_t *b, size_t len)
{
	uint64_t s = 0;

	for (size_t i = 0; i < len; i++)
		s += b[i] * (i + 1u);
	return s;
}

static void pattern(uint8_t *b, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		b[i] = (uint8_t)(seed + i * 13u);
}

/* A buffer of BUF_LEN in p's heap holding pattern(seed), written by flexio_host2dev_memcpy; 0 on failure. */
static flexio_uintptr_t buf_new(struct flexio_process *p, uint8_t seed)
{
	uint8_t host[BUF_LEN];
	flexio_uintptr_t d = 0;

	pattern(host, sizeof(host), seed);
	if (flexio_buf_dev_alloc(p, sizeof(host), &d) != FLEXIO_STATUS_SUCCESS ||
	    flexio_host2dev_memcpy(p, host, sizeof(host), d) != FLEXIO_STATUS_SUCCESS)
		return 0;
	return d;
}

static uint64_t pattern_sum(uint8_t seed)
{
	uint8_t host[BUF_LEN];

	pattern(host, sizeof(host), seed);
	return weighted_sum(host, sizeof(host));
}

/* fxi_sum of p over d; the call's status, the sum in *r. */
static flexio_status dev_sum(struct flexio_process *p, flexio_uintptr_t d, uint64_t *r)
{
	*r = 0;
	return flexio_process_call(p, fxi_sum, r, d, (uint32_t)BUF_LEN);
}

/* What flexio_err_display(p) writes on stderr (it also resets the error state). */
static bool err_text(struct flexio_process *p, char *buf, size_t cap)
{
	FILE *f = tmpfile();
	int saved = dup(2);
	size_t n = 0;

	if (f == NULL || saved < 0) {
		if (f != NULL)
			fclose(f);
		return false;
	}
	fflush(stderr);
	dup2(fileno(f), 2);
	flexio_err_display(p);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
	return true;
}

/* p's error state says fn crashed on a segmentation fault at addr. */
static bool crashed_at(struct flexio_process *p, const char *fn, flexio_uintptr_t addr)
{
	char text[512], want[160];

	if (flexio_err_status(p) == FLEXIO_DEV_NO_ERROR || !err_text(p, text, sizeof(text)))
		return false;
	snprintf(want, sizeof(want), "device function %s crashed: %s at address %#lx", fn, strsignal(SIGSEGV),
		 (unsigned long)addr);
	if (strstr(text, want) == NULL) {
		fprintf(stderr, "error text: %swanted: %s\n", text, want);
		return false;
	}
	return flexio_err_status(p) == FLEXIO_DEV_NO_ERROR; /* displaying reset it */
}

static void test_heap(void)
{
	struct flexio_process *p1 = proc_new(), *p2 = proc_new();
	flexio_uintptr_t d1, d2;
	uint64_t r = 0;

	CHECK(p1 != NULL && p2 != NULL);
	d1 = buf_new(p1, 1);
	d2 = buf_new(p2, 2);
	CHECK(d1 != 0 && d2 != 0);
	CHECK(dev_sum(p2, d2, &r) == FLEXIO_STATUS_SUCCESS && r == pattern_sum(2));
	CHECK(dev_sum(p1, d1, &r) == FLEXIO_STATUS_SUCCESS && r == pattern_sum(1));
	/* This thread reads both heaps directly. */
	CHECK(weighted_sum((const uint8_t *)(uintptr_t)d1, BUF_LEN) == pattern_sum(1));
	CHECK(weighted_sum((const uint8_t *)(uintptr_t)d2, BUF_LEN) == pattern_sum(2));
	CHECK(proc_end(p1) && proc_end(p2));
}

static void test_heap_cross_process(void)
{
	struct flexio_process *p1, *p2;
	flexio_uintptr_t d1, d2;
	uint64_t r = 0;

	if (!pku)
		SKIP("no protection keys: nothing keeps one process's device code out of another's heap");
	p1 = proc_new();
	p2 = proc_new();
	CHECK(p1 != NULL && p2 != NULL);
	d1 = buf_new(p1, 1);
	d2 = buf_new(p2, 2);
	CHECK(d1 != 0 && d2 != 0);
	/* p1's device code on p2's buffer: a crash of p1's, p2 untouched and still working. */
	CHECK(dev_sum(p1, d2, &r) == FLEXIO_STATUS_FATAL_ERR);
	CHECK(flexio_err_status(p1) != FLEXIO_DEV_NO_ERROR && flexio_err_status(p2) == FLEXIO_DEV_NO_ERROR);
	CHECK(crashed_at(p1, "fxi_sum", d2));
	CHECK(dev_sum(p2, d2, &r) == FLEXIO_STATUS_SUCCESS && r == pattern_sum(2));
	CHECK(flexio_process_call(p1, fxi_store, &r, d2, (uint64_t)0xdead) == FLEXIO_STATUS_FATAL_ERR);
	CHECK(crashed_at(p1, "fxi_store", d2));
	CHECK(weighted_sum((const uint8_t *)(uintptr_t)d2, BUF_LEN) == pattern_sum(2)); /* not written */
	CHECK(flexio_err_status(p2) == FLEXIO_DEV_NO_ERROR);
	/* p1 goes on with its own memory. */
	CHECK(dev_sum(p1, d1, &r) == FLEXIO_STATUS_SUCCESS && r == pattern_sum(1));
	CHECK(proc_end(p1) && proc_end(p2));
}

static void test_globals(void)
{
	struct flexio_process *p1 = proc_new(), *p2 = proc_new();
	uint64_t g1 = 0, g2 = 0, b2 = 0, r = 0;

	CHECK(p1 != NULL && p2 != NULL);
	CHECK(flexio_process_call(p1, fxi_global_addr, &g1, (uint64_t)0) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_process_call(p2, fxi_global_addr, &g2, (uint64_t)0) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_process_call(p2, fxi_global_addr, &b2, (uint64_t)1) == FLEXIO_STATUS_SUCCESS);
	CHECK(g1 != 0 && g2 != 0 && b2 != 0 && g1 != g2); /* each process has its own copy */
	CHECK(flexio_process_call(p2, fxi_store, &r, g2, (uint64_t)21) == FLEXIO_STATUS_SUCCESS);
	CHECK(*(volatile uint64_t *)(uintptr_t)g2 == 21 && *(volatile uint64_t *)(uintptr_t)g1 == 7); /* host reads */
	CHECK(flexio_process_call(p2, fxi_load, &r, g2) == FLEXIO_STATUS_SUCCESS && r == 21);
	CHECK(flexio_process_call(p2, fxi_load, &r, b2) == FLEXIO_STATUS_SUCCESS && r == 0);
	CHECK(flexio_process_call(p1, fxi_load, &r, g1) == FLEXIO_STATUS_SUCCESS && r == 7);
	*(volatile uint64_t *)(uintptr_t)b2 = 5; /* host writes an image global */
	CHECK(flexio_process_call(p2, fxi_load, &r, b2) == FLEXIO_STATUS_SUCCESS && r == 5);
	CHECK(proc_end(p1) && proc_end(p2));
}

static void test_globals_cross_process(void)
{
	struct flexio_process *p1, *p2;
	uint64_t g2 = 0, b2 = 0, r = 0;

	if (!pku)
		SKIP("no protection keys: nothing keeps one process's device code off another's globals");
	p1 = proc_new();
	p2 = proc_new();
	CHECK(p1 != NULL && p2 != NULL);
	CHECK(flexio_process_call(p2, fxi_global_addr, &g2, (uint64_t)0) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_process_call(p2, fxi_global_addr, &b2, (uint64_t)1) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_process_call(p2, fxi_store, &r, g2, (uint64_t)21) == FLEXIO_STATUS_SUCCESS);
	CHECK(flexio_process_call(p1, fxi_store, &r, g2, (uint64_t)99) == FLEXIO_STATUS_FATAL_ERR);
	CHECK(crashed_at(p1, "fxi_store", g2));
	CHECK(flexio_process_call(p1, fxi_store, &r, b2, (uint64_t)99) == FLEXIO_STATUS_FATAL_ERR);
	CHECK(crashed_at(p1, "fxi_store", b2));
	CHECK(flexio_process_call(p1, fxi_load, &r, g2) == FLEXIO_STATUS_FATAL_ERR);
	CHECK(crashed_at(p1, "fxi_load", g2));
	CHECK(flexio_err_status(p2) == FLEXIO_DEV_NO_ERROR);
	CHECK(flexio_process_call(p2, fxi_load, &r, g2) == FLEXIO_STATUS_SUCCESS && r == 21); /* not overwritten */
	CHECK(flexio_process_call(p2, fxi_load, &r, b2) == FLEXIO_STATUS_SUCCESS && r == 0);
	CHECK(proc_end(p1) && proc_end(p2));
}

/* Host code on another thread: both heaps, read and written directly and by flexio_host2dev_memcpy. */
struct host_job {
	struct flexio_process *p[2];
	flexio_uintptr_t d[2];
	bool deny_first; /* the thread's PKRU denies every key before it starts */
	bool ok;
};

static void *host_thread(void *arg)
{
	struct host_job *j = arg;
	uint8_t host[BUF_LEN];

	if (j->deny_first)
		wrpkru(rdpkru() | 0x55555554u); /* access-disable for keys 1..15, the kernel's default */
	j->ok = true;
	for (int i = 0; i < 2; i++) {
		uint8_t *d = (uint8_t *)(uintptr_t)j->d[i];

		j->ok = j->ok && weighted_sum(d, BUF_LEN) == pattern_sum((uint8_t)(1 + i));
		pattern(host, sizeof(host), (uint8_t)(10 + i));
		j->ok = j->ok && flexio_host2dev_memcpy(j->p[i], host, sizeof(host), j->d[i]) == FLEXIO_STATUS_SUCCESS;
		d[0] = (uint8_t)(d[0] + 1);
	}
	return NULL;
}

static void host_threads(bool deny)
{
	struct flexio_process *p1 = proc_new(), *p2 = proc_new();
	uint8_t want[BUF_LEN];
	uint64_t r = 0;

	CHECK(p1 != NULL && p2 != NULL);
	{
		struct host_job j = { .p = { p1, p2 }, .d = { buf_new(p1, 1), buf_new(p2, 2) }, .deny_first = deny };
		pthread_t t;

		CHECK(j.d[0] != 0 && j.d[1] != 0);
		/* A call first: the library's fault handler is installed with the first hart. */
		CHECK(dev_sum(p1, j.d[0], &r) == FLEXIO_STATUS_SUCCESS);
		CHECK(dev_sum(p2, j.d[1], &r) == FLEXIO_STATUS_SUCCESS);
		CHECK(pthread_create(&t, NULL, host_thread, &j) == 0);
		CHECK(pthread_join(t, NULL) == 0);
		CHECK(j.ok);
		for (int i = 0; i < 2; i++) {
			pattern(want, sizeof(want), (uint8_t)(10 + i));
			want[0]++;
			CHECK(dev_sum(j.p[i], j.d[i], &r) == FLEXIO_STATUS_SUCCESS && r == weighted_sum(want, BUF_LEN));
		}
	}
	CHECK(proc_end(p1) && proc_end(p2));
}

static void test_host_threads(void)
{
	host_threads(false);
}

/* A thread whose PKRU denies every key (one that predates the library's keys): the fault handler grants them. */
static void test_host_thread_without_keys(void)
{
	if (!pku)
		SKIP("no protection keys: no thread can be denied them");
	host_threads(true);
}

/* Keys come back: far more processes than keys, one after the other. */
static void test_keys_reused(void)
{
	for (int i = 0; i < 40; i++) {
		struct flexio_process *p = proc_new();
		flexio_uintptr_t d;
		uint64_t r = 0;

		CHECK(p != NULL);
		d = buf_new(p, (uint8_t)i);
		CHECK(d != 0 && dev_sum(p, d, &r) == FLEXIO_STATUS_SUCCESS && r == pattern_sum((uint8_t)i));
		CHECK(proc_end(p));
	}
}

/*
 * More processes at once than the CPU has keys: the later ones run without
 * a key of their own (their memory reachable) but are still denied the
 * isolated ones'; once they are gone the keys serve new processes.
 */
static void keys_exhausted(bool cross)
{
	struct flexio_process *p[MANY];
	flexio_uintptr_t d[MANY];
	uint64_t r = 0;

	for (int i = 0; i < MANY; i++) {
		p[i] = proc_new();
		CHECK(p[i] != NULL);
		d[i] = buf_new(p[i], (uint8_t)i);
		CHECK(d[i] != 0);
	}
	for (int i = 0; i < MANY; i++)
		CHECK(dev_sum(p[i], d[i], &r) == FLEXIO_STATUS_SUCCESS && r == pattern_sum((uint8_t)i));
	if (cross) {
		/* p[0] came first with no other process alive: it has a key; p[MANY-1] cannot have one. */
		CHECK(dev_sum(p[MANY - 1], d[0], &r) == FLEXIO_STATUS_FATAL_ERR);
		CHECK(crashed_at(p[MANY - 1], "fxi_sum", d[0]));
		CHECK(dev_sum(p[0], d[MANY - 1], &r) == FLEXIO_STATUS_SUCCESS && r == pattern_sum(MANY - 1));
	}
	for (int i = 0; i < MANY; i++)
		CHECK(proc_end(p[i]));
	for (int i = 0; i < 2; i++) {
		p[i] = proc_new();
		CHECK(p[i] != NULL);
		d[i] = buf_new(p[i], (uint8_t)i);
		CHECK(d[i] != 0);
	}
	if (cross) {
		CHECK(dev_sum(p[0], d[1], &r) == FLEXIO_STATUS_FATAL_ERR && crashed_at(p[0], "fxi_sum", d[1]));
		CHECK(dev_sum(p[1], d[0], &r) == FLEXIO_STATUS_FATAL_ERR && crashed_at(p[1], "fxi_sum", d[0]));
	}
	CHECK(dev_sum(p[0], d[0], &r) == FLEXIO_STATUS_SUCCESS && r == pattern_sum(0));
	CHECK(proc_end(p[0]) && proc_end(p[1]));
}

static void test_keys_exhausted(void)
{
	keys_exhausted(false);
}

static void test_keys_exhausted_cross_process(void)
{
	if (!pku)
		SKIP("no protection keys: no process is isolated");
	keys_exhausted(true);
}

/* The first process says whether DPA memory is isolated where users see it: a warning when it is not. */
static void test_isolation_off_said(void)
{
	char text[1024];
	FILE *f = tmpfile();
	int saved = dup(2);
	struct flexio_process *p;
	size_t n;

	CHECK(f != NULL && saved >= 0);
	fflush(stderr);
	dup2(fileno(f), 2);
	p = proc_new();
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	CHECK(p != NULL && proc_end(p));
	if (pku)
		CHECK(strstr(text, "isolation") == NULL);
	else
		CHECK(strstr(text, "DPA memory isolation between FlexIO processes is off") != NULL);
}

int main(void)
{
	const char *why = "";

	open_dev();
	if (ctx == NULL) {
		fprintf(stderr, "no device\n");
		return 1;
	}
	pku = pku_probe(&why);
	if (!pku)
		printf("test_flexio_isolation: %s: the cross-process cases are skipped\n", why);
	/* First: the library speaks at its first process. At the default level, whatever the test run set. */
	setenv("SOFTDPU_LOG_LEVEL", "warning", 1);
	RUN(test_isolation_off_said);
	RUN(test_heap);
	RUN(test_heap_cross_process);
	RUN(test_globals);
	RUN(test_globals_cross_process);
	RUN(test_host_threads);
	RUN(test_host_thread_without_keys);
	RUN(test_keys_reused);
	RUN(test_keys_exhausted);
	RUN(test_keys_exhausted_cross_process);
	ibv_close_device(ctx);
	return th_summary("test_flexio_isolation");
}
