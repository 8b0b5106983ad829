/*
 * vb_mlx5_dr_act — libmlx5.so.1's packet reformat, header modify, flow
 * counter and flow sampler actions for mlx5dv_dr rules
 * (mlx5dv_dr_flow(3)), mlx5dv_create_flow_action_packet_reformat(3) and
 * _modify_header, and mlx5dv_devx_obj_query for flow counters. The checks rdma-core's provider
 * makes before it reaches the device are made here with its errno values;
 * the device part (vb_dr_act.c, vb_devx_counter.c) is reached through the
 * object's vb_dv_ops. The steering applies what they make (hw_steer.h).
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "vb_export.h"
#include "vb.h"

static bool vb_act_domain_ok(const struct mlx5dv_dr_domain *d)
{
	return d != NULL && d->magic == VB_MAGIC_DR_DOMAIN;
}

static struct mlx5dv_dr_action *vb_act_new(enum vb_dr_action_type type, const struct vb_dv_ops *dv)
{
	struct mlx5dv_dr_action *a = calloc(1, sizeof(*a));

	if (a == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	a->magic = VB_MAGIC_DR_ACTION;
	a->type = type;
	a->dv = dv;
	return a;
}

/* The device part made, or the action freed and errno set. */
static struct mlx5dv_dr_action *vb_act_init(struct mlx5dv_dr_action *a, const void *data, size_t len)
{
	int err;

	if (a == NULL)
		return NULL;
	err = a->dv->act->dr_action_init(a, data, len);
	if (err != 0) {
		free(a);
		errno = err;
		return NULL;
	}
	return a;
}

/* rdma-core's dr_action_verify_reformat_params: the types each domain takes, data and size given together. */
static int vb_reformat_ok(const struct mlx5dv_dr_domain *d, int type, size_t data_sz, const void *data)
{
	if ((data == NULL) != (data_sz == 0) || (unsigned)type > MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L3_TUNNEL)
		return EINVAL;
	if (d->type == MLX5DV_DR_DOMAIN_TYPE_NIC_RX)
		return type == MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TUNNEL_TO_L2 ||
				       type == MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L3_TUNNEL_TO_L2
			       ? 0
			       : EINVAL;
	if (d->type == MLX5DV_DR_DOMAIN_TYPE_NIC_TX)
		return type == MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L2_TUNNEL ||
				       type == MLX5DV_FLOW_ACTION_PACKET_REFORMAT_TYPE_L2_TO_L3_TUNNEL
			       ? 0
			       : EINVAL;
	return 0;
}

VB_EXPORT struct mlx5dv_dr_action *
mlx5dv_dr_action_create_packet_reformat(struct mlx5dv_dr_domain *domain, uint32_t flags,
					enum mlx5dv_flow_action_packet_reformat_type reformat_type, size_t data_sz,
					void *data)
{
	struct mlx5dv_dr_action *a;
	int err;

	if (!vb_act_domain_ok(domain) || (flags & ~(uint32_t)MLX5DV_DR_ACTION_FLAGS_ROOT_LEVEL) != 0) {
		errno = EINVAL;
		return NULL;
	}
	err = vb_reformat_ok(domain, (int)reformat_type, data_sz, data);
	if (err != 0) {
		errno = err;
		return NULL;
	}
	a = vb_act_new(VB_DR_ACT_REFORMAT, domain->dv);
	if (a == NULL)
		return NULL;
	a->dmn = domain;
	a->reformat_type = (int)reformat_type;
	return vb_act_init(a, data, data_sz);
}

/* actions_sz in bytes, a multiple of the 8-byte PRM action (EINVAL otherwise, as rdma-core). */
VB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_modify_header(struct mlx5dv_dr_domain *domain,
									  uint32_t flags, size_t actions_sz,
									  __be64 *actions)
{
	struct mlx5dv_dr_action *a;

	if (!vb_act_domain_ok(domain) || (flags & ~(uint32_t)MLX5DV_DR_ACTION_FLAGS_ROOT_LEVEL) != 0 ||
	    actions_sz % sizeof(__be64) != 0) {
		errno = EINVAL;
		return NULL;
	}
	a = vb_act_new(VB_DR_ACT_MODIFY, domain->dv);
	if (a == NULL)
		return NULL;
	a->dmn = domain;
	return vb_act_init(a, actions, actions_sz);
}

/* A DevX FLOW_COUNTER object (held: its destroy EBUSY while the action lives); one counter an object, offset 0. */
VB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_flow_counter(struct mlx5dv_devx_obj *devx_obj,
									 uint32_t offset)
{
	struct mlx5dv_dr_action *a;

	if (devx_obj == NULL || devx_obj->magic != VB_MAGIC_DEVX_OBJ || devx_obj->kind != VB_DEVX_FLOW_COUNTER ||
	    offset != 0) {
		errno = EINVAL;
		return NULL;
	}
	a = vb_act_new(VB_DR_ACT_COUNTER, devx_obj->dv);
	if (a == NULL)
		return NULL;
	a->devx = devx_obj;
	atomic_fetch_add(&devx_obj->users, 1);
	return a;
}

