/*
 * vb_dcs — DCI streams and the AH-to-QP mapping, reached through vb_dv_ops
 * (libmlx5's side: vb_mlx5_dcs.c). The streams' error state is the
 * device's (hw_dcs.h); this checks what rdma-core's mlx5 checks before its
 * command and answers as the card does.
 */
#include <errno.h>
#include <stdatomic.h>

#include "hw_dcs.h"
#include "vb_int.h"

/*
 * mlx5dv_dci_stream_id_reset: EOPNOTSUPP unless the QP was last moved to RTS
 * (mlx5 reads ibv_qp.state), EINVAL on a QP that is no DCI; the device then
 * refuses (EINVAL) a DCI without streams, one it moved to ERR, or a stream
 * that is not in error.
 */
static int vb_dcs_stream_reset(struct ibv_qp *ibqp, uint16_t stream_id)
{
	struct vb_qp *qp;

	if (ibqp == NULL || vb_ctx_checked(ibqp->context) == NULL)
		return EINVAL;
	if (ibqp->state != IBV_QPS_RTS)
		return EOPNOTSUPP;
	qp = vb_qp_of(ibqp);
	if (ibqp->qp_type != IBV_QPT_DRIVER || qp->dc_type != MLX5DV_DCTYPE_DCI)
		return EINVAL;
	return hw_qp_dci_stream_reset(qp->hw, stream_id) == HW_OK ? 0 : EINVAL;
}

/*
 * mlx5dv_map_ah_to_qp: a hint tying the AH's path to the congestion control
 * the QP negotiated (its ECE). The mapping is kept with the AH until it is
 * destroyed; a second one is ignored (success), as the man page says. The
 * device runs no congestion control algorithm to choose between, so the
 * mapping changes nothing the traffic shows, as on a card where all QPs
 * share one algorithm. EOPNOTSUPP for an AH without a GRH (mlx5), EINVAL for
 * a number that names no QP of the process (no ECE to take).
 */
static int vb_dcs_map_ah(struct ibv_ah *ibah, uint32_t qp_num)
{
	struct vb_ah *ah = (struct vb_ah *)ibah;
	uint32_t none = 0;

	if (ibah == NULL || vb_ctx_checked(ibah->context) == NULL)
		return EINVAL;
	if (!ah->global)
		return EOPNOTSUPP;
	if (qp_num > 0xffffffu || hw_qp_lookup(qp_num) == NULL)
		return EINVAL;
	(void)atomic_compare_exchange_strong(&ah->map_qpn, &none, qp_num + 1);
	return 0;
}

const struct vb_dv_dcs_ops vb_dv_dcs_ops_impl = {
	.dci_stream_id_reset = vb_dcs_stream_reset,
	.map_ah_to_qp = vb_dcs_map_ah,
};
