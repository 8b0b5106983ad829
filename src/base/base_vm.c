/*
 * base_vm — the kernel's mapping calls, made directly (base_vm.h).
 */
#include "base_vm.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

void *base_vm_map(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	long r = syscall(SYS_mmap, addr, len, prot, flags, fd, off);

	return r == -1 ? MAP_FAILED : (void *)r;
}

void *base_vm_remap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr)
{
	long r = syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);

	return r == -1 ? MAP_FAILED : (void *)r;
}

int base_vm_unmap(void *addr, size_t len)
{
	return (int)syscall(SYS_munmap, addr, len);
}
