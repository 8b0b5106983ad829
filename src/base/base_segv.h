/*
 * base_segv — the process's one SIGSEGV handler for pages the library
 * write- or access-protects on purpose (MEMIC op addresses, doorbell
 * pages): each client is asked in turn whether a fault is its own and
 * served; a fault no client serves goes to the handler installed before
 * this one (the program's, UCX's, a sanitizer's), or, with none, kills the
 * process as it would have.
 *
 * The handler is installed when the first client is added — when the
 * first protected page is made, after the program and the libraries it
 * loaded installed theirs — and kept for the process's life. A handler
 * installed later in its place is the program's business: it must chain.
 *
 * It runs on the faulting thread's own stack, not an alternate one: a
 * doorbell's fault runs WQEs in the handler, deeper than the small
 * alternate stacks sanitizers and UCX give each thread (under ASan it
 * overflowed them now and then). The price: a thread that overflows its
 * own stack dies of SIGSEGV without the chained handler's report.
 */
#ifndef BASE_SEGV_H_
#define BASE_SEGV_H_

#include <stdbool.h>
#include <ucontext.h>

/*
 * A client: true when the fault at addr (SEGV_ACCERR) is its own and the
 * context was moved on (or the access may run again); it runs in the
 * faulting thread's signal handler, so it must take only what that thread
 * cannot hold.
 */
typedef bool (*base_segv_fn)(void *addr, ucontext_t *uc);

/* Adds fn (once per fn) and installs the handler if not yet; 0, or an errno. */
int base_segv_add(base_segv_fn fn);

#endif /* BASE_SEGV_H_ */
