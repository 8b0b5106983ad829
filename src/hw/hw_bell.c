/*
 * hw_bell — the device's watch engine: one thread per process that sleeps
 * in futex_waitv on every armed bell (and on a control word that says the
 * set changed), and writes a watcher's eventfd when one of its bells rings.
 *
 * Why a thread: the consumer sleeps in epoll on its eventfd while the
 * producer may be another process that only shares the bell's memory; the
 * engine is the part of the card that turns a doorbell into an interrupt.
 * It costs nothing while no bell rings (no timer; producers in other
 * processes are asked whether they live every HW_WATCH_PEER_PERIOD_MS only
 * while a watch on one is armed). Without futex_waitv (Linux < 5.16) there is
 * no engine: arming fails and the work queue signals at once, as before.
 * A forked child starts with no engine and no watches of its own.
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hw_bell.h"

#define ENGINE_MAX_BELLS (FUTEX_WAITV_MAX - 1) /* one entry is the control word */

static struct {
	pthread_mutex_t lock;
	bool started; /* a start was tried in this process */
	bool running;
	_Atomic uint32_t ctl; /* moves on whenever the armed set changes */
	uint32_t nbells;      /* bells of all armed waiters */
	struct hw_waiter *armed;
} eng = { .lock = PTHREAD_MUTEX_INITIALIZER };

void hw_bell_ring_slow(struct hw_bell *b)
{
	/* Shared futex: the bell may be in a page another process rings. */
	syscall(SYS_futex, &b->seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static void ctl_changed(void)
{
	syscall(SYS_futex, &eng.ctl, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void hw_waiter_init(struct hw_waiter *w, int efd)
{
	*w = (struct hw_waiter){ .efd = efd };
}

enum hw_status hw_watch_set_add(struct hw_watch_set *s, struct hw_bell *b, uint32_t seen, hw_peer_gone_fn gone,
				void *gone_arg)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (s->bell[i] == b)
			return HW_OK;
	if (s->n == HW_WATCH_MAX_BELLS)
		return HW_ERR_NOMEM;
	s->bell[s->n] = b;
	s->gone[s->n] = gone;
	s->gone_arg[s->n] = gone_arg;
	s->seen[s->n++] = seen;
	return HW_OK;
}

static bool waiter_rang(const struct hw_waiter *w)
{
	const struct hw_watch_set *s = &w->set;

	for (uint32_t i = 0; i < s->n; i++)
		if (atomic_load(&s->bell[i]->seq) != s->seen[i]) /* seq_cst: pairs with the ring's watcher check */
			return true;
	return false;
}

/* A producer that died rings no more: its watchers wake and find their jobs failed. */
static bool waiter_peer_gone(const struct hw_waiter *w)
{
	const struct hw_watch_set *s = &w->set;

	for (uint32_t i = 0; i < s->n; i++)
		if (s->gone[i] != NULL && s->gone[i](s->gone_arg[i]))
			return true;
	return false;
}

static bool waiter_has_peer(const struct hw_waiter *w)
{
	for (uint32_t i = 0; i < w->set.n; i++)
		if (w->set.gone[i] != NULL)
			return true;
	return false;
}

/* Under eng.lock. */
static void waiter_unlink(struct hw_waiter *w)
{
	struct hw_waiter **p = &eng.armed;

	while (*p != NULL && *p != w)
		p = &(*p)->next;
	/* Absent: a watch copied by fork; its bells' counts belong to the parent. */
	if (*p != NULL) {
		*p = w->next;
		for (uint32_t i = 0; i < w->set.n; i++)
			atomic_fetch_sub_explicit(&w->set.bell[i]->watchers, 1, memory_order_relaxed);
		eng.nbells -= w->set.n;
		atomic_fetch_add_explicit(&eng.ctl, 1, memory_order_release);
	}
	w->set.n = 0;
	w->armed = false;
}

static void signal_efd(struct hw_waiter *w)
{
	uint64_t one = 1;
	ssize_t r;

	atomic_fetch_add_explicit(&w->fired, 1, memory_order_release);
	/* A failed write means a saturated counter (EAGAIN): the handle is readable anyway. */
	r = write(w->efd, &one, sizeof(one));
	(void)r;
}

/* Under eng.lock: fires every waiter whose bells rang (or whose producer died, when asked). */
static void fire_rung(bool check_peers)
{
	struct hw_waiter *w = eng.armed, *next;

	for (; w != NULL; w = next) {
		next = w->next;
		if (waiter_rang(w) || (check_peers && waiter_peer_gone(w))) {
			signal_efd(w);
			waiter_unlink(w);
		}
	}
}

/* Under eng.lock. */
static uint32_t build_waitv(struct futex_waitv *v)
{
	uint32_t k = 0;

	v[k++] = (struct futex_waitv){ .val = atomic_load(&eng.ctl), .uaddr = (uintptr_t)&eng.ctl,
				       .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG };
	for (struct hw_waiter *w = eng.armed; w != NULL; w = w->next)
		for (uint32_t i = 0; i < w->set.n; i++)
			v[k++] = (struct futex_waitv){ .val = w->set.seen[i], .uaddr = (uintptr_t)&w->set.bell[i]->seq,
						       .flags = FUTEX_32 };
	return k;
}

static bool any_peer(void)
{
	for (struct hw_waiter *w = eng.armed; w != NULL; w = w->next)
		if (waiter_has_peer(w))
			return true;
	return false;
}

static bool ts_passed(const struct timespec *now, const struct timespec *t)
{
	return now->tv_sec > t->tv_sec || (now->tv_sec == t->tv_sec && now->tv_nsec >= t->tv_nsec);
}

static void ts_add_ms(struct timespec *t, long ms)
{
	t->tv_nsec += ms * 1000000L;
	t->tv_sec += t->tv_nsec / 1000000000L;
	t->tv_nsec %= 1000000000L;
}

/*
 * Liveness checks run on a fixed period, whatever wakes the engine in
 * between (re-arms wake it often): the deadline is absolute and moves only
 * once it has passed.
 */
static void *engine_main(void *arg)
{
	struct futex_waitv v[FUTEX_WAITV_MAX];
	struct timespec now, next = { 0, 0 };
	bool check = false;
	uint32_t k;

	(void)arg;
	pthread_mutex_lock(&eng.lock);
	for (;;) {
		fire_rung(check);
		k = build_waitv(v);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!any_peer())
			next.tv_sec = 0;
		else if (next.tv_sec == 0 || ts_passed(&now, &next)) {
			next = now;
			ts_add_ms(&next, HW_WATCH_PEER_PERIOD_MS);
		}
		pthread_mutex_unlock(&eng.lock);
		/* Returns at once (EAGAIN) when a word already moved past the value given. */
		syscall(SYS_futex_waitv, v, k, 0, next.tv_sec != 0 ? &next : NULL, CLOCK_MONOTONIC);
		clock_gettime(CLOCK_MONOTONIC, &now);
		check = next.tv_sec != 0 && ts_passed(&now, &next);
		pthread_mutex_lock(&eng.lock);
	}
	return NULL;
}

/* In a forked child: the parent's engine thread does not exist here, nor do its watches. */
static void engine_forget(void);

static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, engine_forget);
}

