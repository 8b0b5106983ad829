/*
 * softdpu — DOCA Graph (DOCA 2.2 work-queue API).
 *
 * A graph is a set of nodes and the dependencies between them:
 *   - context node: runs one job of one context (one job type per node);
 *   - user node: calls an application callback;
 *   - sub-graph node: runs an instance of another (started) graph.
 * A graph needs at least one context node, itself or in a sub-graph, and no
 * cycles. After doca_graph_start it is frozen; it is then added to work
 * queues, and instances are created from it. An instance carries the data of
 * every node (job, cookie, sub-graph instance, optional per-node event) and is
 * submitted with doca_workq_graph_submit. Root nodes start at submit; a node
 * starts once all its parents completed; the instance completes when no node
 * is running any more. Its completion is one event of
 * doca_workq_progress_retrieve: type DOCA_GRAPH_JOB, the user data given at
 * submit, result.u64 = the instance status (DOCA_SUCCESS, or the error of the
 * first node that failed; the nodes depending on a failed node never run).
 * Retrieve returns DOCA_ERROR_AGAIN while only nodes complete.
 */
#ifndef DOCA_GRAPH_H_
#define DOCA_GRAPH_H_

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "doca_compat.h"
#include "doca_ctx.h"
#include "doca_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Type of the event that reports a completed graph instance. */
enum doca_graph_job_types {
	DOCA_GRAPH_JOB = DOCA_ACTION_GRAPH_FIRST + 1,
};

struct doca_graph;
struct doca_graph_node;
struct doca_graph_instance;

/** Creates an empty graph. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_create(struct doca_graph **graph);

/**
 * Destroys a graph and its nodes. DOCA_ERROR_NOT_PERMITTED while instances of
 * it exist, while it is added to a work queue, or while another graph uses it
 * as a sub-graph.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_destroy(struct doca_graph *graph);

/**
 * Adds a context node running jobs of job_type on ctx. The node starts as a
 * root. DOCA_ERROR_BAD_STATE once the graph is started.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_ctx_node_create(struct doca_graph *graph, int job_type, const struct doca_ctx *ctx,
					struct doca_graph_node **node);

/**
 * User node callback: cookie and ev are the ones set with
 * doca_graph_instance_set_user_node_data (ev may be NULL). An error fails
 * the node and the instance.
 */
typedef doca_error_t (*doca_graph_user_node_cb_t)(void *cookie, struct doca_event *ev);

/** Adds a user node calling cb. DOCA_ERROR_BAD_STATE once the graph is started. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_user_node_create(struct doca_graph *graph, doca_graph_user_node_cb_t cb,
					 struct doca_graph_node **node);

/**
 * Adds a node running an instance of sub_graph. DOCA_ERROR_BAD_STATE when
 * graph is started or sub_graph is not; DOCA_ERROR_NOT_PERMITTED when
 * sub_graph is graph or contains it (a cycle).
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_sub_graph_node_create(struct doca_graph *graph, struct doca_graph *sub_graph,
					      struct doca_graph_node **node);

/**
 * Makes to depend on from (to starts after from completed).
 * DOCA_ERROR_BAD_STATE once started; DOCA_ERROR_NOT_PERMITTED when the
 * dependency would close a cycle.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_add_dependency(struct doca_graph *graph, struct doca_graph_node *from,
				       struct doca_graph_node *to);

/**
 * Validates and freezes the graph. DOCA_ERROR_BAD_STATE when already started,
 * when the graph has no context node (itself or in a sub-graph), or when a
 * context of its nodes is not started.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_start(struct doca_graph *graph);

/**
 * Stops the graph. DOCA_ERROR_BAD_STATE when not started;
 * DOCA_ERROR_NOT_PERMITTED while instances exist, while it is added to a work
 * queue, or while a started graph uses it as a sub-graph.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_stop(struct doca_graph *graph);

/**
 * Lets the graph's instances run on workq. The graph must be started and
 * every context it uses (also through sub-graphs) added to workq, else
 * DOCA_ERROR_BAD_STATE; those contexts cannot leave workq until
 * doca_graph_workq_rm. Thread safe.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_workq_add(struct doca_graph *graph, struct doca_workq *workq);

/** Removes the graph from workq. DOCA_ERROR_IN_USE while instances of it run there. Thread safe. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_workq_rm(struct doca_graph *graph, struct doca_workq *workq);

/** Creates an instance of a started graph (DOCA_ERROR_BAD_STATE otherwise). */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_create(const struct doca_graph *graph, struct doca_graph_instance **graph_instance);

