/*
 * graph_priv — DOCA graph objects shared by the files of src/doca/graph.
 *
 * graph.c       graph life cycle: create/destroy, start/stop
 * graph_node.c  nodes and dependencies, cycle refusal
 * graph_plan.c  the order instances run in, computed at start
 * graph_workq.c adding graphs to work queues (context pins)
 * graph_inst.c  instances: create/destroy, node data, status getters
 * graph_submit.c doca_workq_graph_submit: the checks, then queueing
 * graph_run.c   the run of an instance on a work queue (docs/graph.md)
 */
#ifndef GRAPH_PRIV_H_
#define GRAPH_PRIV_H_

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dc_ctx.h"
#include "doca_graph.h"

#define DC_GRAPH_MAX_WORKQS 16

#define dc_container_of(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

enum dc_gnode_kind {
	DC_GNODE_CTX,
	DC_GNODE_USER,
	DC_GNODE_SUB,
};

struct doca_graph_node {
	struct doca_graph *graph;
	uint32_t idx; /* index in graph->nodes and in an instance's nodes */
	enum dc_gnode_kind kind;
	int job_type;		       /* DC_GNODE_CTX */
	struct doca_ctx *ctx;	       /* DC_GNODE_CTX */
	doca_graph_user_node_cb_t cb;  /* DC_GNODE_USER */
	struct doca_graph *sub;	       /* DC_GNODE_SUB */
	uint32_t num_parents;
	uint32_t num_children;
	uint32_t cap_children;
	uint32_t *children; /* node indices */
};

/* One work queue the graph is added to. Slots are never moved, so a submitted instance can keep a pointer. */
struct dc_graph_wq {
	_Atomic(struct doca_workq *) wq; /* NULL: free slot; read by submit without the lock */
	uint32_t inflight;		 /* submitted instances, touched only by the work queue's thread */
};

struct doca_graph {
	bool started;
	uint32_t num_nodes;
	uint32_t cap_nodes;
	struct doca_graph_node **nodes;
	/* The plan, computed at start (graph_plan.c). */
	uint32_t *order;    /* node indices in a topological order; the roots come first */
	uint32_t *pos;	    /* pos[node index]: its place in order */
	uint32_t num_roots; /* the first num_roots entries of order */
	uint32_t num_subs;  /* sub-graph nodes */
	uint32_t num_instances;
	uint32_t num_parent_refs;     /* sub-graph nodes (of any graph) pointing to this graph */
	uint32_t num_started_parents; /* ... of started graphs: this graph must stay started */
	struct dc_graph_wq wqs[DC_GRAPH_MAX_WORKQS];
};

/* A node of an instance: its data and its run state. */
struct dc_ginode {
	struct doca_job item; /* what the work queue holds while the node waits for its job to be able to run */
	struct doca_graph_instance *inst;
	const struct doca_graph_node *node;
	struct dc_ginode *next_ready; /* link in the submitted instance's ready list */
	uint32_t parents_left;	      /* re-armed when the node starts, ready for the next run */
	uint32_t gen;		      /* run of the instance that state belongs to */
	enum doca_graph_instance_node_state state;
	bool checked; /* job already passed its context's job_check in this run */
	bool has_data;
	union doca_data result;
	struct doca_job *job;		  /* DC_GNODE_CTX */
	void *cookie;			  /* DC_GNODE_USER */
	struct doca_graph_instance *sub;  /* DC_GNODE_SUB */
	struct doca_event *ev;		  /* optional */
};

/* doca_job.flags of the work items: which struct embeds the item. */
enum dc_graph_item_kind {
	DC_GITEM_NODE,	   /* a node (struct dc_ginode) whose job must be retried */
	DC_GITEM_INSTANCE, /* a submitted instance (struct doca_graph_instance) whose roots wait */
};

struct doca_graph_instance {
	struct doca_job item; /* queued by submit: runs the instance's ready nodes */
	struct doca_graph *graph;
	struct doca_graph_instance *top; /* the submitted instance this one runs in (itself when submitted) */
	struct dc_ginode *parent;	 /* running as a sub-graph: the node it completes */
	struct dc_ginode *owner;	 /* the sub-graph node whose data this instance is */
	struct doca_workq *wq;		 /* top only: where it runs */
	struct dc_ginode *ready;	 /* top only: released nodes to run before returning to the work queue */
	struct dc_graph_wq *wq_slot;	 /* top only */
	bool busy;			 /* submitted, or running as a sub-graph */
	bool rearm;			 /* the last run failed: some parents_left were left part-way */
	bool in_order;			 /* top only: this run goes node by node in plan order (graph_run.c) */
	uint32_t gen;			 /* current run; a node of an older run reads NOT_STARTED */
	uint32_t num_with_data;
	uint32_t running;		 /* nodes started and not finished */
	uint32_t units;			 /* top only: depth held on wq */
	uint32_t num_failed;
	doca_error_t status;
	union doca_data user_data;
	struct dc_ginode nodes[]; /* in plan order (graph->order): nodes[graph->pos[node->idx]] is node's */
};

/* Control-path lock of all graphs (graph.c): graphs reference each other as sub-graphs. */
void dc_graph_lock(void);
void dc_graph_unlock(void);

/* graph_node.c */
void dc_graph_nodes_free(struct doca_graph *graph);

/* graph_plan.c */
doca_error_t dc_graph_plan(struct doca_graph *graph);
void dc_graph_plan_free(struct doca_graph *graph);

/* graph_workq.c */
struct dc_graph_wq *dc_graph_wq_find(struct doca_graph *graph, const struct doca_workq *wq);
bool dc_graph_has_workqs(const struct doca_graph *graph);

/* graph_run.c: the hidden context whose job_exec runs instance nodes; the start of a submitted instance. */
struct doca_ctx *dc_graph_item_ctx(void);
void dc_graph_run_start(struct doca_graph_instance *inst, struct doca_workq *wq, struct dc_graph_wq *slot,
			uint32_t units, union doca_data user_data);

/* graph_inst.c */
struct dc_ginode *dc_ginode_of(const struct doca_graph_instance *inst, const struct doca_graph_node *node);

/* A context node's job: still of the node's type and context (it is the user's memory), and accepted by it. */
static inline doca_error_t dc_ginode_job_check(const struct dc_ginode *n)
{
	const struct doca_job *job = n->job;
	size_t size; /* a node's job stays the graph's: nothing is copied */

	if (job->ctx != n->node->ctx || job->type != n->node->job_type)
		return DOCA_ERROR_INVALID_VALUE;
	return job->ctx->ops->job_check(job->ctx, job, &size);
}

/* A node's state in the instance's current run. */
static inline enum doca_graph_instance_node_state dc_ginode_state(const struct dc_ginode *n)
{
	const struct doca_graph_instance *inst = n->inst;

	if (n->gen == inst->gen)
		return n->state;
	/* In plan order, the roots started by submit are marked only when they run. */
	if (inst->busy && inst->in_order && (uint32_t)(n - inst->nodes) < inst->graph->num_roots)
		return DOCA_GRAPH_INSTANCE_NODE_STATE_STARTED;
	return DOCA_GRAPH_INSTANCE_NODE_STATE_NOT_STARTED;
}

#endif /* GRAPH_PRIV_H_ */
