/*
 * Host and DPU as separate processes: a host process exports memory, a DPU
 * process imports it and moves data with DMA jobs in both directions; the
 * exporter's permissions hold; a withdrawn export or a killed exporter makes
 * the importer's jobs fail with a clear error, in bounded time, without a hang.
 *
 * The test binary plays three roles. Without arguments it is the coordinator:
 * it uses no DOCA call itself, starts an exporter and an importer (this same
 * binary, re-executed through /proc/self/exe with a role and SOFTDPU_SIDE)
 * and drives them with text lines over pipes (tests/th_proc.h).
 */
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dma_fixture.h"
#include "doca_sha.h"
#include "harness.h"
#include "th_proc.h"

#define LINE_MAX_LEN 8192
#define DESC_MAX 4096 /* bytes; export descriptors are smaller */

static uint8_t pattern(uint64_t off, unsigned seed)
{
	return (uint8_t)(off * 131u + seed * 7u + (off >> 11));
}

/* ---- child roles ---- */

static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static struct doca_dev *open_pci(const char *pci)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	char s[DOCA_DEVINFO_PCI_ADDR_SIZE];
	uint32_t n;

	if (doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS)
		return NULL;
	for (uint32_t i = 0; i < n && dev == NULL; i++)
		if (doca_devinfo_get_pci_addr_str(list[i], s) == DOCA_SUCCESS && strcmp(s, pci) == 0)
			doca_dev_open(list[i], &dev);
	doca_devinfo_list_destroy(list);
	return dev;
}

static void hex_encode(const uint8_t *p, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
}

static size_t hex_decode(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;
	unsigned v;

	while (n < max && sscanf(s + 2 * n, "%2x", &v) == 1)
		out[n++] = (uint8_t)v;
	return n;
}

#define STACK_EXPORT_MAX (256u << 10)

/*
 * exporter <pci> <dpu|rdma> <permissions> <size>[s]: exports, then obeys
 * CHECK/DESTROY/EXIT. With the suffix s the memory is on the stack, which is
 * never moved onto a shareable backing: importers reach it by cross-memory attach.
 */
static int role_exporter(char **argv)
{
	char *end;
	size_t size = strtoull(argv[5], &end, 0);
	bool on_stack = *end == 's' && size <= STACK_EXPORT_MAX;
	uint8_t stack_mem[STACK_EXPORT_MAX];
	uint32_t perm = (uint32_t)strtoul(argv[4], NULL, 0);
	struct doca_dev *dev = open_pci(argv[2]);
	uint8_t *mem = on_stack ? stack_mem : malloc(size);
	struct doca_mmap *m;
	const void *desc;
	size_t dlen;
	char line[LINE_MAX_LEN];
	char *hex = malloc(2 * DESC_MAX + 1);
	doca_error_t r;

	if (dev == NULL || mem == NULL || hex == NULL)
		return 1;
	for (size_t i = 0; i < size; i++)
		mem[i] = pattern(i, 1);
	m = fx_mmap(dev, mem, size, perm);
	if (m == NULL)
		return 1;
	r = strcmp(argv[3], "dpu") == 0 ? doca_mmap_export_dpu(m, dev, &desc, &dlen)
					 : doca_mmap_export_rdma(m, dev, &desc, &dlen);
	if (r != DOCA_SUCCESS) {
		say("EXPORT %d", r);
		return 1;
	}
	hex_encode(desc, dlen, hex);
	say("DESC %s", hex);
	while (fgets(line, sizeof(line), stdin) != NULL) {
		unsigned seed;
		size_t off, len, bad = 0;

		if (sscanf(line, "CHECK %u %zu %zu", &seed, &off, &len) == 3) {
			for (size_t i = off; i < off + len && i < size; i++)
				bad += mem[i] != pattern(i, seed);
			say("CHECKED %zu", bad);
		} else if (strncmp(line, "DESTROY", 7) == 0) {
			say("DESTROYED %d", doca_mmap_destroy(m));
			m = NULL;
		} else if (strncmp(line, "EXIT", 4) == 0) {
			break;
		}
	}
	if (m != NULL)
		doca_mmap_destroy(m);
	doca_dev_close(dev);
	if (!on_stack)
		free(mem);
	free(hex);
	return 0;
}

