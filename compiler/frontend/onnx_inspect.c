/*
 * onnx_inspect.c — `cstatic inspect`: what a model file holds, read from
 * the file's declarations (no inference), so it also describes models the
 * compiler refuses; the last line says whether it would compile and why
 * not.
 */
#include "onnx.h"

#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

static void print_value_info(const Onnx__ValueInfoProto *vi, FILE *f) {
  fprintf(f, "  %s : ", cs_onnx_s(vi->name));
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
      !tp->tensor_type) {
    fputs("(not a tensor)\n", f);
    return;
  }
  const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
  int32_t et = tt->has_elem_type ? tt->elem_type : 0;
  cs_dtype dt = cs_onnx_dtype(et);
  fputs(dt != CS_DTYPE_UNDEF ? cs_dtype_name(dt) : cs_onnx_dtype_name(et), f);
  if (!tt->shape) {
    fputs(" (unknown shape)\n", f);
    return;
  }
  fputc('[', f);
  for (size_t i = 0; i < tt->shape->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    if (i) fputc(',', f);
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
      fprintf(f, "%lld", (long long)d->dim_value);
    else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
      fputs(cs_onnx_s(d->dim_param), f);
    else
      fputc('?', f);
  }
  fputs("]\n", f);
}

static int64_t tensor_numel(const Onnx__TensorProto *t) {
  int64_t n = 1;
  for (size_t i = 0; i < t->n_dims; i++) {
    if (t->dims[i] < 0 || t->dims[i] > CS_ONNX_MAX_NUMEL) return -1;
    n *= t->dims[i];
    if (n > CS_ONNX_MAX_NUMEL) return -1;
  }
  return n;
}

static void print_bytes(uint64_t b, FILE *f) {
  if (b >= 10u << 20) fprintf(f, "%.1f MB", (double)b / (1 << 20));
  else if (b >= 10u << 10) fprintf(f, "%.1f KB", (double)b / (1 << 10));
  else fprintf(f, "%llu bytes", (unsigned long long)b);
}

typedef struct op_count {
  const char *domain, *op;
  int count;
} op_count;

static int cmp_count(const void *a, const void *b) {
  const op_count *x = a, *y = b;
  if (x->count != y->count) return y->count - x->count;
  int d = strcmp(x->domain, y->domain);
  return d ? d : strcmp(x->op, y->op);
}

static void print_histogram(const Onnx__GraphProto *g, FILE *f) {
  op_count *h = calloc(g->n_node + 1, sizeof *h);
  size_t nh = 0;
  if (!h) return;
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    const char *dom = cs_onnx_is_default_domain(n->domain) ? "" : n->domain;
    const char *op = cs_onnx_s(n->op_type);
    size_t k = 0;
    while (k < nh && (strcmp(h[k].domain, dom) || strcmp(h[k].op, op))) k++;
    if (k == nh) h[nh++] = (op_count){dom, op, 0};
    h[k].count++;
  }
  qsort(h, nh, sizeof *h, cmp_count);
  fputs("ops:", f);
  for (size_t k = 0; k < nh; k++)
    fprintf(f, "%s %s%s%s %d", k ? "," : "", h[k].domain,
            *h[k].domain ? ":" : "", *h[k].op ? h[k].op : "<none>",
            h[k].count);
  fputc('\n', f);
  free(h);
}

/* The tensor a name refers to when it is an initializer or a Constant's
 * value, else NULL. */
static const Onnx__TensorProto *find_const(const Onnx__GraphProto *g,
                                           const cs_onnx_map *inits,
                                           const cs_onnx_map *consts,
                                           const char *name) {
  if (!name || !*name) return NULL;
  int k = cs_onnx_map_get(inits, name);
  if (k >= 0) return g->initializer[k];
  k = cs_onnx_map_get(consts, name);
  if (k >= 0) {
    const Onnx__NodeProto *n = g->node[k];
    for (size_t i = 0; i < n->n_attribute; i++)
      if (n->attribute[i]->t) return n->attribute[i]->t;
  }
  return NULL;
}

typedef struct dtype_set {
  unsigned bits;
} dtype_set;

static void print_dtypes(const char *label, dtype_set s, FILE *f) {
  fprintf(f, "%s", label);
  int any = 0;
  for (int t = CS_DTYPE_F32; t <= CS_DTYPE_BOOL; t++)
    if (s.bits & (1u << t))
      fprintf(f, "%s%s", any++ ? ", " : " ", cs_dtype_name((cs_dtype)t));
  if (!any) fputs(" none", f);
}

