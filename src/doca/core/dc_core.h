/*
 * dc_core — layouts of the DOCA Core memory objects, shared by the files that
 * implement them and by the libraries (DMA) that read buffers on the data path.
 */
#ifndef DC_CORE_H_
#define DC_CORE_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "doca_buf.h"
#include "doca_mmap.h"
#include "doca_types.h"
#include "fab_share.h"
#include "hw_mem.h"

/* ---- mmap ---- */

enum dc_mmap_state {
	DC_MMAP_CREATED, /* configurable */
	DC_MMAP_STARTED,
	DC_MMAP_STOPPED, /* configuration is frozen after the first start */
};

/* How a memory map was made; decides which rights a DMA access asks for. */
enum dc_mmap_origin {
	DC_MMAP_LOCAL,
	DC_MMAP_FROM_EXPORT_DPU,
	DC_MMAP_FROM_EXPORT_RDMA,
};

struct dc_mmap_dev {
	struct doca_dev *dev;
	uint32_t pd_id;
	uint32_t mkey;		   /* 0 while not registered (mmap not started) */
	const struct hw_mkey *hwk; /* the key's table entry: the data path skips the table walk */
	/*
	 * DC_MMAP_DMA_* bits, checked once when the key was made (dc_mmap_dev_vouch):
	 * the key is local and direct, covers exactly the mmap's memrange at
	 * its own addresses, belongs to dev's domain and grants the right a DMA
	 * read (SRC) or write (DST) of this memory asks for. Every buffer lies
	 * inside its mmap's memrange, so a job on such buffers needs no other
	 * check of the key but that it still holds its number.
	 */
	uint8_t vouch;
	uint32_t rkey;		   /* from an RDMA export: the exporter's key, which its peers name */
	bool shared;		   /* exported over RDMA: the key reaches other processes (share) */
	bool unshareable;	   /* sharing was refused: not tried again (dc_mmap_share_key) */
	struct fab_shared share;
};

/* Free callback of one populated chunk (DOCA 1.x), in the order of the chunk list. */
struct dc_chunk_cb {
	doca_mmap_memrange_free_cb_t *free_cb;
	void *opaque;
};

struct dc_export; /* an export descriptor and its registry entry (mmap_export.c) */
struct fab_import; /* the path to another process's memory (src/fabric/fab_mem.h) */

struct doca_mmap {
	enum dc_mmap_state state;
	enum dc_mmap_origin origin;
	bool has_range;
	bool exported;
	union doca_data user_data;
	uint8_t *addr;
	size_t len;
	doca_mmap_memrange_free_cb_t *free_cb;
	void *free_opaque;
	uint32_t access; /* enum doca_access_flags */
	uint32_t max_devs;
	uint32_t num_devs;
	struct dc_mmap_dev *devs; /* max_devs entries */
	uint32_t num_bufs;
	uint32_t num_holders; /* bufpools and buffer arrays built on this mmap */
	uint32_t rd_access; /* hw_access a DMA read of this memory asks for */
	uint32_t wr_access; /* hw_access a DMA write asks for */
	struct dc_export *exports;   /* descriptors this mmap handed out */
	struct doca_mmap *importers; /* in-process imports of this mmap */
	struct doca_mmap *exporter;  /* for imports: the exporting mmap (same process) */
	struct doca_mmap *next_importer;
	struct fab_import *fab; /* imports from another process: how the device reaches the memory */
	/*
	 * DOCA 1.x maps (doca_mmap_populate): up to max_chunks ranges, sorted by
	 * address, disjoint. Each device's key is then an indirect key over this
	 * list, so the data path checks it without knowing about chunks.
	 * chunks == NULL on every 2.x map (one memrange, one direct key).
	 */
	struct hw_mkey_chunk *chunks;
	struct dc_chunk_cb *chunk_cbs;
	uint32_t num_chunks;
	uint32_t cap_chunks;	 /* allocated entries of chunks and chunk_cbs */
	uint32_t max_chunks;	 /* 1.x property max_num_chunks */
	bool chunked;		 /* made by the 1.x create: ranges come from doca_mmap_populate */
	/*
	 * The first registration's key as a DMA source and destination, where
	 * it vouches for that side (dc_mmap_dev::vouch): the DMA context's short
	 * path reads these instead of the registration. dev is NULL where it
	 * does not; hwk is then left as it was (the engine checks an entry
	 * against the key anyway, so a stale one is refused, never trusted).
	 */
	struct dc_mmap_dma {
		const struct doca_dev *dev;
		const struct hw_mkey *hwk;
		uint32_t key;
		uint32_t access; /* rd_access or wr_access */
	} dma_src, dma_dst;
};

#define DC_MMAP_DMA_SRC 1u
#define DC_MMAP_DMA_DST 2u

/* Sets d->vouch from d's key entry against mmap (0 when it has none). */
void dc_mmap_dev_vouch(const struct doca_mmap *mmap, struct dc_mmap_dev *d);
/* Sets mmap->dma_src and dma_dst from the first registration, after any change of the registrations. */
void dc_mmap_dma_sync(struct doca_mmap *mmap);

/* Registration of mmap for dev, or NULL when dev was not added. */
static inline const struct dc_mmap_dev *dc_mmap_dev_of(const struct doca_mmap *mmap, const struct doca_dev *dev)
{
	if (__builtin_expect(mmap->num_devs != 0 && mmap->devs[0].dev == dev, 1))
		return &mmap->devs[0];
	for (uint32_t i = 1; i < mmap->num_devs; i++)
		if (mmap->devs[i].dev == dev)
			return &mmap->devs[i];
	return NULL;
}

