/*
 * base_segv — the one SIGSEGV handler, dispatching to its clients (base_segv.h).
 */
#include "base_segv.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#define SEGV_CLIENTS 4

static base_segv_fn clients[SEGV_CLIENTS]; /* plain: reached with __atomic builtins only (clang refuses them on _Atomic) */
static pthread_mutex_t segv_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction prev_segv;
static bool installed;

/* Not a client's fault: the previous handler's, or the default action once this returns. */
static void segv_chain(int sig, siginfo_t *si, void *uc)
{
	if (prev_segv.sa_flags & SA_SIGINFO) {
		prev_segv.sa_sigaction(sig, si, uc);
		return;
	}
	if (prev_segv.sa_handler != SIG_DFL && prev_segv.sa_handler != SIG_IGN) {
		prev_segv.sa_handler(sig);
		return;
	}
	/* The faulting instruction runs again and dies of the signal, as it would have. */
	signal(SIGSEGV, SIG_DFL);
}

static void segv_handler(int sig, siginfo_t *si, void *uc)
{
	int saved = errno;

	if (si->si_code == SEGV_ACCERR) {
		for (int i = 0; i < SEGV_CLIENTS; i++) {
			base_segv_fn fn = __atomic_load_n(&clients[i], __ATOMIC_ACQUIRE);

			if (fn != NULL && fn(si->si_addr, uc)) {
				errno = saved;
				return;
			}
		}
	}
	errno = saved;
	segv_chain(sig, si, uc);
}

static int segv_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = segv_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGSEGV, &sa, &prev_segv) != 0)
		return errno;
	installed = true;
	return 0;
}

int base_segv_add(base_segv_fn fn)
{
	int rc = 0, i;

	pthread_mutex_lock(&segv_lock);
	for (i = 0; i < SEGV_CLIENTS; i++) {
		base_segv_fn cur = __atomic_load_n(&clients[i], __ATOMIC_RELAXED);

		if (cur == fn)
			goto out;
		if (cur == NULL)
			break;
	}
	if (i == SEGV_CLIENTS) {
		rc = ENOSPC;
		goto out;
	}
	if (!installed)
		rc = segv_install();
	if (rc == 0)
		__atomic_store_n(&clients[i], fn, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&segv_lock);
	return rc;
}
