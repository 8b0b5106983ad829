/*
 * hw_cq — a completion queue of the emulated device, in the mlx5 layout.
 *
 * The ring is 2^log_size 64-byte CQEs (hw_prm.h) and the doorbell record two
 * big-endian words (consumer index, arm word), so a program polling the ring
 * directly sees what the card would write. The device owns the producer
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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw_bell.h"
#include "hw_mem.h"
#include "hw_prm.h"

#define HW_CQ_LOG_SIZE_MAX 22 /* 4 Mi CQEs, as the card */
#define HW_CQ_RING_ALIGN 64   /* a given ring: each CQE in one cache line */
#define HW_CQ_DBREC_ALIGN 8

struct hw_cq;

struct hw_cq_attr {
	uint32_t log_size; /* 0 .. HW_CQ_LOG_SIZE_MAX */
	uint32_t cqn;	   /* written nowhere yet; kept for the queues that report to it */
	/*
	 * Memory the creator gives (NULL: the CQ allocates and owns it). A given
	 * ring is the creator's to initialise, as an mlx5 driver does; an
	 * allocated one starts with every CQE INVALID and owner 1.
	 */
	struct hw_cqe64 *ring;
	uint32_t *dbrec; /* two big-endian words, HW_CQ_DBR_SET_CI and HW_CQ_DBR_ARM */
	/*
	 * Or one block of hw_cq_mem_size(log_size) bytes, page aligned, holding
	 * ring, record and state (the creator may map it in other processes).
	 * Initialised by create. Not together with ring or dbrec.
	 */
	void *mem;
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
	/* Error CQEs (REQ_ERR, RESP_ERR) only. */
	uint8_t syndrome;   /* enum hw_cqe_syndrome */
	uint8_t vendor_err_synd;
};

/* Bytes of a CQ's memory block (0 for a bad size). */
size_t hw_cq_mem_size(uint32_t log_size);

/* HW_ERR_INVAL on a bad size or misaligned memory, HW_ERR_NOMEM. */
enum hw_status hw_cq_create(const struct hw_cq_attr *attr, struct hw_cq **out);
/* Frees the CQ, or only the view for an attached one (the block stays the caller's). */
void hw_cq_destroy(struct hw_cq *cq);

/*
 * A view of the CQ whose block another process created and this one mapped
 * at mem (len bytes). HW_ERR_LAYOUT when the block does not hold a CQ of
 * that length; HW_ERR_INVAL, HW_ERR_NOMEM.
 */
enum hw_status hw_cq_attach(void *mem, size_t len, struct hw_cq **out);
/* The CQ's block (NULL when created from a separate ring and record). */
void *hw_cq_mem(const struct hw_cq *cq);

struct hw_cqe64 *hw_cq_ring(const struct hw_cq *cq);
uint32_t *hw_cq_dbrec(const struct hw_cq *cq);
uint32_t hw_cq_log_size(const struct hw_cq *cq);
uint32_t hw_cq_cqn(const struct hw_cq *cq);

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
/* The producer lock; a holder whose process died is taken over. */
void hw_cq_lock(struct hw_cq *cq);
void hw_cq_unlock(struct hw_cq *cq);

/*
 * The consumer's write to the CQ doorbell register: arm_word is
 * sn << 28 | command | ci (host order). HW_ERR_INVAL when other bits are set.
 */
enum hw_status hw_cq_arm(struct hw_cq *cq, uint32_t arm_word);

/* True once a CQE was refused for lack of room (latched). */
bool hw_cq_overrun(const struct hw_cq *cq);

/* Rings once per fired arm: watch it with hw_watch_set_add / hw_waiter_arm. */
struct hw_bell *hw_cq_event_bell(struct hw_cq *cq);

#endif /* HW_CQ_H_ */
