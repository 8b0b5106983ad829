/*
 * fab_share — moving exported pages onto a memfd.
 */
#include "fab_share.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base_log.h"
#include "base_maps.h"
#include "base_private.h"
#include "base_vm.h"
#include "fab_freeze.h"

/* One moved page range. Ranges never overlap; each keeps its memfd for importers. */
struct backing {
	struct backing *next;
	struct fab_backing b;
	unsigned long ino; /* the memfd's: its mappings in /proc/self/maps */
	uint32_t refs;
	bool device;	   /* the device's own memory: a fork's child shares it (fab_share_keep_shared) */
	/*
	 * The program unmapped or replaced pages of the range since (free and
	 * malloc again at the same addresses): no new range uses it, and what
	 * it still maps may move again; kept for its references and for fork.
	 */
	bool retired;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct backing *backings;

static uint64_t page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

/* True when k is one of the list's backings' memfds (ino, as /proc/self/maps shows it). */
static bool listed(const struct backing *list, unsigned long ino)
{
	for (; list != NULL; list = list->next)
		if (list->ino == ino)
			return true;
	return false;
}

/* True when ino is the memfd of a retired backing: its pages still mapped may move again. */
static bool retired_ino(unsigned long ino)
{
	for (const struct backing *k = backings; k != NULL; k = k->next)
		if (k->retired && k->ino == ino)
			return true;
	return false;
}

/* A line of /proc/self/maps that may be moved: anonymous private read-write memory, or a listed backing. */
static bool movable_line(const char *perms, unsigned long ino, const char *name, const struct backing *absorbed)
{
	if (strcmp(perms, "rw-s") == 0)
		return ino != 0 && strstr(name, FAB_SHARE_MEMFD_NAME) != NULL &&
		       (listed(absorbed, ino) || retired_ino(ino));
	/* anonymous: no inode; [heap] and nameless mappings only (not [stack], files, ...) */
	return strcmp(perms, "rw-p") == 0 && ino == 0 &&
	       (name[0] == '\n' || name[0] == '\0' || strncmp(name, "[heap]", 6) == 0);
}

/*
 * 1 when every byte of [start, end) may be moved: anonymous private
 * read-write memory, or pages of the backings in absorbed (moved before for
 * ranges no registration holds any more). 0 when not; -1 when the map cannot
 * be read (no descriptor: errno).
 */
struct movable_scan {
	uint64_t covered, end; /* [covered, end) is still to be seen */
	const struct backing *absorbed;
};

/* One mapping of mapped_as's walk: 1 (stop) at one that may not be moved or once the range is covered. */
static int movable_part(const struct base_map *m, void *arg)
{
	struct movable_scan *s = arg;

	if (m->hi <= s->covered || m->lo > s->covered)
		return 0;
	if (!movable_line(m->perms, m->ino, m->path, s->absorbed))
		return 1;
	s->covered = m->hi;
	return s->covered >= s->end;
}

static int mapped_as(uint64_t start, uint64_t end, const struct backing *absorbed)
{
	struct movable_scan s = {.covered = start, .end = end, .absorbed = absorbed};

	if (start < end && base_maps_scan(movable_part, &s) < 0)
		return -1;
	return s.covered >= end;
}

/*
 * Copies whole pages, some of whose bytes the program's allocator (or a
 * sanitizer) considers off limits: they are copied as they are, never
 * interpreted, so this one loop is exempt from address and race checking.
 */
__attribute__((no_sanitize_address, no_sanitize_thread)) static void copy_pages(uint64_t *dst, const uint64_t *src, uint64_t len)
{
	for (uint64_t i = 0; i < len / sizeof(uint64_t); i++)
		dst[i] = src[i];
}

/*
 * Moves [start, start+len) onto a new memfd; returns the fd or -1. The memfd
 * is the user's alone (mode 0600) and sealed at its size, so a mapping of
 * it, here or in an importer, never loses its pages (SIGBUS).
 */
static int move_pages(uint64_t start, uint64_t len)
{
	int fd = base_priv_memfd(FAB_SHARE_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *tmp;

	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)len) != 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
		goto err_close;
	tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (tmp == MAP_FAILED)
		goto err_close;
	/* The program's other threads keep running: their writes wait out the move, none is lost. */
	if (fab_freeze_begin(start, len) != 0)
		goto err_unmap;
	copy_pages(tmp, (const uint64_t *)(uintptr_t)start, len);
	/*
	 * Same address, same contents, now shareable. Straight to the kernel:
	 * a hooked mmap (UCX's) could touch the frozen pages from this thread,
	 * which would wait for its own thaw.
	 */
	if (base_vm_map((void *)(uintptr_t)start, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) ==
	    MAP_FAILED) {
		fab_freeze_end(1);
		goto err_unmap;
	}
	fab_freeze_end(0);
	munmap(tmp, len);
	return fd;

err_unmap:
	munmap(tmp, len);

err_close:
	close(fd);
	return -1;
}

