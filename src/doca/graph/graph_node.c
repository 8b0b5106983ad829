/*
 * doca_graph nodes — context, user and sub-graph nodes, dependencies, and the
 * refusal of cycles (inside a graph and through sub-graphs).
 */
#include <stdlib.h>
#include <string.h>

#include "dc_log.h"
#include "graph_priv.h"

static doca_error_t nodes_grow(struct doca_graph *graph)
{
	uint32_t cap = graph->cap_nodes == 0 ? 8 : graph->cap_nodes * 2;
	struct doca_graph_node **nodes;

	if (graph->num_nodes < graph->cap_nodes)
		return DOCA_SUCCESS;
	nodes = realloc(graph->nodes, cap * sizeof(*nodes));
	if (nodes == NULL)
		return DOCA_ERROR_NO_MEMORY;
	graph->nodes = nodes;
	graph->cap_nodes = cap;
	return DOCA_SUCCESS;
}

/* Adds a node of the given kind (a root until a dependency points to it); called under the graph lock. */
static doca_error_t node_add(struct doca_graph *graph, enum dc_gnode_kind kind, struct doca_graph_node **node)
{
	struct doca_graph_node *n;

	if (graph->started)
		return DOCA_ERROR_BAD_STATE;
	if (nodes_grow(graph) != DOCA_SUCCESS)
		return DOCA_ERROR_NO_MEMORY;
	n = calloc(1, sizeof(*n));
	if (n == NULL)
		return DOCA_ERROR_NO_MEMORY;
	n->graph = graph;
	n->kind = kind;
	n->idx = graph->num_nodes;
	graph->nodes[graph->num_nodes++] = n;
	*node = n;
	return DOCA_SUCCESS;
}

void dc_graph_nodes_free(struct doca_graph *graph)
{
	for (uint32_t i = 0; i < graph->num_nodes; i++) {
		struct doca_graph_node *n = graph->nodes[i];

		if (n->kind == DC_GNODE_SUB)
			n->sub->num_parent_refs--;
		free(n->children);
		free(n);
	}
	free(graph->nodes);
	graph->nodes = NULL;
	graph->num_nodes = graph->cap_nodes = 0;
}

doca_error_t doca_graph_ctx_node_create(struct doca_graph *graph, int job_type, const struct doca_ctx *ctx,
					struct doca_graph_node **node)
{
	struct doca_graph_node *n;
	doca_error_t ret;

	if (graph == NULL || ctx == NULL || node == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	dc_graph_lock();
	ret = node_add(graph, DC_GNODE_CTX, &n);
	if (ret == DOCA_SUCCESS) {
		n->job_type = job_type;
		n->ctx = (struct doca_ctx *)ctx; /* the node keeps the context to run jobs on it */
		*node = n;
	}
	dc_graph_unlock();
	return ret;
}

doca_error_t doca_graph_user_node_create(struct doca_graph *graph, doca_graph_user_node_cb_t cb,
					 struct doca_graph_node **node)
{
	struct doca_graph_node *n;
	doca_error_t ret;

