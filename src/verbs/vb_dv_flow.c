/*
 * vb_dv_flow — mlx5dv_create_flow_matcher(3) and mlx5dv_create_flow(3): a
 * matcher is a matcher of the kernel's root table of its direction (NIC
 * receive, or NIC transmit for IBV_FLOW_ATTR_FLAGS_EGRESS or ft_type
 * NIC_TX), the table the verbs flows use (vb_flow.c); a flow is one rule
 * of it, an ibv_flow that ibv_destroy_flow removes.
 *
 * Masks and values are the PRM's fte_match_param, as mlx5dv_dr's (vb_dr.c:
 * the outer headers; a mask over another part is EOPNOTSUPP). A value may be
 * shorter than the parameters, in any length (the kernel's rule too), and
 * matches under the matcher's mask.
 *
 * Actions: a raw packet QP (held while the flow lives), a DevX TIR, drop, or
 * the default miss; one destination at most; a tag; a packet reformat or
 * header modify flow action (mlx5dv_create_flow_action_packet_reformat,
 * _modify_header, vb_dr_act.c) of the matcher's direction, held while the
 * flow lives. Counters and other flow
 * actions are EOPNOTSUPP with a log line. FDB and RDMA tables are
 * EOPNOTSUPP the same way.
 */
#include <stdlib.h>
#include <string.h>

#include "base_log.h"
#include "hw_steer.h"
#include "vb_int.h"

#define DV_FLOW_PARAM_SZ VB_DR_MATCH_SZ

static bool dv_flow_egress(const struct mlx5dv_flow_matcher_attr *a, int *err)
{
	bool egress = (a->flags & IBV_FLOW_ATTR_FLAGS_EGRESS) != 0;

	*err = 0;
	if (!(a->comp_mask & MLX5DV_FLOW_MATCHER_MASK_FT_TYPE))
		return egress;
	switch (a->ft_type) {
	case MLX5DV_FLOW_TABLE_TYPE_NIC_RX:
		return egress;
	case MLX5DV_FLOW_TABLE_TYPE_NIC_TX:
		return true;
	default:
		base_log(BASE_LOG_WARNING, __func__, "flow table type %d not supported (EOPNOTSUPP)", (int)a->ft_type);
		*err = EOPNOTSUPP;
		return false;
	}
}

static int dv_flow_attr_ok(const struct mlx5dv_flow_matcher_attr *a)
{
	if (a->comp_mask & ~(uint64_t)MLX5DV_FLOW_MATCHER_MASK_FT_TYPE)
		return EINVAL;
	if (a->type != IBV_FLOW_ATTR_NORMAL || (a->flags & ~(uint32_t)IBV_FLOW_ATTR_FLAGS_EGRESS) != 0) {
		base_log(BASE_LOG_WARNING, __func__, "flow type %d, flags 0x%x not supported (EOPNOTSUPP)", (int)a->type,
			 a->flags);
		return EOPNOTSUPP;
	}
	return 0;
}

struct mlx5dv_flow_matcher *vb_dv_flow_matcher_create(struct ibv_context *c, struct mlx5dv_flow_matcher_attr *a)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	struct mlx5dv_flow_matcher *m;
	int err = EINVAL;

	if (ctx == NULL || a == NULL || a->match_mask == NULL)
		goto fail;
	err = dv_flow_attr_ok(a);
	if (err != 0)
		goto fail;
	err = ENOMEM;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		goto fail;
	m->egress = dv_flow_egress(a, &err);
	if (err == 0)
		err = vb_dr_match_mask(a->match_criteria_enable, a->match_mask, m->mask);
	if (err == 0)
		err = vb_flow_root_matcher(m->egress, a->priority, m->mask, &m->hw);
	if (err != 0)
		goto fail_free;
	m->dv = ctx->dev->dv;
	m->magic = VB_MAGIC_FLOW_MATCHER;
	m->ctx = c;
	m->criteria = a->match_criteria_enable;
	return m;
fail_free:
	free(m);
fail:
	errno = err;
	return NULL;
}

int vb_dv_flow_matcher_destroy(struct mlx5dv_flow_matcher *m)
{
	if (atomic_load(&m->users) != 0 || vb_flow_root_matcher_destroy(m->egress, m->hw) != 0)
		return EBUSY;
	m->magic = 0;
	free(m);
	return 0;
}

/* The value in the outer layout: any length up to the parameters' (the rest zero). */
static int dv_flow_value(const struct mlx5dv_flow_match_parameters *v, uint8_t outer[HW_STEER_MATCH_BYTES])
{
	size_t n;

	if (v == NULL || v->match_sz > DV_FLOW_PARAM_SZ)
		return EINVAL;
	memset(outer, 0, HW_STEER_MATCH_BYTES);
	n = v->match_sz < HW_STEER_MATCH_BYTES ? v->match_sz : HW_STEER_MATCH_BYTES;
	memcpy(outer, v->match_buf, n);
	return 0;
}

