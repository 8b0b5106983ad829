/*
 * doca_graph run — an instance on a work queue (design: docs/graph.md).
 *
 * An instance is a small state machine over its preallocated nodes. Submit
 * puts the root nodes on the instance's ready list (a root sub-graph node puts
 * the roots of its sub-instance there) and queues one work item, embedded in
 * the instance, on the work queue: a job of a hidden context. Inside
 * doca_workq_progress_retrieve the hidden context's job_exec runs the ready
 * nodes one after the other (a context node: its context's job_exec; a user
 * node: the callback) and finishes each: every child whose parents have all
 * finished joins the ready list and runs in the same call (small work runs
 * inline). A job that cannot complete yet (DOCA_ERROR_AGAIN) goes back to the
 * work queue as an item of its own node. `running` counts the started,
 * unfinished nodes of an instance; when it drops to zero the instance is
 * complete: a sub-instance finishes its sub-graph node, the submitted
 * instance returns its status, which the work queue reports as the one
 * DOCA_GRAPH_JOB event. Otherwise the item returns DC_JOB_NO_EVENT. After a
 * failure no further node starts; the instance completes once the nodes
 * already running finished.
 */
#include "dc_log.h"
#include "graph_priv.h"

static doca_error_t item_exec(struct doca_ctx *ctx, const struct doca_job *job, union doca_data *result);

static const struct dc_ctx_ops item_ops = {
	.name = "graph",
	.job_exec = item_exec,
};

/* Never started nor added anywhere: the work queue only calls its job_exec, for items queued by this file. */
static struct doca_ctx item_ctx = { .ops = &item_ops };

struct doca_ctx *dc_graph_item_ctx(void)
{
	return &item_ctx;
}

static doca_error_t node_finish(struct dc_ginode *n, doca_error_t st, union doca_data res);

/*
 * A new run: node states of older runs read NOT_STARTED (generation), and
 * parents_left needs no reset, since every node re-arms it when it starts,
 * unless the last run failed and left nodes unstarted.
 */
static void inst_reset(struct doca_graph_instance *inst, struct doca_graph_instance *top, struct dc_ginode *parent)
{
	inst->top = top;
	inst->parent = parent;
	inst->busy = true;
	inst->running = 0;
	inst->num_failed = 0;
	inst->status = DOCA_SUCCESS;
	inst->gen++;
	if (!inst->rearm)
		return;
	for (uint32_t i = 0; i < inst->graph->num_nodes; i++)
		inst->nodes[i].parents_left = inst->nodes[i].node->num_parents;
	inst->rearm = false;
}

static void sub_start(struct doca_graph_instance *sub, struct dc_ginode *parent, bool at_submit);

/* at_submit: a root started by submit, whose job already passed its context's job_check. */
static void node_start(struct dc_ginode *n, bool at_submit)
{
	struct doca_graph_instance *top = n->inst->top;

	n->state = DOCA_GRAPH_INSTANCE_NODE_STATE_STARTED;
	n->gen = n->inst->gen;
	n->parents_left = n->node->num_parents;
	n->inst->running++;
	if (n->node->kind == DC_GNODE_SUB) {
		sub_start(n->sub, n, at_submit);
		return;
	}
	n->checked = at_submit;
	n->next_ready = top->ready;
	top->ready = n;
}

static void sub_start(struct doca_graph_instance *sub, struct dc_ginode *parent, bool at_submit)
{
	const struct doca_graph *g = sub->graph;

	inst_reset(sub, parent->inst->top, parent);
	/* A started graph has a root that is a context node or leads to one, so running never stays 0. */
	for (uint32_t i = 0; i < g->num_roots; i++)
		node_start(&sub->nodes[g->roots[i]], at_submit);
}

