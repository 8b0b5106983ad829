/*
 * hw_mem — protection domains and the memory-key table.
 */
#include "hw_mem.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base_log.h"
#include "base_status.h"
#include "hw_epoch.h"
#include "hw_ids.h"
#include "hw_umr.h"

/* A record's access bit (beyond the rights): its backing describes a UMR pattern (hw_umr_describe), not memory. */
#define HW_MKEY_REC_PATTERN (1u << 31)

/* A slot being deregistered: its index is beyond the table, so no key matches it, and it is not free. */
#define HW_MKEY_DYING 0xffffffffu


struct hw_mkey_page {
	struct hw_mkey slot[HW_MKEY_PAGE_SIZE];
	uint8_t tag[HW_MKEY_PAGE_SIZE]; /* survives frees so reused slots get new keys */
};
_Static_assert(offsetof(struct hw_mkey_page, slot) == 0, "a page is found from its published slots");

static struct {
	pthread_mutex_t lock;
	uint32_t next_free; /* local numbering only: first index to try */
	hw_mkey_attach_fn attach; /* maps another process's memory (the fabric's) */
} tbl = { .lock = PTHREAD_MUTEX_INITIALIZER, .next_free = HW_LOCAL_BASE };

struct hw_mkey *hw_mkey_slots[HW_MKEY_SLOT_PAGES];

/* What the device table says about a key: enough for another process to check an access. */
struct mkey_rec {
	uint32_t key;
	uint32_t pd_id;
	uint32_t access;
	uint32_t backing_len;
	uint64_t addr;
	uint64_t len;
	uint8_t backing[HW_MKEY_BACKING_MAX];
};
_Static_assert(sizeof(struct mkey_rec) <= HW_ID_REC_MAX, "a key's record fits the table's");

static bool device_numbers(void)
{
	return hw_ids_device() != NULL;
}

/* A page of the table (its slots come first, so the published slot pointer is the page), or NULL. */
static struct hw_mkey_page *page_at(uint32_t pg)
{
	return (struct hw_mkey_page *)(void *)hw_mkey_slots[pg];
}

static int page_ensure(uint32_t idx)
{
	uint32_t pg = idx >> HW_MKEY_PAGE_SHIFT;
	struct hw_mkey_page *p;

	if (page_at(pg) != NULL)
		return 0;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -1;
	/* Release: a lookup that finds the page finds it zeroed. */
	__atomic_store_n(&hw_mkey_slots[pg], p->slot, __ATOMIC_RELEASE);
	return 0;
}

/* Local numbering: a free slot at or after next_free in the local range. Lock held. */
static int find_free_slot(uint32_t *out)
{
	for (uint32_t n = 0; n < HW_MKEY_MAX - HW_LOCAL_BASE; n++) {
		uint32_t idx = HW_LOCAL_BASE + (tbl.next_free - HW_LOCAL_BASE + n) % (HW_MKEY_MAX - HW_LOCAL_BASE);

		if (page_ensure(idx) != 0)
			return -1;
		if (page_at(idx >> HW_MKEY_PAGE_SHIFT)->slot[idx & (HW_MKEY_PAGE_SIZE - 1)].key == 0) {
			*out = idx;
			return 0;
		}
	}
	return -1;
}

/*
 * A device-wide index; the tag comes from the index's record sequence, which
 * moves on with every owner, so a key of an earlier holder is never reissued
 * by the next one (within 256 reuses).
 */
static int claim_device_slot(uint32_t *idx, uint8_t *tag)
{
	const _Atomic uint32_t *seq;

	if (hw_id_alloc(HW_ID_MKEY, idx) != HW_OK)
		return -1;
	seq = hw_ids_seq(hw_ids_device(), HW_ID_MKEY, *idx);
	*tag = (uint8_t)(((atomic_load(seq) | 1u) + 1u) >> 1);
	if (*idx >= HW_LOCAL_BASE || page_ensure(*idx) != 0) {
		hw_id_free(HW_ID_MKEY, *idx);
		return -1;
	}
	return 0;
}

/* Publishes the key so other processes of the device can check accesses to it. */
static enum hw_status publish_rec(const struct hw_mkey *mk, uint32_t flags, const void *backing, uint32_t blen)
{
	struct mkey_rec r = { .key = mk->key, .pd_id = mk->pd_id, .access = mk->access | flags, .addr = mk->addr,
			      .len = mk->len, .backing_len = blen };

