/*
 * softdpu — tag-matching wire headers (rdma-core v44 layout).
 *
 * The header a tag-matching sender puts in front of an eager or rendezvous
 * message, and the rendezvous descriptor that follows it.
 */
#ifndef _TM_TYPES_H
#define _TM_TYPES_H

#include <linux/types.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ibv_tmh_op {
	IBV_TMH_NO_TAG = 0,
	IBV_TMH_RNDV = 1,
	IBV_TMH_FIN = 2,
	IBV_TMH_EAGER = 3,
};

/* Big-endian on the wire. */
struct ibv_tmh {
	uint8_t opcode;		/* enum ibv_tmh_op */
	uint8_t reserved[3];	/* zero */
	__be32 app_ctx;
	__be64 tag;
};

/* Rendezvous: where the receiver reads the payload from. */
struct ibv_rvh {
	__be64 va;
	__be32 rkey;
	__be32 len;
};

#ifdef __cplusplus
}
#endif

#endif /* _TM_TYPES_H */
