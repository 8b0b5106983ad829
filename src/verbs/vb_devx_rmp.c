/*
 * vb_devx_rmp — a receive memory pool (RMP) made by DevX commands:
 * CREATE_RMP over the program's umem, MODIFY_RMP (RDY to RDY, the limit
 * lwm), QUERY_RMP, DESTROY. It is an engine SRQ (hw_srq) like any
 * ibv_create_srq SRQ, shared under its number, whose ring and doorbell
 * record are the addresses the command names: the program writes the WQEs
 * (a next segment, then data segments) and moves the record itself, and
 * DevX RC QPs created with rq_type SRQ on its number (vb_devx_qp.c) take
 * their receives from it, those of their peers in other processes too. Both
 * WQ types a program chooses: linked list (the device follows
 * next_wqe_index from WQE 0, the program links freed WQEs) and cyclic (the
 * device takes WQEs in ring order). The create writes nothing into the
 * program's memory, as the card does not.
 *
 * The limit: MODIFY_RMP with bitmask.lwm arms it (the engine's SRQ limit);
 * when the WQEs left fall below it, the limit disarms (lwm 0 again) and its
 * event, SRQ_RQ_LIMIT (0x14) with the rmpn, goes to the RMP's subscribers
 * (mlx5dv_devx_subscribe_devx_event), once per arm.
 *
 * PRM layouts (mlx5_ifc.h), big-endian. create_rmp_in and modify_rmp_in:
 * the RMP context at 0x20 (0xf0 bytes); modify_rmp_in: rmp_state (top 4
 * bits of 8), rmpn (9..11), bitmask.lwm (bit 0 of 0x17); query_rmp_out:
 * the context at 0x20; create_rmp_out: rmpn at 8. The context: state (top
 * 4 bits of 1), basic_cyclic_rcv_wqe (top bit of 4), the wq at 0x30: its
 * wq_type (top 4 bits of 0), lwm (6..7), pd (9..11), dbr_addr (0x10),
 * hw_counter (0x18), sw_counter (0x1c), log_wq_stride (low 4 bits of
 * 0x21), log_wq_sz (low 5 bits of 0x23), log_wqe_num_of_strides (low 4
 * bits of 0x26), dbr_umem_id (0x28), wq_umem_id (0x2c), wq_umem_offset
 * (0x30). The umem valid bits are the kernel's to set (it sets them for
 * CREATE_RMP), so they are not read.
 */
#include <endian.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hw_ids.h"
#include "hw_mem.h"
#include "hw_srq.h"
#include "vb_devx_prm.h"

#define VB_RMP_IN_SZ 0x110
#define VB_RMP_OUT_SZ 0x10
#define VB_RMPC 0x20
#define VB_RMPC_SZ 0xf0
#define VB_WQ (VB_RMPC + 0x30) /* the wq, in a command */
#define VB_RMP_QUERY_IN_SZ 0x10
#define VB_RMP_QUERY_OUT_SZ (VB_RMPC + VB_RMPC_SZ)
#define VB_OP_MODIFY_RMP 0x90d
#define VB_OP_QUERY_RMP 0x90f

#define VB_RMP_RDY 0x1
#define VB_WQ_LINKED_LIST 0x0
#define VB_WQ_CYCLIC 0x1

struct vb_devx_rmp {
	struct hw_srq *hw;
	struct hw_pd *pd;
	struct vb_umem *wq_um;
	struct vb_umem *dbr_um;
	_Atomic uint32_t qps;	 /* QPs receiving from it */
	uint8_t rmpc[VB_RMPC_SZ]; /* the context as created and modified, for QUERY_RMP */
};

static void vb_devx_rmp_free(struct vb_devx_rmp *rmp, uint32_t rmpn)
{
	if (rmp->hw != NULL)
		(void)hw_srq_destroy(rmp->hw); /* the fence: no taker reads the umem after it */
	if (rmpn != 0)
		(void)hw_id_free(HW_ID_SRQN, rmpn);
	vb_devx_umem_put(rmp->wq_um);
	vb_devx_umem_put(rmp->dbr_um);
	if (rmp->pd != NULL)
		hw_pd_free(rmp->pd);
	free(rmp);
}

