/*
 * hw_dma — the emulated DMA engine.
 *
 * A copy is described by scatter/gather lists of (key, address, length, right).
 * The engine translates and checks every element first and copies only when
 * all of them pass, so a refused job never touches memory.
 */
#ifndef HW_DMA_H_
#define HW_DMA_H_

#include <stdint.h>
#include <string.h>

#include "hw_copy.h"
#include "hw_mem.h"

struct hw_sge {
	uint32_t key;
	uint32_t access; /* enum hw_access right the element needs */
	uint64_t addr;
	uint64_t len;
};

/*
 * Copies the bytes of src[0..nsrc) into dst[0..ndst) in order, filling each
 * destination element before the next. All keys must belong to domain pd_id.
 * Keys of remote memory are reached through their hw_remote_ops; a remote
 * failure part-way leaves the destination partly written, as a DMA engine
 * whose link dropped would. On success *copied is the number of bytes moved.
 */
enum hw_status hw_dma_copy(uint32_t pd_id, const struct hw_sge *src, uint32_t nsrc, const struct hw_sge *dst,
			   uint32_t ndst, uint64_t *copied);

/*
 * Copies len bytes. Up to 64 bytes, two overlapping fixed-size moves the
 * compiler turns into a few vector loads and stores: cheaper than a call into
 * the C library for the small jobs that dominate descriptor-sized traffic.
 * Large copies stream past the cache (hw_copy.h).
 */
/* 16 bytes at any alignment, aliasing anything. */
typedef uint8_t hw_dma_u128 __attribute__((vector_size(16), aligned(1), may_alias));

static inline void hw_copy(uint8_t *d, const uint8_t *s, uint64_t len)
{
	if (len > 64) {
		hw_copy_large(d, s, len);
	} else if (len >= 32) {
		/* Head and tail in registers (overlapping when len < 64): all loads before any store. */
		const hw_dma_u128 *sv = (const hw_dma_u128 *)(const void *)s;
		const hw_dma_u128 *st = (const hw_dma_u128 *)(const void *)(s + len - 32);
		hw_dma_u128 a = sv[0], b = sv[1], c = st[0], e = st[1];
		hw_dma_u128 *dv = (hw_dma_u128 *)(void *)d, *dt = (hw_dma_u128 *)(void *)(d + len - 32);

		dv[0] = a;
		dv[1] = b;
		dt[0] = c;
		dt[1] = e;
	} else if (len >= 8) {
		uint64_t a, b;

		memcpy(&a, s, 8);
		memcpy(&b, s + len - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + len - 8, &b, 8);
		if (len > 16) {
			memcpy(&a, s + 8, 8);
			memcpy(&b, s + len - 16, 8);
			memcpy(d + 8, &a, 8);
			memcpy(d + len - 16, &b, 8);
		}
	} else {
		for (uint64_t i = 0; i < len; i++)
			d[i] = s[i];
	}
}

/*
 * The one-segment case, inline: most jobs move one buffer to one buffer, and
 * a cached table entry saves the lookup. An entry whose key changed (freed or
 * reused) is refused, as a stale key is. Same checks, same order of errors.
 */
static inline enum hw_status hw_dma_copy1(uint32_t pd_id, const struct hw_mkey *smk, uint32_t skey, uint64_t saddr,
					  uint64_t len, uint32_t sacc, const struct hw_mkey *dmk, uint32_t dkey,
					  uint64_t daddr, uint64_t room, uint32_t dacc)
{
	uint8_t *s, *d;
	enum hw_status st;

	if (smk == NULL || dmk == NULL || smk->key != skey || dmk->key != dkey)
		return HW_ERR_KEY;
	if (smk->rops != NULL || dmk->rops != NULL)
		return HW_ERR_INVAL; /* remote memory takes hw_dma_copy */
	st = hw_mkey_check(smk, pd_id, saddr, len, sacc, &s);
	if (st != HW_OK)
		return st;
	st = hw_mkey_check(dmk, pd_id, daddr, room, dacc, &d);
	if (st != HW_OK)
		return st;
	if (len > room)
		return HW_ERR_LENGTH;
	if (len != 0 && s < d + len && d < s + len)
		return HW_ERR_OVERLAP;
	hw_copy(d, s, len);
	return HW_OK;
}

#endif /* HW_DMA_H_ */
