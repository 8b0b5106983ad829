/*
 * fab_ucx — private wire format of the UCX transport (fab_ucx.c).
 *
 * Every remote access is made of request/response pairs of UCX Active
 * Messages. The importer sends a request (fixed header, plus the payload of a
 * WRITE) to the exporter's worker; the exporter's service thread checks it
 * against its table of live exports, performs the copy and answers with a
 * reply (fixed header, plus the data of a READ). All integers are little-endian. Declared here so
 * that tests can build requests of their own.
 */
#ifndef FAB_UCX_H_
#define FAB_UCX_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fab_desc.h"

#define FAB_UCX_WIRE_VERSION 1
#define FAB_UCX_AM_REQ 21 /* importer -> exporter */
#define FAB_UCX_AM_REP 22 /* exporter -> importer */

#define FAB_UCX_REQ_MAGIC 0x51585544u /* "DUXQ" */
#define FAB_UCX_REP_MAGIC 0x52585544u /* "DUXR" */

enum fab_ucx_op {
	FAB_UCX_OP_READ = 1,
	FAB_UCX_OP_WRITE = 2,
};

/* Status carried by a reply. */
enum fab_ucx_wire_status {
	FAB_UCX_ST_OK = 0,
	FAB_UCX_ST_REVOKED = 1, /* no live export with that id and capability key */
	FAB_UCX_ST_RANGE = 2,	/* outside the exported range */
	FAB_UCX_ST_RIGHTS = 3,	/* the export does not grant the operation */
	FAB_UCX_ST_MALFORMED = 4,
	FAB_UCX_ST_IO = 5,
};

/*
 * Request header (the AM header), 64 bytes:
 *   0 magic u32 · 4 version u16 · 6 op u16 · 8 header size u32 (64) · 12 reserved u32 (0)
 *   16 request id u64 · 24 export id u64 · 32 remote address u64 · 40 length u64
 *   48 capability key [16]
 * A WRITE carries exactly `length` payload bytes; a READ carries none.
 */
#define FAB_UCX_REQ_SIZE 64

/*
 * Longest access one request may ask for: the exporter stages every transfer
 * in a buffer of its own, so this bounds its memory per request. Importers
 * split longer accesses and keep FAB_UCX_WINDOW requests in flight.
 */
#define FAB_UCX_MAX_LEN (8u << 20)
#define FAB_UCX_WINDOW 4

/*
 * Reply header, 40 bytes:
 *   0 magic u32 · 4 version u16 · 6 op u16 (the request's) · 8 header size u32 (40)
 *   12 status u32 · 16 request id u64 · 24 export id u64 · 32 length u64
 * A successful READ reply carries exactly `length` bytes; other replies none.
 */
#define FAB_UCX_REP_SIZE 40

/*
 * Transport section (struct fab_xinfo) of a descriptor:
 *   0 version u16 (1) · 2 worker address length u16 · 4 worker address
 */
#define FAB_UCX_INFO_HEAD 4

/*
 * Checks of what crosses the wire, kept apart from the UCX callbacks so they
 * can be fuzzed: a request header h (FAB_UCX_REQ_SIZE bytes) with payload
 * bytes of payload; a reply header of header_length bytes.
 */
bool fab_ucx_req_valid(const uint8_t *h, size_t payload, unsigned *op, uint64_t *len);
bool fab_ucx_rep_valid(const uint8_t *h, size_t header_length);

#endif /* FAB_UCX_H_ */
