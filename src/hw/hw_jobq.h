/*
 * hw_jobq — the engine queue of a DOCA DMA or SHA context.
 *
 * A send ring of 64-byte basic blocks in the PRM layout (hw_prm.h: a ctrl
 * segment with the MMO opcode and an opmod, an MMO segment, then the source
 * and destination data segments; a partial SHA segment names its session,
 * whose running hash the engine keeps between WQEs) and a completion queue (hw_cq) it writes
 * 64-byte CQEs to. The producer writes a WQE at its counter and rings the
 * doorbell (hw_jobq_ring); the engine executes the posted WQEs right there,
 * on the caller's thread, and writes one CQE for each: REQ with byte_cnt
 * (bytes copied, or the digest's size) or REQ_ERR with a syndrome and, in
 * vendor_err_synd, the engine's enum hw_status.
 *
 * The engine trusts nothing in a WQE: opcode, opmod, index, QP number,
 * segment counts, rights and every key are checked, and a job's memory is
 * checked whole (hw_dma, hw_sha) before a byte moves, so a refused or forged
 * WQE touches nothing and completes in error. The one exception is the
 * doorbell of a producer that vouches for its keys (hw_jobq_post_bf_dma1_vouched):
 * what it vouched for when the keys were made is not checked again, what can
 * change since is. A job's failure is its own: the
 * queue stays usable, unlike an RC QP, because a DOCA job is independent of
 * the ones before it.
 *
 * Not thread-safe: one producer (the work queue's thread), which is also the
 * only thread that writes (through its doorbells) or arms the CQ: the CQE
 * writes take the CQ's single-producer path (hw_cq_push_sp).
 */
#ifndef HW_JOBQ_H_
#define HW_JOBQ_H_

#include <endian.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "hw_cq.h"
#include "hw_dma.h"
#include "hw_prm.h"
#include "hw_sha.h"

#define HW_JOBQ_LOG_BBS 6     /* 64 basic blocks: WQEs run at the doorbell, so one job at a time is posted */
#define HW_JOBQ_MAX_DS 63     /* the ctrl segment's 6-bit count of 16-byte units */
#define HW_JOBQ_MAX_SEGS (HW_JOBQ_MAX_DS - 2) /* data segments of one WQE, both sides together */
#define HW_JOBQ_SEGS_PER_BB (HW_SEND_WQE_BB / HW_WQE_DS_BYTES)
#define HW_JOBQ_MAX_LEN (1ull << 31)

struct hw_jobq_attr {
	uint32_t pd_id;		  /* the domain every key of its jobs must belong to */
	uint32_t qpn;		  /* the number its WQEs and CQEs carry (24 bits) */
	struct hw_cq *cq;	  /* where its completions go */
	struct hw_sha_engine *sha; /* NULL: SHA WQEs complete with an error */
	/*
	 * The partial-hash sessions a WQE may name (index < nsessions), read at
	 * execution: a NULL entry is no session. The creator owns the table.
	 */
	struct hw_sha_state *const *sessions;
	uint32_t nsessions;
};

struct hw_jobq_kc {
	uint32_t key;
	const struct hw_mkey *mk; /* never NULL: &hw_jobq_nokey for a key the table does not hold */
};

/* 8 bytes of a WQE, for the ring's stores and loads. */
typedef uint64_t hw_jobq_u64 __attribute__((may_alias));

struct hw_jobq {
	uint8_t *ring;	   /* 2^HW_JOBQ_LOG_BBS basic blocks */
	uint32_t pi;	   /* basic blocks posted (free-running, the doorbell record's counter) */
	uint32_t ci;	   /* basic blocks the engine has taken */
	uint32_t qpn;
	uint32_t pd_id;
	struct hw_cq *cq;
	const struct hw_cqe64 *cqes; /* the CQ's ring, for the producer to read its completions */
	uint32_t cq_log;
	struct hw_sha_engine *sha;
	struct hw_sha_state *const *sessions;
	uint32_t nsessions;
	struct hw_jobq_kc kc[2]; /* the engine's last source and destination keys */
	/* The ctrl segment of a one-block DMA WQE with index 0, as stored: built once at creation. */
	uint64_t dma1_ctrl[2];
	uint32_t cqe_qpn_top; /* a REQ CQE's sop_drop_qpn word (MMO opcode, QP number), as stored */
	struct hw_cq_sp cqp;  /* the CQ as its single producer writes it */
	uint32_t own_ci;      /* hw_jobq_take_cqe's consumer index */
};

