/*
 * rdma_job — DOCA RDMA jobs as WQEs of the context's QP on the one engine.
 *
 * Submit checks a job (job_check), then writes its WQE and rings the doorbell
 * (job_start): a SEND, WRITE, READ or atomic runs there as a verbs work
 * request does, a RECV is posted to the receive ring for the peer's next
 * SEND or WRITE with immediate. The work queue's copy of the job carries the
 * index of its state (rdma_op) in its flags. At retrieve, job_exec reads the
 * context's CQs into those states and completes the job when its completion
 * has come (a send WQE asks for a CQE one time in sig_every: a CQE completes
 * the jobs before it too, RC running them in order; a NOP asks for one behind
 * a waiting job that has none after it); until then DOCA_ERROR_AGAIN keeps it
 * queued, and the CQ's event bell
 * (job_bell, the CQ armed) wakes an event-driven work queue when it comes.
 * Each send job is one basic block (so the chain limits of rdma_ctx.c).
 * A job's rdma_peer_addr is for DC and UD contexts: an RC context ignores it
 * (DOCA 2.2's samples leave it unset), as it ignores immediate_data of jobs
 * whose type carries none.
 */
#include <endian.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "dc_core.h"
#include "dc_dev.h"
#include "dc_log.h"
#include "doca_error.h"
#include "fab_xm.h"
#include "hw_bell.h"
#include "hw_cq.h"
#include "hw_gid.h"
#include "hw_ids.h"
#include "hw_jobq.h"
#include "hw_machine.h"
#include "hw_prm.h"
#include "hw_qp.h"
#include "rdma_priv.h"

#define RDMA_IDX_MASK 0x0fffffff
#define RDMA_RNR_TIMER 1 /* 0.01 ms: a SEND waits for the peer's receive and retries */
#define RDMA_ACK_TIMEOUT 14 /* 4.096 us << 14: 67 ms a try */
#define RDMA_RETRY_CNT 7

static uint32_t log2_of(uint32_t n)
{
	return (uint32_t)__builtin_ctz(n);
}

/* ---- queues: at doca_ctx_start and stop ---- */

static doca_error_t cq_open(uint32_t n, uint32_t *cqn, struct hw_cq **cq)
{
	struct hw_cq_attr a = { .log_size = log2_of(n), .shared = true };

	if (hw_id_alloc(HW_ID_CQN, cqn) != HW_OK)
		return DOCA_ERROR_NO_MEMORY;
	a.cqn = *cqn;
	if (hw_cq_create(&a, cq) != HW_OK) {
		hw_id_free(HW_ID_CQN, *cqn);
		*cq = NULL;
		return DOCA_ERROR_NO_MEMORY;
	}
	return DOCA_SUCCESS;
}

static void cq_close(uint32_t cqn, struct hw_cq **cq)
{
	if (*cq == NULL)
		return;
	hw_cq_destroy(*cq);
	hw_id_free(HW_ID_CQN, cqn);
	*cq = NULL;
}

/* Receive WQE stride: the chain's data segments rounded up to a power of two (16 bytes each). */
static uint32_t rq_log_stride(const struct doca_rdma *r)
{
	uint32_t segs = 1;

	while (segs < r->recv_chain)
		segs <<= 1;
	return log2_of(segs * (uint32_t)sizeof(struct hw_wqe_data_seg));
}

