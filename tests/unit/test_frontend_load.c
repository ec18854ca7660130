/*
 * test_frontend_load.c — loading the models of tests/unit/data (made by
 * make_models.py): values, shapes, constants, attributes, quantization.
 * The models declare their outputs with the shapes ONNX Runtime computes,
 * so a successful load already checks every output shape against ORT; the
 * CHECKs below name the interesting ones. Run from the repository root.
 */
#include <string.h>

#include "frontend/onnx.h"
#include "unit.h"

#define DATA "tests/unit/data/"

static cs_graph *load(const char *file) {
  cs_graph *g = NULL;
  cs_status st = cs_onnx_load(file, NULL, &g);
  CHECK_MSG(st == CS_OK && g, "%s: %s", file, cs_error_message());
  if (g) CHECK_MSG(cs_graph_verify(g) == CS_OK, "%s", cs_error_message());
  return st == CS_OK ? g : NULL;
}

static int find(const cs_graph *g, const char *name) {
  for (int i = 0; i < g->n_values; i++)
    if (!strcmp(cs_graph_value(g, i)->name, name)) return i;
  return -1;
}

static const cs_node *node_named(const cs_graph *g, const char *name) {
  for (int i = 0; i < g->n_nodes; i++)
    if (!strcmp(g->nodes[i].name, name)) return &g->nodes[i];
  return NULL;
}

/* The value `name` has dtype and shape `dims` (rank = count). */
static int has_shape(const cs_graph *g, const char *name, cs_dtype dt,
                     int rank, const int64_t *dims) {
  int id = find(g, name);
  if (id < 0) return 0;
  const cs_value *v = cs_graph_value(g, id);
  if (v->dtype != dt || v->rank != rank) return 0;
  for (int i = 0; i < rank; i++)
    if (v->shape[i] != dims[i]) return 0;
  return 1;
}
#define SHAPE(g, name, dt, ...)                                           \
  CHECK_MSG(has_shape(g, name, dt,                                        \
                      (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
                      (int64_t[]){__VA_ARGS__}),                          \
            "value %s", name)
#define SCALAR(g, name, dt) CHECK_MSG(has_shape(g, name, dt, 0, NULL), "value %s", name)

static int ints_eq(const cs_node *n, const char *attr, int count,
                   const int64_t *want) {
  int len = 0;
  const int64_t *v = n ? cs_node_attr_ints(n, attr, &len) : NULL;
  if (!v || len != count) return 0;
  for (int i = 0; i < count; i++)
    if (v[i] != want[i]) return 0;
  return 1;
}
#define INTS(n, attr, ...)                                                    \
  CHECK_MSG(ints_eq(n, attr,                                                  \
                    (int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)), \
                    (int64_t[]){__VA_ARGS__}),                                \
            "attr %s", attr)

static void test_conv_qdq(void) {
  cs_graph *g = load(DATA "m_conv_qdq.onnx");
  if (!g) return;
  CHECK(!strcmp(g->name, "conv_qdq"));
  CHECK(g->opset == 13);
  CHECK(g->n_inputs == 1 && g->n_outputs == 1);
  /* The symbolic batch dim becomes 1. */
  SHAPE(g, "input", CS_DTYPE_F32, 1, 3, 9, 9);
  SHAPE(g, "xq", CS_DTYPE_U8, 1, 3, 9, 9);
  SHAPE(g, "c", CS_DTYPE_F32, 1, 4, 5, 5);
  SHAPE(g, "p", CS_DTYPE_F32, 1, 4, 3, 3);
  SHAPE(g, "gap", CS_DTYPE_F32, 1, 4, 1, 1);
  SHAPE(g, "flat", CS_DTYPE_F32, 1, 4);
  SHAPE(g, "logits", CS_DTYPE_F32, 1, 10);
  CHECK(!strcmp(cs_graph_value(g, g->outputs[0])->name, "prob"));
  CHECK(!strcmp(cs_graph_value(g, g->inputs[0])->name, "input"));

  /* Initializers are constants; producers are set. */
  int w = find(g, "w_q");
  CHECK(w >= 0 && cs_graph_value(g, w)->data && cs_graph_value(g, w)->producer == -1);
  CHECK(cs_graph_value(g, w)->dtype == CS_DTYPE_I8 && cs_value_numel(cs_graph_value(g, w)) == 108);
  int c = find(g, "c");
  const cs_node *conv = node_named(g, "conv1");
  CHECK(conv && conv->op == CS_OP_CONV && cs_graph_value(g, c)->producer == conv - g->nodes);
  CHECK(conv && !strcmp(conv->origin, "conv1"));
  CHECK(conv && conv->n_inputs == 3);
  INTS(conv, "strides", 2, 2);
  INTS(conv, "pads", 1, 1, 1, 1);
  INTS(conv, "kernel_shape", 3, 3);
  const cs_node *fc = node_named(g, "fc");
  CHECK(fc && cs_node_attr_int(fc, "transB", 0) == 1);
  const cs_node *pool = node_named(g, "pool1");
  CHECK(pool && cs_node_attr_int(pool, "ceil_mode", 0) == 1);
  INTS(pool, "pads", 0, 0, 0, 0); /* made explicit */

  /* Quantization recorded on the integer tensors. */
  const cs_value *xq = cs_graph_value(g, find(g, "xq"));
  CHECK(xq->quant && xq->quant->axis == -1 && xq->quant->count == 1);
  CHECK(xq->quant && xq->quant->scale[0] == 0.02f && xq->quant->zero_point[0] == 128);
  const cs_value *wq = cs_graph_value(g, w);
  CHECK(wq->quant && wq->quant->axis == 0 && wq->quant->count == 4);
  CHECK(wq->quant && wq->quant->scale[3] == 0.01f);
  const cs_value *bq = cs_graph_value(g, find(g, "b_q"));
  CHECK(bq->dtype == CS_DTYPE_I32 && bq->quant && bq->quant->axis == 0);
  CHECK(cs_const_get_int(bq, 3) == 3);
  cs_graph_free(g);
}

