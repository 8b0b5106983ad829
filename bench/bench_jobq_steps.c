/*
 * bench_jobq_steps — where the nanoseconds of a 64 B DOCA DMA job go.
 *
 * The whole: doca_workq_submit + doca_workq_progress_retrieve (+ the
 * doca_buf_reset_data_len that lets a destination be reused) for 64 B jobs
 * at depth 32 over 32 buffer pairs, as bench_dma --size 64 --depth 32 runs
 * them. Then each step of that path alone, over batches of 32 jobs on the
 * same buffers, on an engine queue and CQ of its own (same domain, same
 * keys):
 *
 *   wqe      hw_jobq_post_dma1: the WQE written to the ring (template ctrl
 *            segment, eight 8-byte stores), room check
 *   parse    the doorbell's look at the ring and hw_jobq_parse_dma1 (the
 *            WQE checked and decoded as the engine does for a WQE it
 *            fetches from the ring)
 *   exec     hw_jobq_exec_dma1: keys through the cache, domain, bounds,
 *            rights, overlap, the 64-byte copy
 *   cqe      hw_cq_sp_push_req: the 64-byte CQE with its owner bit
 *   submit   doca_workq_submit alone (it contains the four steps above,
 *            plus the API's checks, the job's buffers to segments, the
 *            work-queue entry and the data length from the CQE)
 *   retrieve doca_workq_progress_retrieve alone (entry, CQE by owner bit,
 *            consumer index, event)
 *   bf       hw_jobq_post_bf_dma1: what a DOCA submit runs of the engine,
 *            WQE write, BlueFlame doorbell (the decode of the carried
 *            block, folded with the write), execution and CQE together
 *
 * Each figure is the best of several windows (other work on a shared machine
 * only ever adds time), in ns per job, with the clock's own cost per batch
 * taken out. The submit's own part is submit minus the four engine steps;
 * the loop's part is the whole minus submit and retrieve.
 *
 * Usage: bench_jobq_steps [--time SECONDS] (per step, default 0.5)
 */
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
#include <doca_mmap.h>

#include "dc_core.h"
#include "dc_dev.h"
#include "hw_jobq.h"

#define NJOBS 32 /* jobs in flight, buffer pairs, and the batch of a step */
#define SIZE 64
#define WINDOWS 7

struct steps {
	struct doca_dev *dev;
	struct doca_mmap *src_mmap, *dst_mmap;
	struct doca_buf_inventory *inv;
	struct doca_dma *dma;
	struct doca_workq *wq;
	uint8_t *src, *dst;
	struct doca_buf *sb[NJOBS], *db[NJOBS];
	struct doca_dma_job_memcpy jobs[NJOBS];
	/* The engine queue of the step loops. */
	struct hw_cq *cq;
	struct hw_jobq *q;
	struct hw_sge s[NJOBS], d[NJOBS];
	struct hw_jobq_dma1 j[NJOBS];
	double tmin;
	double clock_ns; /* one clock read */
	volatile uint64_t sink;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_jobq_steps: %s failed\n", what);
	exit(1);
}

static struct doca_mmap *make_mmap(struct doca_dev *dev, void *mem, size_t len)
{
	struct doca_mmap *m = NULL;

	if (doca_mmap_create(NULL, &m) != DOCA_SUCCESS || doca_mmap_dev_add(m, dev) != DOCA_SUCCESS ||
	    doca_mmap_set_memrange(m, mem, len) != DOCA_SUCCESS ||
	    doca_mmap_set_permissions(m, DOCA_ACCESS_LOCAL_READ_WRITE) != DOCA_SUCCESS || doca_mmap_start(m) != DOCA_SUCCESS)
		die("mmap");
	return m;
}

static void doca_setup(struct steps *b)
{
	struct doca_devinfo **list = NULL;
	uint32_t n = 0;

	if (doca_devinfo_list_create(&list, &n) != DOCA_SUCCESS || n == 0 || doca_dev_open(list[0], &b->dev) != DOCA_SUCCESS)
		die("device open");
	doca_devinfo_list_destroy(list);
	b->src = aligned_alloc(4096, NJOBS * SIZE);
	b->dst = aligned_alloc(4096, NJOBS * SIZE);
	if (b->src == NULL || b->dst == NULL)
		die("allocation");
	memset(b->src, 0x5a, NJOBS * SIZE);
	memset(b->dst, 0, NJOBS * SIZE);
	b->src_mmap = make_mmap(b->dev, b->src, NJOBS * SIZE);
	b->dst_mmap = make_mmap(b->dev, b->dst, NJOBS * SIZE);
	if (doca_buf_inventory_create(NULL, 2 * NJOBS, 0, &b->inv) != DOCA_SUCCESS ||
	    doca_buf_inventory_start(b->inv) != DOCA_SUCCESS || doca_dma_create(&b->dma) != DOCA_SUCCESS ||
	    doca_ctx_dev_add(doca_dma_as_ctx(b->dma), b->dev) != DOCA_SUCCESS ||
	    doca_ctx_start(doca_dma_as_ctx(b->dma)) != DOCA_SUCCESS || doca_workq_create(NJOBS, &b->wq) != DOCA_SUCCESS ||
	    doca_ctx_workq_add(doca_dma_as_ctx(b->dma), b->wq) != DOCA_SUCCESS)
		die("DOCA setup");
	for (uint32_t k = 0; k < NJOBS; k++) {
		if (doca_buf_inventory_buf_by_data(b->inv, b->src_mmap, b->src + k * SIZE, SIZE, &b->sb[k]) != DOCA_SUCCESS ||
		    doca_buf_inventory_buf_by_addr(b->inv, b->dst_mmap, b->dst + k * SIZE, SIZE, &b->db[k]) != DOCA_SUCCESS)
			die("buffers");
		b->jobs[k] = (struct doca_dma_job_memcpy){
			.base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = doca_dma_as_ctx(b->dma), .user_data.u64 = k },
			.dst_buff = b->db[k],
			.src_buff = b->sb[k],
		};
	}
}

