/*
 * hw_mem — protection domains and the memory-key table of the emulated device.
 *
 * Every registration (DOCA mmap per device, later verbs MRs and FlexIO mkeys)
 * is one entry of a single device-wide table. A key is (index << 8 | tag), as
 * on mlx5: the tag changes on every reuse so stale keys are refused.
 * Keys and domains are numbered device-wide (hw_ids), so a key handed to
 * another process names the same registration there: hw_mkey_share publishes
 * how to reach its memory and hw_mkey_resolve, in the other process, builds a
 * view of it that lives only as long as the registration. A forked child is
 * another process: it drops the registrations it inherited, so the parent's
 * keys reach the parent's memory there too.
 * hw_mkey_translate() is the one routine that turns (key, address, length,
 * access) into local memory, with bounds, domain and permission checks.
 */
#ifndef HW_MEM_H_
#define HW_MEM_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Access rights of a key, and the right an access asks for. */
enum hw_access {
	HW_ACCESS_LOCAL_READ = 0,	   /* always granted to the owning domain */
	HW_ACCESS_LOCAL_WRITE = 1u << 0,
	HW_ACCESS_REMOTE_READ = 1u << 1,
	HW_ACCESS_REMOTE_WRITE = 1u << 2,
	HW_ACCESS_REMOTE_ATOMIC = 1u << 3,
	HW_ACCESS_PEER_READ = 1u << 4,	   /* cross-side (host <-> DPU) read */
	HW_ACCESS_PEER_WRITE = 1u << 5,	   /* cross-side (host <-> DPU) write */
	HW_ACCESS_MW_BIND = 1u << 6,	   /* memory windows may be bound to it (verbs MRs only) */
};
#define HW_ACCESS_ALL_MASK ((1u << 6) - 1) /* the rights of accesses and of DOCA keys */

/* Outcome of a translation; mapped to job errors by the API layers. */
enum hw_status {
	HW_OK = 0,
	HW_ERR_KEY,    /* no such key, or a stale tag */
	HW_ERR_PD,     /* key belongs to another protection domain */
	HW_ERR_BOUNDS, /* range outside the registration */
	HW_ERR_ACCESS, /* registration lacks the asked right */
	HW_ERR_NOMEM,  /* table or allocation exhausted */
	HW_ERR_INVAL,  /* bad argument */
	HW_ERR_LENGTH, /* destination smaller than the source */
	HW_ERR_OVERLAP, /* source and destination share bytes */
	HW_ERR_REVOKED, /* remote memory withdrawn by its owner */
	HW_ERR_PEER_GONE, /* the process owning remote memory is gone */
	HW_ERR_TIMEOUT, /* remote memory did not answer in time */
	HW_ERR_REMOTE_IO, /* the path to remote memory failed */
	HW_ERR_FULL,	  /* a queue has no free slot (the consumer is behind) */
	HW_ERR_LAYOUT,	  /* a shared table of another layout, version or owner */
	HW_ERR_NOTSUP,	  /* memory of a kind the device cannot share with other processes */
};

/*
 * Memory of another process or machine: the device reaches it through these
 * operations (the fabric layer provides them) instead of a local pointer.
 */
struct hw_remote_ops {
	enum hw_status (*read)(void *ctx, uint64_t addr, void *dst, uint64_t len);
	enum hw_status (*write)(void *ctx, uint64_t addr, const void *src, uint64_t len);
};

struct hw_pd;
struct hw_umr;

/*
 * Without the device's number table (no /dev/shm) keys and domains are
 * numbered in this process only, from ranges the table never hands out.
 */
#define HW_LOCAL_BASE 0x80000u

/*
 * Protection domains (hw_pd.c). A domain is counted: hw_pd_alloc returns it
 * with one reference, hw_pd_get takes another by number, hw_pd_free drops
 * one; the number is released with the last. Both API families name the same
 * domain this way (an ibv_pd carries the number as its handle, a DOCA device
 * opened from it holds a reference).
 */
