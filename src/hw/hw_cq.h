/*
 * hw_cq — a completion queue of the emulated device, in the mlx5 layout.
 *
 * The ring is 2^log_size CQEs of 64 or 128 bytes (cqe_size) and the doorbell
 * record two big-endian words (consumer index, arm word), so a program polling
 * the ring directly sees what the card would write. A 128-byte CQE is a
 * 64-byte one (hw_prm.h) in the entry's last 64 bytes, as mlx5 lays it out;
 * the first 64 are the inline-scatter area, zero but for a receive scattered
 * there (hw_cq_push_scat_locked). The device owns the producer
 * index: a CQE written at index pi carries owner = (pi >> log_size) & 1, and
 * its op_own byte is stored last with release order, so a consumer that finds
 * the owner bit it expects and an opcode other than INVALID may read the rest.
 * The producer never overwrites a CQE the consumer has not released through
 * the doorbell record: it refuses the CQE and latches the overrun flag.
 *
 * Arming is the card's: the consumer writes the arm word (sequence number,
 * NEXT or SOLICITED, its consumer index) to the doorbell record and to the
 * CQ's doorbell register (hw_cq_arm). The CQ then fires its event once: at
 * the first CQE it writes (only a solicited or error CQE for SOLICITED), or
 * at once if such a CQE already waits past the armed consumer index. An arm
 * with the sequence number of an arm that already fired is stale and ignored;
 * the consumer moves its number on when it takes the event, as mlx5 does.
 * Firing rings the CQ's event bell (hw_bell.h), which the watch engine turns
 * into an eventfd write for whoever watches it.
 *
 * Sharing: the ring, the doorbell record and the device's state of the CQ
 * (producer index, arm state, event bell, producer lock) can live in one
 * memory block (hw_cq_mem_size) that the creator gives; another process
 * that maps the same block attaches a view of the same CQ (hw_cq_attach), so
 * its queues complete into it as the owner's do.
 *
 * Concurrency: any number of producers, in any threads and processes, take
 * the CQ's producer lock for one CQE (a holder that died is taken over);
 * the consumer arms from any thread without a lock.
 */
#ifndef HW_CQ_H_
#define HW_CQ_H_

#include <endian.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hw_bell.h"
#include "hw_mem.h"
#include "hw_prm.h"

#define HW_CQ_LOG_SIZE_MAX 22 /* 4 Mi CQEs, as the card */
#define HW_CQ_RING_ALIGN 64   /* a given ring: each CQE in one cache line */
#define HW_CQ_DBREC_ALIGN 8
#define HW_CQ_DBREC_BYTES 8 /* a given record: its two words */

struct hw_cq;

struct hw_cq_attr {
	uint32_t log_size; /* 0 .. HW_CQ_LOG_SIZE_MAX */
	uint32_t cqn;	   /* written nowhere yet; kept for the queues that report to it */
	uint32_t cqe_size; /* bytes per CQE: 64 (or 0) or 128; a given ring holds 2^log_size of them */
	/*
	 * Memory the creator gives (NULL: the CQ allocates and owns it). A given
	 * ring is the creator's to initialise, as an mlx5 driver does; an
	 * allocated one starts with every CQE INVALID and owner 1.
	 */
	struct hw_cqe64 *ring;
	uint32_t *dbrec; /* two big-endian words, HW_CQ_DBR_SET_CI and HW_CQ_DBR_ARM */
	/*
	 * Or one block of hw_cq_mem_size_cqe(log_size, cqe_size) bytes, page aligned, holding
	 * ring, record and state (the creator may map it in other processes).
	 * Initialised by create. Not together with ring or dbrec.
	 */
	void *mem;
	/*
	 * Or neither: the CQ places its block in the device's shared memory and
	 * publishes it under cqn (one this process holds), so the queues of
	 * other processes complete into it. With ring and dbrec (both), the
	 * block holds its state alone, and the given ring and record, which
	 * create initialises, are published with it (hw_qblock_adopt):
	 * HW_ERR_NOTSUP when they are memory other processes cannot map.
	 */
	bool shared;
	/*
	 * CQEs carry their completion time (big-endian, CLOCK_MONOTONIC ns: the
	 * device clock runs at 1 GHz), as the card's do; off, the field stays 0
	 * and the producer saves the clock read.
	 */
	bool timestamp;
	/*
	 * Private CQs (ring and dbrec given, or allocated): called on the
	 * thread whose CQE or arm fired the event, after the event bell rang,
	 * so a consumer in this process (a FlexIO event handler's thread) is
	 * woken without the watch engine. It runs in the producer's path:
	 * short, no locks the producer may hold.
	 */
	void (*on_event)(void *arg);
	void *on_event_arg;
};

