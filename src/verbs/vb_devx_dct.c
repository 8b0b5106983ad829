/*
 * vb_devx_dct — a DC target made by DevX commands: CREATE_DCT, DRAIN_DCT,
 * QUERY_DCT and its destroy. It is the engine's DCT (hw_dct.h), the one
 * mlx5dv_create_qp makes: a responder on an SRQ, shared under its number so
 * a DCI of any process reaches it, checking the DC access key and port of
 * each request. As the card, CREATE_DCT gives a working DCT (the state
 * ACTIVE): the command carries all a verbs DCT gets in its two
 * transitions. DRAIN_DCT stops it taking requests (DRAINED at once: the
 * engine holds no request of it in flight between two of its steps);
 * requests to it then find nobody and their DCI's retries run out. A
 * request with another key is dropped and counted
 * (dc_access_key_violation_count in QUERY_DCT). The CQ and SRQ named are
 * the context's, DevX or verbs (vb_devx_named.c); the DCT holds them.
 *
 * PRM layouts (mlx5_ifc.h), big-endian. create_dct_in: the DCT context at
 * 0x10 (0x40 bytes); create_dct_out: dctn at 8. drain_dct_in and
 * query_dct_in: dctn at 8; query_dct_out: the context at 0x10. Context
 * fields: state (low 4 bits of 0), user_index (4), cqn (8), rre/rwe/rae
 * (0xd: 0x08, 0x04, 0x02), cs_res (0x11), min_rnr_nak (low 5 bits of
 * 0x12), srqn_xrqn (0x14), pd (0x18), tclass and flow label (0x1c),
 * dc_access_key (0x20), mtu (low 3 bits of 0x28), port (0x29), pkey_index
 * (0x2a), my_addr_index (0x2d), hop_limit (0x2f),
 * dc_access_key_violation_count (0x30).
 */
#include <stdlib.h>
#include <string.h>

#include "base_log.h"
#include "fab_xm.h"
#include "hw_gid.h"
#include "hw_ids.h"
#include "hw_machine.h"
#include "hw_qp.h"
#include "vb_devx_prm.h"

#define VB_DCTC 0x10
#define VB_DCTC_SZ 0x40
#define VB_DCT_IN_SZ (VB_DCTC + VB_DCTC_SZ)
#define VB_DCT_OUT_SZ 0x10
#define VB_DCT_CMD_IN_SZ 0x10 /* drain_dct_in, query_dct_in */
#define VB_DCT_QUERY_OUT_SZ (VB_DCTC + VB_DCTC_SZ)

#define VB_OP_DRAIN_DCT 0x712
#define VB_OP_QUERY_DCT 0x713

/* dctc.state */
#define VB_DCTS_ACTIVE 0x0
#define VB_DCTS_DRAINED 0x2

#define VB_DCT_PORT 1 /* the device's one port */

struct vb_devx_dct {
	struct hw_qp *hw;
	struct hw_pd *pd;
	struct vb_devx_cqref cq;
	struct vb_srq *srq;
	struct vb_cq_srq link; /* on a verbs CQ's list while linked */
	bool linked;
	uint8_t dctc[VB_DCTC_SZ]; /* the context as created, for QUERY_DCT */
};

static void vb_devx_dct_free(struct vb_devx_dct *d, uint32_t dctn)
{
	if (d->hw != NULL)
		hw_qp_destroy(d->hw); /* the fence: no request runs on it after this */
	if (d->linked)
		vb_devx_cq_srq_unlink(d->cq.vcq, &d->link);
	if (dctn != 0)
		(void)hw_id_free(HW_ID_QPN, dctn);
	vb_devx_cqref_put(&d->cq);
	vb_devx_srq_put(d->srq);
	if (d->pd != NULL)
		hw_pd_free(d->pd);
	free(d);
}

/* The PD, CQ and SRQ the context names, and its port and GID index: each held, or the refusal in out. */
static int vb_devx_dct_objs(struct vb_context *ctx, const uint8_t *dctc, struct vb_devx_dct *d, uint8_t *out,
			    size_t outlen)
{
	struct hw_gid_entry g;

	d->pd = hw_pd_get(vb_prm_u24(dctc + 0x18));
	if (d->pd == NULL)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_DCT_PD);
	if (vb_devx_cqref_take(ctx, vb_prm_u24(dctc + 8), &d->cq) != 0)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_DCT_CQ);
	d->srq = vb_devx_srq_take(ctx, vb_prm_u24(dctc + 0x14));
	if (d->srq == NULL)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_DCT_SRQ);
	if (dctc[0x29] != VB_DCT_PORT || !hw_gid_get(&ctx->dev->fn, dctc[0x2d], &g))
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_PARAM, VB_SYND_DCT_PORT);
	return 0;
}

