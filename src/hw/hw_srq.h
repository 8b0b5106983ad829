/*
 * hw_srq — a shared receive queue of the emulated device, in the mlx5 layout.
 *
 * The ring is 2^log_size WQEs of 2^log_stride bytes. Each WQE starts with
 * the next segment (hw_prm.h: next_wqe_index, big-endian) and continues with
 * data segments, ended early by one whose lkey is HW_RQ_INVALID_LKEY. The
 * doorbell record is one big-endian word: the program's producer counter
 * (low 16 bits). The device keeps its own head and consumed counter: it takes
 * the WQE at its head and moves the head to that WQE's next_wqe_index, as
 * the card does, so the program's free list (an mlx5 driver links freed WQEs
 * at its tail) decides the order; a cyclic SRQ (hw_srq_attr.cyclic, the
 * PRM's cyclic WQ of an RMP) moves the head to the next WQE in ring order. A responder CQE carries the taken WQE's
 * index in wqe_counter and the SRQ number.
 *
 * Several requesters may deliver into one SRQ from different threads: a take
 * is one compare-and-swap on (head, consumed). The limit event is armed with
 * hw_srq_arm and fires once, through the creator's callback, when a take
 * leaves fewer posted WQEs than the limit (the verbs layer makes it
 * IBV_EVENT_SRQ_LIMIT_REACHED); the callback runs on the engine's thread.
 * A QP in the error state leaves the SRQ's WQEs alone (others still use them).
 */
#ifndef HW_SRQ_H_
#define HW_SRQ_H_

#include <stdbool.h>
#include <stdint.h>

#include "hw_cq.h"
#include "hw_mem.h"
#include "hw_prm.h"
#include "hw_qshare.h"

#define HW_SRQ_LOG_MAX 15	 /* WQEs; the 16-bit counter must not alias */
#define HW_SRQ_LOG_STRIDE_MIN 5	 /* the next segment and one data segment */
#define HW_SRQ_LOG_STRIDE_MAX 10 /* the next segment and 63 data segments */

struct hw_srq;
struct hw_tm;
struct hw_qp;

typedef void (*hw_srq_limit_cb)(void *arg, struct hw_srq *srq);

struct hw_srq_attr {
	uint32_t srqn;		  /* low 24 bits; reported in CQEs */
	struct hw_pd *pd;
	uint32_t log_size;	  /* 0 .. HW_SRQ_LOG_MAX */
	uint32_t log_stride;	  /* MIN .. MAX */
	hw_srq_limit_cb limit_cb; /* may be NULL: the limit then reports nothing */
	void *limit_arg;
	bool shared; /* block in shared memory, published under srqn (as hw_cq_attr.shared) */
	/*
	 * An XRC SRQ (hw_xrc.h): xrcd non-zero names its domain, and its
	 * receives complete into cq (shared, so views attach it by number),
	 * whichever XRC target QP took them.
	 */
	uint64_t xrcd;
	struct hw_cq *cq;
	/*
	 * The ring and record the creator gives (both or neither; the ring
	 * HW_SRQ_RING_ALIGN aligned, the record one 32-bit word, 8-byte
	 * aligned); create links the ring's WQEs. They stay the creator's until
	 * the SRQ is destroyed; a shared SRQ publishes them with its state
	 * (hw_qblock_adopt: HW_ERR_NOTSUP when other processes could not map them).
	 */
	void *ring;
	uint32_t *dbrec;
	/* A tag matching SRQ (hw_tm.h): its list, the creator's; NULL for any other. */
	struct hw_tm *tm;
	/*
	 * The WQEs as the program lays them out (a DevX RMP, vb_devx_rmp.c):
	 * create writes neither the ring's links nor the record, as the card
	 * reads both as the program wrote them. cyclic: the device takes the
	 * WQEs in ring order (the PRM's cyclic WQ) and ignores next_wqe_index.
	 */
	bool program_ring;
	bool cyclic;
};

#define HW_SRQ_RING_ALIGN 64
#define HW_SRQ_DBREC_BYTES 4

/*
 * The device's state of an SRQ, in its block after the ring and the record,
 * so requesters of other processes take WQEs from it as the owner's do.
 */
