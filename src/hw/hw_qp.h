/*
 * hw_qp — a queue pair of the emulated device (RC or UD), in the mlx5 layout,
 * and the engine's doorbell that executes its send queue.
 *
 * One buffer holds the receive ring first and the send ring after it, as an
 * mlx5 driver lays them out: the RQ is 2^log_rq_size receive WQEs of a fixed
 * stride, each a list of data segments ended early by a segment whose lkey
 * is HW_RQ_INVALID_LKEY; the SQ is 2^log_sq_size 64-byte basic blocks that
 * WQEs (hw_prm.h segments) fill. The doorbell record is two big-endian words:
 * [HW_QP_DBR_RCV] the receive producer counter, [HW_QP_DBR_SND] the send one
 * (low 16 bits each). The device keeps the consumer counters.
 *
 * A QP created on an SRQ (hw_srq.h) has no receive ring: the RQ part of the
 * buffer is empty and its receives come from the SRQ.
 *
 * RC (the default) talks to one connected peer, for now a pointer to a QP of
 * the same process. UD sends name their destination in each WQE's datagram
 * segment; the device finds it with hw_qp_lookup, the one place a peer is
 * looked up by number (the cross-process form comes with the fabric).
 *
 * RNR: an RC SEND (or WRITE with immediate) that finds no receive posted
 * waits, as IB's requester does, for the responder's min_rnr_timer and
 * retries up to rnr_retry times (7: forever), then fails with
 * RNR_RETRY_EXC. The doorbell never blocks: the SQ stops at that WQE and
 * records a deadline (hw_qp_deadline). hw_qp_kick resumes it: the WQE runs
 * at once when a receive has arrived, and a kick at or after the deadline
 * counts a retry. Posting a receive (hw_qp_ring_rq, hw_srq_ring) kicks the
 * stalled requester itself, so only the timeout needs a timer-driven kick.
 * One thread at a time executes a given SQ: a doorbell or kick that finds
 * the SQ busy leaves its work to the thread running it (lock-free). The engine runs on the caller of
 * hw_qp_ring_sq (docs/ARCHITECTURE.md says why), so one thread rings a
 * given SQ at a time; a QP's receive side is consumed by its peer's doorbell.
 */
#ifndef HW_QP_H_
#define HW_QP_H_

#include <stdint.h>

#include "hw_cq.h"
#include "hw_mem.h"

#define HW_QP_LOG_SQ_MAX 15 /* basic blocks; the 16-bit counter must not alias */
#define HW_QP_LOG_RQ_MAX 15
#define HW_QP_LOG_RQ_STRIDE_MIN 4  /* one data segment */
#define HW_QP_LOG_RQ_STRIDE_MAX 10 /* 64 data segments */
#define HW_RQ_INVALID_LKEY 0x100u  /* ends a receive WQE's list early */
#define HW_QP_COUNTER_MASK 0xffffu

enum {
	HW_QP_DBR_RCV = 0,
	HW_QP_DBR_SND = 1,
};

enum hw_qp_state {
	HW_QP_RESET,
	HW_QP_INIT,
	HW_QP_RTR, /* receives: the responder side works */
	HW_QP_RTS, /* sends too */
	HW_QP_ERR,
};

enum hw_qp_type {
	HW_QPT_RC = 0,
	HW_QPT_UD,
};

#define HW_QP_RNR_RETRY_INFINITE 7
#define HW_QP_RNR_TIMER_MAX 31
#define HW_QP_NO_DEADLINE UINT64_MAX
#define HW_UD_MTU 4096 /* the port MTU: the largest UD message */

struct hw_srq;

struct hw_qp_attr {
	uint32_t qpn; /* low 24 bits; reported in CQEs */
	enum hw_qp_type type;	/* 0: RC */
	struct hw_pd *pd;
	struct hw_cq *send_cq;
	struct hw_cq *recv_cq;
	uint32_t log_sq_size;	/* basic blocks, 0 .. HW_QP_LOG_SQ_MAX */
	uint32_t log_rq_size;	/* receive WQEs, 0 .. HW_QP_LOG_RQ_MAX */
	uint32_t log_rq_stride; /* bytes of one receive WQE, MIN .. MAX */
	struct hw_srq *srq;	/* receives come from here; log_rq_* are then ignored */
	uint32_t qkey;		/* UD */
	/*
	 * RNR, as IB's QP attributes: min_rnr_timer (responder, the IB timer
	 * code 0..31, 0 meaning 655.36 ms) and rnr_retry (requester, 0..7).
	 * Zero-initialised attributes give no retries: the error comes at once.
	 */
	uint8_t min_rnr_timer;
	uint8_t rnr_retry;
	uint16_t lid;		/* the port's LID: slid of what this QP sends over UD */
	uint8_t gid[16];	/* the port's GID: the source GID of the GRHs it sends */
};

