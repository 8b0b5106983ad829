/*
 * hw_qp — queue pair objects: memory, state machine, flush of receives, the
 * registry UD destinations are found in, the receive doorbell, views of the
 * shared QPs of other processes.
 * The send side's execution is the engine's (hw_engine.c).
 */
#include <endian.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "hw_eng_thread.h"
#include "hw_epoch.h"
#include "hw_pace.h"
#include "hw_qp.h"
#include "hw_srq.h"
#include "hw_xrc.h"
#include "hw_xm.h"

#define QP_MAGIC 0x50514851u /* "QHQP" */
#define QP_DBREC_BYTES 64     /* the record alone in its line */
#define QP_REG_SLOTS 4096 /* QPs of this process the device can find by number */
#define QP_REG_TOMB ((struct hw_qp *)(uintptr_t)1)

/*
 * The registry: open addressing on the QPN, written under a lock at create
 * and destroy, read without one (a removed entry becomes a tombstone so the
 * probe chains stay intact).
 */
static struct {
	pthread_mutex_t lock;
	struct hw_qp *slot[QP_REG_SLOTS];
	/*
	 * The same QPs packed (under the lock): the engine thread's pass and a
	 * destroy's look for QPs connected to it go through these, not the
	 * whole table (a pass runs at every RNR wait across processes).
	 */
	struct hw_qp *live[QP_REG_SLOTS];
	uint32_t nlive;
} reg = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint32_t reg_hash(uint32_t qpn)
{
	return (qpn * 2654435761u) >> 20 & (QP_REG_SLOTS - 1);
}

static bool reg_add(struct hw_qp *qp)
{
	uint32_t h = reg_hash(qp->qpn);
	bool ok = false;

	pthread_mutex_lock(&reg.lock);
	for (uint32_t n = 0; n < QP_REG_SLOTS && !ok; n++) {
		struct hw_qp **s = &reg.slot[(h + n) & (QP_REG_SLOTS - 1)];

		if (*s == NULL || *s == QP_REG_TOMB) {
			__atomic_store_n(s, qp, __ATOMIC_RELEASE);
			qp->reg_live = reg.nlive;
			reg.live[reg.nlive++] = qp;
			ok = true;
		}
	}
	pthread_mutex_unlock(&reg.lock);
	return ok;
}