struct hw_srq_sh {
	uint32_t magic;
	uint32_t srqn;
	uint32_t pd_id;
	uint32_t log_size;
	uint32_t log_stride;
	uint32_t hc;	/* device head << 16 | consumed counter; one CAS per take */
	uint32_t limit; /* armed limit, 0 when disarmed */
	uint32_t limit_owed; /* a taker of another process crossed the limit: the owner reports it */
	uint32_t cqn;	     /* XRC: the CQ its receives complete into */
	uint64_t xrcd;	     /* XRC: its domain, 0 for an ordinary SRQ */
	uint32_t life_idx;   /* XRC: the owner's life entry (hw_life.h), HW_LIFE_NONE: not watched so */
	uint32_t life_tid;
	uint32_t cyclic;     /* WQEs taken in ring order, not by next_wqe_index */
} __attribute__((aligned(64)));

/* The engine's view; nothing outside src/hw touches it. */
struct hw_srq {
	uint32_t srqn;
	uint32_t pd_id;
	uint8_t *buf;
	uint32_t *dbrec;
	uint32_t log_size;
	uint32_t log_stride;
	bool cyclic;	   /* the block's cyclic, read once */
	struct hw_srq_sh *sh;
	hw_srq_limit_cb limit_cb;
	void *limit_arg;
	struct hw_qp *qps; /* the QPs that receive here (hw_qp.srq_next), to resume their requesters */
	struct hw_qblock qb;
	bool published;
	bool view;	   /* another process's SRQ mapped here */
	uint64_t xrcd;	   /* XRC: its domain (0: none) */
	struct hw_cq *cq;  /* XRC: where its receives complete (a view's own attached CQ) */
	struct hw_tm *tm;  /* tag matching: its list (hw_tm.h), in the block; a view's is a view of it */
	const _Atomic uint32_t *seqp; /* a view: its record's sequence, which moves when the owner destroys it */
	uint32_t seq;
	const _Atomic int *lifep;     /* an XRC view: its owner's life word (NULL: not watched so), and holder */
	uint32_t life_tid;
};

/* HW_ERR_INVAL on a missing PD or a size out of range, HW_ERR_NOMEM. WQE i starts linked to i + 1. */
enum hw_status hw_srq_create(const struct hw_srq_attr *attr, struct hw_srq **out);
/*
 * The QPs that receive here must be destroyed first (HW_ERR_INVAL, nothing
 * freed). A shared SRQ withdraws its record (the caller frees the number); a
 * view only unmaps.
 */
enum hw_status hw_srq_destroy(struct hw_srq *srq);

/*
 * A view of the shared SRQ published under srqn. HW_ERR_KEY when none is
 * reachable, HW_ERR_LAYOUT when its block does not hold an SRQ.
 */
enum hw_status hw_srq_attach_num(uint32_t srqn, struct hw_srq **out);

/* Internal: reports a limit event a taker of another process left owed; true if one was. */
bool hw_srq_limit_poll(struct hw_srq *srq);

uint8_t *hw_srq_buf(const struct hw_srq *srq);
uint32_t *hw_srq_dbrec(const struct hw_srq *srq);
uint32_t hw_srq_srqn(const struct hw_srq *srq);

/*
 * The SRQ doorbell: records the producer counter (writes it to the record)
 * and resumes requesters stalled on an empty receive queue here. HW_ERR_INVAL
 * when pi is more than a ring ahead of what the device consumed.
 */
enum hw_status hw_srq_ring(struct hw_srq *srq, uint32_t pi);

/* WQEs posted and not yet taken. */
uint32_t hw_srq_posted(const struct hw_srq *srq);

/* The limit armed now: 0 when disarmed or once it fired. */
uint32_t hw_srq_limit(const struct hw_srq *srq);

/*
 * Arms the limit event (limit 0 disarms). HW_ERR_INVAL when limit exceeds the
 * WQEs posted now (the event would be owed already) or the ring's size.
 */
enum hw_status hw_srq_arm(struct hw_srq *srq, uint32_t limit);

/*
 * Internal to the engine: takes the WQE at the head and returns it (its index
 * in *idx); NULL when none is posted. May fire the limit event.
 */
const uint8_t *hw_srq_take(struct hw_srq *srq, uint16_t *idx);

/* Internal to hw_qp: a QP created on the SRQ joins and leaves its list. */
void hw_srq_attach(struct hw_srq *srq, struct hw_qp *qp);
void hw_srq_detach(struct hw_srq *srq, struct hw_qp *qp);

#endif /* HW_SRQ_H_ */
