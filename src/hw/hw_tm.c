/*
 * hw_tm — the tag matching list of an SRQ (hw_tm.h).
 *
 * The list is an array indexed as the program's mlx5 driver indexes it;
 * each listed entry carries the order it was appended in, so a message
 * takes the oldest match, as the card's ordered list would give it. One
 * mutex covers the list and the program's count: list operations come from
 * the program's thread, messages from the engine's. A list operation writes
 * its CQE under it (the CQ's producer lock inside), so the device's count
 * of unexpected messages, which the engine moves with the CQ's lock held,
 * is an atomic outside it: the locks are only ever taken in that order.
 */
#include <endian.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hw_tm.h"

struct hw_tm_entry {
	bool listed;
	uint64_t tag, mask;
	uint64_t addr;
	uint32_t len, lkey;
	uint64_t order;
};

struct hw_tm {
	pthread_mutex_t lock;
	struct hw_cq *cq;
	uint32_t srqn;
	uint32_t nent;
	uint64_t next_order;
	_Atomic uint16_t unexp; /* unexpected messages delivered (the device's phase count) */
	uint16_t sw_cnt; /* the count the program last reported handled */
	struct hw_tm_entry e[];
};

enum hw_status hw_tm_create(uint32_t max_tags, struct hw_cq *cq, struct hw_tm **out)
{
	struct hw_tm *tm;

	*out = NULL;
	if (max_tags == 0 || max_tags > HW_TM_MAX_TAGS || cq == NULL)
		return HW_ERR_INVAL;
	/* mlx5's driver indexes max_tags + 1 entries: one always stays its free list's tail */
	tm = calloc(1, sizeof(*tm) + (max_tags + 1) * sizeof(tm->e[0]));
	if (tm == NULL)
		return HW_ERR_NOMEM;
	pthread_mutex_init(&tm->lock, NULL);
	tm->cq = cq;
	tm->nent = max_tags + 1;
	*out = tm;
	return HW_OK;
}

void hw_tm_bind(struct hw_tm *tm, uint32_t srqn)
{
	tm->srqn = srqn;
}

void hw_tm_destroy(struct hw_tm *tm)
{
	if (tm == NULL)
		return;
	pthread_mutex_destroy(&tm->lock);
	free(tm);
}

struct hw_cq *hw_tm_cq(const struct hw_tm *tm)
{
	return tm->cq;
}

/* The list operation's CQE: success and the phase count in its first 16 bytes. */
static enum hw_status tm_op_cqe(struct hw_tm *tm, uint8_t app_op, uint16_t index, bool ok)
{
	struct hw_cqe_fields f = { .opcode = HW_CQE_NO_PACKET, .srqn = tm->srqn };
	struct hw_cqe_tm t = { .app_op = app_op, .app_info = index };
	uint32_t success = htobe32(ok ? HW_TM_SUCCESS : 0);
	uint16_t phase = htobe16(atomic_load_explicit(&tm->unexp, memory_order_acquire));
	enum hw_status st;

	memcpy(t.head, &success, sizeof(success));
	memcpy(t.head + 4, &phase, sizeof(phase));
	hw_cq_lock(tm->cq);
	st = hw_cq_push_tm_locked(tm->cq, &f, &t);
	hw_cq_unlock(tm->cq);
	return st;
}

enum hw_status hw_tm_post(struct hw_tm *tm, const struct hw_tm_op *op)
{
	struct hw_tm_entry *e = NULL;
	enum hw_status st = HW_OK;
	uint8_t app_op = HW_TM_OP_NOOP;
	bool ok = true;

	if (op->op != HW_TM_LIST_NOP && op->index >= tm->nent)
		return HW_ERR_INVAL;
	pthread_mutex_lock(&tm->lock);
	if (op->sync)
		tm->sw_cnt = op->sw_cnt;
	if (op->op != HW_TM_LIST_NOP)
		e = &tm->e[op->index];
	if (op->op == HW_TM_LIST_APPEND) {
		*e = (struct hw_tm_entry){ .listed = true, .tag = op->tag, .mask = op->mask, .addr = op->addr,
					   .len = op->len, .lkey = op->lkey, .order = tm->next_order++ };
		app_op = HW_TM_OP_APPEND;
	} else if (op->op == HW_TM_LIST_REMOVE) {
		ok = e->listed; /* a message may have taken it meanwhile: the remove then fails */
		e->listed = false;
		app_op = HW_TM_OP_REMOVE;
	}
	if (op->signaled)
		st = tm_op_cqe(tm, app_op, op->index, ok);
	pthread_mutex_unlock(&tm->lock);
	return st;
}

/* The oldest listed entry matching tag under its mask, or -1. */
static int tm_find(const struct hw_tm *tm, uint64_t tag)
{
	int best = -1;

	for (uint32_t i = 0; i < tm->nent; i++) {
		const struct hw_tm_entry *e = &tm->e[i];

		if (!e->listed || ((e->tag ^ tag) & e->mask) != 0)
			continue;
		if (best < 0 || e->order < tm->e[best].order)
			best = (int)i;
	}
	return best;
}

void hw_tm_classify(struct hw_tm *tm, const uint8_t *hdr, uint32_t hdr_len, struct hw_tm_hit *hit)
{
	uint64_t tag;
	int i;

	memset(hit, 0, sizeof(*hit));
	if (hdr_len < HW_TMH_BYTES) {
		hit->kind = HW_TM_PLAIN;
		return;
	}
	memcpy(hit->tmh, hdr, HW_TMH_BYTES);
	hit->op = hdr[0];
	if (hit->op != HW_TMH_EAGER && hit->op != HW_TMH_RNDV) {
		hit->kind = hit->op == HW_TMH_NO_TAG ? HW_TM_NO_TAG : HW_TM_PLAIN;
		return;
	}
	if (hit->op == HW_TMH_RNDV && hdr_len < HW_TMH_BYTES + HW_RVH_BYTES) {
		hit->kind = HW_TM_UNEXPECTED; /* no RVH to read from: the program's to handle */
		return;
	}
	if (hit->op == HW_TMH_RNDV)
		memcpy(hit->rvh, hdr + HW_TMH_BYTES, HW_RVH_BYTES);
	memcpy(&tag, hdr + 8, sizeof(tag));
	tag = be64toh(tag);
	pthread_mutex_lock(&tm->lock);
	/* out of sync: nothing matches */
	i = atomic_load_explicit(&tm->unexp, memory_order_acquire) == tm->sw_cnt ? tm_find(tm, tag) : -1;
	if (i >= 0) {
		struct hw_tm_entry *e = &tm->e[i];

		e->listed = false;
		hit->kind = HW_TM_MATCHED;
		hit->index = (uint16_t)i;
		hit->addr = e->addr;
		hit->len = e->len;
		hit->lkey = e->lkey;
	} else {
		hit->kind = HW_TM_UNEXPECTED;
	}
	pthread_mutex_unlock(&tm->lock);
}

void hw_tm_unexpected(struct hw_tm *tm)
{
	atomic_fetch_add_explicit(&tm->unexp, 1, memory_order_acq_rel);
}

void hw_tm_cqe(const struct hw_tm_hit *hit, uint8_t app_op, bool with_tmh, struct hw_cqe_tm *out)
{
	memset(out, 0, sizeof(*out));
	out->app_op = app_op;
	out->app_info = hit->index;
	if (with_tmh) {
		memcpy(out->head, hit->tmh, HW_TMH_BYTES);
		out->head[0] = 0; /* the CQE's flow-tag flag byte (hw_prm.h); the program reads tag and context only */
	}
}
