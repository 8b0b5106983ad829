/*
 * fx_hart — host threads that run device code, and what they catch.
 *
 * A hart enters the image through the device runtime's call entry inside a
 * sigsetjmp frame. A fault while device code runs (SIGSEGV, SIGBUS, SIGFPE,
 * SIGILL, SIGABRT: the signal handlers are the library's, installed once,
 * on an alternate stack so a blown device stack is caught too) jumps back
 * there and becomes the process's error state; a fault anywhere else goes
 * to the handler that was installed before, as if we were not there.
 * flexio_dev_finish / reschedule / a fatal device error jump back the same
 * way, by the device runtime's ops. Process destroy stops a hart that never
 * leaves device code with a signal of its own (FX_STOP_SIG) that jumps out.
 * Jumping out of device code interrupted asynchronously is what the card
 * does to a DPA thread too; device code holding a host lock (malloc's,
 * stdio's) at that moment would leave it held: device code should not.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fx_int.h"
#include "fx_isolate.h"

#define FX_STOP_SIG (SIGRTMIN + 7)
#define FX_JMP_FINISH 1000
#define FX_JMP_RESCHED 1001
#define FX_JMP_FATAL 1002
#define FX_JMP_STOP 1003
#define FX_ALTSTACK (64u << 10)

static const int fx_fault_sigs[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };
static struct sigaction fx_prev[sizeof(fx_fault_sigs) / sizeof(fx_fault_sigs[0])];
static pthread_once_t fx_sig_once = PTHREAD_ONCE_INIT;
static __thread struct fx_hart *fx_cur;
static __thread uint64_t fx_fatal_code;
static __thread uintptr_t fx_fault_addr;

/* A signal not of device code: what the program had before us decides. */
static void fx_chain(int sig, siginfo_t *si, void *uc)
{
	for (size_t i = 0; i < sizeof(fx_fault_sigs) / sizeof(fx_fault_sigs[0]); i++) {
		const struct sigaction *o = &fx_prev[i];

		if (fx_fault_sigs[i] != sig)
			continue;
		if ((o->sa_flags & SA_SIGINFO) && o->sa_sigaction != NULL) {
			o->sa_sigaction(sig, si, uc);
		} else if (o->sa_handler == SIG_DFL) {
			/* Default action: re-raised as the program would have died without us. */
			signal(sig, SIG_DFL);
			raise(sig);
		} else if (o->sa_handler != SIG_IGN) {
			o->sa_handler(sig);
		}
		return;
	}
}

static void fx_on_fault(int sig, siginfo_t *si, void *uc)
{
	struct fx_hart *h = fx_cur;

	if (h != NULL && __atomic_load_n(&h->in_device, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&h->in_device, 0, __ATOMIC_SEQ_CST);
		fx_fault_addr = (uintptr_t)si->si_addr;
		siglongjmp(h->jb, sig);
	}
	if (fx_iso_fault_fixup(sig, si, uc)) /* host code on a process's memory: retried with the keys granted */
		return;
	fx_chain(sig, si, uc);
}

static void fx_on_stop(int sig, siginfo_t *si, void *uc)
{
	struct fx_hart *h = fx_cur;

	(void)sig;
	(void)si;
	(void)uc;
	if (h != NULL)
		__atomic_store_n(&h->kick_sent, 0, __ATOMIC_SEQ_CST);
	if (h != NULL && __atomic_load_n(&h->in_device, __ATOMIC_SEQ_CST) &&
	    __atomic_load_n(&h->stop, __ATOMIC_SEQ_CST)) {
		__atomic_store_n(&h->in_device, 0, __ATOMIC_SEQ_CST);
		siglongjmp(h->jb, FX_JMP_STOP);
	}
}

static void fx_sig_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	/*
	 * SA_NODEFER: the signal is not blocked while its handler runs, so a
	 * jump out of the handler leaves the thread's mask as it was, and
	 * entering device code needs no sigprocmask (sigsetjmp(.., 0)): an
	 * activation costs no system call.
	 */
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
	sa.sa_sigaction = fx_on_fault;
	for (size_t i = 0; i < sizeof(fx_fault_sigs) / sizeof(fx_fault_sigs[0]); i++)
		sigaction(fx_fault_sigs[i], &sa, &fx_prev[i]);
	sa.sa_sigaction = fx_on_stop;
	sigaction(FX_STOP_SIG, &sa, NULL);
}