/* An engine queue and CQ of the steps' own, in the DMA context's domain, with the mmaps' keys. */
static void engine_setup(struct steps *b)
{
	struct hw_cq_attr ca = { .log_size = 6 };
	struct hw_jobq_attr qa = { .pd_id = hw_pd_id(dc_dev_pd(b->dev)), .qpn = 1 };
	const struct dc_mmap_dev *sm = dc_mmap_dev_of(b->src_mmap, b->dev), *dm = dc_mmap_dev_of(b->dst_mmap, b->dev);

	if (hw_cq_create(&ca, &b->cq) != HW_OK)
		die("CQ");
	qa.cq = b->cq;
	if (hw_jobq_create(&qa, &b->q) != HW_OK)
		die("engine queue");
	for (uint32_t k = 0; k < NJOBS; k++) {
		b->s[k] = (struct hw_sge){ .key = sm->mkey, .access = b->src_mmap->rd_access,
					   .addr = (uint64_t)(uintptr_t)(b->src + k * SIZE), .len = SIZE };
		b->d[k] = (struct hw_sge){ .key = dm->mkey, .access = b->dst_mmap->wr_access,
					   .addr = (uint64_t)(uintptr_t)(b->dst + k * SIZE), .len = SIZE };
	}
}

/* ---- the loops: each returns the seconds of its batch (or of n jobs for the whole) ---- */

static double run_whole(struct steps *b)
{
	struct doca_event ev;
	double t0 = now();

	for (uint32_t k = 0; k < NJOBS; k++)
		if (doca_workq_submit(b->wq, &b->jobs[k].base) != DOCA_SUCCESS)
			die("submit");
	for (uint32_t k = 0; k < NJOBS; k++) {
		if (doca_workq_progress_retrieve(b->wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE) != DOCA_SUCCESS)
			die("retrieve");
		doca_buf_reset_data_len(b->db[ev.user_data.u64]);
	}
	return now() - t0;
}

static double run_submit(struct steps *b)
{
	struct doca_event ev;
	double t0 = now(), t;

	for (uint32_t k = 0; k < NJOBS; k++)
		if (doca_workq_submit(b->wq, &b->jobs[k].base) != DOCA_SUCCESS)
			die("submit");
	t = now() - t0;
	for (uint32_t k = 0; k < NJOBS; k++) {
		if (doca_workq_progress_retrieve(b->wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE) != DOCA_SUCCESS)
			die("retrieve");
		doca_buf_reset_data_len(b->db[ev.user_data.u64]);
	}
	return t;
}

static double run_retrieve(struct steps *b)
{
	struct doca_event ev;
	double t0, t;

	for (uint32_t k = 0; k < NJOBS; k++)
		if (doca_workq_submit(b->wq, &b->jobs[k].base) != DOCA_SUCCESS)
			die("submit");
	t0 = now();
	for (uint32_t k = 0; k < NJOBS; k++)
		if (doca_workq_progress_retrieve(b->wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE) != DOCA_SUCCESS)
			die("retrieve");
	t = now() - t0;
	for (uint32_t k = 0; k < NJOBS; k++)
		doca_buf_reset_data_len(b->db[k]);
	return t;
}

static double run_wqe(struct steps *b)
{
	double t0 = now();

	for (uint32_t k = 0; k < NJOBS; k++) {
		if (hw_jobq_post_dma1(b->q, &b->s[k], &b->d[k]) != HW_OK)
			die("post");
		b->q->ci = b->q->pi; /* taken: the ring never fills */
	}
	return now() - t0;
}

static double run_parse(struct steps *b)
{
	struct hw_jobq_dma1 j;
	uint64_t acc = 0;
	double t0, t;

	for (uint32_t k = 0; k < NJOBS; k++)
		hw_jobq_post_dma1(b->q, &b->s[k], &b->d[k]);
	t0 = now();
	for (uint32_t k = 0; k < NJOBS; k++) {
		if (b->q->ci == b->q->pi || !hw_jobq_parse_dma1(b->q, &j))
			die("parse");
		acc += j.len + j.saddr;
		b->q->ci++;
	}
	t = now() - t0;
	b->sink = acc;
	return t;
}