static cs_status print_qdq(const Onnx__GraphProto *g, FILE *f) {
  cs_onnx_map inits = {0}, consts = {0};
  cs_status st = cs_onnx_map_init(&inits, g->n_initializer);
  if (st == CS_OK) st = cs_onnx_map_init(&consts, g->n_node);
  for (size_t i = 0; i < g->n_initializer && st == CS_OK; i++)
    if (g->initializer[i]->name) st = cs_onnx_map_put(&inits, g->initializer[i]->name, (int)i);
  for (size_t i = 0; i < g->n_node && st == CS_OK; i++) {
    const Onnx__NodeProto *n = g->node[i];
    if (cs_onnx_is_default_domain(n->domain) && n->op_type &&
        !strcmp(n->op_type, "Constant") && n->n_output == 1 && n->output[0])
      st = cs_onnx_map_put(&consts, n->output[0], (int)i);
  }
  if (st != CS_OK) {
    cs_onnx_map_free(&inits);
    cs_onnx_map_free(&consts);
    return st;
  }
  int nq = 0, ndq = 0, other = 0, per_axis = 0;
  dtype_set act = {0}, wts = {0}, bias = {0};
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    const char *op = cs_onnx_s(n->op_type);
    int q = !strcmp(op, "QuantizeLinear"), dq = !strcmp(op, "DequantizeLinear");
    if (!q && !dq) continue;
    if (!cs_onnx_is_default_domain(n->domain)) {
      other++;
      continue;
    }
    if (q) {
      nq++;
      const Onnx__TensorProto *zp =
          n->n_input > 2 ? find_const(g, &inits, &consts, n->input[2]) : NULL;
      cs_dtype t = CS_DTYPE_U8;
      if (zp && zp->has_data_type) t = cs_onnx_dtype(zp->data_type);
      for (size_t a = 0; a < n->n_attribute; a++)
        if (n->attribute[a]->name && !strcmp(n->attribute[a]->name, "output_dtype") &&
            n->attribute[a]->i)
          t = cs_onnx_dtype((int32_t)n->attribute[a]->i);
      if (t != CS_DTYPE_UNDEF) act.bits |= 1u << t;
      continue;
    }
    ndq++;
    const Onnx__TensorProto *x =
        n->n_input > 0 ? find_const(g, &inits, &consts, n->input[0]) : NULL;
    if (!x || !x->has_data_type) continue; /* an activation's DQ */
    cs_dtype t = cs_onnx_dtype(x->data_type);
    if (t == CS_DTYPE_UNDEF) continue;
    if (t == CS_DTYPE_I32) bias.bits |= 1u << t;
    else wts.bits |= 1u << t;
    const Onnx__TensorProto *s =
        n->n_input > 1 ? find_const(g, &inits, &consts, n->input[1]) : NULL;
    if (t != CS_DTYPE_I32 && s && tensor_numel(s) > 1) per_axis = 1;
  }
  if (nq + ndq + other == 0) {
    fputs("quantization: none (float model)\n", f);
  } else {
    fprintf(f, "quantization: QDQ, %d QuantizeLinear, %d DequantizeLinear", nq,
            ndq);
    if (other) fprintf(f, ", %d Q/DQ in other domains", other);
    fputc('\n', f);
    print_dtypes("  activations:", act, f);
    fputc('\n', f);
    print_dtypes("  weights:", wts, f);
    fprintf(f, "; per-axis: %s", per_axis ? "yes" : "no");
    if (bias.bits) fputs("; int32 bias: yes", f);
    fputc('\n', f);
  }
  cs_onnx_map_free(&inits);
  cs_onnx_map_free(&consts);
  return CS_OK;
}

