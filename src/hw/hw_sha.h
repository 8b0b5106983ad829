/*
 * hw_sha — the emulated SHA engine.
 *
 * The engine hashes a scatter list reached through memory keys, as the DMA
 * engine copies one: every element (and the digest's destination) is
 * translated and checked before the first byte is read, so a refused
 * operation changes neither memory nor the running hash. Memory of another
 * process (remote keys) is read through a bounded bounce buffer in chunks.
 *
 * A hw_sha_state is one running hash (OpenSSL EVP). An engine owns the
 * fetched algorithms and a few lanes: states for one-shot hashes, taken with
 * one atomic exchange, so a job needs no allocation.
 */
#ifndef HW_SHA_H_
#define HW_SHA_H_

#include <stdbool.h>
#include <stdint.h>

#include "hw_dma.h"
#include "hw_mem.h"

enum hw_sha_alg {
	HW_SHA_1,
	HW_SHA_256,
	HW_SHA_512,
	HW_SHA_NUM_ALGS,
};

#define HW_SHA_MAX_DIGEST 64
#define HW_SHA_MAX_SGE 64

static inline uint32_t hw_sha_digest_size(enum hw_sha_alg alg)
{
	static const uint32_t size[HW_SHA_NUM_ALGS] = { 20, 32, 64 };

	return size[alg];
}

/* Segments of a multi-segment message must be multiples of this (FIPS 180-4 block). */
static inline uint32_t hw_sha_block_size(enum hw_sha_alg alg)
{
	return alg == HW_SHA_512 ? 128 : 64;
}

struct hw_sha_engine;
struct hw_sha_state;

struct hw_sha_engine *hw_sha_engine_new(void);
void hw_sha_engine_free(struct hw_sha_engine *eng);

/* A state of its own (a partial session's); the engine must outlive it. */
struct hw_sha_state *hw_sha_state_new(struct hw_sha_engine *eng);
void hw_sha_state_free(struct hw_sha_state *st);

/* The algorithm of st's message (of the last start or copy). */
enum hw_sha_alg hw_sha_state_alg(const struct hw_sha_state *st);
/* Starts a new message on st, dropping any unfinished one. */
enum hw_status hw_sha_start(struct hw_sha_state *st, enum hw_sha_alg alg);

/* Makes dst continue the message of src (same algorithm, same bytes absorbed). */
enum hw_status hw_sha_copy(struct hw_sha_state *dst, const struct hw_sha_state *src);

/*
 * One engine step on a started message: absorbs src[0..nsrc) in order and,
 * when dst is not NULL, writes the digest at dst->addr (dst->len is the room
 * there) and ends the message. All keys must belong to domain pd_id. Errors
 * found by the checks leave st and memory as they were; a remote read that
 * fails part-way leaves st with part of the data (the caller ends the message).
 */
enum hw_status hw_sha_step(struct hw_sha_state *st, uint32_t pd_id, const struct hw_sge *src, uint32_t nsrc,
			   const struct hw_sge *dst);

/* A whole message in one step, on one of the engine's lanes. */
enum hw_status hw_sha_oneshot(struct hw_sha_engine *eng, enum hw_sha_alg alg, uint32_t pd_id,
			      const struct hw_sge *src, uint32_t nsrc, const struct hw_sge *dst);

#endif /* HW_SHA_H_ */
