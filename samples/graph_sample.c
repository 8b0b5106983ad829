/*
 * graph_sample — the DOCA Graph sample flow: per instance, a SHA-256 job and a
 * DMA copy of the same source run in parallel; a user node that depends on
 * both prints the digest and checks that the copy equals the source.
 *
 *      SHA     DMA
 *        \     /
 *       user node
 *
 * NUM_INSTANCES instances are submitted to one polling work queue at once.
 * Usage: graph_sample (no parameters)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_buf.h>
#include <doca_buf_inventory.h>
#include <doca_ctx.h>
#include <doca_dev.h>
#include <doca_dma.h>
#include <doca_error.h>
#include <doca_graph.h>
#include <doca_mmap.h>
#include <doca_sha.h>

#define NUM_INSTANCES 10
#define SRC_SIZE 1024
#define SLOT_SIZE (SRC_SIZE + SRC_SIZE + DOCA_SHA256_BYTE_COUNT) /* source, DMA copy, digest */
/* Each instance holds one unit of depth per context or user node. */
#define WORKQ_DEPTH (3 * NUM_INSTANCES)

struct instance {
	int index;
	struct doca_graph_instance *gi;
	uint8_t *src, *copy, *digest;
	struct doca_buf *src_buf, *copy_buf, *digest_buf;
	struct doca_sha_job sha_job;
	struct doca_dma_job_memcpy dma_job;
};

struct state {
	struct doca_devinfo **list;
	struct doca_dev *dev;
	uint8_t *mem;
	struct doca_mmap *mmap;
	struct doca_buf_inventory *inv;
	struct doca_workq *wq;
	struct doca_sha *sha;
	struct doca_dma *dma;
	struct doca_graph *graph;
	struct doca_graph_node *sha_node, *dma_node, *user_node;
	struct instance inst[NUM_INSTANCES];
};