/* What the producer says about one completion (host order). */
struct hw_cqe_fields {
	uint8_t opcode;	    /* enum hw_cqe_opcode, never INVALID */
	bool solicited;	    /* sets the SE bit; fires a SOLICITED arm */
	uint16_t wqe_counter;
	uint32_t qpn;	    /* low 24 bits */
	uint32_t byte_cnt;
	uint32_t imm;	    /* immediate, invalidated rkey or pkey */
	uint32_t srqn;
	uint32_t flags_rqpn;
	uint16_t slid;
	uint8_t wqe_opcode; /* REQ and REQ_ERR: the send WQE's opcode */
	uint32_t flow_tag;  /* RESP_SEND of an Ethernet RQ: a steering rule's tag, 0 for none (hw_cqe_flow_tag) */
	/* Error CQEs (REQ_ERR, RESP_ERR) only. */
	uint8_t syndrome;   /* enum hw_cqe_syndrome */
	uint8_t vendor_err_synd;
};

/* Bytes of a CQ's memory block (0 for a bad size): 64-byte CQEs, or cqe_size (64 or 128). */
size_t hw_cq_mem_size(uint32_t log_size);
size_t hw_cq_mem_size_cqe(uint32_t log_size, uint32_t cqe_size);

/*
 * HW_ERR_INVAL on a bad size (of the ring or a CQE) or misaligned memory, HW_ERR_NOMEM; for a
 * shared CQ, HW_ERR_ACCESS or HW_ERR_KEY when this process does not hold cqn.
 */
enum hw_status hw_cq_create(const struct hw_cq_attr *attr, struct hw_cq **out);
/*
 * Frees the CQ (a shared one withdraws its record; the caller frees the
 * number), or only the view for an attached one (the block stays the
 * caller's; one hw_cq_attach_num mapped is unmapped).
 */
void hw_cq_destroy(struct hw_cq *cq);

/*
 * A view of the CQ whose block another process created and this one mapped
 * at mem (len bytes). HW_ERR_LAYOUT when the block does not hold a CQ of
 * that length; HW_ERR_INVAL, HW_ERR_NOMEM.
 */
enum hw_status hw_cq_attach(void *mem, size_t len, struct hw_cq **out);
/*
 * A view of the shared CQ published under cqn (by another process, or this
 * one), its block mapped here until the view is destroyed. HW_ERR_KEY when
 * no shared CQ has that number or its block cannot be mapped, HW_ERR_LAYOUT.
 */
enum hw_status hw_cq_attach_num(uint32_t cqn, struct hw_cq **out);
/*
 * Resizes a shared CQ this process created to 2^log_size CQEs, keeping its
 * unpolled CQEs (from the consumer index ci) at their indices, in order. A
 * fence for every producer, in any process: under the producer lock the
 * CQEs, indices, arm and claim move to a new block published under the same
 * number and the old block is marked retired; a producer that takes the old
 * lock later moves its view to the new block first (hw_cq_lock). The ring,
 * record, overrun flag and event bell of the CQ change: the consumer reads
 * them again, and a watch of the old bell must be set on the new one (its
 * count carries on). HW_ERR_INVAL when more than limit CQEs are unpolled or
 * the CQ is no published one of this process; HW_ERR_NOMEM.
 */
enum hw_status hw_cq_resize(struct hw_cq *cq, uint32_t log_size, uint32_t ci, uint32_t limit);
/* The CQ's block (NULL when created from a separate ring and record). */
void *hw_cq_mem(const struct hw_cq *cq);

/* The ring's first byte: CQE i's 64-byte part is at i * cqe_size + cqe_size - 64. */
struct hw_cqe64 *hw_cq_ring(const struct hw_cq *cq);
uint32_t hw_cq_cqe_size(const struct hw_cq *cq);
uint32_t *hw_cq_dbrec(const struct hw_cq *cq);
uint32_t hw_cq_log_size(const struct hw_cq *cq);
uint32_t hw_cq_cqn(const struct hw_cq *cq);
/* CQEs written and not yet consumed (the consumer index in the record): a raw doorbell's stream sign (hw_trap.h). */
uint32_t hw_cq_backlog(const struct hw_cq *cq);

