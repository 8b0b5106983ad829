/*
 * bench_graph — what a DOCA graph instance costs against the same jobs
 * submitted by hand with the same dependencies, measured in the same run.
 *
 * The work: two 64-byte DMA copies that may run in parallel, then a user
 * function that needs both (it checks the first copied byte of each and
 * resets the destinations for the next round). 64 bytes keep the copies
 * cheap, so the figures show the orchestration, not memcpy.
 *   graph:   one instance of  dma_a, dma_b -> user  per round, resubmitted on
 *            its DOCA_GRAPH_JOB event;
 *   by hand: submit dma_a and dma_b, count their two events, call the user
 *            function, submit again.
 * `inflight` rounds are kept going at once on one polling work queue. For each
 * case the two modes alternate over ROUNDS timed windows; the best window of
 * each counts. ratio = by-hand rate / graph rate (the cost of one graph
 * instance in units of its jobs submitted by hand).
 *
 * Usage: bench_graph [--quick] [--time SECONDS] [--only graph|hand] (--only: one mode, for profilers)
 */
#include <stdbool.h>
#include <stdint.h>
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
#include <doca_graph.h>
#include <doca_mmap.h>

#define COPY 64
#define MAX_INFLIGHT 64
#define ROUNDS 5

static const uint32_t inflights[] = { 1, 8, 32 };

struct round {
	struct doca_dma_job_memcpy a, b;
	uint8_t *src_a, *dst_a, *src_b, *dst_b;
	struct doca_graph_instance *gi;
	uint32_t pending; /* by hand: copies not completed yet */
	uint64_t checked;
};

