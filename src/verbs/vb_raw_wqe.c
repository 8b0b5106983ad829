/*
 * vb_raw_wqe — mlx5dv_wr_raw_wqe: a send WQE the program built whole, as
 * rdma-core v44's mlx5 posts it.
 *
 * The WQE is copied into the send ring at the producer index (wrapping at
 * the ring's end), its ctrl segment kept as the program wrote it but for the
 * WQE index, which becomes the producer's; its completion reads
 * IBV_WC_DRIVER2 whatever the opcode, and its wr_id is the session's. The
 * device executes it as any WQE of the ring, so it checks what it checks for
 * the post paths. A WQE longer than the QP's largest (ds past the ring's
 * sizing) is EINVAL here: the card would read past what the program sized.
 */
#include <endian.h>
#include <string.h>

#include "vb_export.h"
#include "vb_int.h"

#define VB_CTRL_DS_MASK 0x3fu
#define VB_CTRL_IDX_MASK 0x00ffff00u

void vb_dv_wr_raw_wqe(struct mlx5dv_qp_ex *d, const void *wqe)
{
	struct vb_qp *qp = (struct vb_qp *)((char *)d - offsetof(struct vb_qp, dv));
	const struct hw_wqe_ctrl_seg *src = wqe;
	struct hw_wqe_ctrl_seg *ctrl;
	uint32_t bytes, max, idx, op;

	if (qp->wr_err != 0)
		return;
	if (!qp->dv_raw) {
		vb_log_unsupported("mlx5dv_wr_raw_wqe without MLX5DV_QP_EX_WITH_RAW_WQE at mlx5dv_create_qp");
		vb_wr_fail(qp, EOPNOTSUPP);
		return;
	}
	bytes = (be32toh(src->qpn_ds) & VB_CTRL_DS_MASK) * HW_WQE_DS_BYTES;
	max = (qp->sq_max_wqe + HW_SEND_WQE_BB - 1) & ~(HW_SEND_WQE_BB - 1u);
	op = be32toh(src->opmod_idx_opcode) & 0xffu;
	if (bytes == 0 || bytes > max || bytes > VB_MAX_SQ_DESC) {
		vb_wr_fail(qp, EINVAL);
		return;
	}
	if (!vb_wr_open(qp, (uint8_t)op, IBV_WC_DRIVER2, false))
		return;
	memcpy(qp->wr_p, wqe, bytes);
	ctrl = (struct hw_wqe_ctrl_seg *)(void *)qp->wr_p;
	ctrl->opmod_idx_opcode = htobe32((be32toh(src->opmod_idx_opcode) & ~VB_CTRL_IDX_MASK) |
					 (qp->sq_cur_post & 0xffffu) << 8);
	idx = qp->sq_cur_post & (qp->sq_wqe_cnt - 1);
	if (qp->wr_p == qp->wr_stage)
		vb_sq_place(qp, idx, qp->wr_stage, bytes);
	qp->fm_cache = 0;
	vb_sq_commit(qp, idx, qp->wr_wrid, qp->wr_wc_op, qp->wr_nreq, bytes);
	qp->wr_nreq++;
	qp->wr_open = false;
}
