/*
 * vb_dr — mlx5dv_dr steering over the port's hw_steer tables: a DR domain,
 * table, matcher and rule are each one hw_steer object. rdma-core's level 0
 * table is the kernel's root; here every level is a hw_steer level, so a
 * program may put rules in level 0 or jump from it to higher levels.
 *
 * Masks and values are the PRM's fte_match_param (vb.h); hw_steer matches
 * the outer headers only, so a mask over any other part is refused. A rule
 * has up to 8 actions: VLAN push (NIC transmit, FDB) and pop (NIC receive,
 * FDB), applied in the order given, and at most one terminal action (drop,
 * TIR, raw packet QP, table, the uplink, default miss); without one it takes
 * the default miss. Objects count their users (tables of a domain, matchers and jumping
 * actions of a table, rules of a matcher and of an action) and refuse to go
 * while used, as rdma-core's reference counts do.
 *
 * libmlx5 (vb_mlx5_dr.c) checks the objects handed in are ours and makes the
 * actions; these functions are reached through the vb_dv_ops table.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hw_steer.h"
#include "vb_int.h"

#define VB_DR_CRITERIA_OUTER 0x1
#define VB_DR_CRITERIA_ALL 0x7f	  /* outer, misc, inner, misc2 .. misc5 */

/* Appends e to the list at *headp; unlinks it (it is there). The domain's lock held. */
#define VB_DR_APPEND(headp, type, e)                                                                                   \
	do {                                                                                                           \
		type **l_ = (headp);                                                                                   \
		while (*l_ != NULL)                                                                                    \
			l_ = &(*l_)->next;                                                                             \
		*l_ = (e);                                                                                             \
	} while (0)
#define VB_DR_UNLINK(headp, type, e)                                                                                   \
	do {                                                                                                           \
		type **l_ = (headp);                                                                                   \
		while (*l_ != (e))                                                                                     \
			l_ = &(*l_)->next;                                                                             \
		*l_ = (e)->next;                                                                                       \
	} while (0)

static int vb_dr_errno(enum hw_status st)
{
	return st == HW_ERR_NOMEM ? ENOMEM : EINVAL;
}

struct mlx5dv_dr_domain *vb_dv_dr_domain_create(struct ibv_context *c, enum mlx5dv_dr_domain_type type)
{
	static const enum hw_steer_domain_type hw_type[] = {
		[MLX5DV_DR_DOMAIN_TYPE_NIC_RX] = HW_STEER_NIC_RX,
		[MLX5DV_DR_DOMAIN_TYPE_NIC_TX] = HW_STEER_NIC_TX,
		[MLX5DV_DR_DOMAIN_TYPE_FDB] = HW_STEER_FDB,
	};
	struct vb_context *ctx = vb_ctx_checked(c);
	struct mlx5dv_dr_domain *d;
	enum hw_status st;

	if ((unsigned)type > MLX5DV_DR_DOMAIN_TYPE_FDB) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (d == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	st = hw_steer_domain_create(hw_type[type], &d->hw);
	if (st != HW_OK) {
		free(d);
		errno = vb_dr_errno(st);
		return NULL;
	}
	pthread_mutex_init(&d->lock, NULL);
	d->dv = ctx->dev->dv;
	d->magic = VB_MAGIC_DR_DOMAIN;
	d->type = type;
	d->ctx = c;
	return d;
}

int vb_dv_dr_domain_destroy(struct mlx5dv_dr_domain *d)
{
	if (atomic_load(&d->users) != 0 || hw_steer_domain_destroy(d->hw) != HW_OK)
		return EBUSY;
	d->magic = 0;
	pthread_mutex_destroy(&d->lock);
	free(d);
	return 0;
}

struct mlx5dv_dr_table *vb_dv_dr_table_create(struct mlx5dv_dr_domain *d, uint32_t level)
{
	struct mlx5dv_dr_table *t;
	enum hw_status st;