struct hw_pd *hw_pd_alloc(uint32_t function_id);
void hw_pd_free(struct hw_pd *pd);
/*
 * A domain numbered in this process only: its keys are registered without
 * the device's shared table (cheap), and no other process can name them.
 */
struct hw_pd *hw_pd_alloc_private(uint32_t function_id);
uint32_t hw_pd_id(const struct hw_pd *pd);
uint32_t hw_pd_function(const struct hw_pd *pd);
bool hw_pd_device_wide(const struct hw_pd *pd);

/* True while another holder than its allocator references the domain (a DOCA device opened from it). */
bool hw_pd_shared(const struct hw_pd *pd);

/* A live domain of this process by number, with a reference taken; NULL when there is none. */
struct hw_pd *hw_pd_get(uint32_t pd_id);
/*
 * Who made the domain (the verbs library: its context), so commands that
 * name a domain by number can refuse one of another context, as the card
 * refuses an object of another user id. NULL: not said.
 */
void hw_pd_set_owner(struct hw_pd *pd, const void *owner);
const void *hw_pd_owner(const struct hw_pd *pd);

/*
 * Handing a domain to the other API family: the verbs library plugs in how
 * an ibv_pd is made over a domain (wrap; the result holds its own reference)
 * and unmade (unwrap: 0, or an errno value such as EBUSY while registrations
 * or queues still use it). Without it (libibverbs not loaded) hw_pd_wrap
 * returns NULL with errno ENOSYS.
 */
struct hw_pd_wrap_ops {
	void *(*wrap)(struct hw_pd *pd);
	int (*unwrap)(void *wrapper);
};
void hw_pd_set_wrap_ops(const struct hw_pd_wrap_ops *ops);
void *hw_pd_wrap(struct hw_pd *pd);
int hw_pd_unwrap(void *wrapper);

/* One local range an indirect key covers. */
struct hw_mkey_chunk {
	uint64_t addr;
	uint64_t len;
};

/*
 * One registered range. Readers use it without locks; writers hold the table lock.
 * An indirect key (chunks != NULL) covers several local ranges sorted by address
 * and not overlapping; addr/len then span them all, so the plain bounds check
 * stays a cheap first filter and only accesses inside the span search the list.
 */
struct hw_mkey {
	uint8_t *base;	   /* local address of the first byte */
	uint64_t addr;	   /* address the key's users name (== base for local keys) */
	uint64_t len;
	uint32_t access;   /* enum hw_access bits */
	uint32_t pd_id;
	uint32_t key;	   /* 0 when the slot is free */
	uint32_t nchunks;  /* indirect keys: entries of chunks */
	const struct hw_remote_ops *rops; /* non-NULL: remote memory, base is unused */
	void *rctx;
	const struct hw_mkey_chunk *chunks; /* non-NULL: indirect key; owned by the registrant */
	uint32_t state;	   /* HW_MKEY_* bits; changed atomically by invalidation */
	/* A view of another process's key: valid while *seqp == seq (its record unchanged). */
	const _Atomic uint32_t *seqp;
	uint32_t seq;
	bool device_wide; /* numbered in the device's table (other processes can name it) */
	struct hw_umr *umr; /* non-NULL: a UMR-registered indirect key (hw_umr.h), zero-based */
	/*
	 * A plain key (one local range, never invalidated) in one word for the
	 * WQE path: pd_id << 32 | access | HW_MKEY_FAST_OK; 0 for any other key.
	 */
	uint64_t fast;
	/*
	 * A memory window (hw_mkey_reg_window): type 1 or 2, 0 for any other
	 * key. Bound, it names [addr, addr + len) of the MR mw_parent at that
	 * MR's address mw_paddr; a bind rewrites these under mw_gen (odd while
	 * it writes), so an access reads one bind's values or fails.
	 */
	uint8_t mw_type;
	/* Implicit on-demand paging (hw_mkey_reg_implicit): the whole address space, checked page by page. */
	bool implicit;
	uint32_t mw_gen;
	uint32_t mw_parent;
	uint64_t mw_paddr;
};

#define HW_MKEY_FAST_OK (1u << 31)

