/* Extended (masked) atomics: decoding and execution (hw_xatomic.h). */
#include "hw_xatomic.h"

#include <endian.h>
#include <string.h>

#include "hw_prm.h"

bool hw_xatomic_shape(uint8_t opcode, uint8_t opmod, struct hw_xatomic *x)
{
	memset(x, 0, sizeof(*x));
	x->cs = opcode == HW_WQE_ATOMIC_MASKED_CS;
	if (opmod == HW_WQE_OPMOD_EXT_ATOMIC(2))
		x->size = 4;
	else if (opmod == HW_WQE_OPMOD_EXT_ATOMIC(3))
		x->size = 8;
	else
		return false; /* 1 and 2 bytes, and 16 or more, are not advertised */
	x->seg_len = x->cs && x->size == 8 ? 32 : 16;
	return true;
}

static uint32_t xa_be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return be32toh(v);
}

static uint64_t xa_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return be64toh(v);
}

void hw_xatomic_load(struct hw_xatomic *x, const uint8_t *seg)
{
	if (x->size == 4) {
		/* CS: swap, compare, swap_mask, compare_mask; FA: add, field boundary, reserved */
		x->swap_add = xa_be32(seg);
		x->compare = xa_be32(seg + 4);
		if (x->cs) {
			x->swap_mask = xa_be32(seg + 8);
			x->compare_mask = xa_be32(seg + 12);
		}
		return;
	}
	/* CS: swap, compare, swap_mask, compare_mask (two segments); FA: add, field boundary */
	x->swap_add = xa_be64(seg);
	x->compare = xa_be64(seg + 8);
	if (x->cs) {
		x->swap_mask = xa_be64(seg + 16);
		x->compare_mask = xa_be64(seg + 24);
	}
}

uint64_t hw_xatomic_field_add(uint64_t a, uint64_t b, uint64_t boundary, uint32_t bits)
{
	uint64_t sum = 0, carry = 0;

	for (uint32_t i = 0; i < bits; i++) {
		uint64_t x = a >> i & 1, y = b >> i & 1;

		sum |= (x ^ y ^ carry) << i;
		carry = (x & y) | (carry & (x ^ y));
		if (boundary >> i & 1)
			carry = 0;
	}
	return sum;
}

static uint64_t xa_new(const struct hw_xatomic *x, uint64_t old, bool *store)
{
	*store = true;
	if (!x->cs)
		return hw_xatomic_field_add(old, x->swap_add, x->compare, x->size * 8);
	if (((old ^ x->compare) & x->compare_mask) != 0) {
		*store = false;
		return old;
	}
	return (old & ~x->swap_mask) | (x->swap_add & x->swap_mask);
}

uint64_t hw_xatomic_run(const struct hw_xatomic *x, void *target)
{
	bool store;

	if (x->size == 4) {
		uint32_t *t = target, old = __atomic_load_n(t, __ATOMIC_SEQ_CST), nv;

		do {
			nv = (uint32_t)xa_new(x, old, &store);
		} while (store && !__atomic_compare_exchange_n(t, &old, nv, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
		return old;
	}
	uint64_t *t = target, old = __atomic_load_n(t, __ATOMIC_SEQ_CST), nv;

	do {
		nv = xa_new(x, old, &store);
	} while (store && !__atomic_compare_exchange_n(t, &old, nv, true, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
	return old;
}

void hw_xatomic_result(const struct hw_xatomic *x, uint64_t old, void *out)
{
	if (x->size == 4) {
		uint32_t v = htobe32((uint32_t)old);

		memcpy(out, &v, sizeof(v));
		return;
	}
	memcpy(out, &old, sizeof(old));
}