static void test_shapes14(void) {
  cs_graph *g = load(DATA "m_shapes14.onnx");
  if (!g) return;
  CHECK(g->n_inputs == 3 && g->n_outputs == 21);
  SHAPE(g, "rs", CS_DTYPE_F32, 2, 6, 4);     /* Reshape 0 and -1 */
  SHAPE(g, "tr", CS_DTYPE_F32, 4, 6, 2);     /* Transpose default perm */
  INTS(node_named(g, "transpose"), "perm", 2, 1, 0);
  SHAPE(g, "cat", CS_DTYPE_F32, 4, 6, 4);
  SHAPE(g, "s0", CS_DTYPE_F32, 4, 6, 1);     /* Split with a split input */
  SHAPE(g, "s1", CS_DTYPE_F32, 4, 6, 3);
  SHAPE(g, "sl", CS_DTYPE_F32, 4, 3, 4);     /* Slice: clamping, negative step */
  SHAPE(g, "us", CS_DTYPE_F32, 4, 1, 3, 4, 1);
  SHAPE(g, "sq", CS_DTYPE_F32, 4, 3, 4);     /* Squeeze without axes */
  SHAPE(g, "sq1", CS_DTYPE_F32, 4, 3, 4, 1);
  SHAPE(g, "pd", CS_DTYPE_F32, 4, 6, 7);     /* Pad reflect */
  SHAPE(g, "rm", CS_DTYPE_F32, 4, 4);        /* ReduceMean axes attr, keepdims 0 */
  SHAPE(g, "mm", CS_DTYPE_F32, 2, 6, 2);     /* MatMul batch broadcast */
  SHAPE(g, "mv", CS_DTYPE_F32, 4, 6);        /* MatMul 1-D B */
  SHAPE(g, "vm", CS_DTYPE_F32, 2);           /* MatMul 1-D A */
  SHAPE(g, "gm", CS_DTYPE_F32, 3, 2);        /* Gemm transA */
  SHAPE(g, "mul", CS_DTYPE_F32, 4, 6, 3);    /* broadcasting */
  SHAPE(g, "ap", CS_DTYPE_F32, 1, 2, 4, 5);  /* AveragePool SAME_UPPER */
  SHAPE(g, "cv", CS_DTYPE_F32, 1, 6, 4, 4);  /* Conv SAME_LOWER, group 2 */
  SHAPE(g, "mp", CS_DTYPE_F32, 1, 2, 4, 6);  /* MaxPool ceil_mode */
  SHAPE(g, "mp2", CS_DTYPE_F32, 1, 2, 4, 6); /* ceil_mode, last window dropped */
  /* auto_pad resolved into explicit pads [begins..., ends...]. */
  const cs_node *ap = node_named(g, "avgpool");
  INTS(ap, "pads", 1, 0, 1, 1);
  CHECK(ap && !strcmp(cs_node_attr(ap, "auto_pad")->s, "NOTSET"));
  INTS(node_named(g, "conv_same_lower"), "pads", 1, 1, 1, 0);
  INTS(node_named(g, "conv_same_lower"), "kernel_shape", 3, 2);
  const cs_node *hs = node_named(g, "hsig");
  CHECK(hs && cs_node_attr_float(hs, "alpha", 0) == 0.25f);
  CHECK(hs && cs_node_attr(hs, "alpha")->kind == CS_ATTR_FLOAT);
  const cs_node *pad = node_named(g, "pad");
  CHECK(pad && !strcmp(cs_node_attr(pad, "mode")->s, "reflect"));
  /* Dropout's omitted mask output is not created. */
  CHECK(node_named(g, "dropout")->n_outputs == 1);
  cs_graph_free(g);
}

