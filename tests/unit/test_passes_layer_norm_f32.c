/*
 * PushTransposeReduceMean + FuseLayerNormF32 (+ LegalizeOps): a decomposed
 * float LayerNorm becomes the LayerNormalization ONNX Runtime runs for it,
 * with its kernel order (tidsp_layer_norm_params.variant): plain, or
 * Welford's when ORT makes it a SkipLayerNormalization (a residual Add only
 * it reads), or, below opset 17 on a Transpose, the mean moved above the
 * Transpose and the rest an RMS norm plus the bias Add; each rule that
 * fails leaves the nodes as they are. tests/e2e/test_ort_norm_fusions.py
 * checks the values against ORT.
 */
#include <stdio.h>
#include <string.h>

#include "graph_build.h"
#include "passes/pass_list.h"
#include "unit.h"

enum { T = 5, N = 24 };

typedef enum {
  OK,            /* the pattern */
  D_IS_OUTPUT,   /* x − mean is a graph output too: ORT keeps the nodes */
  EXPONENT_3,    /* Pow(d, 3): not a LayerNorm (ORT 1.30 fuses it all the
                    same, a wrong result this does not copy) */
  MEAN_AXIS_1,   /* the first mean over axis 1 */
  EPS_FIRST,     /* Add(eps, var): fused, with ORT's default epsilon */
  ON_TRANSPOSE,  /* x = Transpose(t) */
  RESIDUAL,      /* x = Add(a, r), read by the LayerNorm alone */
  RESIDUAL_TWICE /* x = Add(a, r), read by another Add too */
} ln_case;

static float w_[N], b_[N];

static int mean_node(cs_graph *g, const char *name, int v, int64_t axis) {
  int64_t one = 1, shape[3];
  const cs_value *vv = cs_graph_value(g, v);
  memcpy(shape, vv->shape, sizeof shape);
  shape[axis < 0 ? 2 : axis] = 1;
  char an[64];
  snprintf(an, sizeof an, "%s.axes", name);
  int in[2] = {v, cs_graph_add_const(g, an, CS_DTYPE_I64, 1, &one, &axis)};
  return gb_node(g, CS_OP_REDUCE_MEAN, name, 2, in, CS_DTYPE_F32, 3, shape, NULL);
}

/* Builds the case, runs the two passes (and LegalizeOps when legalize),
 * returns the graph. */
static cs_graph *run(ln_case k, int opset, int legalize) {
  cs_graph *g = cs_graph_new("ln");
  g->opset = opset;
  int64_t s[3] = {1, T, N}, st[3] = {1, N, T}, c[1] = {N};
  int x0 = gb_value(g, "x", CS_DTYPE_F32, 3, k == ON_TRANSPOSE ? st : s), r = -1, x = x0;
  if (k == ON_TRANSPOSE) {
    int tid;
    x = gb_node(g, CS_OP_TRANSPOSE, "tr", 1, &x0, CS_DTYPE_F32, 3, s, &tid);
    int64_t perm[3] = {0, 2, 1};
    cs_node_set_attr_ints(cs_graph_node(g, tid), "perm", 3, perm);
  }
  if (k == RESIDUAL || k == RESIDUAL_TWICE) {
    r = gb_value(g, "r", CS_DTYPE_F32, 3, s);
    int in[2] = {x0, r};
    x = gb_node(g, CS_OP_ADD, "residual", 2, in, CS_DTYPE_F32, 3, s, NULL);
  }
  int m = mean_node(g, "mean", x, k == MEAN_AXIS_1 ? 1 : -1);
  int sub_in[2] = {x, m};
  int d = gb_node(g, CS_OP_SUB, "sub", 2, sub_in, CS_DTYPE_F32, 3, s, NULL);
  int pin[2] = {d, gb_scalar_f32(g, "two", k == EXPONENT_3 ? 3.0f : 2.0f)};
  int p = gb_node(g, CS_OP_POW, "pow", 2, pin, CS_DTYPE_F32, 3, s, NULL);
  int v = mean_node(g, "var", p, -1);
  int eps = gb_scalar_f32(g, "eps", 1e-6f);
  int ein[2] = {k == EPS_FIRST ? eps : v, k == EPS_FIRST ? v : eps};
  int ve = gb_node(g, CS_OP_ADD, "add_eps", 2, ein, CS_DTYPE_F32, 3, cs_graph_value(g, v)->shape, NULL);
  int sd = gb_node(g, CS_OP_SQRT, "sqrt", 1, &ve, CS_DTYPE_F32, 3, cs_graph_value(g, v)->shape, NULL);
  int din[2] = {d, sd};
  int nrm = gb_node(g, CS_OP_DIV, "div", 2, din, CS_DTYPE_F32, 3, s, NULL);
  int min[2] = {cs_graph_add_const(g, "w", CS_DTYPE_F32, 1, c, w_), nrm};
  int nw = gb_node(g, CS_OP_MUL, "mul", 2, min, CS_DTYPE_F32, 3, s, NULL);
  int ain[2] = {nw, cs_graph_add_const(g, "b", CS_DTYPE_F32, 1, c, b_)};
  int y = gb_node(g, CS_OP_ADD, "add_bias", 2, ain, CS_DTYPE_F32, 3, s, NULL);
  if (k == RESIDUAL_TWICE) {
    int in[2] = {x, y};
    y = gb_node(g, CS_OP_ADD, "residual2", 2, in, CS_DTYPE_F32, 3, s, NULL);
  }
  int ins[2] = {x0, r};
  int outs[2] = {y, d};
  gb_set_io(g, r >= 0 ? 2 : 1, ins, k == D_IS_OUTPUT ? 2 : 1, outs);
  CHECK_MSG(pass_push_transpose_reduce_mean(g, NULL) == CS_OK && pass_fuse_layer_norm_f32(g, NULL) == CS_OK &&
                (!legalize || pass_legalize(g, NULL) == CS_OK),
            "%s", cs_error_message());
  return g;
}

