/*
 * fab_wire — the byte-level helpers every wire format of the fabric shares:
 * little-endian fields and the CRC-32 that guards descriptors against
 * corruption (forgery is the capability keys' job).
 */
#ifndef FAB_WIRE_H_
#define FAB_WIRE_H_

#include <stddef.h>
#include <stdint.h>

static inline void fab_put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint64_t fab_get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* CRC-32 (IEEE). */
uint32_t fab_crc32(const uint8_t *p, size_t n);

#endif /* FAB_WIRE_H_ */