static doca_error_t inst_finish(struct doca_graph_instance *inst)
{
	struct dc_ginode *parent = inst->parent;
	union doca_data res = { .u64 = (uint64_t)inst->status };

	inst->busy = false;
	inst->rearm = inst->status != DOCA_SUCCESS;
	if (parent == NULL) {
		inst->wq_slot->inflight--;
		dc_workq_unreserve(inst->wq, inst->units);
		inst->wq = NULL;
		return inst->status;
	}
	inst->parent = NULL;
	if (parent->ev != NULL)
		*parent->ev = (struct doca_event){ .type = DOCA_GRAPH_JOB, .user_data.ptr = inst, .result = res };
	return node_finish(parent, inst->status, res);
}

static void children_release(struct dc_ginode *n)
{
	const struct doca_graph_node *node = n->node;

	for (uint32_t i = 0; i < node->num_children; i++) {
		struct dc_ginode *c = &n->inst->nodes[node->children[i]];

		if (--c->parents_left == 0)
			node_start(c, false);
	}
}

/* Returns DC_JOB_NO_EVENT, or the status of the submitted instance when this completed it. */
static doca_error_t node_finish(struct dc_ginode *n, doca_error_t st, union doca_data res)
{
	struct doca_graph_instance *inst = n->inst;

	n->result = res;
	if (st == DOCA_SUCCESS) {
		n->state = DOCA_GRAPH_INSTANCE_NODE_STATE_COMPLETED;
		if (inst->status == DOCA_SUCCESS)
			children_release(n);
	} else {
		n->state = DOCA_GRAPH_INSTANCE_NODE_STATE_ERROR;
		inst->num_failed++;
		if (inst->status == DOCA_SUCCESS)
			inst->status = st;
	}
	/* Children started above hold the instance, so it completes only with its last running node. */
	if (--inst->running != 0)
		return DC_JOB_NO_EVENT;
	return inst_finish(inst);
}

/* The job of a context node: checked once per run (the content may have changed since submit), then run. */
static doca_error_t ctx_node_run(struct dc_ginode *n, union doca_data *res)
{
	struct doca_job *job = n->job;
	struct doca_ctx *ctx = job->ctx;
	doca_error_t st;

	if (!n->checked) {
		if (ctx != n->node->ctx || job->type != n->node->job_type)
			st = DOCA_ERROR_INVALID_VALUE;
		else
			st = ctx->ops->job_check(ctx, job);
		if (st != DOCA_SUCCESS) {
			res->u64 = (uint64_t)st;
			return st; /* AGAIN: the context cannot take it yet; the node is retried */
		}
		n->checked = true;
	}
	st = ctx->ops->job_exec(ctx, job, res);
	if (st != DOCA_ERROR_AGAIN && n->ev != NULL)
		*n->ev = (struct doca_event){ .type = job->type, .user_data = job->user_data, .result = *res };
	return st;
}

/* Runs a context or user node; DOCA_ERROR_AGAIN when its job cannot complete yet. */
static doca_error_t node_run(struct dc_ginode *n, union doca_data *res)
{
	doca_error_t st;

	if (n->node->kind == DC_GNODE_CTX)
		return ctx_node_run(n, res);
	st = n->node->cb(n->cookie, n->ev);
	if (st == DOCA_ERROR_AGAIN) /* AGAIN would mean "run me again" to the work queue */
		st = DOCA_ERROR_UNEXPECTED;
	res->u64 = (uint64_t)st;
	return st;
}

/* Runs the released nodes until none is left (or the instance completed). */
static doca_error_t ready_drain(struct doca_graph_instance *top, struct doca_workq *wq)
{
	doca_error_t ret = DC_JOB_NO_EVENT;

	while (top->ready != NULL && ret == DC_JOB_NO_EVENT) {
		struct dc_ginode *n = top->ready;
		union doca_data res = { .u64 = 0 };
		doca_error_t st;

		top->ready = n->next_ready;
		st = node_run(n, &res);
		if (st == DOCA_ERROR_AGAIN) {
			n->item.user_data = top->user_data; /* the item that completes the instance carries its event */
			dc_workq_item_push(wq, &item_ctx, &n->item); /* on its reserved unit of depth */
			continue;
		}
		ret = node_finish(n, st, res);
	}
	return ret;
}

