/*
 * Minimal test harness: each test binary runs its cases and prints
 * "<binary>: N passed, N failed"; tools/run-tests.sh adds them up.
 *
 * A case stops at its first failed CHECK. Whatever it set up before is
 * released anyway: a case registers a cleanup for each thing it creates
 * (th_defer / th_defer_local, or a fixture that does it), and the harness
 * runs them, last first, when the case ends, passed or failed. So one
 * failure never leaks objects, devices, fds or processes into the next case.
 *
 * A case that cannot run on this machine (the hardware lacks what it checks)
 * calls SKIP("why"): it ends there, its cleanups run, and it is counted as
 * skipped, never as passed: the summary then reads "N passed, N failed,
 * N skipped". A program that uses random inputs takes its seed from th_seed():
 * SOFTDPU_TEST_SEED, else a fresh one; the seed is printed on stderr, and again
 * beside the counts when a case failed, so a failure can be replayed.
 *
 * A failed CHECK runs the cleanups while the case's stack frames still exist,
 * then jumps back to the harness (so cleanups may point into the case's
 * locals: th_defer_local). A case that returns normally must have released
 * its locals itself (their owner calls th_undefer); cleanups of heap or
 * static objects (th_defer) are simply run after it returns.
 */
#ifndef SOFTDPU_TEST_HARNESS_H_
#define SOFTDPU_TEST_HARNESS_H_

#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef void (*th_cleanup_fn)(void *arg);

struct th_cleanup {
	th_cleanup_fn fn;
	void *arg;
	int local; /* arg lives in the case's stack frame */
};

static int th_passed, th_failed, th_skipped, th_case_failed, th_case_skipped;
static uint64_t th_seed_val;
static int th_seed_taken;
static const char *th_case;

static struct th_cleanup *th_stack;
static size_t th_depth, th_cap;
static size_t th_case_base; /* entries below belong to the program, not to the running case */
static int th_in_case, th_unwinding;
static jmp_buf th_jmp;

#define TH_FAIL(...)                                                                                                   \
	do {                                                                                                           \
		fprintf(stderr, "FAIL %s (%s:%d): ", th_case, __FILE__, __LINE__);                                     \
		fprintf(stderr, __VA_ARGS__);                                                                          \
		fputc('\n', stderr);                                                                                   \
		th_case_failed = 1;                                                                                    \
	} while (0)

static inline void th_push(th_cleanup_fn fn, void *arg, int local)
{
	if (th_depth == th_cap) {
		size_t cap = th_cap == 0 ? 32 : 2 * th_cap;
		struct th_cleanup *s = realloc(th_stack, cap * sizeof(*s));

		if (s == NULL) {
			/* Cannot promise the cleanup later: do not let the case go on. */
			fprintf(stderr, "harness: out of memory for a cleanup\n");
			abort();
		}
		th_stack = s;
		th_cap = cap;
	}
	th_stack[th_depth++] = (struct th_cleanup){ .fn = fn, .arg = arg, .local = local };
}

/* Registers fn(arg) to run when the case ends (or, outside a case, at th_summary). arg must outlive the case. */
static inline void th_defer(th_cleanup_fn fn, void *arg)
{
	th_push(fn, arg, 0);
}

/* Same, for an arg in the case's own stack frame: its owner must th_undefer it before the case returns. */
static inline void th_defer_local(th_cleanup_fn fn, void *arg)
{
	th_push(fn, arg, th_in_case);
}

/* Forgets the latest fn(arg) without running it (its owner released it); returns 1 if there was one. */
static inline int th_undefer(th_cleanup_fn fn, void *arg)
{
	for (size_t i = th_depth; i-- > 0;) {
		if (th_stack[i].fn != fn || th_stack[i].arg != arg)
			continue;
		memmove(&th_stack[i], &th_stack[i + 1], (th_depth - i - 1) * sizeof(*th_stack));
		th_depth--;
		return 1;
	}
	return 0;
}

/* Runs the cleanups above base, last first; each is popped before it runs, so it may th_undefer itself. */
static inline void th_unwind(size_t base, int frames_alive)
{
	th_unwinding = 1;
	while (th_depth > base) {
		struct th_cleanup c = th_stack[--th_depth];

		if (c.local && !frames_alive) {
			TH_FAIL("a cleanup of a local was still registered when the case returned");
			continue;
		}
		c.fn(c.arg);
	}
	th_unwinding = 0;
}

/* After a failed check: release what the case holds and leave it. Outside a case, the caller just returns. */
static inline void th_stop(void)
{
	if (!th_in_case || th_unwinding)
		return;
	th_unwind(th_case_base, 1);
	longjmp(th_jmp, 1);
}

