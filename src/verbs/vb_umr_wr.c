/*
 * vb_umr_wr — mlx5dv_wr_mr_interleaved and mlx5dv_wr_mr_list: the UMR WQE
 * that registers a pattern in an indirect mkey, built as mlx5 builds it.
 *
 * The WQE is ctrl (UMR opcode, the mkey in its immediate), the UMR ctrl
 * segment (inline translations, the mask of the mkey fields it sets), the
 * mkey context (free cleared, access rights, length) and the translations
 * inline, padded to a 64-byte multiple: a repeat block header and its
 * entries for the interleaved form, data segments (KLMs) for the list. The
 * entries must fit the WQE the QP was sized for (max_inline_data), as mlx5
 * computes it, and the mkey's entries; the device checks the rest.
 */
#include <string.h>

#include "vb_export.h"
#include "vb_int.h"

#define VB_UMR_ENT 16u /* one translation entry */
#define VB_UMR_ACCESS                                                                              \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static struct vb_qp *vb_umr_qp(struct mlx5dv_qp_ex *d)
{
	return (struct vb_qp *)((char *)d - offsetof(struct vb_qp, dv));
}

static struct vb_mkey *vb_umr_mkey(struct mlx5dv_mkey *m)
{
	struct vb_mkey *mk = (struct vb_mkey *)m;

	return m != NULL && mk->magic == VB_MAGIC_MKEY ? mk : NULL;
}

uint8_t vb_umr_mkc_access(uint32_t a)
{
	return (uint8_t)(((a & IBV_ACCESS_REMOTE_ATOMIC) ? HW_MKC_ACCESS_ATOMIC : 0) |
			 ((a & IBV_ACCESS_REMOTE_WRITE) ? HW_MKC_ACCESS_REMOTE_WRITE : 0) |
			 ((a & IBV_ACCESS_REMOTE_READ) ? HW_MKC_ACCESS_REMOTE_READ : 0) |
			 ((a & IBV_ACCESS_LOCAL_WRITE) ? HW_MKC_ACCESS_LOCAL_WRITE : 0));
}

/*
 * The checks before a byte is staged, in mlx5's order: the QP has the
 * builders, IBV_SEND_INLINE is set (EOPNOTSUPP otherwise, as mlx5), the queue
 * has room (ENOMEM), the access flags are known and the mkey is one
 * (EINVAL), the entries fit the WQE and the mkey (ENOMEM). extra: the
 * translation entries the form uses beyond its entries (the header).
 */
static struct vb_mkey *vb_umr_begin(struct vb_qp *qp, struct mlx5dv_mkey *m, uint32_t access, uint32_t n,
				    uint32_t extra)
{
	struct vb_mkey *mk = vb_umr_mkey(m);
	uint64_t ents = ((uint64_t)qp->max_inline + sizeof(struct hw_wqe_inl_seg)) / VB_UMR_ENT;
	uint64_t fit = ents > extra ? ents - extra : 0;

	if (qp->wr_err != 0)
		return NULL;
	if (!qp->dv_umr) {
		vb_log_unsupported("mlx5dv_wr_mr_* without MLX5DV_QP_EX_WITH_MR_* at mlx5dv_create_qp");
		vb_wr_fail(qp, EOPNOTSUPP);
		return NULL;
	}
	if (!(qp->qpx.wr_flags & IBV_SEND_INLINE)) {
		vb_wr_fail(qp, EOPNOTSUPP);
		return NULL;
	}
	if (!vb_wr_open(qp, HW_WQE_UMR, MLX5DV_WC_UMR, true))
		return NULL;
	if ((access & ~(uint32_t)VB_UMR_ACCESS) || mk == NULL) {
		vb_wr_fail(qp, EINVAL);
		return NULL;
	}
	if (n > fit || n > mk->cap) {
		vb_wr_fail(qp, ENOMEM);
		return NULL;
	}
	return mk;
}

/* The UMR ctrl and mkey context segments; the translations follow at the returned address. */
static uint8_t *vb_umr_head(struct vb_qp *qp, const struct vb_mkey *mk, uint32_t access, uint32_t tbytes,
			    uint64_t len)
{
	struct hw_wqe_umr_ctrl_seg *uc = (void *)(qp->wr_p + qp->wr_off);
	struct hw_wqe_mkey_ctx_seg *mc = (void *)(uc + 1);
	uint32_t padded = (tbytes + HW_SEND_WQE_BB - 1) & ~(HW_SEND_WQE_BB - 1u);

	memset(uc, 0, sizeof(*uc) + sizeof(*mc));
	uc->flags = HW_UMR_CTRL_INLINE;
	uc->klm_octowords = htobe16((uint16_t)(padded / VB_UMR_ENT));
	uc->mkey_mask = htobe64(HW_UMR_MASK_FREE | HW_UMR_MASK_MKEY | HW_UMR_MASK_LEN |
				HW_UMR_MASK_ACCESS_LOCAL_WRITE | HW_UMR_MASK_ACCESS_REMOTE_READ |
				HW_UMR_MASK_ACCESS_REMOTE_WRITE | HW_UMR_MASK_ACCESS_ATOMIC);
	mc->access_flags = vb_umr_mkc_access(access);
	mc->qpn_mkey = htobe32(0xffffff00u | (mk->mkey.lkey & 0xffu));
	mc->len = htobe64(len);
	qp->wr_imm = htobe32(mk->mkey.lkey); /* the ctrl segment's, written when the WQE closes */
	qp->wr_off += (uint32_t)(sizeof(*uc) + sizeof(*mc));
	/* The padding entries are zero: the device reads them as no translation. */
	memset(qp->wr_p + qp->wr_off, 0, padded);
	return qp->wr_p + qp->wr_off;
}

