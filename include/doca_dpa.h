/*
 * doca_dpa.h — DOCA DPA, host side (DOCA 2.2).
 *
 * A DPA context runs one application (device code built by dpacc) on the
 * DPA of a device: kernels launched with a number of threads, waiting for
 * and completing DOCA Sync Events; DPA memory allocated, copied to and set
 * from the host.
 *
 * softdpu: a DPA context is a FlexIO process of the application; kernels
 * run on emulated DPA harts (host threads) of that process; endpoints are
 * RC QPs of the device.
 */
#ifndef DOCA_DPA_H_
#define DOCA_DPA_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_dev.h"
#include "doca_error.h"
#include "doca_sync_event.h"
#include "doca_types.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A DPA context. */
struct doca_dpa;
/** An application dpacc built (`--app-name=NAME` defines `struct doca_dpa_app *NAME`). */
struct doca_dpa_app;
/** Host memory registered with a DPA context. */
struct doca_dpa_mem;
/** A DPA worker: the progress engine of its endpoints. */
struct doca_dpa_worker;
/** A worker, as the DOCA 2.2 samples name it. */
typedef struct doca_dpa_worker *doca_dpa_worker_t;
/** A DPA endpoint. */
struct doca_dpa_ep;
/** The address of a DPA endpoint, for its peer's connect. */
struct doca_dpa_ep_addr;

/** A kernel: the host name of a __dpa_global__ device function (`extern doca_dpa_func_t name;`). */
typedef void(doca_dpa_func_t)(void);
/** An address in DPA memory. */
typedef uint64_t doca_dpa_dev_uintptr_t;
/** Registered memory as device code names it. */
typedef uint64_t doca_dpa_dev_mem_t;
/** An endpoint as device code names it. */
typedef uint64_t doca_dpa_dev_ep_t;

/**
 * DOCA_SUCCESS when devinfo's device has a DPA (every device here: DPA
 * contexts run on the FlexIO runtime of the program); DOCA_ERROR_INVALID_VALUE
 * for NULL.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_devinfo_get_is_dpa_supported(const struct doca_devinfo *devinfo);

/**
 * Creates a DPA context running app on dev; flags must be 0.
 * DOCA_ERROR_INVALID_VALUE for a NULL argument or flags, DOCA_ERROR_NO_MEMORY,
 * DOCA_ERROR_DRIVER when the application cannot be loaded.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_create(struct doca_dev *dev, struct doca_dpa_app *app, struct doca_dpa **dpa,
			     unsigned int flags);

/**
 * Destroys a DPA context: kernels still running are stopped, its DPA memory
 * is released. DOCA_ERROR_INVALID_VALUE for NULL.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_destroy(struct doca_dpa *dpa);

/** The longest a kernel may run, in seconds; a longer one is a fatal error of the context. */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_get_kernel_max_run_time(struct doca_dpa *dpa, unsigned long long *value);

/** The most threads one launch may ask for. */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_get_max_threads_per_kernel(struct doca_dpa *dpa, unsigned int *value);

/**
 * DOCA_SUCCESS while no kernel of the context failed; DOCA_ERROR_BAD_STATE
 * once one faulted, reported a fatal error or ran past the maximum run
 * time (the context then launches nothing more). Does not reset the error.
 * DOCA_ERROR_INVALID_VALUE for NULL.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_peek_at_last_error(struct doca_dpa *dpa);

/**
 * Launches func on num_threads DPA threads with the arguments that follow
 * (as its prototype types them), asynchronously. When wait_event is not
 * NULL, the kernel starts once its value is greater than wait_threshold;
 * when comp_event is not NULL, comp_count is added to it (update_add) or it
 * is set to comp_count (update_set) once every thread returned. The events
 * need a DPA location (doca_sync_event_*_add_location_dpa).
 * DOCA_ERROR_INVALID_VALUE for a NULL dpa or func, 0 threads, more than the
 * maximum, or an event without a DPA location; DOCA_ERROR_BAD_STATE once
 * the context failed; DOCA_ERROR_NO_MEMORY.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_kernel_launch_update_add(struct doca_dpa *dpa, struct doca_sync_event *wait_event,
					       uint64_t wait_threshold, struct doca_sync_event *comp_event,
					       uint64_t comp_count, unsigned int num_threads, doca_dpa_func_t *func,
					       ...);

/** As doca_dpa_kernel_launch_update_add, setting comp_event to comp_count. */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_kernel_launch_update_set(struct doca_dpa *dpa, struct doca_sync_event *wait_event,
					       uint64_t wait_threshold, struct doca_sync_event *comp_event,
					       uint64_t comp_count, unsigned int num_threads, doca_dpa_func_t *func,
					       ...);

