/*
 * hw_eng_thread — the engine's own thread, for the work nobody's call starts.
 *
 * Work a program asks for through the library runs inline, on the caller's
 * thread, at the doorbell (hw_qp_ring_sq, hw_qp_ring_rq, hw_srq_ring): no
 * hand-off, so a WQE costs what its execution does. This thread does what
 * has no caller:
 *  - kicks a QP whose RNR deadline has passed (the retry, or RNR_RETRY_EXC);
 *  - resumes a QP waiting on RNR for a responder of another process when
 *    that process posts a receive: it sleeps in futex_waitv on the bells in
 *    the responders' shared blocks (hw_qp.h), which their receive doorbells
 *    ring;
 *  - about every 100 ms checks the peers of other processes that QPs are
 *    connected to: one destroyed or whose process died moves the QP to ERR,
 *    so a crashed process blocks nobody;
 *  - runs the SQ of a polled QP (hw_qp_set_polled) when the program moved its
 *    send record itself (mlx5dv), and resumes a requester waiting for a
 *    receive posted the same way;
 *  - reports SRQ limit events a requester of another process left owed.
 * It spins a short while after activity, then sleeps, longer and longer up to
 * HW_ENG_POLL_MAX_NS while a polled QP exists (the latency of a raw doorbell
 * after a quiet spell), otherwise until the next deadline or peer check.
 * Raw doorbells arm it adaptively (hw_eng_raw.h): it spins longer while they
 * keep coming, and sleeps longer once none came for a while.
 *
 * It starts with the first QP and stops when the last is destroyed, and at
 * exit. Across fork the child starts without it (none half-copied) and gets
 * its own at the next need.
 */
#ifndef HW_ENG_THREAD_H_
#define HW_ENG_THREAD_H_

#include <stdbool.h>
#include <stdint.h>

#include "hw_eng_raw.h" /* HW_ENG_SPIN_NS, HW_ENG_POLL_MAX_NS */

#define HW_ENG_PEER_CHECK_NS 100000000ull /* between looks at remote peers */

/* A QP exists: the thread runs (started if needed). */
/*
 * Registers the engine's fork handlers now (they take the QP registry's and
 * the engine's locks before a fork). A library that takes its own lock
 * around calls that reach those locks registers its handlers after this, so
 * its prepare handler, run first, takes its lock first, in the same order.
 */
void hw_eng_fork_ready(void);

void hw_eng_get(void);
/* A QP went: the last one stops the thread. */
void hw_eng_put(void);
/* Something new to watch (a deadline, a polled QP, a remote peer): look now. */
void hw_eng_wake(void);
/* Whether the thread looks at polled QPs' records (SOFTDPU_ENGINE_RAW_POLL not 0). */
bool hw_eng_polls_raw(void);
/*
 * Something new to look at by the monotonic time t (an RNR deadline): wakes
 * the thread unless it sleeps until no later than t anyway, so RNR waits
 * that follow each other closely do not wake it each time.
 */
void hw_eng_wake_by(uint64_t t);

/*
 * A requester waiting on RNR for a responder of another process is watched
 * (the responder's receive doorbell asked to ring) once it has waited this
 * long without its program polling the CQ: a polling program resumes the
 * wait itself, and the responder then pays no system call per wait.
 */
#define HW_ENG_RNR_GRACE_NS 50000ull

#endif /* HW_ENG_THREAD_H_ */
