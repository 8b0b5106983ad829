/*
 * The other process of a two-process case: forked with a pipe each way; when
 * the case ends (passed or failed) it is killed if still running and reaped,
 * and this side's ends of the pipes are closed (harness.h's cleanups). One at
 * a time: kid, to_kid and from_kid are the program's.
 */
#ifndef SOFTDPU_TEST_KID_FIXTURE_H_
#define SOFTDPU_TEST_KID_FIXTURE_H_

#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static pid_t kid = -1;
static int to_kid = -1, from_kid = -1;

static inline void kid_reap_cb(void *arg)
{
	(void)arg;
	if (kid > 0) {
		kill(kid, SIGKILL);
		waitpid(kid, NULL, 0);
	}
	kid = -1;
	close(to_kid);
	close(from_kid);
	to_kid = from_kid = -1;
}

/*
 * fork() with the pipes a (to the other process) and b (back), its pid in
 * kid: 0 there, a[0] and b[1] its ends; here a[1] and b[0] ours (also
 * to_kid and from_kid), reaped and closed when the case ends.
 */
static inline void kid_fork(int a[2], int b[2])
{
	CHECK(pipe(a) == 0 && pipe(b) == 0);
	kid = fork();
	CHECK(kid >= 0);
	if (kid == 0) {
		close(a[1]);
		close(b[0]);
		return;
	}
	close(a[0]);
	close(b[1]);
	to_kid = a[1];
	from_kid = b[0];
	th_defer(kid_reap_cb, NULL);
}

/* The other process ended and exited with status 0. */
static inline void kid_wait_ok(void)
{
	int ws = 0;

	CHECK(waitpid(kid, &ws, 0) == kid);
	kid = -1;
	CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
}

/* In the other process: fn as a case of its own (its leftovers go with the process), the exit status whether it passed. */
static inline void kid_case(const char *name, void (*fn)(void))
{
	int failed = th_failed;

	th_run(name, fn);
	_exit(th_failed != failed ? 1 : 0);
}

#endif /* SOFTDPU_TEST_KID_FIXTURE_H_ */
