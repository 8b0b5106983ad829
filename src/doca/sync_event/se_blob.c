/*
 * se_blob — encoding and strict parsing of the Sync Event export descriptor.
 *
 * Fixed 80 bytes, little-endian:
 *   0 magic "SDPUSEVT" | 8 u16 version | 10 u16 length | 12 u32 pid
 *  16 i32 fd | 20 u32 segment length | 24 name key[16] | 40 capability key[16]
 *  56 host id[16] | 72 u32 reserved (0) | 76 u32 CRC-32 of bytes 0..75
 */
#include "se_blob.h"

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

static void put_le(uint8_t *p, uint32_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le(const uint8_t *p, int n)
{
	uint32_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* CRC-32 (IEEE), bitwise: catches corruption; forgery is the capability key's job. */
static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
	}
	return ~c;
}

void dse_blob_encode(const struct dse_blob *b, uint8_t out[DSE_BLOB_LEN])
{
	memset(out, 0, DSE_BLOB_LEN);
	memcpy(out + OFF_MAGIC, dse_magic, sizeof(dse_magic));
	put_le(out + OFF_VERSION, DSE_BLOB_VERSION, 2);
	put_le(out + OFF_LEN, DSE_BLOB_LEN, 2);
	put_le(out + OFF_PID, b->pid, 4);
	put_le(out + OFF_FD, (uint32_t)b->fd, 4);
	put_le(out + OFF_SEG_LEN, b->seg_len, 4);
	memcpy(out + OFF_NAME, b->name_key, sizeof(b->name_key));
	memcpy(out + OFF_CAP, b->cap_key, sizeof(b->cap_key));
	memcpy(out + OFF_HOST, b->host_id, sizeof(b->host_id));
	put_le(out + OFF_CSUM, crc32_ieee(out, OFF_CSUM), 4);
}

bool dse_blob_decode(const uint8_t *in, size_t len, struct dse_blob *b)
{
	if (in == NULL || len != DSE_BLOB_LEN)
		return false;
	if (memcmp(in + OFF_MAGIC, dse_magic, sizeof(dse_magic)) != 0)
		return false;
	if (get_le(in + OFF_VERSION, 2) != DSE_BLOB_VERSION || get_le(in + OFF_LEN, 2) != DSE_BLOB_LEN)
		return false;
	if (get_le(in + OFF_CSUM, 4) != crc32_ieee(in, OFF_CSUM) || get_le(in + OFF_RSVD, 4) != 0)
		return false;
	b->pid = get_le(in + OFF_PID, 4);
	b->fd = (int32_t)get_le(in + OFF_FD, 4);
	b->seg_len = get_le(in + OFF_SEG_LEN, 4);
	if (b->pid == 0 || b->fd < 0 || b->seg_len == 0)
		return false;
	memcpy(b->name_key, in + OFF_NAME, sizeof(b->name_key));
	memcpy(b->cap_key, in + OFF_CAP, sizeof(b->cap_key));
	memcpy(b->host_id, in + OFF_HOST, sizeof(b->host_id));
	return true;
}
