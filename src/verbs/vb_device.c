/*
 * vb_device — the device list and opening a device.
 *
 * One device per emulated function of this process's side that has an ibdev
 * name (representors have none), built once from the topology and never
 * freed: ibv_device pointers stay valid for the life of the process, as
 * rdma-core's do while a context or list holds them.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "base_log.h"
#include "fab_xm.h"
#include "hw_gid.h"
#include "hw_topology.h"
#include "vb_export.h"
#include "vb_int.h"

static struct vb_device vb_devs[HW_TOPO_MAX_FUNCS];
static int vb_ndevs = -1;	/* -1: the topology was refused */
static pthread_once_t vb_devs_once = PTHREAD_ONCE_INIT;

static void vb_device_init(struct vb_device *dev, const struct hw_function *f, int idx, int n)
{
	struct ibv_device *d = &dev->vdev.device;

	d->node_type = IBV_NODE_CA;
	d->transport_type = IBV_TRANSPORT_IB;
	snprintf(d->name, sizeof(d->name), "%s", f->ibdev);
	snprintf(d->dev_name, sizeof(d->dev_name), "uverbs%d", n);
	snprintf(d->dev_path, sizeof(d->dev_path), "/sys/class/infiniband_verbs/uverbs%d", n);
	if (!vb_sysfs_publish(f->pci_str, f->ibdev, d->ibdev_path, sizeof(d->ibdev_path)))
		snprintf(d->ibdev_path, sizeof(d->ibdev_path), "/sys/class/infiniband/%s", f->ibdev);
	dev->magic = VB_MAGIC_DEVICE;
	dev->func_index = (uint32_t)idx;
	dev->func_id = f->id;
	dev->lid = hw_gid_port_lid(f);
	dev->roce = f->link == HW_LINK_ETH;
	dev->fn = *f;
	memcpy(dev->mac, f->mac, sizeof(dev->mac));
	hw_gid_guid(f->mac, (uint8_t *)&dev->node_guid); /* the bytes in wire order: big-endian as a __be64 */
	dev->dv = &vb_dv_ops_impl;
}

static void vb_devices_build(void)
{
	const struct hw_topology *topo = hw_topo_get();
	enum hw_side side;
	uint32_t i;
	int n = 0;

	if (topo == NULL)
		return;
	side = hw_topo_side();
	for (i = 0; i < hw_topo_count(topo) && n < HW_TOPO_MAX_FUNCS; i++) {
		const struct hw_function *f = hw_topo_func(topo, (int)i);

		if (f->is_rep || f->side != side || f->ibdev[0] == '\0')
			continue;
		vb_device_init(&vb_devs[n], f, (int)i, n);
		n++;
	}
	vb_ndevs = n;
}

struct vb_device *vb_devices(int *n)
{
	pthread_once(&vb_devs_once, vb_devices_build);
	*n = vb_ndevs < 0 ? 0 : vb_ndevs;
	return vb_ndevs < 0 ? NULL : vb_devs;
}

VB_EXPORT struct ibv_device **vb_get_device_list(int *num_devices);
VB_EXPORT struct ibv_device **vb_get_device_list(int *num_devices)
{
	struct vb_device *devs;
	struct ibv_device **list;
	int n, i;

	/* *num is set even on failure: callers print it before checking the list. */
	if (num_devices != NULL)
		*num_devices = 0;
	if (fab_ucx_probing())
		return calloc(1, sizeof(*list)); /* the fabric's own UCX: none of ours (fab_xm.h) */
	devs = vb_devices(&n);
	if (devs == NULL) {
		BASE_ERR("the topology was refused: no devices");
		errno = ENODEV;
		return NULL;
	}
	list = calloc((size_t)n + 1, sizeof(*list));
	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < n; i++)
		list[i] = &devs[i].vdev.device;
	if (num_devices != NULL)
		*num_devices = n;
	return list;
}
#undef ibv_get_device_list
VB_SYMVER(vb_get_device_list, ibv_get_device_list, "IBVERBS_1.1");