/* HW_ERR_INVAL (no CQ, a QP number over 24 bits), HW_ERR_NOMEM. */
enum hw_status hw_jobq_create(const struct hw_jobq_attr *attr, struct hw_jobq **out);
void hw_jobq_destroy(struct hw_jobq *q);

/* The 16-byte unit k of the WQE that starts at basic block bb (the ring wraps between units). */
static inline void *hw_jobq_seg(const struct hw_jobq *q, uint32_t bb, uint32_t k)
{
	uint32_t mask = (1u << (HW_JOBQ_LOG_BBS + 2)) - 1;

	return q->ring + (size_t)(((bb << 2) + k) & mask) * HW_WQE_DS_BYTES;
}

static inline uint32_t hw_jobq_room(const struct hw_jobq *q)
{
	return (1u << HW_JOBQ_LOG_BBS) - (q->pi - q->ci);
}

static inline void hw_jobq_ctrl_mmo(const struct hw_jobq *q, enum hw_mmo_opmod opmod, uint32_t ds)
{
	hw_ctrl_seg_set(hw_jobq_seg(q, q->pi, 0), (uint16_t)q->pi, HW_WQE_MMO, (uint8_t)opmod, q->qpn,
			HW_WQE_CTRL_CQ_UPDATE, (uint8_t)ds, 0);
}

/*
 * A one-block DMA WQE in the order it is stored, as it is stored (big-endian
 * fields): the two ctrl words, the MMO segment (counts and rights, then
 * zero), and the source and destination data segments split where their
 * fields are, so that a decode right after the build reads each field back
 * whole.
 */
struct hw_jobq_bb {
	uint64_t c0, c1;
	uint32_t mmo, mmo_hi;
	uint64_t mmo_rsvd;
	uint32_t slen, skey;
	uint64_t saddr;
	uint32_t dlen, dkey;
	uint64_t daddr;
};

/*
 * The eight words of a one-block DMA WQE with index idx, as stored: the ctrl
 * segment from the queue's template (only the index is added), the MMO
 * segment, then the source and destination data segments.
 */
static inline __attribute__((always_inline)) void hw_jobq_dma1_words(const struct hw_jobq *q, uint32_t idx,
								     const struct hw_sge *src, const struct hw_sge *dst,
								     struct hw_jobq_bb *w)
{
	w->c0 = q->dma1_ctrl[0] | htobe32((idx & 0xffff) << 8);
	w->c1 = q->dma1_ctrl[1];
	w->mmo = 1u | 1u << 8 | (uint32_t)(uint8_t)src->access << 16 | (uint32_t)(uint8_t)dst->access << 24;
	w->mmo_hi = 0;
	w->mmo_rsvd = 0;
	w->slen = htobe32((uint32_t)src->len);
	w->skey = htobe32(src->key);
	w->saddr = htobe64(src->addr);
	w->dlen = htobe32((uint32_t)dst->len);
	w->dkey = htobe32(dst->key);
	w->daddr = htobe64(dst->addr);
}

/* Stores a built block at the producer's counter (eight 8-byte stores: faster here than 16-byte vectors). */
static inline __attribute__((always_inline)) void hw_jobq_store_bb(struct hw_jobq *q, const struct hw_jobq_bb *w)
{
	hw_jobq_u64 *x = hw_jobq_seg(q, q->pi, 0);

	x[0] = w->c0;
	x[1] = w->c1;
	x[2] = w->mmo | (uint64_t)w->mmo_hi << 32;
	x[3] = w->mmo_rsvd;
	x[4] = w->slen | (uint64_t)w->skey << 32;
	x[5] = w->saddr;
	x[6] = w->dlen | (uint64_t)w->dkey << 32;
	x[7] = w->daddr;
	q->pi++;
}

/*
 * Posts a copy of one buffer to one buffer (one basic block): the common DOCA
 * job. HW_ERR_FULL when the ring has no room.
 */
static inline enum hw_status hw_jobq_post_dma1(struct hw_jobq *q, const struct hw_sge *src, const struct hw_sge *dst)
{
	struct hw_jobq_bb w;

	if (hw_jobq_room(q) == 0)
		return HW_ERR_FULL;
	hw_jobq_dma1_words(q, q->pi, src, dst, &w);
	hw_jobq_store_bb(q, &w);
	return HW_OK;
}