/*
 * Writes one CQE at the producer index. HW_ERR_FULL (and the overrun flag
 * latched) when the consumer has not released the slot; HW_ERR_INVAL for an
 * opcode the device never writes. Nothing is written on either error.
 * Takes the CQ's producer lock.
 */
enum hw_status hw_cq_push(struct hw_cq *cq, const struct hw_cqe_fields *f);
/*
 * The same under a producer lock the caller holds (several CQEs in one hold,
 * as a flush writes them), or for a CQ with a single producer.
 */
enum hw_status hw_cq_push_locked(struct hw_cq *cq, const struct hw_cqe_fields *f);
/*
 * The tag matching part of a CQE (hw_tm.h): app is set to HW_CQE_APP_TM,
 * app_op and app_info as given, and the CQE's first 16 bytes are head (the
 * message's TMH, or a list operation's success word and phase count).
 */
struct hw_cqe_tm {
	uint8_t app_op;
	uint16_t app_info;
	uint8_t head[16];
};
/* hw_cq_push_locked with the tag matching part written too. */
enum hw_status hw_cq_push_tm_locked(struct hw_cq *cq, const struct hw_cqe_fields *f, const struct hw_cqe_tm *tm);
/*
 * hw_cq_push_locked of a receive scattered into the CQE (hw_qp_set_scatter):
 * its len bytes (at most 32 for 64-byte CQEs, 64 for 128-byte ones; the
 * rest of the area zero) written in the CQE's first 32 bytes or the 128-byte
 * entry's first 64, and op_own carrying HW_CQE_INLINE_SCATTER_32 or _64.
 * HW_ERR_INVAL for a longer len.
 */
enum hw_status hw_cq_push_scat_locked(struct hw_cq *cq, const struct hw_cqe_fields *f, const uint8_t *data,
				      uint32_t len);
/* The producer lock; a holder whose process died is taken over. */
void hw_cq_lock(struct hw_cq *cq);
void hw_cq_unlock(struct hw_cq *cq);

/*
 * A receive a responder takes (from an RQ or an SRQ) and completes into
 * this CQ is taken and completed under the CQ's producer lock, announced
 * here before the take and forgotten after its CQE: a producer whose
 * process dies in between leaves the claim to the next holder, which gives
 * the receive back (RQ) or completes it in error (SRQ), so no receive is
 * lost and no later CQE names the wrong buffer. All three with the lock held.
 */
struct hw_cq_claim {
	uint32_t qpn; /* the responder QP */
	uint32_t idx; /* RQ: its consumer counter before the take; SRQ: the WQE index taken */
	uint32_t srqn;
	bool srq;
};
void hw_cq_claim_set(struct hw_cq *cq, const struct hw_cq_claim *c);
void hw_cq_claim_clear(struct hw_cq *cq);
/* A claim left by a holder that died before its CQE went out (forgotten here): true and *c. */
bool hw_cq_claim_orphan(struct hw_cq *cq, struct hw_cq_claim *c);

/*
 * The consumer's write to the CQ doorbell register: arm_word is
 * sn << 28 | command | ci (host order). HW_ERR_INVAL when other bits are set.
 */
enum hw_status hw_cq_arm(struct hw_cq *cq, uint32_t arm_word);
/*
 * hw_cq_arm, and *fired: an arm of that sequence number already fired and
 * its event was not taken (the arm changed nothing; the event's bell has
 * rung, or is ringing on another thread or process right now).
 */
enum hw_status hw_cq_arm_report(struct hw_cq *cq, uint32_t arm_word, bool *fired);

/* True once a CQE was refused for lack of room (latched). */
bool hw_cq_overrun(const struct hw_cq *cq);
/* The flag hw_cq_overrun reads, for a caller that checks it inline (non-zero: overrun). */
const _Atomic uint32_t *hw_cq_overrun_flag(const struct hw_cq *cq);

/* Rings once per fired arm: watch it with hw_watch_set_add / hw_waiter_arm. */
struct hw_bell *hw_cq_event_bell(struct hw_cq *cq);

/*
 * Single-producer CQE write, for a CQ that one thread alone writes and
 * arms (a DOCA work queue's, whose engine queues run at its doorbells): the
 * CQE is stored in place, op_own last with release order, and the producer
 * index published with a release store; no lock, no read-modify-write unless
 * an arm fires. The opcode must be one the device writes (the caller's
 * engine only writes REQ and REQ_ERR). HW_ERR_FULL as hw_cq_push.
 */
