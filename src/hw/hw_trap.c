/*
 * hw_trap — doorbell pages that run the work on the writer's thread (hw_trap.h).
 *
 * The handler finds a page's slot without a lock (slots are written under
 * trap_lock, read with atomic loads); a slot keeps its page after its last
 * disarm (GONE), so a thread that faulted just before the page became
 * writable finds it and runs the store again rather than crash.
 */
#include "hw_trap.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "base_maps.h"
#include "base_clock.h"
#include "base_segv.h"
#include "base_x86.h"
#include "hw_eng_thread.h"
#include "hw_qp.h"

#define TRAP_SLOTS 64
#define TRAP_STEP_MAX 8 /* stores stepped over after the faulting one (a BlueFlame copy is 1..4) */

/*
 * A doorbell whose trap leaves at least TRAP_STREAM_BACKLOG CQEs unconsumed
 * on a send CQ it completed into is a stream's: the program rang again
 * without looking at what the previous ones completed (a ping-pong consumes
 * its CQE, or asks none, before it rings again). TRAP_STREAM_RUN of them in
 * a row open the page to the engine thread's spinning poll.
 */
#define TRAP_STREAM_BACKLOG 4
#define TRAP_STREAM_RUN 16
/*
 * A doorbell that traps within trap_gap_ns (2 us) of its page's previous
 * trap returning counts as a stream's too: a program that asks for few
 * completions (UCX's moderation: one CQE in 64) leaves no backlog to see,
 * but rings back to back, where a ping-pong's next doorbell waits a round
 * trip for its peer. Measured from the handler's end to the next handler's
 * start, so it holds a signal's return and a fault's delivery (~1.2 us on
 * this machine's VM): at 1 us no stream was ever seen; at 2 us UCX's
 * rc_mlx5 64 KiB puts hand over and the raw ping-pong never does (its gap:
 * a whole round trip, ~4 us; docs/PERFORMANCE.md).
 */
static uint64_t trap_gap_ns = HW_TRAP_STREAM_GAP_DEFAULT; /* hw_trap_stream_gap */
/*
 * A hand-over pays when the engine thread then ran raw work in at least
 * TRAP_STREAM_PAID passes before the stream stopped; one that did not (the
 * engine thread, or the program, lost its core on a loaded machine, and the
 * page went back and forth) doubles the run the next one needs, up to
 * TRAP_STREAM_NEED_MAX, so such a machine keeps the traps, which cost the
 * writer a signal each but never wait for another thread's core.
 */
#define TRAP_STREAM_PAID 32
#define TRAP_STREAM_NEED_MAX 65536u

/* OPEN: writable for an instruction not stepped over; STREAM: writable while the engine thread serves a stream. */
enum { TRAP_FREE, TRAP_ARMED, TRAP_OPEN, TRAP_GONE, TRAP_STREAM };

struct trap_slot {
	uintptr_t page; /* this struct's words: __atomic builtins only (clang refuses them on _Atomic) */
	uint32_t state;
	uint32_t refs; /* under trap_lock */
	uint32_t age;  /* OPEN: rearm passes seen (under trap_lock) */
	hw_trap_store_fn fn; /* a register page's own handler (hw_trap_arm_store), else NULL: run polled QPs */
	void *arg;
	hw_trap_store_fn side_fn; /* a doorbell page's: 8-byte stores at side_off go to it (hw_trap_arm_side) */
	void *side_arg;
	uint32_t side_off;
	uint32_t run; /* ARMED: doorbells in a row that looked like a stream's */
	uint64_t left_ns; /* when its last trap returned (monotonic) */
};

static struct trap_slot slots[TRAP_SLOTS];
static pthread_mutex_t trap_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t trap_once = PTHREAD_ONCE_INIT;
static uint32_t trap_nopen;   /* slots OPEN or STREAM */
static uint32_t trap_nstream; /* slots STREAM */
static uint32_t trap_narmed;  /* slots ARMED, OPEN or STREAM */
static uint64_t st_served, st_stepped, st_opened, st_streams, st_closed;
static uintptr_t trap_pgsz;
static bool trap_on;
static bool trap_streams; /* the engine thread polls records, so it can take a stream over */
static uint32_t trap_need = TRAP_STREAM_RUN; /* stream doorbells in a row that open a page */
static bool trap_hold; /* tests: pages open to a stream stay open */
static int trap_err;

static struct trap_slot *trap_find(uintptr_t page)
{
	for (int i = 0; i < TRAP_SLOTS; i++)
		if (__atomic_load_n(&slots[i].page, __ATOMIC_ACQUIRE) == page)
			return &slots[i];
	return NULL;
}

