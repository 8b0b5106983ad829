/*
 * hw_bell — doorbells between producers and sleeping consumers.
 *
 * A bell sits next to state a consumer may wait for (a sync-event counter,
 * later a completion queue). A producer rings it after changing that state:
 * the sequence moves on, and only when someone watches does the ring cost a
 * system call. A consumer that found the state not ready remembers the
 * sequence it saw (hw_bell_seq) *before* looking at the state; a watch armed
 * with that sequence fires as soon as the bell has rung since, so no ring is
 * ever lost between the look and the watch.
 *
 * A watcher (hw_waiter) is one-shot, like an armed completion queue on the
 * card: the device writes the watcher's eventfd once when any of its bells
 * rings, then forgets the watch. Bells may live in memory shared between
 * processes: the device waits on them with shared futexes, so a ring from
 * another process wakes this one.
 */
#ifndef HW_BELL_H_
#define HW_BELL_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw_mem.h"

struct hw_bell {
	_Atomic uint32_t seq;	   /* moves on at every ring */
	_Atomic uint32_t watchers; /* armed watches: a ring wakes the device only when non-zero */
};

#define HW_WATCH_MAX_BELLS 16

/*
 * Tells whether the producer behind a bell is gone (a process that died
 * cannot ring): the engine asks every HW_WATCH_PEER_PERIOD_MS while armed.
 */
typedef bool (*hw_peer_gone_fn)(void *arg);

#define HW_WATCH_PEER_PERIOD_MS 100

/* The bells a consumer waits on, each with the sequence it saw before finding its state not ready. */
struct hw_watch_set {
	uint32_t n;
	struct hw_bell *bell[HW_WATCH_MAX_BELLS];
	uint32_t seen[HW_WATCH_MAX_BELLS];
	hw_peer_gone_fn gone[HW_WATCH_MAX_BELLS]; /* NULL: the producer is this process */
	void *gone_arg[HW_WATCH_MAX_BELLS];
};

/*
 * A consumer's eventfd and its armed watch; the set is the engine's while
 * armed (under its lock). fired counts the watches fired, each just before
 * its write to efd, so consumers sharing one eventfd tell whose it was.
 */
struct hw_waiter {
	int efd;
	bool armed;
	_Atomic uint32_t fired;
	struct hw_watch_set set;
	struct hw_waiter *next;
};

void hw_bell_ring_slow(struct hw_bell *b);

static inline uint32_t hw_bell_seq(const struct hw_bell *b)
{
	return atomic_load_explicit(&b->seq, memory_order_acquire);
}

/* After the state change: the RMW orders it before the watcher check (no ring is lost). */
static inline void hw_bell_ring(struct hw_bell *b)
{
	atomic_fetch_add_explicit(&b->seq, 1, memory_order_seq_cst);
	if (atomic_load_explicit(&b->watchers, memory_order_seq_cst) != 0)
		hw_bell_ring_slow(b);
}

void hw_waiter_init(struct hw_waiter *w, int efd);
/*
 * Adds a bell (a bell already there keeps its older sequence), with an
 * optional liveness check of its producer (called on the engine's thread
 * while the watch is armed). HW_ERR_NOMEM when the set is full.
 */
enum hw_status hw_watch_set_add(struct hw_watch_set *s, struct hw_bell *b, uint32_t seen, hw_peer_gone_fn gone,
				void *gone_arg);
/*
 * Watches the set (replacing an armed watch): the eventfd is written once
 * when any bell rings, at once if one already has. HW_ERR_NOMEM when the
 * device's watch engine is full or cannot start: the caller signals itself.
 */
enum hw_status hw_waiter_arm(struct hw_waiter *w, const struct hw_watch_set *s);
/* Drops an armed watch; the eventfd is not written after it returns. True if one was armed. */
bool hw_waiter_disarm(struct hw_waiter *w);

#endif /* HW_BELL_H_ */
