/*
 * hw_qp — a reliable-connected queue pair of the emulated device, in the
 * mlx5 layout, and the engine's doorbell that executes its send queue.
 *
 * One buffer holds the receive ring first and the send ring after it, as an
 * mlx5 driver lays them out: the RQ is 2^log_rq_size receive WQEs of a fixed
 * stride, each a list of data segments ended early by a segment whose lkey
 * is HW_RQ_INVALID_LKEY; the SQ is 2^log_sq_size 64-byte basic blocks that
 * WQEs (hw_prm.h segments) fill. The doorbell record is two big-endian words:
 * [HW_QP_DBR_RCV] the receive producer counter, [HW_QP_DBR_SND] the send one
 * (low 16 bits each). The device keeps the consumer counters.
 *
 * For now the peer is a pointer to a QP of the same process; the cross-process
 * form comes with the fabric. The engine runs on the caller of
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

struct hw_qp_attr {
	uint32_t qpn; /* low 24 bits; reported in CQEs */
	struct hw_pd *pd;
	struct hw_cq *send_cq;
	struct hw_cq *recv_cq;
	uint32_t log_sq_size;	/* basic blocks, 0 .. HW_QP_LOG_SQ_MAX */
	uint32_t log_rq_size;	/* receive WQEs, 0 .. HW_QP_LOG_RQ_MAX */
	uint32_t log_rq_stride; /* bytes of one receive WQE, MIN .. MAX */
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
};

/* HW_ERR_INVAL on a missing PD or CQ or a size out of range, HW_ERR_NOMEM. State RESET. */
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

/* Internal to the device: to ERR, posted receives completed with WR_FLUSH. */
void hw_qp_set_err(struct hw_qp *qp);

#endif /* HW_QP_H_ */
