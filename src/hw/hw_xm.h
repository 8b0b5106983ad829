/*
 * hw_xm — work requests that run on another machine (hw_machine.h).
 *
 * A QP whose peer is on another machine (an RC QP connected with
 * hw_qp_connect_machine, a DCI whose WQE addresses another machine's GID)
 * does not reach the peer's memory itself: the engine gathers what the
 * request carries, hands it to the transport the fabric layer plugs in
 * (hw_xm_set_ops), and scatters what comes back. On the other machine a
 * process of that machine runs the request against the target QP with
 * hw_qp_exec_one, as a requester of that machine would.
 */
#ifndef HW_XM_H_
#define HW_XM_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw_prm.h"
#include "hw_qp.h"

#define HW_XM_AV_BYTES 48 /* a DC WQE's datagram segment */

/* One request, as the requester's WQE says it (host byte order). */
struct hw_xm_req {
	uint32_t machine;  /* the target machine's IPv4 address */
	uint32_t dest;	   /* RC: the destination QPN; DC: 0 (the address is in av) */
	uint32_t src_qpn;  /* the requester */
	uint16_t src_lid;
	uint8_t qp_type;   /* HW_QPT_RC or HW_QPT_DCI */
	uint8_t opcode;	   /* HW_WQE_* */
	uint8_t fm_ce_se;
	uint32_t imm;	   /* immediate (as sent, big-endian bits) or the key a SEND_INVAL frees */
	uint64_t raddr;
	uint32_t rkey;
	uint64_t swap_add, compare;
	uint64_t len;	   /* SEND/WRITE: payload bytes; READ: bytes asked; atomics: 8 */
	uint32_t seq;	   /* RC in flight: the request's place in its QP's order (0: unsequenced) */
	uint32_t epoch;	   /* RC: the connection (a reconnected QP starts a new order) */
	uint8_t av[HW_XM_AV_BYTES];
	uint8_t tm_flags;  /* a tag matching rendezvous SEND: HW_XM_TM_* */
	uint32_t tm_rd_len; /* with HW_XM_TM_RD: the payload's last bytes are the RVH's range, this long */
};

/*
 * A SEND starting with a rendezvous TMH (hw_tm.h) goes to another machine
 * with the RVH's range read from the requester's memory at its end (the
 * responder's tag buffer would be filled by an RDMA READ of it), or a
 * mark that the range was not readable there. The target keeps those bytes
 * out of the message and copies them into the tag that matches.
 */
#define HW_XM_TM_RD 1u
#define HW_XM_TM_RD_FAULT 2u

/* What hw_qp_exec_one_tm takes of it: the range's bytes there (a key of the QP's domain) and the flags. */
struct hw_xm_tm {
	uint64_t addr;
	uint32_t lkey;
	uint32_t len;
	uint8_t flags;
};

/* The requester's outcome (also what hw_qp_exec_one reports). */
struct hw_xm_res {
	uint8_t synd;	   /* 0, or the requester's CQE syndrome */
	bool rnr;	   /* the responder had no receive: nothing was done */
	uint8_t rnr_timer; /* with rnr: the responder's min_rnr_timer */
	uint32_t byte_cnt;
	bool discarded;	   /* not run: an earlier request of the same order was not done (RNR, error) */
	bool tm_fin;	   /* a rendezvous a tag took: the requester's receive queue gets the FIN (its TMH) */
};

/* Requests of one QP that one call of the transport carries at most, back to back. */
#define HW_XM_BATCH 16

/* Whether a request of opcode carries payload (SEND, WRITE) rather than asking for data (READ, atomics). */
static inline bool hw_xm_op_out(uint8_t opcode)
{
	return opcode == HW_WQE_SEND || opcode == HW_WQE_SEND_IMM || opcode == HW_WQE_SEND_INVAL ||
	       opcode == HW_WQE_RDMA_WRITE || opcode == HW_WQE_RDMA_WRITE_IMM;
}

