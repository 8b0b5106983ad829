/*
 * Fuzz target: the sync event export blob parser
 * (src/doca/sync_event/se_blob.c). Any input is refused or decodes to a blob
 * whose encoding is the input again.
 */
#include <stdlib.h>
#include <string.h>

#include "se_blob.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[DSE_BLOB_LEN];
	struct dse_blob b;

	if (!dse_blob_decode(data, size, &b))
		return 0;
	dse_blob_encode(&b, out);
	if (size != DSE_BLOB_LEN || memcmp(out, data, size) != 0)
		abort();
	return 0;
}
