/*
 * hw_cq — completion queue: the producer side (CQE writes, overrun) and the
 * arming state machine.
 *
 * Arming and producing race without a lock: the arm state is one atomic
 * word, and the producer publishes its index before it reads that word while
 * the consumer publishes its arm before it reads the index (both sequentially
 * consistent). So at least one side sees the other; whichever sees a reason
 * to fire tries to move the word from "armed" to "fired", and only the side
 * whose compare-and-swap wins rings the bell: one event per arm.
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hw_cq.h"
#include "hw_epoch.h"
#include "hw_ids.h"
#include "hw_qshare.h"

/*
 * The arm state word: the armed request in the mlx5 arm-word bits (sn 29..28,
 * command 24, ci 23..0) plus ARMED, and the sequence number of the last arm
 * that fired (so a stale re-arm with it is ignored).
 */
#define ARM_ARMED (1u << 31)
#define ARM_FIRED (1u << 27)
#define ARM_FIRED_SN_SHIFT 25
#define ARM_FIRED_MASK (ARM_FIRED | HW_CQ_ARM_SN_MASK << ARM_FIRED_SN_SHIFT)
#define ARM_WORD_MASK (HW_CQ_ARM_SN_MASK << HW_CQ_ARM_SN_SHIFT | HW_CQ_ARM_CMD_SOLICITED | HW_CQ_CI_MASK)

#define CQ_RING_PAGE 4096
#define CQ_MAGIC 0x43514b53u /* "SKQC" */
#define CQ_DBREC_BYTES 64     /* the record's two words, alone in their line */
#define CQ_LOCK_SPINS 4096    /* spins between looks at whether the holder still lives */
#define CQ_LOCK_HELD_MAX_NS 1000000000ull /* a hold longer than this is no producer's (cq_holder_stuck) */

#if defined(__x86_64__) || defined(__i386__)
#define cq_cpu_relax() __builtin_ia32_pause()
#else
#define cq_cpu_relax() atomic_signal_fence(memory_order_seq_cst)
#endif

/*
 * What the device keeps about a CQ. It lives next to the ring (in the CQ's
 * memory block, shareable) so a queue of another process can complete into
 * this CQ: every producer, in any process, works on this one state.
 */
struct hw_cq_state {
	uint32_t magic;
	uint32_t log_size;
	uint32_t cqn;
	uint32_t flags;		  /* CQ_F_*: set at create, before any producer */
	_Atomic uint32_t lock;	  /* producers: 0, or the pid of the one writing a CQE */
	_Atomic uint32_t moved;	  /* resized: this block is retired, the CQ's record names its new one (lock held) */
	_Atomic uint32_t pi;	  /* index of the next CQE */
	_Atomic uint32_t sol_end; /* index after the last solicited or error CQE */
	_Atomic uint32_t arm;	  /* written by producers and the consumer */
	_Atomic uint32_t claim_pi;   /* pi when the claim below was made */
	_Atomic uint64_t claim;	     /* a receive the lock holder takes and owes a CQE for (hw_cq_claim_set) */
	_Atomic uint32_t claim_srqn;
	uint32_t cqe_log;	  /* log2 of a CQE's bytes: 6 or 7; set at create, read by every view */
	uint64_t gen;		     /* this CQ among all the number named: its creator's pid, start time and count; kept by a resize */
	struct hw_bell event;
	/* Read by the consumer at every poll and post: a line of its own, away from the producers' writes. */
	_Atomic uint32_t overrun __attribute__((aligned(64)));
} __attribute__((aligned(64)));

#define CQ_F_TIMESTAMP 1u

/* A block a resize retired: kept mapped until the CQ or view goes (a thread may still wait on its lock). */
struct cq_retired {
	struct hw_qblock qb;
	struct cq_retired *next;
};

struct hw_cq {
	uint8_t *ring;	  /* CQE i's 64-byte part at (i << cqe_log) + cqe_off */
	uint32_t *dbrec;
	struct hw_cq_state *st;
	uint32_t log_size;
	uint32_t mask;
	uint32_t cqn;
	uint32_t cqe_log;
	uint32_t cqe_off; /* 0, or 64 for 128-byte CQEs: the 64-byte CQE is the entry's last */
	bool own_ring;
	bool own_dbrec;
	bool own_state;
	void *block;	  /* the CQ's memory block, when it has one */
	bool own_block;
	struct hw_qblock qb; /* a shared block (ours, published) or one mapped from another process */
	bool published;
	bool attached;	  /* another's CQ mapped here (hw_cq_attach): not ours to fence */
	void (*on_event)(void *arg);
	void *on_event_arg;
	/*
	 * The consumer index as this process's pushes last read it from the
	 * record (under the lock, or by the single producer): the consumer
	 * writes the record after every poll, so a push reads it only when this
	 * one says the ring may be full. Kept here, not in the shared state,
	 * so that no other process can make a push believe in room.
	 */
	_Atomic uint32_t ci_seen;
	struct cq_retired *retired;
};

/* The state the view is on now: it changes (lock of the old one held) when the CQ was resized. */
static inline struct hw_cq_state *cq_st(const struct hw_cq *cq)
{
	return __atomic_load_n(&cq->st, __ATOMIC_ACQUIRE);
}

/* log2 of a CQE size the device writes (0 reads 64), or 0 for another. */
static uint32_t cq_cqe_log(uint32_t cqe_size)
{
	if (cqe_size == 0 || cqe_size == 64)
		return 6;
	return cqe_size == 128 ? 7 : 0;
}

size_t hw_cq_mem_size_cqe(uint32_t log_size, uint32_t cqe_size)
{
	uint32_t cl = cq_cqe_log(cqe_size);

	if (log_size > HW_CQ_LOG_SIZE_MAX || cl == 0)
		return 0;
	return ((size_t)1 << (log_size + cl)) + CQ_DBREC_BYTES + sizeof(struct hw_cq_state);
}

size_t hw_cq_mem_size(uint32_t log_size)
{
	return hw_cq_mem_size_cqe(log_size, 64);
}

static size_t cq_ring_bytes(const struct hw_cq *cq)
{
	return (size_t)1 << (cq->log_size + cq->cqe_log);
}

/* The 64-byte CQE of ring index i (any index: masked here). */
static inline struct hw_cqe64 *cq_slot(const struct hw_cq *cq, uint32_t i)
{
	return (struct hw_cqe64 *)(void *)(cq->ring + ((size_t)(i & cq->mask) << cq->cqe_log) + cq->cqe_off);
}

