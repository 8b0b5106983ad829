/*
 * fab_desc — encoding and strict parsing of export descriptors.
 */
#include "fab_desc.h"
#include "fab_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "base_status.h"
#include "hw_machine.h"
#include "hw_mem.h"

static const uint8_t fab_magic[8] = { 'S', 'D', 'P', 'U', 'X', 'P', 'R', 'T' };

/* Field offsets of the head (versions 1 and 2 share the layout). */
enum {
	OFF_MAGIC = 0,
	OFF_VERSION = 8,
	OFF_KIND = 10,
	OFF_SIZE = 12,
	OFF_PID = 16,
	OFF_ACCESS = 20,
	OFF_MKEY = 24,
	OFF_RSVD = 28,
	OFF_ADDR = 32,
	OFF_LEN = 40,
	OFF_ID = 48,
	OFF_CAP = 56,
	OFF_HOST = 72,
	OFF_CSUM = 88,
	OFF_PAD = 92,
};



/* CRC-32 (IEEE), bitwise: descriptors are small and made rarely. */
uint32_t fab_crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
	}
	return ~c;
}

/* Transport sections after the head: {u16 xport, u16 len, data}..., then a CRC-32 of everything before it. */
static size_t encode_sections(const struct fab_export_desc *d, uint8_t *out)
{
	size_t off = FAB_DESC_SIZE;

	for (uint16_t i = 0; i < d->nsect; i++) {
		fab_put_le(out + off, d->sect[i].xport, 2);
		fab_put_le(out + off + 2, d->sect[i].info.len, 2);
		memcpy(out + off + 4, d->sect[i].info.data, d->sect[i].info.len);
		off += 4 + d->sect[i].info.len;
	}
	return off + 4;
}

static size_t encoded_size(const struct fab_export_desc *d)
{
	size_t n = FAB_DESC_SIZE;

	if (d->nsect == 0)
		return n;
	for (uint16_t i = 0; i < d->nsect; i++)
		n += 4 + d->sect[i].info.len;
	return n + 4;
}

size_t fab_desc_encode(const struct fab_export_desc *d, uint8_t *out)
{
	size_t total = encoded_size(d);

	memset(out, 0, FAB_DESC_SIZE);
	memcpy(out + OFF_MAGIC, fab_magic, sizeof(fab_magic));
	fab_put_le(out + OFF_VERSION, FAB_DESC_VERSION, 2);
	fab_put_le(out + OFF_KIND, d->kind, 2);
	fab_put_le(out + OFF_SIZE, total, 4);
	fab_put_le(out + OFF_PID, d->pid, 4);
	fab_put_le(out + OFF_ACCESS, d->access, 4);
	fab_put_le(out + OFF_MKEY, d->mkey, 4);
	fab_put_le(out + OFF_ADDR, d->addr, 8);
	fab_put_le(out + OFF_LEN, d->len, 8);
	fab_put_le(out + OFF_ID, d->export_id, 8);
	memcpy(out + OFF_CAP, d->cap_key, FAB_CAP_KEY_LEN);
	memcpy(out + OFF_HOST, d->host_id, FAB_HOST_ID_LEN);
	fab_put_le(out + OFF_CSUM, fab_crc32(out, OFF_CSUM), 4);
	if (d->nsect != 0) {
		encode_sections(d, out);
		fab_put_le(out + total - 4, fab_crc32(out, total - 4), 4);
	}
	return total;
}

static int fields_valid(const struct fab_export_desc *d)
{
	if (d->kind != FAB_EXPORT_DPU && d->kind != FAB_EXPORT_RDMA)
		return 0;
	if (d->len == 0 || d->addr + d->len < d->addr || d->mkey == 0)
		return 0;
	if ((d->access & ~(uint32_t)HW_ACCESS_ALL_MASK) != 0)
		return 0;
	return 1;
}

/* Parses the sections of a descriptor of total length len (> FAB_DESC_SIZE). */
static enum fab_desc_status decode_sections(const uint8_t *p, size_t len, struct fab_export_desc *d)
{
	size_t off = FAB_DESC_SIZE, end = len - 4;

	if (fab_get_le(p + end, 4) != fab_crc32(p, end))
		return FAB_DESC_BAD_CHECKSUM;
	while (off < end) {
		struct fab_section *s;
		size_t n;

		if (d->nsect == FAB_MAX_SECTIONS || end - off < 4)
			return FAB_DESC_BAD_FIELD;
		s = &d->sect[d->nsect];
		s->xport = (uint16_t)fab_get_le(p + off, 2);
		n = fab_get_le(p + off + 2, 2);
		if (s->xport != FAB_XPORT_UCX || n == 0 || n > FAB_XPORT_INFO_MAX || n > end - off - 4)
			return FAB_DESC_BAD_FIELD;
		for (uint16_t i = 0; i < d->nsect; i++)
			if (d->sect[i].xport == s->xport)
				return FAB_DESC_BAD_FIELD;
		s->info.len = (uint16_t)n;
		memcpy(s->info.data, p + off + 4, n);
		d->nsect++;
		off += 4 + n;
	}
	return FAB_DESC_OK;
}

