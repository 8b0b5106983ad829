/*
 * hw_srq — shared receive queues: memory, the device's consumption by
 * next_wqe_index (or in ring order, cyclic), the limit event, and the
 * doorbell that resumes requesters.
 */
#include <endian.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "hw_eng_thread.h"
#include "hw_epoch.h"
#include "hw_life.h"
#include "hw_qp.h"
#include "hw_srq.h"
#include "hw_tm.h"
#include "hw_xrc.h"

#define SRQ_COUNTER_MASK 0xffffu
#define SRQ_TAKE_TRIES 4096 /* compare-and-swaps lost in a row before the head word is called unusable */

/* Attaching and detaching QPs happens at their creation and destruction only. */
static pthread_mutex_t srq_list_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t srq_size(const struct hw_srq *srq)
{
	return 1u << srq->log_size;
}

static struct hw_wqe_srq_next_seg *srq_wqe(const struct hw_srq *srq, uint32_t idx)
{
	return (void *)(srq->buf + ((size_t)(idx & (srq_size(srq) - 1)) << srq->log_stride));
}

#define SRQ_MAGIC 0x51525348u /* "HSRQ" */
#define SRQ_DBREC_BYTES 64	/* the record alone in its line */

static size_t srq_ring_bytes(uint32_t log_size, uint32_t log_stride)
{
	return (size_t)1 << (log_size + log_stride);
}

/* The ring's room in the block: whole cache lines, so the record and the state after it stay aligned. */
static size_t srq_ring_room(uint32_t log_size, uint32_t log_stride)
{
	return (srq_ring_bytes(log_size, log_stride) + SRQ_DBREC_BYTES - 1) & ~(size_t)(SRQ_DBREC_BYTES - 1);
}

/* A tag matching SRQ's list (hw_tm.h) of nent entries, after the state; 0 for none. */
static size_t srq_tm_room(uint32_t nent)
{
	return nent != 0 ? hw_tm_sh_bytes(nent) : 0;
}

/* [ring][record][state][tag list]: one block, shareable. */
static size_t srq_mem_size(uint32_t log_size, uint32_t log_stride, uint32_t nent)
{
	return srq_ring_room(log_size, log_stride) + SRQ_DBREC_BYTES + sizeof(struct hw_srq_sh) + srq_tm_room(nent);
}

/* Where the tag list is: right after the state. */
static void *srq_tm_mem(const struct hw_srq *srq)
{
	return (uint8_t *)srq->sh + sizeof(struct hw_srq_sh);
}

static void srq_place(struct hw_srq *srq, void *mem)
{
	size_t ring = srq_ring_room(srq->log_size, srq->log_stride);

	srq->buf = mem;
	srq->dbrec = (uint32_t *)(void *)((uint8_t *)mem + ring);
	srq->sh = (struct hw_srq_sh *)(void *)((uint8_t *)mem + ring + SRQ_DBREC_BYTES);
}

static enum hw_status srq_publish(struct hw_srq *srq)
{
	uint32_t geo[3] = { srq->log_size, srq->log_stride, srq->tm != NULL ? hw_tm_nent(srq->tm) : 0 };
	enum hw_status st = hw_qshare_publish(HW_ID_SRQN, srq->srqn, HW_QREC_SRQ, geo, &srq->qb);

	srq->published = st == HW_OK && srq->qb.ops != NULL;
	return st;
}

/* The block; with a ring and record given, the state alone, and the given memory shared beside it. */
static enum hw_status srq_alloc_mem(struct hw_srq *srq, const struct hw_srq_attr *attr)
{
	uint32_t nent = attr->tm != NULL ? hw_tm_nent(attr->tm) : 0;
	enum hw_status st;

	if (attr->ring == NULL) {
		st = hw_qblock_alloc(&srq->qb, srq_mem_size(attr->log_size, attr->log_stride, nent), attr->shared);
		if (st == HW_OK)
			srq_place(srq, srq->qb.p);
		return st;
	}
	st = hw_qblock_alloc(&srq->qb, sizeof(struct hw_srq_sh) + srq_tm_room(nent), attr->shared);
	if (st != HW_OK)
		return st;
	srq->buf = attr->ring;
	srq->dbrec = attr->dbrec;
	srq->sh = srq->qb.p;
	if (!attr->program_ring)
		*srq->dbrec = 0;
	return hw_qblock_adopt(&srq->qb, srq->buf, srq_ring_bytes(srq->log_size, srq->log_stride), srq->dbrec,
			       HW_SRQ_DBREC_BYTES);
}