static void reg_del(struct hw_qp *qp)
{
	uint32_t h = reg_hash(qp->qpn);

	pthread_mutex_lock(&reg.lock);
	for (uint32_t n = 0; n < QP_REG_SLOTS; n++) {
		struct hw_qp **s = &reg.slot[(h + n) & (QP_REG_SLOTS - 1)];

		if (*s == NULL)
			break;
		if (*s == qp) {
			__atomic_store_n(s, QP_REG_TOMB, __ATOMIC_RELEASE);
			reg.live[qp->reg_live] = reg.live[--reg.nlive];
			reg.live[qp->reg_live]->reg_live = qp->reg_live;
			break;
		}
	}
	/*
	 * QPs of this process connected to it by pointer lose their peer, as
	 * a fabric loses a destroyed responder: their next request finds no
	 * one (retries exceeded) instead of freed memory.
	 */
	for (uint32_t n = 0; n < reg.nlive; n++) {
		struct hw_qp *o = reg.live[n];

		if (__atomic_load_n(&o->peer, __ATOMIC_ACQUIRE) == qp)
			__atomic_store_n(&o->peer, NULL, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&reg.lock);
}

void hw_qp_reg_lock(void)
{
	pthread_mutex_lock(&reg.lock);
}

void hw_qp_reg_unlock(void)
{
	pthread_mutex_unlock(&reg.lock);
}

void hw_qp_reg_forget(void)
{
	memset(reg.slot, 0, sizeof(reg.slot));
	reg.nlive = 0;
}

struct hw_qp *hw_qp_lookup(uint32_t qpn)
{
	uint32_t h;

	qpn &= 0xffffffu;
	h = reg_hash(qpn);
	for (uint32_t n = 0; n < QP_REG_SLOTS; n++) {
		struct hw_qp *qp = __atomic_load_n(&reg.slot[(h + n) & (QP_REG_SLOTS - 1)], __ATOMIC_ACQUIRE);

		if (qp == NULL)
			return NULL;
		if (qp != QP_REG_TOMB && qp->qpn == qpn)
			return qp;
	}
	return NULL;
}

/* The IB RNR timer codes in units of 10 us; code 0 is the longest. */
static const uint32_t rnr_timer_10us[HW_QP_RNR_TIMER_MAX + 1] = {
	65536, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152,
};

uint64_t hw_rnr_timer_ns(uint8_t code)
{
	return (uint64_t)rnr_timer_10us[code & HW_QP_RNR_TIMER_MAX] * 10000u;
}

/* An XRC target has no PD, CQs or SRQ (its requests name an SRQ); an initiator no receive side. */
static bool qp_xrc_attr_ok(const struct hw_qp_attr *a)
{
	if (a->type == HW_QPT_XRC_TGT)
		return a->xrcd != 0 && a->pd == NULL && a->send_cq == NULL && a->recv_cq == NULL && a->srq == NULL;
	return a->xrcd == 0 && a->pd != NULL && a->send_cq != NULL && a->recv_cq == NULL && a->srq == NULL;
}

static bool qp_attr_ok(const struct hw_qp_attr *a)
{
	if (a->type == HW_QPT_XRC_INI || a->type == HW_QPT_XRC_TGT) {
		if (!qp_xrc_attr_ok(a) || a->ring != NULL || a->dbrec != NULL)
			return false;
	} else if (a->pd == NULL || a->send_cq == NULL || a->recv_cq == NULL || a->xrcd != 0) {
		return false;
	}
	if (a->type != HW_QPT_RC && a->type != HW_QPT_UD && a->type != HW_QPT_DCI && a->type != HW_QPT_DCT &&
	    a->type != HW_QPT_UC && a->type != HW_QPT_XRC_INI && a->type != HW_QPT_XRC_TGT)
		return false;
	if (a->type == HW_QPT_DCT && a->srq == NULL)
		return false; /* a DCT receives only through an SRQ */
	if (a->min_rnr_timer > HW_QP_RNR_TIMER_MAX || a->rnr_retry > HW_QP_RNR_RETRY_INFINITE)
		return false;
	if ((a->ring == NULL) != (a->dbrec == NULL) || (a->sq != NULL && a->ring == NULL) ||
	    ((uintptr_t)a->ring % HW_QP_RING_ALIGN) != 0 || ((uintptr_t)a->sq % HW_QP_RING_ALIGN) != 0 ||
	    ((uintptr_t)a->dbrec % 8) != 0)
		return false; /* given rings: both, aligned */
	if (a->srq != NULL || a->type == HW_QPT_DCI)
		return a->log_sq_size <= HW_QP_LOG_SQ_MAX; /* no receive ring: none to size */
	if (a->log_sq_size > HW_QP_LOG_SQ_MAX || a->log_rq_size > HW_QP_LOG_RQ_MAX)
		return false;
	return a->log_rq_stride >= HW_QP_LOG_RQ_STRIDE_MIN && a->log_rq_stride <= HW_QP_LOG_RQ_STRIDE_MAX;
}

/*
 * [RQ][record][state]: one block, shareable. The send ring is not in it: a
 * requester of another process needs only the receive side, and a send
 * ring other processes could write would let them rewrite a WQE after it
 * was posted (clear its completion request, say) where no check can tell.
 */
static size_t qp_rings_bytes(const struct hw_qp *qp)
{
	return (qp->sq_off + QP_DBREC_BYTES - 1) & ~(size_t)(QP_DBREC_BYTES - 1);
}

/* The send ring of a QP that allocates its own: zeroed, page aligned, this process's alone. */
static int qp_sq_alloc(struct hw_qp *qp)
{
	size_t len = (((size_t)HW_SEND_WQE_BB << qp->log_sq_size) + 4095) & ~(size_t)4095;

	qp->sq_own = aligned_alloc(4096, len);
	if (qp->sq_own == NULL)
		return -1;
	memset(qp->sq_own, 0, len);
	qp->sq = qp->sq_own;
	return 0;
}

static size_t qp_mem_size(const struct hw_qp *qp)
{
	return qp_rings_bytes(qp) + QP_DBREC_BYTES + sizeof(struct hw_qp_sh);
}

static void qp_geometry(struct hw_qp *qp, uint32_t log_sq, uint32_t log_rq, uint32_t log_stride)
{
	qp->log_sq_size = log_sq;
	qp->log_rq_size = log_rq;
	qp->log_rq_stride = log_stride;
	qp->sq_off = log_stride == 0 ? 0 : (size_t)1 << (log_rq + log_stride);
	qp->buf_len = qp->sq_off + ((size_t)HW_SEND_WQE_BB << log_sq);
}

static void qp_place(struct hw_qp *qp, void *mem)
{
	qp->buf = mem;
	qp->dbrec = (uint32_t *)(void *)((uint8_t *)mem + qp_rings_bytes(qp));
	qp->sh = (struct hw_qp_sh *)(void *)((uint8_t *)mem + qp_rings_bytes(qp) + QP_DBREC_BYTES);
}

static void qp_sh_init(struct hw_qp *qp, const struct hw_qp_attr *attr)
{
	*qp->sh = (struct hw_qp_sh){
		.qpn = qp->qpn,
		.type = attr->type,
		.pd_id = qp->pd_id,
		.recv_cqn = attr->recv_cq != NULL ? hw_cq_cqn(attr->recv_cq) : 0,
		.srqn = attr->srq != NULL ? hw_srq_srqn(attr->srq) : 0,
		.has_srq = attr->srq != NULL,
		.log_sq_size = qp->log_sq_size,
		.log_rq_size = qp->log_rq_size,
		.log_rq_stride = qp->log_rq_stride,
		.state = HW_QP_RESET,
		.qkey = attr->qkey,
		.min_rnr_timer = attr->min_rnr_timer,
		.lid = attr->lid,
		.roce = attr->roce,
		.dc_key = attr->dc_key,
		.life_idx = HW_LIFE_NONE,
		.rights = HW_QP_RIGHTS_ALL,
		.xrcd = attr->xrcd,
	};
	if (attr->shared)
		hw_life_self(&qp->sh->life_idx, &qp->sh->life_tid);
	memcpy(qp->sh->gid, attr->gid, sizeof(qp->sh->gid));
	__atomic_store_n(&qp->sh->magic, QP_MAGIC, __ATOMIC_RELEASE);
}

static enum hw_status qp_publish(struct hw_qp *qp)
{
	uint32_t geo[3] = { qp->log_sq_size, qp->log_rq_size, qp->log_rq_stride };
	enum hw_status st = hw_qshare_publish(HW_ID_QPN, qp->qpn, HW_QREC_QP, geo, &qp->qb);

	qp->published = st == HW_OK && qp->qb.ops != NULL;
	return st;
}

enum hw_status hw_qp_create(const struct hw_qp_attr *attr, struct hw_qp **out)
{
	struct hw_qp *qp;
	enum hw_status st;

	if (attr == NULL || out == NULL || !qp_attr_ok(attr))
		return HW_ERR_INVAL;
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return HW_ERR_NOMEM;
	qp->qpn = attr->qpn & 0xffffffu;
	qp->pd_id = attr->pd != NULL ? hw_pd_id(attr->pd) : 0;
	qp->wr_pd = qp->rd_pd = qp->pd_id;
	qp->send_cq = attr->send_cq;
	qp->recv_cq = attr->recv_cq;
	qp->type = attr->type;
	qp->srq = attr->srq;
	qp->rnr_retry = attr->rnr_retry;
	qp->lid = attr->lid;
	qp->roce = attr->roce;
	memcpy(qp->gid, attr->gid, sizeof(qp->gid));
	qp->uidx = attr->user_index & 0xffffffu;
	qp->rnr_deadline = HW_QP_NO_DEADLINE;
	qp->pace_deadline = HW_QP_NO_DEADLINE;
	/* A DCI never receives (its responses come back on its requests): its ring is the SQ alone. */
	if (attr->srq != NULL || attr->type == HW_QPT_DCI)
		qp_geometry(qp, attr->log_sq_size, 0, 0);
	else
		qp_geometry(qp, attr->log_sq_size, attr->log_rq_size, attr->log_rq_stride);
	/* Given rings: the block holds the device's state alone. */
	st = hw_qblock_alloc(&qp->qb, attr->ring != NULL ? sizeof(struct hw_qp_sh) : qp_mem_size(qp), attr->shared);
	if (st != HW_OK)
		goto err_free;
	if (attr->ring != NULL) {
		qp->buf = attr->ring;
		qp->sq = attr->sq != NULL ? (uint8_t *)attr->sq : qp->buf + qp->sq_off;
		qp->dbrec = attr->dbrec;
		qp->sh = qp->qb.p;
		/* Peers need the receive ring alone (see qp_rings_bytes): the send ring is not shared. */
		st = attr->shared ? hw_qblock_adopt(&qp->qb, qp->buf, qp->sq_off, qp->dbrec, HW_QP_DBREC_BYTES) : HW_OK;
		if (st != HW_OK)
			goto err_block;
	} else {
		qp_place(qp, qp->qb.p);
		st = HW_ERR_NOMEM;
		if (qp_sq_alloc(qp) != 0)
			goto err_block;
	}
	qp_sh_init(qp, attr);
	st = qp_publish(qp);
	if (st != HW_OK)
		goto err_block;
	st = HW_ERR_NOMEM;
	if (!reg_add(qp))
		goto err_pub;
	if (qp->type == HW_QPT_XRC_INI && !hw_xrc_ini_add(qp)) {
		reg_del(qp);
		goto err_pub;
	}
	if (qp->srq != NULL)
		hw_srq_attach(qp->srq, qp);
	hw_eng_get();
	*out = qp;
	return HW_OK;

err_pub:
	if (qp->published)
		hw_qshare_withdraw(HW_ID_QPN, qp->qpn, &qp->qb);
err_block:
	free(qp->sq_own);
	hw_qblock_free(&qp->qb);
err_free:
	free(qp);
	return st;
}

void hw_qp_destroy(struct hw_qp *qp)
{
	if (qp == NULL)
		return;
	/* Peers elsewhere see it gone from here on; the engine thread stops looking at it. */
	if (qp->published)
		hw_qshare_withdraw(HW_ID_QPN, qp->qpn, &qp->qb);
	if (qp->srq != NULL)
		hw_srq_detach(qp->srq, qp);
	if (qp->type == HW_QPT_XRC_INI)
		hw_xrc_ini_del(qp);
	reg_del(qp);
	hw_qp_connect(qp, NULL);
	hw_eng_xm_replace(qp, NULL);
	/*
	 * Unreachable now (registry, peers' pointers, the SRQ's list, its
	 * record); what still runs with it, here or in another process, ends
	 * before its memory goes.
	 */
	hw_epoch_sync();
	hw_eng_tm_fins_free(qp);
	hw_pace_put(qp->pace);
	free(qp->sq_own);
	hw_qblock_free(&qp->qb);
	free(qp);
	hw_eng_put();
}


static enum hw_status view_queues(struct hw_qp *v)
{
	enum hw_status st;

	if (v->type == HW_QPT_XRC_TGT)
		return HW_OK; /* its receives come from the SRQ each request names (hw_xrc.h) */
	st = hw_cq_attach_num(v->sh->recv_cqn, &v->recv_cq);
	if (st != HW_OK)
		return st;
	if (v->sh->has_srq)
		return hw_srq_attach_num(v->sh->srqn, &v->srq);
	return HW_OK;
}

static bool view_sh_ok(const struct hw_qp *v, uint32_t qpn)
{
	const struct hw_qp_sh *sh = v->sh;

	return __atomic_load_n(&sh->magic, __ATOMIC_ACQUIRE) == QP_MAGIC && sh->qpn == qpn &&
	       sh->log_sq_size == v->log_sq_size && sh->log_rq_size == v->log_rq_size &&
	       sh->log_rq_stride == v->log_rq_stride && sh->type <= HW_QPT_XRC_TGT;
}

/*
 * Places a view in what hw_qshare_map mapped: one block, or (a QP in
 * memory its creator gave) the state there and the receive ring and
 * record in the creator's memory. False when the record does not agree.
 */
static bool view_place(struct hw_qp *v, const struct hw_qrec *r)
{
	if (v->qb.xhandle == NULL) {
		if (qp_mem_size(v) != r->len)
			return false;
		qp_place(v, v->qb.p);
		return true;
	}
	if (r->len != sizeof(struct hw_qp_sh) || r->xring_len != v->sq_off || r->xdbrec_len < HW_QP_DBREC_BYTES ||
	    (v->sq_off != 0 && v->qb.xring == NULL) || (uintptr_t)v->qb.xdbrec % 8 != 0)
		return false;
	v->buf = v->qb.xring;
	v->dbrec = v->qb.xdbrec;
	v->sh = v->qb.p;
	return true;
}

enum hw_status hw_qp_attach_num(uint32_t qpn, struct hw_qp **out)
{
	struct hw_qp *v;
	struct hw_qrec r;
	enum hw_status st;

	if (out == NULL)
		return HW_ERR_INVAL;
	qpn &= 0xffffffu;
	v = calloc(1, sizeof(*v) + sizeof(struct hw_qview));
	if (v == NULL)
		return HW_ERR_NOMEM;
	v->view = (struct hw_qview *)(v + 1);
	st = hw_qshare_map(HW_ID_QPN, qpn, HW_QREC_QP, &v->qb, &r, &v->view->seqp, &v->view->seq);
	if (st != HW_OK)
		goto err;
	st = HW_ERR_LAYOUT;
	if (r.geo[0] > HW_QP_LOG_SQ_MAX || r.geo[1] > HW_QP_LOG_RQ_MAX ||
	    (r.geo[2] != 0 && (r.geo[2] < HW_QP_LOG_RQ_STRIDE_MIN || r.geo[2] > HW_QP_LOG_RQ_STRIDE_MAX)))
		goto err;
	qp_geometry(v, r.geo[0], r.geo[1], r.geo[2]);
	if (!view_place(v, &r))
		goto err;
	if (!view_sh_ok(v, qpn))
		goto err;
	v->qpn = qpn;
	v->pd_id = v->sh->pd_id;
	/* Rights a peer may rely on are set before it connects (a DOCA RDMA context's, at its start). */
	hw_qp_rights_pds(v, __atomic_load_n(&v->sh->rights, __ATOMIC_ACQUIRE));
	v->type = (enum hw_qp_type)v->sh->type;
	v->rnr_deadline = HW_QP_NO_DEADLINE;
	v->pace_deadline = HW_QP_NO_DEADLINE;
	v->view->lifep = hw_life_at(__atomic_load_n(&v->sh->life_idx, __ATOMIC_RELAXED));
	v->view->life_tid = __atomic_load_n(&v->sh->life_tid, __ATOMIC_RELAXED);
	st = view_queues(v);
	if (st != HW_OK)
		goto err;
	*out = v;
	return HW_OK;

err:
	hw_qp_detach(v);
	return st;
}

void hw_qp_detach(struct hw_qp *v)
{
	if (v == NULL || v->view == NULL)
		return;
	hw_cq_destroy(v->recv_cq);
	(void)hw_srq_destroy(v->srq);
	hw_qblock_free(&v->qb);
	free(v);
}

/* The engine thread's look at a view: its record moved, or its owner died. */
static bool view_check_owner(struct hw_qp *v)
{
	pid_t pid;

	if (!hw_qp_view_live(v))
		return false;
	if (hw_id_owner(HW_ID_QPN, v->qpn, &pid) == HW_OK)
		return true;
	__atomic_store_n(&v->view->gone, 1, __ATOMIC_RELEASE);
	return false;
}

/* UD destinations of other processes: a few views kept, each counted while the engine uses it. */
#define DEST_CACHE 16

static struct {
	pthread_mutex_t lock;
	struct hw_qp *v[DEST_CACHE];
} dests = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void dest_unref(struct hw_qp *v)
{
	if (--v->view->refs == 0)
		hw_qp_detach(v);
}

struct hw_qp *hw_qp_dest_get(uint32_t qpn)
{
	struct hw_qp *qp = hw_qp_lookup(qpn), *v = NULL;
	uint32_t slot = (qpn & 0xffffffu) % DEST_CACHE;

	if (qp != NULL)
		return qp;
	qpn &= 0xffffffu;
	pthread_mutex_lock(&dests.lock);
	v = dests.v[slot];
	if (v != NULL && (v->qpn != qpn || !hw_qp_view_live(v))) {
		dests.v[slot] = NULL;
		dest_unref(v); /* freed once the last user puts it */
		v = NULL;
	}
	if (v == NULL && hw_qp_attach_num(qpn, &v) == HW_OK) {
		v->view->refs = 1;
		dests.v[slot] = v;
	}
	if (v != NULL)
		v->view->refs++;
	pthread_mutex_unlock(&dests.lock);
	return v;
}

void hw_qp_dest_put(struct hw_qp *qp)
{
	if (qp == NULL || qp->view == NULL)
		return;
	pthread_mutex_lock(&dests.lock);
	dest_unref(qp);
	pthread_mutex_unlock(&dests.lock);
}

void hw_qp_dests_drop(void)
{
	pthread_mutex_lock(&dests.lock);
	for (uint32_t i = 0; i < DEST_CACHE; i++)
		if (dests.v[i] != NULL) {
			dest_unref(dests.v[i]);
			dests.v[i] = NULL;
		}
	pthread_mutex_unlock(&dests.lock);
}

uint8_t *hw_qp_sq_buf(const struct hw_qp *qp)
{
	return qp->sq;
}

uint8_t *hw_qp_rq_buf(const struct hw_qp *qp)
{
	return qp->buf;
}

uint32_t *hw_qp_dbrec(const struct hw_qp *qp)
{
	return qp->dbrec;
}

/*
 * The shared word and the owner's differ: a change in progress (read again
 * once it is written), else ERR: a peer moved the QP there, or the word was
 * overwritten with anything.
 */
enum hw_qp_state hw_qp_state_torn(const struct hw_qp *qp)
{
	for (uint32_t spins = 0;; spins++) {
		uint32_t q = __atomic_load_n(&qp->state_seq, __ATOMIC_ACQUIRE), own, sh;

		if (q & 1) {
			if (spins % 64 == 63)
				sched_yield(); /* a thread of this process half way through three stores */
			continue;
		}
		own = __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);
		sh = __atomic_load_n(&qp->sh->state, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&qp->state_seq, __ATOMIC_ACQUIRE) == q)
			return sh == own ? (enum hw_qp_state)own : HW_QP_ERR;
	}
}

