/*
 * onnx.c — cs_onnx_load: an ONNX file → IR graph with every shape known.
 *
 * The graph is built in a topological order of the ONNX nodes; each node's
 * outputs are inferred as soon as it is added, so every later node sees
 * complete input types. Initializers become constants when first used
 * (an unused initializer of an unsupported dtype does not fail a model).
 */
#include "onnx.h"

#include <stdlib.h>
#include <string.h>

#include "onnx_internal.h"

typedef struct builder {
  const cs_onnx_model *m;
  const Onnx__GraphProto *gp;
  cs_graph *g;
  cs_onnx_map vals;  /* tensor name → value id */
  cs_onnx_map inits; /* initializer name → index in gp->initializer */
  cs_onnx_eval_fn eval; /* compile-time evaluation, or NULL */
  int folded;           /* nodes folded into constants */
} builder;

/* The value of a defined tensor name (cs_onnx_order_nodes has checked that
 * every name used is defined before its use). */
static cs_status lookup(builder *b, const char *name, int *id) {
  int v = cs_onnx_map_get(&b->vals, name);
  if (v >= 0) {
    *id = v;
    return CS_OK;
  }
  int k = cs_onnx_map_get(&b->inits, name);
  if (k < 0)
    return cs_error(CS_ERR_INTERNAL, "tensor '%s' is used before it is defined",
                    name);
  cs_status st =
      cs_onnx_tensor_to_const(b->m, b->g, b->gp->initializer[k], name, &v);
  if (st != CS_OK) return st;
  *id = v;
  return cs_onnx_map_put(&b->vals, name, v);
}

/* ---- graph inputs ---------------------------------------------------- */

static cs_status tensor_type(const Onnx__ValueInfoProto *vi, const char *what,
                             const Onnx__TypeProto__Tensor **out) {
  const Onnx__TypeProto *tp = vi->type;
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
      !tp->tensor_type)
    return cs_error(CS_ERR_UNSUPPORTED, "%s '%s' is not a tensor", what,
                    vi->name);
  *out = tp->tensor_type;
  return CS_OK;
}

static cs_status add_input(builder *b, const Onnx__ValueInfoProto *vi) {
  const Onnx__TypeProto__Tensor *tt = NULL;
  cs_status st = tensor_type(vi, "graph input", &tt);
  if (st != CS_OK) return st;
  int32_t et = tt->has_elem_type ? tt->elem_type : 0;
  cs_dtype dt = cs_onnx_dtype(et);
  if (dt == CS_DTYPE_UNDEF)
    return cs_error(CS_ERR_UNSUPPORTED,
                    "graph input '%s': dtype %s is not supported", vi->name,
                    cs_onnx_dtype_name(et));
  if (!tt->shape)
    return cs_error(CS_ERR_UNSUPPORTED,
                    "graph input '%s' has no shape (unknown rank)", vi->name);
  if (tt->shape->n_dim > CS_MAX_RANK)
    return cs_error(CS_ERR_UNSUPPORTED, "graph input '%s': rank %zu exceeds %d",
                    vi->name, tt->shape->n_dim, CS_MAX_RANK);
  int64_t shape[CS_MAX_RANK], numel = 1;
  for (size_t i = 0; i < tt->shape->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE) {
      if (d->dim_value < 0 || d->dim_value > CS_ONNX_MAX_NUMEL)
        return cs_error(CS_ERR_INVALID, "graph input '%s': dim %zu is %lld",
                        vi->name, i, (long long)d->dim_value);
      shape[i] = d->dim_value;
    } else {
      const char *param =
          d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
              ? cs_onnx_s(d->dim_param)
              : "";
      fprintf(stderr,
              "warning: %s: input '%s' dim %zu%s%s%s is symbolic; using 1\n",
              b->m->path, vi->name, i, *param ? " ('" : "", param,
              *param ? "')" : "");
      shape[i] = 1;
    }
    numel *= shape[i];
    if (numel > CS_ONNX_MAX_NUMEL)
      return cs_error(CS_ERR_UNSUPPORTED,
                      "graph input '%s': more than %d elements", vi->name,
                      CS_ONNX_MAX_NUMEL);
  }
  int id = cs_graph_add_value(b->g, vi->name, dt, (int)tt->shape->n_dim, shape);
  if (id < 0) return CS_ERR_NOMEM;
  b->g->inputs[b->g->n_inputs++] = id;
  st = cs_graph_check_value(b->g, cs_graph_value(b->g, id), 0);
  if (st != CS_OK) return st;
  return cs_onnx_map_put(&b->vals, vi->name, id);
}