/* A node whose job could not complete yet, retried from the work queue. */
static doca_error_t node_item_exec(struct dc_ginode *n)
{
	struct doca_graph_instance *top = n->inst->top;
	union doca_data res = { .u64 = 0 };
	doca_error_t st;

	st = node_run(n, &res);
	if (st == DOCA_ERROR_AGAIN)
		return st;
	dc_workq_item_done(top->wq);
	st = node_finish(n, st, res);
	return st == DC_JOB_NO_EVENT ? ready_drain(top, top->wq) : st;
}

static doca_error_t item_exec(struct doca_ctx *ctx, const struct doca_job *job, union doca_data *result)
{
	struct doca_graph_instance *top;
	doca_error_t st;

	(void)ctx;
	if (job->flags == DC_GITEM_NODE) {
		st = node_item_exec(dc_container_of(job, struct dc_ginode, item));
		if (st == DOCA_ERROR_AGAIN)
			return st;
	} else {
		top = dc_container_of(job, struct doca_graph_instance, item);
		dc_workq_item_done(top->wq);
		st = ready_drain(top, top->wq);
	}
	if (st != DC_JOB_NO_EVENT)
		result->u64 = (uint64_t)st;
	return st;
}

/* ---- submit ---- */

/* Every node has its data and no sub-instance runs elsewhere; sums the depth units the run needs. */
static doca_error_t inst_validate(const struct doca_graph_instance *inst, uint32_t *units)
{
	doca_error_t ret;

	for (uint32_t i = 0; i < inst->graph->num_nodes; i++) {
		const struct dc_ginode *n = &inst->nodes[i];

		if (!n->has_data) {
			DC_ERR("graph node %u has no data", i);
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
		ret = root_check(&inst->nodes[g->roots[i]]);
	return ret;
}

static doca_error_t root_check(const struct dc_ginode *n)
{
	const struct doca_job *job = n->job;

	switch (n->node->kind) {
	case DC_GNODE_CTX:
		if (job->ctx != n->node->ctx || job->type != n->node->job_type)
			return DOCA_ERROR_INVALID_VALUE;
		return job->ctx->ops->job_check(job->ctx, job);
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

static doca_error_t submit_check(struct doca_workq *wq, struct doca_graph_instance *inst, struct dc_graph_wq **slot,
				 uint32_t *units)
{
	doca_error_t ret = DOCA_SUCCESS;

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
	*units = 0;
	if (inst->graph->num_subs == 0 && inst->num_with_data == inst->graph->num_nodes)
		*units = inst->num_with_data; /* the common case needs no walk */
	else
		ret = inst_validate(inst, units);
	if (ret != DOCA_SUCCESS)
		return ret;
	ret = roots_check(inst);
	if (ret != DOCA_SUCCESS)
		return ret;
	return dc_workq_reserve(wq, *units);
}

doca_error_t doca_workq_graph_submit(struct doca_workq *workq, struct doca_graph_instance *graph_instance,
				     union doca_data user_data)
{
	struct doca_graph_instance *inst = graph_instance;
	struct dc_graph_wq *slot;
	const struct doca_graph *g;
	uint32_t units;
	doca_error_t ret;

	if (workq == NULL || inst == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	ret = submit_check(workq, inst, &slot, &units);
	if (ret != DOCA_SUCCESS)
		return ret;
	g = inst->graph;
	inst_reset(inst, inst, NULL);
	inst->wq = workq;
	inst->wq_slot = slot;
	inst->units = units;
	inst->user_data = user_data;
	inst->item.user_data = user_data;
	inst->ready = NULL;
	slot->inflight++;
	for (uint32_t i = 0; i < g->num_roots; i++)
		node_start(&inst->nodes[g->roots[i]], true);
	dc_workq_item_push(workq, &item_ctx, &inst->item);
	return DOCA_SUCCESS;
}
