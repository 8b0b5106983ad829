/*
 * vb_devx_qp — an RC QP or a DCI made and moved by DevX commands: CREATE_QP
 * over the program's umem, the state commands (RST2INIT, INIT2INIT,
 * INIT2RTR, RTR2RTS, RTS2RTS, 2ERR, 2RST), QUERY_QP, DESTROY. It is an
 * engine QP (hw_qp) like any ibv_create_qp QP, shared under its number so
 * QPs of other processes connect to it, whose receive ring, send ring and
 * doorbell record are the addresses the command names: the program writes
 * WQEs there, moves the record and writes the UAR itself. A DCI (st 5) is
 * the engine's DCI (hw_dct.h): no receive queue (rq_type and its sizes are
 * not used), its SQ at the umem offset, no destination (each WQE names its
 * DCT), so INIT2RTR connects nothing. The CQs named are DevX CQs or verbs
 * CQs of the context (vb_devx_named.c), and the user index goes into each
 * send CQE (srqn_uidx), as CQE version 1 gives it. An RC QP with rq_type
 * SRQ has no receive ring (its SQ at the umem offset) and takes its
 * receives from the RMP srqn_rmpn_xrqn names (vb_devx_rmp.c), of the same
 * context, which it holds until it is destroyed. The UAR page is plain
 * memory here, so the QP is polled (hw_qp_set_polled): the engine thread
 * runs the send queue when the record's send counter moves, as the card
 * runs it at the doorbell.
 *
 * PRM layouts (mlx5_ifc.h), big-endian. create_qp_in: the QP context at
 * 0x18 (0xe8 bytes), wq_umem_offset at 0x100, wq_umem_id at 0x108;
 * create_qp_out: qpn at 8. The state commands: qpn at 8, the context at
 * 0x18; their answer 0x10 bytes. query_qp_out: the context at 0x18.
 * Context fields used: state (top 4 bits of 0), st (1), pd (4), mtu and
 * log_msg_max (8), log_rq_size, log_rq_stride (9), no_sq, log_sq_size
 * (0xa), user_index (0x10), remote_qpn (0x14), the primary address path
 * (0x18: grh 0x1d, rlid 0x1e, rgid 0x28, rmac 0x3e), log_sra_max,
 * retry_count (0x71), rnr_retry (0x72), next_send_psn (0x78), cqn_snd
 * (0x7c), rre/rwe/rae (0x92), min_rnr_nak (0x94), next_rcv_psn (0x94),
 * cqn_rcv (0x9c), dbr_addr (0xa0), rq_type (0xac), srqn_rmpn_xrqn (0xad),
 * dbr_umem_id (0xe4).
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "base_log.h"
#include "fab_xm.h"
#include "hw_gid.h"
#include "hw_ids.h"
#include "hw_machine.h"
#include "hw_qp.h"
#include "hw_xm.h"
#include "vb_devx_prm.h"

#define VB_QPC 0x18
#define VB_QPC_SZ 0xe8
#define VB_QP_IN_SZ 0x110
#define VB_QP_OUT_SZ 0x10
#define VB_QP_WQ_OFF 0x100
#define VB_QP_WQ_ID 0x108
#define VB_QP_MOD_IN_SZ (VB_QPC + VB_QPC_SZ)
#define VB_QP_QUERY_IN_SZ 0x10
#define VB_QP_QUERY_OUT_SZ (VB_QPC + VB_QPC_SZ)
#define VB_ADS (VB_QPC + 0x18) /* the primary address path, in a command */
#define VB_RQ_SRQ 0x1		/* qpc.rq_type: receives from an SRQ or RMP */

#define VB_OP_RST2INIT 0x502
#define VB_OP_INIT2RTR 0x503
#define VB_OP_RTR2RTS 0x504
#define VB_OP_RTS2RTS 0x505
#define VB_OP_SQERR2RTS 0x506
#define VB_OP_2ERR 0x507
#define VB_OP_2RST 0x508
#define VB_OP_INIT2INIT 0x50e