	if (blen > sizeof(r.backing))
		return HW_ERR_INVAL;
	if (blen != 0)
		memcpy(r.backing, backing, blen);
	return hw_id_publish(HW_ID_MKEY, mk->key >> 8, &r, sizeof(r), NULL);
}

static enum hw_status publish_key(const struct hw_mkey *mk, const void *backing, uint32_t blen)
{
	return publish_rec(mk, 0, backing, blen);
}

/*
 * A view of another process's UMR key owns the pattern rebuilt for it: it
 * goes when the slot is taken again, which is after the key's owner
 * deregistered it (a fence over every process), so nothing walks it.
 */
static void drop_view(struct hw_mkey *mk)
{
	if (mk->seqp != NULL && mk->umr != NULL)
		hw_umr_free(mk->umr);
	mk->umr = NULL;
}

/*
 * fork: the child inherits a copy of this table, but the registrations in it
 * are the parent's, as a card's MR pins the registering process's pages.
 * The child drops them: a key the parent shared then resolves, through its
 * record, to the parent's memory (a view, as in any other process), and one
 * it did not share to nothing. Views of other processes' keys stay valid.
 */
static void fork_prepare(void)
{
	pthread_mutex_lock(&tbl.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&tbl.lock);
}

static void fork_child(void)
{
	for (uint32_t pg = 0; pg < HW_MKEY_PAGES; pg++) {
		struct hw_mkey_page *p = page_at(pg);

		for (uint32_t i = 0; p != NULL && i < HW_MKEY_PAGE_SIZE; i++)
			if (p->slot[i].key != 0 && p->slot[i].seqp == NULL)
				p->slot[i].key = 0; /* the tag stays: a reused local slot gets a new key */
	}
	tbl.next_free = HW_LOCAL_BASE;
	pthread_mutex_unlock(&tbl.lock);
}

