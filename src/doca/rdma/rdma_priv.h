/*
 * rdma_priv — the DOCA RDMA context (rdma_ctx.c: life cycle and properties;
 * rdma_conn.c: the connection descriptor; rdma_job.c: jobs as WQEs;
 * rdma_done.c: their completions).
 *
 * A started context owns one RC QP of the device and two CQs (send, receive),
 * all shared, so a peer in another process completes its receives into them
 * and connects to the QP by number, as a verbs QP would.
 */
#ifndef RDMA_PRIV_H_
#define RDMA_PRIV_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dc_core.h"
#include "dc_ctx.h"
#include "doca_rdma.h"

struct hw_cq;
struct hw_qp;

#define RDMA_DEF_QUEUE 64
#define RDMA_MAX_QUEUE 4096
#define RDMA_MAX_RECV_CHAIN 16
#define RDMA_DESC_LEN 64
/* The job copy in the work queue names its state by flags: this bit, and the index below it. */
#define RDMA_TAG 0x40000000
#define RDMA_TAG_RQ 0x20000000
#define RDMA_IDX_MASK 0x0fffffff
#define RDMA_NOP_OP UINT32_MAX
#define RDMA_SIG_EVERY 32 /* at most: a quarter of the send queue */

/* A posted job: what its completion updates and reports. */
struct rdma_op {
	bool done;
	/*
	 * buf is one buffer whose room was checked at submit to take len
	 * (a READ's, an atomic's result): its data length becomes len at
	 * completion, stored without reading the buffer, which the jobs
	 * submitted since have likely pushed out of the CPU's L1. Otherwise
	 * (chains, RECVs: a WRITE with immediate's byte count is not what
	 * landed in the receive's buffer) the length is shared out over the
	 * chain's room.
	 */
	bool exact;
	uint8_t opcode; /* enum doca_rdma_opcode_t */
	struct doca_buf *buf; /* READ / RECV: the destination; atomics: the result buffer */
	doca_error_t st;
	uint32_t len;
	uint32_t imm; /* big-endian, as received */
};

struct doca_rdma {
	struct doca_ctx ctx; /* first: doca_rdma_as_ctx() and back are casts */
	/* properties */
	uint32_t sq_size;
	uint32_t rq_size;
	uint32_t permissions;
	uint32_t gid_index;
	uint32_t recv_chain;
	uint32_t sl;
	enum doca_mtu_size mtu;
	bool grh;
	/* started */
	enum doca_rdma_state state;
	struct hw_cq *scq, *rcq;
	uint32_t scqn, rcqn, qpn;
	struct hw_qp *qp;
	uint8_t *sq_buf, *rq_buf; /* the QP's rings and doorbell record, looked up once at start */
	uint32_t *qp_dbrec;
	uint32_t sq_pi, rq_pi, scq_ci, rcq_ci, arm_sn;
	/* Each CQ's (send 0, receive 1) last arm: its consumer index and its event bell's sequence then. */
	bool armed[2];
	uint32_t arm_ci[2], arm_seq[2];
	uint32_t sq_done, rq_done; /* send (receive) WQEs whose CQE was read: their ring slots are free again */
	/*
	 * Send WQEs ask for a CQE one in sig_every (and when none is in
	 * flight): RC completes in order, so a CQE completes every job before
	 * it too; an error always has its CQE. sig_pi is sq_pi after the last
	 * WQE that asked for one.
	 */
	uint32_t sig_every, sig_pi;
	/*
	 * The QP's send ring is twice the send queue size: the NOPs take
	 * slots of their own, so sq_size jobs in flight always fit
	 * (ring_full counts jobs: the WQEs in flight less nops_out).
	 */
	uint32_t sq_ring, nops_out;
	uint32_t sq_ci_seen; /* the engine's SQ consumer counter as last read (sq_slot) */
	struct hw_bell *cq_bell[2]; /* each CQ's event bell (send 0, receive 1), looked up once at start */
	/*
	 * Job states, taken at submit and given back at retrieve, apart from
	 * the ring slots: a job may be retrieved after later ones (the work
	 * queue puts one that has not completed at its back), and its slot is
	 * free as soon as its CQE was read.
	 */
	struct rdma_op *ops;
	uint32_t nops, nfree;
	uint32_t *free_ops;
	uint32_t *sq_op, *rq_op; /* each ring slot's job state (RDMA_NOP_OP: a NOP asking for a CQE) */
	uint8_t desc[RDMA_DESC_LEN];
};

static inline struct doca_rdma *rdma_of(struct doca_ctx *ctx)
{
	return (struct doca_rdma *)ctx;
}

/*
 * A destination's room: from the start of its data segment to the buffer's
 * end. DOCA 2.2's RDMA writes a destination there (its samples receive into
 * buffers taken by data as well as by address) and sets its data length to
 * what it wrote, where DMA appends after the data.
 */
static inline size_t rdma_room(const struct doca_buf *b)
{
	return (size_t)(b->head + b->len - b->data);
}

/* rdma_conn.c */
void rdma_desc_build(struct doca_rdma *r);
/* rdma_ctx.c */
extern const struct dc_ctx_ops rdma_ops;
/* rdma_job.c: queues at start and stop, jobs posted at submit */
doca_error_t rdma_queues_open(struct doca_rdma *r);
void rdma_queues_close(struct doca_rdma *r);
doca_error_t rdma_job_check(struct doca_ctx *ctx, const struct doca_job *job, size_t *size);
doca_error_t rdma_job_issue(struct doca_ctx *ctx, const struct doca_job *job, struct doca_job *copy);
/* A NOP asking for a CQE behind a waiting job that has none after it. */
void rdma_post_nop(struct doca_rdma *r);
/* rdma_done.c: completions */
void rdma_poll_cq(struct doca_rdma *r, bool recv);
doca_error_t rdma_job_exec(struct doca_ctx *ctx, const struct doca_job *job, union doca_data *result);
doca_error_t rdma_job_take(struct doca_ctx *ctx, const struct doca_job *job, union doca_data *result);
struct hw_bell *rdma_job_bell(struct doca_ctx *ctx, const struct doca_job *job);
/* The device's responder rights of DOCA RDMA permissions. */
uint32_t rdma_rights(uint32_t permissions);

#endif /* RDMA_PRIV_H_ */
