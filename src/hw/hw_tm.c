/*
 * hw_tm — the tag matching list of an SRQ (hw_tm.h).
 *
 * The list is an array indexed as the program's mlx5 driver indexes it;
 * each listed entry carries the order it was appended in, so a message
 * takes the oldest match, as the card's ordered list would give it.
 *
 * The list lives in the SRQ's block (hw_srq.c places it after the SRQ's
 * state), so a requester of any process, or a machine's serving process,
 * that delivers to the SRQ matches against the same list: requesters
 * execute their SENDs themselves. Its lock is the SRQ's CQ's producer lock
 * (every list operation and every message writes a CQE there anyway, and
 * that lock is taken over from a holder that died): list operations come
 * from the owner's thread, messages from any process's engine. Everything
 * read from the block is bounded by the view's own count of entries.
 */
#include <endian.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hw_tm.h"

#define TM_MAGIC 0x544d4c53u /* "SLMT" */

/* One entry, in the SRQ's block: memory any process of the user can write (bounds come from the view). */
struct hw_tm_entry {
	uint32_t listed;
	uint32_t len, lkey;
	uint32_t pad;
	uint64_t tag, mask;
	uint64_t addr;
	uint64_t order;
};

/* The list and the phase counts, after the SRQ's state in its block (hw_srq.c). */
struct hw_tm_sh {
	uint32_t magic;
	uint32_t nent;
	uint32_t srqn;
	uint32_t cqn;
	_Atomic uint16_t unexp; /* unexpected messages delivered (the device's phase count) */
	uint16_t sw_cnt;	/* the count the program last reported handled */
	uint32_t pad;
	uint64_t next_order;
	struct hw_tm_entry e[];
} __attribute__((aligned(64)));

struct hw_tm {
	struct hw_cq *cq;  /* its lock is the list's: any process's engine may hold it */
	struct hw_tm_sh *sh;
	uint32_t nent;	   /* ours, not the block's: indices are checked against it */
	uint32_t srqn;
	bool view;	   /* another process's list; cq is then our view of its CQ */
};

size_t hw_tm_sh_bytes(uint32_t nent)
{
	size_t n = sizeof(struct hw_tm_sh) + (size_t)nent * sizeof(struct hw_tm_entry);

	return (n + 63) & ~(size_t)63;
}

uint32_t hw_tm_nent(const struct hw_tm *tm)
{
	return tm->nent;
}

enum hw_status hw_tm_create(uint32_t max_tags, struct hw_cq *cq, struct hw_tm **out)
{
	struct hw_tm *tm;

	*out = NULL;
	if (max_tags == 0 || max_tags > HW_TM_MAX_TAGS || cq == NULL)
		return HW_ERR_INVAL;
	tm = calloc(1, sizeof(*tm));
	if (tm == NULL)
		return HW_ERR_NOMEM;
	tm->cq = cq;
	/* mlx5's driver indexes max_tags + 1 entries: one always stays its free list's tail */
	tm->nent = max_tags + 1;
	*out = tm;
	return HW_OK;
}

void hw_tm_bind(struct hw_tm *tm, uint32_t srqn, void *mem)
{
	tm->srqn = srqn;
	tm->sh = mem;
	memset(tm->sh, 0, hw_tm_sh_bytes(tm->nent));
	tm->sh->nent = tm->nent;
	tm->sh->srqn = srqn;
	tm->sh->cqn = hw_cq_cqn(tm->cq);
	__atomic_store_n(&tm->sh->magic, TM_MAGIC, __ATOMIC_RELEASE);
}

enum hw_status hw_tm_view(void *mem, uint32_t nent, uint32_t srqn, struct hw_tm **out)
{
	struct hw_tm_sh *sh = mem;
	struct hw_tm *tm;
	enum hw_status st = HW_ERR_LAYOUT;

	*out = NULL;
	if (nent < 2 || nent > HW_TM_MAX_TAGS + 1 || __atomic_load_n(&sh->magic, __ATOMIC_ACQUIRE) != TM_MAGIC ||
	    sh->nent != nent || sh->srqn != srqn)
		return HW_ERR_LAYOUT;
	tm = calloc(1, sizeof(*tm));
	if (tm == NULL)
		return HW_ERR_NOMEM;
	*tm = (struct hw_tm){ .sh = sh, .nent = nent, .srqn = srqn, .view = true };
	st = hw_cq_attach_num(__atomic_load_n(&sh->cqn, __ATOMIC_RELAXED), &tm->cq);
	if (st != HW_OK) {
		free(tm);
		return st;
	}
	*out = tm;
	return HW_OK;
}

