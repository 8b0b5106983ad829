/*
 * What the host and the device code of flexio_pp agree on: the queues of a
 * packet processor and of the traffic source and sink that stand for the
 * far end of the port's wire.
 */
#ifndef FLEXIO_PP_COMMON_H_
#define FLEXIO_PP_COMMON_H_

#include <stdint.h>

#define PP_LOG_Q 6		      /* 64 WQEs in each queue */
#define PP_LOG_CQ 7		      /* 128 CQEs in each CQ */
#define PP_BUF 2048u		      /* bytes of one frame buffer */
#define PP_MAC_DPA 0x020000000001ull  /* the packet processor's MAC */
#define PP_MAC_PEER 0x020000000002ull /* the far end's */

struct pp_wq {
	uint32_t num, cqn;
	uint64_t ring, dbr, cq_ring, cq_dbr, bufs;
	uint32_t pi, cq_ci;
};

struct pp_ctx {
	uint32_t outbox_id, lkey;
	struct pp_wq rq, sq;	       /* the packet processor's */
	struct pp_wq peer_rq, peer_sq; /* the far end's */
	uint64_t activations, forwarded, sent, received, bad;
};

#endif /* FLEXIO_PP_COMMON_H_ */
