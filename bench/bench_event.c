/*
 * bench_event — completion latency of one 64-byte DOCA DMA job, one thread:
 *
 *   event-driven  arm -> submit -> epoll_wait(handle) -> clear -> progress_retrieve
 *   polling       submit -> progress_retrieve
 *   eventfd       write -> epoll_wait -> read: the same three system calls the
 *                 event-driven path needs, without DOCA (the physical reference)
 *   clock         two clock_gettime calls back to back (the timer's own cost)
 *
 * Median and p99 over the iterations (100 k per path by default), in
 * microseconds. The paths alternate in chunks of 1000 iterations.
 *
 * Usage: bench_event [--quick] [--iters N]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_mmap.h>

#include "bench_stats.h"

#define JOB_SIZE 64
#define WARMUP 2000

struct env {
	struct doca_dev *dev;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_dma *dma;
	struct doca_workq *wq_event, *wq_poll;
	struct doca_buf *src, *dst;
	struct doca_dma_job_memcpy job_event, job_poll;
	doca_event_handle_t handle;
	int ep;
	uint8_t mem[8192];
};

static struct env E = { .ep = -1 };

static int one_event(void)
{
	struct epoll_event e;
	struct doca_event ev;

	if (doca_workq_event_handle_arm(E.wq_event) != DOCA_SUCCESS ||
	    doca_workq_submit(E.wq_event, &E.job_event.base) != DOCA_SUCCESS)
		return -1;
	if (epoll_wait(E.ep, &e, 1, -1) != 1)
		return -1;
	if (doca_workq_event_handle_clear(E.wq_event, E.handle) != DOCA_SUCCESS ||
	    doca_workq_progress_retrieve(E.wq_event, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE) != DOCA_SUCCESS)
		return -1;
	return 0;
}

static int one_poll(void)
{
	struct doca_event ev;
	doca_error_t r;

	if (doca_workq_submit(E.wq_poll, &E.job_poll.base) != DOCA_SUCCESS)
		return -1;
	while ((r = doca_workq_progress_retrieve(E.wq_poll, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) == DOCA_ERROR_AGAIN)
		;
	return r == DOCA_SUCCESS ? 0 : -1;
}

static int efd_ref = -1, ep_ref = -1;

static int one_eventfd(void)
{
	uint64_t one = 1, cnt;
	struct epoll_event e;

	if (write(efd_ref, &one, sizeof(one)) != sizeof(one))
		return -1;
	if (epoll_wait(ep_ref, &e, 1, -1) != 1)
		return -1;
	if (read(efd_ref, &cnt, sizeof(cnt)) != sizeof(cnt))
		return -1;
	return 0;
}

static int one_nothing(void)
{
	return 0;
}

#define NPATHS 4
#define CHUNK 1000 /* the paths alternate in chunks, so all see the machine in the same state */

/* Times n calls of each path (after a warm-up), alternating paths chunk by chunk. */
static int measure_all(int (*const fn[NPATHS])(void), uint64_t *ns[NPATHS], uint32_t n, struct stats out[NPATHS])
{
	for (int p = 0; p < NPATHS; p++)
		for (uint32_t i = 0; i < WARMUP; i++) {
			if (fn[p]() != 0)
				return -1;
			doca_buf_reset_data_len(E.dst);
		}
	for (uint32_t base = 0; base < n; base += CHUNK) {
		uint32_t end = base + CHUNK < n ? base + CHUNK : n;

		for (int p = 0; p < NPATHS; p++)
			for (uint32_t i = base; i < end; i++) {
				uint64_t t0 = now_ns(), t1;

				if (fn[p]() != 0)
					return -1;
				t1 = now_ns();
				doca_buf_reset_data_len(E.dst); /* outside the timed part */
				ns[p][i] = t1 - t0;
			}
	}
	for (int p = 0; p < NPATHS; p++)
		out[p] = summarize(ns[p], n);
	return 0;
}

static int setup(void)
{
	struct doca_devinfo **list = NULL;
	struct epoll_event e = { .events = EPOLLIN };
	struct doca_ctx *ctx;
	uint32_t n = 0;
	doca_error_t r;

	if (doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS || n == 0)
		return -1;
	r = doca_dev_open(list[0], &E.dev);
	doca_devinfo_list_destroy(list);
	if (r != DOCA_SUCCESS)
		return -1;
	memset(E.mem, 0x5a, JOB_SIZE);
	if (doca_mmap_create(NULL, &E.mmap) != DOCA_SUCCESS || doca_mmap_dev_add(E.mmap, E.dev) != DOCA_SUCCESS ||
	    doca_mmap_set_memrange(E.mmap, E.mem, sizeof(E.mem)) != DOCA_SUCCESS ||
	    doca_mmap_set_permissions(E.mmap, DOCA_ACCESS_LOCAL_READ_WRITE) != DOCA_SUCCESS ||
	    doca_mmap_start(E.mmap) != DOCA_SUCCESS)
		return -1;
	if (doca_buf_inventory_create(NULL, 4, 0, &E.inv) != DOCA_SUCCESS ||
	    doca_buf_inventory_start(E.inv) != DOCA_SUCCESS ||
	    doca_buf_inventory_buf_by_data(E.inv, E.mmap, E.mem, JOB_SIZE, &E.src) != DOCA_SUCCESS ||
	    doca_buf_inventory_buf_by_addr(E.inv, E.mmap, E.mem + 4096, JOB_SIZE, &E.dst) != DOCA_SUCCESS)
		return -1;
	if (doca_dma_create(&E.dma) != DOCA_SUCCESS)
		return -1;
	ctx = doca_dma_as_ctx(E.dma);
	if (doca_ctx_dev_add(ctx, E.dev) != DOCA_SUCCESS || doca_ctx_start(ctx) != DOCA_SUCCESS)
		return -1;
	if (doca_workq_create(8, &E.wq_event) != DOCA_SUCCESS ||
	    doca_workq_set_event_driven_enable(E.wq_event, 1) != DOCA_SUCCESS ||
	    doca_ctx_workq_add(ctx, E.wq_event) != DOCA_SUCCESS ||
	    doca_workq_get_event_handle(E.wq_event, &E.handle) != DOCA_SUCCESS)
		return -1;
	if (doca_workq_create(8, &E.wq_poll) != DOCA_SUCCESS || doca_ctx_workq_add(ctx, E.wq_poll) != DOCA_SUCCESS)
		return -1;
	E.ep = epoll_create1(EPOLL_CLOEXEC);
	if (E.ep < 0 || epoll_ctl(E.ep, EPOLL_CTL_ADD, E.handle, &e) != 0)
		return -1;
	E.job_event = (struct doca_dma_job_memcpy){
		.base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = ctx }, .dst_buff = E.dst, .src_buff = E.src };
	E.job_poll = E.job_event;
	efd_ref = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ep_ref = epoll_create1(EPOLL_CLOEXEC);
	if (efd_ref < 0 || ep_ref < 0 || epoll_ctl(ep_ref, EPOLL_CTL_ADD, efd_ref, &e) != 0)
		return -1;
	return 0;
}

