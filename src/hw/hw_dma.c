/*
 * hw_dma — checked scatter/gather copies, local and remote.
 */
#include "hw_dma.h"

#include <stdlib.h>
#include <string.h>

#define HW_DMA_MAX_SGE 64
#define HW_BOUNCE_SIZE (1u << 20) /* remote-to-remote copies go through this much local memory at a time */

struct seg {
	uint8_t *p;		 /* local address, or NULL for remote memory */
	const struct hw_mkey *mk; /* the key's entry (its rops for remote memory) */
	uint64_t addr;		 /* address in the key's space */
	uint64_t len;
};

static enum hw_status translate(uint32_t pd_id, const struct hw_sge *sge, uint32_t n, struct seg *out,
				uint64_t *total)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < n; i++) {
		const struct hw_mkey *mk = hw_mkey_lookup(sge[i].key);
		enum hw_status st;

		if (mk == NULL)
			return HW_ERR_KEY;
		st = hw_mkey_check(mk, pd_id, sge[i].addr, sge[i].len, sge[i].access, &out[i].p);
		if (st != HW_OK)
			return st;
		out[i].mk = mk;
		out[i].addr = sge[i].addr;
		out[i].len = sge[i].len;
		sum += sge[i].len;
	}
	*total = sum;
	return HW_OK;
}

static int overlaps(const struct seg *a, const struct seg *b)
{
	/* Remote memory lives in another address space: only local ranges can collide. */
	if (a->p == NULL || b->p == NULL)
		return 0;
	return a->len != 0 && b->len != 0 && a->p < b->p + b->len && b->p < a->p + a->len;
}

static enum hw_status check_overlap(const struct seg *s, uint32_t ns, const struct seg *d, uint32_t nd)
{
	for (uint32_t i = 0; i < ns; i++)
		for (uint32_t j = 0; j < nd; j++)
			if (overlaps(&s[i], &d[j]))
				return HW_ERR_OVERLAP;
	return HW_OK;
}

/* Remote to remote: read a chunk into local memory, then write it out. */
static enum hw_status bounce(const struct seg *s, uint64_t soff, const struct seg *d, uint64_t doff, uint64_t n)
{
	uint64_t chunk = n < HW_BOUNCE_SIZE ? n : HW_BOUNCE_SIZE;
	uint8_t *buf = malloc(chunk);
	enum hw_status st = HW_OK;

	if (buf == NULL)
		return HW_ERR_NOMEM;
	for (uint64_t off = 0; off < n && st == HW_OK; off += chunk) {
		uint64_t m = n - off < chunk ? n - off : chunk;

		st = s->mk->rops->read(s->mk->rctx, s->addr + soff + off, buf, m);
		if (st == HW_OK)
			st = d->mk->rops->write(d->mk->rctx, d->addr + doff + off, buf, m);
	}
	free(buf);
	return st;
}

/* Moves n bytes from source segment offset soff to destination segment offset doff. */
static enum hw_status move(const struct seg *s, uint64_t soff, const struct seg *d, uint64_t doff, uint64_t n)
{
	if (s->p != NULL && d->p != NULL) {
		hw_copy_large(d->p + doff, s->p + soff, n);
		return HW_OK;
	}
	if (s->p == NULL && d->p != NULL)
		return s->mk->rops->read(s->mk->rctx, s->addr + soff, d->p + doff, n);
	if (s->p != NULL)
		return d->mk->rops->write(d->mk->rctx, d->addr + doff, s->p + soff, n);
	return bounce(s, soff, d, doff, n);
}

/* Streams the source segments into the destination segments. */
static enum hw_status scatter(const struct seg *s, uint32_t ns, const struct seg *d, uint32_t nd)
{
	uint32_t j = 0;
	uint64_t doff = 0;

	for (uint32_t i = 0; i < ns; i++) {
		uint64_t soff = 0;

		while (soff < s[i].len) {
			uint64_t n = s[i].len - soff;
			enum hw_status st;

			/* Capacity was checked, so a later element has room. */
			while (doff == d[j].len && j + 1 < nd) {
				j++;
				doff = 0;
			}
			if (n > d[j].len - doff)
				n = d[j].len - doff;
			st = move(&s[i], soff, &d[j], doff, n);
			if (st != HW_OK)
				return st;
			soff += n;
			doff += n;
		}
	}
	return HW_OK;
}

enum hw_status hw_dma_copy(uint32_t pd_id, const struct hw_sge *src, uint32_t nsrc, const struct hw_sge *dst,
			   uint32_t ndst, uint64_t *copied)
{
	struct seg s[HW_DMA_MAX_SGE], d[HW_DMA_MAX_SGE];
	uint64_t stotal, dtotal;
	enum hw_status st;

	if (nsrc == 0 || ndst == 0 || nsrc > HW_DMA_MAX_SGE || ndst > HW_DMA_MAX_SGE)
		return HW_ERR_INVAL;
	st = translate(pd_id, src, nsrc, s, &stotal);
	if (st == HW_OK)
		st = translate(pd_id, dst, ndst, d, &dtotal);
	if (st != HW_OK)
		return st;
	if (stotal > dtotal)
		return HW_ERR_LENGTH;
	st = check_overlap(s, nsrc, d, ndst);
	if (st != HW_OK)
		return st;
	st = scatter(s, nsrc, d, ndst);
	if (st == HW_OK)
		*copied = stotal;
	return st;
}
