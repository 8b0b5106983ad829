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
#include "base_private.h"
#include "fab_table.h"
#include "hw_mem.h"

/*
 * What a key's record says about its memory (little-endian host: same
 * machine): the memfds holding it, whole and adjacent from base on.
 */
struct mr_seg {
	uint64_t ino;	  /* the memfd's inode: a reused fd number is another file */
	int32_t fd;	  /* the memfd's number in the owner */
	uint32_t pages;	  /* its size */
};

#define MR_INLINE_SEGS 8

struct mr_backing {
	uint32_t pid;
	uint32_t nseg;
	uint64_t start;	  /* the owner's start time: a reused pid is another process */
	uint64_t base;	  /* owner address of the first memfd's first byte */
	uint64_t key_va;  /* owner address of the key's first byte (its iova may differ) */
	/*
	 * More than MR_INLINE_SEGS memfds (a range over many registrations a
	 * registration cache keeps): their mr_segs are in a sealed memfd of the
	 * owner's, this one (pages unused), and seg is empty.
	 */
	struct mr_seg list;
	struct mr_seg seg[MR_INLINE_SEGS];
};
_Static_assert(sizeof(struct mr_backing) <= HW_MKEY_BACKING_MAX, "fits the key's record");

#define MR_MAPS_MAX 256

/*
 * Memory of other processes mapped here, kept while keys are viewed in it
 * (the owner may register it again); when the table is full, a mapping no
 * live key view uses is unmapped for the new one.
 */
struct mr_map {
	struct mr_backing r; /* key_va not compared */
	uint64_t len;	     /* bytes of all its memfds */
	uint8_t *p;
};

static struct {
	pthread_mutex_t lock;
	struct mr_map map[MR_MAPS_MAX];
	uint32_t n;
} maps = { .lock = PTHREAD_MUTEX_INITIALIZER };

static uint64_t page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The mr_seg of each of s's memfds into seg; false when one cannot be described. */
static bool describe_segs(const struct fab_shared *s, struct mr_seg *seg)
{
	for (uint32_t i = 0; i < s->n; i++) {
		struct stat st;

		if (fstat(s->seg[i].memfd, &st) != 0 || s->seg[i].len / page_size() > UINT32_MAX)
			return false;
		seg[i] = (struct mr_seg){ .ino = (uint64_t)st.st_ino, .fd = s->seg[i].memfd,
					  .pages = (uint32_t)(s->seg[i].len / page_size()) };
	}
	return true;
}