enum hw_qp_state hw_qp_state(struct hw_qp *qp)
{
	enum hw_qp_state st = hw_qp_state_of(qp);

	if (st == HW_QP_ERR && qp->view == NULL && __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE) != HW_QP_ERR)
		hw_qp_set_err(qp);
	return st;
}

/*
 * A view of another process's QP belongs to the QP connected to it. The
 * swap is made under the registry lock, and the old view freed once no
 * execution (a WQE of qp, the engine thread's look at its peer) can still
 * hold it: after an epoch.
 */
static void qp_set_peer(struct hw_qp *qp, struct hw_qp *peer, bool owned)
{
	struct hw_qp *old;

	pthread_mutex_lock(&reg.lock);
	__atomic_store_n(&qp->xm_machine, 0, __ATOMIC_RELEASE);
	old = qp->peer_view;
	__atomic_store_n(&qp->peer, peer, __ATOMIC_RELEASE);
	__atomic_store_n(&qp->peer_view, owned ? peer : NULL, __ATOMIC_RELEASE); /* compared without the lock (hw_qp_ring_rq) */
	pthread_mutex_unlock(&reg.lock);
	if (old != NULL && old != peer) {
		hw_epoch_sync(); /* a WQE of qp running now may still use the old view */
		hw_qp_detach(old);
	}
}