/* A view's places in what hw_qshare_map mapped (see srq_alloc_mem); false when the record does not agree. */
static bool srq_view_place(struct hw_srq *srq, const struct hw_qrec *r)
{
	uint32_t nent = r->geo[2];

	if (srq->qb.xhandle == NULL) {
		if (srq_mem_size(srq->log_size, srq->log_stride, nent) != r->len)
			return false;
		srq_place(srq, srq->qb.p);
		return true;
	}
	if (r->len != sizeof(struct hw_srq_sh) + srq_tm_room(nent) || r->xring_len != srq_ring_bytes(srq->log_size, srq->log_stride) ||
	    r->xdbrec_len < HW_SRQ_DBREC_BYTES || srq->qb.xring == NULL || (uintptr_t)srq->qb.xdbrec % 4 != 0)
		return false;
	srq->buf = srq->qb.xring;
	srq->dbrec = srq->qb.xdbrec;
	srq->sh = srq->qb.p;
	return true;
}

enum hw_status hw_srq_create(const struct hw_srq_attr *attr, struct hw_srq **out)
{
	struct hw_srq *srq;
	enum hw_status st;

	if (attr == NULL || out == NULL || attr->pd == NULL || attr->log_size > HW_SRQ_LOG_MAX ||
	    attr->log_stride < HW_SRQ_LOG_STRIDE_MIN || attr->log_stride > HW_SRQ_LOG_STRIDE_MAX ||
	    (attr->xrcd != 0) != (attr->cq != NULL) || (attr->ring == NULL) != (attr->dbrec == NULL) ||
	    (attr->program_ring && attr->ring == NULL) ||
	    (uintptr_t)attr->ring % HW_SRQ_RING_ALIGN != 0 || (uintptr_t)attr->dbrec % 8 != 0)
		return HW_ERR_INVAL;
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL)
		return HW_ERR_NOMEM;
	srq->srqn = attr->srqn & 0xffffffu;
	srq->pd_id = hw_pd_id(attr->pd);
	srq->log_size = attr->log_size;
	srq->log_stride = attr->log_stride;
	srq->limit_cb = attr->limit_cb;
	srq->limit_arg = attr->limit_arg;
	srq->xrcd = attr->xrcd;
	srq->cq = attr->cq;
	srq->tm = attr->tm;
	srq->cyclic = attr->cyclic;
	st = srq_alloc_mem(srq, attr);
	if (st != HW_OK)
		goto err_block;
	if (srq->tm != NULL)
		hw_tm_bind(srq->tm, srq->srqn, srq_tm_mem(srq)); /* before the record: a view finds it whole */
	*srq->sh = (struct hw_srq_sh){ .srqn = srq->srqn, .pd_id = srq->pd_id, .log_size = srq->log_size,
				       .log_stride = srq->log_stride, .xrcd = srq->xrcd,
				       .cqn = srq->cq != NULL ? hw_cq_cqn(srq->cq) : 0, .life_idx = HW_LIFE_NONE,
				       .cyclic = srq->cyclic };
	/* An XRC SRQ is reached by requesters of other processes alone: they must see its owner die. */
	if (srq->xrcd != 0 && attr->shared)
		hw_life_self(&srq->sh->life_idx, &srq->sh->life_tid);
	/* The list a driver starts with: each WQE linked to the next, the last back to the first. */
	for (uint32_t i = 0; i < srq_size(srq) && !attr->program_ring; i++)
		srq_wqe(srq, i)->next_wqe_index = htobe16((uint16_t)((i + 1) & (srq_size(srq) - 1)));
	__atomic_store_n(&srq->sh->magic, SRQ_MAGIC, __ATOMIC_RELEASE);
	st = srq_publish(srq);
	if (st != HW_OK)
		goto err_block;
	if (srq->xrcd != 0 && !hw_xrc_srq_add(srq)) {
		st = HW_ERR_NOMEM;
		goto err_pub;
	}
	if (srq->xrcd != 0)
		hw_eng_get(); /* its owed limit events are the engine thread's to report (hw_xrc_limits_poll) */
	*out = srq;
	return HW_OK;

err_pub:
	if (srq->published)
		hw_qshare_withdraw(HW_ID_SRQN, srq->srqn, &srq->qb);
err_block:
	hw_qblock_free(&srq->qb);
	free(srq);
	return st;
}

enum hw_status hw_srq_attach_num(uint32_t srqn, struct hw_srq **out)
{
	const _Atomic uint32_t *seqp;
	struct hw_srq *srq;
	struct hw_qrec r;
	enum hw_status st;
	uint32_t seq;

