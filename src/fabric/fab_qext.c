/*
 * fab_qext — a queue's given ring and record on memfds, mapped by other processes.
 */
#include "fab_qext.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base_log.h"
#include "fab_share.h"
#include "fab_table.h"

#define QEXT_SEGS_MAX 8 /* ring and record together */

/* One memfd holding part of a range (same machine: host byte order). */
struct qext_seg {
	uint64_t ino;	/* a reused descriptor number is another file */
	int32_t fd;	/* in the owner */
	uint32_t pages;
};

/* What the queue's record says: the ring's memfds (nring), then the record's. */
struct qext_backing {
	uint32_t pid;
	uint16_t nring;
	uint16_t ndbrec;
	uint64_t start;	    /* the owner's start time: a reused pid is another process */
	uint64_t ring_off;  /* the ring's first byte, from its first memfd's first byte */
	uint64_t dbrec_off; /* the same for the record */
	struct qext_seg seg[QEXT_SEGS_MAX];
};
_Static_assert(sizeof(struct qext_backing) <= HW_QEXT_BACKING_MAX, "fits the queue's record");

/* The owner's references on the memfds, until the queue is destroyed. */
struct qext_hold {
	struct fab_shared ring;
	struct fab_shared dbrec;
};

/* A peer's mappings of them. */
struct qext_map {
	uint8_t *ring;
	uint64_t ring_total;
	uint8_t *dbrec;
	uint64_t dbrec_total;
};

static uint64_t page_size(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

static enum hw_status share_status(int rc, const char *what)
{
	if (rc == FAB_SHARE_NO_RESOURCES)
		return HW_ERR_NOMEM; /* fab_share logged it */
	BASE_WARN("the %s a queue was given cannot be shared with other processes (a file mapping, huge pages, "
		  "or spread over more memory files than its record names): the queue is not created",
		  what);
	return HW_ERR_NOTSUP;
}

/* Appends s's memfds to b; false when one cannot be described or there are too many. */
static bool describe(struct qext_backing *b, unsigned int *n, const struct fab_shared *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		struct stat st;

		if (*n == QEXT_SEGS_MAX || fstat(s->seg[i].memfd, &st) != 0 ||
		    s->seg[i].len / page_size() > UINT32_MAX)
			return false;
		b->seg[(*n)++] = (struct qext_seg){ .ino = (uint64_t)st.st_ino, .fd = s->seg[i].memfd,
						    .pages = (uint32_t)(s->seg[i].len / page_size()) };
	}
	return true;
}

enum hw_status fab_qext_adopt(void *ring, size_t ring_len, void *dbrec, size_t dbrec_len, void *backing,
			      uint32_t *blen, void **handle)
{
	struct qext_backing b = { .pid = (uint32_t)getpid() };
	struct qext_hold *h = calloc(1, sizeof(*h));
	enum hw_status st = HW_ERR_NOMEM;
	unsigned int n = 0;
	int rc;

	if (h == NULL)
		return HW_ERR_NOMEM;
	if (ring_len != 0 && (rc = fab_share_get_range(ring, ring_len, &h->ring)) != 0) {
		st = share_status(rc, "ring");
		goto err_free;
	}
	rc = fab_share_get_range(dbrec, dbrec_len, &h->dbrec);
	if (rc != 0) {
		st = share_status(rc, "doorbell record");
		goto err_ring;
	}
	b.start = fab_proc_start_time(b.pid);
	if (b.start == 0)
		goto err_dbrec; /* reading it takes a descriptor */
	if (!describe(&b, &n, &h->ring)) {
		st = share_status(FAB_SHARE_OVERLAP, "ring");
		goto err_dbrec;
	}
	b.nring = (uint16_t)n;
	if (!describe(&b, &n, &h->dbrec)) {
		st = share_status(FAB_SHARE_OVERLAP, "doorbell record");
		goto err_dbrec;
	}
	b.ndbrec = (uint16_t)(n - b.nring);
	b.ring_off = h->ring.n != 0 ? (uint64_t)(uintptr_t)ring - h->ring.seg[0].base : 0;
	b.dbrec_off = (uint64_t)(uintptr_t)dbrec - h->dbrec.seg[0].base;
	memcpy(backing, &b, sizeof(b));
	*blen = sizeof(b);
	*handle = h;
	return HW_OK;

err_dbrec:
	fab_share_put_range(&h->dbrec);
err_ring:
	fab_share_put_range(&h->ring);
err_free:
	free(h);
	return st;
}

