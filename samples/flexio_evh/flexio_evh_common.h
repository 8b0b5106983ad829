/*
 * What the host and the device code of flexio_evh agree on: the event
 * handler's context in DPA memory, naming its queues and buffers.
 */
#ifndef FLEXIO_EVH_COMMON_H_
#define FLEXIO_EVH_COMMON_H_

#include <stdint.h>

#define EVH_LOG_Q 6  /* 64 WQEs in the QP's send and receive rings */
#define EVH_LOG_CQ 7 /* 128 CQEs in each CQ */
#define EVH_MSG 64u  /* bytes of one message slot */

struct evh_ctx {
	uint32_t outbox_id, qpn, rq_cqn, lkey;
	uint64_t rq_ring, sq_ring, qp_dbr;
	uint64_t rq_cq_ring, rq_cq_dbr, sq_cq_ring, sq_cq_dbr;
	uint64_t rx_buf, tx_buf;
	/* the device's own state */
	uint32_t rq_cq_ci, sq_cq_ci, rq_pi, sq_pi;
	uint64_t activations, msgs, errors;
};

#endif /* FLEXIO_EVH_COMMON_H_ */