/* The list of n mr_segs on a sealed memfd (mode 0600), named in *list; its fd or -1. */
static int write_list(const struct mr_seg *seg, uint32_t n, struct mr_seg *list)
{
	size_t len = (size_t)n * sizeof(*seg);
	int fd = base_priv_memfd(FAB_SHARE_MEMFD_NAME "-list", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	struct stat st;

	if (fd < 0)
		return -1;
	if (pwrite(fd, seg, len, 0) != (ssize_t)len || fstat(fd, &st) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) {
		close(fd);
		return -1;
	}
	*list = (struct mr_seg){ .ino = (uint64_t)st.st_ino, .fd = fd };
	return fd;
}

/*
 * The record of s's memfds (their list written to a memfd when the record
 * cannot hold them: s->list_fd); false when one cannot be described (logged).
 */
static bool describe(struct fab_shared *s, void *addr, struct mr_backing *r)
{
	struct mr_seg seg[FAB_SHARE_SEGS_MAX];

	*r = (struct mr_backing){ .pid = (uint32_t)getpid(), .nseg = s->n, .base = s->seg[0].base,
				  .key_va = (uint64_t)(uintptr_t)addr };
	r->start = fab_proc_start_time(r->pid);
	if (r->start == 0) {
		/* Reading it takes a descriptor; a record without it could never be opened. */
		BASE_WARN("cannot read this process's start time to share memory: %s", strerror(errno));
		return false;
	}
	r->list.fd = -1;
	if (!describe_segs(s, seg))
		return false;
	if (s->n <= MR_INLINE_SEGS) {
		memcpy(r->seg, seg, s->n * sizeof(seg[0]));
		return true;
	}
	s->list_fd = write_list(seg, s->n, &r->list);
	if (s->list_fd < 0)
		BASE_WARN("cannot write the list of the %u memory files of a registration: %s", s->n, strerror(errno));
	return s->list_fd >= 0;
}

int fab_mr_share(uint32_t key, void *addr, uint64_t len, struct fab_shared *s)
{
	struct mr_backing r;
	int rc;

	fab_mr_init();
	s->list_fd = -1;
	rc = fab_share_get_range(addr, len, s);
	if (rc != 0)
		return rc;
	if (!describe(s, addr, &r)) {
		rc = r.start == 0 ? FAB_SHARE_NO_RESOURCES : FAB_SHARE_CANNOT;
		goto err_put;
	}
	if (hw_mkey_share(key, &r, sizeof(r)) != HW_OK) {
		rc = FAB_SHARE_CANNOT;
		goto err_put;
	}
	return 0;

err_put:
	fab_mr_unshare(s);
	return rc;
}

void fab_mr_unshare(struct fab_shared *s)
{
	if (s->list_fd >= 0)
		close(s->list_fd);
	s->list_fd = -1;
	fab_share_put_range(s);
}

static bool same_memory(const struct mr_backing *a, const struct mr_backing *b)
{
	if (a->pid != b->pid || a->start != b->start || a->base != b->base || a->nseg != b->nseg ||
	    a->list.ino != b->list.ino || a->list.fd != b->list.fd)
		return false;
	/* A list is sealed against writes: its inode names its contents. */
	for (uint32_t i = 0; i < a->nseg && i < MR_INLINE_SEGS; i++)
		if (a->seg[i].ino != b->seg[i].ino || a->seg[i].fd != b->seg[i].fd || a->seg[i].pages != b->seg[i].pages)
			return false;
	return true;
}

static struct mr_map *map_find(const struct mr_backing *r)
{
	for (uint32_t i = 0; i < maps.n; i++)
		if (same_memory(&maps.map[i].r, r))
			return &maps.map[i];
	return NULL;
}

/* Opens one of the owner's memfds through /proc and checks it is the file the record names. */
static int open_backing(const struct mr_backing *r, const struct mr_seg *g)
{
	char path[64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/fd/%d", r->pid, g->fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		BASE_DBG("cannot open the memory of process %u: %s", r->pid, strerror(errno));
		return -1;
	}
	/* The record is shared memory: what it names must be this user's sealed file holding the range. */
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != g->ino ||
	    fab_share_check_fd(fd, (uint64_t)g->pages * page_size(), "of a shared key") != 0) {
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

/* Maps the record's memfds side by side at p, as they lie in the owner; false when one cannot be. */
static bool map_segs(const struct mr_backing *r, const struct mr_seg *seg, uint8_t *p)
{
	for (uint32_t i = 0; i < r->nseg; i++) {
		uint64_t len = (uint64_t)seg[i].pages * page_size();
		int fd = open_backing(r, &seg[i]);
		void *at;

		if (fd < 0)
			return false;
		at = mmap(p, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
		close(fd);
		if (at == MAP_FAILED)
			return false;
		p += len;
	}
	return true;
}

static struct mr_map *map_add(const struct mr_backing *r, const struct mr_seg *seg, uint64_t total)
{
	struct mr_map *m;
	void *p;

	if (maps.n == MR_MAPS_MAX && !map_evict()) {
		BASE_WARN("memory of %u ranges of other processes mapped, each with live keys: no room for more",
			  MR_MAPS_MAX);
		return NULL;
	}
	if (fab_proc_start_time(r->pid) != r->start)
		return NULL; /* the owner is gone (or its pid is another process now) */
	/* One reservation for all of them, so they lie side by side here too. */
	p = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (!map_segs(r, seg, p)) {
		munmap(p, total);
		return NULL;
	}
	m = &maps.map[maps.n++];
	*m = (struct mr_map){ .r = *r, .len = total, .p = p };
	m->r.key_va = 0;
	return m;
}

/*
 * The record's memfds into seg: its own, or its list read from the owner
 * (checked as a memfd is: this user's, sealed, as long as the record says);
 * false when the record is malformed (forged or torn) or the list unreadable.
 */
static bool record_segs(const struct mr_backing *r, struct mr_seg *seg)
{
	size_t len = (size_t)r->nseg * sizeof(*seg);
	bool ok;
	int fd;

	if (r->nseg == 0 || r->nseg > FAB_SHARE_SEGS_MAX)
		return false;
	if (r->nseg <= MR_INLINE_SEGS) {
		memcpy(seg, r->seg, len);
		return true;
	}
	fd = open_backing(r, &(struct mr_seg){ .ino = r->list.ino, .fd = r->list.fd, .pages = 0 });
	if (fd < 0)
		return false;
	ok = pread(fd, seg, len, 0) == (ssize_t)len;
	close(fd);
	return ok;
}

/* The bytes the memfds hold; 0 when one holds none (a malformed record). */
static uint64_t record_len(const struct mr_backing *r, const struct mr_seg *seg)
{
	uint64_t total = 0;

	for (uint32_t i = 0; i < r->nseg; i++) {
		if (seg[i].pages == 0)
			return 0;
		total += (uint64_t)seg[i].pages * page_size();
	}
	return total;
}

static uint8_t *mr_attach(const void *backing, uint32_t blen, uint64_t len)
{
	struct mr_seg seg[FAB_SHARE_SEGS_MAX];
	struct mr_backing r;
	struct mr_map *m;
	uint8_t *p = NULL;
	uint64_t total, key_va;

	if (blen != sizeof(r))
		return NULL;
	memcpy(&r, backing, sizeof(r));
	if (!record_segs(&r, seg))
		return NULL;
	total = record_len(&r, seg);
	/* The key's range must lie in the memory the record names (a forged record maps nothing wrong). */
	if (total == 0 || r.key_va < r.base || len > total || r.key_va - r.base > total - len)
		return NULL;
	key_va = r.key_va;
	r.key_va = 0;
	pthread_mutex_lock(&maps.lock);
	m = map_find(&r);
	if (m == NULL)
		m = map_add(&r, seg, total);
	if (m != NULL)
		p = m->p + (key_va - r.base);
	pthread_mutex_unlock(&maps.lock);
	return p;
}

void fab_mr_init(void)
{
	hw_mkey_set_attach(mr_attach);
}
