/*
 * hw_ids — the device's number spaces (QPNs, CQNs, ...), unique on the machine.
 *
 * Every process of the user that drives the emulated device shares one POSIX
 * shared-memory table (/softdpu-<uid>-ids-v<version>), so a QPN handed out here names one
 * queue pair among all of them, as on a card. The table holds, per kind, a
 * fixed array of slots; number = the kind's base + slot index (24 bits).
 *
 * A slot is one 64-bit word: 0 when free, else the owner's pid and start time
 * (/proc/<pid>/stat field 22) packed together, claimed and released with a
 * single compare-and-swap. There is no lock and no intermediate state, so a
 * process dying at any instruction leaves either a free slot or one it owns;
 * the latter is reclaimed when the table is full and the owner is found gone
 * (pid missing, a zombie, or a pid reused by a process of another start time).
 *
 * Each slot also has a record of up to HW_ID_REC_MAX bytes its holder
 * publishes (where the queue or memory behind the number is) and any process
 * reads; a sequence counter makes reads consistent and tells a cached view
 * whether it is still current.
 *
 * The table is created exclusively on first use (mode 0600) and checked on
 * every open (base_private.h): owner uid and mode 0600, size, magic, version
 * and slot count; a table that does not match — another user's, one open to
 * others — is refused with HW_ERR_LAYOUT and left untouched.
 */
#ifndef HW_IDS_H_
#define HW_IDS_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "hw_mem.h"

/* The kinds of device-wide numbers; DCT numbers and mkey indices join here. */
enum hw_id_kind {
	HW_ID_QPN,
	HW_ID_CQN,
	HW_ID_SRQN,
	HW_ID_PD,   /* protection domains: a foreign key's domain is comparable */
	HW_ID_MKEY, /* memory key indices (key = index << 8 | tag) */
	HW_ID_DM,   /* pages of the device's on-chip memory (hw_dm.h): a capacity, held per page */
	HW_ID_PP,   /* packet-pacing rate entries (hw_pp.h): a capacity, the number is the entry's index */
	HW_ID_VAR,  /* virtio access regions (mlx5dv_alloc_var): a capacity, number = page_id */
	HW_ID_KINDS,
};

#define HW_ID_MAX 0xffffffu		/* numbers are 24 bits on the wire */
#define HW_IDS_DEFAULT_SLOTS 16384u /* per kind, in the device's table */
#define HW_ID_REC_MAX 248u	    /* bytes a holder may publish about its number */

struct hw_ids;

/*
 * Opens (creating if absent) the table called name (a POSIX shm name, "/x")
 * with slots numbers per kind. HW_ERR_INVAL for a bad name or count,
 * HW_ERR_LAYOUT when an existing table does not match, HW_ERR_NOMEM when the
 * system refuses the segment.
 */
enum hw_status hw_ids_open(const char *name, uint32_t slots, struct hw_ids **out);
/* Unmaps the table; numbers this process holds stay held (free them first). */
void hw_ids_close(struct hw_ids *t);

/* The device's table (/softdpu-<uid>-ids-v<version>), opened once; NULL if it cannot be. */
struct hw_ids *hw_ids_device(void);

/* The lowest number of a kind: QPNs start above the range mlx5 reserves. */
uint32_t hw_id_base(enum hw_id_kind kind);

/*
 * Takes a number no other process on the machine holds. When no slot is free,
 * slots of dead owners are reclaimed and the allocation retried once; still
 * full: HW_ERR_NOMEM.
 */
enum hw_status hw_ids_alloc(struct hw_ids *t, enum hw_id_kind kind, uint32_t *num);
/*
 * The same among the kind's first limit slots only: a capacity shared by the
 * machine's processes rather than a number space (HW_ERR_NOMEM when all of
 * them are held by live processes; dead holders' are taken back first).
 */
enum hw_status hw_ids_alloc_within(struct hw_ids *t, enum hw_id_kind kind, uint32_t limit, uint32_t *num);
/* Releases a number. HW_ERR_INVAL outside the range, HW_ERR_KEY when not held,
 * HW_ERR_ACCESS when another process holds it (it stays held). */
enum hw_status hw_ids_free(struct hw_ids *t, enum hw_id_kind kind, uint32_t num);
/* The pid holding num. HW_ERR_KEY when free; HW_ERR_PEER_GONE (pid still set)
 * when its holder has died without releasing it. */
enum hw_status hw_ids_owner(struct hw_ids *t, enum hw_id_kind kind, uint32_t num, pid_t *pid);

/*
 * The holder's record: publish replaces it (only the holder: HW_ERR_ACCESS
 * otherwise, HW_ERR_KEY when the number is free), withdraw empties it (free
 * does too). *seq, when asked, is the record's sequence after the publish.
 */
enum hw_status hw_ids_publish(struct hw_ids *t, enum hw_id_kind kind, uint32_t num, const void *data, uint32_t len,
			      uint32_t *seq);
enum hw_status hw_ids_withdraw(struct hw_ids *t, enum hw_id_kind kind, uint32_t num);
/*
 * Copies the record (any process). HW_ERR_KEY when nothing is published,
 * HW_ERR_LENGTH when cap is too small, HW_ERR_PEER_GONE when a writer left it
 * half written. *seq (optional) is the sequence the copy belongs to.
 */
enum hw_status hw_ids_read(struct hw_ids *t, enum hw_id_kind kind, uint32_t num, void *buf, uint32_t cap,
			   uint32_t *len, uint32_t *seq);
/* The record's sequence word: a view is current while it still reads the sequence it was built from. */
const _Atomic uint32_t *hw_ids_seq(struct hw_ids *t, enum hw_id_kind kind, uint32_t num);

/* The same on the device's table. */
enum hw_status hw_id_alloc(enum hw_id_kind kind, uint32_t *num);
enum hw_status hw_id_alloc_within(enum hw_id_kind kind, uint32_t limit, uint32_t *num);
enum hw_status hw_id_free(enum hw_id_kind kind, uint32_t num);
enum hw_status hw_id_owner(enum hw_id_kind kind, uint32_t num, pid_t *pid);
enum hw_status hw_id_publish(enum hw_id_kind kind, uint32_t num, const void *data, uint32_t len, uint32_t *seq);
enum hw_status hw_id_read(enum hw_id_kind kind, uint32_t num, void *buf, uint32_t cap, uint32_t *len, uint32_t *seq);

/*
 * A process's owner word (pid and start time, as slots hold it): this
 * process's, whether the one named is gone (pid missing, a zombie, or reused
 * by a process of another start time), and its pid. For other tables that
 * mark what a process holds the same way (hw_epoch).
 */
uint64_t hw_ids_self_word(void);
bool hw_ids_word_dead(uint64_t w);
uint32_t hw_ids_word_pid(uint64_t w);
/* The process pid is gone: no such process, or a zombie (dead, not yet reaped). */
bool hw_ids_pid_dead(uint32_t pid);

#endif
