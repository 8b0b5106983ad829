/*
 * hw_shm — opening the device's small shared tables (hw_shm.h).
 */
#include "hw_shm.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base_log.h"
#include "hw_machine.h"

/* Ours, private, and of our size (a new one is sized). */
static bool shm_fd_ok(int fd, const char *name, size_t size)
{
	struct stat sb;

	if (fstat(fd, &sb) != 0) {
		BASE_ERR("cannot stat %s: %s", name, strerror(errno));
		return false;
	}
	if (sb.st_uid != geteuid() || (sb.st_mode & 077) != 0) {
		BASE_ERR("/dev/shm%s is not private to this user (uid %u, mode %o): refused", name, (unsigned)sb.st_uid,
			 (unsigned)(sb.st_mode & 0777));
		return false;
	}
	if (sb.st_size == 0 && ftruncate(fd, (off_t)size) != 0) {
		BASE_ERR("cannot size %s: %s", name, strerror(errno));
		return false;
	}
	if (sb.st_size != 0 && (size_t)sb.st_size != size) {
		BASE_ERR("/dev/shm%s has %lld bytes, expected %zu: refused", name, (long long)sb.st_size, size);
		return false;
	}
	return true;
}

void *hw_shm_table(const char *what, unsigned version, size_t size)
{
	char name[96];
	void *p;
	int fd;

	snprintf(name, sizeof(name), "/softdpu-%u%s-%s-v%u", (unsigned)getuid(), hw_machine_tag(), what, version);
	fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 && errno == EEXIST)
		fd = shm_open(name, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		BASE_ERR("cannot open /dev/shm%s: %s", name, strerror(errno));
		return NULL;
	}
	if (!shm_fd_ok(fd, name, size)) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		BASE_ERR("cannot map %s: %s", name, strerror(errno));
		return NULL;
	}
	return p;
}