/* The PRM's QP states (qpc.state). */
#define VB_QPS_RST 0x0
#define VB_QPS_INIT 0x1
#define VB_QPS_RTR 0x2
#define VB_QPS_RTS 0x3
#define VB_QPS_ERR 0x6

#define VB_ST_RC 0x0
#define VB_ST_DCI 0x5

struct vb_devx_qp {
	struct hw_qp *hw;
	struct hw_pd *pd;
	struct vb_devx_cqref scq;
	struct vb_devx_cqref rcq;
	struct mlx5dv_devx_obj *rmp; /* rq_type SRQ: where its receives come from */
	struct vb_umem *wq_um;
	struct vb_umem *dbr_um;
	uint8_t min_rnr;	/* kept: hw_qp_set_rnr takes both */
	uint8_t rnr_retry;
	uint8_t qpc[VB_QPC_SZ]; /* the context as created and moved, for QUERY_QP */
};

/* A state command: the state it starts from (any when from_any) and the one it moves to. */
struct vb_qp_cmd {
	uint16_t opcode;
	bool from_any;
	enum hw_qp_state from;
	enum hw_qp_state to;
};

static const struct vb_qp_cmd vb_qp_cmds[] = {
	{VB_OP_RST2INIT, false, HW_QP_RESET, HW_QP_INIT}, {VB_OP_INIT2INIT, false, HW_QP_INIT, HW_QP_INIT},
	{VB_OP_INIT2RTR, false, HW_QP_INIT, HW_QP_RTR},	  {VB_OP_RTR2RTS, false, HW_QP_RTR, HW_QP_RTS},
	{VB_OP_RTS2RTS, false, HW_QP_RTS, HW_QP_RTS},	  {VB_OP_2ERR, true, HW_QP_RESET, HW_QP_ERR},
	{VB_OP_2RST, true, HW_QP_RESET, HW_QP_RESET},
};

static void vb_devx_qp_free(struct vb_devx_qp *qp, uint32_t qpn)
{
	if (qp->hw != NULL)
		hw_qp_destroy(qp->hw); /* the fence: nothing runs on the umem after it */
	if (qpn != 0)
		(void)hw_id_free(HW_ID_QPN, qpn);
	vb_devx_cqref_put(&qp->scq);
	vb_devx_cqref_put(&qp->rcq);
	if (qp->rmp != NULL)
		vb_devx_rmp_hold(qp->rmp, -1);
	vb_devx_umem_put(qp->wq_um);
	vb_devx_umem_put(qp->dbr_um);
	if (qp->pd != NULL)
		hw_pd_free(qp->pd);
	free(qp);
}

/* The context's sizes and type, as the engine takes them. */
static int vb_devx_qp_shape(const uint8_t *qpc, struct hw_qp_attr *ha, uint8_t *out, size_t outlen)
{
	if (qpc[1] != VB_ST_RC && qpc[1] != VB_ST_DCI) /* st: RC or DCI */
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_QP_TYPE);
	if (qpc[0xa] & 0x80) /* no SQ: not yet */
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_QP_RQ_TYPE);
	if (qpc[1] == VB_ST_DCI) {
		ha->type = HW_QPT_DCI;
		ha->log_sq_size = (qpc[0xa] >> 3) & 0xf;
		return ha->log_sq_size > HW_QP_LOG_SQ_MAX
			       ? vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_QP_SIZE)
			       : 0;
	}
	if ((qpc[0xac] & 7) > VB_RQ_SRQ) /* no RQ: not yet */
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_QP_RQ_TYPE);
	ha->type = HW_QPT_RC;
	ha->log_rq_size = (qpc[9] >> 3) & 0xf;
	ha->log_rq_stride = (qpc[9] & 7) + 4u; /* the PRM counts 16-byte units */
	ha->log_sq_size = (qpc[0xa] >> 3) & 0xf;
	if ((qpc[0xac] & 7) == VB_RQ_SRQ) /* the RQ's sizes mean nothing then */
		ha->log_rq_size = 0, ha->log_rq_stride = HW_QP_LOG_RQ_STRIDE_MIN;
	if (ha->log_sq_size > HW_QP_LOG_SQ_MAX || ha->log_rq_size > HW_QP_LOG_RQ_MAX ||
	    ha->log_rq_stride > HW_QP_LOG_RQ_STRIDE_MAX)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_QP_SIZE);
	return 0;
}

