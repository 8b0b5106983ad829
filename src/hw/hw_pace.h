/*
 * hw_pace — token buckets that pace a QP's sends (packet pacing, schedule
 * elements).
 *
 * A bucket fills at its rate (bytes per second) up to its depth (bytes). A
 * send WQE of a paced QP starts only while every bucket of its chain (the
 * QP's own, then its parents: a schedule leaf under nodes) holds a token;
 * once it ran, the bytes it moved are taken from each of them, which may
 * leave a bucket in debt: the next WQE then waits until it is refilled. The
 * rate over any long span is therefore the configured one whatever the
 * message sizes, and a message larger than the depth still goes (as one
 * burst). Rate 0 is no limit at that level.
 *
 * A WQE that must wait is not executed: the SQ stops at it (its QP's
 * pace_deadline says until when) and the engine thread runs the SQ again at
 * that time (hw_pace_pass); other QPs are not held up. A QP without a bucket
 * pays one test on the engine's paths (hw_engine.c).
 *
 * Buckets are reference-counted: a QP holds its own, a child its parent, so
 * a bucket outlives whoever still paces by it. Their accounting is under
 * one lock (only paced sends take it).
 *
 * The clock is CLOCK_MONOTONIC; a test may switch it to a virtual clock it
 * advances itself, which makes the pacing a count rather than a timing.
 */
#ifndef HW_PACE_H_
#define HW_PACE_H_

#include <stdbool.h>
#include <stdint.h>

#include "hw_mem.h"

struct hw_pace;
struct hw_qp;
struct hw_eng_pass;

/* A bucket of the given rate (bytes/s, 0: unlimited) and depth (bytes, 0: what the rate carries in 10 ms), full. */
enum hw_status hw_pace_create(uint64_t rate, uint64_t depth, struct hw_pace *parent, struct hw_pace **out);
/* New rate and depth; the tokens it holds stay (capped at the new depth). */
void hw_pace_set(struct hw_pace *p, uint64_t rate, uint64_t depth);
void hw_pace_get(struct hw_pace *p);
void hw_pace_put(struct hw_pace *p);

/* What a bucket accounted since it was created. */
struct hw_pace_stats {
	uint64_t bytes;	   /* taken by the WQEs that ran */
	uint64_t wqes;	   /* WQEs that ran */
	uint64_t deferred; /* WQEs that had to wait before they ran */
	int64_t tokens;	   /* bytes the bucket holds now (negative: its debt) */
};
void hw_pace_stats(struct hw_pace *p, struct hw_pace_stats *s);

/*
 * Paces qp by p (a reference taken; NULL: no pacing). The bucket it had is
 * released once no WQE of the QP still runs with it.
 */
void hw_qp_set_pace(struct hw_qp *qp, struct hw_pace *p);

/* The engine's side (hw_engine.c): whether the chain lets a WQE start now; if not, *ready_at. */
bool hw_pace_ready(struct hw_pace *p, uint64_t now, uint64_t *ready_at);
void hw_pace_charge(struct hw_pace *p, uint64_t bytes, bool waited, uint64_t now);
/* The engine thread's look at a paced QP (hw_qp.c, pass_one): runs its SQ when its wait is over. */
void hw_pace_pass(struct hw_qp *qp, struct hw_eng_pass *pass);

/*
 * A queue the engine thread runs again when its wait is over (the Ethernet
 * SQs, hw_eth.c): armed with a time, fn(arg) is called from the thread once
 * hw_pace_now() reaches it, outside any lock of this file.
 */
struct hw_pace_timer {
	struct hw_pace_timer *next;
	void (*fn)(void *arg);
	void *arg;
	uint64_t at;
	bool armed;
	uint32_t running; /* fn is being called */
};
void hw_pace_timer_arm(struct hw_pace_timer *t, uint64_t at);
/* Disarms it; when it returns, fn no longer runs for it. */
void hw_pace_timer_cancel(struct hw_pace_timer *t);
/* The engine thread (hw_eng_thread.c): calls the timers due, and says when the next one is. */
void hw_pace_timers_run(struct hw_eng_pass *pass);

uint64_t hw_pace_now(void);
/* Tests: the pacing clock becomes a virtual one at 0 (or the monotonic clock again). */
void hw_pace_clock_virtual(bool on);
/* Tests: moves the virtual clock on and lets the engine thread look at the waiting QPs. */
void hw_pace_clock_advance(uint64_t ns);

#endif /* HW_PACE_H_ */