/* The engine's view; nothing outside src/hw touches it. */
struct hw_qp {
	uint32_t qpn;
	uint32_t pd_id;
	struct hw_cq *send_cq;
	struct hw_cq *recv_cq;
	uint8_t *buf;	  /* RQ at 0, SQ at sq_off */
	size_t buf_len;
	size_t sq_off;
	uint32_t *dbrec;
	uint32_t log_sq_size;
	uint32_t log_rq_size;
	uint32_t log_rq_stride;
	uint32_t sq_ci;	  /* next basic block the engine reads (16-bit counter) */
	uint32_t rq_ci;	  /* next receive WQE the responder consumes (16-bit counter) */
	enum hw_qp_state state;
	struct hw_qp *peer;
	enum hw_qp_type type;
	struct hw_srq *srq;
	struct hw_qp *srq_next;	 /* the SRQ's list of QPs */
	uint32_t qkey;
	uint8_t min_rnr_timer;
	uint8_t rnr_retry;
	uint16_t lid;
	uint8_t gid[16];
	uint32_t sq_pi;		 /* the last rung producer counter */
	uint32_t drivers;	 /* threads that asked to run the SQ; the first one runs it */
	uint8_t rnr_left;	 /* retries left for the stalled WQE */
	uint64_t rnr_deadline;	 /* HW_QP_NO_DEADLINE unless the SQ waits on RNR */
	uint64_t kick_ns;	 /* the latest kick's clock, for the thread running the SQ */
};

/*
 * HW_ERR_INVAL on a missing PD or CQ, a size or RNR attribute out of range or
 * an unknown type; HW_ERR_NOMEM, also when the registry already holds 4096
 * QPs of this process. State RESET; the QP is found by hw_qp_lookup until
 * destroyed.
 */
enum hw_status hw_qp_create(const struct hw_qp_attr *attr, struct hw_qp **out);
void hw_qp_destroy(struct hw_qp *qp);

uint8_t *hw_qp_sq_buf(const struct hw_qp *qp);
uint8_t *hw_qp_rq_buf(const struct hw_qp *qp);
uint32_t *hw_qp_dbrec(const struct hw_qp *qp);
enum hw_qp_state hw_qp_state(const struct hw_qp *qp);

/*
 * Moves the state: RESET->INIT->RTR->RTS one step at a time, any state to ERR
 * or RESET (RESET empties both rings' counters). HW_ERR_INVAL otherwise,
 * nothing changed. Entering ERR flushes the posted receives.
 */
enum hw_status hw_qp_modify(struct hw_qp *qp, enum hw_qp_state to);

/* Connects qp to peer (one direction; call it for both). NULL disconnects. */
void hw_qp_connect(struct hw_qp *qp, struct hw_qp *peer);

/*
 * The send doorbell: new_pi is the send producer counter (basic blocks, low
 * 16 bits) the program wrote to the record. Executes every WQE up to it
 * before returning, writing CQEs as the card would; work errors are reported
 * only in CQEs. HW_ERR_INVAL (nothing executed) when the QP is not in RTS or
 * ERR, or when new_pi is more than a ring ahead of the consumer.
 */
enum hw_status hw_qp_ring_sq(struct hw_qp *qp, uint32_t new_pi);

/*
 * Sets the RNR attributes (as a modify with IBV_QP_MIN_RNR_TIMER /
 * IBV_QP_RNR_RETRY does). HW_ERR_INVAL when out of range, nothing changed.
 */
enum hw_status hw_qp_set_rnr(struct hw_qp *qp, uint8_t min_rnr_timer, uint8_t rnr_retry);

/* Sets a UD QP's qkey. HW_ERR_INVAL for an RC QP. */
enum hw_status hw_qp_set_qkey(struct hw_qp *qp, uint32_t qkey);

/* The IB RNR timer code's time in ns (0 is the longest, 655.36 ms). */
uint64_t hw_rnr_timer_ns(uint8_t code);

/* The QP with this number (low 24 bits), or NULL: the device's lookup of UD destinations. */
struct hw_qp *hw_qp_lookup(uint32_t qpn);

/*
 * The receive doorbell: records the producer counter (writes it to the
 * record) and resumes the peer if its SQ waits for a receive here.
 * HW_ERR_INVAL for a QP on an SRQ or a counter more than a ring ahead.
 */
enum hw_status hw_qp_ring_rq(struct hw_qp *qp, uint32_t pi);

/*
 * Resumes an SQ stopped by RNR: its WQE runs if a receive arrived; when
 * now_ns (CLOCK_MONOTONIC ns, or a caller's clock that agrees with
 * hw_qp_deadline) is at or past the deadline, a retry is counted and the
 * error comes when none is left (now_ns 0 counts no time). HW_ERR_INVAL when
 * qp is NULL.
 */
enum hw_status hw_qp_kick(struct hw_qp *qp, uint64_t now_ns);

/* When the next kick is due, HW_QP_NO_DEADLINE when the SQ waits for nothing. */
uint64_t hw_qp_deadline(const struct hw_qp *qp);

/* Internal to the device: to ERR, posted receives completed with WR_FLUSH. */
void hw_qp_set_err(struct hw_qp *qp);

/* Internal: runs the SQ up to the rung counter (now_ns 0: no time passed). */
void hw_qp_drive(struct hw_qp *qp, uint64_t now_ns);

/* Internal: resumes qp's peer if it waits on RNR for qp's receives. */
void hw_qp_resume_peer(struct hw_qp *qp);

#endif /* HW_QP_H_ */
