/*
 * doca_graph instances — creation (all run state preallocated here, so
 * submit and progress never allocate), node data, and the status getters.
 */
#include <stdlib.h>

#include "dc_log.h"
#include "graph_priv.h"

doca_error_t doca_graph_instance_create(const struct doca_graph *graph, struct doca_graph_instance **graph_instance)
{
	struct doca_graph *g = (struct doca_graph *)graph; /* only its instance count changes */
	struct doca_graph_instance *inst;

	if (graph == NULL || graph_instance == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	dc_graph_lock();
	if (!g->started) {
		dc_graph_unlock();
		return DOCA_ERROR_BAD_STATE;
	}
	inst = calloc(1, sizeof(*inst) + g->num_nodes * sizeof(inst->nodes[0]));
	if (inst == NULL) {
		dc_graph_unlock();
		return DOCA_ERROR_NO_MEMORY;
	}
	inst->graph = g;
	inst->item = (struct doca_job){ .type = DOCA_GRAPH_JOB, .flags = DC_GITEM_INSTANCE, .ctx = dc_graph_item_ctx() };
	for (uint32_t i = 0; i < g->num_nodes; i++) {
		struct dc_ginode *n = &inst->nodes[i];

		n->inst = inst;
		n->node = g->nodes[g->order[i]]; /* in plan order: an instance runs front to back */
		n->parents_left = n->node->num_parents;
		n->item = (struct doca_job){ .type = DOCA_GRAPH_JOB, .flags = DC_GITEM_NODE, .ctx = dc_graph_item_ctx() };
	}
	g->num_instances++;
	dc_graph_unlock();
	*graph_instance = inst;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_instance_destroy(struct doca_graph_instance *graph_instance)
{
	struct doca_graph_instance *inst = graph_instance;

	if (inst == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	dc_graph_lock();
	if (inst->busy || inst->owner != NULL) {
		dc_graph_unlock();
		DC_ERR("graph instance is %s", inst->busy ? "submitted" : "the data of a sub-graph node");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	for (uint32_t i = 0; i < inst->graph->num_nodes; i++)
		if (inst->nodes[i].sub != NULL)
			inst->nodes[i].sub->owner = NULL;
	inst->graph->num_instances--;
	dc_graph_unlock();
	free(inst);
	return DOCA_SUCCESS;
}

struct dc_ginode *dc_ginode_of(const struct doca_graph_instance *inst, const struct doca_graph_node *node)
{
	if (node->graph != inst->graph || node->idx >= inst->graph->num_nodes)
		return NULL;
	return (struct dc_ginode *)&inst->nodes[inst->graph->pos[node->idx]];
}

static void data_set(struct dc_ginode *n)
{
	if (!n->has_data)
		n->inst->num_with_data++;
	n->has_data = true;
}

/* The instance's node for node, when the instance is idle and node is of that kind. */
static doca_error_t settable_node(struct doca_graph_instance *inst, const struct doca_graph_node *node,
				  enum dc_gnode_kind kind, struct dc_ginode **out)
{
	struct dc_ginode *n = dc_ginode_of(inst, node);

	if (inst->busy)
		return DOCA_ERROR_BAD_STATE;
	if (n == NULL || node->kind != kind) {
		DC_ERR("node is not a %s node of the instance's graph",
		       kind == DC_GNODE_CTX ? "context" : (kind == DC_GNODE_USER ? "user" : "sub-graph"));
		return DOCA_ERROR_NOT_PERMITTED;
	}
	*out = n;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_instance_set_ctx_node_data(struct doca_graph_instance *graph_instance,
						   struct doca_graph_node *node, struct doca_job *job,
						   struct doca_event *ev)
{
	struct dc_ginode *n;
	doca_error_t ret;

	if (graph_instance == NULL || node == NULL || job == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = settable_node(graph_instance, node, DC_GNODE_CTX, &n);
	if (ret != DOCA_SUCCESS)
		return ret;
	if (job->type != node->job_type || job->ctx != node->ctx) {
		DC_ERR("job type %d / context do not match the node's (type %d)", job->type, node->job_type);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	n->job = job;
	n->ev = ev;
	data_set(n);
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_instance_set_user_node_data(struct doca_graph_instance *graph_instance,
						    struct doca_graph_node *node, void *cookie, struct doca_event *ev)
{
	struct dc_ginode *n;
	doca_error_t ret;

	if (graph_instance == NULL || node == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = settable_node(graph_instance, node, DC_GNODE_USER, &n);
	if (ret != DOCA_SUCCESS)
		return ret;
	n->cookie = cookie;
	n->ev = ev;
	data_set(n);
	return DOCA_SUCCESS;
}

static doca_error_t sub_data_set(struct dc_ginode *n, struct doca_graph_instance *sub, struct doca_event *ev)
{
	if (sub->graph != n->node->sub) {
		DC_ERR("sub-graph instance was not created by the node's sub-graph");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (sub->busy || (sub->owner != NULL && sub->owner != n)) {
		DC_ERR("sub-graph instance is %s", sub->busy ? "submitted" : "the data of another node");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (n->sub != NULL)
		n->sub->owner = NULL;
	n->sub = sub;
	sub->owner = n;
	n->ev = ev;
	data_set(n);
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_instance_set_sub_graph_node_data(struct doca_graph_instance *graph_instance,
							 struct doca_graph_node *node,
							 struct doca_graph_instance *sub_graph_instance,
							 struct doca_event *ev)
{
	struct dc_ginode *n;
	doca_error_t ret;

	if (graph_instance == NULL || node == NULL || sub_graph_instance == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	dc_graph_lock(); /* ownership links two instances */
	ret = settable_node(graph_instance, node, DC_GNODE_SUB, &n);
	if (ret == DOCA_SUCCESS)
		ret = sub_data_set(n, sub_graph_instance, ev);
	dc_graph_unlock();
	return ret;
}

/* ---- status ---- */

doca_error_t doca_graph_instance_get_num_failed_nodes(const struct doca_graph_instance *graph_instance,
						      uint32_t *num_failed_nodes)
{
	if (graph_instance == NULL || num_failed_nodes == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	*num_failed_nodes = graph_instance->num_failed;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_instance_get_failed_nodes(const struct doca_graph_instance *graph_instance,
						  const struct doca_graph_node **failed_nodes, uint32_t *num_failed_nodes)
{
	uint32_t n = 0;

	if (graph_instance == NULL || failed_nodes == NULL || num_failed_nodes == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	for (uint32_t i = 0; i < graph_instance->graph->num_nodes && n < *num_failed_nodes; i++)
		if (dc_ginode_state(&graph_instance->nodes[i]) == DOCA_GRAPH_INSTANCE_NODE_STATE_ERROR)
			failed_nodes[n++] = graph_instance->nodes[i].node;
	*num_failed_nodes = n;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_instance_node_get_state(const struct doca_graph_instance *graph_instance,
						const struct doca_graph_node *node,
						enum doca_graph_instance_node_state *state)
{
	const struct dc_ginode *n;

	if (graph_instance == NULL || node == NULL || state == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	n = dc_ginode_of(graph_instance, node);
	if (n == NULL)
		return DOCA_ERROR_NOT_PERMITTED;
	*state = dc_ginode_state(n);
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_instance_node_get_result(const struct doca_graph_instance *graph_instance,
						 const struct doca_graph_node *node, union doca_data *result)
{
	const struct dc_ginode *n;

	if (graph_instance == NULL || node == NULL || result == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	n = dc_ginode_of(graph_instance, node);
	if (n == NULL)
		return DOCA_ERROR_NOT_PERMITTED;
	if (dc_ginode_state(n) != DOCA_GRAPH_INSTANCE_NODE_STATE_COMPLETED &&
	    dc_ginode_state(n) != DOCA_GRAPH_INSTANCE_NODE_STATE_ERROR)
		return DOCA_ERROR_BAD_STATE;
	*result = n->result;
	return DOCA_SUCCESS;
}
