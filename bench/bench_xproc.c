/*
 * bench_xproc — cross-process DMA bandwidth: a DPU process reads and writes
 * memory a host process exported, through DOCA DMA jobs, side by side with
 * memcpy of the same sizes (the limit of one core) and with UCX's own get/put
 * bandwidth between two processes on this machine (ucx_perftest), all in one
 * run.
 *
 * The benchmark process is the host: it exports a region and re-executes
 * itself as the DPU-side importer (SOFTDPU_SIDE=dpu), which measures and
 * prints one line per size; the UCX peer runs right before each size.
 *
 * Usage: bench_xproc [--quick] [--fabric cma|ucx] [--no-peer]
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_mmap.h>

#define REGION (64u << 20)
#define WINDOWS 3

static const size_t full_sizes[] = { 4096, 65536, 1u << 20, 4u << 20, 16u << 20, 64u << 20 };
static const size_t quick_sizes[] = { 4096, 1u << 20 };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct doca_dev *open_first(void)
{
	struct doca_devinfo **list;
	struct doca_dev *dev = NULL;
	uint32_t n;

	if (doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS || n == 0)
		return NULL;
	doca_dev_open(list[0], &dev);
	doca_devinfo_list_destroy(list);
	return dev;
}

static struct doca_mmap *local_mmap(struct doca_dev *dev, void *mem, size_t len, uint32_t perm)
{
	struct doca_mmap *m = NULL;

	if (doca_mmap_create(NULL, &m) != DOCA_SUCCESS)
		return NULL;
	if (doca_mmap_dev_add(m, dev) != DOCA_SUCCESS || doca_mmap_set_memrange(m, mem, len) != DOCA_SUCCESS ||
	    doca_mmap_set_permissions(m, perm) != DOCA_SUCCESS || doca_mmap_start(m) != DOCA_SUCCESS) {
		doca_mmap_destroy(m);
		return NULL;
	}
	return m;
}

/* ---- importer (DPU side) ---- */

struct imp {
	struct doca_dev *dev;
	struct doca_mmap *remote, *local;
	uint8_t *buf;
	uint64_t raddr;
	struct doca_buf_inventory *inv;
	struct doca_dma *dma;
	struct doca_workq *wq;
};

static int imp_setup(struct imp *im, const uint8_t *desc, size_t dlen)
{
	void *ra;
	size_t rl;

	im->dev = open_first();
	im->buf = aligned_alloc(4096, REGION);
	if (im->dev == NULL || im->buf == NULL)
		return -1;
	memset(im->buf, 1, REGION);
	im->local = local_mmap(im->dev, im->buf, REGION, DOCA_ACCESS_LOCAL_READ_WRITE);
	if (im->local == NULL || doca_mmap_create_from_export(NULL, desc, dlen, im->dev, &im->remote) != DOCA_SUCCESS ||
	    doca_mmap_get_memrange(im->remote, &ra, &rl) != DOCA_SUCCESS)
		return -1;
	im->raddr = (uint64_t)(uintptr_t)ra;
	if (doca_buf_inventory_create(NULL, 4, 0, &im->inv) != DOCA_SUCCESS || doca_buf_inventory_start(im->inv) ||
	    doca_dma_create(&im->dma) != DOCA_SUCCESS || doca_ctx_dev_add(doca_dma_as_ctx(im->dma), im->dev) ||
	    doca_ctx_start(doca_dma_as_ctx(im->dma)) || doca_workq_create(4, &im->wq) ||
	    doca_ctx_workq_add(doca_dma_as_ctx(im->dma), im->wq))
		return -1;
	return 0;
}