	t = calloc(1, sizeof(*t));
	if (t == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	st = hw_steer_table_create(d->hw, level, &t->hw);
	if (st != HW_OK) {
		free(t);
		errno = vb_dr_errno(st);
		return NULL;
	}
	t->dv = d->dv;
	t->magic = VB_MAGIC_DR_TABLE;
	t->level = level;
	t->dmn = d;
	atomic_fetch_add(&d->users, 1);
	pthread_mutex_lock(&d->lock);
	VB_DR_APPEND(&d->tables, struct mlx5dv_dr_table, t);
	pthread_mutex_unlock(&d->lock);
	return t;
}

int vb_dv_dr_table_destroy(struct mlx5dv_dr_table *t)
{
	if (atomic_load(&t->users) != 0 || hw_steer_table_destroy(t->hw) != HW_OK)
		return EBUSY;
	pthread_mutex_lock(&t->dmn->lock);
	VB_DR_UNLINK(&t->dmn->tables, struct mlx5dv_dr_table, t);
	pthread_mutex_unlock(&t->dmn->lock);
	atomic_fetch_sub(&t->dmn->users, 1);
	t->magic = 0;
	free(t);
	return 0;
}

/*
 * The outer part of a mask (zeros when criteria leave it out or the buffer
 * ends before them), or an errno: EINVAL for bad sizes and criteria,
 * EOPNOTSUPP for a mask over a part hw_steer does not match on (as
 * rdma-core says for fields it cannot use).
 */
int vb_dr_match_mask(uint8_t criteria, const struct mlx5dv_flow_match_parameters *mask, uint8_t *outer)
{
	const uint8_t *buf = mask != NULL ? (const uint8_t *)mask->match_buf : NULL;
	size_t sz = mask != NULL ? mask->match_sz : 0;
	unsigned part;
	size_t i;

	memset(outer, 0, VB_DR_MATCH_PART);
	if ((criteria & ~VB_DR_CRITERIA_ALL) != 0 || sz > VB_DR_MATCH_SZ)
		return EINVAL;
	for (part = 1; part < VB_DR_MATCH_PARTS; part++) {
		if (!(criteria & (1u << part)))
			continue;	/* a part the criteria leave out is not read */
		for (i = part * VB_DR_MATCH_PART; i < sz && i < (part + 1) * VB_DR_MATCH_PART; i++)
			if (buf[i] != 0)
				return EOPNOTSUPP;
	}
	/* A buffer shorter than the outer part: the rest is zero (rdma-core's dr_ste_copy_param). */
	if ((criteria & VB_DR_CRITERIA_OUTER) && buf != NULL)
		memcpy(outer, buf, sz < VB_DR_MATCH_PART ? sz : VB_DR_MATCH_PART);
	return 0;
}

struct mlx5dv_dr_matcher *vb_dv_dr_matcher_create(struct mlx5dv_dr_table *t, uint16_t priority, uint8_t criteria,
						  struct mlx5dv_flow_match_parameters *mask)
{
	struct mlx5dv_dr_matcher *m;
	enum hw_status st;
	int err;

