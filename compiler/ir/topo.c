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
  int p = g->values[v].producer;
  if (p < 0 || p >= g->n_nodes || g->nodes[p].dead) return -1;
  return p;
}

int cs_graph_topo_order(const cs_graph *g, int *order) {
  int nn = g->n_nodes;
  int *indeg = calloc((size_t)nn + 1, sizeof(int));
  int *start = calloc((size_t)nn + 2, sizeof(int));
  int *heap = calloc((size_t)nn + 1, sizeof(int));
  int n_edges = 0;
  for (int i = 0; i < nn; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->n_inputs; j++) n_edges += live_producer(g, n, j) >= 0;
  }
  int *succ = calloc((size_t)n_edges + 1, sizeof(int));
  if (!indeg || !start || !heap || !succ) {
    fputs("cstatic: out of memory\n", stderr);
    abort();
  }
  /* Successor lists in CSR form: start[p] .. start[p+1]. */
  for (int i = 0; i < nn; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->n_inputs; j++) {
      int p = live_producer(g, n, j);
      if (p >= 0) {
        start[p + 1]++;
        indeg[i]++;
      }
    }
  }
  for (int i = 0; i < nn; i++) start[i + 1] += start[i];
  int *fill = calloc((size_t)nn + 1, sizeof(int));
  if (!fill) {
    fputs("cstatic: out of memory\n", stderr);
    abort();
  }
  for (int i = 0; i < nn; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->n_inputs; j++) {
      int p = live_producer(g, n, j);
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
    for (int e = start[i]; e < start[i + 1]; e++)
      if (--indeg[succ[e]] == 0) heap_push(heap, &hn, succ[e]);
  }
  free(indeg);
  free(start);
  free(heap);
  free(succ);
  free(fill);
  return count == live ? count : -1;
}
