/*
 * vb_dvmisc — small mlx5dv queries and settings reached through vb_dv_ops:
 * mlx5dv_query_port, reserved QP numbers, a QP's RoCE v2 UDP source port.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hw_ids.h"
#include "vb_int.h"

#define VB_VPORT_UPLINK 0xffffu	      /* MLX5_VPORT_UPLINK: the DPU PF's uplink representor */
#define VB_REG_C0_MASK 0xffff0000u    /* the eswitch's source-port metadata bits of reg_c0 */

/*
 * As mlx5_ib's QUERY_PORT: only a port of an eswitch manager in switchdev
 * mode has vport information. Here that is a DPU-side PF (its ib device is
 * the uplink representor, as p0/p1 on a BlueField-2 in its default mode); a
 * host function or an SF has none and reads all zero. The vport-steering ICM
 * addresses are not reported: the device has no software-steering ICM.
 */
static int vb_dv_query_port(struct ibv_context *c, uint32_t port_num, struct mlx5dv_port *info, size_t info_len)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	const struct hw_function *fn;

	if (ctx == NULL || info == NULL || info_len != sizeof(*info) || port_num != 1)
		return EINVAL;
	memset(info, 0, sizeof(*info));
	fn = &ctx->dev->fn;
	if (fn->side != HW_SIDE_DPU || fn->type != HW_FUNC_PF)
		return 0;
	info->flags = MLX5DV_QUERY_PORT_VPORT | MLX5DV_QUERY_PORT_ESW_OWNER_VHCA_ID | MLX5DV_QUERY_PORT_VPORT_REG_C0;
	info->vport = VB_VPORT_UPLINK;
	info->esw_owner_vhca_id = fn->pci.function;
	/* The uplink's source-port metadata: a per-eswitch value in the top 16 bits, never 0. */
	info->reg_c0.value = (uint32_t)(fn->pci.function + 1u) << 16;
	info->reg_c0.mask = VB_REG_C0_MASK;
	return 0;
}

/*
 * Reserved QP numbers: taken from the device-wide QPN space (hw_ids), so no
 * QP of any process is ever given one while it is held; the context keeps
 * the ones it holds (rdma-core's per-context blocks) and frees them at close.
 */
static int vb_dv_reserved_qpn_alloc(struct ibv_context *c, uint32_t *qpn)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	enum hw_status st;
	uint32_t n, *grown;
	int rc = 0;

	if (ctx == NULL || qpn == NULL)
		return EINVAL;
	pthread_mutex_lock(&ctx->lock);
	if (ctx->rqpn_cnt == ctx->rqpn_cap) {
		uint32_t cap = ctx->rqpn_cap ? ctx->rqpn_cap * 2 : 64;

		grown = realloc(ctx->rqpns, cap * sizeof(*grown));
		if (grown == NULL) {
			rc = ENOMEM;
			goto out;
		}
		ctx->rqpns = grown;
		ctx->rqpn_cap = cap;
	}
	st = hw_id_alloc(HW_ID_QPN, &n);
	if (st != HW_OK) {
		rc = vb_id_errno(st);
		goto out;
	}
	ctx->rqpns[ctx->rqpn_cnt++] = n;
	*qpn = n;
out:
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

/* EINVAL for a number this context does not hold reserved (a QP's, another's, or one freed). */
static int vb_dv_reserved_qpn_dealloc(struct ibv_context *c, uint32_t qpn)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	int rc = EINVAL;

	if (ctx == NULL)
		return EINVAL;
	pthread_mutex_lock(&ctx->lock);
	for (uint32_t i = 0; i < ctx->rqpn_cnt; i++) {
		if (ctx->rqpns[i] != qpn)
			continue;
		ctx->rqpns[i] = ctx->rqpns[--ctx->rqpn_cnt];
		rc = hw_id_free(HW_ID_QPN, qpn) == HW_OK ? 0 : EINVAL;
		break;
	}
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

void vb_rqpn_fini(struct vb_context *ctx)
{
	for (uint32_t i = 0; i < ctx->rqpn_cnt; i++)
		(void)hw_id_free(HW_ID_QPN, ctx->rqpns[i]);
	free(ctx->rqpns);
	ctx->rqpns = NULL;
	ctx->rqpn_cnt = ctx->rqpn_cap = 0;
}

/*
 * mlx5's RTS2RTS with the UDP source port: an RC or UC QP in RTS only, else
 * EOPNOTSUPP (the provider's own check, v44). The port is kept with the QP;
 * nothing reads it back (rdma-core has no query for it, and the device's
 * transport between processes and machines carries no UDP header).
 */
static int vb_dv_modify_qp_udp_sport(struct ibv_qp *ibqp, uint16_t udp_sport)
{
	struct vb_qp *qp;

	if (ibqp == NULL || vb_ctx_checked(ibqp->context) == NULL)
		return EINVAL;
	qp = vb_qp_of(ibqp);
	if ((ibqp->qp_type != IBV_QPT_RC && ibqp->qp_type != IBV_QPT_UC) || ibqp->state != IBV_QPS_RTS)
		return EOPNOTSUPP;
	atomic_store_explicit(&qp->udp_sport, udp_sport, memory_order_relaxed);
	return 0;
}

const struct vb_dv_misc_ops vb_dv_misc_ops_impl = {
	.query_port = vb_dv_query_port,
	.reserved_qpn_alloc = vb_dv_reserved_qpn_alloc,
	.reserved_qpn_dealloc = vb_dv_reserved_qpn_dealloc,
	.modify_qp_udp_sport = vb_dv_modify_qp_udp_sport,
};