void fx_hart_finish(void *host_thread)
{
	struct fx_hart *h = host_thread;

	__atomic_store_n(&h->in_device, 0, __ATOMIC_SEQ_CST);
	siglongjmp(h->jb, FX_JMP_FINISH);
}

void fx_hart_reschedule(void *host_thread)
{
	struct fx_hart *h = host_thread;

	__atomic_store_n(&h->in_device, 0, __ATOMIC_SEQ_CST);
	siglongjmp(h->jb, FX_JMP_RESCHED);
}

void fx_hart_fatal(void *host_thread, uint64_t code)
{
	struct fx_hart *h = host_thread;

	__atomic_store_n(&h->in_device, 0, __ATOMIC_SEQ_CST);
	fx_fatal_code = code;
	siglongjmp(h->jb, FX_JMP_FATAL);
}

/*
 * Out of a signal handler by a jump: the handler's own signal is not
 * blocked (SA_NODEFER), but a layer between the kernel and our handler
 * (ThreadSanitizer's) may have blocked signals for the handler's run.
 * Unblocked here, on the fault path only, so the next fault is caught too.
 */
static void fx_unblock_sigs(void)
{
	sigset_t set;

	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(fx_fault_sigs) / sizeof(fx_fault_sigs[0]); i++)
		sigaddset(&set, fx_fault_sigs[i]);
	sigaddset(&set, FX_STOP_SIG);
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
}

static flexio_status fx_hart_enter(struct fx_hart *h, struct fx_dev_frame *f, const char *fname);

/*
 * A thread's fatal error (a fault, or flexio_dev_error's code) runs the
 * process's error handler, if one is set, on the same thread with its
 * context; the error state stays set. A failure inside the handler runs no
 * other.
 */
static void fx_hart_err_handler(struct fx_hart *h, const struct fx_dev_frame *failed, uint64_t err)
{
	struct flexio_process *p = h->proc;
	struct fx_dev_frame f = { .host_thread = failed->host_thread, .ctx = failed->ctx,
				  .thread_id = failed->thread_id, .kind = FX_DEV_ERR_HANDLER, .tls = failed->tls,
				  .arg = err };
	int how = h->exit_how;

	if (p->err_handler_fn == NULL || h->in_err_handler)
		return;
	f.fn = p->err_handler_fn;
	h->in_err_handler = true;
	(void)fx_hart_enter(h, &f, p->err_handler);
	h->in_err_handler = false;
	h->exit_how = how; /* the thread ended as its error ended it, whatever the handler did */
}

/* Runs f in device code on the calling thread (h attached to it); the outcome of the call. */
static flexio_status fx_hart_enter(struct fx_hart *h, struct fx_dev_frame *f, const char *fname)
{
	struct flexio_process *p = h->proc;
	int r = sigsetjmp(h->jb, 0); /* the mask needs no saving: the handlers run with SA_NODEFER */

	if (r == 0) {
		__atomic_store_n(&h->in_device, 1, __ATOMIC_SEQ_CST);
		fx_iso_device(p);
		p->call(f);
		fx_iso_host();
		__atomic_store_n(&h->in_device, 0, __ATOMIC_SEQ_CST);
		h->exit_how = FX_EXIT_RETURN;
		return FLEXIO_STATUS_SUCCESS;
	}
	fx_iso_host(); /* a jump out keeps the device's PKRU, or a signal handler's */
	switch (r) {
	case FX_JMP_FINISH:
		h->exit_how = FX_EXIT_FINISH;
		return FLEXIO_STATUS_SUCCESS;
	case FX_JMP_RESCHED:
		h->exit_how = FX_EXIT_RESCHEDULE;
		return FLEXIO_STATUS_SUCCESS;
	case FX_JMP_STOP:
		fx_unblock_sigs();
		h->exit_how = FX_EXIT_STOP;
		return FLEXIO_STATUS_FAILED;
	case FX_JMP_FATAL:
		h->exit_how = FX_EXIT_FATAL;
		fx_err_set(p, FX_ERR_FATAL, 0, fx_fatal_code, 0, fname);
		fx_hart_err_handler(h, f, fx_fatal_code);
		return FLEXIO_STATUS_FATAL_ERR;
	default:
		fx_unblock_sigs();
		h->exit_how = FX_EXIT_FATAL;
		fx_err_set(p, FX_ERR_SIGNAL, r, 0, fx_fault_addr, fname);
		fx_hart_err_handler(h, f, (uint64_t)r);
		return FLEXIO_STATUS_FATAL_ERR;
	}
}

