/*
 * UCX is loaded only when a path to another machine is used.
 *
 * A program that only copies memory with DMA jobs must not have UCX in its
 * process (no UCX signal handlers, no UCX memory hooks); the first export
 * with SOFTDPU_FABRIC=ucx brings UCX in, and the program's signal handling
 * stays what it was. The cases run in this order, in one process.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dma_fixture.h"
#include "harness.h"

static const char *const ucx_libs[] = { "libucp", "libucs", "libuct", "libucm" };

/* 1 when a UCX library is mapped into this process. */
static int ucx_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4096];
	int found = 0;

	if (f == NULL)
		return -1;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		for (size_t i = 0; i < sizeof(ucx_libs) / sizeof(ucx_libs[0]); i++)
			if (strstr(line, ucx_libs[i]) != NULL)
				found = 1;
	fclose(f);
	return found;
}

static void test_dma_program_has_no_ucx(void)
{
	struct fx f;
	struct doca_buf *s, *d;
	struct doca_event ev = { 0 };

	CHECK(fx_setup(&f, 65536, 8, DOCA_ACCESS_LOCAL_READ_WRITE) == 0);
	CHECK_OK(doca_buf_inventory_buf_by_data(f.inv, f.src_mmap, f.src, 65536, &s));
	CHECK_OK(doca_buf_inventory_buf_by_addr(f.inv, f.dst_mmap, f.dst, 65536, &d));
	CHECK_OK(fx_copy(&f, d, s, &ev));
	CHECK(ev.result.u64 == DOCA_SUCCESS);
	CHECK(memcmp(f.src, f.dst, 65536) == 0);
	doca_buf_refcount_rm(s, NULL);
	doca_buf_refcount_rm(d, NULL);
	fx_teardown(&f);
	CHECK(ucx_mapped() == 0);
}

#ifdef SOFTDPU_HAVE_UCX
static void on_segv(int sig)
{
	(void)sig;
	_exit(99);
}

static const int watched[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGHUP };
#define NWATCHED (sizeof(watched) / sizeof(watched[0]))

static void *handler_of(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) ? (void *)sa->sa_sigaction : (void *)sa->sa_handler;
}

/* 1 when the handler is code of a UCX library. */
static int in_ucx(void *fn)
{
	Dl_info di;

	if (fn == (void *)SIG_DFL || fn == (void *)SIG_IGN || dladdr(fn, &di) == 0 || di.dli_fname == NULL)
		return 0;
	for (size_t i = 0; i < sizeof(ucx_libs) / sizeof(ucx_libs[0]); i++)
		if (strstr(di.dli_fname, ucx_libs[i]) != NULL)
			return 1;
	return 0;
}

static void test_ucx_export_loads_ucx_and_keeps_signals(void)
{
	struct sigaction mine = { .sa_handler = on_segv }, before[NWATCHED], after;
	stack_t stack_before, stack_after;
	struct fx f;
	const void *desc = NULL;
	size_t dlen = 0;
	doca_error_t r;

	sigemptyset(&mine.sa_mask);
	CHECK(sigaction(SIGSEGV, &mine, NULL) == 0);
	for (size_t i = 0; i < NWATCHED; i++)
		CHECK(sigaction(watched[i], NULL, &before[i]) == 0);
	CHECK(sigaltstack(NULL, &stack_before) == 0);
	CHECK(ucx_mapped() == 0);

	CHECK(fx_setup(&f, 65536, 8, DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_DPU_READ_WRITE) == 0);
	setenv("SOFTDPU_FABRIC", "ucx", 1);
	setenv("UCX_TLS", "tcp", 1);
	setenv("UCX_NET_DEVICES", "lo", 1);
	r = doca_mmap_export_dpu(f.dst_mmap, f.dev, &desc, &dlen);
	unsetenv("SOFTDPU_FABRIC");
	CHECK_OK(r);
	CHECK(desc != NULL && dlen != 0);
	CHECK(ucx_mapped() == 1);

	/* UCX's crash handlers are not left over the program's (nor over the defaults). */
	for (size_t i = 0; i < NWATCHED; i++) {
		CHECK(sigaction(watched[i], NULL, &after) == 0);
		if (handler_of(&after) != handler_of(&before[i]) || in_ucx(handler_of(&after)))
			TH_FAIL("signal %d: handler %p, was %p", watched[i], handler_of(&after), handler_of(&before[i]));
	}
	CHECK(sigaction(SIGSEGV, NULL, &after) == 0 && after.sa_handler == on_segv);
	CHECK(sigaltstack(NULL, &stack_after) == 0);
	CHECK(stack_after.ss_sp == stack_before.ss_sp && stack_after.ss_flags == stack_before.ss_flags);
	fx_teardown(&f);
}
#endif

int main(void)
{
	RUN(test_dma_program_has_no_ucx);
#ifdef SOFTDPU_HAVE_UCX
	RUN(test_ucx_export_loads_ucx_and_keeps_signals);
#endif
	return th_summary("test_lazy_ucx");
}
