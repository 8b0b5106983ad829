/*
 * vb_mlx5_sig — libmlx5.so.1's mlx5dv_mkey_check and
 * mlx5dv_qp_cancel_posted_send_wrs: each finds the device's table and calls
 * libibverbs (vb_sig.c, vb_sig_pipe.c).
 */
#include <errno.h>
#include <stddef.h>

#include "vb_export.h"
#include "vb.h"

VB_EXPORT int _mlx5dv_mkey_check(struct mlx5dv_mkey *mkey, struct mlx5dv_mkey_err *err_info, size_t err_info_size)
{
	struct vb_mkey *mk = (struct vb_mkey *)mkey;

	if (mkey == NULL || mk->magic != VB_MAGIC_MKEY || mk->dv->sig == NULL)
		return EINVAL;
	return mk->dv->sig->mkey_check(mkey, err_info, err_info_size);
}

VB_EXPORT int mlx5dv_qp_cancel_posted_send_wrs(struct mlx5dv_qp_ex *mqp, uint64_t wr_id)
{
	struct vb_qp *qp = mqp != NULL ? (struct vb_qp *)((char *)mqp - offsetof(struct vb_qp, dv)) : NULL;
	struct vb_context *ctx = qp != NULL ? vb_ctx_checked(qp->qpx.qp_base.context) : NULL;

	if (ctx == NULL || ctx->dev->dv == NULL || ctx->dev->dv->sig == NULL)
		return -EINVAL;
	return ctx->dev->dv->sig->cancel_posted_send_wrs(mqp, wr_id);
}
