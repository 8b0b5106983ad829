/*
 * fab_mem — export publication and import path selection.
 */
#include "fab_mem.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base_config.h"
#include "base_log.h"
#include "base_status.h"
#include "fab_share.h"
#include "fab_table.h"

struct fab_export {
	uint64_t export_id;
	void *ucx_priv; /* non-NULL when the export also has a UCX section */
	bool shared;	/* backing holds a reference on a shareable backing */
	struct fab_backing backing;
};

struct fab_import {
	const struct fab_xport_ops *ops;
	struct fab_remote *remote;
};

#ifndef SOFTDPU_HAVE_UCX
/* Built without UCX: every operation says so, nothing pretends to work. */
static int no_ucx_export(const struct fab_export_desc *d, void *addr, struct fab_xinfo *info, void **priv)
{
	(void)d;
	(void)addr;
	(void)priv;
	info->len = 0;
	BASE_ERR("softdpu was built without UCX: exports reach this machine only");
	return -1;
}

static int no_ucx_open(const struct fab_export_desc *d, const struct fab_xinfo *info, struct fab_remote **r)
{
	(void)d;
	(void)info;
	(void)r;
	BASE_ERR("softdpu was built without UCX: memory of another machine is out of reach");
	return FAB_ERR_NO_PATH;
}

const struct fab_xport_ops fab_ucx_ops = {
	.name = "ucx (not built)",
	.export_range = no_ucx_export,
	.open = no_ucx_open,
};
#endif

/* Exports reach other machines only when the exporting process asks for it. */
static void add_ucx_section(struct fab_export_desc *d, void *addr, struct fab_export *ex)
{
	struct fab_section *s = &d->sect[d->nsect];

	if (fab_ucx_ops.export_range(d, addr, &s->info, &ex->ucx_priv) != 0 || s->info.len == 0) {
		BASE_ERR("UCX export failed: the memory is reachable from this machine only");
		ex->ucx_priv = NULL;
		return;
	}
	s->xport = FAB_XPORT_UCX;
	d->nsect++;
}

int fab_mem_publish(struct fab_export_desc *d, void *addr, struct fab_export **out)
{
	struct fab_export *ex = calloc(1, sizeof(*ex));
	int ret;

	if (ex == NULL)
		return -ENOMEM;
	/* Importers on this machine map shareable memory; other memory they reach by cross-memory attach. */
	ex->shared = fab_share_get(addr, d->len, &ex->backing) == 0;
	ret = fab_table_claim(d, ex->shared ? &ex->backing : NULL);
	if (ret != 0) {
		if (ex->shared)
			fab_share_put(&ex->backing);
		free(ex);
		return ret;
	}
	ex->export_id = d->export_id;
	d->nsect = 0;
	if (base_config_fabric() == BASE_FABRIC_UCX)
		add_ucx_section(d, addr, ex);
	*out = ex;
	return 0;
}

void fab_mem_withdraw(struct fab_export *ex)
{
	if (ex == NULL)
		return;
	if (ex->ucx_priv != NULL)
		fab_ucx_ops.unexport(ex->ucx_priv);
	fab_table_withdraw(ex->export_id);
	if (ex->shared)
		fab_share_put(&ex->backing);
	free(ex);
}

static const struct fab_xport_ops *pick(const struct fab_export_desc *d, const struct fab_xinfo **info)
{
	const struct fab_section *ucx = fab_desc_section(d, FAB_XPORT_UCX);
	enum base_fabric_mode mode = base_config_fabric();
	uint8_t here[FAB_HOST_ID_LEN];

	*info = ucx != NULL ? &ucx->info : NULL;
	fab_host_id(here);
	if (mode == BASE_FABRIC_UCX || (mode == BASE_FABRIC_AUTO && memcmp(here, d->host_id, FAB_HOST_ID_LEN) != 0))
		return ucx != NULL ? &fab_ucx_ops : NULL;
	return memcmp(here, d->host_id, FAB_HOST_ID_LEN) == 0 ? &fab_cma_ops : NULL;
}

enum fab_status fab_mem_open(const struct fab_export_desc *d, struct fab_import **out)
{
	static const struct fab_xinfo none;
	const struct fab_xinfo *info;
	const struct fab_xport_ops *ops = pick(d, &info);
	struct fab_import *imp;
	int st;

	if (ops == NULL) {
		BASE_ERR("no path to the exporter: descriptor from another machine without a UCX section "
		       "(set SOFTDPU_FABRIC=ucx in the exporting process)");
		return FAB_ERR_NO_PATH;
	}
	imp = calloc(1, sizeof(*imp));
	if (imp == NULL)
		return FAB_ERR_IO;
	st = ops->open(d, info != NULL ? info : &none, &imp->remote);
	if (st != FAB_OK) {
		free(imp);
		return (enum fab_status)st;
	}
	imp->ops = ops;
	*out = imp;
	return FAB_OK;
}

void fab_mem_close(struct fab_import *imp)
{
	if (imp == NULL)
		return;
	imp->ops->close(imp->remote);
	free(imp);
}

const char *fab_mem_path(const struct fab_import *imp)
{
	return imp->ops->name;
}

static enum hw_status to_hw(enum fab_status st)
{
	switch (st) {
	case FAB_OK:
		return HW_OK;
	case FAB_ERR_REVOKED:
		return HW_ERR_REVOKED;
	case FAB_ERR_PEER_GONE:
		return HW_ERR_PEER_GONE;
	case FAB_ERR_TIMEOUT:
		return HW_ERR_TIMEOUT;
	case FAB_ERR_INVAL:
		return HW_ERR_BOUNDS;
	default:
		return HW_ERR_REMOTE_IO;
	}
}

static enum hw_status mem_read(void *ctx, uint64_t addr, void *dst, uint64_t len)
{
	struct fab_import *imp = ctx;

	return to_hw(imp->ops->read(imp->remote, addr, dst, len));
}

static enum hw_status mem_write(void *ctx, uint64_t addr, const void *src, uint64_t len)
{
	struct fab_import *imp = ctx;

	return to_hw(imp->ops->write(imp->remote, addr, src, len));
}

const struct hw_remote_ops fab_mem_hw_ops = {
	.read = mem_read,
	.write = mem_write,
};

static const char *const fab_status_names[] = {
	[FAB_OK] = "success",
	[FAB_ERR_REVOKED] = "the exporter withdrew the memory",
	[FAB_ERR_PEER_GONE] = "the exporting process is gone",
	[FAB_ERR_TIMEOUT] = "no answer from the exporter in time",
	[FAB_ERR_IO] = "transport failure",
	[FAB_ERR_INVAL] = "access outside the exported range",
	[FAB_ERR_NO_PATH] = "no transport reaches the exporter",
};
BASE_STATUS_TABLE_COVERS(fab_status_names, FAB_ERR_NO_PATH);

const char *fab_status_str(enum fab_status st)
{
	return base_status_str(fab_status_names, st);
}