enum hw_status hw_cq_push_sp(struct hw_cq *cq, const struct hw_cqe_fields *f);

/*
 * The single producer's view of its CQ (hw_cq_sp_open): the fields
 * hw_cq_push_sp works on, so that a producer elsewhere writes the common
 * CQE (a successful requester completion) inline. Same rules as
 * hw_cq_push_sp; the inline write takes hw_cq_push_sp whenever the CQ is
 * armed or has no room, so firing and overrun stay in one place.
 */
#define HW_CQ_STATE_ARMED (1u << 31) /* in the arm state word: an arm waits to fire */

struct hw_cq_sp {
	struct hw_cqe64 *ring;
	uint32_t log_size;
	uint32_t mask;
	_Atomic uint32_t *pi;
	const _Atomic uint32_t *arm;
	const uint32_t *dbrec;
	struct hw_cq *cq;
};

/* A CQ of 64-byte CQEs only (the inline write indexes the ring by them); its caller checks hw_cq_cqe_size. */
void hw_cq_sp_open(struct hw_cq *cq, struct hw_cq_sp *sp);

typedef uint64_t hw_cq_v2 __attribute__((vector_size(16), may_alias));

/* hw_cq_sp_push_req's full or armed case, through hw_cq_push_sp: out of line, so the inline path keeps no frame for it. */
enum hw_status hw_cq_sp_push_req_slow(struct hw_cq_sp *sp, uint32_t qpn_top, uint16_t wqe_counter, uint32_t byte_cnt,
				      uint8_t wqe_opcode);

/* A REQ CQE (no SE, no immediate): qpn_top is the big-endian sop_drop_qpn word. HW_ERR_FULL as hw_cq_push. */
static inline enum hw_status hw_cq_sp_push_req(struct hw_cq_sp *sp, uint32_t qpn_top, uint16_t wqe_counter,
					      uint32_t byte_cnt, uint8_t wqe_opcode)
{
	/* The fields read once, before the CQE's stores (which the compiler must assume may alias them). */
	_Atomic uint32_t *pip = sp->pi;
	uint32_t log_size = sp->log_size;
	uint32_t pi = atomic_load_explicit(pip, memory_order_relaxed);
	uint32_t ci = be32toh(atomic_load_explicit((const _Atomic uint32_t *)&sp->dbrec[HW_CQ_DBR_SET_CI],
						   memory_order_acquire));
	struct hw_cqe64 *slot = &sp->ring[pi & sp->mask];
	hw_cq_v2 *v = (hw_cq_v2 *)(void *)slot;
	uint64_t zero = 0, w5, tail;

	if (__builtin_expect(((pi - ci) & HW_CQ_CI_MASK) > sp->mask ||
				     (atomic_load_explicit(sp->arm, memory_order_relaxed) & HW_CQ_STATE_ARMED),
			     0))
		return hw_cq_sp_push_req_slow(sp, qpn_top, wqe_counter, byte_cnt, wqe_opcode);
	/* Zeros in 16-byte stores; words built in general registers in 8-byte ones (cheaper than assembling vectors). */
	v[0] = (hw_cq_v2){ 0, 0 };
	v[1] = (hw_cq_v2){ 0, 0 };
	memcpy(&slot->srqn_uidx, &zero, sizeof(zero));
	w5 = (uint64_t)htobe32(byte_cnt) << 32;
	memcpy(&slot->app, &w5, sizeof(w5));
	memcpy(&slot->timestamp, &zero, sizeof(zero));
	/*
	 * The last 8 bytes (QP number, WQE counter, signature, op_own) in one
	 * aligned release store: the owner bit becomes visible with them, after
	 * the rest, and never before.
	 */
	tail = qpn_top | (uint64_t)htobe16(wqe_counter) << 32 |
	       (uint64_t)(HW_CQE_REQ << HW_CQE_OPCODE_SHIFT | ((pi >> log_size) & HW_CQE_OWNER_MASK)) << 56;
	atomic_store_explicit((_Atomic uint64_t *)(void *)&slot->sop_drop_qpn, tail, memory_order_release);
	atomic_store_explicit(pip, pi + 1, memory_order_release);
	return HW_OK;
}

#endif /* HW_CQ_H_ */