static void vb_umr_end(struct vb_qp *qp, uint32_t tbytes)
{
	qp->wr_off += (tbytes + HW_SEND_WQE_BB - 1) & ~(HW_SEND_WQE_BB - 1u);
	vb_wr_close(qp, 0);
}

/* The entry's 16-bit fields: a block or stride that does not fit is refused, not truncated; *unit the block's bytes. */
bool vb_umr_interleaved_ok(uint16_t n, const struct mlx5dv_mr_interleaved *data, uint64_t *unit)
{
	*unit = 0;
	if (n != 0 && data == NULL)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		if (data[i].bytes_count > UINT16_MAX || data[i].bytes_skip > UINT16_MAX - data[i].bytes_count)
			return false;
		*unit += data[i].bytes_count;
	}
	return *unit <= UINT32_MAX;
}

/* The repeat block segment and its n entries, as the PRM lays them out. */
void vb_umr_repeat_fill(struct hw_umr_repeat_block_seg *rb, uint32_t unit, uint32_t repeat_count, uint16_t n,
			const struct mlx5dv_mr_interleaved *data)
{
	struct hw_umr_repeat_ent_seg *e = (void *)(rb + 1);

	rb->byte_count = htobe32(unit);
	rb->op = htobe32(HW_UMR_REPEAT_BLOCK_OP);
	rb->repeat_count = htobe32(repeat_count);
	rb->num_ent = htobe16(n);
	for (uint32_t i = 0; i < n; i++) {
		e[i].va = htobe64(data[i].addr);
		e[i].byte_count = htobe16((uint16_t)data[i].bytes_count);
		e[i].stride = htobe16((uint16_t)(data[i].bytes_count + data[i].bytes_skip));
		e[i].memkey = htobe32(data[i].lkey);
	}
}

void vb_dv_wr_mr_interleaved(struct mlx5dv_qp_ex *d, struct mlx5dv_mkey *m, uint32_t access, uint32_t repeat_count,
			     uint16_t num_interleaved, struct mlx5dv_mr_interleaved *data)
{
	struct vb_qp *qp = vb_umr_qp(d);
	struct vb_mkey *mk = vb_umr_mkey(m);
	uint32_t tbytes = ((uint32_t)num_interleaved + 1) * VB_UMR_ENT;
	struct hw_umr_repeat_block_seg *rb;
	uint64_t unit;

	if (vb_umr_begin(qp, m, access, num_interleaved, 1) == NULL)
		return;
	if (!vb_umr_interleaved_ok(num_interleaved, data, &unit)) {
		vb_wr_fail(qp, EINVAL);
		return;
	}
	rb = (void *)vb_umr_head(qp, mk, access, tbytes, unit * repeat_count);
	vb_umr_repeat_fill(rb, (uint32_t)unit, repeat_count, num_interleaved, data);
	vb_umr_end(qp, tbytes);
}

void vb_dv_wr_mr_list(struct mlx5dv_qp_ex *d, struct mlx5dv_mkey *m, uint32_t access, uint16_t num_sges,
		      struct ibv_sge *sge)
{
	struct vb_qp *qp = vb_umr_qp(d);
	struct vb_mkey *mk = vb_umr_mkey(m);
	uint32_t tbytes = (uint32_t)num_sges * VB_UMR_ENT;
	struct hw_wqe_data_seg *ds;
	uint64_t len = 0;

	if (vb_umr_begin(qp, m, access, num_sges, 0) == NULL)
		return;
	if ((num_sges != 0 && sge == NULL) || num_sges == 0) {
		vb_wr_fail(qp, EINVAL); /* a list of no entry registers nothing */
		return;
	}
	for (uint32_t i = 0; i < num_sges; i++)
		len += sge[i].length;
	ds = (void *)vb_umr_head(qp, mk, access, tbytes, len);
	for (uint32_t i = 0; i < num_sges; i++)
		hw_data_seg_set(&ds[i], sge[i].length, sge[i].lkey, sge[i].addr);
	vb_umr_end(qp, tbytes);
}