void fab_qext_unadopt(void *handle)
{
	struct qext_hold *h = handle;

	fab_share_put_range(&h->dbrec);
	fab_share_put_range(&h->ring);
	free(h);
}

/* Opens one of the owner's memfds through /proc and checks it is the file the record names. */
static int open_seg(const struct qext_backing *b, const struct qext_seg *g)
{
	char path[64];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "/proc/%u/fd/%d", b->pid, g->fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		BASE_DBG("cannot open a queue's memory in process %u: %s", b->pid, strerror(errno));
		return -1;
	}
	/* The record is shared memory: what it names must be this user's sealed file of that size. */
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != g->ino ||
	    fab_share_check_fd(fd, (uint64_t)g->pages * page_size(), "of a shared queue's ring") != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Maps n memfds side by side in one reservation, as they lie in the owner,
 * and checks [off, off + len) lies in them. NULL when it cannot (forged or
 * torn record, owner gone).
 */
static uint8_t *map_segs(const struct qext_backing *b, const struct qext_seg *g, unsigned int n, uint64_t off,
			 uint64_t len, uint64_t *total)
{
	uint8_t *p, *at;

	*total = 0;
	for (unsigned int i = 0; i < n; i++) {
		if (g[i].pages == 0)
			return NULL;
		*total += (uint64_t)g[i].pages * page_size();
	}
	if (n == 0 || off > *total || len > *total - off)
		return NULL;
	p = mmap(NULL, *total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	at = p;
	for (unsigned int i = 0; i < n; i++) {
		uint64_t bytes = (uint64_t)g[i].pages * page_size();
		int fd = open_seg(b, &g[i]);
		void *m = fd < 0 ? MAP_FAILED : mmap(at, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);

		if (fd >= 0)
			close(fd);
		if (m == MAP_FAILED) {
			munmap(p, *total);
			return NULL;
		}
		at += bytes;
	}
	return p;
}

void *fab_qext_attach(const void *backing, uint32_t blen, size_t ring_len, size_t dbrec_len, void **ring,
		      void **dbrec)
{
	struct qext_backing b;
	struct qext_map *m;

	if (blen != sizeof(b))
		return NULL;
	memcpy(&b, backing, sizeof(b));
	if ((unsigned int)b.nring + b.ndbrec > QEXT_SEGS_MAX || (b.nring == 0) != (ring_len == 0) || b.ndbrec == 0 ||
	    b.start == 0 || fab_proc_start_time(b.pid) != b.start)
		return NULL; /* malformed, or the owner is gone (its pid another process now) */
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return NULL;
	if (b.nring != 0) {
		m->ring = map_segs(&b, b.seg, b.nring, b.ring_off, ring_len, &m->ring_total);
		if (m->ring == NULL)
			goto err;
	}
	m->dbrec = map_segs(&b, b.seg + b.nring, b.ndbrec, b.dbrec_off, dbrec_len, &m->dbrec_total);
	if (m->dbrec == NULL)
		goto err;
	*ring = m->ring != NULL ? m->ring + b.ring_off : NULL;
	*dbrec = m->dbrec + b.dbrec_off;
	return m;

err:
	fab_qext_detach(m);
	return NULL;
}

void fab_qext_detach(void *handle)
{
	struct qext_map *m = handle;

	if (m->ring != NULL)
		munmap(m->ring, m->ring_total);
	if (m->dbrec != NULL)
		munmap(m->dbrec, m->dbrec_total);
	free(m);
}