static doca_error_t qp_open(struct doca_rdma *r)
{
	const struct hw_function *f = dc_dev_fn(r->ctx.devs[0]);
	struct hw_qp_attr a = {
		.type = HW_QPT_RC,
		.pd = dc_dev_pd(r->ctx.devs[0]),
		.send_cq = r->scq,
		.recv_cq = r->rcq,
		.log_sq_size = log2_of(r->sq_ring),
		.log_rq_size = log2_of(r->rq_size),
		.log_rq_stride = rq_log_stride(r),
		.min_rnr_timer = RDMA_RNR_TIMER,
		.rnr_retry = HW_QP_RNR_RETRY_INFINITE,
		.lid = hw_gid_port_lid(f),
		.roce = f->link == HW_LINK_ETH,
		.shared = true,
	};
	struct hw_gid_entry g;

	if (a.log_rq_stride < HW_QP_LOG_RQ_STRIDE_MIN)
		a.log_rq_stride = HW_QP_LOG_RQ_STRIDE_MIN;
	if (!hw_gid_get(f, r->gid_index, &g)) {
		DC_ERR("DOCA RDMA: GID index %u of the device is empty", r->gid_index);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (hw_gid_get(f, 0, &g))
		memcpy(a.gid, g.gid, sizeof(a.gid));
	if (hw_id_alloc(HW_ID_QPN, &r->qpn) != HW_OK)
		return DOCA_ERROR_NO_MEMORY;
	a.qpn = r->qpn;
	/* A named machine takes requests of other machines once it has queues to take them on. */
	if (hw_machine_ipv4(NULL))
		(void)fab_xm_serve();
	if (hw_qp_create(&a, &r->qp) != HW_OK) {
		r->qp = NULL;
		hw_id_free(HW_ID_QPN, r->qpn);
		return DOCA_ERROR_NO_MEMORY;
	}
	r->sq_buf = hw_qp_sq_buf(r->qp);
	r->rq_buf = hw_qp_rq_buf(r->qp);
	r->qp_dbrec = hw_qp_dbrec(r->qp);
	/* The usual RC retries (perftest's, rc_pingpong's): a peer still connecting takes the request within ~0.5 s. */
	if (hw_qp_set_rights(r->qp, rdma_rights(r->permissions) | HW_QP_RIGHTS_STRICT) != HW_OK ||
	    hw_qp_set_retry(r->qp, RDMA_ACK_TIMEOUT, RDMA_RETRY_CNT) != HW_OK || hw_qp_modify(r->qp, HW_QP_INIT) != HW_OK) {
		hw_qp_destroy(r->qp);
		r->qp = NULL;
		hw_id_free(HW_ID_QPN, r->qpn);
		return DOCA_ERROR_DRIVER;
	}
	return DOCA_SUCCESS;
}

void rdma_queues_close(struct doca_rdma *r)
{
	r->cq_bell[0] = r->cq_bell[1] = NULL;
	if (r->qp != NULL) {
		hw_qp_destroy(r->qp);
		hw_id_free(HW_ID_QPN, r->qpn);
		r->qp = NULL;
	}
	cq_close(r->scqn, &r->scq);
	cq_close(r->rcqn, &r->rcq);
	free(r->ops);
	free(r->free_ops);
	free(r->sq_op);
	free(r->rq_op);
	r->ops = NULL;
	r->free_ops = r->sq_op = r->rq_op = NULL;
	r->state = DOCA_RDMA_STATE_RESET;
}

doca_error_t rdma_queues_open(struct doca_rdma *r)
{
	doca_error_t ret;

	r->sq_pi = r->rq_pi = r->sq_done = r->rq_done = r->scq_ci = r->rcq_ci = r->arm_sn = r->sig_pi = 0;
	r->sq_ci_seen = 0;
	r->sig_every = r->sq_size / 4 < RDMA_SIG_EVERY ? r->sq_size / 4 : RDMA_SIG_EVERY;
	r->sq_ring = 2 * r->sq_size;
	r->nops_out = 0;
	if (r->sig_every == 0)
		r->sig_every = 1;
	/* Room for every ring slot's job and as many completed ones not yet retrieved. */
	r->nops = 2 * (r->sq_size + r->rq_size);
	r->ops = calloc(r->nops, sizeof(*r->ops));
	r->free_ops = calloc(r->nops, sizeof(*r->free_ops));
	r->sq_op = calloc(r->sq_ring, sizeof(*r->sq_op));
	r->rq_op = calloc(r->rq_size, sizeof(*r->rq_op));
	if (r->ops == NULL || r->free_ops == NULL || r->sq_op == NULL || r->rq_op == NULL) {
		ret = DOCA_ERROR_NO_MEMORY;
		goto err;
	}
	for (r->nfree = 0; r->nfree < r->nops; r->nfree++)
		r->free_ops[r->nfree] = r->nops - 1 - r->nfree;
	ret = cq_open(r->sq_ring, &r->scqn, &r->scq); /* a CQE for every WQE of the ring when they flush */
	if (ret == DOCA_SUCCESS)
		ret = cq_open(r->rq_size, &r->rcqn, &r->rcq);
	if (ret == DOCA_SUCCESS)
		ret = qp_open(r);
	if (ret != DOCA_SUCCESS)
		goto err;
	r->cq_bell[0] = hw_cq_event_bell(r->scq);
	r->cq_bell[1] = hw_cq_event_bell(r->rcq);
	r->state = DOCA_RDMA_STATE_INIT;
	rdma_desc_build(r);
	return DOCA_SUCCESS;

err:
	DC_ERR("DOCA RDMA: the context's queues could not be made: %s", doca_get_error_name(ret));
	rdma_queues_close(r);
	return ret;
}

/* ---- checks at submit ---- */

static bool live(const struct doca_buf *b)
{
	return b != NULL && b->refcount != 0;
}

static uint32_t chain_len(const struct doca_buf *b)
{
	uint32_t n = 0;

	for (; b != NULL; b = b->next)
		n++;
	return n;
}

static doca_error_t check_send(const struct doca_rdma_job_send *j)
{
	return live(j->src_buff) && chain_len(j->src_buff) <= 3 ? DOCA_SUCCESS : DOCA_ERROR_INVALID_VALUE;
}

static doca_error_t check_rw(const struct doca_rdma_job_read_write *j, bool read)
{
	const struct doca_buf *local = read ? j->dst_buff : j->src_buff;
	const struct doca_buf *remote = read ? j->src_buff : j->dst_buff;

	if (!live(j->dst_buff) || !live(j->src_buff) || chain_len(local) > 2 || remote->next != NULL)
		return DOCA_ERROR_INVALID_VALUE;
	return DOCA_SUCCESS;
}

/*
 * A destination's room: from the start of its data segment to the buffer's
 * end. DOCA 2.2's RDMA writes a destination there (its samples receive into
 * buffers taken by data as well as by address) and sets its data length to
 * what it wrote (account), where DMA appends after the data.
 */
static size_t room(const struct doca_buf *b)
{
	return (size_t)(b->head + b->len - b->data);
}

static doca_error_t check_atomic(const struct doca_rdma_job_atomic *j)
{
	if (!live(j->cmp_or_add_dest_buff) || !live(j->result_buff) || j->result_buff->next != NULL ||
	    room(j->result_buff) < sizeof(uint64_t))
		return DOCA_ERROR_INVALID_VALUE;
	return DOCA_SUCCESS;
}

static doca_error_t check_type(const struct doca_rdma *r, const struct doca_job *job)
{
	switch (job->type) {
	case DOCA_RDMA_JOB_RECV: {
		const struct doca_rdma_job_recv *j = (const void *)job;

		/* No buffer: a receive for a WRITE with immediate (DOCA 2.2's sample posts one so). */
		if (j->dst_buff == NULL)
			return DOCA_SUCCESS;
		return live(j->dst_buff) && chain_len(j->dst_buff) <= r->recv_chain ? DOCA_SUCCESS
										   : DOCA_ERROR_INVALID_VALUE;
	}
	case DOCA_RDMA_JOB_SEND:
	case DOCA_RDMA_JOB_SEND_IMM:
		return check_send((const void *)job);
	case DOCA_RDMA_JOB_READ:
		return check_rw((const void *)job, true);
	case DOCA_RDMA_JOB_WRITE:
	case DOCA_RDMA_JOB_WRITE_IMM:
		return check_rw((const void *)job, false);
	case DOCA_RDMA_JOB_ATOMIC_CMP_SWP:
	case DOCA_RDMA_JOB_ATOMIC_FETCH_ADD:
		return check_atomic((const void *)job);
	default:
		DC_ERR("job type %d is not a DOCA RDMA job", job->type);
		return DOCA_ERROR_INVALID_VALUE;
	}
}

static void poll_cq(struct doca_rdma *r, bool recv);

static bool ring_full(const struct doca_rdma *r, bool recv)
{
	return recv ? r->rq_pi - r->rq_done >= r->rq_size : r->sq_pi - r->sq_done - r->nops_out >= r->sq_size;
}

static doca_error_t rdma_job_check(struct doca_ctx *ctx, const struct doca_job *job, size_t *size)
{
	struct doca_rdma *r = rdma_of(ctx);
	doca_error_t ret;

	/* The copy keeps the header: the rest of the job's state is in its rdma_op. */
	*size = sizeof(struct doca_job) + sizeof(void *);
	ret = check_type(r, job);
	if (ret != DOCA_SUCCESS)
		return ret;
	if (r->state != DOCA_RDMA_STATE_CONNECTED) {
		DC_ERR("DOCA RDMA: a job on a context that is not connected");
		return DOCA_ERROR_BAD_STATE;
	}
	/*
	 * The ring is full (as many jobs in flight as it holds), or so many
	 * completed ones wait for retrieve. A job whose CQE has come holds no
	 * slot, retrieved or not: the CQ is read before refusing.
	 */
	if (ring_full(r, job->type == DOCA_RDMA_JOB_RECV)) {
		poll_cq(r, job->type == DOCA_RDMA_JOB_RECV);
		if (ring_full(r, job->type == DOCA_RDMA_JOB_RECV))
			return DOCA_ERROR_NO_MEMORY;
	}
	if (r->nfree == 0)
		return DOCA_ERROR_NO_MEMORY;
	return DOCA_SUCCESS;
}

/* ---- WQEs ---- */

static uint32_t lkey_of(const struct doca_buf *b, const struct doca_dev *dev)
{
	return dc_mmap_mkey(b->mmap, dev);
}

/* The key a peer's memory is named by: an RDMA export's own key, as doca_buf_get_mkey gives it. */
static uint32_t rkey_of(const struct doca_buf *b, const struct doca_dev *dev)
{
	if (b->mmap->origin == DC_MMAP_FROM_EXPORT_RDMA && b->mmap->devs != NULL)
		return b->mmap->devs[0].rkey;
	return dc_mmap_mkey(b->mmap, dev);
}

/* Data segments of a source chain (its data); the bytes in *len. */
static uint8_t src_segs(struct hw_wqe_data_seg *s, const struct doca_buf *b, const struct doca_dev *dev, uint64_t *len)
{
	uint8_t n = 0;

	*len = 0;
	for (; b != NULL; b = b->next, n++) {
		hw_data_seg_set(&s[n], hw_data_seg_len_of(b->data_len), lkey_of(b, dev), (uint64_t)(uintptr_t)b->data);
		*len += b->data_len;
	}
	return n;
}

/* Data segments of a destination chain: the room after each data segment, want bytes in all. */
static uint8_t dst_segs(struct hw_wqe_data_seg *s, const struct doca_buf *b, const struct doca_dev *dev, uint64_t want)
{
	uint8_t n = 0;

	for (; b != NULL && (want != 0 || n == 0); b = b->next, n++) {
		uint64_t take = room(b) < want ? room(b) : want;

		hw_data_seg_set(&s[n], hw_data_seg_len_of(take), lkey_of(b, dev), (uint64_t)(uintptr_t)b->data);
		want -= take;
	}
	return n;
}

static uint64_t chain_room(const struct doca_buf *b)
{
	uint64_t n = 0;

	for (; b != NULL; b = b->next)
		n += room(b);
	return n;
}

/* Writes the send job's segments after the ctrl segment; the WQE's 16-byte units. */
static int send_segs(struct doca_rdma *r, const struct doca_job *job, uint8_t *seg, struct rdma_op *op,
			      uint8_t *opcode, uint32_t *imm)
{
	const struct doca_dev *dev = r->ctx.devs[0];
	uint64_t len;

	switch (job->type) {
	case DOCA_RDMA_JOB_SEND:
	case DOCA_RDMA_JOB_SEND_IMM: {
		const struct doca_rdma_job_send *j = (const void *)job;

		*opcode = job->type == DOCA_RDMA_JOB_SEND ? HW_WQE_SEND : HW_WQE_SEND_IMM;
		*imm = job->type == DOCA_RDMA_JOB_SEND ? 0 : j->immediate_data;
		return 1 + src_segs((void *)seg, j->src_buff, dev, &len);
	}
	case DOCA_RDMA_JOB_WRITE:
	case DOCA_RDMA_JOB_WRITE_IMM: {
		const struct doca_rdma_job_read_write *j = (const void *)job;
		const struct doca_buf *d = j->dst_buff;

		*opcode = job->type == DOCA_RDMA_JOB_WRITE ? HW_WQE_RDMA_WRITE : HW_WQE_RDMA_WRITE_IMM;
		*imm = job->type == DOCA_RDMA_JOB_WRITE ? 0 : j->immediate_data;
		hw_raddr_seg_set((void *)seg, (uint64_t)(uintptr_t)d->data, rkey_of(d, dev));
		return 2 + src_segs((void *)(seg + 16), j->src_buff, dev, &len);
	}
	case DOCA_RDMA_JOB_READ: {
		const struct doca_rdma_job_read_write *j = (const void *)job;

		if (chain_room(j->dst_buff) < j->src_buff->data_len)
			return 0; /* the destination cannot take the source */
		*opcode = HW_WQE_RDMA_READ;
		op->len = (uint32_t)j->src_buff->data_len;
		hw_raddr_seg_set((void *)seg, (uint64_t)(uintptr_t)j->src_buff->data, rkey_of(j->src_buff, dev));
		return 2 + dst_segs((void *)(seg + 16), j->dst_buff, dev, j->src_buff->data_len);
	}
	default: { /* atomics */
		const struct doca_rdma_job_atomic *j = (const void *)job;
		const struct doca_buf *t = j->cmp_or_add_dest_buff;

		*opcode = job->type == DOCA_RDMA_JOB_ATOMIC_CMP_SWP ? HW_WQE_ATOMIC_CS : HW_WQE_ATOMIC_FA;
		op->len = sizeof(uint64_t);
		hw_raddr_seg_set((void *)seg, (uint64_t)(uintptr_t)t->data, rkey_of(t, dev));
		hw_atomic_seg_set((void *)(seg + 16), j->swap_or_add_data,
				  job->type == DOCA_RDMA_JOB_ATOMIC_CMP_SWP ? j->cmp_data : 0);
		return 3 + dst_segs((void *)(seg + 32), j->result_buff, dev, sizeof(uint64_t));
	}
	}
}

static struct doca_buf *job_local_dst(const struct doca_job *job)
{
	switch (job->type) {
	case DOCA_RDMA_JOB_READ:
		return ((const struct doca_rdma_job_read_write *)job)->dst_buff;
	case DOCA_RDMA_JOB_ATOMIC_CMP_SWP:
	case DOCA_RDMA_JOB_ATOMIC_FETCH_ADD:
		return ((const struct doca_rdma_job_atomic *)job)->result_buff;
	default:
		return NULL;
	}
}

/*
 * The ring slot at sq_pi once its previous WQE has its CQE (ring_full) and a
 * thread of the engine that wrote it (the engine thread resuming an RNR
 * wait) has moved the SQ's consumer counter past it: a moment's wait.
 */
static uint8_t *sq_slot(struct doca_rdma *r)
{
	/* The counter read last time is behind the engine's: read again only when it says "full". */
	while (((r->sq_pi - r->sq_ci_seen) & HW_QP_COUNTER_MASK) >= r->sq_ring) {
		r->sq_ci_seen = hw_qp_sq_next(r->qp);
		if (((r->sq_pi - r->sq_ci_seen) & HW_QP_COUNTER_MASK) >= r->sq_ring)
			sched_yield();
	}
	return r->sq_buf + ((size_t)(r->sq_pi & (r->sq_ring - 1)) << HW_SEND_WQE_SHIFT);
}

/* Rings the doorbell for the WQE just written at sq_pi; false (nothing posted) when the QP refuses it. */
static bool sq_ring(struct doca_rdma *r, uint32_t oi, bool sig)
{
	r->sq_op[r->sq_pi & (r->sq_ring - 1)] = oi;
	r->sq_pi++;
	r->qp_dbrec[HW_QP_DBR_SND] = htobe32(r->sq_pi & HW_QP_COUNTER_MASK);
	if (hw_qp_ring_sq(r->qp, r->sq_pi & HW_QP_COUNTER_MASK) != HW_OK) {
		r->sq_pi--;
		return false;
	}
	if (sig)
		r->sig_pi = r->sq_pi;
	return true;
}

/*
 * A job waits and no WQE after it asks for a CQE: a NOP that does, so the
 * job's completion comes (an event-driven work queue's too). It takes a slot
 * of the ring's second half (rdma_priv.h), never one a job needs.
 */
static void post_nop(struct doca_rdma *r)
{
	uint8_t *wqe;

	if (r->sig_pi == r->sq_pi || r->sq_pi - r->sq_done >= r->sq_ring)
		return;
	wqe = sq_slot(r);
	hw_ctrl_seg_set((void *)wqe, (uint16_t)r->sq_pi, HW_WQE_NOP, 0, r->qpn, HW_WQE_CTRL_CQ_UPDATE, 1, 0);
	if (sq_ring(r, RDMA_NOP_OP, true))
		r->nops_out++;
}

static doca_error_t post_send(struct doca_rdma *r, const struct doca_job *job, struct doca_job *copy)
{
	uint32_t imm = 0, oi = r->free_ops[r->nfree - 1];
	uint8_t *wqe = sq_slot(r);
	struct rdma_op *op = &r->ops[oi];
	bool sig = r->sq_pi == r->sq_done || r->sq_pi - r->sig_pi + 1 >= r->sig_every;
	uint8_t opcode = 0;
	int ds;

	/* Every segment the ds count covers is written whole below; the engine reads no further. */
	*op = (struct rdma_op){ .type = job->type, .buf = job_local_dst(job) };
	ds = send_segs(r, job, wqe + sizeof(struct hw_wqe_ctrl_seg), op, &opcode, &imm);
	if (ds == 0)
		return DOCA_ERROR_INVALID_VALUE;
	hw_ctrl_seg_set((void *)wqe, (uint16_t)r->sq_pi, opcode, 0, r->qpn, sig ? HW_WQE_CTRL_CQ_UPDATE : 0, (uint8_t)ds,
			imm);
	if (!sq_ring(r, oi, sig))
		return DOCA_ERROR_BAD_STATE;
	r->nfree--;
	copy->flags = (int)(RDMA_TAG | oi);
	return DOCA_SUCCESS;
}

static doca_error_t post_recv(struct doca_rdma *r, const struct doca_rdma_job_recv *j, struct doca_job *copy)
{
	uint32_t idx = r->rq_pi & (r->rq_size - 1), stride = rq_log_stride(r);
	struct hw_wqe_data_seg *s;
	uint32_t segs, oi, n = 0;

	if (stride < HW_QP_LOG_RQ_STRIDE_MIN)
		stride = HW_QP_LOG_RQ_STRIDE_MIN;
	segs = (1u << stride) / (uint32_t)sizeof(*s);
	s = (void *)(r->rq_buf + ((size_t)idx << stride));
	for (const struct doca_buf *b = j->dst_buff; b != NULL; b = b->next, n++) {
		/*
		 * The peer's engine writes the receive, in its process: the key
		 * must reach it as an ibv_reg_mr's does (once per mmap and device).
		 */
		if (b->mmap->origin == DC_MMAP_LOCAL)
			dc_mmap_share_key(b->mmap, r->ctx.devs[0]);
		hw_data_seg_set(&s[n], hw_data_seg_len_of(room(b)), lkey_of(b, r->ctx.devs[0]), (uint64_t)(uintptr_t)b->data);
	}
	if (n < segs)
		hw_data_seg_set(&s[n], 0, HW_RQ_INVALID_LKEY, 0);
	oi = r->free_ops[r->nfree - 1];
	r->ops[oi] = (struct rdma_op){ .type = DOCA_RDMA_JOB_RECV, .buf = j->dst_buff };
	r->rq_op[idx] = oi;
	r->rq_pi++;
	if (hw_qp_ring_rq(r->qp, r->rq_pi & HW_QP_COUNTER_MASK) != HW_OK) {
		r->rq_pi--;
		return DOCA_ERROR_BAD_STATE;
	}
	r->nfree--;
	copy->flags = (int)(RDMA_TAG | RDMA_TAG_RQ | oi);
	return DOCA_SUCCESS;
}

static doca_error_t rdma_job_start(struct doca_ctx *ctx, const struct doca_job *job, struct doca_job *copy)
{
	struct doca_rdma *r = rdma_of(ctx);

	if (job->type == DOCA_RDMA_JOB_RECV)
		return post_recv(r, (const void *)job, copy);
	return post_send(r, job, copy);
}

/* ---- completions ---- */

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

static void poll_cq(struct doca_rdma *r, bool recv)
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
static struct hw_bell *rdma_job_bell(struct doca_ctx *ctx, const struct doca_job *job)
{
	struct doca_rdma *r = rdma_of(ctx);

	return r->cq_bell[((uint32_t)job->flags & RDMA_TAG_RQ) != 0];
}

/* The data segments of a destination chain: the n bytes written, element by element. */
static void account(struct doca_buf *b, uint64_t n)
{
	for (; b != NULL; b = b->next) {
		uint64_t take = room(b) < n ? room(b) : n;

		b->data_len = take;
		n -= take;
	}
}

static doca_error_t rdma_job_exec(struct doca_ctx *ctx, const struct doca_job *job, union doca_data *result)
{
	struct doca_rdma *r = rdma_of(ctx);
	uint32_t tag = (uint32_t)job->flags, idx = tag & RDMA_IDX_MASK & ~(uint32_t)RDMA_TAG_RQ;
	bool recv = (tag & RDMA_TAG_RQ) != 0;
	struct rdma_op *op;

	if (!(tag & RDMA_TAG))
		return DOCA_ERROR_NOT_SUPPORTED; /* not started at submit (a graph node) */
	if (idx >= r->nops)
		return DOCA_ERROR_INVALID_VALUE;
	op = &r->ops[idx];
	if (!op->done) {
		poll_cq(r, recv);
		if (!op->done && !recv) {
			post_nop(r);
			poll_cq(r, false);
		}
		if (!op->done) {
			arm_cq(r, recv); /* a CQE after the look fires it at once */
			return DOCA_ERROR_AGAIN;
		}
	}
	if (op->st == DOCA_SUCCESS && op->buf != NULL)
		account(op->buf, op->len);
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
	r->free_ops[r->nfree++] = idx;
	return op->st;
}

static doca_error_t rdma_dev_check(struct doca_ctx *ctx, struct doca_dev *dev)
{
	(void)ctx;
	(void)dev;
	return DOCA_SUCCESS; /* every function of the device has an RDMA port */
}

static doca_error_t rdma_start(struct doca_ctx *ctx)
{
	return rdma_queues_open(rdma_of(ctx));
}

static void rdma_stop(struct doca_ctx *ctx)
{
	rdma_queues_close(rdma_of(ctx));
}

const struct dc_ctx_ops rdma_ops = {
	.name = "RDMA",
	.max_devs = 1,
	.event_driven = true,
	.dev_check = rdma_dev_check,
	.job_check = rdma_job_check,
	.job_exec = rdma_job_exec,
	.job_bell = rdma_job_bell,
	.job_start = rdma_job_start,
	.start = rdma_start,
	.stop = rdma_stop,
};
