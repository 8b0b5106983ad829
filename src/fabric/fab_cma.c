/*
 * fab_cma — reaching another process's exported memory on the same machine.
 *
 * When the exporter moved the range onto a shareable backing (fab_share.h),
 * the importer takes the memfd (pidfd_getfd) and maps it: accesses are plain
 * memory copies. Otherwise it uses cross-memory attach (process_vm_readv /
 * process_vm_writev): one system call per access.
 *
 * The export table (fab_table.c) says whether the export is still live; the
 * importer counts its access in flight there, so a withdrawing exporter waits
 * for it. A pidfd tells that the exporter died, even if its pid is reused.
 */
#include <errno.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "base_log.h"
#include "fab_share.h"
#include "fab_table.h"
#include "fab_xport.h"
#include "hw_mem.h"

#define LIVENESS_PERIOD_NS 1000000 /* mapped access: look at the exporter at most this often */

struct fab_remote {
	struct fab_slot *slot;
	uint64_t export_id;
	uint64_t addr;
	uint64_t len;
	pid_t pid;
	int pidfd;
	uint8_t *map;	   /* the mapped backing, or NULL: cross-memory attach */
	uint64_t map_base; /* exporter address of map[0] */
	uint64_t map_len;
	uint64_t next_check; /* monotonic ns of the next liveness look */
	bool dead;
};

/*
 * Maps the exporter's shareable backing, if it has one; read-only unless the
 * export grants writes. The slot is shared memory other processes write, so
 * its fields are read once and checked: the range lies in the backing, and
 * the file taken is a sealed memory file of this user holding all of it.
 * Anything else is not mapped (cross-memory attach faults nobody).
 */
