/*
 * vb_mkey_wr — mlx5dv_wr_mkey_configure and its setters: one UMR WQE
 * (the PRM layout of vb_umr_wr.c) that mlx5dv_wr_set_mkey_access_flags and
 * mlx5dv_wr_set_mkey_layout_list / _interleaved fill, closed by the last of
 * the num_setters setters, as rdma-core v44's mlx5 builds it.
 *
 * Errors go to wr_complete as v44's do: not IBV_SEND_INLINE, unknown
 * conf_flags or a comp_mask are EOPNOTSUPP; a setter beyond num_setters, a
 * second layout or access setter EINVAL; RESET_SIG_ATTR clears a signature
 * key's signature (vb_sig.c). This device adds: a NULL mkey EINVAL;
 * fewer setters than announced leave the WQE open, EINVAL as for every
 * builder (v44 posts nothing and returns 0); a configuration without a
 * layout is EOPNOTSUPP (its keys are indirect: nothing to translate
 * through), as is the crypto setter (vb_wr.c). The signature setter and
 * the segment it adds are vb_sig.c's.
 */
#include <string.h>

#include "vb_export.h"
#include "vb_int.h"

#define VB_MK_ENT 16u /* one translation entry */
#define VB_MK_ACCESS                                                                               \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define VB_MK_MASK_ACCESS                                                                          \
	(HW_UMR_MASK_ACCESS_LOCAL_WRITE | HW_UMR_MASK_ACCESS_REMOTE_READ | HW_UMR_MASK_ACCESS_REMOTE_WRITE |   \
	 HW_UMR_MASK_ACCESS_ATOMIC)

static struct vb_qp *vb_mk_qp(struct mlx5dv_qp_ex *d)
{
	return (struct vb_qp *)((char *)d - offsetof(struct vb_qp, dv));
}

static struct hw_wqe_umr_ctrl_seg *vb_mk_uc(struct vb_qp *qp)
{
	return (void *)(qp->wr_p + sizeof(struct hw_wqe_ctrl_seg));
}

static struct hw_wqe_mkey_ctx_seg *vb_mk_mc(struct vb_qp *qp)
{
	return (void *)(vb_mk_uc(qp) + 1);
}

/* The WQE closes with its last setter; one without a layout this device cannot carry out. */
static void vb_mk_finish(struct vb_qp *qp)
{
	if (!qp->wr_mk_layout) {
		vb_log_unsupported("mlx5dv_wr_mkey_configure without a layout setter");
		qp->wr_mkey = NULL;
		vb_wr_fail(qp, EOPNOTSUPP);
		return;
	}
	if (!vb_sig_conf_close(qp))
		return;
	qp->wr_mkey = NULL;
	vb_wr_close(qp, 0);
}

void vb_dv_wr_mkey_configure(struct mlx5dv_qp_ex *d, struct mlx5dv_mkey *m, uint8_t num_setters,
			     struct mlx5dv_mkey_conf_attr *attr)
{
	struct vb_qp *qp = vb_mk_qp(d);
	struct vb_mkey *mk = (struct vb_mkey *)m;
	struct hw_wqe_umr_ctrl_seg *uc;
	struct hw_wqe_mkey_ctx_seg *mc;

	if (qp->wr_err != 0)
		return;
	if (!qp->dv_umr || !(qp->qpx.wr_flags & IBV_SEND_INLINE) || attr == NULL ||
	    (attr->conf_flags & ~(uint32_t)MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR) || attr->comp_mask != 0) {
		vb_wr_fail(qp, EOPNOTSUPP);
		return;
	}
	if (!vb_wr_open(qp, HW_WQE_UMR, MLX5DV_WC_UMR, true))
		return;
	if (m == NULL || mk->magic != VB_MAGIC_MKEY) {
		vb_wr_fail(qp, EINVAL);
		return;
	}
	uc = vb_mk_uc(qp);
	mc = vb_mk_mc(qp);
	memset(uc, 0, sizeof(*uc) + sizeof(*mc));
	uc->flags = HW_UMR_CTRL_INLINE;
	uc->mkey_mask = htobe64(HW_UMR_MASK_FREE | HW_UMR_MASK_MKEY);
	mc->qpn_mkey = htobe32(0xffffff00u | (m->lkey & 0xffu));
	qp->wr_imm = htobe32(m->lkey);
	qp->wr_off += (uint32_t)(sizeof(*uc) + sizeof(*mc));
	qp->wr_mkey = mk;
	qp->wr_mk_left = num_setters;
	qp->wr_mk_layout = false;
	vb_sig_conf_open(qp, (attr->conf_flags & MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR) != 0);
	if (num_setters == 0)
		vb_mk_finish(qp);
}

