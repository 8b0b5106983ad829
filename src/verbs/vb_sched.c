/*
 * vb_sched — mlx5dv schedule elements: nodes (TSARs) and leaves (queue
 * groups) in a tree, and a QP's sends attached to a leaf
 * (mlx5dv_modify_qp_sched_elem).
 *
 * Each element has a token bucket (hw_pace.h) under its parent's: its
 * max_avg_bw (Mbit/s = 125000 bytes/s) is its rate, 0 (or no
 * MAX_AVG_BW flag) no limit at that level. A QP attached to a leaf is
 * paced by the leaf's bucket, so every QP of the leaf and every leaf of a
 * node share that element's rate, as a queue group and a TSAR cap what
 * passes through them. bw_share is checked and kept, but not enforced:
 * the elements under a node share what it lets through in the order their
 * sends come, not by weight.
 *
 * Errors as v44's provider (mlx5.c) and the device: a NULL attribute, a
 * comp_mask, an unknown flag, a root node with flags or a leaf without a
 * parent EINVAL; a parent of another context EINVAL; a bw_share above
 * max_tsar_bw_share or a max_avg_bw above the port's 100 Gbit/s EINVAL.
 * Destroying a node that still has elements under it is EBUSY (the
 * device's "resource busy"); an element already destroyed (or any pointer
 * that is not a live element) is EINVAL wherever it is passed: the live
 * ones are listed and a handle is looked up there, never read first. A leaf may be destroyed with QPs attached:
 * they keep its rate until they are attached elsewhere or destroyed. An
 * RC QP attaches in INIT or RTS, UC and UD with no responder leaf, a raw
 * packet QP in RTS with no responder leaf; another state EOPNOTSUPP.
 * The responder leaf of an RC QP is kept and paces nothing (a responder
 * sends no data of its own here).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "hw_pace.h"
#include "vb_int.h"

#define SCHED_FLAGS_ALL (MLX5DV_SCHED_ELEM_ATTR_FLAGS_BW_SHARE | MLX5DV_SCHED_ELEM_ATTR_FLAGS_MAX_AVG_BW)
#define SCHED_BW_SHARE_MAX 100u	 /* max_tsar_bw_share (vb_devx_caps.c) */
#define SCHED_MAX_AVG_BW_MAX 100000u /* Mbit/s: the port's rate */
#define SCHED_MBPS_BYTES 125000u

static pthread_mutex_t se_lock = PTHREAD_MUTEX_INITIALIZER; /* the list, and every operation on an element */
static struct mlx5dv_sched_node *se_live;

/* Lock held: whether se is a live element (compared, not read). */
static bool se_is_live(const struct mlx5dv_sched_node *se)
{
	for (const struct mlx5dv_sched_node *l = se_live; l != NULL; l = l->live_next)
		if (l == se)
			return true;
	return false;
}

/* Lock held. */
static void se_unlist(struct mlx5dv_sched_node *se)
{
	struct mlx5dv_sched_node **pl = &se_live;

	while (*pl != se)
		pl = &(*pl)->live_next;
	*pl = se->live_next;
}

static bool sched_attr_valid(const struct mlx5dv_sched_attr *a, bool node)
{
	if (a == NULL || a->comp_mask != 0 || (a->flags & ~(uint32_t)SCHED_FLAGS_ALL))
		return false;
	if (node && a->parent == NULL && a->flags != 0)
		return false;
	return node || a->parent != NULL;
}

/* The device's ranges and the parent's context: 0 or EINVAL. */
static int sched_values_ok(struct ibv_context *c, const struct mlx5dv_sched_attr *a)
{
	const struct mlx5dv_sched_node *parent = a->parent;

	if (parent != NULL && (!se_is_live(parent) || parent->leaf || parent->ctx != c))
		return EINVAL;
	if ((a->flags & MLX5DV_SCHED_ELEM_ATTR_FLAGS_BW_SHARE) && a->bw_share > SCHED_BW_SHARE_MAX)
		return EINVAL;
	if ((a->flags & MLX5DV_SCHED_ELEM_ATTR_FLAGS_MAX_AVG_BW) && a->max_avg_bw > SCHED_MAX_AVG_BW_MAX)
		return EINVAL;
	return 0;
}

static void sched_take(struct mlx5dv_sched_node *se, const struct mlx5dv_sched_attr *a)
{
	if (a->flags & MLX5DV_SCHED_ELEM_ATTR_FLAGS_BW_SHARE)
		se->bw_share = a->bw_share;
	if (a->flags & MLX5DV_SCHED_ELEM_ATTR_FLAGS_MAX_AVG_BW)
		se->max_avg_bw = a->max_avg_bw;
}

static struct mlx5dv_sched_node *sched_create_locked(struct ibv_context *c, const struct mlx5dv_sched_attr *a,
						      bool leaf)
{
	struct vb_context *ctx = vb_ctx_checked(c);
	struct mlx5dv_sched_node *se;
	int rc;

	if (ctx == NULL || !sched_attr_valid(a, !leaf)) {
		errno = EINVAL;
		return NULL;
	}
	rc = sched_values_ok(c, a);
	if (rc != 0) {
		errno = rc;
		return NULL;
	}
	se = calloc(1, leaf ? sizeof(struct mlx5dv_sched_leaf) : sizeof(*se));
	if (se == NULL)
		goto err_nomem;
	sched_take(se, a);
	if (hw_pace_create((uint64_t)se->max_avg_bw * SCHED_MBPS_BYTES, 0, a->parent != NULL ? a->parent->pace : NULL,
			   &se->pace) != HW_OK)
		goto err_free;
	se->dv = ctx->dev->dv;
	se->magic = VB_MAGIC_SCHED;
	se->leaf = leaf;
	se->ctx = c;
	se->parent = a->parent;
	if (se->parent != NULL)
		atomic_fetch_add(&se->parent->users, 1);
	se->live_next = se_live;
	se_live = se;
	return se;

err_free:
	free(se);
err_nomem:
	errno = ENOMEM;
	return NULL;
}

