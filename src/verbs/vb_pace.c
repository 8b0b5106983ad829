/*
 * vb_pace — packet pacing: the device's caps, mlx5dv_pp_alloc / _free
 * (entries of the rate table, hw_pp.h) and a raw packet QP's rate
 * (ibv_modify_qp IBV_QP_RATE_LIMIT, ibv_modify_qp_rate_limit).
 *
 * The caps are a ConnectX-6 Dx's: rates of 1 kbit/s to 100 Gbit/s on raw
 * packet QPs, burst and typical packet size accepted (MLX5_IB_PP_SUPPORT_BURST).
 * A rate is applied by the engine (hw_pace.h): the QP's SQ gets a token
 * bucket filled at the rate, as deep as burst_upper_bound bytes (or what the
 * rate carries in 10 ms); the typical packet size is kept in the entry and
 * changes nothing here (the bucket counts bytes, not packets).
 *
 * Errors are the kernel's (mlx5_rl_add_rate, mlx5_ib's PP object): a rate
 * outside the caps EINVAL, a full table ENOSPC, a context shorter than its
 * rate_limit field or longer than set_pp_rate_limit_context EINVAL, unknown
 * flags EOPNOTSUPP (the provider's own check). mlx5dv_pp_free of an entry
 * already freed (or of any pointer that is no live entry) does nothing: the
 * live entries are listed and a handle is looked up there, never read first.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <infiniband/mlx5_user_ioctl_verbs.h>

#include "hw_epoch.h"
#include "hw_pace.h"
#include "hw_pp.h"
#include "hw_qp.h"
#include "vb_int.h"

#define PP_CTX_MIN 4u /* the rate_limit field */

void vb_pace_device_caps(struct ibv_device_attr_ex *a)
{
	a->packet_pacing_caps.qp_rate_limit_min = VB_PP_RATE_MIN;
	a->packet_pacing_caps.qp_rate_limit_max = VB_PP_RATE_MAX;
	a->packet_pacing_caps.supported_qpts = 1u << IBV_QPT_RAW_PACKET;
}

int vb_pace_rate_ok(uint32_t rate_kbps)
{
	return rate_kbps == 0 || (rate_kbps >= VB_PP_RATE_MIN && rate_kbps <= VB_PP_RATE_MAX) ? 0 : EINVAL;
}

static pthread_mutex_t pp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vb_pp *pp_live;

/* Takes pp off the live list: false when it was not on it. */
static bool pp_unlist(const struct vb_pp *pp)
{
	bool found = false;

	pthread_mutex_lock(&pp_lock);
	for (struct vb_pp **pl = &pp_live; *pl != NULL; pl = &(*pl)->live_next) {
		if (*pl == pp) {
			*pl = pp->live_next;
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&pp_lock);
	return found;
}

static struct mlx5dv_pp *vb_dv_pp_alloc(struct ibv_context *c, size_t sz, const void *pp_ctx, uint32_t flags)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	bool dedicated = (flags & MLX5_IB_UAPI_PP_ALLOC_FLAGS_DEDICATED_INDEX) != 0;
	struct hw_pp_rate r;
	struct vb_pp *pp;
	uint16_t index;

	if (flags & ~(uint32_t)MLX5_IB_UAPI_PP_ALLOC_FLAGS_DEDICATED_INDEX) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (ctx == NULL || pp_ctx == NULL || sz < PP_CTX_MIN || sz > HW_PP_CTX_BYTES) {
		errno = EINVAL;
		return NULL;
	}
	hw_pp_parse(pp_ctx, (uint32_t)sz, &r);
	if (r.rate_kbps == 0 || vb_pace_rate_ok(r.rate_kbps) != 0) {
		errno = EINVAL;
		return NULL;
	}
	pp = calloc(1, sizeof(*pp));
	if (pp == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	if (hw_pp_alloc(pp_ctx, (uint32_t)sz, dedicated, &index) != HW_OK) {
		free(pp);
		errno = ENOSPC;
		return NULL;
	}
	pp->pp.index = index;
	pp->dv = ctx->dev->dv;
	pp->magic = VB_MAGIC_PP;
	pthread_mutex_lock(&pp_lock);
	pp->live_next = pp_live;
	pp_live = pp;
	pthread_mutex_unlock(&pp_lock);
	return &pp->pp;
}

static void vb_dv_pp_free(struct mlx5dv_pp *dv_pp)
{
	struct vb_pp *pp = (struct vb_pp *)dv_pp;

	if (!pp_unlist(pp))
		return; /* void: nothing to report a foreign or freed entry to */
	pp->magic = 0;
	(void)hw_pp_free(pp->pp.index);
	free(pp);
}

int vb_modify_qp_rate_limit(struct ibv_qp *ibqp, struct ibv_qp_rate_limit_attr *attr)
{
	struct vb_qp *qp;
	int rc;

	if (ibqp == NULL || attr == NULL || vb_ctx_checked(ibqp->context) == NULL)
		return EINVAL;
	if (attr->comp_mask != 0)
		return EINVAL;
	/* Burst and typical size ride on a rate (mlx5_modify_qp_rate_limit). */
	if ((attr->max_burst_sz != 0 || attr->typical_pkt_sz != 0) && attr->rate_limit == 0)
		return EINVAL;
	/* The kernel's table: a rate alone is a modify of a raw packet QP in RTS to RTS. */
	qp = vb_qp_of(ibqp);
	if (ibqp->qp_type != IBV_QPT_RAW_PACKET || qp->raw == NULL || ibqp->state != IBV_QPS_RTS)
		return EINVAL;
	rc = vb_pace_rate_ok(attr->rate_limit);
	if (rc != 0)
		return rc;
	pthread_mutex_lock(&qp->ctx->lock);
	rc = vb_raw_set_rate(qp, attr->rate_limit, attr->max_burst_sz, attr->typical_pkt_sz);
	pthread_mutex_unlock(&qp->ctx->lock);
	if (rc == 0)
		qp->attr.rate_limit = attr->rate_limit;
	return rc;
}

void vb_pace_qp_stats(struct ibv_qp *ibqp, struct hw_pace_stats *s)
{
	struct vb_qp *qp = vb_qp_of(ibqp);
	struct hw_pace *p;

	if (ibqp->qp_type == IBV_QPT_RAW_PACKET) {
		vb_raw_pace_stats(qp, s);
		return;
	}
	hw_epoch_enter(); /* the bucket stays while it is read */
	p = qp->hw != NULL ? __atomic_load_n(&qp->hw->pace, __ATOMIC_ACQUIRE) : NULL;
	if (p != NULL)
		hw_pace_stats(p, s);
	else
		*s = (struct hw_pace_stats){ 0 };
	hw_epoch_leave();
}

const struct vb_dv_pace_ops vb_dv_pace_ops_impl = {
	.pp_alloc = vb_dv_pp_alloc,
	.pp_free = vb_dv_pp_free,
	.node_create = vb_sched_node_create,
	.leaf_create = vb_sched_leaf_create,
	.node_modify = vb_sched_node_modify,
	.leaf_modify = vb_sched_leaf_modify,
	.node_destroy = vb_sched_node_destroy,
	.leaf_destroy = vb_sched_leaf_destroy,
	.modify_qp_sched_elem = vb_sched_modify_qp,
};
