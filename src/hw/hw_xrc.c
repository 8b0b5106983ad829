/*
 * hw_xrc — the XRC SRQs a request may name: this process's, and views of
 * other processes' cached by number (hw_xrc.h).
 */
#include <pthread.h>
#include <stdlib.h>

#include "hw_epoch.h"
#include "hw_life.h"
#include "hw_qp.h"
#include "hw_srq.h"
#include "hw_xrc.h"

#define XRC_LOCAL_MAX 4096 /* as many SRQs as a process's device has */
#define XRC_VIEW_MAX 256   /* cached views of other processes' SRQs */

/* Lists change at creation and destruction; look-ups take the lock briefly. */
static pthread_mutex_t xrc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct hw_srq *xrc_local[XRC_LOCAL_MAX];
static uint32_t xrc_nlocal;
static struct hw_srq *xrc_views[XRC_VIEW_MAX];
static uint32_t xrc_nviews;
/* Views found stale: kept mapped, as another thread may still run a request against one. */
static struct hw_srq **xrc_stale;
static uint32_t xrc_nstale;
/* This process's XRC initiators (hw_xrc_srq_posted resumes them). */
static struct hw_qp *xrc_ini[XRC_LOCAL_MAX];
static uint32_t xrc_nini;

bool hw_xrc_srq_add(struct hw_srq *srq)
{
	bool ok;

	pthread_mutex_lock(&xrc_lock);
	ok = xrc_nlocal < XRC_LOCAL_MAX;
	if (ok)
		xrc_local[xrc_nlocal++] = srq;
	pthread_mutex_unlock(&xrc_lock);
	return ok;
}

void hw_xrc_srq_del(struct hw_srq *srq)
{
	pthread_mutex_lock(&xrc_lock);
	for (uint32_t i = 0; i < xrc_nlocal; i++) {
		if (xrc_local[i] == srq) {
			xrc_local[i] = xrc_local[--xrc_nlocal];
			break;
		}
	}
	pthread_mutex_unlock(&xrc_lock);
}

/* A view is used while its record is unchanged and its owner lives (a dead owner's SRQ is gone, as on a card). */
static bool xrc_view_live(const struct hw_srq *v)
{
	return (v->seqp == NULL || atomic_load_explicit(v->seqp, memory_order_acquire) == v->seq) &&
	       (v->lifep == NULL || hw_life_alive(v->lifep, v->life_tid));
}

/* Keeps a stale view mapped; false when there is no room to (then it is dropped from the cache only). */
static void xrc_retire(uint32_t i)
{
	struct hw_srq **n = realloc(xrc_stale, (xrc_nstale + 1) * sizeof(*n));

	if (n != NULL) {
		xrc_stale = n;
		xrc_stale[xrc_nstale++] = xrc_views[i];
	}
	xrc_views[i] = xrc_views[--xrc_nviews];
}

static struct hw_srq *xrc_find(uint32_t srqn)
{
	for (uint32_t i = 0; i < xrc_nlocal; i++)
		if (xrc_local[i]->srqn == srqn)
			return xrc_local[i];
	for (uint32_t i = 0; i < xrc_nviews; i++) {
		if (xrc_views[i]->srqn != srqn)
			continue;
		if (xrc_view_live(xrc_views[i]))
			return xrc_views[i];
		xrc_retire(i);
		break;
	}
	return NULL;
}

struct hw_srq *hw_xrc_srq_get(uint32_t srqn)
{
	struct hw_srq *srq;

	srqn &= 0xffffffu;
	pthread_mutex_lock(&xrc_lock);
	srq = xrc_find(srqn);
	if (srq == NULL && hw_srq_attach_num(srqn, &srq) == HW_OK) {
		if (srq->xrcd == 0 || !xrc_view_live(srq) || xrc_nviews == XRC_VIEW_MAX) {
			/* Not XRC, its owner dead (its record outlives it), or no room: nobody else has seen this view. */
			(void)hw_srq_destroy(srq);
			srq = NULL;
		} else {
			xrc_views[xrc_nviews++] = srq;
		}
	}
	pthread_mutex_unlock(&xrc_lock);
	return srq != NULL && srq->xrcd != 0 ? srq : NULL;
}

void hw_xrc_limits_poll(void)
{
	pthread_mutex_lock(&xrc_lock);
	for (uint32_t i = 0; i < xrc_nlocal; i++)
		if (xrc_local[i]->published)
			(void)hw_srq_limit_poll(xrc_local[i]);
	pthread_mutex_unlock(&xrc_lock);
}

bool hw_xrc_ini_add(struct hw_qp *qp)
{
	bool ok;

	pthread_mutex_lock(&xrc_lock);
	ok = xrc_nini < XRC_LOCAL_MAX;
	if (ok)
		xrc_ini[xrc_nini++] = qp;
	pthread_mutex_unlock(&xrc_lock);
	return ok;
}

void hw_xrc_ini_del(struct hw_qp *qp)
{
	pthread_mutex_lock(&xrc_lock);
	for (uint32_t i = 0; i < xrc_nini; i++) {
		if (xrc_ini[i] == qp) {
			xrc_ini[i] = xrc_ini[--xrc_nini];
			break;
		}
	}
	pthread_mutex_unlock(&xrc_lock);
}

void hw_xrc_srq_posted(void)
{
	struct hw_qp *wait[XRC_LOCAL_MAX];
	uint32_t n = 0;

	/*
	 * Listed under the lock, driven after it (their WQEs look SRQs up
	 * here); the epoch keeps each one until then, as a destroy leaves the
	 * list before it waits for executions.
	 */
	hw_epoch_enter();
	pthread_mutex_lock(&xrc_lock);
	for (uint32_t i = 0; i < xrc_nini; i++)
		if (__atomic_load_n(&xrc_ini[i]->rnr_deadline, __ATOMIC_ACQUIRE) != HW_QP_NO_DEADLINE)
			wait[n++] = xrc_ini[i];
	pthread_mutex_unlock(&xrc_lock);
	for (uint32_t i = 0; i < n; i++)
		hw_qp_drive(wait[i], 0);
	hw_epoch_leave();
}