/* Stops the current case when cond is false. */
#define CHECK(cond)                                                                                                    \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			TH_FAIL("%s", #cond);                                                                          \
			th_stop();                                                                                     \
			return;                                                                                        \
		}                                                                                                      \
	} while (0)

/* Stops the current case when expr does not return the expected DOCA error code. */
#define CHECK_ERR(expr, expected)                                                                                      \
	do {                                                                                                           \
		int th_got_ = (int)(expr);                                                                             \
		int th_exp_ = (int)(expected);                                                                         \
		if (th_got_ != th_exp_) {                                                                              \
			TH_FAIL("%s returned %d, expected %d (%s)", #expr, th_got_, th_exp_, #expected);               \
			th_stop();                                                                                     \
			return;                                                                                        \
		}                                                                                                      \
	} while (0)

#define CHECK_OK(expr) CHECK_ERR(expr, 0)

/* Ends the current case as skipped, saying why (a machine without what the case checks). */
#define SKIP(...)                                                                                                      \
	do {                                                                                                           \
		printf("SKIP %s: ", th_case);                                                                          \
		printf(__VA_ARGS__);                                                                                   \
		putchar('\n');                                                                                         \
		th_case_skipped = 1;                                                                                   \
		th_stop();                                                                                             \
		return;                                                                                                \
	} while (0)

/* The program's random seed: SOFTDPU_TEST_SEED if set, else a fresh one; printed so a failure can be replayed. */
static inline uint64_t th_seed(void)
{
	const char *e = getenv("SOFTDPU_TEST_SEED");

	if (!th_seed_taken) {
		th_seed_val = e != NULL ? strtoull(e, NULL, 0)
					: ((uint64_t)time(NULL) << 20) ^ (uint64_t)getpid() ^ (uint64_t)clock();
		th_seed_taken = 1;
		fprintf(stderr, "random seed %#llx (SOFTDPU_TEST_SEED=%#llx replays it)\n",
			(unsigned long long)th_seed_val, (unsigned long long)th_seed_val);
	}
	return th_seed_val;
}

/*
 * A per-case fixture: RUN_F gives the case a zeroed object of size bytes that
 * setup filled in; teardown runs whatever happens, also after a setup that
 * failed half-way (so it must accept a partly set-up object).
 */
struct th_fixture {
	size_t size;
	int (*setup)(void *obj);	/* 0 when ready */
	void (*teardown)(void *obj);
};

static inline void th_case_begin(const char *name)
{
	th_case = name;
	th_case_failed = 0;
	th_case_skipped = 0;
	th_case_base = th_depth;
	th_in_case = 1;
}

static inline void th_case_end(void)
{
	th_unwind(th_case_base, 0);
	th_in_case = 0;
	if (th_case_failed)
		th_failed++;
	else if (th_case_skipped)
		th_skipped++;
	else
		th_passed++;
}

static inline void th_fixture_case(const struct th_fixture *fx, void (*fn)(void *))
{
	void *obj = calloc(1, fx->size);

	if (obj == NULL) {
		TH_FAIL("no memory for the fixture");
		return;
	}
	th_defer(free, obj);
	th_defer(fx->teardown, obj);
	if (fx->setup(obj) != 0) {
		TH_FAIL("fixture setup failed");
		return;
	}
	fn(obj);
}

/*
 * A failed check jumps back here, to a frame that outlives the case (a
 * function calling setjmp is never inlined). Only statics change between
 * setjmp and longjmp.
 */
static inline void th_run(const char *name, void (*fn)(void))
{
	th_case_begin(name);
	if (setjmp(th_jmp) == 0)
		fn();
	th_case_end();
}

static inline void th_run_f(const char *name, const struct th_fixture *fx, void (*fn)(void *))
{
	th_case_begin(name);
	if (setjmp(th_jmp) == 0)
		th_fixture_case(fx, fn);
	th_case_end();
}

#define RUN(fn) th_run(#fn, fn)
#define RUN_F(fx, fn) th_run_f(#fn, &(fx), fn)

/* Runs the program-wide cleanups and prints the counts; returns the exit status. */
static inline int th_summary(const char *name)
{
	th_unwind(0, 1);
	free(th_stack);
	th_stack = NULL;
	th_depth = th_cap = 0;
	if (th_failed != 0 && th_seed_taken)
		fprintf(stderr, "%s: random seed %#llx: SOFTDPU_TEST_SEED=%#llx replays the run\n", name,
			(unsigned long long)th_seed_val, (unsigned long long)th_seed_val);
	if (th_skipped != 0)
		printf("%s: %d passed, %d failed, %d skipped\n", name, th_passed, th_failed, th_skipped);
	else
		printf("%s: %d passed, %d failed\n", name, th_passed, th_failed);
	return th_failed == 0 ? 0 : 1;
}

#endif /* SOFTDPU_TEST_HARNESS_H_ */