static int vb_sampler_ok(const struct mlx5dv_dr_flow_sampler_attr *attr)
{
	const struct mlx5dv_dr_table *t = attr != NULL ? attr->default_next_table : NULL;

	if (t == NULL || t->magic != VB_MAGIC_DR_TABLE || attr->sample_ratio == 0 || attr->sample_actions == NULL ||
	    attr->num_sample_actions == 0 || attr->num_sample_actions > VB_DR_DESTS_MAX)
		return EINVAL;
	for (uint32_t i = 0; i < attr->num_sample_actions; i++)
		if (attr->sample_actions[i] == NULL || attr->sample_actions[i]->magic != VB_MAGIC_DR_ACTION)
			return EINVAL;
	/* rdma-core takes NIC_RX and FDB; the FDB's sampled copy would go to a vport, which this port has not. */
	return t->dmn->type == MLX5DV_DR_DOMAIN_TYPE_NIC_RX ? 0 : EOPNOTSUPP;
}

/*
 * NIC_RX: every frame on to default_next_table, one in sample_ratio (the
 * first, then every ratio-th) also to the sample actions: a counter and a
 * QP or TIR. Other sample actions EOPNOTSUPP; the table and the actions are
 * held while the sampler lives.
 */
VB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_flow_sampler(struct mlx5dv_dr_flow_sampler_attr *attr)
{
	struct mlx5dv_dr_action *a;
	int err = vb_sampler_ok(attr);

	if (err != 0) {
		errno = err;
		return NULL;
	}
	a = vb_act_init(vb_act_new(VB_DR_ACT_SAMPLER, attr->default_next_table->dv), attr, sizeof(*attr));
	if (a == NULL)
		return NULL;
	a->tbl = attr->default_next_table;
	atomic_fetch_add(&a->tbl->users, 1);
	a->n_dests = attr->num_sample_actions;
	for (size_t i = 0; i < a->n_dests; i++) {
		a->dests[i] = attr->sample_actions[i];
		atomic_fetch_add(&a->dests[i]->users, 1);
	}
	return a;
}

void vb_mlx5_dr_act_release(struct mlx5dv_dr_action *a)
{
	switch (a->type) {
	case VB_DR_ACT_COUNTER:
		atomic_fetch_sub(&a->devx->users, 1);
		break;
	case VB_DR_ACT_SAMPLER:
		atomic_fetch_sub(&a->tbl->users, 1);
		for (size_t i = 0; i < a->n_dests; i++)
			atomic_fetch_sub(&a->dests[i]->users, 1);
		/* fall through */
	case VB_DR_ACT_REFORMAT:
	case VB_DR_ACT_MODIFY:
		a->dv->act->dr_action_fini(a);
		break;
	default:
		break;
	}
}

VB_EXPORT int mlx5dv_devx_obj_query(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out,
				    size_t outlen)
{
	int rc;

	if (obj == NULL || obj->magic != VB_MAGIC_DEVX_OBJ)
		return errno = EINVAL;
	rc = obj->dv->act->devx_obj_query(obj, in, inlen, out, outlen);
	if (rc != 0)
		errno = rc; /* as rdma-core's, whose ioctl sets it: programs print %m */
	return rc;
}

VB_EXPORT struct ibv_flow_action *
mlx5dv_create_flow_action_packet_reformat(struct ibv_context *ctx, size_t data_sz, void *data,
					  enum mlx5dv_flow_action_packet_reformat_type reformat_type,
					  enum mlx5dv_flow_table_type ft_type)
{
	struct vb_context *c = vb_ctx_checked(ctx);

	if (c == NULL) {
		errno = ctx == NULL ? EINVAL : EOPNOTSUPP;
		return NULL;
	}
	return c->dev->dv->act->flow_action_reformat(ctx, data_sz, data, (int)reformat_type, (int)ft_type);
}

VB_EXPORT struct ibv_flow_action *mlx5dv_create_flow_action_modify_header(struct ibv_context *ctx, size_t actions_sz,
									   uint64_t actions[],
									   enum mlx5dv_flow_table_type ft_type)
{
	struct vb_context *c = vb_ctx_checked(ctx);

	if (c == NULL) {
		errno = ctx == NULL ? EINVAL : EOPNOTSUPP;
		return NULL;
	}
	return c->dev->dv->act->flow_action_modify(ctx, actions_sz, actions, (int)ft_type);
}
