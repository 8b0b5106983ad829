/*
 * The harness itself: a case that fails half-way leaves nothing behind
 * (its cleanups run, last first, while its locals still exist; the roles it
 * started are killed and reaped; its fds are closed) and the next case
 * starts clean; fixtures are torn down after a failed case and after a
 * setup that failed, the memory and DMA fixtures included; the process launcher passes lines both ways, and a dead
 * or stuck role fails a wait instead of hanging it.
 *
 * The deliberate failures run in a child ("inner" role) with its own counts;
 * this process only checks what the child printed, so they are not failures
 * of the suite.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dma_fixture.h"
#include "harness.h"
#include "mem_fixture.h"
#include "th_proc.h"

/* ---- roles ---- */

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static int role_echo(void)
{
	char line[256];

	while (fgets(line, sizeof(line), stdin) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(line, "QUIT") == 0)
			return 3;
		say("ECHO %s", line);
	}
	return 4;
}

static int role_stuck(void)
{
	say("UP");
	for (;;)
		pause();
	return 0;
}

static int role_side(void)
{
	const char *s = getenv("SOFTDPU_SIDE");

	say("SIDE %s", s != NULL ? s : "(none)");
	return 0;
}

/* ---- the inner suite: deliberate failures, in a child ---- */

static void list_release(void *list)
{
	doca_devinfo_list_destroy(list);
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	if (d == NULL)
		return -1;
	while (readdir(d) != NULL)
		n++;
	closedir(d);
	return n;
}

static int fd_baseline;
static pid_t stuck_pid;

static void note(void *what)
{
	say("CLEANUP %s", (const char *)what);
}

struct local_thing {
	int value;
};

static void release_local(void *arg)
{
	struct local_thing *t = arg;

	say("CLEANUP LOCAL %d", t->value);
}

static void close_fd(void *arg)
{
	close(*(int *)arg);
	free(arg);
}

static int *deferred_pipe(void)
{
	int *fds = malloc(2 * sizeof(int));

	if (fds == NULL || pipe(fds) != 0) {
		free(fds);
		return NULL;
	}
	int *r = malloc(sizeof(int));

	if (r == NULL)
		abort();
	*r = fds[1];
	th_defer(close_fd, r);
	th_defer(close_fd, fds); /* closes fds[0], frees the pair */
	return fds;
}

static void inner_fails_midway(void)
{
	struct local_thing t = { .value = 42 };
	struct th_proc *p;
	const char *l;

	th_defer(note, "first");
	th_defer_local(release_local, &t);
	CHECK(deferred_pipe() != NULL);
	p = th_proc_start(NULL, "stuck", NULL);
	CHECK(p != NULL);
	CHECK((l = th_proc_line(p)) != NULL && strcmp(l, "UP") == 0);
	stuck_pid = p->pid;
	th_defer(note, "last");
	t.value = 43; /* the cleanup sees the local as it is when the case stops */
	CHECK(t.value == 0);
	say("NOT REACHED");
}

static void inner_next_starts_clean(void)
{
	CHECK(th_depth == th_case_base);
	CHECK(stuck_pid > 0 && kill(stuck_pid, 0) != 0 && errno == ESRCH);
	CHECK(count_fds() == fd_baseline);
	say("CLEAN");
}

/* A check that fails inside a helper stops the whole case, not just the helper. */
static void failing_helper(void)
{
	CHECK(!"helper");
}

static void inner_fails_in_helper(void)
{
	th_defer(note, "helper case");
	failing_helper();
	say("NOT REACHED");
}

struct thing_fx {
	int stage;
};

static int thing_setup(void *obj)
{
	struct thing_fx *f = obj;

	f->stage = 1;
	say("SETUP");
	return 0;
}

static int thing_setup_half(void *obj)
{
	struct thing_fx *f = obj;

	f->stage = 2;
	say("SETUP HALF");
	return -1;
}

static void thing_teardown(void *obj)
{
	struct thing_fx *f = obj;

	say("TEARDOWN %d", f->stage);
}