/* The destination of one action into act (and the QP to hold into *qp); 0, EINVAL or EOPNOTSUPP. */
static int dv_flow_action(const struct mlx5dv_flow_matcher *m, const struct mlx5dv_flow_action_attr *a,
			  struct hw_steer_action *act, struct vb_qp **qp)
{
	switch (a->type) {
	case MLX5DV_FLOW_ACTION_DEST_IBV_QP:
		if (a->qp == NULL || a->qp->context != m->ctx)
			return EINVAL;
		*qp = vb_qp_of(a->qp);
		if ((*qp)->raw == NULL || m->egress)
			return EOPNOTSUPP; /* frames reach raw packet QPs only, on receive */
		act->type = HW_STEER_ACT_TIR;
		act->tirn = vb_raw_tirn(*qp);
		return 0;
	case MLX5DV_FLOW_ACTION_DEST_DEVX:
		if (a->obj == NULL || a->obj->magic != VB_MAGIC_DEVX_OBJ)
			return EINVAL;
		if (a->obj->kind != VB_DEVX_TIR || m->egress)
			return EOPNOTSUPP;
		act->type = HW_STEER_ACT_TIR;
		act->tirn = a->obj->object_id;
		return 0;
	case MLX5DV_FLOW_ACTION_DROP:
		act->type = HW_STEER_ACT_DROP;
		return 0;
	case MLX5DV_FLOW_ACTION_DEFAULT_MISS:
		act->type = HW_STEER_ACT_MISS;
		return 0;
	default:
		base_log(BASE_LOG_WARNING, "mlx5dv_create_flow", "action type %d not supported (EOPNOTSUPP)",
			 (int)a->type);
		return EOPNOTSUPP;
	}
}

/* A tag action: the flow's tag (24 bits, one a flow, receive only: as mlx5_ib's flow tag). */
static int dv_flow_tag(const struct mlx5dv_flow_matcher *m, const struct mlx5dv_flow_action_attr *a,
		       struct hw_steer_action *tag)
{
	if (tag->type == HW_STEER_ACT_TAG || a->tag_value >= (1u << 24))
		return EINVAL;
	if (m->egress)
		return EOPNOTSUPP;
	tag->type = HW_STEER_ACT_TAG;
	tag->tag = a->tag_value;
	return 0;
}

/* A reformat or modify-header flow action: one a flow, of the matcher's direction (EINVAL otherwise, as the kernel's mlx5). */
static int dv_flow_reformat(const struct mlx5dv_flow_matcher *m, const struct mlx5dv_flow_action_attr *a,
			    struct hw_steer_action *rf, struct vb_flow_action **held)
{
	struct vb_flow_action *fa = (struct vb_flow_action *)a->action;

	if (fa == NULL || fa->magic != VB_MAGIC_FLOW_ACTION || fa->fa.context != m->ctx || *held != NULL ||
	    fa->egress != m->egress)
		return EINVAL;
	rf->type = fa->rf != NULL ? HW_STEER_ACT_REFORMAT : HW_STEER_ACT_MODIFY;
	rf->reformat = fa->rf;
	rf->modhdr = fa->mh;
	*held = fa;
	return 0;
}

/*
 * One destination (mlx5 allows one) into act, a tag into tag (type TAG when
 * given) and a reformat into rf (*fa its flow action); counters are not supported.
 */
static int dv_flow_actions(const struct mlx5dv_flow_matcher *m, size_t n, const struct mlx5dv_flow_action_attr *acts,
			   struct hw_steer_action *act, struct hw_steer_action *tag, struct vb_qp **qp,
			   struct hw_steer_action *rf, struct vb_flow_action **fa)
{
	int err = 0, dests = 0;

	if (n == 0 || acts == NULL)
		return EINVAL;
	memset(act, 0, sizeof(*act));
	memset(tag, 0, sizeof(*tag));
	*qp = NULL;
	for (size_t i = 0; err == 0 && i < n; i++) {
		struct hw_steer_action more;
		struct vb_qp *q2 = NULL;

		if (acts[i].type == MLX5DV_FLOW_ACTION_TAG) {
			err = dv_flow_tag(m, &acts[i], tag);
			continue;
		}
		if (acts[i].type == MLX5DV_FLOW_ACTION_IBV_FLOW_ACTION) {
			err = dv_flow_reformat(m, &acts[i], rf, fa);
			continue;
		}
		err = dv_flow_action(m, &acts[i], dests == 0 ? act : &more, dests == 0 ? qp : &q2);
		if (err == 0 && ++dests > 1)
			err = EINVAL; /* a second destination */
	}
	if (err == 0 && dests == 0)
		act->type = HW_STEER_ACT_MISS; /* a tag alone: the default miss, as a DR rule without a destination */
	return err;
}

struct ibv_flow *vb_dv_flow_create(struct mlx5dv_flow_matcher *m, struct mlx5dv_flow_match_parameters *value,
				   size_t n, struct mlx5dv_flow_action_attr *acts)
{
	uint8_t outer[HW_STEER_MATCH_BYTES];
	struct hw_steer_action act[3] = {0}, rf = {0};
	struct vb_flow_action *fa = NULL;
	struct hw_steer_rule *r;
	struct vb_qp *qp;
	struct ibv_flow *fl;
	enum hw_status st;
	uint32_t k;
	int err;

	err = dv_flow_value(value, outer);
	if (err == 0)
		err = dv_flow_actions(m, n, acts, &act[0], &act[1], &qp, &rf, &fa);
	if (err != 0) {
		errno = err;
		return NULL;
	}
	k = act[1].type == HW_STEER_ACT_TAG ? 2 : 1;
	if (fa != NULL)
		act[k++] = rf;
	st = hw_steer_rule_create(m->hw, outer, act, k, &r);
	if (st != HW_OK) {
		errno = st == HW_ERR_NOMEM ? ENOMEM : EINVAL; /* HW_ERR_KEY: the TIR is gone */
		return NULL;
	}
	fl = vb_flow_wrap(m->ctx, qp, r, &m->users);
	if (fl == NULL) {
		hw_steer_rule_destroy(r);
		return NULL;
	}
	atomic_fetch_add(&m->users, 1);
	if (fa != NULL)
		vb_flow_hold_action(fl, &fa->users);
	if (qp != NULL)
		vb_raw_flow_hold(qp, true);
	return fl;
}
