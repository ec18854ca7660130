/*
 * Compile-time evaluation of constant subgraphs (eval/): nodes are added
 * and evaluated one by one, as the ONNX frontend does. A Swin-style
 * shifted-window attention mask built from ConstantOfShape, ScatterND,
 * Reshape, Transpose, Unsqueeze, Sub, Equal, Not and Where becomes one
 * constant with the values of a direct computation; a subgraph that
 * depends on a graph input is left alone; bad indices, divisions by zero
 * and oversized results are errors that name the node.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "eval/const_eval.h"
#include "graph_build.h"
#include "unit.h"

/* Add a node (one output of the given type) and evaluate it at once, as
 * the frontend does; *folded tells whether it became a constant. */
static int add_eval(cs_graph *g, cs_op op, const char *name, int n_in, const int *in, cs_dtype t, int rank,
                    const int64_t *shape, int *folded) {
  int id;
  int y = gb_node(g, op, name, n_in, in, t, rank, shape, &id);
  int f = 0;
  CHECK_MSG(cs_const_eval_node(g, id, &f) == CS_OK, "%s: %s", name, cs_error_message());
  if (folded) *folded = f;
  return y;
}

static int const_i64(cs_graph *g, const char *name, int rank, const int64_t *shape, const int64_t *v) {
  return cs_graph_add_const(g, name, CS_DTYPE_I64, rank, shape, v);
}

enum { HH = 8, WW = 8, WS = 4, SHIFT = 2, NWIN = (HH / WS) * (WW / WS), WA = WS * WS };

/* torchvision's shifted_window_attention mask, directly: regions numbered
 * over (h slice, w slice), windows of WS×WS, −100 where two positions of a
 * window lie in different regions. */
static void expected_mask(float *mask) {
  float img[HH][WW];
  int cnt = 0;
  int hb[4] = {0, HH - WS, HH - SHIFT, HH}, wb[4] = {0, WW - WS, WW - SHIFT, WW};
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++, cnt++)
      for (int h = hb[i]; h < hb[i + 1]; h++)
        for (int w = wb[j]; w < wb[j + 1]; w++) img[h][w] = (float)cnt;
  for (int win = 0; win < NWIN; win++) {
    int wh = win / (WW / WS), ww = win % (WW / WS);
    float v[WA];
    for (int a = 0; a < WA; a++) v[a] = img[wh * WS + a / WS][ww * WS + a % WS];
    for (int a = 0; a < WA; a++)
      for (int b = 0; b < WA; b++) mask[(win * WA + a) * WA + b] = v[a] - v[b] != 0.0f ? -100.0f : 0.0f;
  }
}

/* ConstantOfShape → ScatterND × 9 regions → Reshape → Transpose → Reshape
 * → Unsqueeze × 2 → Sub → Equal → Not → Where: the graph torch.export
 * writes for the mask, every node folded as it is added. */
