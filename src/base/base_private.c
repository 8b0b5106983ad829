/*
 * base_private — shared files only their user reaches.
 */
#include "base_private.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base_log.h"

#define PRIV_MODE 0600
#define SHM_DIR "/dev/shm"
#define OPEN_TRIES 3 /* the name may vanish between the exclusive create and the open */

static enum base_priv_status stat_check(const struct stat *st, const char *what, const char *path)
{
	if (S_ISREG(st->st_mode) && st->st_uid == geteuid() && (st->st_mode & 07777) == PRIV_MODE)
		return BASE_PRIV_OK;
	BASE_ERR("%s %s is refused: it belongs to uid %u with mode %04o, not to this user (uid %u) with mode %04o "
		 "(another user's, or left open to others; remove it)",
		 what, path, (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777), (unsigned)geteuid(), PRIV_MODE);
	return BASE_PRIV_FOREIGN;
}

enum base_priv_status base_priv_check(int fd, const char *what, const char *path)
{
	struct stat st;

	if (fstat(fd, &st) != 0) {
		BASE_ERR("cannot stat the %s %s: %s", what, path, strerror(errno));
		return BASE_PRIV_OS;
	}
	return stat_check(&st, what, path);
}

/* An existing name this user may not even open: say whose it is. */
static enum base_priv_status explain_denied(const char *what, const char *path)
{
	struct stat st;

	if (stat(path, &st) == 0)
		return stat_check(&st, what, path) == BASE_PRIV_OK ? BASE_PRIV_OS : BASE_PRIV_FOREIGN;
	BASE_ERR("%s %s is refused: it exists and this user cannot open it", what, path);
	return BASE_PRIV_FOREIGN;
}

static enum base_priv_status size_existing(int fd, size_t size, const char *what, const char *path)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return BASE_PRIV_OS;
	if (st.st_size == 0 && ftruncate(fd, (off_t)size) != 0) {
		BASE_ERR("cannot size the %s %s: %s", what, path, strerror(errno));
		return BASE_PRIV_OS;
	}
	if (st.st_size != 0 && (size_t)st.st_size != size) {
		BASE_ERR("%s %s has %lld bytes, expected %zu", what, path, (long long)st.st_size, size);
		return BASE_PRIV_SIZE;
	}
	return BASE_PRIV_OK;
}

/* A new object: the umask may have taken bits of 0600 away, so the mode is set again. */
static enum base_priv_status size_created(int fd, size_t size, const char *what, const char *path)
{
	if (fchmod(fd, PRIV_MODE) != 0 || ftruncate(fd, (off_t)size) != 0) {
		BASE_ERR("cannot set up the %s %s: %s", what, path, strerror(errno));
		return BASE_PRIV_OS;
	}
	return BASE_PRIV_OK;
}

static enum base_priv_status open_existing(const char *name, size_t size, const char *what, const char *path,
					   int *out)
{
	enum base_priv_status st;
	int fd = shm_open(name, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0);

	if (fd < 0)
		return errno == EACCES || errno == EPERM || errno == ELOOP ? explain_denied(what, path) : BASE_PRIV_OS;
	st = base_priv_check(fd, what, path);
	if (st == BASE_PRIV_OK)
		st = size_existing(fd, size, what, path);
	if (st != BASE_PRIV_OK) {
		close(fd);
		return st;
	}
	*out = fd;
	return BASE_PRIV_OK;
}

enum base_priv_status base_priv_shm_open(const char *name, size_t size, const char *what, int *out)
{
	char path[sizeof(SHM_DIR) + 256];
	enum base_priv_status st = BASE_PRIV_OS;

	snprintf(path, sizeof(path), SHM_DIR "%s", name);
	for (int i = 0; i < OPEN_TRIES; i++) {
		int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, PRIV_MODE);

		if (fd >= 0) {
			st = size_created(fd, size, what, path);
			if (st != BASE_PRIV_OK) {
				close(fd);
				shm_unlink(name);
				return st;
			}
			*out = fd;
			return BASE_PRIV_OK;
		}
		if (errno != EEXIST)
			break;
		st = open_existing(name, size, what, path, out);
		if (st != BASE_PRIV_OS || errno != ENOENT)
			return st;
	}
	BASE_ERR("cannot open the %s %s: %s", what, path, strerror(errno));
	return errno == EACCES ? BASE_PRIV_FOREIGN : BASE_PRIV_OS;
}

int base_priv_memfd(const char *name, unsigned int flags)
{
	int fd = memfd_create(name, flags);

	if (fd >= 0 && fchmod(fd, PRIV_MODE) != 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}
