/*
 * hw_epoch — executions announced in a device-wide table, and the wait a
 * destroy makes for them (hw_epoch.h).
 */
#include "hw_epoch.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base_log.h"
#include "hw_ids.h"
#include "hw_shm.h"

#define EP_MAGIC 0x45504f43u /* "EPOC" */
#define EP_VERSION 1u
#define EP_SLOTS 4096u	    /* executing threads of all processes at once */
#define EP_LOCAL_SLOTS 256u /* when the table cannot be had */
#define EP_SPINS 256u	    /* looks at a slot before its owner is asked whether it lives */
#define EP_WARN_NS 1000000000ull

struct ep_slot {
	_Atomic uint64_t word;	/* 0, or odd while its thread executes */
	_Atomic uint64_t owner; /* 0 when free; else the process's word (hw_ids_self_word) */
	uint64_t pad[6];
};
_Static_assert(sizeof(struct ep_slot) == 64, "one slot per cache line");

struct ep_hdr {
	_Atomic uint64_t ident;	 /* magic << 32 | version */
	_Atomic uint32_t hiwat;	 /* slots ever claimed: a writer looks at these */
	uint32_t nslots;
	uint64_t pad[6];
};

struct ep_table {
	struct ep_hdr *hdr;
	struct ep_slot *slot;
	uint32_t nslots;
};

__thread struct hw_epoch_tls hw_epoch_me __attribute__((tls_model("initial-exec")));

static struct ep_table shared_tbl, local_tbl;
static struct ep_hdr local_hdr;
static struct ep_slot local_slots[EP_LOCAL_SLOTS];
static _Atomic uint64_t ep_nowhere; /* a thread no table has room for: unfenced, said once */
static pthread_once_t ep_once = PTHREAD_ONCE_INIT;
static pthread_key_t ep_key;
static bool ep_membarrier;
static _Atomic uint64_t ep_barrier;

static int ep_mb(int cmd)
{
	return (int)syscall(__NR_membarrier, cmd, 0, 0);
}

static size_t ep_size(void)
{
	return sizeof(struct ep_hdr) + (size_t)EP_SLOTS * sizeof(struct ep_slot);
}

static bool ep_hdr_ok(struct ep_hdr *h, const char *name)
{
	uint64_t want = (uint64_t)EP_MAGIC << 32 | EP_VERSION, zero = 0;

	if (atomic_load(&h->ident) == 0)
		atomic_compare_exchange_strong(&h->ident, &zero, want);
	if (atomic_load(&h->ident) != want) {
		BASE_ERR("%s is not a softdpu epoch table of version %u", name, EP_VERSION);
		return false;
	}
	return true;
}

static void ep_open_shared(void)
{
	void *p = hw_shm_table("epoch", EP_VERSION, ep_size());

	if (p == NULL)
		return;
	if (!ep_hdr_ok(p, "the epoch table")) {
		munmap(p, ep_size());
		return;
	}
	shared_tbl.hdr = p;
	shared_tbl.slot = (struct ep_slot *)((char *)p + sizeof(struct ep_hdr));
	shared_tbl.nslots = EP_SLOTS;
}

static void ep_release(void *arg)
{
	struct ep_slot *s = arg;

	atomic_store_explicit(&s->word, 0, memory_order_release);
	atomic_store_explicit(&s->owner, 0, memory_order_release);
}

/* A forked child has its parent's slot pointer in the forking thread: not its own. */
static void ep_fork_child(void)
{
	hw_epoch_me.word = NULL;
	hw_epoch_me.gen = 0;
	hw_epoch_me.depth = 0;
}

static void ep_init(void)
{
	local_tbl.hdr = &local_hdr;
	local_tbl.slot = local_slots;
	local_tbl.nslots = EP_LOCAL_SLOTS;
	ep_open_shared();
	pthread_key_create(&ep_key, ep_release);
	pthread_atfork(NULL, NULL, ep_fork_child);
	ep_membarrier = ep_mb(MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED) == 0;
	if (!ep_membarrier)
		BASE_DBG("membarrier unavailable (%s): executions fence on entry", strerror(errno));
}

static void ep_raise_hiwat(struct ep_table *t, uint32_t i)
{
	uint32_t hw = atomic_load(&t->hdr->hiwat);

	while (hw < i + 1 && !atomic_compare_exchange_weak(&t->hdr->hiwat, &hw, i + 1))
		;
}

/* Takes slot i for this thread if its owner is still what was seen. */
static struct ep_slot *ep_take(struct ep_table *t, uint32_t i, uint64_t seen, uint64_t me)
{
	struct ep_slot *s = &t->slot[i];

