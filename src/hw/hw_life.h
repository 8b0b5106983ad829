/*
 * hw_life — whether the process that owns a queue still lives, in one load.
 *
 * A card's requester learns that its responder is gone when its retries run
 * out: the first request after the death fails, none succeeds. A peer
 * process's death must be as plain to a requester of another process, at
 * every WQE, without a system call. Each process that shares queues holds a
 * robust, process-shared mutex in a device-wide table
 * (/softdpu-<uid>-life-v1) from a thread of its own that only waits; when
 * the process dies, however it dies, the kernel marks the mutex's word
 * OWNER_DIED (robust futex list), so the word reads the holder's thread id
 * exactly while the process lives. A queue's shared block names its owner's
 * entry and thread id (hw_life_self); a requester that mapped it looks at
 * the word (hw_life_at, hw_life_alive).
 */
#ifndef HW_LIFE_H_
#define HW_LIFE_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define HW_LIFE_NONE UINT32_MAX /* no entry: the owner's life is not watched this way */

/* This process's entry and holder thread id, set up at the first call; *idx HW_LIFE_NONE when it cannot be. */
void hw_life_self(uint32_t *idx, uint32_t *tid);

/* The word of entry idx (another process's), or NULL when idx is out of range or the table cannot be had. */
const _Atomic int *hw_life_at(uint32_t idx);

/* The owner named by (word, tid) lives. */
static inline bool hw_life_alive(const _Atomic int *word, uint32_t tid)
{
	/* The kernel leaves OWNER_DIED (bit 30) and clears the id when the holder dies; bit 31 is waiters'. */
	return ((uint32_t)atomic_load_explicit(word, memory_order_acquire) & 0x7fffffffu) == tid;
}

#endif /* HW_LIFE_H_ */
