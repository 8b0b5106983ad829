/*
 * vb_sig — block signature mkeys: mlx5dv_wr_set_mkey_sig_block(3) in a
 * mkey configuration, the signature segment it adds to the UMR WQE
 * (struct hw_umr_sig_seg, hw_sig.h), mlx5dv_mkey_check(3) and the
 * signature caps of mlx5dv_query_device.
 *
 * As rdma-core v44's mlx5: every error reaches wr_complete as EINVAL: a key
 * not created with BLOCK_SIGNATURE, the setter twice in one WQE, neither
 * domain, unknown flags or a comp_mask, a domain whose block size, type,
 * guard type, seed or T10-DIF flags are not one of the documented values,
 * and COPY_MASK with domains of different block structures; a segment that
 * does not fit after the translations (max_inline_data) is ENOMEM. A key
 * keeps its signature from one configuration to the next;
 * MLX5DV_MKEY_CONF_FLAG_RESET_SIG_ATTR clears it.
 */
#include <string.h>

#include "vb_export.h"
#include "hw_sig.h"
#include "hw_umr.h"
#include "vb_int.h"

static struct vb_qp *vb_sig_qp(struct mlx5dv_qp_ex *d)
{
	return (struct vb_qp *)((char *)d - offsetof(struct vb_qp, dv));
}

static const uint32_t vb_sig_block_bytes[] = {
	[MLX5DV_BLOCK_SIZE_512] = 512,	 [MLX5DV_BLOCK_SIZE_520] = 520,	  [MLX5DV_BLOCK_SIZE_4048] = 4048,
	[MLX5DV_BLOCK_SIZE_4096] = 4096, [MLX5DV_BLOCK_SIZE_4160] = 4160,
};

void vb_sig_caps(struct mlx5dv_sig_caps *c)
{
	c->block_size = MLX5DV_BLOCK_SIZE_CAP_512 | MLX5DV_BLOCK_SIZE_CAP_520 | MLX5DV_BLOCK_SIZE_CAP_4048 |
			MLX5DV_BLOCK_SIZE_CAP_4096 | MLX5DV_BLOCK_SIZE_CAP_4160;
	c->block_prot = MLX5DV_SIG_PROT_CAP_T10DIF | MLX5DV_SIG_PROT_CAP_CRC;
	c->t10dif_bg = MLX5DV_SIG_T10DIF_BG_CAP_CRC | MLX5DV_SIG_T10DIF_BG_CAP_CSUM;
	c->crc_type = MLX5DV_SIG_CRC_TYPE_CAP_CRC32 | MLX5DV_SIG_CRC_TYPE_CAP_CRC32C | MLX5DV_SIG_CRC_TYPE_CAP_CRC64_XP10;
}

/* A domain of the attribute as the device's: false when not one of the documented values. */
static bool vb_sig_dom(const struct mlx5dv_sig_block_domain *in, struct hw_sig_dom *d)
{
	*d = (struct hw_sig_dom){ 0 };
	if (in == NULL)
		return true;
	if ((unsigned int)in->block_size > MLX5DV_BLOCK_SIZE_4160 || in->comp_mask != 0)
		return false;
	d->block = vb_sig_block_bytes[in->block_size];
	if (in->sig_type == MLX5DV_SIG_TYPE_T10DIF && in->sig.dif != NULL) {
		const struct mlx5dv_sig_t10dif *t = in->sig.dif;

		if (t->bg_type != MLX5DV_SIG_T10DIF_CRC && t->bg_type != MLX5DV_SIG_T10DIF_CSUM)
			return false;
		d->kind = t->bg_type == MLX5DV_SIG_T10DIF_CRC ? HW_SIG_T10DIF_CRC : HW_SIG_T10DIF_CSUM;
		d->bg = t->bg;
		d->app = t->app_tag;
		d->ref = t->ref_tag;
		d->flags = (uint8_t)t->flags;
		/* Both escapes: the stricter one, as mlx5 writes it. */
		if (d->flags & HW_SIG_APPREF_ESCAPE)
			d->flags &= (uint8_t)~HW_SIG_APP_ESCAPE;
		return t->flags <= (MLX5DV_SIG_T10DIF_FLAG_REF_REMAP | MLX5DV_SIG_T10DIF_FLAG_APP_ESCAPE |
				    MLX5DV_SIG_T10DIF_FLAG_APP_REF_ESCAPE) &&
		       hw_sig_dom_ok(d);
	}
	if (in->sig_type == MLX5DV_SIG_TYPE_CRC && in->sig.crc != NULL) {
		const struct mlx5dv_sig_crc *c = in->sig.crc;

		if (c->type == MLX5DV_SIG_CRC_TYPE_CRC32)
			d->kind = HW_SIG_CRC32;
		else if (c->type == MLX5DV_SIG_CRC_TYPE_CRC32C)
			d->kind = HW_SIG_CRC32C;
		else if (c->type == MLX5DV_SIG_CRC_TYPE_CRC64_XP10)
			d->kind = HW_SIG_CRC64;
		else
			return false;
		d->seed = c->seed;
		return hw_sig_dom_ok(d);
	}
	return false;
}

