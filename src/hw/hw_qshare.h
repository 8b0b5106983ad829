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

#define HW_QMEM_BACKING_MAX 40  /* bytes of the hook's "how to map it" */
#define HW_QEXT_BACKING_MAX 160 /* the same for memory the creator gave (hw_qblock_adopt) */

/* The hooks of the layer that places memory where other processes can map it. */
struct hw_qmem_ops {
	/* A zeroed block of len bytes (page aligned); *blen bytes of backing say how to map it. NULL on failure. */
	void *(*alloc)(size_t len, void *backing, uint32_t *blen);
	void (*free)(void *p, size_t len, const void *backing, uint32_t blen);
	/* Maps a block another process allocated; NULL when it cannot be reached (owner gone, forged record). */
	void *(*attach)(const void *backing, uint32_t blen, size_t len);
	void (*detach)(void *p, size_t len);
	/*
	 * Memory the queue's creator gave (a parent domain's allocator's): makes
	 * the ring [ring, ring + ring_len) (ring_len may be 0) and the doorbell
	 * record [dbrec, dbrec + dbrec_len) reachable where they are; *blen bytes
	 * of backing say how, *handle is what unadopt releases. HW_OK;
	 * HW_ERR_NOTSUP when the memory is of a kind other processes cannot map
	 * (file mappings, huge pages); HW_ERR_NOMEM when the system refused what
	 * it takes (logged).
	 */
	enum hw_status (*adopt)(void *ring, size_t ring_len, void *dbrec, size_t dbrec_len, void *backing,
				uint32_t *blen, void **handle);
	void (*unadopt)(void *handle);
	/* Maps them in another process (*ring, *dbrec); the handle detach_ext takes, NULL when they cannot be. */
	void *(*attach_ext)(const void *backing, uint32_t blen, size_t ring_len, size_t dbrec_len, void **ring,
			    void **dbrec);
	void (*detach_ext)(void *handle);
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
	/*
	 * The ring and record the creator gave, when they are shared with the
	 * block (hw_qblock_adopt), or mapped from another process's: the block
	 * then holds the device's state of the queue alone.
	 */
	void *xring;
	void *xdbrec;
	size_t xring_len;
	size_t xdbrec_len;
	void *xhandle; /* the hooks' adopt or attach_ext handle; NULL when there are none */
	uint32_t xlen;
	uint8_t xbacking[HW_QEXT_BACKING_MAX];
};

/*
 * A zeroed, page-aligned block of len bytes, shareable when asked and the
 * hooks are installed (private otherwise). HW_ERR_NOMEM, also when shareable
 * memory was asked for and the hooks have none: never a private block then.
 */
enum hw_status hw_qblock_alloc(struct hw_qblock *b, size_t len, bool shared);
/*
 * Ring and record the creator gave, beside a block of its state: with the
 * hooks and a shareable block, made reachable where they are and published
 * with it, so other processes map the creator's memory itself (the card
 * reaches a queue in whatever host memory its driver gave). HW_ERR_NOTSUP
 * when that memory cannot be shared: refused rather than a queue peers
 * could not reach; HW_ERR_NOMEM. Nothing for a private block.
 */
enum hw_status hw_qblock_adopt(struct hw_qblock *b, void *ring, size_t ring_len, void *dbrec, size_t dbrec_len);
/* Frees (or unmaps) the block, and releases (never frees) what it adopted; a zeroed hw_qblock is fine. */
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
	uint64_t xring_len; /* adopted ring and record (xlen non-zero): their bytes and how to map them */
	uint32_t xdbrec_len;
	uint32_t xlen;
	uint8_t xbacking[HW_QEXT_BACKING_MAX];
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
