/*
 * doca_dpa_dev.h — DOCA DPA, device side (DOCA 2.2): what a kernel asks of
 * the DPA it runs on. Device code includes it and is built by dpacc, which
 * links the device library (doca_dpa_dev).
 */
#ifndef DOCA_DPA_DEV_H_
#define DOCA_DPA_DEV_H_

#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"

#ifdef __cplusplus
extern "C" {
#endif

/** An address in DPA memory. */
typedef uint64_t doca_dpa_dev_uintptr_t;
/** Host memory registered with the context (doca_dpa_mem_dev_export). */
typedef uint64_t doca_dpa_dev_mem_t;
/** An endpoint (doca_dpa_ep_dev_export). */
typedef uint64_t doca_dpa_dev_ep_t;
/** A Sync Event of a remote peer (doca_dpa_dev_sync_event.h). */
struct doca_dpa_dev_sync_event_remote;
typedef struct doca_dpa_dev_sync_event_remote doca_dpa_dev_sync_event_remote_t;

/** The calling thread's rank in its kernel launch, from 0. */
DOCA_EXPERIMENTAL
unsigned int doca_dpa_dev_thread_rank(void);

/** How many threads its kernel launch runs. */
DOCA_EXPERIMENTAL
unsigned int doca_dpa_dev_num_threads(void);

/** The remote key of registered memory (undefined without remote access). */
DOCA_EXPERIMENTAL
uint32_t doca_dpa_dev_mem_rkey_get(doca_dpa_dev_mem_t mem);

/**
 * Copies length bytes from src_addr to dest_addr; a memory handle names
 * registered host memory the address lies in (0: DPA memory). Complete once
 * doca_dpa_dev_memcpy_synchronize returns.
 */
DOCA_EXPERIMENTAL
void doca_dpa_dev_memcpy_nb(uint64_t dest_addr, doca_dpa_dev_mem_t dest_mem, uint64_t src_addr,
			    doca_dpa_dev_mem_t src_mem, size_t length);

/** Copies a num_rows x num_columns array of element_size elements transposed. */
DOCA_EXPERIMENTAL
void doca_dpa_dev_memcpy_transpose2D_nb(uint64_t dest_addr, doca_dpa_dev_mem_t dest_mem, uint64_t src_addr,
					doca_dpa_dev_mem_t src_mem, size_t length, size_t element_size,
					size_t num_columns, size_t num_rows);

/** Returns once the calling thread's copies are complete. */
DOCA_EXPERIMENTAL
void doca_dpa_dev_memcpy_synchronize(void);

/** A pointer device code loads from and stores to for ext_addr of registered host memory mem. */
DOCA_EXPERIMENTAL
void doca_dpa_dev_external_ptr_get(uint64_t ext_addr, doca_dpa_dev_mem_t mem, doca_dpa_dev_uintptr_t *dev_ptr);

/**
 * Writes length bytes at local_addr (inside registered memory local_mem) to
 * raddr of the endpoint's peer under rkey (RDMA WRITE); the buffer may be
 * reused after doca_dpa_dev_ep_synchronize. A failed write is a fatal error
 * of the context.
 */
DOCA_EXPERIMENTAL
void doca_dpa_dev_put_nb(doca_dpa_dev_ep_t ep, uint64_t local_addr, size_t length, doca_dpa_dev_mem_t local_mem,
			 uint64_t raddr, uint32_t rkey);
/** Writes length bytes to the peer, then adds comp_count to a remote Sync Event (doca_sync_event_export_remote). */
DOCA_EXPERIMENTAL
void doca_dpa_dev_put_signal_add_nb(doca_dpa_dev_ep_t ep, uint64_t local_addr, doca_dpa_dev_mem_t local_mem,
				    size_t length, uint64_t raddr, uint32_t rkey, doca_dpa_dev_sync_event_remote_t event,
				    uint64_t comp_count);
/** Writes length bytes to the peer, then sets a remote Sync Event (doca_sync_event_export_remote) to comp_count. */
DOCA_EXPERIMENTAL
void doca_dpa_dev_put_signal_set_nb(doca_dpa_dev_ep_t ep, uint64_t local_addr, doca_dpa_dev_mem_t local_mem,
				    size_t length, uint64_t raddr, uint32_t rkey, doca_dpa_dev_sync_event_remote_t event,
				    uint64_t comp_count);
/** Returns once the endpoint's operations completed (a failed one: a fatal error of the context). */
DOCA_EXPERIMENTAL
void doca_dpa_dev_ep_synchronize(doca_dpa_dev_ep_t ep);

/** Formats to the host's standard output (at most 512 bytes a call). */
DOCA_EXPERIMENTAL
void doca_dpa_dev_printf(const char *format, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DPA_DEV_H_ */