static bool vb_sig_t10dif(uint8_t kind)
{
	return kind == HW_SIG_T10DIF_CRC || kind == HW_SIG_T10DIF_CSUM;
}

/*
 * The copy mask mlx5 computes when both domains have one block structure
 * (the same type and block size): a CRC's whole field, the T10-DIF parts
 * configured alike. *same says whether they have.
 */
static uint8_t vb_sig_auto_copy(const struct hw_sig_dom *m, const struct hw_sig_dom *w, bool *same)
{
	uint8_t mask = 0;

	*same = m->kind != HW_SIG_NONE && w->kind != HW_SIG_NONE && m->block == w->block &&
		(m->kind == w->kind || (vb_sig_t10dif(m->kind) && vb_sig_t10dif(w->kind)));
	if (!*same)
		return 0;
	if (!vb_sig_t10dif(m->kind))
		return m->kind == HW_SIG_CRC64 ? MLX5DV_SIG_MASK_CRC64_XP10 : MLX5DV_SIG_MASK_CRC32;
	if (m->kind == w->kind && m->bg == w->bg)
		mask |= MLX5DV_SIG_MASK_T10DIF_GUARD;
	if (m->app == w->app)
		mask |= MLX5DV_SIG_MASK_T10DIF_APPTAG;
	if (m->ref == w->ref)
		mask |= MLX5DV_SIG_MASK_T10DIF_REFTAG;
	return mask;
}

static void vb_sig_dom_seg(const struct hw_sig_dom *d, struct hw_umr_sig_dom_seg *s)
{
	*s = (struct hw_umr_sig_dom_seg){ .kind = d->kind, .flags = d->flags, .block = htobe16((uint16_t)d->block),
					  .bg = htobe16(d->bg), .app_tag = htobe16(d->app), .ref_tag = htobe32(d->ref),
					  .seed = htobe64(d->seed) };
}

/* The attribute's checks, mlx5's order; the segment in *seg. 0 or EINVAL. */
static int vb_sig_attr(const struct mlx5dv_sig_block_attr *a, struct hw_umr_sig_seg *seg)
{
	struct hw_sig_dom m, w;
	bool same;
	uint8_t copy;

	if (a == NULL || (a->mem == NULL && a->wire == NULL))
		return EINVAL;
	if ((a->flags & ~(uint32_t)MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK) || a->comp_mask != 0)
		return EINVAL;
	if (!vb_sig_dom(a->mem, &m) || !vb_sig_dom(a->wire, &w))
		return EINVAL;
	copy = vb_sig_auto_copy(&m, &w, &same);
	if (a->flags & MLX5DV_SIG_BLOCK_ATTR_FLAG_COPY_MASK) {
		if (!same)
			return EINVAL; /* the man page: the configuration fails */
		copy = a->copy_mask;
	}
	memset(seg, 0, sizeof(*seg));
	vb_sig_dom_seg(&m, &seg->mem);
	vb_sig_dom_seg(&w, &seg->wire);
	seg->check_mask = a->check_mask;
	seg->copy_mask = copy;
	return 0;
}