/* The engine's DCT, taken to RTR (its working state) with the context's rights and RNR timer. */
static int vb_devx_dct_engine(struct vb_context *ctx, const uint8_t *dctc, struct vb_devx_dct *d, uint32_t *dctn)
{
	struct hw_qp_attr ha = {
		.type = HW_QPT_DCT,
		.pd = d->pd,
		.send_cq = d->cq.hw,
		.recv_cq = d->cq.hw,
		.srq = d->srq->hw,
		.dc_key = vb_prm_be64(dctc + 0x20),
		.min_rnr_timer = dctc[0x12] & 0x1f,
		.lid = ctx->dev->lid,
		.roce = ctx->dev->roce,
		.shared = true,
	};
	struct hw_gid_entry g;
	enum hw_status st;

	if (hw_gid_get(&ctx->dev->fn, dctc[0x2d], &g))
		memcpy(ha.gid, g.gid, sizeof(ha.gid));
	st = hw_id_alloc(HW_ID_QPN, dctn);
	if (st != HW_OK)
		return vb_id_errno(st);
	ha.qpn = *dctn;
	if (hw_machine_ipv4(NULL))
		(void)fab_xm_serve(); /* a named machine takes requests of others once it has queues */
	st = hw_qp_create(&ha, &d->hw);
	if (st != HW_OK) {
		d->hw = NULL;
		return vb_qmem_errno(st);
	}
	(void)hw_qp_set_rights(d->hw, ((dctc[0xd] & 0x08) ? HW_ACCESS_REMOTE_READ : 0) |
					      ((dctc[0xd] & 0x04) ? HW_ACCESS_REMOTE_WRITE : 0) |
					      ((dctc[0xd] & 0x02) ? HW_ACCESS_REMOTE_ATOMIC : 0));
	if (hw_qp_modify(d->hw, HW_QP_INIT) != HW_OK || hw_qp_modify(d->hw, HW_QP_RTR) != HW_OK)
		return EINVAL;
	return 0;
}

int vb_devx_dct_create(struct vb_context *ctx, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen,
		       struct mlx5dv_devx_obj *obj)
{
	const uint8_t *dctc = in + VB_DCTC;
	struct vb_devx_dct *d;
	uint32_t dctn = 0;
	int rc;

	if (inlen < VB_DCT_IN_SZ || out == NULL || outlen < VB_DCT_OUT_SZ)
		return EINVAL;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return ENOMEM;
	rc = vb_devx_dct_objs(ctx, dctc, d, out, outlen);
	if (rc == 0)
		rc = vb_devx_dct_engine(ctx, dctc, d, &dctn);
	if (rc != 0) {
		vb_devx_dct_free(d, dctn);
		return rc;
	}
	if (d->cq.vcq != NULL) {
		d->link.srq = d->srq;
		vb_devx_cq_srq_link(d->cq.vcq, &d->link);
		d->linked = true;
	}
	memcpy(d->dctc, dctc, VB_DCTC_SZ);
	d->dctc[0] &= 0xf0; /* state: ACTIVE */
	memset(d->dctc + 0x30, 0, 4); /* the violation count is the device's */
	memset(out, 0, VB_DCT_OUT_SZ);
	vb_prm_put32(out + 8, dctn);
	obj->kind = VB_DEVX_DCT;
	obj->object_id = dctn;
	obj->priv = d;
	BASE_DBG("DevX DCT %u on CQ %u, SRQ %u", dctn, vb_prm_u24(dctc + 8), vb_prm_u24(dctc + 0x14));
	return 0;
}

void vb_devx_dct_destroy(struct mlx5dv_devx_obj *obj)
{
	vb_devx_dct_free(obj->priv, obj->object_id);
}

static bool vb_devx_dct_drained(const struct vb_devx_dct *d)
{
	return hw_qp_state(d->hw) != HW_QP_RTR;
}

/* DRAIN_DCT: from ACTIVE only; the DCT answers nothing after it. */
int vb_devx_dct_modify(struct mlx5dv_devx_obj *obj, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen)
{
	struct vb_devx_dct *d = obj->priv;

	if (vb_prm_opcode(in) != VB_OP_DRAIN_DCT)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_OP, VB_SYND_BAD_OP);
	/* The kernel runs a command on the object it names only: another dctn is refused before the card. */
	if (inlen < VB_DCT_CMD_IN_SZ || outlen < VB_DCT_OUT_SZ || vb_prm_u24(in + 8) != obj->object_id)
		return EINVAL;
	if (vb_devx_dct_drained(d))
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_RES_STATE, VB_SYND_DCT_STATE);
	if (hw_qp_modify(d->hw, HW_QP_ERR) != HW_OK)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_RES_STATE, VB_SYND_DCT_STATE);
	memset(out, 0, VB_DCT_OUT_SZ);
	return 0;
}

/* QUERY_DCT: the context as created, with the state and the key violations the device has now. */
int vb_devx_dct_query(struct mlx5dv_devx_obj *obj, const uint8_t *in, size_t inlen, uint8_t *out, size_t outlen)
{
	struct vb_devx_dct *d = obj->priv;

	if (vb_prm_opcode(in) != VB_OP_QUERY_DCT)
		return vb_devx_refuse(out, outlen, VB_STAT_BAD_OP, VB_SYND_BAD_OP);
	if (inlen < VB_DCT_CMD_IN_SZ || outlen < VB_DCT_QUERY_OUT_SZ || vb_prm_u24(in + 8) != obj->object_id)
		return EINVAL;
	memset(out, 0, outlen);
	memcpy(out + VB_DCTC, d->dctc, VB_DCTC_SZ);
	out[VB_DCTC] = (uint8_t)((d->dctc[0] & 0xf0) | (vb_devx_dct_drained(d) ? VB_DCTS_DRAINED : VB_DCTS_ACTIVE));
	vb_prm_put32(out + VB_DCTC + 0x30, __atomic_load_n(&d->hw->sh->dc_key_violations, __ATOMIC_RELAXED));
	return 0;
}