void hw_qp_connect(struct hw_qp *qp, struct hw_qp *peer)
{
	qp_set_peer(qp, peer, false);
}

enum hw_status hw_qp_connect_machine(struct hw_qp *qp, uint32_t machine, uint32_t dest_qpn, const uint8_t gid[16])
{
	struct hw_xm_flight *f;

	if (qp == NULL || qp->type != HW_QPT_RC || machine == 0 || gid == NULL)
		return HW_ERR_INVAL;
	f = hw_eng_xm_new(); /* a new connection: a new order of requests */
	if (f == NULL)
		return HW_ERR_NOMEM;
	qp_set_peer(qp, NULL, false);
	hw_eng_xm_replace(qp, f);
	qp->xm_dest = dest_qpn;
	memcpy(qp->xm_gid, gid, sizeof(qp->xm_gid));
	__atomic_store_n(&qp->xm_machine, machine, __ATOMIC_RELEASE);
	return HW_OK;
}

bool hw_qp_xm_busy(const struct hw_qp *qp)
{
	return qp != NULL && __atomic_load_n(&qp->xm_inflight, __ATOMIC_ACQUIRE) != 0;
}

/* A QP of no port (LID 0: a FlexIO queue, addressed by its number alone) is on every one. */
static bool qp_on_port(const struct hw_qp *peer, uint16_t lid)
{
	return lid == 0 || peer->sh->lid == 0 || peer->sh->lid == lid;
}

/* The type of QP a connected QP's requests go to: its own, or an XRC target for an initiator. */
static uint32_t qp_peer_type(const struct hw_qp *qp)
{
	return qp->type == HW_QPT_XRC_INI ? HW_QPT_XRC_TGT : qp->type;
}

enum hw_status hw_qp_connect_port(struct hw_qp *qp, uint32_t dest_qpn, uint16_t lid)
{
	struct hw_qp *peer;
	enum hw_status st;

	if (qp == NULL)
		return HW_ERR_INVAL;
	if (qp->type != HW_QPT_RC && qp->type != HW_QPT_UC && qp->type != HW_QPT_XRC_INI)
		return HW_ERR_INVAL;
	peer = hw_qp_lookup(dest_qpn);
	if (peer == NULL) {
		st = hw_qp_attach_num(dest_qpn, &peer);
		if (st == HW_ERR_NOMEM)
			return st;
		if (st != HW_OK || peer->type != qp_peer_type(qp) || !qp_on_port(peer, lid)) {
			hw_qp_detach(peer);
			return HW_ERR_KEY;
		}
	} else if (peer->type != qp_peer_type(qp) || !qp_on_port(peer, lid)) {
		return HW_ERR_KEY; /* an RC QP answers RC requests only, a UC QP UC ones; a port its own QPs */
	}
	qp_set_peer(qp, peer, peer->view != NULL);
	if (peer->view != NULL)
		hw_eng_wake(); /* its owner's life is now watched */
	return HW_OK;
}

enum hw_status hw_qp_connect_qpn(struct hw_qp *qp, uint32_t dest_qpn)
{
	return hw_qp_connect_port(qp, dest_qpn, 0);
}

enum hw_status hw_qp_set_polled(struct hw_qp *qp, bool polled)
{
	if (qp == NULL || qp->view != NULL)
		return HW_ERR_INVAL;
	__atomic_store_n(&qp->seen_rq_pi, be32toh(__atomic_load_n(&qp->dbrec[HW_QP_DBR_RCV], __ATOMIC_ACQUIRE)),
			 __ATOMIC_RELAXED);
	__atomic_store_n(&qp->polled, polled, __ATOMIC_RELEASE);
	if (polled)
		hw_eng_wake();
	return HW_OK;
}

enum hw_status hw_qp_set_caller_timers(struct hw_qp *qp, bool caller)
{
	if (qp == NULL || qp->view != NULL)
		return HW_ERR_INVAL;
	__atomic_store_n(&qp->timers_by_caller, caller, __ATOMIC_RELEASE);
	return HW_OK;
}