void vb_dv_wr_set_mkey_sig_block(struct mlx5dv_qp_ex *d, const struct mlx5dv_sig_block_attr *attr)
{
	struct vb_qp *qp = vb_sig_qp(d);
	int rc;

	if (!vb_mkey_setter_ok(qp))
		return;
	if (qp->wr_mkey->umr->sig == NULL || qp->wr_mk_sig_set) {
		vb_wr_fail(qp, EINVAL); /* not a signature key, or set twice in one WQE */
		return;
	}
	rc = vb_sig_attr(attr, (struct hw_umr_sig_seg *)qp->wr_mk_sig_seg);
	if (rc != 0) {
		vb_wr_fail(qp, rc);
		return;
	}
	qp->wr_mk_sig = true;
	qp->wr_mk_sig_set = true;
	vb_mkey_setter_done(qp);
}

/* At mlx5dv_wr_mkey_configure: RESET_SIG_ATTR on a signature key sends an empty signature (both domains NONE). */
void vb_sig_conf_open(struct vb_qp *qp, bool reset)
{
	qp->wr_mk_sig = reset && qp->wr_mkey->umr->sig != NULL;
	qp->wr_mk_sig_set = false;
	if (qp->wr_mk_sig)
		memset(qp->wr_mk_sig_seg, 0, sizeof(qp->wr_mk_sig_seg));
}

/*
 * As the configuration closes: the signature segment after the
 * translations, when there is one. It must fit where inline data would
 * (max_inline_data and its header, as mlx5 counts): else ENOMEM.
 */
bool vb_sig_conf_close(struct vb_qp *qp)
{
	struct hw_wqe_umr_ctrl_seg *uc = (void *)(qp->wr_p + sizeof(struct hw_wqe_ctrl_seg));
	uint32_t tbytes = (uint32_t)be16toh(uc->klm_octowords) * 16u;

	if (!qp->wr_mk_sig)
		return true;
	if (tbytes + sizeof(struct hw_umr_sig_seg) > (uint64_t)qp->max_inline + sizeof(struct hw_wqe_inl_seg)) {
		vb_wr_fail(qp, ENOMEM);
		return false;
	}
	memcpy(qp->wr_p + qp->wr_off, qp->wr_mk_sig_seg, sizeof(struct hw_umr_sig_seg));
	qp->wr_off += (uint32_t)sizeof(struct hw_umr_sig_seg);
	uc->bsf_octowords = htobe16(sizeof(struct hw_umr_sig_seg) / 16u);
	uc->mkey_mask |= htobe64(HW_UMR_MASK_BSF_EN);
	return true;
}

/*
 * mlx5dv_mkey_check(3): the first error the key found since the last
 * check, decoded as mlx5 decodes the signature error CQE; NO_ERR when none.
 * A key without a signature context is EINVAL, as is an err_info shorter
 * than the v44 struct.
 */
int vb_dv_mkey_check(struct mlx5dv_mkey *m, struct mlx5dv_mkey_err *err_info, size_t err_info_size)
{
	static const enum mlx5dv_mkey_err_type types[] = {
		[HW_SIG_ERR_GUARD] = MLX5DV_MKEY_SIG_BLOCK_BAD_GUARD,
		[HW_SIG_ERR_REFTAG] = MLX5DV_MKEY_SIG_BLOCK_BAD_REFTAG,
		[HW_SIG_ERR_APPTAG] = MLX5DV_MKEY_SIG_BLOCK_BAD_APPTAG,
	};
	struct vb_mkey *mk = (struct vb_mkey *)m;
	struct hw_sig_err e;

	if (m == NULL || mk->magic != VB_MAGIC_MKEY || err_info == NULL || err_info_size < sizeof(*err_info))
		return EINVAL;
	if (mk->umr->sig == NULL)
		return EINVAL;
	if (!hw_sig_take_err(mk->umr->sig, &e)) {
		err_info->err_type = MLX5DV_MKEY_NO_ERR;
		return 0;
	}
	err_info->err_type = types[e.type];
	err_info->err.sig.expected_value = e.expected;
	err_info->err.sig.actual_value = e.actual;
	err_info->err.sig.offset = e.offset;
	return 0;
}

const struct vb_dv_sig_ops vb_dv_sig_ops_impl = {
	.mkey_check = vb_dv_mkey_check,
	.cancel_posted_send_wrs = vb_dv_cancel_posted_send_wrs,
};
