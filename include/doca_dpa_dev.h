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

/** The calling thread's rank in its kernel launch, from 0. */
DOCA_EXPERIMENTAL
unsigned int doca_dpa_dev_thread_rank(void);

/** How many threads its kernel launch runs. */
DOCA_EXPERIMENTAL
unsigned int doca_dpa_dev_num_threads(void);

/** Formats to the host's standard output (at most 512 bytes a call). */
DOCA_EXPERIMENTAL
void doca_dpa_dev_printf(const char *format, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DPA_DEV_H_ */
