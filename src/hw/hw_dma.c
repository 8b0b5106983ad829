/*
 * hw_dma — checked scatter/gather copies.
 */
#include "hw_dma.h"

#include <string.h>

#define HW_DMA_MAX_SGE 64

struct seg {
	uint8_t *p;
	uint64_t len;
};

static enum hw_status translate(uint32_t pd_id, const struct hw_sge *sge, uint32_t n, struct seg *out,
				uint64_t *total)
{
	uint64_t sum = 0;

	for (uint32_t i = 0; i < n; i++) {
		enum hw_status st = hw_mkey_translate(sge[i].key, pd_id, sge[i].addr, sge[i].len, sge[i].access,
						      &out[i].p);

		if (st != HW_OK)
			return st;
		out[i].len = sge[i].len;
		sum += sge[i].len;
	}
	*total = sum;
	return HW_OK;
}

static int overlaps(const struct seg *a, const struct seg *b)
{
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

/* Streams the source segments into the destination segments. */
static void scatter(const struct seg *s, uint32_t ns, const struct seg *d, uint32_t nd)
{
	uint32_t j = 0;
	uint64_t doff = 0;

	for (uint32_t i = 0; i < ns; i++) {
		uint64_t soff = 0;

		while (soff < s[i].len) {
			uint64_t n = s[i].len - soff;

			/* Capacity was checked, so a later element has room. */
			while (doff == d[j].len && j + 1 < nd) {
				j++;
				doff = 0;
			}
			if (n > d[j].len - doff)
				n = d[j].len - doff;
			memcpy(d[j].p + doff, s[i].p + soff, n);
			soff += n;
			doff += n;
		}
	}
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
	if (nsrc == 1 && ndst == 1)
		memcpy(d[0].p, s[0].p, s[0].len);
	else
		scatter(s, nsrc, d, ndst);
	*copied = stotal;
	return HW_OK;
}
