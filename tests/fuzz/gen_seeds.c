/* Writes valid export descriptors into a seed corpus directory (argv[1]). */
#include <stdio.h>
#include <string.h>

#include "fab_desc.h"
#include "hw_mem.h"

static void write_seed(const char *dir, const char *name, const uint8_t *p, size_t n)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (f == NULL)
		return;
	fwrite(p, 1, n, f);
	fclose(f);
}

int main(int argc, char **argv)
{
	static uint8_t out[FAB_DESC_MAX];
	struct fab_export_desc d;

	if (argc != 2)
		return 2;
	memset(&d, 0, sizeof(d));
	d.kind = FAB_EXPORT_RDMA;
	d.pid = 1;
	d.access = HW_ACCESS_REMOTE_READ | HW_ACCESS_REMOTE_WRITE;
	d.mkey = 0x100;
	d.addr = 0x10000;
	d.len = 4096;
	d.export_id = 1;
	write_seed(argv[1], "plain", out, fab_desc_encode(&d, out));
	d.nsect = 1;
	d.sect[0].xport = FAB_XPORT_UCX;
	d.sect[0].info.len = 40;
	memset(d.sect[0].info.data, 0xab, 40);
	write_seed(argv[1], "with_section", out, fab_desc_encode(&d, out));
	return 0;
}