/* Key of mmap for dev, or 0 when dev is not registered with the mmap. */
static inline uint32_t dc_mmap_mkey(const struct doca_mmap *mmap, const struct doca_dev *dev)
{
	const struct dc_mmap_dev *d = dc_mmap_dev_of(mmap, dev);

	return d == NULL ? 0 : d->mkey;
}

/*
 * Lets verbs peers in other processes use the mmap's key on dev as an rkey
 * (an RDMA export): its memory is shared the way an ibv_reg_mr's is. Memory
 * that cannot be shared stays reachable through the export only.
 */
void dc_mmap_share_key(struct doca_mmap *mmap, const struct doca_dev *dev);

static inline bool dc_mmap_contains(const struct doca_mmap *mmap, const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, base = (uintptr_t)mmap->addr;

	return a >= base && len <= mmap->len && a - base <= mmap->len - len;
}

/*
 * True when [addr, addr + len) may back a buffer of mmap: inside the memrange,
 * or, for a 1.x map, inside one populated chunk (binary search).
 */
static inline bool dc_mmap_holds(const struct doca_mmap *mmap, const void *addr, size_t len)
{
	if (__builtin_expect(mmap->chunks != NULL, 0))
		return hw_chunk_find(mmap->chunks, mmap->num_chunks, (uint64_t)(uintptr_t)addr, len) >= 0;
	return dc_mmap_contains(mmap, addr, len);
}

/* Populates a 1.x map with one more chunk (mmap.c); errors as documented for doca_mmap_populate. */
doca_error_t dc_mmap_populate(struct doca_mmap *mmap, void *addr, size_t len, doca_mmap_memrange_free_cb_t *free_cb,
			      void *opaque);
/* Makes mmap a 1.x map: no memrange, chunks come from populate. */
void dc_mmap_make_chunked(struct doca_mmap *mmap);
doca_error_t dc_mmap_set_max_chunks(struct doca_mmap *mmap, uint32_t max_chunks);

/*
 * DOCA permissions <-> the device's rights (enum hw_access), which is what an
 * mkey and an export descriptor carry. from_hw(to_hw(a)) == a, except that
 * DPU_READ_ONLY | DPU_READ_WRITE comes back as DPU_READ_WRITE (same rights).
 */
uint32_t dc_access_to_hw(uint32_t access);
uint32_t dc_access_from_hw(uint32_t rights);

/* Called by export code when an exporting mmap goes away: imports lose access. */
void dc_mmap_revoke_importers(struct doca_mmap *mmap);
void dc_mmap_unlink_importer(struct doca_mmap *import);
void dc_export_release_all(struct doca_mmap *mmap);
/* An import from another process lets go of its path (after its key is gone). */
void dc_mmap_close_remote(struct doca_mmap *mmap);
/* The mmap stops: its descriptors can no longer be imported and imports lose access. */
void dc_export_revoke_all(struct doca_mmap *mmap);

/* ---- buffers ---- */

/* A source of buffers: an inventory or a bufpool. The free list is LIFO for cache warmth. */
struct dc_buf_src {
	struct doca_buf *free_list;
	uint32_t num_total;
	uint32_t num_free;
	uint32_t extensions;
};

/*
 * One cache line, and the arrays of them line-aligned (dc_bufs_new): a job
 * reads one line of each of its buffers. So a list head keeps its length
 * but not its last element, which chaining finds by walking (lists are a
 * job's few segments).
 */
struct doca_buf {
	uint8_t *head;
	size_t len;
	uint8_t *data;
	size_t data_len;
	struct doca_mmap *mmap;
	struct doca_buf *next;	   /* next list element, or free-list link while free */
	uint32_t list_len;	   /* valid in a list head: number of elements */
	uint16_t refcount;	   /* 0 while free */
	bool is_head;		   /* no element points to this buffer */
	struct dc_buf_src *src;
};

_Static_assert(sizeof(struct doca_buf) == 64, "a doca_buf is one cache line");

/* Takes a free buffer from src and points it at [addr, addr+len) of mmap. No checks. */
static inline struct doca_buf *dc_buf_take(struct dc_buf_src *src, struct doca_mmap *mmap, void *addr, size_t len,
					   void *data, size_t data_len)
{
	struct doca_buf *buf = src->free_list;

	src->free_list = buf->next;
	src->num_free--;
	buf->head = addr;
	buf->len = len;
	buf->data = data;
	buf->data_len = data_len;
	buf->mmap = mmap;
	buf->next = NULL;
	buf->list_len = 1;
	buf->refcount = 1;
	buf->is_head = true;
	mmap->num_bufs++;
	return buf;
}

/* Returns a buffer to its source. */
static inline void dc_buf_give_back(struct doca_buf *buf)
{
	struct dc_buf_src *src = buf->src;

	buf->mmap->num_bufs--;
	buf->mmap = NULL;
	buf->refcount = 0;
	buf->next = src->free_list;
	src->free_list = buf;
	src->num_free++;
}

/* n zeroed buffers, line-aligned; free() releases them. NULL: no memory. */
struct doca_buf *dc_bufs_new(size_t n);
/* Builds the free list of n buffers in bufs. */
void dc_buf_src_init(struct dc_buf_src *src, struct doca_buf *bufs, uint32_t n, uint32_t extensions);

#endif /* DC_CORE_H_ */
