/*
 * Fuzz target: the descriptor parser past its checksums. The input's size
 * field and checksums are recomputed first, so mutations reach the field and
 * section validation instead of dying at the checksum.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fab_desc.h"

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[FAB_DESC_MAX], out[FAB_DESC_MAX];
	struct fab_export_desc d;

	if (size < FAB_DESC_SIZE || size > FAB_DESC_MAX)
		return 0;
	memcpy(buf, data, size);
	put32(buf + 12, (uint32_t)size);
	put32(buf + 88, fab_crc32(buf, 88));
	if (size > FAB_DESC_SIZE + 4)
		put32(buf + size - 4, fab_crc32(buf, size - 4));
	if (fab_desc_decode(buf, size, &d) != FAB_DESC_OK)
		return 0;
	if (fab_desc_encode(&d, out) != size || memcmp(out, buf, size) != 0)
		abort();
	return 0;
}
