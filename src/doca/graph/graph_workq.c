/*
 * doca_graph work queues — a graph added to a work queue pins every context
 * it uses there (also through sub-graphs), so no context can leave the work
 * queue while the graph's instances may run jobs on it.
 */
#include <pthread.h>

#include "dc_log.h"
#include "graph_priv.h"

struct dc_graph_wq *dc_graph_wq_find(struct doca_graph *graph, const struct doca_workq *wq)
{
	for (uint32_t i = 0; i < DC_GRAPH_MAX_WORKQS; i++)
		if (atomic_load_explicit(&graph->wqs[i].wq, memory_order_relaxed) == wq)
			return &graph->wqs[i];
	return NULL;
}

bool dc_graph_has_workqs(const struct doca_graph *graph)
{
	for (uint32_t i = 0; i < DC_GRAPH_MAX_WORKQS; i++)
		if (atomic_load_explicit(&graph->wqs[i].wq, memory_order_relaxed) != NULL)
			return true;
	return false;
}

static doca_error_t ctx_pin(struct doca_workq *wq, struct doca_ctx *ctx)
{
	doca_error_t ret;

	/* ctx.c attaches and detaches work queues under the context lock. */
	pthread_mutex_lock(&ctx->lock);
	ret = dc_workq_pin(wq, ctx);
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

static void ctx_unpin(struct doca_workq *wq, struct doca_ctx *ctx)
{
	pthread_mutex_lock(&ctx->lock);
	dc_workq_unpin(wq, ctx);
	pthread_mutex_unlock(&ctx->lock);
}

/*
 * Pins (pin) or unpins the contexts of the graph's context nodes in a fixed
 * order; *budget bounds how many are visited, so a failed pinning undoes
 * exactly the pins it made.
 */
static doca_error_t pins_walk(struct doca_graph *graph, struct doca_workq *wq, bool pin, uint32_t *done,
			      uint32_t budget)
{
	doca_error_t ret;

	for (uint32_t i = 0; i < graph->num_nodes && *done < budget; i++) {
		struct doca_graph_node *n = graph->nodes[i];

		if (n->kind == DC_GNODE_SUB) {
			ret = pins_walk(n->sub, wq, pin, done, budget);
			if (ret != DOCA_SUCCESS)
				return ret;
			continue;
		}
		if (n->kind != DC_GNODE_CTX)
			continue;
		if (!pin) {
			ctx_unpin(wq, n->ctx);
		} else if (ctx_pin(wq, n->ctx) != DOCA_SUCCESS) {
			DC_ERR("the %s context of a graph node is not added to the work queue", n->ctx->ops->name);
			return DOCA_ERROR_BAD_STATE;
		}
		(*done)++;
	}
	return DOCA_SUCCESS;
}

static doca_error_t workq_add_locked(struct doca_graph *graph, struct doca_workq *wq)
{
	struct dc_graph_wq *slot;
	uint32_t pinned = 0, unpinned = 0;
	doca_error_t ret;

	if (!graph->started)
		return DOCA_ERROR_BAD_STATE;
	if (dc_graph_wq_find(graph, wq) != NULL)
		return DOCA_ERROR_IN_USE;
	slot = dc_graph_wq_find(graph, NULL);
	if (slot == NULL) {
		DC_ERR("a graph can be added to at most %u work queues", DC_GRAPH_MAX_WORKQS);
		return DOCA_ERROR_NO_MEMORY;
	}
	ret = pins_walk(graph, wq, true, &pinned, UINT32_MAX);
	if (ret != DOCA_SUCCESS) {
		pins_walk(graph, wq, false, &unpinned, pinned);
		return ret;
	}
	slot->inflight = 0;
	atomic_store_explicit(&slot->wq, wq, memory_order_release);
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_workq_add(struct doca_graph *graph, struct doca_workq *workq)
{
	doca_error_t ret;

	if (graph == NULL || workq == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	dc_graph_lock();
	ret = workq_add_locked(graph, workq);
	dc_graph_unlock();
	return ret;
}

static doca_error_t workq_rm_locked(struct doca_graph *graph, struct doca_workq *wq)
{
	struct dc_graph_wq *slot = dc_graph_wq_find(graph, wq);
	uint32_t unpinned = 0;

	if (slot == NULL) {
		/* The 2.2 header names BAD_STATE, not NOT_FOUND, among this call's codes. */
		DC_ERR("the graph is not added to this work queue");
		return DOCA_ERROR_BAD_STATE;
	}
	if (slot->inflight != 0) {
		DC_ERR("%u instances of the graph still run on the work queue", slot->inflight);
		return DOCA_ERROR_IN_USE;
	}
	pins_walk(graph, wq, false, &unpinned, UINT32_MAX);
	atomic_store_explicit(&slot->wq, NULL, memory_order_release);
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_workq_rm(struct doca_graph *graph, struct doca_workq *workq)
{
	doca_error_t ret;

	if (graph == NULL || workq == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	dc_graph_lock();
	ret = workq_rm_locked(graph, workq);
	dc_graph_unlock();
	return ret;
}