VB_EXPORT void vb_free_device_list(struct ibv_device **list);
VB_EXPORT void vb_free_device_list(struct ibv_device **list)
{
	free(list);
}
VB_SYMVER(vb_free_device_list, ibv_free_device_list, "IBVERBS_1.1");

VB_EXPORT const char *vb_get_device_name(struct ibv_device *device);
VB_EXPORT const char *vb_get_device_name(struct ibv_device *device)
{
	if (vb_dev_of(device) == NULL) {
		errno = EINVAL;
		return NULL;
	}
	return device->name;
}
VB_SYMVER(vb_get_device_name, ibv_get_device_name, "IBVERBS_1.1");

VB_EXPORT __be64 vb_get_device_guid(struct ibv_device *device);
VB_EXPORT __be64 vb_get_device_guid(struct ibv_device *device)
{
	struct vb_device *dev = vb_dev_of(device);

	if (dev == NULL) {
		errno = EINVAL;
		return 0;
	}
	return dev->node_guid;
}
VB_SYMVER(vb_get_device_guid, ibv_get_device_guid, "IBVERBS_1.1");

VB_EXPORT int ibv_get_device_index(struct ibv_device *device)
{
	struct vb_device *dev = vb_dev_of(device);
	int n;

	if (dev == NULL)
		return -1;
	/* The kernel's ibdev index: the device's place in this side's list. */
	return (int)(dev - vb_devices(&n));
}

static void vb_context_fini(struct vb_context *ctx)
{
	if (ctx->vctx.context.cmd_fd >= 0)
		close(ctx->vctx.context.cmd_fd);
	vb_async_fini(ctx);
	vb_rqpn_fini(ctx);
	vb_var_ctx_fini(ctx);
	vb_bell_cq_fini(ctx);
	vb_bell_ctx_fini(ctx);
	pthread_mutex_destroy(&ctx->vctx.context.mutex);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
}

VB_EXPORT struct ibv_context *vb_open_device(struct ibv_device *device);
VB_EXPORT struct ibv_context *vb_open_device(struct ibv_device *device)
{
	struct vb_device *dev = vb_dev_of(device);
	struct vb_context *ctx;
	struct ibv_context *c;
	int rc;

	if (dev == NULL) {
		errno = EINVAL;
		return NULL;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	c = &ctx->vctx.context;
	c->cmd_fd = -1;
	c->async_fd = -1;
	ctx->async_efd = -1;
	pthread_mutex_init(&c->mutex, NULL);
	pthread_mutex_init(&ctx->lock, NULL);
	ctx->magic = VB_MAGIC_CONTEXT;
	ctx->dev = dev;
	c->device = device;
	/* Extended context: the inline accessors find the ops at negative offsets up to sz. */
	c->abi_compat = __VERBS_ABI_IS_EXTENDED;
	ctx->vctx.sz = sizeof(struct verbs_context);
	c->num_comp_vectors = 1;
	/* No kernel: cmd_fd is a file of the context's own, which names it to ibv_import_device. */
	if (vb_cmd_fd_open(ctx) != 0)
		goto err;
	if (vb_async_init(ctx) != 0)
		goto err;
	vb_ops_fill(&ctx->vctx);
	vb_ctx_live_add(ctx);
	return c;

err:
	rc = errno;
	vb_context_fini(ctx);
	errno = rc;
	return NULL;
}
VB_SYMVER(vb_open_device, ibv_open_device, "IBVERBS_1.1");

VB_EXPORT int vb_close_device(struct ibv_context *context);
VB_EXPORT int vb_close_device(struct ibv_context *context)
{
	struct vb_context *ctx = vb_ctx_checked(context);

	if (ctx == NULL)
		return EINVAL;
	ctx->magic = 0;
	vb_ctx_live_del(ctx);
	vb_devx_close(ctx);
	vb_context_fini(ctx);
	return 0;
}
VB_SYMVER(vb_close_device, ibv_close_device, "IBVERBS_1.1");