/**
 * Allocates size bytes of DPA memory. DOCA_ERROR_INVALID_VALUE for NULL or
 * size 0, DOCA_ERROR_NO_MEMORY when the context's memory is exhausted.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_mem_alloc(struct doca_dpa *dpa, size_t size, doca_dpa_dev_uintptr_t *dev_ptr);

/** Frees DPA memory. DOCA_ERROR_INVALID_VALUE for NULL or an address not allocated. */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_mem_free(struct doca_dpa *dpa, doca_dpa_dev_uintptr_t dev_ptr);

/**
 * Copies size bytes of host memory to DPA memory. DOCA_ERROR_INVALID_VALUE
 * for NULL or a range not inside one allocation.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_h2d_memcpy(struct doca_dpa *dpa, doca_dpa_dev_uintptr_t dst_ptr, void *src_ptr, size_t size);

/** Sets size bytes of DPA memory to value. DOCA_ERROR_INVALID_VALUE as h2d_memcpy. */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_memset(struct doca_dpa *dpa, doca_dpa_dev_uintptr_t dev_ptr, int value, size_t size);

/**
 * Registers [addr, addr+length) of host memory with the context, with
 * access (DOCA_ACCESS_LOCAL_READ_WRITE and the RDMA rights; remote write and
 * atomics need local write); flags must be 0. DOCA_ERROR_INVALID_VALUE for
 * a NULL argument, length 0, other access bits or flags; DOCA_ERROR_DRIVER
 * when the device refuses the range; DOCA_ERROR_NO_MEMORY.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_mem_host_register(struct doca_dpa *dpa, void *addr, size_t length, unsigned int access,
					struct doca_dpa_mem **mem, unsigned int flags);
/** Unregisters host memory. DOCA_ERROR_INVALID_VALUE for NULL. */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_mem_unregister(struct doca_dpa_mem *mem);
/** The remote key of registered memory (a peer's RDMA reaches it with it). DOCA_ERROR_INVALID_VALUE for NULL. */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_mem_rkey_get(struct doca_dpa_mem *mem, uint32_t *rkey);
/** The handle device code names registered memory by. DOCA_ERROR_INVALID_VALUE for NULL. */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_mem_dev_export(struct doca_dpa_mem *mem, doca_dpa_dev_mem_t *handle);

/**
 * Creates a worker: the progress engine (a completion queue) of endpoints;
 * flags must be 0. DOCA_ERROR_INVALID_VALUE for NULL or flags,
 * DOCA_ERROR_NO_MEMORY, DOCA_ERROR_DRIVER.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_worker_create(struct doca_dpa *dpa, struct doca_dpa_worker **worker, unsigned int flags);
/** Destroys a worker. DOCA_ERROR_INVALID_VALUE for NULL, DOCA_ERROR_IN_USE while it has endpoints. */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_worker_destroy(struct doca_dpa_worker *worker);

/**
 * Creates an endpoint of worker (an RC connection of the device) allowing
 * its peer access_flags (DOCA_ACCESS_*). DOCA_ERROR_INVALID_VALUE for NULL,
 * DOCA_ERROR_NO_MEMORY, DOCA_ERROR_DRIVER.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_ep_create(struct doca_dpa_worker *worker, unsigned int access_flags, struct doca_dpa_ep **ep);
/** Destroys an endpoint. DOCA_ERROR_INVALID_VALUE for NULL. */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_ep_destroy(struct doca_dpa_ep *ep);
/** The endpoint's address for its peer (freed with doca_dpa_ep_addr_free). DOCA_ERROR_INVALID_VALUE for NULL. */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_ep_addr_get(struct doca_dpa_ep *ep, struct doca_dpa_ep_addr **addr, size_t *addr_length);
/** Frees an address; NULL is nothing to free (DOCA_SUCCESS). */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_ep_addr_free(struct doca_dpa_ep_addr *addr);
/**
 * Connects the endpoint to the peer at addr. DOCA_ERROR_INVALID_VALUE for
 * NULL, DOCA_ERROR_BAD_STATE when it is connected already.
 */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_ep_connect(struct doca_dpa_ep *ep, struct doca_dpa_ep_addr *addr);
/** The handle device code names the endpoint by. DOCA_ERROR_INVALID_VALUE for NULL. */
DOCA_EXPERIMENTAL
doca_error_t doca_dpa_ep_dev_export(struct doca_dpa_ep *ep, doca_dpa_dev_ep_t *handle);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DPA_H_ */
