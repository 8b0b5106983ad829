/*
 * fab_shm — a page of memory another process on this machine can map.
 *
 * The segment is an anonymous memfd named "<tag>-<32 hex digits>" from a
 * 128-bit random key, sealed against resizing, mode 0600 (the user's alone;
 * an attach refuses anything else, base_private.h). It has no name in any file
 * system: another process reaches it through /proc/<pid>/fd/<fd> of the
 * owner, and only after the link there still names the memfd with that key.
 * When the owner closes it (or dies) the link disappears, so a stale reference
 * is refused, and nothing is left behind once the last mapping goes.
 */
#ifndef FAB_SHM_H_
#define FAB_SHM_H_

#include <stddef.h>
#include <stdint.h>

#define FAB_SHM_KEY_LEN 16
#define FAB_SHM_TAG_MAX 16

struct fab_shm {
	void *base;  /* the mapping (MAP_SHARED, read-write) */
	size_t len;
	int fd;	     /* owner: the memfd; importer: -1 (closed after mapping) */
	uint32_t pid; /* owner process */
	int32_t owner_fd; /* the memfd's number in the owner */
	uint8_t key[FAB_SHM_KEY_LEN];
	char tag[FAB_SHM_TAG_MAX];
};

enum fab_shm_status {
	FAB_SHM_OK = 0,
	FAB_SHM_GONE,	 /* owner closed it, exited, or the reference names something else */
	FAB_SHM_BAD,	 /* the object found is not a segment of the expected size */
	FAB_SHM_OS,	 /* a system call failed */
};

/* Creates and maps a zeroed segment of len bytes (a multiple of the page size). */
enum fab_shm_status fab_shm_create(struct fab_shm *s, const char *tag, size_t len);

/* Maps the segment (pid, owner_fd, key, tag, len) of another (or this) process. */
enum fab_shm_status fab_shm_attach(struct fab_shm *s, uint32_t pid, int32_t owner_fd,
				   const uint8_t key[FAB_SHM_KEY_LEN], const char *tag, size_t len);

/* Whether the owner still holds the segment (a system call: use sparingly). */
int fab_shm_owner_alive(const struct fab_shm *s);

/* Unmaps it and, for the owner, closes the memfd. */
void fab_shm_close(struct fab_shm *s);

#endif /* FAB_SHM_H_ */
