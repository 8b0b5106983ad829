/*
 * vb_mw — memory windows: ibv_alloc_mw, ibv_dealloc_mw, ibv_bind_mw (type
 * 1) and the bind WQE that IBV_WR_BIND_MW and ibv_wr_bind_mw post (type 2).
 *
 * As mlx5 does it: a window is a key of the PD (hw_mkey_reg_window); a bind
 * is a UMR WQE on a QP's send queue naming the window by its key now, its
 * next tag, its range and rights, and the MR in one inline KLM, completed
 * as IBV_WC_BIND_MW (hw_mw.c checks and applies it). ibv_bind_mw posts one
 * with the key's tag moved on and gives the program that key; a type 2
 * window's key is the one the program put in the WR.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vb_int.h"

#define VB_MW_WQE_MAX (1ull << 31) /* a KLM's byte count: mlx5 refuses longer binds */
#define VB_MW_KLM_BYTES 64	    /* the KLM and its padding to a whole octoword pair */

struct ibv_mw *vb_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ibv_mw *mw;
	uint32_t key;

	if (pd == NULL || (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2)) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (mw == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (hw_mkey_reg_window(vb_pd_of(pd)->hw, (uint8_t)type, &key) != HW_OK) {
		free(mw);
		errno = ENOMEM;
		return NULL;
	}
	atomic_fetch_add(&vb_pd_of(pd)->users, 1);
	*mw = (struct ibv_mw){ .context = pd->context, .pd = pd, .rkey = key, .handle = key, .type = type };
	return mw;
}

/* The window goes whatever its key's tag now: accesses through it fail from here on (a fence). */
int vb_dealloc_mw(struct ibv_mw *mw)
{
	if (mw == NULL)
		return EINVAL;
	if (hw_mkey_dereg_window(mw->handle) != HW_OK)
		return EINVAL;
	atomic_fetch_sub(&vb_pd_of(mw->pd)->users, 1);
	free(mw);
	return 0;
}

static uint8_t vb_mw_rights(unsigned int a)
{
	return (uint8_t)(((a & IBV_ACCESS_REMOTE_READ) ? HW_MKC_ACCESS_REMOTE_READ : 0) |
			 ((a & IBV_ACCESS_REMOTE_WRITE) ? HW_MKC_ACCESS_REMOTE_WRITE : 0) |
			 ((a & IBV_ACCESS_REMOTE_ATOMIC) ? HW_MKC_ACCESS_ATOMIC : 0));
}

int vb_bind_mw_check(const struct vb_qp *qp, const struct ibv_mw *mw, const struct ibv_mw_bind_info *b)
{
	enum ibv_qp_type ty = qp->qpx.qp_base.qp_type;

	if (mw == NULL || (ty != IBV_QPT_RC && ty != IBV_QPT_UC))
		return EINVAL;
	if (b->length > VB_MW_WQE_MAX)
		return EOPNOTSUPP;
	if (b->length != 0 && b->mr == NULL)
		return EINVAL;
	/* ctrl, UMR ctrl, mkey context and the KLM: the largest WQE the ring counts on must hold it. */
	if (sizeof(struct hw_wqe_ctrl_seg) + sizeof(struct hw_wqe_umr_ctrl_seg) + sizeof(struct hw_wqe_mkey_ctx_seg) +
		    VB_MW_KLM_BYTES >
	    qp->sq_max_wqe)
		return ENOMEM;
	return 0;
}

size_t vb_bind_mw_segs(const struct vb_qp *qp, const struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *b, uint8_t *p)
{
	struct hw_wqe_umr_ctrl_seg *uc = (void *)p;
	struct hw_wqe_mkey_ctx_seg *mc = (void *)(p + sizeof(*uc));
	struct hw_wqe_data_seg *klm = (void *)(mc + 1);
	bool two = mw->type == IBV_MW_TYPE_2;
	uint64_t mask = HW_UMR_MASK_FREE | HW_UMR_MASK_MKEY | (two ? HW_UMR_MASK_QPN : 0);

	memset(uc, 0, sizeof(*uc) + sizeof(*mc));
	uc->flags = HW_UMR_CTRL_INLINE | HW_UMR_CTRL_TRANSLATION_OFFSET;
	mc->qpn_mkey = htobe32((rkey & 0xffu) | ((!two || b->length == 0) ? 0xffffff00u : qp->qpx.qp_base.qp_num << 8));
	if (b->length == 0) {
		if (two)
			uc->flags |= HW_UMR_CTRL_CHECK_QPN;
		uc->mkey_mask = htobe64(mask);
		mc->free = HW_MKEY_CTX_FREE;
		return sizeof(*uc) + sizeof(*mc);
	}
	if (two)
		uc->flags |= HW_UMR_CTRL_CHECK_FREE;
	uc->klm_octowords = htobe16(VB_MW_KLM_BYTES / 16);
	uc->mkey_mask = htobe64(mask | HW_UMR_MASK_LEN | HW_UMR_MASK_START_ADDR | HW_UMR_MASK_ACCESS_LOCAL_WRITE |
				 HW_UMR_MASK_ACCESS_REMOTE_READ | HW_UMR_MASK_ACCESS_REMOTE_WRITE | HW_UMR_MASK_ACCESS_ATOMIC);
	mc->access_flags = vb_mw_rights(b->mw_access_flags);
	mc->start_addr = htobe64((b->mw_access_flags & IBV_ACCESS_ZERO_BASED) ? 0 : b->addr);
	mc->len = htobe64(b->length);
	memset(klm, 0, VB_MW_KLM_BYTES);
	hw_data_seg_set(klm, (uint32_t)b->length, b->mr->lkey, b->addr);
	return sizeof(*uc) + sizeof(*mc) + VB_MW_KLM_BYTES;
}

/*
 * ibv_bind_mw(3) for a type 1 window (the inline wrapper checked the type
 * and the PD): posted as a bind WR with the key's tag moved on, the window
 * getting that key once the WR is posted, as mlx5_bind_mw does.
 */
int vb_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = { .wr_id = mw_bind->wr_id, .opcode = IBV_WR_BIND_MW,
				  .send_flags = mw_bind->send_flags }, *bad = NULL;
	int rc;

	if (mw_bind->bind_info.mw_access_flags & IBV_ACCESS_ZERO_BASED) {
		errno = EINVAL;
		return EINVAL;
	}
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;
	rc = vb_post_send(qp, &wr, &bad);
	if (rc != 0)
		return rc;
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}