struct importer {
	struct fx f; /* local side: dev, inventory, DMA context, work queue */
	struct doca_sha *sha; /* on the same work queue */
	uint8_t digest[2][DOCA_SHA256_BYTE_COUNT];
	struct doca_mmap *remote;
	uint8_t *local;		     /* = f.src */
	struct doca_mmap *local_mmap; /* = f.src_mmap */
	size_t size;
};

static doca_error_t run_job(struct importer *im, struct doca_buf *dst, struct doca_buf *src, doca_error_t *reason)
{
	struct doca_dma_job_memcpy job = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = im->f.ctx },
					   .dst_buff = dst, .src_buff = src };
	struct doca_event ev = { 0 };
	doca_error_t r = doca_workq_submit(im->f.wq, &job.base);

	if (r != DOCA_SUCCESS)
		return r;
	while ((r = doca_workq_progress_retrieve(im->f.wq, &ev, 0)) == DOCA_ERROR_AGAIN)
		;
	*reason = (doca_error_t)ev.result.u64;
	return r;
}

/* READ: remote [off, off+len) -> local; WRITE: local pattern(seed) -> remote. Returns the job's reason. */
static doca_error_t transfer(struct importer *im, uint64_t raddr, size_t off, size_t len, unsigned seed, bool write,
			     size_t *bad)
{
	struct doca_buf *rb, *lb;
	doca_error_t reason = DOCA_SUCCESS, r;

	*bad = 0;
	if (write)
		for (size_t i = 0; i < len; i++)
			im->local[i] = pattern(off + i, seed);
	else
		memset(im->local, 0, len);
	if (doca_buf_inventory_buf_by_addr(im->f.inv, im->remote, (void *)(uintptr_t)(raddr + off), len, &rb) !=
	    DOCA_SUCCESS)
		return DOCA_ERROR_UNEXPECTED;
	if (doca_buf_inventory_buf_by_addr(im->f.inv, im->local_mmap, im->local, len, &lb) != DOCA_SUCCESS) {
		doca_buf_refcount_rm(rb, NULL);
		return DOCA_ERROR_UNEXPECTED;
	}
	if (write) {
		doca_buf_set_data(lb, im->local, len);
		r = run_job(im, rb, lb, &reason);
	} else {
		doca_buf_set_data(rb, (void *)(uintptr_t)(raddr + off), len);
		r = run_job(im, lb, rb, &reason);
	}
	if (r == DOCA_SUCCESS && !write)
		for (size_t i = 0; i < len; i++)
			*bad += im->local[i] != pattern(off + i, seed);
	doca_buf_refcount_rm(rb, NULL);
	doca_buf_refcount_rm(lb, NULL);
	return r == DOCA_SUCCESS ? DOCA_SUCCESS : reason;
}

static int importer_setup(struct importer *im, const char *pci, size_t size)
{
	struct mem_fx_cfg cfg = { .pci = pci, .len = size, .inv_num = 16 };

	memset(im, 0, sizeof(*im));
	im->size = size;
	if (mem_fx_open(&im->f.mem, &cfg) != 0)
		return -1;
	/* the local memory is the fixture's source buffer */
	im->local = im->f.src;
	im->local_mmap = im->f.src_mmap;
	if (doca_dma_create(&im->f.dma) != DOCA_SUCCESS)
		return -1;
	im->f.ctx = doca_dma_as_ctx(im->f.dma);
	if (doca_ctx_dev_add(im->f.ctx, im->f.dev) != DOCA_SUCCESS || doca_ctx_start(im->f.ctx) != DOCA_SUCCESS ||
	    doca_workq_create(4, &im->f.wq) != DOCA_SUCCESS || doca_ctx_workq_add(im->f.ctx, im->f.wq) != DOCA_SUCCESS)
		return -1;
	if (doca_sha_create(&im->sha) != DOCA_SUCCESS || doca_ctx_dev_add(doca_sha_as_ctx(im->sha), im->f.dev) ||
	    doca_ctx_start(doca_sha_as_ctx(im->sha)) || doca_ctx_workq_add(doca_sha_as_ctx(im->sha), im->f.wq))
		return -1;
	return 0;
}