/* An RC QP of rq_type SRQ: the context's RMP of that number, held. */
static bool vb_devx_qp_rmp(struct vb_context *ctx, const uint8_t *qpc, struct vb_devx_qp *qp)
{
	if (qpc[1] != VB_ST_RC || (qpc[0xac] & 7) != VB_RQ_SRQ)
		return true;
	qp->rmp = vb_devx_rmp_take(ctx, vb_prm_u24(qpc + 0xac));
	return qp->rmp != NULL;
}

/* The PD, the two CQs and the RMP the context names: each held by the QP. */
static int vb_devx_qp_objs(struct vb_context *ctx, const uint8_t *qpc, struct vb_devx_qp *qp, uint8_t *out,
			   size_t outlen)
{
	qp->pd = vb_devx_pd_get(ctx, vb_prm_u24(qpc + 4));
	if (qp->pd == NULL)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_QP_PD);
	if (!vb_devx_qp_rmp(ctx, qpc, qp))
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_QP_SRQ);
	if (vb_devx_cqref_take(ctx, vb_prm_u24(qpc + 0x7c), &qp->scq) != 0 ||
	    vb_devx_cqref_take(ctx, vb_prm_u24(qpc + 0x9c), &qp->rcq) != 0)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_QP_CQ);
	return 0;
}

/* The rings (RQ at the umem offset, SQ right after it; the SQ alone on an RMP) and the record, each inside its umem. */
static int vb_devx_qp_mem(struct vb_context *ctx, const uint8_t *in, struct hw_qp_attr *ha, struct vb_devx_qp *qp,
			  uint8_t *out, size_t outlen)
{
	const uint8_t *qpc = in + VB_QPC;
	bool dci = ha->type == HW_QPT_DCI;
	uint64_t rq = dci || qp->rmp != NULL ? 0 : (uint64_t)1 << (ha->log_rq_size + ha->log_rq_stride);
	uint64_t len = rq + ((uint64_t)HW_SEND_WQE_BB << ha->log_sq_size);
	uint64_t off = vb_prm_be64(in + VB_QP_WQ_OFF), dbr_off = vb_prm_be64(qpc + 0xa0);
	int rc;

	/* wq_umem_valid and dbr_umem_valid are not read: the kernel sets both in every DevX CREATE_QP. */
	rc = vb_devx_umem_take(ctx, vb_prm_be32(in + VB_QP_WQ_ID), off, len, &qp->wq_um, out, outlen);
	if (rc == 0)
		rc = vb_devx_umem_take(ctx, vb_prm_be32(qpc + 0xe4), dbr_off, HW_QP_DBREC_BYTES, &qp->dbr_um, out, outlen);
	if (rc != 0)
		return rc;
	ha->ring = (uint8_t *)qp->wq_um->addr + off;
	ha->sq = dci ? ha->ring : NULL; /* a DCI's ring is its SQ alone */
	ha->dbrec = (uint32_t *)(void *)((uint8_t *)qp->dbr_um->addr + dbr_off);
	if (((uintptr_t)ha->ring & (HW_QP_RING_ALIGN - 1)) != 0 || ((uintptr_t)ha->dbrec & 7) != 0)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_UMEM);
	return 0;
}