static void fork_hooks(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static enum hw_status reg_entry(struct hw_pd *pd, const struct hw_mkey *proto, uint32_t *key);

enum hw_status hw_mkey_reg(struct hw_pd *pd, void *base, uint64_t addr, uint64_t len, uint32_t access,
			   uint32_t *key)
{
	struct hw_mkey mk = { .base = base, .addr = addr, .len = len, .access = access };

	if (base == NULL && len != 0)
		return HW_ERR_INVAL;
	return reg_entry(pd, &mk, key);
}

enum hw_status hw_mkey_reg_remote(struct hw_pd *pd, uint64_t addr, uint64_t len, uint32_t access,
				  const struct hw_remote_ops *rops, void *rctx, uint32_t *key)
{
	struct hw_mkey mk = { .addr = addr, .len = len, .access = access, .rops = rops, .rctx = rctx };

	if (rops == NULL)
		return HW_ERR_INVAL;
	return reg_entry(pd, &mk, key);
}

enum hw_status hw_mkey_reg_implicit(struct hw_pd *pd, uint32_t access, uint32_t *key)
{
	/* No base: not a plain key, so the WQE path's fast check sends every access to hw_mkey_check. */
	struct hw_mkey mk = { .addr = 0, .len = UINT64_MAX, .access = access, .implicit = true };

	return reg_entry(pd, &mk, key);
}

enum hw_status hw_mkey_reg_window(struct hw_pd *pd, uint8_t type, uint32_t *key)
{
	/* Unbound: free until a bind; only a type 2 window may be invalidated. */
	struct hw_mkey mk = { .mw_type = type,
			      .state = HW_MKEY_FREE | (type == 2 ? HW_MKEY_INVALIDATABLE : 0) };

	if (type != 1 && type != 2)
		return HW_ERR_INVAL;
	return reg_entry(pd, &mk, key);
}

/* The entry's word for hw_mkey_plain: only a plain, valid, never-invalidated key has one. */
static void fast_set(struct hw_mkey *mk)
{
	bool plain = mk->rops == NULL && mk->umr == NULL && mk->chunks == NULL && mk->base != NULL &&
		     (mk->state & (HW_MKEY_FREE | HW_MKEY_INVALIDATABLE)) == 0;

	mk->fast = plain ? (uint64_t)mk->pd_id << 32 | (mk->access & ~HW_MKEY_FAST_OK) | HW_MKEY_FAST_OK : 0;
}

static enum hw_status reg_entry(struct hw_pd *pd, const struct hw_mkey *proto, uint32_t *key)
{
	struct hw_mkey_page *pg;
	uint32_t idx, pos;
	uint8_t tag;
	bool wide;

	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (pd == NULL || key == NULL)
		return HW_ERR_INVAL;
	pthread_once(&once, fork_hooks);
	wide = hw_pd_device_wide(pd);
	pthread_mutex_lock(&tbl.lock);
	if (wide) {
		if (claim_device_slot(&idx, &tag) != 0)
			goto err_full;
	} else {
		if (find_free_slot(&idx) != 0)
			goto err_full;
		tbl.next_free = idx + 1;
	}
	pg = page_at(idx >> HW_MKEY_PAGE_SHIFT);
	pos = idx & (HW_MKEY_PAGE_SIZE - 1);
	if (!wide)
		tag = ++pg->tag[pos];
	/* The slot may hold a view of the index's previous holder's key: replaced. */
	drop_view(&pg->slot[pos]);
	pg->slot[pos] = *proto;
	pg->slot[pos].pd_id = hw_pd_id(pd);
	fast_set(&pg->slot[pos]);
	__atomic_store_n(&pg->slot[pos].key, (idx << 8) | tag, __ATOMIC_RELEASE);
	pg->slot[pos].device_wide = wide;
	if (wide && publish_key(&pg->slot[pos], NULL, 0) != HW_OK) {
		pg->slot[pos].key = 0;
		hw_id_free(HW_ID_MKEY, idx);
		goto err_full;
	}
	*key = pg->slot[pos].key;
	pthread_mutex_unlock(&tbl.lock);
	return HW_OK;

err_full:
	pthread_mutex_unlock(&tbl.lock);
	return HW_ERR_NOMEM;
}

/*
 * A binary search without data-dependent branches (the compiler emits conditional
 * moves), since addresses picked at random would mispredict every step.
 */
int64_t hw_chunk_find(const struct hw_mkey_chunk *c, uint32_t n, uint64_t addr, uint64_t len)
{
	const struct hw_mkey_chunk *base = c;

	if (n == 0)
		return -1;
	while (n > 1) { /* keeps base at the last chunk starting at or before addr */
		uint32_t half = n / 2;

		/* both possible next probes: large lists then wait on one miss per step, not two */
		__builtin_prefetch(&base[half / 2]);
		__builtin_prefetch(&base[half + half / 2]);
		base = base[half].addr <= addr ? base + half : base;
		n -= half;
	}
	if (base->addr > addr || len > base->len || addr - base->addr > base->len - len)
		return -1;
	return base - c;
}

/* The span [first chunk, end of last chunk) goes in addr/len; local keys name their own addresses. */
static void span_of(const struct hw_mkey_chunk *c, uint32_t n, struct hw_mkey *mk)
{
	mk->addr = n == 0 ? 0 : c[0].addr;
	mk->len = n == 0 ? 0 : c[n - 1].addr + c[n - 1].len - c[0].addr;
	mk->base = (uint8_t *)(uintptr_t)mk->addr;
	mk->chunks = c;
	mk->nchunks = n;
}

enum hw_status hw_mkey_reg_indirect(struct hw_pd *pd, const struct hw_mkey_chunk *chunks, uint32_t n,
				    uint32_t access, uint32_t *key)
{
	struct hw_mkey mk = { .access = access };

	if (chunks == NULL)
		return HW_ERR_INVAL;
	span_of(chunks, n, &mk);
	return reg_entry(pd, &mk, key);
}

enum hw_status hw_mkey_reg_umr(struct hw_pd *pd, struct hw_umr *u, bool remote_inv, uint32_t *key)
{
	struct hw_mkey mk = { .umr = u, .state = HW_MKEY_FREE | HW_MKEY_INVALIDATABLE |
						  (remote_inv ? HW_MKEY_REMOTE_INV : 0) };

	if (u == NULL)
		return HW_ERR_INVAL;
	return reg_entry(pd, &mk, key);
}

enum hw_status hw_mkey_umr_set(uint32_t key, uint32_t access, uint64_t len)
{
	struct hw_mkey *mk = (struct hw_mkey *)hw_mkey_lookup(key);

	if (mk == NULL || mk->umr == NULL)
		return HW_ERR_KEY;
	mk->access = access;
	mk->len = len;
	/* Release: a reader that sees the key valid sees its pattern, rights and length. */
	__atomic_fetch_and(&mk->state, ~HW_MKEY_FREE, __ATOMIC_ACQ_REL);
	return HW_OK;
}

enum hw_status hw_mkey_umr_rebase(uint32_t key, uint64_t addr)
{
	struct hw_mkey *mk = (struct hw_mkey *)hw_mkey_lookup(key);

	if (mk == NULL || mk->umr == NULL || !(__atomic_load_n(&mk->state, __ATOMIC_ACQUIRE) & HW_MKEY_FREE))
		return HW_ERR_KEY;
	mk->addr = addr;
	return HW_OK;
}

/*
 * The slot keeps its index and contents; only the key's low byte changes,
 * and a device-wide key's record says so (with no memory yet: the caller
 * shares it afterwards).
 */
enum hw_status hw_mkey_retag(uint32_t key, uint8_t tag, uint32_t *out)
{
	uint32_t idx = key >> 8, nk = (key & ~0xffu) | tag;
	struct hw_mkey *mk;
	enum hw_status st = HW_OK;

	if (out == NULL)
		return HW_ERR_INVAL;
	pthread_mutex_lock(&tbl.lock);
	mk = (struct hw_mkey *)hw_mkey_lookup(key);
	if (mk == NULL || mk->seqp != NULL) {
		pthread_mutex_unlock(&tbl.lock);
		return HW_ERR_KEY;
	}
	__atomic_store_n(&mk->key, nk, __ATOMIC_RELEASE);
	if (!mk->device_wide)
		page_at(idx >> HW_MKEY_PAGE_SHIFT)->tag[idx & (HW_MKEY_PAGE_SIZE - 1)] = tag;
	else
		st = publish_key(mk, NULL, 0);
	if (st != HW_OK)
		__atomic_store_n(&mk->key, key, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&tbl.lock);
	*out = st == HW_OK ? nk : key;
	return st;
}

enum hw_status hw_mkey_set_chunks(uint32_t key, const struct hw_mkey_chunk *chunks, uint32_t n)
{
	struct hw_mkey *mk;

	if (chunks == NULL)
		return HW_ERR_INVAL;
	pthread_mutex_lock(&tbl.lock);
	mk = (struct hw_mkey *)hw_mkey_lookup(key);
	if (mk == NULL || mk->chunks == NULL) {
		pthread_mutex_unlock(&tbl.lock);
		return HW_ERR_KEY;
	}
	span_of(chunks, n, mk);
	pthread_mutex_unlock(&tbl.lock);
	return HW_OK;
}

const struct hw_mkey *hw_mkey_lookup(uint32_t key)
{
	return hw_mkey_find(key);
}

/*
 * A fence, as the card's MKey invalidation: the key is refused from here on
 * in every process (its record withdrawn, so other processes' views go
 * stale), then every access already past the check, in any thread or
 * process, ends before this returns; only then may the slot and the number
 * be taken again. The entry is DYING meanwhile: no lookup matches it and no
 * registration takes it.
 */
enum hw_status hw_mkey_dereg(uint32_t key)
{
	struct hw_ids *ids = hw_ids_device();
	struct hw_mkey *mk;
	bool wide;

	pthread_mutex_lock(&tbl.lock);
	mk = (struct hw_mkey *)hw_mkey_lookup(key);
	if (mk == NULL || mk->seqp != NULL) { /* a view of another process's key is not ours to drop */
		pthread_mutex_unlock(&tbl.lock);
		return HW_ERR_KEY;
	}
	__atomic_store_n(&mk->key, HW_MKEY_DYING, __ATOMIC_RELEASE);
	wide = mk->device_wide;
	if (wide && ids != NULL)
		hw_ids_withdraw(ids, HW_ID_MKEY, key >> 8);
	pthread_mutex_unlock(&tbl.lock);
	hw_epoch_sync();
	pthread_mutex_lock(&tbl.lock);
	__atomic_store_n(&mk->key, 0, __ATOMIC_RELEASE);
	if (wide)
		hw_id_free(HW_ID_MKEY, key >> 8);
	else if ((key >> 8) < tbl.next_free)
		tbl.next_free = key >> 8;
	pthread_mutex_unlock(&tbl.lock);
	return HW_OK;
}

/* Under tbl.lock: an own plain key c may change, and whether its domain is of the right kind. */
static enum hw_status rereg_check(const struct hw_mkey *mk, const struct hw_mkey_change *c)
{
	if (mk == NULL || mk->seqp != NULL || mk->rops != NULL || mk->umr != NULL || mk->chunks != NULL ||
	    mk->base == NULL)
		return HW_ERR_KEY;
	if (c->pd != NULL && hw_pd_device_wide(c->pd) != mk->device_wide)
		return HW_ERR_INVAL;
	return HW_OK;
}

static void rereg_apply(struct hw_mkey *mk, const struct hw_mkey_change *c)
{
	if (c->pd != NULL)
		mk->pd_id = hw_pd_id(c->pd);
	if (c->base != NULL) {
		mk->base = c->base;
		mk->addr = c->addr;
		mk->len = c->len;
	}
	if (c->access_set)
		mk->access = c->access;
	fast_set(mk);
}

enum hw_status hw_mkey_rereg(uint32_t key, const struct hw_mkey_change *c)
{
	struct hw_ids *ids = hw_ids_device();
	struct hw_mkey *mk;
	enum hw_status st;

	if (c == NULL || (c->base != NULL && c->len == 0))
		return HW_ERR_INVAL;
	pthread_mutex_lock(&tbl.lock);
	mk = (struct hw_mkey *)hw_mkey_lookup(key);
	st = rereg_check(mk, c);
	if (st != HW_OK) {
		pthread_mutex_unlock(&tbl.lock);
		return st;
	}
	__atomic_store_n(&mk->key, HW_MKEY_DYING, __ATOMIC_RELEASE);
	if (mk->device_wide && ids != NULL)
		hw_ids_withdraw(ids, HW_ID_MKEY, key >> 8);
	pthread_mutex_unlock(&tbl.lock);
	hw_epoch_sync(); /* nobody uses the old values from here on */
	pthread_mutex_lock(&tbl.lock);
	rereg_apply(mk, c);
	__atomic_store_n(&mk->key, key, __ATOMIC_RELEASE);
	if (mk->device_wide && publish_key(mk, NULL, 0) != HW_OK)
		BASE_WARN("key %#x: its record could not be published again; other processes cannot reach it", key);
	pthread_mutex_unlock(&tbl.lock);
	return HW_OK;
}

enum hw_status hw_mkey_set_invalidatable(uint32_t key)
{
	struct hw_mkey *mk = (struct hw_mkey *)hw_mkey_lookup(key);

	if (mk == NULL)
		return HW_ERR_KEY;
	__atomic_store_n(&mk->fast, 0, __ATOMIC_RELAXED); /* invalidation is checked on the general path only */
	__atomic_fetch_or(&mk->state, HW_MKEY_INVALIDATABLE, __ATOMIC_RELEASE);
	return HW_OK;
}

enum hw_status hw_mkey_invalidate(uint32_t key, uint32_t pd_id)
{
	struct hw_mkey *mk = (struct hw_mkey *)hw_mkey_lookup(key);

	if (mk == NULL)
		return HW_ERR_KEY;
	if (pd_id != 0 && mk->pd_id != pd_id)
		return HW_ERR_PD;
	if (!(__atomic_load_n(&mk->state, __ATOMIC_ACQUIRE) & HW_MKEY_INVALIDATABLE))
		return HW_ERR_ACCESS;
	__atomic_fetch_or(&mk->state, HW_MKEY_FREE, __ATOMIC_ACQ_REL);
	return HW_OK;
}

enum hw_status hw_mkey_invalidate_remote(uint32_t key, uint32_t pd_id)
{
	const struct hw_mkey *mk = hw_mkey_lookup(key);

	if (mk != NULL && mk->umr != NULL && !(__atomic_load_n(&mk->state, __ATOMIC_ACQUIRE) & HW_MKEY_REMOTE_INV))
		return HW_ERR_ACCESS;
	return hw_mkey_invalidate(key, pd_id);
}

enum hw_status hw_mkey_revalidate(uint32_t key)
{
	struct hw_mkey *mk = (struct hw_mkey *)hw_mkey_lookup(key);

	if (mk == NULL)
		return HW_ERR_KEY;
	__atomic_fetch_and(&mk->state, ~HW_MKEY_FREE, __ATOMIC_ACQ_REL);
	return HW_OK;
}

enum hw_status hw_mkey_share(uint32_t key, const void *backing, uint32_t len)
{
	const struct hw_mkey *mk;
	enum hw_status st;

	if ((backing == NULL && len != 0) || len > HW_MKEY_BACKING_MAX)
		return HW_ERR_INVAL;
	pthread_mutex_lock(&tbl.lock);
	mk = hw_mkey_lookup(key);
	if (mk == NULL || mk->seqp != NULL)
		st = HW_ERR_KEY;
	else if (!mk->device_wide)
		st = HW_ERR_INVAL; /* numbered in this process only: nobody else could name it */
	else
		st = publish_key(mk, backing, len);
	pthread_mutex_unlock(&tbl.lock);
	return st;
}

enum hw_status hw_mkey_share_umr(uint32_t key)
{
	uint8_t desc[HW_MKEY_BACKING_MAX];
	const struct hw_mkey *mk;
	enum hw_status st = HW_ERR_KEY;
	uint32_t len;

	pthread_mutex_lock(&tbl.lock);
	mk = hw_mkey_lookup(key);
	if (mk != NULL && mk->seqp == NULL && mk->umr != NULL && mk->umr->sig == NULL) {
		len = mk->device_wide ? hw_umr_describe(mk->umr, desc, sizeof(desc)) : 0;
		st = len == 0 ? HW_ERR_NOTSUP : HW_OK;
	}
	if (st == HW_OK) {
		/* Views elsewhere would not see an invalidation or a new pattern: neither may happen now. */
		__atomic_fetch_and((uint32_t *)&mk->state, ~(HW_MKEY_INVALIDATABLE | HW_MKEY_REMOTE_INV), __ATOMIC_RELEASE);
		st = publish_rec(mk, HW_MKEY_REC_PATTERN, desc, len);
	}
	pthread_mutex_unlock(&tbl.lock);
	return st;
}

void hw_mkey_set_attach(hw_mkey_attach_fn fn)
{
	pthread_mutex_lock(&tbl.lock);
	tbl.attach = fn;
	pthread_mutex_unlock(&tbl.lock);
}

static const struct hw_mkey *import_pattern(uint32_t key, const struct mkey_rec *r, uint32_t seq);

/* Installs this process's view of another process's key from its record. Lock held. */
static const struct hw_mkey *import_key(uint32_t key, const struct mkey_rec *r, uint32_t seq)
{
	const _Atomic uint32_t *seqp = hw_ids_seq(hw_ids_device(), HW_ID_MKEY, key >> 8);
	uint32_t idx = key >> 8;
	struct hw_mkey *mk;
	uint8_t *base;

	if (r->access & HW_MKEY_REC_PATTERN)
		return import_pattern(key, r, seq);
	if (tbl.attach == NULL || r->backing_len == 0 || r->backing_len > sizeof(r->backing))
		return NULL; /* memory nobody made reachable from here */
	base = tbl.attach(r->backing, r->backing_len, r->len);
	if (base == NULL || page_ensure(idx) != 0)
		return NULL;
	mk = &page_at(idx >> HW_MKEY_PAGE_SHIFT)->slot[idx & (HW_MKEY_PAGE_SIZE - 1)];
	drop_view(mk);
	*mk = (struct hw_mkey){ .base = base, .addr = r->addr, .len = r->len, .access = r->access,
				.pd_id = r->pd_id, .key = key, .seqp = seqp, .seq = seq, .device_wide = true };
	fast_set(mk);
	return mk;
}

/* The key of this process or a view of another's plain key, imported if need be. Lock held. */
static const struct hw_mkey *resolve_plain_locked(uint32_t key)
{
	const struct hw_mkey *mk = hw_mkey_lookup(key);
	struct mkey_rec r;
	uint32_t len = 0, seq = 0;

	if (mk != NULL || key == 0 || (key >> 8) >= HW_LOCAL_BASE || !device_numbers())
		return mk;
	if (hw_id_read(HW_ID_MKEY, key >> 8, &r, sizeof(r), &len, &seq) != HW_OK || len != sizeof(r) ||
	    r.key != key || (r.access & HW_MKEY_REC_PATTERN))
		return NULL; /* no nesting: an entry names a plain key */
	return import_key(key, &r, seq);
}

/* A view of another process's UMR key: its pattern rebuilt over views of the keys its entries name. Lock held. */
static const struct hw_mkey *import_pattern(uint32_t key, const struct mkey_rec *r, uint32_t seq)
{
	uint32_t idx = key >> 8;
	struct hw_umr *u;
	struct hw_mkey *mk;

	if (r->backing_len > sizeof(r->backing) || page_ensure(idx) != 0)
		return NULL;
	u = hw_umr_from_desc(r->backing, r->backing_len, resolve_plain_locked);
	if (u == NULL || r->len > u->total) {
		hw_umr_free(u);
		return NULL;
	}
	mk = &page_at(idx >> HW_MKEY_PAGE_SHIFT)->slot[idx & (HW_MKEY_PAGE_SIZE - 1)];
	drop_view(mk);
	*mk = (struct hw_mkey){ .umr = u, .addr = r->addr, .len = r->len, .access = r->access & ~HW_MKEY_REC_PATTERN,
				.pd_id = r->pd_id, .key = key, .device_wide = true,
				.seqp = hw_ids_seq(hw_ids_device(), HW_ID_MKEY, idx), .seq = seq };
	fast_set(mk);
	return mk;
}

const struct hw_mkey *hw_mkey_resolve(uint32_t key)
{
	const struct hw_mkey *mk = hw_mkey_lookup(key);
	struct mkey_rec r;
	uint32_t len = 0, seq = 0;

	if (mk != NULL || key == 0 || (key >> 8) >= HW_LOCAL_BASE || !device_numbers())
		return mk;
	if (hw_id_read(HW_ID_MKEY, key >> 8, &r, sizeof(r), &len, &seq) != HW_OK || len != sizeof(r) || r.key != key)
		return NULL;
	pthread_mutex_lock(&tbl.lock);
	mk = hw_mkey_lookup(key);
	if (mk == NULL)
		mk = import_key(key, &r, seq);
	pthread_mutex_unlock(&tbl.lock);
	return mk;
}

bool hw_mkey_views_within(const void *lo, uint64_t len)
{
	const uint8_t *a = lo;

	for (uint32_t pg = 0; pg < HW_MKEY_PAGES; pg++) {
		const struct hw_mkey_page *p = page_at(pg);

		for (uint32_t i = 0; p != NULL && i < HW_MKEY_PAGE_SIZE; i++) {
			const struct hw_mkey *mk = &p->slot[i];

			if (mk->seqp != NULL && mk->key != 0 && mk->base >= a && (uint64_t)(mk->base - a) < len &&
			    atomic_load_explicit(mk->seqp, memory_order_acquire) == mk->seq)
				return true;
		}
	}
	return false;
}

enum hw_status hw_mkey_translate(uint32_t key, uint32_t pd_id, uint64_t addr, uint64_t len, uint32_t access,
				 uint8_t **ptr)
{
	const struct hw_mkey *mk = hw_mkey_lookup(key);

	if (mk == NULL)
		return HW_ERR_KEY;
	return hw_mkey_check(mk, pd_id, addr, len, access, ptr);
}

static const char *const hw_status_names[] = {
	[HW_OK] = "success",
	[HW_ERR_KEY] = "invalid or stale memory key",
	[HW_ERR_PD] = "memory key belongs to another protection domain",
	[HW_ERR_BOUNDS] = "access outside the registered range",
	[HW_ERR_ACCESS] = "registration lacks the requested access right",
	[HW_ERR_NOMEM] = "memory key table exhausted",
	[HW_ERR_INVAL] = "invalid argument",
	[HW_ERR_LENGTH] = "destination too small for the source",
	[HW_ERR_OVERLAP] = "source and destination overlap",
	[HW_ERR_REVOKED] = "remote memory was withdrawn by its owner",
	[HW_ERR_PEER_GONE] = "the process owning the remote memory is gone",
	[HW_ERR_TIMEOUT] = "remote memory did not answer in time",
	[HW_ERR_REMOTE_IO] = "the path to remote memory failed",
	[HW_ERR_FULL] = "queue full: the consumer has not released a slot",
	[HW_ERR_LAYOUT] = "shared table has another layout, version or owner",
	[HW_ERR_NOTSUP] = "memory the device cannot share with other processes",
};
BASE_STATUS_TABLE_COVERS(hw_status_names, HW_ERR_NOTSUP);

const char *hw_status_str(enum hw_status st)
{
	return base_status_str(hw_status_names, st);
}
