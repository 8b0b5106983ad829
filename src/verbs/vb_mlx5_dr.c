/*
 * vb_mlx5_dr — libmlx5.so.1's DevX object, DevX general command and
 * mlx5dv_dr entries, and mlx5dv_alloc_dm (vb_dm.c). Each checks that the object handed in is one of ours (a
 * NULL or foreign pointer is EINVAL, where rdma-core would crash) and calls
 * libibverbs through the object's vb_dv_ops (vb_devx_obj.c, vb_devx_cmd.c,
 * vb_dr.c). Actions are plain data (vb.h) and are made and freed here: drop
 * and default-miss have no context to reach a device by.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "vb_export.h"
#include "vb.h"

#define VB_DR_SYNC_FLAGS                                                                           \
	(MLX5DV_DR_DOMAIN_SYNC_FLAGS_SW | MLX5DV_DR_DOMAIN_SYNC_FLAGS_HW | MLX5DV_DR_DOMAIN_SYNC_FLAGS_MEM)
#define VB_VPORT_UPLINK 0xffff	  /* rdma-core's WIRE_PORT: the highest vport number */

/* The table of the context's device: NULL with errno EINVAL (no context) or EOPNOTSUPP (not ours). */
static const struct vb_dv_ops *vb_dv_of(struct ibv_context *c)
{
	struct vb_context *ctx = vb_ctx_checked(c);

	if (ctx == NULL)
		errno = c == NULL ? EINVAL : EOPNOTSUPP;
	return ctx != NULL ? ctx->dev->dv : NULL;
}

VB_EXPORT struct mlx5dv_devx_obj *mlx5dv_devx_obj_create(struct ibv_context *context, const void *in, size_t inlen,
							 void *out, size_t outlen)
{
	const struct vb_dv_ops *dv = vb_dv_of(context);

	return dv != NULL ? dv->devx_obj_create(context, in, inlen, out, outlen) : NULL;
}

VB_EXPORT int mlx5dv_devx_general_cmd(struct ibv_context *context, const void *in, size_t inlen, void *out,
				      size_t outlen)
{
	const struct vb_dv_ops *dv = vb_dv_of(context);

	return dv != NULL ? dv->devx_general_cmd(context, in, inlen, out, outlen) : errno;
}

VB_EXPORT struct ibv_dm *mlx5dv_alloc_dm(struct ibv_context *context, struct ibv_alloc_dm_attr *dm_attr,
					  struct mlx5dv_alloc_dm_attr *mlx5_dm_attr)
{
	const struct vb_dv_ops *dv = vb_dv_of(context);

	return dv != NULL ? dv->alloc_dm(context, dm_attr, mlx5_dm_attr) : NULL;
}

VB_EXPORT int mlx5dv_devx_obj_destroy(struct mlx5dv_devx_obj *obj)
{
	if (obj == NULL || obj->magic != VB_MAGIC_DEVX_OBJ)
		return EINVAL;
	return obj->dv->devx_obj_destroy(obj);
}

VB_EXPORT int mlx5dv_devx_obj_modify(struct mlx5dv_devx_obj *obj, const void *in, size_t inlen, void *out,
				     size_t outlen)
{
	int rc;

	if (obj == NULL || obj->magic != VB_MAGIC_DEVX_OBJ)
		return errno = EINVAL;
	rc = obj->dv->devx->obj_modify(obj, in, inlen, out, outlen);
	if (rc != 0)
		errno = rc; /* as rdma-core's, whose ioctl sets it: programs print %m */
	return rc;
}

VB_EXPORT int mlx5dv_devx_query_eqn(struct ibv_context *context, uint32_t vector, uint32_t *eqn)
{
	const struct vb_dv_ops *dv = vb_dv_of(context);

	return dv != NULL ? dv->devx->query_eqn(context, vector, eqn) : errno;
}

VB_EXPORT struct mlx5dv_dr_domain *mlx5dv_dr_domain_create(struct ibv_context *ctx, enum mlx5dv_dr_domain_type type)
{
	const struct vb_dv_ops *dv = vb_dv_of(ctx);

	return dv != NULL ? dv->dr_domain_create(ctx, type) : NULL;
}

static bool vb_domain_ok(const struct mlx5dv_dr_domain *d)
{
	return d != NULL && d->magic == VB_MAGIC_DR_DOMAIN;
}

