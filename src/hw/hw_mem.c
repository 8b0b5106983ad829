/*
 * hw_mem — protection domains and the memory-key table.
 */
#include "hw_mem.h"

#include <pthread.h>
#include <stdlib.h>

#include "base_status.h"

#define HW_MKEY_PAGE_SHIFT 12
#define HW_MKEY_PAGE_SIZE (1u << HW_MKEY_PAGE_SHIFT)
#define HW_MKEY_PAGES 256 /* 1 Mi keys */
#define HW_MKEY_MAX (HW_MKEY_PAGE_SIZE * HW_MKEY_PAGES)

struct hw_pd {
	uint32_t id;
	uint32_t function_id;
};

struct hw_mkey_page {
	struct hw_mkey slot[HW_MKEY_PAGE_SIZE];
	uint8_t tag[HW_MKEY_PAGE_SIZE]; /* survives frees so reused slots get new keys */
};

static struct {
	pthread_mutex_t lock;
	struct hw_mkey_page *page[HW_MKEY_PAGES];
	uint32_t next_free; /* first index to try; index 0 is never handed out */
	uint32_t next_pd;
} tbl = { .lock = PTHREAD_MUTEX_INITIALIZER, .next_free = 1, .next_pd = 1 };

struct hw_pd *hw_pd_alloc(uint32_t function_id)
{
	struct hw_pd *pd = calloc(1, sizeof(*pd));

	if (pd == NULL)
		return NULL;
	pthread_mutex_lock(&tbl.lock);
	pd->id = tbl.next_pd++;
	pthread_mutex_unlock(&tbl.lock);
	pd->function_id = function_id;
	return pd;
}

void hw_pd_free(struct hw_pd *pd)
{
	free(pd);
}

uint32_t hw_pd_id(const struct hw_pd *pd)
{
	return pd->id;
}

static struct hw_mkey *slot_at(uint32_t idx)
{
	struct hw_mkey_page *pg = tbl.page[idx >> HW_MKEY_PAGE_SHIFT];

	return pg == NULL ? NULL : &pg->slot[idx & (HW_MKEY_PAGE_SIZE - 1)];
}

/* Finds a free slot at or after next_free, allocating pages on demand. Lock held. */
static int find_free_slot(uint32_t *out)
{
	for (uint32_t n = 0; n < HW_MKEY_MAX; n++) {
		uint32_t idx = (tbl.next_free + n) % HW_MKEY_MAX;
		uint32_t pg = idx >> HW_MKEY_PAGE_SHIFT;

		if (idx == 0)
			continue;
		if (tbl.page[pg] == NULL) {
			tbl.page[pg] = calloc(1, sizeof(struct hw_mkey_page));
			if (tbl.page[pg] == NULL)
				return -1;
		}
		if (tbl.page[pg]->slot[idx & (HW_MKEY_PAGE_SIZE - 1)].key == 0) {
			*out = idx;
			return 0;
		}
	}
	return -1;
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

static enum hw_status reg_entry(struct hw_pd *pd, const struct hw_mkey *proto, uint32_t *key)
{
	struct hw_mkey_page *pg;
	uint32_t idx, pos;
	uint8_t tag;

	if (pd == NULL || key == NULL)
		return HW_ERR_INVAL;
	pthread_mutex_lock(&tbl.lock);
	if (find_free_slot(&idx) != 0) {
		pthread_mutex_unlock(&tbl.lock);
		return HW_ERR_NOMEM;
	}
	pg = tbl.page[idx >> HW_MKEY_PAGE_SHIFT];
	pos = idx & (HW_MKEY_PAGE_SIZE - 1);
	tag = (uint8_t)(pg->tag[pos] + 1);
	pg->tag[pos] = tag;
	pg->slot[pos] = *proto;
	pg->slot[pos].pd_id = pd->id;
	pg->slot[pos].key = (idx << 8) | tag;
	*key = pg->slot[pos].key;
	tbl.next_free = idx + 1;
	pthread_mutex_unlock(&tbl.lock);
	return HW_OK;
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
	uint32_t idx = key >> 8;
	struct hw_mkey *mk;

	if (key == 0 || idx >= HW_MKEY_MAX)
		return NULL;
	mk = slot_at(idx);
	if (mk == NULL || mk->key != key)
		return NULL;
	return mk;
}

enum hw_status hw_mkey_dereg(uint32_t key)
{
	struct hw_mkey *mk;

	pthread_mutex_lock(&tbl.lock);
	mk = (struct hw_mkey *)hw_mkey_lookup(key);
	if (mk == NULL) {
		pthread_mutex_unlock(&tbl.lock);
		return HW_ERR_KEY;
	}
	mk->key = 0;
	if ((key >> 8) < tbl.next_free)
		tbl.next_free = key >> 8;
	pthread_mutex_unlock(&tbl.lock);
	return HW_OK;
}

enum hw_status hw_mkey_set_invalidatable(uint32_t key)
{
	struct hw_mkey *mk = (struct hw_mkey *)hw_mkey_lookup(key);

	if (mk == NULL)
		return HW_ERR_KEY;
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

enum hw_status hw_mkey_revalidate(uint32_t key)
{
	struct hw_mkey *mk = (struct hw_mkey *)hw_mkey_lookup(key);

	if (mk == NULL)
		return HW_ERR_KEY;
	__atomic_fetch_and(&mk->state, ~HW_MKEY_FREE, __ATOMIC_ACQ_REL);
	return HW_OK;
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
};
BASE_STATUS_TABLE_COVERS(hw_status_names, HW_ERR_LAYOUT);

const char *hw_status_str(enum hw_status st)
{
	return base_status_str(hw_status_names, st);
}