cs_status cs_onnx_inspect(const char *path, cs_onnx_eval_fn eval, FILE *f) {
  cs_onnx_model m;
  cs_status st = cs_onnx_model_open(path, CS_MEM_LIMIT_DEFAULT, &m);
  if (st != CS_OK) return st;
  const Onnx__ModelProto *mp = m.proto;
  const Onnx__GraphProto *g = mp->graph;
  fprintf(f, "file: %s (", path);
  print_bytes(m.len, f);
  fprintf(f, ")\nir_version: %lld\n", (long long)mp->ir_version);
  if (m.opset < 0) fputs("opset: none for the default domain", f);
  else fprintf(f, "opset: %lld", (long long)m.opset);
  if (m.opset >= 0 && (m.opset < CS_ONNX_MIN_OPSET || m.opset > CS_ONNX_MAX_OPSET))
    fprintf(f, " (not supported: %d to %d are)", CS_ONNX_MIN_OPSET,
            CS_ONNX_MAX_OPSET);
  for (size_t i = 0; i < mp->n_opset_import; i++) {
    const Onnx__OperatorSetIdProto *o = mp->opset_import[i];
    if (!cs_onnx_is_default_domain(o->domain))
      fprintf(f, "; %s %lld", o->domain, (long long)o->version);
  }
  fprintf(f, "\nproducer: %s%s%s\n",
          *cs_onnx_s(mp->producer_name) ? mp->producer_name : "(none)",
          *cs_onnx_s(mp->producer_version) ? " " : "",
          cs_onnx_s(mp->producer_version));
  fprintf(f, "graph: %s\n", *cs_onnx_s(g->name) ? g->name : "(unnamed)");

  cs_onnx_map inits = {0};
  st = cs_onnx_map_init(&inits, g->n_initializer);
  uint64_t init_bytes = 0;
  size_t n_external = 0;
  for (size_t i = 0; i < g->n_initializer && st == CS_OK; i++) {
    const Onnx__TensorProto *t = g->initializer[i];
    if (t->name) st = cs_onnx_map_put(&inits, t->name, (int)i);
    int64_t numel = tensor_numel(t);
    cs_dtype dt = cs_onnx_dtype(t->has_data_type ? t->data_type : 0);
    if (t->has_data_location &&
        t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
      n_external++;
    if (t->has_raw_data) init_bytes += t->raw_data.len;
    else if (numel > 0) init_bytes += (uint64_t)numel * (dt ? cs_dtype_size(dt) : 4);
  }
  if (st != CS_OK) {
    cs_onnx_map_free(&inits);
    cs_onnx_model_close(&m);
    return st;
  }
  size_t n_in = 0;
  for (size_t i = 0; i < g->n_input; i++)
    n_in += !g->input[i]->name || cs_onnx_map_get(&inits, g->input[i]->name) < 0;
  fprintf(f, "inputs: %zu\n", n_in);
  for (size_t i = 0; i < g->n_input; i++)
    if (!g->input[i]->name || cs_onnx_map_get(&inits, g->input[i]->name) < 0)
      print_value_info(g->input[i], f);
  fprintf(f, "outputs: %zu\n", g->n_output);
  for (size_t i = 0; i < g->n_output; i++) print_value_info(g->output[i], f);
  cs_onnx_map_free(&inits);
  fprintf(f, "nodes: %zu\n", g->n_node);
  print_histogram(g, f);
  fprintf(f, "initializers: %zu (", g->n_initializer);
  print_bytes(init_bytes, f);
  if (n_external) fprintf(f, ", %zu with external data", n_external);
  fputs(")\n", f);
  st = print_qdq(g, f);
  if (st != CS_OK) {
    cs_onnx_model_close(&m);
    return st;
  }

  cs_onnx_str list = {0};
  int n_unsup = cs_onnx_list_unsupported(g, eval != NULL, &list);
  if (n_unsup) fprintf(f, "unsupported ops: %s\n", cs_onnx_s(list.s));
  else fputs("unsupported ops: none\n", f);
  cs_onnx_str_free(&list);

  /* Would it compile? Run the real frontend; its error is the answer. */
  if (n_unsup) {
    fputs("frontend: refused (unsupported ops)\n", f);
  } else {
    cs_graph *ir = NULL;
    cs_onnx_options opt = {.eval = eval};
    cs_status bst = cs_onnx_build_model(&m, &opt, &ir);
    if (bst == CS_OK) {
      int live = 0;
      for (int i = 0; i < ir->n_nodes; i++) live += !ir->nodes[i].dead;
      fprintf(f, "frontend: ok (%d nodes, all shapes inferred)\n", live);
      cs_graph_free(ir);
    } else {
      fprintf(f, "frontend: refused: %s\n", cs_error_message());
    }
  }
  cs_onnx_model_close(&m);
  cs_error_clear();
  return CS_OK;
}
