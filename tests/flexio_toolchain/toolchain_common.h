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
#define TC_MISC_RET(h) (-(int32_t)((h) % 1000003u) - 1)

#endif
