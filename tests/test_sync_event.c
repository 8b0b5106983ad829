/*
 * DOCA Sync Event: configuration and state rules, synchronous and
 * asynchronous data path, user backing memory, and sharing with a DPU-side
 * process (this binary re-executed through /proc/self/exe with a role:
 * "--child <side> <role>"), including refused descriptors, revocation and
 * killed peers. Waits on another process are bounded by that process's life,
 * never by time.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "doca_ctx.h"
#include "doca_dev.h"
#include "doca_sync_event.h"
#include "harness.h"
#include "se_fixture.h"
#include "th_proc.h"

#define BLOB_LEN 80
#define PINGPONG_ROUNDS 10000u

/* ------------------------------------------------------------------ helpers */

static struct doca_devinfo **dev_list;
static uint32_t dev_count;

/* First local device accepted by filter (NULL filter: any). */
static struct doca_dev *open_dev(doca_error_t (*filter)(const struct doca_devinfo *))
{
	struct doca_dev *dev = NULL;

	if (dev_list == NULL && doca_devinfo_list_create(&dev_list, &dev_count) != DOCA_SUCCESS)
		return NULL;
	for (uint32_t i = 0; i < dev_count; i++) {
		if (filter != NULL && filter(dev_list[i]) != DOCA_SUCCESS)
			continue;
		if (doca_dev_open(dev_list[i], &dev) == DOCA_SUCCESS)
			return dev;
	}
	return NULL;
}

static void close_devs(void)
{
	if (dev_list != NULL)
		doca_devinfo_list_destroy(dev_list);
	dev_list = NULL;
}

/* Publisher on the CPU of dev; subscriber on the DPU when sub_dpu, else on the CPU too. */
static struct doca_sync_event *make_event(struct doca_dev *dev, int sub_dpu)
{
	struct doca_sync_event *se = NULL;

	if (doca_sync_event_create(&se) != DOCA_SUCCESS)
		return NULL;
	if (doca_sync_event_publisher_add_location_cpu(se, dev) != DOCA_SUCCESS ||
	    (sub_dpu ? doca_sync_event_subscriber_add_location_dpu(se)
		     : doca_sync_event_subscriber_add_location_cpu(se, dev)) != DOCA_SUCCESS) {
		doca_sync_event_destroy(se);
		return NULL;
	}
	return se;
}

/* Same CRC-32 as the descriptor's: lets a test forge a well-formed one. */
static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
	}
	return ~c;
}

static void reseal(uint8_t *blob)
{
	uint32_t c = crc32_ieee(blob, 76);

	for (int i = 0; i < 4; i++)
		blob[76 + i] = (uint8_t)(c >> (8 * i));
}

/* Sync Event pages and names this process still holds (memfd links, mappings) or left in /dev/shm. */
static int leftovers(void)
{
	char path[300], link[512];
	struct dirent *d;
	int n = 0;
	DIR *dir = opendir("/proc/self/fd");
	FILE *maps;

	while (dir != NULL && (d = readdir(dir)) != NULL) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", d->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len > 0) {
			link[len] = '\0';
			n += strstr(link, "sdpu-se") != NULL;
		}
	}
	if (dir != NULL)
		closedir(dir);
	maps = fopen("/proc/self/maps", "r");
	while (maps != NULL && fgets(link, sizeof(link), maps) != NULL)
		n += strstr(link, "sdpu-se") != NULL;
	if (maps != NULL)
		fclose(maps);
	dir = opendir("/dev/shm");
	while (dir != NULL && (d = readdir(dir)) != NULL)
		n += strstr(d->d_name, "sdpu-se") != NULL;
	if (dir != NULL)
		closedir(dir);
	return n;
}

/* ------------------------------------------------------------ child process */

/* A DPU- or host-side process of this binary (tests/th_proc.h); the harness reaps it after the case. */
struct child {
	struct th_proc *p;
};

static int spawn_child(struct child *c, const char *side, const char *role)
{
	c->p = th_proc_start(side, "--child", side, role, NULL);
	return c->p == NULL ? -1 : 0;
}

static void child_send(struct child *c, const char *line)
{
	if (th_proc_send(c->p, "%s", line) != 0)
		fprintf(stderr, "child_send: the process does not take input any more\n");
}

/* Next line from the child; empty when it is gone (or silent for the launcher's hang guard). */
static const char *child_recv(struct child *c, char *buf, size_t len)
{
	const char *l = th_proc_line(c->p);

	size_t n = l != NULL ? strlen(l) : 0;

	if (n >= len)
		n = len - 1; /* a longer line is cut: the callers compare short answers */
	memcpy(buf, l != NULL ? l : "", n);
	buf[n] = '\0';
	return buf;
}

static int child_alive(struct child *c)
{
	return th_proc_alive(c->p);
}

/* Exit code of the child (reaps it), or -1 when it did not exit normally. */
static int child_finish(struct child *c)
{
	int st = th_proc_wait(c->p);

	return st >= 0 && st < 128 ? st : -1;
}

static void child_kill(struct child *c)
{
	th_proc_kill(c->p);
	child_finish(c);
}

/*
 * Waits until the event's value is greater than v while the child lives;
 * returns 1 when it is, 0 when the child went away first.
 */
static int wait_gt_while(struct doca_sync_event *se, uint64_t v, struct child *c)
{
	uint64_t cur = 0;

	for (uint32_t n = 0;; n++) {
		if (doca_sync_event_get(se, &cur) != DOCA_SUCCESS)
			return 0;
		if (cur > v)
			return 1;
		if ((n & 255) == 0 && !child_alive(c))
			return doca_sync_event_get(se, &cur) == DOCA_SUCCESS && cur > v;
		sched_yield();
	}
}

/* --- child roles (they run in the re-executed binary, DPU side unless said) --- */

static doca_error_t dpu_filter(const struct doca_devinfo *di)
{
	return doca_sync_event_get_create_from_export_supported(di);
}

static doca_error_t host_filter(const struct doca_devinfo *di)
{
	return doca_sync_event_get_export_to_dpu_supported(di);
}

/* Reads a hex blob line and imports it; NULL on failure. */
static struct doca_sync_event *child_import(struct doca_dev *dev)
{
	char line[512];
	uint8_t blob[256];
	struct doca_sync_event *se = NULL;
	long n;

	if (fgets(line, sizeof(line), stdin) == NULL)
		return NULL;
	n = th_hex_decode(line, blob, sizeof(blob));
	if (n < 0 || doca_sync_event_create_from_export(dev, blob, (size_t)n, &se) != DOCA_SUCCESS)
		return NULL;
	return se;
}

static void say(const char *fmt, long v)
{
	printf(fmt, v);
	putchar('\n');
	fflush(stdout);
}