static int vb_devx_qp_engine(struct vb_context *ctx, struct hw_qp_attr *ha, struct vb_devx_qp *qp, uint32_t *qpn)
{
	struct hw_gid_entry g0;
	enum hw_status st;

	ha->pd = qp->pd;
	ha->send_cq = qp->scq.hw;
	ha->recv_cq = qp->rcq.hw;
	ha->srq = qp->rmp != NULL ? vb_devx_rmp_hw(qp->rmp) : NULL;
	ha->lid = ctx->dev->lid;
	ha->roce = ctx->dev->roce;
	ha->shared = true;
	if (hw_gid_get(&ctx->dev->fn, 0, &g0))
		memcpy(ha->gid, g0.gid, sizeof(ha->gid));
	st = hw_id_alloc(HW_ID_QPN, qpn);
	if (st != HW_OK)
		return vb_id_errno(st);
	ha->qpn = *qpn;
	if (hw_machine_ipv4(NULL))
		(void)fab_xm_serve(); /* a named machine takes requests of others once it has queues */
	st = hw_qp_create(ha, &qp->hw);
	if (st != HW_OK) {
		qp->hw = NULL;
		return vb_qmem_errno(st);
	}
	(void)hw_qp_set_polled(qp->hw, true);
	(void)hw_qp_set_rights(qp->hw, 0); /* RST2INIT's rre/rwe/rae grant them */
	return 0;
}

/* A QP on an RMP entered ERR: its last-WQE event to the QP's subscribers (QP kind). */
static void vb_devx_qp_last_wqe(void *arg)
{
	const struct mlx5dv_devx_obj *obj = arg;

	vb_devx_evch_obj_event(obj, VB_EV_SRQ_LAST_WQE, obj->object_id, false);
}

int vb_devx_qp_create(struct vb_context *ctx, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
		      struct mlx5dv_devx_obj *obj)
{
	struct hw_qp_attr ha = {0};
	struct vb_devx_qp *qp;
	uint32_t qpn = 0;
	int rc;

	if (inlen < VB_QP_IN_SZ || out == NULL || outlen < VB_QP_OUT_SZ)
		return EINVAL;
	rc = vb_devx_qp_shape(in + VB_QPC, &ha, out, outlen);
	ha.user_index = vb_prm_u24(in + VB_QPC + 0x10);
	if (rc != 0)
		return rc;
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return ENOMEM;
	rc = vb_devx_qp_objs(ctx, in + VB_QPC, qp, out, outlen);
	if (rc == 0)
		rc = vb_devx_qp_mem(ctx, in, &ha, qp, out, outlen);
	if (rc == 0)
		rc = vb_devx_qp_engine(ctx, &ha, qp, &qpn);
	if (rc != 0) {
		vb_devx_qp_free(qp, qpn);
		return rc;
	}
	/* cs_res (PRM qpc byte 0xc7): responder scatter to CQE, as the program asks (UCX's rc_mlx5 does) */
	if (ha.type == HW_QPT_RC && in[VB_QPC + 0xc7] != 0)
		(void)hw_qp_set_scatter(qp->hw, true);
	if (qp->rmp != NULL)
		hw_qp_on_err(qp->hw, vb_devx_qp_last_wqe, obj);
	memcpy(qp->qpc, in + VB_QPC, VB_QPC_SZ);
	qp->qpc[0] &= 0x0f; /* state: RST */
	memset(out, 0, VB_QP_OUT_SZ);
	vb_prm_put32(out + 8, qpn);
	obj->kind = VB_DEVX_QP;
	obj->object_id = qpn;
	obj->priv = qp;
	return 0;
}

void vb_devx_qp_destroy(struct mlx5dv_devx_obj *obj)
{
	vb_devx_evch_obj_gone(obj);
	vb_devx_qp_free(obj->priv, obj->object_id);
}

/*
 * INIT2RTR connects the QP to remote_qpn where its address path leads: by
 * the GID (always on RoCE, else when grh is set) to a port of this machine
 * or another machine's; by number on this machine otherwise. As on a
 * fabric, the command succeeds either way and sends to nobody fail with
 * transport retries exceeded (the rules of vb_qp.c's route).
 */
