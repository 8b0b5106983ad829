/*
 * hw_pace — the token buckets of paced QPs (hw_pace.h).
 *
 * Tokens are kept in byte-nanoseconds (bytes * 1e9), so refilling is one
 * multiplication of the elapsed time by the rate with no remainder lost;
 * 128-bit arithmetic keeps a long idle spell or a 2 GiB message from
 * overflowing it.
 */
#include "hw_pace.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "hw_eng_thread.h"
#include "hw_epoch.h"
#include "hw_qp.h"

#define PACE_NS 1000000000ll
/*
 * No depth given: what the rate carries in 10 ms. A software engine's sends
 * run when the host schedules its threads, which under load leaves gaps of
 * milliseconds; a bucket shallower than the gap would lose that time's rate
 * (1 ms lost half of it at 10 Mbit/s on a loaded machine, bench/pace.sh).
 */
#define PACE_DEFAULT_DEPTH_NS 10000000ull

typedef __int128 pace_t;

struct hw_pace {
	struct hw_pace *parent;
	uint32_t refs;
	uint64_t rate;	/* bytes per second, 0: unlimited */
	pace_t depth;	/* byte-ns */
	pace_t tokens;	/* byte-ns, as of last_ns; negative: debt */
	uint64_t last_ns;
	struct hw_pace_stats st;
};

static pthread_mutex_t pace_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t timer_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hw_pace_timer *timers;
static bool pace_virtual;
static uint64_t pace_virtual_ns;

uint64_t hw_pace_now(void)
{
	struct timespec ts;

	if (__atomic_load_n(&pace_virtual, __ATOMIC_ACQUIRE))
		return __atomic_load_n(&pace_virtual_ns, __ATOMIC_ACQUIRE);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void hw_pace_clock_virtual(bool on)
{
	__atomic_store_n(&pace_virtual_ns, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&pace_virtual, on, __ATOMIC_RELEASE);
}

void hw_pace_clock_advance(uint64_t ns)
{
	__atomic_fetch_add(&pace_virtual_ns, ns, __ATOMIC_ACQ_REL);
	hw_eng_wake(); /* its deadlines are not on the thread's clock: it looks now */
}

static pace_t pace_depth(uint64_t rate, uint64_t depth)
{
	if (depth != 0)
		return (pace_t)depth * PACE_NS;
	return (pace_t)rate * PACE_DEFAULT_DEPTH_NS; /* bytes/s * ns = byte-ns */
}

enum hw_status hw_pace_create(uint64_t rate, uint64_t depth, struct hw_pace *parent, struct hw_pace **out)
{
	struct hw_pace *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return HW_ERR_NOMEM;
	p->refs = 1;
	p->rate = rate;
	p->depth = pace_depth(rate, depth);
	p->tokens = p->depth;
	p->last_ns = hw_pace_now();
	if (parent != NULL)
		hw_pace_get(parent);
	p->parent = parent;
	*out = p;
	return HW_OK;
}

/* Lock held: the tokens as of now. */
static void pace_fill(struct hw_pace *p, uint64_t now)
{
	if (now > p->last_ns) {
		p->tokens += (pace_t)(now - p->last_ns) * p->rate;
		p->last_ns = now;
	}
	if (p->tokens > p->depth)
		p->tokens = p->depth;
}

void hw_pace_set(struct hw_pace *p, uint64_t rate, uint64_t depth)
{
	pthread_mutex_lock(&pace_lock);
	pace_fill(p, hw_pace_now());
	p->rate = rate;
	p->depth = pace_depth(rate, depth);
	if (p->tokens > p->depth)
		p->tokens = p->depth;
	pthread_mutex_unlock(&pace_lock);
}

void hw_pace_get(struct hw_pace *p)
{
	__atomic_fetch_add(&p->refs, 1, __ATOMIC_RELAXED);
}

void hw_pace_put(struct hw_pace *p)
{
	while (p != NULL && __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) == 0) {
		struct hw_pace *up = p->parent;

		free(p);
		p = up;
	}
}

void hw_pace_stats(struct hw_pace *p, struct hw_pace_stats *s)
{
	pthread_mutex_lock(&pace_lock);
	pace_fill(p, hw_pace_now());
	*s = p->st;
	s->tokens = (int64_t)(p->tokens / PACE_NS);
	pthread_mutex_unlock(&pace_lock);
}

bool hw_pace_ready(struct hw_pace *p, uint64_t now, uint64_t *ready_at)
{
	uint64_t at = now;

	pthread_mutex_lock(&pace_lock);
	for (; p != NULL; p = p->parent) {
		if (p->rate == 0)
			continue;
		pace_fill(p, now);
		if (p->tokens <= 0) { /* one token (a byte) more than the debt */
			uint64_t wait = (uint64_t)((-p->tokens + PACE_NS + p->rate - 1) / p->rate);

			if (now + wait > at)
				at = now + wait;
		}
	}
	pthread_mutex_unlock(&pace_lock);
	*ready_at = at;
	return at == now;
}

void hw_pace_charge(struct hw_pace *p, uint64_t bytes, bool waited, uint64_t now)
{
	pthread_mutex_lock(&pace_lock);
	for (; p != NULL; p = p->parent) {
		pace_fill(p, now);
		if (p->rate != 0)
			p->tokens -= (pace_t)bytes * PACE_NS;
		p->st.bytes += bytes;
		p->st.wqes++;
		p->st.deferred += waited;
	}
	pthread_mutex_unlock(&pace_lock);
}

