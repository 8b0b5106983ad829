/*
 * rdma_job — DOCA RDMA jobs as WQEs of the context's QP on the one engine
 * (rdma_done.c reads their completions).
 *
 * Submit checks a job and, in the same call (job_issue), writes its WQE and
 * rings the doorbell: a SEND, WRITE, READ or atomic runs there as a verbs
 * work request does, a RECV is posted to the receive ring for the peer's
 * next SEND or WRITE with immediate. The work queue's entry keeps the job's
 * header, with the index of its state (rdma_op) in its flags. A send WQE
 * asks for a CQE one time in sig_every (rdma_priv.h). Each send job is one
 * basic block (so the chain limits of rdma_ctx.c). A job's rdma_peer_addr is
 * for DC and UD contexts: an RC context ignores it (DOCA 2.2's samples leave
 * it unset), as it ignores immediate_data of jobs whose type carries none.
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
#include "hw_cq.h"
#include "hw_gid.h"
#include "hw_ids.h"
#include "hw_machine.h"
#include "hw_prm.h"
#include "hw_qp.h"
#include "rdma_priv.h"

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
	const struct doca_buf *b = j->src_buff;

	return live(b) && (b->next == NULL || chain_len(b) <= 3) ? DOCA_SUCCESS : DOCA_ERROR_INVALID_VALUE;
}

static doca_error_t check_rw(const struct doca_rdma_job_read_write *j, bool read)
{
	const struct doca_buf *local = read ? j->dst_buff : j->src_buff;
	const struct doca_buf *remote = read ? j->src_buff : j->dst_buff;

	/* The walk only for a chain: most jobs name one buffer a side. */
	if (!live(j->dst_buff) || !live(j->src_buff) || remote->next != NULL ||
	    (local->next != NULL && chain_len(local) > 2))
		return DOCA_ERROR_INVALID_VALUE;
	return DOCA_SUCCESS;
}

static uint64_t chain_room(const struct doca_buf *b)
{
	uint64_t n = 0;

	for (; b != NULL; b = b->next)
		n += rdma_room(b);
	return n;
}

/* A READ's destination chain must take the whole source. */
static doca_error_t check_read(const struct doca_rdma_job_read_write *j)
{
	doca_error_t ret = check_rw(j, true);

	if (ret == DOCA_SUCCESS &&
	    (j->dst_buff->next == NULL ? rdma_room(j->dst_buff) : chain_room(j->dst_buff)) < j->src_buff->data_len)
		return DOCA_ERROR_INVALID_VALUE;
	return ret;
}

static doca_error_t check_atomic(const struct doca_rdma_job_atomic *j)
{
	if (!live(j->cmp_or_add_dest_buff) || !live(j->result_buff) || j->result_buff->next != NULL ||
	    rdma_room(j->result_buff) < sizeof(uint64_t))
		return DOCA_ERROR_INVALID_VALUE;
	return DOCA_SUCCESS;
}

static doca_error_t check_recv(const struct doca_rdma *r, const struct doca_rdma_job_recv *j)
{
	/* No buffer: a receive for a WRITE with immediate (DOCA 2.2's sample posts one so). */
	if (j->dst_buff == NULL)
		return DOCA_SUCCESS;
	return live(j->dst_buff) && (j->dst_buff->next == NULL || chain_len(j->dst_buff) <= r->recv_chain)
		       ? DOCA_SUCCESS
		       : DOCA_ERROR_INVALID_VALUE;
}

