/*
 * vb_sig_pipe — signature pipelining (MLX5DV_QP_CREATE_SIG_PIPELINING, RC):
 * a WQE whose transfer fails a signature check completes, then the SQ
 * stops before the next (hw_qp_sig_hold): IBV_EVENT_SQ_DRAINED is queued,
 * ibv_query_qp reports SQD, and what is posted waits.
 * mlx5dv_qp_cancel_posted_send_wrs(3) turns the waiting WQEs of a wr_id
 * into NOPs, which complete (as signaled) with their original opcode; a
 * modify from SQD to RTS resumes the SQ.
 *
 * As mlx5: cancel on a QP not in SQD is -EINVAL. Here, while stopped, a
 * modify other than to RTS, ERR or RESET is EINVAL (SQD's own attributes
 * are not modifiable on this device).
 */
#include "base_log.h"
#include "vb_export.h"
#include "hw_qp.h"
#include "vb_int.h"

static void vb_sig_pipe_drained(void *arg)
{
	struct vb_qp *qp = arg;
	struct ibv_async_event ev = { .element.qp = &qp->qpx.qp_base, .event_type = IBV_EVENT_SQ_DRAINED };

	if (vb_async_post(vb_ctx(qp->qpx.qp_base.context), &ev) != 0)
		BASE_ERR("QP %u: the SQ drained event could not be queued", qp->qpx.qp_base.qp_num);
}

int vb_sig_pipe_enable(struct vb_qp *qp)
{
	if (qp->hw == NULL)
		return EINVAL;
	hw_qp_set_sig_pipelining(qp->hw, vb_sig_pipe_drained, qp);
	qp->sig_pipe = true;
	return 0;
}

bool vb_sig_pipe_held(const struct vb_qp *qp)
{
	return qp->sig_pipe && hw_qp_sig_held(qp->hw);
}

/*
 * ibv_modify_qp on a stopped QP: to RTS (from SQD) resumes it; to ERR or
 * RESET takes the usual path with the stop lifted (-1: not handled here).
 */
int vb_sig_pipe_modify(struct vb_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	if (!vb_sig_pipe_held(qp))
		return -1;
	if (!(mask & IBV_QP_STATE) || (mask & ~(IBV_QP_STATE | IBV_QP_CUR_STATE)) ||
	    ((mask & IBV_QP_CUR_STATE) && a->cur_qp_state != IBV_QPS_SQD))
		return EINVAL;
	if (a->qp_state == IBV_QPS_RTS) {
		(void)hw_qp_sig_release(qp->hw);
		return 0;
	}
	if (a->qp_state == IBV_QPS_ERR || a->qp_state == IBV_QPS_RESET) {
		hw_qp_sig_clear(qp->hw);
		return -1;
	}
	return EINVAL;
}

int vb_dv_cancel_posted_send_wrs(struct mlx5dv_qp_ex *dqp, uint64_t wr_id)
{
	struct vb_qp *qp = dqp == NULL ? NULL : (struct vb_qp *)((char *)dqp - offsetof(struct vb_qp, dv));
	uint32_t ci, end;
	int n = 0;

	if (qp == NULL || !vb_sig_pipe_held(qp))
		return -EINVAL;
	vb_sq_lock(qp);
	ci = hw_qp_sq_next(qp->hw);
	end = qp->sq_cur_post & HW_QP_COUNTER_MASK;
	while (ci != end) {
		uint32_t idx = ci & (qp->sq_wqe_cnt - 1);
		struct hw_wqe_ctrl_seg *c = (void *)(qp->sq_buf + (size_t)idx * HW_SEND_WQE_BB);
		uint32_t nbb = ((uint32_t)hw_ctrl_ds(c) * HW_WQE_DS_BYTES + HW_SEND_WQE_BB - 1) / HW_SEND_WQE_BB;

		if (nbb == 0)
			break; /* not a WQE this library wrote */
		if (qp->sq_wrid[idx] == wr_id) {
			/* A NOP keeps the index, size and signaling; its completion takes the WR's opcode (sq_wc_op). */
			c->opmod_idx_opcode = htobe32(be32toh(c->opmod_idx_opcode) & 0x00ffff00u);
			n++;
		}
		ci = (ci + nbb) & HW_QP_COUNTER_MASK;
	}
	vb_sq_unlock(qp);
	return n;
}