static struct mlx5dv_sched_node *sched_create(struct ibv_context *c, const struct mlx5dv_sched_attr *a, bool leaf)
{
	struct mlx5dv_sched_node *se;

	pthread_mutex_lock(&se_lock);
	se = sched_create_locked(c, a, leaf);
	pthread_mutex_unlock(&se_lock);
	return se;
}

struct mlx5dv_sched_node *vb_sched_node_create(struct ibv_context *c, const struct mlx5dv_sched_attr *a)
{
	return sched_create(c, a, false);
}

struct mlx5dv_sched_leaf *vb_sched_leaf_create(struct ibv_context *c, const struct mlx5dv_sched_attr *a)
{
	return (struct mlx5dv_sched_leaf *)sched_create(c, a, true);
}

/* Modify: the values (the parent stays, as the device's MODIFY leaves it). */
static int sched_modify(struct mlx5dv_sched_node *se, const struct mlx5dv_sched_attr *a, bool leaf)
{
	int rc = EINVAL;

	pthread_mutex_lock(&se_lock);
	if (se_is_live(se) && se->leaf == leaf && sched_attr_valid(a, !leaf))
		rc = sched_values_ok(se->ctx, a);
	if (rc == 0) {
		sched_take(se, a);
		hw_pace_set(se->pace, (uint64_t)se->max_avg_bw * SCHED_MBPS_BYTES, 0);
	}
	pthread_mutex_unlock(&se_lock);
	return rc;
}

int vb_sched_node_modify(struct mlx5dv_sched_node *node, const struct mlx5dv_sched_attr *a)
{
	return sched_modify(node, a, false);
}

int vb_sched_leaf_modify(struct mlx5dv_sched_leaf *leaf, const struct mlx5dv_sched_attr *a)
{
	return sched_modify(leaf != NULL ? &leaf->se : NULL, a, true);
}

static int sched_destroy(struct mlx5dv_sched_node *se, bool leaf)
{
	pthread_mutex_lock(&se_lock);
	if (!se_is_live(se) || se->leaf != leaf) {
		pthread_mutex_unlock(&se_lock);
		return EINVAL;
	}
	if (atomic_load(&se->users) != 0) {
		pthread_mutex_unlock(&se_lock);
		return EBUSY;
	}
	se_unlist(se);
	if (se->parent != NULL)
		atomic_fetch_sub(&se->parent->users, 1);
	pthread_mutex_unlock(&se_lock);
	se->magic = 0;
	hw_pace_put(se->pace); /* QPs still attached hold it (and it its parent's) */
	free(se);
	return 0;
}

int vb_sched_node_destroy(struct mlx5dv_sched_node *node)
{
	return sched_destroy(node, false);
}

int vb_sched_leaf_destroy(struct mlx5dv_sched_leaf *leaf)
{
	return sched_destroy(leaf != NULL ? &leaf->se : NULL, true);
}

/* Lock held. */
static bool sched_leaf_ok(const struct mlx5dv_sched_leaf *l, struct ibv_context *c)
{
	return l == NULL || (se_is_live(&l->se) && l->se.leaf && l->se.ctx == c);
}

static int sched_attach(struct ibv_qp *ibqp, const struct mlx5dv_sched_leaf *req, const struct mlx5dv_sched_leaf *resp)
{
	struct vb_qp *qp = vb_qp_of(ibqp);

	switch (ibqp->qp_type) {
	case IBV_QPT_UC:
	case IBV_QPT_UD:
		if (resp != NULL)
			return EINVAL;
		/* fallthrough */
	case IBV_QPT_RC:
		if (ibqp->state != IBV_QPS_INIT && ibqp->state != IBV_QPS_RTS)
			return EOPNOTSUPP;
		hw_qp_set_pace(qp->hw, req != NULL ? req->se.pace : NULL);
		return 0;
	case IBV_QPT_RAW_PACKET:
		if (resp != NULL)
			return EINVAL;
		if (ibqp->state != IBV_QPS_RTS)
			return EOPNOTSUPP;
		return vb_raw_set_leaf(qp, req != NULL ? req->se.pace : NULL);
	default:
		return EOPNOTSUPP;
	}
}

int vb_sched_modify_qp(struct ibv_qp *ibqp, const struct mlx5dv_sched_leaf *req, const struct mlx5dv_sched_leaf *resp)
{
	int rc;

	if (ibqp == NULL || vb_ctx_checked(ibqp->context) == NULL)
		return EINVAL;
	pthread_mutex_lock(&se_lock); /* the leaf stays while the QP takes its bucket */
	rc = sched_leaf_ok(req, ibqp->context) && sched_leaf_ok(resp, ibqp->context) ? sched_attach(ibqp, req, resp)
										      : EINVAL;
	pthread_mutex_unlock(&se_lock);
	return rc;
}
