/*
 * softdpu demo: lists the emulated devices of this side, then moves data with
 * DOCA DMA memcpy jobs of several sizes, checks every byte and prints the
 * throughput. Written against the plain DOCA 2.x API only.
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime in strict C11 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_log.h>
#include <doca_mmap.h>
#include <doca_version.h>

DOCA_LOG_REGISTER(SOFTDPU_DEMO);

#define MAX_SIZE (16u << 20)
#define DEPTH 32

struct demo {
	struct doca_dev *dev;
	uint8_t *src, *dst;
	struct doca_mmap *src_mmap, *dst_mmap;
	struct doca_buf_inventory *inv;
	struct doca_dma *dma;
	struct doca_workq *wq;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void list_devices(struct doca_devinfo **list, uint32_t n)
{
	printf("%-4s %-14s %-8s %-14s %-18s %s\n", "#", "PCI", "ibdev", "interface", "MAC", "IPv4");
	for (uint32_t i = 0; i < n; i++) {
		char pci[DOCA_DEVINFO_PCI_ADDR_SIZE] = "", ib[DOCA_DEVINFO_IBDEV_NAME_SIZE] = "";
		char ifc[DOCA_DEVINFO_IFACE_NAME_SIZE] = "";
		uint8_t mac[DOCA_DEVINFO_MAC_ADDR_SIZE] = { 0 }, ip[DOCA_DEVINFO_IPV4_ADDR_SIZE] = { 0 };

		doca_devinfo_get_pci_addr_str(list[i], pci);
		doca_devinfo_get_ibdev_name(list[i], ib, sizeof(ib));
		doca_devinfo_get_iface_name(list[i], ifc, sizeof(ifc));
		doca_devinfo_get_mac_addr(list[i], mac, sizeof(mac));
		doca_devinfo_get_ipv4_addr(list[i], ip, sizeof(ip));
		printf("%-4u %-14s %-8s %-14s %02x:%02x:%02x:%02x:%02x:%02x  %u.%u.%u.%u\n", i, pci, ib, ifc, mac[0],
		       mac[1], mac[2], mac[3], mac[4], mac[5], ip[0], ip[1], ip[2], ip[3]);
	}
}

static struct doca_mmap *make_mmap(struct doca_dev *dev, void *mem, size_t len)
{
	struct doca_mmap *m = NULL;

	if (doca_mmap_create(NULL, &m) != DOCA_SUCCESS)
		return NULL;
	if (doca_mmap_dev_add(m, dev) != DOCA_SUCCESS || doca_mmap_set_memrange(m, mem, len) != DOCA_SUCCESS ||
	    doca_mmap_set_permissions(m, DOCA_ACCESS_LOCAL_READ_WRITE) != DOCA_SUCCESS ||
	    doca_mmap_start(m) != DOCA_SUCCESS) {
		doca_mmap_destroy(m);
		return NULL;
	}
	return m;
}

static doca_error_t setup(struct demo *d, struct doca_devinfo *info)
{
	doca_error_t r = doca_dev_open(info, &d->dev);

	if (r != DOCA_SUCCESS)
		return r;
	d->src = aligned_alloc(4096, MAX_SIZE);
	d->dst = aligned_alloc(4096, MAX_SIZE);
	if (d->src == NULL || d->dst == NULL)
		return DOCA_ERROR_NO_MEMORY;
	d->src_mmap = make_mmap(d->dev, d->src, MAX_SIZE);
	d->dst_mmap = make_mmap(d->dev, d->dst, MAX_SIZE);
	if (d->src_mmap == NULL || d->dst_mmap == NULL)
		return DOCA_ERROR_INITIALIZATION;
	r = doca_buf_inventory_create(NULL, 2 * DEPTH, 0, &d->inv);
	if (r == DOCA_SUCCESS)
		r = doca_buf_inventory_start(d->inv);
	if (r == DOCA_SUCCESS)
		r = doca_dma_create(&d->dma);
	if (r == DOCA_SUCCESS)
		r = doca_ctx_dev_add(doca_dma_as_ctx(d->dma), d->dev);
	if (r == DOCA_SUCCESS)
		r = doca_ctx_start(doca_dma_as_ctx(d->dma));
	if (r == DOCA_SUCCESS)
		r = doca_workq_create(DEPTH, &d->wq);
	if (r == DOCA_SUCCESS)
		r = doca_ctx_workq_add(doca_dma_as_ctx(d->dma), d->wq);
	return r;
}

static void teardown(struct demo *d)
{
	if (d->wq != NULL) {
		doca_ctx_workq_rm(doca_dma_as_ctx(d->dma), d->wq);
		doca_workq_destroy(d->wq);
	}
	if (d->dma != NULL) {
		doca_ctx_stop(doca_dma_as_ctx(d->dma));
		doca_ctx_dev_rm(doca_dma_as_ctx(d->dma), d->dev);
		doca_dma_destroy(d->dma);
	}
	if (d->inv != NULL) {
		doca_buf_inventory_stop(d->inv);
		doca_buf_inventory_destroy(d->inv);
	}
	if (d->src_mmap != NULL)
		doca_mmap_destroy(d->src_mmap);
	if (d->dst_mmap != NULL)
		doca_mmap_destroy(d->dst_mmap);
	if (d->dev != NULL)
		doca_dev_close(d->dev);
	free(d->src);
	free(d->dst);
}

/* Submits the job of slot s copying [off, off + size) from src to dst. */
static doca_error_t submit_slot(struct demo *d, struct doca_dma_job_memcpy *job, struct doca_buf **bufs, uint32_t s,
				size_t off, size_t size)
{
	doca_error_t r;

	r = doca_buf_inventory_buf_by_data(d->inv, d->src_mmap, d->src + off, size, &bufs[0]);
	if (r != DOCA_SUCCESS)
		return r;
	r = doca_buf_inventory_buf_by_addr(d->inv, d->dst_mmap, d->dst + off, size, &bufs[1]);
	if (r != DOCA_SUCCESS)
		return r;
	*job = (struct doca_dma_job_memcpy){
		.base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = doca_dma_as_ctx(d->dma), .user_data.u64 = s },
		.dst_buff = bufs[1], .src_buff = bufs[0] };
	return doca_workq_submit(d->wq, &job->base);
}