static bool vb_table_ok(const struct mlx5dv_dr_table *t)
{
	return t != NULL && t->magic == VB_MAGIC_DR_TABLE;
}

static bool vb_matcher_ok(const struct mlx5dv_dr_matcher *m)
{
	return m != NULL && m->magic == VB_MAGIC_DR_MATCHER;
}

VB_EXPORT int mlx5dv_dr_domain_destroy(struct mlx5dv_dr_domain *domain)
{
	return vb_domain_ok(domain) ? domain->dv->dr_domain_destroy(domain) : EINVAL;
}

/* Duplicates (same matcher, same value) in tables above level 0: allowed by default; refused with EEXIST when not. */
VB_EXPORT void mlx5dv_dr_domain_allow_duplicate_rules(struct mlx5dv_dr_domain *domain, bool allow)
{
	if (vb_domain_ok(domain))
		domain->dv->dr_allow_duplicates(domain, allow);
}

/* hw_steer applies every change before returning: there is no queue to drain or cache to clear. */
VB_EXPORT int mlx5dv_dr_domain_sync(struct mlx5dv_dr_domain *domain, uint32_t flags)
{
	if (!vb_domain_ok(domain))
		return EINVAL;
	return (flags & ~(uint32_t)VB_DR_SYNC_FLAGS) != 0 ? EOPNOTSUPP : 0;
}

VB_EXPORT struct mlx5dv_dr_table *mlx5dv_dr_table_create(struct mlx5dv_dr_domain *domain, uint32_t level)
{
	if (!vb_domain_ok(domain)) {
		errno = EINVAL;
		return NULL;
	}
	return domain->dv->dr_table_create(domain, level);
}

VB_EXPORT int mlx5dv_dr_table_destroy(struct mlx5dv_dr_table *table)
{
	return vb_table_ok(table) ? table->dv->dr_table_destroy(table) : EINVAL;
}

VB_EXPORT struct mlx5dv_dr_matcher *mlx5dv_dr_matcher_create(struct mlx5dv_dr_table *table, uint16_t priority,
							     uint8_t match_criteria_enable,
							     struct mlx5dv_flow_match_parameters *mask)
{
	if (!vb_table_ok(table)) {
		errno = EINVAL;
		return NULL;
	}
	return table->dv->dr_matcher_create(table, priority, match_criteria_enable, mask);
}

/*
 * A matcher's rules are a list that grows and shrinks with them: every
 * layout is already the resizable one and a size hint has nothing to
 * preallocate. Refused as rdma-core refuses: the root table, unknown flags
 * and a hint beyond the flow-table caps' log_max_ft_size (vb_devx_caps.c).
 */
VB_EXPORT int mlx5dv_dr_matcher_set_layout(struct mlx5dv_dr_matcher *matcher, struct mlx5dv_dr_matcher_layout *layout)
{
	uint32_t known = MLX5DV_DR_MATCHER_LAYOUT_RESIZABLE | MLX5DV_DR_MATCHER_LAYOUT_NUM_RULE;

	if (!vb_matcher_ok(matcher) || layout == NULL)
		return errno = EINVAL;
	if (matcher->tbl->level == 0 || (layout->flags & ~known) != 0 ||
	    ((layout->flags & MLX5DV_DR_MATCHER_LAYOUT_NUM_RULE) && layout->log_num_of_rules_hint > VB_DR_LOG_RULES_MAX))
		return errno = EOPNOTSUPP;
	return 0;
}

VB_EXPORT int mlx5dv_dr_matcher_destroy(struct mlx5dv_dr_matcher *matcher)
{
	return vb_matcher_ok(matcher) ? matcher->dv->dr_matcher_destroy(matcher) : EINVAL;
}

VB_EXPORT struct mlx5dv_dr_rule *mlx5dv_dr_rule_create(struct mlx5dv_dr_matcher *matcher,
						       struct mlx5dv_flow_match_parameters *value, size_t num_actions,
						       struct mlx5dv_dr_action **actions)
{
	if (!vb_matcher_ok(matcher)) {
		errno = EINVAL;
		return NULL;
	}
	return matcher->dv->dr_rule_create(matcher, value, num_actions, actions);
}

VB_EXPORT int mlx5dv_dr_rule_destroy(struct mlx5dv_dr_rule *rule)
{
	if (rule == NULL || rule->magic != VB_MAGIC_DR_RULE)
		return EINVAL;
	return rule->dv->dr_rule_destroy(rule);
}