	m = calloc(1, sizeof(*m));
	if (m == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	err = vb_dr_match_mask(criteria, mask, m->mask);
	if (err != 0)
		goto fail;
	st = hw_steer_matcher_create(t->hw, priority, m->mask, &m->hw);
	if (st != HW_OK) {
		err = vb_dr_errno(st);
		goto fail;
	}
	m->dv = t->dv;
	m->magic = VB_MAGIC_DR_MATCHER;
	m->criteria = criteria;
	m->priority = priority;
	m->tbl = t;
	atomic_fetch_add(&t->users, 1);
	pthread_mutex_lock(&t->dmn->lock);
	VB_DR_APPEND(&t->matchers, struct mlx5dv_dr_matcher, m);
	pthread_mutex_unlock(&t->dmn->lock);
	return m;
fail:
	free(m);
	errno = err;
	return NULL;
}

int vb_dv_dr_matcher_destroy(struct mlx5dv_dr_matcher *m)
{
	if (atomic_load(&m->users) != 0 || hw_steer_matcher_destroy(m->hw) != HW_OK)
		return EBUSY;
	pthread_mutex_lock(&m->tbl->dmn->lock);
	VB_DR_UNLINK(&m->tbl->matchers, struct mlx5dv_dr_matcher, m);
	pthread_mutex_unlock(&m->tbl->dmn->lock);
	atomic_fetch_sub(&m->tbl->users, 1);
	m->magic = 0;
	free(m);
	return 0;
}

/*
 * A rule's value into hw_steer's 64 bytes: rdma-core takes a value shorter
 * than the parameters (the rest zero), refuses one not in whole words above
 * the root (a root rule is the kernel's flow, which takes any length), and
 * refuses bits the matcher's mask leaves out in every part it enabled.
 */
static int vb_dr_value(const struct mlx5dv_dr_matcher *m, const struct mlx5dv_flow_match_parameters *value,
		       uint8_t outer[VB_DR_MATCH_PART])
{
	uint8_t buf[VB_DR_MATCH_SZ] = {0};
	unsigned part;
	size_t i;

	if (value == NULL || value->match_sz > VB_DR_MATCH_SZ || (m->tbl->level != 0 && value->match_sz % 4 != 0))
		return EINVAL;
	memcpy(buf, value->match_buf, value->match_sz);
	for (part = 0; part < VB_DR_MATCH_PARTS; part++) {
		if (!(m->criteria & (1u << part)))
			continue;
		for (i = 0; i < VB_DR_MATCH_PART; i++) {
			uint8_t mask = part == 0 ? m->mask[i] : 0; /* other parts: all-zero masks (vb_dr_mask) */

			if (buf[part * VB_DR_MATCH_PART + i] & ~mask)
				return EINVAL;
		}
	}
	memcpy(outer, buf, VB_DR_MATCH_PART);
	return 0;
}

static bool vb_dr_terminal(enum vb_dr_action_type t)
{
	return t != VB_DR_ACT_PUSH_VLAN && t != VB_DR_ACT_POP_VLAN && t != VB_DR_ACT_TAG && t != VB_DR_ACT_REFORMAT &&
	       t != VB_DR_ACT_MODIFY && t != VB_DR_ACT_COUNTER;
}

/*
 * A dest array's destinations as hw_steer's, into hw->dests (the caller's
 * room for VB_DR_DESTS_MAX): QPs and TIRs, tables of the domain above the
 * rule's; a default miss sends no copy. EINVAL for a table that is not.
 */
static int vb_dr_dests(const struct mlx5dv_dr_matcher *m, const struct mlx5dv_dr_action *a,
		       struct hw_steer_action *hw, struct hw_steer_action *room)
{
	hw->type = HW_STEER_ACT_DESTS;
	hw->dests = room;
	hw->n_dests = 0;
	for (size_t i = 0; i < a->n_dests; i++) {
		const struct mlx5dv_dr_action *d = a->dests[i];
		struct hw_steer_action *o = &room[hw->n_dests];

		memset(o, 0, sizeof(*o));
		if (d->type == VB_DR_ACT_MISS)
			continue;
		if (d->type == VB_DR_ACT_TABLE) {
			if (d->tbl->dmn != m->tbl->dmn || d->tbl->level <= m->tbl->level)
				return EINVAL;
			o->type = HW_STEER_ACT_TABLE;
			o->table = d->tbl->hw;
		} else {
			o->type = HW_STEER_ACT_TIR;
			o->tirn = d->tirn;
		}
		hw->n_dests++;
	}
	return hw->n_dests == 0 ? EINVAL : 0;
}

/* Reformat, modify, counter and sampler actions (vb_dr_act.c made their device parts). */
static int vb_dr_action_more(const struct mlx5dv_dr_matcher *m, const struct mlx5dv_dr_action *a,
			     struct hw_steer_action *hw)
{
	const struct mlx5dv_dr_domain *d = m->tbl->dmn;

