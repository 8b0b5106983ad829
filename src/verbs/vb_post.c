/*
 * vb_post — ibv_post_send and ibv_post_recv: work requests become mlx5 WQEs
 * in the QP's rings, exactly as the mlx5 provider writes them, then the
 * doorbell record and the device's doorbell.
 *
 * A send WQE is built in a staging copy and placed in the ring in one go
 * (it may wrap around the ring's end, as the card allows). The checks and
 * errno values are mlx5's: a bad opcode is EINVAL, a full queue, too many
 * gather entries or inline data beyond the QP's max_inline_data ENOMEM; the
 * failing request is *bad_wr and the ones before it are posted and rung.
 * The device executes the work at the doorbell (the engine runs on the
 * caller's thread), so a QP not yet in RTS keeps its posted work until the
 * modify to RTS rings it. A QP in RESET has no queues to post to: mlx5
 * refuses its sends with ENOMEM and its receives with EINVAL (the state's
 * gather limit of -1 that every request exceeds), and so does this.
 */
#include <stdatomic.h>
#include <string.h>

#include "vb_int.h"

#define VB_ATOMIC_SIZE 8

static const uint8_t vb_wr_hw_op[] = {
	[IBV_WR_RDMA_WRITE] = HW_WQE_RDMA_WRITE,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = HW_WQE_RDMA_WRITE_IMM,
	[IBV_WR_SEND] = HW_WQE_SEND,
	[IBV_WR_SEND_WITH_IMM] = HW_WQE_SEND_IMM,
	[IBV_WR_RDMA_READ] = HW_WQE_RDMA_READ,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = HW_WQE_ATOMIC_CS,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = HW_WQE_ATOMIC_FA,
	[IBV_WR_LOCAL_INV] = HW_WQE_UMR,
	[IBV_WR_BIND_MW] = HW_WQE_UMR,
	[IBV_WR_SEND_WITH_INV] = HW_WQE_SEND_INVAL,
	[IBV_WR_TSO] = 0xff,
	[IBV_WR_DRIVER1] = 0xff,
};

static const uint8_t vb_wr_wc_op[] = {
	[IBV_WR_RDMA_WRITE] = IBV_WC_RDMA_WRITE,
	[IBV_WR_RDMA_WRITE_WITH_IMM] = IBV_WC_RDMA_WRITE,
	[IBV_WR_SEND] = IBV_WC_SEND,
	[IBV_WR_SEND_WITH_IMM] = IBV_WC_SEND,
	[IBV_WR_RDMA_READ] = IBV_WC_RDMA_READ,
	[IBV_WR_ATOMIC_CMP_AND_SWP] = IBV_WC_COMP_SWAP,
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = IBV_WC_FETCH_ADD,
	[IBV_WR_LOCAL_INV] = IBV_WC_LOCAL_INV,
	[IBV_WR_BIND_MW] = IBV_WC_BIND_MW,
	[IBV_WR_SEND_WITH_INV] = IBV_WC_SEND,
};

/* Copies a staged WQE of size bytes into the ring at BB index idx, wrapping at the end. */
void vb_sq_place(struct vb_qp *qp, uint32_t idx, const uint8_t *w, uint32_t size)
{
	size_t ring = (size_t)qp->sq_wqe_cnt * HW_SEND_WQE_BB, off = (size_t)idx * HW_SEND_WQE_BB;
	size_t first = ring - off < size ? ring - off : size;

	memcpy(qp->sq_buf + off, w, first);
	memcpy(qp->sq_buf, w + first, size - first);
}

/* The LOCAL_INV WQE body mlx5 writes: a UMR that frees the key in the ctrl segment's immediate. */
size_t vb_local_inv_seg(uint8_t *p)
{
	struct hw_wqe_umr_ctrl_seg *uc = (void *)p;
	struct hw_wqe_mkey_ctx_seg *mc = (void *)(p + sizeof(*uc));

	memset(uc, 0, sizeof(*uc) + sizeof(*mc));
	uc->flags = HW_UMR_CTRL_INLINE | HW_UMR_CTRL_TRANSLATION_OFFSET;
	uc->mkey_mask = htobe64(HW_UMR_MASK_FREE | HW_UMR_MASK_MKEY);
	mc->free = HW_MKEY_CTX_FREE;
	return sizeof(*uc) + sizeof(*mc);
}

/*
 * Inline data of a WR's gather list: bytes used (16-aligned with its header), or -1 when too long.
 * An entry may be { NULL, 0 } (UCX posts such): memcpy of 0 bytes from NULL reads nothing, so the
 * sanitizer's nonnull check is waived here rather than paying a test per entry on the hot path.
 */