struct mapped_scan {
	uint64_t start, end; /* the backing's range */
	unsigned long ino;   /* its memfd's */
	void (*fn)(uint64_t lo, uint64_t hi);
	unsigned parts;
};

/* One mapping: fn on its part of the backing when it maps the memfd shared. */
static int mapped_part(const struct base_map *m, void *arg)
{
	struct mapped_scan *s = arg;

	if (m->hi <= s->start || m->lo >= s->end || m->ino != s->ino || m->perms[3] != 's')
		return 0;
	if (s->fn != NULL)
		s->fn(m->lo < s->start ? s->start : m->lo, m->hi > s->end ? s->end : m->hi);
	s->parts++;
	return 0;
}

/*
 * Calls fn on each part of k's range still mapped from its memfd; the
 * number of parts. The program may have unmapped all or part of it (free of
 * a large block, the heap trimmed) and reused the addresses: the parts left
 * are still shared pages and must stay tracked. base_maps_scan allocates
 * nothing: a fork's child runs this.
 */
static unsigned each_mapped(const struct backing *k, void (*fn)(uint64_t lo, uint64_t hi))
{
	struct mapped_scan s = {.start = k->b.base, .end = k->b.base + k->b.len, .fn = fn};
	struct stat st;

	if (fstat(k->b.memfd, &st) != 0)
		return 1; /* cannot tell: keep it */
	s.ino = (unsigned long)st.st_ino;
	if (base_maps_scan(mapped_part, &s) < 0)
		return 1;
	return s.parts;
}

static void drop_stale(void)
{
	struct backing **pp = &backings;

	while (*pp != NULL) {
		struct backing *k = *pp;

		if (k->refs == 0 && each_mapped(k, NULL) == 0) {
			*pp = k->next;
			close(k->b.memfd);
			free(k);
		} else {
			pp = &k->next;
		}
	}
}

/* The backing in use holding the page at addr, or NULL. */
static struct backing *holding(uint64_t addr)
{
	for (struct backing *k = backings; k != NULL; k = k->next)
		if (!k->retired && addr >= k->b.base && addr - k->b.base < k->b.len)
			return k;
	return NULL;
}

/*
 * [lo, hi) of k's range is still mapped shared from k's memfd, each page at
 * its own offset. The program may have unmapped the pages and mapped new
 * memory there (a freed block's addresses reused), or moved them (mremap):
 * the memfd then no longer holds what the program sees at those addresses.
 */
struct intact_scan {
	uint64_t covered, end, base;
	unsigned long ino;
};

static int intact_part(const struct base_map *m, void *arg)
{
	struct intact_scan *s = arg;

	if (m->hi <= s->covered)
		return 0;
	if (m->lo > s->covered || m->ino != s->ino || m->perms[3] != 's' || m->off != m->lo - s->base)
		return 1;
	s->covered = m->hi;
	return s->covered >= s->end;
}

static bool intact(const struct backing *k, uint64_t lo, uint64_t hi)
{
	struct intact_scan s = {.covered = lo, .end = hi, .base = k->b.base, .ino = k->ino};

	if (base_maps_scan(intact_part, &s) < 0)
		return true; /* cannot tell: as before the check */
	return s.covered >= hi;
}

/*
 * The backing that may serve [pos, min(end, its end)): it holds the page
 * at pos and still maps that part. One that no longer does is retired on
 * the way, and NULL returned: the part moves onto a new memfd.
 */
static struct backing *usable(uint64_t pos, uint64_t end)
{
	struct backing *k = holding(pos);

	if (k != NULL && !intact(k, pos, end < k->b.base + k->b.len ? end : k->b.base + k->b.len)) {
		k->retired = true;
		k = NULL;
	}
	return k;
}