struct bench {
	struct doca_devinfo **list;
	struct doca_dev *dev;
	uint8_t *mem;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_dma *dma;
	struct doca_ctx *ctx;
	struct doca_workq *wq;
	struct doca_graph *graph;
	struct doca_graph_node *na, *nb, *nu;
	struct round r[MAX_INFLIGHT];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#define TRY(x)                                                                                                         \
	do {                                                                                                           \
		doca_error_t r_ = (x);                                                                                 \
		if (r_ != DOCA_SUCCESS) {                                                                              \
			fprintf(stderr, "bench_graph: %s failed: %s\n", #x, doca_get_error_string(r_));                \
			exit(1);                                                                                       \
		}                                                                                                      \
	} while (0)

/* The user node's work, the same in both modes. */
static doca_error_t round_check(void *cookie, struct doca_event *ev)
{
	struct round *r = cookie;

	(void)ev;
	if (r->dst_a[0] != r->src_a[0] || r->dst_b[0] != r->src_b[0])
		return DOCA_ERROR_UNEXPECTED;
	doca_buf_reset_data_len(r->a.dst_buff);
	doca_buf_reset_data_len(r->b.dst_buff);
	r->checked++;
	return DOCA_SUCCESS;
}

static void job_init(struct doca_dma_job_memcpy *j, struct bench *b, uint8_t *dst, uint8_t *src, uint64_t ud)
{
	struct doca_buf *d, *s;

	TRY(doca_buf_inventory_buf_by_addr(b->inv, b->mmap, dst, COPY, &d));
	TRY(doca_buf_inventory_buf_by_data(b->inv, b->mmap, src, COPY, &s));
	*j = (struct doca_dma_job_memcpy){ .base = { .type = DOCA_DMA_JOB_MEMCPY, .ctx = b->ctx, .user_data.u64 = ud },
					   .dst_buff = d,
					   .src_buff = s };
}

static void graph_build(struct bench *b)
{
	TRY(doca_graph_create(&b->graph));
	TRY(doca_graph_ctx_node_create(b->graph, DOCA_DMA_JOB_MEMCPY, b->ctx, &b->na));
	TRY(doca_graph_ctx_node_create(b->graph, DOCA_DMA_JOB_MEMCPY, b->ctx, &b->nb));
	TRY(doca_graph_user_node_create(b->graph, round_check, &b->nu));
	TRY(doca_graph_add_dependency(b->graph, b->na, b->nu));
	TRY(doca_graph_add_dependency(b->graph, b->nb, b->nu));
	TRY(doca_graph_start(b->graph));
	TRY(doca_graph_workq_add(b->graph, b->wq));
}

static void setup(struct bench *b)
{
	uint32_t n;
	size_t len = (size_t)MAX_INFLIGHT * 4 * COPY;

	memset(b, 0, sizeof(*b));
	TRY(doca_devinfo_list_create(&b->list, &n));
	TRY(doca_dev_open(b->list[0], &b->dev));
	b->mem = aligned_alloc(64, len);
	if (b->mem == NULL)
		exit(1);
	for (size_t i = 0; i < len; i++)
		b->mem[i] = (uint8_t)(i * 13 + 1);
	TRY(doca_mmap_create(NULL, &b->mmap));
	TRY(doca_mmap_dev_add(b->mmap, b->dev));
	TRY(doca_mmap_set_memrange(b->mmap, b->mem, len));
	TRY(doca_mmap_start(b->mmap));
	TRY(doca_buf_inventory_create(NULL, 4 * MAX_INFLIGHT, DOCA_BUF_EXTENSION_NONE, &b->inv));
	TRY(doca_buf_inventory_start(b->inv));
	TRY(doca_dma_create(&b->dma));
	b->ctx = doca_dma_as_ctx(b->dma);
	TRY(doca_ctx_dev_add(b->ctx, b->dev));
	TRY(doca_ctx_start(b->ctx));
	TRY(doca_workq_create(4 * MAX_INFLIGHT, &b->wq));
	TRY(doca_ctx_workq_add(b->ctx, b->wq));
	graph_build(b);
	for (uint32_t i = 0; i < MAX_INFLIGHT; i++) {
		struct round *r = &b->r[i];
		uint8_t *base = b->mem + (size_t)i * 4 * COPY;

		r->src_a = base;
		r->dst_a = base + COPY;
		r->src_b = base + 2 * COPY;
		r->dst_b = base + 3 * COPY;
		job_init(&r->a, b, r->dst_a, r->src_a, 2 * i);
		job_init(&r->b, b, r->dst_b, r->src_b, 2 * i + 1);
		TRY(doca_graph_instance_create(b->graph, &r->gi));
		TRY(doca_graph_instance_set_ctx_node_data(r->gi, b->na, &r->a.base, NULL));
		TRY(doca_graph_instance_set_ctx_node_data(r->gi, b->nb, &r->b.base, NULL));
		TRY(doca_graph_instance_set_user_node_data(r->gi, b->nu, r, NULL));
	}
}

static void teardown(struct bench *b)
{
	for (uint32_t i = 0; i < MAX_INFLIGHT; i++) {
		struct round *r = &b->r[i];

		TRY(doca_graph_instance_destroy(r->gi));
		doca_buf_refcount_rm(r->a.dst_buff, NULL);
		doca_buf_refcount_rm((struct doca_buf *)r->a.src_buff, NULL);
		doca_buf_refcount_rm(r->b.dst_buff, NULL);
		doca_buf_refcount_rm((struct doca_buf *)r->b.src_buff, NULL);
	}
	TRY(doca_graph_workq_rm(b->graph, b->wq));
	TRY(doca_graph_stop(b->graph));
	TRY(doca_graph_destroy(b->graph));
	TRY(doca_ctx_workq_rm(b->ctx, b->wq));
	TRY(doca_workq_destroy(b->wq));
	TRY(doca_ctx_stop(b->ctx));
	TRY(doca_ctx_dev_rm(b->ctx, b->dev));
	TRY(doca_dma_destroy(b->dma));
	TRY(doca_buf_inventory_stop(b->inv));
	TRY(doca_buf_inventory_destroy(b->inv));
	TRY(doca_mmap_destroy(b->mmap));
	TRY(doca_dev_close(b->dev));
	TRY(doca_devinfo_list_destroy(b->list));
	free(b->mem);
}

static void poll_event(struct doca_workq *wq, struct doca_event *ev)
{
	doca_error_t r;

	while ((r = doca_workq_progress_retrieve(wq, ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) == DOCA_ERROR_AGAIN)
		;
	if (r != DOCA_SUCCESS) {
		fprintf(stderr, "bench_graph: job failed: %s\n", doca_get_error_string(r));
		exit(1);
	}
}

/* Rounds per second with graph instances. */
static double run_graph(struct bench *b, uint32_t inflight, double secs)
{
	struct doca_event ev;
	uint64_t done = 0;
	double t0, t;

	for (uint32_t i = 0; i < inflight; i++)
		TRY(doca_workq_graph_submit(b->wq, b->r[i].gi, (union doca_data){ .u64 = i }));
	t0 = now();
	do {
		for (int k = 0; k < 256; k++) {
			poll_event(b->wq, &ev);
			done++;
			TRY(doca_workq_graph_submit(b->wq, b->r[ev.user_data.u64].gi, ev.user_data));
		}
		t = now();
	} while (t - t0 < secs);
	for (uint32_t i = 0; i < inflight; i++) /* drain */
		poll_event(b->wq, &ev);
	return (double)done / (t - t0);
}

static void hand_submit(struct bench *b, struct round *r)
{
	r->pending = 2;
	TRY(doca_workq_submit(b->wq, &r->a.base));
	TRY(doca_workq_submit(b->wq, &r->b.base));
}

/* Rounds per second with the jobs submitted by hand, the user function run once both copies completed. */
static double run_hand(struct bench *b, uint32_t inflight, double secs)
{
	struct doca_event ev;
	uint64_t done = 0;
	double t0, t;

	for (uint32_t i = 0; i < inflight; i++)
		hand_submit(b, &b->r[i]);
	t0 = now();
	do {
		for (int k = 0; k < 256; k++) {
			struct round *r;

			poll_event(b->wq, &ev);
			r = &b->r[ev.user_data.u64 / 2];
			if (--r->pending != 0)
				continue;
			if (round_check(r, NULL) != DOCA_SUCCESS)
				exit(1);
			done++;
			hand_submit(b, r);
		}
		t = now();
	} while (t - t0 < secs);
	for (uint32_t i = 0; i < 2 * inflight; i++)
		poll_event(b->wq, &ev);
	for (uint32_t i = 0; i < inflight; i++)
		round_check(&b->r[i], NULL);
	return (double)done / (t - t0);
}

int main(int argc, char **argv)
{
	struct bench b;
	double secs = 0.5;
	const char *only = "";

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--quick") == 0)
			secs = 0.05;
		else if (strcmp(argv[i], "--time") == 0 && i + 1 < argc)
			secs = atof(argv[++i]);
		else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc)
			only = argv[++i];
	}
	setup(&b);
	printf("bench_graph: 2 parallel %d-byte DMA copies + 1 user node per round, rounds/s (best of %d)\n", COPY,
	       ROUNDS);
	printf("| in flight | by hand (rounds/s) | graph (rounds/s) | graph cost / by hand |\n");
	printf("|---|---|---|---|\n");
	for (size_t c = 0; c < sizeof(inflights) / sizeof(inflights[0]); c++) {
		double hand = 0, graph = 0;

		for (int k = 0; k < ROUNDS; k++) {
			double h = strcmp(only, "graph") == 0 ? 1 : run_hand(&b, inflights[c], secs);
			double g = strcmp(only, "hand") == 0 ? 1 : run_graph(&b, inflights[c], secs);

			hand = h > hand ? h : hand;
			graph = g > graph ? g : graph;
		}
		printf("| %u | %.3g M | %.3g M | %.2fx |\n", inflights[c], hand / 1e6, graph / 1e6, hand / graph);
	}
	teardown(&b);
	return 0;
}
