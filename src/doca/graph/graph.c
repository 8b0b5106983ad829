/*
 * doca_graph — graph life cycle: create, destroy, start (validate and
 * freeze), stop.
 */
#include <pthread.h>
#include <stdlib.h>

#include "dc_log.h"
#include "graph_priv.h"

/*
 * One lock for the control path of every graph: sub-graph nodes make graphs
 * reference each other, and one lock keeps those references consistent
 * without a lock order. The data path (submit, progress) never takes it.
 */
static pthread_mutex_t graph_lock = PTHREAD_MUTEX_INITIALIZER;

void dc_graph_lock(void)
{
	pthread_mutex_lock(&graph_lock);
}

void dc_graph_unlock(void)
{
	pthread_mutex_unlock(&graph_lock);
}

doca_error_t doca_graph_create(struct doca_graph **graph)
{
	struct doca_graph *g;

	if (graph == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return DOCA_ERROR_NO_MEMORY;
	*graph = g;
	return DOCA_SUCCESS;
}

/* Sub-graphs stay started while a started graph runs them. */
static void sub_graphs_hold(struct doca_graph *graph, bool hold)
{
	for (uint32_t i = 0; i < graph->num_nodes; i++) {
		struct doca_graph_node *n = graph->nodes[i];

		if (n->kind != DC_GNODE_SUB)
			continue;
		if (hold)
			n->sub->num_started_parents++;
		else
			n->sub->num_started_parents--;
	}
}

static void graph_unfreeze(struct doca_graph *graph)
{
	sub_graphs_hold(graph, false);
	dc_graph_plan_free(graph);
	graph->started = false;
}

static const char *graph_busy_reason(const struct doca_graph *graph)
{
	if (graph->num_instances != 0)
		return "instances of it exist";
	if (dc_graph_has_workqs(graph))
		return "it is added to a work queue";
	return NULL;
}

doca_error_t doca_graph_destroy(struct doca_graph *graph)
{
	const char *busy;

	if (graph == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	dc_graph_lock();
	busy = graph_busy_reason(graph);
	if (busy == NULL && graph->num_parent_refs != 0)
		busy = "another graph uses it as a sub-graph";
	if (busy != NULL) {
		dc_graph_unlock();
		DC_ERR("graph cannot be destroyed: %s", busy);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (graph->started)
		graph_unfreeze(graph);
	dc_graph_nodes_free(graph);
	dc_graph_unlock();
	free(graph);
	return DOCA_SUCCESS;
}

/* Context nodes of the graph, counting those of its (started) sub-graphs. */
static uint32_t count_ctx_nodes(const struct doca_graph *graph)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < graph->num_nodes; i++) {
		if (graph->nodes[i]->kind == DC_GNODE_CTX)
			n++;
		else if (graph->nodes[i]->kind == DC_GNODE_SUB)
			n += count_ctx_nodes(graph->nodes[i]->sub);
	}
	return n;
}

static bool ctx_started(struct doca_ctx *ctx)
{
	bool started;

	pthread_mutex_lock(&ctx->lock);
	started = ctx->started;
	pthread_mutex_unlock(&ctx->lock);
	return started;
}

static doca_error_t check_startable(const struct doca_graph *graph)
{
	if (graph->started)
		return DOCA_ERROR_BAD_STATE;
	for (uint32_t i = 0; i < graph->num_nodes; i++) {
		struct doca_graph_node *n = graph->nodes[i];

		if (n->kind == DC_GNODE_CTX && !ctx_started(n->ctx)) {
			DC_ERR("the %s context of node %u is not started", n->ctx->ops->name, i);
			return DOCA_ERROR_BAD_STATE;
		}
		if (n->kind == DC_GNODE_SUB && !n->sub->started) {
			DC_ERR("the sub-graph of node %u is not started", i);
			return DOCA_ERROR_BAD_STATE;
		}
	}
	if (count_ctx_nodes(graph) == 0) {
		DC_ERR("a graph needs at least one context node (itself or in a sub-graph)");
		return DOCA_ERROR_BAD_STATE;
	}
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_start(struct doca_graph *graph)
{
	doca_error_t ret;

	if (graph == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	dc_graph_lock();
	ret = check_startable(graph);
	if (ret == DOCA_SUCCESS)
		ret = dc_graph_plan(graph);
	if (ret == DOCA_SUCCESS) {
		sub_graphs_hold(graph, true);
		graph->started = true;
	}
	dc_graph_unlock();
	return ret;
}

doca_error_t doca_graph_stop(struct doca_graph *graph)
{
	const char *busy;

	if (graph == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	dc_graph_lock();
	if (!graph->started) {
		dc_graph_unlock();
		return DOCA_ERROR_BAD_STATE;
	}
	busy = graph_busy_reason(graph);
	if (busy == NULL && graph->num_started_parents != 0)
		busy = "a started graph uses it as a sub-graph";
	if (busy != NULL) {
		dc_graph_unlock();
		DC_ERR("graph cannot be stopped: %s", busy);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	graph_unfreeze(graph);
	dc_graph_unlock();
	return DOCA_SUCCESS;
}