/* The backing holding [start, end), or NULL; *partial is set when one overlaps it only partly. */
static struct backing *find(uint64_t start, uint64_t end, bool *partial)
{
	struct backing *k;

	*partial = false;
	drop_stale();
	if ((k = usable(start, end)) != NULL && end <= k->b.base + k->b.len)
		return k;
	for (k = backings; k != NULL; k = k->next) {
		uint64_t kend = k->b.base + k->b.len;

		if (k->retired)
			continue;
		if (start < kend && k->b.base < end)
			*partial = true;
	}
	return NULL;
}

/* Moves [start, end) onto a new backing of its own (no reference taken), or NULL with the status. */
static struct backing *add_backing(uint64_t start, uint64_t end, const struct backing *absorbed, int *status)
{
	int movable = mapped_as(start, end, absorbed);
	struct stat st;
	struct backing *k;
	int fd;

	if (movable < 0) {
		BASE_WARN("cannot read this process's memory map to share memory: %s", strerror(errno));
		*status = FAB_SHARE_NO_RESOURCES;
		return NULL;
	}
	*status = movable == 0 ? FAB_SHARE_CANNOT : FAB_SHARE_NO_RESOURCES;
	if (movable == 0)
		return NULL;
	k = calloc(1, sizeof(*k));
	if (k == NULL)
		return NULL;
	fd = move_pages(start, end - start);
	if (fd < 0) {
		int err = errno;

		BASE_WARN("cannot move %llu bytes of memory onto a memfd to share them: %s",
			  (unsigned long long)(end - start), strerror(err));
		free(k);
		errno = err;
		return NULL;
	}
	k->b = (struct fab_backing){ .memfd = fd, .base = start, .len = end - start };
	k->ino = fstat(fd, &st) == 0 ? (unsigned long)st.st_ino : 0;
	k->next = backings;
	backings = k;
	return k;
}

static int share_locked(uint64_t start, uint64_t end, struct fab_backing *out)
{
	struct backing *k;
	bool partial;
	int status;

	k = find(start, end, &partial);
	if (k == NULL && partial)
		return FAB_SHARE_OVERLAP;
	if (k == NULL && (k = add_backing(start, end, NULL, &status)) == NULL)
		return status;
	k->refs++;
	*out = k->b;
	return 0;
}


/* Where the first backing above addr begins, or end when none does before it. */
static uint64_t next_base(uint64_t addr, uint64_t end)
{
	for (struct backing *k = backings; k != NULL; k = k->next)
		if (!k->retired && k->b.base > addr && k->b.base < end)
			end = k->b.base;
	return end;
}

/*
 * Takes out of the list the backings wholly inside [start, end) that no
 * registration holds: their pages move again with the range, onto its
 * memfd, rather than splitting it (a program's heap, registered and freed
 * over and over, would otherwise become a patchwork of small memfds).
 * Importers may still map their memfds, but no live key names them.
 */
static struct backing *absorb(uint64_t start, uint64_t end)
{
	struct backing **pp = &backings, *taken = NULL;

	while (*pp != NULL) {
		struct backing *k = *pp;

		if (k->refs == 0 && k->b.base >= start && k->b.base + k->b.len <= end) {
			*pp = k->next;
			k->next = taken;
			taken = k;
		} else {
			pp = &k->next;
		}
	}
	return taken;
}

/* Puts absorbed backings back at the end of the list. */
static void settle_behind(struct backing *absorbed)
{
	struct backing **pp = &backings;

	while (*pp != NULL)
		pp = &(*pp)->next;
	*pp = absorbed;
}

/* Puts absorbed backings back (nothing moved: their pages are still theirs), or frees them (moved). */
static void settle(struct backing *absorbed, bool moved)
{
	while (absorbed != NULL) {
		struct backing *k = absorbed;

		absorbed = k->next;
		if (moved) {
			close(k->b.memfd);
			free(k);
		} else {
			k->next = backings;
			backings = k;
		}
	}
}

/*
 * The backings [start, end) touches, in order, into k; a part no backing
 * holds (gap) is to be moved onto one of its own (k NULL). Each part's kind
 * is checked before anything moves, so a range that cannot be shared
 * leaves the memory as it was. The number of parts, or a status.
 */
