/*
 * hw_eng_fast — the engine's first look at a send WQE (included by
 * hw_engine.c only).
 *
 * Most small-message work is one RDMA WRITE, READ or SEND with one gather
 * entry, or a WRITE of inline data, on an RC QP whose peer is on this machine,
 * every key plain and every check passing. Such a WQE is read once in its
 * ring slot (one that would wrap around the ring's end is left), each key
 * looked up and checked once, and its bytes moved. Anything else, or any check that fails, leaves it
 * untouched for the general path, which copies the WQE out, walks its
 * segments and reports exactly what failed: the first look never decides
 * an error.
 */
#ifndef HW_ENG_FAST_H_
#define HW_ENG_FAST_H_

#include <endian.h>
#include <string.h>

#include "hw_qp.h"

/* ctrl, raddr, one data segment: 3 x 16 bytes */
#define ENG_FAST_DS 3
/*
 * A doorbell's WQEs look at their peer (alive, its owner too, in RTR/RTS)
 * once every this many WQEs or bytes: a responder that dies mid-batch
 * fails the WQEs after the next look, as it would fail those of the next
 * doorbell. Bounded so a long batch learns of it within microseconds.
 */
#define ENG_FAST_PEER_WQES 16u
#define ENG_FAST_PEER_BYTES (64u * 1024)

/*
 * memmove without a call for the small sizes most WQEs carry: every load
 * comes before any store, so overlapping ranges move as memmove's do.
 */
static inline void eng_move(uint8_t *d, const uint8_t *s, uint32_t n)
{
	uint64_t a, b;
	uint8_t t[4][16];

	if (n >= 32 && n <= 64) {
		memcpy(t[0], s, 16);
		memcpy(t[1], s + 16, 16);
		memcpy(t[2], s + n - 32, 16);
		memcpy(t[3], s + n - 16, 16);
		memcpy(d, t[0], 16);
		memcpy(d + 16, t[1], 16);
		memcpy(d + n - 32, t[2], 16);
		memcpy(d + n - 16, t[3], 16);
		return;
	}
	if (n >= 16 && n < 32) {
		memcpy(t[0], s, 16);
		memcpy(t[1], s + n - 16, 16);
		memcpy(d, t[0], 16);
		memcpy(d + n - 16, t[1], 16);
		return;
	}
	if (n >= 8 && n < 16) {
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
		return;
	}
	memmove(d, s, n);
}

/* The connected peer when it takes requests: live (its owner too) and in RTR or RTS. */
static inline struct hw_qp *eng_fast_peer(const struct hw_qp *qp)
{
	struct hw_qp *peer = __atomic_load_n(&qp->peer, __ATOMIC_ACQUIRE);
	enum hw_qp_state st;

	if (__builtin_expect(peer == NULL, 0) || !hw_qp_view_live(peer))
		return NULL;
	st = hw_qp_state_of(peer);
	return st == HW_QP_RTR || st == HW_QP_RTS ? peer : NULL;
}

/*
 * The WQE in slot (a WRITE or READ of len bytes from one data segment,
 * opcode op) run when every check passes on the first look: its byte
 * count, or -1 with nothing done. Each field is read once, so a program
 * rewriting the slot meanwhile changes nothing between check and use.
 */
static inline __attribute__((always_inline)) int64_t eng_fast_rw_as(struct hw_qp *qp, struct hw_qp *peer,
								     const uint8_t *slot, uint32_t len, bool write)
{
	const struct hw_wqe_raddr_seg *r = (const void *)(slot + HW_WQE_DS_BYTES);
	const struct hw_wqe_data_seg *d = (const void *)(slot + 2 * HW_WQE_DS_BYTES);
	uint8_t *l, *rp;

	/* 0 (no memory named) and lengths past the port's limit: the general path */
	if (len - 1 >= HW_QP_MAX_MSG)
		return -1;
	l = hw_mkey_plain(hw_data_seg_lkey(d), qp->pd_id, hw_data_seg_addr(d), len,
			  write ? HW_ACCESS_LOCAL_READ : HW_ACCESS_LOCAL_WRITE);
	rp = l == NULL ? NULL
		       : hw_mkey_plain(hw_raddr_seg_rkey(r), write ? peer->wr_pd : peer->rd_pd, hw_raddr_seg_addr(r), len,
				       write ? HW_ACCESS_REMOTE_WRITE : HW_ACCESS_REMOTE_READ);
	if (rp == NULL)
		return -1;
	if (write)
		eng_move(rp, l, len);
	else
		eng_move(l, rp, len);
	return len;
}