static const struct th_fixture thing = { sizeof(struct thing_fx), thing_setup, thing_teardown };
static const struct th_fixture half_thing = { sizeof(struct thing_fx), thing_setup_half, thing_teardown };

static void inner_fixture_case_fails(void *obj)
{
	struct thing_fx *f = obj;

	CHECK(f->stage == 0);
	say("NOT REACHED");
}

static void inner_fixture_never_runs(void *obj)
{
	(void)obj;
	say("NOT REACHED");
}

/* Returning with a local still registered is a mistake of the case: reported, and the cleanup is not run. */
static void inner_local_left(void)
{
	struct local_thing t = { .value = 7 };

	th_defer_local(release_local, &t);
}

static void inner_passes(void)
{
	struct local_thing t = { .value = 9 };

	th_defer(note, "after pass");
	th_defer_local(release_local, &t);
	CHECK(th_undefer(release_local, &t) == 1);
	CHECK(th_undefer(release_local, &t) == 0);
}

/* Registered before the DMA fixture, so it runs after the fixture's teardown and sees what it left. */
static void report_fx(void *arg)
{
	struct fx *f = arg;
	int clear = f->dev == NULL && f->list == NULL && f->src == NULL && f->dst == NULL && f->src_mmap == NULL &&
		    f->dst_mmap == NULL && f->inv == NULL && f->dma == NULL && f->wq == NULL;

	say("FX %s", clear ? "RELEASED" : "HELD");
}

