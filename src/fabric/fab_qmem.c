/*
 * fab_qmem — queue blocks on memfds, mapped by other processes through /proc.
 */
#include "fab_qmem.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base_log.h"
#include "base_private.h"
#include "fab_qext.h"
#include "fab_share.h"
#include "fab_mr.h"
#include "fab_table.h"
#include "hw_qshare.h"

/* What a queue's record says about its block (same machine: host byte order). */
struct qmem_backing {
	uint32_t pid;
	int32_t fd;	/* the arena's descriptor number in the owner */
	uint64_t start; /* the owner's start time: a reused pid is another process */
	uint64_t ino;	/* the arena's inode: a reused descriptor number is another file */
	uint64_t off;	/* the block's offset in the arena (page aligned) */
};
_Static_assert(sizeof(struct qmem_backing) <= HW_QMEM_BACKING_MAX, "fits the queue's record");

/*
 * The process's arena: one memfd every shareable queue block of this process
 * lives in, so a queue costs no descriptor (a memfd per queue held one each
 * against RLIMIT_NOFILE). Blocks take offsets that only
 * grow, never reused: a peer's view of a destroyed queue can never alias a
 * newer one. The file is sparse; a freed block's pages are punched out.
 */
static struct {
	pthread_mutex_t lock;
	int fd;		/* -1 until the first block */
	uint64_t ino;
	uint64_t start;	/* this process's start time, read once (it takes a descriptor) */
	uint64_t end;	/* the next block's offset */
} arena = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1 };

static uint64_t qmem_page(void)
{
	return (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The arena's descriptor, made on first use. Lock held. */
static int arena_fd(void)
{
	struct stat st;
	int fd;

	if (arena.fd >= 0)
		return arena.fd;
	/* The user's alone, and sealed against shrinking: a peer's mapping never loses its pages (it may grow). */
	fd = base_priv_memfd("softdpu-queues", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd >= 0 && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		BASE_ERR("no shareable memory for the device's queues (memfd: %s): queue creation fails",
			 strerror(errno));
		return -1;
	}
	arena.start = fab_proc_start_time((uint32_t)getpid());
	if (fstat(fd, &st) != 0 || arena.start == 0) {
		BASE_ERR("cannot describe the queue memory to other processes: %s", strerror(errno));
		close(fd);
		return -1;
	}
	arena.fd = fd;
	arena.ino = (uint64_t)st.st_ino;
	arena.end = 0;
	return fd;
}

/* Takes [*off, *off + len) at the arena's end and sizes the file to hold it. Lock held. */
static int arena_take(uint64_t len, uint64_t *off)
{
	uint64_t span = (len + qmem_page() - 1) & ~(qmem_page() - 1);

	if (arena_fd() < 0)
		return -1;
	if (arena.end > (uint64_t)INT64_MAX - span || ftruncate(arena.fd, (off_t)(arena.end + span)) != 0) {
		BASE_ERR("no room for a queue of %llu bytes in the queue memory: %s", (unsigned long long)len,
			 strerror(errno));
		return -1;
	}
	*off = arena.end;
	arena.end += span;
	return 0;
}

static void *qmem_alloc(size_t len, void *backing, uint32_t *blen)
{
	struct qmem_backing b = { .pid = (uint32_t)getpid() };
	void *p = MAP_FAILED;

	pthread_mutex_lock(&arena.lock);
	if (arena_take(len, &b.off) == 0) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, arena.fd, (off_t)b.off);
		if (p == MAP_FAILED)
			BASE_ERR("cannot map a queue's memory: %s", strerror(errno));
		b.fd = arena.fd;
		b.ino = arena.ino;
		b.start = arena.start;
	}
	pthread_mutex_unlock(&arena.lock);
	if (p == MAP_FAILED)
		return NULL;
	memcpy(backing, &b, sizeof(b));
	*blen = sizeof(b);
	return p;
}

static void qmem_free(void *p, size_t len, const void *backing, uint32_t blen)
{
	uint64_t span = (len + qmem_page() - 1) & ~(qmem_page() - 1);
	struct qmem_backing b;

	munmap(p, len);
	if (blen != sizeof(b))
		return;
	memcpy(&b, backing, sizeof(b));
	/* A child after fork holds a copy of its parent's blocks: only the owner gives the pages back. */
	pthread_mutex_lock(&arena.lock);
	if (b.pid == (uint32_t)getpid() && arena.fd >= 0 && b.ino == arena.ino)
		(void)fallocate(arena.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)b.off, (off_t)span);
	pthread_mutex_unlock(&arena.lock);
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
	/* The record's offset is what the owner published: the block must lie inside a sealed file of the user's. */
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != b->ino || b->off > UINT64_MAX - len ||
	    fab_share_check_fd(fd, b->off + len, "of a shared queue") != 0) {
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
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)b.off);
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
	.adopt = fab_qext_adopt,
	.unadopt = fab_qext_unadopt,
	.attach_ext = fab_qext_attach,
	.detach_ext = fab_qext_detach,
};

/* Fork: the lock is held across it; the child makes its own arena (the parent's offsets are the parent's). */
static void qmem_prepare(void)
{
	pthread_mutex_lock(&arena.lock);
}

static void qmem_parent(void)
{
	pthread_mutex_unlock(&arena.lock);
}

static void qmem_child(void)
{
	if (arena.fd >= 0)
		close(arena.fd); /* the parent's blocks stay mapped here; the file is the parent's */
	arena.fd = -1;
	arena.ino = 0;
	arena.start = 0;
	arena.end = 0;
	pthread_mutex_unlock(&arena.lock);
}

static void qmem_hooks(void)
{
	pthread_atfork(qmem_prepare, qmem_parent, qmem_child);
}

void fab_qmem_init(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, qmem_hooks);
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
