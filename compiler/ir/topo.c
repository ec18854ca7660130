/*
 * topo.c — topological order of the live nodes (Kahn's algorithm).
 *
 * Among the nodes that are ready, the one with the smallest id goes first
 * (a binary min-heap), so the order is stable: an already sorted graph
 * comes back unchanged.
 */
#include "ir.h"

#include <stdlib.h>

static void heap_push(int *h, int *n, int x) {
  int i = (*n)++;
  h[i] = x;
  while (i > 0 && h[(i - 1) / 2] > h[i]) {
    int p = (i - 1) / 2, t = h[p];
    h[p] = h[i];
    h[i] = t;
    i = p;
  }
}

static int heap_pop(int *h, int *n) {
  int top = h[0];
  h[0] = h[--(*n)];
  for (int i = 0;;) {
    int l = 2 * i + 1, r = l + 1, m = i;
    if (l < *n && h[l] < h[m]) m = l;
    if (r < *n && h[r] < h[m]) m = r;
    if (m == i) break;
    int t = h[m];
    h[m] = h[i];
    h[i] = t;
    i = m;
  }
  return top;
}

/* The live node that produces input j of node n, or -1. */
static int live_producer(const cs_graph *g, const cs_node *n, int j) {
  int v = n->inputs[j];
  if (v < 0 || v >= g->n_values) return -1;
  int p = cs_graph_value(g, v)->producer;
  if (p < 0 || p >= g->n_nodes || g->nodes[p].dead) return -1;
  return p;
}

int cs_graph_topo_order(const cs_graph *g, int *order) {
  int nn = g->n_nodes;
  size_t n_in = 0;
  for (int i = 0; i < nn; i++)
    if (!g->nodes[i].dead) n_in += (size_t)g->nodes[i].n_inputs;
  int *indeg = calloc((size_t)nn + 1, sizeof(int));
  int *start = calloc((size_t)nn + 2, sizeof(int));
  int *heap = calloc((size_t)nn + 1, sizeof(int));
  int *fill = calloc((size_t)nn + 1, sizeof(int));
  int *edge = malloc(sizeof(int) * (n_in + 1)); /* each input's live producer, once */
  int *succ = malloc(sizeof(int) * (n_in + 1));
  if (!indeg || !start || !heap || !fill || !edge || !succ) {
    free(indeg);
    free(start);
    free(heap);
    free(fill);
    free(edge);
    free(succ);
    cs_error(CS_ERR_NOMEM, "out of memory (ordering %d nodes)", nn);
    return -2;
  }
  /* Successor lists in CSR form: start[p] .. start[p+1]. */
  size_t e = 0;
  for (int i = 0; i < nn; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->n_inputs; j++) {
      int p = edge[e++] = live_producer(g, n, j);
      if (p >= 0) {
        start[p + 1]++;
        indeg[i]++;
      }
    }
  }
  for (int i = 0; i < nn; i++) start[i + 1] += start[i];
  e = 0;
  for (int i = 0; i < nn; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->n_inputs; j++) {
      int p = edge[e++];
      if (p >= 0) succ[start[p] + fill[p]++] = i;
    }
  }

  int hn = 0, count = 0, live = 0;
  for (int i = 0; i < nn; i++) {
    if (g->nodes[i].dead) continue;
    live++;
    if (indeg[i] == 0) heap_push(heap, &hn, i);
  }
  while (hn > 0) {
    int i = heap_pop(heap, &hn);
    order[count++] = i;
    for (int k = start[i]; k < start[i + 1]; k++)
      if (--indeg[succ[k]] == 0) heap_push(heap, &hn, succ[k]);
  }
  free(indeg);
  free(start);
  free(heap);
  free(succ);
  free(fill);
  free(edge);
  return count == live ? count : -1;
}
