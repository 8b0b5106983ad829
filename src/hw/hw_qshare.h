/*
 * hw_qshare — queue memory other processes of the device can map, and the
 * records that say where it is.
 *
 * A CQ, QP or SRQ created with .shared places its whole block (ring,
 * doorbell record and the device's state of the queue) in memory the layer
 * that knows how memory crosses processes provides (hw_qmem_set_ops; the
 * fabric installs a memfd-based one), and publishes under its number a
 * record: the block's length, its geometry and how to map it. hw must not
 * know that layer, so it only calls the hooks; without them a shared queue is
 * an ordinary one of this process.
 *
 * Another process maps the block from the record (hw_qshare_map) and builds
 * a view of the queue in it (hw_cq_attach, hw_qp_attach, hw_srq_attach): the
 * same memory, so the engine of that process consumes the queue's receives
 * and completes into its CQ as the owner's does. A view is valid while the
 * record's sequence still reads the value it was built from (one load).
 */
#ifndef HW_QSHARE_H_
#define HW_QSHARE_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hw_ids.h"
#include "hw_mem.h"

#define HW_QMEM_BACKING_MAX 80 /* bytes of the hook's "how to map it" */

/* The hooks of the layer that places memory where other processes can map it. */
struct hw_qmem_ops {
	/* A zeroed block of len bytes (page aligned); *blen bytes of backing say how to map it. NULL on failure. */
	void *(*alloc)(size_t len, void *backing, uint32_t *blen);
	void (*free)(void *p, size_t len, const void *backing, uint32_t blen);
	/* Maps a block another process allocated; NULL when it cannot be reached (owner gone, forged record). */
	void *(*attach)(const void *backing, uint32_t blen, size_t len);
	void (*detach)(void *p, size_t len);
};

/* Installs the hooks (NULL removes them; blocks placed before keep their own). */
void hw_qmem_set_ops(const struct hw_qmem_ops *ops);

/* A queue's memory block: private, shareable (ours), or mapped from another process. */
struct hw_qblock {
	void *p;
	size_t len;
	const struct hw_qmem_ops *ops; /* NULL: private memory (posix_memalign) */
	bool mapped;		       /* another process's block, mapped here */
	uint32_t blen;
	uint8_t backing[HW_QMEM_BACKING_MAX];
};

/*
 * A zeroed, page-aligned block of len bytes, shareable when asked and the
 * hooks are installed (private otherwise). HW_ERR_NOMEM, also when shareable
 * memory was asked for and the hooks have none: never a private block then.
 */
enum hw_status hw_qblock_alloc(struct hw_qblock *b, size_t len, bool shared);
/* Frees (or unmaps) the block; a zeroed hw_qblock is fine. */
void hw_qblock_free(struct hw_qblock *b);

/* What a queue publishes under its number. */
#define HW_QREC_CQ 0x51524351u	/* "QCRQ" */
#define HW_QREC_QP 0x51525051u	/* "QPRQ" */
#define HW_QREC_SRQ 0x51525351u /* "QSRQ" */

struct hw_qrec {
	uint32_t magic;	 /* HW_QREC_* */
	uint32_t geo[3]; /* the queue's sizes (log2), as its view checks them */
	uint64_t len;	 /* bytes of the block */
	uint32_t blen;
	uint32_t pad;
	uint8_t backing[HW_QMEM_BACKING_MAX];
};

/*
 * Publishes where a shareable block is, under a number this process holds.
 * HW_OK without doing anything for a private block (nobody else can map it).
 */
enum hw_status hw_qshare_publish(enum hw_id_kind kind, uint32_t num, uint32_t magic, const uint32_t geo[3],
				 const struct hw_qblock *b);
/* Withdraws the record (a view of it goes stale); nothing for a private block. */
void hw_qshare_withdraw(enum hw_id_kind kind, uint32_t num, const struct hw_qblock *b);

/*
 * Maps the block published under num (another process's, or this one's):
 * the record's magic must be magic. HW_ERR_KEY when nothing of that kind is
 * published or it cannot be mapped. *seqp and *seq tell later whether the
 * record is still the one mapped.
 */
enum hw_status hw_qshare_map(enum hw_id_kind kind, uint32_t num, uint32_t magic, struct hw_qblock *b,
			     struct hw_qrec *rec, const _Atomic uint32_t **seqp, uint32_t *seq);

#endif /* HW_QSHARE_H_ */