static struct mlx5dv_dr_action *vb_action_new(enum vb_dr_action_type type)
{
	struct mlx5dv_dr_action *a = calloc(1, sizeof(*a));

	if (a == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	a->magic = VB_MAGIC_DR_ACTION;
	a->type = type;
	return a;
}

VB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_drop(void)
{
	return vb_action_new(VB_DR_ACT_DROP);
}

/* The domain's default path: ends the lookup as a miss (hw_steer.h). */
VB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_default_miss(void)
{
	return vb_action_new(VB_DR_ACT_MISS);
}

/* The TIR is named by number: destroying it first is allowed, later rules naming it fail (EINVAL). */
VB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_dest_devx_tir(struct mlx5dv_devx_obj *devx_obj)
{
	struct mlx5dv_dr_action *a;

	if (devx_obj == NULL || devx_obj->magic != VB_MAGIC_DEVX_OBJ || devx_obj->kind != VB_DEVX_TIR) {
		errno = EINVAL;
		return NULL;
	}
	a = vb_action_new(VB_DR_ACT_TIR);
	if (a != NULL)
		a->tirn = devx_obj->object_id;
	return a;
}

/* The root (level 0) is where lookups start, never a destination: EINVAL as rdma-core. */
VB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_dest_table(struct mlx5dv_dr_table *table)
{
	struct mlx5dv_dr_action *a;

	if (!vb_table_ok(table) || table->level == 0) {
		errno = EINVAL;
		return NULL;
	}
	a = vb_action_new(VB_DR_ACT_TABLE);
	if (a == NULL)
		return NULL;
	a->tbl = table;
	atomic_fetch_add(&table->users, 1);
	return a;
}

/* FDB only; the port has no vports but the uplink (the wire). */
VB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_dest_vport(struct mlx5dv_dr_domain *domain, uint32_t vport)
{
	struct mlx5dv_dr_action *a;

	if (!vb_domain_ok(domain) || vport > VB_VPORT_UPLINK) {
		errno = EINVAL;
		return NULL;
	}
	if (domain->type != MLX5DV_DR_DOMAIN_TYPE_FDB || vport != VB_VPORT_UPLINK) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	a = vb_action_new(VB_DR_ACT_WIRE);
	if (a != NULL)
		a->dmn = domain;
	return a;
}

/* A raw packet QP's receive queue (NIC_RX rules): the QP cannot be destroyed while the action lives. */
VB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_dest_ibv_qp(struct ibv_qp *ibqp)
{
	const struct vb_dv_ops *dv = vb_dv_of(ibqp != NULL ? ibqp->context : NULL);
	struct mlx5dv_dr_action *a;
	uint32_t tirn = 0;
	int err;

	if (dv == NULL)
		return NULL;
	err = dv->dr_qp_dest(ibqp, true, &tirn);
	if (err != 0) {
		errno = err;
		return NULL;
	}
	a = vb_action_new(VB_DR_ACT_QP);
	if (a == NULL) {
		(void)dv->dr_qp_dest(ibqp, false, NULL);
		return NULL;
	}
	a->qp = ibqp;
	a->dv = dv;
	a->tirn = tirn;
	return a;
}

/* vlan_hdr: the 802.1Q TPID and TCI, network order, as mlx5dv_dr_flow(3) has it. */
VB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_push_vlan(struct mlx5dv_dr_domain *domain, __be32 vlan_hdr)
{
	struct mlx5dv_dr_action *a;

	if (!vb_domain_ok(domain)) {
		errno = EINVAL;
		return NULL;
	}
	a = vb_action_new(VB_DR_ACT_PUSH_VLAN);
	if (a == NULL)
		return NULL;
	a->dmn = domain;
	memcpy(a->vlan, &vlan_hdr, sizeof(a->vlan));
	return a;
}

VB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_pop_vlan(void)
{
	return vb_action_new(VB_DR_ACT_POP_VLAN);
}

/* The flow tag a NIC_RX rule gives the frames it sends to a QP: its receive completion's (24 bits kept). */
VB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_tag(uint32_t tag_value)
{
	struct mlx5dv_dr_action *a = vb_action_new(VB_DR_ACT_TAG);

	if (a != NULL)
		a->tag = tag_value & 0xffffffu;
	return a;
}

/* One entry of a dest array: a QP, TIR, table or default miss (rdma-core's); vports and reformats this port has not. */
static int vb_dest_entry_ok(const struct mlx5dv_dr_action_dest_attr *e)
{
	const struct mlx5dv_dr_action *d;

	if (e == NULL)
		return EINVAL;
	if (e->type == MLX5DV_DR_ACTION_DEST_REFORMAT)
		return EOPNOTSUPP;
	if (e->type != MLX5DV_DR_ACTION_DEST || e->dest == NULL || e->dest->magic != VB_MAGIC_DR_ACTION)
		return EINVAL;
	d = e->dest;
	if (d->type == VB_DR_ACT_QP || d->type == VB_DR_ACT_TIR || d->type == VB_DR_ACT_TABLE ||
	    d->type == VB_DR_ACT_MISS)
		return 0;
	return EOPNOTSUPP;
}

/*
 * A copy of the frame to each destination (NIC_RX; FDB's are vports, which
 * this port has but the uplink of). Each destination action is held until
 * the array goes. EINVAL for fewer than two, as rdma-core.
 */
VB_EXPORT struct mlx5dv_dr_action *mlx5dv_dr_action_create_dest_array(struct mlx5dv_dr_domain *domain, size_t num_dest,
									struct mlx5dv_dr_action_dest_attr **dests)
{
	struct mlx5dv_dr_action *a;
	int err = 0;