/* The context's state, WQ type and sizes, as the engine takes them. */
static int vb_devx_rmp_shape(const uint8_t *in, struct hw_srq_attr *ha, uint8_t *out, size_t outlen)
{
	const uint8_t *rmpc = in + VB_RMPC, *wq = in + VB_WQ;
	uint8_t type = wq[0] >> 4;

	if ((rmpc[1] >> 4) != VB_RMP_RDY) /* an RMP is made ready */
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_RMP_STATE);
	/* Striding (multi-packet) WQs and WQEs without the next segment: not emulated. */
	if ((type != VB_WQ_LINKED_LIST && type != VB_WQ_CYCLIC) || (rmpc[4] & 0x80) || (wq[0x26] & 0xf) != 0)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_RMP_TYPE);
	ha->cyclic = type == VB_WQ_CYCLIC;
	ha->log_stride = wq[0x21] & 0xf;
	ha->log_size = wq[0x23] & 0x1f;
	if (ha->log_size > HW_SRQ_LOG_MAX || ha->log_stride < HW_SRQ_LOG_STRIDE_MIN ||
	    ha->log_stride > HW_SRQ_LOG_STRIDE_MAX)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_RMP_SIZE);
	return 0;
}

/* The ring at the wq umem's offset and the record, each inside its umem. */
static int vb_devx_rmp_mem(struct vb_context *ctx, const uint8_t *wq, struct hw_srq_attr *ha,
			   struct vb_devx_rmp *rmp, uint8_t *out, size_t outlen)
{
	uint64_t len = (uint64_t)1 << (ha->log_size + ha->log_stride);
	uint64_t off = vb_prm_be64(wq + 0x30), dbr_off = vb_prm_be64(wq + 0x10);
	int rc;

	rc = vb_devx_umem_take(ctx, vb_prm_be32(wq + 0x2c), off, len, &rmp->wq_um, out, outlen);
	if (rc == 0)
		rc = vb_devx_umem_take(ctx, vb_prm_be32(wq + 0x28), dbr_off, HW_SRQ_DBREC_BYTES, &rmp->dbr_um, out,
				       outlen);
	if (rc != 0)
		return rc;
	ha->ring = (uint8_t *)rmp->wq_um->addr + off;
	ha->dbrec = (uint32_t *)(void *)((uint8_t *)rmp->dbr_um->addr + dbr_off);
	if (((uintptr_t)ha->ring & (HW_SRQ_RING_ALIGN - 1)) != 0 || ((uintptr_t)ha->dbrec & 7) != 0)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_UMEM);
	return 0;
}

/* The engine's SRQ limit crossed (its thread, or a taker's): the RMP's event to its subscribers. */
static void vb_devx_rmp_limit(void *arg, struct hw_srq *hw)
{
	struct mlx5dv_devx_obj *obj = arg;

	(void)hw;
	vb_devx_evch_obj_event(obj, VB_EV_SRQ_RQ_LIMIT, obj->object_id, true);
}

static int vb_devx_rmp_engine(struct hw_srq_attr *ha, struct vb_devx_rmp *rmp, uint32_t *rmpn,
			      struct mlx5dv_devx_obj *obj)
{
	enum hw_status st = hw_id_alloc(HW_ID_SRQN, rmpn);

	if (st != HW_OK)
		return vb_id_errno(st);
	ha->srqn = *rmpn;
	ha->limit_cb = vb_devx_rmp_limit;
	ha->limit_arg = obj;
	ha->pd = rmp->pd;
	ha->shared = true; /* requesters of other processes take its WQEs */
	ha->program_ring = true;
	st = hw_srq_create(ha, &rmp->hw);
	if (st != HW_OK) {
		rmp->hw = NULL;
		return vb_qmem_errno(st);
	}
	return 0;
}

/* The limit lwm armed, as the card takes it: no more than the ring, nor than the WQEs posted now. */
static int vb_devx_rmp_lwm(struct vb_devx_rmp *rmp, uint16_t lwm, uint8_t *out, size_t outlen)
{
	if (hw_srq_arm(rmp->hw, lwm) != HW_OK)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_RMP_LWM);
	return 0;
}

int vb_devx_rmp_create(struct vb_context *ctx, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
		       struct mlx5dv_devx_obj *obj)
{
	struct hw_srq_attr ha = {0};
	struct vb_devx_rmp *rmp;
	uint32_t rmpn = 0;
	uint16_t lwm;
	int rc;

	if (inlen < VB_RMP_IN_SZ || out == NULL || outlen < VB_RMP_OUT_SZ)
		return EINVAL;
	lwm = (uint16_t)(in[VB_WQ + 6] << 8 | in[VB_WQ + 7]);
	rc = vb_devx_rmp_shape(in, &ha, out, outlen);
	if (rc != 0)
		return rc;
	rmp = calloc(1, sizeof(*rmp));
	if (rmp == NULL)
		return ENOMEM;
	rmp->pd = hw_pd_get(vb_prm_u24(in + VB_WQ + 8));
	rc = rmp->pd == NULL ? vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_RMP_PD) : 0;
	if (rc == 0)
		rc = vb_devx_rmp_mem(ctx, in + VB_WQ, &ha, rmp, out, outlen);
	if (rc == 0)
		rc = vb_devx_rmp_engine(&ha, rmp, &rmpn, obj);
	obj->object_id = rmpn; /* the limit's event names it */
	if (rc == 0 && lwm != 0)
		rc = vb_devx_rmp_lwm(rmp, lwm, out, outlen);
	if (rc != 0) {
		vb_devx_rmp_free(rmp, rmpn);
		return rc;
	}
	memcpy(rmp->rmpc, in + VB_RMPC, VB_RMPC_SZ);
	memset(out, 0, VB_RMP_OUT_SZ);
	vb_prm_put32(out + 8, rmpn);
	obj->kind = VB_DEVX_RMP;
	obj->priv = rmp;
	return 0;
}

