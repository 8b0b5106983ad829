/*
 * Fuzz target: doca_mmap_create_from_export with arbitrary bytes, through the
 * whole stack (descriptor parser, export table lookup, import rules). Nothing
 * may crash; anything that is accepted must be destroyable.
 */
#include <stdint.h>
#include <stdlib.h>

#include "doca_dev.h"
#include "doca_mmap.h"

static struct doca_dev *dev;

static void open_dev(void)
{
	struct doca_devinfo **list;
	uint32_t n;

	if (doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS || n == 0)
		abort();
	if (doca_dev_open(list[0], &dev) != DOCA_SUCCESS)
		abort();
	doca_devinfo_list_destroy(list);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct doca_mmap *m = NULL;

	if (dev == NULL)
		open_dev();
	if (doca_mmap_create_from_export(NULL, data, size, dev, &m) == DOCA_SUCCESS && doca_mmap_destroy(m) != DOCA_SUCCESS)
		abort();
	return 0;
}
