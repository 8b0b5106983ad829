/*
 * se_priv — the Sync Event object shared by the files of this library.
 *
 * se_event.c: life cycle, configuration, start/stop; se_datapath.c: get,
 * update and wait on the counter; se_ctx.c: the asynchronous (context) mode;
 * se_export.c: export to the DPU and import; se_blob.c: the export descriptor.
 */
#ifndef DSE_PRIV_H_
#define DSE_PRIV_H_

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "dc_ctx.h"
#include "doca_sync_event.h"
#include "fab_shm.h"
#include "hw_bell.h"
#include "se_dpa_handle.h"

/* Where a publisher or subscriber runs. */
enum dse_loc {
	DSE_LOC_NONE = 0,
	DSE_LOC_CPU,
	DSE_LOC_DPU,
	DSE_LOC_DPA, /* a DPA of this process: its threads are host threads, the counter is local */
};

enum dse_state {
	DSE_CONFIG,	  /* created, not started: configuration allowed */
	DSE_SYNC_STARTED, /* doca_sync_event_start() */
	DSE_CTX_MODE,	  /* doca_sync_event_as_ctx(): started while its context is */
	DSE_STOPPED,	  /* doca_sync_event_stop(): only destroy remains */
};

#define DSE_SEG_TAG "sdpu-se"
#define DSE_SEG_LEN 4096u
#define DSE_SEG_VERSION 2u
#define DSE_CAP_KEY_LEN 16

/*
 * The shared page of an exportable event. Importers check magic, version and
 * capability before trusting it; the exporter sets revoked when it destroys
 * the event, so live importers stop using a counter nobody publishes to.
 */
struct dse_seg {
	uint8_t magic[8];
	uint32_t version;
	uint32_t exporter_pid;
	uint8_t cap_key[DSE_CAP_KEY_LEN];
	_Atomic uint32_t revoked;
	alignas(64) _Atomic uint64_t value; /* own cache line: waiters poll it */
	struct hw_bell bell; /* rung by every update; same line: the updater has it already */
};

struct doca_sync_event {
	struct doca_ctx ctx; /* first: as_ctx and back are casts; initialised by as_ctx */
	enum dse_state state;
	enum dse_loc pub, sub;
	struct doca_dev *pub_dev, *sub_dev; /* referenced CPU location devices */
	uint64_t *user_addr;		    /* doca_sync_event_set_addr() */
	bool imported;			    /* DPU handle from doca_sync_event_create_from_export() */
	struct doca_dev *import_dev;	    /* referenced */
	_Atomic uint64_t *value;	    /* the counter, once storage is set up */
	struct dse_seg *seg;		    /* shared page, when exportable or imported */
	struct fab_shm shm;
	uint8_t *blob; /* export descriptor, made once */
	size_t blob_len;
	_Atomic uint32_t poll_tick; /* paces the exporter-liveness check of importers */
	_Atomic bool exporter_gone; /* seen dead by the watch engine: the next check fails at once */
	_Atomic uint64_t own_value; /* the counter of a process-local event */
	struct hw_bell own_bell;	 /* its bell (also of an event on user memory) */
	struct hw_bell *bell;		 /* rung after every update through the API: wakes armed work queues */
	struct se_dpa_handle dpa_h;	 /* what doca_sync_event_export_to_dpa hands out */
	uint32_t remote_key;		 /* doca_sync_event_export_remote: the counter's key, 0 before */
};

/* se_event.c */
doca_error_t dse_storage_setup(struct doca_sync_event *ev);
bool dse_configured(const struct doca_sync_event *ev);
bool dse_has_dpu_loc(const struct doca_sync_event *ev);
doca_error_t dse_alloc(struct doca_sync_event **out);
void dse_free(struct doca_sync_event *ev);

/* se_datapath.c */
bool dse_started(const struct doca_sync_event *ev);
/* DOCA_ERROR_NOT_CONNECTED once the exporter revoked the event or died; checks liveness every few calls. */
doca_error_t dse_peer_check(struct doca_sync_event *ev);
static inline bool dse_gt(const struct doca_sync_event *ev, uint64_t value, uint64_t mask)
{
	return (atomic_load_explicit(ev->value, memory_order_acquire) & mask) > value;
}

/* se_ctx.c */
doca_error_t dse_ctx_fini(struct doca_sync_event *ev);

/* se_export.c */
/* Puts the counter of an exportable event in a fresh shared page. */
doca_error_t dse_seg_create(struct doca_sync_event *ev);
/* Revokes the export (exporter) and unmaps the shared page. */
void dse_export_release(struct doca_sync_event *ev);

#endif /* DSE_PRIV_H_ */
