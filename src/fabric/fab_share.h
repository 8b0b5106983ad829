/*
 * fab_share — backing exported memory with a shareable memory file, so that
 * an importer on the same machine maps it once and then reaches it with plain
 * loads and stores instead of one system call per access.
 *
 * At export time the pages holding the range are moved, contents and address
 * unchanged, onto a memfd (MAP_FIXED | MAP_SHARED over the same addresses):
 * the exporting program sees the same memory, and an importer that takes the
 * memfd (pidfd_getfd) maps the same pages. Only anonymous private read-write
 * memory is moved; anything else (file mappings, read-only or special memory)
 * stays where it is and is reached through cross-memory attach instead.
 * The memfd is private to the user (mode 0600) and sealed at its size.
 */
#ifndef FAB_SHARE_H_
#define FAB_SHARE_H_

#include <stdint.h>

#define FAB_SHARE_MEMFD_NAME "softdpu-export"

struct fab_backing {
	int memfd;	   /* in the exporting process */
	uint64_t base;	   /* exporter address of the memfd's first byte (page aligned) */
	uint64_t len;	   /* bytes of the memfd */
};

/*
 * Makes [addr, addr+len) shareable, or finds the backing that already holds
 * it. 0 on success (b filled, a reference taken); FAB_SHARE_CANNOT when the
 * memory is of a kind that cannot be moved (the caller falls back to
 * cross-memory attach); FAB_SHARE_NO_RESOURCES when it could be but the
 * system refused what moving takes (a descriptor for its memfd, memory;
 * errno says which), which is logged; FAB_SHARE_OVERLAP when part of the
 * range, not all, was moved already for another range (one memfd per range:
 * it cannot be moved as one).
 */
#define FAB_SHARE_CANNOT (-1)
#define FAB_SHARE_NO_RESOURCES (-2)
#define FAB_SHARE_OVERLAP (-3)
int fab_share_get(void *addr, uint64_t len, struct fab_backing *b);

/* Drops the reference fab_share_get took. The memory stays shared-backed. */
void fab_share_put(const struct fab_backing *b);

/*
 * Marks b's memory as the device's own (device memory), which is one memory
 * for every process reaching it: a fork's child keeps sharing it with the
 * parent, and keeps its backing, instead of getting a private copy.
 */
void fab_share_keep_shared(const struct fab_backing *b);

/*
 * A range held by several backings, whole and adjacent in address order:
 * buffers of one allocator share pages, so a registration may begin in the
 * last page an earlier one moved, and end in the first page of another.
 */
#define FAB_SHARE_SEGS_MAX 64
struct fab_shared {
	uint32_t n;
	int list_fd; /* fab_mr's: the list of the memfds when its record cannot hold them, or -1 */
	struct fab_backing seg[FAB_SHARE_SEGS_MAX];
};

/*
 * As fab_share_get, for a range that may begin or end inside memory moved
 * for other ranges: the parts not moved yet move onto memfds of their own,
 * and s holds every backing the range touches (a reference on each).
 * FAB_SHARE_OVERLAP only when more than FAB_SHARE_SEGS_MAX would be needed.
 */
int fab_share_get_range(void *addr, uint64_t len, struct fab_shared *s);
void fab_share_put_range(const struct fab_shared *s);

/*
 * Checks a memory file taken from another process (whose record or table
 * slot that process, or a scribbler, may have rewritten) before it is
 * mapped: this user's, mode 0600, sealed against shrinking, at least len
 * bytes — so no access within len can fault. 0 when it may be mapped; -1
 * (logged, what naming the use) when not.
 */
int fab_share_check_fd(int fd, uint64_t len, const char *what);

#endif /* FAB_SHARE_H_ */