	if (out == NULL)
		return HW_ERR_INVAL;
	srq = calloc(1, sizeof(*srq));
	if (srq == NULL)
		return HW_ERR_NOMEM;
	st = hw_qshare_map(HW_ID_SRQN, srqn & 0xffffffu, HW_QREC_SRQ, &srq->qb, &r, &seqp, &seq);
	srq->seqp = seqp;
	srq->seq = seq;
	if (st != HW_OK)
		goto err_free;
	st = HW_ERR_LAYOUT;
	if (r.geo[0] > HW_SRQ_LOG_MAX || r.geo[1] < HW_SRQ_LOG_STRIDE_MIN || r.geo[1] > HW_SRQ_LOG_STRIDE_MAX ||
	    r.geo[2] > HW_TM_MAX_TAGS + 1)
		goto err_unmap;
	srq->log_size = r.geo[0];
	srq->log_stride = r.geo[1];
	if (!srq_view_place(srq, &r))
		goto err_unmap;
	/* The block must say the same as the record: a stale or forged one is refused. */
	if (__atomic_load_n(&srq->sh->magic, __ATOMIC_ACQUIRE) != SRQ_MAGIC || srq->sh->log_size != srq->log_size ||
	    srq->sh->log_stride != srq->log_stride || srq->sh->srqn != (srqn & 0xffffffu))
		goto err_unmap;
	srq->srqn = srq->sh->srqn;
	srq->pd_id = srq->sh->pd_id;
	srq->cyclic = __atomic_load_n(&srq->sh->cyclic, __ATOMIC_RELAXED) != 0;
	srq->view = true;
	srq->xrcd = __atomic_load_n(&srq->sh->xrcd, __ATOMIC_RELAXED);
	/* An XRC SRQ's receives complete into its own CQ, which the view reaches as the QP views reach theirs. */
	if (srq->xrcd != 0 && (st = hw_cq_attach_num(srq->sh->cqn, &srq->cq)) != HW_OK)
		goto err_unmap;
	/* A tag matching SRQ's list is in its block: this process's requesters match against it too. */
	if (r.geo[2] != 0 && (st = hw_tm_view(srq_tm_mem(srq), r.geo[2], srq->srqn, &srq->tm)) != HW_OK)
		goto err_cq;
	srq->lifep = hw_life_at(__atomic_load_n(&srq->sh->life_idx, __ATOMIC_RELAXED));
	srq->life_tid = __atomic_load_n(&srq->sh->life_tid, __ATOMIC_RELAXED);
	*out = srq;
	return HW_OK;

err_cq:
	hw_cq_destroy(srq->cq);
err_unmap:
	hw_qblock_free(&srq->qb);
err_free:
	free(srq);
	return st;
}

enum hw_status hw_srq_destroy(struct hw_srq *srq)
{
	if (srq == NULL)
		return HW_OK;
	if (__atomic_load_n(&srq->qps, __ATOMIC_ACQUIRE) != NULL)
		return HW_ERR_INVAL;
	if (srq->xrcd != 0 && !srq->view)
		hw_xrc_srq_del(srq);
	if (srq->published)
		hw_qshare_withdraw(HW_ID_SRQN, srq->srqn, &srq->qb);
	if (!srq->view)
		hw_epoch_sync(); /* no requester of any thread or process still takes from it */
	if (srq->view) {
		hw_cq_destroy(srq->cq); /* an XRC view's CQ view; nothing for NULL */
		hw_tm_destroy(srq->tm); /* a tag matching view's list view; the owner's is the creator's */
	}
	else if (srq->xrcd != 0)
		hw_eng_put();
	hw_qblock_free(&srq->qb);
	free(srq);
	return HW_OK;
}

uint8_t *hw_srq_buf(const struct hw_srq *srq)
{
	return srq->buf;
}

uint32_t *hw_srq_dbrec(const struct hw_srq *srq)
{
	return srq->dbrec;
}

uint32_t hw_srq_srqn(const struct hw_srq *srq)
{
	return srq->srqn;
}

static uint32_t srq_pi(const struct hw_srq *srq)
{
	return be32toh(__atomic_load_n(&srq->dbrec[0], __ATOMIC_SEQ_CST)) & SRQ_COUNTER_MASK;
}

uint32_t hw_srq_posted(const struct hw_srq *srq)
{
	uint32_t hc = __atomic_load_n(&srq->sh->hc, __ATOMIC_ACQUIRE);
	uint32_t posted = (srq_pi(srq) - hc) & SRQ_COUNTER_MASK;

	return posted > srq_size(srq) ? 0 : posted;
}

uint32_t hw_srq_limit(const struct hw_srq *srq)
{
	return __atomic_load_n(&srq->sh->limit, __ATOMIC_ACQUIRE);
}

