/*
 * What the host side of test_flexio_queue and its device code agree on: the
 * handler's context, in DPA memory, naming the queues and buffers the host
 * created and keeping the device's own counters.
 */
#ifndef FX_QUEUE_COMMON_H_
#define FX_QUEUE_COMMON_H_

#include <stdint.h>

#define FXQ_MSG 64u /* bytes of one message slot */

enum fxq_mode {
	FXQ_ECHO = 0,	/* each message v is answered with 3v + 1 */
	FXQ_FINISH = 1, /* the first activation ends with flexio_dev_finish */
	FXQ_CRASH = 2,	/* the first activation dereferences address 8 */
	FXQ_SPIN = 3,	/* the first activation never returns */
	FXQ_SINK = 4,	/* messages are taken and not answered (bench_flexio_evh) */
	FXQ_RING = 5,	/* the first activation rings its SQ's doorbell until the doorbell fails */
};

struct fxq_ctx {
	uint32_t outbox_id, qpn, rq_cqn, sq_cqn;
	uint32_t lkey, log_rq, log_sq, log_cq;
	uint64_t rq_ring, sq_ring, qp_dbr;
	uint64_t rq_cq_ring, rq_cq_dbr, sq_cq_ring, sq_cq_dbr;
	uint64_t rx_buf, tx_buf;
	uint32_t mode;
	/* the device's state */
	uint32_t rq_cq_ci, sq_cq_ci, rq_pi, sq_pi;
	uint64_t activations, msgs, errors, arm_failures;
	uint64_t last_arg;
	uint64_t last_value; /* fxq_post: the device's 8-byte buffer after the work request */
	uint64_t done;	  /* activations that reached their end (atomic: the host watches it) */
	uint64_t t_entry; /* x86: the TSC when the last activation began (bench_flexio_evh) */
};

#endif /* FX_QUEUE_COMMON_H_ */
