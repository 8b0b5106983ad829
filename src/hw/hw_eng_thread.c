/*
 * hw_eng_thread — the engine's thread: RNR timers, peer deaths, raw doorbells.
 *
 * Each running thread has its own stop flag, so a thread being stopped (the
 * last QP went) and a new one started meanwhile (a new QP) never share one.
 */
#include "hw_eng_thread.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base_log.h"
#include "hw_eng_raw.h"
#include "hw_pace.h"
#include "hw_qp.h"
#include "hw_trap.h"

struct eng_thr {
	pthread_t tid;
	bool stop;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	struct eng_thr *cur; /* NULL: no thread */
	uint32_t users;	     /* QPs of this process */
	uint32_t wakes;	     /* moved by every hw_eng_wake; the futex word of a sleep on bells */
	uint32_t on_bells;   /* threads asleep in futex_waitv, not on cond (a stopping one and its successor) */
	bool asleep;	     /* the current thread sleeps until `until` (no pass under way); false: unknown */
	uint64_t until;
	bool no_waitv;	     /* the kernel has no futex_waitv (Linux < 5.16): bells are not waited on */
} eng = { .lock = PTHREAD_MUTEX_INITIALIZER };

static pthread_once_t eng_once = PTHREAD_ONCE_INIT;
/* SOFTDPU_ENGINE_RAW_POLL=0: polled QPs' records are not looked at (a test's knob: traps alone serve raw doorbells). */
static bool eng_no_raw_poll;

static uint64_t eng_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void eng_cond_init(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&eng.cond, &a);
	pthread_condattr_destroy(&a);
}

/* Sleeps until the monotonic time until (or a wake). Lock held. */
static void eng_sleep_until(uint64_t until)
{
	struct timespec ts = { .tv_sec = (time_t)(until / 1000000000u), .tv_nsec = (long)(until % 1000000000u) };

	pthread_cond_timedwait(&eng.cond, &eng.lock, &ts);
}

