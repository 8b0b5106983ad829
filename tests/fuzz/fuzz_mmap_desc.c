/*
 * Fuzz target: the mmap export descriptor parser (src/fabric/fab_desc.c).
 * Any input either is refused or decodes to a descriptor whose encoding is
 * the input again (the format has exactly one spelling of each descriptor).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fab_desc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[FAB_DESC_MAX];
	struct fab_export_desc d;
	size_t n;

	if (fab_desc_decode(data, size, &d) != FAB_DESC_OK)
		return 0;
	n = fab_desc_encode(&d, out);
	if (n != size || memcmp(out, data, size) != 0)
		abort();
	return 0;
}