__attribute__((no_sanitize("nonnull-attribute"))) static int vb_inline(const struct vb_qp *qp, const struct ibv_sge *sg, int n, uint8_t *p)
{
	uint8_t *d = p + sizeof(struct hw_wqe_inl_seg);
	uint32_t len = 0;

	for (int i = 0; i < n; i++) {
		if (sg[i].length > qp->max_inline - len) /* no sum: lengths near 4 GiB would wrap it */
			return -1;
		memcpy(d + len, (void *)(uintptr_t)sg[i].addr, sg[i].length);
		len += sg[i].length;
	}
	if (len == 0)
		return 0;
	hw_inl_seg_set((struct hw_wqe_inl_seg *)p, len);
	return (int)((sizeof(struct hw_wqe_inl_seg) + len + 15) & ~15u);
}

/* The segments between ctrl and data for the WR's opcode and the QP's type; bytes written. */
static size_t vb_mid_segs(const struct vb_qp *qp, const struct ibv_send_wr *wr, uint8_t *p)
{
	if (qp->qpx.qp_base.qp_type == IBV_QPT_UD) {
		struct hw_wqe_datagram_seg *d = (void *)p;

		memcpy(d, &((const struct vb_ah *)wr->wr.ud.ah)->av, sizeof(*d));
		d->dqp_dct = htobe32(wr->wr.ud.remote_qpn | 0x80000000u);
		d->qkey = htobe32(wr->wr.ud.remote_qkey);
		return sizeof(*d);
	}
	switch (wr->opcode) {
	case IBV_WR_RDMA_READ:
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		hw_raddr_seg_set((void *)p, wr->wr.rdma.remote_addr, wr->wr.rdma.rkey);
		return sizeof(struct hw_wqe_raddr_seg);
	case IBV_WR_ATOMIC_CMP_AND_SWP:
		hw_raddr_seg_set((void *)p, wr->wr.atomic.remote_addr, wr->wr.atomic.rkey);
		hw_atomic_seg_set((void *)(p + 16), wr->wr.atomic.swap, wr->wr.atomic.compare_add);
		return 32;
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		hw_raddr_seg_set((void *)p, wr->wr.atomic.remote_addr, wr->wr.atomic.rkey);
		hw_atomic_seg_set((void *)(p + 16), wr->wr.atomic.compare_add, 0);
		return 32;
	case IBV_WR_LOCAL_INV:
		return vb_local_inv_seg(p);
	case IBV_WR_BIND_MW:
		return vb_bind_mw_segs(qp, wr->bind_mw.mw, wr->bind_mw.rkey, &wr->bind_mw.bind_info, p);
	default:
		return 0;
	}
}

static __be32 vb_send_imm(const struct ibv_send_wr *wr)
{
	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		return wr->imm_data;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		return htobe32(wr->invalidate_rkey);
	case IBV_WR_BIND_MW:
		return htobe32(wr->bind_mw.mw->rkey);
	default:
		return 0;
	}
}

/* Builds one WR's WQE in w; its size in bytes, or -errno. */
static int vb_build(struct vb_qp *qp, const struct ibv_send_wr *wr, uint8_t *w, uint8_t fence)
{
	struct hw_wqe_ctrl_seg *ctrl = (void *)w;
	size_t off = sizeof(*ctrl);
	uint8_t op = vb_wr_hw_op[wr->opcode];
	bool atomic = wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;

	/* An XRC request names the target's SRQ first (mlx5_wqe_xrc_seg); local UMR work names none. */
	if (qp->qpx.qp_base.qp_type == IBV_QPT_XRC_SEND && op != HW_WQE_UMR) {
		memset(w + off, 0, sizeof(struct hw_wqe_xrc_seg));
		((struct hw_wqe_xrc_seg *)(void *)(w + off))->xrc_srqn = htobe32(wr->qp_type.xrc.remote_srqn);
		off += sizeof(struct hw_wqe_xrc_seg);
	}
	off += vb_mid_segs(qp, wr, w + off);
	if ((wr->send_flags & IBV_SEND_INLINE) && wr->num_sge > 0 && !atomic) {
		int n = vb_inline(qp, wr->sg_list, wr->num_sge, w + off);

		if (n < 0)
			return -ENOMEM;
		off += (size_t)n;
	} else {
		for (int i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length == 0)
				continue;
			hw_data_seg_set((void *)(w + off), atomic ? VB_ATOMIC_SIZE : hw_data_seg_len_of(wr->sg_list[i].length),
					wr->sg_list[i].lkey, wr->sg_list[i].addr);
			off += sizeof(struct hw_wqe_data_seg);
		}
	}
	hw_ctrl_seg_set(ctrl, (uint16_t)qp->sq_cur_post, op, 0, qp->qpx.qp_base.qp_num,
			vb_fm_ce_se(qp, wr->send_flags, fence),
			(uint8_t)(off / HW_WQE_DS_BYTES), vb_send_imm(wr));
	return (int)off;
}