	if (!vb_domain_ok(domain) || num_dest <= 1 || dests == NULL || num_dest > VB_DR_DESTS_MAX)
		err = EINVAL;
	else if (domain->type != MLX5DV_DR_DOMAIN_TYPE_NIC_RX)
		err = EOPNOTSUPP;
	for (size_t i = 0; err == 0 && i < num_dest; i++)
		err = vb_dest_entry_ok(dests[i]);
	if (err != 0) {
		errno = err;
		return NULL;
	}
	a = vb_action_new(VB_DR_ACT_DESTS);
	if (a == NULL)
		return NULL;
	a->dmn = domain;
	a->n_dests = num_dest;
	for (size_t i = 0; i < num_dest; i++) {
		a->dests[i] = dests[i]->dest;
		atomic_fetch_add(&a->dests[i]->users, 1);
	}
	return a;
}

/* The dumps (vb_dr_dump.c): 0, EINVAL for a NULL file or an object not ours, or the write's errno. */
VB_EXPORT int mlx5dv_dump_dr_domain(FILE *fout, struct mlx5dv_dr_domain *domain)
{
	if (fout == NULL || !vb_domain_ok(domain))
		return EINVAL;
	return domain->dv->dr_dump(fout, VB_DR_DUMP_DOMAIN, domain);
}

VB_EXPORT int mlx5dv_dump_dr_table(FILE *fout, struct mlx5dv_dr_table *table)
{
	if (fout == NULL || !vb_table_ok(table))
		return EINVAL;
	return table->dv->dr_dump(fout, VB_DR_DUMP_TABLE, table);
}

VB_EXPORT int mlx5dv_dump_dr_matcher(FILE *fout, struct mlx5dv_dr_matcher *matcher)
{
	if (fout == NULL || !vb_matcher_ok(matcher))
		return EINVAL;
	return matcher->dv->dr_dump(fout, VB_DR_DUMP_MATCHER, matcher);
}

VB_EXPORT int mlx5dv_dump_dr_rule(FILE *fout, struct mlx5dv_dr_rule *rule)
{
	if (fout == NULL || rule == NULL || rule->magic != VB_MAGIC_DR_RULE)
		return EINVAL;
	return rule->dv->dr_dump(fout, VB_DR_DUMP_RULE, rule);
}

VB_EXPORT int mlx5dv_dr_action_destroy(struct mlx5dv_dr_action *action)
{
	if (action == NULL || action->magic != VB_MAGIC_DR_ACTION)
		return EINVAL;
	if (atomic_load(&action->users) != 0)
		return EBUSY;
	if (action->type == VB_DR_ACT_TABLE)
		atomic_fetch_sub(&action->tbl->users, 1);
	if (action->type == VB_DR_ACT_QP)
		(void)action->dv->dr_qp_dest(action->qp, false, NULL);
	for (size_t i = 0; action->type == VB_DR_ACT_DESTS && i < action->n_dests; i++)
		atomic_fetch_sub(&action->dests[i]->users, 1);
	vb_mlx5_dr_act_release(action);
	action->magic = 0;
	free(action);
	return 0;
}