/* SHA-256 of [addr, addr+len) of mmap m into out; returns the job's status. */
static doca_error_t sha256(struct importer *im, struct doca_mmap *m, void *addr, size_t len, uint8_t *out)
{
	struct doca_mmap *dm = fx_mmap(im->f.dev, out, DOCA_SHA256_BYTE_COUNT, DOCA_ACCESS_LOCAL_READ_WRITE);
	struct doca_buf *src = NULL, *dst = NULL;
	struct doca_event ev = { 0 };
	doca_error_t r = DOCA_ERROR_UNEXPECTED;

	if (dm == NULL || doca_buf_inventory_buf_by_data(im->f.inv, m, addr, len, &src) != DOCA_SUCCESS ||
	    doca_buf_inventory_buf_by_addr(im->f.inv, dm, out, DOCA_SHA256_BYTE_COUNT, &dst) != DOCA_SUCCESS)
		goto out;
	struct doca_sha_job job = { .base = { .type = DOCA_SHA_JOB_SHA256, .ctx = doca_sha_as_ctx(im->sha) },
				    .req_buf = src, .resp_buf = dst };
	r = doca_workq_submit(im->f.wq, &job.base);
	while (r == DOCA_SUCCESS && (r = doca_workq_progress_retrieve(im->f.wq, &ev, 0)) == DOCA_ERROR_AGAIN)
		;
	if (r == DOCA_ERROR_IO_FAILED)
		r = (doca_error_t)ev.result.u64;
out:
	if (src != NULL)
		doca_buf_refcount_rm(src, NULL);
	if (dst != NULL)
		doca_buf_refcount_rm(dst, NULL);
	if (dm != NULL)
		doca_mmap_destroy(dm);
	return r;
}

static void importer_teardown(struct importer *im)
{
	if (im->sha != NULL) {
		doca_ctx_workq_rm(doca_sha_as_ctx(im->sha), im->f.wq);
		doca_ctx_stop(doca_sha_as_ctx(im->sha));
		doca_ctx_dev_rm(doca_sha_as_ctx(im->sha), im->f.dev);
		doca_sha_destroy(im->sha);
	}
	if (im->remote != NULL)
		doca_mmap_destroy(im->remote);
	fx_teardown(&im->f); /* with the local memory */
}

/* One importer command; returns false on EXIT. */
static bool importer_command(struct importer *im, const char *line, uint64_t raddr)
{
	unsigned seed;
	size_t off, len, bad;

	if (sscanf(line, "READ %u %zu %zu", &seed, &off, &len) == 3) {
		doca_error_t r = transfer(im, raddr, off, len, seed, false, &bad);

		say("RES %d %zu", r, bad);
	} else if (sscanf(line, "WRITE %u %zu %zu", &seed, &off, &len) == 3) {
		say("RES %d 0", transfer(im, raddr, off, len, seed, true, &bad));
	} else if (sscanf(line, "SHA %zu %zu", &off, &len) == 2) {
		/* the digest of the host's memory, and of the same bytes read into local memory first */
		doca_error_t r = sha256(im, im->remote, (void *)(uintptr_t)(raddr + off), len, im->digest[0]);

		if (r == DOCA_SUCCESS)
			r = transfer(im, raddr, off, len, 1, false, &bad);
		if (r == DOCA_SUCCESS)
			r = sha256(im, im->local_mmap, im->local, len, im->digest[1]);
		say("RES %d %d", r, memcmp(im->digest[0], im->digest[1], DOCA_SHA256_BYTE_COUNT) != 0);
	} else if (strncmp(line, "LOOPREAD", 8) == 0) {
		doca_error_t r = DOCA_SUCCESS;
		long n = 0;

		say("LOOPING");
		/* Bounded: a failure must come; if none does, report success and let the coordinator fail. */
		for (time_t end = time(NULL) + 20; r == DOCA_SUCCESS && time(NULL) < end; n++)
			r = transfer(im, raddr, 0, im->size < 4096 ? im->size : 4096, 1, false, &bad);
		say("RES %d %ld", r, n);
	} else if (strncmp(line, "EXIT", 4) == 0) {
		return false;
	}
	return true;
}

