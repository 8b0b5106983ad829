/*
 * rdma_done — completions of DOCA RDMA jobs (rdma_job.c posts them).
 *
 * At retrieve, job_exec reads the context's CQs into the jobs' states
 * (rdma_op) and completes the job when its completion has come; a send WQE
 * asks for a CQE one time in sig_every, and a CQE completes the jobs before
 * it too (RC runs them in order); a NOP asks for one behind a waiting job
 * that has none after it. Until then DOCA_ERROR_AGAIN keeps the job queued,
 * and the CQ's event bell (job_bell, the CQ armed) wakes an event-driven work
 * queue when it comes. job_take is retrieve's first look: a job some earlier
 * CQE completed is taken without reading a CQ or a bell.
 */
#include <endian.h>

#include "dc_core.h"
#include "dc_log.h"
#include "doca_error.h"
#include "hw_bell.h"
#include "hw_cq.h"
#include "hw_jobq.h"
#include "hw_prm.h"
#include "rdma_priv.h"

/* What a completion's syndrome means to the program (docs/STATUS.md lists the table). */
static doca_error_t syndrome_error(uint8_t synd)
{
	switch (synd) {
	case HW_CQE_SYNDROME_LOCAL_LENGTH_ERR:
		return DOCA_ERROR_TOO_BIG;
	case HW_CQE_SYNDROME_LOCAL_QP_OP_ERR:
		return DOCA_ERROR_BAD_STATE;
	case HW_CQE_SYNDROME_LOCAL_PROT_ERR:
	case HW_CQE_SYNDROME_LOCAL_ACCESS_ERR:
	case HW_CQE_SYNDROME_MW_BIND_ERR:
	case HW_CQE_SYNDROME_REMOTE_ACCESS_ERR:
		return DOCA_ERROR_NOT_PERMITTED;
	case HW_CQE_SYNDROME_WR_FLUSH_ERR:
		return DOCA_ERROR_NOT_CONNECTED;
	case HW_CQE_SYNDROME_REMOTE_INVAL_REQ_ERR:
		return DOCA_ERROR_INVALID_VALUE;
	case HW_CQE_SYNDROME_REMOTE_OP_ERR:
		return DOCA_ERROR_IO_FAILED;
	case HW_CQE_SYNDROME_TRANSPORT_RETRY_EXC_ERR:
	case HW_CQE_SYNDROME_REMOTE_ABORTED_ERR:
		return DOCA_ERROR_CONNECTION_ABORTED;
	case HW_CQE_SYNDROME_RNR_RETRY_EXC_ERR:
		return DOCA_ERROR_TIME_OUT;
	case HW_CQE_SYNDROME_BAD_RESP_ERR:
		return DOCA_ERROR_DRIVER;
	default:
		return DOCA_ERROR_UNKNOWN;
	}
}

static void cqe_fill(struct rdma_op *op, const struct hw_cqe64 *cqe, int code)
{
	op->done = true;
	op->st = DOCA_SUCCESS;
	switch (code) {
	case HW_CQE_REQ:
		return;
	case HW_CQE_RESP_SEND:
		op->opcode = DOCA_RDMA_OPCODE_RECV_SEND;
		break;
	case HW_CQE_RESP_SEND_IMM:
		op->opcode = DOCA_RDMA_OPCODE_RECV_SEND_WITH_IMM;
		op->imm = cqe->imm_inval_pkey;
		break;
	case HW_CQE_RESP_WR_IMM:
		op->opcode = DOCA_RDMA_OPCODE_RECV_WRITE_WITH_IMM;
		op->imm = cqe->imm_inval_pkey;
		break;
	default:
		op->st = syndrome_error(hw_err_cqe_syndrome(cqe));
		DC_DBG("DOCA RDMA: job failed, syndrome %#x", hw_err_cqe_syndrome(cqe));
		return;
	}
	op->len = hw_cqe_byte_cnt(cqe);
}

/* A send CQE: its WQE's job, and every job before it that asked for none (done, as RC runs them in order). */
static void send_cqe(struct doca_rdma *r, const struct hw_cqe64 *cqe, int code)
{
	uint32_t last = r->sq_done + (uint16_t)(hw_cqe_wqe_counter(cqe) - (uint16_t)r->sq_done), oi;

	for (; r->sq_done != last; r->sq_done++) {
		oi = r->sq_op[r->sq_done & (r->sq_ring - 1)];
		if (oi == RDMA_NOP_OP) {
			r->nops_out--;
		} else {
			r->ops[oi].done = true;
			r->ops[oi].st = DOCA_SUCCESS;
		}
	}
	oi = r->sq_op[last & (r->sq_ring - 1)];
	r->sq_done = last + 1;
	if (oi == RDMA_NOP_OP)
		r->nops_out--;
	else
		cqe_fill(&r->ops[oi], cqe, code);
}

