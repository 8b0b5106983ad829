/*
 * The harness itself: a case that fails half-way leaves nothing behind
 * (its cleanups run, last first, while its locals still exist; the roles it
 * started are killed and reaped; its fds are closed) and the next case
 * starts clean; fixtures are torn down after a failed case and after a
 * setup that failed; the process launcher passes lines both ways, and a dead
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

#include "harness.h"
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
	return th_summary("inner");
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
		"inner: 2 passed, 5 failed\n",
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
	p->wait_ms = 100;
	CHECK((l = th_proc_line(p)) != NULL && strcmp(l, "UP") == 0);
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
	if (argc == 2 && strcmp(argv[1], "echo") == 0)
		return role_echo();
	if (argc == 2 && strcmp(argv[1], "stuck") == 0)
		return role_stuck();
	if (argc == 2 && strcmp(argv[1], "side") == 0)
		return role_side();
	if (argc > 1)
		return 64;
	RUN(test_failed_case_leaves_nothing);
	RUN(test_lines_both_ways);
	RUN(test_side_is_passed);
	RUN(test_dead_role_fails_waits);
	RUN(test_stuck_role_fails_waits);
	RUN(test_killed_role_reports_signal);
	return th_summary("test_harness");
}