/*
 * The WR most programs post on an RC QP: RDMA WRITE, RDMA READ or SEND,
 * one gather entry, not inline, and room in the ring from its slot. True
 * when wr is one (then the checks of vb_send_check but the queue's room
 * hold by construction) and vb_build_one writes it.
 */
static inline bool vb_is_one(const struct vb_qp *qp, const struct ibv_send_wr *wr, uint32_t idx)
{
	return qp->qpx.qp_base.qp_type == IBV_QPT_RC && wr->num_sge == 1 && qp->sq_max_gs != 0 &&
	       (wr->opcode == IBV_WR_RDMA_WRITE || wr->opcode == IBV_WR_RDMA_READ || wr->opcode == IBV_WR_SEND) &&
	       (wr->send_flags & IBV_SEND_INLINE) == 0 && wr->sg_list[0].length != 0 && vb_sq_room(qp, idx);
}

/* vb_build for a WR vb_is_one accepted, straight into its slot w: the WQE's size. */
static inline int vb_build_one(struct vb_qp *qp, const struct ibv_send_wr *wr, uint8_t *w, uint8_t fence)
{
	size_t off = sizeof(struct hw_wqe_ctrl_seg);

	if (wr->opcode != IBV_WR_SEND) {
		hw_raddr_seg_set((void *)(w + off), wr->wr.rdma.remote_addr, wr->wr.rdma.rkey);
		off += sizeof(struct hw_wqe_raddr_seg);
	}
	hw_data_seg_set((void *)(w + off), hw_data_seg_len_of(wr->sg_list[0].length), wr->sg_list[0].lkey,
			wr->sg_list[0].addr);
	off += sizeof(struct hw_wqe_data_seg);
	hw_ctrl_seg_set((void *)w, (uint16_t)qp->sq_cur_post, vb_wr_hw_op[wr->opcode], 0, qp->qpx.qp_base.qp_num,
			vb_fm_ce_se(qp, wr->send_flags, fence),
			(uint8_t)(off / HW_WQE_DS_BYTES), 0);
	return (int)off;
}

static bool vb_op_known(enum ibv_wr_opcode op)
{
	return (unsigned int)op < sizeof(vb_wr_hw_op) && vb_wr_hw_op[op] != 0xff;
}

static int vb_send_check(const struct vb_qp *qp, const struct ibv_send_wr *wr, uint32_t nreq)
{
	if (!vb_op_known(wr->opcode))
		return EINVAL;
	if (vb_sq_full(qp, nreq))
		return ENOMEM;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq_max_gs)
		return ENOMEM;
	if (qp->qpx.qp_base.qp_type == IBV_QPT_UD && wr->wr.ud.ah == NULL)
		return EINVAL;
	if (qp->qpx.qp_base.qp_type == IBV_QPT_DRIVER)
		return EINVAL; /* an ibv_send_wr has no DC address: a DCI posts through ibv_wr_* */
	if (wr->opcode == IBV_WR_BIND_MW)
		return vb_bind_mw_check(qp, wr->bind_mw.mw, &wr->bind_mw.bind_info);
	return 0;
}