/* importer <pci> <size>: imports the DESC line it is given, then obeys READ/WRITE/LOOPREAD/EXIT. */
static int role_importer(char **argv)
{
	static uint8_t desc[DESC_MAX];
	char *line = malloc(2 * DESC_MAX + 64);
	struct importer im;
	void *raddr = NULL;
	size_t rlen = 0, n;
	doca_error_t r;

	if (line == NULL || importer_setup(&im, argv[2], strtoull(argv[3], NULL, 0)) != 0) {
		say("IMPORT %d", DOCA_ERROR_INITIALIZATION);
		return 1;
	}
	if (fgets(line, 2 * DESC_MAX + 64, stdin) == NULL || strncmp(line, "DESC ", 5) != 0)
		return 1;
	n = hex_decode(line + 5, desc, sizeof(desc));
	r = doca_mmap_create_from_export(NULL, desc, n, im.f.dev, &im.remote);
	if (r == DOCA_SUCCESS)
		doca_mmap_get_memrange(im.remote, &raddr, &rlen);
	say("IMPORT %d", r);
	while (fgets(line, 2 * DESC_MAX + 64, stdin) != NULL &&
	       importer_command(&im, line, (uint64_t)(uintptr_t)raddr))
		;
	importer_teardown(&im);
	free(line);
	return 0;
}

/* ---- coordinator ---- */

/* Ends a role: EXIT, then a bounded wait (then it is killed). Returns its exit status or -1. */
static int reap(struct th_proc *c)
{
	if (c == NULL)
		return -1;
	th_proc_send(c, "EXIT");
	return th_proc_wait(c);
}

#define HOST_PF0 "0000:0b:00.0"
#define HOST_PF1 "0000:0b:00.1"
#define DPU_P0 "0000:03:00.0"

struct pair {
	struct th_proc *ex, *im;
	char *desc_line; /* freed when the case ends */
};

static char *strdup_line(const char *s)
{
	char *d = malloc(strlen(s) + 1);

	if (d != NULL)
		strcpy(d, s);
	return d;
}

/* Starts an exporter of size bytes and an importer given its descriptor; returns the import status. */
static int start_pair_sz(struct pair *p, const char *kind, uint32_t perm, const char *size, const char *imp_side,
			 const char *imp_pci)
{
	char ps[16];
	const char *l;
	int r = -1;

	snprintf(ps, sizeof(ps), "%u", perm);
	memset(p, 0, sizeof(*p));
	p->ex = th_proc_start("host", "exporter", HOST_PF0, kind, ps, size, NULL);
	if (p->ex == NULL || (l = th_proc_line(p->ex)) == NULL || strncmp(l, "DESC ", 5) != 0)
		return -1;
	p->desc_line = strdup_line(l);
	if (p->desc_line == NULL)
		return -1;
	th_defer(free, p->desc_line);
	p->im = th_proc_start(imp_side, "importer", imp_pci, size, NULL);
	if (p->im == NULL || th_proc_send(p->im, "%s", p->desc_line) != 0)
		return -1;
	if ((l = th_proc_line(p->im)) == NULL || sscanf(l, "IMPORT %d", &r) != 1)
		return -1;
	return r;
}

