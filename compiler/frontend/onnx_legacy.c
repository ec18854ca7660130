/*
 * onnx_legacy.c — older opsets into the current form of each op, so that
 * shape inference, the passes and the lowering read one form only:
 *
 *   op          before  attribute(s)            become input
 *   Clip        11      min, max                1, 2 (the input's dtype)
 *   Pad         11      pads, value             1 (int64), 2 (the input's dtype)
 *   Slice       10      starts, ends, axes      1, 2, 3 (int64)
 *   Split       13      split                   1 (int64)
 *   Squeeze     13      axes                    1 (int64)
 *   Unsqueeze   13      axes                    1 (int64)
 *   ReduceMean  18      axes                    1 (int64)
 *
 * Softmax before opset 13 (default axis 1) normalizes the input flattened
 * to 2-D at `axis`; with axis = rank − 1 that is opset 13's Softmax, any
 * other axis becomes Flatten → Softmax(axis 1) → Reshape.
 * Upsample (opsets 7–9) and Resize in nearest mode with whole-number
 * scales become a repeat of existing kernels (onnx_resize.c).
 * From the opset that made it an input, the attribute is an error rather
 * than silently ignored (or silently used).
 *
 * Opsets 1 to 6 (upgrade_pre7): consumed_inputs (a memory hint of
 * opsets 1-5) means nothing and is dropped; Concat's axis defaults to 1
 * before opset 4; Pad-1's "paddings" is Pad-2's "pads"; Reshape-1..4's
 * shape attribute becomes input 1. Forms that compute something else are
 * refused with the op and its version: the binary ops' legacy broadcast
 * (broadcast = 1 with an axis that is not the trailing one), training
 * BatchNormalization/Dropout (is_test = 0, their default), Cast-1's
 * string type names, Tile-1's (tiles, axis) inputs, Upsample before 7.
 */
#include "onnx_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct legacy_input {
  cs_op op;
  int before;        /* opsets below this one use the attributes */
  int index;         /* input index of the first attribute */
  const char *attrs[3];
} legacy_input;

static const legacy_input kLegacy[] = {
    {CS_OP_CLIP, 11, 1, {"min", "max"}},
    {CS_OP_PAD, 11, 1, {"pads", "value"}},
    {CS_OP_SLICE, 10, 1, {"starts", "ends", "axes"}},
    {CS_OP_SPLIT, 13, 1, {"split"}},
    {CS_OP_SQUEEZE, 13, 1, {"axes"}},
    {CS_OP_UNSQUEEZE, 13, 1, {"axes"}},
    {CS_OP_REDUCE_MEAN, 18, 1, {"axes"}},
    {CS_OP_REDUCE_L2, 18, 1, {"axes"}},
    {CS_OP_RESHAPE, 5, 1, {"shape"}},
};

/* Put value v at input `index` of node id, growing the list with absent
 * (−1) inputs; an input already there is an error (both forms given). */
static cs_status set_input(cs_onnx_infer *c, int id, int index, int v,
                           const char *attr) {
  cs_node *n = &c->g->nodes[id];
  if (index < n->n_inputs && n->inputs[index] >= 0)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "has both the attribute '%s' and input %d (model "
                            "opset %d)",
                            attr, index, c->opset);
  if (index >= n->n_inputs) {
    int *ins = realloc(n->inputs, sizeof(int) * (size_t)(index + 1));
    if (!ins) return cs_error(CS_ERR_NOMEM, "out of memory");
    for (int j = n->n_inputs; j <= index; j++) ins[j] = -1;
    n->inputs = ins;
    n->n_inputs = index + 1;
  }
  cs_node_set_input(c->g, id, index, v); /* keeps the reader index */
  return CS_OK;
}

/* The constant an attribute stands for: ints → int64 [n]; a float → a
 * scalar of the node's input dtype (Clip's bounds, Pad's value). */
static int attr_const(cs_onnx_infer *c, int id, const cs_attr *a) {
  const cs_node *n = &c->g->nodes[id];
  char name[512];
  snprintf(name, sizeof name, "%s.%s", n->name, a->name);
  if (a->kind == CS_ATTR_INTS) {
    int64_t len = a->n;
    return cs_graph_add_const(c->g, name, CS_DTYPE_I64, 1, &len, a->ints);
  }
  double f = a->kind == CS_ATTR_FLOAT ? a->f : (double)a->i;
  cs_dtype dt = cs_graph_value(c->g, n->inputs[0])->dtype;
  int v = cs_graph_add_const(c->g, name, dt, 0, NULL, NULL);
  void *d = cs_graph_value(c->g, v)->data;
  switch (dt) {
    case CS_DTYPE_F32: *(float *)d = (float)f; break;
    case CS_DTYPE_I8: *(int8_t *)d = (int8_t)f; break;
    case CS_DTYPE_U8: *(uint8_t *)d = (uint8_t)f; break;
    case CS_DTYPE_I16: *(int16_t *)d = (int16_t)f; break;
    case CS_DTYPE_U16: *(uint16_t *)d = (uint16_t)f; break;
    case CS_DTYPE_I32: *(int32_t *)d = (int32_t)f; break;
    case CS_DTYPE_I64: *(int64_t *)d = (int64_t)f; break;
    case CS_DTYPE_BOOL: *(uint8_t *)d = f != 0.0; break;
    default: /* f16, f64, …: the shape rules refuse them for Clip and Pad */
      memset(d, 0, cs_dtype_size(dt));
      break;
  }
  return v;
}

