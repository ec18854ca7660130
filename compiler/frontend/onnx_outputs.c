/*
 * onnx_outputs.c — `cstatic compile --outputs`: intermediate tensors kept
 * as extra graph outputs, to compare a model layer by layer (the per-layer
 * error report, python/cstatic/layer_error.py).
 *
 * They are marked before the passes run, so a fused group whose output is
 * one of them (a QuantizeLinear output) is still one group: it writes that
 * output as it always did, and the graph output is the same buffer. The
 * extra outputs follow the model's own, in the order given ("all-quantized":
 * node order).
 */
#include <stdlib.h>
#include <string.h>

#include "onnx.h"

static int is_output(const cs_graph *g, int v) {
  for (int i = 0; i < g->n_outputs; i++)
    if (g->outputs[i] == v) return 1;
  return 0;
}

static int find_value(const cs_graph *g, const char *name, size_t len) {
  for (int v = 0; v < g->n_values; v++) {
    const char *s = cs_graph_value(g, v)->name;
    if (s && strlen(s) == len && !strncmp(s, name, len)) return v;
  }
  return -1;
}

/* Append value v to the graph outputs (no-op if it is one already). */
static cs_status keep(cs_graph *g, int v) {
  if (is_output(g, v)) return CS_OK;
  int *o = realloc(g->outputs, sizeof(int) * (size_t)(g->n_outputs + 1));
  if (!o) return cs_error(CS_ERR_NOMEM, "out of memory (graph outputs)");
  g->outputs = o;
  g->outputs[g->n_outputs++] = v;
  g->n_tap_outputs++;
  return CS_OK;
}

/* A tensor computed at run time: produced by a live node, not a constant. */
static int computed(const cs_graph *g, int v) {
  const cs_value *val = cs_graph_value(g, v);
  return !val->data && val->producer >= 0 && !g->nodes[val->producer].dead;
}

cs_status cs_onnx_keep_outputs(cs_graph *g, const char *spec) {
  if (!strcmp(spec, "all-quantized")) {
    for (int i = 0; i < g->n_nodes; i++) {
      const cs_node *n = &g->nodes[i];
      if (n->dead || n->op != CS_OP_QUANTIZE_LINEAR || n->n_outputs < 1 || n->outputs[0] < 0) continue;
      if (!computed(g, n->outputs[0])) continue;
      cs_status st = keep(g, n->outputs[0]);
      if (st != CS_OK) return st;
    }
    return CS_OK;
  }
  for (const char *p = spec;;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    if (!len) return cs_error(CS_ERR_USAGE, "--outputs: empty tensor name in '%s'", spec);
    int v = find_value(g, p, len);
    if (v < 0) return cs_error(CS_ERR_USAGE, "--outputs: the model has no tensor '%.*s'", (int)len, p);
    if (!computed(g, v))
      return cs_error(CS_ERR_USAGE, "--outputs: tensor '%.*s' is %s, not computed by a layer", (int)len, p,
                      cs_graph_value(g, v)->data ? "a constant" : "a graph input");
    cs_status st = keep(g, v);
    if (st != CS_OK) return st;
    if (!end) break;
    p = end + 1;
  }
  return CS_OK;
}
