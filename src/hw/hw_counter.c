/*
 * hw_counter — flow counters (hw_counter.h). Ids come from one process-wide
 * sequence, so two live counters never share one (2^24 allocations would
 * have to pass while one lives to wrap onto it).
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "hw_counter.h"

#define CTR_ID_MASK 0xffffffu

struct hw_counter {
	_Atomic uint64_t packets;
	_Atomic uint64_t bytes;
	uint32_t id;
};

static _Atomic uint32_t ctr_next_id;

enum hw_status hw_counter_alloc(struct hw_counter **out)
{
	struct hw_counter *c;
	uint32_t id;

	if (out == NULL)
		return HW_ERR_INVAL;
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return HW_ERR_NOMEM;
	do /* 0 is no counter */
		id = (atomic_fetch_add_explicit(&ctr_next_id, 1, memory_order_relaxed) + 1) & CTR_ID_MASK;
	while (id == 0);
	c->id = id;
	*out = c;
	return HW_OK;
}

void hw_counter_free(struct hw_counter *c)
{
	free(c);
}

uint32_t hw_counter_id(const struct hw_counter *c)
{
	return c->id;
}

void hw_counter_add(struct hw_counter *c, uint64_t bytes)
{
	atomic_fetch_add_explicit(&c->packets, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&c->bytes, bytes, memory_order_relaxed);
}

void hw_counter_read(struct hw_counter *c, bool clear, uint64_t *packets, uint64_t *bytes)
{
	if (clear) {
		*packets = atomic_exchange_explicit(&c->packets, 0, memory_order_relaxed);
		*bytes = atomic_exchange_explicit(&c->bytes, 0, memory_order_relaxed);
		return;
	}
	*packets = atomic_load_explicit(&c->packets, memory_order_relaxed);
	*bytes = atomic_load_explicit(&c->bytes, memory_order_relaxed);
}
