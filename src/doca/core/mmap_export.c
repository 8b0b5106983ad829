/*
 * doca_mmap export and import.
 *
 * An export hands out a descriptor (src/fabric/fab_desc.h) naming the range,
 * the exporter's key and a random capability key; a registry of live exports
 * lets an importer in this process check the capability and reach the memory.
 * Imports from other processes or machines go through the fabric layer.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dc_core.h"
#include "dc_dev.h"
#include "dc_log.h"
#include "doca_mmap.h"
#include "fab_desc.h"
#include "fab_mem.h"
#include "hw_mem.h"

struct dc_export {
	struct dc_export *next;	     /* in the mmap's list */
	struct dc_export *reg_next;  /* in the process registry */
	struct doca_mmap *mmap;
	const struct doca_dev *dev;
	struct fab_export *fx; /* the device-wide publication (other processes, other machines) */
	struct fab_export_desc desc;
	bool revoked; /* the mmap stopped since: kept only so the caller's pointer stays valid */
	size_t wire_len;
	uint8_t wire[FAB_DESC_MAX];
};

static struct {
	pthread_mutex_t lock;
	struct dc_export *head;
} registry = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void registry_add(struct dc_export *e)
{
	pthread_mutex_lock(&registry.lock);
	e->reg_next = registry.head;
	registry.head = e;
	pthread_mutex_unlock(&registry.lock);
}

static void registry_remove(struct dc_export *e)
{
	pthread_mutex_lock(&registry.lock);
	for (struct dc_export **pp = &registry.head; *pp != NULL; pp = &(*pp)->reg_next) {
		if (*pp == e) {
			*pp = e->reg_next;
			break;
		}
	}
	pthread_mutex_unlock(&registry.lock);
}

/* Compares capability keys without an early exit, so timing tells nothing. */
static bool cap_equal(const uint8_t *a, const uint8_t *b)
{
	uint8_t diff = 0;

	for (int i = 0; i < FAB_CAP_KEY_LEN; i++)
		diff |= (uint8_t)(a[i] ^ b[i]);
	return diff == 0;
}

/* Live export matching id and capability, or NULL. Caller holds the registry lock. */
static struct dc_export *registry_find(const struct fab_export_desc *d)
{
	for (struct dc_export *e = registry.head; e != NULL; e = e->reg_next)
		if (e->desc.export_id == d->export_id && cap_equal(e->desc.cap_key, d->cap_key))
			return e;
	return NULL;
}

static struct dc_export *find_export(struct doca_mmap *m, const struct doca_dev *dev, uint16_t kind)
{
	for (struct dc_export *e = m->exports; e != NULL; e = e->next)
		if (e->dev == dev && e->desc.kind == kind && !e->revoked)
			return e;
	return NULL;
}

