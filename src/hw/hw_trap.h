/*
 * hw_trap — doorbell pages that run the work on the writer's thread.
 *
 * A program that rings a QP itself (mlx5dv, DevX: WQE in the SQ, counter in
 * the send record, then a store to the doorbell/BlueFlame register) gives
 * the device nothing but memory to notice. A trapped page is that register
 * page write-protected: the store faults, and the SIGSEGV handler
 * (base_segv.h), on the writer's own thread, runs the SQs of the process's
 * polled QPs up to their records (the engine thread's polled look,
 * hw_qp_polled_run) and steps past the store without performing it (no one
 * reads the register), and past the stores right after it into armed
 * pages (the rest of a BlueFlame copy), so one doorbell costs one signal.
 * The WQE has completed when the store "returns".
 *
 * An instruction the decoder does not know (base_x86.h) is not stepped
 * over: the page is made writable, the store runs again and lands, the
 * engine thread's polling serves the doorbell, and the page is
 * write-protected again at the engine thread's next pass but one
 * (hw_trap_rearm).
 *
 * A stream is handed to the engine thread: a trap costs a signal (~2 µs),
 * where the engine thread spinning on a core of its own runs a window of
 * WQEs in one look. A doorbell whose trap leaves CQEs of earlier doorbells
 * unconsumed on the send CQ (the program rang again without looking at
 * what they completed; a ping-pong consumes each, or asks for none) is a
 * stream's, as is one that traps right after the page's previous trap
 * returned (back to back, with few completions asked); a run of them in a row leaves the page writable (STREAM) and
 * wakes the engine thread, which spins on the records while they move and
 * write-protects the page again before it sleeps (hw_trap_streams_close);
 * the next doorbell traps again. A hand-over that did not pay (the engine
 * thread ran little before the page closed, as when it loses its core on a
 * loaded machine) doubles the run the next one needs. SOFTDPU_RAW_STREAM=0 keeps every doorbell
 * trapped; without the engine thread's look at records
 * (SOFTDPU_ENGINE_RAW_POLL=0) a page never opens for a stream.
 *
 * x86-64 only (elsewhere hw_trap_arm is EOPNOTSUPP and the engine thread's
 * polling serves every doorbell). SOFTDPU_RAW_TRAP=0 turns traps off.
 *
 * A fork's child gets its pages writable and forgotten: the parent's QPs
 * are not run from it. Arm and disarm are counted per page; the last
 * disarm makes the page writable and forgets it (the caller may then free
 * it); what the handler reaches is the QP registry under the epoch, never
 * the page or the caller's objects, except a store page's handler and its
 * argument (hw_trap_arm_store), which its caller keeps until it forgets
 * the page.
 */
#ifndef HW_TRAP_H_
#define HW_TRAP_H_

#include <stdbool.h>
#include <stdint.h>

/* Write-protects page (page-aligned, one page of the caller's own mapping), counted; 0 or an errno. */
int hw_trap_arm(void *page);
/*
 * A register page whose stores mean something of their own (a CQ's arm
 * doorbell): each store to it traps and, instead of running polled QPs,
 * calls fn on the writer's thread with the store's offset in the page and
 * its value as the register held it (has_val: an 8-byte store of a general
 * register or an immediate; other stores give none). No store after it is
 * stepped over. Counted as hw_trap_arm; the page's first arm sets fn.
 */
typedef void (*hw_trap_store_fn)(void *arg, uint32_t off, uint64_t val, bool has_val);
int hw_trap_arm_store(void *page, hw_trap_store_fn fn, void *arg);
/*
 * A doorbell page (as hw_trap_arm) with one register of another meaning
 * (a DevX UAR's CQ doorbell): an 8-byte store at off (8-aligned, in the
 * page) calls fn as hw_trap_arm_store's pages do and rings no QP; other
 * stores ring QPs. Counted as hw_trap_arm; the page's first arm sets fn.
 */
int hw_trap_arm_side(void *page, uint32_t off, hw_trap_store_fn fn, void *arg);
/* Drops one count; at none the page is writable again and forgotten. */
void hw_trap_disarm(void *page);
/* Forgets page whatever its count (the caller frees it next): writable again. */
void hw_trap_forget(void *page);
/* Whether page is armed (write-protected by a trap) now. */
bool hw_trap_armed(const void *page);
/* The engine thread's: pages opened for an unknown instruction are write-protected again. */
void hw_trap_rearm(void);
/* Whether the page holding addr is open to a stream now (written without trapping, served by the engine thread). */
bool hw_trap_streaming(const void *addr);
/*
 * The engine thread's, before it stops spinning (or when it finds it lost
 * its core while a page was open): pages open to a stream are
 * write-protected again; true when some were (a store that landed before is
 * then the next look's to serve). passes: its passes that ran raw work
 * while they were open; a hand-over that ran few makes the next one need a
 * longer run of stream doorbells (a loaded machine keeps its traps).
 */
bool hw_trap_streams_close(uint32_t passes);
/* Whether some page is open to a stream (the engine thread then keeps its core while it spins). */
bool hw_trap_streams_open(void);
/* For tests: while held, pages open to a stream stay open (hw_trap_streams_close does nothing). */
void hw_trap_streams_hold(bool hold);
/* For tests: the gap under which back-to-back doorbells count as a stream's (0: never; ~0: always; the default otherwise). */
void hw_trap_stream_gap(uint64_t ns);
#define HW_TRAP_STREAM_GAP_DEFAULT 2000u
/*
 * Whether trapped pages serve raw doorbells now (some armed, none opened,
 * none open to a stream):
 * the engine thread's look at polled QPs is then a fallback, not a rhythm
 * to spin for.
 */
bool hw_trap_serving(void);
/* Whether traps are on (x86-64, SOFTDPU_RAW_TRAP not 0). */
bool hw_trap_enabled(void);

/*
 * Counters, for tests and benchmarks: doorbells served, instructions
 * stepped over, pages opened (unknown instruction), pages opened to a
 * stream, stream pages write-protected again.
 */
struct hw_trap_stats {
	uint64_t served;
	uint64_t stepped;
	uint64_t opened;
	uint64_t streams;
	uint64_t closed;
};
void hw_trap_stats(struct hw_trap_stats *out);

#endif /* HW_TRAP_H_ */