static uint32_t trap_state(const struct trap_slot *s)
{
	return __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
}

#if defined(__x86_64__)
/* gregs index of each x86 register number. */
static const int greg_of[16] = {
	REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
	REG_R8,	 REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15,
};

static bool trap_is_store(const struct base_x86_insn *in)
{
	return in->kind == BASE_X86_STORE_REG || in->kind == BASE_X86_STORE_IMM || in->kind == BASE_X86_STORE_VEC;
}

/* Whether [a, a + n) lies in one armed page. */
static bool trap_armed_span(uintptr_t a, uintptr_t n)
{
	struct trap_slot *s;

	if ((a & ~(trap_pgsz - 1)) != ((a + n - 1) & ~(trap_pgsz - 1)))
		return false;
	s = trap_find(a & ~(trap_pgsz - 1));
	return s != NULL && trap_state(s) == TRAP_ARMED;
}

/* The stores following the one stepped over, into armed pages (a BlueFlame copy's rest): stepped over too. */
static void trap_step_run(greg_t *g)
{
	uint64_t regs[16];
	struct base_x86_insn in;

	for (int i = 0; i < 16; i++)
		regs[i] = (uint64_t)g[greg_of[i]];
	for (int n = 0; n < TRAP_STEP_MAX; n++) {
		uintptr_t rip = (uintptr_t)g[REG_RIP];

		if (!base_x86_decode((const uint8_t *)rip, &in) || !trap_is_store(&in) ||
		    !trap_armed_span(base_x86_addr(&in, regs, rip), in.width))
			return;
		g[REG_RIP] += in.len;
		__atomic_fetch_add(&st_stepped, 1, __ATOMIC_RELAXED);
	}
}