static void cq_set_cqe_log(struct hw_cq *cq, uint32_t cqe_log)
{
	cq->cqe_log = cqe_log;
	cq->cqe_off = (1u << cqe_log) - (uint32_t)sizeof(struct hw_cqe64);
}

static _Atomic uint32_t *cq_dbr_word(const struct hw_cq *cq, unsigned int i)
{
	return (_Atomic uint32_t *)(void *)&cq->dbrec[i];
}

static bool cq_is_err(uint8_t opcode)
{
	return opcode == HW_CQE_REQ_ERR || opcode == HW_CQE_RESP_ERR;
}

static bool cq_opcode_valid(uint8_t opcode)
{
	switch (opcode) {
	case HW_CQE_REQ:
	case HW_CQE_RESP_WR_IMM:
	case HW_CQE_RESP_SEND:
	case HW_CQE_RESP_SEND_IMM:
	case HW_CQE_RESP_SEND_INV:
	case HW_CQE_REQ_ERR:
	case HW_CQE_RESP_ERR:
		return true;
	default:
		return false;
	}
}

static void cq_ring_init(struct hw_cq *cq)
{
	memset(cq->ring, 0, cq_ring_bytes(cq));
	for (uint32_t i = 0; i <= cq->mask; i++)
		cq_slot(cq, i)->op_own = HW_CQE_INVALID << HW_CQE_OPCODE_SHIFT | HW_CQE_OWNER_MASK;
}

/* Ring, record and state in one block: [ring][record][state]. */
static void cq_place(struct hw_cq *cq, void *mem)
{
	size_t ring_bytes = cq_ring_bytes(cq);

	cq->block = mem;
	cq->ring = mem;
	cq->dbrec = (uint32_t *)(void *)((uint8_t *)mem + ring_bytes);
	cq->st = (struct hw_cq_state *)(void *)((uint8_t *)mem + ring_bytes + CQ_DBREC_BYTES);
}

static _Atomic uint32_t cq_created;

static void cq_state_init(struct hw_cq *cq)
{
	memset(cq->st, 0, sizeof(*cq->st));
	cq->st->log_size = cq->log_size;
	cq->st->cqn = cq->cqn;
	cq->st->cqe_log = cq->cqe_log;
	cq->st->gen = hw_ids_self_word() ^ (uint64_t)atomic_fetch_add_explicit(&cq_created, 1, memory_order_relaxed)
							  << 40;
	atomic_store_explicit((_Atomic uint32_t *)&cq->st->magic, CQ_MAGIC, memory_order_release);
}

static enum hw_status cq_alloc_block(struct hw_cq *cq, const struct hw_cq_attr *attr)
{
	void *mem = attr->mem;

	if (mem == NULL && attr->shared) {
		if (hw_qblock_alloc(&cq->qb, hw_cq_mem_size_cqe(cq->log_size, 1u << cq->cqe_log), true) != HW_OK)
			return HW_ERR_NOMEM;
		mem = cq->qb.p;
	} else if (mem == NULL) {
		if (posix_memalign(&mem, CQ_RING_PAGE, hw_cq_mem_size_cqe(cq->log_size, 1u << cq->cqe_log)) != 0)
			return HW_ERR_NOMEM;
		cq->own_block = true;
	}
	cq_place(cq, mem);
	cq_ring_init(cq);
	cq->dbrec[HW_CQ_DBR_SET_CI] = 0;
	cq->dbrec[HW_CQ_DBR_ARM] = 0;
	cq_state_init(cq);
	if (cq->qb.p != NULL) {
		uint32_t geo[3] = { cq->log_size, cq->cqe_log };
		enum hw_status st = hw_qshare_publish(HW_ID_CQN, cq->cqn, HW_QREC_CQ, geo, &cq->qb);

		if (st != HW_OK)
			return st; /* a CQN this process does not hold */
		cq->published = cq->qb.ops != NULL;
	}
	return HW_OK;
}

/*
 * Shared, in the ring and record the creator gave: the block holds the
 * state alone and the given memory is published with it (hw_qblock_adopt).
 */
static enum hw_status cq_alloc_given_shared(struct hw_cq *cq, const struct hw_cq_attr *attr)
{
	size_t ring_bytes = cq_ring_bytes(cq);
	uint32_t geo[3] = { cq->log_size, cq->cqe_log };
	enum hw_status st;

	if (hw_qblock_alloc(&cq->qb, sizeof(struct hw_cq_state), true) != HW_OK)
		return HW_ERR_NOMEM;
	cq->st = cq->qb.p;
	cq->ring = (uint8_t *)attr->ring;
	cq->dbrec = attr->dbrec;
	cq_ring_init(cq);
	cq->dbrec[HW_CQ_DBR_SET_CI] = 0;
	cq->dbrec[HW_CQ_DBR_ARM] = 0;
	cq_state_init(cq);
	st = hw_qblock_adopt(&cq->qb, cq->ring, ring_bytes, cq->dbrec, HW_CQ_DBREC_BYTES);
	if (st != HW_OK)
		return st;
	st = hw_qshare_publish(HW_ID_CQN, cq->cqn, HW_QREC_CQ, geo, &cq->qb);
	cq->published = st == HW_OK && cq->qb.ops != NULL;
	return st;
}

static enum hw_status cq_alloc_mem(struct hw_cq *cq, const struct hw_cq_attr *attr)
{
	void *p;

	if (attr->mem != NULL || (attr->ring == NULL && attr->dbrec == NULL))
		return cq_alloc_block(cq, attr);
	if (attr->shared)
		return cq_alloc_given_shared(cq, attr);
	if (posix_memalign(&p, 64, sizeof(*cq->st)) != 0)
		return HW_ERR_NOMEM;
	cq->st = p;
	cq->own_state = true;
	cq_state_init(cq);
	cq->ring = (uint8_t *)attr->ring;
	if (cq->ring == NULL) {
		size_t bytes = cq_ring_bytes(cq);

		if (posix_memalign(&p, CQ_RING_PAGE, bytes) != 0)
			return HW_ERR_NOMEM;
		cq->ring = p;
		cq->own_ring = true;
		cq_ring_init(cq);
	}
	cq->dbrec = attr->dbrec;
	if (cq->dbrec == NULL) {
		if (posix_memalign(&p, HW_CQ_DBREC_ALIGN, 2 * sizeof(uint32_t)) != 0)
			return HW_ERR_NOMEM;
		cq->dbrec = p;
		cq->own_dbrec = true;
		cq->dbrec[HW_CQ_DBR_SET_CI] = 0;
		cq->dbrec[HW_CQ_DBR_ARM] = 0;
	}
	return HW_OK;
}