	if (graph == NULL || cb == NULL || node == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	dc_graph_lock();
	ret = node_add(graph, DC_GNODE_USER, &n);
	if (ret == DOCA_SUCCESS) {
		n->cb = cb;
		*node = n;
	}
	dc_graph_unlock();
	return ret;
}

/* Whether graph runs target, directly or through nested sub-graphs (sub-graphs never form a cycle). */
static bool graph_contains(const struct doca_graph *graph, const struct doca_graph *target)
{
	for (uint32_t i = 0; i < graph->num_nodes; i++) {
		const struct doca_graph_node *n = graph->nodes[i];

		if (n->kind == DC_GNODE_SUB && (n->sub == target || graph_contains(n->sub, target)))
			return true;
	}
	return false;
}

static doca_error_t sub_node_add(struct doca_graph *graph, struct doca_graph *sub, struct doca_graph_node **node)
{
	struct doca_graph_node *n;
	doca_error_t ret;

	if (sub == graph || graph_contains(sub, graph)) {
		DC_ERR("a graph cannot contain itself, directly or through sub-graphs");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (graph->started || !sub->started)
		return DOCA_ERROR_BAD_STATE;
	ret = node_add(graph, DC_GNODE_SUB, &n);
	if (ret != DOCA_SUCCESS)
		return ret;
	n->sub = sub;
	sub->num_parent_refs++;
	*node = n;
	return DOCA_SUCCESS;
}

doca_error_t doca_graph_sub_graph_node_create(struct doca_graph *graph, struct doca_graph *sub_graph,
					      struct doca_graph_node **node)
{
	doca_error_t ret;

	if (graph == NULL || sub_graph == NULL || node == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	dc_graph_lock();
	ret = sub_node_add(graph, sub_graph, node);
	dc_graph_unlock();
	return ret;
}

/* Whether target is reachable from start along dependencies (iterative: graphs can be long chains). */
static doca_error_t reachable(const struct doca_graph *graph, const struct doca_graph_node *start,
			      const struct doca_graph_node *target, bool *found)
{
	uint32_t *stack = malloc(graph->num_nodes * sizeof(*stack));
	uint8_t *seen = calloc(graph->num_nodes, 1);
	uint32_t top = 0;

	*found = false;
	if (stack == NULL || seen == NULL) {
		free(stack);
		free(seen);
		return DOCA_ERROR_NO_MEMORY;
	}
	stack[top++] = start->idx;
	seen[start->idx] = 1;
	while (top != 0 && !*found) {
		const struct doca_graph_node *n = graph->nodes[stack[--top]];

		for (uint32_t i = 0; i < n->num_children; i++) {
			uint32_t c = n->children[i];

			if (c == target->idx)
				*found = true;
			if (!seen[c]) {
				seen[c] = 1;
				stack[top++] = c;
			}
		}
	}
	free(stack);
	free(seen);
	return DOCA_SUCCESS;
}

static bool has_edge(const struct doca_graph_node *from, const struct doca_graph_node *to)
{
	for (uint32_t i = 0; i < from->num_children; i++)
		if (from->children[i] == to->idx)
			return true;
	return false;
}

static doca_error_t edge_add(struct doca_graph_node *from, struct doca_graph_node *to)
{
	if (from->num_children == from->cap_children) {
		uint32_t cap = from->cap_children == 0 ? 4 : from->cap_children * 2;
		uint32_t *c = realloc(from->children, cap * sizeof(*c));

		if (c == NULL)
			return DOCA_ERROR_NO_MEMORY;
		from->children = c;
		from->cap_children = cap;
	}
	from->children[from->num_children++] = to->idx;
	to->num_parents++;
	return DOCA_SUCCESS;
}

static doca_error_t dependency_add(struct doca_graph *graph, struct doca_graph_node *from,
				   struct doca_graph_node *to)
{
	doca_error_t ret;
	bool cycle;

	if (graph->started)
		return DOCA_ERROR_BAD_STATE;
	if (from == to) {
		DC_ERR("a node cannot depend on itself");
		return DOCA_ERROR_NOT_PERMITTED;
	}
	if (has_edge(from, to))
		return DOCA_SUCCESS; /* the dependency exists already */
	ret = reachable(graph, to, from, &cycle);
	if (ret != DOCA_SUCCESS)
		return ret;
	if (cycle) {
		DC_ERR("dependency %u -> %u would close a cycle", from->idx, to->idx);
		return DOCA_ERROR_NOT_PERMITTED;
	}
	return edge_add(from, to);
}

doca_error_t doca_graph_add_dependency(struct doca_graph *graph, struct doca_graph_node *from,
				       struct doca_graph_node *to)
{
	doca_error_t ret;

	if (graph == NULL || from == NULL || to == NULL)
		return DOCA_ERROR_INVALID_VALUE;
	if (from->graph != graph || to->graph != graph) {
		DC_ERR("both nodes must belong to the graph");
		return DOCA_ERROR_INVALID_VALUE;
	}
	dc_graph_lock();
	ret = dependency_add(graph, from, to);
	dc_graph_unlock();
	return ret;
}