/* ---- nodes ----------------------------------------------------------- */

static const char *attr_type_name(int t) {
  switch (t) {
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT: return "FLOAT";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT: return "INT";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING: return "STRING";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS: return "FLOATS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS: return "INTS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: return "TENSOR";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH: return "GRAPH";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS: return "STRINGS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSORS: return "TENSORS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPHS: return "GRAPHS";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__SPARSE_TENSOR:
      return "SPARSE_TENSOR";
    case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO: return "TYPE_PROTO";
    default: return "UNDEFINED";
  }
}

/* Old writers leave `type` unset; the field that is present tells. */
static int attr_type(const Onnx__AttributeProto *a) {
  if (a->has_type && a->type != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED)
    return a->type;
  if (a->has_f) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
  if (a->has_i) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  if (a->has_s) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
  if (a->t) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  if (a->g) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH;
  if (a->n_floats) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
  if (a->n_ints) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  if (a->n_strings) return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS;
  return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

/* A TENSOR attribute (ConstantOfShape's value) becomes a constant input
 * appended to the node: later stages read tensors in one place. */
static cs_status tensor_attr_input(builder *b, const Onnx__NodeProto *np,
                                   const Onnx__AttributeProto *a,
                                   const char *label, int node_id) {
  if (cs_onnx_node_op(np) != CS_OP_CONSTANT_OF_SHAPE || strcmp(a->name, "value") ||
      !a->t)
    return cs_error(CS_ERR_UNSUPPORTED,
                    "node '%s' (%s): attribute '%s' has type TENSOR, which is "
                    "not supported",
                    label, cs_onnx_s(np->op_type), a->name);
  char name[512];
  snprintf(name, sizeof name, "%s.%s", label, a->name);
  int v;
  cs_status st = cs_onnx_tensor_to_const(b->m, b->g, a->t, name, &v);
  if (st != CS_OK) return st;
  cs_node *n = &b->g->nodes[node_id];
  int *ins = realloc(n->inputs, sizeof(int) * (size_t)(n->n_inputs + 1));
  if (!ins) return cs_error(CS_ERR_NOMEM, "out of memory");
  n->inputs = ins;
  n->inputs[n->n_inputs++] = -1;
  cs_node_set_input(b->g, node_id, n->n_inputs - 1, v); /* keeps the reader index */
  return CS_OK;
}

/* Attributes that every ONNX op having them declares INT or INTS. Each
 * stage reads them as integers with its own default when absent, so one of
 * another type is the model's error: read as absent, a Concat's float axis
 * was axis 0 to shape inference and axis 1 to a pass, which then copied
 * past the tensor (a fuzzed file). */
static int integer_attr(const char *name) {
  static const char *const names[] = {
      "allowzero", "axes", "axis", "batch_dims", "blocksize", "ceil_mode", "count_include_pad", "dilations",
      "group", "keepdims", "kernel_shape", "output_padding", "output_shape", "pads", "perm", "split",
      "storage_order", "strides", "transA", "transB"}; /* not "to": Cast-1..5 names a type */
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (!strcmp(name, names[i])) return 1;
  return 0;
}

static cs_status copy_attrs(builder *b, const Onnx__NodeProto *np,
                            const char *label, int node_id) {
  for (size_t i = 0; i < np->n_attribute; i++) {
    const Onnx__AttributeProto *a = np->attribute[i];
    const char *op = cs_onnx_s(np->op_type);
    if (!a->name || !*a->name)
      return cs_error(CS_ERR_INVALID, "node '%s' (%s): attribute #%zu has no name",
                      label, op, i);
    if (a->ref_attr_name && *a->ref_attr_name)
      return cs_error(CS_ERR_INVALID,
                      "node '%s' (%s): attribute '%s' refers to a function "
                      "attribute outside a function",
                      label, op, a->name);
    cs_node *n = &b->g->nodes[node_id];
    if (cs_node_attr(n, a->name))
      return cs_error(CS_ERR_INVALID, "node '%s' (%s): attribute '%s' is repeated",
                      label, op, a->name);
    int t = attr_type(a);
    if (integer_attr(a->name) && t != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT &&
        t != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
      return cs_error(CS_ERR_INVALID, "node '%s' (%s): attribute '%s' has type %s; ONNX defines it as integers",
                      label, op, a->name, attr_type_name(t));
    cs_attr *ca;
    cs_status st = CS_OK;
    switch (t) {
      case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
        if (!(ca = cs_node_add_attr(n, a->name, CS_ATTR_FLOAT))) return CS_ERR_NOMEM;
        ca->f = a->f;
        break;
      case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
        st = cs_node_set_attr_int(n, a->name, a->i);
        break;
      case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
        if (a->s.len && memchr(a->s.data, 0, a->s.len))
          return cs_error(CS_ERR_INVALID,
                          "node '%s' (%s): attribute '%s' holds a NUL byte",
                          label, op, a->name);
        st = cs_node_set_attr_string(n, a->name, (const char *)a->s.data, a->s.len);
        break;
      case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
        if (a->n_ints > INT32_MAX)
          return cs_error(CS_ERR_INVALID, "node '%s' (%s): attribute '%s' too long",
                          label, op, a->name);
        st = cs_node_set_attr_ints(n, a->name, (int)a->n_ints, a->ints);
        break;
      case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
        if (a->n_floats > INT32_MAX)
          return cs_error(CS_ERR_INVALID, "node '%s' (%s): attribute '%s' too long",
                          label, op, a->name);
        {
          float *fl = malloc(sizeof(float) * (a->n_floats ? a->n_floats : 1));
          if (!fl || !(ca = cs_node_add_attr(n, a->name, CS_ATTR_FLOATS))) {
            free(fl);
            return cs_error(CS_ERR_NOMEM, "node '%s' (%s): out of memory for attribute '%s'", label, op,
                            a->name);
          }
          if (a->n_floats) memcpy(fl, a->floats, sizeof(float) * a->n_floats);
          ca->n = (int)a->n_floats;
          ca->floats = fl;
        }
        break;
      case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR: {
        cs_status st = tensor_attr_input(b, np, a, label, node_id);
        if (st != CS_OK) return st;
        break;
      }
      default:
        return cs_error(CS_ERR_UNSUPPORTED,
                        "node '%s' (%s): attribute '%s' has type %s, which is "
                        "not supported",
                        label, op, a->name, attr_type_name(t));
    }
    if (st != CS_OK) return st;
  }
  return CS_OK;
}

static cs_status add_constant(builder *b, const Onnx__NodeProto *np,
                              const char *label) {
  const char *out = np->n_output == 1 ? np->output[0] : NULL;
  if (!out || !*out || np->n_input != 0)
    return cs_error(CS_ERR_INVALID,
                    "node '%s' (Constant): expects no inputs and one named "
                    "output",
                    label);
  if (np->n_attribute != 1)
    return cs_error(CS_ERR_INVALID,
                    "node '%s' (Constant): expects exactly one value "
                    "attribute, got %zu",
                    label, np->n_attribute);
  const Onnx__AttributeProto *a = np->attribute[0];
  const char *an = cs_onnx_s(a->name);
  int id = -1;
  cs_status st = CS_OK;
  if (!strcmp(an, "value") && a->t) {
    st = cs_onnx_tensor_to_const(b->m, b->g, a->t, out, &id);
  } else if (!strcmp(an, "value_float") && a->has_f) {
    id = cs_graph_add_const(b->g, out, CS_DTYPE_F32, 0, NULL, &a->f);
  } else if (!strcmp(an, "value_int") && a->has_i) {
    id = cs_graph_add_const(b->g, out, CS_DTYPE_I64, 0, NULL, &a->i);
  } else if (!strcmp(an, "value_floats") || !strcmp(an, "value_ints")) {
    int fl = an[6] == 'f';
    int64_t len = fl ? (int64_t)a->n_floats : (int64_t)a->n_ints;
    if (len > CS_ONNX_MAX_NUMEL)
      return cs_error(CS_ERR_UNSUPPORTED, "node '%s' (Constant): too long",
                      label);
    id = cs_graph_add_const(b->g, out, fl ? CS_DTYPE_F32 : CS_DTYPE_I64, 1,
                            &len, fl ? (const void *)a->floats
                                     : (const void *)a->ints);
  } else {
    return cs_error(CS_ERR_UNSUPPORTED,
                    "node '%s' (Constant): attribute '%s' is not supported "
                    "(value, value_float(s), value_int(s) are)",
                    label, an);
  }
  if (st != CS_OK) return st;
  if (id < 0) return CS_ERR_NOMEM; /* cs_graph_add_const said why */
  return cs_onnx_map_put(&b->vals, out, id);
}

/* The PyTorch module path torch.onnx's exporter recorded for a node: the
 * next-to-last entry of its "pkg.torch.onnx.name_scopes" metadata, a
 * Python list of the enclosing scopes whose last entry names the op
 * ("['', 'layer1', 'layer1.0', 'layer1.0.conv1', 'conv2d_1']" →
 * "layer1.0.conv1"). Points into the metadata's value; length 0 when the
 * node has none or the list is not of that form. */
static const char *torch_module_path(const Onnx__NodeProto *np, size_t *len) {
  *len = 0;
  for (size_t i = 0; i < np->n_metadata_props; i++) {
    const Onnx__StringStringEntryProto *e = np->metadata_props[i];
    if (!e || strcmp(cs_onnx_s(e->key), "pkg.torch.onnx.name_scopes")) continue;
    const char *p = cs_onnx_s(e->value), *prev = NULL, *last = NULL;
    size_t prev_len = 0, last_len = 0;
    while ((p = strpbrk(p, "'\""))) { /* each quoted entry */
      const char *end = strchr(p + 1, *p);
      if (!end) return NULL; /* unterminated: not a list torch wrote */
      prev = last, prev_len = last_len;
      last = p + 1, last_len = (size_t)(end - p - 1);
      p = end + 1;
    }
    *len = prev ? prev_len : 0;
    return prev;
  }
  return NULL;
}

/* A node whose every output has no element computes nothing the model
 * can observe, whatever its inputs: each output becomes an empty constant
 * and the node goes (*folded = 1), so an empty Slice, Split part or
 * Reshape never reaches the runtime. */
static cs_status empty_outputs_are_constants(builder *b, int id, int *folded) {
  const cs_node *n = &b->g->nodes[id];
  int outs[8], n_out = n->n_outputs;
  *folded = 0;
  if (n_out < 1 || n_out > 8) return CS_OK;
  for (int j = 0; j < n_out; j++) {
    outs[j] = n->outputs[j];
    if (outs[j] < 0 || cs_graph_value(b->g, outs[j])->data || cs_value_numel(cs_graph_value(b->g, outs[j])) != 0) return CS_OK;
  }
  void *data[8] = {0};
  for (int j = 0; j < n_out; j++)
    if (!(data[j] = calloc(1, 1))) {
      for (int k = 0; k < j; k++) free(data[k]);
      return cs_error(CS_ERR_NOMEM, "node '%s': out of memory", n->name);
    }
  cs_graph_remove_node(b->g, id);
  for (int j = 0; j < n_out; j++) {
    cs_graph_set_const_data(b->g, outs[j], data[j]);
    cs_graph_value(b->g, outs[j])->producer = -1;
  }
  *folded = 1;
  return CS_OK;
}

static cs_status add_node(builder *b, const Onnx__NodeProto *np, size_t idx) {
  const char *label = cs_onnx_node_label(np, idx);
  char lbuf[64];
  if (label != np->name) { /* the rotating label buffer is short-lived */
    snprintf(lbuf, sizeof lbuf, "%s", label);
    label = lbuf;
  }
  int op = cs_onnx_node_op(np);
  if (op == CS_OP_COUNT_) return add_constant(b, np, label);
  size_t module_len;
  const char *module = torch_module_path(np, &module_len);
  cs_status sst = cs_graph_add_source_node(b->g, label, cs_onnx_s(np->op_type), module, module_len);
  if (sst != CS_OK) return sst;
  if (np->n_input > 65536 || np->n_output > 65536)
    return cs_error(CS_ERR_UNSUPPORTED, "node '%s' (%s): too many inputs or outputs",
                    label, np->op_type);

  /* Trailing empty names are omitted optional inputs; so are the optional
   * outputs of Dropout (mask) and MaxPool (Indices). */
  int n_in = (int)np->n_input, n_out = (int)np->n_output;
  while (n_in > 0 && !*cs_onnx_s(np->input[n_in - 1])) n_in--;
  if (op == CS_OP_DROPOUT || op == CS_OP_MAX_POOL)
    while (n_out > 1 && !*cs_onnx_s(np->output[n_out - 1])) n_out--;
  int *ins = malloc(sizeof(int) * (size_t)(n_in + 1));
  int *outs = malloc(sizeof(int) * (size_t)(n_out + 1));
  cs_status st = ins && outs ? CS_OK : cs_error(CS_ERR_NOMEM, "node '%s': out of memory", label);
  for (int j = 0; j < n_in && st == CS_OK; j++) {
    const char *name = cs_onnx_s(np->input[j]);
    ins[j] = -1;
    if (*name) st = lookup(b, name, &ins[j]);
  }
  for (int j = 0; j < n_out && st == CS_OK; j++) {
    const char *name = cs_onnx_s(np->output[j]);
    outs[j] = cs_graph_add_value(b->g, *name ? name : NULL, CS_DTYPE_UNDEF, 0,
                                 NULL);
    if (outs[j] < 0) st = CS_ERR_NOMEM;
    else if (*name) st = cs_onnx_map_put(&b->vals, name, outs[j]);
  }
  if (st == CS_OK) {
    int id = cs_graph_add_node(b->g, (cs_op)op, label, label, n_in, ins, n_out,
                               outs);
    st = id < 0 ? CS_ERR_NOMEM : copy_attrs(b, np, label, id);
    cs_onnx_infer c = {b->g, (int)b->m->opset};
    if (st == CS_OK) st = cs_onnx_upgrade_node(&c, id);
    if (st == CS_OK) st = cs_onnx_infer_node(&c, id);
    /* Every tensor the model computes must fit the memory limit: the
     * runtime allocates it, and folding a constant one allocates it here
     * (before the evaluator runs). */
    for (int j = 0; j < n_out && st == CS_OK; j++)
      if (cs_graph_check_value(b->g, cs_graph_value(b->g, outs[j]), 0) != CS_OK) {
        char why[1024];
        snprintf(why, sizeof why, "%s", cs_error_message());
        st = cs_error(CS_ERR_NOMEM, "node '%s' (%s): output %s", label, np->op_type, why);
      }
    int folded = 0;
    if (st == CS_OK && b->eval) {
      st = b->eval(b->g, id, &folded);
      b->folded += folded;
    }
    if (st == CS_OK && !folded) st = empty_outputs_are_constants(b, id, &folded);
    if (st == CS_OK && !folded) st = cs_onnx_check_not_empty(&c, &b->g->nodes[id]);
  }
  free(ins);
  free(outs);
  return st;
}

/* ---- graph outputs --------------------------------------------------- */

static cs_status add_output(builder *b, const Onnx__ValueInfoProto *vi) {
  int id;
  cs_status st = lookup(b, vi->name, &id);
  if (st != CS_OK) return st;
  const cs_value *v = cs_graph_value(b->g, id);
  /* A declared type is a promise about the model: hold it to it. */
  const Onnx__TypeProto *tp = vi->type;
  if (tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
      tp->tensor_type) {
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    if (tt->has_elem_type && tt->elem_type != 0 &&
        cs_onnx_dtype(tt->elem_type) != v->dtype)
      return cs_error(CS_ERR_INVALID,
                      "graph output '%s' is declared %s but computes %s",
                      vi->name, cs_onnx_dtype_name(tt->elem_type),
                      cs_dtype_name(v->dtype));
    if (tt->shape) {
      int ok = tt->shape->n_dim == (size_t)v->rank;
      for (size_t i = 0; ok && i < tt->shape->n_dim; i++) {
        const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
        if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
          ok = d->dim_value == v->shape[i];
      }
      if (!ok) {
        cs_onnx_str decl = {0};
        cs_onnx_str_printf(&decl, "[");
        for (size_t i = 0; i < tt->shape->n_dim && i < 16; i++) {
          const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
          if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
            cs_onnx_str_printf(&decl, "%s%lld", i ? "," : "",
                               (long long)d->dim_value);
          else
            cs_onnx_str_printf(&decl, "%s?", i ? "," : "");
        }
        cs_onnx_str_printf(&decl, "%s]", tt->shape->n_dim > 16 ? ",..." : "");
        st = cs_error(CS_ERR_INVALID,
                      "graph output '%s' is declared with shape %s but its "
                      "inferred shape is %s",
                      vi->name, cs_onnx_s(decl.s), cs_onnx_shape_str(v->rank, v->shape));
        cs_onnx_str_free(&decl);
        return st;
      }
    }
  }
  b->g->outputs[b->g->n_outputs++] = id;
  return CS_OK;
}

/* ---- the whole graph ------------------------------------------------- */

/* An op without a runtime kernel that did not fold depends on a graph
 * input: refuse every such node in one message. */
static cs_status check_const_only(cs_graph *g) {
  cs_onnx_str list = {0};
  int count = 0;
  for (int i = 0; i < g->n_nodes; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead || !cs_onnx_op_const_only(n->op)) continue;
    cs_onnx_str_printf(&list, "%s%s (node '%s')", count++ ? ", " : "",
                       cs_op_name(n->op), n->name);
  }
  cs_status st = CS_OK;
  if (count)
    st = cs_error(CS_ERR_UNSUPPORTED,
                  "unsupported op%s: %s (no runtime kernel; computed from a "
                  "graph input, so not foldable at compile time)",
                  count == 1 ? "" : "s", list.s);
  cs_onnx_str_free(&list);
  return st;
}

static cs_status build(const cs_onnx_model *m, const cs_onnx_options *opt, cs_graph **out) {
  const Onnx__GraphProto *gp = m->proto->graph;
  if (gp->n_sparse_initializer)
    return cs_error(CS_ERR_UNSUPPORTED,
                    "sparse initializers are not supported (%zu found)",
                    gp->n_sparse_initializer);
  size_t *order = malloc(sizeof(size_t) * (gp->n_node + 1));
  if (!order) return cs_error(CS_ERR_NOMEM, "out of memory (%zu nodes)", gp->n_node);
  cs_status st = cs_onnx_order_nodes(gp, order);
  if (st != CS_OK) {
    free(order);
    return st;
  }
  builder b = {m, gp, NULL, {0}, {0}, opt ? opt->eval : NULL, 0};
  b.g = cs_graph_new(gp->name && *gp->name ? gp->name : "graph");
  if (!b.g) {
    free(order);
    return CS_ERR_NOMEM;
  }
  b.g->opset = (int)m->opset;
  b.g->mem_limit = opt && opt->max_memory ? opt->max_memory : CS_MEM_LIMIT_DEFAULT;
  b.g->inputs = malloc(sizeof(int) * (gp->n_input + 1));
  b.g->outputs = malloc(sizeof(int) * (gp->n_output + 1));
  if (!b.g->inputs || !b.g->outputs)
    st = cs_error(CS_ERR_NOMEM, "out of memory (%zu inputs, %zu outputs)", gp->n_input, gp->n_output);
  if (st == CS_OK) st = cs_onnx_map_init(&b.vals, gp->n_input + gp->n_initializer + 2 * gp->n_node);
  if (st == CS_OK) st = cs_onnx_map_init(&b.inits, gp->n_initializer);
  for (size_t i = 0; i < gp->n_initializer && st == CS_OK; i++)
    st = cs_onnx_map_put(&b.inits, gp->initializer[i]->name, (int)i);
  /* An input with an initializer of the same name is a constant. */
  for (size_t i = 0; i < gp->n_input && st == CS_OK; i++)
    if (cs_onnx_map_get(&b.inits, gp->input[i]->name) < 0)
      st = add_input(&b, gp->input[i]);
  for (size_t i = 0; i < gp->n_node && st == CS_OK; i++)
    st = add_node(&b, gp->node[order[i]], order[i]);
  for (size_t i = 0; i < gp->n_output && st == CS_OK; i++)
    st = add_output(&b, gp->output[i]);
  if (st == CS_OK) st = check_const_only(b.g);
  /* Folded nodes and the constants only they read go now. */
  if (st == CS_OK && b.folded) st = cs_graph_compact(b.g);
  if (st == CS_OK && (st = cs_graph_verify(b.g)) != CS_OK && st != CS_ERR_NOMEM) {
    char why[1024]; /* the message is the buffer cs_error writes */
    snprintf(why, sizeof why, "%s", cs_error_message());
    st = cs_error(CS_ERR_INTERNAL, "frontend built an invalid graph: %s", why);
  }
  free(order);
  cs_onnx_map_free(&b.vals);
  cs_onnx_map_free(&b.inits);
  if (st != CS_OK) {
    cs_graph_free(b.g);
    return st;
  }
  *out = b.g;
  return CS_OK;
}

cs_status cs_onnx_build_model(const cs_onnx_model *m, const cs_onnx_options *opt, cs_graph **out) {
  cs_status st = cs_onnx_check_opset(m);
  if (st != CS_OK) return st;
  cs_onnx_str list = {0};
  int n = cs_onnx_list_unsupported(m->proto->graph, opt && opt->eval, &list);
  if (n > 0) {
    st = cs_error(CS_ERR_UNSUPPORTED, "unsupported op%s: %s", n == 1 ? "" : "s",
                  cs_onnx_s(list.s));
    cs_onnx_str_free(&list);
    return st;
  }
  return build(m, opt, out);
}

cs_status cs_onnx_load_with(const char *path, const cs_onnx_options *opt, cs_graph **out) {
  *out = NULL;
  cs_onnx_model m;
  cs_status st = cs_onnx_model_open(path, opt && opt->max_memory ? opt->max_memory : CS_MEM_LIMIT_DEFAULT, &m);
  if (st != CS_OK) return st; /* already names the file */
  st = cs_onnx_build_model(&m, opt, out);
  if (st != CS_OK) {
    char *msg = strdup(cs_error_message());
    if (msg) cs_error(st, "%s: %s", path, msg); /* else the message stands without the file */
    free(msg);
  }
  cs_onnx_model_close(&m);
  return st;
}

cs_status cs_onnx_load(const char *path, cs_onnx_eval_fn eval, cs_graph **out) {
  cs_onnx_options opt = {.eval = eval};
  return cs_onnx_load_with(path, &opt, out);
}

cs_status cs_onnx_load_buffer(const void *data, size_t len, const char *name, const cs_onnx_options *opt,
                              cs_graph **out) {
  *out = NULL;
  cs_onnx_model m;
  cs_status st = cs_onnx_model_from_buffer(data, len, name, &m);
  if (st != CS_OK) return st;
  st = cs_onnx_build_model(&m, opt, out);
  cs_onnx_model_close(&m);
  return st;
}