/* Wakes the thread wherever it sleeps. Lock held. */
static void eng_signal(void)
{
	__atomic_store_n(&eng.wakes, eng.wakes + 1, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&eng.cond);
	if (eng.on_bells != 0)
		syscall(SYS_futex, &eng.wakes, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/*
 * Sleeps until the monotonic time until, a wake, or a ring of one of the
 * pass's bells (responders of other processes that SQs wait on RNR for,
 * hw_qp.h). Lock held, dropped while asleep. A bell rung since the pass
 * read it, or a wake since wakes was read, ends the sleep at once (the
 * words no longer hold the values given). A bell whose view was unmapped
 * meanwhile fails the call (EFAULT): the loop looks again.
 */
static void eng_sleep_bells(const struct hw_eng_pass *p, uint32_t wakes, uint64_t until)
{
	struct futex_waitv v[1 + HW_ENG_BELLS_MAX];
	struct timespec ts = { .tv_sec = (time_t)(until / 1000000000u), .tv_nsec = (long)(until % 1000000000u) };
	long r;

	v[0] = (struct futex_waitv){ .val = wakes, .uaddr = (uintptr_t)&eng.wakes, .flags = FUTEX_32 | FUTEX_PRIVATE_FLAG };
	for (uint32_t i = 0; i < p->nbells; i++) /* shared futexes: the bells are in blocks other processes ring */
		v[1 + i] = (struct futex_waitv){ .val = p->bell_seen[i], .uaddr = (uintptr_t)p->bell[i], .flags = FUTEX_32 };
	eng.on_bells++;
	pthread_mutex_unlock(&eng.lock);
	r = syscall(SYS_futex_waitv, v, 1 + p->nbells, 0, &ts, CLOCK_MONOTONIC);
	if (r < 0)
		r = -errno;
	pthread_mutex_lock(&eng.lock);
	eng.on_bells--;
	if (r == -ENOSYS)
		eng.no_waitv = true; /* then the receive is seen at the next retry */
}

#define HW_ENG_XM_NS 50000ull
#define HW_ENG_LOST_NS 1000000ull /* between two passes while spinning: the thread was off its core */

static uint64_t eng_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The thread's loop; see hw_eng_thread.h for its policy. */
static void *eng_main(void *arg)
{
	struct eng_thr *me = arg;
	uint64_t last_act = 0, last_peer = eng_clock(), backoff = 1000, prev_end = 0;
	uint32_t stream_passes = 0; /* passes that ran raw work while a doorbell page was open to a stream */
	struct hw_eng_raw raw;

	hw_eng_raw_init(&raw);
	pthread_mutex_lock(&eng.lock);
	while (!me->stop) {
		uint32_t wakes = eng.wakes;
		struct hw_eng_pass p = { .next_deadline = HW_QP_NO_DEADLINE, .no_polled_run = eng_no_raw_poll };
		uint64_t now, until;

		pthread_mutex_unlock(&eng.lock);
		p.now_ns = eng_clock();
		p.check_peers = p.now_ns - last_peer >= HW_ENG_PEER_CHECK_NS;
		p.polled_trapped = hw_trap_serving();
		if (p.check_peers)
			last_peer = p.now_ns;
		hw_qp_engine_pass(&p);
		hw_trap_rearm(); /* doorbell pages opened for an instruction not stepped over */
		hw_pace_timers_run(&p); /* paced Ethernet SQs whose wait is over */
		now = eng_clock();
		if (p.activity) {
			last_act = now;
			backoff = 1000;
		}
		if (p.raw)
			hw_eng_raw_seen(&raw, now);
		if (__builtin_expect(hw_trap_streams_open(), 0)) {
			stream_passes += p.raw;
			/* Off its core with a page open (the program's doorbells waited): the traps serve again. */
			if (prev_end != 0 && p.now_ns - prev_end > HW_ENG_LOST_NS && hw_trap_streams_close(0))
				stream_passes = 0, p.activity = true;
		}
		prev_end = now;
		pthread_mutex_lock(&eng.lock);
		if (me->stop || eng.wakes != wakes || p.activity)
			continue;
		if (p.polled && (now - last_act < HW_ENG_SPIN_NS || hw_eng_raw_spinning(&raw, now))) {
			pthread_mutex_unlock(&eng.lock);
			sched_yield(); /* spinning, but the program's thread gets the core first */
			pthread_mutex_lock(&eng.lock);
			continue;
		}
		/* Doorbell pages left open to a stream trap again before this thread sleeps; one more look first. */
		if (__builtin_expect(hw_trap_streams_close(stream_passes), 0)) {
			stream_passes = 0;
			continue;
		}
		until = eng_min(last_peer + HW_ENG_PEER_CHECK_NS, p.next_deadline);
		/*
		 * Answers of another machine: looked at every HW_ENG_XM_NS, without
		 * spinning; the program's own polls reap them sooner (an empty poll
		 * drives the QP), this only serves a program that sleeps on events.
		 */
		if (p.xm)
			until = eng_min(until, now + HW_ENG_XM_NS);
		if (p.polled) {
			until = eng_min(until, now + backoff);
			backoff = eng_min(backoff * 2, hw_eng_raw_max_sleep(&raw, now));
		}
		/* More waiters than one sleep can watch: the others are looked at as a polled QP is. */
		if (p.bells_over)
			until = eng_min(until, now + HW_ENG_POLL_MAX_NS);
		if (until <= now)
			continue;
		eng.asleep = true;
		eng.until = until;
		if (p.nbells != 0 && !eng.no_waitv)
			eng_sleep_bells(&p, wakes, until);
		else
			eng_sleep_until(until);
		eng.asleep = false;
		prev_end = 0; /* asleep, not off its core */
	}
	pthread_mutex_unlock(&eng.lock);
	return NULL;
}

/* Lock held. */
static void eng_start(void)
{
	struct eng_thr *t = calloc(1, sizeof(*t));

	if (t == NULL || pthread_create(&t->tid, NULL, eng_main, t) != 0) {
		BASE_ERR("cannot start the engine thread: RNR timers, peer checks and raw doorbells stop");
		free(t);
		return;
	}
	eng.cur = t;
	eng.asleep = false; /* a stopped thread's sleep says nothing of this one */
}

/* Lock held; the caller joins what it returns (outside the lock). */
static struct eng_thr *eng_stop(void)
{
	struct eng_thr *t = eng.cur;

	if (t != NULL) {
		t->stop = true;
		eng.cur = NULL;
		eng_signal();
	}
	return t;
}

static void eng_join(struct eng_thr *t)
{
	if (t == NULL)
		return;
	if (pthread_equal(t->tid, pthread_self())) {
		pthread_detach(t->tid); /* the thread itself dropped the last QP: it ends when it returns */
		return;		       /* its struct stays: it still reads its stop flag */
	}
	pthread_join(t->tid, NULL);
	free(t);
}

/* Fork: the registry and this lock are held across it, so the child gets both whole and no thread. */
static void eng_prepare(void)
{
	hw_qp_reg_lock();
	pthread_mutex_lock(&eng.lock);
}

static void eng_parent(void)
{
	pthread_mutex_unlock(&eng.lock);
	hw_qp_reg_unlock();
}

static void eng_child(void)
{
	eng.cur = NULL; /* the parent's thread is not here; the next need starts ours */
	eng.on_bells = 0;
	eng.asleep = false;
	eng_cond_init();
	pthread_mutex_unlock(&eng.lock);
	hw_qp_reg_forget(); /* the parent's QPs: reached as another process's from here */
	hw_qp_reg_unlock();
}

static void eng_init(void)
{
	const char *e = getenv("SOFTDPU_ENGINE_RAW_POLL");

	eng_no_raw_poll = e != NULL && strcmp(e, "0") == 0;
	eng_cond_init();
	pthread_atfork(eng_prepare, eng_parent, eng_child);
}

bool hw_eng_polls_raw(void)
{
	pthread_once(&eng_once, eng_init);
	return !eng_no_raw_poll;
}

void hw_eng_fork_ready(void)
{
	pthread_once(&eng_once, eng_init);
}

void hw_eng_get(void)
{
	pthread_once(&eng_once, eng_init);
	pthread_mutex_lock(&eng.lock);
	eng.users++;
	if (eng.cur == NULL)
		eng_start();
	pthread_mutex_unlock(&eng.lock);
}

void hw_eng_put(void)
{
	struct eng_thr *t = NULL;

	pthread_mutex_lock(&eng.lock);
	if (eng.users != 0 && --eng.users == 0)
		t = eng_stop();
	pthread_mutex_unlock(&eng.lock);
	eng_join(t);
}

void hw_eng_wake_by(uint64_t t)
{
	pthread_once(&eng_once, eng_init);
	pthread_mutex_lock(&eng.lock);
	/* Asleep until no later than t: that pass will see what is new, no need to wake it now. */
	if (eng.cur != NULL && eng.asleep && eng.until <= t) {
		pthread_mutex_unlock(&eng.lock);
		return;
	}
	if (eng.cur == NULL && eng.users != 0)
		eng_start(); /* a child after fork */
	eng_signal();
	pthread_mutex_unlock(&eng.lock);
}

void hw_eng_wake(void)
{
	pthread_once(&eng_once, eng_init);
	pthread_mutex_lock(&eng.lock);
	if (eng.cur == NULL && eng.users != 0)
		eng_start(); /* a child after fork */
	eng_signal();
	pthread_mutex_unlock(&eng.lock);
}

/* At exit: the thread stops before anything it uses goes. */
__attribute__((destructor)) static void eng_exit(void)
{
	struct eng_thr *t;

	pthread_mutex_lock(&eng.lock);
	t = eng_stop();
	pthread_mutex_unlock(&eng.lock);
	eng_join(t);
	hw_qp_dests_drop();
}
