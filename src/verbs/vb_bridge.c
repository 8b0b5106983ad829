/*
 * vb_bridge — the verbs half of DOCA's RDMA bridge (doca_rdma_bridge.h).
 *
 * doca_dev_get_pd hands out an ibv_pd for the domain of a DOCA device. Both
 * libraries sit on the one device of libsoftdpu.so.0, so the domain is the
 * same hw_pd: this file makes an ibv_pd (and the ibv_context it belongs to)
 * over it, and hw_pd_wrap reaches it through the hook installed at load. The
 * DOCA device owns the result: ibv_dealloc_pd refuses it, and the device's
 * close unwraps it (EBUSY while MRs, QPs or SRQs still use it).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "base_log.h"
#include "vb_export.h"
#include "vb_int.h"

VB_EXPORT struct ibv_context *vb_open_device(struct ibv_device *device);
VB_EXPORT int vb_close_device(struct ibv_context *context);

static struct vb_device *vb_device_of_function(uint32_t func_id)
{
	struct vb_device *devs;
	int n;

	devs = vb_devices(&n);
	for (int i = 0; i < n; i++)
		if (devs[i].func_id == func_id)
			return &devs[i];
	return NULL;
}

static void *vb_bridge_wrap(struct hw_pd *hw)
{
	struct vb_device *dev = vb_device_of_function(hw_pd_function(hw));
	struct ibv_context *ctx;
	struct vb_pd *pd;

	if (dev == NULL) {
		BASE_ERR("no verbs device for function %u", hw_pd_function(hw));
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL)
		return NULL;
	ctx = vb_open_device(&dev->vdev.device);
	if (ctx == NULL)
		goto err_free;
	pd->hw = hw_pd_get(hw_pd_id(hw));
	if (pd->hw == NULL)
		goto err_close;
	pd->doca_owned = true;
	pd->pd.context = ctx;
	pd->pd.handle = hw_pd_id(hw);
	return &pd->pd;

err_close:
	vb_close_device(ctx);
err_free:
	free(pd);
	return NULL;
}

static int vb_bridge_unwrap(void *wrapper)
{
	struct vb_pd *pd = wrapper;

	if (atomic_load(&pd->users) != 0)
		return EBUSY;
	hw_pd_free(pd->hw);
	vb_close_device(pd->pd.context);
	free(pd);
	return 0;
}

static const struct hw_pd_wrap_ops vb_bridge_ops = {
	.wrap = vb_bridge_wrap,
	.unwrap = vb_bridge_unwrap,
};

__attribute__((constructor)) static void vb_bridge_plug(void)
{
	hw_pd_set_wrap_ops(&vb_bridge_ops);
}
