/*
 * vb_scat — responder scatter to CQE, as rdma-core v44's mlx5 and the
 * kernel's mlx5_ib set it up and mlx5's poll reads it.
 *
 * An RC or UC QP scatters to CQE unless MLX5_SCATTER_TO_CQE is "0" or
 * mlx5dv_create_qp is given MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE
 * (MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE turns it on whatever the
 * variable says): the device then writes a SEND of at most 32 bytes (its
 * receive CQ's CQEs 64 bytes) or 64 bytes (128-byte CQEs) into the CQE,
 * op_own marked INLINE_SCATTER_32 or _64 (hw_qp_set_scatter). A program
 * reading the ring itself (UCX's rc_mlx5) takes the bytes there; the poll
 * copies them to the receive's entries, as mlx5's mlx5_copy_to_recv_wqe
 * and mlx5_copy_to_recv_srq do, so ibv_poll_cq and the extended poll see
 * the receive buffer filled as ever.
 */
#include <stdlib.h>
#include <string.h>

#include "vb_int.h"

bool vb_scat_default(void)
{
	const char *env = getenv("MLX5_SCATTER_TO_CQE");

	return env == NULL || strcmp(env, "0") != 0;
}

void vb_scat_set(struct vb_qp *qp, bool on)
{
	enum ibv_qp_type t = qp->qpx.qp_base.qp_type;

	/* The kernel sets cs_res on connected QPs only: UD receives and the rest go to their buffers. */
	if (qp->hw != NULL && (t == IBV_QPT_RC || t == IBV_QPT_UC))
		(void)hw_qp_set_scatter(qp->hw, on);
}

/* The receive WQE's first data entry and their number (the RQ's, or its SRQ's after the next segment). */
static const struct hw_wqe_data_seg *vb_scat_segs(const struct vb_qp *qp, uint16_t idx, uint32_t *n)
{
	const struct vb_srq *srq = qp->srq;
	const uint8_t *w;

	if (srq != NULL) {
		w = srq->buf + ((size_t)(idx & (srq->wqe_cnt - 1)) << srq->log_stride);
		*n = ((1u << srq->log_stride) - (uint32_t)sizeof(struct hw_wqe_srq_next_seg)) /
		     (uint32_t)sizeof(struct hw_wqe_data_seg);
		return (const void *)(w + sizeof(struct hw_wqe_srq_next_seg));
	}
	w = qp->rq_buf + ((size_t)(idx & (qp->rq_wqe_cnt - 1)) << qp->rq_shift);
	*n = (1u << qp->rq_shift) / (uint32_t)sizeof(struct hw_wqe_data_seg);
	return (const void *)w;
}

/* len bytes from data into the entries; false when they do not hold them (LOC_LEN_ERR, as mlx5). */
static bool vb_scat_fill(const struct vb_qp *qp, const struct hw_wqe_data_seg *d, uint32_t n, const uint8_t *data,
			 uint32_t len)
{
	uint32_t pd_id = hw_pd_id(qp->pd->hw);

	for (uint32_t i = 0; i < n && len != 0; i++, d++) {
		uint32_t c = hw_data_seg_len(d);
		uint8_t *p;

		if (hw_data_seg_lkey(d) == HW_RQ_INVALID_LKEY)
			break;
		c = c < len ? c : len;
		if (c == 0)
			continue;
		/* The device scattered only into plain keys: this process's own memory at the entry's address. */
		p = hw_mkey_plain(hw_data_seg_lkey(d), pd_id, hw_data_seg_addr(d), c, HW_ACCESS_LOCAL_WRITE);
		if (p == NULL)
			return false;
		memcpy(p, data, c);
		data += c;
		len -= c;
	}
	return len == 0;
}

void vb_scat_recv(const struct vb_qp *qp, const struct hw_cqe64 *cqe, struct ibv_wc *wc)
{
	bool wide = (cqe->op_own & HW_CQE_FORMAT_MASK) == HW_CQE_INLINE_SCATTER_64;
	const uint8_t *data = wide ? (const uint8_t *)cqe - 64 : (const uint8_t *)cqe;
	uint32_t n;
	const struct hw_wqe_data_seg *d = vb_scat_segs(qp, hw_cqe_wqe_counter(cqe), &n);

	if (!wide) {
		/* The data lies over the address fields, which a connected QP's receive does not carry. */
		wc->src_qp = 0;
		wc->sl = 0;
		wc->slid = 0;
		wc->dlid_path_bits = 0;
		wc->wc_flags &= ~(unsigned int)IBV_WC_GRH;
	}
	if (!vb_scat_fill(qp, d, n, data, hw_cqe_byte_cnt(cqe)))
		wc->status = IBV_WC_LOC_LEN_ERR;
}