static int start_pair(struct pair *p, const char *kind, uint32_t perm, size_t size, const char *imp_side,
		      const char *imp_pci)
{
	char ss[32];

	snprintf(ss, sizeof(ss), "%zu", size);
	return start_pair_sz(p, kind, perm, ss, imp_side, imp_pci);
}

static void stop_pair(struct pair *p)
{
	reap(p->im);
	reap(p->ex);
}

/* Sends cmd to c and parses "RES <err> <n>". */
static int result(struct th_proc *c, long *n, const char *cmd)
{
	const char *l;
	int err = -1;

	th_proc_send(c, "%s", cmd);
	l = th_proc_line(c);
	if (l != NULL && strncmp(l, "LOOPING", 7) == 0)
		l = th_proc_line(c);
	if (l == NULL || sscanf(l, "RES %d %ld", &err, n) != 2)
		return -1;
	return err;
}

static long checked(struct th_proc *ex, unsigned seed, size_t off, size_t len)
{
	const char *l;
	long bad = -1;

	th_proc_send(ex, "CHECK %u %zu %zu", seed, off, len);
	l = th_proc_line(ex);
	if (l == NULL || sscanf(l, "CHECKED %ld", &bad) != 1)
		return -1;
	return bad;
}

#define RW (DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_DPU_READ_WRITE)
#define RO (DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_DPU_READ_ONLY)

static void test_dpu_reads_and_writes_host_memory(void)
{
	static const size_t sizes[] = { 1, 63, 4096, 65537, 1 << 20, (8 << 20) + 3 };
	struct pair p;
	char cmd[128];
	long n = -1;

	CHECK(start_pair(&p, "dpu", RW, 16 << 20, "dpu", DPU_P0) == DOCA_SUCCESS);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t off = (i * 4097) % 4096;

		snprintf(cmd, sizeof(cmd), "READ 1 %zu %zu", off, sizes[i]);
		CHECK(result(p.im, &n, cmd) == DOCA_SUCCESS && n == 0);
		snprintf(cmd, sizeof(cmd), "WRITE %zu %zu %zu", i + 2, off, sizes[i]);
		CHECK(result(p.im, &n, cmd) == DOCA_SUCCESS);
		CHECK(checked(p.ex, (unsigned)i + 2, off, sizes[i]) == 0);
		/* put the original pattern back for the next read */
		snprintf(cmd, sizeof(cmd), "WRITE 1 %zu %zu", off, sizes[i]);
		CHECK(result(p.im, &n, cmd) == DOCA_SUCCESS);
	}
	CHECK(checked(p.ex, 1, 0, 16 << 20) == 0);
	/* SHA jobs read the host's memory too: same digest as over a local copy */
	CHECK(result(p.im, &n, "SHA 7 3000000") == DOCA_SUCCESS && n == 0);
	stop_pair(&p);
}

/* Memory that stays where it is (the stack): cross-memory attach, same results. */
static void test_unmovable_memory_through_cma(void)
{
	struct pair p;
	long n;

	CHECK(start_pair_sz(&p, "dpu", RW, "131072s", "dpu", DPU_P0) == DOCA_SUCCESS);
	CHECK(result(p.im, &n, "READ 1 0 131072") == DOCA_SUCCESS && n == 0);
	CHECK(result(p.im, &n, "WRITE 4 1000 100000") == DOCA_SUCCESS);
	CHECK(checked(p.ex, 4, 1000, 100000) == 0);
	th_proc_send(p.ex, "DESTROY");
	CHECK(th_proc_line(p.ex) != NULL);
	CHECK(result(p.im, &n, "READ 1 0 4096") == DOCA_ERROR_NOT_PERMITTED);
	stop_pair(&p);
}