static void teardown(void)
{
	struct doca_ctx *ctx = E.dma != NULL ? doca_dma_as_ctx(E.dma) : NULL;

	if (E.ep >= 0)
		close(E.ep);
	if (efd_ref >= 0)
		close(efd_ref);
	if (ep_ref >= 0)
		close(ep_ref);
	if (E.wq_event != NULL) {
		doca_ctx_workq_rm(ctx, E.wq_event);
		doca_workq_destroy(E.wq_event);
	}
	if (E.wq_poll != NULL) {
		doca_ctx_workq_rm(ctx, E.wq_poll);
		doca_workq_destroy(E.wq_poll);
	}
	if (ctx != NULL) {
		doca_ctx_stop(ctx);
		doca_ctx_dev_rm(ctx, E.dev);
		doca_dma_destroy(E.dma);
	}
	if (E.src != NULL)
		doca_buf_refcount_rm(E.src, NULL);
	if (E.dst != NULL)
		doca_buf_refcount_rm(E.dst, NULL);
	if (E.inv != NULL) {
		doca_buf_inventory_stop(E.inv);
		doca_buf_inventory_destroy(E.inv);
	}
	if (E.mmap != NULL)
		doca_mmap_destroy(E.mmap);
	if (E.dev != NULL)
		doca_dev_close(E.dev);
}

int main(int argc, char **argv)
{
	uint32_t iters = 100000;
	int (*const fn[NPATHS])(void) = { one_event, one_poll, one_eventfd, one_nothing };
	uint64_t *ns[NPATHS] = { NULL };
	struct stats st[NPATHS], ev, poll, efd, clk;
	int rc = 1;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0) {
			iters = 2000;
		} else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
			iters = (uint32_t)strtoul(argv[++i], NULL, 10);
		} else {
			fprintf(stderr, "usage: %s [--quick] [--iters N]\n", argv[0]);
			return 2;
		}
	}
	if (iters < 100)
		iters = 100;
	for (int p = 0; p < NPATHS; p++) {
		ns[p] = calloc(iters, sizeof(uint64_t));
		if (ns[p] == NULL)
			goto out;
	}
	if (setup() != 0) {
		fprintf(stderr, "bench_event: setup failed\n");
		goto out;
	}
	if (measure_all(fn, ns, iters, st) != 0) {
		fprintf(stderr, "bench_event: a measured operation failed\n");
		goto out;
	}
	ev = st[0];
	poll = st[1];
	efd = st[2];
	clk = st[3];
	if (memcmp(E.mem, E.mem + 4096, JOB_SIZE) != 0) {
		fprintf(stderr, "bench_event: copy not verified\n");
		goto out;
	}
	printf("== bench_event: completion latency of one %d B DMA job, one thread, %u iterations ==\n", JOB_SIZE,
	       iters);
	printf("%-58s %10s %10s %12s\n", "path", "median us", "p99 us", "median/efd");
	printf("%-58s %10.3f %10.3f %11.2fx\n", "DOCA event-driven: arm+submit+epoll_wait+clear+retrieve",
	       ev.median_us, ev.p99_us, ev.median_us / efd.median_us);
	printf("%-58s %10.3f %10.3f %11.2fx\n", "DOCA polling: submit+progress_retrieve", poll.median_us,
	       poll.p99_us, poll.median_us / efd.median_us);
	printf("%-58s %10.3f %10.3f %11.2fx\n", "reference: eventfd write+epoll_wait+read", efd.median_us,
	       efd.p99_us, 1.0);
	printf("%-58s %10.3f %10.3f %11.2fx\n", "timer: clock_gettime pair (included in every row)", clk.median_us,
	       clk.p99_us, clk.median_us / efd.median_us);
	printf("event-driven overhead over the system-call floor: %+.3f us (median); paths alternate in chunks of %d\n",
	       ev.median_us - efd.median_us, CHUNK);
	rc = 0;
out:
	teardown();
	for (int p = 0; p < NPATHS; p++)
		free(ns[p]);
	return rc;
}
