/*
 * hw_mw — memory windows (hw_mem.h): binding one to a range of an MR, and
 * every access through it.
 *
 * A window's slot holds what its last bind said: the range users name
 * (addr, len), the rights it grants, its MR (mw_parent) and where in the MR
 * it starts (mw_paddr). An access is checked against the window and then
 * translated through the MR as it is at that moment, so a window never
 * outlives its MR's memory: a deregistered or re-registered MR fails the
 * lookup or the bounds (and its fence waits for accesses already past
 * them). A bind runs on the engine while other threads may be reading the
 * window, so it writes under a sequence word instead of a lock; a reader
 * that overlaps a bind fails the access, as an access racing a bind may.
 */
#include "hw_mem.h"

#include "hw_prm.h"

#define MW_ACCESS_REMOTE (HW_ACCESS_REMOTE_READ | HW_ACCESS_REMOTE_WRITE | HW_ACCESS_REMOTE_ATOMIC)

/* The slot of key's index, whatever its tag (NULL beyond the table). */
static struct hw_mkey *mw_slot(uint32_t key)
{
	uint32_t idx = key >> 8;
	struct hw_mkey *pg = __atomic_load_n(&hw_mkey_slots[idx >> HW_MKEY_PAGE_SHIFT], __ATOMIC_ACQUIRE);

	return pg != NULL ? &pg[idx & (HW_MKEY_PAGE_SIZE - 1)] : NULL;
}

/* What one bind said, read whole or not at all. */
struct mw_view {
	uint64_t addr, len, paddr;
	uint32_t access, parent, state;
};

static bool mw_read(const struct hw_mkey *mk, struct mw_view *v)
{
	uint32_t g = __atomic_load_n(&mk->mw_gen, __ATOMIC_ACQUIRE);

	if (g & 1u)
		return false;
	v->addr = __atomic_load_n(&mk->addr, __ATOMIC_ACQUIRE);
	v->len = __atomic_load_n(&mk->len, __ATOMIC_ACQUIRE);
	v->paddr = __atomic_load_n(&mk->mw_paddr, __ATOMIC_ACQUIRE);
	v->access = __atomic_load_n(&mk->access, __ATOMIC_ACQUIRE);
	v->parent = __atomic_load_n(&mk->mw_parent, __ATOMIC_ACQUIRE);
	v->state = __atomic_load_n(&mk->state, __ATOMIC_ACQUIRE);
	return __atomic_load_n(&mk->mw_gen, __ATOMIC_ACQUIRE) == g;
}

enum hw_status hw_mkey_check_window(const struct hw_mkey *mk, uint32_t pd_id, uint64_t addr, uint64_t len,
				    uint32_t access, uint8_t **ptr)
{
	const struct hw_mkey *mr;
	struct mw_view v;
	uint32_t need = (access & (HW_ACCESS_REMOTE_WRITE | HW_ACCESS_REMOTE_ATOMIC)) ? HW_ACCESS_LOCAL_WRITE : 0;

	if (!mw_read(mk, &v) || (v.state & HW_MKEY_FREE))
		return HW_ERR_KEY;
	if (pd_id != 0 && mk->pd_id != pd_id)
		return HW_ERR_PD;
	if (addr < v.addr || len > v.len || addr - v.addr > v.len - len)
		return HW_ERR_BOUNDS;
	/* A window is for remote access only: a local access through its key is refused. */
	if ((access & MW_ACCESS_REMOTE) == 0 || (v.access & access) != access)
		return HW_ERR_ACCESS;
	mr = hw_mkey_find(v.parent);
	if (mr == NULL || mr->mw_type != 0)
		return HW_ERR_KEY;
	return hw_mkey_check(mr, mk->pd_id, v.paddr + (addr - v.addr), len, need, ptr) == HW_OK ? HW_OK : HW_ERR_KEY;
}

/* The MR a bind names: a plain key of this process in the window's domain, allowing binds, holding the range. */
static bool mw_mr_ok(const struct hw_mw_bind *b, uint32_t pd_id)
{
	const struct hw_mkey *mr = hw_mkey_find(b->mr_key);
	uint8_t *p = NULL;

	if (mr == NULL || mr->mw_type != 0 || mr->seqp != NULL || mr->umr != NULL || mr->chunks != NULL ||
	    mr->rops != NULL || !(mr->access & HW_ACCESS_MW_BIND))
		return false;
	if ((b->access & (HW_ACCESS_REMOTE_WRITE | HW_ACCESS_REMOTE_ATOMIC)) && !(mr->access & HW_ACCESS_LOCAL_WRITE))
		return false;
	return hw_mkey_check(mr, pd_id, b->mr_addr, b->len, HW_ACCESS_LOCAL_READ, &p) == HW_OK;
}

