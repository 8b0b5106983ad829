/*
 * dpad_mem — device code's access to host memory registered with its
 * context (dpa_abi.h's record): a pointer to it, its remote key, and copies
 * between it and DPA memory. An address outside the registered range is a
 * fatal error of the context, as an access through a bad key is on the card.
 */
#include <string.h>

#include <libflexio-dev/flexio_dev_err.h>

#include "dpa_abi.h"
#include "dpad_int.h"

/* The record behind h, checked to cover [addr, addr+len) (0: DPA memory, not checked here). */
void dpad_mem_check(doca_dpa_dev_mem_t h, uint64_t addr, uint64_t len)
{
	const struct dpa_dev_mem *m = (const struct dpa_dev_mem *)(uintptr_t)h;

	if (h == 0)
		return;
	if (m->magic != DPA_MEM_MAGIC || addr < m->addr || len > m->len || addr - m->addr > m->len - len) {
		doca_dpa_dev_printf("doca_dpa_dev: [0x%lx, +%lu) is outside the registered memory\n",
				    (unsigned long)addr, (unsigned long)len);
		flexio_dev_error(DPAD_ERR_MEM);
	}
}

uint32_t doca_dpa_dev_mem_rkey_get(doca_dpa_dev_mem_t mem)
{
	return ((const struct dpa_dev_mem *)(uintptr_t)mem)->rkey;
}

void doca_dpa_dev_external_ptr_get(uint64_t ext_addr, doca_dpa_dev_mem_t mem, doca_dpa_dev_uintptr_t *dev_ptr)
{
	dpad_mem_check(mem, ext_addr, 1);
	*dev_ptr = ext_addr; /* DPA threads are host threads: the host address itself */
}

/* Copies complete before the call returns: synchronize has nothing left to wait for. */
void doca_dpa_dev_memcpy_nb(uint64_t dest_addr, doca_dpa_dev_mem_t dest_mem, uint64_t src_addr,
			    doca_dpa_dev_mem_t src_mem, size_t length)
{
	dpad_mem_check(dest_mem, dest_addr, length);
	dpad_mem_check(src_mem, src_addr, length);
	memmove((void *)(uintptr_t)dest_addr, (const void *)(uintptr_t)src_addr, length);
}

void doca_dpa_dev_memcpy_transpose2D_nb(uint64_t dest_addr, doca_dpa_dev_mem_t dest_mem, uint64_t src_addr,
					doca_dpa_dev_mem_t src_mem, size_t length, size_t element_size,
					size_t num_columns, size_t num_rows)
{
	uint8_t *d = (uint8_t *)(uintptr_t)dest_addr;
	const uint8_t *s = (const uint8_t *)(uintptr_t)src_addr;

	if (element_size == 0 || num_columns * num_rows * element_size > length) {
		doca_dpa_dev_printf("doca_dpa_dev: a %lux%lu transpose of %lu-byte elements exceeds %lu bytes\n",
				    (unsigned long)num_rows, (unsigned long)num_columns, (unsigned long)element_size,
				    (unsigned long)length);
		flexio_dev_error(DPAD_ERR_MEM);
	}
	dpad_mem_check(dest_mem, dest_addr, length);
	dpad_mem_check(src_mem, src_addr, length);
	for (size_t r = 0; r < num_rows; r++)
		for (size_t c = 0; c < num_columns; c++)
			memcpy(d + (c * num_rows + r) * element_size, s + (r * num_columns + c) * element_size,
			       element_size);
}

void doca_dpa_dev_memcpy_synchronize(void)
{
}