/**
 * Destroys an instance. DOCA_ERROR_NOT_PERMITTED while it is submitted or set
 * as the data of a sub-graph node.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_destroy(struct doca_graph_instance *graph_instance);

/**
 * Sets a context node's job (its type and context must match the node's) and
 * optional event (filled with the job's type, user data and result when the
 * node completes). The job must live as long as the instance.
 * DOCA_ERROR_BAD_STATE while submitted; DOCA_ERROR_NOT_PERMITTED for a node of
 * another graph or kind, or a job that does not match it.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_ctx_node_data(struct doca_graph_instance *graph_instance,
						   struct doca_graph_node *node, struct doca_job *job,
						   struct doca_event *ev);

/** Sets a user node's cookie and optional event, both passed to its callback. Errors as above. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_user_node_data(struct doca_graph_instance *graph_instance,
						    struct doca_graph_node *node, void *cookie, struct doca_event *ev);

/**
 * Sets the instance a sub-graph node runs: created from the node's sub-graph,
 * not submitted, not the data of another node (DOCA_ERROR_NOT_PERMITTED).
 * The optional event receives type DOCA_GRAPH_JOB and result.u64 = the
 * sub-instance status.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_set_sub_graph_node_data(struct doca_graph_instance *graph_instance,
							 struct doca_graph_node *node,
							 struct doca_graph_instance *sub_graph_instance,
							 struct doca_event *ev);

/**
 * Submits an instance: its root nodes start. The instance holds one unit of
 * workq's depth per context and user node (counting the nodes of its
 * sub-graphs) until its completion event is retrieved.
 * DOCA_ERROR_INVALID_VALUE for a node without data; DOCA_ERROR_BAD_STATE
 * when the graph is not added to workq; DOCA_ERROR_IN_USE when the instance
 * (or one of its sub-graph instances) is already submitted;
 * DOCA_ERROR_NO_MEMORY when workq has not enough free depth; the error of a
 * root job refused by its context.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_workq_graph_submit(struct doca_workq *workq, struct doca_graph_instance *graph_instance,
				     union doca_data user_data);

/* ---- Status: during the run of an instance or after it ---- */

/** Number of nodes of the instance that failed in its last run. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_get_num_failed_nodes(const struct doca_graph_instance *graph_instance,
						      uint32_t *num_failed_nodes);

/**
 * Fills failed_nodes with up to *num_failed_nodes failed nodes and sets
 * *num_failed_nodes to the number filled.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_get_failed_nodes(const struct doca_graph_instance *graph_instance,
						  const struct doca_graph_node **failed_nodes, uint32_t *num_failed_nodes);

/** State of a node in an instance. */
enum doca_graph_instance_node_state {
	DOCA_GRAPH_INSTANCE_NODE_STATE_NOT_STARTED, /**< Waits for a parent (or never ran). */
	DOCA_GRAPH_INSTANCE_NODE_STATE_STARTED,	    /**< Running. */
	DOCA_GRAPH_INSTANCE_NODE_STATE_COMPLETED,   /**< Completed successfully. */
	DOCA_GRAPH_INSTANCE_NODE_STATE_ERROR,	    /**< Refused or failed. */
};

/** DOCA_ERROR_NOT_PERMITTED when node is not a node of the instance's graph. */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_node_get_state(const struct doca_graph_instance *graph_instance,
						const struct doca_graph_node *node,
						enum doca_graph_instance_node_state *state);

/**
 * Result of a finished node: a context node's job result, or (user and
 * sub-graph nodes) the status in result->u64. DOCA_ERROR_BAD_STATE when the
 * node has not finished; DOCA_ERROR_NOT_PERMITTED on a node mismatch.
 */
__DOCA_EXPERIMENTAL
doca_error_t doca_graph_instance_node_get_result(const struct doca_graph_instance *graph_instance,
						 const struct doca_graph_node *node, union doca_data *result);

#ifdef __cplusplus
}
#endif

#endif /* DOCA_GRAPH_H_ */