	if (!atomic_compare_exchange_strong(&s->owner, &seen, me))
		return NULL;
	atomic_store(&s->word, 0);
	ep_raise_hiwat(t, i);
	return s;
}

/* A free slot, else one of a dead process, taken for this thread; NULL when the table is full. */
static struct ep_slot *ep_claim(struct ep_table *t, uint64_t me)
{
	uint64_t last = 0;
	bool last_dead = false;

	for (uint32_t i = 0; i < t->nslots; i++)
		if (atomic_load_explicit(&t->slot[i].owner, memory_order_relaxed) == 0 && ep_take(t, i, 0, me) != NULL)
			return &t->slot[i];
	for (uint32_t i = 0; i < t->nslots; i++) {
		uint64_t w = atomic_load_explicit(&t->slot[i].owner, memory_order_relaxed);

		if (w == 0 || w == me)
			continue;
		if (w != last) { /* a process usually has a run of slots: /proc is asked once per run */
			last = w;
			last_dead = hw_ids_word_dead(w);
		}
		if (last_dead && ep_take(t, i, w, me) != NULL)
			return &t->slot[i];
	}
	return NULL;
}

void hw_epoch_attach(struct hw_epoch_tls *me)
{
	uint64_t self = hw_ids_self_word();
	struct ep_slot *s = NULL;

	pthread_once(&ep_once, ep_init);
	/* The process's word marks its slots: a dead process's are taken back by others. */
	if (shared_tbl.hdr != NULL)
		s = ep_claim(&shared_tbl, self);
	if (s == NULL)
		s = ep_claim(&local_tbl, self);
	me->gen = 1; /* odd from here on: entries add 2 */
	me->strong = !ep_membarrier;
	if (s == NULL) {
		BASE_ERR("no epoch slot for this thread: destroys may not wait for its work");
		me->word = &ep_nowhere;
		return;
	}
	me->word = &s->word;
	pthread_setspecific(ep_key, s);
}

static uint64_t ep_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A slot left busy by a process that died in an execution: freed, so later waits pass it at once. */
static bool ep_reap(struct ep_slot *s, uint64_t w)
{
	uint64_t owner = atomic_load_explicit(&s->owner, memory_order_acquire);

	if (owner != 0 && !hw_ids_word_dead(owner))
		return false;
	atomic_compare_exchange_strong(&s->word, &w, 0);
	if (owner != 0)
		atomic_compare_exchange_strong(&s->owner, &owner, 0);
	return true;
}

/*
 * Waits while the slot still shows the execution seen (w). Its owner is
 * asked after a short spin whether it lives (a dead one's slot is freed);
 * then the core is yielded between looks, and a wait of over a second is
 * logged every second (it goes on: the fence is what the caller relies on).
 */
static void ep_wait_slot(struct ep_slot *s, uint64_t w)
{
	uint64_t start = 0, warned = 0;

	for (uint32_t n = 1; atomic_load_explicit(&s->word, memory_order_acquire) == w; n++) {
		uint64_t now;

		if (n < EP_SPINS)
			continue;
		if ((n == EP_SPINS || n % (EP_SPINS * 64) == 0) && ep_reap(s, w))
			return;
		sched_yield();
		now = ep_now();
		if (start == 0)
			start = now;
		if (now - start >= (warned + 1) * EP_WARN_NS) {
			warned++;
			BASE_WARN("a destroy has waited %llu s for work in progress in process %u",
				  (unsigned long long)warned, hw_ids_word_pid(atomic_load(&s->owner)));
		}
	}
}

static void ep_sync_table(struct ep_table *t)
{
	uint32_t n = atomic_load_explicit(&t->hdr->hiwat, memory_order_acquire);
	_Atomic uint64_t *mine = hw_epoch_me.depth != 0 ? hw_epoch_me.word : NULL;

	for (uint32_t i = 0; i < n && i < t->nslots; i++) {
		struct ep_slot *s = &t->slot[i];
		uint64_t w = atomic_load_explicit(&s->word, memory_order_acquire);

		if (w != 0 && &s->word != mine)
			ep_wait_slot(s, w);
	}
}

void hw_epoch_sync(void)
{
	pthread_once(&ep_once, ep_init);
	/* A full barrier (a read-modify-write: ThreadSanitizer takes no fences): what we unpublished before our loads. */
	atomic_fetch_add_explicit(&ep_barrier, 0, memory_order_seq_cst);
	/* Every running reader executes a full barrier: its entry store is seen, or it sees what we unpublished. */
	if (ep_membarrier)
		(void)ep_mb(MEMBARRIER_CMD_GLOBAL_EXPEDITED);
	if (shared_tbl.hdr != NULL)
		ep_sync_table(&shared_tbl);
	ep_sync_table(&local_tbl);
}