/* The k_layer_norm_f32 of a legalized graph: its variant, or -1. */
static int variant(cs_graph *g) {
  int k = gb_find_op(g, CS_OP_K_LAYER_NORM_F32);
  if (k < 0) return -1;
  const tidsp_layer_norm_params *p = &cs_graph_node(g, k)->k.layer_norm;
  CHECK(p->outer == T && p->norm == N && p->epsilon == 1e-6f);
  return p->variant;
}

int main(void) {
  for (int i = 0; i < N; i++) w_[i] = 0.5f + 0.01f * (float)i, b_[i] = 0.1f * (float)(i % 5);
  cs_graph *g = run(OK, 11, 0);
  CHECK_MSG(gb_count_op(g, CS_OP_LAYER_NORMALIZATION) == 1 && gb_count_op(g, CS_OP_REDUCE_MEAN) == 0 &&
                gb_count_op(g, CS_OP_POW) == 0 && gb_count_op(g, CS_OP_ADD) == 0,
            "the nine nodes are one LayerNormalization");
  int ln = gb_find_op(g, CS_OP_LAYER_NORMALIZATION);
  if (ln >= 0) {
    const cs_node *n = cs_graph_node(g, ln);
    CHECK(cs_node_attr_float(n, "epsilon", 0.0f) == 1e-6f && cs_node_attr_int(n, "axis", 0) == -1);
    CHECK(n->n_inputs == 3 && cs_graph_value(g, n->inputs[0])->producer < 0);
  }
  cs_graph_free(g);
  g = run(OK, 17, 1);
  CHECK_MSG(variant(g) == TIDSP_LN_PLAIN, "a plain LayerNorm: ORT's LayerNormalization order");
  cs_graph_free(g);

  g = run(EXPONENT_3, 11, 0);
  CHECK_MSG(gb_count_op(g, CS_OP_LAYER_NORMALIZATION) == 0 && gb_count_op(g, CS_OP_K_LAYER_NORM_F32) == 0 &&
                gb_count_op(g, CS_OP_REDUCE_MEAN) == 2,
            "x^3: not fused");
  cs_graph_free(g);

  /* x − mean also an output, or the mean over another axis: no LayerNorm,
   * but ORT's RMS norm of x − mean (measured) */
  static const ln_case rms[] = {D_IS_OUTPUT, MEAN_AXIS_1};
  for (size_t i = 0; i < sizeof rms / sizeof rms[0]; i++) {
    g = run(rms[i], 11, 0);
    CHECK_MSG(gb_count_op(g, CS_OP_LAYER_NORMALIZATION) == 0 && gb_count_op(g, CS_OP_REDUCE_MEAN) == 1 &&
                  gb_count_op(g, CS_OP_K_LAYER_NORM_F32) == 1,
              "case %d: RMS norm", (int)rms[i]);
    cs_graph_free(g);
  }
  /* the epsilon as the Add's first input: ORT fuses with 1e-5 */
  g = run(EPS_FIRST, 11, 0);
  ln = gb_find_op(g, CS_OP_LAYER_NORMALIZATION);
  CHECK(ln >= 0 && cs_node_attr_float(cs_graph_node(g, ln), "epsilon", 0.0f) == 1e-5f);
  cs_graph_free(g);

  /* below opset 17 the mean moves above the Transpose: an RMS norm of
   * x − mean, then the bias Add */
  g = run(ON_TRANSPOSE, 11, 0);
  int rm = gb_find_op(g, CS_OP_REDUCE_MEAN);
  CHECK_MSG(rm >= 0 && cs_graph_value(g, cs_graph_node(g, rm)->inputs[0])->producer < 0 &&
                cs_graph_value(g, cs_graph_node(g, rm)->outputs[0])->shape[1] == 1,
            "the mean reads the untransposed input, over its axis 1");
  CHECK(gb_count_op(g, CS_OP_TRANSPOSE) == 2 && gb_count_op(g, CS_OP_LAYER_NORMALIZATION) == 0);
  int k = gb_find_op(g, CS_OP_K_LAYER_NORM_F32);
  CHECK_MSG(k >= 0 && cs_graph_node(g, k)->k.layer_norm.variant == TIDSP_LN_SIMPLIFIED &&
                cs_graph_node(g, k)->inputs[2] < 0 && gb_count_op(g, CS_OP_ADD) == 1,
            "SimplifiedLayerNormalization, no bias, then the Add");
  cs_graph_free(g);
  /* from opset 17 ORT fuses the LayerNorm first and the Transpose stays */
  g = run(ON_TRANSPOSE, 17, 0);
  CHECK(gb_count_op(g, CS_OP_LAYER_NORMALIZATION) == 1 && gb_count_op(g, CS_OP_TRANSPOSE) == 1);
  cs_graph_free(g);

  g = run(RESIDUAL, 13, 1);
  CHECK_MSG(variant(g) == TIDSP_LN_WELFORD, "SkipLayerNormalization: Welford's order");
  cs_graph_free(g);
  g = run(RESIDUAL_TWICE, 13, 1);
  CHECK_MSG(variant(g) == TIDSP_LN_PLAIN, "the residual sum read twice: a plain LayerNormalization");
  cs_graph_free(g);
  UNIT_MAIN_END();
}
