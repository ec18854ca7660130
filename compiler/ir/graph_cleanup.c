/*
 * graph_cleanup.c — dead-code elimination and compaction (id renumbering).
 */
#include "graph_internal.h"

#include <stdlib.h>
#include <string.h>

static void *zalloc(size_t n, size_t size) { return calloc(n ? n : 1, size); }

static int all_outputs_unused(const cs_node *n, const int *uses) {
  for (int j = 0; j < n->n_outputs; j++)
    if (n->outputs[j] >= 0 && uses[n->outputs[j]] > 0) return 0;
  return 1;
}

/* Worklist: removing a node may leave its producers unused in turn. */
cs_status cs_graph_dce(cs_graph *g) {
  int *uses = zalloc((size_t)g->n_values, sizeof(int));
  int *work = zalloc((size_t)g->n_nodes, sizeof(int));
  char *queued = zalloc((size_t)g->n_nodes, 1);
  if (!uses || !work || !queued) {
    free(uses);
    free(work);
    free(queued);
    return cs_error(CS_ERR_NOMEM, "out of memory (dead-code elimination of %d nodes)", g->n_nodes);
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->n_inputs; j++)
      if (n->inputs[j] >= 0 && n->inputs[j] < g->n_values) uses[n->inputs[j]]++;
  }
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] >= 0 && g->outputs[i] < g->n_values) uses[g->outputs[i]]++;

  int top = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    if (!g->nodes[i].dead && all_outputs_unused(&g->nodes[i], uses)) {
      work[top++] = i;
      queued[i] = 1;
    }
  }
  while (top > 0) {
    int id = work[--top];
    cs_node *n = &g->nodes[id];
    if (n->dead) continue;
    cs_graph_remove_node(g, id);
    for (int j = 0; j < n->n_inputs; j++) {
      int v = n->inputs[j];
      if (v < 0 || v >= g->n_values) continue;
      uses[v]--;
      int p = cs_graph_value(g, v)->producer;
      if (p >= 0 && p < g->n_nodes && !queued[p] && !g->nodes[p].dead &&
          all_outputs_unused(&g->nodes[p], uses)) {
        work[top++] = p;
        queued[p] = 1;
      }
    }
  }
  free(uses);
  free(work);
  free(queued);
  return CS_OK;
}

cs_status cs_graph_compact(cs_graph *g) {
  char *keep = zalloc((size_t)g->n_values, 1);
  int *vmap = zalloc((size_t)g->n_values, sizeof(int));
  int *nmap = zalloc((size_t)g->n_nodes, sizeof(int));
  if (!keep || !vmap || !nmap) {
    free(keep);
    free(vmap);
    free(nmap);
    return cs_error(CS_ERR_NOMEM, "out of memory (compacting %d values)", g->n_values);
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead) continue;
    for (int j = 0; j < n->n_inputs; j++)
      if (n->inputs[j] >= 0 && n->inputs[j] < g->n_values) keep[n->inputs[j]] = 1;
    for (int j = 0; j < n->n_outputs; j++)
      if (n->outputs[j] >= 0 && n->outputs[j] < g->n_values) keep[n->outputs[j]] = 1;
  }
  for (int i = 0; i < g->n_inputs; i++)
    if (g->inputs[i] >= 0 && g->inputs[i] < g->n_values) keep[g->inputs[i]] = 1;
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] >= 0 && g->outputs[i] < g->n_values) keep[g->outputs[i]] = 1;

  /* New ids preserve the old order of both arrays. */
  int nv = 0, nn = 0;
  for (int i = 0; i < g->n_values; i++) {
    if (keep[i]) {
      vmap[i] = nv;
      *cs_graph_value(g, nv++) = *cs_graph_value(g, i);
    } else {
      vmap[i] = -1;
      cs_graph_drop_value_(g, cs_graph_value(g, i));
    }
  }
  for (int i = 0; i < g->n_nodes; i++) {
    cs_node *n = &g->nodes[i];
    if (!n->dead) {
      nmap[i] = nn;
      g->nodes[nn++] = *n;
      continue;
    }
    nmap[i] = -1;
    cs_graph_drop_node_(n);
  }
  int old_nv = g->n_values, old_nn = g->n_nodes;
  g->n_values = nv;
  g->n_nodes = nn;

#define REMAP_V(x) ((x) >= 0 && (x) < old_nv ? vmap[(x)] : -1)
  for (int i = 0; i < nn; i++) {
    cs_node *n = &g->nodes[i];
    for (int j = 0; j < n->n_inputs; j++) n->inputs[j] = REMAP_V(n->inputs[j]);
    for (int j = 0; j < n->n_outputs; j++) n->outputs[j] = REMAP_V(n->outputs[j]);
  }
  for (int i = 0; i < g->n_inputs; i++) g->inputs[i] = REMAP_V(g->inputs[i]);
  for (int i = 0; i < g->n_outputs; i++) g->outputs[i] = REMAP_V(g->outputs[i]);
#undef REMAP_V
  for (int i = 0; i < nv; i++) {
    int p = cs_graph_value(g, i)->producer;
    cs_graph_value(g, i)->producer = p >= 0 && p < old_nn ? nmap[p] : -1;
  }
  free(keep);
  free(vmap);
  free(nmap);
  cs_graph_rebuild_uses_(g);
  return CS_OK;
}
