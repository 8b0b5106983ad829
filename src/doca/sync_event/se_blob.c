/*
 * se_blob — encoding and strict parsing of the Sync Event export descriptor.
 *
 * Fixed 80 bytes, little-endian:
 *   0 magic "SDPUSEVT" | 8 u16 version | 10 u16 length | 12 u32 pid
 *  16 i32 fd | 20 u32 segment length | 24 name key[16] | 40 capability key[16]
 *  56 host id[16] | 72 u32 reserved (0) | 76 u32 CRC-32 of bytes 0..75
 */
#include "se_blob.h"

#include "fab_wire.h"

#include <string.h>

static const uint8_t dse_magic[8] = { 'S', 'D', 'P', 'U', 'S', 'E', 'V', 'T' };

enum {
	OFF_MAGIC = 0,
	OFF_VERSION = 8,
	OFF_LEN = 10,
	OFF_PID = 12,
	OFF_FD = 16,
	OFF_SEG_LEN = 20,
	OFF_NAME = 24,
	OFF_CAP = 40,
	OFF_HOST = 56,
	OFF_RSVD = 72,
	OFF_CSUM = 76,
};




void dse_blob_encode(const struct dse_blob *b, uint8_t out[DSE_BLOB_LEN])
{
	memset(out, 0, DSE_BLOB_LEN);
	memcpy(out + OFF_MAGIC, dse_magic, sizeof(dse_magic));
	fab_put_le(out + OFF_VERSION, DSE_BLOB_VERSION, 2);
	fab_put_le(out + OFF_LEN, DSE_BLOB_LEN, 2);
	fab_put_le(out + OFF_PID, b->pid, 4);
	fab_put_le(out + OFF_FD, (uint32_t)b->fd, 4);
	fab_put_le(out + OFF_SEG_LEN, b->seg_len, 4);
	memcpy(out + OFF_NAME, b->name_key, sizeof(b->name_key));
	memcpy(out + OFF_CAP, b->cap_key, sizeof(b->cap_key));
	memcpy(out + OFF_HOST, b->host_id, sizeof(b->host_id));
	fab_put_le(out + OFF_CSUM, fab_crc32(out, OFF_CSUM), 4);
}

bool dse_blob_decode(const uint8_t *in, size_t len, struct dse_blob *b)
{
	if (in == NULL || len != DSE_BLOB_LEN)
		return false;
	if (memcmp(in + OFF_MAGIC, dse_magic, sizeof(dse_magic)) != 0)
		return false;
	if (fab_get_le(in + OFF_VERSION, 2) != DSE_BLOB_VERSION || fab_get_le(in + OFF_LEN, 2) != DSE_BLOB_LEN)
		return false;
	if (fab_get_le(in + OFF_CSUM, 4) != fab_crc32(in, OFF_CSUM) || fab_get_le(in + OFF_RSVD, 4) != 0)
		return false;
	b->pid = fab_get_le(in + OFF_PID, 4);
	b->fd = (int32_t)fab_get_le(in + OFF_FD, 4);
	b->seg_len = fab_get_le(in + OFF_SEG_LEN, 4);
	if (b->pid == 0 || b->fd < 0 || b->seg_len == 0)
		return false;
	memcpy(b->name_key, in + OFF_NAME, sizeof(b->name_key));
	memcpy(b->cap_key, in + OFF_CAP, sizeof(b->cap_key));
	memcpy(b->host_id, in + OFF_HOST, sizeof(b->host_id));
	return true;
}
