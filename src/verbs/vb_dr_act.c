/*
 * vb_dr_act — the device part of the mlx5dv_dr actions that have one, and
 * mlx5dv_create_flow_action_packet_reformat's and _modify_header's flow
 * actions: packet reformat
 * (hw_reformat.h), header modify (hw_modhdr.h) and the flow sampler
 * (hw_steer.h). libmlx5 (vb_mlx5_dr_act.c) checks the arguments it can
 * and makes the action; these functions build what the steering applies,
 * with the errno rdma-core's provider gives for what they refuse.
 */
#include <stdlib.h>
#include <string.h>

#include "hw_modhdr.h"
#include "hw_reformat.h"
#include "hw_steer.h"
#include "vb_int.h"

#define VB_MODIFY_ACTION_SZ 8 /* one PRM set/add/copy action */

static int vb_act_errno(enum hw_status st)
{
	switch (st) {
	case HW_OK:
		return 0;
	case HW_ERR_NOMEM:
		return ENOMEM;
	case HW_ERR_NOTSUP:
		return EOPNOTSUPP;
	default:
		return EINVAL;
	}
}

/* A reformat of an mlx5dv type: L2 encap and decap are done, the L3 tunnels EOPNOTSUPP, anything else EINVAL. */
static int vb_reformat_make(int type, const void *data, size_t len, struct hw_reformat **out)
{
	enum hw_reformat_type t;
	struct hw_reformat *r;
	enum hw_status st;

	if ((data == NULL) != (len == 0))
		return EINVAL;
	switch (type) {
	case MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2:
		t = HW_REFORMAT_L2_DECAP;
		break;
	case MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL:
		t = HW_REFORMAT_L2_ENCAP;
		break;
	case MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L3_TUNNEL_TO_L2:
	case MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L3_TUNNEL:
		return EOPNOTSUPP;
	default:
		return EINVAL;
	}
	r = malloc(sizeof(*r));
	if (r == NULL)
		return ENOMEM;
	st = hw_reformat_init(r, t, data, len);
	if (st != HW_OK) {
		free(r);
		return vb_act_errno(st);
	}
	*out = r;
	return 0;
}

static int vb_modify_make(const void *actions, size_t len, struct hw_modhdr **out)
{
	struct hw_modhdr *m;
	enum hw_status st;

	if (actions == NULL || len == 0 || len % VB_MODIFY_ACTION_SZ != 0)
		return EINVAL;
	m = malloc(sizeof(*m));
	if (m == NULL)
		return ENOMEM;
	st = hw_modhdr_init(m, actions, len / VB_MODIFY_ACTION_SZ);
	if (st != HW_OK) {
		free(m);
		return vb_act_errno(st);
	}
	*out = m;
	return 0;
}

/* One sample action into s: a counter and a QP or TIR, one of each at most; others EOPNOTSUPP. */
static int vb_sample_action(const struct mlx5dv_dr_action *a, struct hw_steer_sampler *s)
{
	if (a->type == VB_DR_ACT_COUNTER && s->counter == NULL) {
		s->counter = a->devx->hw;
		return 0;
	}
	if ((a->type == VB_DR_ACT_QP || a->type == VB_DR_ACT_TIR) && s->tirn == 0) {
		s->tirn = a->tirn;
		return 0;
	}
	return a->type == VB_DR_ACT_COUNTER || a->type == VB_DR_ACT_QP || a->type == VB_DR_ACT_TIR ? EINVAL
												   : EOPNOTSUPP;
}

static int vb_sampler_make(const struct mlx5dv_dr_flow_sampler_attr *attr, struct hw_steer_sampler **out)
{
	struct hw_steer_sampler *s = calloc(1, sizeof(*s));
	int err = 0;

	if (s == NULL)
		return ENOMEM;
	s->ratio = attr->sample_ratio;
	s->table = attr->default_next_table->hw;
	for (uint32_t i = 0; err == 0 && i < attr->num_sample_actions; i++)
		err = vb_sample_action(attr->sample_actions[i], s);
	if (err != 0) {
		free(s);
		return err;
	}
	*out = s;
	return 0;
}

