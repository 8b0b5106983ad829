/*
 * Device code of the DPA memory isolation tests (test_flexio_isolation.c):
 * RPCs that read and write memory at whatever address the host gives them
 * (their own process's, or on purpose another's), and one that tells where
 * its process's device globals are.
 */
#include <libflexio-dev/flexio_dev.h>
#include <stddef.h>
#include <stdint.h>

static uint64_t fxi_data = 7; /* a device global in .data */
static uint64_t fxi_bss;      /* and one in .bss */

/* The sum of len bytes at a device address, each weighted by its position. */
__dpa_rpc__ uint64_t fxi_sum(flexio_uintptr_t daddr, uint32_t len)
{
	const volatile uint8_t *p = (const volatile uint8_t *)(uintptr_t)daddr;
	uint64_t s = 0;

	for (uint32_t i = 0; i < len; i++)
		s += p[i] * (i + 1u);
	return s;
}

__dpa_rpc__ uint64_t fxi_load(flexio_uintptr_t daddr)
{
	return *(const volatile uint64_t *)(uintptr_t)daddr;
}

__dpa_rpc__ uint64_t fxi_store(flexio_uintptr_t daddr, uint64_t v)
{
	*(volatile uint64_t *)(uintptr_t)daddr = v;
	return v;
}

/* Where this process's copy of a device global is: 0 the .data one, 1 the .bss one. */
__dpa_rpc__ uint64_t fxi_global_addr(uint64_t which)
{
	return which == 0 ? (uint64_t)(uintptr_t)&fxi_data : (uint64_t)(uintptr_t)&fxi_bss;
}
