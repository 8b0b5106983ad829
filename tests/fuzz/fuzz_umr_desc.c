/*
 * Fuzz target: the description of a UMR pattern another process publishes
 * with its key (hw_umr_from_desc), as this process rebuilds the pattern over
 * its views of the entries' keys. Any bytes are refused or give a pattern
 * whose every byte lies inside the keys it names: its first and last bytes
 * are read back through the cursor without leaving them (ASan watches).
 */
#include <stdlib.h>
#include <string.h>

#include "hw_umr.h"

#define KEY_LEN 65536u

static uint8_t *mem;
static struct hw_mkey keys[2];

/* Keys 0x100 and 0x200 are plain keys over the two halves of mem; any other is out of reach. */
static const struct hw_mkey *inner(uint32_t key)
{
	if (key == 0x100 || key == 0x200)
		return &keys[(key >> 8) - 1];
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t out[4096];
	struct hw_umr *u;
	uint64_t n;

	if (mem == NULL) {
		mem = malloc(2 * KEY_LEN);
		if (mem == NULL)
			abort();
		for (int i = 0; i < 2; i++)
			keys[i] = (struct hw_mkey){ .base = mem + i * KEY_LEN, .addr = 0, .len = KEY_LEN,
						    .key = (uint32_t)(i + 1) << 8 };
	}
	u = hw_umr_from_desc(data, size > 4096 ? 4096 : (uint32_t)size, inner);
	if (u == NULL)
		return 0;
	if (u->total == 0 || u->n == 0)
		abort();
	n = u->total < sizeof(out) ? u->total : sizeof(out);
	hw_umr_read(u, 0, out, n);
	hw_umr_read(u, u->total - n, out, n);
	hw_umr_free(u);
	return 0;
}
