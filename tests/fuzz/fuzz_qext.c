/*
 * Fuzz target: the backing a queue's record gives for a ring and doorbell
 * record its creator gave (src/fabric/fab_qext.c), which any process of the
 * user can rewrite. The input is XORed onto a valid backing of this
 * process's own (its last 8 bytes, when there are more, onto the lengths
 * asked), so an empty input is the valid one. Whatever maps must hold the
 * lengths asked, readable to the last byte (a fault ends the run).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fab_qext.h"

#define RING_LEN (2 * 4096 + 192)

static uint8_t valid[HW_QEXT_BACKING_MAX];
static uint32_t valid_len;
/* Kept for the whole run (reachable: not a leak). */
static uint8_t *ring;
static uint64_t *dbrec;
static void *handle;

static void setup(void)
{
	ring = aligned_alloc(4096, 3 * 4096);
	dbrec = aligned_alloc(64, 64);

	if (ring == NULL || dbrec == NULL ||
	    fab_qext_adopt(ring + 64, RING_LEN, dbrec, 8, valid, &valid_len, &handle) != HW_OK)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t b[HW_QEXT_BACKING_MAX];
	uint32_t lens[2] = { RING_LEN, 8 };
	void *r = NULL, *d = NULL, *m;
	volatile uint8_t sum = 0;

	if (valid_len == 0)
		setup();
	memcpy(b, valid, valid_len);
	for (size_t i = 0; i < size && i < valid_len; i++)
		b[i] ^= data[i];
	if (size >= valid_len + sizeof(lens)) {
		uint32_t x[2];

		memcpy(x, data + valid_len, sizeof(x));
		lens[0] ^= x[0] & 0xfffff; /* up to 1 MiB: enough to pass the owner's memory */
		lens[1] ^= x[1] & 0xfff;
	}
	m = fab_qext_attach(b, valid_len, lens[0], lens[1], &r, &d);
	if (m == NULL)
		return 0;
	if (d == NULL || (lens[0] != 0 && r == NULL))
		abort();
	for (uint32_t i = 0; i < lens[0]; i++)
		sum += ((volatile uint8_t *)r)[i];
	for (uint32_t i = 0; i < lens[1]; i++)
		sum += ((volatile uint8_t *)d)[i];
	fab_qext_detach(m);
	return 0;
}