enum hw_status hw_cq_create(const struct hw_cq_attr *attr, struct hw_cq **out)
{
	struct hw_cq *cq;
	enum hw_status st;

	if (attr == NULL || out == NULL || attr->log_size > HW_CQ_LOG_SIZE_MAX || cq_cqe_log(attr->cqe_size) == 0)
		return HW_ERR_INVAL;
	if ((uintptr_t)attr->ring % HW_CQ_RING_ALIGN != 0 || (uintptr_t)attr->dbrec % HW_CQ_DBREC_ALIGN != 0 ||
	    (uintptr_t)attr->mem % CQ_RING_PAGE != 0 || (attr->mem != NULL && (attr->ring != NULL || attr->dbrec != NULL)))
		return HW_ERR_INVAL;
	if (attr->shared && (attr->ring == NULL) != (attr->dbrec == NULL))
		return HW_ERR_INVAL; /* shared in given memory: both */
	if (attr->on_event != NULL && (attr->shared || attr->mem != NULL))
		return HW_ERR_INVAL; /* a function of this process means nothing to another's producers */
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return HW_ERR_NOMEM;
	cq->log_size = attr->log_size;
	cq->mask = (1u << attr->log_size) - 1;
	cq->cqn = attr->cqn;
	cq_set_cqe_log(cq, cq_cqe_log(attr->cqe_size));
	cq->on_event = attr->on_event;
	cq->on_event_arg = attr->on_event_arg;
	st = cq_alloc_mem(cq, attr);
	if (st != HW_OK)
		goto err_mem;
	if (attr->timestamp)
		cq->st->flags |= CQ_F_TIMESTAMP;
	*out = cq;
	return HW_OK;

err_mem:
	hw_cq_destroy(cq);
	return st;
}

void hw_cq_destroy(struct hw_cq *cq)
{
	if (cq == NULL)
		return;
	/* Gone for other processes first, then no producer of any thread or process is still in it. */
	if (cq->published)
		hw_qshare_withdraw(HW_ID_CQN, cq->cqn, &cq->qb);
	if (!cq->attached)
		hw_epoch_sync();
	if (cq->own_ring)
		free(cq->ring);
	if (cq->own_dbrec)
		free(cq->dbrec);
	if (cq->own_state)
		free(cq->st);
	if (cq->own_block)
		free(cq->block);
	hw_qblock_free(&cq->qb);
	while (cq->retired != NULL) {
		struct cq_retired *r = cq->retired;

		cq->retired = r->next;
		hw_qblock_free(&r->qb);
		free(r);
	}
	free(cq);
}

static struct hw_cq *cq_view_new(const struct hw_cq_state *st, uint32_t log_size, uint32_t cqe_log)
{
	struct hw_cq *cq = calloc(1, sizeof(*cq));

	if (cq == NULL)
		return NULL;
	cq->log_size = log_size;
	cq->mask = (1u << log_size) - 1;
	cq_set_cqe_log(cq, cqe_log);
	cq->cqn = st->cqn;
	cq->attached = true;
	return cq;
}

enum hw_status hw_cq_attach(void *mem, size_t len, struct hw_cq **out)
{
	const struct hw_cq_state *st;
	struct hw_cq *cq;
	uint32_t log_size, cqe_log;

	if (mem == NULL || out == NULL || (uintptr_t)mem % CQ_RING_PAGE != 0 || len < hw_cq_mem_size(0))
		return HW_ERR_INVAL;
	/* The state sits at the end of the block: find it from the length, then check it agrees. */
	st = (const struct hw_cq_state *)(const void *)((const uint8_t *)mem + len - sizeof(*st));
	if ((uintptr_t)st % _Alignof(struct hw_cq_state) != 0)
		return HW_ERR_LAYOUT;
	if (atomic_load_explicit((const _Atomic uint32_t *)&st->magic, memory_order_acquire) != CQ_MAGIC)
		return HW_ERR_LAYOUT;
	/* Read once: the block is memory other processes may write. */
	log_size = st->log_size;
	cqe_log = st->cqe_log;
	if (log_size > HW_CQ_LOG_SIZE_MAX || (cqe_log != 6 && cqe_log != 7) ||
	    hw_cq_mem_size_cqe(log_size, 1u << cqe_log) != len)
		return HW_ERR_LAYOUT;
	cq = cq_view_new(st, log_size, cqe_log);
	if (cq == NULL)
		return HW_ERR_NOMEM;
	cq_place(cq, mem);
	*out = cq;
	return HW_OK;
}

/* A view of another's CQ whose ring and record are its creator's memory, mapped here beside its state. */
static enum hw_status cq_attach_split(const struct hw_qblock *b, const struct hw_qrec *r, struct hw_cq **out)
{
	struct hw_cq_state *st = b->p;
	uint32_t log_size = r->geo[0], cqe_log = r->geo[1];
	struct hw_cq *cq;

	if (log_size > HW_CQ_LOG_SIZE_MAX || (cqe_log != 6 && cqe_log != 7) || r->len != sizeof(*st) ||
	    b->xring == NULL || r->xring_len != (uint64_t)1 << (log_size + cqe_log) || r->xdbrec_len < HW_CQ_DBREC_BYTES ||
	    (uintptr_t)b->xring % HW_CQ_RING_ALIGN != 0 || (uintptr_t)b->xdbrec % HW_CQ_DBREC_ALIGN != 0)
		return HW_ERR_LAYOUT;
	if (atomic_load_explicit((const _Atomic uint32_t *)&st->magic, memory_order_acquire) != CQ_MAGIC ||
	    st->log_size != log_size || st->cqe_log != cqe_log)
		return HW_ERR_LAYOUT;
	cq = cq_view_new(st, log_size, cqe_log);
	if (cq == NULL)
		return HW_ERR_NOMEM;
	cq->st = st;
	cq->ring = b->xring;
	cq->dbrec = b->xdbrec;
	*out = cq;
	return HW_OK;
}