/* A setter of the open configuration: one more than announced is EINVAL. */
bool vb_mkey_setter_ok(struct vb_qp *qp)
{
	if (qp->wr_err != 0)
		return false;
	/* The open WQE must be a configuration's: wr_mkey may be left from a session that failed. */
	if (!qp->wr_open || qp->wr_wc_op != MLX5DV_WC_UMR || qp->wr_mkey == NULL || qp->wr_mk_left == 0) {
		vb_wr_fail(qp, EINVAL);
		return false;
	}
	return true;
}

void vb_mkey_setter_done(struct vb_qp *qp)
{
	if (--qp->wr_mk_left == 0)
		vb_mk_finish(qp);
}

void vb_dv_wr_set_mkey_access_flags(struct mlx5dv_qp_ex *d, uint32_t access)
{
	struct vb_qp *qp = vb_mk_qp(d);
	struct hw_wqe_umr_ctrl_seg *uc;

	if (!vb_mkey_setter_ok(qp))
		return;
	if (access & ~(uint32_t)VB_MK_ACCESS) {
		vb_wr_fail(qp, EINVAL);
		return;
	}
	uc = vb_mk_uc(qp);
	if (uc->mkey_mask & htobe64(VB_MK_MASK_ACCESS)) {
		vb_wr_fail(qp, EINVAL); /* set twice in one WQE */
		return;
	}
	uc->mkey_mask |= htobe64(VB_MK_MASK_ACCESS);
	vb_mk_mc(qp)->access_flags = vb_umr_mkc_access(access);
	vb_mkey_setter_done(qp);
}

/*
 * The translations of a layout: the second is EINVAL, entries beyond the
 * WQE (max_inline_data, as mlx5 sizes it) or the mkey ENOMEM. Returns where
 * they go, zeroed to the 64-byte multiple (padding reads as no translation).
 */
static uint8_t *vb_mk_layout(struct vb_qp *qp, uint32_t n, uint32_t extra, uint64_t len)
{
	uint64_t ents = ((uint64_t)qp->max_inline + sizeof(struct hw_wqe_inl_seg)) / VB_MK_ENT;
	uint32_t tbytes = (n + extra) * VB_MK_ENT;
	uint32_t padded = (tbytes + HW_SEND_WQE_BB - 1) & ~(HW_SEND_WQE_BB - 1u);
	struct hw_wqe_umr_ctrl_seg *uc = vb_mk_uc(qp);
	uint8_t *t = qp->wr_p + qp->wr_off;

	if (qp->wr_mk_layout) {
		vb_wr_fail(qp, EINVAL);
		return NULL;
	}
	if (n + extra > ents || n > qp->wr_mkey->cap) {
		vb_wr_fail(qp, ENOMEM);
		return NULL;
	}
	uc->klm_octowords = htobe16((uint16_t)(padded / VB_MK_ENT));
	uc->mkey_mask |= htobe64(HW_UMR_MASK_LEN);
	vb_mk_mc(qp)->len = htobe64(len);
	memset(t, 0, padded);
	qp->wr_off += padded;
	qp->wr_mk_layout = true;
	return t;
}

void vb_dv_wr_set_mkey_layout_list(struct mlx5dv_qp_ex *d, uint16_t num_sges, const struct ibv_sge *sge)
{
	struct vb_qp *qp = vb_mk_qp(d);
	struct hw_wqe_data_seg *ds;
	uint64_t len = 0;

	if (!vb_mkey_setter_ok(qp))
		return;
	if (num_sges == 0 || sge == NULL) {
		vb_wr_fail(qp, EINVAL); /* a list of no entry registers nothing */
		return;
	}
	for (uint32_t i = 0; i < num_sges; i++)
		len += sge[i].length;
	ds = (void *)vb_mk_layout(qp, num_sges, 0, len);
	if (ds == NULL)
		return;
	for (uint32_t i = 0; i < num_sges; i++)
		hw_data_seg_set(&ds[i], sge[i].length, sge[i].lkey, sge[i].addr);
	vb_mkey_setter_done(qp);
}

void vb_dv_wr_set_mkey_layout_interleaved(struct mlx5dv_qp_ex *d, uint32_t repeat_count, uint16_t num_interleaved,
					  const struct mlx5dv_mr_interleaved *data)
{
	struct vb_qp *qp = vb_mk_qp(d);
	struct hw_umr_repeat_block_seg *rb;
	uint64_t unit;

	if (!vb_mkey_setter_ok(qp))
		return;
	if (!vb_umr_interleaved_ok(num_interleaved, data, &unit)) {
		vb_wr_fail(qp, EINVAL);
		return;
	}
	rb = (void *)vb_mk_layout(qp, num_interleaved, 1, unit * repeat_count);
	if (rb == NULL)
		return;
	vb_umr_repeat_fill(rb, (uint32_t)unit, repeat_count, num_interleaved, data);
	vb_mkey_setter_done(qp);
}
