/*
 * hw_umr — the patterns of indirect mkeys that UMR WQEs register.
 *
 * An indirect mkey (mlx5dv_create_mkey) is a slot of the one key table
 * (hw_mem.h) whose `umr` points at one of these: created free, it becomes
 * usable when a UMR WQE writes a pattern into it (hw_umr_register) and free
 * again at LOCAL_INV or an allowed SEND with invalidate. Addresses through
 * such a key are zero-based offsets into the pattern's data:
 *   strided (interleaved): repeat_count repetitions of the entries, entry i
 *     giving count_i bytes at base_i + r * stride_i in repetition r;
 *   list: the entries' bytes one after the other (one repetition, stride 0).
 * A range of the key's data is walked piece by piece with a cursor; each
 * piece is contiguous local memory of one entry.
 */
#ifndef HW_UMR_H_
#define HW_UMR_H_

#include <stdbool.h>
#include <stdint.h>

#include "hw_mem.h"

struct hw_umr_ent {
	uint8_t *base;	 /* local address of the entry's first byte (repetition 0) */
	uint32_t count;	 /* bytes of data per repetition */
	uint32_t stride; /* bytes from one repetition's start to the next (strided only) */
	uint64_t prefix; /* data bytes of the earlier entries in one repetition */
	uint32_t key;	 /* the key the entry was registered through: it must live while the pattern is used */
};

struct hw_umr {
	uint32_t cap;	 /* translation entries the key was created with (a multiple of 4) */
	uint32_t n;	 /* entries of the registered pattern */
	uint64_t repeat; /* repetitions (1 for a list) */
	uint64_t unit;	 /* data bytes of one repetition */
	uint64_t total;	 /* unit * repeat: the pattern's bytes (the key's length unless it has a signature) */
	struct hw_sig *sig; /* a signature key's context (hw_sig.h), NULL for others */
	struct hw_umr_ent e[];
};

struct hw_sig;

/* A pattern of cap entries, not registered; NULL on allocation failure. */
struct hw_umr *hw_umr_alloc(uint32_t cap);

/* As hw_umr_alloc, for a key that may carry a block signature (hw_sig.h). */
struct hw_umr *hw_umr_alloc_sig(uint32_t cap);
void hw_umr_free(struct hw_umr *u);

/*
 * Executes a UMR WQE that registers a pattern: segs are the bytes after its
 * ctrl segment (UMR ctrl, mkey context, inline translations), len their
 * count, mkey the ctrl segment's immediate, pd_id the posting QP's domain.
 * Returns 0 or the CQE syndrome; on failure nothing changed.
 */
uint8_t hw_umr_register(uint32_t pd_id, uint32_t mkey, const uint8_t *segs, uint32_t len);

/*
 * Whether every key the pattern's entries name still lives. An entry's
 * address is resolved once, at registration: a key deregistered since
 * (ibv_dereg_mr does not wait for the indirect keys over it, as on the
 * card) makes every access through the pattern fail, checked inside the
 * access's epoch so the memory is not reached after the deregistration
 * returned.
 */
bool hw_umr_live(const struct hw_umr *u);

/*
 * Other processes reach a pattern through its description in the key's
 * record (hw_mkey_share_umr): each entry by the device-wide key it was
 * registered through and its offset into that key's memory, so another
 * process rebuilds it over its own views of those keys. Bytes written
 * into buf (at most cap), or 0 when the pattern has more entries than a
 * record holds or an entry's key is not device-wide.
 */
uint32_t hw_umr_describe(const struct hw_umr *u, void *buf, uint32_t cap);

/*
 * The pattern a description (read from another process's record, so
 * checked whole) names, each entry over the key inner() gives for its key
 * number (a plain key with local memory, or NULL); NULL when the
 * description is malformed or an entry is out of reach.
 */
struct hw_umr *hw_umr_from_desc(const void *buf, uint32_t len, const struct hw_mkey *(*inner)(uint32_t key));

/* A position in a pattern's data; pieces are read without locks. */
struct hw_umr_cur {
	const struct hw_umr *u;
	uint64_t r;  /* repetition */
	uint32_t i;  /* entry */
	uint32_t in; /* bytes into the entry's current block */
};

/* Places c at data offset off (< u->total). */
void hw_umr_cur_init(struct hw_umr_cur *c, const struct hw_umr *u, uint64_t off);

/* The contiguous bytes at the cursor: their address, and their count in *len (never 0). */
static inline uint8_t *hw_umr_cur_piece(const struct hw_umr_cur *c, uint32_t *len)
{
	const struct hw_umr_ent *e = &c->u->e[c->i];

	*len = e->count - c->in;
	return e->base + c->r * e->stride + c->in;
}

/* Moves the cursor k bytes on (k <= the current piece's length). */
static inline void hw_umr_cur_advance(struct hw_umr_cur *c, uint32_t k)
{
	const struct hw_umr *u = c->u;

	c->in += k;
	while (c->in == u->e[c->i].count) {
		c->in = 0;
		if (++c->i == u->n) {
			c->i = 0;
			if (++c->r == u->repeat)
				return; /* the end of the data: no further piece is asked for */
		}
	}
}

/* Copies n pattern bytes from data offset off (off + n <= u->total) out to buf, or in from it. */
void hw_umr_read(const struct hw_umr *u, uint64_t off, uint8_t *buf, uint64_t n);
void hw_umr_write(const struct hw_umr *u, uint64_t off, const uint8_t *buf, uint64_t n);

#endif /* HW_UMR_H_ */