/*
 * Posts a copy of src[0..nsrc) into dst[0..ndst). Every element of a side
 * must ask for the same right (the MMO segment holds one per side) and no
 * length may exceed 2^31: else HW_ERR_INVAL and nothing is written, as when
 * the lists need more than HW_JOBQ_MAX_SEGS segments. HW_ERR_FULL: no room.
 */
enum hw_status hw_jobq_post_dma(struct hw_jobq *q, const struct hw_sge *src, uint32_t nsrc, const struct hw_sge *dst,
				uint32_t ndst);

/* Posts a one-shot hash of src[0..nsrc) whose digest goes to *dst. Same rules. */
enum hw_status hw_jobq_post_sha(struct hw_jobq *q, enum hw_sha_alg alg, const struct hw_sge *src, uint32_t nsrc,
				const struct hw_sge *dst);

/*
 * Posts one segment of a message hashed on session (HW_MMO_SHA_START and/or
 * HW_MMO_SHA_FINAL in flags). dst is the digest's place, given with FINAL
 * only (else NULL). Same rules; HW_ERR_INVAL for other flags or a dst that
 * does not agree with FINAL.
 */
enum hw_status hw_jobq_post_sha_partial(struct hw_jobq *q, enum hw_sha_alg alg, uint32_t session, uint32_t flags,
					const struct hw_sge *src, uint32_t nsrc, const struct hw_sge *dst);

/*
 * The engine's path for the common WQE (one buffer to one buffer, one basic
 * block), inline here so that the doorbell of a context in another library
 * runs it without a call: decode, execute, complete. hw_jobq_run takes
 * every other WQE through the general parse.
 */

/* A one-block DMA WQE as the engine decoded it (host order). */
struct hw_jobq_dma1 {
	uint64_t saddr, daddr;
	uint32_t skey, dkey;
	uint32_t len, room;
	uint32_t sacc, dacc;
};

/*
 * Decodes the block w as the WQE with index idx when it is the common one,
 * recognised by its ctrl words against the template (opcode, opmod, index,
 * QP number and size in one compare) and its MMO segment (one source, one
 * destination, known rights); false for any other WQE, which the general
 * parse checks.
 */
static inline __attribute__((always_inline)) bool hw_jobq_decode_dma1_t(uint64_t ctrl0, const struct hw_jobq_bb *w,
									uint32_t idx, struct hw_jobq_dma1 *j)
{
	uint32_t m = w->mmo;

	if (w->c0 != (ctrl0 | htobe32((idx & 0xffff) << 8)) || (m & 0xffff) != 0x0101 ||
	    (m >> 16 & ~(HW_ACCESS_ALL_MASK | HW_ACCESS_ALL_MASK << 8)))
		return false;
	j->sacc = m >> 16 & 0xff;
	j->dacc = m >> 24;
	j->len = be32toh(w->slen);
	j->skey = be32toh(w->skey);
	j->saddr = be64toh(w->saddr);
	j->room = be32toh(w->dlen);
	j->dkey = be32toh(w->dkey);
	j->daddr = be64toh(w->daddr);
	return true;
}

/* hw_jobq_decode_dma1_t against the queue's template as it is now. */
static inline __attribute__((always_inline)) bool hw_jobq_decode_dma1(const struct hw_jobq *q,
								      const struct hw_jobq_bb *w, uint32_t idx,
								      struct hw_jobq_dma1 *j)
{
	return hw_jobq_decode_dma1_t(q->dma1_ctrl[0], w, idx, j);
}

/* Decodes the WQE at ci in the ring (see hw_jobq_decode_dma1). */
static inline bool hw_jobq_parse_dma1(const struct hw_jobq *q, struct hw_jobq_dma1 *j)
{
	const hw_jobq_u64 *x = hw_jobq_seg(q, q->ci, 0);
	struct hw_jobq_bb w = {
		.c0 = x[0],
		.mmo = (uint32_t)x[2],
		.slen = (uint32_t)x[4],
		.skey = (uint32_t)(x[4] >> 32),
		.saddr = x[5],
		.dlen = (uint32_t)x[6],
		.dkey = (uint32_t)(x[6] >> 32),
		.daddr = x[7],
	};

	return hw_jobq_decode_dma1(q, &w, q->ci, j);
}

/*
 * What a key the table does not hold resolves to: number 0 (never a key's)
 * and freed, so every access through it fails the memory checks with
 * HW_ERR_KEY. The cache then never holds NULL and the path tests nothing
 * more than the checks themselves.
 */
