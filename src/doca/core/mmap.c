/*
 * doca_mmap — life cycle, devices and registration of one memory range.
 *
 * Each (mmap, device) pair is one key of the emulated device's mkey table,
 * registered in the device's protection domain while the mmap is started.
 */
#include <stdlib.h>
#include <string.h>

#include "dc_core.h"
#include "dc_dev.h"
#include "dc_log.h"
#include "doca_mmap.h"
#include "fab_mr.h"
#include "hw_mem.h"

#define DC_ACCESS_ALL                                                                                                  \
	(DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_WRITE | DOCA_ACCESS_RDMA_ATOMIC |     \
	 DOCA_ACCESS_DPU_READ_ONLY | DOCA_ACCESS_DPU_READ_WRITE)

uint32_t dc_access_to_hw(uint32_t access)
{
	uint32_t r = HW_ACCESS_LOCAL_READ;

	if (access & DOCA_ACCESS_LOCAL_READ_WRITE)
		r |= HW_ACCESS_LOCAL_WRITE;
	if (access & DOCA_ACCESS_RDMA_READ)
		r |= HW_ACCESS_REMOTE_READ;
	if (access & DOCA_ACCESS_RDMA_WRITE)
		r |= HW_ACCESS_REMOTE_WRITE;
	if (access & DOCA_ACCESS_RDMA_ATOMIC)
		r |= HW_ACCESS_REMOTE_ATOMIC;
	if (access & (DOCA_ACCESS_DPU_READ_ONLY | DOCA_ACCESS_DPU_READ_WRITE))
		r |= HW_ACCESS_PEER_READ;
	if (access & DOCA_ACCESS_DPU_READ_WRITE)
		r |= HW_ACCESS_PEER_WRITE;
	return r;
}

uint32_t dc_access_from_hw(uint32_t rights)
{
	uint32_t a = 0;

	if (rights & HW_ACCESS_LOCAL_WRITE)
		a |= DOCA_ACCESS_LOCAL_READ_WRITE;
	if (rights & HW_ACCESS_REMOTE_READ)
		a |= DOCA_ACCESS_RDMA_READ;
	if (rights & HW_ACCESS_REMOTE_WRITE)
		a |= DOCA_ACCESS_RDMA_WRITE;
	if (rights & HW_ACCESS_REMOTE_ATOMIC)
		a |= DOCA_ACCESS_RDMA_ATOMIC;
	if (rights & HW_ACCESS_PEER_WRITE)
		a |= DOCA_ACCESS_DPU_READ_WRITE;
	else if (rights & HW_ACCESS_PEER_READ)
		a |= DOCA_ACCESS_DPU_READ_ONLY;
	return a;
}

doca_error_t doca_mmap_create(const union doca_data *user_data, struct doca_mmap **mmap)
{
	struct doca_mmap *m;

	if (mmap == NULL) {
		DC_ERR("mmap output pointer is NULL");
		return DOCA_ERROR_INVALID_VALUE;
	}
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return DOCA_ERROR_NO_MEMORY;
	if (user_data != NULL)
		m->user_data = *user_data;
	m->state = DC_MMAP_CREATED;
	m->origin = DC_MMAP_LOCAL;
	m->access = DOCA_ACCESS_LOCAL_READ_WRITE;
	m->max_devs = 1;
	m->rd_access = HW_ACCESS_LOCAL_READ;
	m->wr_access = HW_ACCESS_LOCAL_WRITE;
	*mmap = m;
	return DOCA_SUCCESS;
}

/* A 1.x map with nothing populated yet still gets its key, so later chunks only update it. */
static const struct hw_mkey_chunk no_chunks[1];

static enum hw_status reg_key(struct doca_mmap *m, struct dc_mmap_dev *d)
{
	struct hw_pd *pd = dc_dev_pd(d->dev);

	if (m->chunked)
		return hw_mkey_reg_indirect(pd, m->chunks != NULL ? m->chunks : no_chunks, m->num_chunks,
					    dc_access_to_hw(m->access), &d->mkey);
	return hw_mkey_reg(pd, m->addr, (uint64_t)(uintptr_t)m->addr, m->len, dc_access_to_hw(m->access), &d->mkey);
}

