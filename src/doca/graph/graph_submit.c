/*
 * doca_workq_graph_submit — every check a submit makes before anything of the
 * instance changes (a refused submit leaves nothing to undo), then the start
 * of the run (graph_run.c).
 */
#include "dc_log.h"
#include "graph_priv.h"

/* Every node has its data and no sub-instance runs elsewhere; sums the depth units the run needs. */
static doca_error_t inst_validate(const struct doca_graph_instance *inst, uint32_t *units)
{
	doca_error_t ret;

	for (uint32_t i = 0; i < inst->graph->num_nodes; i++) {
		const struct dc_ginode *n = &inst->nodes[i];

		if (!n->has_data) {
			DC_ERR("graph node %u has no data", n->node->idx);
			return DOCA_ERROR_INVALID_VALUE;
		}
		if (n->node->kind != DC_GNODE_SUB) {
			(*units)++;
			continue;
		}
		if (n->sub->busy)
			return DOCA_ERROR_IN_USE;
		ret = inst_validate(n->sub, units);
		if (ret != DOCA_SUCCESS)
			return ret;
	}
	return DOCA_SUCCESS;
}

static doca_error_t root_check(const struct dc_ginode *n);

/* The jobs that start at submit are checked before anything starts, so a refusal leaves nothing to undo. */
static doca_error_t roots_check(const struct doca_graph_instance *inst)
{
	const struct doca_graph *g = inst->graph;
	doca_error_t ret = DOCA_SUCCESS;

	for (uint32_t i = 0; i < g->num_roots && ret == DOCA_SUCCESS; i++)
		ret = root_check(&inst->nodes[i]);
	return ret;
}

static doca_error_t root_check(const struct dc_ginode *n)
{
	switch (n->node->kind) {
	case DC_GNODE_CTX:
		return dc_ginode_job_check(n);
	case DC_GNODE_SUB:
		return roots_check(n->sub);
	default:
		return DOCA_SUCCESS;
	}
}

/* Whether the instance is the sub-graph data of a node whose instance runs (it may start any moment). */
static bool owner_running(const struct doca_graph_instance *inst)
{
	for (; inst->owner != NULL; inst = inst->owner->inst)
		if (inst->owner->inst->busy)
			return true;
	return false;
}

/* Node data, sub-instances and root jobs; sums the depth units the run needs. */
static doca_error_t content_check(const struct doca_graph_instance *inst, uint32_t *units)
{
	const struct doca_graph *g = inst->graph;
	doca_error_t ret;

	if (g->num_subs == 0 && inst->num_with_data == g->num_nodes) {
		*units = g->num_nodes; /* the common case needs no walk */
	} else {
		*units = 0;
		ret = inst_validate(inst, units);
		if (ret != DOCA_SUCCESS)
			return ret;
	}
	return roots_check(inst);
}

static doca_error_t submit_check(struct doca_workq *wq, struct doca_graph_instance *inst, struct dc_graph_wq **slot,
				 uint32_t *units)
{
	if (inst->busy || owner_running(inst))
		return DOCA_ERROR_IN_USE;
	/* Instances mostly return to the work queue they ran on. */
	*slot = inst->wq_slot;
	if (*slot == NULL || atomic_load_explicit(&(*slot)->wq, memory_order_relaxed) != wq)
		*slot = dc_graph_wq_find(inst->graph, wq);
	if (*slot == NULL) {
		DC_ERR("graph is not added to the work queue");
		return DOCA_ERROR_BAD_STATE;
	}
	return content_check(inst, units);
}

doca_error_t doca_workq_graph_submit(struct doca_workq *workq, struct doca_graph_instance *graph_instance,
				     union doca_data user_data)
{
	struct dc_graph_wq *slot;
	uint32_t units;
	doca_error_t ret;

	if (workq == NULL || graph_instance == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = submit_check(workq, graph_instance, &slot, &units);
	if (ret != DOCA_SUCCESS)
		return ret;
	/* The item is read when the work queue runs it, after the start below (a work queue has one thread). */
	ret = dc_workq_item_submit(workq, units, graph_instance->item.ctx, &graph_instance->item);
	if (ret != DOCA_SUCCESS)
		return ret;
	dc_graph_run_start(graph_instance, workq, slot, units, user_data);
	return DOCA_SUCCESS;
}
