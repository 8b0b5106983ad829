/*
 * dc_dev — what the rest of DOCA Core needs from devices (implemented in dev.c).
 */
#ifndef DC_DEV_H_
#define DC_DEV_H_

#include <stdbool.h>
#include <stdint.h>

#include "doca_dev.h"
#include "hw_mem.h"

/* Capabilities a device may have (from the emulated topology). */
enum dc_cap {
	DC_CAP_DMA,
	DC_CAP_MMAP_EXPORT_DPU,
	DC_CAP_MMAP_FROM_EXPORT_DPU,
	DC_CAP_MMAP_EXPORT_RDMA,
	DC_CAP_MMAP_FROM_EXPORT_RDMA,
	DC_CAP_HOTPLUG_MANAGER,
	DC_CAP_REP_FILTER_ALL,
	DC_CAP_REP_FILTER_NET,
	DC_CAP_REP_FILTER_EMULATED,
	DC_CAP_SHA,
};

bool dc_devinfo_cap(const struct doca_devinfo *info, enum dc_cap cap);
bool dc_dev_cap(const struct doca_dev *dev, enum dc_cap cap);

/* Protection domain of an open device; mmaps register their ranges in it. */
struct hw_pd *dc_dev_pd(const struct doca_dev *dev);

/* The function behind an open device or a devinfo (its port: LID, GIDs, link layer). */
struct hw_function;
const struct hw_function *dc_dev_fn(const struct doca_dev *dev);
const struct hw_function *dc_devinfo_fn(const struct doca_devinfo *info);

/* True when the device is a DPU-side function (DPU PF or SF). */
bool dc_dev_on_dpu(const struct doca_dev *dev);

/*
 * Users (mmaps, contexts) hold a reference while a device is attached to them,
 * so doca_dev_close() of the last open handle can refuse with DOCA_ERROR_IN_USE.
 */
void dc_dev_get(struct doca_dev *dev);
void dc_dev_put(struct doca_dev *dev);

/* The same for a representor a user keeps (a comm channel service): doca_dev_rep_close() refuses meanwhile. */
void dc_dev_rep_get(struct doca_dev_rep *rep);
void dc_dev_rep_put(struct doca_dev_rep *rep);

#endif /* DC_DEV_H_ */
