/*
 * hw_tm — the tag matching list of an SRQ (ConnectX-5 and later, mlx5's
 * IBV_SRQT_TM).
 *
 * A tag matching SRQ keeps, besides its ring of ordinary receives, a list of
 * tagged receives: index, tag, mask and one buffer each. A SEND arriving on
 * a QP of the SRQ starts with a TMH (16 bytes: opcode, application context,
 * big-endian tag). EAGER and RNDV messages look for the oldest entry whose
 * tag equals the message's under the entry's mask: an EAGER message's data
 * after the TMH goes to its buffer; an RNDV message's RVH (the 16 bytes
 * after the TMH: address, rkey, length) is read from the requester into
 * the buffer, and the requester gets a FIN (a TMH) in its own receive
 * queue. A message that matches nothing (unexpected), a NO_TAG message, or
 * one shorter than a TMH takes an ordinary receive, TMH and all.
 *
 * Phase: the device counts the unexpected messages it delivered; the program
 * reports the count it handled with a list operation's sync flag. While the
 * two differ, tagged messages match nothing (the program may already have
 * matched the unexpected ones against its tags): every one is unexpected.
 *
 * List operations (append, remove, nop) run when posted, as a command; their
 * CQE (NO_PACKET, app TM) goes to the SRQ's CQ when asked for, with the
 * phase count and, for remove, whether the entry was still listed. Every
 * receive of the SRQ completes into that CQ, with app TM and its app_op.
 *
 * The list is in the SRQ's shared block, so requesters of other processes
 * match against it as the owner's do (hw_tm_view).
 *
 * Not yet: more than one buffer per tag, SEND with invalidate into one (the
 * key is not invalidated).
 */
#ifndef HW_TM_H_
#define HW_TM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw_cq.h"
#include "hw_mem.h"

/* As a ConnectX-6 Dx reports its tag matching (ibv_query_device_ex tm_caps). */
#define HW_TM_MAX_TAGS 127
#define HW_TM_MAX_OPS 32768
#define HW_TM_MAX_SGE 1
#define HW_TM_RNDV_HDR 64

#define HW_TMH_BYTES 16
#define HW_RVH_BYTES 16

/* The TMH's opcode (rdma-core's enum ibv_tmh_op). */
enum hw_tmh_op {
	HW_TMH_NO_TAG = 0,
	HW_TMH_RNDV = 1,
	HW_TMH_FIN = 2,
	HW_TMH_EAGER = 3,
};

struct hw_tm;

/* A list operation (mlx5's TM segment). */
enum hw_tm_list_op {
	HW_TM_LIST_NOP,
	HW_TM_LIST_APPEND,
	HW_TM_LIST_REMOVE,
};

struct hw_tm_op {
	enum hw_tm_list_op op;
	bool signaled;	 /* a CQE for it */
	bool sync;	 /* sw_cnt reports the unexpected messages the program handled */
	uint16_t sw_cnt;
	uint16_t index;	 /* APPEND, REMOVE: the entry */
	uint64_t tag, mask;
	uint64_t addr;	 /* APPEND: the buffer (len 0: none) and its key */
	uint32_t len, lkey;
};

/*
 * A list of max_tags entries whose CQEs go to cq (held by the caller); the
 * SRQ created with it (hw_srq_attr.tm) binds its number and places the
 * list in its block (hw_tm_sh_bytes(hw_tm_nent) of it). Destroyed after it.
 */
enum hw_status hw_tm_create(uint32_t max_tags, struct hw_cq *cq, struct hw_tm **out);
uint32_t hw_tm_nent(const struct hw_tm *tm);
size_t hw_tm_sh_bytes(uint32_t nent);
void hw_tm_bind(struct hw_tm *tm, uint32_t srqn, void *mem);
/*
 * Another process's list of nent entries at mem (its SRQ's block, mapped),
 * with a view of its CQ. HW_ERR_LAYOUT when mem does not hold that list;
 * what hw_cq_attach_num says of the CQ. hw_tm_destroy releases both.
 */
enum hw_status hw_tm_view(void *mem, uint32_t nent, uint32_t srqn, struct hw_tm **out);
void hw_tm_destroy(struct hw_tm *tm);
struct hw_cq *hw_tm_cq(const struct hw_tm *tm);

/*
 * Runs a list operation, and writes its CQE if signaled. HW_ERR_INVAL for
 * an index out of the list; HW_ERR_FULL when the CQ had no room (the
 * operation done all the same, the CQ's overrun latched).
 */
enum hw_status hw_tm_post(struct hw_tm *tm, const struct hw_tm_op *op);

/* What an arriving message is (hw_tm_classify). */
enum hw_tm_kind {
	HW_TM_PLAIN,	  /* shorter than a TMH, or a FIN: an ordinary receive, NO_TAG */
	HW_TM_NO_TAG,
	HW_TM_UNEXPECTED,
	HW_TM_MATCHED,	  /* an entry took it (taken out of the list) */
};

struct hw_tm_hit {
	enum hw_tm_kind kind;
	uint8_t op;	       /* the TMH's opcode */
	uint8_t tmh[HW_TMH_BYTES];
	uint8_t rvh[HW_RVH_BYTES];
	uint16_t index;	       /* MATCHED: the entry, and its buffer */
	uint64_t addr;
	uint32_t len, lkey;
};

/*
 * Looks at a message's first bytes (hdr, hdr_len of them: its TMH and RVH
 * when it has them) and, for a tagged one the list matches, takes the
 * entry out. An unexpected one is counted by hw_tm_unexpected once an
 * ordinary receive took it.
 */
void hw_tm_classify(struct hw_tm *tm, const uint8_t *hdr, uint32_t hdr_len, struct hw_tm_hit *hit);
void hw_tm_unexpected(struct hw_tm *tm);

/* The TM part of a receive's CQE: app_op, the entry's index, and the TMH when with_tmh. */
void hw_tm_cqe(const struct hw_tm_hit *hit, uint8_t app_op, bool with_tmh, struct hw_cqe_tm *out);

#endif /* HW_TM_H_ */
