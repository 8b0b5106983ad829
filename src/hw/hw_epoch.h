/*
 * hw_epoch — destroy is a fence.
 *
 * Work runs on the threads of whoever rings a doorbell, in any process of
 * the device, against objects found by number or through a peer pointer: a
 * QP, its CQs and SRQ, a memory key. A destroy or deregistration first makes
 * its object unreachable (registry entry gone, record withdrawn, key
 * invalid), then waits here until every execution that might have reached it
 * before that has ended (hw_epoch_sync), and only then gives the memory back.
 * This is what the card's MKey invalidation and QP teardown guarantee, and
 * what a program relies on when it frees a buffer after ibv_dereg_mr.
 *
 * Each executing thread owns a 64-byte slot of a device-wide table
 * (/softdpu-<uid>-epoch-v1, mode 0600, checked like the number table; a
 * process-local one when there is no /dev/shm). Entering writes an odd
 * value to the slot, leaving writes 0; nesting costs a thread-local counter.
 * A writer waits for every slot it saw odd to change. The ordering a
 * reader's store needs against its later loads is given on the writer's side
 * by membarrier(2) (global expedited, which each reader process registers
 * for), so entering costs two plain stores and no fence; where membarrier is
 * missing, readers fence.
 *
 * A slot is claimed on a thread's first entry and freed when the thread
 * ends; slots of dead processes are skipped and reclaimed. A writer inside
 * an execution of its own (a callback) does not wait for itself.
 */
#ifndef HW_EPOCH_H_
#define HW_EPOCH_H_

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

struct hw_epoch_tls {
	_Atomic uint64_t *word; /* this thread's slot (valid once gen is odd) */
	uint64_t gen;		/* 0 until the slot is claimed; then the last odd value written */
	uint32_t depth;		/* nested entries */
	uint32_t strong;	/* no membarrier: fence on entry */
};

extern __thread struct hw_epoch_tls hw_epoch_me __attribute__((tls_model("initial-exec")));

/* Claims this thread's slot (first entry, or after a fork) and sets gen odd. */
void hw_epoch_attach(struct hw_epoch_tls *me);

/* Marks the start of work that may reach objects others can destroy. */
static inline void hw_epoch_enter(void)
{
	if (hw_epoch_me.depth++ != 0)
		return;
	if (__builtin_expect(hw_epoch_me.gen == 0, 0))
		hw_epoch_attach(&hw_epoch_me);
	hw_epoch_me.gen += 2;
#ifndef __SANITIZE_THREAD__
	if (__builtin_expect(!hw_epoch_me.strong, 1)) {
		atomic_store_explicit(hw_epoch_me.word, hw_epoch_me.gen, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
		return;
	}
#endif
	/* No membarrier (or ThreadSanitizer, which knows nothing of it): the store is the barrier. */
	atomic_store_explicit(hw_epoch_me.word, hw_epoch_me.gen, memory_order_seq_cst);
}

static inline void hw_epoch_leave(void)
{
	if (--hw_epoch_me.depth == 0)
		atomic_store_explicit(hw_epoch_me.word, 0, memory_order_release);
}

/*
 * Waits until every execution, in every process of the device, that entered
 * before this call has left. The caller made its object unreachable first
 * and holds no lock an execution may take.
 */
void hw_epoch_sync(void);

#endif /* HW_EPOCH_H_ */
