/*
 * base_private — files other processes of the user map (POSIX shared memory
 * in /dev/shm, memfds), private to that user.
 *
 * Every such file is created exclusively with mode 0600 and, whoever created
 * it, used only when it is a regular file owned by the caller's effective uid
 * with mode 0600: a name another user created first (a squatter, whatever
 * mode it gave the file) or a file whose mode lets others in is refused, left
 * as it is, and reported by a log line naming the file, its owner and mode.
 */
#ifndef BASE_PRIVATE_H_
#define BASE_PRIVATE_H_

#include <stddef.h>

enum base_priv_status {
	BASE_PRIV_OK = 0,
	BASE_PRIV_FOREIGN, /* another user's, not a regular file, or not mode 0600: refused */
	BASE_PRIV_SIZE,	   /* the caller's, but not of the size expected */
	BASE_PRIV_OS,	   /* a system call failed (errno tells) */
};

/*
 * Opens the shared-memory object name ("/x") read-write, sized size bytes:
 * created exclusively (mode 0600) when absent; an existing one must pass
 * base_priv_check and have size bytes (or none: its creator is still sizing
 * it, so it is sized here). what names the object in log lines ("export
 * table"). *fd is set on BASE_PRIV_OK only.
 */
enum base_priv_status base_priv_shm_open(const char *name, size_t size, const char *what, int *fd);

/* Whether fd is a regular file of the caller's effective uid with mode 0600; logs what and path when not. */
enum base_priv_status base_priv_check(int fd, const char *what, const char *path);

/* memfd_create(name, flags), then mode 0600 (a memfd starts at 0777). -1 with errno on failure. */
int base_priv_memfd(const char *name, unsigned int flags);

#endif /* BASE_PRIVATE_H_ */