flexio_status fx_hart_exec(struct fx_hart *h, struct fx_dev_frame *f, const char *fname)
{
	f->host_thread = h;
	f->ctx = h->ctx;
	return fx_hart_enter(h, f, fname);
}

void fx_hart_attach(struct fx_hart *h)
{
	stack_t ss = { .ss_sp = h->altstack, .ss_size = FX_ALTSTACK };

	fx_cur = h;
	if (!h->own_thread) /* a borrowed thread (a command-queue worker's); an own one's id is pthread_create's */
		h->tid = pthread_self();
	sigaltstack(&ss, NULL);
}

void fx_hart_detach(struct fx_hart *h)
{
	stack_t ss = { .ss_flags = SS_DISABLE };

	(void)h;
	sigaltstack(&ss, NULL);
	fx_cur = NULL;
}

/*
 * The stop signal is a real-time one: each kill queues, and with SA_NODEFER
 * the queued ones are delivered nested on the alternate stack (a destroy
 * kicking a hart every 2 ms while it waited for a core overflowed it: a
 * crash in fx_on_stop, 1 test_dpa run in 12). So one is sent at a time.
 */
void fx_hart_kick(struct fx_hart *h)
{
	__atomic_store_n(&h->stop, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&h->in_device, __ATOMIC_SEQ_CST) && !__atomic_exchange_n(&h->kick_sent, 1, __ATOMIC_SEQ_CST))
		pthread_kill(h->tid, FX_STOP_SIG);
}

/*
 * How long a hart, and a caller waiting for its answer, poll before they
 * sleep: a wake-up through the kernel costs more than the 5 us an RPC may
 * take (docs/PERFORMANCE.md), so both spin first while a second core can
 * carry the other side; on one core they sleep at once.
 */
uint64_t fx_hart_spin_ns(void)
{
	static uint64_t spin = UINT64_MAX; /* computed once; any thread may be first */
	uint64_t v = __atomic_load_n(&spin, __ATOMIC_RELAXED);

	if (v == UINT64_MAX) {
		v = sysconf(_SC_NPROCESSORS_ONLN) >= 2 ? 100000u : 0;
		__atomic_store_n(&spin, v, __ATOMIC_RELAXED);
	}
	return v;
}

static inline void fx_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

static uint64_t fx_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Polls *flag (without the lock) until it is set, or the spin time passed; whether it is set. */
static bool fx_spin_for(const bool *flag, const int *stop)
{
	uint64_t until = 0;

	for (uint32_t i = 0;; i++) {
		if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) || (stop != NULL && __atomic_load_n(stop, __ATOMIC_ACQUIRE)))
			return true;
		if ((i & 63) != 0) {
			fx_cpu_relax();
			continue;
		}
		if (until == 0)
			until = fx_now_ns() + fx_hart_spin_ns();
		else if (fx_now_ns() >= until)
			return false;
	}
}

static void *fx_hart_main(void *arg)
{
	struct fx_hart *h = arg;

	fx_hart_attach(h);
	pthread_mutex_lock(&h->mu);
	for (;;) {
		struct fx_dev_frame f;
		const char *fname;
		flexio_status st;

		while (!h->posted && !__atomic_load_n(&h->stop, __ATOMIC_SEQ_CST)) {
			pthread_mutex_unlock(&h->mu);
			bool seen = fx_spin_for(&h->posted, &h->stop);
			pthread_mutex_lock(&h->mu);
			if (!seen && !h->posted && !__atomic_load_n(&h->stop, __ATOMIC_SEQ_CST))
				pthread_cond_wait(&h->cv, &h->mu);
		}
		if (__atomic_load_n(&h->stop, __ATOMIC_SEQ_CST))
			break;
		__atomic_store_n(&h->posted, false, __ATOMIC_RELAXED);
		h->busy = true;
		f = h->frame;
		fname = h->fname;
		pthread_mutex_unlock(&h->mu);
		st = fx_hart_exec(h, &f, fname);
		pthread_mutex_lock(&h->mu);
		h->frame.ret = f.ret;
		h->st = st;
		h->busy = false;
		__atomic_store_n(&h->done, true, __ATOMIC_RELEASE);
		pthread_cond_broadcast(&h->cv);
	}
	pthread_mutex_unlock(&h->mu);
	fx_hart_detach(h);
	return NULL;
}

struct fx_hart *fx_hart_alloc(struct flexio_process *proc)
{
	struct fx_hart *h = calloc(1, sizeof(*h));
	pthread_condattr_t ca;

