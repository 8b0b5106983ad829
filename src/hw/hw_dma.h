/*
 * hw_dma — the emulated DMA engine.
 *
 * A copy is described by scatter/gather lists of (key, address, length, right).
 * The engine translates and checks every element first and copies only when
 * all of them pass, so a refused job never touches memory.
 */
#ifndef HW_DMA_H_
#define HW_DMA_H_

#include <stdint.h>

#include "hw_mem.h"

struct hw_sge {
	uint32_t key;
	uint32_t access; /* enum hw_access right the element needs */
	uint64_t addr;
	uint64_t len;
};

/*
 * Copies the bytes of src[0..nsrc) into dst[0..ndst) in order, filling each
 * destination element before the next. All keys must belong to domain pd_id.
 * On success *copied is the number of bytes moved.
 */
enum hw_status hw_dma_copy(uint32_t pd_id, const struct hw_sge *src, uint32_t nsrc, const struct hw_sge *dst,
			   uint32_t ndst, uint64_t *copied);

#endif /* HW_DMA_H_ */
