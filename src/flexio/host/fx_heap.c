/*
 * fx_heap — a process's device heap: one reserved arena (pages committed as
 * touched), carved first-fit into 64-byte aligned buffers; a freed buffer
 * merges with free neighbours. A device address is the buffer's address in
 * this process, so device code dereferences it as it is.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "fx_int.h"

#define FX_HEAP_ALIGN 64u

int fx_heap_init(struct fx_heap *h, uint64_t size)
{
	memset(h, 0, sizeof(*h));
	h->base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (h->base == MAP_FAILED) {
		h->base = NULL;
		return -1;
	}
	h->b = malloc(16 * sizeof(*h->b));
	if (h->b == NULL) {
		munmap(h->base, size);
		h->base = NULL;
		return -1;
	}
	h->cap = 16;
	h->n = 1;
	h->b[0] = (struct fx_block){ .off = 0, .len = size, .used = false };
	h->size = size;
	return 0;
}

void fx_heap_fini(struct fx_heap *h)
{
	if (h->base != NULL)
		munmap(h->base, h->size);
	free(h->b);
	memset(h, 0, sizeof(*h));
}

/* Splits block i at len: i keeps len bytes, a new free block follows with the rest. */
static int fx_heap_split(struct fx_heap *h, uint32_t i, uint64_t len)
{
	if (h->n == h->cap) {
		struct fx_block *nb = realloc(h->b, 2 * h->cap * sizeof(*nb));

		if (nb == NULL)
			return -1;
		h->b = nb;
		h->cap *= 2;
	}
	memmove(&h->b[i + 2], &h->b[i + 1], (h->n - i - 1) * sizeof(*h->b));
	h->b[i + 1] = (struct fx_block){ .off = h->b[i].off + len, .len = h->b[i].len - len, .used = false };
	h->b[i].len = len;
	h->n++;
	return 0;
}

flexio_uintptr_t fx_heap_alloc(struct fx_heap *h, uint64_t len)
{
	uint64_t need;

	if (len == 0 || len > h->size)
		return 0;
	need = (len + FX_HEAP_ALIGN - 1) & ~(uint64_t)(FX_HEAP_ALIGN - 1);
	for (uint32_t i = 0; i < h->n; i++) {
		struct fx_block *b = &h->b[i];

		if (b->used || b->len < need)
			continue;
		if (b->len > need && fx_heap_split(h, i, need) != 0)
			return 0;
		h->b[i].used = true;
		h->in_use += need;
		return (flexio_uintptr_t)(uintptr_t)(h->base + h->b[i].off);
	}
	return 0;
}

/* The index of the block starting at daddr, or -1. */
static int64_t fx_heap_find(const struct fx_heap *h, flexio_uintptr_t daddr)
{
	uint64_t off;
	uint32_t lo = 0, hi;

	if (h->base == NULL || daddr < (uintptr_t)h->base || daddr >= (uintptr_t)h->base + h->size)
		return -1;
	off = daddr - (uintptr_t)h->base;
	hi = h->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (h->b[mid].off + h->b[mid].len <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < h->n ? (int64_t)lo : -1;
}

int fx_heap_free(struct fx_heap *h, flexio_uintptr_t daddr)
{
	int64_t i = fx_heap_find(h, daddr);

	if (i < 0 || !h->b[i].used || h->base + h->b[i].off != (uint8_t *)(uintptr_t)daddr)
		return -1; /* not the start of a buffer in use */
	h->b[i].used = false;
	h->in_use -= h->b[i].len;
	if ((uint32_t)i + 1 < h->n && !h->b[i + 1].used) {
		h->b[i].len += h->b[i + 1].len;
		memmove(&h->b[i + 1], &h->b[i + 2], (h->n - i - 2) * sizeof(*h->b));
		h->n--;
	}
	if (i > 0 && !h->b[i - 1].used) {
		h->b[i - 1].len += h->b[i].len;
		memmove(&h->b[i], &h->b[i + 1], (h->n - i - 1) * sizeof(*h->b));
		h->n--;
	}
	return 0;
}

bool fx_heap_owns(const struct fx_heap *h, flexio_uintptr_t daddr, uint64_t len)
{
	int64_t i = fx_heap_find(h, daddr);

	return i >= 0 && h->b[i].used && len <= h->b[i].off + h->b[i].len - (daddr - (uintptr_t)h->base);
}
