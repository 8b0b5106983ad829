/*
 * vb_dc — mlx5dv_create_qp: the Dynamically Connected QPs (DCI, DCT) and the
 * plain QP types reached through it, and the DC state machines.
 *
 * The attributes are refused in the order, and with the errno values, of
 * rdma-core v44's mlx5 provider (create_qp, create_dct in verbs.c,
 * mlx5_qp_fill_wr_pfns in qp.c), then of the kernel (a DCT must have an SRQ;
 * both CQs must be given). Two places differ: where the provider returns NULL
 * without setting errno (an ibv comp_mask bit it does not know, a
 * max_tso_header on a non-raw QP, IBV_QPT_DRIVER without mlx5dv attributes)
 * this one says EINVAL; and what the device has not (XRC, RSS, TSO, create
 * flags, the mlx5dv send ops) is EOPNOTSUPP with a log line.
 *
 * The modify masks are the kernel's (drivers/infiniband/hw/mlx5/qp.c:
 * modify_dci_qp_is_ok and mlx5_ib_modify_dct): a DCI goes RESET->INIT->RTR
 * ->RTS with no destination (the DCT is named per WQE), a DCT RESET->INIT->
 * RTR and nothing else; any other transition or attribute is EINVAL.
 */
#include <string.h>

#include "hw_dcs.h"
#include "vb_export.h"
#include "vb_int.h"

#define VB_DC_QP_COMP_SUP                                                                          \
	(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_XRCD | IBV_QP_INIT_ATTR_CREATE_FLAGS |             \
	 IBV_QP_INIT_ATTR_MAX_TSO_HEADER | IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH | \
	 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
#define VB_DC_DV_COMP_SUP                                                                          \
	(MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS | MLX5DV_QP_INIT_ATTR_MASK_DC |                  \
	 MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS | MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS)
#define VB_DC_DV_FLAGS_SUP                                                                         \
	(MLX5DV_QP_CREATE_TUNNEL_OFFLOADS | MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_UC |           \
	 MLX5DV_QP_CREATE_TIR_ALLOW_SELF_LOOPBACK_MC | MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE |   \
	 MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE | MLX5DV_QP_CREATE_PACKET_BASED_CREDIT_MODE |       \
	 MLX5DV_QP_CREATE_SIG_PIPELINING)
/* Scatter-to-CQE only moves where small receives land: nothing to model. */
#define VB_DC_DV_FLAGS_SCATTER (MLX5DV_QP_CREATE_DISABLE_SCATTER_TO_CQE | MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE)
/* A DCI has the RC operations (mlx5's MLX5_SUPPORTED_SEND_OPS_FLAGS_DCI); this device lacks BIND_MW. */
#define VB_DC_DCI_OPS                                                                              \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | IBV_QP_EX_WITH_SEND_WITH_INV |       \
	 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
	 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |                 \
	 IBV_QP_EX_WITH_LOCAL_INV)
#define VB_DC_DCI_OPS_MLX5 (IBV_QP_EX_WITH_BIND_MW)

static bool vb_mask_is(int mask, int req, int opt)
{
	return (mask & req) == req && (mask & ~(req | opt)) == 0;
}

static bool vb_dci_mask_ok(enum ibv_qp_state cur, enum ibv_qp_state to, int mask)
{
	const int st = IBV_QP_STATE;

	if (to == IBV_QPS_RESET)
		return vb_mask_is(mask, st, 0);
	if (cur == IBV_QPS_RESET && to == IBV_QPS_INIT)
		return vb_mask_is(mask, st | IBV_QP_PKEY_INDEX | IBV_QP_PORT, 0);
	if (cur == IBV_QPS_INIT && to == IBV_QPS_INIT)
		return vb_mask_is(mask, st, IBV_QP_PKEY_INDEX | IBV_QP_PORT);
	if (cur == IBV_QPS_INIT && to == IBV_QPS_RTR)
		return vb_mask_is(mask, st | IBV_QP_PATH_MTU, IBV_QP_PKEY_INDEX | IBV_QP_AV);
	if (cur == IBV_QPS_RTR && to == IBV_QPS_RTS)
		return vb_mask_is(mask,
				  st | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC |
					  IBV_QP_SQ_PSN,
				  IBV_QP_MIN_RNR_TIMER);
	if (cur == IBV_QPS_RTS && to == IBV_QPS_RTS)
		return vb_mask_is(mask, st, IBV_QP_MIN_RNR_TIMER);
	if (cur != IBV_QPS_RESET && to == IBV_QPS_ERR)
		return vb_mask_is(mask, st, 0);
	return false;
}