/* One create_from_export per line; prints its code. */
static int role_codes(struct doca_dev *dev)
{
	char line[512];
	uint8_t blob[256];

	while (fgets(line, sizeof(line), stdin) != NULL) {
		struct doca_sync_event *se = NULL;
		long n = th_hex_decode(line, blob, sizeof(blob));
		doca_error_t rc;

		if (n < 0)
			return 3;
		rc = doca_sync_event_create_from_export(dev, n == 0 ? (const uint8_t *)"" : blob, (size_t)n, &se);
		if (rc == DOCA_SUCCESS)
			doca_sync_event_destroy(se);
		say("%ld", rc);
	}
	return 0;
}

static int role_handshake(struct doca_sync_event *se)
{
	uint64_t v = 0, fetched = 0;

	if (doca_sync_event_start(se) != DOCA_SUCCESS)
		return 2;
	say("ready", 0);
	if (doca_sync_event_wait_gt(se, 0, UINT64_MAX) != DOCA_SUCCESS || doca_sync_event_get(se, &v) != DOCA_SUCCESS)
		return 3;
	if (v != 5)
		return 4;
	if (doca_sync_event_update_add(se, 10, &fetched) != DOCA_SUCCESS || fetched != 5)
		return 5;
	return 0;
}

static int role_pingpong(struct doca_sync_event *se)
{
	uint64_t v, fetched;

	if (doca_sync_event_start(se) != DOCA_SUCCESS)
		return 2;
	say("ready", 0);
	for (uint64_t i = 0; i < PINGPONG_ROUNDS; i++) {
		if (doca_sync_event_wait_gt_yield(se, 2 * i, UINT64_MAX) != DOCA_SUCCESS ||
		    doca_sync_event_get(se, &v) != DOCA_SUCCESS || v != 2 * i + 1)
			return 3;
		if (doca_sync_event_update_add(se, 1, &fetched) != DOCA_SUCCESS || fetched != 2 * i + 1)
			return 4;
	}
	return 0;
}

/* Polls a work queue until the job completes; the host's update ends the wait. */
static doca_error_t child_run_job(struct doca_workq *wq, const struct doca_job *job, struct doca_event *ev)
{
	doca_error_t rc = doca_workq_submit(wq, job);

	if (rc != DOCA_SUCCESS)
		return rc;
	while ((rc = doca_workq_progress_retrieve(wq, ev, 0)) == DOCA_ERROR_AGAIN)
		sched_yield();
	return rc;
}

static int role_async(struct doca_sync_event *se)
{
	struct doca_ctx *ctx = doca_sync_event_as_ctx(se);
	struct doca_workq *wq = NULL;
	struct doca_event ev = { 0 };
	uint64_t fetched = 0;
	struct doca_sync_event_job_wait w = { .base = { .type = DOCA_SYNC_EVENT_JOB_WAIT_GT, .ctx = ctx },
					      .value = 0, .mask = UINT64_MAX };
	struct doca_sync_event_job_update_add a = { .base = { .type = DOCA_SYNC_EVENT_JOB_UPDATE_ADD, .ctx = ctx },
						    .value = 2, .fetched = &fetched };
	int ret = 0;

	if (ctx == NULL || doca_ctx_start(ctx) != DOCA_SUCCESS || doca_workq_create(4, &wq) != DOCA_SUCCESS ||
	    doca_ctx_workq_add(ctx, wq) != DOCA_SUCCESS)
		return 2;
	say("ready", 0);
	if (child_run_job(wq, &w.base, &ev) != DOCA_SUCCESS || ev.type != DOCA_SYNC_EVENT_JOB_WAIT_GT)
		ret = 3;
	else if (child_run_job(wq, &a.base, &ev) != DOCA_SUCCESS || fetched != 5)
		ret = 4;
	doca_ctx_workq_rm(ctx, wq);
	doca_workq_destroy(wq);
	doca_ctx_stop(ctx);
	return ret;
}

/* Reports the codes of get/set/add/wait once the host says it destroyed the event. */
static int role_revoked(struct doca_sync_event *se)
{
	char line[64];
	uint64_t v, f;

	if (doca_sync_event_start(se) != DOCA_SUCCESS)
		return 2;
	say("ready", 0);
	if (fgets(line, sizeof(line), stdin) == NULL)
		return 3;
	say("%ld", doca_sync_event_get(se, &v));
	say("%ld", doca_sync_event_update_set(se, 1));
	say("%ld", doca_sync_event_update_add(se, 1, &f));
	say("%ld", doca_sync_event_wait_gt(se, 0, UINT64_MAX));
	return 0;
}

static long evwait_loop(struct doca_workq *wq, int ep, int fd, struct doca_event *ev, long *wakes)
{
	struct epoll_event out;
	doca_error_t st;

	for (int ms_left = 10000; ms_left > 0; ms_left -= 10) { /* bounded: never hangs the suite */
		if (doca_workq_event_handle_arm(wq) != DOCA_SUCCESS)
			return -1;
		if (epoll_wait(ep, &out, 1, 10) == 1) {
			(*wakes)++;
			doca_workq_event_handle_clear(wq, fd);
		}
		st = doca_workq_progress_retrieve(wq, ev, 0);
		if (st == DOCA_SUCCESS)
			return (long)ev->result.u64;
		if (st != DOCA_ERROR_AGAIN)
			return (long)ev->result.u64 + 1000;
	}
	return -2;
}

/*
 * Event-driven wait on the imported event, in the vendor's arm / epoll /
 * clear / retrieve loop: reports how often it woke and how the wait ended
 * (the host either updates the event or destroys it).
 */
static int role_evwait(struct doca_sync_event *se)
{
	struct doca_ctx *ctx = doca_sync_event_as_ctx(se);
	struct doca_sync_event_job_wait w = { .base = { .type = DOCA_SYNC_EVENT_JOB_WAIT_GT, .ctx = ctx },
					      .value = 5, .mask = UINT64_MAX };
	struct epoll_event e = { .events = EPOLLIN };
	struct doca_workq *wq = NULL;
	struct doca_event ev = { 0 };
	doca_event_handle_t fd;
	long wakes = 0, status;
	int ep;

	if (ctx == NULL || doca_ctx_start(ctx) != DOCA_SUCCESS || doca_workq_create(4, &wq) != DOCA_SUCCESS ||
	    doca_workq_set_event_driven_enable(wq, 1) != DOCA_SUCCESS || doca_ctx_workq_add(ctx, wq) != DOCA_SUCCESS ||
	    doca_workq_get_event_handle(wq, &fd) != DOCA_SUCCESS)
		return 2;
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e) != 0 || doca_workq_submit(wq, &w.base) != DOCA_SUCCESS)
		return 3;
	say("ready", 0);
	status = evwait_loop(wq, ep, fd, &ev, &wakes);
	say("wakes %ld", wakes);
	say("status %ld", status);
	close(ep);
	doca_ctx_workq_rm(ctx, wq);
	doca_workq_destroy(wq);
	doca_ctx_stop(ctx);
	return 0;
}