void vb_devx_rmp_destroy(struct mlx5dv_devx_obj *obj)
{
	vb_devx_evch_obj_gone(obj); /* a limit crossed from now on reaches no channel */
	vb_devx_rmp_free(obj->priv, obj->object_id);
}

struct hw_srq *vb_devx_rmp_hw(struct mlx5dv_devx_obj *rmp)
{
	return ((struct vb_devx_rmp *)rmp->priv)->hw;
}

void vb_devx_rmp_hold(struct mlx5dv_devx_obj *rmp, int delta)
{
	atomic_fetch_add(&((struct vb_devx_rmp *)rmp->priv)->qps, (uint32_t)delta);
}

struct mlx5dv_devx_obj *vb_devx_rmp_take(struct vb_context *ctx, uint32_t rmpn)
{
	struct mlx5dv_devx_obj *o;

	pthread_mutex_lock(&ctx->lock);
	o = vb_devx_queue_find(ctx, VB_DEVX_RMP, rmpn);
	if (o != NULL)
		vb_devx_rmp_hold(o, 1);
	pthread_mutex_unlock(&ctx->lock);
	return o;
}

bool vb_devx_rmp_busy(struct mlx5dv_devx_obj *rmp)
{
	return atomic_load(&((struct vb_devx_rmp *)rmp->priv)->qps) != 0;
}

/*
 * MODIFY_RMP: from the state rmp_state names (RDY, the only one an RMP has
 * here) to RDY, with the limit when bitmask.lwm is set. Another rmpn is the
 * kernel's refusal (EINVAL), as for any object command.
 */
int vb_devx_rmp_modify(struct mlx5dv_devx_obj *obj, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen)
{
	struct vb_devx_rmp *rmp = obj->priv;
	const uint8_t *wq = in + VB_WQ;
	int rc;

	if (vb_prm_opcode(in) != VB_OP_MODIFY_RMP)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_OP, VB_SYND_BAD_OP);
	if (inlen < VB_RMP_IN_SZ || outlen < VB_RMP_OUT_SZ || vb_prm_u24(in + 8) != obj->object_id)
		return EINVAL;
	if ((in[8] >> 4) != VB_RMP_RDY)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_RES_STATE, VB_SYND_RMP_STATE);
	if ((in[VB_RMPC + 1] >> 4) != VB_RMP_RDY) /* to ERR: not emulated */
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_RMP_STATE);
	if (in[0x17] & 1) {
		rc = vb_devx_rmp_lwm(rmp, (uint16_t)(wq[6] << 8 | wq[7]), out, outlen);
		if (rc != 0)
			return rc;
		memcpy(rmp->rmpc + 0x30 + 6, wq + 6, 2);
	}
	memset(out, 0, VB_RMP_OUT_SZ);
	return 0;
}

/* QUERY_RMP: the context as created, the limit armed now (0 once it fired), the counters of the WQ. */
int vb_devx_rmp_query(struct mlx5dv_devx_obj *obj, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen)
{
	struct vb_devx_rmp *rmp = obj->priv;
	uint8_t *wq = out + VB_WQ;
	uint32_t sw, lwm;

	if (vb_prm_opcode(in) != VB_OP_QUERY_RMP)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_OP, VB_SYND_BAD_OP);
	if (inlen < VB_RMP_QUERY_IN_SZ || outlen < VB_RMP_QUERY_OUT_SZ || vb_prm_u24(in + 8) != obj->object_id)
		return EINVAL;
	memset(out, 0, outlen);
	memcpy(out + VB_RMPC, rmp->rmpc, VB_RMPC_SZ);
	sw = be32toh(__atomic_load_n(hw_srq_dbrec(rmp->hw), __ATOMIC_ACQUIRE)) & 0xffffu;
	lwm = hw_srq_limit(rmp->hw);
	wq[6] = (uint8_t)(lwm >> 8);
	wq[7] = (uint8_t)lwm;
	vb_prm_put32(wq + 0x18, (sw - hw_srq_posted(rmp->hw)) & 0xffffu); /* hw_counter: WQEs consumed */
	vb_prm_put32(wq + 0x1c, sw);
	return 0;
}