static cs_status upgrade_inputs(cs_onnx_infer *c, int id, const legacy_input *l) {
  cs_node *n = &c->g->nodes[id];
  for (int k = 0; k < 3 && l->attrs[k]; k++) {
    const cs_attr *a = cs_node_attr(n, l->attrs[k]);
    if (!a) continue;
    if (c->opset >= l->before)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "'%s' is an input since opset %d, not an "
                              "attribute (model opset %d)",
                              l->attrs[k], l->before, c->opset);
    int want = a->kind == CS_ATTR_INTS ? 1 : 0;
    if ((!want && a->kind != CS_ATTR_FLOAT) ||
        (want && a->n > 2 * CS_MAX_RANK && l->op != CS_OP_SPLIT))
      return cs_onnx_node_err(c, n, CS_ERR_INVALID, "attribute '%s' has the wrong type or length",
                              l->attrs[k]);
    int v = attr_const(c, id, a);
    char attr[64];
    snprintf(attr, sizeof attr, "%s", l->attrs[k]);
    cs_status st = set_input(c, id, l->index + k, v, attr);
    if (st != CS_OK) return st;
    n = &c->g->nodes[id];
    cs_node_remove_attr(n, attr);
  }
  if (c->opset < l->before && (l->op == CS_OP_REDUCE_MEAN || l->op == CS_OP_REDUCE_L2) && n->n_inputs > 2)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "expects 1 input at opset < 18, got %d",
                            n->n_inputs - 1);
  return CS_OK;
}

/* Softmax < 13 over an inner axis: Flatten(axis) → Softmax(1) → Reshape.
 * Node id becomes the Flatten; the other two are appended (ids stay in
 * topological order) and their shapes inferred here. */
static cs_status upgrade_softmax(cs_onnx_infer *c, int id) {
  cs_node *n = &c->g->nodes[id];
  const cs_value *x = cs_graph_value(c->g, n->inputs[0]);
  int64_t axis = cs_node_attr_int(n, "axis", 1);
  if (x->rank == 0 || axis < -x->rank || axis >= x->rank)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "axis %lld is out of range for rank %d",
                            (long long)axis, x->rank);
  if (axis < 0) axis += x->rank;
  if (axis == x->rank - 1) {
    cs_node_set_attr_int(n, "axis", axis);
    return CS_OK;
  }
  int64_t shape[CS_MAX_RANK], flat[2] = {1, 1};
  int rank = x->rank;
  memcpy(shape, x->shape, sizeof shape);
  for (int d = 0; d < rank; d++) flat[d < axis ? 0 : 1] *= shape[d];
  char name[512], base[256];
  snprintf(base, sizeof base, "%s", n->name);
  int y = n->outputs[0];
  snprintf(name, sizeof name, "%s.flat", base);
  int f = cs_graph_add_value(c->g, name, x->dtype, 2, flat);
  snprintf(name, sizeof name, "%s.softmax", base);
  int s = cs_graph_add_value(c->g, name, x->dtype, 2, flat);
  snprintf(name, sizeof name, "%s.shape", base);
  int64_t r = rank;
  int shp = cs_graph_add_const(c->g, name, CS_DTYPE_I64, 1, &r, shape);
  n = &c->g->nodes[id];
  n->op = CS_OP_FLATTEN;
  n->outputs[0] = f;
  cs_graph_value(c->g, f)->producer = id;
  cs_node_set_attr_int(n, "axis", axis);
  snprintf(name, sizeof name, "%s.rows", base);
  int sm = cs_graph_add_node(c->g, CS_OP_SOFTMAX, name, base, 1, &f, 1, &s);
  cs_node_set_attr_int(&c->g->nodes[sm], "axis", 1);
  int ins[2] = {s, shp};
  snprintf(name, sizeof name, "%s.unflat", base);
  int rs = cs_graph_add_node(c->g, CS_OP_RESHAPE, name, base, 2, ins, 1, &y);
  cs_status st = cs_onnx_infer_node(c, sm);
  if (st == CS_OK) st = cs_onnx_infer_node(c, rs);
  return st;
}

static cs_status rename_attr(cs_node *n, const char *from, const char *to) {
  for (int i = 0; i < n->n_attrs; i++) {
    if (strcmp(n->attrs[i].name, from)) continue;
    size_t len = strlen(to) + 1;
    char *s = malloc(len);
    if (!s) return cs_error(CS_ERR_NOMEM, "out of memory");
    memcpy(s, to, len);
    free(n->attrs[i].name);
    n->attrs[i].name = s;
  }
  return CS_OK;
}

