/*
 * vb_raw — raw packet QPs (IBV_QPT_RAW_PACKET) on the Ethernet port: an
 * ibv_qp whose send and receive queues are the port's SQ and RQ (hw_eth.h),
 * so the frames it sends go out on the looped wire and come back through
 * the receive steering, which flows (vb_flow.c) point at the QP's TIR.
 *
 * Sized as mlx5 sizes them (vb_qp.c); the WQEs are mlx5's: a control
 * segment, an Ethernet segment carrying the frame's first 18 bytes inline,
 * then data segments (or inline data) for the rest. The state machine is
 * the kernel's for raw packet QPs: RESET to INIT needs the port and nothing
 * else, INIT to RTR and RTR to RTS take no attributes. Receives are handed
 * to the device (the RQ's counter published) from RTR on and sends rung
 * from RTS on; what was posted before runs at the move. RESET makes fresh
 * queues; ERR stops both (no flush completions are written).
 */
#include <endian.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hw_eth.h"
#include "hw_pace.h"
#include "hw_pp.h"
#include "vb_export.h"
#include "vb_int.h"

#define RAW_L2_INLINE 18 /* MLX5_ETH_L2_INLINE_HEADER_SIZE: destination, source, VLAN tag */
#define RAW_DB_RCV 0
#define RAW_DB_SND 1
#define RAW_MASK_KNOWN ((IBV_QP_RATE_LIMIT << 1) - 1)

struct vb_raw {
	struct hw_eth_sq *sq; /* NULL in ERR */
	struct hw_eth_rq *rq;
	uint32_t tirn; /* the direct TIR flows name; an RSS QP's indirect one */
	struct ibv_rwq_ind_table *ind; /* an RSS QP's table (vb_rss.c): no queues then */
	_Atomic uint32_t flows;
	/* Its pacing (vb_pace.c): the rate entry it holds (0: none) and the schedule leaf's bucket. */
	uint16_t pp_index;
	struct hw_pp_rate rate;
	struct hw_pace *leaf;
	_Alignas(64) uint32_t dbrec[2]; /* what the device reads: [0] receive counter, [1] send counter */
};