extern const struct hw_mkey hw_jobq_nokey;

/* A cache miss: the table's entry (or hw_jobq_nokey) becomes the side's cached one. Out of line, as it is rare. */
const struct hw_mkey *hw_jobq_key_miss(struct hw_jobq_kc *kc, uint32_t key);

/* The key's entry, through a one-entry cache per side (checked against the key, as every lookup is). */
static inline const struct hw_mkey *hw_jobq_key(struct hw_jobq_kc *kc, uint32_t key)
{
	const struct hw_mkey *mk = kc->mk;

	if (__builtin_expect(kc->key == key && mk->key == key && mk->seqp == NULL, 1))
		return mk;
	return hw_jobq_key_miss(kc, key);
}

/*
 * A source or destination on another machine (hw_dma_copy's remote path).
 * By value: the inline path's decoded WQE then never has its address taken
 * and stays in registers.
 */
enum hw_status hw_jobq_dma1_remote(struct hw_jobq *q, struct hw_jobq_dma1 j);

/*
 * hw_mkey_check for a key the caller found local (rops NULL, which a key
 * keeps while it holds its number): same checks, same order, without the
 * second look at rops for the pointer.
 */
static inline __attribute__((always_inline)) enum hw_status hw_jobq_mkey_local(const struct hw_mkey *mk, uint32_t pd_id,
									      uint64_t addr, uint64_t len, uint32_t access,
									      uint8_t **ptr)
{
	enum hw_status st = hw_mkey_check_access(mk, pd_id, addr, len, access);

	if (st != HW_OK)
		return st;
	*ptr = mk->base + (addr - mk->addr);
	return HW_OK;
}

/* Executes a decoded one-block DMA: hw_dma_copy1's checks, each once (the cache compared the key). */
static inline enum hw_status hw_jobq_exec_dma1(struct hw_jobq *q, const struct hw_jobq_dma1 *j)
{
	const struct hw_mkey *smk = hw_jobq_key(&q->kc[0], j->skey), *dmk = hw_jobq_key(&q->kc[1], j->dkey);
	uint32_t pd_id = q->pd_id;
	uint8_t *sp, *dp;
	enum hw_status st;

	if (__builtin_expect(smk->rops != NULL || dmk->rops != NULL, 0))
		return hw_jobq_dma1_remote(q, *j);
	st = hw_jobq_mkey_local(smk, pd_id, j->saddr, j->len, j->sacc, &sp);
	if (st != HW_OK)
		return st;
	st = hw_jobq_mkey_local(dmk, pd_id, j->daddr, j->room, j->dacc, &dp);
	if (st != HW_OK)
		return st;
	if (j->len > j->room)
		return HW_ERR_LENGTH;
	if (j->len != 0 && sp < dp + j->len && dp < sp + j->len)
		return HW_ERR_OVERLAP;
	hw_copy(dp, sp, j->len);
	return HW_OK;
}

/* The CQE syndrome of an engine status. */
static inline uint8_t hw_jobq_syndrome(enum hw_status st)
{
	switch (st) {
	case HW_ERR_KEY:
	case HW_ERR_PD:
	case HW_ERR_BOUNDS:
	case HW_ERR_ACCESS:
		return HW_CQE_SYNDROME_LOCAL_PROT_ERR;
	case HW_ERR_LENGTH:
		return HW_CQE_SYNDROME_LOCAL_LENGTH_ERR;
	case HW_ERR_REVOKED:
	case HW_ERR_PEER_GONE:
	case HW_ERR_TIMEOUT:
	case HW_ERR_REMOTE_IO:
		return HW_CQE_SYNDROME_REMOTE_ABORTED_ERR;
	default:
		return HW_CQE_SYNDROME_LOCAL_QP_OP_ERR;
	}
}

enum hw_status hw_jobq_complete_err(struct hw_jobq *q, uint16_t idx, enum hw_status st);

/*
 * Writes the CQE of the one-block WQE at ci (REQ with bytes, or REQ_ERR with
 * the syndrome of st) and takes its block. A full CQ loses the CQE and
 * latches its overrun, as the card's (where it is fatal): HW_ERR_FULL.
 */
