/*
 * fab_desc — the wire form of an mmap export descriptor.
 *
 * A fixed, versioned, little-endian 96-byte head with a checksum and a random
 * capability key, optionally followed by transport sections (how to reach
 * the exporter from another machine), covered by a second checksum. Parsing
 * checks every field and every length before anything is trusted; a
 * truncated, corrupted or unknown-version descriptor is refused.
 */
#ifndef FAB_DESC_H_
#define FAB_DESC_H_

#include <stddef.h>
#include <stdint.h>

#include "fab_wire.h"

/*
 * 2: the access field holds the device's rights (enum hw_access bits);
 * version 1 carried the exporter's DOCA access flags and is refused.
 */
#define FAB_DESC_VERSION 2
#define FAB_DESC_SIZE 96 /* the fixed head; a descriptor without sections is exactly this */
#define FAB_CAP_KEY_LEN 16
#define FAB_HOST_ID_LEN 16
#define FAB_XPORT_INFO_MAX 1024
#define FAB_MAX_SECTIONS 2
#define FAB_DESC_MAX (FAB_DESC_SIZE + FAB_MAX_SECTIONS * (4 + FAB_XPORT_INFO_MAX) + 4)

enum fab_export_kind {
	FAB_EXPORT_DPU = 1,
	FAB_EXPORT_RDMA = 2,
};

/* Transports that can have a section. */
enum fab_xport_id {
	FAB_XPORT_UCX = 1,
};

/* Transport-specific data an exporter appends to the descriptor. */
struct fab_xinfo {
	uint16_t len;
	uint8_t data[FAB_XPORT_INFO_MAX];
};

struct fab_section {
	uint16_t xport; /* enum fab_xport_id */
	struct fab_xinfo info;
};

struct fab_export_desc {
	uint16_t kind;	     /* enum fab_export_kind */
	uint32_t pid;	     /* exporting process */
	uint32_t access;     /* rights the exporter grants: enum hw_access bits */
	uint32_t mkey;	     /* exporter's key for the range */
	uint64_t addr;	     /* first byte, in the exporter's address space */
	uint64_t len;
	uint64_t export_id;  /* device-wide id of the export */
	uint8_t cap_key[FAB_CAP_KEY_LEN];
	uint8_t host_id[FAB_HOST_ID_LEN]; /* which machine (boot) made it */
	uint16_t nsect;
	struct fab_section sect[FAB_MAX_SECTIONS];
};

enum fab_desc_status {
	FAB_DESC_OK = 0,
	FAB_DESC_TRUNCATED,
	FAB_DESC_BAD_MAGIC,
	FAB_DESC_BAD_VERSION,
	FAB_DESC_BAD_CHECKSUM,
	FAB_DESC_BAD_FIELD,
};

/* Writes the descriptor into out (at least FAB_DESC_MAX bytes); returns its length. */
size_t fab_desc_encode(const struct fab_export_desc *d, uint8_t *out);

/* Parses and validates len bytes at in. */
enum fab_desc_status fab_desc_decode(const void *in, size_t len, struct fab_export_desc *d);

/* The section of transport xport, or NULL. */
const struct fab_section *fab_desc_section(const struct fab_export_desc *d, uint16_t xport);

const char *fab_desc_status_str(enum fab_desc_status st);


/* Fills key with random bytes; 0 on success. */
int fab_random_bytes(uint8_t *key, size_t len);

/* Identity of this machine's current boot (stable within a boot). */
void fab_host_id(uint8_t id[FAB_HOST_ID_LEN]);

#endif /* FAB_DESC_H_ */