/* Signals once, then waits for a value nobody sets: the host kills it. */
static int role_hang(struct doca_sync_event *se)
{
	uint64_t f;

	if (doca_sync_event_start(se) != DOCA_SUCCESS || doca_sync_event_update_add(se, 1, &f) != DOCA_SUCCESS)
		return 2;
	doca_sync_event_wait_gt(se, UINT64_MAX - 1, UINT64_MAX);
	return 3;
}

/* Waits on a value its exporter never sets: the exporter gets killed meanwhile. */
static int role_orphan(struct doca_sync_event *se)
{
	if (doca_sync_event_start(se) != DOCA_SUCCESS)
		return 2;
	say("ready", 0);
	say("%ld", doca_sync_event_wait_gt_yield(se, 0, UINT64_MAX));
	return 0;
}

/* Host side: an exporter that prints its descriptor and then only waits to be killed. */
static int role_exporter(void)
{
	struct doca_dev *dev = open_dev(host_filter);
	struct doca_sync_event *se = dev ? make_event(dev, 1) : NULL;
	const uint8_t *blob;
	size_t sz;
	char hex[2 * BLOB_LEN + 1], line[16];

	if (se == NULL || doca_sync_event_start(se) != DOCA_SUCCESS ||
	    doca_sync_event_export_to_dpu(se, dev, &blob, &sz) != DOCA_SUCCESS || sz != BLOB_LEN)
		return 2;
	th_hex_encode(blob, sz, hex);
	printf("%s\n", hex);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin) != NULL)
		;
	return 0;
}

static int child_main(const char *side, const char *role)
{
	struct doca_dev *dev;
	struct doca_sync_event *se;
	int ret;

	/* The side is read once, at the first DOCA call. */
	setenv("SOFTDPU_SIDE", side, 1);
	if (strcmp(role, "exporter") == 0)
		return role_exporter();
	dev = open_dev(dpu_filter);
	if (dev == NULL)
		return 10;
	if (strcmp(role, "codes") == 0)
		return role_codes(dev);
	se = child_import(dev);
	if (se == NULL)
		return 11;
	if (strcmp(role, "handshake") == 0)
		ret = role_handshake(se);
	else if (strcmp(role, "pingpong") == 0)
		ret = role_pingpong(se);
	else if (strcmp(role, "async") == 0)
		ret = role_async(se);
	else if (strcmp(role, "revoked") == 0)
		ret = role_revoked(se);
	else if (strcmp(role, "hang") == 0)
		ret = role_hang(se);
	else if (strcmp(role, "evwait") == 0)
		ret = role_evwait(se);
	else if (strcmp(role, "orphan") == 0)
		ret = role_orphan(se);
	else
		ret = 12;
	if (doca_sync_event_destroy(se) != DOCA_SUCCESS && ret == 0)
		ret = 13;
	doca_dev_close(dev);
	close_devs();
	return ret;
}

/* --------------------------------------------------------- in-process tests */

static struct doca_dev *host_dev;