static void test_read_only_export_refuses_writes(void)
{
	struct pair p;
	long n;

	CHECK(start_pair(&p, "dpu", RO, 1 << 16, "dpu", DPU_P0) == DOCA_SUCCESS);
	CHECK(result(p.im, &n, "READ 1 0 65536") == DOCA_SUCCESS && n == 0);
	CHECK(result(p.im, &n, "WRITE 9 100 1000") == DOCA_ERROR_NOT_PERMITTED);
	CHECK(checked(p.ex, 1, 0, 1 << 16) == 0); /* untouched */
	stop_pair(&p);
}

static void test_outside_the_export_refused(void)
{
	struct pair p;
	long n;

	CHECK(start_pair(&p, "dpu", RW, 4096, "dpu", DPU_P0) == DOCA_SUCCESS);
	/* the importer's buffers cannot even point outside the imported range */
	CHECK(result(p.im, &n, "READ 1 4000 200") == DOCA_ERROR_UNEXPECTED);
	CHECK(result(p.im, &n, "READ 1 3896 200") == DOCA_SUCCESS && n == 0);
	stop_pair(&p);
}

static void test_withdrawn_export_fails_jobs(void)
{
	struct pair p;
	const char *l;
	long n;
	int st = -1;

	CHECK(start_pair(&p, "dpu", RW, 1 << 16, "dpu", DPU_P0) == DOCA_SUCCESS);
	CHECK(result(p.im, &n, "READ 1 0 4096") == DOCA_SUCCESS);
	th_proc_send(p.ex, "DESTROY");
	CHECK((l = th_proc_line(p.ex)) != NULL && sscanf(l, "DESTROYED %d", &st) == 1 && st == DOCA_SUCCESS);
	CHECK(result(p.im, &n, "READ 1 0 4096") == DOCA_ERROR_NOT_PERMITTED);
	CHECK(result(p.im, &n, "WRITE 1 0 4096") == DOCA_ERROR_NOT_PERMITTED);
	stop_pair(&p);
}

static void test_killed_exporter_fails_jobs(void)
{
	struct pair p;
	long n = 0;
	int r;

	CHECK(start_pair(&p, "dpu", RW, 1 << 20, "dpu", DPU_P0) == DOCA_SUCCESS);
	th_proc_send(p.im, "LOOPREAD");
	CHECK(th_proc_line(p.im) != NULL); /* LOOPING: jobs are running */
	kill(p.ex->pid, SIGKILL);
	/* A dead exporter, not a withdrawn export (docs/ARCHITECTURE.md): CONNECTION_ABORTED, never NOT_PERMITTED. */
	r = result(p.im, &n, "");
	CHECK_ERR(r, DOCA_ERROR_CONNECTION_ABORTED);
	CHECK(n > 0);
	r = result(p.im, &n, "READ 1 0 4096");
	CHECK_ERR(r, DOCA_ERROR_CONNECTION_ABORTED);
	stop_pair(&p);
}

/* Imports desc (hex line) in a fresh DPU importer; returns the import status. */
static int import_line(const char *line, const char *side, const char *pci)
{
	struct th_proc *c = th_proc_start(side, "importer", pci, "4096", NULL);
	const char *l;
	int r = -1;

	if (c == NULL)
		return -1;
	th_proc_send(c, "%s", line);
	l = th_proc_line(c);
	if (l == NULL || sscanf(l, "IMPORT %d", &r) != 1)
		r = -1;
	reap(c);
	return r;
}