int vb_raw_attr_ok(struct vb_context *ctx, const struct ibv_qp_init_attr_ex *a)
{
	if (!ctx->dev->roce)
		return EINVAL; /* an InfiniBand port carries no Ethernet frames */
	if (a->srq != NULL)
		return EINVAL;
	/* Blocking its own multicast loopback is mlx5's on any type; Ethernet offloads (FCS scatter, VLAN stripping, ...) it has not. */
	if ((a->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    (a->create_flags & ~(uint32_t)IBV_QP_CREATE_BLOCK_SELF_MCAST_LB))
		return EOPNOTSUPP;
	if (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		return EOPNOTSUPP; /* ibv_wr_* builds IB WQEs; raw frames go through ibv_post_send */
	return 0;
}

static uint32_t raw_log2(uint32_t n)
{
	uint32_t l = 0;

	while ((1u << l) < n)
		l++;
	return l;
}

/* The port's SQ and RQ over the QP's rings, numbered by the QP's number. */
static int raw_queues_create(struct vb_qp *qp)
{
	struct vb_raw *r = qp->raw;
	struct hw_eth_sq_attr sa = {
		.sqn = qp->qpx.qp_base.qp_num,
		.pd = qp->pd->hw,
		.cq = qp->scq->hw,
		.log_size = raw_log2(qp->sq_wqe_cnt),
		.ring = qp->sq_buf,
		.dbrec = &r->dbrec[RAW_DB_SND],
	};
	struct hw_eth_rq_attr ra = {
		.rqn = qp->qpx.qp_base.qp_num,
		.pd = qp->pd->hw,
		.cq = qp->rcq->hw,
		.log_size = raw_log2(qp->rq_wqe_cnt),
		.log_stride = qp->rq_shift,
		.ring = qp->rq_buf,
		.dbrec = &r->dbrec[RAW_DB_RCV],
	};

	r->dbrec[RAW_DB_RCV] = 0;
	r->dbrec[RAW_DB_SND] = 0;
	if (hw_eth_sq_create(&sa, &r->sq) != HW_OK) {
		r->sq = NULL;
		return ENOMEM;
	}
	if (hw_eth_rq_create(&ra, &r->rq) != HW_OK) {
		r->rq = NULL;
		return ENOMEM;
	}
	return 0;
}

/* The rate and the schedule leaf go with the queues (RESET, ERR, destroy). */
static void raw_pace_drop(struct vb_raw *r)
{
	if (r->pp_index != 0)
		(void)hw_pp_free(r->pp_index);
	r->pp_index = 0;
	memset(&r->rate, 0, sizeof(r->rate));
	hw_pace_put(r->leaf); /* NULL is fine */
	r->leaf = NULL;
}

static void raw_queues_destroy(struct vb_raw *r)
{
	raw_pace_drop(r);
	hw_eth_rq_destroy(r->rq); /* NULL is fine */
	r->rq = NULL;
	if (r->sq != NULL)
		hw_eth_sq_destroy(r->sq);
	r->sq = NULL;
}

int vb_raw_hw_create(struct vb_context *ctx, struct vb_qp *qp, const struct ibv_qp_init_attr_ex *a)
{
	size_t sq_bytes = (size_t)qp->sq_wqe_cnt * HW_SEND_WQE_BB;
	size_t rq_bytes = (size_t)qp->rq_wqe_cnt << qp->rq_shift;
	enum hw_status st;
	uint32_t qpn;
	int rc;

	(void)ctx;
	if (qp->sq_wqe_cnt > (1u << HW_ETH_LOG_WQ_MAX) || qp->rq_wqe_cnt > (1u << HW_ETH_LOG_WQ_MAX) ||
	    qp->rq_shift < HW_ETH_RQ_LOG_STRIDE_MIN || qp->rq_shift > HW_ETH_RQ_LOG_STRIDE_MAX)
		return EINVAL;
	qp->raw = aligned_alloc(64, sizeof(*qp->raw));
	if (qp->raw == NULL)
		return ENOMEM;
	memset(qp->raw, 0, sizeof(*qp->raw));
	qp->sq_buf = aligned_alloc(HW_SEND_WQE_BB, sq_bytes);
	qp->rq_buf = aligned_alloc(HW_SEND_WQE_BB, rq_bytes < HW_SEND_WQE_BB ? HW_SEND_WQE_BB : rq_bytes);
	if (qp->sq_buf == NULL || qp->rq_buf == NULL)
		return ENOMEM;
	memset(qp->sq_buf, 0, sq_bytes);
	st = hw_id_alloc(HW_ID_QPN, &qpn);
	if (st != HW_OK)
		return vb_id_errno(st);
	qp->qpx.qp_base.qp_num = qpn;
	/* The queues need the QP's PD and CQs, which vb_qp_create sets after this: take them here. */
	qp->pd = vb_pd_of(a->pd);
	qp->scq = vb_cq_of(a->send_cq);
	qp->rcq = vb_cq_of(a->recv_cq);
	qp->dbrec = qp->raw->dbrec;
	rc = raw_queues_create(qp);
	if (rc != 0)
		return rc;
	if (hw_eth_tir_create(qpn, &qp->raw->tirn) != HW_OK) {
		qp->raw->tirn = 0;
		return ENOMEM;
	}
	return 0;
}

/* Undoes vb_raw_hw_create, whatever part of it was done (vb_qp_free calls it). */
void vb_raw_free(struct vb_qp *qp)
{
	struct vb_raw *r = qp->raw;

	if (r->tirn != 0)
		(void)hw_eth_tir_destroy(r->tirn);
	raw_queues_destroy(r);
	free(qp->sq_buf);
	free(qp->rq_buf);
	qp->sq_buf = NULL;
	qp->rq_buf = NULL;
	qp->dbrec = NULL;
	free(r);
	qp->raw = NULL;
}

/* An RSS QP's part: its indirect TIR and table, no queues. */
int vb_raw_rss_new(struct vb_qp *qp, uint32_t tirn, struct ibv_rwq_ind_table *ind)
{
	qp->raw = aligned_alloc(64, sizeof(*qp->raw));
	if (qp->raw == NULL)
		return ENOMEM;
	memset(qp->raw, 0, sizeof(*qp->raw));
	qp->raw->tirn = tirn;
	qp->raw->ind = ind;
	return 0;
}

struct ibv_rwq_ind_table *vb_raw_rss_ind(const struct vb_qp *qp)
{
	return qp->raw != NULL ? qp->raw->ind : NULL;
}

bool vb_raw_busy(struct vb_qp *qp)
{
	return atomic_load(&qp->raw->flows) != 0;
}

uint32_t vb_raw_tirn(const struct vb_qp *qp)
{
	return qp->raw->tirn;
}

void vb_raw_flow_hold(struct vb_qp *qp, bool hold)
{
	if (hold)
		atomic_fetch_add(&qp->raw->flows, 1);
	else
		atomic_fetch_sub(&qp->raw->flows, 1);
}

/* ---- State machine ---- */

/* The kernel's qp_state_table for IB_QPT_RAW_PACKET: required and optional attributes. */
static int raw_mask_ok(enum ibv_qp_state cur, enum ibv_qp_state to, int mask)
{
	int req = 0, opt = 0;

	if (to == IBV_QPS_RESET || to == IBV_QPS_ERR)
		opt = 0;
	else if (cur == IBV_QPS_RESET && to == IBV_QPS_INIT)
		req = IBV_QP_PORT;
	else if (cur == IBV_QPS_INIT && to == IBV_QPS_INIT)
		opt = IBV_QP_PORT;
	else if (cur == IBV_QPS_INIT && to == IBV_QPS_RTR)
		opt = 0;
	else if ((cur == IBV_QPS_RTR || cur == IBV_QPS_RTS) && to == IBV_QPS_RTS)
		opt = IBV_QP_RATE_LIMIT; /* the kernel's table: a raw QP's rate, moving to or in RTS */
	else
		return EINVAL;
	if ((mask & req) != req || (mask & ~(req | opt | IBV_QP_STATE)))
		return EINVAL;
	return 0;
}

static void raw_publish_recv(struct vb_qp *qp)
{
	__atomic_store_n(&qp->raw->dbrec[RAW_DB_RCV], htobe32(qp->rq_head & 0xffffu), __ATOMIC_RELEASE);
}

static void raw_ring_send(struct vb_qp *qp)
{
	if (qp->raw->sq == NULL)
		return;
	__atomic_store_n(&qp->raw->dbrec[RAW_DB_SND], htobe32(qp->sq_cur_post & 0xffffu), __ATOMIC_RELEASE);
	(void)hw_eth_sq_ring(qp->raw->sq, qp->sq_cur_post & 0xffffu); /* a failed WQE's error CQE says why */
}

static int raw_reset(struct vb_qp *qp)
{
	uint32_t qpn = qp->qpx.qp_base.qp_num;

	raw_queues_destroy(qp->raw);
	qp->sq_cur_post = 0;
	qp->sq_head = 0;
	atomic_store(&qp->sq_tail, 0);
	qp->rq_head = 0;
	atomic_store(&qp->rq_tail, 0);
	vb_cq_clean(qp->rcq, qpn, NULL);
	if (qp->scq != qp->rcq)
		vb_cq_clean(qp->scq, qpn, NULL);
	return raw_queues_create(qp);
}

int vb_raw_modify(struct vb_qp *qp, struct ibv_qp_attr *a, int mask)
{
	enum ibv_qp_state cur = qp->qpx.qp_base.state, to;
	int rc;

	if (qp->raw->ind != NULL)
		return EOPNOTSUPP; /* an RSS QP: libmlx5 modifies none */
	if (mask & ~RAW_MASK_KNOWN)
		return EINVAL;
	if ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state != cur)
		return EINVAL;
	to = (mask & IBV_QP_STATE) ? a->qp_state : cur;
	if ((unsigned int)to > IBV_QPS_ERR || to == IBV_QPS_SQD || to == IBV_QPS_SQE)
		return EINVAL;
	rc = raw_mask_ok(cur, to, mask);
	if (rc == 0 && (mask & IBV_QP_PORT) && a->port_num != VB_PORT)
		rc = EINVAL;
	/* A rate outside packet_pacing_caps is mlx5_rl_add_rate's EINVAL; 0 is no limit. */
	if (rc == 0 && (mask & IBV_QP_RATE_LIMIT))
		rc = vb_pace_rate_ok(a->rate_limit);
	if (rc != 0)
		return rc;
	/* Only to RTS (raw_mask_ok): the entry is taken before the move, so a full table leaves the QP as it was. */
	if ((mask & IBV_QP_RATE_LIMIT) && (a->rate_limit != qp->raw->rate.rate_kbps || qp->raw->rate.burst != 0)) {
		rc = vb_raw_set_rate(qp, a->rate_limit, 0, 0);
		if (rc != 0)
			return rc;
	}
	if (to == IBV_QPS_RESET && cur != IBV_QPS_RESET) {
		rc = raw_reset(qp);
		if (rc != 0)
			return rc;
	} else if (to == IBV_QPS_ERR) {
		raw_queues_destroy(qp->raw); /* nothing more is sent or received */
	}
	qp->qpx.qp_base.state = to;
	qp->attr.qp_state = to;
	if (to == IBV_QPS_RTR || to == IBV_QPS_RTS)
		raw_publish_recv(qp);
	if (to == IBV_QPS_RTS && cur != IBV_QPS_RTS) {
		vb_sq_lock(qp);
		raw_ring_send(qp); /* work posted before RTS runs now */
		vb_sq_unlock(qp);
	}
	return 0;
}

/* ---- Pacing ---- */

/* The SQ's bucket: the entry's rate (kbit/s = 125 bytes/s) under the leaf's; none when neither is set. */
static int raw_pace_apply(struct vb_qp *qp)
{
	struct vb_raw *r = qp->raw;
	struct hw_pace *p = NULL;

	if (r->pp_index != 0 || r->leaf != NULL) {
		if (hw_pace_create((uint64_t)r->rate.rate_kbps * 125u, r->rate.burst, r->leaf, &p) != HW_OK)
			return ENOMEM;
	}
	vb_sq_lock(qp); /* no doorbell while the bucket changes */
	hw_eth_sq_set_pace(r->sq, p);
	vb_sq_unlock(qp);
	hw_pace_put(p);
	return 0;
}

int vb_raw_set_rate(struct vb_qp *qp, uint32_t rate_kbps, uint32_t burst, uint16_t typical)
{
	struct vb_raw *r = qp->raw;
	struct hw_pp_rate want = { .rate_kbps = rate_kbps, .burst = burst, .typical = typical };
	uint8_t ctx[HW_PP_CTX_BYTES];
	uint16_t index = 0;

	if (r->sq == NULL)
		return EINVAL;
	if (rate_kbps != 0) {
		hw_pp_ctx(&want, ctx);
		/* A full table is mlx5_rl_add_rate's ENOSPC. */
		if (hw_pp_alloc(ctx, sizeof(ctx), false, &index) != HW_OK)
			return ENOSPC;
	}
	if (r->pp_index != 0)
		(void)hw_pp_free(r->pp_index);
	r->pp_index = index;
	r->rate = want;
	return raw_pace_apply(qp);
}

int vb_raw_set_leaf(struct vb_qp *qp, struct hw_pace *leaf)
{
	struct vb_raw *r = qp->raw;

	if (r == NULL || r->sq == NULL)
		return EOPNOTSUPP; /* an RSS QP, or not in RTS */
	if (leaf != NULL)
		hw_pace_get(leaf);
	hw_pace_put(r->leaf);
	r->leaf = leaf;
	return raw_pace_apply(qp);
}

void vb_raw_pace_stats(struct vb_qp *qp, struct hw_pace_stats *s)
{
	if (qp->raw == NULL || qp->raw->sq == NULL) {
		*s = (struct hw_pace_stats){ 0 };
		return;
	}
	hw_eth_sq_pace_stats(qp->raw->sq, s);
}

/* ---- Posting ---- */

/* Copies n bytes from offset off of the gather list into p (the list holds at least off + n). */
static void raw_gather(const struct ibv_sge *sg, int nsge, uint32_t off, uint8_t *p, uint32_t n)
{
	for (int i = 0; i < nsge && n != 0; i++) {
		uint32_t len = sg[i].length, k;

		if (off >= len) {
			off -= len;
			continue;
		}
		k = len - off < n ? len - off : n;
		memcpy(p, (const uint8_t *)(uintptr_t)sg[i].addr + off, k);
		p += k;
		n -= k;
		off = 0;
	}
}

/* The rest of the frame after off bytes: inline data or data segments at p; bytes written or -errno. */
static int raw_body(const struct vb_qp *qp, const struct ibv_send_wr *wr, uint32_t off, uint64_t total, uint8_t *p)
{
	uint32_t rest = (uint32_t)(total - off), used = 0;

	if (wr->send_flags & IBV_SEND_INLINE) {
		if (rest > qp->max_inline)
			return -ENOMEM;
		if (rest == 0)
			return 0;
		raw_gather(wr->sg_list, wr->num_sge, off, p + sizeof(struct hw_wqe_inl_seg), rest);
		hw_inl_seg_set((struct hw_wqe_inl_seg *)(void *)p, rest);
		return (int)((sizeof(struct hw_wqe_inl_seg) + rest + 15) & ~15u);
	}
	for (int i = 0; i < wr->num_sge; i++) {
		uint32_t len = wr->sg_list[i].length;
		uint64_t addr = wr->sg_list[i].addr;

		if (off >= len) {
			off -= len;
			continue;
		}
		hw_data_seg_set((void *)(p + used), len - off, wr->sg_list[i].lkey, addr + off);
		used += sizeof(struct hw_wqe_data_seg);
		off = 0;
	}
	return (int)used;
}

/* One raw frame's WQE in w: ctrl, Ethernet segment with the L2 header inline, the rest; its size or -errno. */
static int raw_build(struct vb_qp *qp, const struct ibv_send_wr *wr, uint8_t *w)
{
	struct hw_eth_seg *eth = (void *)(w + sizeof(struct hw_wqe_ctrl_seg));
	uint64_t total = 0;
	size_t off = sizeof(struct hw_wqe_ctrl_seg) + sizeof(*eth) + HW_WQE_DS_BYTES;
	int n;

	for (int i = 0; i < wr->num_sge; i++)
		total += wr->sg_list[i].length;
	if (total < RAW_L2_INLINE)
		return -EINVAL; /* mlx5: the inline header must come from the frame */
	memset(eth, 0, sizeof(*eth) + HW_WQE_DS_BYTES);
	eth->inline_hdr_sz = htobe16(RAW_L2_INLINE);
	raw_gather(wr->sg_list, wr->num_sge, 0, eth->inline_hdr_start, RAW_L2_INLINE);
	n = raw_body(qp, wr, RAW_L2_INLINE, total, w + off);
	if (n < 0)
		return n;
	off += (size_t)n;
	hw_ctrl_seg_set((void *)w, (uint16_t)qp->sq_cur_post, HW_WQE_SEND, 0, qp->qpx.qp_base.qp_num,
			vb_fm_ce_se(qp, wr->send_flags, 0), (uint8_t)(off / HW_WQE_DS_BYTES), 0);
	return (int)off;
}

static int raw_send_check(const struct vb_qp *qp, const struct ibv_send_wr *wr, uint32_t nreq)
{
	if (wr->opcode != IBV_WR_SEND)
		return EINVAL; /* a raw QP sends frames, nothing else */
	if (vb_sq_full(qp, nreq))
		return ENOMEM;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq_max_gs)
		return ENOMEM;
	return 0;
}

