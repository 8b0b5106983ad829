/* Writes valid export descriptors and verbs calls between machines into a seed corpus directory (argv[1]). */
#include <stdio.h>
#include <string.h>

#include "fab_desc.h"
#include "fab_wire.h"
#include "fab_xm.h"
#include "hw_mem.h"
#include "hw_prm.h"
#include "hw_qp.h"

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

/* One request record (fab_xm.h) at p; its size with the payload (zeros) it carries. */
static size_t xm_record(uint8_t *p, uint8_t opcode, uint64_t len, uint32_t seq)
{
	bool out = opcode != HW_WQE_RDMA_READ;

	memset(p, 0, FAB_XM_REQ_SIZE + (out ? len : 0));
	fab_put_le(p, FAB_XM_REQ_MAGIC, 4);
	fab_put_le(p + 4, FAB_XM_VERSION, 2);
	p[6] = HW_QPT_RC;
	p[7] = opcode;
	fab_put_le(p + 8, 0x7f000002, 4);
	fab_put_le(p + 12, 0x100, 4);
	fab_put_le(p + 16, 0x200, 4);
	fab_put_le(p + 24, 0x10000, 8);
	fab_put_le(p + 32, 0x300, 4);
	fab_put_le(p + 56, len, 8);
	fab_put_le(p + 112, seq, 4);
	fab_put_le(p + 116, 9, 4);
	return FAB_XM_REQ_SIZE + (out ? len : 0);
}

static void xm_seeds(const char *dir)
{
	static uint8_t call[4 * (FAB_XM_REQ_SIZE + 64)];
	size_t n;

	n = xm_record(call, HW_WQE_RDMA_WRITE, 64, 1);
	write_seed(dir, "xm_write", call, n);
	n += xm_record(call + n, HW_WQE_RDMA_READ, 64, 2);
	n += xm_record(call + n, HW_WQE_SEND, 16, 3);
	write_seed(dir, "xm_call_of_three", call, n);
	/* A UD datagram: its 40-byte network header, then 24 bytes of payload. */
	n = xm_record(call, HW_WQE_SEND_IMM, HW_UD_GRH_BYTES + 24, 0);
	call[6] = HW_QPT_UD;
	write_seed(dir, "xm_ud_datagram", call, n);
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
	xm_seeds(argv[1]);
	return 0;
}