enum hw_status hw_cq_attach_num(uint32_t cqn, struct hw_cq **out)
{
	const _Atomic uint32_t *seqp;
	struct hw_qblock b;
	struct hw_qrec r;
	enum hw_status st;
	uint32_t seq;

	if (out == NULL)
		return HW_ERR_INVAL;
	st = hw_qshare_map(HW_ID_CQN, cqn, HW_QREC_CQ, &b, &r, &seqp, &seq);
	if (st != HW_OK)
		return st;
	if (b.xhandle != NULL)
		st = cq_attach_split(&b, &r, out);
	else
		st = r.geo[0] <= HW_CQ_LOG_SIZE_MAX && r.geo[1] <= 7 && hw_cq_mem_size_cqe(r.geo[0], 1u << r.geo[1]) == r.len
			     ? hw_cq_attach(b.p, b.len, out)
										       : HW_ERR_LAYOUT;
	if (st != HW_OK) {
		hw_qblock_free(&b);
		return st;
	}
	(*out)->qb = b;
	return HW_OK;
}

void *hw_cq_mem(const struct hw_cq *cq)
{
	return cq->block;
}

struct hw_cqe64 *hw_cq_ring(const struct hw_cq *cq)
{
	return (struct hw_cqe64 *)(void *)cq->ring;
}

uint32_t hw_cq_cqe_size(const struct hw_cq *cq)
{
	return 1u << cq->cqe_log;
}

uint32_t *hw_cq_dbrec(const struct hw_cq *cq)
{
	return cq->dbrec;
}

uint32_t hw_cq_log_size(const struct hw_cq *cq)
{
	return cq->log_size;
}

uint32_t hw_cq_backlog(const struct hw_cq *cq)
{
	uint32_t pi = atomic_load_explicit(&cq->st->pi, memory_order_acquire);
	uint32_t ci = be32toh(atomic_load_explicit((const _Atomic uint32_t *)&cq->dbrec[HW_CQ_DBR_SET_CI],
						   memory_order_acquire));

	return (pi - ci) & HW_CQ_CI_MASK;
}

uint32_t hw_cq_cqn(const struct hw_cq *cq)
{
	return cq->cqn;
}

bool hw_cq_overrun(const struct hw_cq *cq)
{
	return atomic_load_explicit(&cq->st->overrun, memory_order_relaxed) != 0;
}

const _Atomic uint32_t *hw_cq_overrun_flag(const struct hw_cq *cq)
{
	return &cq->st->overrun;
}

struct hw_bell *hw_cq_event_bell(struct hw_cq *cq)
{
	return &cq->st->event;
}

/* Moves the state from this armed word to "fired"; the winner rings the bell. */
static void cq_try_fire(struct hw_cq *cq, uint32_t armed)
{
	uint32_t sn = armed >> HW_CQ_ARM_SN_SHIFT & HW_CQ_ARM_SN_MASK;
	uint32_t fired = ARM_FIRED | sn << ARM_FIRED_SN_SHIFT;

	if (atomic_compare_exchange_strong_explicit(&cq->st->arm, &armed, fired, memory_order_seq_cst,
						    memory_order_seq_cst)) {
		hw_bell_ring(&cq->st->event);
		if (cq->on_event != NULL)
			cq->on_event(cq->on_event_arg);
	}
}

/* Does a CQE that satisfies this arm already wait past its consumer index? */
static bool cq_arm_pending(const struct hw_cq *cq, uint32_t arm, uint32_t pi, uint32_t sol_end)
{
	uint32_t ci = arm & HW_CQ_CI_MASK;
	uint32_t avail = (pi - ci) & HW_CQ_CI_MASK;
	uint32_t sol;

	if (avail == 0 || avail > cq->mask + 1)
		return false; /* nothing waiting, or an index the producer never reached */
	if (!(arm & HW_CQ_ARM_CMD_SOLICITED))
		return true;
	sol = (sol_end - ci) & HW_CQ_CI_MASK;
	return sol != 0 && sol <= avail;
}

enum hw_status hw_cq_arm(struct hw_cq *cq, uint32_t arm_word)
{
	return hw_cq_arm_report(cq, arm_word, NULL);
}

enum hw_status hw_cq_arm_report(struct hw_cq *cq, uint32_t arm_word, bool *fired)
{
	uint32_t sn = arm_word >> HW_CQ_ARM_SN_SHIFT & HW_CQ_ARM_SN_MASK;
	uint32_t old, new, pi, sol_end;

	if (fired != NULL)
		*fired = false;
	if (arm_word & ~ARM_WORD_MASK)
		return HW_ERR_INVAL;
	old = atomic_load_explicit(&cq->st->arm, memory_order_seq_cst);
	do {
		if ((old & ARM_FIRED) && (old >> ARM_FIRED_SN_SHIFT & HW_CQ_ARM_SN_MASK) == sn) {
			if (fired != NULL)
				*fired = true;
			return HW_OK; /* this arm already fired: the consumer has not taken the event yet */
		}
		new = (old & ARM_FIRED_MASK) | ARM_ARMED | arm_word;
		/* Armed for the next completion, not fired yet: a solicited-only request does not narrow it (IB). */
		if ((old & ARM_ARMED) && !(old & HW_CQ_ARM_CMD_SOLICITED))
			new &= ~(uint32_t)HW_CQ_ARM_CMD_SOLICITED;
	} while (!atomic_compare_exchange_weak_explicit(&cq->st->arm, &old, new, memory_order_seq_cst,
							memory_order_seq_cst));
	pi = atomic_load_explicit(&cq->st->pi, memory_order_seq_cst);
	sol_end = atomic_load_explicit(&cq->st->sol_end, memory_order_relaxed);
	if (cq_arm_pending(cq, new, pi, sol_end))
		cq_try_fire(cq, new);
	return HW_OK;
}

/* The device's free-running clock: CLOCK_MONOTONIC in ns (hca_core_clock 1 GHz). */
static uint64_t cq_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}


/*
 * Producers of one CQ may be queues of several threads and processes. A
 * holder that died (its pid is gone) cannot release: the next producer takes
 * the lock over. A CQE it left half written has no owner bit yet and its
 * index was never published, so the new holder simply writes that slot again.
 */