enum hw_status hw_srq_arm(struct hw_srq *srq, uint32_t limit)
{
	if (srq == NULL || limit > srq_size(srq) || limit > hw_srq_posted(srq))
		return HW_ERR_INVAL;
	__atomic_store_n(&srq->sh->limit, limit, __ATOMIC_RELEASE);
	return HW_OK;
}

/* Fires the limit once: whoever clears the armed limit calls back. */
static void srq_check_limit(struct hw_srq *srq, uint32_t left)
{
	uint32_t limit = __atomic_load_n(&srq->sh->limit, __ATOMIC_ACQUIRE);

	if (limit == 0 || left >= limit)
		return;
	if (!__atomic_compare_exchange_n(&srq->sh->limit, &limit, 0, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	if (srq->view)
		__atomic_store_n(&srq->sh->limit_owed, 1, __ATOMIC_RELEASE); /* the owner's engine thread reports it */
	else if (srq->limit_cb != NULL)
		srq->limit_cb(srq->limit_arg, srq);
}

bool hw_srq_limit_poll(struct hw_srq *srq)
{
	if (__atomic_load_n(&srq->sh->limit_owed, __ATOMIC_ACQUIRE) == 0 ||
	    !__atomic_exchange_n(&srq->sh->limit_owed, 0, __ATOMIC_ACQ_REL))
		return false;
	if (srq->limit_cb != NULL)
		srq->limit_cb(srq->limit_arg, srq);
	return true;
}

const uint8_t *hw_srq_take(struct hw_srq *srq, uint16_t *idx)
{
	uint32_t hc = __atomic_load_n(&srq->sh->hc, __ATOMIC_ACQUIRE);
	uint32_t head, posted, next;

	/* The block is memory other processes can write: a head beyond the ring is masked, a word that never settles gives up. */
	for (uint32_t tries = 0;; tries++) {
		posted = (srq_pi(srq) - hc) & SRQ_COUNTER_MASK;
		if (posted == 0 || posted > srq_size(srq) || tries == SRQ_TAKE_TRIES)
			return NULL;
		head = (hc >> 16) & (srq_size(srq) - 1);
		next = (srq->cyclic ? head + 1 : be16toh(srq_wqe(srq, head)->next_wqe_index)) & (srq_size(srq) - 1);
		if (__atomic_compare_exchange_n(&srq->sh->hc, &hc, next << 16 | ((hc + 1) & SRQ_COUNTER_MASK), false,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			break;
	}
	*idx = (uint16_t)head;
	srq_check_limit(srq, posted - 1);
	return (const uint8_t *)srq_wqe(srq, head);
}

enum hw_status hw_srq_ring(struct hw_srq *srq, uint32_t pi)
{
	uint32_t hc;

	if (srq == NULL)
		return HW_ERR_INVAL;
	pi &= SRQ_COUNTER_MASK;
	hc = __atomic_load_n(&srq->sh->hc, __ATOMIC_ACQUIRE);
	if (((pi - hc) & SRQ_COUNTER_MASK) > srq_size(srq))
		return HW_ERR_INVAL;
	__atomic_store_n(&srq->dbrec[0], htobe32(pi), __ATOMIC_SEQ_CST); /* see hw_qp_resume_peer */
	hw_epoch_enter(); /* the list's QPs and their peers stay while we look */
	for (struct hw_qp *qp = __atomic_load_n(&srq->qps, __ATOMIC_ACQUIRE); qp != NULL;
	     qp = __atomic_load_n(&qp->srq_next, __ATOMIC_ACQUIRE))
		hw_qp_resume_peer(qp);
	hw_epoch_leave();
	if (srq->xrcd != 0 && !srq->view)
		hw_xrc_srq_posted(); /* its requesters are whichever initiators name it */
	return HW_OK;
}

void hw_srq_attach(struct hw_srq *srq, struct hw_qp *qp)
{
	pthread_mutex_lock(&srq_list_lock);
	qp->srq_next = srq->qps;
	__atomic_store_n(&srq->qps, qp, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&srq_list_lock);
}

void hw_srq_detach(struct hw_srq *srq, struct hw_qp *qp)
{
	pthread_mutex_lock(&srq_list_lock);
	for (struct hw_qp **pp = &srq->qps; *pp != NULL; pp = &(*pp)->srq_next) {
		if (*pp == qp) {
			__atomic_store_n(pp, qp->srq_next, __ATOMIC_RELEASE);
			break;
		}
	}
	pthread_mutex_unlock(&srq_list_lock);
}
