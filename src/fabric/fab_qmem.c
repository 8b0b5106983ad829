/*
 * fab_qmem — queue blocks on memfds, mapped by other processes through /proc.
 */
#include "fab_qmem.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base_log.h"
#include "base_private.h"
#include "fab_share.h"
#include "fab_mr.h"
#include "fab_table.h"
#include "hw_qshare.h"

/* What a queue's record says about its block (same machine: host byte order). */
struct qmem_backing {
	uint32_t pid;
	int32_t fd;	/* the memfd's number in the owner */
	uint64_t start; /* the owner's start time: a reused pid is another process */
	uint64_t ino;	/* the memfd's inode: a reused descriptor number is another file */
};
_Static_assert(sizeof(struct qmem_backing) <= HW_QMEM_BACKING_MAX, "fits the queue's record");

static void *qmem_alloc(size_t len, void *backing, uint32_t *blen)
{
	struct qmem_backing b = { .pid = (uint32_t)getpid() };
	struct stat st;
	void *p;
	/* The user's alone, and sealed at its size: a peer's mapping never loses its pages. */
	int fd = base_priv_memfd("softdpu-queue", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0) {
		BASE_WARN("no shareable memory for a queue (memfd: %s): it stays in this process", strerror(errno));
		return NULL;
	}
	if (ftruncate(fd, (off_t)len) != 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0 ||
	    fstat(fd, &st) != 0)
		goto err_close;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto err_close;
	b.fd = fd;
	b.start = fab_proc_start_time(b.pid);
	b.ino = (uint64_t)st.st_ino;
	memcpy(backing, &b, sizeof(b));
	*blen = sizeof(b);
	return p;

err_close:
	close(fd);
	return NULL;
}

static void qmem_free(void *p, size_t len, const void *backing, uint32_t blen)
{
	struct qmem_backing b;

	munmap(p, len);
	if (blen != sizeof(b))
		return;
	memcpy(&b, backing, sizeof(b));
	/* A child after fork holds a copy of the descriptor: only the owner's is closed. */
	if (b.pid == (uint32_t)getpid())
		close(b.fd);
}

/* Opens the owner's memfd through /proc and checks it is the file the record names. */
static int qmem_open(const struct qmem_backing *b, size_t len)
{
	char path[64];
	struct stat st;
	int fd;

	if (b->start == 0 || fab_proc_start_time(b->pid) != b->start)
		return -1; /* the owner is gone (or its pid is another process now) */
	snprintf(path, sizeof(path), "/proc/%u/fd/%d", b->pid, b->fd);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		BASE_DBG("cannot open a queue of process %u: %s", b->pid, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != b->ino || fab_share_check_fd(fd, len, "of a shared queue") != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void *qmem_attach(const void *backing, uint32_t blen, size_t len)
{
	struct qmem_backing b;
	void *p;
	int fd;

	if (blen != sizeof(b))
		return NULL;
	memcpy(&b, backing, sizeof(b));
	fd = qmem_open(&b, len);
	if (fd < 0)
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

static void qmem_detach(void *p, size_t len)
{
	munmap(p, len);
}

static const struct hw_qmem_ops qmem_ops = {
	.alloc = qmem_alloc,
	.free = qmem_free,
	.attach = qmem_attach,
	.detach = qmem_detach,
};

void fab_qmem_init(void)
{
	hw_qmem_set_ops(&qmem_ops);
}

/*
 * Loaded with the library: queues and keys of other processes are reachable
 * from the start, whichever layer above (verbs, DOCA) creates them.
 */
__attribute__((constructor)) static void fab_qmem_load(void)
{
	fab_qmem_init();
	fab_mr_init();
}