static void vb_devx_qp_route(struct vb_context *ctx, struct vb_devx_qp *qp, const uint8_t *in)
{
	const uint8_t *ads = in + VB_ADS;
	uint32_t dqpn = vb_prm_u24(in + VB_QPC + 0x14);
	bool roce = ctx->dev->roce;
	struct hw_gid_dest d = {.where = HW_GID_HERE};

	if (roce || (ads[5] & 0x80))
		hw_gid_route(ads + 0x10, &d);
	if (!roce && d.where == HW_GID_NOWHERE)
		d.where = HW_GID_HERE, d.lid = 0;
	if (d.where == HW_GID_MACHINE) {
		(void)hw_qp_connect_machine(qp->hw, d.machine, dqpn, ads + 0x10);
		return;
	}
	if (d.where == HW_GID_HERE && hw_qp_connect_port(qp->hw, dqpn, roce ? d.lid : 0) == HW_OK)
		return;
	BASE_DBG("DevX QP: no QP %u to connect to", dqpn);
	hw_qp_connect(qp->hw, NULL);
}

/* Copies the context bytes [off, off + n) of the command into the kept context. */
static void vb_devx_qp_keep(struct vb_devx_qp *qp, const uint8_t *in, size_t off, size_t n)
{
	memcpy(qp->qpc + off, in + VB_QPC + off, n);
}

/*
 * The remote rights (rre, rwe, rae: qpc byte 0x92's top bits). RST2INIT always sets them; INIT2INIT,
 * INIT2RTR, RTR2RTS and RTS2RTS set those their opt_param_mask (0x10) flags (RRE 1 << 1, RAE 1 << 2,
 * RWE 1 << 3), as the kernel flags a change of access rights; UCX's rc_mlx5 grants read and atomics
 * at INIT2RTR.
 */
static void vb_devx_qp_rights(struct vb_devx_qp *qp, uint16_t opcode, const uint8_t *in)
{
	uint32_t opt = vb_prm_be32(in + 0x10);
	uint8_t mask = 0xe0, now;

	if (opcode != VB_OP_RST2INIT)
		mask = (uint8_t)(((opt & (1u << 1)) ? 0x80 : 0) | ((opt & (1u << 3)) ? 0x40 : 0) |
				 ((opt & (1u << 2)) ? 0x20 : 0));
	if (mask == 0)
		return;
	now = (uint8_t)((qp->qpc[0x92] & ~mask) | (in[VB_QPC + 0x92] & mask));
	(void)hw_qp_set_rights(qp->hw, ((now & 0x80) ? HW_ACCESS_REMOTE_READ : 0) |
					       ((now & 0x40) ? HW_ACCESS_REMOTE_WRITE : 0) |
					       ((now & 0x20) ? HW_ACCESS_REMOTE_ATOMIC : 0));
	qp->qpc[0x92] = now;
}

/* What each transition sets, on the engine and in the kept context. */
static int vb_devx_qp_apply(struct vb_context *ctx, struct vb_devx_qp *qp, uint16_t opcode, const uint8_t *in)
{
	const uint8_t *qpc = in + VB_QPC;

	if (opcode == VB_OP_RST2INIT || opcode == VB_OP_INIT2INIT || opcode == VB_OP_INIT2RTR ||
	    opcode == VB_OP_RTR2RTS || opcode == VB_OP_RTS2RTS)
		vb_devx_qp_rights(qp, opcode, in);
	if (opcode == VB_OP_RST2INIT || opcode == VB_OP_INIT2INIT)
		vb_devx_qp_keep(qp, in, 0x18, 0x2c); /* the address path's port */
	if (opcode == VB_OP_INIT2RTR) {
		if (hw_qp_set_rnr(qp->hw, qpc[0x94] & 0x1f, qp->rnr_retry) != HW_OK)
			return EINVAL;
		qp->min_rnr = qpc[0x94] & 0x1f;
		if (qp->hw->type != HW_QPT_DCI) /* a DCI's WQEs name their DCT */
			vb_devx_qp_route(ctx, qp, in);
		vb_devx_qp_keep(qp, in, 0x8, 1);     /* mtu, log_msg_max */
		vb_devx_qp_keep(qp, in, 0x14, 4);    /* remote_qpn */
		vb_devx_qp_keep(qp, in, 0x18, 0x2c); /* the primary address path */
		vb_devx_qp_keep(qp, in, 0x94, 4);    /* min_rnr_nak, next_rcv_psn */
	}
	if (opcode == VB_OP_RTR2RTS || opcode == VB_OP_RTS2RTS) {
		if (hw_qp_set_rnr(qp->hw, qp->min_rnr, qpc[0x72] >> 5) != HW_OK)
			return EINVAL;
		qp->rnr_retry = qpc[0x72] >> 5;
		/* ack_timeout (address path) and retry_count, as the card's requester retransmits */
		if (hw_qp_set_retry(qp->hw, qpc[0x18 + 0x8] >> 3, qpc[0x71] & 0x7) != HW_OK)
			return EINVAL;
		vb_devx_qp_keep(qp, in, 0x71, 2); /* log_sra_max, retry_count, rnr_retry */
		vb_devx_qp_keep(qp, in, 0x78, 4); /* next_send_psn */
		qp->qpc[0x18 + 0x8] = (uint8_t)((qp->qpc[0x18 + 0x8] & 0x07) | (qpc[0x18 + 0x8] & 0xf8)); /* ack_timeout */
	}
	return 0;
}