static int plan_range(uint64_t start, uint64_t end, const struct backing *absorbed,
		      struct backing *k[FAB_SHARE_SEGS_MAX], uint64_t gap[FAB_SHARE_SEGS_MAX][2])
{
	int n = 0;

	for (uint64_t pos = start; pos < end; n++) {
		if (n == FAB_SHARE_SEGS_MAX)
			return FAB_SHARE_OVERLAP;
		k[n] = usable(pos, end);
		gap[n][0] = pos;
		gap[n][1] = k[n] != NULL ? pos : next_base(pos, end);
		if (k[n] == NULL && mapped_as(gap[n][0], gap[n][1], absorbed) == 0)
			return FAB_SHARE_CANNOT;
		pos = k[n] != NULL ? k[n]->b.base + k[n]->b.len : gap[n][1];
	}
	return n;
}

static int share_range_locked(uint64_t start, uint64_t end, struct fab_shared *s)
{
	struct backing *k[FAB_SHARE_SEGS_MAX] = { 0 }, *absorbed;
	uint64_t gap[FAB_SHARE_SEGS_MAX][2];
	int n, status;

	drop_stale();
	absorbed = absorb(start, end);
	n = plan_range(start, end, absorbed, k, gap);
	if (n < 0) {
		settle(absorbed, false);
		return n;
	}
	for (int i = 0; i < n; i++)
		if (k[i] == NULL && (k[i] = add_backing(gap[i][0], gap[i][1], absorbed, &status)) == NULL) {
			/*
			 * Rare (no descriptor or memory for a memfd). What moved stays
			 * moved; the absorbed backings go back behind the new ones, so
			 * lookups find the new first, and each is tracked for what it
			 * still maps (fork, drop_stale).
			 */
			settle_behind(absorbed);
			return status;
		}
	settle(absorbed, true);
	s->n = (uint32_t)n;
	for (int i = 0; i < n; i++) {
		k[i]->refs++;
		s->seg[i] = k[i]->b;
	}
	return 0;
}

/*
 * fork: a moved range is MAP_SHARED, so without care a child's writes to
 * what it holds as its private copy would land in the parent's memory (and
 * the parent's in the child's). The child instead gets a private copy of
 * each range as it was at the fork, as copy-on-write would have given it,
 * and keeps no backing: the registrations are the parent's. Device memory
 * (fab_share_keep_shared) is the exception: one memory, shared. Parts the
 * program still maps after freeing the rest count too (a trimmed heap).
 */
static void privatize(uint64_t lo, uint64_t hi)
{
	uint64_t len = hi - lo;
	/* Straight to the kernel (base_vm.h): a hook's lock may be held by a thread the fork left behind. */
	void *tmp = base_vm_map(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (tmp == MAP_FAILED)
		return; /* the child keeps the shared pages: the best left */
	copy_pages(tmp, (const uint64_t *)(uintptr_t)lo, len);
	if (base_vm_remap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, (void *)(uintptr_t)lo) == MAP_FAILED)
		(void)base_vm_unmap(tmp, len);
}

/*
 * The child copies the ranges after fork returned in the parent too: the
 * parent waits for the copy (a pipe the child writes to, or closes by
 * dying), or what its forking thread writes right after fork (malloc's
 * bookkeeping of a freed block, say) would land in the child's copy.
 */
static int fork_sync[2] = { -1, -1 };

static void fork_prepare(void)
{
	pthread_mutex_lock(&lock);
	if (backings == NULL || pipe2(fork_sync, O_CLOEXEC) != 0)
		fork_sync[0] = fork_sync[1] = -1;
}

#define FORK_COPY_WAIT_MS 10000 /* a child stopped in its copy (a debugger) does not hold its parent forever */

static void fork_parent(void)
{
	struct pollfd pf = { .fd = fork_sync[0], .events = POLLIN };
	char c;

	if (fork_sync[0] >= 0) {
		close(fork_sync[1]);
		/* poll(2)'s timeout runs on the monotonic clock; EINTR restarts the whole bound, rarely */
		while (poll(&pf, 1, FORK_COPY_WAIT_MS) < 0 && errno == EINTR)
			;
		if (pf.revents != 0 && read(fork_sync[0], &c, 1) < 0) {
			/* the child wrote or ended: either way its copy is made */
		}
		close(fork_sync[0]);
		fork_sync[0] = fork_sync[1] = -1;
	}
	pthread_mutex_unlock(&lock);
}

