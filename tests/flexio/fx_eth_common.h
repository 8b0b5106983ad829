/*
 * What test_flexio_eth and its device code agree on: two Ethernet SQs and
 * two RQs in DPA memory. The injector SQ sends frames to the handler's MAC;
 * the steering hands them to the handler's RQ; the handler swaps the MACs
 * and sends each back through its SQ; the steering hands them to the
 * collector RQ, which an RPC drains and checks.
 */
#ifndef FX_ETH_COMMON_H_
#define FX_ETH_COMMON_H_

#include <stdint.h>

#define FXE_LOG_Q 6	 /* 64 WQEs in each queue */
#define FXE_LOG_CQ 7	 /* 128 CQEs */
#define FXE_BUF 2048u	 /* bytes of one frame buffer */
#define FXE_MAC_DPA 0x020000000001ull  /* the handler's */
#define FXE_MAC_HOST 0x020000000002ull /* the collector's */

/* One work queue as device code sees it. */
struct fxe_wq {
	uint32_t num, cqn;
	uint64_t ring, dbr, cq_ring, cq_dbr, bufs; /* bufs: 1 << FXE_LOG_Q frame buffers of FXE_BUF */
	uint32_t pi, cq_ci;
};

struct fxe_ctx {
	uint32_t outbox_id, lkey;
	struct fxe_wq h_rq, h_sq, c_rq, i_sq; /* handler's RQ and SQ, collector's RQ, injector's SQ */
	/* the device's counters */
	uint64_t activations, forwarded, injected, collected, bad, next_seq;
};

#endif /* FX_ETH_COMMON_H_ */
