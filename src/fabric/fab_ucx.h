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
#include "fab_xport.h"

#define FAB_UCX_WIRE_VERSION 1
#define FAB_UCX_AM_REQ 21 /* importer -> exporter */
#define FAB_UCX_AM_REP 22 /* exporter -> importer */

#define FAB_UCX_REQ_MAGIC 0x51585544u /* "DUXQ" */
#define FAB_UCX_REP_MAGIC 0x52585544u /* "DUXR" */

enum fab_ucx_op {
	FAB_UCX_OP_READ = 1,
	FAB_UCX_OP_WRITE = 2,
	FAB_UCX_OP_CALL = 3, /* a request to a service of the target process (fab_ucx_call) */
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
 * A CALL carries `length` bytes of request, names the service where a READ or
 * WRITE names the export (export id), and the most reply bytes it accepts
 * where they name the address; its capability key is zero.
 */
#define FAB_UCX_REQ_SIZE 64

/*
 * Longest access one request may ask for: the exporter stages every transfer
 * in a buffer of its own, so this bounds its memory per request. Importers
 * split longer accesses and keep FAB_UCX_WINDOW requests in flight.
 */
#define FAB_UCX_MAX_LEN (8u << 20)
/* Messages up to this size go eagerly (UCX's RNDV_THRESH, unless the user set it): in one piece, in order. */
#define FAB_UCX_EAGER_MAX (128u << 10)
#define FAB_UCX_WINDOW 4

/*
 * Reply header, 40 bytes:
 *   0 magic u32 · 4 version u16 · 6 op u16 (the request's) · 8 header size u32 (40)
 *   12 status u32 · 16 request id u64 · 24 export id u64 · 32 length u64
 * A successful READ reply carries exactly `length` bytes; a CALL reply
 * `length` bytes of answer (at most what the request accepts); others none.
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

/*
 * Services: request/response calls between processes, on the transport's
 * worker and service thread. A service answers a request of len bytes with
 * up to cap bytes in rep and returns a FAB_UCX_ST_* status; it runs on the
 * service thread, so it must not wait for the network.
 */
#define FAB_UCX_SERVICE_VERBS 1u /* fab_xm.c: verbs requests of another machine */
typedef uint32_t (*fab_ucx_service_fn)(const uint8_t *req, uint64_t len, uint8_t *rep, uint64_t cap,
				       uint64_t *rlen);

/*
 * Brings up this process's service side (once) with fn as service id's
 * handler, and copies the worker address peers connect to into addr (cap
 * bytes): its length, or -1 when UCX cannot be used.
 */
int fab_ucx_service_start(uint32_t id, fab_ucx_service_fn fn, uint8_t *addr, size_t cap);

struct fab_remote;
/* A connection to the process whose worker address is addr. A fab_status. */
int fab_ucx_connect(const uint8_t *addr, size_t alen, struct fab_remote **r);

/*
 * Brings up the calling (client) side of this process now, 0 when it is up.
 * Making UCX's context probes the RDMA devices, softdpu's among them, and a
 * probe's destroy waits for the device's executions: done at the first
 * request instead, under the locks requests take, it would wait for an
 * execution waiting for those very locks.
 */
int fab_ucx_client_start(void);
void fab_ucx_disconnect(struct fab_remote *r);
/* True once the peer was found gone (UCX's error handling): every later call fails at once. */
bool fab_ucx_peer_failed(const struct fab_remote *r);

/*
 * One call: sends req (len bytes, at most FAB_UCX_MAX_LEN) to service id of
 * r's process and waits, bounded by the fabric timeout, for its answer (at
 * most cap bytes into rep, *rlen set). FAB_ERR_PEER_GONE, FAB_ERR_TIMEOUT,
 * FAB_ERR_IO (also a service status other than OK).
 */
enum fab_status fab_ucx_call(struct fab_remote *r, uint32_t id, const void *req, size_t len, void *rep, size_t cap,
			     size_t *rlen);

/*
 * The same call without waiting, so that several are in flight: start sends
 * it (req and rep must stay valid until it is done), test progresses the
 * transport once and says whether it is done (1: *st and *rlen set, the call
 * freed; 0: still in flight). A call not answered by the fabric timeout is
 * done with FAB_ERR_TIMEOUT (its endpoint reset, so the buffers are free).
 */
struct fab_call;
enum fab_status fab_ucx_call_start(struct fab_remote *r, uint32_t id, const void *req, size_t len, void *rep,
				   size_t cap, struct fab_call **out);
int fab_ucx_call_test(struct fab_call *c, enum fab_status *st, size_t *rlen);

#endif /* FAB_UCX_H_ */