int vb_raw_post_send(struct vb_qp *qp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	_Alignas(16) uint8_t w[VB_MAX_SQ_DESC];
	enum ibv_qp_state state = qp->qpx.qp_base.state;
	uint32_t nreq = 0;
	int err = 0;

	if (state == IBV_QPS_RESET && wr != NULL) {
		*bad = wr;
		return wr->opcode == IBV_WR_SEND || qp->raw->ind != NULL ? ENOMEM : EINVAL; /* an RSS QP has no SQ */
	}
	vb_sq_lock(qp);
	for (; wr != NULL; wr = wr->next, nreq++) {
		uint32_t idx = qp->sq_cur_post & (qp->sq_wqe_cnt - 1);
		int size;

		err = raw_send_check(qp, wr, nreq);
		if (err == 0) {
			size = raw_build(qp, wr, w);
			err = size < 0 ? -size : 0;
		}
		if (err != 0)
			break;
		vb_sq_place(qp, idx, w, (uint32_t)size);
		vb_sq_commit(qp, idx, wr->wr_id, IBV_WC_SEND, nreq, (uint32_t)size);
	}
	if (err != 0)
		*bad = wr;
	qp->sq_head += nreq;
	if (nreq != 0 && state == IBV_QPS_RTS)
		raw_ring_send(qp);
	vb_sq_unlock(qp);
	return err;
}