static void test_refused_descriptors(void)
{
	struct pair p;
	char *bad;
	size_t len;
	int r;

	CHECK(start_pair(&p, "dpu", RW, 4096, "dpu", DPU_P0) == DOCA_SUCCESS);
	bad = strdup_line(p.desc_line);
	CHECK(bad != NULL);
	th_defer(free, bad);
	len = strlen(bad);
	/* truncated by one byte (two hex digits) */
	bad[len - 2] = '\0';
	CHECK(import_line(bad, "dpu", DPU_P0) == DOCA_ERROR_INVALID_VALUE);
	/* a flipped bit in the capability key: a well-formed forgery fails the checksum first */
	strcpy(bad, p.desc_line);
	bad[5 + 2 * 60] = bad[5 + 2 * 60] == '0' ? '1' : '0';
	CHECK(import_line(bad, "dpu", DPU_P0) == DOCA_ERROR_INVALID_VALUE);
	/* the host side cannot import an export made for the DPU */
	CHECK(import_line(p.desc_line, "host", HOST_PF1) == DOCA_ERROR_NOT_SUPPORTED);
	/* replay after the exporter withdrew the export */
	th_proc_send(p.ex, "DESTROY");
	CHECK(th_proc_line(p.ex) != NULL);
	r = import_line(p.desc_line, "dpu", DPU_P0);
	CHECK(r == DOCA_ERROR_NOT_PERMITTED);
	/* and after the exporter is gone altogether */
	reap(p.ex);
	CHECK(import_line(p.desc_line, "dpu", DPU_P0) == DOCA_ERROR_NOT_PERMITTED);
	stop_pair(&p);
}

static void test_host_to_host_rdma_export(void)
{
	struct pair p;
	long n;

	CHECK(start_pair(&p, "rdma", DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_RDMA_READ | DOCA_ACCESS_RDMA_WRITE,
			 1 << 20, "host", HOST_PF1) == DOCA_SUCCESS);
	CHECK(result(p.im, &n, "READ 1 0 1048576") == DOCA_SUCCESS && n == 0);
	CHECK(result(p.im, &n, "WRITE 5 4096 100000") == DOCA_SUCCESS);
	CHECK(checked(p.ex, 5, 4096, 100000) == 0);
	stop_pair(&p);
}

/*
 * The path to another machine: exporter and importer talk UCX (TCP on
 * loopback), as two machines would; the same programs, the same results.
 */
static void test_same_flows_through_ucx(void)
{
	struct pair p;
	long n = 0;
	int r;

	setenv("SOFTDPU_FABRIC", "ucx", 1);
	setenv("UCX_TLS", "tcp", 1);
	setenv("UCX_NET_DEVICES", "lo", 1);
	r = start_pair(&p, "dpu", RW, 4 << 20, "dpu", DPU_P0);
	unsetenv("SOFTDPU_FABRIC");
	unsetenv("UCX_TLS");
	unsetenv("UCX_NET_DEVICES");
	CHECK(r == DOCA_SUCCESS);
	CHECK(result(p.im, &n, "READ 1 0 4194304") == DOCA_SUCCESS && n == 0);
	CHECK(result(p.im, &n, "WRITE 3 1000 3000000") == DOCA_SUCCESS);
	CHECK(checked(p.ex, 3, 1000, 3000000) == 0);
	th_proc_send(p.im, "LOOPREAD");
	CHECK(th_proc_line(p.im) != NULL);
	kill(p.ex->pid, SIGKILL);
	/* On TCP the closed connection tells at once (docs/fabric_ucx.md): the peer is gone, not late. */
	r = result(p.im, &n, "");
	CHECK_ERR(r, DOCA_ERROR_CONNECTION_ABORTED);
	stop_pair(&p);
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "exporter") == 0 && argc == 6)
		return role_exporter(argv);
	if (argc > 1 && strcmp(argv[1], "importer") == 0 && argc == 4)
		return role_importer(argv);
	signal(SIGPIPE, SIG_IGN);
	RUN(test_dpu_reads_and_writes_host_memory);
	RUN(test_unmovable_memory_through_cma);
	RUN(test_read_only_export_refuses_writes);
	RUN(test_outside_the_export_refused);
	RUN(test_withdrawn_export_fails_jobs);
	RUN(test_killed_exporter_fails_jobs);
	RUN(test_refused_descriptors);
	RUN(test_host_to_host_rdma_export);
	RUN(test_same_flows_through_ucx);
	return th_summary("test_xproc");
}