struct hw_xm_ops {
	size_t headroom;     /* bytes the transport wants ahead of each request's payload (its header) */
	size_t rep_headroom; /* bytes ahead of each answer's data */
	/*
	 * Runs req on its machine and waits for the outcome. buf holds headroom
	 * bytes for the transport, then the payload of a SEND or WRITE; rdata
	 * receives a READ's bytes or an atomic's old value, and has headroom
	 * bytes before it for the transport too. An unreachable
	 * machine, a lost peer or a timeout is TRANSPORT_RETRY_EXC_ERR.
	 */
	void (*exec)(const struct hw_xm_req *req, uint8_t *buf, uint8_t *rdata, struct hw_xm_res *res);
	/*
	 * The same without waiting, for 1..HW_XM_BATCH consecutive requests of
	 * an RC QP of up to async_max bytes each, sent together (buf up to
	 * call_max bytes), so a QP keeps
	 * several in flight: buf holds, for each request in turn, headroom
	 * bytes and then its payload (SEND, WRITE); rbuf has room, for each in
	 * turn, for rep_headroom bytes and then its data (READ, atomic). start
	 * returns a handle (NULL: failed at once, res[0..n) say how); test says
	 * whether the requests were answered (1: res[0..n) set, data[i] where
	 * request i's data landed in rbuf or NULL, the handle gone) or not yet
	 * (0). buf and rbuf stay the caller's until then. The target runs a
	 * QP's sequenced requests in order and discards those after one it
	 * could not do.
	 */
	uint64_t async_max;
	uint64_t call_max; /* the most bytes of buf one such call may take */
	void *(*start)(const struct hw_xm_req *reqs, uint32_t n, uint8_t *buf, uint8_t *rbuf, struct hw_xm_res *res);
	int (*test)(void *h, struct hw_xm_res *res, const uint8_t **data);
};

void hw_xm_set_ops(const struct hw_xm_ops *ops);
const struct hw_xm_ops *hw_xm_get_ops(void);

/*
 * Connects an RC qp to QP dest_qpn of another machine, addressed by gid (a
 * port of that machine, which checks it): its WQEs go through the
 * transport (hw_xm_ops). HW_ERR_INVAL for a QP that is not RC.
 */
enum hw_status hw_qp_connect_machine(struct hw_qp *qp, uint32_t machine, uint32_t dest_qpn, const uint8_t gid[16]);

/* A RoCE datagram of another machine, as its sender's port put it on the wire. */
struct hw_xm_ud {
	uint32_t dest;	  /* the destination QPN */
	uint32_t src_qpn; /* the sender */
	uint16_t slid;	  /* the sender's LID (InfiniBand) */
	uint8_t opcode;	  /* HW_WQE_SEND or HW_WQE_SEND_IMM */
	uint8_t fm_ce_se;
	uint32_t imm;	  /* as sent (big-endian bits) */
	const uint8_t *av;  /* the sender's address (HW_XM_AV_BYTES): destination GID, SL, the Q_Key it carries */
	const uint8_t *grh; /* HW_UD_GRH_BYTES: the network header, as the receive's GRH area gets it */
	const uint8_t *data;
	uint32_t len;
};

/*
 * Delivers d to the UD QP of its number on this machine as a datagram from
 * the wire: taken only by a UD QP in RTR or RTS of that Q_Key, on the port
 * whose table has the destination GID (InfiniBand without a GRH: whose LID
 * is the destination's), into its next receive; anything else drops it
 * silently (UD is unreliable). A multicast datagram (dest HW_MCAST_QPN)
 * goes to every QP of this machine attached to the group, each checked so.
 */
void hw_xm_ud_deliver(const struct hw_xm_ud *d);

/* Requests of qp still in flight to another machine (the engine thread and empty polls drive it then). */
bool hw_qp_xm_busy(const struct hw_qp *qp);

/* Whether qp's peer on another machine still answers (a request of no effect, waited for). */
bool hw_eng_xm_probe(struct hw_qp *qp);

/* The engine's in-flight state of an RC QP of another machine's peer (hw_engine.c). */
struct hw_xm_flight *hw_eng_xm_new(void);
/*
 * Puts f (NULL: none) in place of qp's in-flight state, taking the SQ's
 * running right first so no thread uses the old one, which is drained
 * (bounded) and freed.
 */
void hw_eng_xm_replace(struct hw_qp *qp, struct hw_xm_flight *f);
/* Waits (bounded by the transport's deadline) for the requests in flight, then frees f. */
void hw_eng_xm_free(struct hw_xm_flight *f);

/*
 * Runs one WQE (ctrl segment first, len bytes, as in a send ring) as a
 * request of qp, now, outside its ring and without a CQE; a DC WQE's
 * receive CQE at the DCT names rqpn and slid as its requester. The outcome
 * in *res. HW_ERR_INVAL for a malformed WQE or a QP of another type than
 * RC or DCI.
 */
enum hw_status hw_qp_exec_one(struct hw_qp *qp, const void *wqe, uint32_t len, uint32_t rqpn, uint16_t slid,
			      struct hw_xm_res *res);
/* The same for a rendezvous SEND (tm: its range, HW_XM_TM_*); a tag that takes it sets res->tm_fin. */
enum hw_status hw_qp_exec_one_tm(struct hw_qp *qp, const void *wqe, uint32_t len, uint32_t rqpn, uint16_t slid,
				 const struct hw_xm_tm *tm, struct hw_xm_res *res);

#endif /* HW_XM_H_ */
