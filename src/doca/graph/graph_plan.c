/*
 * doca_graph plan — what doca_graph_start computes once, so that running an
 * instance never walks the graph: a topological order of the nodes whose
 * prefix is the roots, and each node's position in it.
 */
#include <stdlib.h>

#include "graph_priv.h"

/* Kahn's algorithm seeded with the roots in index order; the graph is acyclic (dependencies refuse cycles). */
static void order_fill(struct doca_graph *graph, uint32_t *parents_left)
{
	uint32_t head = 0, tail = 0;

	for (uint32_t i = 0; i < graph->num_nodes; i++) {
		parents_left[i] = graph->nodes[i]->num_parents;
		if (parents_left[i] == 0)
			graph->order[tail++] = i;
	}
	graph->num_roots = tail;
	while (head < tail) {
		const struct doca_graph_node *n = graph->nodes[graph->order[head++]];

		for (uint32_t i = 0; i < n->num_children; i++)
			if (--parents_left[n->children[i]] == 0)
				graph->order[tail++] = n->children[i];
	}
	for (uint32_t i = 0; i < graph->num_nodes; i++)
		graph->pos[graph->order[i]] = i;
}

doca_error_t dc_graph_plan(struct doca_graph *graph)
{
	uint32_t *parents_left = malloc(graph->num_nodes * sizeof(*parents_left));

	graph->order = malloc(graph->num_nodes * sizeof(*graph->order));
	graph->pos = malloc(graph->num_nodes * sizeof(*graph->pos));
	if (parents_left == NULL || graph->order == NULL || graph->pos == NULL) {
		free(parents_left);
		dc_graph_plan_free(graph);
		return DOCA_ERROR_NO_MEMORY;
	}
	order_fill(graph, parents_left);
	free(parents_left);
	graph->num_subs = 0;
	for (uint32_t i = 0; i < graph->num_nodes; i++)
		graph->num_subs += graph->nodes[i]->kind == DC_GNODE_SUB;
	return DOCA_SUCCESS;
}

void dc_graph_plan_free(struct doca_graph *graph)
{
	free(graph->order);
	free(graph->pos);
	graph->order = NULL;
	graph->pos = NULL;
	graph->num_roots = 0;
	graph->num_subs = 0;
}
