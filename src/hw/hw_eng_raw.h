/*
 * hw_eng_raw — how the engine thread arms itself for raw doorbells.
 *
 * A program that writes its WQEs, doorbell record and doorbell register
 * itself gives the device no call to run them in: the engine thread must
 * look at the record. Looking costs a core while it spins; not looking costs
 * latency. The policy adapts to the doorbells seen:
 *  - after one, it spins for 4x the smoothed gap between the last ones,
 *    at least HW_ENG_SPIN_NS and at most HW_ENG_RAW_SPIN_MAX_NS, so doorbells
 *    that keep coming (a ping-pong's, a stream's) find it awake; a gap
 *    longer than the longest spin is a quiet spell and is not averaged in;
 *  - past the spin it sleeps between looks, longer and longer, up to
 *    HW_ENG_POLL_MAX_NS while the last doorbell is less than
 *    HW_ENG_QUIET_NS old, then up to HW_ENG_POLL_IDLE_MAX_NS, so an idle
 *    process holding such a QP costs a fraction of a percent of a core (and
 *    its first doorbell after a quiet spell waits up to that sleep).
 */
#ifndef HW_ENG_RAW_H_
#define HW_ENG_RAW_H_

#include <stdint.h>

#define HW_ENG_POLL_MAX_NS 1000000ull	    /* the longest sleep while raw doorbells came lately */
#define HW_ENG_SPIN_NS 50000ull		    /* spinning after activity */
#define HW_ENG_RAW_SPIN_MAX_NS 2000000ull   /* the longest spin after a raw doorbell */
#define HW_ENG_QUIET_NS 100000000ull	    /* no raw doorbell for this long: the process is idle */
#define HW_ENG_POLL_IDLE_MAX_NS 4000000ull  /* the longest sleep while a polled QP exists, idle */

struct hw_eng_raw {
	uint64_t last; /* when the last raw doorbell ran (monotonic ns); 0: none yet */
	uint64_t gap;  /* smoothed gap between raw doorbells, ns; 0: none measured */
	uint64_t spin; /* how long to spin after last */
};

/* A policy with no doorbell seen: spin HW_ENG_SPIN_NS after one. */
void hw_eng_raw_init(struct hw_eng_raw *r);
/* A raw doorbell ran at now. */
void hw_eng_raw_seen(struct hw_eng_raw *r, uint64_t now);
/* Whether the thread still spins at now (a raw doorbell ran within the spin). */
int hw_eng_raw_spinning(const struct hw_eng_raw *r, uint64_t now);
/* The longest sleep between looks at now (HW_ENG_POLL_MAX_NS or, idle, HW_ENG_POLL_IDLE_MAX_NS). */
uint64_t hw_eng_raw_max_sleep(const struct hw_eng_raw *r, uint64_t now);

#endif