	switch (a->type) {
	case VB_DR_ACT_REFORMAT:
		hw->type = HW_STEER_ACT_REFORMAT;
		hw->reformat = a->hw;
		return a->dmn != d ? EINVAL : 0;
	case VB_DR_ACT_MODIFY:
		hw->type = HW_STEER_ACT_MODIFY;
		hw->modhdr = a->hw;
		return a->dmn != d ? EINVAL : 0;
	case VB_DR_ACT_COUNTER:
		hw->type = HW_STEER_ACT_COUNT;
		hw->counter = a->devx->hw;
		return 0;
	case VB_DR_ACT_SAMPLER:
		if (a->tbl->dmn != d || a->tbl->level <= m->tbl->level)
			return EINVAL;
		hw->type = HW_STEER_ACT_SAMPLE;
		hw->sampler = a->hw;
		return 0;
	default:
		return EINVAL;
	}
}

/* An action as hw_steer's, or an errno (rdma-core's for actions the domain cannot take). */
static int vb_dr_action(const struct mlx5dv_dr_matcher *m, const struct mlx5dv_dr_action *a,
			struct hw_steer_action *hw, struct hw_steer_action *room)
{
	const struct mlx5dv_dr_domain *d = m->tbl->dmn;

	memset(hw, 0, sizeof(*hw));
	switch (a->type) {
	case VB_DR_ACT_DROP:
		hw->type = HW_STEER_ACT_DROP;
		return 0;
	case VB_DR_ACT_MISS:
		hw->type = HW_STEER_ACT_MISS;
		return 0;
	case VB_DR_ACT_TIR:
	case VB_DR_ACT_QP:
		if (d->type != MLX5DV_DR_DOMAIN_TYPE_NIC_RX)
			return EOPNOTSUPP;	/* the man page: NIC_RX only */
		hw->type = HW_STEER_ACT_TIR;
		hw->tirn = a->tirn;
		return 0;
	case VB_DR_ACT_TABLE:
		if (a->tbl->dmn != d || a->tbl->level <= m->tbl->level)
			return EINVAL;
		hw->type = HW_STEER_ACT_TABLE;
		hw->table = a->tbl->hw;
		return 0;
	case VB_DR_ACT_WIRE:
		if (a->dmn != d)
			return EINVAL;
		hw->type = HW_STEER_ACT_WIRE;
		return 0;
	case VB_DR_ACT_PUSH_VLAN:
		if (a->dmn != d)
			return EINVAL;
		hw->type = HW_STEER_ACT_PUSH_VLAN;
		memcpy(hw->vlan, a->vlan, sizeof(hw->vlan));
		return d->type == MLX5DV_DR_DOMAIN_TYPE_NIC_RX ? EOPNOTSUPP : 0; /* pushed on the way out */
	case VB_DR_ACT_POP_VLAN:
		hw->type = HW_STEER_ACT_POP_VLAN;
		return d->type == MLX5DV_DR_DOMAIN_TYPE_NIC_TX ? EOPNOTSUPP : 0; /* popped on the way in */
	case VB_DR_ACT_TAG:
		hw->type = HW_STEER_ACT_TAG;
		hw->tag = a->tag;
		return d->type == MLX5DV_DR_DOMAIN_TYPE_NIC_RX ? 0 : EOPNOTSUPP; /* a receive CQE's */
	case VB_DR_ACT_DESTS:
		if (a->dmn != d)
			return EINVAL;
		return vb_dr_dests(m, a, hw, room);
	default:
		return vb_dr_action_more(m, a, hw);
	}
}

/* The actions as hw_steer's: at most one terminal (a second is refused as rdma-core's action state machine does). */
static int vb_dr_actions(const struct mlx5dv_dr_matcher *m, struct mlx5dv_dr_action **acts, size_t n,
			 struct hw_steer_action *hw, struct hw_steer_action *room)
{
	size_t i, terminal = 0;
	int err;