/*
 * Invalidation (LOCAL_INV, SEND with invalidate). As on mlx5 and in IB, only
 * keys created to be invalidated may be: memory windows and the keys UMR and
 * fast registration manage, which their creator marks INVALIDATABLE. A key
 * from a plain registration (a DOCA mmap, ibv_reg_mr) never is. A FREE key
 * stays in the table (its owner still holds it) but every access through it
 * fails with HW_ERR_KEY until it is made valid again.
 */
#define HW_MKEY_INVALIDATABLE (1u << 0)
#define HW_MKEY_FREE (1u << 1)
/* A UMR key SEND with invalidate may free (created with remote invalidation); LOCAL_INV always may. */
#define HW_MKEY_REMOTE_INV (1u << 2)

/*
 * Registers an indirect key whose pattern is u (the caller keeps it while
 * the key lives): created free, usable once a UMR sets it (hw_mkey_umr_set).
 */
enum hw_status hw_mkey_reg_umr(struct hw_pd *pd, struct hw_umr *u, bool remote_inv, uint32_t *key);

/*
 * Lets other processes of the device reach a registered UMR key of this
 * process: its record describes the pattern (hw_umr_describe) and another
 * process rebuilds it over its views of the entries' keys, each checked
 * alive at every access as here. HW_ERR_NOTSUP when the pattern cannot be
 * described (too many entries, a key numbered in this process only, a
 * signature key): the key then stays this process's; HW_ERR_KEY for no
 * such key. A shared key can no longer be invalidated (its views would not
 * see it), so its pattern stays as registered until it is deregistered.
 */
enum hw_status hw_mkey_share_umr(uint32_t key);

/* A UMR wrote the key's pattern: its rights and length set, the key made valid. */
enum hw_status hw_mkey_umr_set(uint32_t key, uint32_t access, uint64_t len);

/*
 * A free UMR key is used at addresses from addr on (0 for the zero-based
 * keys mlx5dv_create_mkey makes; a DevX indirect mkey's start_addr):
 * offset into its pattern = address - addr. HW_ERR_KEY when not a free UMR key.
 */
enum hw_status hw_mkey_umr_rebase(uint32_t key, uint64_t addr);

/*
 * A key just registered by this process, before anyone was given it, takes
 * the low byte tag (the mkey_7_0 a DevX CREATE_MKEY names): the new key in
 * *out. HW_ERR_KEY for no such key or a view of another process's key.
 */
enum hw_status hw_mkey_retag(uint32_t key, uint8_t tag, uint32_t *out);

/* SEND with invalidate: hw_mkey_invalidate, and a UMR key must allow remote invalidation (HW_ERR_ACCESS). */
enum hw_status hw_mkey_invalidate_remote(uint32_t key, uint32_t pd_id);

enum hw_status hw_mkey_reg(struct hw_pd *pd, void *base, uint64_t addr, uint64_t len, uint32_t access,
			   uint32_t *key);
enum hw_status hw_mkey_dereg(uint32_t key);

/* What hw_mkey_rereg changes of a key (ibv_rereg_mr's flags). */
struct hw_mkey_change {
	struct hw_pd *pd;	/* NULL: the same domain */
	void *base;		/* NULL: the same memory (base, addr, len) */
	uint64_t addr, len;
	bool access_set;	/* false: the same rights */
	uint32_t access;
};

/*
 * Changes a plain key of this process in place, keeping its number (as
 * mlx5's re-registration does): a fence first, as hw_mkey_dereg (refused
 * everywhere, accesses already past the check ended), then the new values.
 * A device-wide key's record is published again without memory: the caller
 * shares the new range (hw_mkey_share). HW_ERR_KEY for no such key, a view
 * or a key that is not plain; HW_ERR_INVAL for a domain of the other kind
 * (device-wide or private) than the key's.
 */
enum hw_status hw_mkey_rereg(uint32_t key, const struct hw_mkey_change *c);