/* Takes the window's sequence word for a bind (odd); false when another bind holds it. */
static bool mw_begin(struct hw_mkey *mk, uint32_t *g)
{
	*g = __atomic_load_n(&mk->mw_gen, __ATOMIC_ACQUIRE);
	return !(*g & 1u) && __atomic_compare_exchange_n(&mk->mw_gen, g, *g + 1, false, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE);
}

static uint8_t mw_bind_checked(struct hw_mkey *mk, const struct hw_mw_bind *b)
{
	uint32_t state = __atomic_load_n(&mk->state, __ATOMIC_ACQUIRE);

	if (mk->pd_id != b->pd_id || (b->access & ~MW_ACCESS_REMOTE) != 0)
		return HW_CQE_SYNDROME_MW_BIND_ERR;
	if (mk->mw_type == 2 && b->check_free && !(state & HW_MKEY_FREE))
		return HW_CQE_SYNDROME_MW_BIND_ERR; /* a type 2 window is invalidated before it is bound again */
	if (b->len != 0 && !mw_mr_ok(b, mk->pd_id))
		return HW_CQE_SYNDROME_MW_BIND_ERR;
	return 0;
}

uint8_t hw_mkey_bind_window(const struct hw_mw_bind *b)
{
	struct hw_mkey *mk = (struct hw_mkey *)hw_mkey_find(b->key);
	uint32_t g;
	uint8_t synd;

	if (mk == NULL || mk->mw_type == 0 || mk->seqp != NULL || !mw_begin(mk, &g))
		return HW_CQE_SYNDROME_MW_BIND_ERR;
	synd = mw_bind_checked(mk, b);
	if (synd == 0) {
		__atomic_store_n(&mk->addr, b->addr, __ATOMIC_RELEASE);
		__atomic_store_n(&mk->len, b->len, __ATOMIC_RELEASE);
		__atomic_store_n(&mk->mw_paddr, b->mr_addr, __ATOMIC_RELEASE);
		__atomic_store_n(&mk->access, b->access, __ATOMIC_RELEASE);
		__atomic_store_n(&mk->mw_parent, b->len != 0 ? b->mr_key : 0, __ATOMIC_RELEASE);
		if (b->len != 0)
			__atomic_fetch_and(&mk->state, ~HW_MKEY_FREE, __ATOMIC_ACQ_REL);
		else
			__atomic_fetch_or(&mk->state, HW_MKEY_FREE, __ATOMIC_ACQ_REL);
		/* The new tag: the key the bind's owner names the window by from here on. */
		__atomic_store_n(&mk->key, (b->key & ~0xffu) | b->tag, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&mk->mw_gen, g + 2, __ATOMIC_RELEASE);
	return synd;
}

uint32_t hw_mkey_window_key(uint32_t key, uint8_t *type)
{
	struct hw_mkey *mk = mw_slot(key);
	uint32_t now = mk != NULL ? __atomic_load_n(&mk->key, __ATOMIC_ACQUIRE) : 0;

	if (now == 0 || (now >> 8) != (key >> 8) || mk->seqp != NULL || mk->mw_type == 0)
		return 0;
	*type = mk->mw_type;
	return now;
}

enum hw_status hw_mkey_dereg_window(uint32_t key)
{
	for (int tries = 0; tries < 64; tries++) {
		struct hw_mkey *mk = mw_slot(key);
		uint32_t now = mk != NULL ? __atomic_load_n(&mk->key, __ATOMIC_ACQUIRE) : 0;

		if (mk == NULL || now == 0 || (now >> 8) != (key >> 8) || mk->mw_type == 0)
			return HW_ERR_KEY;
		/* A bind may move the tag meanwhile: then the deregistration misses and looks again. */
		if (hw_mkey_dereg(now) == HW_OK)
			return HW_OK;
	}
	return HW_ERR_KEY;
}