void hw_qp_claim_recover(struct hw_cq *cq)
{
	struct hw_cq_claim c;
	struct hw_qp *qp;

	if (!hw_cq_claim_orphan(cq, &c))
		return;
	if (c.srq) {
		/* Other QPs take from the SRQ meanwhile: the WQE cannot go back, its buffer does. */
		struct hw_cqe_fields f = { .opcode = HW_CQE_RESP_ERR, .qpn = c.qpn, .wqe_counter = (uint16_t)c.idx,
					   .srqn = c.srqn, .syndrome = HW_CQE_SYNDROME_WR_FLUSH_ERR };

		(void)hw_cq_push_locked(cq, &f);
		return;
	}
	/* Only holders of this lock move the RQ's counter: taken and not completed, it is given back. */
	qp = hw_qp_dest_get(c.qpn);
	if (qp != NULL) {
		uint32_t taken = (c.idx + 1) & HW_QP_COUNTER_MASK;

		__atomic_compare_exchange_n(&qp->sh->rq_ci, &taken, c.idx, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
		hw_qp_dest_put(qp);
	}
}

/*
 * Every posted receive completes in error: the program gets each buffer back.
 * Requesters of other processes may take receives at the same time; each
 * take, theirs or the flush's, and its CQE happen under the receive CQ's
 * producer lock (hw_cq_claim_set).
 */
static void qp_flush_rq(struct hw_qp *qp)
{
	struct hw_cqe_fields f = {
		.opcode = HW_CQE_RESP_ERR,
		.qpn = qp->qpn,
		.syndrome = HW_CQE_SYNDROME_WR_FLUSH_ERR,
	};

	if (qp->srq != NULL || qp->recv_cq == NULL)
		return; /* the SRQ's WQEs stay for the other QPs; an XRC QP has no receive ring */
	/* At most a ring's worth: counters in shared memory rewritten meanwhile cannot keep it going. */
	for (uint32_t n = 0; n < (1u << qp->log_rq_size); n++) {
		uint32_t pi = be32toh(__atomic_load_n(&qp->dbrec[HW_QP_DBR_RCV], __ATOMIC_ACQUIRE)), ci, posted;

		hw_cq_lock(qp->recv_cq);
		hw_qp_claim_recover(qp->recv_cq);
		ci = __atomic_load_n(&qp->sh->rq_ci, __ATOMIC_ACQUIRE);
		posted = (pi - ci) & HW_QP_COUNTER_MASK;
		if (posted == 0 || posted > (1u << qp->log_rq_size)) {
			hw_cq_unlock(qp->recv_cq);
			return;
		}
		__atomic_store_n(&qp->sh->rq_ci, (ci + 1) & HW_QP_COUNTER_MASK, __ATOMIC_RELEASE);
		f.wqe_counter = (uint16_t)ci;
		(void)hw_cq_push_locked(qp->recv_cq, &f); /* a full CQ latches its overrun flag */
		hw_cq_unlock(qp->recv_cq);
	}
}

/* The owner's word and the shared one together, as hw_qp_state_torn reads them; writers of this process take turns. */
static void qp_set_state(struct hw_qp *qp, enum hw_qp_state st)
{
	uint32_t q = __atomic_load_n(&qp->state_seq, __ATOMIC_RELAXED);

	for (;;) {
		if (!(q & 1) && __atomic_compare_exchange_n(&qp->state_seq, &q, q + 1, false, __ATOMIC_ACQ_REL,
							    __ATOMIC_RELAXED))
			break;
		sched_yield();
		q = __atomic_load_n(&qp->state_seq, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&qp->state, (uint32_t)st, __ATOMIC_RELEASE);
	__atomic_store_n(&qp->sh->state, (uint32_t)st, __ATOMIC_RELEASE);
	__atomic_store_n(&qp->state_seq, q + 2, __ATOMIC_RELEASE);
}

void hw_qp_set_err(struct hw_qp *qp)
{
	hw_qp_err_fn fn = __atomic_load_n(&qp->err_fn, __ATOMIC_ACQUIRE);

	qp_set_state(qp, HW_QP_ERR);
	qp_flush_rq(qp);
	if (fn != NULL && !__atomic_exchange_n(&qp->err_told, 1, __ATOMIC_ACQ_REL))
		fn(qp->err_arg);
}

void hw_qp_on_err(struct hw_qp *qp, hw_qp_err_fn fn, void *arg)
{
	qp->err_arg = arg;
	__atomic_store_n(&qp->err_fn, fn, __ATOMIC_RELEASE);
}

enum hw_status hw_qp_modify(struct hw_qp *qp, enum hw_qp_state to)
{
	if (qp == NULL)
		return HW_ERR_INVAL;
	switch (to) {
	case HW_QP_RESET:
		__atomic_store_n(&qp->xm_machine, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&qp->xm_probed_ns, 0, __ATOMIC_RELAXED); /* connected again: a new first look */
		__atomic_store_n(&qp->err_told, 0, __ATOMIC_RELEASE);
		hw_eng_xm_replace(qp, NULL); /* what is still in flight is answered first (bounded) */
		qp_set_state(qp, HW_QP_RESET);
		__atomic_store_n(&qp->sq_ci, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&qp->sh->rq_ci, 0, __ATOMIC_RELEASE);
		qp->rq_pi_rung = 0;
		qp->rq_ci_seen = 0;
		__atomic_store_n(&qp->sq_pi, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&qp->rnr_deadline, HW_QP_NO_DEADLINE, __ATOMIC_RELEASE);
		__atomic_store_n(&qp->dcs_errored, 0, __ATOMIC_RELEASE); /* a DCI's streams start clean */
		return HW_OK;
	case HW_QP_ERR:
		hw_qp_set_err(qp);
		hw_qp_drive(qp, 0); /* an SQ stopped by RNR is flushed now */
		return HW_OK;
	case HW_QP_INIT:
	case HW_QP_RTR:
	case HW_QP_RTS:
		if (hw_qp_state_of(qp) != to - 1)
			return HW_ERR_INVAL;
		qp_set_state(qp, to);
		return HW_OK;
	}
	return HW_ERR_INVAL;
}

enum hw_status hw_qp_set_rnr(struct hw_qp *qp, uint8_t min_rnr_timer, uint8_t rnr_retry)
{
	if (qp == NULL || min_rnr_timer > HW_QP_RNR_TIMER_MAX || rnr_retry > HW_QP_RNR_RETRY_INFINITE)
		return HW_ERR_INVAL;
	__atomic_store_n(&qp->sh->min_rnr_timer, min_rnr_timer, __ATOMIC_RELAXED);
	qp->rnr_retry = rnr_retry;
	return HW_OK;
}

enum hw_status hw_qp_set_retry(struct hw_qp *qp, uint8_t ack_timeout, uint8_t retry_cnt)
{
	if (qp == NULL || ack_timeout > 31 || retry_cnt > 7)
		return HW_ERR_INVAL;
	qp->ack_timeout = ack_timeout;
	qp->retry_cnt = retry_cnt;
	qp->retransmit = true;
	return HW_OK;
}

enum hw_status hw_qp_set_scatter(struct hw_qp *qp, bool on)
{
	if (qp == NULL || qp->recv_cq == NULL)
		return HW_ERR_INVAL;
	__atomic_store_n(&qp->sh->scat_max, on ? hw_cq_cqe_size(qp->recv_cq) / 2 : 0, __ATOMIC_RELEASE);
	return HW_OK;
}

enum hw_status hw_qp_set_rights(struct hw_qp *qp, uint32_t rights)
{
	if (qp == NULL || (rights & ~(uint32_t)(HW_QP_RIGHTS_ALL | HW_QP_RIGHTS_STRICT)) != 0)
		return HW_ERR_INVAL;
	__atomic_store_n(&qp->sh->rights, rights, __ATOMIC_RELEASE);
	hw_qp_rights_pds(qp, rights);
	return HW_OK;
}

enum hw_status hw_qp_set_qkey(struct hw_qp *qp, uint32_t qkey)
{
	if (qp == NULL || qp->type != HW_QPT_UD)
		return HW_ERR_INVAL;
	__atomic_store_n(&qp->sh->qkey, qkey, __ATOMIC_RELEASE);
	return HW_OK;
}

/*
 * Receives to wait for before a poll resumes an SQ stopped on RNR: as many
 * as it has WQEs to send (counted in basic blocks, at least as many), up to
 * this many and the responder's ring. A receiver that reposts one receive
 * per message it polls would otherwise be fed one message per wait, each
 * wait a round of cache lines between the two processes' cores; the
 * engine thread takes fewer once the wait has lasted HW_ENG_RNR_GRACE_NS.
 */
#define QP_RNR_BATCH 32u

/*
 * An RC responder of another process has receives posted, enough for the
 * kick that only this SQ can give to be due (QP_RNR_BATCH).
 */
static bool qp_remote_recv_posted(const struct hw_qp *qp)
{
	const struct hw_qp *peer = __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE);
	uint32_t posted, ring, want;

	if (qp->type != HW_QPT_RC || peer == NULL || peer->view == NULL ||
	    __atomic_load_n(&qp->xm_machine, __ATOMIC_ACQUIRE) != 0)
		return false;
	if (peer->srq != NULL) {
		posted = hw_srq_posted(peer->srq);
		ring = 1u << peer->srq->log_size;
	} else {
		uint32_t pi = be32toh(__atomic_load_n(&peer->dbrec[HW_QP_DBR_RCV], __ATOMIC_ACQUIRE));

		posted = (pi - __atomic_load_n(&peer->sh->rq_ci, __ATOMIC_ACQUIRE)) & HW_QP_COUNTER_MASK;
		ring = 1u << peer->log_rq_size;
	}
	want = (__atomic_load_n(&qp->sq_pi, __ATOMIC_ACQUIRE) - __atomic_load_n(&qp->sq_ci, __ATOMIC_ACQUIRE)) &
	       HW_QP_COUNTER_MASK;
	want = want < QP_RNR_BATCH ? want : QP_RNR_BATCH;
	want = want < ring ? want : ring;
	return posted != 0 && posted >= want;
}

uint64_t hw_qp_deadline(struct hw_qp *qp)
{
	uint64_t d, pd;
	bool due;

	if (qp == NULL)
		return HW_QP_NO_DEADLINE;
	d = __atomic_load_n(&qp->rnr_deadline, __ATOMIC_ACQUIRE);
	/* A paced SQ waiting for tokens (hw_pace.h): a polling program runs it at that time, before the thread's wake. */
	pd = __atomic_load_n(&qp->pace_deadline, __ATOMIC_ACQUIRE);
	if (d == HW_QP_NO_DEADLINE)
		return pd;
	/* The program watches this wait itself (pass_rnr_remote); a lost count among racing pollers is no matter. */
	__atomic_store_n(&qp->rnr_asks, __atomic_load_n(&qp->rnr_asks, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
	/*
	 * Receives posted in another process since the SQ stopped: the kick
	 * that takes them is due now. A program that polls its CQ resumes the
	 * SQ itself this way, before the engine thread's wake (hw_eng_thread.c).
	 */
	hw_epoch_enter(); /* the peer's view stays while it is looked at */
	due = qp_remote_recv_posted(qp);
	hw_epoch_leave();
	return due ? 0 : d < pd ? d : pd;
}

/*
 * A requester of another process waits for a receive here: its engine
 * thread sleeps on the bell (a shared futex: the block is mapped there).
 * Clearing the flag first makes one wake per wait; each waiter that still
 * waits sets it again before it sleeps (pass_rnr_remote).
 */
static void qp_rnr_ring(struct hw_qp_sh *sh)
{
	if (__atomic_exchange_n(&sh->rnr_wait, 0, __ATOMIC_SEQ_CST) == 0)
		return;
	__atomic_fetch_add(&sh->rnr_bell, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &sh->rnr_bell, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* hw_qp_resume_peer, inlined into the receive doorbell: it runs at every repost. */
static inline __attribute__((always_inline)) void qp_resume_peer(struct hw_qp *qp)
{
	struct hw_qp *peer = __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE);

	/*
	 * The receive was published (sequentially consistent) before this load,
	 * and the waiter sets the flag before it looks at the receives: one of
	 * the two sees the other's (pass_rnr_remote).
	 */
	if (__builtin_expect(__atomic_load_n(&qp->sh->rnr_wait, __ATOMIC_SEQ_CST) != 0, 0))
		qp_rnr_ring(qp->sh);
	if (qp->type != HW_QPT_RC || peer == NULL || peer->view != NULL ||
	    __atomic_load_n(&peer->peer, __ATOMIC_ACQUIRE) != qp)
		return;
	/*
	 * The receive was published (sequentially consistent) before this; a peer
	 * SQ running now may have looked before it and be about to wait, so a
	 * running one is driven too (it goes round again). drivers is read first,
	 * sequentially consistent against hw_qp_drive's increment: read as 0
	 * after a run ended, it makes that run's deadline visible.
	 */
	if (__atomic_load_n(&peer->drivers, __ATOMIC_SEQ_CST) != 0 ||
	    __atomic_load_n(&peer->rnr_deadline, __ATOMIC_ACQUIRE) != HW_QP_NO_DEADLINE)
		hw_qp_drive(peer, 0);
}

void hw_qp_resume_peer(struct hw_qp *qp)
{
	qp_resume_peer(qp);
}

enum hw_status hw_qp_ring_rq(struct hw_qp *qp, uint32_t pi)
{
	struct hw_qp *peer;

	if (qp == NULL || qp->srq != NULL)
		return HW_ERR_INVAL;
	pi &= HW_QP_COUNTER_MASK;
	/*
	 * The consumer never passes the last counter rung and rq_ci_seen is a
	 * past rq_ci, so a counter at or after the last one and within a ring of
	 * rq_ci_seen is within a ring of rq_ci too: read only when that fails.
	 */
	if (((pi - qp->rq_pi_rung) & HW_QP_COUNTER_MASK) > (1u << qp->log_rq_size) ||
	    ((pi - qp->rq_ci_seen) & HW_QP_COUNTER_MASK) > (1u << qp->log_rq_size)) {
		qp->rq_ci_seen = __atomic_load_n(&qp->sh->rq_ci, __ATOMIC_ACQUIRE);
		if (((pi - qp->rq_ci_seen) & HW_QP_COUNTER_MASK) > (1u << qp->log_rq_size))
			return HW_ERR_INVAL;
	}
	qp->rq_pi_rung = pi;
	__atomic_store_n(&qp->dbrec[HW_QP_DBR_RCV], htobe32(pi), __ATOMIC_SEQ_CST);
	peer = __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE);
	if (peer != NULL && peer == __atomic_load_n(&qp->peer_view, __ATOMIC_ACQUIRE)) {
		/*
		 * The requester is another process's: only its engine thread may
		 * wait for this receive (the bell); the pointers are compared, not
		 * followed, so no epoch is needed. A connection changing meanwhile
		 * makes them differ: the full look below.
		 */
		if (__builtin_expect(__atomic_load_n(&qp->sh->rnr_wait, __ATOMIC_SEQ_CST) != 0, 0))
			qp_rnr_ring(qp->sh);
	} else {
		hw_epoch_enter(); /* the peer it resumes stays while it runs */
		qp_resume_peer(qp);
		hw_epoch_leave();
	}
	/* A QP in the error state flushes what is posted to it, as the card does. */
	if (__builtin_expect(hw_qp_state_of(qp) == HW_QP_ERR, 0))
		(void)hw_qp_modify(qp, HW_QP_ERR);
	return HW_OK;
}

enum hw_status hw_qp_kick(struct hw_qp *qp, uint64_t now_ns)
{
	if (qp == NULL || qp->view != NULL)
		return HW_ERR_INVAL;
	hw_qp_drive(qp, now_ns == 0 ? 1 : now_ns);
	return HW_OK;
}

/* A polled QP: the program moved the send record without the doorbell call; true when work ran. */
static bool pass_polled(struct hw_qp *qp)
{
	uint32_t pi = be32toh(__atomic_load_n(&qp->dbrec[HW_QP_DBR_SND], __ATOMIC_ACQUIRE)) & HW_QP_COUNTER_MASK;
	uint32_t rpi = be32toh(__atomic_load_n(&qp->dbrec[HW_QP_DBR_RCV], __ATOMIC_ACQUIRE)) & HW_QP_COUNTER_MASK;
	bool ran = false;

	if (pi != __atomic_load_n(&qp->sq_pi, __ATOMIC_ACQUIRE)) {
		/*
		 * A record more than a ring ahead of what ran is nothing a program
		 * posts (memory another process scribbled on, or a program's bug):
		 * as a card given such a doorbell, the QP fails, not waits.
		 */
		if (hw_qp_ring_sq(qp, pi) == HW_OK) {
			ran = true;
		} else if (hw_qp_state_of(qp) == HW_QP_RTS) {
			hw_qp_fail_sq(qp);
			ran = true;
		}
	}
	if (rpi != __atomic_load_n(&qp->seen_rq_pi, __ATOMIC_RELAXED) && qp->srq == NULL) {
		__atomic_store_n(&qp->seen_rq_pi, rpi, __ATOMIC_RELAXED);
		hw_qp_resume_peer(qp);
		ran = true;
	}
	return ran;
}

/*
 * A connected QP whose peer is on another machine, idle: asked whether the
 * peer still answers every HW_QP_XM_PROBE_NS, so a machine or process that
 * went moves it to ERR without waiting for its next request. The first probe
 * comes a period after the QP is first seen connected, not at once: a QP just
 * connected has nothing to learn yet, and the probe's connection would be
 * opened while the peer may still be setting up (UCX 1.13 aborts a process
 * whose wire-up reply is still queued when the peer it answers dies:
 * docs/fabric_ucx.md).
 */
#define HW_QP_XM_PROBE_NS 1000000000ull

static void pass_peer_xm(struct hw_qp *qp, uint64_t now_ns)
{
	enum hw_qp_state st = hw_qp_state_of(qp);
	uint64_t last = __atomic_load_n(&qp->xm_probed_ns, __ATOMIC_RELAXED);

	if (st != HW_QP_RTR && st != HW_QP_RTS)
		return;
	if (last == 0) { /* the clock starts at the first look */
		__atomic_store_n(&qp->xm_probed_ns, now_ns, __ATOMIC_RELAXED);
		return;
	}
	if (hw_qp_xm_busy(qp) || now_ns - last < HW_QP_XM_PROBE_NS)
		return; /* requests in flight find out by themselves */
	__atomic_store_n(&qp->xm_probed_ns, now_ns, __ATOMIC_RELAXED);
	if (hw_eng_xm_probe(qp))
		return;
	hw_qp_set_err(qp);
	hw_qp_drive(qp, 0);
}

/*
 * A peer of another process found gone is marked so (its owner died without
 * the kernel's word telling, or its record went): as on a card, the QP
 * learns it from its next request, which fails with retries exceeded (the QP
 * to ERR, the rest flushed); an idle QP stays as it is.
 */
static void pass_peer(struct hw_qp *qp, uint64_t now_ns)
{
	struct hw_qp *peer = __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE);

	if (__atomic_load_n(&qp->xm_machine, __ATOMIC_ACQUIRE) != 0) {
		pass_peer_xm(qp, now_ns);
		return;
	}
	if (peer != NULL && peer->view != NULL)
		(void)view_check_owner(peer);
}

enum pass_rnr_act {
	PASS_RNR_LATER, /* look again at p->next_deadline */
	PASS_RNR_TAKE,	/* the program polls: take what receives there are, ask for no ring */
	PASS_RNR_WATCH, /* ask the responder's doorbell to ring */
};

/*
 * What the engine thread does for qp's RNR wait now (pass_rnr_remote). The
 * fields are the engine thread's, relaxed atomics only because a stopping
 * thread and its successor may pass at once.
 */
static enum pass_rnr_act pass_rnr_due(struct hw_qp *qp, struct hw_eng_pass *p)
{
	uint64_t d = __atomic_load_n(&qp->rnr_deadline, __ATOMIC_ACQUIRE);
	uint64_t look = __atomic_load_n(&qp->rnr_look_ns, __ATOMIC_RELAXED);
	uint64_t gap = __atomic_load_n(&qp->rnr_gap_ns, __ATOMIC_RELAXED);
	uint32_t asks = __atomic_load_n(&qp->rnr_asks, __ATOMIC_RELAXED);
	enum pass_rnr_act act = PASS_RNR_LATER;

	if (d != __atomic_load_n(&qp->rnr_seen_dl, __ATOMIC_RELAXED)) { /* a new wait, or a retry */
		__atomic_store_n(&qp->rnr_seen_dl, d, __ATOMIC_RELAXED);
		__atomic_store_n(&qp->rnr_seen_asks, asks, __ATOMIC_RELAXED);
		gap = HW_ENG_RNR_GRACE_NS;
		look = p->now_ns + gap;
	} else if (p->now_ns >= look && asks != __atomic_load_n(&qp->rnr_seen_asks, __ATOMIC_RELAXED)) {
		/*
		 * The program polls its CQ and takes the receives itself, once
		 * there are enough (hw_qp_deadline); fewer are taken here, and
		 * the next look is later.
		 */
		__atomic_store_n(&qp->rnr_seen_asks, asks, __ATOMIC_RELAXED);
		gap = gap * 2 < HW_ENG_POLL_MAX_NS ? gap * 2 : HW_ENG_POLL_MAX_NS;
		look = p->now_ns + gap;
		act = PASS_RNR_TAKE;
	} else if (p->now_ns >= look) {
		act = PASS_RNR_WATCH;
	}
	__atomic_store_n(&qp->rnr_gap_ns, gap, __ATOMIC_RELAXED);
	__atomic_store_n(&qp->rnr_look_ns, look, __ATOMIC_RELAXED);
	if (act != PASS_RNR_WATCH && look < p->next_deadline)
		p->next_deadline = look;
	return act;
}

/*
 * An RC SQ waiting on RNR for a responder of another process: its receive
 * doorbell cannot run this SQ, so the engine thread watches for it, once the
 * wait has lasted HW_ENG_RNR_GRACE_NS without the program polling its CQ
 * (a poll asks hw_qp_deadline, which takes the receives itself once there
 * are enough; while it polls, the thread looks again at doubling intervals
 * up to HW_ENG_POLL_MAX_NS, takes fewer receives if there are some, and
 * watches once the program stops polling, to sleep). Asking
 * for the ring makes the responder's doorbell a system call and its wake
 * a context switch here, which a polling program has no use for. The
 * bell's value is read first, then the flag set, then the SQ driven (it
 * looks at the receives): a receive posted before the flag was seen runs
 * here, one posted after rings the bell past the value read, so the
 * thread's sleep on it ends at once or when it rings (hw_eng_thread.c).
 */
static void pass_rnr_remote(struct hw_qp *qp, struct hw_eng_pass *p)
{
	struct hw_qp *peer = __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE);
	struct hw_qp_sh *sh;
	uint32_t seen;

	if (qp->type != HW_QPT_RC || peer == NULL || peer->view == NULL ||
	    __atomic_load_n(&qp->xm_machine, __ATOMIC_ACQUIRE) != 0 ||
	    __atomic_load_n(&qp->rnr_deadline, __ATOMIC_ACQUIRE) == HW_QP_NO_DEADLINE ||
	    __atomic_load_n(&qp->retry_wait, __ATOMIC_RELAXED))
		return; /* a retry of a request to a peer not ready: its deadline (pass_one), no receive, ends it */
	switch (pass_rnr_due(qp, p)) {
	case PASS_RNR_LATER:
		return;
	case PASS_RNR_TAKE:
		hw_qp_drive(qp, 0);
		if (__atomic_load_n(&qp->rnr_deadline, __ATOMIC_ACQUIRE) == HW_QP_NO_DEADLINE)
			p->activity = true;
		return;
	case PASS_RNR_WATCH:
		break;
	}
	sh = peer->sh;
	seen = __atomic_load_n(&sh->rnr_bell, __ATOMIC_ACQUIRE);
	__atomic_store_n(&sh->rnr_wait, 1, __ATOMIC_SEQ_CST);
	hw_qp_drive(qp, 0); /* no time passes: a receive there runs the WQE, none counts no retry */
	if (__atomic_load_n(&qp->rnr_deadline, __ATOMIC_ACQUIRE) == HW_QP_NO_DEADLINE) {
		p->activity = true;
		return;
	}
	if (p->nbells == HW_ENG_BELLS_MAX) {
		p->bells_over = true;
		return;
	}
	p->bell[p->nbells] = &sh->rnr_bell;
	p->bell_seen[p->nbells++] = seen;
}

#define QP_PASS_BUSY_NS 50000ull

/*
 * Rendezvous FINs owed to qp, which had no receive for them (hw_eng_tm.h):
 * tried again at every pass, and a pass at least every HW_ENG_TM_FIN_RETRY_NS
 * while some are owed, as a card's responder retries a SEND the requester
 * NAKed for want of a receive. The receive doorbell pays nothing for it.
 */
static void pass_tm_fins(struct hw_qp *qp, struct hw_eng_pass *p)
{
	uint32_t before = __atomic_load_n(&qp->tm_fins_owed, __ATOMIC_ACQUIRE);

	hw_eng_tm_fins_run(qp);
	if (__atomic_load_n(&qp->tm_fins_owed, __ATOMIC_ACQUIRE) != before)
		p->activity = true;
	if (__atomic_load_n(&qp->tm_fins_owed, __ATOMIC_ACQUIRE) != 0 &&
	    p->now_ns + HW_ENG_TM_FIN_RETRY_NS < p->next_deadline)
		p->next_deadline = p->now_ns + HW_ENG_TM_FIN_RETRY_NS;
}

static void pass_one(struct hw_qp *qp, struct hw_eng_pass *p)
{
	uint64_t d = __atomic_load_n(&qp->rnr_deadline, __ATOMIC_ACQUIRE);

	if (__atomic_load_n(&qp->polled, __ATOMIC_ACQUIRE)) {
		p->polled = true;
		if (!p->no_polled_run && pass_polled(qp) && !p->polled_trapped)
			p->activity = p->raw = true;
	}
	if (d != HW_QP_NO_DEADLINE && !__atomic_load_n(&qp->timers_by_caller, __ATOMIC_ACQUIRE)) {
		if (d <= p->now_ns) {
			hw_qp_drive(qp, p->now_ns);
			/*
			 * The deadline unchanged: another thread runs the SQ and
			 * takes the kick (hw_qp_drive). Passing again at once would
			 * spin against it, preempted or not; a look shortly after
			 * does.
			 */
			if (__atomic_load_n(&qp->rnr_deadline, __ATOMIC_ACQUIRE) != d)
				p->activity = true;
			else if (p->now_ns + QP_PASS_BUSY_NS < p->next_deadline)
				p->next_deadline = p->now_ns + QP_PASS_BUSY_NS;
		} else if (d < p->next_deadline) {
			p->next_deadline = d;
		}
	}
	pass_rnr_remote(qp, p);
	if (__atomic_load_n(&qp->pace, __ATOMIC_RELAXED) != NULL)
		hw_pace_pass(qp, p);
	if (hw_qp_xm_busy(qp)) { /* answers of another machine to reap: watched as a polled QP */
		uint32_t before = __atomic_load_n(&qp->xm_inflight, __ATOMIC_ACQUIRE);

		p->xm = true;
		hw_qp_drive(qp, p->now_ns);
		if (__atomic_load_n(&qp->xm_inflight, __ATOMIC_ACQUIRE) != before)
			p->activity = true;
	}
	if (p->check_peers)
		pass_peer(qp, p->now_ns);
	if (qp->srq != NULL && qp->srq->published)
		(void)hw_srq_limit_poll(qp->srq);
	if (__builtin_expect(__atomic_load_n(&qp->tm_fins_owed, __ATOMIC_ACQUIRE) != 0, 0))
		pass_tm_fins(qp, p);
}

/*
 * A trap's run of one polled QP; the larger of backlog and its own when its
 * SQ moved since the last trap's look (run here, or by the engine thread's
 * look just before): its send CQ's unconsumed CQEs and the basic blocks
 * rung and not run yet.
 */
static uint32_t qp_trap_run(struct hw_qp *qp, uint32_t backlog)
{
	uint32_t pi, b;

	(void)pass_polled(qp);
	pi = __atomic_load_n(&qp->sq_pi, __ATOMIC_ACQUIRE);
	if (pi == __atomic_exchange_n(&qp->trap_sq_pi, pi, __ATOMIC_RELAXED) || qp->send_cq == NULL)
		return backlog;
	/* With the WQEs not run yet: the engine thread's look may be running them as the trap looks. */
	b = hw_cq_backlog(qp->send_cq) + ((pi - __atomic_load_n(&qp->sq_ci, __ATOMIC_ACQUIRE)) & HW_QP_COUNTER_MASK);
	return b > backlog ? b : backlog;
}

#define QP_RUN_CHUNK 32 /* QPs listed at once by hw_qp_polled_run: its stack may be a small signal stack */

uint32_t hw_qp_polled_run(void)
{
	struct hw_qp *list[QP_RUN_CHUNK];
	uint32_t at = 0, n, backlog = 0;

	/*
	 * As the engine thread's pass, in chunks; a QP moved within the list by
	 * a destroy meanwhile may be missed, and its doorbell is then the
	 * engine thread's polling's to find.
	 */
	hw_epoch_enter();
	do {
		pthread_mutex_lock(&reg.lock);
		n = at < reg.nlive ? reg.nlive - at : 0;
		n = n < QP_RUN_CHUNK ? n : QP_RUN_CHUNK;
		memcpy(list, &reg.live[at], n * sizeof(list[0]));
		pthread_mutex_unlock(&reg.lock);
		for (uint32_t i = 0; i < n; i++)
			if (__atomic_load_n(&list[i]->polled, __ATOMIC_ACQUIRE))
				backlog = qp_trap_run(list[i], backlog);
		at += n;
	} while (n == QP_RUN_CHUNK);
	hw_epoch_leave();
	return backlog;
}

/*
 * The cached views of UD destinations and DCTs of other processes: an owner
 * that died without destroying its QP left its record in place, so only
 * its absence tells; its view is marked gone, and what is sent to it is
 * dropped (UD) or unanswered (DC: retries exceeded).
 */
static void pass_dests(void)
{
	pthread_mutex_lock(&dests.lock);
	for (uint32_t i = 0; i < DEST_CACHE; i++)
		if (dests.v[i] != NULL)
			(void)view_check_owner(dests.v[i]);
	pthread_mutex_unlock(&dests.lock);
}

void hw_qp_engine_pass(struct hw_eng_pass *p)
{
	if (p->check_peers) {
		pass_dests();
		hw_xrc_limits_poll();
	}
	struct hw_qp *list[QP_REG_SLOTS]; /* on the stack: a stopping engine thread and its successor may overlap */
	uint32_t n = 0;

	/*
	 * The QPs are listed under the registry lock and looked at after it:
	 * the epoch keeps each one until the pass leaves it (a destroy waits),
	 * and no lock is held while WQEs run (they may take the key table's,
	 * which a fork takes before this one). Waiting for the lock (a fork
	 * holds it while the child copies registered pages) is no execution.
	 */
	pthread_mutex_lock(&reg.lock);
	hw_epoch_enter();
	n = reg.nlive;
	memcpy(list, reg.live, n * sizeof(list[0]));
	pthread_mutex_unlock(&reg.lock);
	for (uint32_t i = 0; i < n; i++)
		pass_one(list[i], p);
	hw_epoch_leave();
}