static void test_swin_mask(void) {
  cs_graph *g = cs_graph_new("swin_mask");
  int folded, all = 1;
  int64_t two = 2, hw[2] = {HH, WW};
  int shape = const_i64(g, "shape", 1, &two, hw);
  int img = add_eval(g, CS_OP_CONSTANT_OF_SHAPE, "cos", 1, &shape, CS_DTYPE_F32, 2, hw, &folded);
  all &= folded;
  int hb[4] = {0, HH - WS, HH - SHIFT, HH}, wb[4] = {0, WW - WS, WW - SHIFT, WW}, cnt = 0;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++, cnt++) {
      int64_t idx[HH * WW][2], n = 0;
      for (int h = hb[i]; h < hb[i + 1]; h++)
        for (int w = wb[j]; w < wb[j + 1]; w++, n++) {
          idx[n][0] = h;
          idx[n][1] = w;
        }
      float upd[HH * WW];
      for (int k = 0; k < n; k++) upd[k] = (float)cnt;
      char name[32];
      int64_t ishape[2] = {n, 2};
      snprintf(name, sizeof name, "idx%d", cnt);
      int iv = const_i64(g, name, 2, ishape, &idx[0][0]);
      snprintf(name, sizeof name, "upd%d", cnt);
      int uv = cs_graph_add_const(g, name, CS_DTYPE_F32, 1, &n, upd);
      snprintf(name, sizeof name, "scatter%d", cnt);
      int in[3] = {img, iv, uv};
      img = add_eval(g, CS_OP_SCATTER_ND, name, 3, in, CS_DTYPE_F32, 2, hw, &folded);
      all &= folded;
    }
  int64_t s4[4] = {HH / WS, WS, WW / WS, WS}, four = 4, p[4] = {0, 2, 1, 3}, t4[4] = {HH / WS, WW / WS, WS, WS};
  int in2[2] = {img, const_i64(g, "s4", 1, &four, s4)};
  int r = add_eval(g, CS_OP_RESHAPE, "view", 2, in2, CS_DTYPE_F32, 4, s4, &folded);
  all &= folded;
  int tid;
  int tr = gb_node(g, CS_OP_TRANSPOSE, "permute", 1, &r, CS_DTYPE_F32, 4, t4, &tid);
  cs_node_set_attr_ints(cs_graph_node(g, tid), "perm", 4, p);
  CHECK(cs_const_eval_node(g, tid, &folded) == CS_OK);
  all &= folded;
  int64_t s2[2] = {NWIN, WA}, s3a[3] = {NWIN, 1, WA}, s3b[3] = {NWIN, WA, 1}, one = 1, ax1 = 1, ax2 = 2;
  int in3[2] = {tr, const_i64(g, "s2", 1, &two, s2)};
  int mw = add_eval(g, CS_OP_RESHAPE, "windows", 2, in3, CS_DTYPE_F32, 2, s2, &folded);
  all &= folded;
  int in4[2] = {mw, const_i64(g, "ax1", 1, &one, &ax1)};
  int u1 = add_eval(g, CS_OP_UNSQUEEZE, "unsq1", 2, in4, CS_DTYPE_F32, 3, s3a, &folded);
  all &= folded;
  int in5[2] = {mw, const_i64(g, "ax2", 1, &one, &ax2)};
  int u2 = add_eval(g, CS_OP_UNSQUEEZE, "unsq2", 2, in5, CS_DTYPE_F32, 3, s3b, &folded);
  all &= folded;
  int64_t s3[3] = {NWIN, WA, WA};
  int in6[2] = {u1, u2};
  int sub = add_eval(g, CS_OP_SUB, "sub", 2, in6, CS_DTYPE_F32, 3, s3, &folded);
  all &= folded;
  int in7[2] = {sub, gb_scalar_f32(g, "zero", 0.0f)};
  int eq = add_eval(g, CS_OP_EQUAL, "eq", 2, in7, CS_DTYPE_BOOL, 3, s3, &folded);
  all &= folded;
  int ne = add_eval(g, CS_OP_NOT, "ne", 1, &eq, CS_DTYPE_BOOL, 3, s3, &folded);
  all &= folded;
  int in8[3] = {ne, gb_scalar_f32(g, "neg100", -100.0f), gb_scalar_f32(g, "zero2", 0.0f)};
  int mask = add_eval(g, CS_OP_WHERE, "masked_fill", 3, in8, CS_DTYPE_F32, 3, s3, &folded);
  all &= folded;
  CHECK_MSG(all, "every node of the mask folds");
  /* The attention scores are a runtime tensor: their Add stays. */
  int scores = gb_value(g, "scores", CS_DTYPE_F32, 3, s3);
  int in9[2] = {scores, mask};
  int y = add_eval(g, CS_OP_ADD, "add_mask", 2, in9, CS_DTYPE_F32, 3, s3, &folded);
  CHECK(!folded);
  gb_set_io(g, 1, &scores, 1, &y);
  int live = 0;
  for (int i = 0; i < g->n_nodes; i++) live += !g->nodes[i].dead;
  CHECK_MSG(live == 1, "one node left (the Add), got %d", live);
  const cs_value *mv = cs_graph_value(g, mask);
  CHECK(mv->data && mv->dtype == CS_DTYPE_F32 && cs_value_numel(mv) == NWIN * WA * WA);
  float *want = malloc(sizeof(float) * NWIN * WA * WA);
  expected_mask(want);
  int bad = 0;
  for (int i = 0; mv->data && i < NWIN * WA * WA && !bad; i++)
    if (((const float *)mv->data)[i] != want[i]) {
      CHECK_MSG(0, "mask[%d] = %g, expected %g", i, (double)((const float *)mv->data)[i], (double)want[i]);
      bad = 1;
    }
  int nonzero = 0;
  for (int i = 0; i < NWIN * WA * WA; i++) nonzero += want[i] != 0.0f;
  CHECK(nonzero > 0 && nonzero < NWIN * WA * WA); /* a real mask, not all one value */
  free(want);
  cs_graph_compact(g);
  CHECK(cs_graph_verify(g) == CS_OK);
  cs_graph_free(g);
}