/* eng_fast_rw_as made once per direction, so each key's wanted rights are a constant. */
static inline int64_t eng_fast_rw(struct hw_qp *qp, struct hw_qp *peer, const uint8_t *slot, uint8_t op,
				  uint32_t len)
{
	return op == HW_WQE_RDMA_WRITE ? eng_fast_rw_as(qp, peer, slot, len, true)
				       : eng_fast_rw_as(qp, peer, slot, len, false);
}

/* A SEND of one gather entry into the peer's next receive (hw_engine.c: it takes receives as the general path). */
static int64_t eng_fast_send(struct hw_qp *qp, struct hw_qp *peer, const uint8_t *slot, uint8_t fm_ce_se);

/*
 * An RDMA WRITE whose data is one inline segment of len bytes ending the
 * WQE (ds 16-byte units, nbb basic blocks, none past the ring's end): the
 * data copied from the slot to the peer, as the general path would.
 */
static inline int64_t eng_fast_inline(struct hw_qp *peer, const uint8_t *slot, uint32_t ds, uint32_t len)
{
	const struct hw_wqe_raddr_seg *r = (const void *)(slot + HW_WQE_DS_BYTES);
	uint32_t at = 2 * HW_WQE_DS_BYTES + sizeof(struct hw_wqe_inl_seg);
	uint8_t *rp;

	if (len == 0 || ((at + len + HW_WQE_DS_BYTES - 1) & ~(HW_WQE_DS_BYTES - 1u)) != ds * HW_WQE_DS_BYTES)
		return -1;
	rp = hw_mkey_plain(hw_raddr_seg_rkey(r), peer->wr_pd, hw_raddr_seg_addr(r), len, HW_ACCESS_REMOTE_WRITE);
	if (rp == NULL)
		return -1;
	eng_move(rp, slot + at, len);
	return len;
}

/*
 * The first look at the WQE at ci of an RC QP (avail basic blocks posted
 * from it), against its peer as eng_fast_peer found it: its byte count when
 * it ran here, its size in *nbb; -1 when the general path must take it.
 * *fm_ce_se is its ctrl's flags.
 */
static inline int64_t eng_fast(struct hw_qp *qp, struct hw_qp *peer, uint32_t ci, uint32_t avail, uint8_t *op,
			       uint8_t *fm_ce_se, uint32_t *nbb)
{
	uint32_t bbs = 1u << qp->log_sq_size, pos = ci & (bbs - 1);
	const uint8_t *slot = qp->sq + (size_t)pos * HW_SEND_WQE_BB;
	const struct hw_wqe_ctrl_seg *ctrl = (const void *)slot;
	uint32_t ds = be32toh(ctrl->qpn_ds) & 0x3f, bc;

	*op = (uint8_t)be32toh(ctrl->opmod_idx_opcode);
	*fm_ce_se = ctrl->fm_ce_se;
	*nbb = 1;
	if (*op == HW_WQE_SEND && ds == ENG_FAST_DS - 1)
		return eng_fast_send(qp, peer, slot, *fm_ce_se);
	if (*op != HW_WQE_RDMA_WRITE && *op != HW_WQE_RDMA_READ)
		return -1;
	/* What follows the remote address: one data segment, or inline data (a WRITE's). */
	bc = be32toh(((const struct hw_wqe_inl_seg *)(slot + 2 * HW_WQE_DS_BYTES))->byte_count);
	if (ds == ENG_FAST_DS && !(bc & HW_INLINE_SEG_FLAG))
		return eng_fast_rw(qp, peer, slot, *op, bc);
	/* A WRITE of inline data: maybe more than one block, never one that wraps or was not all posted. */
	*nbb = (ds * HW_WQE_DS_BYTES + HW_SEND_WQE_BB - 1) / HW_SEND_WQE_BB;
	if (*op != HW_WQE_RDMA_WRITE || ds < ENG_FAST_DS || !(bc & HW_INLINE_SEG_FLAG) || bc == HW_DATA_SEG_2G ||
	    *nbb > avail || pos + *nbb > bbs)
		return -1;
	return eng_fast_inline(peer, slot, ds, bc & ~HW_INLINE_SEG_FLAG);
}

#endif /* HW_ENG_FAST_H_ */
