/* What the DMA copy sample pair says to each other over the comm channel. */
#ifndef SOFTDPU_DMA_COPY_PROTO_H_
#define SOFTDPU_DMA_COPY_PROTO_H_

#include <stddef.h>
#include <stdint.h>

#define DMA_COPY_SERVICE "softdpu_dma_copy"
#define DMA_COPY_MAGIC 0x444d4131u /* "DMA1" */
#define DMA_COPY_MAX (256u << 20)

/* host -> DPU, after the export descriptor */
struct dma_copy_info {
	uint32_t magic;
	uint32_t rsvd;
	uint64_t addr; /* the buffer, in the host's address space */
	uint64_t len;
};

/* DPU -> host, at the end */
struct dma_copy_done {
	uint32_t magic;
	int32_t status;	   /* doca_error_t of the DPU side */
	uint64_t checksum; /* of the bytes the DPU read */
};

/* The host's buffer, and the answer the DPU writes over it. */
static inline uint8_t dma_copy_pattern(size_t i)
{
	return (uint8_t)(i * 31u + (i >> 9));
}

static inline uint8_t dma_copy_answer(size_t i)
{
	return (uint8_t)~dma_copy_pattern(i);
}

static inline uint64_t dma_copy_checksum(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

static inline uint64_t dma_copy_checksum_expected(size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t i = 0; i < n; i++)
		h = (h ^ dma_copy_pattern(i)) * 1099511628211ull;
	return h;
}

#endif /* SOFTDPU_DMA_COPY_PROTO_H_ */