/* What depends on a graph input stays as it is, node for node; Shape of a
 * graph input reads only its static shape and folds. */
static void test_runtime_subgraph_left_alone(void) {
  cs_graph *g = cs_graph_new("runtime");
  int64_t s[2] = {3, 5}, two = 2;
  int x = gb_value(g, "x", CS_DTYPE_F32, 2, s);
  int folded;
  int in1[2] = {x, gb_scalar_f32(g, "c", 0.5f)};
  int eq = add_eval(g, CS_OP_EQUAL, "eq", 2, in1, CS_DTYPE_BOOL, 2, s, &folded);
  CHECK(!folded);
  int ne = add_eval(g, CS_OP_NOT, "ne", 1, &eq, CS_DTYPE_BOOL, 2, s, &folded);
  CHECK(!folded);
  int in2[3] = {ne, x, gb_scalar_f32(g, "z", 0.0f)};
  int w = add_eval(g, CS_OP_WHERE, "where", 3, in2, CS_DTYPE_F32, 2, s, &folded);
  CHECK(!folded);
  int sh = add_eval(g, CS_OP_SHAPE, "shape", 1, &x, CS_DTYPE_I64, 1, &two, &folded);
  CHECK(folded);
  const cs_value *shv = cs_graph_value(g, sh);
  CHECK(shv->data && ((const int64_t *)shv->data)[0] == 3 && ((const int64_t *)shv->data)[1] == 5);
  int live = 0;
  for (int i = 0; i < g->n_nodes; i++) live += !g->nodes[i].dead;
  CHECK(live == 3);
  CHECK(!cs_graph_value(g, eq)->data && !cs_graph_value(g, ne)->data && !cs_graph_value(g, w)->data);
  CHECK(cs_graph_value(g, eq)->producer >= 0 && cs_graph_value(g, w)->producer >= 0);
  /* QDQ is never folded here (the fusions must see DQ(int8 weight)). */
  int8_t wq[4] = {1, 2, 3, 4};
  int64_t four = 4;
  int wv = cs_graph_add_const(g, "w", CS_DTYPE_I8, 1, &four, wq);
  int in3[3] = {wv, gb_scalar_f32(g, "ws", 0.5f), gb_scalar_i8(g, "wz", 0)};
  add_eval(g, CS_OP_DEQUANTIZE_LINEAR, "dq_w", 3, in3, CS_DTYPE_F32, 1, &four, &folded);
  CHECK(!folded);
  cs_graph_free(g);
}

/* Shape arithmetic on int64 (no runtime kernel), Range, Tile, Max/Min,
 * and ops with kernels (Concat, Gather, Cast) through their lowering. */
