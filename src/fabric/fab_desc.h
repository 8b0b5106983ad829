/*
 * fab_desc — the wire form of an mmap export descriptor.
 *
 * Versioned, fixed-size, little-endian, with a checksum and a random
 * capability key. Parsing checks every field before anything is trusted;
 * a truncated, corrupted or unknown-version descriptor is refused.
 */
#ifndef FAB_DESC_H_
#define FAB_DESC_H_

#include <stddef.h>
#include <stdint.h>

#define FAB_DESC_VERSION 1
#define FAB_DESC_SIZE 96
#define FAB_CAP_KEY_LEN 16
#define FAB_HOST_ID_LEN 16

enum fab_export_kind {
	FAB_EXPORT_DPU = 1,
	FAB_EXPORT_RDMA = 2,
};

struct fab_export_desc {
	uint16_t kind;	     /* enum fab_export_kind */
	uint32_t pid;	     /* exporting process */
	uint32_t access;     /* DOCA access flags of the exporter */
	uint32_t mkey;	     /* exporter's key for the range */
	uint64_t addr;	     /* first byte, in the exporter's address space */
	uint64_t len;
	uint64_t export_id;  /* exporter-local id of the export */
	uint8_t cap_key[FAB_CAP_KEY_LEN];
	uint8_t host_id[FAB_HOST_ID_LEN]; /* which machine (boot) made it */
};

enum fab_desc_status {
	FAB_DESC_OK = 0,
	FAB_DESC_TRUNCATED,
	FAB_DESC_BAD_MAGIC,
	FAB_DESC_BAD_VERSION,
	FAB_DESC_BAD_CHECKSUM,
	FAB_DESC_BAD_FIELD,
};

/* Writes the descriptor into out (FAB_DESC_SIZE bytes). */
void fab_desc_encode(const struct fab_export_desc *d, uint8_t out[FAB_DESC_SIZE]);

/* Parses and validates len bytes at in. */
enum fab_desc_status fab_desc_decode(const void *in, size_t len, struct fab_export_desc *d);

const char *fab_desc_status_str(enum fab_desc_status st);

/* Fills key with random bytes; 0 on success. */
int fab_random_bytes(uint8_t *key, size_t len);

/* Identity of this machine's current boot (stable within a boot). */
void fab_host_id(uint8_t id[FAB_HOST_ID_LEN]);

#endif /* FAB_DESC_H_ */