static doca_error_t check_type(const struct doca_rdma *r, const struct doca_job *job)
{
	switch (job->type) {
	case DOCA_RDMA_JOB_RECV:
		return check_recv(r, (const void *)job);
	case DOCA_RDMA_JOB_SEND:
	case DOCA_RDMA_JOB_SEND_IMM:
		return check_send((const void *)job);
	case DOCA_RDMA_JOB_READ:
		return check_read((const void *)job);
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

static bool ring_full(const struct doca_rdma *r, bool recv)
{
	return recv ? r->rq_pi - r->rq_done >= r->rq_size : r->sq_pi - r->sq_done - r->nops_out >= r->sq_size;
}

/*
 * What every job needs beside valid fields: a connected QP, a free slot of
 * its ring (as many jobs in flight as the ring holds, or so many completed
 * ones waiting for retrieve, refuse it) and a job state. A job whose CQE has
 * come holds no slot, retrieved or not: the CQ is read before refusing.
 */
static doca_error_t check_room(struct doca_rdma *r, bool recv)
{
	if (__builtin_expect(r->state != DOCA_RDMA_STATE_CONNECTED, 0)) {
		DC_ERR("DOCA RDMA: a job on a context that is not connected");
		return DOCA_ERROR_BAD_STATE;
	}
	if (ring_full(r, recv)) {
		rdma_poll_cq(r, recv);
		if (ring_full(r, recv))
			return DOCA_ERROR_NO_MEMORY;
	}
	return r->nfree == 0 ? DOCA_ERROR_NO_MEMORY : DOCA_SUCCESS;
}

/* A graph node's check (submit checks and posts in one call, rdma_job_issue). */
doca_error_t rdma_job_check(struct doca_ctx *ctx, const struct doca_job *job, size_t *size)
{
	struct doca_rdma *r = rdma_of(ctx);
	doca_error_t ret;

	*size = sizeof(struct doca_job) + sizeof(void *); /* the entry copies the header */
	ret = check_type(r, job);
	return ret == DOCA_SUCCESS ? check_room(r, job->type == DOCA_RDMA_JOB_RECV) : ret;
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

/* Data segments of a source chain (its data); their count. */
static inline __attribute__((always_inline)) uint8_t src_segs(struct hw_wqe_data_seg *s, const struct doca_buf *b, const struct doca_dev *dev)
{
	uint8_t n = 0;

	for (; b != NULL; b = b->next, n++)
		hw_data_seg_set(&s[n], hw_data_seg_len_of(b->data_len), lkey_of(b, dev), (uint64_t)(uintptr_t)b->data);
	return n;
}

/* Data segments of a destination chain: the room after each data segment, want bytes in all. */
static inline __attribute__((always_inline)) uint8_t dst_segs(struct hw_wqe_data_seg *s, const struct doca_buf *b, const struct doca_dev *dev, uint64_t want)
{
	uint8_t n = 0;

	/* One buffer, the usual job: no loop. */
	if (b->next == NULL) {
		uint64_t room = rdma_room(b);

		hw_data_seg_set(s, hw_data_seg_len_of(room < want ? room : want), lkey_of(b, dev),
				(uint64_t)(uintptr_t)b->data);
		return 1;
	}
	for (; b != NULL && (want != 0 || n == 0); b = b->next, n++) {
		uint64_t take = rdma_room(b) < want ? rdma_room(b) : want;

		hw_data_seg_set(&s[n], hw_data_seg_len_of(take), lkey_of(b, dev), (uint64_t)(uintptr_t)b->data);
		want -= take;
	}
	return n;
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

/* It takes a slot of the ring's second half (rdma_priv.h), never one a job needs. */
void rdma_post_nop(struct doca_rdma *r)
{
	uint8_t *wqe;

	if (r->sig_pi == r->sq_pi || r->sq_pi - r->sq_done >= r->sq_ring)
		return;
	wqe = sq_slot(r);
	hw_ctrl_seg_set((void *)wqe, (uint16_t)r->sq_pi, HW_WQE_NOP, 0, r->qpn, HW_WQE_CTRL_CQ_UPDATE, 1, 0);
	if (sq_ring(r, RDMA_NOP_OP, true))
		r->nops_out++;
}

/*
 * The send job whose segments are written after the ctrl segment of wqe
 * (ds 16-byte units in all): its ctrl segment, the doorbell, its state.
 * Every segment the ds count covers is written whole; the engine reads no
 * further.
 */
static inline __attribute__((always_inline)) doca_error_t sq_post(struct doca_rdma *r, uint8_t *wqe, uint8_t opcode, uint32_t ds, uint32_t imm,
			    struct rdma_op op, struct doca_job *copy)
{
	uint32_t oi = r->free_ops[r->nfree - 1];
	bool sig = r->sq_pi == r->sq_done || r->sq_pi - r->sig_pi + 1 >= r->sig_every;

	r->ops[oi] = op;
	hw_ctrl_seg_set((void *)wqe, (uint16_t)r->sq_pi, opcode, 0, r->qpn, sig ? HW_WQE_CTRL_CQ_UPDATE : 0, (uint8_t)ds,
			imm);
	if (!sq_ring(r, oi, sig))
		return DOCA_ERROR_BAD_STATE;
	r->nfree--;
	copy->flags = (int)(RDMA_TAG | oi);
	return DOCA_SUCCESS;
}

#define SEG0 sizeof(struct hw_wqe_ctrl_seg)

/* The WQE slot of a send job whose own checks gave *ret, once the QP has room for it; NULL: refused, *ret why. */
static inline uint8_t *sq_begin(struct doca_rdma *r, doca_error_t *ret)
{
	if (*ret == DOCA_SUCCESS)
		*ret = check_room(r, false);
	return *ret == DOCA_SUCCESS ? sq_slot(r) : NULL;
}

static doca_error_t issue_send(struct doca_rdma *r, const struct doca_rdma_job_send *j, struct doca_job *copy)
{
	doca_error_t ret = check_send(j);
	bool imm = j->base.type == DOCA_RDMA_JOB_SEND_IMM;
	uint8_t *wqe = sq_begin(r, &ret);
	uint32_t ds;

	if (wqe == NULL)
		return ret;
	ds = 1 + src_segs((void *)(wqe + SEG0), j->src_buff, r->ctx.devs[0]);
	return sq_post(r, wqe, imm ? HW_WQE_SEND_IMM : HW_WQE_SEND, ds, imm ? j->immediate_data : 0,
		       (struct rdma_op){ 0 }, copy);
}

static doca_error_t issue_write(struct doca_rdma *r, const struct doca_rdma_job_read_write *j, struct doca_job *copy)
{
	const struct doca_dev *dev = r->ctx.devs[0];
	doca_error_t ret = check_rw(j, false);
	bool imm = j->base.type == DOCA_RDMA_JOB_WRITE_IMM;
	uint8_t *wqe = sq_begin(r, &ret);
	uint32_t ds;

	if (wqe == NULL)
		return ret;
	hw_raddr_seg_set((void *)(wqe + SEG0), (uint64_t)(uintptr_t)j->dst_buff->data, rkey_of(j->dst_buff, dev));
	ds = 2 + src_segs((void *)(wqe + SEG0 + 16), j->src_buff, dev);
	return sq_post(r, wqe, imm ? HW_WQE_RDMA_WRITE_IMM : HW_WQE_RDMA_WRITE, ds, imm ? j->immediate_data : 0,
		       (struct rdma_op){ 0 }, copy);
}

static doca_error_t issue_read(struct doca_rdma *r, const struct doca_rdma_job_read_write *j, struct doca_job *copy)
{
	const struct doca_dev *dev = r->ctx.devs[0];
	const struct doca_buf *s = j->src_buff;
	doca_error_t ret = check_read(j);
	uint8_t *wqe = sq_begin(r, &ret);
	uint32_t ds;

	if (wqe == NULL)
		return ret;
	hw_raddr_seg_set((void *)(wqe + SEG0), (uint64_t)(uintptr_t)s->data, rkey_of(s, dev));
	ds = 2 + dst_segs((void *)(wqe + SEG0 + 16), j->dst_buff, dev, s->data_len);
	return sq_post(r, wqe, HW_WQE_RDMA_READ, ds, 0,
		       (struct rdma_op){ .buf = j->dst_buff, .len = (uint32_t)s->data_len, .exact = j->dst_buff->next == NULL },
		       copy);
}

static doca_error_t issue_atomic(struct doca_rdma *r, const struct doca_rdma_job_atomic *j, struct doca_job *copy)
{
	const struct doca_dev *dev = r->ctx.devs[0];
	const struct doca_buf *t = j->cmp_or_add_dest_buff;
	bool cas = j->base.type == DOCA_RDMA_JOB_ATOMIC_CMP_SWP;
	doca_error_t ret = check_atomic(j);
	uint8_t *wqe = sq_begin(r, &ret);
	uint32_t ds;

	if (wqe == NULL)
		return ret;
	hw_raddr_seg_set((void *)(wqe + SEG0), (uint64_t)(uintptr_t)t->data, rkey_of(t, dev));
	hw_atomic_seg_set((void *)(wqe + SEG0 + 16), j->swap_or_add_data, cas ? j->cmp_data : 0);
	ds = 3 + dst_segs((void *)(wqe + SEG0 + 32), j->result_buff, dev, sizeof(uint64_t));
	return sq_post(r, wqe, cas ? HW_WQE_ATOMIC_CS : HW_WQE_ATOMIC_FA, ds, 0,
		       (struct rdma_op){ .buf = j->result_buff, .len = sizeof(uint64_t), .exact = true },
		       copy);
}

static doca_error_t issue_recv(struct doca_rdma *r, const struct doca_rdma_job_recv *j, struct doca_job *copy)
{
	uint32_t idx = r->rq_pi & (r->rq_size - 1), stride = rq_log_stride(r);
	doca_error_t ret = check_recv(r, j);
	struct hw_wqe_data_seg *s;
	uint32_t segs, oi, n = 0;

	if (ret == DOCA_SUCCESS)
		ret = check_room(r, true);
	if (ret != DOCA_SUCCESS)
		return ret;
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
		hw_data_seg_set(&s[n], hw_data_seg_len_of(rdma_room(b)), lkey_of(b, r->ctx.devs[0]),
				(uint64_t)(uintptr_t)b->data);
	}
	if (n < segs)
		hw_data_seg_set(&s[n], 0, HW_RQ_INVALID_LKEY, 0);
	oi = r->free_ops[r->nfree - 1];
	r->ops[oi] = (struct rdma_op){ .buf = j->dst_buff };
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

doca_error_t rdma_job_issue(struct doca_ctx *ctx, const struct doca_job *job, struct doca_job *copy)
{
	struct doca_rdma *r = rdma_of(ctx);

	switch (job->type) {
	case DOCA_RDMA_JOB_WRITE:
	case DOCA_RDMA_JOB_WRITE_IMM:
		return issue_write(r, (const void *)job, copy);
	case DOCA_RDMA_JOB_READ:
		return issue_read(r, (const void *)job, copy);
	case DOCA_RDMA_JOB_SEND:
	case DOCA_RDMA_JOB_SEND_IMM:
		return issue_send(r, (const void *)job, copy);
	case DOCA_RDMA_JOB_ATOMIC_CMP_SWP:
	case DOCA_RDMA_JOB_ATOMIC_FETCH_ADD:
		return issue_atomic(r, (const void *)job, copy);
	case DOCA_RDMA_JOB_RECV:
		return issue_recv(r, (const void *)job, copy);
	default:
		DC_ERR("job type %d is not a DOCA RDMA job", job->type);
		return DOCA_ERROR_INVALID_VALUE;
	}
}