static void engine_forget(void)
{
	pthread_mutex_init(&eng.lock, NULL);
	eng.started = false;
	eng.running = false;
	eng.nbells = 0;
	eng.armed = NULL;
}

static bool have_futex_waitv(void)
{
	/* No waiters is EINVAL where the call exists. */
	return syscall(SYS_futex_waitv, NULL, 0, 0, NULL, 0) < 0 && errno != ENOSYS;
}

/* Under eng.lock, once per process. */
static void engine_start(void)
{
	static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
	pthread_attr_t attr;
	pthread_t tid;
	sigset_t all, old;

	eng.started = true;
	if (!have_futex_waitv() || pthread_attr_init(&attr) != 0)
		return;
	pthread_once(&atfork_once, register_atfork);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* The program's signals stay with the program's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	eng.running = pthread_create(&tid, &attr, engine_main, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
}

enum hw_status hw_waiter_arm(struct hw_waiter *w, const struct hw_watch_set *set)
{
	bool full;

	pthread_mutex_lock(&eng.lock);
	if (!eng.started)
		engine_start();
	if (w->armed)
		waiter_unlink(w);
	full = !eng.running || eng.nbells + set->n > ENGINE_MAX_BELLS;
	if (!full) {
		w->set = *set;
		for (uint32_t i = 0; i < set->n; i++)
			atomic_fetch_add_explicit(&set->bell[i]->watchers, 1, memory_order_seq_cst);
		eng.nbells += set->n;
		w->next = eng.armed;
		eng.armed = w;
		w->armed = true;
		/* A ring between the consumer's look and the watchers count above fires here. */
		if (waiter_rang(w)) {
			signal_efd(w);
			waiter_unlink(w);
		}
		atomic_fetch_add_explicit(&eng.ctl, 1, memory_order_release);
	}
	pthread_mutex_unlock(&eng.lock);
	ctl_changed();
	return full ? HW_ERR_NOMEM : HW_OK;
}

bool hw_waiter_disarm(struct hw_waiter *w)
{
	bool was;

	pthread_mutex_lock(&eng.lock);
	was = w->armed;
	if (was)
		waiter_unlink(w);
	pthread_mutex_unlock(&eng.lock);
	if (was)
		ctl_changed();
	return was;
}