static inline enum hw_status hw_jobq_complete(struct hw_jobq *q, enum hw_status st, uint32_t bytes)
{
	uint16_t idx = (uint16_t)q->ci++;

	if (__builtin_expect(st == HW_OK, 1))
		return hw_cq_sp_push_req(&q->cqp, q->cqe_qpn_top, idx, bytes, HW_WQE_MMO);
	return hw_jobq_complete_err(q, idx, st);
}

/*
 * The doorbell: the engine executes every posted WQE and writes its CQE.
 * Unlike a QP's doorbell it announces no execution to hw_epoch: its keys are
 * those of DOCA mmaps of this process, which doca_mmap_stop refuses to
 * deregister while any buffer points into them, and a job has buffers, so
 * no deregistration can meet a job here (remote memory takes the fabric's
 * path, which counts its accesses itself).
 * The creator sizes the CQ for every job it can have outstanding; a CQE that
 * finds the CQ full anyway is lost and the CQ's overrun latched (fatal on the
 * card): HW_ERR_FULL.
 */
enum hw_status hw_jobq_run(struct hw_jobq *q);

static inline enum hw_status hw_jobq_ring(struct hw_jobq *q)
{
	struct hw_jobq_dma1 j;

	if (q->ci == q->pi)
		return HW_OK;
	if (__builtin_expect(q->pi - q->ci == 1, 1) && hw_jobq_parse_dma1(q, &j))
		return hw_jobq_complete(q, hw_jobq_exec_dma1(q, &j), j.len);
	return hw_jobq_run(q);
}

/* What hw_jobq_post_bf_dma1 did. */
enum hw_jobq_bf {
	HW_JOBQ_BF_FULL,   /* nothing posted: the ring has no room */
	HW_JOBQ_BF_POSTED, /* posted and rung; the outcome is in the CQ */
	HW_JOBQ_BF_DONE,   /* posted, run on the one-block path, REQ CQE written: *bytes is its byte_cnt */
};

/*
 * Posts a one-block DMA WQE and rings the doorbell as a BlueFlame write: the
 * block goes to the ring and with the doorbell, and when it is the only WQE
 * outstanding the engine decodes the doorbell's copy, as the card takes a
 * BlueFlame WQE from the doorbell register instead of fetching it from the
 * ring. The decode is the one the ring's WQEs get (the words are checked,
 * not trusted); with both sides inline the compiler folds the encode and
 * decode of the same words away. Any other case takes the ring's path.
 */
static inline __attribute__((always_inline)) enum hw_jobq_bf hw_jobq_post_bf_dma1(struct hw_jobq *q,
										  const struct hw_sge *src,
										  const struct hw_sge *dst, uint32_t *bytes)
{
	struct hw_jobq_dma1 j;
	uint32_t idx = q->pi;
	struct hw_jobq_bb w;
	enum hw_status st;

	if (hw_jobq_room(q) == 0)
		return HW_JOBQ_BF_FULL;
	hw_jobq_dma1_words(q, idx, src, dst, &w);
	hw_jobq_store_bb(q, &w);
	if (__builtin_expect(q->ci != idx || !hw_jobq_decode_dma1(q, &w, idx, &j), 0)) {
		hw_jobq_run(q);
		return HW_JOBQ_BF_POSTED;
	}
	st = hw_jobq_exec_dma1(q, &j);
	*bytes = j.len;
	return hw_jobq_complete(q, st, j.len) == HW_OK && st == HW_OK ? HW_JOBQ_BF_DONE : HW_JOBQ_BF_POSTED;
}

/*
 * A one-block DMA WQE whose producer vouches for its memory: it holds the
 * table entries of both keys and checked, once, when each key was made, that
 * the key is local and direct, belongs to the queue's domain, grants the
 * right its side asks for, covers the side's whole extent, and names its
 * memory by its local addresses (base == addr: the WQE's addresses are the
 * bytes copied) (a DOCA mmap's key and its buffers: src/doca/core/dc_core.h). Left to check per job is
 * what can change after that: that each entry still holds its key's number,
 * read as a lookup reads it (a deregistration withdraws the number first,
 * hw_mkey_dereg, and a stopped or revoked mmap's key is deregistered), and
 * is not freed; and the job's own lengths and overlap. The WQE still goes
 * to the ring in its PRM form and is decoded from the doorbell's copy. A
 * job that fails any of this is left in the ring for hw_jobq_run, whose
 * general path looks the keys up, checks everything and completes it as
 * the doorbell would (with the error that applies).
 */