int vb_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr, struct ibv_send_wr **bad)
{
	struct vb_qp *qp = vb_qp_of(ibqp);
	_Alignas(16) uint8_t w[VB_MAX_SQ_DESC];
	uint32_t nreq = 0;
	uint8_t fence;
	int err = 0;

	if (__builtin_expect(qp->raw != NULL, 0))
		return vb_raw_post_send(qp, wr, bad);
	if (qp->qpx.qp_base.state == IBV_QPS_RESET && wr != NULL) {
		*bad = wr;
		return vb_op_known(wr->opcode) ? ENOMEM : EINVAL;
	}
	vb_sq_lock(qp);
	for (; wr != NULL; wr = wr->next, nreq++) {
		uint32_t idx = qp->sq_cur_post & (qp->sq_wqe_cnt - 1);
		uint8_t *slot;
		int size;

		fence = (wr->send_flags & IBV_SEND_FENCE) ? HW_WQE_CTRL_FENCE : qp->fm_cache;
		if (vb_is_one(qp, wr, idx)) {
			if (vb_sq_full(qp, nreq)) {
				err = ENOMEM;
				break;
			}
			size = vb_build_one(qp, wr, qp->sq_buf + (size_t)idx * HW_SEND_WQE_BB, fence);
			qp->fm_cache = 0;
			vb_sq_commit(qp, idx, wr->wr_id, vb_wr_wc_op[wr->opcode], nreq, (uint32_t)size);
			continue;
		}
		err = vb_send_check(qp, wr, nreq);
		if (err != 0)
			break;
		/* Written once, in its slot, unless the largest WQE could wrap from there (then staged and placed). */
		slot = vb_sq_room(qp, idx) ? qp->sq_buf + (size_t)idx * HW_SEND_WQE_BB : w;
		size = vb_build(qp, wr, slot, fence);
		if (size < 0) {
			err = -size;
			break;
		}
		/* What follows a LOCAL_INV or a bind waits for it (mlx5's small fence). */
		qp->fm_cache = wr->opcode == IBV_WR_LOCAL_INV || wr->opcode == IBV_WR_BIND_MW ? HW_WQE_CTRL_SMALL_FENCE : 0;
		if (slot == w)
			vb_sq_place(qp, idx, w, (uint32_t)size);
		vb_sq_commit(qp, idx, wr->wr_id, vb_wr_wc_op[wr->opcode], nreq, (uint32_t)size);
	}
	if (err != 0)
		*bad = wr;
	if (nreq != 0)
		vb_sq_doorbell(qp, nreq);
	vb_sq_unlock(qp);
	return err;
}

/* A receive WQE: the data segments, ended by an invalid-key one when the list is shorter than the stride. */
void vb_recv_wqe(uint8_t *p, uint32_t max_gs, const struct ibv_recv_wr *wr)
{
	struct hw_wqe_data_seg *d = (void *)p;
	uint32_t j = 0;

	for (int i = 0; i < wr->num_sge; i++) {
		if (wr->sg_list[i].length == 0)
			continue;
		hw_data_seg_set(&d[j++], wr->sg_list[i].length, wr->sg_list[i].lkey, wr->sg_list[i].addr);
	}
	if (j < max_gs)
		hw_data_seg_set(&d[j], 0, HW_RQ_INVALID_LKEY, 0);
}

/*
 * The receive most programs post: one WR of one non-empty entry (perftest
 * reposts one per completion). vb_post_recv's work for it without the
 * list's bookkeeping; false, with nothing done, when the ring is full.
 */
static inline bool vb_post_recv_one(struct vb_qp *qp, const struct ibv_recv_wr *wr)
{
	uint32_t head = qp->rq_head, idx = head & (qp->rq_wqe_cnt - 1);
	struct hw_wqe_data_seg *d = (void *)(qp->rq_buf + ((size_t)idx << qp->rq_shift));

	if (head - atomic_load_explicit(&qp->rq_tail, memory_order_acquire) >= qp->rq_max_post)
		return false;
	hw_data_seg_set(d, wr->sg_list[0].length, wr->sg_list[0].lkey, wr->sg_list[0].addr);
	if (qp->rq_max_gs > 1)
		hw_data_seg_set(&d[1], 0, HW_RQ_INVALID_LKEY, 0);
	qp->rq_wrid[idx] = wr->wr_id;
	qp->rq_head = head + 1;
	(void)hw_qp_ring_rq(qp->hw, qp->rq_head); /* as in vb_post_recv */
	return true;
}

int vb_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad)
{
	struct vb_qp *qp = vb_qp_of(ibqp);
	uint32_t nreq = 0;
	int err = 0;

	if (__builtin_expect(qp->raw != NULL, 0))
		return vb_raw_post_recv(qp, wr, bad);
	if (qp->srq != NULL || qp->rq_wqe_cnt == 0 || (qp->qpx.qp_base.state == IBV_QPS_RESET && wr != NULL)) {
		*bad = wr;
		return EINVAL; /* its receives go to an SRQ (XRC: the one each request names); a QP in RESET takes none */
	}
	pthread_spin_lock(&qp->rq_lock);
	if (wr != NULL && wr->next == NULL && wr->num_sge == 1 && qp->rq_max_gs != 0 && wr->sg_list[0].length != 0 &&
	    vb_post_recv_one(qp, wr)) {
		pthread_spin_unlock(&qp->rq_lock);
		return 0;
	}
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
	if (nreq != 0) {
		qp->rq_head += nreq;
		/*
		 * The record (written by the doorbell) makes the WQEs the device's;
		 * on a QP in the error state the doorbell flushes them, as the card.
		 */
		(void)hw_qp_ring_rq(qp->hw, qp->rq_head);
	}
	pthread_spin_unlock(&qp->rq_lock);
	return err;
}
