/*
 * fab_table — the device-wide table of live exports, shared by every process
 * of this user on the machine (POSIX shared memory).
 *
 * An exporter claims a slot for each export; the slot's id, capability key,
 * range and rights are what an importer in another process checks, and its
 * state is what tells the importer that the export was withdrawn. Importers
 * count their accesses in flight so that withdrawing waits for them before
 * the memory may be freed. A process that dies leaves its slots behind; they
 * are reclaimed once its pid is found dead, so nothing blocks the others.
 *
 * The table (/dev/shm/softdpu-<uid>[-m<machine>]-exports) is created
 * exclusively with mode 0600 and used only while it is this user's with that
 * mode (base_private.h); otherwise nothing is exported or imported through it.
 * Its slots are still written by other processes (of this user), so an
 * importer checks what it reads there before it maps anything (fab_cma.c).
 */
#ifndef FAB_TABLE_H_
#define FAB_TABLE_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "fab_desc.h"

#define FAB_TABLE_SLOTS 4096
/* Longest a withdrawal waits for accesses in flight (elapsed, monotonic clock). */
#define FAB_TABLE_WITHDRAW_WAIT_NS (2ull * 1000 * 1000 * 1000)

enum fab_slot_state {
	FAB_SLOT_FREE = 0,
	FAB_SLOT_CLAIMING = 1,
	FAB_SLOT_LIVE = 2,
	FAB_SLOT_REVOKED = 3,
};

struct fab_slot {
	_Atomic uint32_t state;
	_Atomic uint32_t inflight; /* importer accesses under way */
	uint32_t pid;
	uint32_t gen;
	uint64_t start_time; /* the exporter's start time: a reused pid is not the exporter */
	_Atomic uint64_t export_id;
	uint64_t addr;
	uint64_t len;
	uint32_t access;
	uint32_t kind;
	uint8_t cap_key[FAB_CAP_KEY_LEN];
	int32_t memfd;	   /* the exporter's fd of a shareable backing (fab_share.h), or -1 */
	uint32_t rsvd;
	uint64_t map_base; /* exporter address of the backing's first byte */
	uint64_t map_len;
};

struct fab_backing;

/*
 * Claims a slot for the export d describes (b: its shareable backing, or NULL)
 * and sets d->export_id. 0, -EPERM when the table is refused (not private to
 * this user), -ENOSPC when it is full, -EIO when it cannot be opened.
 */
int fab_table_claim(struct fab_export_desc *d, const struct fab_backing *b);

/* Withdraws an export: no new access starts; waits for accesses under way, at most FAB_TABLE_WITHDRAW_WAIT_NS. */
void fab_table_withdraw(uint64_t export_id);

/* The live slot that matches every field of d (id, capability, pid, range, rights), or NULL. */
struct fab_slot *fab_table_find(const struct fab_export_desc *d);

/* Start time of a process (clock ticks since boot), 0 when it does not exist. */
uint64_t fab_proc_start_time(uint32_t pid);

#endif /* FAB_TABLE_H_ */