enum fab_desc_status fab_desc_decode(const void *in, size_t len, struct fab_export_desc *d)
{
	const uint8_t *p = in;
	enum fab_desc_status st;

	if (in == NULL || len < OFF_VERSION + 2)
		return FAB_DESC_TRUNCATED;
	if (memcmp(p + OFF_MAGIC, fab_magic, sizeof(fab_magic)) != 0)
		return FAB_DESC_BAD_MAGIC;
	if (fab_get_le(p + OFF_VERSION, 2) != FAB_DESC_VERSION)
		return FAB_DESC_BAD_VERSION;
	if (len < FAB_DESC_SIZE || len > FAB_DESC_MAX || fab_get_le(p + OFF_SIZE, 4) != len ||
	    len == FAB_DESC_SIZE + 4 || (len > FAB_DESC_SIZE && len < FAB_DESC_SIZE + 8))
		return FAB_DESC_TRUNCATED;
	if (fab_get_le(p + OFF_CSUM, 4) != fab_crc32(p, OFF_CSUM))
		return FAB_DESC_BAD_CHECKSUM;
	d->nsect = 0;
	if (len > FAB_DESC_SIZE) {
		st = decode_sections(p, len, d);
		if (st != FAB_DESC_OK)
			return st;
	}
	if (fab_get_le(p + OFF_RSVD, 4) != 0 || fab_get_le(p + OFF_PAD, 4) != 0)
		return FAB_DESC_BAD_FIELD;
	d->kind = (uint16_t)fab_get_le(p + OFF_KIND, 2);
	d->pid = (uint32_t)fab_get_le(p + OFF_PID, 4);
	d->access = (uint32_t)fab_get_le(p + OFF_ACCESS, 4);
	d->mkey = (uint32_t)fab_get_le(p + OFF_MKEY, 4);
	d->addr = fab_get_le(p + OFF_ADDR, 8);
	d->len = fab_get_le(p + OFF_LEN, 8);
	d->export_id = fab_get_le(p + OFF_ID, 8);
	memcpy(d->cap_key, p + OFF_CAP, FAB_CAP_KEY_LEN);
	memcpy(d->host_id, p + OFF_HOST, FAB_HOST_ID_LEN);
	return fields_valid(d) ? FAB_DESC_OK : FAB_DESC_BAD_FIELD;
}

const struct fab_section *fab_desc_section(const struct fab_export_desc *d, uint16_t xport)
{
	for (uint16_t i = 0; i < d->nsect; i++)
		if (d->sect[i].xport == xport)
			return &d->sect[i];
	return NULL;
}

static const char *const fab_desc_status_names[] = {
	[FAB_DESC_OK] = "valid",
	[FAB_DESC_TRUNCATED] = "descriptor truncated or of the wrong size",
	[FAB_DESC_BAD_MAGIC] = "not a softdpu export descriptor",
	[FAB_DESC_BAD_VERSION] = "unsupported descriptor version",
	[FAB_DESC_BAD_CHECKSUM] = "descriptor checksum mismatch (corrupted)",
	[FAB_DESC_BAD_FIELD] = "descriptor field out of range",
};
BASE_STATUS_TABLE_COVERS(fab_desc_status_names, FAB_DESC_BAD_FIELD);

const char *fab_desc_status_str(enum fab_desc_status st)
{
	return base_status_str(fab_desc_status_names, st);
}

int fab_random_bytes(uint8_t *key, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = getrandom(key + got, len - got, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)n;
	}
	return 0;
}

static uint8_t host_id_cache[FAB_HOST_ID_LEN];
static pthread_once_t host_id_once = PTHREAD_ONCE_INIT;

/* The kernel's boot id names this machine and boot; without it, a random id per process. */
static void load_host_id(void)
{
	char text[64] = { 0 };
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
	size_t k = 0;
	uint32_t ip;

	if (fd >= 0)
		close(fd);
	for (ssize_t i = 0; i < n && k < 2 * FAB_HOST_ID_LEN; i++) {
		unsigned int v;

		if (sscanf(&text[i], "%1x", &v) != 1)
			continue;
		host_id_cache[k / 2] = (uint8_t)((host_id_cache[k / 2] << 4) | v);
		k++;
	}
	if (k < 2 * FAB_HOST_ID_LEN)
		fab_random_bytes(host_id_cache, sizeof(host_id_cache));
	/* A named machine (SOFTDPU_MACHINE) is another host: its exports are reached as from another machine. */
	if (hw_machine_ipv4(&ip))
		for (int i = 0; i < 4; i++)
			host_id_cache[FAB_HOST_ID_LEN - 4 + i] ^= (uint8_t)(ip >> (24 - 8 * i)) ^ 0x5a;
}

void fab_host_id(uint8_t id[FAB_HOST_ID_LEN])
{
	pthread_once(&host_id_once, load_host_id);
	memcpy(id, host_id_cache, FAB_HOST_ID_LEN);
}
