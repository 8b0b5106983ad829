/*
 * fab_shm — memfd segments shared with other processes of this machine.
 */
#include "fab_shm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base_private.h"
#include "fab_desc.h"

/* tag + "-" + 32 hex digits, and the link "/memfd:" name " (deleted)" */
#define FAB_SHM_NAME_MAX (FAB_SHM_TAG_MAX + 1 + 2 * FAB_SHM_KEY_LEN + 1)
#define FAB_SHM_LINK_MAX (7 + FAB_SHM_NAME_MAX + 10 + 1)

static void memfd_name(char *out, size_t n, const char *tag, const uint8_t key[FAB_SHM_KEY_LEN])
{
	size_t off = (size_t)snprintf(out, n, "%s-", tag);

	for (int i = 0; i < FAB_SHM_KEY_LEN && off + 2 < n; i++, off += 2)
		snprintf(out + off, n - off, "%02x", key[i]);
}

/* What /proc/<pid>/fd/<fd> reads for the segment: memfds have no path. */
static void expected_link(char *out, size_t n, const char *tag, const uint8_t key[FAB_SHM_KEY_LEN])
{
	char name[FAB_SHM_NAME_MAX];

	memfd_name(name, sizeof(name), tag, key);
	snprintf(out, n, "/memfd:%s (deleted)", name);
}

static enum fab_shm_status link_matches(const char *path, const char *expected)
{
	char got[FAB_SHM_LINK_MAX + 1];
	ssize_t n = readlink(path, got, sizeof(got) - 1);

	if (n < 0)
		return FAB_SHM_GONE;
	got[n] = '\0';
	return strcmp(got, expected) == 0 ? FAB_SHM_OK : FAB_SHM_GONE;
}

static enum fab_shm_status owner_link_matches(uint32_t pid, int32_t fd, const char *expected)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%u/fd/%d", pid, fd);
	return link_matches(path, expected);
}

static enum fab_shm_status map_fd(struct fab_shm *s, int fd, size_t len)
{
	void *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	if (base == MAP_FAILED)
		return FAB_SHM_OS;
	s->base = base;
	s->len = len;
	return FAB_SHM_OK;
}

enum fab_shm_status fab_shm_create(struct fab_shm *s, const char *tag, size_t len)
{
	char name[FAB_SHM_NAME_MAX];
	int fd;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (tag == NULL || strlen(tag) >= FAB_SHM_TAG_MAX || len == 0)
		return FAB_SHM_BAD;
	if (fab_random_bytes(s->key, sizeof(s->key)) != 0)
		return FAB_SHM_OS;
	strcpy(s->tag, tag);
	memfd_name(name, sizeof(name), tag, s->key);
	fd = base_priv_memfd(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return FAB_SHM_OS;
	if (ftruncate(fd, (off_t)len) != 0)
		goto err_close;
	/* A peer's mapping must never lose its pages (SIGBUS): forbid resizing. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
		goto err_close;
	if (map_fd(s, fd, len) != FAB_SHM_OK)
		goto err_close;
	s->fd = fd;
	s->pid = (uint32_t)getpid();
	s->owner_fd = fd;
	return FAB_SHM_OK;

err_close:
	close(fd);
	return FAB_SHM_OS;
}

/* The opened object must be the user's own sealed segment of the expected size. */
static enum fab_shm_status check_opened(int fd, const char *expected, size_t len)
{
	char path[64];
	struct stat st;
	int seals;

	/* The owner's fd number may have been reused between readlink and open. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (link_matches(path, expected) != FAB_SHM_OK)
		return FAB_SHM_GONE;
	if (base_priv_check(fd, "shared segment", expected) != BASE_PRIV_OK)
		return FAB_SHM_BAD;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != len)
		return FAB_SHM_BAD;
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW))
		return FAB_SHM_BAD;
	return FAB_SHM_OK;
}

enum fab_shm_status fab_shm_attach(struct fab_shm *s, uint32_t pid, int32_t owner_fd,
				   const uint8_t key[FAB_SHM_KEY_LEN], const char *tag, size_t len)
{
	char expected[FAB_SHM_LINK_MAX], path[64];
	enum fab_shm_status st;
	int fd;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (tag == NULL || strlen(tag) >= FAB_SHM_TAG_MAX || len == 0 || pid == 0 || owner_fd < 0)
		return FAB_SHM_BAD;
	expected_link(expected, sizeof(expected), tag, key);
	/* Open nothing the reference does not name: a forged one could point at a device. */
	if (owner_link_matches(pid, owner_fd, expected) != FAB_SHM_OK)
		return FAB_SHM_GONE;
	snprintf(path, sizeof(path), "/proc/%u/fd/%d", pid, owner_fd);
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0)
		return FAB_SHM_GONE;
	st = check_opened(fd, expected, len);
	if (st == FAB_SHM_OK)
		st = map_fd(s, fd, len);
	close(fd);
	if (st != FAB_SHM_OK)
		return st;
	s->pid = pid;
	s->owner_fd = owner_fd;
	memcpy(s->key, key, FAB_SHM_KEY_LEN);
	strcpy(s->tag, tag);
	return FAB_SHM_OK;
}

int fab_shm_owner_alive(const struct fab_shm *s)
{
	char expected[FAB_SHM_LINK_MAX];

	expected_link(expected, sizeof(expected), s->tag, s->key);
	return owner_link_matches(s->pid, s->owner_fd, expected) == FAB_SHM_OK;
}

void fab_shm_close(struct fab_shm *s)
{
	if (s->base != NULL)
		munmap(s->base, s->len);
	if (s->fd >= 0)
		close(s->fd);
	s->base = NULL;
	s->fd = -1;
}
