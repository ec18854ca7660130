/*
 * eval_kernel.c — fold a node that has a runtime kernel with that kernel:
 * the node and copies of its constant inputs go into a scratch graph,
 * LegalizeOps lowers it (the same lowering as for code generation) and
 * FoldConstant runs the reference kernels. One implementation of each
 * function, whether it runs on the target or at compile time.
 */
#include <stdlib.h>
#include <string.h>

#include "eval_internal.h"
#include "passes/pass_list.h"

static void copy_attrs(cs_node *dst, const cs_node *src) {
  for (int i = 0; i < src->n_attrs; i++) {
    const cs_attr *a = &src->attrs[i];
    cs_attr *b = cs_node_add_attr(dst, a->name, a->kind);
    b->i = a->i;
    b->f = a->f;
    if (a->kind == CS_ATTR_INTS) {
      cs_node_set_attr_ints(dst, a->name, a->n, a->ints);
    } else if (a->kind == CS_ATTR_FLOATS && a->n > 0) {
      b->n = a->n;
      b->floats = malloc(sizeof(float) * (size_t)a->n);
      if (b->floats) memcpy(b->floats, a->floats, sizeof(float) * (size_t)a->n);
      else b->n = 0;
    } else if (a->kind == CS_ATTR_STRING && a->s) {
      b->s = strdup(a->s);
    }
  }
}

int cs_eval_with_kernels(const cs_graph *g, int id, void *const *out) {
  const cs_node *n = &g->nodes[id];
  cs_graph *s = cs_graph_new("const_eval");
  s->opset = g->opset;
  int ins[64], outs[8];
  if (n->n_inputs > 64) {
    cs_graph_free(s);
    return 0;
  }
  for (int j = 0; j < n->n_inputs; j++) {
    const cs_value *v = cs_eval_in(g, n, j);
    ins[j] = v ? cs_graph_add_const(s, v->name, v->dtype, v->rank, v->shape, v->data) : -1;
  }
  for (int j = 0; j < n->n_outputs; j++) {
    const cs_value *v = cs_eval_out(g, n, j);
    outs[j] = cs_graph_add_value(s, v->name, v->dtype, v->rank, v->shape);
  }
  int sid = cs_graph_add_node(s, n->op, n->name, n->origin, n->n_inputs, ins, n->n_outputs, outs);
  copy_attrs(&s->nodes[sid], n);
  s->outputs = malloc(sizeof(int) * (size_t)n->n_outputs);
  int ok = s->outputs != NULL;
  if (ok) {
    memcpy(s->outputs, outs, sizeof(int) * (size_t)n->n_outputs);
    s->n_outputs = n->n_outputs;
    ok = pass_legalize(s, NULL) == CS_OK && pass_fold_constants(s, NULL) == CS_OK;
  }
  for (int j = 0; ok && j < n->n_outputs; j++) ok = cs_graph_value(s, outs[j])->data != NULL;
  for (int j = 0; ok && j < n->n_outputs; j++)
    memcpy(out[j], cs_graph_value(s, outs[j])->data, cs_value_nbytes(cs_graph_value(s, outs[j])));
  if (!ok) cs_error_clear(); /* the node stays; its lowering reports later */
  cs_graph_free(s);
  return ok;
}