static doca_error_t export_check(struct doca_mmap *m, const struct doca_dev *dev, uint16_t kind)
{
	uint32_t need = kind == FAB_EXPORT_DPU ? (DOCA_ACCESS_DPU_READ_ONLY | DOCA_ACCESS_DPU_READ_WRITE)
					       : (DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_WRITE | DOCA_ACCESS_RDMA_ATOMIC);
	enum dc_cap cap = kind == FAB_EXPORT_DPU ? DC_CAP_MMAP_EXPORT_DPU : DC_CAP_MMAP_EXPORT_RDMA;

	if (m->origin != DC_MMAP_LOCAL) {
		DC_ERR("an mmap created from an export cannot be exported again");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (m->state != DC_MMAP_STARTED) {
		DC_ERR("mmap must be started before export");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (m->chunked && m->num_chunks != 1) {
		/* a descriptor names one range: more chunks would expose the gaps between them */
		DC_ERR("only an mmap of a single chunk can be exported (it holds %u)", m->num_chunks);
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	if (dc_mmap_mkey(m, dev) == 0) {
		DC_ERR("device was not added to the mmap");
		return DOCA_ERROR_INVALID_VALUE;
	}
	if ((m->access & need) == 0) {
		DC_ERR("export needs %s permissions on the mmap", kind == FAB_EXPORT_DPU ? "DPU_*" : "RDMA_*");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (!dc_dev_cap(dev, cap)) {
		DC_ERR("device cannot export memory %s", kind == FAB_EXPORT_DPU ? "to the DPU" : "over RDMA");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

/* The device-wide publication; a table another user could read or write is refused (NOT_PERMITTED). */
static doca_error_t publish(struct dc_export *e, struct doca_mmap *m)
{
	int err = fab_mem_publish(&e->desc, m->addr, &e->fx);

	if (err == 0)
		return DOCA_SUCCESS;
	if (err == -EPERM) {
		DC_ERR("cannot publish the export: the export table is not private to this user");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	DC_ERR("cannot publish the export (errno %d)", -err);
	return DOCA_ERROR_DRIVER;
}

static doca_error_t export_common(struct doca_mmap *m, const struct doca_dev *dev, const void **export_desc,
				  size_t *export_desc_len, uint16_t kind)
{
	struct dc_export *e;
	doca_error_t ret;

	if (m == NULL || dev == NULL || export_desc == NULL || export_desc_len == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = export_check(m, dev, kind);
	if (ret != DOCA_SUCCESS)
		return ret;
	e = find_export(m, dev, kind);
	if (e == NULL) {
		e = calloc(1, sizeof(*e));
		if (e == NULL)
			return DOCA_ERROR_NO_MEMORY;
		if (fab_random_bytes(e->desc.cap_key, FAB_CAP_KEY_LEN) != 0) {
			free(e);
			return DOCA_ERROR_OPERATING_SYSTEM;
		}
		e->mmap = m;
		e->dev = dev;
		e->desc.kind = kind;
		e->desc.pid = (uint32_t)getpid();
		e->desc.access = dc_access_to_hw(m->access);
		e->desc.mkey = dc_mmap_mkey(m, dev);
		e->desc.addr = (uint64_t)(uintptr_t)m->addr;
		e->desc.len = m->len;
		fab_host_id(e->desc.host_id);
		ret = publish(e, m);
		if (ret != DOCA_SUCCESS) {
			free(e);
			return ret;
		}
		registry_add(e);
		e->wire_len = fab_desc_encode(&e->desc, e->wire);
		e->next = m->exports;
		m->exports = e;
	}
	if (kind == FAB_EXPORT_RDMA)
		dc_mmap_share_key(m, dev);
	m->exported = true;
	*export_desc = e->wire;
	*export_desc_len = e->wire_len;
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_export_dpu(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				  size_t *export_desc_len)
{
	return export_common(mmap, dev, export_desc, export_desc_len, FAB_EXPORT_DPU);
}

doca_error_t doca_mmap_export_rdma(struct doca_mmap *mmap, const struct doca_dev *dev, const void **export_desc,
				   size_t *export_desc_len)
{
	return export_common(mmap, dev, export_desc, export_desc_len, FAB_EXPORT_RDMA);
}

void dc_export_revoke_all(struct doca_mmap *mmap)
{
	dc_mmap_revoke_importers(mmap);
	for (struct dc_export *e = mmap->exports; e != NULL; e = e->next) {
		if (!e->revoked) {
			registry_remove(e);
			fab_mem_withdraw(e->fx);
			e->fx = NULL;
		}
		e->revoked = true;
	}
}

void dc_export_release_all(struct doca_mmap *mmap)
{
	struct dc_export *e = mmap->exports;

	while (e != NULL) {
		struct dc_export *next = e->next;

		if (!e->revoked) {
			registry_remove(e);
			fab_mem_withdraw(e->fx);
		}
		free(e);
		e = next;
	}
	mmap->exports = NULL;
}

/* ---- import ---- */

/* Rights the importer's key gets, from the rights the exporter grants. */
static uint32_t import_rights(const struct fab_export_desc *d, uint32_t *rd, uint32_t *wr)
{
	if (d->kind == FAB_EXPORT_DPU) {
		*rd = HW_ACCESS_PEER_READ;
		*wr = HW_ACCESS_PEER_WRITE;
		return HW_ACCESS_PEER_READ | (d->access & HW_ACCESS_PEER_WRITE);
	}
	*rd = HW_ACCESS_REMOTE_READ;
	*wr = HW_ACCESS_REMOTE_WRITE;
	return d->access & (HW_ACCESS_REMOTE_READ | HW_ACCESS_REMOTE_WRITE | HW_ACCESS_REMOTE_ATOMIC);
}

static doca_error_t import_check(const struct fab_export_desc *d, struct doca_dev *dev)
{
	enum dc_cap cap = d->kind == FAB_EXPORT_DPU ? DC_CAP_MMAP_FROM_EXPORT_DPU : DC_CAP_MMAP_FROM_EXPORT_RDMA;

	if (!dc_dev_cap(dev, cap)) {
		DC_ERR("device cannot import %s exports", d->kind == FAB_EXPORT_DPU ? "DPU" : "RDMA");
		return DOCA_ERROR_NOT_SUPPORTED;
	}
	return DOCA_SUCCESS;
}

static bool same_process(const struct fab_export_desc *d)
{
	uint8_t here[FAB_HOST_ID_LEN];

	fab_host_id(here);
	return memcmp(here, d->host_id, FAB_HOST_ID_LEN) == 0 && d->pid == (uint32_t)getpid();
}

static doca_error_t fab_to_error(enum fab_status st)
{
	switch (st) {
	case FAB_ERR_REVOKED:
		return DOCA_ERROR_NOT_PERMITTED; /* no such live export: forged, replayed or withdrawn */
	case FAB_ERR_PEER_GONE:
		return DOCA_ERROR_NOT_CONNECTED;
	case FAB_ERR_TIMEOUT:
		return DOCA_ERROR_TIME_OUT;
	case FAB_ERR_NO_PATH:
		return DOCA_ERROR_NOT_SUPPORTED;
	default:
		return DOCA_ERROR_DRIVER;
	}
}

/* Memory of another process, on this machine or another: the device reaches it through the fabric. */
static doca_error_t import_remote(struct doca_mmap *m, const struct fab_export_desc *d, struct doca_dev *dev)
{
	struct fab_import *imp;
	enum fab_status fs;
	enum hw_status st;
	uint32_t rights;

	fs = fab_mem_open(d, &imp);
	if (fs != FAB_OK) {
		DC_ERR("cannot import the exported memory: %s", fab_status_str(fs));
		return fab_to_error(fs);
	}
	rights = import_rights(d, &m->rd_access, &m->wr_access);
	st = hw_mkey_reg_remote(dc_dev_pd(dev), d->addr, d->len, rights, &fab_mem_hw_ops, imp, &m->devs[0].mkey);
	if (st != HW_OK) {
		fab_mem_close(imp);
		return DOCA_ERROR_NO_MEMORY;
	}
	m->devs[0].hwk = hw_mkey_lookup(m->devs[0].mkey);
	m->fab = imp;
	m->addr = (uint8_t *)(uintptr_t)d->addr; /* addresses of the exporter's space, as on real devices */
	DC_DBG("imported %llu bytes of process %u through %s", (unsigned long long)d->len, d->pid,
	       fab_mem_path(imp));
	return DOCA_SUCCESS;
}

void dc_mmap_close_remote(struct doca_mmap *mmap)
{
	fab_mem_close(mmap->fab);
	mmap->fab = NULL;
}

static doca_error_t import_local(struct doca_mmap *m, const struct fab_export_desc *d, struct doca_dev *dev)
{
	struct dc_export *e;
	enum hw_status st;
	uint32_t rights;

	pthread_mutex_lock(&registry.lock);
	e = registry_find(d);
	if (e == NULL || e->desc.mkey != d->mkey || e->desc.addr != d->addr || e->desc.len != d->len ||
	    e->desc.kind != d->kind || e->desc.access != d->access) {
		pthread_mutex_unlock(&registry.lock);
		DC_ERR("export descriptor does not match a live export (forged or revoked)");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	rights = import_rights(d, &m->rd_access, &m->wr_access);
	st = hw_mkey_reg(dc_dev_pd(dev), e->mmap->addr, d->addr, d->len, rights, &m->devs[0].mkey);
	if (st == HW_OK) {
		m->devs[0].hwk = hw_mkey_lookup(m->devs[0].mkey);
		m->exporter = e->mmap;
		m->next_importer = e->mmap->importers;
		e->mmap->importers = m;
	}
	pthread_mutex_unlock(&registry.lock);
	if (st != HW_OK)
		return DOCA_ERROR_NO_MEMORY;
	m->addr = (uint8_t *)(uintptr_t)d->addr; /* same process: the exporter's own addresses */
	return DOCA_SUCCESS;
}

doca_error_t doca_mmap_create_from_export(const union doca_data *user_data, const void *export_desc,
					  size_t export_desc_len, struct doca_dev *dev, struct doca_mmap **mmap)
{
	struct fab_export_desc d;
	enum fab_desc_status ds;
	struct doca_mmap *m;
	doca_error_t ret;

	if (export_desc == NULL || dev == NULL || mmap == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ds = fab_desc_decode(export_desc, export_desc_len, &d);
	if (ds != FAB_DESC_OK) {
		DC_ERR("refused export descriptor: %s", fab_desc_status_str(ds));
		return DOCA_ERROR_INVALID_VALUE;
	}
	ret = import_check(&d, dev);
	if (ret != DOCA_SUCCESS)
		return ret;
	ret = doca_mmap_create(user_data, &m);
	if (ret != DOCA_SUCCESS)
		return ret;
	m->devs = calloc(1, sizeof(*m->devs));
	if (m->devs == NULL) {
		ret = DOCA_ERROR_NO_MEMORY;
		goto err_free;
	}
	m->devs[0].dev = dev;
	ret = same_process(&d) ? import_local(m, &d, dev) : import_remote(m, &d, dev);
	if (ret != DOCA_SUCCESS)
		goto err_free;
	m->origin = d.kind == FAB_EXPORT_DPU ? DC_MMAP_FROM_EXPORT_DPU : DC_MMAP_FROM_EXPORT_RDMA;
	m->access = dc_access_from_hw(d.access);
	m->len = d.len;
	m->has_range = true;
	m->num_devs = 1;
	m->devs[0].pd_id = hw_pd_id(dc_dev_pd(dev));
	dc_mmap_dev_vouch(m, &m->devs[0]);
	dc_mmap_dma_sync(m);
	if (d.kind == FAB_EXPORT_RDMA)
		m->devs[0].rkey = d.mkey;
	m->state = DC_MMAP_STARTED;
	dc_dev_get(dev);
	*mmap = m;
	return DOCA_SUCCESS;

err_free:
	free(m->devs);
	free(m);
	return ret;
}

/* The exporter is going away: every import loses its key, so its jobs fail. */
void dc_mmap_revoke_importers(struct doca_mmap *mmap)
{
	pthread_mutex_lock(&registry.lock);
	for (struct doca_mmap *imp = mmap->importers; imp != NULL; imp = imp->next_importer) {
		imp->dma_src.dev = imp->dma_dst.dev = NULL; /* before the key goes */
		if (imp->devs[0].mkey != 0)
			hw_mkey_dereg(imp->devs[0].mkey);
		imp->devs[0].mkey = 0;
		imp->devs[0].hwk = NULL;
		imp->devs[0].vouch = 0;
		imp->exporter = NULL;
	}
	mmap->importers = NULL;
	pthread_mutex_unlock(&registry.lock);
}

void dc_mmap_unlink_importer(struct doca_mmap *import)
{
	pthread_mutex_lock(&registry.lock);
	if (import->exporter != NULL) {
		struct doca_mmap **pp = &import->exporter->importers;

		while (*pp != NULL && *pp != import)
			pp = &(*pp)->next_importer;
		if (*pp == import)
			*pp = import->next_importer;
		import->exporter = NULL;
	}
	pthread_mutex_unlock(&registry.lock);
}