static bool cq_holder_dead(uint32_t holder)
{
	/* A word no process writes (the block is memory others can scribble on): kill() would name a group, or all. */
	if ((pid_t)holder <= 0)
		return holder != 0;
	/* A zombie holds nothing any more: its parent may reap it only much later. */
	return (kill((pid_t)holder, 0) != 0 && errno == ESRCH) || hw_ids_pid_dead(holder);
}

/*
 * The same holder at every look for longer than any producer holds the lock
 * (one CQE, no system call but the bell's): a word left there by no live
 * producer, such as a live process's pid written over the block by another
 * process. *held and *since are the caller's record of the looks.
 */
static bool cq_holder_stuck(uint32_t holder, uint32_t *held, uint64_t *since)
{
	uint64_t now = cq_clock_ns();

	if (holder != *held) {
		*held = holder;
		*since = now;
		return false;
	}
	return now - *since > CQ_LOCK_HELD_MAX_NS;
}

/*
 * This process's pid, the lock's owner word: a system call per CQE would cost
 * more than the CQE, so it is read once and again in a forked child.
 */
static _Atomic uint32_t cq_pid;

static void cq_pid_forget(void)
{
	atomic_store_explicit(&cq_pid, 0, memory_order_relaxed);
}

static void cq_pid_once(void)
{
	pthread_atfork(NULL, NULL, cq_pid_forget);
}

static __attribute__((noinline)) uint32_t cq_self_first(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	uint32_t me;

	pthread_once(&once, cq_pid_once);
	me = (uint32_t)getpid();
	atomic_store_explicit(&cq_pid, me, memory_order_relaxed);
	return me;
}

static inline uint32_t cq_self(void)
{
	uint32_t me = atomic_load_explicit(&cq_pid, memory_order_relaxed);

	return __builtin_expect(me != 0, 1) ? me : cq_self_first();
}

/*
 * A producer that died between storing a CQE's owner byte and publishing its
 * index left a whole CQE the consumer may already have taken: the index
 * moves past it, or every later push would see the consumer ahead of the
 * producer. The owner bit of the current pass tells it from a CQE of the
 * previous pass in that slot.
 */
static void cq_finish_dead_push(struct hw_cq *cq, struct hw_cq_state *st)
{
	uint32_t pi = atomic_load_explicit(&st->pi, memory_order_relaxed);
	uint8_t op_own = atomic_load_explicit((_Atomic uint8_t *)&cq_slot(cq, pi)->op_own,
					      memory_order_acquire);

	if ((op_own >> HW_CQE_OPCODE_SHIFT) != HW_CQE_INVALID &&
	    (op_own & HW_CQE_OWNER_MASK) == ((pi >> cq->log_size) & HW_CQE_OWNER_MASK))
		atomic_store_explicit(&st->pi, pi + 1, memory_order_seq_cst);
}

/* hw_cq_lock when the first try failed: spins, and takes the lock over from a dead or stuck holder. */
static __attribute__((noinline)) void cq_lock_wait(struct hw_cq *cq, struct hw_cq_state *st, uint32_t me)
{
	uint32_t cur = 0, held = 0;
	uint64_t since = 0;

	for (uint32_t spins = 0;; spins++) {
		if (atomic_compare_exchange_weak_explicit(&st->lock, &cur, me, memory_order_acquire,
							  memory_order_relaxed))
			return;
		if (cur == 0)
			held = 0; /* released meanwhile: a later holder's time starts afresh */
		if (cur != 0 && spins % CQ_LOCK_SPINS == CQ_LOCK_SPINS - 1 &&
		    (cq_holder_dead(cur) || cq_holder_stuck(cur, &held, &since)) &&
		    atomic_compare_exchange_strong_explicit(&st->lock, &cur, me, memory_order_acquire,
							    memory_order_relaxed)) {
			/* A retired block's ring is nobody's any more: only the current one is finished. */
			if (cq_st(cq) == st && atomic_load_explicit(&st->moved, memory_order_relaxed) == 0)
				cq_finish_dead_push(cq, st);
			return;
		}
		if (cur != 0)
			cq_cpu_relax();
		cur = 0;
	}
}

/*
 * Puts the view or CQ on block b of 2^log_size CQEs: the fields first, the
 * state pointer last (released), so a thread that finds the new state finds
 * the rest. The old block is retired into r. With the old block's lock held.
 */
static void cq_switch(struct hw_cq *cq, const struct hw_qblock *b, uint32_t log_size, struct cq_retired *r)
{
	size_t ring_bytes = (size_t)1 << (log_size + cq->cqe_log); /* a resize keeps the CQE size */

	r->qb = cq->qb;
	r->next = cq->retired;
	cq->retired = r;
	cq->qb = *b;
	cq->block = b->p;
	cq->ring = b->p;
	cq->dbrec = (uint32_t *)(void *)((uint8_t *)b->p + ring_bytes);
	cq->log_size = log_size;
	cq->mask = (1u << log_size) - 1;
	__atomic_store_n(&cq->st, (struct hw_cq_state *)(void *)((uint8_t *)b->p + ring_bytes + CQ_DBREC_BYTES),
			 __ATOMIC_RELEASE);
}

/*
 * A view mapped by number moves to the block the CQ's record names now.
 * False when there is none, or the number names another CQ (this one was
 * destroyed and its number taken again).
 */
static bool cq_remap(struct hw_cq *cq)
{
	uint64_t gen = cq->st->gen;
	const _Atomic uint32_t *seqp;
	const struct hw_cq_state *nst;
	struct cq_retired *r;
	struct hw_qblock b;
	struct hw_qrec rec;
	uint32_t seq, log_size;

	if (!cq->qb.mapped)
		return false; /* a block given by address (hw_cq_attach) has no record to follow */
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return false;
	if (hw_qshare_map(HW_ID_CQN, cq->cqn, HW_QREC_CQ, &b, &rec, &seqp, &seq) != HW_OK)
		goto err;
	log_size = rec.geo[0];
	if (log_size > HW_CQ_LOG_SIZE_MAX || rec.geo[1] != cq->cqe_log ||
	    hw_cq_mem_size_cqe(log_size, 1u << cq->cqe_log) != rec.len)
		goto err_map;
	nst = (const struct hw_cq_state *)(const void *)((const uint8_t *)b.p + rec.len - sizeof(*nst));
	if (atomic_load_explicit((const _Atomic uint32_t *)&nst->magic, memory_order_acquire) != CQ_MAGIC ||
	    nst->log_size != log_size || nst->cqe_log != cq->cqe_log || nst->gen != gen)
		goto err_map;
	cq_switch(cq, &b, log_size, r);
	return true;

err_map:
	hw_qblock_free(&b);
err:
	free(r);
	return false;
}