static void test_shape_arithmetic(void) {
  cs_graph *g = cs_graph_new("shapes");
  int64_t one = 1, three = 3, s4[4] = {2, 3, 5, 7};
  int x = gb_value(g, "x", CS_DTYPE_F32, 4, s4);
  int folded, all = 1;
  int64_t four = 4;
  int sh = add_eval(g, CS_OP_SHAPE, "shape", 1, &x, CS_DTYPE_I64, 1, &four, &folded);
  all &= folded;
  int64_t idx[2] = {2, 3}, n2 = 2;
  int in1[2] = {sh, const_i64(g, "idx", 1, &n2, idx)};
  int hw = add_eval(g, CS_OP_GATHER, "gather", 2, in1, CS_DTYPE_I64, 1, &n2, &folded);
  all &= folded;
  int64_t k2 = 2;
  int in2[2] = {hw, const_i64(g, "k2", 0, NULL, &k2)};
  int half = add_eval(g, CS_OP_DIV, "div", 2, in2, CS_DTYPE_I64, 1, &n2, &folded);
  all &= folded;
  int in3[2] = {half, const_i64(g, "one", 1, &one, &one)};
  int mx = add_eval(g, CS_OP_MAX, "max", 2, in3, CS_DTYPE_I64, 1, &n2, &folded);
  all &= folded;
  int in4[2] = {const_i64(g, "minus1", 1, &one, (int64_t[]){-1}), mx};
  int cid;
  int cat = gb_node(g, CS_OP_CONCAT, "concat", 2, in4, CS_DTYPE_I64, 1, &three, &cid);
  cs_node_set_attr_int(cs_graph_node(g, cid), "axis", 0);
  CHECK(cs_const_eval_node(g, cid, &folded) == CS_OK);
  all &= folded;
  CHECK_MSG(all, "Shape → Gather → Div → Max → Concat folds");
  const cs_value *cv = cs_graph_value(g, cat);
  CHECK(cv->data && ((const int64_t *)cv->data)[0] == -1 && ((const int64_t *)cv->data)[1] == 2 &&
        ((const int64_t *)cv->data)[2] == 3);
  /* Range: ORT's accumulation in float. */
  float st = 0.5f, lim = 2.0f, dl = 0.3f;
  int in5[3] = {gb_scalar_f32(g, "st", st), gb_scalar_f32(g, "lim", lim), gb_scalar_f32(g, "dl", dl)};
  int64_t rn = 5;
  int rg = add_eval(g, CS_OP_RANGE, "range", 3, in5, CS_DTYPE_F32, 1, &rn, &folded);
  CHECK(folded);
  float acc = st;
  for (int i = 0; i < 5; i++, acc += dl)
    CHECK(cs_graph_value(g, rg)->data && ((const float *)cs_graph_value(g, rg)->data)[i] == acc);
  /* Tile [2] × 3 → [6]; Min of floats propagates NaN. */
  float tv[2] = {1.5f, -2.0f};
  int64_t rep = 3, six = 6;
  int in6[2] = {cs_graph_add_const(g, "tv", CS_DTYPE_F32, 1, &n2, tv), const_i64(g, "rep", 1, &one, &rep)};
  int tl = add_eval(g, CS_OP_TILE, "tile", 2, in6, CS_DTYPE_F32, 1, &six, &folded);
  CHECK(folded);
  for (int i = 0; i < 6; i++) CHECK(((const float *)cs_graph_value(g, tl)->data)[i] == tv[i % 2]);
  int in8[2] = {cs_graph_add_const(g, "a6", CS_DTYPE_F32, 1, &six, (float[]){1, 2, 3, 4, 5, 6}),
                cs_graph_add_const(g, "b1", CS_DTYPE_F32, 1, &one, (float[]){NAN})};
  int mn = add_eval(g, CS_OP_MIN, "min_nan", 2, in8, CS_DTYPE_F32, 1, &six, &folded);
  CHECK(folded && isnan(((const float *)cs_graph_value(g, mn)->data)[0]));
  cs_graph_free(g);
}

/* Errors in the model are errors, naming the node; nothing is allocated
 * for a result larger than the limit. */
static void test_errors(void) {
  cs_graph *g = cs_graph_new("errors");
  int folded, id;
  int64_t n2 = 2, one = 1;
  float data[2] = {1, 2}, upd[1] = {9};
  int64_t bad[1][1] = {{5}};
  int in1[3] = {cs_graph_add_const(g, "d", CS_DTYPE_F32, 1, &n2, data),
                cs_graph_add_const(g, "i", CS_DTYPE_I64, 2, (int64_t[]){1, 1}, bad),
                cs_graph_add_const(g, "u", CS_DTYPE_F32, 1, &one, upd)};
  gb_node(g, CS_OP_SCATTER_ND, "scatter_bad", 3, in1, CS_DTYPE_F32, 1, &n2, &id);
  CHECK(cs_const_eval_node(g, id, &folded) == CS_ERR_INVALID && !folded);
  CHECK(strstr(cs_error_message(), "scatter_bad") && strstr(cs_error_message(), "out of range"));
  int64_t a[2] = {7, 8}, z[2] = {1, 0};
  int in2[2] = {cs_graph_add_const(g, "a", CS_DTYPE_I64, 1, &n2, a), cs_graph_add_const(g, "z", CS_DTYPE_I64, 1, &n2, z)};
  gb_node(g, CS_OP_DIV, "div0", 2, in2, CS_DTYPE_I64, 1, &n2, &id);
  CHECK(cs_const_eval_node(g, id, &folded) == CS_ERR_INVALID && !folded);
  CHECK(strstr(cs_error_message(), "div0"));
  int64_t big[2] = {1 << 16, 1 << 16};
  int shp = cs_graph_add_const(g, "big", CS_DTYPE_I64, 1, &n2, big);
  gb_node(g, CS_OP_CONSTANT_OF_SHAPE, "huge", 1, &shp, CS_DTYPE_F32, 2, big, &id);
  CHECK(cs_const_eval_node(g, id, &folded) == CS_ERR_UNSUPPORTED && !folded);
  CHECK(strstr(cs_error_message(), "huge") && strstr(cs_error_message(), "17179869184 bytes"));
  cs_graph_free(g);
}

int main(void) {
  test_swin_mask();
  test_runtime_subgraph_left_alone();
  test_shape_arithmetic();
  test_errors();
  UNIT_MAIN_END();
}
