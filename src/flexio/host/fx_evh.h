/*
 * fx_evh — event handlers: DPA threads that CQ events activate.
 *
 * A handler's thread is a hart with a host thread of its own. An armed CQ
 * that names the thread (FLEXIO_CQ_ELEMENT_TYPE_DPA_THREAD) wakes it when
 * its event fires: the producer's thread calls fx_thread_wake from the CQ
 * (hw_cq's on_event), which marks an event pending and wakes the hart only
 * when it sleeps. Events that come while an activation runs are one
 * pending activation: the thread runs once more, from the top.
 */
#ifndef FX_EVH_H_
#define FX_EVH_H_

#include <stdbool.h>

struct flexio_process;
struct flexio_thread;

/* Whether t is a thread of an event handler of p (live or destroyed). */
bool fx_thread_of(struct flexio_process *p, const struct flexio_thread *t);
/* A CQ event for t: safe from any thread, and after the handler was destroyed (then nothing). */
void fx_thread_wake(struct flexio_thread *t);
/* Process destroy: every handler's thread stopped (out of device code at once). */
void fx_evh_stop_all(struct flexio_process *p);
/* Process destroy, after the CQs went: the handlers freed. */
void fx_evh_fini(struct flexio_process *p);

#endif /* FX_EVH_H_ */
