/*
 * vb_devx_cq — CREATE_CQ and DESTROY_CQ sent as DevX commands: an engine CQ
 * (hw_cq, the one every QP completes into) whose ring and doorbell record
 * are the program's umem, as the card writes CQEs into the memory the
 * command names. The program polls the ring and moves the consumer index in
 * the record itself, as any mlx5 driver does; the CQ is shared under its
 * number, so a QP of another process completes into it too.
 *
 * create_cq_in (PRM): header 0x10 bytes, the CQ context at 0x10 (0x40
 * bytes), cq_umem_offset at 0x50, cq_umem_id at 0x58 (the umem valid bits
 * the kernel sets). The context: cqe_sz top 3
 * bits of byte 1 (0: 64 bytes, 1: 128), dbr_umem_id at 4, log_cq_size low
 * 5 bits of byte 0xc, uar_page at 0xd, c_eqn byte 0x17, the record's offset
 * in its umem at 0x38 (64 bits). create_cq_out: cqn at 8 (low 24 bits).
 */
#include <endian.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hw_cq.h"
#include "hw_ids.h"
#include "vb_devx_prm.h"

#define VB_CQ_IN_SZ 0x60	/* through cq_umem_valid; the pas list is unused with a umem */
#define VB_CQ_OUT_SZ 0x10
#define VB_CQC 0x10
#define VB_CQ_UMEM_OFF 0x50
#define VB_CQ_UMEM_ID 0x58

struct vb_devx_cq {
	struct hw_cq *hw;
	struct vb_umem *ring_um;
	struct vb_umem *dbr_um;
	_Atomic uint32_t qps; /* QPs reporting to it */
};

struct hw_cq *vb_devx_cq_hw(struct mlx5dv_devx_obj *cq)
{
	return ((struct vb_devx_cq *)cq->priv)->hw;
}

void vb_devx_cq_hold(struct mlx5dv_devx_obj *cq, int delta)
{
	atomic_fetch_add(&((struct vb_devx_cq *)cq->priv)->qps, (uint32_t)delta);
}

static void vb_devx_cq_free(struct vb_devx_cq *cq, uint32_t cqn)
{
	if (cq->hw != NULL)
		hw_cq_destroy(cq->hw); /* the fence: no producer writes into the umem after it */
	vb_devx_umem_put(cq->ring_um);
	vb_devx_umem_put(cq->dbr_um);
	if (cqn != 0)
		(void)hw_id_free(HW_ID_CQN, cqn);
	free(cq);
}

/* The ring's and the record's umems, each range checked against its umem. */
static int vb_devx_cq_mem(struct vb_context *ctx, const uint8_t *in, struct hw_cq_attr *ha, struct vb_devx_cq *cq,
			  uint8_t *out, size_t outlen)
{
	const uint8_t *cqc = in + VB_CQC;
	uint64_t ring_len = (uint64_t)ha->cqe_size << ha->log_size;
	int rc;

	/* cq_umem_valid and dbr_umem_valid are not read: the kernel sets both in every DevX CREATE_CQ. */
	rc = vb_devx_umem_take(ctx, vb_prm_be32(in + VB_CQ_UMEM_ID), vb_prm_be64(in + VB_CQ_UMEM_OFF), ring_len,
			       &cq->ring_um, out, outlen);
	if (rc != 0)
		return rc;
	rc = vb_devx_umem_take(ctx, vb_prm_be32(cqc + 4), vb_prm_be64(cqc + 0x38) & ~(uint64_t)7, HW_CQ_DBREC_BYTES,
			       &cq->dbr_um, out, outlen);
	if (rc != 0)
		return rc;
	ha->ring = (struct hw_cqe64 *)((uint8_t *)cq->ring_um->addr + vb_prm_be64(in + VB_CQ_UMEM_OFF));
	ha->dbrec = (uint32_t *)((uint8_t *)cq->dbr_um->addr + (vb_prm_be64(cqc + 0x38) & ~(uint64_t)7));
	if (((uintptr_t)ha->ring & 63) != 0 || ((uintptr_t)ha->dbrec & (HW_CQ_DBREC_ALIGN - 1)) != 0)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_UMEM);
	return 0;
}

int vb_devx_cq_create(struct vb_context *ctx, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
		      struct mlx5dv_devx_obj *obj)
{
	const uint8_t *cqc = in + VB_CQC;
	struct hw_cq_attr ha = {.shared = true, .timestamp = true};
	uint32_t cqe_sz = cqc[1] >> 5, cqn = 0;
	struct vb_devx_cq *cq;
	enum hw_status st;
	int rc;

	if (inlen < VB_CQ_IN_SZ || out == NULL || outlen < VB_CQ_OUT_SZ)
		return EINVAL;
	ha.log_size = cqc[0xc] & 0x1f;
	if (cqe_sz > 1 || ha.log_size > HW_CQ_LOG_SIZE_MAX)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_CQ_SIZE);
	if (cqc[0x17] >= (uint32_t)ctx->vctx.context.num_comp_vectors)	/* no EQ of that number */
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_CQ_SIZE);
	ha.cqe_size = 64u << cqe_sz;
	cq = calloc(1, sizeof(*cq));
	if (cq == NULL)
		return ENOMEM;
	rc = vb_devx_cq_mem(ctx, in, &ha, cq, out, outlen);
	if (rc != 0)
		goto err;
	st = hw_id_alloc(HW_ID_CQN, &cqn);
	if (st != HW_OK) {
		rc = vb_id_errno(st);
		goto err;
	}
	ha.cqn = cqn;
	st = hw_cq_create(&ha, &cq->hw);
	if (st != HW_OK) {
		cq->hw = NULL;
		rc = vb_qmem_errno(st);
		goto err;
	}
	ha.dbrec[HW_CQ_DBR_ARM] = htobe32(VB_DEVX_CQ_UNARMED);
	memset(out, 0, VB_CQ_OUT_SZ);
	vb_prm_put32(out + 8, cqn);
	obj->kind = VB_DEVX_CQ;
	obj->object_id = cqn;
	obj->priv = cq;
	return 0;

err:
	vb_devx_cq_free(cq, cqn);
	return rc;
}

bool vb_devx_cq_busy(struct mlx5dv_devx_obj *cq)
{
	return atomic_load(&((struct vb_devx_cq *)cq->priv)->qps) != 0;
}

/* After vb_devx_queue_del found no QP on it. */
void vb_devx_cq_destroy(struct mlx5dv_devx_obj *obj)
{
	vb_devx_evch_obj_gone(obj); /* no event channel looks at its CQ after this */
	vb_devx_cq_free(obj->priv, obj->object_id);
}