/* One job moving size bytes; true on success. */
static bool one_job(struct imp *im, size_t size, bool write)
{
	struct doca_buf *r, *l;
	struct doca_event ev;
	doca_error_t st;

	if (doca_buf_inventory_buf_by_addr(im->inv, im->remote, (void *)(uintptr_t)im->raddr, size, &r) ||
	    doca_buf_inventory_buf_by_addr(im->inv, im->local, im->buf, size, &l))
		return false;
	if (write)
		doca_buf_set_data(l, im->buf, size);
	else
		doca_buf_set_data(r, (void *)(uintptr_t)im->raddr, size);
	struct doca_dma_job_memcpy job = { .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = doca_dma_as_ctx(im->dma) },
					   .dst_buff = write ? r : l, .src_buff = write ? l : r };
	st = doca_workq_submit(im->wq, &job.base);
	while (st == DOCA_SUCCESS && (st = doca_workq_progress_retrieve(im->wq, &ev, 0)) == DOCA_ERROR_AGAIN)
		;
	doca_buf_refcount_rm(r, NULL);
	doca_buf_refcount_rm(l, NULL);
	return st == DOCA_SUCCESS;
}

/* Best window's bandwidth in GB/s; kind 0 read, 1 write, 2 local memcpy. */
static double measure(struct imp *im, size_t size, int kind, double tmin)
{
	static uint8_t *mirror;
	double best = 0;

	if (kind == 2 && mirror == NULL) {
		mirror = aligned_alloc(4096, REGION);
		memset(mirror, 2, REGION);
	}
	for (int w = 0; w < WINDOWS; w++) {
		double t0 = now(), t;
		long n = 0;

		do {
			if (kind == 2)
				memcpy(im->buf, mirror, size);
			else if (!one_job(im, size, kind == 1))
				return -1;
			n++;
			t = now() - t0;
		} while (t < tmin / WINDOWS);
		if ((double)n * (double)size / t / 1e9 > best)
			best = (double)n * (double)size / t / 1e9;
	}
	return best;
}

static int role_importer(int argc, char **argv)
{
	static uint8_t desc[4096];
	bool quick = argc > 3 && strcmp(argv[3], "--quick") == 0;
	const size_t *sizes = quick ? quick_sizes : full_sizes;
	size_t nsizes = quick ? 2 : sizeof(full_sizes) / sizeof(full_sizes[0]);
	size_t dlen = 0;
	unsigned v;
	struct imp im = { 0 };

	while (dlen < sizeof(desc) && sscanf(argv[2] + 2 * dlen, "%2x", &v) == 1)
		desc[dlen++] = (uint8_t)v;
	if (imp_setup(&im, desc, dlen) != 0) {
		printf("importer setup failed\n");
		return 1;
	}
	for (size_t i = 0; i < nsizes; i++) {
		size_t s = sizes[i];
		double tmin = quick ? 0.03 : 0.3;

		printf("R %zu %.3f %.3f %.3f\n", s, measure(&im, s, 0, tmin), measure(&im, s, 1, tmin),
		       measure(&im, s, 2, tmin));
		fflush(stdout);
	}
	return 0;
}

/* ---- host side: exporter and driver ---- */

/* ucx_perftest between two processes; GB/s or < 0 when unavailable. */
static double ucx_peer(const char *test, size_t size, bool quick)
{
	char cmd[512], line[512];
	double mbs = -1, a, b, c, d, e;
	long it;
	FILE *p;
	int port = 20000 + (int)(getpid() % 20000);
	long iters = quick ? 20 : (long)(2e9 / (double)size) + 10;

	snprintf(cmd, sizeof(cmd),
		 "(ucx_perftest -p %d >/dev/null 2>&1 &); sleep 0.3; "
		 "timeout 60 ucx_perftest 127.0.0.1 -p %d -t %s -s %zu -n %ld -w 3 -f 2>/dev/null",
		 port, port, test, size, iters);
	p = popen(cmd, "r");
	if (p == NULL)
		return -1;
	while (fgets(line, sizeof(line), p) != NULL)
		if (sscanf(line, " %ld %lf %lf %lf %lf %lf", &it, &a, &b, &c, &d, &e) == 6)
			mbs = e;
	pclose(p);
	return mbs < 0 ? -1 : mbs * 1048576.0 / 1e9;
}

#define NMAX (sizeof(full_sizes) / sizeof(full_sizes[0]))

static double peer_get[NMAX], peer_put[NMAX];

