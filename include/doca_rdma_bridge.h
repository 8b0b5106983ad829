/*
 * doca_rdma_bridge.h — converting between DOCA Core and rdma-core objects
 * (DOCA Core guide §3.6): an ibv_pd is a doca_dev, an ibv_mr's key is what
 * doca_buf_get_mkey returns.
 *
 * softdpu: libdoca_common.so and libibverbs.so.1 run on one emulated device,
 * so the domain, and every key registered in it, is the same object on both
 * sides.
 */
#ifndef DOCA_RDMA_BRIDGE_H_
#define DOCA_RDMA_BRIDGE_H_

#include <stdint.h>

#include <infiniband/verbs.h>

#include <doca_compat.h>
#include <doca_error.h>
#include <doca_types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct doca_dev;
struct doca_buf;

/**
 * The verbs protection domain of a DOCA device: the ibv_pd it was opened
 * from, or one made over the device's own domain on the first call (owned
 * by the device: ibv_dealloc_pd refuses it with EBUSY, doca_dev_close frees
 * it and is DOCA_ERROR_IN_USE while MRs, QPs or SRQs still use it).
 *
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for a NULL argument or a
 * device that is not open; DOCA_ERROR_NOT_SUPPORTED when libibverbs.so.1 is
 * not loaded; DOCA_ERROR_BAD_STATE when no ibv_pd could be made.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_get_pd(const struct doca_dev *dev, struct ibv_pd **pd);

/**
 * A DOCA device sharing the protection domain pd: mmaps that add it register
 * their memory in pd, so doca_buf_get_mkey gives keys verbs work requests on
 * pd's QPs use as lkeys (and, with RDMA rights, peers as rkeys). The device
 * is separate from the one doca_dev_open gives for the same function. Close
 * it with doca_dev_close.
 *
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for a NULL argument, a pd
 * that is no live domain of this process, or a pd already associated with a
 * DOCA device (opened from it, or given by doca_dev_get_pd);
 * DOCA_ERROR_NO_MEMORY.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_dev_open_from_pd(struct ibv_pd *pd, struct doca_dev **dev);

/**
 * The key of buf's memory on dev: the lkey (and rkey, when the mmap grants
 * RDMA rights) of a verbs work request on dev's domain. For an mmap created
 * from an RDMA export, the exporter's key: the rkey its peer names.
 *
 * @return DOCA_SUCCESS; DOCA_ERROR_INVALID_VALUE for a NULL argument;
 * DOCA_ERROR_NOT_FOUND when buf's mmap is not registered with dev.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_buf_get_mkey(const struct doca_buf *buf, struct doca_dev *dev, uint32_t *mkey);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_RDMA_BRIDGE_H_ */