void rdma_poll_cq(struct doca_rdma *r, bool recv)
{
	struct hw_cq *cq = recv ? r->rcq : r->scq;
	uint32_t *ci = recv ? &r->rcq_ci : &r->scq_ci;
	const struct hw_cqe64 *ring = hw_cq_ring(cq), *cqe;
	uint32_t log = hw_cq_log_size(cq);
	int code;

	while ((code = hw_cqe_poll_op(ring, log, *ci, &cqe)) >= 0) {
		/* RC: receives complete in the order they were posted; send CQEs name their WQE (in order too). */
		if (recv)
			cqe_fill(&r->ops[r->rq_op[r->rq_done++ & (r->rq_size - 1)]], cqe, code);
		else
			send_cqe(r, cqe, code);
		hw_cq_set_ci(hw_cq_dbrec(cq), ++*ci);
	}
}

/*
 * Arms the CQ a job waiting in the work queue completes to, so its next CQE
 * rings the CQ's event bell (an event-driven work queue's watch); once per
 * consumer index until the arm fires.
 */
static void arm_cq(struct doca_rdma *r, bool recv)
{
	struct hw_cq *cq = recv ? r->rcq : r->scq;
	uint32_t ci = recv ? r->rcq_ci : r->scq_ci, q = recv ? 1 : 0, word;
	uint32_t seq = hw_bell_seq(hw_cq_event_bell(cq));

	if (r->armed[q] && r->arm_ci[q] == ci && r->arm_seq[q] == seq)
		return;
	word = ((r->arm_sn++ & HW_CQ_ARM_SN_MASK) << HW_CQ_ARM_SN_SHIFT) | (ci & HW_CQ_CI_MASK);
	__atomic_store_n(&hw_cq_dbrec(cq)[HW_CQ_DBR_ARM], htobe32(word), __ATOMIC_RELEASE);
	(void)hw_cq_arm(cq, word);
	r->armed[q] = true;
	r->arm_ci[q] = ci;
	r->arm_seq[q] = seq;
}

/* The event bell of the CQ the job completes to (job_exec armed it when it left the job waiting). */
struct hw_bell *rdma_job_bell(struct doca_ctx *ctx, const struct doca_job *job)
{
	struct doca_rdma *r = rdma_of(ctx);

	return r->cq_bell[((uint32_t)job->flags & RDMA_TAG_RQ) != 0];
}

/* The data segments of a destination chain: the n bytes written, element by element. */
static void account(struct doca_buf *b, uint64_t n)
{
	for (; b != NULL; b = b->next) {
		uint64_t take = rdma_room(b) < n ? rdma_room(b) : n;

		b->data_len = take;
		n -= take;
	}
}

/* The job's state, from the index its work-queue entry carries; NULL for an entry no submit started. */
static struct rdma_op *op_of(struct doca_rdma *r, const struct doca_job *job, bool *recv)
{
	uint32_t tag = (uint32_t)job->flags, idx = tag & RDMA_IDX_MASK & ~(uint32_t)RDMA_TAG_RQ;

	*recv = (tag & RDMA_TAG_RQ) != 0;
	return (tag & RDMA_TAG) && idx < r->nops ? &r->ops[idx] : NULL;
}

/* A completed job: its destination's length, its result, and its state free again. */
static doca_error_t op_finish(struct doca_rdma *r, struct rdma_op *op, bool recv, union doca_data *result)
{
	if (op->st == DOCA_SUCCESS && op->buf != NULL) {
		if (op->exact)
			op->buf->data_len = op->len;
		else
			account(op->buf, op->len);
	}
	if (result->ptr != NULL) {
		struct doca_rdma_result *res = result->ptr;

		*res = (struct doca_rdma_result){ .result = op->st };
		if (recv) {
			res->opcode = (enum doca_rdma_opcode_t)op->opcode;
			res->length = op->st == DOCA_SUCCESS ? op->len : 0;
			res->immediate_data = op->imm;
		}
	}
	op->done = false;
	r->free_ops[r->nfree++] = (uint32_t)(op - r->ops);
	return op->st;
}

doca_error_t rdma_job_exec(struct doca_ctx *ctx, const struct doca_job *job, union doca_data *result)
{
	struct doca_rdma *r = rdma_of(ctx);
	bool recv;
	struct rdma_op *op = op_of(r, job, &recv);

	if (op == NULL) /* not started at submit (a graph node), or a forged entry */
		return (uint32_t)job->flags & RDMA_TAG ? DOCA_ERROR_INVALID_VALUE : DOCA_ERROR_NOT_SUPPORTED;
	if (!op->done) {
		rdma_poll_cq(r, recv);
		if (!op->done && !recv) {
			rdma_post_nop(r);
			rdma_poll_cq(r, false);
		}
		if (!op->done) {
			arm_cq(r, recv); /* a CQE after the look fires it at once */
			return DOCA_ERROR_AGAIN;
		}
	}
	return op_finish(r, op, recv, result);
}

doca_error_t rdma_job_take(struct doca_ctx *ctx, const struct doca_job *job, union doca_data *result)
{
	struct doca_rdma *r = rdma_of(ctx);
	bool recv;
	struct rdma_op *op = op_of(r, job, &recv);

	if (op == NULL || !op->done)
		return DOCA_ERROR_AGAIN;
	return op_finish(r, op, recv, result);
}
