/*
 * fx_isolate — one FlexIO process's DPA memory (its device heap and its
 * image's writable data) out of reach of another process's device code,
 * with x86 memory protection keys: each process's memory carries a key of
 * its own, and a hart running device code denies every other process's key
 * in its PKRU. Host code keeps access to all of them. Where there are no
 * protection keys (another CPU, valgrind, all keys taken), processes run
 * as before, unisolated, and say so once in the log.
 */
#ifndef FX_ISOLATE_H_
#define FX_ISOLATE_H_

#include <signal.h>
#include <stdbool.h>

struct flexio_process;

/* After p's image loaded: a key for p (p->pkey), applied to its heap and its image's writable segments. */
void fx_iso_proc_init(struct flexio_process *p);
/* Before p's heap is unmapped and its image closed: the memory back to key 0, the key back to the pool. */
void fx_iso_proc_fini(struct flexio_process *p);
/* The calling thread is about to run p's device code: other processes' memory denied (one PKRU write). */
void fx_iso_device(const struct flexio_process *p);
/* The calling thread runs host code again: every process's memory allowed. */
void fx_iso_host(void);
/*
 * A fault of host code on a process's memory (a thread whose PKRU denies
 * the library's keys: one that existed before the library loaded): grants
 * the keys in the interrupted context, so returning from the handler retries
 * the access. Whether it did.
 */
bool fx_iso_fault_fixup(int sig, siginfo_t *si, void *uc);

#endif /* FX_ISOLATE_H_ */