static const struct vb_qp_cmd *vb_qp_cmd_of(uint16_t opcode)
{
	for (size_t i = 0; i < sizeof(vb_qp_cmds) / sizeof(vb_qp_cmds[0]); i++)
		if (vb_qp_cmds[i].opcode == opcode)
			return &vb_qp_cmds[i];
	return NULL;
}

int vb_devx_qp_modify(struct mlx5dv_devx_obj *obj, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen)
{
	struct vb_devx_qp *qp = obj->priv;
	uint16_t opcode = vb_prm_opcode(in);
	const struct vb_qp_cmd *cmd = vb_qp_cmd_of(opcode);
	enum hw_qp_state cur;

	if (cmd == NULL && opcode != VB_OP_SQERR2RTS)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_OP, VB_SYND_BAD_OP);
	/*
	 * The kernel runs a command on the object it names only: another qpn is
	 * refused before the card. 2ERR and 2RST carry no context (0x10 bytes).
	 */
	if (inlen < (cmd != NULL && cmd->from_any ? VB_QP_OUT_SZ : VB_QP_MOD_IN_SZ) || outlen < VB_QP_OUT_SZ ||
	    vb_prm_u24(in + 8) != obj->object_id)
		return EINVAL;
	cur = hw_qp_state(qp->hw);
	if (cmd == NULL || (!cmd->from_any && cur != cmd->from)) /* SQER is never a state here */
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_QP_STATE, VB_SYND_QP_STATE);
	if (vb_devx_qp_apply(vb_ctx(obj->ctx), qp, opcode, in) != 0)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_QP_RNR);
	if (cmd->to != cur && hw_qp_modify(qp->hw, cmd->to) != HW_OK)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_QP_STATE, VB_SYND_QP_STATE);
	memset(out, 0, VB_QP_OUT_SZ);
	return 0;
}

static uint8_t vb_prm_qp_state(enum hw_qp_state s)
{
	static const uint8_t m[] = {
		[HW_QP_RESET] = VB_QPS_RST, [HW_QP_INIT] = VB_QPS_INIT, [HW_QP_RTR] = VB_QPS_RTR,
		[HW_QP_RTS] = VB_QPS_RTS, [HW_QP_ERR] = VB_QPS_ERR,
	};

	return (unsigned int)s <= HW_QP_ERR ? m[s] : VB_QPS_ERR;
}

/* QUERY_QP: the context as created and moved since, with the state the device has now (a failed WQE: ERR). */
int vb_devx_qp_query(struct mlx5dv_devx_obj *obj, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen)
{
	struct vb_devx_qp *qp = obj->priv;

	if (inlen < VB_QP_QUERY_IN_SZ || outlen < VB_QP_QUERY_OUT_SZ || vb_prm_u24(in + 8) != obj->object_id)
		return EINVAL;
	memset(out, 0, outlen);
	memcpy(out + VB_QPC, qp->qpc, VB_QPC_SZ);
	out[VB_QPC] = (uint8_t)((vb_prm_qp_state(hw_qp_state(qp->hw)) << 4) | (qp->qpc[0] & 0x0f));
	return 0;
}
