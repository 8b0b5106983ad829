/*
 * softdpu — DOCA DMA library (DOCA 2.2 work-queue API).
 *
 * A memcpy job appends the source data (all segments of a source list) to the
 * destination: it writes after the destination's data segment (spilling into
 * the next list elements when the destination is a list) and grows its data
 * length. A failed job leaves the destination untouched; its event's
 * result.u64 holds the reason (struct doca_dma_memcpy_result).
 */
#ifndef DOCA_DMA_H_
#define DOCA_DMA_H_

#include <inttypes.h>

#include "doca_buf.h"
#include "doca_compat.h"
#include "doca_ctx.h"

#ifdef __cplusplus
extern "C" {
#endif

enum doca_dma_job_types {
	DOCA_DMA_JOB_MEMCPY = DOCA_ACTION_DMA_FIRST + 1,
};

struct doca_dma_job_memcpy {
	struct doca_job base;		 /**< Common job data */
	struct doca_buf *dst_buff;	 /**< Destination data buffer */
	struct doca_buf const *src_buff; /**< Source data buffer */
};

/** Result of a memcpy job, held in doca_event::result. */
struct doca_dma_memcpy_result {
	doca_error_t result;
};

struct doca_dma;

enum doca_dma_devinfo_caps {
	DOCA_DMA_CAP_NONE = 0,
	DOCA_DMA_CAP_HW_OFFLOAD = 1U << 0,
};

__DOCA_EXPERIMENTAL
doca_error_t doca_dma_create(struct doca_dma **dma);

/** DOCA_ERROR_IN_USE while started or while work queues are attached. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dma_destroy(struct doca_dma *dma);

/** DOCA_SUCCESS when the device can run job_type, DOCA_ERROR_NOT_SUPPORTED otherwise. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dma_job_get_supported(struct doca_devinfo *devinfo, enum doca_dma_job_types job_type);

__DOCA_EXPERIMENTAL
struct doca_ctx *doca_dma_as_ctx(struct doca_dma *dma);

/** Maximal number of elements of a buffer list in one job (1: no list support). */
__DOCA_EXPERIMENTAL
doca_error_t doca_dma_get_max_list_buf_num_elem(const struct doca_devinfo *devinfo, uint32_t *max_list_num_elem);

/** Maximal number of bytes one job moves. */
__DOCA_EXPERIMENTAL
doca_error_t doca_dma_get_max_buf_size(const struct doca_devinfo *devinfo, uint64_t *buf_size);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_DMA_H_ */
