/*
 * se_blob — the export descriptor of a Sync Event (what
 * doca_sync_event_export_to_dpu() returns), see docs/sync_event.md.
 */
#ifndef DSE_BLOB_H_
#define DSE_BLOB_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fab_desc.h"
#include "fab_shm.h"

#define DSE_BLOB_VERSION 1
#define DSE_BLOB_LEN 80

struct dse_blob {
	uint32_t pid;	   /* exporting process */
	int32_t fd;	   /* its memfd number */
	uint32_t seg_len;  /* size of the shared page */
	uint8_t name_key[FAB_SHM_KEY_LEN]; /* names the memfd */
	uint8_t cap_key[16];		   /* must match the page's header */
	uint8_t host_id[FAB_HOST_ID_LEN];  /* machine (boot) of the exporter */
};

void dse_blob_encode(const struct dse_blob *b, uint8_t out[DSE_BLOB_LEN]);

/* False for anything but an intact version-1 descriptor of exactly DSE_BLOB_LEN bytes. */
bool dse_blob_decode(const uint8_t *in, size_t len, struct dse_blob *b);

#endif /* DSE_BLOB_H_ */