static void inner_dma_fixture_fails(void)
{
	struct fx f = { .dev = NULL };

	th_defer_local(report_fx, &f);
	CHECK(fx_setup(&f, 4096, 4, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	say("FX UP");
	CHECK(f.dev == NULL);
	say("NOT REACHED");
}

/* The device the failed case held is free again: it opens and closes. */
static void inner_device_free(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev;
	uint32_t n;

	CHECK_OK(doca_devinfo_list_create(&list, &n));
	th_defer(list_release, list);
	CHECK(n > 0);
	CHECK_OK(doca_dev_open(list[0], &dev));
	CHECK_OK(doca_dev_close(dev));
	say("DEVICE FREE");
}

static int role_inner(void)
{
	/* The deliberate failures are part of what the outer test reads. */
	dup2(1, 2);
	setvbuf(stderr, NULL, _IONBF, 0);
	fd_baseline = count_fds();
	RUN(inner_fails_midway);
	RUN(inner_next_starts_clean);
	RUN(inner_fails_in_helper);
	RUN_F(thing, inner_fixture_case_fails);
	RUN_F(half_thing, inner_fixture_never_runs);
	RUN(inner_local_left);
	RUN(inner_passes);
	RUN(inner_dma_fixture_fails);
	RUN(inner_device_free);
	return th_summary("inner");
}

/* ---- a skipped case and a seeded failure ---- */

static void say_cb(void *arg)
{
	say("%s", (const char *)arg);
}

static void skip_passes(void)
{
	say("PASSES");
}

/* Skipped after it made something: its cleanup runs, the rest does not, it counts as neither passed nor failed. */
static void skip_skips(void)
{
	th_defer(say_cb, "CLEANUP skipped");
	SKIP("no widget here");
	say("NOT REACHED");
}

static void skip_fails_seeded(void)
{
	say("SEED %#llx", (unsigned long long)th_seed());
	CHECK(th_seed() == 0); /* the same seed on every call */
}

static int role_skip(void)
{
	dup2(1, 2);
	setvbuf(stderr, NULL, _IONBF, 0);
	setvbuf(stdout, NULL, _IONBF, 0);
	setenv("SOFTDPU_TEST_SEED", "0x5eed5", 1);
	RUN(skip_passes);
	RUN(skip_skips);
	RUN(skip_fails_seeded);
	return th_summary("skipper");
}

/* ---- the outer suite ---- */

/* Reads the role's lines until it closes its output; returns them, one per line. */
static char *read_all(struct th_proc *p)
{
	size_t cap = 1 << 16, used = 0;
	char *all = calloc(1, cap);
	const char *l;

	if (all == NULL)
		return NULL;
	th_defer(free, all);
	while ((l = th_proc_line(p)) != NULL) {
		size_t n = strlen(l);

		if (used + n + 2 > cap)
			break;
		memcpy(all + used, l, n);
		used += n;
		all[used++] = '\n';
	}
	return all;
}

/* Whether the lines of want appear in all, in this order (other lines may come between). */
static int in_order(const char *all, const char *const want[], size_t n)
{
	const char *at = all;

	for (size_t i = 0; i < n; i++) {
		const char *hit = strstr(at, want[i]);

		if (hit == NULL) {
			fprintf(stderr, "missing or out of order: '%s'\n", want[i]);
			return 0;
		}
		at = hit + strlen(want[i]);
	}
	return 1;
}

static void test_failed_case_leaves_nothing(void)
{
	static const char *const want[] = {
		"FAIL inner_fails_midway", "CLEANUP last\n", "CLEANUP LOCAL 43\n", "CLEANUP first\n",
		"CLEAN\n",
		"FAIL inner_fails_in_helper", "CLEANUP helper case\n",
		"SETUP\n", "FAIL inner_fixture_case_fails", "TEARDOWN 1\n",
		"SETUP HALF\n", "FAIL inner_fixture_never_runs (", "TEARDOWN 2\n",
		"FAIL inner_local_left", "CLEANUP after pass\n",
		"FX UP\n", "FAIL inner_dma_fixture_fails", "FX RELEASED\n",
		"DEVICE FREE\n",
		"inner: 3 passed, 6 failed\n",
	};
	struct th_proc *p = th_proc_start(NULL, "inner", NULL);
	char *all;

	CHECK(p != NULL);
	all = read_all(p);
	CHECK(all != NULL);
	CHECK(in_order(all, want, sizeof(want) / sizeof(want[0])));
	CHECK(strstr(all, "NOT REACHED") == NULL);
	CHECK(strstr(all, "CLEANUP LOCAL 7") == NULL);
	CHECK(strstr(all, "CLEANUP LOCAL 9") == NULL);
	CHECK(th_proc_wait(p) == 1);
}

/* SKIP ends a case as skipped (cleanups run), and the counts say so; a failure repeats the seed to replay. */
static void test_skip_and_seed(void)
{
	static const char *const want[] = {
		"PASSES\n",
		"SKIP skip_skips: no widget here\n", "CLEANUP skipped\n",
		"random seed 0x5eed5 (SOFTDPU_TEST_SEED=0x5eed5 replays it)\n", "SEED 0x5eed5\n",
		"FAIL skip_fails_seeded",
		"skipper: random seed 0x5eed5: SOFTDPU_TEST_SEED=0x5eed5 replays the run\n",
		"skipper: 1 passed, 1 failed, 1 skipped\n",
	};
	struct th_proc *p = th_proc_start(NULL, "skip", NULL);
	char *all;

	CHECK(p != NULL);
	all = read_all(p);
	CHECK(all != NULL);
	CHECK(in_order(all, want, sizeof(want) / sizeof(want[0])));
	CHECK(strstr(all, "NOT REACHED") == NULL);
	CHECK(th_proc_wait(p) == 1);
}

static int mem_setup(void *obj)
{
	struct mem_fx_cfg cfg = { .len = 4096, .dst_len = 512, .dst_perm = DOCA_ACCESS_LOCAL_READ_WRITE, .inv_num = 8 };

	return mem_fx_open(obj, &cfg);
}

static const struct th_fixture mem = { sizeof(struct mem_fx), mem_setup, mem_fx_cleanup };

/* The memory fixture: a device, the source with its pattern, a zeroed destination, buffers over both. */
static void test_mem_fixture(void *obj)
{
	struct mem_fx *m = obj;
	struct doca_buf *s, *d;
	size_t len = 1;
	void *data;
	int same = 1;

	CHECK(m->dev != NULL && m->src_mmap != NULL && m->dst_mmap != NULL && m->inv != NULL);
	for (size_t i = 0; i < m->len; i++)
		same &= m->src[i] == mem_fx_pattern(i);
	for (size_t i = 0; i < m->dst_len; i++)
		same &= m->dst[i] == 0;
	CHECK(same);
	CHECK_OK(mem_fx_src_buf(m, 100, 200, &s));
	CHECK_OK(doca_buf_get_data(s, &data));
	CHECK_OK(doca_buf_get_data_len(s, &len));
	CHECK(data == m->src + 100 && len == 200);
	CHECK_OK(mem_fx_dst_buf(m, 0, 512, &d));
	CHECK_OK(doca_buf_get_data_len(d, &len));
	CHECK(len == 0);
	CHECK_OK(doca_buf_refcount_rm(s, NULL));
	CHECK_OK(doca_buf_refcount_rm(d, NULL));
	/* outside the destination's memory: refused */
	CHECK_ERR(mem_fx_dst_buf(m, 256, 512, &d), DOCA_ERROR_INVALID_VALUE);
}

static void test_lines_both_ways(void)
{
	struct th_proc *p = th_proc_start(NULL, "echo", NULL);
	const char *l;

	CHECK(p != NULL);
	for (int i = 0; i < 100; i++) {
		CHECK(th_proc_send(p, "line %d", i) == 0);
		CHECK((l = th_proc_line(p)) != NULL);
		char want[32];

		snprintf(want, sizeof(want), "ECHO line %d", i);
		CHECK(strcmp(l, want) == 0);
	}
	CHECK(th_proc_send(p, "QUIT") == 0);
	CHECK(th_proc_line(p) == NULL); /* it ended */
	CHECK(th_proc_wait(p) == 3);
}

static void test_side_is_passed(void)
{
	struct th_proc *p = th_proc_start("dpu", "side", NULL);
	const char *l;

	CHECK(p != NULL);
	CHECK((l = th_proc_line(p)) != NULL && strcmp(l, "SIDE dpu") == 0);
	CHECK(th_proc_wait(p) == 0);
}

static void test_dead_role_fails_waits(void)
{
	struct th_proc *p = th_proc_start(NULL, "no-such-role", NULL);

	CHECK(p != NULL);
	CHECK(th_proc_line(p) == NULL);
	CHECK(th_proc_wait(p) == 64);
	CHECK(th_proc_send(p, "anyone?") == -1);
}

static void test_stuck_role_fails_waits(void)
{
	struct th_proc *p = th_proc_start(NULL, "stuck", NULL);
	const char *l;

	CHECK(p != NULL);
	CHECK((l = th_proc_line(p)) != NULL && strcmp(l, "UP") == 0);
	p->wait_ms = 100; /* short, now that it is up: the bound is the point, not its length */
	CHECK(th_proc_line(p) == NULL); /* says nothing more */
	CHECK(th_proc_wait(p) == -1);	/* does not end on its own: killed */
	CHECK(!th_proc_alive(p));
}

static void test_killed_role_reports_signal(void)
{
	struct th_proc *p = th_proc_start(NULL, "stuck", NULL);

	CHECK(p != NULL);
	CHECK(th_proc_line(p) != NULL);
	th_proc_kill(p);
	CHECK(th_proc_wait(p) == 128 + SIGKILL);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "inner") == 0)
		return role_inner();
	if (argc == 2 && strcmp(argv[1], "skip") == 0)
		return role_skip();
	if (argc == 2 && strcmp(argv[1], "echo") == 0)
		return role_echo();
	if (argc == 2 && strcmp(argv[1], "stuck") == 0)
		return role_stuck();
	if (argc == 2 && strcmp(argv[1], "side") == 0)
		return role_side();
	if (argc > 1)
		return 64;
	RUN(test_failed_case_leaves_nothing);
	RUN(test_skip_and_seed);
	RUN_F(mem, test_mem_fixture);
	RUN(test_lines_both_ways);
	RUN(test_side_is_passed);
	RUN(test_dead_role_fails_waits);
	RUN(test_stuck_role_fails_waits);
	RUN(test_killed_role_reports_signal);
	return th_summary("test_harness");
}
