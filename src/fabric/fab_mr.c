/*
 * fab_mr — shared backing for registered memory, published with its key.
 */
#include "fab_mr.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base_log.h"
#include "fab_table.h"
#include "hw_mem.h"

/* What a key's record says about its memory (little-endian host: same machine). */
struct mr_backing {
	uint32_t pid;
	int32_t fd;	  /* the memfd's number in the owner */
	uint64_t start;	  /* the owner's start time: a reused pid is another process */
	uint64_t ino;	  /* the memfd's inode: a reused fd number is another file */
	uint64_t base;	  /* owner address of the memfd's first byte */
	uint64_t len;	  /* bytes of the memfd */
	uint64_t key_va;  /* owner address of the key's first byte (its iova may differ) */
};
_Static_assert(sizeof(struct mr_backing) <= HW_MKEY_BACKING_MAX, "fits the key's record");

#define MR_MAPS_MAX 256

/*
 * Memory of other processes mapped here, kept while keys are viewed in it
 * (the owner may register it again); when the table is full, a mapping no
 * live key view uses is unmapped for the new one.
 */
struct mr_map {
	uint32_t pid;
	uint64_t start;
	uint64_t ino;
	uint64_t base;
	uint64_t len;
	uint8_t *p;
};

static struct {
	pthread_mutex_t lock;
	struct mr_map map[MR_MAPS_MAX];
	uint32_t n;
} maps = { .lock = PTHREAD_MUTEX_INITIALIZER };

int fab_mr_share(uint32_t key, void *addr, uint64_t len, struct fab_backing *b)
{
	struct mr_backing r = { .pid = (uint32_t)getpid(), .key_va = (uint64_t)(uintptr_t)addr };
	struct stat st;

	int rc;

	fab_mr_init();
	rc = fab_share_get(addr, len, b);
	if (rc != 0)
		return rc;
	if (fstat(b->memfd, &st) != 0)
		goto err_put;
	r.fd = b->memfd;
	r.start = fab_proc_start_time(r.pid);
	if (r.start == 0) {
		/* Reading it takes a descriptor; a record without it could never be opened. */
		BASE_WARN("cannot read this process's start time to share memory: %s", strerror(errno));
		fab_share_put(b);
		return FAB_SHARE_NO_RESOURCES;
	}
	r.ino = (uint64_t)st.st_ino;
	r.base = b->base;
	r.len = b->len;
	if (hw_mkey_share(key, &r, sizeof(r)) != HW_OK)
		goto err_put;
	return 0;

err_put:
	fab_share_put(b);
	return FAB_SHARE_CANNOT;
}

void fab_mr_unshare(const struct fab_backing *b)
{
	fab_share_put(b);
}

static struct mr_map *map_find(const struct mr_backing *r)
{
	for (uint32_t i = 0; i < maps.n; i++) {
		struct mr_map *m = &maps.map[i];

		if (m->pid == r->pid && m->start == r->start && m->ino == r->ino && m->base == r->base &&
		    m->len >= r->len)
			return m;
	}
	return NULL;
}

/* Opens the owner's memfd through /proc and checks it is the file the record names. */
static int open_backing(const struct mr_backing *r)
{
	char path[64];
	struct stat st;
	int fd;

	if (fab_proc_start_time(r->pid) != r->start)
		return -1; /* the owner is gone (or its pid is another process now) */
	snprintf(path, sizeof(path), "/proc/%u/fd/%d", r->pid, r->fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		BASE_DBG("cannot open the memory of process %u: %s", r->pid, strerror(errno));
		return -1;
	}
	/* The record is shared memory: what it names must be this user's sealed file holding the range. */
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != r->ino || fab_share_check_fd(fd, r->len, "of a shared key") != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Unmaps one mapping that no live key view uses; false when every one is used. */
static bool map_evict(void)
{
	for (uint32_t i = 0; i < maps.n; i++) {
		struct mr_map *m = &maps.map[i];

		if (hw_mkey_views_within(m->p, m->len))
			continue;
		munmap(m->p, m->len);
		*m = maps.map[--maps.n];
		return true;
	}
	return false;
}

static struct mr_map *map_add(const struct mr_backing *r)
{
	struct mr_map *m;
	void *p;
	int fd;

	if (maps.n == MR_MAPS_MAX && !map_evict()) {
		BASE_WARN("memory of %u ranges of other processes mapped, each with live keys: no room for more",
			  MR_MAPS_MAX);
		return NULL;
	}
	fd = open_backing(r);
	if (fd < 0)
		return NULL;
	p = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	m = &maps.map[maps.n++];
	*m = (struct mr_map){ .pid = r->pid, .start = r->start, .ino = r->ino, .base = r->base, .len = r->len, .p = p };
	return m;
}

static uint8_t *mr_attach(const void *backing, uint32_t blen, uint64_t len)
{
	struct mr_backing r;
	struct mr_map *m;
	uint8_t *p = NULL;

	if (blen != sizeof(r))
		return NULL;
	memcpy(&r, backing, sizeof(r));
	/* The key's range must lie in the memory the record names (a forged record maps nothing wrong). */
	if (r.key_va < r.base || len > r.len || r.key_va - r.base > r.len - len)
		return NULL;
	pthread_mutex_lock(&maps.lock);
	m = map_find(&r);
	if (m == NULL)
		m = map_add(&r);
	if (m != NULL)
		p = m->p + (r.key_va - m->base);
	pthread_mutex_unlock(&maps.lock);
	return p;
}

void fab_mr_init(void)
{
	hw_mkey_set_attach(mr_attach);
}