static void map_backing(struct fab_remote *r, const struct fab_slot *s, uint32_t access)
{
	const uint32_t write_rights = HW_ACCESS_REMOTE_WRITE | HW_ACCESS_PEER_WRITE;
	int prot = PROT_READ | ((access & write_rights) ? PROT_WRITE : 0);
	int32_t memfd = __atomic_load_n(&s->memfd, __ATOMIC_RELAXED);
	uint64_t base = __atomic_load_n(&s->map_base, __ATOMIC_RELAXED);
	uint64_t len = __atomic_load_n(&s->map_len, __ATOMIC_RELAXED);
	int fd;
	void *p;

	if (memfd < 0 || len == 0 || len > SIZE_MAX || r->addr < base || r->addr - base > len ||
	    r->len > len - (r->addr - base))
		return;
	fd = (int)syscall(SYS_pidfd_getfd, r->pidfd, memfd, 0);
	if (fd < 0) {
		BASE_DBG("cannot take the exporter's memory file (errno %d): using cross-memory attach", errno);
		return;
	}
	if (fab_share_check_fd(fd, len, "named by the export table") != 0) {
		close(fd);
		return;
	}
	p = mmap(NULL, len, prot, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return;
	r->map = p;
	r->map_base = base;
	r->map_len = len;
}

static int cma_open(const struct fab_export_desc *d, const struct fab_xinfo *info, struct fab_remote **out)
{
	struct fab_slot *s = fab_table_find(d);
	struct fab_remote *r;
	int pidfd;

	(void)info;
	if (s == NULL)
		return FAB_ERR_REVOKED;
	pidfd = (int)syscall(SYS_pidfd_open, (pid_t)d->pid, 0);
	if (pidfd < 0)
		return FAB_ERR_PEER_GONE;
	/* The pidfd names the process running now: make sure it is the exporter. */
	if (fab_proc_start_time(d->pid) != s->start_time) {
		close(pidfd);
		return FAB_ERR_PEER_GONE;
	}
	r = calloc(1, sizeof(*r));
	if (r == NULL) {
		close(pidfd);
		return FAB_ERR_IO;
	}
	*r = (struct fab_remote){ .slot = s, .export_id = d->export_id, .addr = d->addr, .len = d->len,
				  .pid = (pid_t)d->pid, .pidfd = pidfd };
	map_backing(r, s, d->access);
	*out = r;
	return FAB_OK;
}

static void cma_close(struct fab_remote *r)
{
	if (r->map != NULL)
		munmap(r->map, r->map_len);
	close(r->pidfd);
	free(r);
}

static bool exporter_exited(const struct fab_remote *r)
{
	struct pollfd p = { .fd = r->pidfd, .events = POLLIN };

	return poll(&p, 1, 0) != 0;
}

/*
 * Mapped memory stays readable after its exporter dies, so the death need
 * not be seen at once — only within bounded time: look at most every ms.
 */
static bool exporter_exited_lazy(struct fab_remote *r)
{
	struct timespec ts;
	uint64_t now;

	if (r->dead)
		return true;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if (now >= r->next_check) {
		r->next_check = now + LIVENESS_PERIOD_NS;
		r->dead = exporter_exited(r);
	}
	return r->dead;
}

static enum fab_status errno_status(int err)
{
	switch (err) {
	case ESRCH:
		return FAB_ERR_PEER_GONE;
	case EFAULT:
		return FAB_ERR_REVOKED; /* the exporter unmapped the range */
	default:
		return FAB_ERR_IO;
	}
}

/* Moves len bytes; a transfer may come back short, so loop. */
static enum fab_status cma_move(struct fab_remote *r, uint64_t raddr, void *buf, size_t len, bool write)
{
	size_t done = 0;

	while (done < len) {
		struct iovec local = { .iov_base = (uint8_t *)buf + done, .iov_len = len - done };
		struct iovec remote = { .iov_base = (void *)(uintptr_t)(raddr + done), .iov_len = len - done };
		ssize_t n = write ? process_vm_writev(r->pid, &local, 1, &remote, 1, 0)
				  : process_vm_readv(r->pid, &local, 1, &remote, 1, 0);

		if (n <= 0) {
			int err = n < 0 ? errno : EFAULT;

			if (err == EINTR)
				continue;
			BASE_DBG("cross-memory %s of %zu bytes failed: errno %d", write ? "write" : "read", len, err);
			return errno_status(err);
		}
		done += (size_t)n;
	}
	return FAB_OK;
}

static enum fab_status cma_access(struct fab_remote *r, uint64_t raddr, void *buf, size_t len, bool write)
{
	struct fab_slot *s = r->slot;
	enum fab_status st;

	if (raddr < r->addr || len > r->len || raddr - r->addr > r->len - len)
		return FAB_ERR_INVAL;
	atomic_fetch_add(&s->inflight, 1);
	if (atomic_load(&s->state) != FAB_SLOT_LIVE || atomic_load(&s->export_id) != r->export_id) {
		st = exporter_exited(r) ? FAB_ERR_PEER_GONE : FAB_ERR_REVOKED;
	} else if (r->map != NULL) {
		st = exporter_exited_lazy(r) ? FAB_ERR_PEER_GONE : FAB_OK;
		if (st == FAB_OK && write)
			memcpy(r->map + (raddr - r->map_base), buf, len);
		else if (st == FAB_OK)
			memcpy(buf, r->map + (raddr - r->map_base), len);
	} else {
		st = exporter_exited(r) ? FAB_ERR_PEER_GONE : cma_move(r, raddr, buf, len, write);
	}
	atomic_fetch_sub(&s->inflight, 1);
	return st;
}

static enum fab_status cma_read(struct fab_remote *r, uint64_t raddr, void *dst, size_t len)
{
	return cma_access(r, raddr, dst, len, false);
}

static enum fab_status cma_write(struct fab_remote *r, uint64_t raddr, const void *src, size_t len)
{
	return cma_access(r, raddr, (void *)(uintptr_t)src, len, true);
}

const struct fab_xport_ops fab_cma_ops = {
	.name = "cma",
	.open = cma_open,
	.close = cma_close,
	.read = cma_read,
	.write = cma_write,
};