static bool vb_dct_mask_ok(enum ibv_qp_state cur, enum ibv_qp_state to, int mask)
{
	const int st = IBV_QP_STATE;

	if (cur == IBV_QPS_RESET && to == IBV_QPS_INIT)
		return vb_mask_is(mask, st | IBV_QP_ACCESS_FLAGS | IBV_QP_PKEY_INDEX | IBV_QP_PORT, 0);
	if (cur == IBV_QPS_INIT && to == IBV_QPS_RTR)
		return vb_mask_is(mask, st | IBV_QP_MIN_RNR_TIMER | IBV_QP_AV | IBV_QP_PATH_MTU, 0);
	return false;
}

int vb_dc_mask_ok(uint8_t dc_type, enum ibv_qp_state cur, enum ibv_qp_state to, int mask)
{
	bool ok = dc_type == MLX5DV_DCTYPE_DCT ? vb_dct_mask_ok(cur, to, mask) : vb_dci_mask_ok(cur, to, mask);

	return ok ? 0 : EINVAL;
}

/* The provider's checks before it looks at the QP type (create_qp's head). */
static int vb_dc_common_ok(const struct ibv_qp_init_attr_ex *a, const struct mlx5dv_qp_init_attr *dv)
{
	bool dc = a->qp_type == IBV_QPT_DRIVER && dv != NULL && (dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_DC);

	if (a->comp_mask & ~(uint64_t)VB_DC_QP_COMP_SUP)
		return EINVAL;
	if ((a->comp_mask & IBV_QP_INIT_ATTR_MAX_TSO_HEADER) && a->qp_type != IBV_QPT_RAW_PACKET)
		return EINVAL;
	if ((a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    ((a->comp_mask & IBV_QP_INIT_ATTR_RX_HASH) || (dc && dv->dc_init_attr.dc_type == MLX5DV_DCTYPE_DCT)))
		return EINVAL;
	if (dv == NULL)
		return a->qp_type == IBV_QPT_DRIVER ? EINVAL : 0;
	if (dv->comp_mask & ~(uint64_t)VB_DC_DV_COMP_SUP)
		return EINVAL;
	if ((dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_DC) && a->qp_type != IBV_QPT_DRIVER)
		return EINVAL;
	if (dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS) {
		if (dv->create_flags & ~(uint32_t)VB_DC_DV_FLAGS_SUP)
			return EINVAL;
		if ((dv->create_flags & VB_DC_DV_FLAGS_SCATTER) == VB_DC_DV_FLAGS_SCATTER)
			return EINVAL;
		if ((dv->create_flags & MLX5DV_QP_CREATE_SIG_PIPELINING) && a->qp_type != IBV_QPT_RC)
			return EOPNOTSUPP; /* signature pipelining is RC's here (vb_sig_pipe.c) */
	}
	if (a->qp_type == IBV_QPT_DRIVER && !dc)
		return EINVAL;
	return 0;
}

/* mlx5dv create flags beyond scatter-to-CQE: tunnel offloads, loopback, credit mode are not on this device. */
static int vb_dc_flags_ok(const struct mlx5dv_qp_init_attr *dv)
{
	if (dv == NULL || !(dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS) ||
	    (dv->create_flags & ~(uint32_t)(VB_DC_DV_FLAGS_SCATTER | MLX5DV_QP_CREATE_SIG_PIPELINING)) == 0)
		return 0;
	vb_log_unsupported("mlx5dv_create_qp create_flags");
	return EOPNOTSUPP;
}

/* A DCI has none of the mlx5dv send ops (memcpy, raw WQEs, mkeys: the UMR builders are RC's). */
static int vb_dc_dv_ops_ok(const struct mlx5dv_qp_init_attr *dv)
{
	if (dv == NULL || !(dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_SEND_OPS_FLAGS) || dv->send_ops_flags == 0)
		return 0;
	vb_log_unsupported("mlx5dv_create_qp send_ops_flags");
	return EOPNOTSUPP;
}

/* The ibv comp_mask bits of objects this device has not (XRC, RSS, TSO, ibv create flags). */
static int vb_dc_comp_ok(const struct ibv_qp_init_attr_ex *a)
{
	if ((a->comp_mask & ~(uint64_t)(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)) == 0)
		return 0;
	vb_log_unsupported("mlx5dv_create_qp comp_mask");
	return EOPNOTSUPP;
}

/* RC (and UD) through mlx5dv_create_qp: the QP ibv_create_qp_ex makes, with the UMR builders on RC (vb_mkey.c). */
static struct ibv_qp *vb_dv_create_qp_rc(struct vb_context *ctx, struct ibv_qp_init_attr_ex *a,
					 const struct mlx5dv_qp_init_attr *dv)
{
	int rc = vb_dc_flags_ok(dv);
	struct ibv_qp *qp;

	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	qp = vb_dv_create_qp_umr(&ctx->vctx.context, a, dv);
	/* Scatter to CQE as the flags say, over MLX5_SCATTER_TO_CQE (both at once were refused above). */
	if (qp != NULL && dv != NULL && (dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS) &&
	    (dv->create_flags & VB_DC_DV_FLAGS_SCATTER))
		vb_scat_set(vb_qp_of(qp), (dv->create_flags & MLX5DV_QP_CREATE_ALLOW_SCATTER_TO_CQE) != 0);
	return qp;
}

static int vb_dci_ok(struct vb_context *ctx, const struct ibv_qp_init_attr_ex *a,
		     const struct mlx5dv_qp_init_attr *dv)
{
	const struct mlx5dv_dci_streams *s = &dv->dc_init_attr.dci_streams;
	int rc;

	/* Streams past the device's caps (mlx5dv_query_device's dci_streams_caps): EINVAL, as mlx5. */
	if ((dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS) &&
	    (s->log_num_concurent > HW_DCS_LOG_MAX_CONC || s->log_num_errored > HW_DCS_LOG_MAX_ERRORED))
		return EINVAL;
	if (a->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		if (a->send_ops_flags & ~(uint64_t)(VB_DC_DCI_OPS | VB_DC_DCI_OPS_MLX5))
			return EOPNOTSUPP;
		if (a->send_ops_flags & VB_DC_DCI_OPS_MLX5) {
			vb_log_unsupported("ibv_wr_bind_mw");
			return EOPNOTSUPP;
		}
	}
	rc = vb_dc_dv_ops_ok(dv);
	if (rc == 0)
		rc = vb_dc_flags_ok(dv);
	if (rc == 0)
		rc = vb_dc_comp_ok(a);
	return rc != 0 ? rc : vb_qp_objs_ok(ctx, a);
}

static struct ibv_qp *vb_dc_create_dci(struct vb_context *ctx, struct ibv_qp_init_attr_ex *a,
				       const struct mlx5dv_qp_init_attr *dv)
{
	const struct vb_qp_kind k = {.hw = HW_QPT_DCI, .dc_type = MLX5DV_DCTYPE_DCI};
	const struct mlx5dv_dci_streams *s = &dv->dc_init_attr.dci_streams;
	int rc = vb_dci_ok(ctx, a, dv);
	struct ibv_qp *qp;

	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	qp = vb_qp_create(ctx, a, &k);
	if (qp == NULL || !(dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_DCI_STREAMS))
		return qp;
	/* Checked above, and the new QP is in RESET: this does not fail. */
	(void)hw_qp_set_dci_streams(vb_qp_of(qp)->hw, s->log_num_concurent, s->log_num_errored);
	return qp;
}

/* create_dct's own checks, then the kernel's: an SRQ and both CQs. */
static int vb_dct_ok(struct vb_context *ctx, const struct ibv_qp_init_attr_ex *a,
		     const struct mlx5dv_qp_init_attr *dv)
{
	if (a->comp_mask & ~(uint64_t)IBV_QP_INIT_ATTR_PD)
		return EINVAL;
	if (dv->comp_mask & ~(uint64_t)(MLX5DV_QP_INIT_ATTR_MASK_DC | MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS))
		return EINVAL;
	if ((dv->comp_mask & MLX5DV_QP_INIT_ATTR_MASK_QP_CREATE_FLAGS) &&
	    (dv->create_flags & ~(uint32_t)VB_DC_DV_FLAGS_SCATTER))
		return EINVAL;
	if (a->srq == NULL)
		return EINVAL;
	return vb_qp_objs_ok(ctx, a);
}

/* A DCT has no send queue and no receive ring: the caller's capabilities are not used (nor written back). */
static struct ibv_qp *vb_dc_create_dct(struct vb_context *ctx, struct ibv_qp_init_attr_ex *a,
				       const struct mlx5dv_qp_init_attr *dv)
{
	const struct vb_qp_kind k = {
		.hw = HW_QPT_DCT,
		.dc_type = MLX5DV_DCTYPE_DCT,
		.dc_key = dv->dc_init_attr.dct_access_key,
	};
	struct ibv_qp_init_attr_ex d;
	int rc = vb_dct_ok(ctx, a, dv);

	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	d = *a;
	memset(&d.cap, 0, sizeof(d.cap));
	return vb_qp_create(ctx, &d, &k);
}

struct ibv_qp *vb_dv_create_qp(struct ibv_context *c, struct ibv_qp_init_attr_ex *a, struct mlx5dv_qp_init_attr *dv)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	int rc;

	if (ctx == NULL || a == NULL) {
		errno = EINVAL;
		return NULL;
	}
	rc = vb_dc_common_ok(a, dv);
	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	if (a->qp_type != IBV_QPT_DRIVER)
		return vb_dv_create_qp_rc(ctx, a, dv);
	switch (dv->dc_init_attr.dc_type) {
	case MLX5DV_DCTYPE_DCT:
		return vb_dc_create_dct(ctx, a, dv);
	case MLX5DV_DCTYPE_DCI:
		return vb_dc_create_dci(ctx, a, dv);
	default:
		errno = EINVAL;
		return NULL;
	}
}