/*
 * hw_cq_lock found st retired (its lock held): the view follows the CQ to
 * its new block, unless another thread of this process moved it already,
 * and st's lock is released. False, st's lock still held, when the view
 * cannot follow.
 */
static __attribute__((noinline)) bool cq_follow(struct hw_cq *cq, struct hw_cq_state *st)
{
	if (cq_st(cq) == st && !cq_remap(cq))
		return false;
	atomic_store_explicit(&st->lock, 0, memory_order_release);
	return true;
}

void hw_cq_lock(struct hw_cq *cq)
{
	uint32_t me = cq_self();

	for (;;) {
		struct hw_cq_state *st = cq_st(cq);
		uint32_t cur = 0;

		/* A free lock, the usual case, costs one exchange; the rest is out of line. */
		if (__builtin_expect(!atomic_compare_exchange_strong_explicit(&st->lock, &cur, me, memory_order_acquire,
									      memory_order_relaxed), 0))
			cq_lock_wait(cq, st, me);
		/* Written under this lock by a resize: a holder of it sees it. */
		if (__builtin_expect(atomic_load_explicit(&st->moved, memory_order_relaxed) == 0, 1))
			return;
		if (!cq_follow(cq, st))
			return; /* no new block to be had (the CQ is gone): this view stays, its CQEs lost */
	}
}

void hw_cq_unlock(struct hw_cq *cq)
{
	atomic_store_explicit(&cq->st->lock, 0, memory_order_release);
}

enum hw_status hw_cq_push(struct hw_cq *cq, const struct hw_cqe_fields *f)
{
	enum hw_status st;

	if (!cq_opcode_valid(f->opcode))
		return HW_ERR_INVAL;
	hw_cq_lock(cq);
	st = hw_cq_push_locked(cq, f);
	hw_cq_unlock(cq);
	return st;
}