void hw_qp_set_pace(struct hw_qp *qp, struct hw_pace *p)
{
	struct hw_pace *old;

	if (p != NULL)
		hw_pace_get(p);
	old = __atomic_exchange_n(&qp->pace, p, __ATOMIC_ACQ_REL);
	/* The first look leaves a paced SQ to the general path, which waits for tokens. */
	if (p != NULL)
		__atomic_fetch_or(&qp->no_fast, HW_QP_NO_FAST_PACE, __ATOMIC_ACQ_REL);
	else
		__atomic_fetch_and(&qp->no_fast, (uint8_t)~HW_QP_NO_FAST_PACE, __ATOMIC_ACQ_REL);
	if (old == NULL)
		return;
	hw_epoch_sync(); /* a WQE running with the old bucket is done with it */
	hw_pace_put(old);
	/* A WQE that waited for the old bucket goes by the new one, or at once (nothing waits unpaced). */
	if (p == NULL && __atomic_exchange_n(&qp->pace_deadline, HW_QP_NO_DEADLINE, __ATOMIC_ACQ_REL) != HW_QP_NO_DEADLINE)
		hw_qp_drive(qp, 0);
	else if (p != NULL && __atomic_load_n(&qp->pace_deadline, __ATOMIC_ACQUIRE) != HW_QP_NO_DEADLINE)
		hw_qp_drive(qp, 0);
}

void hw_pace_pass(struct hw_qp *qp, struct hw_eng_pass *pass)
{
	uint64_t d = __atomic_load_n(&qp->pace_deadline, __ATOMIC_ACQUIRE), now;

	if (d == HW_QP_NO_DEADLINE)
		return;
	now = hw_pace_now();
	if (d <= now) {
		hw_qp_drive(qp, 0);
		/* Flushed meanwhile (ERR): nothing waits any more. */
		if (__atomic_load_n(&qp->sq_ci, __ATOMIC_ACQUIRE) == __atomic_load_n(&qp->sq_pi, __ATOMIC_ACQUIRE))
			__atomic_compare_exchange_n(&qp->pace_deadline, &d, HW_QP_NO_DEADLINE, false, __ATOMIC_ACQ_REL,
						    __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&qp->pace_deadline, __ATOMIC_ACQUIRE) != d)
			pass->activity = true;
	} else if (!__atomic_load_n(&pace_virtual, __ATOMIC_ACQUIRE) && d < pass->next_deadline) {
		pass->next_deadline = d; /* a virtual deadline is not on the thread's clock: the advance wakes it */
	}
}

void hw_pace_timer_arm(struct hw_pace_timer *t, uint64_t at)
{
	pthread_mutex_lock(&timer_lock);
	t->at = at;
	if (!t->armed) {
		t->armed = true;
		t->next = timers;
		__atomic_store_n(&timers, t, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&timer_lock);
	if (__atomic_load_n(&pace_virtual, __ATOMIC_ACQUIRE))
		return; /* the clock's advance wakes the thread */
	hw_eng_wake_by(at);
}

/* Lock held. */
static void timer_unlink(struct hw_pace_timer *t)
{
	struct hw_pace_timer **pt = &timers;

	while (*pt != NULL && *pt != t)
		pt = &(*pt)->next;
	if (*pt == t)
		__atomic_store_n(pt, t->next, __ATOMIC_RELEASE); /* the head is read unlocked (hw_pace_timers_run) */
	t->armed = false;
}

void hw_pace_timer_cancel(struct hw_pace_timer *t)
{
	pthread_mutex_lock(&timer_lock);
	if (t->armed)
		timer_unlink(t);
	while (t->running != 0) { /* its call ends soon: it only runs the queue */
		pthread_mutex_unlock(&timer_lock);
		sched_yield();
		pthread_mutex_lock(&timer_lock);
	}
	pthread_mutex_unlock(&timer_lock);
}

/* Lock held: a timer due now, taken off the list and marked running; NULL if none. */
static struct hw_pace_timer *timer_take_due(uint64_t now, uint64_t *next)
{
	for (struct hw_pace_timer *t = timers; t != NULL; t = t->next) {
		if (t->at <= now) {
			timer_unlink(t);
			t->running++;
			return t;
		}
		if (t->at < *next)
			*next = t->at;
	}
	return NULL;
}

void hw_pace_timers_run(struct hw_eng_pass *pass)
{
	uint64_t next = HW_QP_NO_DEADLINE, now;
	struct hw_pace_timer *t;

	if (__atomic_load_n(&timers, __ATOMIC_ACQUIRE) == NULL)
		return; /* no paced Ethernet SQ waits: the pass takes no lock for them */
	now = hw_pace_now();
	pthread_mutex_lock(&timer_lock);
	while ((t = timer_take_due(now, &next)) != NULL) {
		pthread_mutex_unlock(&timer_lock);
		t->fn(t->arg);
		pass->activity = true;
		pthread_mutex_lock(&timer_lock);
		t->running--;
		next = HW_QP_NO_DEADLINE; /* looked at again from the start: the list changed */
	}
	pthread_mutex_unlock(&timer_lock);
	if (!__atomic_load_n(&pace_virtual, __ATOMIC_ACQUIRE) && next < pass->next_deadline)
		pass->next_deadline = next;
}
