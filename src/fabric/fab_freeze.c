/*
 * fab_freeze — writes held off a range whose pages move (fab_freeze.h).
 */
#include "fab_freeze.h"

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>

#include "base_clock.h"

#define FRZ_DELIVER_WAIT_NS (1000ull * 1000 * 1000) /* longest wait for a faulting writer's signal */

static struct {
	uint64_t start, end; /* atomic: the range of the move in progress, or of the last one */
	int active;	     /* atomic: a move is in progress */
} frz;

static struct sigaction frz_prev; /* the program's handler, put back when the move ends */
static void frz_chain(int sig, siginfo_t *si, void *uc)
{
	if ((frz_prev.sa_flags & SA_SIGINFO) && frz_prev.sa_sigaction != NULL) {
		frz_prev.sa_sigaction(sig, si, uc);
	} else if (frz_prev.sa_handler == SIG_DFL || frz_prev.sa_handler == SIG_IGN) {
		/* Default action (a SEGV cannot be ignored): re-raised as the program would have died. */
		signal(sig, SIG_DFL);
		raise(sig);
	} else {
		frz_prev.sa_handler(sig);
	}
}

/* Whether a lies in the range of the move in progress or of the last one. */
static bool frz_in_range(uintptr_t a)
{
	return a >= __atomic_load_n(&frz.start, __ATOMIC_ACQUIRE) && a < __atomic_load_n(&frz.end, __ATOMIC_ACQUIRE);
}

static bool frz_holds(uintptr_t a)
{
	return __atomic_load_n(&frz.active, __ATOMIC_ACQUIRE) && frz_in_range(a);
}

/*
 * A write fault in the moving range waits for the move, then returns: the
 * write is retried on the page's new mapping. A fault of the range that the
 * handler only sees after the move ended (its thread was preempted between
 * the fault and the check) is ours as well: the range was the program's
 * writable memory before the move and is again after it, so it is retried,
 * not passed on as the program's own fault.
 */
static void frz_on_segv(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr;

	if (si->si_code == SEGV_ACCERR && frz_in_range(a)) {
		while (frz_holds(a))
			sched_yield();
		return;
	}
	frz_chain(sig, si, uc);
}

/* Whether a thread of the process has a SIGSEGV pending (its status's SigPnd mask). */
static bool frz_segv_pending(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	bool pending = false;

	if (d == NULL)
		return false;
	while (!pending && (e = readdir(d)) != NULL) {
		char path[300], line[128];
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/status", e->d_name);
		f = fopen(path, "re");
		if (f == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "SigPnd:", 7) == 0) {
				pending = (strtoull(line + 7, NULL, 16) >> (SIGSEGV - 1)) & 1;
				break;
			}
		fclose(f);
	}
	closedir(d);
	return pending;
}

/* Bounded in elapsed time: a scan of /proc takes longer the more threads there are. */
static void frz_wait_delivered(void)
{
	uint64_t deadline = base_deadline_ns(FRZ_DELIVER_WAIT_NS);

	while (frz_segv_pending() && !base_deadline_passed(deadline))
		sched_yield();
}

/*
 * The handler is the library's only while a move runs: the program's own
 * SIGSEGV handler is back in place after it (unless it set another meanwhile).
 */
static int frz_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sa.sa_sigaction = frz_on_segv;
	return sigaction(SIGSEGV, &sa, &frz_prev);
}

static void frz_uninstall(void)
{
	struct sigaction cur;

	if (sigaction(SIGSEGV, NULL, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) && cur.sa_sigaction == frz_on_segv)
		sigaction(SIGSEGV, &frz_prev, NULL);
}

int fab_freeze_begin(uint64_t start, uint64_t len)
{
	if (frz_install() != 0)
		return -1;
	__atomic_store_n(&frz.start, start, __ATOMIC_RELEASE);
	__atomic_store_n(&frz.end, start + len, __ATOMIC_RELEASE);
	__atomic_store_n(&frz.active, 1, __ATOMIC_RELEASE);
	if (mprotect((void *)(uintptr_t)start, len, PROT_READ) != 0) {
		__atomic_store_n(&frz.active, 0, __ATOMIC_RELEASE);
		frz_uninstall();
		return -1;
	}
	return 0;
}

void fab_freeze_end(int restore)
{
	if (restore)
		(void)mprotect((void *)(uintptr_t)frz.start, frz.end - frz.start, PROT_READ | PROT_WRITE);
	__atomic_store_n(&frz.active, 0, __ATOMIC_RELEASE);
	/*
	 * A writer that faulted but was not delivered its signal yet (preempted
	 * between the two) would find the program's handler for a fault that
	 * is ours: the handler stays until no thread has a SIGSEGV pending.
	 */
	frz_wait_delivered();
	frz_uninstall();
}