static doca_error_t reg_dev(struct doca_mmap *m, struct dc_mmap_dev *d)
{
	enum hw_status st;

	st = reg_key(m, d);
	if (st != HW_OK) {
		DC_ERR("memory registration failed: %s", hw_status_str(st));
		return st == HW_ERR_NOMEM ? DOCA_ERROR_NO_MEMORY : DOCA_ERROR_DRIVER;
	}
	d->pd_id = hw_pd_id(dc_dev_pd(d->dev));
	d->hwk = hw_mkey_lookup(d->mkey);
	dc_mmap_dev_vouch(m, d);
	return DOCA_SUCCESS;
}

void dc_mmap_dev_vouch(const struct doca_mmap *mmap, struct dc_mmap_dev *d)
{
	const struct hw_mkey *k = d->hwk;

	d->vouch = 0;
	if (k == NULL || k->rops != NULL || k->chunks != NULL || k->seqp != NULL || k->umr != NULL ||
	    k->pd_id != d->pd_id || k->addr != (uint64_t)(uintptr_t)mmap->addr || k->base != mmap->addr ||
	    k->len != mmap->len || mmap->chunks != NULL)
		return;
	if ((k->access & mmap->rd_access) == mmap->rd_access)
		d->vouch |= DC_MMAP_DMA_SRC;
	if ((k->access & mmap->wr_access) == mmap->wr_access)
		d->vouch |= DC_MMAP_DMA_DST;
}

static void dma_side(struct dc_mmap_dma *side, const struct dc_mmap_dev *d, bool vouched, uint32_t access)
{
	if (!vouched) {
		side->dev = NULL;
		return;
	}
	side->hwk = d->hwk;
	side->key = d->mkey;
	side->access = access;
	side->dev = d->dev; /* last: the short path tests it first */
}

void dc_mmap_dma_sync(struct doca_mmap *mmap)
{
	const struct dc_mmap_dev *d = mmap->num_devs != 0 ? &mmap->devs[0] : NULL;

	dma_side(&mmap->dma_src, d, d != NULL && d->hwk != NULL && (d->vouch & DC_MMAP_DMA_SRC), mmap->rd_access);
	dma_side(&mmap->dma_dst, d, d != NULL && d->hwk != NULL && (d->vouch & DC_MMAP_DMA_DST), mmap->wr_access);
}

static void dereg_dev(struct dc_mmap_dev *d)
{
	if (d->mkey != 0)
		hw_mkey_dereg(d->mkey);
	if (d->shared)
		fab_mr_unshare(&d->share);
	d->shared = false;
	d->unshareable = false;
	d->mkey = 0;
	d->hwk = NULL;
	d->vouch = 0;
}

void dc_mmap_share_key(struct doca_mmap *mmap, const struct doca_dev *dev)
{
	struct dc_mmap_dev *d = (struct dc_mmap_dev *)dc_mmap_dev_of(mmap, dev);

	if (d == NULL || d->mkey == 0 || d->shared || d->unshareable || mmap->chunked)
		return;
	if (fab_mr_share(d->mkey, mmap->addr, mmap->len, &d->share) == 0) {
		d->shared = true;
		return;
	}
	/* Once: a receive posted on such memory would try again for every job. */
	d->unshareable = true;
	DC_WARN("the mmap's memory cannot be shared with other processes (only anonymous private memory moves onto a "
		"memfd): its key works in this process only, and RDMA from a peer in another process fails with a "
		"remote access error");
}

static void dereg_all(struct doca_mmap *m)
{
	m->dma_src.dev = m->dma_dst.dev = NULL; /* before the keys go */
	for (uint32_t i = 0; i < m->num_devs; i++)
		dereg_dev(&m->devs[i]);
}

static bool configurable(const struct doca_mmap *m, const char *what)
{
	if (m->state != DC_MMAP_CREATED) {
		DC_ERR("cannot set %s: mmap was already started", what);
		return false;
	}
	return true;
}