/* The UCX peer runs first, alone, for every size, so it never competes with the DOCA case. */
static void run_peer(bool peer, bool quick)
{
	const size_t *sizes = quick ? quick_sizes : full_sizes;
	size_t n = quick ? 2 : NMAX;

	for (size_t i = 0; i < NMAX; i++)
		peer_get[i] = peer_put[i] = -1;
	for (size_t i = 0; peer && i < n; i++) {
		peer_get[i] = ucx_peer("ucp_get", sizes[i], quick);
		peer_put[i] = ucx_peer("ucp_put_bw", sizes[i], quick);
	}
}

static void print_row(const char *line, size_t row)
{
	size_t s;
	double rd, wr, mc, ug = -1, up = -1;

	if (sscanf(line, "R %zu %lf %lf %lf", &s, &rd, &wr, &mc) != 4) {
		fputs(line, stdout);
		return;
	}
	if (row < NMAX) {
		ug = peer_get[row];
		up = peer_put[row];
	}
	if (ug > 0 && up > 0)
		printf("%8zu KiB %9.2f %9.2f %9.2f %7.0f%% %9.2f %9.2f %7.0f%% %7.0f%%\n", s >> 10, rd, wr, mc,
		       100 * (rd > wr ? wr : rd) / mc, ug, up, 100 * rd / ug, 100 * wr / up);
	else
		printf("%8zu KiB %9.2f %9.2f %9.2f %7.0f%% %9s %9s %8s %8s\n", s >> 10, rd, wr, mc,
		       100 * (rd > wr ? wr : rd) / mc, "n/a", "n/a", "-", "-");
	fflush(stdout);
}

int main(int argc, char **argv)
{
	bool quick = false, peer = true;
	const char *fabric = "cma";
	struct doca_dev *dev;
	struct doca_mmap *m;
	const void *desc;
	size_t dlen;
	uint8_t *mem;
	char *hex, line[512];
	FILE *child;

	if (argc > 2 && strcmp(argv[1], "importer") == 0)
		return role_importer(argc, argv);
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			quick = true;
		else if (strcmp(argv[i], "--no-peer") == 0)
			peer = false;
		else if (strcmp(argv[i], "--fabric") == 0 && i + 1 < argc)
			fabric = argv[++i];
	}
	setenv("SOFTDPU_FABRIC", fabric, 1);
	dev = open_first();
	mem = aligned_alloc(4096, REGION);
	if (dev == NULL || mem == NULL)
		return 1;
	memset(mem, 3, REGION);
	m = local_mmap(dev, mem, REGION, DOCA_ACCESS_LOCAL_READ_WRITE | DOCA_ACCESS_DPU_READ_WRITE);
	if (m == NULL || doca_mmap_export_dpu(m, dev, &desc, &dlen) != DOCA_SUCCESS)
		return 1;
	hex = malloc(2 * dlen + 64);
	for (size_t i = 0; i < dlen; i++)
		sprintf(hex + 2 * i, "%02x", ((const uint8_t *)desc)[i]);
	snprintf(line, sizeof(line), "SOFTDPU_SIDE=dpu /proc/%d/exe importer ", (int)getpid());
	{
		size_t cl = strlen(line) + strlen(hex) + 16;
		char *cmd = malloc(cl);

		snprintf(cmd, cl, "%s%s%s", line, hex, quick ? " --quick" : "");
		run_peer(peer, quick);
		printf("== bench_xproc: DPU process reads/writes host memory through DOCA DMA (fabric: %s) ==\n", fabric);
		printf("%12s %9s %9s %9s %8s %9s %9s %8s %8s\n", "size", "read GB/s", "write GB/s", "memcpy", "min/mcp",
		       "UCX get", "UCX put", "rd/get", "wr/put");
		child = popen(cmd, "r");
		free(cmd);
	}
	for (size_t row = 0; child != NULL && fgets(line, sizeof(line), child) != NULL; row++)
		print_row(line, row);
	if (child != NULL)
		pclose(child);
	printf("read: DMA job remote->local; write: local->remote; one job at a time, best of %d windows;\n"
	       "memcpy: the same size within one process; UCX: ucx_perftest ucp_get / ucp_put_bw between two\n"
	       "processes on this machine (transports of UCX's choice), run first, alone.\n",
	       WINDOWS);
	doca_mmap_destroy(m);
	doca_dev_close(dev);
	free(mem);
	free(hex);
	return 0;
}