static void test_create_destroy(void)
{
	struct doca_sync_event *se;

	CHECK_ERR(doca_sync_event_create(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_destroy(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sync_event_create(&se));
	CHECK_OK(doca_sync_event_destroy(se));
	/* A configured, started event: destroy stops it. */
	se = make_event(host_dev, 0);
	CHECK(se != NULL);
	CHECK_OK(doca_sync_event_start(se));
	CHECK_OK(doca_sync_event_destroy(se));
}

static void test_configuration_rules(void)
{
	struct doca_sync_event *se;
	uint64_t v, word = 0;

	CHECK_OK(doca_sync_event_create(&se));
	CHECK_ERR(doca_sync_event_publisher_add_location_cpu(NULL, host_dev), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_publisher_add_location_cpu(se, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_subscriber_add_location_cpu(NULL, host_dev), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_subscriber_add_location_cpu(se, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_publisher_add_location_dpu(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_subscriber_add_location_dpu(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_start(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_stop(NULL), DOCA_ERROR_INVALID_VALUE);
	/* start needs both locations */
	CHECK_ERR(doca_sync_event_start(se), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_sync_event_publisher_add_location_dpu(se));
	CHECK_ERR(doca_sync_event_start(se), DOCA_ERROR_BAD_STATE);
	/* one location per role */
	CHECK_ERR(doca_sync_event_publisher_add_location_cpu(se, host_dev), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_sync_event_subscriber_add_location_cpu(se, host_dev));
	CHECK_ERR(doca_sync_event_subscriber_add_location_dpu(se), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_sync_event_get(se, &v), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_sync_event_stop(se), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_sync_event_start(se));
	/* configuration only before start */
	CHECK_ERR(doca_sync_event_start(se), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_sync_event_set_addr(se, &word), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_sync_event_subscriber_add_location_dpu(se), DOCA_ERROR_BAD_STATE);
	CHECK(doca_sync_event_as_ctx(se) == NULL);
	CHECK_OK(doca_sync_event_stop(se));
	/* stopped: only destroy remains */
	CHECK_ERR(doca_sync_event_stop(se), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_sync_event_start(se), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_sync_event_get(se, &v), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_sync_event_update_set(se, 1), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_sync_event_destroy(se));
}

static void test_gpu_not_supported(void)
{
	struct doca_sync_event *se;
	int dummy;
	doca_gpu_dev_sync_event_t *gh;
	doca_sync_event_remote_t rh;
	struct doca_gpu *gpu = (struct doca_gpu *)&dummy;

	CHECK_OK(doca_sync_event_create(&se));
	CHECK_ERR(doca_sync_event_publisher_add_location_gpu(se, gpu), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_sync_event_subscriber_add_location_gpu(se, gpu), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_sync_event_subscriber_add_location_gpu(NULL, gpu), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_export_to_gpu(se, gpu, &gh), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_sync_event_export_remote(se, &rh), DOCA_ERROR_BAD_STATE); /* not started (test_dpa: started) */
	CHECK_ERR(doca_sync_event_export_to_gpu(NULL, gpu, &gh), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_export_remote(se, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sync_event_destroy(se));
}

static void se_destroy_cb(void *se)
{
	doca_sync_event_destroy(se);
}

/*
 * DPA locations (the context is opaque to the Sync Event library: any
 * pointer names one here) and the export to DPA code: a location per side,
 * the handle only once started and only with a DPA location.
 */
static void test_dpa_locations(void)
{
	struct doca_sync_event *se, *cpu_only;
	int dummy;
	doca_dpa_dev_sync_event_t dh = 0;
	struct doca_dpa *dpa = (struct doca_dpa *)&dummy;

	CHECK_OK(doca_sync_event_create(&se));
	th_defer(se_destroy_cb, se);
	CHECK_ERR(doca_sync_event_publisher_add_location_dpa(se, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_subscriber_add_location_dpa(NULL, dpa), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sync_event_publisher_add_location_dpa(se, dpa));
	CHECK_ERR(doca_sync_event_publisher_add_location_dpa(se, dpa), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_sync_event_subscriber_add_location_cpu(se, host_dev));
	CHECK_ERR(doca_sync_event_export_to_dpa(se, dpa, &dh), DOCA_ERROR_BAD_STATE); /* not started */
	CHECK_OK(doca_sync_event_start(se));
	CHECK_ERR(doca_sync_event_subscriber_add_location_dpa(se, dpa), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_sync_event_export_to_dpa(se, dpa, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_export_to_dpa(se, NULL, &dh), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sync_event_export_to_dpa(se, dpa, &dh));
	CHECK(dh != 0);

	CHECK_OK(doca_sync_event_create(&cpu_only));
	th_defer(se_destroy_cb, cpu_only);
	CHECK_OK(doca_sync_event_publisher_add_location_cpu(cpu_only, host_dev));
	CHECK_OK(doca_sync_event_subscriber_add_location_cpu(cpu_only, host_dev));
	CHECK_OK(doca_sync_event_start(cpu_only));
	CHECK_ERR(doca_sync_event_export_to_dpa(cpu_only, dpa, &dh), DOCA_ERROR_NOT_PERMITTED);
}

static void test_capabilities(void)
{
	struct doca_devinfo *di = doca_dev_as_devinfo(host_dev);

	CHECK_OK(doca_sync_event_get_export_to_dpu_supported(di));
	CHECK_ERR(doca_sync_event_get_create_from_export_supported(di), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_OK(doca_sync_event_get_export_to_dpa_supported(di));
	CHECK_ERR(doca_sync_event_get_export_to_gpu_supported(di), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_sync_event_get_export_to_dpu_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_get_create_from_export_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_get_export_to_dpa_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_get_export_to_gpu_supported(NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sync_event_job_get_supported(di, DOCA_SYNC_EVENT_JOB_WAIT_GT));
	CHECK_OK(doca_sync_event_job_get_supported(di, DOCA_SYNC_EVENT_JOB_GET));
	CHECK_OK(doca_sync_event_job_get_supported(di, DOCA_SYNC_EVENT_JOB_UPDATE_SET));
	CHECK_OK(doca_sync_event_job_get_supported(di, DOCA_SYNC_EVENT_JOB_UPDATE_ADD));
	CHECK_ERR(doca_sync_event_job_get_supported(di, (enum doca_sync_event_job_types)0), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_job_get_supported(NULL, DOCA_SYNC_EVENT_JOB_GET), DOCA_ERROR_INVALID_VALUE);
}

static void test_sync_data_path(void)
{
	struct doca_sync_event *se = make_event(host_dev, 0);
	uint64_t v = 1, fetched = 0;

	CHECK(se != NULL);
	CHECK_ERR(doca_sync_event_update_set(se, 1), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_sync_event_update_add(se, 1, &fetched), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_sync_event_wait_gt(se, 0, UINT64_MAX), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_sync_event_wait_gt_yield(se, 0, UINT64_MAX), DOCA_ERROR_BAD_STATE);
	CHECK_OK(doca_sync_event_start(se));
	CHECK_OK(doca_sync_event_get(se, &v));
	CHECK(v == 0);
	CHECK_OK(doca_sync_event_update_set(se, 41));
	CHECK_OK(doca_sync_event_update_add(se, 2, &fetched));
	CHECK(fetched == 41);
	CHECK_OK(doca_sync_event_get(se, &v));
	CHECK(v == 43);
	CHECK_OK(doca_sync_event_wait_gt(se, 42, UINT64_MAX));
	CHECK_OK(doca_sync_event_wait_gt_yield(se, 42, UINT64_MAX));
	/* the mask applies before the comparison: 0x1ff & 0xff = 0xff > 0xfe */
	CHECK_OK(doca_sync_event_update_set(se, 0x1ff));
	CHECK_OK(doca_sync_event_wait_gt(se, 0xfe, 0xff));
	CHECK_OK(doca_sync_event_wait_gt_yield(se, 0xff, 0xf00));
	/* wrap-around is modular, as the hardware counter's */
	CHECK_OK(doca_sync_event_update_set(se, UINT64_MAX));
	CHECK_OK(doca_sync_event_update_add(se, 1, &fetched));
	CHECK(fetched == UINT64_MAX);
	CHECK_OK(doca_sync_event_get(se, &v));
	CHECK(v == 0);
	CHECK_ERR(doca_sync_event_get(se, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_get(NULL, &v), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_update_add(se, 1, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_update_add(NULL, 1, &fetched), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_update_set(NULL, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_wait_gt(NULL, 0, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_wait_gt_yield(NULL, 0, 1), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sync_event_stop(se));
	CHECK_OK(doca_sync_event_destroy(se));
}

struct updater {
	struct doca_sync_event *se;
	atomic_int go;	/* set by the waiter just before it waits */
	int use_add;
	doca_error_t rc;
};

static void *updater_main(void *arg)
{
	struct updater *u = arg;
	uint64_t fetched;

	while (atomic_load(&u->go) == 0)
		sched_yield();
	u->rc = u->use_add ? doca_sync_event_update_add(u->se, 5, &fetched) : doca_sync_event_update_set(u->se, 42);
	return NULL;
}

static void test_wait_woken_by_other_thread(void)
{
	struct updater u = { .se = make_event(host_dev, 0) };
	pthread_t t;
	uint64_t v;

	CHECK(u.se != NULL);
	CHECK_OK(doca_sync_event_start(u.se));
	CHECK(pthread_create(&t, NULL, updater_main, &u) == 0);
	atomic_store(&u.go, 1);
	CHECK_OK(doca_sync_event_wait_gt(u.se, 41, UINT64_MAX));
	pthread_join(t, NULL);
	CHECK_OK(u.rc);
	/* the yielding wait, woken by an atomic add */
	u.use_add = 1;
	atomic_store(&u.go, 0);
	CHECK(pthread_create(&t, NULL, updater_main, &u) == 0);
	atomic_store(&u.go, 1);
	CHECK_OK(doca_sync_event_wait_gt_yield(u.se, 46, UINT64_MAX));
	pthread_join(t, NULL);
	CHECK_OK(u.rc);
	CHECK_OK(doca_sync_event_get(u.se, &v));
	CHECK(v == 47);
	CHECK_OK(doca_sync_event_destroy(u.se));
}

#define ADDERS 4
#define ADDS_PER_THREAD 50000

static void *adder_main(void *arg)
{
	uint64_t fetched;

	for (int i = 0; i < ADDS_PER_THREAD; i++)
		if (doca_sync_event_update_add(arg, 1, &fetched) != DOCA_SUCCESS)
			return arg;
	return NULL;
}

static void test_update_add_is_atomic(void)
{
	struct doca_sync_event *se = make_event(host_dev, 1); /* shared page: the exported case */
	pthread_t t[ADDERS];
	void *res;
	uint64_t v;
	int bad = 0;

	CHECK(se != NULL);
	CHECK_OK(doca_sync_event_start(se));
	for (int i = 0; i < ADDERS; i++)
		CHECK(pthread_create(&t[i], NULL, adder_main, se) == 0);
	for (int i = 0; i < ADDERS; i++) {
		pthread_join(t[i], &res);
		bad += res != NULL;
	}
	CHECK(bad == 0);
	CHECK_OK(doca_sync_event_get(se, &v));
	CHECK(v == (uint64_t)ADDERS * ADDS_PER_THREAD);
	CHECK_OK(doca_sync_event_destroy(se));
}

static void test_user_backing_memory(void)
{
	struct doca_sync_event *se = make_event(host_dev, 0);
	_Alignas(8) uint64_t words[2] = { 0, 0 };
	uint64_t v, fetched;

	CHECK(se != NULL);
	CHECK_ERR(doca_sync_event_set_addr(se, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_set_addr(NULL, &words[0]), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_set_addr(se, (uint64_t *)((char *)words + 4)), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sync_event_set_addr(se, &words[0]));
	CHECK_OK(doca_sync_event_start(se));
	CHECK_OK(doca_sync_event_update_set(se, 7));
	CHECK(words[0] == 7);
	CHECK_OK(doca_sync_event_update_add(se, 3, &fetched));
	CHECK(fetched == 7 && words[0] == 10);
	words[0] = 99; /* the user's writes are the event's value */
	CHECK_OK(doca_sync_event_get(se, &v));
	CHECK(v == 99);
	CHECK_OK(doca_sync_event_wait_gt(se, 98, UINT64_MAX));
	CHECK(words[1] == 0);
	CHECK_OK(doca_sync_event_destroy(se));
	CHECK(words[0] == 99); /* the memory stays the user's */
}

static void test_export_rules_in_process(void)
{
	struct doca_sync_event *se = make_event(host_dev, 1), *local = make_event(host_dev, 0), *imp = NULL;
	_Alignas(8) uint64_t word = 0;
	struct doca_sync_event *user = make_event(host_dev, 1);
	const uint8_t *blob = NULL, *blob2 = NULL;
	size_t sz = 0, sz2 = 0;

	CHECK(se != NULL && local != NULL && user != NULL);
	CHECK_ERR(doca_sync_event_export_to_dpu(NULL, host_dev, &blob, &sz), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_export_to_dpu(se, NULL, &blob, &sz), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_export_to_dpu(se, host_dev, NULL, &sz), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_export_to_dpu(se, host_dev, &blob, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_export_to_dpu(se, host_dev, &blob, &sz), DOCA_ERROR_BAD_STATE); /* not started */
	CHECK_OK(doca_sync_event_start(se));
	CHECK_OK(doca_sync_event_export_to_dpu(se, host_dev, &blob, &sz));
	CHECK(blob != NULL && sz == BLOB_LEN);
	CHECK_OK(doca_sync_event_export_to_dpu(se, host_dev, &blob2, &sz2));
	CHECK(blob2 == blob && sz2 == sz);
	/* no DPU location */
	CHECK_OK(doca_sync_event_start(local));
	CHECK_ERR(doca_sync_event_export_to_dpu(local, host_dev, &blob2, &sz2), DOCA_ERROR_BAD_STATE);
	/* the user's memory cannot reach another process */
	CHECK_OK(doca_sync_event_set_addr(user, &word));
	CHECK_OK(doca_sync_event_start(user));
	CHECK_ERR(doca_sync_event_export_to_dpu(user, host_dev, &blob2, &sz2), DOCA_ERROR_NOT_SUPPORTED);
	/* only the DPU side imports */
	CHECK_ERR(doca_sync_event_create_from_export(host_dev, blob, sz, &imp), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_sync_event_create_from_export(NULL, blob, sz, &imp), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_create_from_export(host_dev, NULL, sz, &imp), DOCA_ERROR_INVALID_VALUE);
	CHECK_ERR(doca_sync_event_create_from_export(host_dev, blob, sz, NULL), DOCA_ERROR_INVALID_VALUE);
	CHECK_OK(doca_sync_event_destroy(se));
	CHECK_OK(doca_sync_event_destroy(local));
	CHECK_OK(doca_sync_event_destroy(user));
	CHECK(leftovers() == 0);
}

/* ------------------------------------------------------------ async mode */

/* The event of tests/se_fixture.h on the host device, with a work queue of depth 8. */
static int async_setup(struct se_fx *f, int event_driven)
{
	return se_fx_setup(f, host_dev, 8, event_driven);
}

static void test_as_ctx_rules(void)
{
	struct doca_sync_event *se, *unconf;
	struct doca_ctx *ctx;
	uint8_t ed = 0;
	uint64_t v;

	CHECK(doca_sync_event_as_ctx(NULL) == NULL);
	CHECK_OK(doca_sync_event_create(&unconf));
	CHECK(doca_sync_event_as_ctx(unconf) == NULL); /* needs both locations */
	CHECK_OK(doca_sync_event_destroy(unconf));
	se = make_event(host_dev, 0);
	CHECK(se != NULL);
	ctx = doca_sync_event_as_ctx(se);
	CHECK(ctx != NULL);
	CHECK(doca_sync_event_as_ctx(se) == ctx);
	CHECK_OK(doca_ctx_get_event_driven_supported(ctx, &ed));
	CHECK(ed == 1);
	/* the mode is fixed: no synchronous start, no more configuration */
	CHECK_ERR(doca_sync_event_start(se), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_sync_event_stop(se), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_sync_event_subscriber_add_location_dpu(se), DOCA_ERROR_BAD_STATE);
	CHECK_ERR(doca_ctx_dev_add(ctx, host_dev), DOCA_ERROR_NOT_SUPPORTED);
	CHECK_ERR(doca_sync_event_get(se, &v), DOCA_ERROR_BAD_STATE); /* context not started */
	CHECK_OK(doca_ctx_start(ctx));
	CHECK_OK(doca_sync_event_get(se, &v)); /* the counter is the same in both modes */
	CHECK_OK(doca_sync_event_destroy(se)); /* started, no work queue: destroy stops it */
}

static doca_error_t run_job(struct doca_workq *wq, const struct doca_job *job, struct doca_event *ev)
{
	doca_error_t rc = doca_workq_submit(wq, job);

	if (rc != DOCA_SUCCESS)
		return rc;
	while ((rc = doca_workq_progress_retrieve(wq, ev, 0)) == DOCA_ERROR_AGAIN)
		;
	return rc;
}

static void test_async_jobs(void)
{
	struct se_fx f;
	struct doca_event ev;
	uint64_t got = 0, fetched = 0;

	CHECK(async_setup(&f, 0) == 0);
	struct doca_sync_event_job_update_set set = {
		.base = { .type = DOCA_SYNC_EVENT_JOB_UPDATE_SET, .ctx = f.ctx, .user_data = { .u64 = 11 } }, .value = 40
	};
	struct doca_sync_event_job_update_add add = {
		.base = { .type = DOCA_SYNC_EVENT_JOB_UPDATE_ADD, .ctx = f.ctx, .user_data = { .u64 = 12 } },
		.value = 3,
		.fetched = &fetched
	};
	struct doca_sync_event_job_get get = {
		.base = { .type = DOCA_SYNC_EVENT_JOB_GET, .ctx = f.ctx, .user_data = { .u64 = 13 } }, .value = &got
	};
	struct doca_sync_event_job_wait wait = {
		.base = { .type = DOCA_SYNC_EVENT_JOB_WAIT_GT, .ctx = f.ctx, .user_data = { .u64 = 14 } },
		.value = 42,
		.mask = UINT64_MAX
	};

	CHECK_OK(run_job(f.wq, &set.base, &ev));
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_UPDATE_SET && ev.user_data.u64 == 11 && ev.result.u64 == DOCA_SUCCESS);
	CHECK_OK(run_job(f.wq, &add.base, &ev));
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_UPDATE_ADD && ev.user_data.u64 == 12 && fetched == 40);
	CHECK_OK(run_job(f.wq, &get.base, &ev));
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_GET && ev.user_data.u64 == 13 && got == 43);
	CHECK_OK(run_job(f.wq, &wait.base, &ev)); /* 43 > 42 already */
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_WAIT_GT && ev.user_data.u64 == 14);
	/* malformed jobs are refused at submit */
	get.value = NULL;
	CHECK_ERR(doca_workq_submit(f.wq, &get.base), DOCA_ERROR_INVALID_VALUE);
	add.fetched = NULL;
	CHECK_ERR(doca_workq_submit(f.wq, &add.base), DOCA_ERROR_INVALID_VALUE);
	set.base.type = DOCA_SYNC_EVENT_JOB_UPDATE_ADD + 1;
	CHECK_ERR(doca_workq_submit(f.wq, &set.base), DOCA_ERROR_INVALID_VALUE);
	/* a pending wait does not hold back the jobs behind it */
	set.base.type = DOCA_SYNC_EVENT_JOB_UPDATE_SET;
	set.value = 100;
	wait.value = 99;
	CHECK_OK(doca_workq_submit(f.wq, &wait.base));
	CHECK_OK(doca_workq_submit(f.wq, &set.base));
	CHECK_OK(doca_workq_progress_retrieve(f.wq, &ev, 0));
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_UPDATE_SET && ev.user_data.u64 == 11);
	CHECK_OK(doca_workq_progress_retrieve(f.wq, &ev, 0));
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_WAIT_GT && ev.user_data.u64 == 14);
	CHECK_ERR(doca_workq_progress_retrieve(f.wq, &ev, 0), DOCA_ERROR_AGAIN);
	/* a context with work queues cannot be destroyed under them */
	CHECK_ERR(doca_sync_event_destroy(f.se), DOCA_ERROR_IN_USE);
	CHECK(se_fx_teardown(&f) == 0);
}

static void test_async_wait_pending_until_update(void)
{
	struct se_fx f;
	struct updater u;
	struct doca_event ev = { 0 };
	pthread_t t;
	doca_error_t rc;
	int polls = 0;

	CHECK(async_setup(&f, 0) == 0);
	struct doca_sync_event_job_wait wait = {
		.base = { .type = DOCA_SYNC_EVENT_JOB_WAIT_GT, .ctx = f.ctx, .user_data = { .u64 = 77 } },
		.value = 41,
		.mask = UINT64_MAX
	};

	memset(&u, 0, sizeof(u));
	u.se = f.se;
	CHECK_OK(doca_workq_submit(f.wq, &wait.base));
	/* nobody updated yet: the job stays pending, however often it is polled */
	for (int i = 0; i < 1000; i++)
		CHECK_ERR(doca_workq_progress_retrieve(f.wq, &ev, 0), DOCA_ERROR_AGAIN);
	CHECK(pthread_create(&t, NULL, updater_main, &u) == 0);
	atomic_store(&u.go, 1);
	while ((rc = doca_workq_progress_retrieve(f.wq, &ev, 0)) == DOCA_ERROR_AGAIN)
		polls++;
	pthread_join(t, NULL);
	CHECK_OK(rc);
	CHECK_OK(u.rc);
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_WAIT_GT && ev.user_data.u64 == 77 && ev.result.u64 == DOCA_SUCCESS);
	CHECK(polls >= 0);
	CHECK(se_fx_teardown(&f) == 0);
}

static void test_async_event_driven(void)
{
	struct se_fx f;
	struct updater u;
	struct doca_event ev = { 0 };
	struct epoll_event e = { .events = EPOLLIN }, out;
	doca_event_handle_t h;
	pthread_t t;
	doca_error_t rc = DOCA_ERROR_AGAIN;
	int ep;

	CHECK(async_setup(&f, 1) == 0);
	struct doca_sync_event_job_wait wait = {
		.base = { .type = DOCA_SYNC_EVENT_JOB_WAIT_GT, .ctx = f.ctx, .user_data = { .u64 = 5 } },
		.value = 41,
		.mask = UINT64_MAX
	};

	memset(&u, 0, sizeof(u));
	u.se = f.se;
	CHECK_OK(doca_workq_get_event_handle(f.wq, &h));
	ep = epoll_create1(0);
	CHECK(ep >= 0);
	CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, h, &e) == 0);
	CHECK_OK(doca_workq_event_handle_arm(f.wq));
	CHECK_OK(doca_workq_submit(f.wq, &wait.base));
	CHECK(pthread_create(&t, NULL, updater_main, &u) == 0);
	atomic_store(&u.go, 1);
	/* wait for a signal, clear, retrieve; re-arm while the job is pending */
	while (rc == DOCA_ERROR_AGAIN) {
		if (epoll_wait(ep, &out, 1, -1) != 1)
			break;
		doca_workq_event_handle_clear(f.wq, h);
		rc = doca_workq_progress_retrieve(f.wq, &ev, 0);
		if (rc == DOCA_ERROR_AGAIN)
			doca_workq_event_handle_arm(f.wq);
	}
	pthread_join(t, NULL);
	close(ep);
	CHECK_OK(rc);
	CHECK(ev.type == DOCA_SYNC_EVENT_JOB_WAIT_GT && ev.user_data.u64 == 5);
	CHECK(se_fx_teardown(&f) == 0);
}

/* -------------------------------------------------------- two processes */

/* A started exportable event and its descriptor (hex). */
static struct doca_sync_event *exported(char hex[2 * BLOB_LEN + 1], uint8_t raw[BLOB_LEN])
{
	struct doca_sync_event *se = make_event(host_dev, 1);
	const uint8_t *blob;
	size_t sz;

	if (se == NULL || doca_sync_event_start(se) != DOCA_SUCCESS ||
	    doca_sync_event_export_to_dpu(se, host_dev, &blob, &sz) != DOCA_SUCCESS || sz != BLOB_LEN) {
		if (se != NULL)
			doca_sync_event_destroy(se);
		return NULL;
	}
	th_hex_encode(blob, sz, hex);
	if (raw != NULL)
		memcpy(raw, blob, BLOB_LEN);
	return se;
}

/* An exported event and a DPU-side child importing it. */
struct xp {
	struct doca_sync_event *se; /* NULL once the body destroyed it */
	struct child c;
};

/* What a case stopped by a failed check left of its exported event. */
static void se_release(void *se)
{
	doca_sync_event_destroy(se);
}

/* Runs body with a fresh exported event and child; cleans up whatever body left. */
static void with_importer(const char *role, void (*body)(struct xp *))
{
	char hex[2 * BLOB_LEN + 1];
	struct xp x = { .se = exported(hex, NULL) };

	CHECK(x.se != NULL);
	th_defer(se_release, x.se);
	if (spawn_child(&x.c, "dpu", role) != 0) {
		TH_FAIL("cannot start the DPU-side process");
		return;
	}
	child_send(&x.c, hex);
	body(&x);
	if (child_alive(&x.c))
		child_kill(&x.c); /* the body stopped early */
	if (x.se != NULL) {
		th_undefer(se_release, x.se);
		CHECK_OK(doca_sync_event_destroy(x.se));
	}
	CHECK(leftovers() == 0);
}

static int child_ready(struct child *c)
{
	char line[64];

	return strcmp(child_recv(c, line, sizeof(line)), "ready") == 0;
}

static void handshake_body(struct xp *x)
{
	uint64_t v = 0;

	CHECK(child_ready(&x->c));
	CHECK_OK(doca_sync_event_update_set(x->se, 5));
	CHECK(wait_gt_while(x->se, 5, &x->c) == 1);
	CHECK_OK(doca_sync_event_get(x->se, &v));
	CHECK(v == 15);
	CHECK(child_finish(&x->c) == 0);
}

static void test_xproc_handshake(void)
{
	with_importer("handshake", handshake_body);
}

static void pingpong_body(struct xp *x)
{
	uint64_t fetched, v = 0;

	CHECK(child_ready(&x->c));
	for (uint64_t i = 0; i < PINGPONG_ROUNDS; i++) {
		CHECK_OK(doca_sync_event_update_add(x->se, 1, &fetched));
		if (fetched != 2 * i) {
			TH_FAIL("round %llu: fetched %llu", (unsigned long long)i, (unsigned long long)fetched);
			return;
		}
		if (!wait_gt_while(x->se, 2 * i + 1, &x->c)) {
			TH_FAIL("round %llu: the DPU side stopped answering", (unsigned long long)i);
			return;
		}
	}
	CHECK_OK(doca_sync_event_get(x->se, &v));
	CHECK(v == 2 * PINGPONG_ROUNDS);
	CHECK(child_finish(&x->c) == 0);
}

static void test_xproc_pingpong(void)
{
	with_importer("pingpong", pingpong_body);
}

static void async_importer_body(struct xp *x)
{
	uint64_t v = 0;

	CHECK(child_ready(&x->c));
	CHECK_OK(doca_sync_event_update_set(x->se, 5));
	CHECK(wait_gt_while(x->se, 5, &x->c) == 1);
	CHECK_OK(doca_sync_event_get(x->se, &v));
	CHECK(v == 7);
	CHECK(child_finish(&x->c) == 0);
}

static void test_xproc_async_importer(void)
{
	with_importer("async", async_importer_body);
}

/* The child's report: "wakes N" then "status S". */
static int evwait_report(struct child *c, long *wakes, long *status)
{
	char line[64];

	if (sscanf(child_recv(c, line, sizeof(line)), "wakes %ld", wakes) != 1)
		return 0;
	return sscanf(child_recv(c, line, sizeof(line)), "status %ld", status) == 1;
}

/* A quiet quarter second costs the sleeping DPU-side waiter no wake-ups; the host's update wakes it. */
static void evwait_set_body(struct xp *x)
{
	long wakes = -1, status = -1;

	CHECK(child_ready(&x->c));
	usleep(250 * 1000);
	CHECK_OK(doca_sync_event_update_set(x->se, 6));
	CHECK(evwait_report(&x->c, &wakes, &status));
	CHECK(status == DOCA_SUCCESS);
	if (wakes > 3)
		TH_FAIL("%ld wake-ups for one blocked wait and one update", wakes);
	CHECK(child_finish(&x->c) == 0);
}

static void test_xproc_event_driven_wait(void)
{
	with_importer("evwait", evwait_set_body);
}

/* The exporter destroys the event: the sleeping importer's wait fails at once instead of sleeping on. */
static void evwait_revoke_body(struct xp *x)
{
	long wakes = -1, status = -1;

	CHECK(child_ready(&x->c));
	usleep(100 * 1000);
	th_undefer(se_release, x->se);
	CHECK_OK(doca_sync_event_destroy(x->se));
	x->se = NULL;
	CHECK(evwait_report(&x->c, &wakes, &status));
	CHECK(status == 1000 + DOCA_ERROR_NOT_CONNECTED);
	CHECK(wakes <= 3);
	CHECK(child_finish(&x->c) == 0);
}

static void test_xproc_event_driven_revoked(void)
{
	with_importer("evwait", evwait_revoke_body);
}

/* Sends each blob (hex, one per line) to a "codes" child and checks each answer. */
static int expect_code(struct child *c, const uint8_t *blob, size_t n, doca_error_t want)
{
	char hex[2 * 256 + 1], line[64];

	th_hex_encode(blob, n, hex);
	child_send(c, hex);
	child_recv(c, line, sizeof(line));
	if (line[0] == '\0' || atol(line) != (long)want) {
		fprintf(stderr, "blob of %zu bytes: got '%s', expected %d\n", n, line, (int)want);
		return 0;
	}
	return 1;
}

static void test_xproc_refused_blobs(void)
{
	char hex[2 * BLOB_LEN + 1];
	uint8_t raw[BLOB_LEN], b[BLOB_LEN + 8];
	struct doca_sync_event *se = exported(hex, raw);
	struct child c;
	int ok = 1;

	CHECK(se != NULL);
	th_defer(se_release, se);
	if (spawn_child(&c, "dpu", "codes") != 0) {
		TH_FAIL("cannot start the DPU-side process");
		return;
	}
	ok &= expect_code(&c, raw, BLOB_LEN, DOCA_SUCCESS);
	/* truncated and over-long */
	for (size_t n = 0; n < BLOB_LEN; n += 7)
		ok &= expect_code(&c, raw, n, DOCA_ERROR_INVALID_VALUE);
	ok &= expect_code(&c, raw, BLOB_LEN - 1, DOCA_ERROR_INVALID_VALUE);
	memcpy(b, raw, BLOB_LEN);
	memset(b + BLOB_LEN, 0, 8);
	ok &= expect_code(&c, b, BLOB_LEN + 1, DOCA_ERROR_INVALID_VALUE);
	/* each byte flipped */
	for (size_t i = 0; i < BLOB_LEN; i++) {
		memcpy(b, raw, BLOB_LEN);
		b[i] ^= 0xff;
		ok &= expect_code(&c, b, BLOB_LEN, DOCA_ERROR_INVALID_VALUE);
	}
	/* random */
	srand(1234);
	for (int k = 0; k < 16; k++) {
		for (size_t i = 0; i < BLOB_LEN; i++)
			b[i] = (uint8_t)rand();
		ok &= expect_code(&c, b, BLOB_LEN, DOCA_ERROR_INVALID_VALUE);
	}
	/* well formed, wrong capability or segment name: refused by the exporter's page */
	memcpy(b, raw, BLOB_LEN);
	b[40] ^= 1;
	reseal(b);
	ok &= expect_code(&c, b, BLOB_LEN, DOCA_ERROR_NOT_PERMITTED);
	memcpy(b, raw, BLOB_LEN);
	b[24] ^= 1;
	reseal(b);
	ok &= expect_code(&c, b, BLOB_LEN, DOCA_ERROR_NOT_PERMITTED);
	/* well formed, another machine */
	memcpy(b, raw, BLOB_LEN);
	b[56] ^= 1;
	reseal(b);
	ok &= expect_code(&c, b, BLOB_LEN, DOCA_ERROR_NOT_SUPPORTED);
	/* replayed after the exporter destroyed the event */
	th_undefer(se_release, se);
	CHECK_OK(doca_sync_event_destroy(se));
	ok &= expect_code(&c, raw, BLOB_LEN, DOCA_ERROR_NOT_PERMITTED);
	CHECK(child_finish(&c) == 0);
	CHECK(ok);
	CHECK(leftovers() == 0);
}

static void revoked_body(struct xp *x)
{
	char line[64];

	CHECK(child_ready(&x->c));
	th_undefer(se_release, x->se);
	CHECK_OK(doca_sync_event_destroy(x->se));
	x->se = NULL;
	CHECK(leftovers() == 0);
	child_send(&x->c, "go");
	for (int i = 0; i < 4; i++) /* get, set, add, wait */
		CHECK(atol(child_recv(&x->c, line, sizeof(line))) == DOCA_ERROR_NOT_CONNECTED);
	CHECK(child_finish(&x->c) == 0);
}

static void test_xproc_revoked_while_imported(void)
{
	with_importer("revoked", revoked_body);
}

static void killed_importer_body(struct xp *x)
{
	uint64_t v = 0;

	CHECK(wait_gt_while(x->se, 0, &x->c) == 1); /* it signalled */
	kill(x->c.p->pid, SIGKILL);
	/* the host's bounded wait ends with the importer's life */
	CHECK(wait_gt_while(x->se, 1, &x->c) == 0);
	CHECK(child_finish(&x->c) == -1);
	CHECK_OK(doca_sync_event_get(x->se, &v));
	CHECK(v == 1);
}

static void test_xproc_killed_importer(void)
{
	with_importer("hang", killed_importer_body);
}

static void killed_exporter_body(struct child *exp, struct child *imp)
{
	char hex[2 * BLOB_LEN + 16], line[64];

	child_recv(exp, hex, sizeof(hex));
	CHECK(strlen(hex) == 2 * BLOB_LEN);
	CHECK(spawn_child(imp, "dpu", "orphan") == 0);
	child_send(imp, hex);
	CHECK(child_ready(imp));
	child_kill(exp);
	/* the importer's wait notices its exporter is gone instead of spinning forever */
	CHECK(atol(child_recv(imp, line, sizeof(line))) == DOCA_ERROR_NOT_CONNECTED);
	CHECK(child_finish(imp) == 0);
}

static void test_xproc_killed_exporter(void)
{
	struct child exp, imp = { .p = NULL };

	CHECK(spawn_child(&exp, "host", "exporter") == 0);
	killed_exporter_body(&exp, &imp);
	child_kill(&exp);
	if (imp.p != NULL)
		child_kill(&imp);
}

/* The exporter is killed while the importer sleeps event-driven on a wait: it wakes with the wait failed. */
static void test_xproc_killed_exporter_event_driven(void)
{
	struct child exp, imp;
	char hex[2 * BLOB_LEN + 16];
	long wakes = -1, status = -1;

	/* The harness reaps both roles whatever happens. */
	CHECK(spawn_child(&exp, "host", "exporter") == 0);
	child_recv(&exp, hex, sizeof(hex));
	CHECK(strlen(hex) == 2 * BLOB_LEN);
	CHECK(spawn_child(&imp, "dpu", "evwait") == 0);
	child_send(&imp, hex);
	CHECK(child_ready(&imp));
	child_kill(&exp);
	CHECK(evwait_report(&imp, &wakes, &status));
	if (status != 1000 + DOCA_ERROR_NOT_CONNECTED)
		TH_FAIL("status %ld wakes %ld", status, wakes);
	CHECK(wakes <= 3);
	CHECK(child_finish(&imp) == 0);
}

static void test_no_leftovers(void)
{
	CHECK(leftovers() == 0);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--child") == 0)
		return child_main(argv[2], argv[3]);
	setenv("SOFTDPU_SIDE", "host", 1);
	signal(SIGPIPE, SIG_IGN);
	host_dev = open_dev(host_filter);
	if (host_dev == NULL) {
		fprintf(stderr, "no host device able to export\n");
		return 1;
	}
	RUN(test_create_destroy);
	RUN(test_configuration_rules);
	RUN(test_gpu_not_supported);
	RUN(test_dpa_locations);
	RUN(test_capabilities);
	RUN(test_sync_data_path);
	RUN(test_wait_woken_by_other_thread);
	RUN(test_update_add_is_atomic);
	RUN(test_user_backing_memory);
	RUN(test_export_rules_in_process);
	RUN(test_as_ctx_rules);
	RUN(test_async_jobs);
	RUN(test_async_wait_pending_until_update);
	RUN(test_async_event_driven);
	RUN(test_xproc_handshake);
	RUN(test_xproc_pingpong);
	RUN(test_xproc_async_importer);
	RUN(test_xproc_event_driven_wait);
	RUN(test_xproc_event_driven_revoked);
	RUN(test_xproc_killed_exporter_event_driven);
	RUN(test_xproc_refused_blobs);
	RUN(test_xproc_revoked_while_imported);
	RUN(test_xproc_killed_importer);
	RUN(test_xproc_killed_exporter);
	RUN(test_no_leftovers);
	doca_dev_close(host_dev);
	close_devs();
	return th_summary("test_sync_event");
}
