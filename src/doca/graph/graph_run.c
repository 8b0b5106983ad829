/*
 * doca_graph run — an instance on a work queue (design: docs/graph.md).
 *
 * Submit (graph_submit.c) queues one work item, embedded in the instance, on
 * the work queue: a job of a hidden context. Inside
 * doca_workq_progress_retrieve the hidden context's job_exec runs the nodes.
 *
 * A graph without sub-graph nodes runs in plan order: its nodes one after the
 * other in the topological order computed at start, as long as each completes
 * at once — the common case costs a loop, no bookkeeping.
 *
 * Otherwise, and from the first node whose job cannot complete yet, the
 * instance is a small state machine over its preallocated nodes: started
 * nodes wait on the instance's ready list (a sub-graph node puts the roots of
 * its sub-instance there) and run one after the other (a context node: its
 * context's job_exec; a user node: the callback); finishing one puts every
 * child whose parents have all finished on the ready list, and it runs in the
 * same call (small work runs inline). A job that cannot complete yet
 * (DOCA_ERROR_AGAIN) goes back to the work queue as an item of its own node.
 * `running` counts the started, unfinished nodes of an instance; when it drops
 * to zero the instance is complete: a sub-instance finishes its sub-graph
 * node, the submitted instance returns its status, which the work queue
 * reports as the one DOCA_GRAPH_JOB event. Otherwise the item returns
 * DC_JOB_NO_EVENT. After a failure no further node starts; the instance
 * completes once the nodes already running finished.
 */
#include "dc_log.h"
#include "graph_priv.h"

static doca_error_t item_exec(struct doca_ctx *ctx, const struct doca_job *job, union doca_data *result);
static struct hw_bell *item_bell(struct doca_ctx *ctx, const struct doca_job *job);

static const struct dc_ctx_ops item_ops = {
	.name = "graph",
	.job_exec = item_exec,
	.job_bell = item_bell,
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
	inst->in_order = false; /* set by dc_graph_run_start for a submitted instance */
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
		node_start(&sub->nodes[i], at_submit);
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
	const uint32_t *pos = n->inst->graph->pos;

	for (uint32_t i = 0; i < node->num_children; i++) {
		struct dc_ginode *c = &n->inst->nodes[pos[node->children[i]]];

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
static inline __attribute__((always_inline)) doca_error_t ctx_node_run(struct dc_ginode *n, union doca_data *res)
{
	struct doca_job *job = n->job;
	struct doca_ctx *ctx = job->ctx;
	doca_error_t st;

	if (!n->checked) {
		st = dc_ginode_job_check(n);
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
static inline __attribute__((always_inline)) doca_error_t node_run(struct dc_ginode *n, union doca_data *res)
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

/*
 * In plan order: a graph without sub-graph nodes runs its nodes one after the
 * other in its plan's topological order (every parent finished first), with
 * no release counting and no ready list, as long as each node completes at
 * once. A node whose job cannot complete yet hands the run over to the state
 * machine above, so that nodes not depending on it go on meanwhile.
 */
static doca_error_t to_state_machine(struct doca_graph_instance *inst, uint32_t at)
{
	const struct doca_graph *g = inst->graph;
	struct dc_ginode *waiting = &inst->nodes[at];

	inst->in_order = false;
	for (uint32_t i = 0; i < g->num_nodes; i++)
		inst->nodes[i].parents_left = inst->nodes[i].node->num_parents;
	for (uint32_t i = 0; i < at; i++) { /* the completed nodes release their children not run yet */
		const struct doca_graph_node *done = inst->nodes[i].node;

		for (uint32_t k = 0; k < done->num_children; k++) {
			uint32_t c = g->pos[done->children[k]];

			if (c > at)
				inst->nodes[c].parents_left--;
		}
	}
	inst->running = 1;
	waiting->item.user_data = inst->user_data;
	dc_workq_item_push(inst->wq, &item_ctx, &waiting->item);
	for (uint32_t i = at + 1; i < g->num_nodes; i++) {
		struct dc_ginode *n = &inst->nodes[i];

		if (n->parents_left == 0 && (i < g->num_roots || inst->status == DOCA_SUCCESS))
			node_start(n, i < g->num_roots); /* after a failure only the roots, started by submit */
	}
	return ready_drain(inst, inst->wq);
}

static doca_error_t in_order_run(struct doca_graph_instance *inst)
{
	const struct doca_graph *g = inst->graph;

	for (uint32_t i = 0; i < g->num_nodes; i++) {
		struct dc_ginode *n = &inst->nodes[i];
		union doca_data res = { .u64 = 0 };
		doca_error_t st;

		if (inst->status != DOCA_SUCCESS && i >= g->num_roots)
			break; /* after a failure only the roots, started by submit, still run */
		n->state = DOCA_GRAPH_INSTANCE_NODE_STATE_STARTED;
		n->gen = inst->gen;
		n->checked = i < g->num_roots; /* roots passed job_check at submit */
		st = node_run(n, &res);
		if (st == DOCA_ERROR_AGAIN)
			return to_state_machine(inst, i);
		n->result = res;
		if (st == DOCA_SUCCESS) {
			n->state = DOCA_GRAPH_INSTANCE_NODE_STATE_COMPLETED;
			continue;
		}
		n->state = DOCA_GRAPH_INSTANCE_NODE_STATE_ERROR;
		inst->num_failed++;
		if (inst->status == DOCA_SUCCESS)
			inst->status = st;
	}
	return inst_finish(inst);
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
		st = top->in_order ? in_order_run(top) : ready_drain(top, top->wq);
	}
	if (st != DC_JOB_NO_EVENT)
		result->u64 = (uint64_t)st;
	return st;
}

/* A waiting node's item waits on the bell of its node's job. */
static struct hw_bell *item_bell(struct doca_ctx *ctx, const struct doca_job *job)
{
	const struct dc_ginode *n;
	struct doca_ctx *jctx;

	(void)ctx;
	if (job->flags != DC_GITEM_NODE)
		return NULL;
	n = dc_container_of(job, struct dc_ginode, item);
	if (n->node->kind != DC_GNODE_CTX)
		return NULL;
	jctx = n->job->ctx;
	return jctx->ops->job_bell != NULL ? jctx->ops->job_bell(jctx, n->job) : NULL;
}

/* The run of a submitted instance whose item submit has just queued. */
void dc_graph_run_start(struct doca_graph_instance *inst, struct doca_workq *wq, struct dc_graph_wq *slot,
			uint32_t units, union doca_data user_data)
{
	const struct doca_graph *g = inst->graph;

	inst_reset(inst, inst, NULL);
	inst->wq = wq;
	inst->wq_slot = slot;
	inst->units = units;
	inst->user_data = user_data;
	inst->item.user_data = user_data;
	inst->ready = NULL;
	inst->in_order = g->num_subs == 0;
	slot->inflight++;
	if (!inst->in_order)
		for (uint32_t i = 0; i < g->num_roots; i++)
			node_start(&inst->nodes[i], true);
}
