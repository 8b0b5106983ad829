/*
 * base_vm — the kernel's mapping calls, made directly.
 *
 * A program may hook mmap and its kin: UCX's memory hooks (libucm) patch
 * them and run UCX's own code, which takes UCX's locks and touches UCX's
 * memory, on every call. Code that maps while some of the program's pages
 * are frozen (fab_freeze), or in a fork's child, where a lock held by another
 * thread at the fork is never released, must not run that code: it calls
 * these instead. Same contracts as mmap(2), mremap(2) and munmap(2): MAP_FAILED and
 * errno on failure.
 */
#ifndef BASE_VM_H
#define BASE_VM_H

#include <stddef.h>
#include <sys/types.h>

void *base_vm_map(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *base_vm_remap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr);
int base_vm_unmap(void *addr, size_t len);

#endif