	if (h == NULL)
		return NULL;
	pthread_once(&fx_sig_once, fx_sig_install);
	h->proc = proc;
	h->altstack = malloc(FX_ALTSTACK);
	if (h->altstack == NULL) {
		free(h);
		return NULL;
	}
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&h->cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&h->mu, NULL);
	return h;
}

void fx_hart_free(struct fx_hart *h)
{
	if (h == NULL)
		return;
	pthread_cond_destroy(&h->cv);
	pthread_mutex_destroy(&h->mu);
	free(h->altstack);
	free(h->argbuf);
	free(h);
}

struct fx_hart *fx_hart_new(struct flexio_process *proc)
{
	struct fx_hart *h = fx_hart_alloc(proc);

	if (h == NULL)
		return NULL;
	h->own_thread = true;
	if (pthread_create(&h->tid, NULL, fx_hart_main, h) != 0) {
		fx_hart_free(h);
		return NULL;
	}
	h->started = true;
	return h;
}

int fx_hart_start(struct fx_hart *h, void *(*main)(void *))
{
	int rc;

	h->own_thread = true;
	rc = pthread_create(&h->tid, NULL, main, h);

	if (rc == 0)
		h->started = true;
	return rc;
}

static struct timespec fx_deadline(unsigned ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/* Under h->mu: the caller is done with the hart; the next caller may post. */
static void fx_hart_release(struct fx_hart *h)
{
	h->claimed = false;
	pthread_cond_broadcast(&h->cv);
}

flexio_status fx_hart_run(struct fx_hart *h, const struct fx_dev_frame *frame, const void *args, size_t len,
			  const char *fname, unsigned timeout_ms, uint64_t *ret)
{
	struct timespec dl = fx_deadline(timeout_ms);
	flexio_status st;
	int rc = 0;

	pthread_mutex_lock(&h->mu);
	/*
	 * One call at a time: another caller's, until it took its result, and a
	 * hart still in an earlier call (one that timed out) are waited for.
	 */
	while ((h->claimed || h->busy || h->posted) && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&h->cv, &h->mu, &dl);
	if (h->claimed || h->busy || h->posted) {
		pthread_mutex_unlock(&h->mu);
		return FLEXIO_STATUS_TIMEOUT;
	}
	if (len > h->argcap) {
		uint8_t *nb = realloc(h->argbuf, len);

		if (nb == NULL) {
			pthread_mutex_unlock(&h->mu);
			return FLEXIO_STATUS_FAILED;
		}
		h->argbuf = nb;
		h->argcap = len;
	}
	if (len != 0)
		memcpy(h->argbuf, args, len);
	h->claimed = true;
	h->frame = *frame;
	h->frame.argbuf = h->argbuf;
	h->frame.host_thread = h;
	h->frame.ctx = h->ctx;
	h->fname = fname;
	__atomic_store_n(&h->done, false, __ATOMIC_RELAXED);
	__atomic_store_n(&h->posted, true, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&h->cv);
	if (!h->done) { /* a quick answer is polled for, not slept on */
		pthread_mutex_unlock(&h->mu);
		(void)fx_spin_for(&h->done, NULL);
		pthread_mutex_lock(&h->mu);
	}
	while (!h->done && rc != ETIMEDOUT)
		rc = pthread_cond_timedwait(&h->cv, &h->mu, &dl);
	if (!h->done) {
		fx_hart_release(h);
		pthread_mutex_unlock(&h->mu);
		BASE_ERR("device function %s did not return within %u ms", fname, timeout_ms);
		return FLEXIO_STATUS_TIMEOUT;
	}
	st = h->st;
	if (ret != NULL)
		*ret = h->frame.ret;
	__atomic_store_n(&h->done, false, __ATOMIC_RELAXED);
	fx_hart_release(h);
	pthread_mutex_unlock(&h->mu);
	return st;
}

void fx_hart_destroy(struct fx_hart *h)
{
	if (h == NULL)
		return;
	pthread_mutex_lock(&h->mu);
	__atomic_store_n(&h->stop, 1, __ATOMIC_SEQ_CST);
	pthread_cond_broadcast(&h->cv);
	pthread_mutex_unlock(&h->mu);
	/* Device code that never returns (a polling loop) is made to leave. */
	for (int i = 0; h->started && pthread_tryjoin_np(h->tid, NULL) == EBUSY; i++) {
		if (h->wake != NULL)
			h->wake(h->wake_arg);
		fx_hart_kick(h);
		usleep(i < 10 ? 100 : 2000);
	}
	fx_hart_free(h);
}
