/*
 * fab_xport — transports that reach memory another process exported.
 *
 * A transport has an exporter side (make a range reachable, describe how to
 * reach it in the export descriptor) and an importer side (open the exporter's
 * range from that description, then read and write it). Same machine: CMA
 * (fab_cma.c). Other machines: UCX (fab_ucx.c). fab_import.c picks one.
 */
#ifndef FAB_XPORT_H_
#define FAB_XPORT_H_

#include <stddef.h>
#include <stdint.h>

#include "fab_desc.h"

/* Outcome of a remote access; mapped to DOCA job errors by the layers above. */
enum fab_status {
	FAB_OK = 0,
	FAB_ERR_REVOKED,  /* the exporter withdrew the range (mmap stopped or destroyed) */
	FAB_ERR_PEER_GONE, /* the exporting process exited or cannot be reached any more */
	FAB_ERR_TIMEOUT,   /* no answer within the bounded time */
	FAB_ERR_IO,	   /* the transport failed otherwise */
	FAB_ERR_INVAL,	   /* bad argument (outside the exported range, ...) */
	FAB_ERR_NO_PATH,   /* no transport reaches the exporter (e.g. another machine, no UCX section) */
};

const char *fab_status_str(enum fab_status st);

struct fab_remote; /* an importer's open handle on one exported range */

struct fab_xport_ops {
	const char *name;
	/*
	 * Exporter: prepares the range d describes (local address addr) for remote
	 * access and fills info with what an importer needs (info->len = 0: nothing).
	 * d carries the export id and capability key the transport must check on
	 * every remote access. *priv is handed back to unexport, after which no
	 * remote access may touch the range any more. 0 on success. NULL for a
	 * transport that needs nothing of the exporter (same machine: the export
	 * table and the shareable backing, fab_mem.c, are all an importer uses).
	 */
	int (*export_range)(const struct fab_export_desc *d, void *addr, struct fab_xinfo *info, void **priv);
	void (*unexport)(void *priv);
	/* Importer: opens the range a descriptor names. 0 on success, else a fab_status. */
	int (*open)(const struct fab_export_desc *d, const struct fab_xinfo *info, struct fab_remote **r);
	void (*close)(struct fab_remote *r);
	/* Reads remote [raddr, raddr+len) into dst / writes src to remote [raddr, raddr+len). */
	enum fab_status (*read)(struct fab_remote *r, uint64_t raddr, void *dst, size_t len);
	enum fab_status (*write)(struct fab_remote *r, uint64_t raddr, const void *src, size_t len);
};

extern const struct fab_xport_ops fab_cma_ops;
extern const struct fab_xport_ops fab_ucx_ops; /* fab_ucx.c */

#endif /* FAB_XPORT_H_ */