/* The device's state of the CQ moves with its CQEs: indices, arm, claim, overrun and the bell's count. */
static void cq_state_copy(struct hw_cq_state *to, struct hw_cq_state *from, uint32_t pi)
{
	to->flags = from->flags;
	to->gen = from->gen;
	atomic_store_explicit(&to->pi, pi, memory_order_relaxed);
	atomic_store_explicit(&to->sol_end, atomic_load_explicit(&from->sol_end, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&to->arm, atomic_load_explicit(&from->arm, memory_order_seq_cst), memory_order_relaxed);
	atomic_store_explicit(&to->claim_pi, atomic_load_explicit(&from->claim_pi, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&to->claim, atomic_load_explicit(&from->claim, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&to->claim_srqn, atomic_load_explicit(&from->claim_srqn, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&to->overrun, atomic_load_explicit(&from->overrun, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&to->event.seq, hw_bell_seq(&from->event), memory_order_relaxed);
}

enum hw_status hw_cq_resize(struct hw_cq *cq, uint32_t log_size, uint32_t ci, uint32_t limit)
{
	struct hw_cq n = { .log_size = log_size, .mask = (1u << log_size) - 1, .cqn = cq->cqn };
	uint32_t pi, count, geo[3] = { log_size, cq->cqe_log };
	size_t cqe_bytes = (size_t)1 << cq->cqe_log;
	struct hw_cq_state *old;
	struct hw_qblock nb;
	struct cq_retired *r;
	enum hw_status rc;

	/* Ring and record in the creator's memory (cq_alloc_given_shared): theirs to replace, not the device's. */
	if (!cq->published || cq->attached || cq->block == NULL || log_size > HW_CQ_LOG_SIZE_MAX)
		return HW_ERR_INVAL;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		return HW_ERR_NOMEM;
	cq_set_cqe_log(&n, cq->cqe_log);
	if (hw_qblock_alloc(&nb, hw_cq_mem_size_cqe(log_size, (uint32_t)cqe_bytes), true) != HW_OK) {
		free(r);
		return HW_ERR_NOMEM;
	}
	cq_place(&n, nb.p);
	cq_ring_init(&n);
	cq_state_init(&n);
	/* Every producer, of any process, waits here; a later holder finds the block retired and follows. */
	hw_cq_lock(cq);
	old = cq->st;
	pi = atomic_load_explicit(&old->pi, memory_order_relaxed);
	count = (pi - ci) & HW_CQ_CI_MASK;
	rc = HW_ERR_INVAL;
	if (count > limit || count > cq->mask + 1)
		goto err;
	/* The unpolled CQEs at the same indices, each with the owner bit of its pass in the new ring. */
	for (uint32_t k = 0; k < count; k++) {
		uint32_t i = ci + k;
		struct hw_cqe64 *d = cq_slot(&n, i);

		/* Whole entries: a 128-byte CQE moves with its first half. */
		memcpy((uint8_t *)d - n.cqe_off, (const uint8_t *)cq_slot(cq, i) - cq->cqe_off, cqe_bytes);
		d->op_own = (uint8_t)((d->op_own & ~HW_CQE_OWNER_MASK) | ((i >> log_size) & HW_CQE_OWNER_MASK));
	}
	n.dbrec[HW_CQ_DBR_SET_CI] = cq->dbrec[HW_CQ_DBR_SET_CI];
	n.dbrec[HW_CQ_DBR_ARM] = cq->dbrec[HW_CQ_DBR_ARM];
	cq_state_copy(n.st, old, pi);
	rc = hw_qshare_publish(HW_ID_CQN, cq->cqn, HW_QREC_CQ, geo, &nb);
	if (rc != HW_OK)
		goto err;
	atomic_store_explicit(&old->moved, 1, memory_order_relaxed);
	cq_switch(cq, &nb, log_size, r);
	atomic_store_explicit(&old->lock, 0, memory_order_release);
	return HW_OK;

err:
	hw_cq_unlock(cq);
	hw_qblock_free(&nb);
	free(r);
	return rc;
}

/* ---- writing a CQE (hw_cq_push_locked, hw_cq_push_sp) ---- */

static_assert(HW_CQ_STATE_ARMED == ARM_ARMED, "the inline producer reads the arm word");

typedef hw_cq_v2 cq_v2;

/* A receive's bytes scattered into its CQE. */
struct cq_scat {
	const uint8_t *data;
	uint32_t len;
};

/*
 * The bytes into the CQE's first 32 (64-byte CQEs: over the fields a
 * connected QP's receive does not use, as the card) or the 128-byte
 * entry's first 64, the rest of the area zeroed: its format bits.
 */
static uint8_t cq_scat_write(const struct hw_cq *cq, struct hw_cqe64 *slot, const struct cq_scat *sc)
{
	bool wide = cq->cqe_log == 7;
	uint8_t *at = wide ? (uint8_t *)slot - 64 : (uint8_t *)slot;
	uint32_t room = wide ? 64 : 32;

	memcpy(at, sc->data, sc->len);
	memset(at + sc->len, 0, room - sc->len);
	return wide ? HW_CQE_INLINE_SCATTER_64 : HW_CQE_INLINE_SCATTER_32;
}

/*
 * Writes f into the slot at pi: bytes 0..62 in wide stores (cq_fill's
 * layout, as little-endian words), the owner byte last, released: a
 * consumer trusts the rest once it sees its owner bit.
 */
static inline __attribute__((always_inline)) void cq_write(struct hw_cq *cq, uint32_t pi,
							   const struct hw_cqe_fields *f, bool err, uint64_t stamp,
							   const struct hw_cqe_tm *tm, const struct cq_scat *sc)
{
	struct hw_cqe64 *slot = cq_slot(cq, pi);
	cq_v2 *v = (cq_v2 *)(void *)slot;
	uint32_t top = htobe32((err || f->opcode == HW_CQE_REQ ? (uint32_t)f->wqe_opcode << 24 : 0) |
			       (f->qpn & 0xffffffu));
	uint16_t cnt = htobe16(f->wqe_counter);
	uint64_t w6 = 0;
	uint8_t sig = 0, fmt = 0;

	v[0] = (cq_v2){ 0, 0 };
	if (err) {
		v[1] = (cq_v2){ 0, 0 };
		v[2] = (cq_v2){ htobe32(f->srqn & 0xffffffu), 0 };
		w6 = (uint64_t)f->vendor_err_synd << 48 | (uint64_t)f->syndrome << 56;
	} else {
		v[1] = (cq_v2){ (uint64_t)htobe16(f->slid) << 48, htobe32(f->flags_rqpn) };
		v[2] = (cq_v2){ htobe32(f->srqn & 0xffffffu) | (uint64_t)htobe32(f->imm) << 32,
				(uint64_t)htobe32(f->byte_cnt) << 32 };
		w6 = stamp;
		if (__builtin_expect(f->flow_tag != 0, 0)) { /* hw_prm.h: the tag, the queue as user index */
			top = htobe32(f->flow_tag & 0xffffffu);
			v[2] = (cq_v2){ htobe32(HW_CQE_TAGGED << 24 | (f->qpn & 0xffffffu)) | (uint64_t)htobe32(f->imm) << 32,
					(uint64_t)htobe32(f->byte_cnt) << 32 };
		}
	}
	if (tm != NULL) { /* a constant NULL but in hw_cq_push_tm_locked: no test on the other paths */
		memcpy(slot, tm->head, sizeof(tm->head));
		slot->app = HW_CQE_APP_TM;
		slot->app_op = tm->app_op;
		slot->app_info = htobe16(tm->app_info);
	}
	if (sc != NULL) /* a constant NULL but in hw_cq_push_scat_locked */
		fmt = cq_scat_write(cq, slot, sc);
	memcpy(&slot->timestamp, &w6, sizeof(w6)); /* the error CQE's syndromes, else the timestamp */
	memcpy(&slot->sop_drop_qpn, &top, sizeof(top));
	memcpy(&slot->wqe_counter, &cnt, sizeof(cnt));
	memcpy(&slot->signature, &sig, sizeof(sig));
	atomic_store_explicit((_Atomic uint8_t *)&slot->op_own,
			      (uint8_t)(f->opcode << HW_CQE_OPCODE_SHIFT | (f->solicited ? HW_CQE_SE_MASK : 0) | fmt |
					((pi >> cq->log_size) & HW_CQE_OWNER_MASK)),
			      memory_order_release);
}

/* cq_try_fire as a push's last call (a tail call: the push keeps no register across it). */
static __attribute__((noinline)) enum hw_status cq_push_fire(struct hw_cq *cq, uint32_t arm)
{
	cq_try_fire(cq, arm);
	return HW_OK;
}

/*
 * hw_cq_push_locked (sc) and hw_cq_push_sp: stamp is the big-endian time for
 * a CQ that keeps it, read by the caller before, so the path without one
 * calls nothing but a firing arm.
 */
static inline __attribute__((always_inline)) enum hw_status cq_push(struct hw_cq *cq, const struct hw_cqe_fields *f,
								    bool sc, uint64_t stamp, const struct hw_cqe_tm *tm,
								    const struct cq_scat *scat)
{
	uint32_t pi = atomic_load_explicit(&cq->st->pi, memory_order_relaxed);
	uint32_t ci = atomic_load_explicit(&cq->ci_seen, memory_order_relaxed);
	bool err = cq_is_err(f->opcode), sol = f->solicited || err;
	uint32_t arm;

	/* The index only moves forward: room by the last one read is room now. */
	if (__builtin_expect(((pi - ci) & HW_CQ_CI_MASK) > cq->mask, 0)) {
		ci = be32toh(atomic_load_explicit(cq_dbr_word(cq, HW_CQ_DBR_SET_CI), memory_order_acquire));
		atomic_store_explicit(&cq->ci_seen, ci, memory_order_relaxed);
		if (((pi - ci) & HW_CQ_CI_MASK) > cq->mask) {
			atomic_store_explicit(&cq->st->overrun, 1, memory_order_relaxed);
			return HW_ERR_FULL;
		}
	}
	cq_write(cq, pi, f, err, stamp, tm, scat);
	if (sol)
		atomic_store_explicit(&cq->st->sol_end, pi + 1, memory_order_relaxed);
	if (sc) {
		atomic_store_explicit(&cq->st->pi, pi + 1, memory_order_seq_cst);
		arm = atomic_load_explicit(&cq->st->arm, memory_order_seq_cst);
	} else {
		atomic_store_explicit(&cq->st->pi, pi + 1, memory_order_release);
		arm = atomic_load_explicit(&cq->st->arm, memory_order_relaxed);
	}
	if (__builtin_expect(arm & ARM_ARMED, 0) && (!(arm & HW_CQ_ARM_CMD_SOLICITED) || sol))
		return cq_push_fire(cq, arm);
	return HW_OK;
}

/* A CQ that keeps completion times: the clock is read out of the usual path. */
static __attribute__((noinline)) enum hw_status cq_push_stamped(struct hw_cq *cq, const struct hw_cqe_fields *f,
								bool sc)
{
	uint64_t stamp = htobe64(cq_clock_ns());

	return sc ? cq_push(cq, f, true, stamp, NULL, NULL) : cq_push(cq, f, false, stamp, NULL, NULL);
}

enum hw_status hw_cq_push_locked(struct hw_cq *cq, const struct hw_cqe_fields *f)
{
	if (!cq_opcode_valid(f->opcode))
		return HW_ERR_INVAL;
	if (__builtin_expect(cq->st->flags & CQ_F_TIMESTAMP, 0) && !cq_is_err(f->opcode))
		return cq_push_stamped(cq, f, true);
	return cq_push(cq, f, true, 0, NULL, NULL);
}

/*
 * Only this thread writes or arms the CQ, so program order stands in for the
 * sequentially consistent handshake of hw_cq_push_locked: the index needs
 * only a release store (for a consumer polling it from elsewhere), and the
 * arm word read after it cannot miss an arm of this same thread.
 */
enum hw_status hw_cq_push_sp(struct hw_cq *cq, const struct hw_cqe_fields *f)
{
	if (!cq_opcode_valid(f->opcode))
		return HW_ERR_INVAL;
	if (__builtin_expect(cq->st->flags & CQ_F_TIMESTAMP, 0) && !cq_is_err(f->opcode))
		return cq_push_stamped(cq, f, false);
	return cq_push(cq, f, false, 0, NULL, NULL);
}

/* A tag matching CQE (hw_tm.h): out of line, so the CQEs of everything else carry nothing of it. */
enum hw_status hw_cq_push_tm_locked(struct hw_cq *cq, const struct hw_cqe_fields *f, const struct hw_cqe_tm *tm)
{
	uint64_t stamp = 0;

	/* NO_PACKET is a tag list operation's only: checked here, not on every push */
	if (!cq_opcode_valid(f->opcode) && f->opcode != HW_CQE_NO_PACKET)
		return HW_ERR_INVAL;
	if ((cq->st->flags & CQ_F_TIMESTAMP) && !cq_is_err(f->opcode))
		stamp = htobe64(cq_clock_ns());
	return cq_push(cq, f, true, stamp, tm, NULL);
}

/* Out of line as the tag matching one: the other pushes carry nothing of it. */
enum hw_status hw_cq_push_scat_locked(struct hw_cq *cq, const struct hw_cqe_fields *f, const uint8_t *data,
				      uint32_t len)
{
	const struct cq_scat sc = { .data = data, .len = len };
	uint64_t stamp = 0;

	if (!cq_opcode_valid(f->opcode) || cq_is_err(f->opcode) || len > (cq->cqe_log == 7 ? 64u : 32u))
		return HW_ERR_INVAL;
	if (cq->st->flags & CQ_F_TIMESTAMP)
		stamp = htobe64(cq_clock_ns());
	return cq_push(cq, f, true, stamp, NULL, &sc);
}

enum hw_status hw_cq_sp_push_req_slow(struct hw_cq_sp *sp, uint32_t qpn_top, uint16_t wqe_counter, uint32_t byte_cnt,
				      uint8_t wqe_opcode)
{
	struct hw_cqe_fields f = { .opcode = HW_CQE_REQ, .wqe_counter = wqe_counter,
				   .qpn = be32toh(qpn_top) & 0xffffffu, .byte_cnt = byte_cnt, .wqe_opcode = wqe_opcode };

	return hw_cq_push_sp(sp->cq, &f);
}

void hw_cq_sp_open(struct hw_cq *cq, struct hw_cq_sp *sp)
{
	*sp = (struct hw_cq_sp){ .ring = hw_cq_ring(cq), .log_size = cq->log_size, .mask = cq->mask, .pi = &cq->st->pi,
				 .arm = &cq->st->arm, .dbrec = cq->dbrec, .cq = cq };
}

/* ---- receives taken under the lock: a holder that dies owes its CQE to the next ---- */

#define CLAIM_VALID (1ull << 63)
#define CLAIM_SRQ (1ull << 62)

void hw_cq_claim_set(struct hw_cq *cq, const struct hw_cq_claim *c)
{
	uint64_t w = CLAIM_VALID | (c->srq ? CLAIM_SRQ : 0) | (uint64_t)(c->qpn & 0xffffffu) << 32 | (c->idx & 0xffffu);

	atomic_store_explicit(&cq->st->claim_pi, atomic_load_explicit(&cq->st->pi, memory_order_relaxed),
			      memory_order_relaxed);
	atomic_store_explicit(&cq->st->claim_srqn, c->srqn, memory_order_relaxed);
	/* Before the take it announces: a death after the take leaves it set. */
	atomic_store_explicit(&cq->st->claim, w, memory_order_seq_cst);
}

void hw_cq_claim_clear(struct hw_cq *cq)
{
	atomic_store_explicit(&cq->st->claim, 0, memory_order_release);
}

bool hw_cq_claim_orphan(struct hw_cq *cq, struct hw_cq_claim *c)
{
	uint64_t w = atomic_load_explicit(&cq->st->claim, memory_order_acquire);

	if (w == 0)
		return false;
	atomic_store_explicit(&cq->st->claim, 0, memory_order_relaxed);
	/* Its CQE went out (the takeover finished a whole one): nothing is owed. */
	if (atomic_load_explicit(&cq->st->pi, memory_order_relaxed) !=
	    atomic_load_explicit(&cq->st->claim_pi, memory_order_relaxed))
		return false;
	*c = (struct hw_cq_claim){ .qpn = (uint32_t)(w >> 32) & 0xffffffu, .idx = (uint32_t)(w & 0xffffu),
				   .srq = (w & CLAIM_SRQ) != 0,
				   .srqn = atomic_load_explicit(&cq->st->claim_srqn, memory_order_relaxed) };
	return true;
}