	if (n == 0 || n > VB_DR_MAX_ACTS || acts == NULL)
		return EINVAL;
	for (i = 0; i < n; i++)
		if (acts[i] == NULL || acts[i]->magic != VB_MAGIC_DR_ACTION)
			return EINVAL;
	for (i = 0; i < n; i++) {
		terminal += vb_dr_terminal(acts[i]->type);
		err = vb_dr_action(m, acts[i], &hw[i], room);
		if (err != 0)
			return err;
	}
	return terminal > 1 ? EOPNOTSUPP : 0;
}

/* Whether m (a table above level 0) holds a rule of this value already; the domain's lock held. */
static bool vb_dr_duplicate(const struct mlx5dv_dr_matcher *m, const uint8_t value[VB_DR_MATCH_PART])
{
	for (const struct mlx5dv_dr_rule *r = m->rules; r != NULL; r = r->next)
		if (memcmp(r->value, value, VB_DR_MATCH_PART) == 0)
			return true;
	return false;
}

/* Links r into its matcher: EEXIST for a duplicate the domain refuses (the man page: non-root tables only). */
static int vb_dr_rule_link(struct mlx5dv_dr_matcher *m, struct mlx5dv_dr_rule *r)
{
	struct mlx5dv_dr_domain *d = m->tbl->dmn;
	int err = 0;

	pthread_mutex_lock(&d->lock);
	if (d->no_duplicates && m->tbl->level > 0 && vb_dr_duplicate(m, r->value))
		err = EEXIST;
	else
		VB_DR_APPEND(&m->rules, struct mlx5dv_dr_rule, r);
	pthread_mutex_unlock(&d->lock);
	return err;
}

struct mlx5dv_dr_rule *vb_dv_dr_rule_create(struct mlx5dv_dr_matcher *m, struct mlx5dv_flow_match_parameters *value,
					    size_t n, struct mlx5dv_dr_action **acts)
{
	uint8_t outer[VB_DR_MATCH_PART];
	struct hw_steer_action hw_acts[VB_DR_MAX_ACTS], hw_dests[VB_DR_DESTS_MAX];
	struct mlx5dv_dr_rule *r;
	enum hw_status st;
	int err;

	err = vb_dr_actions(m, acts, n, hw_acts, hw_dests);
	if (err == 0)
		err = vb_dr_value(m, value, outer);
	if (err != 0) {
		errno = err;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < VB_DR_MATCH_PART; i++)
		r->value[i] = outer[i] & m->mask[i];
	err = vb_dr_rule_link(m, r);
	if (err != 0) {
		free(r);
		errno = err;
		return NULL;
	}
	st = hw_steer_rule_create(m->hw, outer, hw_acts, (uint32_t)n, &r->hw);
	if (st != HW_OK) {	/* HW_ERR_KEY: the TIR is gone */
		pthread_mutex_lock(&m->tbl->dmn->lock);
		VB_DR_UNLINK(&m->rules, struct mlx5dv_dr_rule, r);
		pthread_mutex_unlock(&m->tbl->dmn->lock);
		free(r);
		errno = vb_dr_errno(st);
		return NULL;
	}
	r->dv = m->dv;
	r->magic = VB_MAGIC_DR_RULE;
	r->matcher = m;
	r->n_acts = n;
	atomic_fetch_add(&m->users, 1);
	for (size_t i = 0; i < n; i++) {
		r->acts[i] = acts[i];
		atomic_fetch_add(&acts[i]->users, 1);
	}
	return r;
}

int vb_dv_dr_rule_destroy(struct mlx5dv_dr_rule *r)
{
	struct mlx5dv_dr_domain *d = r->matcher->tbl->dmn;

	pthread_mutex_lock(&d->lock);
	VB_DR_UNLINK(&r->matcher->rules, struct mlx5dv_dr_rule, r);
	pthread_mutex_unlock(&d->lock);
	hw_steer_rule_destroy(r->hw);
	for (size_t i = 0; i < r->n_acts; i++)
		atomic_fetch_sub(&r->acts[i]->users, 1);
	atomic_fetch_sub(&r->matcher->users, 1);
	r->magic = 0;
	free(r);
	return 0;
}

/* Only a raw packet QP receives frames: any other QP is EOPNOTSUPP. */
int vb_dv_dr_qp_dest(struct ibv_qp *ibqp, bool hold, uint32_t *tirn)
{
	struct vb_qp *qp;

	if (ibqp == NULL || vb_ctx_checked(ibqp->context) == NULL)
		return EINVAL;
	qp = vb_qp_of(ibqp);
	if (qp->raw == NULL)
		return EOPNOTSUPP;
	if (hold)
		*tirn = vb_raw_tirn(qp);
	vb_raw_flow_hold(qp, hold);
	return 0;
}

void vb_dv_dr_allow_duplicates(struct mlx5dv_dr_domain *d, bool allow)
{
	pthread_mutex_lock(&d->lock);
	d->no_duplicates = !allow;
	pthread_mutex_unlock(&d->lock);
}
