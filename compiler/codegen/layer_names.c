/*
 * The name a layer goes by in reports (manifest.json "name" and "module",
 * the profile's rows, the lib*.c layer comments): the ONNX node it stands
 * for, and the PyTorch module path the exporter recorded for that node.
 *
 * A layer is one kernel call made from one or more ONNX nodes (its
 * origin, "node_conv2d, node_relu, node_quantize_per_tensor_1"). The node
 * it stands for is the first of them that is not a QuantizeLinear or
 * DequantizeLinear — the Conv of DQ → Conv → Relu → Q — or the first when
 * all are (a boundary conversion). A layer the compiler made up (no
 * origin) goes by its IR name.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"

static int by_name(const void *a, const void *b) {
  const cs_source_node *const *x = a, *const *y = b;
  return strcmp((*x)->name, (*y)->name);
}

static cs_layer_source look_up(const cs_cg *cg, const cs_node *n);

cs_status cs_cg_index_sources(cs_cg *cg) {
  const cs_graph *g = cg->g;
  cg->n_sources = g->n_source_nodes;
  if (g->n_source_nodes) {
    cg->sources = malloc(sizeof *cg->sources * (size_t)g->n_source_nodes);
    if (!cg->sources) return cs_error(CS_ERR_NOMEM, "codegen: out of memory");
    for (int i = 0; i < g->n_source_nodes; i++) cg->sources[i] = &g->source_nodes[i];
    qsort(cg->sources, (size_t)cg->n_sources, sizeof *cg->sources, by_name);
  }
  cs_layer_source *src = malloc(sizeof *src * ((size_t)g->n_nodes + 1));
  if (!src) return cs_error(CS_ERR_NOMEM, "codegen: out of memory");
  for (int i = 0; i < g->n_nodes; i++) src[i] = look_up(cg, &g->nodes[i]);
  cg->layer_src = src;
  return CS_OK;
}

static const cs_source_node *find(const cs_cg *cg, const char *name, size_t len) {
  int lo = 0, hi = cg->n_sources;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    const char *s = cg->sources[mid]->name;
    int c = strncmp(s, name, len);
    if (c == 0 && s[len] != '\0') c = 1; /* s is longer */
    if (c == 0) return cg->sources[mid];
    if (c < 0) lo = mid + 1;
    else hi = mid;
  }
  return NULL;
}

cs_layer_source cs_cg_layer_source(const cs_cg *cg, const cs_node *n) {
  ptrdiff_t i = n - cg->g->nodes;
  if (cg->layer_src && i >= 0 && i < cg->g->n_nodes) return cg->layer_src[i];
  return look_up(cg, n);
}

static cs_layer_source look_up(const cs_cg *cg, const cs_node *n) {
  cs_layer_source out = {n->name ? n->name : "?", ""};
  const char *o = n->origin;
  if (!o || !*o) return out;
  const cs_source_node *first = NULL, *pick = NULL;
  while (*o && !pick) {
    size_t len = strcspn(o, ",");
    const cs_source_node *s = find(cg, o, len);
    if (s && !first) first = s;
    if (s && strcmp(s->op_type, "QuantizeLinear") && strcmp(s->op_type, "DequantizeLinear")) pick = s;
    o += len;
    while (*o == ',' || *o == ' ') o++;
  }
  if (!pick) pick = first;
  if (pick) {
    out.name = pick->name;
    out.module = pick->module;
  }
  return out;
}