int vb_raw_post_recv(struct vb_qp *qp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	enum ibv_qp_state state = qp->qpx.qp_base.state;
	uint32_t nreq = 0;
	int err = 0;

	if (state == IBV_QPS_RESET && wr != NULL) {
		*bad = wr;
		return qp->raw->ind != NULL ? ENOMEM : EINVAL; /* an RSS QP has no RQ: its WQs receive */
	}
	pthread_spin_lock(&qp->rq_lock);
	for (; wr != NULL; wr = wr->next, nreq++) {
		uint32_t idx = (qp->rq_head + nreq) & (qp->rq_wqe_cnt - 1);

		if (qp->rq_head - atomic_load_explicit(&qp->rq_tail, memory_order_acquire) + nreq >= qp->rq_max_post) {
			err = ENOMEM;
			break;
		}
		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->rq_max_gs) {
			err = EINVAL;
			break;
		}
		vb_recv_wqe(qp->rq_buf + ((size_t)idx << qp->rq_shift), qp->rq_max_gs, wr);
		qp->rq_wrid[idx] = wr->wr_id;
	}
	if (err != 0)
		*bad = wr;
	qp->rq_head += nreq;
	if (nreq != 0 && (state == IBV_QPS_RTR || state == IBV_QPS_RTS))
		raw_publish_recv(qp);
	pthread_spin_unlock(&qp->rq_lock);
	return err;
}
