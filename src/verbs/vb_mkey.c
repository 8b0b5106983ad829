/*
 * vb_mkey — mlx5dv_create_mkey / mlx5dv_destroy_mkey (indirect mkeys whose
 * pattern UMR WQEs register, hw_umr.h) and the RC path of mlx5dv_create_qp,
 * which gives a QP the UMR builders (vb_umr_wr.c).
 *
 * As rdma-core v44: no create flag, or one it does not know, is EOPNOTSUPP;
 * max_entries is rounded up to a multiple of 4 and written back; lkey == rkey.
 * This device adds: a NULL attribute or PD, flags without INDIRECT, and
 * max_entries 0 are EINVAL (the card would refuse an mkey of no
 * translation); crypto mkeys are EOPNOTSUPP (not on this device).
 * BLOCK_SIGNATURE gives the key a signature context (hw_sig.h, vb_sig.c).
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "vb_export.h"
#include "hw_umr.h"
#include "vb_int.h"

#define VB_MKEY_FLAGS_KNOWN                                                                        \
	(MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE |       \
	 MLX5DV_MKEY_INIT_ATTR_FLAGS_CRYPTO | MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE)
#define VB_MKEY_FLAGS_OURS                                                                         \
	(MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT | MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE |     \
	 MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE)
#define VB_MKEY_MAX_ENTRIES 0xfffcu /* the largest multiple of 4 max_entries can carry back */
#define VB_DVQP_UMR_OPS (MLX5DV_QP_EX_WITH_MR_INTERLEAVED | MLX5DV_QP_EX_WITH_MR_LIST | MLX5DV_QP_EX_WITH_MKEY_CONFIGURE)
#define VB_DVQP_SEND_OPS (VB_DVQP_UMR_OPS | MLX5DV_QP_EX_WITH_RAW_WQE | MLX5DV_QP_EX_WITH_MEMCPY)

static int vb_mkey_attr_ok(const struct mlx5dv_mkey_init_attr *a)
{
	if (a == NULL || a->pd == NULL || vb_ctx_checked(a->pd->context) == NULL)
		return EINVAL;
	if (a->create_flags == 0 || (a->create_flags & ~(uint32_t)VB_MKEY_FLAGS_KNOWN))
		return EOPNOTSUPP;
	if (a->create_flags & ~(uint32_t)VB_MKEY_FLAGS_OURS) {
		vb_log_unsupported("mlx5dv_create_mkey with crypto");
		return EOPNOTSUPP;
	}
	if (!(a->create_flags & MLX5DV_MKEY_INIT_ATTR_FLAGS_INDIRECT))
		return EINVAL;
	if (a->max_entries == 0 || a->max_entries > VB_MKEY_MAX_ENTRIES)
		return EINVAL;
	return 0;
}

struct mlx5dv_mkey *vb_dv_create_mkey(struct mlx5dv_mkey_init_attr *a)
{
	struct vb_mkey *mk;
	uint32_t key;
	int rc = vb_mkey_attr_ok(a);

	if (rc != 0)
		goto err;
	rc = ENOMEM;
	mk = calloc(1, sizeof(*mk));
	if (mk == NULL)
		goto err;
	mk->cap = ((uint32_t)a->max_entries + 3u) & ~3u;
	mk->umr = (a->create_flags & MLX5DV_MKEY_INIT_ATTR_FLAGS_BLOCK_SIGNATURE) ? hw_umr_alloc_sig(mk->cap)
										  : hw_umr_alloc(mk->cap);
	if (mk->umr == NULL)
		goto err_free;
	mk->pd = vb_pd_of(a->pd);
	if (hw_mkey_reg_umr(mk->pd->hw, mk->umr, (a->create_flags & MLX5DV_MKEY_INIT_ATTR_FLAGS_REMOTE_INVALIDATE) != 0,
			    &key) != HW_OK)
		goto err_umr;
	mk->mkey.lkey = key;
	mk->mkey.rkey = key;
	mk->dv = &vb_dv_ops_impl;
	mk->magic = VB_MAGIC_MKEY;
	atomic_fetch_add(&mk->pd->users, 1);
	a->max_entries = (uint16_t)mk->cap;
	return &mk->mkey;

err_umr:
	hw_umr_free(mk->umr);
err_free:
	free(mk);
err:
	errno = rc;
	return NULL;
}

/*
 * The man page sets no condition: the key goes, registered or not. Work
 * that names it afterwards fails as with any unknown key.
 */
int vb_dv_destroy_mkey(struct mlx5dv_mkey *m)
{
	struct vb_mkey *mk = (struct vb_mkey *)m;

	if (m == NULL || mk->magic != VB_MAGIC_MKEY)
		return EINVAL;
	if (hw_mkey_dereg(m->lkey) != HW_OK)
		return EINVAL;
	atomic_fetch_sub(&mk->pd->users, 1);
	mk->magic = 0;
	hw_umr_free(mk->umr);
	free(mk);
	return 0;
}

/* The RC path: the mlx5 send ops are the UMR builders (old and mkey configure), raw WQEs and memcpy; anything else this device has not. */
static struct ibv_qp *vb_dvqp_create_rc(struct ibv_context *c, struct ibv_qp_init_attr_ex *attr,
					const struct mlx5dv_qp_init_attr *dv)
{
	uint64_t ops = dv != NULL && (dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS) ? dv->send_ops_flags : 0;
	struct ibv_qp *qp;

	if (ops & ~(uint64_t)VB_DVQP_SEND_OPS) {
		vb_log_unsupported("mlx5dv_create_qp send_ops_flags other than MR_INTERLEAVED / MR_LIST / MKEY_CONFIGURE / RAW_WQE / MEMCPY");
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* As mlx5's qp_init_wr_memcpy: the copy's domain is the QP's, which must be given. */
	if ((ops & MLX5DV_QP_EX_WITH_MEMCPY) && !(attr->comp_mask & IBV_QP_INIT_ATTR_PD)) {
		errno = EINVAL;
		return NULL;
	}
	qp = vb_create_qp_ex(c, attr);
	/* The builders come with the extended QP (IBV_QP_INIT_ATTR_SEND_OPS_FLAGS), as on mlx5. */
	if (qp != NULL && ops != 0 && (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) {
		vb_qp_of(qp)->dv_umr = (ops & VB_DVQP_UMR_OPS) != 0;
		vb_qp_of(qp)->dv_raw = (ops & MLX5DV_QP_EX_WITH_RAW_WQE) != 0;
		vb_qp_of(qp)->dv_memcpy = (ops & MLX5DV_QP_EX_WITH_MEMCPY) != 0;
	}
	if (qp != NULL && dv != NULL && (dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS) &&
	    (dv->create_flags & MLX5DV_QP_CREATE_SIG_PIPELINING))
		(void)vb_sig_pipe_enable(vb_qp_of(qp)); /* a new QP has its device queue: this does not fail */
	return qp;
}

struct ibv_qp *vb_dv_create_qp_umr(struct ibv_context *c, struct ibv_qp_init_attr_ex *attr,
				   const struct mlx5dv_qp_init_attr *dv)
{
	if (attr->qp_type == IBV_QPT_RC)
		return vb_dvqp_create_rc(c, attr, dv);
	if (dv != NULL && (dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS) && dv->send_ops_flags != 0) {
		vb_log_unsupported("mlx5dv_create_qp send_ops_flags on a QP other than RC");
		errno = EOPNOTSUPP; /* the mlx5 builders are RC's */
		return NULL;
	}
	return vb_create_qp_ex(c, attr);
}