#define TRY(x)                                                                                                         \
	do {                                                                                                           \
		doca_error_t r_ = (x);                                                                                 \
		if (r_ != DOCA_SUCCESS) {                                                                              \
			fprintf(stderr, "graph_sample: %s: %s\n", #x, doca_get_error_string(r_));                      \
			return r_;                                                                                     \
		}                                                                                                      \
	} while (0)

/* The user node: runs once both the digest and the copy are there. */
static doca_error_t check_instance(void *cookie, struct doca_event *ev)
{
	struct instance *in = cookie;
	char hex[2 * DOCA_SHA256_BYTE_COUNT + 1];
	size_t copied = 0;

	(void)ev;
	if (doca_buf_get_data_len(in->copy_buf, &copied) != DOCA_SUCCESS || copied != SRC_SIZE ||
	    memcmp(in->copy, in->src, SRC_SIZE) != 0) {
		fprintf(stderr, "instance %d: the DMA copy differs from the source\n", in->index);
		return DOCA_ERROR_BAD_STATE;
	}
	for (int i = 0; i < DOCA_SHA256_BYTE_COUNT; i++)
		snprintf(hex + 2 * i, 3, "%02x", in->digest[i]);
	printf("instance %d: copy matches, SHA-256 %s\n", in->index, hex);
	return DOCA_SUCCESS;
}

static doca_error_t open_device(struct state *s)
{
	uint32_t n = 0;

	TRY(doca_devinfo_list_create(&s->list, &n));
	for (uint32_t i = 0; i < n; i++) {
		if (doca_dma_job_get_supported(s->list[i], DOCA_DMA_JOB_MEMCPY) == DOCA_SUCCESS &&
		    doca_sha_job_get_supported(s->list[i], DOCA_SHA_JOB_SHA256) == DOCA_SUCCESS)
			return doca_dev_open(s->list[i], &s->dev);
	}
	fprintf(stderr, "graph_sample: no device with DMA and SHA\n");
	return DOCA_ERROR_NOT_FOUND;
}

static doca_error_t memory_setup(struct state *s)
{
	size_t len = (size_t)NUM_INSTANCES * SLOT_SIZE;

	s->mem = calloc(1, len);
	if (s->mem == NULL)
		return DOCA_ERROR_NO_MEMORY;
	TRY(doca_mmap_create(NULL, &s->mmap));
	TRY(doca_mmap_set_memrange(s->mmap, s->mem, len));
	TRY(doca_mmap_dev_add(s->mmap, s->dev));
	TRY(doca_mmap_set_permissions(s->mmap, DOCA_ACCESS_LOCAL_READ_WRITE));
	TRY(doca_mmap_start(s->mmap));
	TRY(doca_buf_inventory_create(NULL, 3 * NUM_INSTANCES, DOCA_BUF_EXTENSION_NONE, &s->inv));
	return doca_buf_inventory_start(s->inv);
}

static doca_error_t contexts_setup(struct state *s)
{
	struct doca_ctx *ctxs[2];

	TRY(doca_workq_create(WORKQ_DEPTH, &s->wq));
	TRY(doca_sha_create(&s->sha));
	TRY(doca_dma_create(&s->dma));
	ctxs[0] = doca_sha_as_ctx(s->sha);
	ctxs[1] = doca_dma_as_ctx(s->dma);
	for (int i = 0; i < 2; i++) {
		TRY(doca_ctx_dev_add(ctxs[i], s->dev));
		TRY(doca_ctx_start(ctxs[i]));
		TRY(doca_ctx_workq_add(ctxs[i], s->wq));
	}
	return DOCA_SUCCESS;
}

/* Nodes first, then the dependencies; start validates and freezes the graph. */
static doca_error_t graph_setup(struct state *s)
{
	TRY(doca_graph_create(&s->graph));
	TRY(doca_graph_ctx_node_create(s->graph, DOCA_SHA_JOB_SHA256, doca_sha_as_ctx(s->sha), &s->sha_node));
	TRY(doca_graph_ctx_node_create(s->graph, DOCA_DMA_JOB_MEMCPY, doca_dma_as_ctx(s->dma), &s->dma_node));
	TRY(doca_graph_user_node_create(s->graph, check_instance, &s->user_node));
	TRY(doca_graph_add_dependency(s->graph, s->sha_node, s->user_node));
	TRY(doca_graph_add_dependency(s->graph, s->dma_node, s->user_node));
	TRY(doca_graph_start(s->graph));
	return doca_graph_workq_add(s->graph, s->wq);
}

static doca_error_t instance_setup(struct state *s, int i)
{
	struct instance *in = &s->inst[i];
	uint8_t *slot = s->mem + (size_t)i * SLOT_SIZE;

	in->index = i;
	in->src = slot;
	in->copy = slot + SRC_SIZE;
	in->digest = slot + 2 * SRC_SIZE;
	for (int k = 0; k < SRC_SIZE; k++)
		in->src[k] = (uint8_t)(i + 1 + k);
	TRY(doca_buf_inventory_buf_by_data(s->inv, s->mmap, in->src, SRC_SIZE, &in->src_buf));
	TRY(doca_buf_inventory_buf_by_addr(s->inv, s->mmap, in->copy, SRC_SIZE, &in->copy_buf));
	TRY(doca_buf_inventory_buf_by_addr(s->inv, s->mmap, in->digest, DOCA_SHA256_BYTE_COUNT, &in->digest_buf));
	in->sha_job = (struct doca_sha_job){ .base = { .type = DOCA_SHA_JOB_SHA256, .ctx = doca_sha_as_ctx(s->sha) },
					     .req_buf = in->src_buf,
					     .resp_buf = in->digest_buf,
					     .flags = DOCA_SHA_JOB_FLAGS_NONE };
	in->dma_job = (struct doca_dma_job_memcpy){ .base = { .type = DOCA_DMA_JOB_MEMCPY,
							      .ctx = doca_dma_as_ctx(s->dma) },
						    .src_buff = in->src_buf,
						    .dst_buff = in->copy_buf };
	TRY(doca_graph_instance_create(s->graph, &in->gi));
	TRY(doca_graph_instance_set_ctx_node_data(in->gi, s->sha_node, &in->sha_job.base, NULL));
	TRY(doca_graph_instance_set_ctx_node_data(in->gi, s->dma_node, &in->dma_job.base, NULL));
	return doca_graph_instance_set_user_node_data(in->gi, s->user_node, in, NULL);
}

static doca_error_t run(struct state *s)
{
	struct doca_event ev;
	doca_error_t r;
	int done = 0;

	for (int i = 0; i < NUM_INSTANCES; i++)
		TRY(doca_workq_graph_submit(s->wq, s->inst[i].gi, (union doca_data){ .ptr = &s->inst[i] }));
	while (done < NUM_INSTANCES) {
		/* AGAIN while only nodes complete: each instance reports once, as a whole. */
		while ((r = doca_workq_progress_retrieve(s->wq, &ev, DOCA_WORKQ_RETRIEVE_FLAGS_NONE)) ==
		       DOCA_ERROR_AGAIN)
			;
		if (r != DOCA_SUCCESS || ev.type != DOCA_GRAPH_JOB) {
			fprintf(stderr, "graph_sample: instance failed: %s\n",
				doca_get_error_string((doca_error_t)ev.result.u64));
			return r != DOCA_SUCCESS ? r : DOCA_ERROR_UNEXPECTED;
		}
		done++;
	}
	printf("all %d graph instances completed\n", NUM_INSTANCES);
	return DOCA_SUCCESS;
}

static void cleanup(struct state *s)
{
	struct doca_ctx *ctxs[2] = { s->sha ? doca_sha_as_ctx(s->sha) : NULL, s->dma ? doca_dma_as_ctx(s->dma) : NULL };

	for (int i = 0; i < NUM_INSTANCES; i++) {
		struct instance *in = &s->inst[i];

		if (in->gi != NULL)
			doca_graph_instance_destroy(in->gi);
		if (in->src_buf != NULL)
			doca_buf_refcount_rm(in->src_buf, NULL);
		if (in->copy_buf != NULL)
			doca_buf_refcount_rm(in->copy_buf, NULL);
		if (in->digest_buf != NULL)
			doca_buf_refcount_rm(in->digest_buf, NULL);
	}
	if (s->graph != NULL) {
		doca_graph_workq_rm(s->graph, s->wq);
		doca_graph_stop(s->graph);
		doca_graph_destroy(s->graph);
	}
	for (int i = 0; i < 2; i++) {
		if (ctxs[i] == NULL)
			continue;
		doca_ctx_workq_rm(ctxs[i], s->wq);
		doca_ctx_stop(ctxs[i]);
		doca_ctx_dev_rm(ctxs[i], s->dev);
	}
	if (s->wq != NULL)
		doca_workq_destroy(s->wq);
	if (s->sha != NULL)
		doca_sha_destroy(s->sha);
	if (s->dma != NULL)
		doca_dma_destroy(s->dma);
	if (s->inv != NULL) {
		doca_buf_inventory_stop(s->inv);
		doca_buf_inventory_destroy(s->inv);
	}
	if (s->mmap != NULL)
		doca_mmap_destroy(s->mmap);
	if (s->dev != NULL)
		doca_dev_close(s->dev);
	if (s->list != NULL)
		doca_devinfo_list_destroy(s->list);
	free(s->mem);
}

static doca_error_t sample(struct state *s)
{
	TRY(open_device(s));
	TRY(memory_setup(s));
	TRY(contexts_setup(s));
	TRY(graph_setup(s));
	for (int i = 0; i < NUM_INSTANCES; i++)
		TRY(instance_setup(s, i));
	return run(s);
}

int main(void)
{
	static struct state s;
	doca_error_t r = sample(&s);

	cleanup(&s);
	return r == DOCA_SUCCESS ? EXIT_SUCCESS : EXIT_FAILURE;
}