static int vb_dv_dr_action_init(struct mlx5dv_dr_action *a, const void *data, size_t len)
{
	switch (a->type) {
	case VB_DR_ACT_REFORMAT:
		return vb_reformat_make(a->reformat_type, data, len, (struct hw_reformat **)&a->hw);
	case VB_DR_ACT_MODIFY:
		return vb_modify_make(data, len, (struct hw_modhdr **)&a->hw);
	case VB_DR_ACT_SAMPLER:
		return vb_sampler_make(data, (struct hw_steer_sampler **)&a->hw);
	default:
		return EINVAL;
	}
}

static void vb_dv_dr_action_fini(struct mlx5dv_dr_action *a)
{
	free(a->hw);
	a->hw = NULL;
}

/* NIC_RX and NIC_TX (false, true); FDB and RDMA tables EOPNOTSUPP (no such steering here), others EINVAL. */
static int vb_flow_ft_type(struct ibv_context *c, int ft_type, bool *egress)
{
	if (vb_ctx_checked(c) == NULL)
		return EINVAL;
	*egress = ft_type == MLX5DV_FLOW_TABLE_TYPE_NIC_TX;
	if (ft_type == MLX5DV_FLOW_TABLE_TYPE_NIC_RX || ft_type == MLX5DV_FLOW_TABLE_TYPE_NIC_TX)
		return 0;
	return ft_type == MLX5DV_FLOW_TABLE_TYPE_FDB || ft_type == MLX5DV_FLOW_TABLE_TYPE_RDMA_RX ||
			       ft_type == MLX5DV_FLOW_TABLE_TYPE_RDMA_TX
		       ? EOPNOTSUPP
		       : EINVAL;
}

static struct ibv_flow_action *vb_flow_action_done(struct ibv_context *c, struct vb_flow_action *fa, bool egress)
{
	fa->fa.context = c;
	fa->magic = VB_MAGIC_FLOW_ACTION;
	fa->egress = egress;
	return &fa->fa;
}

/*
 * A reformat for the table type's direction: encap types on NIC_TX, decap
 * on NIC_RX, as the kernel's mlx5 takes them (another pairing EINVAL).
 */
static struct ibv_flow_action *vb_dv_flow_action_reformat(struct ibv_context *c, size_t data_sz, void *data,
							  int type, int ft_type)
{
	struct vb_flow_action *fa;
	bool encap = type == MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL ||
		     type == MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L3_TUNNEL;
	bool egress = false;
	int err = vb_flow_ft_type(c, ft_type, &egress);

	if (err != 0)
		goto fail;
	err = EINVAL;
	if (encap != egress)
		goto fail;
	err = ENOMEM;
	fa = calloc(1, sizeof(*fa));
	if (fa == NULL)
		goto fail;
	err = vb_reformat_make(type, data, data_sz, &fa->rf);
	if (err != 0) {
		free(fa);
		goto fail;
	}
	return vb_flow_action_done(c, fa, egress);
fail:
	errno = err;
	return NULL;
}

/* Header modify for either direction, as mlx5dv_dr's (the PRM actions, actions_sz in bytes). */
static struct ibv_flow_action *vb_dv_flow_action_modify(struct ibv_context *c, size_t actions_sz, uint64_t *actions,
							int ft_type)
{
	struct vb_flow_action *fa;
	bool egress = false;
	int err = vb_flow_ft_type(c, ft_type, &egress);

	if (err != 0)
		goto fail;
	err = ENOMEM;
	fa = calloc(1, sizeof(*fa));
	if (fa == NULL)
		goto fail;
	err = vb_modify_make(actions, actions_sz, &fa->mh);
	if (err != 0) {
		free(fa);
		goto fail;
	}
	return vb_flow_action_done(c, fa, egress);
fail:
	errno = err;
	return NULL;
}

int vb_destroy_flow_action(struct ibv_flow_action *action)
{
	struct vb_flow_action *fa = (struct vb_flow_action *)action;

	if (action == NULL || fa->magic != VB_MAGIC_FLOW_ACTION)
		return EINVAL;
	if (atomic_load(&fa->users) != 0)
		return EBUSY;
	fa->magic = 0;
	free(fa->rf);
	free(fa->mh);
	free(fa);
	return 0;
}

const struct vb_dv_act_ops vb_dv_act_ops_impl = {
	.dr_action_init = vb_dv_dr_action_init,
	.dr_action_fini = vb_dv_dr_action_fini,
	.devx_obj_query = vb_dv_devx_obj_query,
	.flow_action_reformat = vb_dv_flow_action_reformat,
	.flow_action_modify = vb_dv_flow_action_modify,
};