/* Opset-1..6 binary ops (Add, Sub, Mul, Div, Pow, And, Or, Xor, Equal,
 * Greater, Less): without broadcast = 1 the inputs have one shape; with
 * it B matches A's trailing axes (from `axis`), which is numpy's rule only
 * when axis = rank(A) − rank(B). */
static cs_status upgrade_legacy_broadcast(cs_onnx_infer *c, cs_node *n) {
  const cs_value *a = cs_onnx_in(c, n, 0), *b = cs_onnx_in(c, n, 1);
  if (!a || !b) return CS_OK; /* the shape rule names the missing input */
  if (cs_node_attr_int(n, "broadcast", 0)) {
    int64_t axis = cs_node_attr_int(n, "axis", a->rank - b->rank);
    if (axis < 0) axis += a->rank;
    if (b->rank > a->rank || axis != a->rank - b->rank)
      return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                              "%s-%d's legacy broadcast of B %s along axis "
                              "%lld of A %s is not read (numpy broadcasting "
                              "from opset 7 is); convert the model to opset 7",
                              cs_op_name(n->op), c->opset,
                              cs_onnx_shape_str(b->rank, b->shape), (long long)axis,
                              cs_onnx_shape_str(a->rank, a->shape));
  } else if (a->rank != b->rank ||
             memcmp(a->shape, b->shape, sizeof(int64_t) * (size_t)a->rank)) {
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "A %s and B %s differ and broadcast is 0 "
                            "(opset %d needs equal shapes)",
                            cs_onnx_shape_str(a->rank, a->shape),
                            cs_onnx_shape_str(b->rank, b->shape), c->opset);
  }
  cs_node_remove_attr(n, "broadcast");
  cs_node_remove_attr(n, "axis");
  return CS_OK;
}

static cs_status upgrade_pre7(cs_onnx_infer *c, int id) {
  cs_node *n = &c->g->nodes[id];
  const char *op = cs_op_name(n->op);
  cs_node_remove_attr(n, "consumed_inputs");
  switch (n->op) {
    case CS_OP_ADD: case CS_OP_SUB: case CS_OP_MUL: case CS_OP_DIV:
    case CS_OP_POW: case CS_OP_AND: case CS_OP_OR: case CS_OP_XOR:
    case CS_OP_EQUAL: case CS_OP_GREATER: case CS_OP_LESS:
      return upgrade_legacy_broadcast(c, n);
    case CS_OP_GEMM: /* broadcast = 0 (C has Y's shape) is a case of 1 */
      cs_node_remove_attr(n, "broadcast");
      return CS_OK;
    case CS_OP_BATCH_NORMALIZATION:
    case CS_OP_DROPOUT:
      if (!cs_node_attr_int(n, "is_test", 0))
        return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                                "%s-%d with is_test = 0 (its default) is the "
                                "training form; set is_test = 1 for inference",
                                op, c->opset);
      cs_node_remove_attr(n, "is_test");
      if (n->op == CS_OP_BATCH_NORMALIZATION && n->n_outputs > 1)
        return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                                "%s-%d in inference has one output, the node "
                                "has %d", op, c->opset, n->n_outputs);
      return CS_OK;
    case CS_OP_CONCAT:
      if (c->opset < 4 && !cs_node_attr(n, "axis"))
        return cs_node_set_attr_int(n, "axis", 1);
      return CS_OK;
    case CS_OP_PAD:
      return c->opset < 2 ? rename_attr(n, "paddings", "pads") : CS_OK;
    case CS_OP_CAST:
    case CS_OP_TILE:
    case CS_OP_UPSAMPLE:
      if (c->opset < 6 || n->op == CS_OP_UPSAMPLE)
        return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                                "%s-%d is not read (%s); convert the model to "
                                "opset 7",
                                op, c->opset,
                                n->op == CS_OP_CAST   ? "'to' is a type name"
                                : n->op == CS_OP_TILE ? "tiles and axis inputs"
                                                      : "experimental scales");
      return CS_OK;
    default:
      return CS_OK;
  }
}

cs_status cs_onnx_upgrade_node(cs_onnx_infer *c, int id) {
  if (c->opset < 7) {
    cs_status st = upgrade_pre7(c, id);
    if (st != CS_OK) return st;
  }
  cs_node *n = &c->g->nodes[id];
  if (n->op == CS_OP_BATCH_NORMALIZATION && cs_node_attr_int(n, "training_mode", 0))
    return cs_onnx_lower_training_batch_norm(c, id);
  for (size_t i = 0; i < sizeof kLegacy / sizeof kLegacy[0]; i++)
    if (kLegacy[i].op == n->op) return upgrade_inputs(c, id, &kLegacy[i]);
  if (n->op == CS_OP_SOFTMAX && c->opset < 13 && n->n_inputs == 1 &&
      n->inputs[0] >= 0)
    return upgrade_softmax(c, id);
  if (n->op == CS_OP_UPSAMPLE || n->op == CS_OP_RESIZE) return cs_onnx_lower_resize(c, id);
  return CS_OK;
}