/*
 * Memory windows (IB types 1 and 2) of domain pd: created unbound (every
 * access fails); a type 2 window may be invalidated (LOCAL_INV, SEND with
 * invalidate). Windows reach only this process's QPs: their keys publish
 * no memory, so other processes cannot resolve them.
 */
enum hw_status hw_mkey_reg_window(struct hw_pd *pd, uint8_t type, uint32_t *key);

/* A bind (or, with len 0, an unbind) as its UMR WQE asks it. */
struct hw_mw_bind {
	uint32_t key;	     /* the window's key now */
	uint8_t tag;	     /* its key's tag from here on */
	uint32_t pd_id;	     /* the posting QP's domain */
	uint32_t qpn;	     /* the posting QP (type 2: the window's QP from here on) */
	uint32_t mr_key;     /* the MR bound to (its lkey) */
	uint64_t mr_addr;    /* and where in it the window starts */
	uint64_t addr, len;  /* the window's addresses (0-based when ZERO_BASED) */
	uint32_t access;     /* HW_ACCESS_REMOTE_* the window grants */
	bool check_free;     /* type 2: the window must be unbound */
};

/*
 * Binds a window: 0 or HW_CQE_SYNDROME_MW_BIND_ERR (nothing changed) when
 * the key is no window of pd_id, a type 2 window is bound already or bound
 * by another QP, the MR is not a plain key of the domain with MW_BIND, the
 * range leaves it, or the window would grant remote write or atomics over
 * an MR without local write.
 */
uint8_t hw_mkey_bind_window(const struct hw_mw_bind *b);

/*
 * The key a window of this process has now at key's index, whatever key's
 * tag (a bind names its window by index: mlx5 posts a type 2 window's first
 * key at every bind), and its type in *type; 0 when that slot holds no window.
 */
uint32_t hw_mkey_window_key(uint32_t key, uint8_t *type);

/* Frees a window whatever its key's tag now (its owner may hold an older one): a fence as hw_mkey_dereg. */
enum hw_status hw_mkey_dereg_window(uint32_t key);

/*
 * Implicit on-demand paging (hw_odp.c): one key of pd over this process's
 * whole address space, as an mlx5 implicit ODP MR (addr 0, length
 * UINT64_MAX). Nothing is pinned or moved: every access through it faults
 * its pages in first (hw_mkey_check_implicit), and one that names memory
 * not mapped with the rights it needs fails as an access outside a
 * registration (HW_ERR_BOUNDS) instead of faulting the process. Its record
 * publishes no memory, so other processes cannot resolve it (HW_ERR_KEY
 * there: the whole address space cannot move onto shareable memory).
 */
enum hw_status hw_mkey_reg_implicit(struct hw_pd *pd, uint32_t access, uint32_t *key);

/* hw_mkey_check for an implicit key: the usual checks, then the pages faulted in with the rights asked. */
enum hw_status hw_mkey_check_implicit(const struct hw_mkey *mk, uint32_t pd_id, uint64_t addr, uint64_t len,
				      uint32_t access, uint8_t **ptr);

/* Registers remote memory [addr, addr+len) reached through rops. */
enum hw_status hw_mkey_reg_remote(struct hw_pd *pd, uint64_t addr, uint64_t len, uint32_t access,
				  const struct hw_remote_ops *rops, void *rctx, uint32_t *key);

/*
 * Registers an indirect key over n local chunks (sorted, disjoint; the caller
 * keeps the array alive while the key lives). n may be 0: every access fails.
 */
enum hw_status hw_mkey_reg_indirect(struct hw_pd *pd, const struct hw_mkey_chunk *chunks, uint32_t n,
				    uint32_t access, uint32_t *key);

/* Points a live indirect key at a new chunk list (after chunks were added or the array moved). */
enum hw_status hw_mkey_set_chunks(uint32_t key, const struct hw_mkey_chunk *chunks, uint32_t n);

/*
 * Index of the chunk holding [addr, addr + len), or -1. O(log n): a binary
 * search. Out of line so the direct-key checks inlined on the data path stay small.
 */
int64_t hw_chunk_find(const struct hw_mkey_chunk *c, uint32_t n, uint64_t addr, uint64_t len);