static inline __attribute__((always_inline)) enum hw_jobq_bf
hw_jobq_post_bf_dma1_vouched(struct hw_jobq *q, const struct hw_sge *src, const struct hw_mkey *smk,
			     const struct hw_sge *dst, const struct hw_mkey *dmk, uint32_t *bytes)
{
	uint64_t ctrl0 = q->dma1_ctrl[0]; /* read once: the ring's stores may alias the queue */
	struct hw_jobq_dma1 j;
	uint32_t idx = q->pi;
	struct hw_jobq_bb w;
	uint8_t *sp, *dp;

	if (hw_jobq_room(q) == 0)
		return HW_JOBQ_BF_FULL;
	hw_jobq_dma1_words(q, idx, src, dst, &w);
	hw_jobq_store_bb(q, &w);
	if (__builtin_expect(q->ci != idx || !hw_jobq_decode_dma1_t(ctrl0, &w, idx, &j), 0))
		goto general;
	if (__builtin_expect(__atomic_load_n(&smk->key, __ATOMIC_ACQUIRE) != j.skey ||
				     __atomic_load_n(&dmk->key, __ATOMIC_ACQUIRE) != j.dkey ||
				     ((__atomic_load_n(&smk->state, __ATOMIC_ACQUIRE) |
				       __atomic_load_n(&dmk->state, __ATOMIC_ACQUIRE)) &
				      HW_MKEY_FREE) != 0 ||
				     j.len > j.room,
			     0))
		goto general;
	sp = (uint8_t *)(uintptr_t)j.saddr; /* a vouched entry's base is its address */
	dp = (uint8_t *)(uintptr_t)j.daddr;
	if (__builtin_expect(j.len != 0 && sp < dp + j.len && dp < sp + j.len, 0))
		goto general;
	hw_copy(dp, sp, j.len);
	*bytes = j.len;
	return hw_jobq_complete(q, HW_OK, j.len) == HW_OK ? HW_JOBQ_BF_DONE : HW_JOBQ_BF_POSTED;
general:
	hw_jobq_run(q);
	return HW_JOBQ_BF_POSTED;
}

/*
 * For a queue with a CQ of its own, read by the producer right after each
 * doorbell (one WQE in flight): copies the next CQE to *out and releases it
 * to the device. False when no CQE waits.
 */
bool hw_jobq_take_cqe(struct hw_jobq *q, struct hw_cqe64 *out);

/*
 * Consumer side of a CQ, as a provider polls it: the CQE at consumer index ci
 * when the device has written it (owner bit of this pass, opcode not INVALID),
 * else NULL. Its fields may be read after this returns.
 */
static inline const struct hw_cqe64 *hw_cqe_poll(const struct hw_cqe64 *ring, uint32_t log_size, uint32_t ci)
{
	const struct hw_cqe64 *c = &ring[ci & ((1u << log_size) - 1)];
	uint8_t op_own = atomic_load_explicit((const _Atomic uint8_t *)&c->op_own, memory_order_acquire);

	if ((op_own >> HW_CQE_OPCODE_SHIFT) == HW_CQE_INVALID ||
	    (op_own & HW_CQE_OWNER_MASK) != ((ci >> log_size) & 1))
		return NULL;
	return c;
}

/*
 * The same poll for a consumer that needs the opcode next: one read of
 * op_own. The CQE's opcode when the device has written it, else -1 (*out
 * is then left alone).
 */
static inline int hw_cqe_poll_op(const struct hw_cqe64 *ring, uint32_t log_size, uint32_t ci,
				 const struct hw_cqe64 **out)
{
	const struct hw_cqe64 *c = &ring[ci & ((1u << log_size) - 1)];
	uint8_t op_own = atomic_load_explicit((const _Atomic uint8_t *)&c->op_own, memory_order_acquire);
	uint8_t op = op_own >> HW_CQE_OPCODE_SHIFT;

	if (op == HW_CQE_INVALID || (op_own & HW_CQE_OWNER_MASK) != ((ci >> log_size) & 1))
		return -1;
	*out = c;
	return op;
}

/* Releases CQEs up to ci (exclusive) to the device through the doorbell record. */
static inline void hw_cq_set_ci(uint32_t *dbrec, uint32_t ci)
{
	atomic_store_explicit((_Atomic uint32_t *)&dbrec[HW_CQ_DBR_SET_CI], htobe32(ci & HW_CQ_CI_MASK),
			      memory_order_release);
}

#endif /* HW_JOBQ_H_ */