void hw_tm_destroy(struct hw_tm *tm)
{
	if (tm == NULL)
		return;
	if (tm->view)
		hw_cq_destroy(tm->cq); /* our view of it only */
	free(tm);
}

struct hw_cq *hw_tm_cq(const struct hw_tm *tm)
{
	return tm->cq;
}

/* The list operation's CQE: success and the phase count in its first 16 bytes. Under the CQ's lock. */
static enum hw_status tm_op_cqe(struct hw_tm *tm, uint8_t app_op, uint16_t index, bool ok)
{
	struct hw_cqe_fields f = { .opcode = HW_CQE_NO_PACKET, .srqn = tm->srqn };
	struct hw_cqe_tm t = { .app_op = app_op, .app_info = index };
	uint32_t success = htobe32(ok ? HW_TM_SUCCESS : 0);
	uint16_t phase = htobe16(atomic_load_explicit(&tm->sh->unexp, memory_order_acquire));

	memcpy(t.head, &success, sizeof(success));
	memcpy(t.head + 4, &phase, sizeof(phase));
	return hw_cq_push_tm_locked(tm->cq, &f, &t);
}

enum hw_status hw_tm_post(struct hw_tm *tm, const struct hw_tm_op *op)
{
	struct hw_tm_entry *e = NULL;
	enum hw_status st = HW_OK;
	uint8_t app_op = HW_TM_OP_NOOP;
	bool ok = true;

	if ((op->op != HW_TM_LIST_NOP && op->index >= tm->nent) || tm->sh == NULL)
		return HW_ERR_INVAL;
	hw_cq_lock(tm->cq);
	if (op->sync)
		tm->sh->sw_cnt = op->sw_cnt;
	if (op->op != HW_TM_LIST_NOP)
		e = &tm->sh->e[op->index];
	if (op->op == HW_TM_LIST_APPEND) {
		*e = (struct hw_tm_entry){ .listed = 1, .tag = op->tag, .mask = op->mask, .addr = op->addr,
					   .len = op->len, .lkey = op->lkey, .order = tm->sh->next_order++ };
		app_op = HW_TM_OP_APPEND;
	} else if (op->op == HW_TM_LIST_REMOVE) {
		ok = e->listed != 0; /* a message may have taken it meanwhile: the remove then fails */
		e->listed = 0;
		app_op = HW_TM_OP_REMOVE;
	}
	if (op->signaled)
		st = tm_op_cqe(tm, app_op, op->index, ok);
	hw_cq_unlock(tm->cq);
	return st;
}

/* The oldest listed entry matching tag under its mask, or -1. */
static int tm_find(const struct hw_tm *tm, uint64_t tag)
{
	int best = -1;

	for (uint32_t i = 0; i < tm->nent; i++) {
		const struct hw_tm_entry *e = &tm->sh->e[i];

		if (!e->listed || ((e->tag ^ tag) & e->mask) != 0)
			continue;
		if (best < 0 || e->order < tm->sh->e[best].order)
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
	hw_cq_lock(tm->cq);
	/* out of sync: nothing matches */
	i = atomic_load_explicit(&tm->sh->unexp, memory_order_acquire) == tm->sh->sw_cnt ? tm_find(tm, tag) : -1;
	if (i >= 0) {
		struct hw_tm_entry *e = &tm->sh->e[i];

		e->listed = 0;
		hit->kind = HW_TM_MATCHED;
		hit->index = (uint16_t)i;
		hit->addr = e->addr;
		hit->len = e->len;
		hit->lkey = e->lkey;
	} else {
		hit->kind = HW_TM_UNEXPECTED;
	}
	hw_cq_unlock(tm->cq);
}

void hw_tm_unexpected(struct hw_tm *tm)
{
	atomic_fetch_add_explicit(&tm->sh->unexp, 1, memory_order_acq_rel);
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