/* Lets LOCAL_INV and SEND with invalidate free the key. HW_ERR_KEY when no such key. */
enum hw_status hw_mkey_set_invalidatable(uint32_t key);

/*
 * Frees (invalidates) a key of domain pd_id (0: any). HW_ERR_KEY when no such
 * key, HW_ERR_PD for another domain's key, HW_ERR_ACCESS when the key may not
 * be invalidated. Invalidating a key that is already free succeeds. Lock-free:
 * the engine calls it while executing a WQE.
 */
enum hw_status hw_mkey_invalidate(uint32_t key, uint32_t pd_id);

/* Makes a freed key valid again (its re-registration by UMR or a bind). HW_ERR_KEY when no such key. */
enum hw_status hw_mkey_revalidate(uint32_t key);

/* Entry behind a live key, or NULL (hw_mkey_find out of line). */
const struct hw_mkey *hw_mkey_lookup(uint32_t key);

/*
 * The key table: pages of slots, a key's index (key >> 8) naming its slot.
 * Pages are made once and kept, so a reader needs no lock (hw_mem.c).
 */
#define HW_MKEY_PAGE_SHIFT 12
#define HW_MKEY_PAGE_SIZE (1u << HW_MKEY_PAGE_SHIFT)
#define HW_MKEY_PAGES 256 /* 1 Mi keys */
#define HW_MKEY_MAX (HW_MKEY_PAGE_SIZE * HW_MKEY_PAGES)
/* Room for every index a key's 24 bits can name, so a lookup needs no bound check. */
#define HW_MKEY_SLOT_PAGES (1u << (24 - HW_MKEY_PAGE_SHIFT))
extern struct hw_mkey *hw_mkey_slots[HW_MKEY_SLOT_PAGES];

/* The entry behind a live key, or NULL: inline, for the WQE path. */
static inline __attribute__((always_inline)) const struct hw_mkey *hw_mkey_find(uint32_t key)
{
	uint32_t idx = key >> 8;
	const struct hw_mkey *pg, *mk;

	if (__builtin_expect(key == 0, 0))
		return NULL;
	pg = __atomic_load_n(&hw_mkey_slots[idx >> HW_MKEY_PAGE_SHIFT], __ATOMIC_ACQUIRE);
	if (__builtin_expect(pg == NULL, 0))
		return NULL;
	mk = &pg[idx & (HW_MKEY_PAGE_SIZE - 1)];
	/* Atomic: a deregistration marks the entry dying while executions look (hw_mkey_dereg). */
	if (__atomic_load_n(&mk->key, __ATOMIC_ACQUIRE) != key)
		return NULL;
	/* A view of another process's key lives as long as the key's record is the one it was built from. */
	if (__builtin_expect(mk->seqp != NULL, 0) && atomic_load_explicit(mk->seqp, memory_order_acquire) != mk->seq)
		return NULL;
	return mk;
}

/*
 * The local address of [addr, addr + len) through a plain key (one local
 * range: not remote, not indirect, not UMR) of domain pd_id granting access;
 * NULL for anything else, reasons not told: the caller's general path
 * (hw_mkey_check) says which. One lookup and one check per key on the WQE path.
 */
static inline __attribute__((always_inline)) uint8_t *hw_mkey_plain(uint32_t key, uint32_t pd_id, uint64_t addr,
								    uint64_t len, uint32_t access)
{
	const struct hw_mkey *mk = hw_mkey_find(key);
	uint64_t want = (uint64_t)pd_id << 32 | access | HW_MKEY_FAST_OK, off;

	if (__builtin_expect(mk == NULL, 0) ||
	    (__atomic_load_n(&mk->fast, __ATOMIC_RELAXED) & (~0ull << 32 | access | HW_MKEY_FAST_OK)) != want)
		return NULL;
	off = addr - mk->addr;
	if (off > mk->len || len > mk->len - off)
		return NULL;
	return mk->base + off;
}

/* Bytes of the "how to reach it" description hw_mkey_share publishes (the fabric's format). */
#define HW_MKEY_BACKING_MAX 216