/* An instruction not stepped over: the page writable, the store runs again and the engine thread serves it. */
static void trap_open(struct trap_slot *s, uintptr_t page)
{
	uint32_t armed = TRAP_ARMED;

	if (__atomic_compare_exchange_n(&s->state, &armed, TRAP_OPEN, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(&trap_nopen, 1, __ATOMIC_RELEASE);
		__atomic_fetch_add(&st_opened, 1, __ATOMIC_RELAXED);
	}
	(void)mprotect((void *)page, trap_pgsz, PROT_READ | PROT_WRITE);
}

/*
 * One more doorbell of page, its trap having left backlog CQEs unconsumed:
 * the TRAP_STREAM_RUNth in a row of a stream opens the page, and the engine
 * thread, woken, spins on the records until the stream stops
 * (hw_trap_streams_close). The interrupted thread is in the program's code:
 * it holds no lock of the library's.
 */
static void trap_stream_seen(struct trap_slot *s, uintptr_t page, uint32_t backlog, bool quick)
{
	uint32_t armed = TRAP_ARMED;

	if (backlog < TRAP_STREAM_BACKLOG && !quick) {
		__atomic_store_n(&s->run, 0, __ATOMIC_RELAXED);
		return;
	}
	if (__atomic_add_fetch(&s->run, 1, __ATOMIC_RELAXED) < __atomic_load_n(&trap_need, __ATOMIC_RELAXED) ||
	    !trap_streams)
		return;
	__atomic_store_n(&s->run, 0, __ATOMIC_RELAXED);
	/*
	 * Under the lock the engine thread's close takes: a close between the
	 * state and the protection would be undone, leaving the page writable
	 * but ARMED (served by the engine thread's fallback look alone).
	 */
	pthread_mutex_lock(&trap_lock);
	if (!__atomic_compare_exchange_n(&s->state, &armed, TRAP_STREAM, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		pthread_mutex_unlock(&trap_lock);
		return;
	}
	__atomic_fetch_add(&trap_nstream, 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&trap_nopen, 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&st_streams, 1, __ATOMIC_RELAXED);
	(void)mprotect((void *)page, trap_pgsz, PROT_READ | PROT_WRITE);
	pthread_mutex_unlock(&trap_lock);
	hw_eng_wake();
}

static int trap_writable_map(const struct base_map *m, void *arg)
{
	uintptr_t a = *(const uintptr_t *)arg;

	if (a < m->lo || a >= m->hi)
		return 0;
	return m->perms[1] == 'w' ? 1 : 2;
}

/* A write to a page armed until just now: the program's, when the page is writable now (else not ours). */
static bool trap_gone_fault(uintptr_t page)
{
	return base_maps_scan(trap_writable_map, &page) == 1;
}

/*
 * A register's store handed to its handler, with its offset and value (an
 * 8-byte store of a register or immediate; others give none): every store
 * to a register page (hw_trap_arm_store), an 8-byte one at a doorbell
 * page's side register (hw_trap_arm_side). False: a doorbell's store.
 */
static bool trap_register(const struct trap_slot *s, uintptr_t page, const greg_t *g, const struct base_x86_insn *in)
{
	uint64_t regs[16], val = 0;
	bool has_val = false;
	uint32_t off;

	if (s->fn == NULL && (s->side_fn == NULL || in->width != 8))
		return false;
	for (int i = 0; i < 16; i++)
		regs[i] = (uint64_t)g[greg_of[i]];
	off = (uint32_t)(base_x86_addr(in, regs, (uintptr_t)g[REG_RIP]) - page);
	if (s->fn == NULL && off != s->side_off)
		return false;
	if (in->width == 8 && in->kind == BASE_X86_STORE_REG && in->reg < 16) {
		val = regs[in->reg];
		has_val = true;
	} else if (in->width == 8 && in->kind == BASE_X86_STORE_IMM) {
		val = (uint64_t)in->imm;
		has_val = true;
	}
	if (s->fn != NULL)
		s->fn(s->arg, off, val, has_val);
	else
		s->side_fn(s->side_arg, off, val, has_val);
	return true;
}

static bool trap_fault(void *addr, ucontext_t *uc)
{
	uintptr_t page = (uintptr_t)addr & ~(trap_pgsz - 1);
	struct trap_slot *s = trap_find(page);
	greg_t *g = uc->uc_mcontext.gregs;
	struct base_x86_insn in;
	uint32_t st, backlog;
	bool quick;

	if (s == NULL)
		return false;
	st = trap_state(s);
	if (st == TRAP_OPEN || st == TRAP_STREAM)
		return true; /* made writable since the fault: the store runs again */
	if (st != TRAP_ARMED)
		return st == TRAP_GONE && trap_gone_fault(page);
	if (!base_x86_decode((const uint8_t *)g[REG_RIP], &in) || !trap_is_store(&in)) {
		trap_open(s, page);
		return true;
	}
	if (trap_register(s, page, g, &in)) {
		g[REG_RIP] += in.len;
		__atomic_fetch_add(&st_served, 1, __ATOMIC_RELAXED);
		return true;
	}
	/* The record holds the counter and the WQE is in the ring: the store's value is not needed. */
	quick = base_clock_ns() - __atomic_load_n(&s->left_ns, __ATOMIC_RELAXED) <
		__atomic_load_n(&trap_gap_ns, __ATOMIC_RELAXED);
	backlog = hw_qp_polled_run();
	g[REG_RIP] += in.len;
	trap_step_run(g);
	__atomic_fetch_add(&st_served, 1, __ATOMIC_RELAXED);
	trap_stream_seen(s, page, backlog, quick);
	__atomic_store_n(&s->left_ns, base_clock_ns(), __ATOMIC_RELAXED);
	return true;
}
#else
static bool trap_fault(void *addr, ucontext_t *uc)
{
	(void)addr, (void)uc;
	return false;
}
#endif

/* The child of a fork: its pages writable and forgotten (the parent's QPs are not run from here). */
static void trap_child(void)
{
	for (int i = 0; i < TRAP_SLOTS; i++) {
		uintptr_t p = __atomic_load_n(&slots[i].page, __ATOMIC_RELAXED);
		uint32_t st = __atomic_load_n(&slots[i].state, __ATOMIC_RELAXED);

		if (p != 0 && (st == TRAP_ARMED || st == TRAP_OPEN || st == TRAP_STREAM))
			(void)mprotect((void *)p, trap_pgsz, PROT_READ | PROT_WRITE);
		memset(&slots[i], 0, sizeof(slots[i]));
	}
	__atomic_store_n(&trap_nopen, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&trap_nstream, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&trap_narmed, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&trap_lock);
}

static void trap_prepare(void)
{
	pthread_mutex_lock(&trap_lock);
}

static void trap_parent(void)
{
	pthread_mutex_unlock(&trap_lock);
}

static void trap_init(void)
{
	const char *e = getenv("SOFTDPU_RAW_TRAP");
	const char *st = getenv("SOFTDPU_RAW_STREAM");

#if defined(__x86_64__)
	trap_on = e == NULL || strcmp(e, "0") != 0;
#else
	(void)e;
	trap_on = false;
#endif
	trap_pgsz = (uintptr_t)sysconf(_SC_PAGESIZE);
	if (!trap_on)
		return;
	trap_streams = hw_eng_polls_raw() && (st == NULL || strcmp(st, "0") != 0);
	pthread_atfork(trap_prepare, trap_parent, trap_child);
	trap_err = base_segv_add(trap_fault);
}

bool hw_trap_enabled(void)
{
	pthread_once(&trap_once, trap_init);
	return trap_on && trap_err == 0;
}

/* A slot for page: its own, else a free one, else one gone. Lock held. */
static struct trap_slot *trap_slot_for(uintptr_t page)
{
	struct trap_slot *s = trap_find(page), *gone = NULL;

	for (int i = 0; i < TRAP_SLOTS && s == NULL; i++) {
		uint32_t st = trap_state(&slots[i]);

		if (st == TRAP_FREE)
			s = &slots[i];
		else if (st == TRAP_GONE && gone == NULL)
			gone = &slots[i];
	}
	return s != NULL ? s : gone;
}

static int trap_arm(void *page, hw_trap_store_fn fn, void *arg, hw_trap_store_fn side_fn, void *side_arg,
		    uint32_t side_off);

int hw_trap_arm(void *page)
{
	return trap_arm(page, NULL, NULL, NULL, NULL, 0);
}

int hw_trap_arm_store(void *page, hw_trap_store_fn fn, void *arg)
{
	return trap_arm(page, fn, arg, NULL, NULL, 0);
}

int hw_trap_arm_side(void *page, uint32_t off, hw_trap_store_fn fn, void *arg)
{
	if (fn == NULL || (off & 7) != 0 || off >= 4096)
		return EINVAL;
	return trap_arm(page, NULL, NULL, fn, arg, off);
}

static int trap_arm(void *page, hw_trap_store_fn fn, void *arg, hw_trap_store_fn side_fn, void *side_arg,
		    uint32_t side_off)
{
	struct trap_slot *s;
	int rc = 0;

	if (!hw_trap_enabled())
		return trap_err != 0 ? trap_err : EOPNOTSUPP;
	if (page == NULL || ((uintptr_t)page & (trap_pgsz - 1)) != 0)
		return EINVAL;
	pthread_mutex_lock(&trap_lock);
	s = trap_slot_for((uintptr_t)page);
	if (s == NULL) {
		rc = ENOSPC;
	} else if (__atomic_load_n(&s->page, __ATOMIC_RELAXED) == (uintptr_t)page && s->refs != 0) {
		s->refs++;
	} else if (mprotect(page, trap_pgsz, PROT_READ) != 0) {
		rc = errno;
	} else {
		/* The page first, then the state: a handler seeing ARMED sees the page. */
		__atomic_store_n(&s->state, TRAP_GONE, __ATOMIC_RELEASE);
		__atomic_store_n(&s->page, (uintptr_t)page, __ATOMIC_RELEASE);
		s->refs = 1;
		s->age = 0;
		s->fn = fn;
		s->arg = arg;
		s->side_fn = side_fn;
		s->side_arg = side_arg;
		s->side_off = side_off;
		__atomic_store_n(&s->run, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&s->state, TRAP_ARMED, __ATOMIC_RELEASE);
		__atomic_fetch_add(&trap_narmed, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&trap_lock);
	return rc;
}

/* Makes s's page writable and marks it gone (its page kept: see the file's comment). Lock held. */
static void trap_unarm(struct trap_slot *s)
{
	uint32_t st = trap_state(s);

	if (st == TRAP_STREAM)
		__atomic_fetch_sub(&trap_nstream, 1, __ATOMIC_RELEASE);
	if (st == TRAP_OPEN || st == TRAP_STREAM)
		__atomic_fetch_sub(&trap_nopen, 1, __ATOMIC_RELEASE);
	__atomic_fetch_sub(&trap_narmed, 1, __ATOMIC_RELEASE);
	(void)mprotect((void *)__atomic_load_n(&s->page, __ATOMIC_RELAXED), trap_pgsz, PROT_READ | PROT_WRITE);
	s->refs = 0;
	__atomic_store_n(&s->state, TRAP_GONE, __ATOMIC_RELEASE);
}

static void trap_drop(void *page, bool all)
{
	struct trap_slot *s;

	if (page == NULL || !hw_trap_enabled())
		return;
	pthread_mutex_lock(&trap_lock);
	s = trap_find((uintptr_t)page);
	if (s != NULL && s->refs != 0 && (all || --s->refs == 0))
		trap_unarm(s);
	pthread_mutex_unlock(&trap_lock);
}

void hw_trap_disarm(void *page)
{
	trap_drop(page, false);
}

void hw_trap_forget(void *page)
{
	trap_drop(page, true);
}

bool hw_trap_armed(const void *page)
{
	struct trap_slot *s;
	uint32_t st;

	if (!hw_trap_enabled())
		return false;
	s = trap_find((uintptr_t)page);
	st = s != NULL ? trap_state(s) : TRAP_FREE;
	return st == TRAP_ARMED || st == TRAP_OPEN || st == TRAP_STREAM;
}

bool hw_trap_streaming(const void *addr)
{
	struct trap_slot *s;

	if (!hw_trap_enabled())
		return false;
	s = trap_find((uintptr_t)addr & ~(trap_pgsz - 1));
	return s != NULL && trap_state(s) == TRAP_STREAM;
}

bool hw_trap_streams_close(uint32_t passes)
{
	uint32_t need = __atomic_load_n(&trap_need, __ATOMIC_RELAXED);
	bool closed = false;

	if (__atomic_load_n(&trap_nstream, __ATOMIC_ACQUIRE) == 0 || __atomic_load_n(&trap_hold, __ATOMIC_ACQUIRE))
		return false;
	pthread_mutex_lock(&trap_lock);
	for (int i = 0; i < TRAP_SLOTS; i++) {
		struct trap_slot *s = &slots[i];

		if (trap_state(s) != TRAP_STREAM ||
		    mprotect((void *)__atomic_load_n(&s->page, __ATOMIC_RELAXED), trap_pgsz, PROT_READ) != 0)
			continue;
		__atomic_fetch_add(&st_closed, 1, __ATOMIC_RELAXED); /* counted before it shows: a reader of the state sees it */
		__atomic_store_n(&s->state, TRAP_ARMED, __ATOMIC_RELEASE);
		__atomic_fetch_sub(&trap_nstream, 1, __ATOMIC_RELEASE);
		__atomic_fetch_sub(&trap_nopen, 1, __ATOMIC_RELEASE);
		closed = true;
	}
	if (closed)
		__atomic_store_n(&trap_need,
				 passes >= TRAP_STREAM_PAID		     ? TRAP_STREAM_RUN
				 : need >= TRAP_STREAM_NEED_MAX / 2 ? TRAP_STREAM_NEED_MAX
								     : need * 2,
				 __ATOMIC_RELAXED);
	pthread_mutex_unlock(&trap_lock);
	return closed;
}

void hw_trap_rearm(void)
{
	if (__atomic_load_n(&trap_nopen, __ATOMIC_ACQUIRE) == 0)
		return;
	pthread_mutex_lock(&trap_lock);
	for (int i = 0; i < TRAP_SLOTS; i++) {
		struct trap_slot *s = &slots[i];

		/* Opened at least one whole pass ago: the store it was opened for has run. */
		if (trap_state(s) != TRAP_OPEN || s->age++ < 2)
			continue;
		if (mprotect((void *)__atomic_load_n(&s->page, __ATOMIC_RELAXED), trap_pgsz, PROT_READ) != 0)
			continue;
		s->age = 0;
		__atomic_store_n(&s->state, TRAP_ARMED, __ATOMIC_RELEASE);
		__atomic_fetch_sub(&trap_nopen, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&trap_lock);
}

bool hw_trap_serving(void)
{
	return __atomic_load_n(&trap_narmed, __ATOMIC_ACQUIRE) != 0 && __atomic_load_n(&trap_nopen, __ATOMIC_ACQUIRE) == 0;
}

bool hw_trap_streams_open(void)
{
	return __atomic_load_n(&trap_nstream, __ATOMIC_ACQUIRE) != 0;
}

void hw_trap_streams_hold(bool hold)
{
	__atomic_store_n(&trap_hold, hold, __ATOMIC_RELEASE);
}

void hw_trap_stream_gap(uint64_t ns)
{
	__atomic_store_n(&trap_gap_ns, ns, __ATOMIC_RELAXED);
}

void hw_trap_stats(struct hw_trap_stats *out)
{
	out->served = __atomic_load_n(&st_served, __ATOMIC_RELAXED);
	out->stepped = __atomic_load_n(&st_stepped, __ATOMIC_RELAXED);
	out->opened = __atomic_load_n(&st_opened, __ATOMIC_RELAXED);
	out->streams = __atomic_load_n(&st_streams, __ATOMIC_RELAXED);
	out->closed = __atomic_load_n(&st_closed, __ATOMIC_RELAXED);
}
