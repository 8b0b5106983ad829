/*
 * hw_eth — the emulated device's Ethernet port: send and receive work
 * queues (SQ, RQ) that programs fill in the mlx5 PRM layout (FlexIO device
 * code does), TIRs that name an RQ, and a loopback wire. A frame an SQ sends
 * goes through the transmit steering (hw_steer_tx) to the wire; the wire
 * brings it back to the port, whose receive steering (hw_steer_rx) hands it
 * to an RQ through a TIR or drops it. So one program can both send frames
 * and receive them, as if the port's cable were looped.
 *
 * Numbers: SQs and RQs are numbered by their creator in the device's QP
 * number space (hw_id_alloc(HW_ID_QPN)); TIRs get numbers of their own here.
 * Queues are of this process (not shared between processes).
 *
 * Concurrency: a queue's doorbell is rung by one thread at a time (the
 * program's); frames reach an RQ from any thread (several SQs may send at
 * once), so an RQ takes its WQEs under a lock of its own. Steering tables
 * change under a lock the data path takes for reading.
 */
#ifndef HW_ETH_H_
#define HW_ETH_H_

#include <stdint.h>

#include "hw_cq.h"
#include "hw_mem.h"
#include "hw_rss.h"

#define HW_ETH_FRAME_MAX 9238 /* a 9216-byte MTU with its Ethernet and VLAN headers and FCS room */
#define HW_ETH_FRAME_MIN 14   /* a destination, a source and an ethertype */
#define HW_ETH_LOG_WQ_MAX 15
#define HW_ETH_RQ_LOG_STRIDE_MIN 4 /* one 16-byte data segment per receive WQE */
#define HW_ETH_RQ_LOG_STRIDE_MAX 10

struct hw_eth_sq;
struct hw_eth_rq;

struct hw_eth_sq_attr {
	uint32_t sqn;	  /* low 24 bits: the qpn of its CQEs and what doorbells name */
	struct hw_pd *pd; /* the domain of its data segments' keys */
	struct hw_cq *cq;
	uint32_t log_size; /* 64-byte basic blocks, 0 .. HW_ETH_LOG_WQ_MAX */
	void *ring;	   /* 64 << log_size bytes, 64-byte aligned: the creator's, kept until destroy */
	uint32_t *dbrec;   /* the send counter, one big-endian word (the mlx5 record's second word): the creator's */
};

/* HW_ERR_INVAL on a bad size, NULL or misaligned memory; HW_ERR_NOMEM. Created ready to send. */
enum hw_status hw_eth_sq_create(const struct hw_eth_sq_attr *attr, struct hw_eth_sq **out);
void hw_eth_sq_destroy(struct hw_eth_sq *sq);
uint32_t hw_eth_sq_num(const struct hw_eth_sq *sq);

/*
 * The send doorbell: executes every WQE up to the producer counter pi (low
 * 16 bits, basic blocks) before returning. A WQE is a control segment
 * (opcode SEND 0x0a, its ds count), an Ethernet segment (struct
 * hw_eth_seg: inline_hdr_sz bytes of the frame's start inline from its
 * offset 14, running on into the next 16-byte segments), then data segments
 * (byte count, lkey, address) gathering the rest of the frame. The frame
 * is sent (hw_steer_tx, the wire, hw_steer_rx) and a REQ CQE written when
 * the control segment asks for one (CE). Errors are CQEs (REQ_ERR) and stop
 * the SQ (every later doorbell: HW_ERR_INVAL): LOCAL_PROT_ERR for a key the
 * SQ's domain cannot read, LOCAL_LENGTH_ERR for a frame under
 * HW_ETH_FRAME_MIN or over HW_ETH_FRAME_MAX, LOCAL_QP_OP_ERR for another
 * opcode or a ds count that does not fit. HW_ERR_INVAL (nothing executed)
 * for a counter more than a ring ahead of the consumer.
 */
enum hw_status hw_eth_sq_ring(struct hw_eth_sq *sq, uint32_t pi);