static doca_error_t ensure_devs_array(struct doca_mmap *m)
{
	if (m->devs != NULL)
		return DOCA_SUCCESS;
	m->devs = calloc(m->max_devs, sizeof(*m->devs));
	return m->devs == NULL ? DOCA_ERROR_NO_MEMORY : DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_memrange(struct doca_mmap *mmap, void *addr, size_t len)
{
	if (mmap == NULL || addr == NULL || len == 0) {
		DC_ERR("invalid memrange arguments");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if ((uintptr_t)addr + len < (uintptr_t)addr) {
		DC_ERR("memrange wraps around the address space");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!configurable(mmap, "memrange") || mmap->origin != DC_MMAP_LOCAL)
		return DOCA_ERROR_BAD_STATE;
	if (mmap->chunked) {
		DC_ERR("a DOCA 1.x mmap takes its ranges from doca_mmap_populate()");
		return DOCA_ERROR_BAD_STATE;
	}
	if (mmap->has_range) {
		DC_ERR("memrange can be set only once");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	mmap->addr = addr;
	mmap->len = len;
	mmap->has_range = true;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_free_cb(struct doca_mmap *mmap, doca_mmap_memrange_free_cb_t *free_cb, void *opaque)
{
	if (mmap == NULL || free_cb == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!configurable(mmap, "free callback"))
		return DOCA_ERROR_BAD_STATE;
	mmap->free_cb = free_cb;
	mmap->free_opaque = opaque;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_permissions(struct doca_mmap *mmap, uint32_t access_mask)
{
	if (mmap == NULL || (access_mask & ~(uint32_t)DC_ACCESS_ALL) != 0) {
		DC_ERR("invalid permissions 0x%x", mmap == NULL ? 0 : access_mask);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!configurable(mmap, "permissions") || mmap->origin != DC_MMAP_LOCAL)
		return DOCA_ERROR_BAD_STATE;
	mmap->access = access_mask;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_set_max_num_devices(struct doca_mmap *mmap, uint32_t max_num_devices)
{
	struct dc_mmap_dev *devs;

	if (mmap == NULL || max_num_devices == 0 || max_num_devices < mmap->num_devs)
		return DOCA_ERROR_INVALID_VALUE;
	if (!configurable(mmap, "max number of devices"))
		return DOCA_ERROR_NOT_PERMITTED; /* documented: refused once the mmap was first started */
	devs = realloc(mmap->devs, max_num_devices * sizeof(*devs));
	if (devs == NULL)
		return DOCA_ERROR_NO_MEMORY;
	mmap->devs = devs;
	mmap->max_devs = max_num_devices;
	return DOCA_SUCCESS;
}

/*
 * Devices of a 2.x mmap change only while it was never started; a 1.x map
 * registers its devices after start, so only its stopped state refuses them.
 */
static doca_error_t devs_changeable(const struct doca_mmap *m, const char *what)
{
	if (m->origin != DC_MMAP_LOCAL || m->exported) {
		DC_ERR("devices cannot be %s an exported or imported mmap", what);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (m->chunked)
		return m->state == DC_MMAP_STOPPED ? DOCA_ERROR_BAD_STATE : DOCA_SUCCESS;
	if (m->state != DC_MMAP_CREATED) {
		DC_ERR("devices cannot be %s an mmap that was started", what);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	return DOCA_SUCCESS;
}

static int find_dev(const struct doca_mmap *m, const struct doca_dev *dev)
{
	for (uint32_t i = 0; i < m->num_devs; i++)
		if (m->devs[i].dev == dev)
			return (int)i;
	return -1;
}

doca_error_t doca_mmap_dev_add(struct doca_mmap *mmap, struct doca_dev *dev)
{
	struct dc_mmap_dev *d;
	doca_error_t ret;

	if (mmap == NULL || dev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = devs_changeable(mmap, "added to");
	if (ret != DOCA_SUCCESS)
		return ret;
	if (find_dev(mmap, dev) >= 0)
		return DOCA_ERROR_IN_USE;
	if (mmap->num_devs == mmap->max_devs) {
		DC_ERR("mmap already holds its maximum of %u devices", mmap->max_devs);
		return DOCA_ERROR_NO_MEMORY;
	}
	ret = ensure_devs_array(mmap);
	if (ret != DOCA_SUCCESS)
		return ret;
	d = &mmap->devs[mmap->num_devs];
	*d = (struct dc_mmap_dev){ .dev = dev };
	if (mmap->state == DC_MMAP_STARTED) {
		ret = reg_dev(mmap, d);
		if (ret != DOCA_SUCCESS)
			return ret;
	}
	dc_dev_get(dev);
	mmap->num_devs++;
	dc_mmap_dma_sync(mmap);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_dev_rm(struct doca_mmap *mmap, struct doca_dev *dev)
{
	doca_error_t ret;
	int idx;

	if (mmap == NULL || dev == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = devs_changeable(mmap, "removed from");
	if (ret != DOCA_SUCCESS)
		return ret;
	idx = find_dev(mmap, dev);
	if (idx < 0) {
		DC_ERR("device was not added to the mmap");
		return DOCA_ERROR_INVALID_VALUE; /* the documented code for an unknown device */
	}
	if (mmap->state == DC_MMAP_STARTED && mmap->num_bufs != 0) {
		DC_ERR("device in use by %u buffers of the mmap", mmap->num_bufs);
		return DOCA_ERROR_IN_USE;
	}
	mmap->dma_src.dev = mmap->dma_dst.dev = NULL; /* before the key goes */
	dereg_dev(&mmap->devs[idx]);
	dc_dev_put(dev);
	mmap->devs[idx] = mmap->devs[--mmap->num_devs];
	dc_mmap_dma_sync(mmap);
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_start(struct doca_mmap *mmap)
{
	doca_error_t ret;
	uint32_t i;

	if (mmap == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	/* stop withdraws the exports, so an exported mmap is always a started one */
	if (mmap->origin != DC_MMAP_LOCAL || (mmap->exported && mmap->state == DC_MMAP_STARTED)) {
		DC_ERR("an exported or imported mmap cannot be started");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (mmap->state == DC_MMAP_STARTED)
		return DOCA_ERROR_BAD_STATE;
	if (!mmap->has_range && !mmap->chunked) {
		DC_ERR("mmap has no memrange");
		return DOCA_ERROR_BAD_STATE;
	}
	if (mmap->origin == DC_MMAP_LOCAL) {
		for (i = 0; i < mmap->num_devs; i++) {
			ret = reg_dev(mmap, &mmap->devs[i]);
			if (ret != DOCA_SUCCESS)
				goto err_dereg;
		}
	}
	mmap->state = DC_MMAP_STARTED;
	dc_mmap_dma_sync(mmap);
	return DOCA_SUCCESS;

err_dereg:
	while (i-- > 0)
		dereg_dev(&mmap->devs[i]);
	return ret;
}

doca_error_t doca_mmap_stop(struct doca_mmap *mmap)
{
	if (mmap == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	/*
	 * An import stops too (no more buffers from it; its key stays until destroy): DOCA 2.2's own samples
	 * stop the mmap they created from an export and count a refusal as their failure.
	 */
	if (mmap->state != DC_MMAP_STARTED)
		return DOCA_ERROR_BAD_STATE;
	if (mmap->num_bufs != 0) {
		DC_ERR("%u buffers still point into the mmap", mmap->num_bufs);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	dc_export_revoke_all(mmap);
	if (mmap->origin == DC_MMAP_LOCAL)
		dereg_all(mmap);
	mmap->state = DC_MMAP_STOPPED;
	return DOCA_SUCCESS;
}

/* Hands every populated chunk to its free callback, then drops the list. */
static void free_chunks(struct doca_mmap *m)
{
	for (uint32_t i = 0; i < m->num_chunks; i++)
		if (m->chunk_cbs[i].free_cb != NULL)
			m->chunk_cbs[i].free_cb((void *)(uintptr_t)m->chunks[i].addr, m->chunks[i].len,
						m->chunk_cbs[i].opaque);
	free(m->chunks);
	free(m->chunk_cbs);
	m->chunks = NULL;
	m->chunk_cbs = NULL;
	m->num_chunks = 0;
}

doca_error_t doca_mmap_destroy(struct doca_mmap *mmap)
{
	if (mmap == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (mmap->num_bufs != 0 || mmap->num_holders != 0) {
		DC_ERR("%u buffers and %u pools/arrays still point into the mmap", mmap->num_bufs, mmap->num_holders);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	dc_mmap_revoke_importers(mmap);
	dc_export_release_all(mmap);
	if (mmap->exporter != NULL)
		dc_mmap_unlink_importer(mmap);
	dereg_all(mmap);
	dc_mmap_close_remote(mmap);
	for (uint32_t i = 0; i < mmap->num_devs; i++)
		dc_dev_put(mmap->devs[i].dev);
	if (mmap->free_cb != NULL && mmap->has_range)
		mmap->free_cb(mmap->addr, mmap->len, mmap->free_opaque);
	free_chunks(mmap);
	free(mmap->devs);
	free(mmap);
	return DOCA_SUCCESS;
}

/* ---- getters ---- */

doca_error_t doca_mmap_get_user_data(const struct doca_mmap *mmap, union doca_data *user_data)
{
	if (mmap == NULL || user_data == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*user_data = mmap->user_data;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_max_num_devices(const struct doca_mmap *mmap, uint32_t *max_num_devices)
{
	if (mmap == NULL || max_num_devices == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*max_num_devices = mmap->max_devs;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_num_devices(const struct doca_mmap *mmap, uint32_t *num_devices)
{
	if (mmap == NULL || num_devices == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*num_devices = mmap->num_devs;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_num_bufs(const struct doca_mmap *mmap, uint32_t *num_bufs)
{
	if (mmap == NULL || num_bufs == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*num_bufs = mmap->num_bufs;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_exported(const struct doca_mmap *mmap, uint8_t *exported)
{
	if (mmap == NULL || exported == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*exported = mmap->exported;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_from_export(const struct doca_mmap *mmap, uint8_t *from_export)
{
	if (mmap == NULL || from_export == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*from_export = mmap->origin != DC_MMAP_LOCAL;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_memrange(const struct doca_mmap *mmap, void **addr, size_t *len)
{
	if (mmap == NULL || addr == NULL || len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (!mmap->has_range)
		return DOCA_ERROR_BAD_STATE;
	*addr = mmap->addr;
	*len = mmap->len;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_get_permissions(const struct doca_mmap *mmap, uint32_t *access_mask)
{
	if (mmap == NULL || access_mask == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*access_mask = mmap->access;
	return DOCA_SUCCESS;
}

/* ---- DOCA 1.x: many populated chunks per map ---- */

void dc_mmap_make_chunked(struct doca_mmap *mmap)
{
	mmap->chunked = true;
	mmap->max_chunks = 1; /* the documented default */
}

doca_error_t dc_mmap_set_max_chunks(struct doca_mmap *mmap, uint32_t max_chunks)
{
	if (max_chunks == 0 || max_chunks < mmap->num_chunks) {
		DC_ERR("max number of chunks %u is below the %u populated", max_chunks, mmap->num_chunks);
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!configurable(mmap, "max number of chunks"))
		return DOCA_ERROR_BAD_STATE;
	mmap->max_chunks = max_chunks;
	return DOCA_SUCCESS;
}

/* Index of the first chunk starting after addr: where a chunk at addr goes. */
static uint32_t insert_pos(const struct doca_mmap *m, uint64_t addr)
{
	uint32_t lo = 0, hi = m->num_chunks;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (m->chunks[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool overlaps_neighbours(const struct doca_mmap *m, uint32_t pos, uint64_t addr, uint64_t len)
{
	if (pos > 0 && m->chunks[pos - 1].addr + m->chunks[pos - 1].len > addr)
		return true;
	return pos < m->num_chunks && addr + len > m->chunks[pos].addr;
}

/*
 * Room for one more chunk. The arrays double (up to max_chunks), so populating
 * n chunks costs O(n) copies; keys are re-pointed by the caller afterwards.
 */
static doca_error_t grow_chunks(struct doca_mmap *m)
{
	uint32_t cap = m->cap_chunks < 8 ? 8 : m->cap_chunks * 2;
	struct hw_mkey_chunk *c;
	struct dc_chunk_cb *cb;

	if (m->num_chunks < m->cap_chunks)
		return DOCA_SUCCESS;
	if (cap > m->max_chunks || cap < m->cap_chunks)
		cap = m->max_chunks;
	c = malloc((size_t)cap * sizeof(*c));
	cb = malloc((size_t)cap * sizeof(*cb));
	if (c == NULL || cb == NULL)
		goto err_free;
	if (m->num_chunks != 0) {
		memcpy(c, m->chunks, m->num_chunks * sizeof(*c));
		memcpy(cb, m->chunk_cbs, m->num_chunks * sizeof(*cb));
	}
	free(m->chunks);
	free(m->chunk_cbs);
	m->chunks = c;
	m->chunk_cbs = cb;
	m->cap_chunks = cap;
	return DOCA_SUCCESS;

err_free:
	free(c);
	free(cb);
	return DOCA_ERROR_NO_MEMORY;
}

/* Every registered key now covers the new list: same keys, same cached entries. */
static void rekey_all(struct doca_mmap *m)
{
	const struct hw_mkey_chunk *last = &m->chunks[m->num_chunks - 1];

	m->addr = (uint8_t *)(uintptr_t)m->chunks[0].addr;
	m->len = last->addr + last->len - m->chunks[0].addr;
	for (uint32_t i = 0; i < m->num_devs; i++)
		if (m->devs[i].mkey != 0)
			hw_mkey_set_chunks(m->devs[i].mkey, m->chunks, m->num_chunks);
}

static doca_error_t populate_check(const struct doca_mmap *m, void *addr, size_t len)
{
	if (m == NULL || addr == NULL || len == 0 || (uintptr_t)addr + len < (uintptr_t)addr) {
		DC_ERR("invalid populate arguments");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if (!m->chunked || m->origin != DC_MMAP_LOCAL || m->exported) {
		DC_ERR("only a local, unexported DOCA 1.x mmap can be populated");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (m->state == DC_MMAP_STOPPED) {
		DC_ERR("a stopped mmap cannot be populated");
		return DOCA_ERROR_BAD_STATE;
	}
	if (m->num_chunks == m->max_chunks) {
		DC_ERR("mmap already holds its maximum of %u chunks", m->max_chunks);
		return DOCA_ERROR_NO_MEMORY;
	}
	return DOCA_SUCCESS;
}

doca_error_t dc_mmap_populate(struct doca_mmap *mmap, void *addr, size_t len, doca_mmap_memrange_free_cb_t *free_cb,
			      void *opaque)
{
	uint64_t a = (uint64_t)(uintptr_t)addr;
	doca_error_t ret = populate_check(mmap, addr, len);
	uint32_t pos;

	if (ret != DOCA_SUCCESS)
		return ret;
	pos = mmap->num_chunks == 0 ? 0 : insert_pos(mmap, a);
	if (mmap->num_chunks != 0 && overlaps_neighbours(mmap, pos, a, len)) {
		DC_ERR("range overlaps a chunk already populated");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	ret = grow_chunks(mmap);
	if (ret != DOCA_SUCCESS)
		return ret;
	/* programs usually populate in address order: then nothing moves */
	memmove(&mmap->chunks[pos + 1], &mmap->chunks[pos], (mmap->num_chunks - pos) * sizeof(*mmap->chunks));
	memmove(&mmap->chunk_cbs[pos + 1], &mmap->chunk_cbs[pos], (mmap->num_chunks - pos) * sizeof(*mmap->chunk_cbs));
	mmap->chunks[pos] = (struct hw_mkey_chunk){ .addr = a, .len = len };
	mmap->chunk_cbs[pos] = (struct dc_chunk_cb){ .free_cb = free_cb, .opaque = opaque };
	mmap->num_chunks++;
	rekey_all(mmap);
	return DOCA_SUCCESS;
}
