/*
 * vb_devx_named — the queues a DevX command may name by number besides the
 * DevX ones: the context's verbs CQs and SRQs, as the card finds any CQ or
 * SRQ of the function by its number (UCX makes its DCIs and DCT by DevX
 * commands on CQs and an SRQ it made by verbs, whose numbers mlx5dv_init_obj
 * gave it). Each is listed on its context while it lives; a DevX object
 * that names one holds it (its users), so ibv_destroy_cq/srq is EBUSY
 * meanwhile, as for a QP on it. A DevX DCT's SRQ also joins its verbs CQ's
 * list (vb_cq.dsrqs), where ibv_poll_cq finds the wr_id of a receive no
 * QP of the CQ took.
 */
#include <stdatomic.h>

#include "vb_devx_prm.h"

void vb_named_cq_add(struct vb_cq *cq)
{
	pthread_mutex_lock(&cq->ctx->lock);
	cq->named_next = cq->ctx->named_cqs;
	cq->ctx->named_cqs = cq;
	cq->named = true;
	pthread_mutex_unlock(&cq->ctx->lock);
}

/*
 * Under the lock a DevX command finds and holds it with: none can take it
 * after the check. A CQ outliving its context (destroyed after
 * ibv_close_device) is on no list and its context is gone: its users say.
 */
int vb_named_cq_del(struct vb_cq *cq)
{
	if (!cq->named)
		return atomic_load(&cq->users) != 0 ? EBUSY : 0;
	pthread_mutex_lock(&cq->ctx->lock);
	if (atomic_load(&cq->users) != 0) {
		pthread_mutex_unlock(&cq->ctx->lock);
		return EBUSY;
	}
	for (struct vb_cq **pp = &cq->ctx->named_cqs; *pp != NULL; pp = &(*pp)->named_next)
		if (*pp == cq) {
			*pp = cq->named_next;
			break;
		}
	pthread_mutex_unlock(&cq->ctx->lock);
	return 0;
}

void vb_named_srq_add(struct vb_srq *srq)
{
	pthread_mutex_lock(&srq->ctx->lock);
	srq->named_next = srq->ctx->named_srqs;
	srq->ctx->named_srqs = srq;
	srq->named = true;
	pthread_mutex_unlock(&srq->ctx->lock);
}

int vb_named_srq_del(struct vb_srq *srq)
{
	if (!srq->named)
		return atomic_load(&srq->users) != 0 ? EBUSY : 0;
	pthread_mutex_lock(&srq->ctx->lock);
	if (atomic_load(&srq->users) != 0) {
		pthread_mutex_unlock(&srq->ctx->lock);
		return EBUSY;
	}
	for (struct vb_srq **pp = &srq->ctx->named_srqs; *pp != NULL; pp = &(*pp)->named_next)
		if (*pp == srq) {
			*pp = srq->named_next;
			break;
		}
	pthread_mutex_unlock(&srq->ctx->lock);
	return 0;
}

/* The context closes (vb_devx_close, its DevX objects already gone): its CQs and SRQs leave the lists. */
void vb_named_close(struct vb_context *ctx)
{
	for (struct vb_cq *cq = ctx->named_cqs; cq != NULL; cq = cq->named_next)
		cq->named = false;
	for (struct vb_srq *srq = ctx->named_srqs; srq != NULL; srq = srq->named_next)
		srq->named = false;
	ctx->named_cqs = NULL;
	ctx->named_srqs = NULL;
}

int vb_devx_cqref_take(struct vb_context *ctx, uint32_t cqn, struct vb_devx_cqref *r)
{
	struct vb_cq *cq;

	*r = (struct vb_devx_cqref){0};
	pthread_mutex_lock(&ctx->lock);
	r->devx = vb_devx_queue_find(ctx, VB_DEVX_CQ, cqn);
	if (r->devx != NULL) {
		vb_devx_cq_hold(r->devx, 1);
		r->hw = vb_devx_cq_hw(r->devx);
	} else {
		for (cq = ctx->named_cqs; cq != NULL && cq->cqn != cqn; cq = cq->named_next)
			;
		if (cq != NULL) {
			atomic_fetch_add(&cq->users, 1);
			r->vcq = cq;
			r->hw = cq->hw;
		}
	}
	pthread_mutex_unlock(&ctx->lock);
	return r->hw != NULL ? 0 : ENOENT;
}

void vb_devx_cqref_put(struct vb_devx_cqref *r)
{
	if (r->devx != NULL)
		vb_devx_cq_hold(r->devx, -1);
	if (r->vcq != NULL)
		atomic_fetch_sub(&r->vcq->users, 1);
	*r = (struct vb_devx_cqref){0};
}

struct vb_srq *vb_devx_srq_take(struct vb_context *ctx, uint32_t srqn)
{
	struct vb_srq *srq;

	pthread_mutex_lock(&ctx->lock);
	for (srq = ctx->named_srqs; srq != NULL && srq->srqn != srqn; srq = srq->named_next)
		;
	/* An XRC or tag-matching SRQ serves its own transport: not a DC target's. */
	if (srq != NULL && (srq->xrcd != NULL || srq->tm != NULL))
		srq = NULL;
	if (srq != NULL)
		atomic_fetch_add(&srq->users, 1);
	pthread_mutex_unlock(&ctx->lock);
	return srq;
}

/* The poll holds the CQ's lock: the list changes under it only. */
struct vb_srq *vb_named_cq_srq(struct vb_cq *cq, uint32_t srqn)
{
	for (struct vb_cq_srq *l = cq->dsrqs; l != NULL; l = l->next)
		if (l->srq->srqn == srqn)
			return l->srq;
	return NULL;
}

void vb_devx_cq_srq_link(struct vb_cq *cq, struct vb_cq_srq *l)
{
	pthread_spin_lock(&cq->lock);
	l->next = cq->dsrqs;
	cq->dsrqs = l;
	pthread_spin_unlock(&cq->lock);
}

void vb_devx_cq_srq_unlink(struct vb_cq *cq, struct vb_cq_srq *l)
{
	pthread_spin_lock(&cq->lock);
	for (struct vb_cq_srq **pp = &cq->dsrqs; *pp != NULL; pp = &(*pp)->next)
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	pthread_spin_unlock(&cq->lock);
}

void vb_devx_srq_put(struct vb_srq *srq)
{
	if (srq != NULL)
		atomic_fetch_sub(&srq->users, 1);
}