/*
 * The parent's list, kept reachable in the child and never freed there: a
 * fork handler must not allocate or free (a sanitizer's allocator may be
 * locked across fork, and the parent waits for this handler).
 */
static struct backing *inherited;

static void fork_child(void)
{
	struct backing *all = backings, *next;

	/*
	 * Privatized before any node is written: the list's nodes may lie in
	 * memory still shared with the parent until then. The device's memory
	 * stays one memory, and its backings the child's too.
	 */
	for (struct backing *k = all; k != NULL; k = k->next)
		if (!k->device)
			each_mapped(k, privatize);
	inherited = NULL;
	backings = NULL;
	for (struct backing *k = all; k != NULL; k = next) {
		struct backing **to = k->device ? &backings : &inherited;

		next = k->next;
		k->next = *to;
		*to = k;
	}
	for (struct backing *k = inherited; k != NULL; k = k->next) {
		close(k->b.memfd);
		k->refs = 0;
	}
	if (fork_sync[1] >= 0) {
		if (write(fork_sync[1], "c", 1) != 1) {
			/* the parent learns of the copy when this child ends (its end of the pipe closes) */
		}
		close(fork_sync[0]);
		close(fork_sync[1]);
		fork_sync[0] = fork_sync[1] = -1;
	}
	pthread_mutex_unlock(&lock);
}

static void fork_hooks(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void put_locked(const struct fab_backing *b)
{
	for (struct backing *k = backings; k != NULL; k = k->next)
		if (k->b.memfd == b->memfd && k->refs > 0) {
			k->refs--;
			break;
		}
}

void fab_share_keep_shared(const struct fab_backing *b)
{
	pthread_mutex_lock(&lock);
	for (struct backing *k = backings; k != NULL; k = k->next)
		if (k->b.memfd == b->memfd)
			k->device = true;
	pthread_mutex_unlock(&lock);
}

void fab_share_put(const struct fab_backing *b)
{
	pthread_mutex_lock(&lock);
	put_locked(b);
	pthread_mutex_unlock(&lock);
}

/* The page-aligned span of [addr, addr+len); false when there is none. */
static bool page_span(const void *addr, uint64_t len, uint64_t *start, uint64_t *end)
{
	uint64_t pg = page_size();

	*start = (uint64_t)(uintptr_t)addr & ~(pg - 1);
	*end = ((uint64_t)(uintptr_t)addr + len + pg - 1) & ~(pg - 1);
	return len != 0 && *end > *start;
}

static pthread_once_t hooks_once = PTHREAD_ONCE_INIT;

int fab_share_get(void *addr, uint64_t len, struct fab_backing *b)
{
	uint64_t start, end;
	int ret;

	if (!page_span(addr, len, &start, &end))
		return FAB_SHARE_CANNOT;
	pthread_once(&hooks_once, fork_hooks);
	pthread_mutex_lock(&lock);
	ret = share_locked(start, end, b);
	pthread_mutex_unlock(&lock);
	return ret;
}

int fab_share_get_range(void *addr, uint64_t len, struct fab_shared *s)
{
	uint64_t start, end;
	int ret;

	if (!page_span(addr, len, &start, &end))
		return FAB_SHARE_CANNOT;
	pthread_once(&hooks_once, fork_hooks);
	pthread_mutex_lock(&lock);
	ret = share_range_locked(start, end, s);
	pthread_mutex_unlock(&lock);
	return ret;
}

void fab_share_put_range(const struct fab_shared *s)
{
	pthread_mutex_lock(&lock);
	for (uint32_t i = 0; i < s->n; i++)
		put_locked(&s->seg[i]);
	pthread_mutex_unlock(&lock);
}

int fab_share_check_fd(int fd, uint64_t len, const char *what)
{
	struct stat st;
	int seals;

	if (base_priv_check(fd, "memory file", what) != BASE_PRIV_OK || fstat(fd, &st) != 0)
		return -1;
	seals = fcntl(fd, F_GET_SEALS);
	if ((uint64_t)st.st_size < len || seals < 0 || !(seals & F_SEAL_SHRINK)) {
		BASE_WARN("%s: not a sealed memory file of at least %llu bytes (it has %lld): not mapped", what,
			  (unsigned long long)len, (long long)st.st_size);
		return -1;
	}
	return 0;
}