static void test_opset18(void) {
  cs_graph *g = load(DATA "m_opset18.onnx");
  if (!g) return;
  CHECK(g->opset == 18);
  SHAPE(g, "a", CS_DTYPE_F32, 2, 3, 5); /* num_outputs = 3 over 7: 3, 3, 1 */
  SHAPE(g, "b", CS_DTYPE_F32, 2, 3, 5);
  SHAPE(g, "c", CS_DTYPE_F32, 2, 1, 5);
  SHAPE(g, "rm", CS_DTYPE_F32, 2, 7, 1);  /* axes input */
  SCALAR(g, "rm_all", CS_DTYPE_F32);      /* no axes: all, keepdims 0 */
  SHAPE(g, "rm_noop", CS_DTYPE_F32, 2, 7, 5);
  SHAPE(g, "pd", CS_DTYPE_F32, 2, 10, 5); /* Pad with an axes input */
  cs_graph_free(g);
}

static void test_qdq21(void) {
  cs_graph *g = load(DATA "m_qdq21.onnx");
  if (!g) return;
  CHECK(g->opset == 21);
  SHAPE(g, "q16", CS_DTYPE_I16, 1, 4);
  SHAPE(g, "q8", CS_DTYPE_I8, 1, 4);   /* output_dtype, no zero point */
  SHAPE(g, "qu8", CS_DTYPE_U8, 1, 4);  /* the default */
  SHAPE(g, "d16", CS_DTYPE_F32, 1, 4);
  const cs_value *q8 = cs_graph_value(g, find(g, "q8"));
  CHECK(q8->quant && q8->quant->zero_point[0] == 0 && q8->quant->scale[0] == 0.001f);
  cs_graph_free(g);
}

static void test_typed_init(void) {
  cs_graph *g = load(DATA "m_typed_init.onnx");
  if (!g) return;
  /* 'wf' is listed as an input and an initializer: a constant. */
  CHECK(g->n_inputs == 1 && !strcmp(cs_graph_value(g, g->inputs[0])->name, "x"));
  const cs_value *wf = cs_graph_value(g, find(g, "wf"));
  CHECK(wf->data && cs_const_get_float(wf, 3) == 4.0);
  const cs_value *i8 = cs_graph_value(g, find(g, "wi8"));
  CHECK(i8->dtype == CS_DTYPE_I8 && cs_const_get_int(i8, 0) == -128 &&
        cs_const_get_int(i8, 2) == 127);
  const cs_value *u16 = cs_graph_value(g, find(g, "wu16"));
  CHECK(u16->dtype == CS_DTYPE_U16 && cs_const_get_int(u16, 1) == 65535);
  const cs_value *bl = cs_graph_value(g, find(g, "flags"));
  CHECK(bl->dtype == CS_DTYPE_BOOL && cs_const_get_int(bl, 0) == 1 &&
        cs_const_get_int(bl, 1) == 0);
  const cs_value *sh = cs_graph_value(g, find(g, "shape"));
  CHECK(sh->dtype == CS_DTYPE_I64 && cs_const_get_int(sh, 0) == 4);
  /* Constant nodes become constants named after their output. */
  const cs_value *cf = cs_graph_value(g, find(g, "cf"));
  CHECK(cf->data && cf->dtype == CS_DTYPE_F32 && cf->rank == 0 &&
        cs_const_get_float(cf, 0) == 2.5);
  const cs_value *ci = cs_graph_value(g, find(g, "ci"));
  CHECK(ci->data && ci->dtype == CS_DTYPE_I64 && ci->rank == 1 &&
        cs_const_get_int(ci, 1) == 4);
  const cs_value *ct = cs_graph_value(g, find(g, "ct"));
  CHECK(ct->data && ct->dtype == CS_DTYPE_I32 && cs_const_get_int(ct, 1) == -7);
  CHECK(node_named(g, "const_f") == NULL); /* no IR node for a Constant */
  SHAPE(g, "r", CS_DTYPE_F32, 4, 1);
  SHAPE(g, "r2", CS_DTYPE_F32, 1, 4);
  SHAPE(g, "o_bool", CS_DTYPE_BOOL, 2);
  cs_graph_free(g);
}

static void test_external(void) {
  cs_graph *g = load(DATA "m_external.onnx");
  if (!g) return;
  /* external.bin holds float32 -4..3; offset 16 is the 5th float. */
  const cs_value *w = cs_graph_value(g, find(g, "w"));
  CHECK(w->data && cs_const_get_float(w, 0) == 0.0 &&
        cs_const_get_float(w, 3) == 3.0);
  cs_graph_free(g);
}

int main(void) {
  test_conv_qdq();
  test_shapes14();
  test_opset18();
  test_qdq21();
  test_typed_init();
  test_external();
  UNIT_MAIN_END();
}