struct hw_pace;
struct hw_pace_stats;
/*
 * Paces the SQ by bucket p (a reference taken; NULL: no pacing, the bucket
 * it had released). A paced SQ's doorbell runs the WQEs the bucket allows
 * and returns; the engine thread runs the rest as tokens come (hw_pace.h).
 * The caller rings no doorbell meanwhile.
 */
void hw_eth_sq_set_pace(struct hw_eth_sq *sq, struct hw_pace *p);
/* The accounting of the SQ's bucket (all 0 when it has none). */
void hw_eth_sq_pace_stats(struct hw_eth_sq *sq, struct hw_pace_stats *s);

struct hw_eth_rq_attr {
	uint32_t rqn; /* low 24 bits: the qpn of its CQEs and what TIRs name */
	struct hw_pd *pd;
	struct hw_cq *cq;
	uint32_t log_size;   /* WQEs, 0 .. HW_ETH_LOG_WQ_MAX */
	uint32_t log_stride; /* bytes of one WQE: HW_ETH_RQ_LOG_STRIDE_MIN .. MAX (16-byte data segments) */
	void *ring;	     /* the creator's, kept until destroy */
	uint32_t *dbrec;     /* the receive counter, one big-endian word (the record's first word), 16 bits used */
};

/*
 * A cyclic RQ: a frame takes the WQE at the consumer counter when the
 * program's receive counter (read from dbrec at each frame) is ahead of it,
 * and is scattered over its data segments in order; a RESP_SEND CQE (byte
 * count, wqe_counter the WQE's index, qpn the RQ's number) follows. No WQE
 * posted: the frame is dropped and counted (out of buffer). A frame larger
 * than the WQE's segments, or a key the RQ's domain cannot write: RESP_ERR
 * CQE (LOCAL_LENGTH_ERR, LOCAL_PROT_ERR), the WQE consumed. Registered by
 * number at create (hw_eth_tir_create finds it).
 */
enum hw_status hw_eth_rq_create(const struct hw_eth_rq_attr *attr, struct hw_eth_rq **out);
/* Unregisters it first: TIRs naming it drop frames from then on. */
void hw_eth_rq_destroy(struct hw_eth_rq *rq);
uint32_t hw_eth_rq_num(const struct hw_eth_rq *rq);

/* A direct TIR: frames steered to it go to RQ rqn. HW_ERR_KEY when no RQ has that number; HW_ERR_NOMEM. */
enum hw_status hw_eth_tir_create(uint32_t rqn, uint32_t *tirn);
/*
 * An indirect TIR (RSS): a frame steered to it goes to RQ rqns[hash &
 * (n - 1)], hash the Toeplitz hash of its fields conf selects (hw_rss.h).
 * n a power of two up to HW_ETH_RSS_TABLE_MAX, else HW_ERR_INVAL;
 * HW_ERR_KEY when one of the RQs does not exist; HW_ERR_NOMEM.
 */
#define HW_ETH_RSS_TABLE_MAX 256
enum hw_status hw_eth_tir_create_rss(const struct hw_rss_conf *conf, const uint32_t *rqns, uint32_t n, uint32_t *tirn);
/* HW_ERR_KEY when no TIR has that number; HW_ERR_INVAL while a steering rule still names it. */
enum hw_status hw_eth_tir_destroy(uint32_t tirn);
/* Whether TIR tirn exists (hw_steer_rule_create refuses one that does not); false while it is being destroyed. */
bool hw_eth_tir_exists(uint32_t tirn);

/* What the port did, since the process started (for tests and benchmarks). */
struct hw_eth_stats {
	uint64_t tx_frames;	  /* sent by SQs onto the wire */
	uint64_t tx_dropped;	  /* dropped by the transmit steering */
	uint64_t rx_frames;	  /* delivered into an RQ's WQE */
	uint64_t rx_dropped;	  /* dropped by the receive steering (a drop rule, or no rule) */
	uint64_t rx_out_of_buffer; /* steered to an RQ that had no WQE posted */
};
void hw_eth_get_stats(struct hw_eth_stats *s);

#endif /* HW_ETH_H_ */