static double run_exec(struct steps *b)
{
	double t0 = now();

	for (uint32_t k = 0; k < NJOBS; k++)
		if (hw_jobq_exec_dma1(b->q, &b->j[k]) != HW_OK)
			die("execution");
	return now() - t0;
}

/* CQEs the steps below have written to the queue's CQ, all taken by the consumer. */
static uint32_t cq_taken;

static double run_cqe(struct steps *b)
{
	uint32_t *dbrec = hw_cq_dbrec(b->cq);
	uint32_t ci = cq_taken;
	double t0 = now(), t;

	for (uint32_t k = 0; k < NJOBS; k++)
		if (hw_cq_sp_push_req(&b->q->cqp, b->q->cqe_qpn_top, (uint16_t)(ci + k), SIZE, HW_WQE_MMO) != HW_OK)
			die("CQE write");
	t = now() - t0;
	cq_taken += NJOBS;
	hw_cq_set_ci(dbrec, cq_taken); /* the consumer takes them */
	return t;
}

static double run_bf(struct steps *b)
{
	uint32_t *dbrec = hw_cq_dbrec(b->cq);
	uint32_t bytes;
	double t0 = now(), t;

	for (uint32_t k = 0; k < NJOBS; k++)
		if (hw_jobq_post_bf_dma1(b->q, &b->s[k], &b->d[k], &bytes) != HW_JOBQ_BF_DONE || bytes != SIZE)
			die("BlueFlame post");
	t = now() - t0;
	cq_taken += NJOBS;
	hw_cq_set_ci(dbrec, cq_taken);
	return t;
}

static double run_clock(struct steps *b)
{
	double t0 = now();

	(void)b;
	return now() - t0;
}

/* ns per job of a loop: the best window, less the clock's cost per batch. */
static double measure(struct steps *b, double (*fn)(struct steps *), double clock_per_batch)
{
	double best = 1e30;

	for (int w = 0; w < WINDOWS; w++) {
		double sum = 0, t0 = now();
		uint64_t n = 0;

		while (now() - t0 < b->tmin / WINDOWS) {
			for (int i = 0; i < 64; i++)
				sum += fn(b) - clock_per_batch;
			n += 64 * NJOBS;
		}
		if (sum / (double)n < best)
			best = sum / (double)n;
	}
	return best * 1e9;
}

int main(int argc, char **argv)
{
	struct steps b = { .tmin = 0.5 };
	double whole, submit, retrieve, wqe, parse, exec, cqe, bf, clk;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--time") == 0 && i + 1 < argc) {
			b.tmin = atof(argv[++i]);
		} else {
			fprintf(stderr, "usage: %s [--time SECONDS]\n", argv[0]);
			return 2;
		}
	}
	doca_setup(&b);
	engine_setup(&b);
	for (uint32_t k = 0; k < NJOBS; k++) {
		hw_jobq_post_dma1(b.q, &b.s[k], &b.d[k]);
		if (!hw_jobq_parse_dma1(b.q, &b.j[k]))
			die("decode");
		b.q->ci++;
	}
	clk = measure(&b, run_clock, 0) * NJOBS * 1e-9;
	whole = measure(&b, run_whole, clk);
	submit = measure(&b, run_submit, clk);
	retrieve = measure(&b, run_retrieve, clk);
	wqe = measure(&b, run_wqe, clk);
	parse = measure(&b, run_parse, clk);
	exec = measure(&b, run_exec, clk);
	cqe = measure(&b, run_cqe, clk);
	bf = measure(&b, run_bf, clk);

	printf("64 B DMA jobs, depth %d: ns per job (best of %d windows, clock read of %.1f ns per batch of %d "
	       "taken out)\n",
	       NJOBS, WINDOWS, clk * 1e9, NJOBS);
	printf("  %-46s %6.2f\n", "WQE write (hw_jobq_post_dma1)", wqe);
	printf("  %-46s %6.2f\n", "ring doorbell + parse (hw_jobq_parse_dma1)", parse);
	printf("  %-46s %6.2f\n", "execution (hw_jobq_exec_dma1)", exec);
	printf("  %-46s %6.2f\n", "CQE write (hw_cq_sp_push_req)", cqe);
	printf("  %-46s %6.2f\n", "sum of the four ring steps", wqe + parse + exec + cqe);
	printf("  %-46s %6.2f\n", "BlueFlame post (hw_jobq_post_bf_dma1)", bf);
	printf("  %-46s %6.2f\n", "retrieve (doca_workq_progress_retrieve)", retrieve);
	printf("  %-46s %6.2f  (%.1f M jobs/s)\n", "whole (submit + retrieve + data-length reset)", whole, 1e3 / whole);
	printf("  %-46s %6.2f\n", "  of which submit, timed alone", submit);
	printf("  %-46s %6.2f\n", "  submit less the BlueFlame post (API checks,", submit - bf);
	printf("  %-46s\n", "    segments, entry, data length)");
	printf("  %-46s %6.2f\n", "  the loop and reset (whole - submit - retrieve)", whole - submit - retrieve);
	return 0;
}
