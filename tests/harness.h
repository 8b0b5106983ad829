/*
 * Minimal test harness: each test binary runs its cases and prints
 * "<binary>: N passed, N failed"; tools/run-tests.sh adds them up.
 */
#ifndef SOFTDPU_TEST_HARNESS_H_
#define SOFTDPU_TEST_HARNESS_H_

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int th_passed, th_failed, th_case_failed;
static const char *th_case;

#define TH_FAIL(...)                                                                                                   \
	do {                                                                                                           \
		fprintf(stderr, "FAIL %s (%s:%d): ", th_case, __FILE__, __LINE__);                                     \
		fprintf(stderr, __VA_ARGS__);                                                                          \
		fputc('\n', stderr);                                                                                   \
		th_case_failed = 1;                                                                                    \
	} while (0)

/* Stops the current case when cond is false. */
#define CHECK(cond)                                                                                                    \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			TH_FAIL("%s", #cond);                                                                          \
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
			return;                                                                                        \
		}                                                                                                      \
	} while (0)

#define CHECK_OK(expr) CHECK_ERR(expr, 0)

#define RUN(fn)                                                                                                        \
	do {                                                                                                           \
		th_case = #fn;                                                                                         \
		th_case_failed = 0;                                                                                    \
		fn();                                                                                                  \
		if (th_case_failed)                                                                                    \
			th_failed++;                                                                                   \
		else                                                                                                   \
			th_passed++;                                                                                   \
	} while (0)

static inline int th_summary(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, th_passed, th_failed);
	return th_failed == 0 ? 0 : 1;
}

#endif /* SOFTDPU_TEST_HARNESS_H_ */