/* Copies the whole source in jobs of `size` bytes, DEPTH in flight; returns seconds, or < 0 on error. */
static double copy_all(struct demo *d, size_t size)
{
	struct doca_dma_job_memcpy jobs[DEPTH];
	struct doca_buf *bufs[DEPTH][2];
	uint32_t total = MAX_SIZE / size, submitted = 0, done = 0, free_slot[DEPTH], nfree = DEPTH;
	double t0 = now();

	for (uint32_t s = 0; s < DEPTH; s++)
		free_slot[s] = DEPTH - 1 - s;
	while (done < total) {
		while (submitted < total && nfree > 0) {
			uint32_t s = free_slot[--nfree];

			if (submit_slot(d, &jobs[s], bufs[s], s, (size_t)submitted * size, size) != DOCA_SUCCESS)
				return -1;
			submitted++;
		}
		struct doca_event ev;
		doca_error_t r = doca_workq_progress_retrieve(d->wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE);

		if (r == DOCA_ERROR_AGAIN)
			continue;
		if (r != DOCA_SUCCESS) {
			DOCA_LOG_ERR("DMA job failed: %s", doca_get_error_string((doca_error_t)ev.result.u64));
			return -1;
		}
		doca_buf_refcount_rm(bufs[ev.user_data.u64][0], NULL);
		doca_buf_refcount_rm(bufs[ev.user_data.u64][1], NULL);
		free_slot[nfree++] = (uint32_t)ev.user_data.u64;
		done++;
	}
	return now() - t0;
}

static int run_sizes(struct demo *d)
{
	static const size_t sizes[] = { 64, 512, 4096, 65536, 1u << 20, 16u << 20 };

	printf("\n%-10s %-8s %-12s %-10s %s\n", "job size", "jobs", "MiB/s", "Mjobs/s", "verified");
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		uint32_t seed = (uint32_t)(i * 2654435761u);

		for (size_t k = 0; k < MAX_SIZE; k++) {
			seed = seed * 1103515245u + 12345u;
			d->src[k] = (uint8_t)(seed >> 16);
		}
		memset(d->dst, 0, MAX_SIZE);
		double t = copy_all(d, sizes[i]);
		int ok = t > 0 && memcmp(d->src, d->dst, MAX_SIZE) == 0;

		printf("%-10zu %-8zu %-12.0f %-10.2f %s\n", sizes[i], MAX_SIZE / sizes[i],
		       t > 0 ? MAX_SIZE / t / (1 << 20) : 0.0, t > 0 ? MAX_SIZE / sizes[i] / t / 1e6 : 0.0,
		       ok ? "all bytes equal" : "MISMATCH");
		if (!ok)
			return -1;
	}
	return 0;
}

int main(void)
{
	struct doca_devinfo **list = NULL;
	struct demo d = { 0 };
	uint32_t n = 0;
	int rc = 1;

	if (doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS || n == 0) {
		DOCA_LOG_ERR("no emulated device found");
		return 1;
	}
	printf("softdpu %s — emulated devices on this side (%s):\n", doca_version_runtime(),
	       getenv("SOFTDPU_SIDE") ? getenv("SOFTDPU_SIDE") : "host");
	list_devices(list, n);
	if (setup(&d, list[0]) != DOCA_SUCCESS) {
		DOCA_LOG_ERR("DMA setup failed");
		goto out;
	}
	printf("\nDOCA DMA memcpy on device 0, %u jobs in flight, %u MiB per size:", DEPTH, MAX_SIZE >> 20);
	rc = run_sizes(&d) == 0 ? 0 : 1;
	printf(rc == 0 ? "\ndemo: OK\n" : "\ndemo: FAILED\n");
out:
	teardown(&d);
	doca_devinfo_list_destroy(list);
	return rc;
}