/*
 * Maps memory another process shared: backing is what its owner published
 * for a key of len bytes; returns the local address of the key's first byte,
 * or NULL. Provided by the layer that knows how memory crosses processes.
 */
typedef uint8_t *(*hw_mkey_attach_fn)(const void *backing, uint32_t blen, uint64_t len);
/*
 * For the attach function only (the key table's lock is held then): whether
 * a live view of another process's key has its memory in [lo, lo + len).
 * A mapping none uses may go: every access through a view that went stale
 * ended before its owner's deregistration returned (hw_epoch).
 */
bool hw_mkey_views_within(const void *lo, uint64_t len);
void hw_mkey_set_attach(hw_mkey_attach_fn fn);

/*
 * Lets other processes of the device reach a key's memory: backing says how
 * (passed to their attach function). HW_ERR_KEY for a key not registered
 * here, HW_ERR_INVAL for a key numbered in this process only.
 */
enum hw_status hw_mkey_share(uint32_t key, const void *backing, uint32_t len);

/*
 * The entry behind a key of any process of the device: this process's own
 * keys, or a view of another's shared key (mapped on first use, dropped when
 * its owner deregisters it). NULL when no live key has that value.
 */
const struct hw_mkey *hw_mkey_resolve(uint32_t key);

/*
 * The checks of every access through a key: [addr, addr + len) lies in the
 * key's range, the key lives in domain pd_id (0: any domain) and grants
 * `access`. The one place they are written; callers add the address.
 */
static inline __attribute__((always_inline)) enum hw_status hw_mkey_check_access(const struct hw_mkey *mk,
										  uint32_t pd_id, uint64_t addr,
										  uint64_t len, uint32_t access)
{
	if (__builtin_expect(__atomic_load_n(&mk->state, __ATOMIC_ACQUIRE) & HW_MKEY_FREE, 0))
		return HW_ERR_KEY;
	if (pd_id != 0 && mk->pd_id != pd_id)
		return HW_ERR_PD;
	if (addr < mk->addr || len > mk->len || addr - mk->addr > mk->len - len)
		return HW_ERR_BOUNDS;
	/* Indirect keys only: the access must also lie inside one chunk, not across a gap. */
	if (__builtin_expect(mk->chunks != NULL, 0) && hw_chunk_find(mk->chunks, mk->nchunks, addr, len) < 0)
		return HW_ERR_BOUNDS;
	if ((mk->access & access) != access)
		return HW_ERR_ACCESS;
	return HW_OK;
}

/* hw_mkey_check for a memory window: through its MR, remote accesses only (out of line). */
enum hw_status hw_mkey_check_window(const struct hw_mkey *mk, uint32_t pd_id, uint64_t addr, uint64_t len,
				    uint32_t access, uint8_t **ptr);

/* hw_mkey_check_access; on success *ptr is the local address of addr. */
static inline __attribute__((always_inline)) enum hw_status hw_mkey_check(const struct hw_mkey *mk, uint32_t pd_id, uint64_t addr, uint64_t len,
					   uint32_t access, uint8_t **ptr)
{
	enum hw_status st;

	if (__builtin_expect((mk->mw_type | mk->implicit) != 0, 0))
		return mk->implicit ? hw_mkey_check_implicit(mk, pd_id, addr, len, access, ptr)
				    : hw_mkey_check_window(mk, pd_id, addr, len, access, ptr);
	st = hw_mkey_check_access(mk, pd_id, addr, len, access);

	if (st != HW_OK)
		return st;
	/* Remote memory and UMR patterns have no one local address: callers go through rops / umr. */
	*ptr = mk->rops != NULL || mk->umr != NULL ? NULL : mk->base + (addr - mk->addr);
	return HW_OK;
}

enum hw_status hw_mkey_translate(uint32_t key, uint32_t pd_id, uint64_t addr, uint64_t len, uint32_t access,
				 uint8_t **ptr);

const char *hw_status_str(enum hw_status st);

#endif /* HW_MEM_H_ */
