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

#define HW_WAITER_MAX_BELLS 16

struct hw_waiter {
	int efd; /* written once when a watched bell rings */
	uint32_t n;
	struct hw_bell *bell[HW_WAITER_MAX_BELLS];
	uint32_t seen[HW_WAITER_MAX_BELLS];
	bool armed; /* registered with the device's watch engine */
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
 * Adds a bell to the set a later arm watches, with the sequence seen before
 * the state was found not ready. A bell already in the set keeps its older
 * sequence. HW_ERR_NOMEM when the set is full.
 */
enum hw_status hw_waiter_add(struct hw_waiter *w, struct hw_bell *b, uint32_t seen);
/*
 * Watches the set: the eventfd is written once when any bell rings (at once
 * if one already has). The set is emptied. HW_ERR_NOMEM when the device's
 * watch engine is full or cannot start (the caller then signals at once).
 */
enum hw_status hw_waiter_arm(struct hw_waiter *w);
/* Drops the set and an armed watch; the eventfd is not written after it returns. True if a watch was armed. */
bool hw_waiter_disarm(struct hw_waiter *w);

#endif /* HW_BELL_H_ */
