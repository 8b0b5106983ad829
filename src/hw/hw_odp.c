/*
 * hw_odp — the accesses of implicit on-demand paging keys (hw_mem.h).
 *
 * An implicit key names the whole address space, most of which is not
 * mapped: the engine would fault on it (SIGSEGV) where the card's page
 * fault fails the access. So each access first faults its pages in the
 * way the card's page-fault handler does, with the rights it needs
 * (MADV_POPULATE_READ / MADV_POPULATE_WRITE, which touch no byte), and a
 * range the kernel cannot fault in (not mapped, PROT_NONE, read-only for a
 * write, a file's pages beyond its end) fails the access as one outside a
 * registration. Kernels before 5.14 lack those advices: there only whether
 * the range is mapped is checked (mincore), not its protection.
 *
 * Not guarded: memory the program unmaps while a WQE through the key is
 * running, as it must not do with memory it handed to the device.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hw_mem.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#define MADV_POPULATE_WRITE 23
#endif

#define ODP_WRITES (HW_ACCESS_LOCAL_WRITE | HW_ACCESS_REMOTE_WRITE | HW_ACCESS_REMOTE_ATOMIC | HW_ACCESS_PEER_WRITE)

static uint64_t odp_page(void)
{
	static uint64_t page;
	uint64_t p = __atomic_load_n(&page, __ATOMIC_RELAXED);

	if (p == 0) {
		long v = sysconf(_SC_PAGESIZE);

		p = v > 0 ? (uint64_t)v : 4096;
		__atomic_store_n(&page, p, __ATOMIC_RELAXED);
	}
	return p;
}

/* 1: the kernel has MADV_POPULATE_*, 0: not, -1: not asked yet (a page of this library's own data is). */
static int odp_populate_known(void)
{
	static int known = -1;
	static const uint8_t probe[1];
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED);

	if (k < 0) {
		uintptr_t lo = (uintptr_t)probe & ~(uintptr_t)(odp_page() - 1);

		k = madvise((void *)lo, (size_t)odp_page(), MADV_POPULATE_READ) == 0;
		__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	}
	return k;
}

/* Whether the pages of [lo, lo + len) (page-aligned) are mapped, without their rights (older kernels). */
static bool odp_mapped(uintptr_t lo, uint64_t len)
{
	unsigned char vec[64];
	uint64_t page = odp_page(), step = page * sizeof(vec);

	for (uint64_t off = 0; off < len; off += step) {
		uint64_t n = len - off < step ? len - off : step;

		if (mincore((void *)(lo + off), (size_t)n, vec) != 0)
			return false;
	}
	return true;
}

/* Faults [addr, addr + len) in, writable when write; false when the kernel cannot (the card's failed fault). */
static bool odp_fault_in(uint64_t addr, uint64_t len, bool write)
{
	uint64_t page = odp_page(), lo = addr & ~(page - 1), end;
	int rc;

	if (__builtin_add_overflow(addr, len, &end) || __builtin_add_overflow(end, page - 1, &end) ||
	    end > (uint64_t)UINTPTR_MAX)
		return false;
	end &= ~(page - 1);
	if (odp_populate_known() == 0)
		return odp_mapped((uintptr_t)lo, end - lo);
	do
		rc = madvise((void *)(uintptr_t)lo, (size_t)(end - lo), write ? MADV_POPULATE_WRITE : MADV_POPULATE_READ);
	while (rc != 0 && errno == EINTR);
	return rc == 0;
}

enum hw_status hw_mkey_check_implicit(const struct hw_mkey *mk, uint32_t pd_id, uint64_t addr, uint64_t len,
				      uint32_t access, uint8_t **ptr)
{
	enum hw_status st = hw_mkey_check_access(mk, pd_id, addr, len, access);

	if (st != HW_OK)
		return st;
	if (len != 0 && !odp_fault_in(addr, len, (access & ODP_WRITES) != 0))
		return HW_ERR_BOUNDS;
	*ptr = (uint8_t *)(uintptr_t)addr;
	return HW_OK;
}
