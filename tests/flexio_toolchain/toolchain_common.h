/*
 * Shared by the device sources of the dpacc tests and the host programs that
 * check them: an order-dependent mix of argument values, so that a device
 * function's result proves each argument arrived intact and in its place.
 */
#ifndef TOOLCHAIN_COMMON_H
#define TOOLCHAIN_COMMON_H

#include <stdint.h>

static inline uint64_t tc_mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull + 0x9e3779b97f4a7c15ull;
}

/* Signed values enter sign-extended, unsigned ones zero-extended. */
#define TC_MIXS(h, v) tc_mix((h), (uint64_t)(int64_t)(v))
#define TC_MIXU(h, v) tc_mix((h), (uint64_t)(v))

/* What rpc_misc returns for a mix h: always negative, to check sign extension. */
/* Struct and union arguments (rpc_structs, rpc_pair_late): 8, 16 and 48 bytes. */
struct tc_small {
	uint32_t a;
	uint16_t b;
};
struct tc_pair {
	uint64_t x, y;
};
struct tc_big {
	uint64_t v[5];
	uint8_t tail;
};
union tc_word {
	uint64_t u;
	double d; /* merged with the integer member: passed as an integer */
};

static inline uint64_t tc_mix_big(uint64_t h, const struct tc_big *b)
{
	for (int k = 0; k < 5; k++)
		h = tc_mix(h, b->v[k]);
	return tc_mix(h, b->tail);
}

#define TC_MISC_RET(h) (-(int32_t)((h) % 1000003u) - 1)

#endif
