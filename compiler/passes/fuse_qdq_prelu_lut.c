/*
 * FuseQDQPReluLUT — a PRelu between a dequantize and a quantize is one
 * 256-entry int8 table per channel, computed at compile time:
 *
 *   Q( PRelu( DQ(x:i8), slope ) )             → k_lut_i8_channels(lut, x)
 *   Q( MaxPool( PRelu( DQ(x:i8), slope ) ) )  → Q( MaxPool( DQ( k_lut_i8_channels(lut, x) ) ) )
 *
 * lut[c][q] = Q_y(prelu(DQ_x(q), slope[c])), prelu computed by the
 * runtime's float kernel itself (tidsp_prelu_f32__ref: the table never
 * depends on the compiling CPU) and DQ/Q as the float
 * path's kernels: the table gives the bytes DQ → PRelu → Q gives (ONNX
 * Runtime runs PRelu in float between them).
 *
 * A MaxPool between the PRelu and the Q (MTCNN's P-Net: PRelu → MaxPool →
 * Q, as PT2E exports it) runs on the table's int8 codes, whatever the
 * slope's sign (match/qdq_tail.h cs_table_before_pool: Q is monotone, so
 * it commutes with max; finite inputs give no NaN); DQ → MaxPool → Q with
 * equal parameters is then an int8 pool for the passes after this one
 * (FuseQDQToTIDLMaxPool on the C7x, EliminateQDQTransparent elsewhere).
 * So does a chain of Transpose, Reshape, Flatten, Squeeze and Unsqueeze
 * (R-Net and O-Net: PRelu → Transpose → Reshape → Q before their fully
 * connected layer): they only move values, so they commute with Q, and
 * EliminateQDQTransparent runs them on the codes.
 *
 * The slope must broadcast along axis 1 alone (one per channel of an
 * N·C·… tensor, or one for all): a slope that varies along another axis
 * would need a table per element.
 *
 * The tables are read, not only the tensor: C·256 bytes against the
 * TABLE_PATH_BYTES per element that DQ → PRelu → Q moves (read 1, write
 * 4; read 4, write 4; read 4, write 1). A tensor with fewer elements per
 * channel than that pays for (a fully connected layer's [1, C], R-Net's
 * [1, 64, 3, 3]: 9 elements a channel against 256 table bytes) stays on
 * the float path, which gives the same bytes.
 */
enum { TABLE_PATH_BYTES = 18 };
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"
#include "quant/quant.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"

/* The [channels][256] table: every code dequantized, through the
 * runtime's PRelu kernel itself (the slope broadcast along the codes),
 * quantized. -1 when out of memory, -2 when the kernel refuses. */
static int prelu_lut(cs_graph *g, const char *base, const float *slope, int64_t channels, const cs_qparams *in,
                     const cs_qparams *out) {
  int64_t qmin, qmax, shape[2] = {channels, 256};
  cs_dtype_range(out->dtype, &qmin, &qmax);
  float *x = malloc(sizeof *x * (size_t)(channels * 256)), *y = malloc(sizeof *y * (size_t)(channels * 256));
  int8_t *lut = malloc((size_t)(channels * 256));
  int id = x && y && lut ? 0 : -1;
  for (int64_t i = 0; id == 0 && i < channels * 256; i++)
    x[i] = cs_dequantize_one((int32_t)(i % 256) - 128, in->scale[0], in->zp[0]);
  tidsp_broadcast bc = {2, {(int32_t)channels, 256}, {256, 1}, {1, 0}};
  if (id == 0 && tidsp_prelu_f32__ref(&bc, x, slope, y) != TIDSP_OK) id = -2;
  for (int64_t i = 0; id == 0 && i < channels * 256; i++)
    lut[i] = (int8_t)cs_quantize_one(y[i], out->scale[0], out->zp[0], qmin, qmax);
  if (id == 0) id = cs_add_const_named(g, base, "lut", CS_DTYPE_I8, 2, shape, lut);
  else if (id == -1) cs_error(CS_ERR_NOMEM, "out of memory");
  free(x);
  free(y);
  free(lut);
  return id;
}

/* The value-moving op that alone reads v (one output), else -1. */
static int move_after(cs_graph *g, int v) {
  int c = cs_match_single_consumer(g, v);
  if (c < 0) return -1;
  const cs_node *n = cs_graph_node(g, c);
  switch (n->op) {
    case CS_OP_TRANSPOSE: case CS_OP_RESHAPE: case CS_OP_FLATTEN: case CS_OP_SQUEEZE: case CS_OP_UNSQUEEZE:
      return n->n_outputs == 1 && n->inputs[0] == v ? c : -1;
    default:
      return -1;
  }
}

static cs_status fuse_one(cs_graph *g, int id) {
  const cs_node *n = cs_graph_node(g, id);
  if (n->n_inputs != 2 || n->n_outputs != 1) return CS_OK;
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *s = cs_graph_value(g, n->inputs[1]);
  int64_t channels;
  if (!cs_match_is_const(g, n->inputs[1]) || !s->data || s->dtype != CS_DTYPE_F32 ||
      !cs_match_per_channel(s, x->rank, x->rank > 1 ? x->shape[1] : 0, &channels))
    return CS_OK;
  if (channels > 1 && channels * 256 > TABLE_PATH_BYTES * cs_value_numel(x)) return CS_OK; /* the tables cost more */
  int xdq = cs_match_dq_i8(g, n->inputs[0]);
  cs_qparams xq;
  if (!cs_match_dq_params(g, xdq, &xq)) return CS_OK;
  /* a pool, or a chain of moves, between, if any: `pool` reads the
   * PRelu's output, the Q reads `last`'s */
  int pool = cs_match_max_pool_after(g, n->outputs[0]), last = pool;
  if (pool < 0)
    for (int m = move_after(g, n->outputs[0]); m >= 0; m = move_after(g, cs_graph_node(g, m)->outputs[0])) {
      if (pool < 0) pool = m;
      last = m;
    }
  cs_qdq_tail tail;
  if (!cs_match_qdq_tail(g, last >= 0 ? cs_graph_node(g, last)->outputs[0] : n->outputs[0], 0, &tail)) {
    cs_qparams_free(&xq);
    return CS_OK;
  }
  char base[256];
  snprintf(base, sizeof base, "%s", n->name ? n->name : "prelu");
  int lut = prelu_lut(g, base, (const float *)s->data, channels, &xq, &tail.out);
  cs_status st = lut == -2 ? cs_error(CS_ERR_INTERNAL, "node '%s' (PRelu): its float kernel refused the table's inputs",
                                      n->name)
                 : lut < 0 ? CS_ERR_NOMEM
                           : CS_OK;
  int x_int = cs_graph_node(g, xdq)->inputs[0];
  const cs_value *xi = cs_graph_value(g, x_int);
  tidsp_lut_channels_params lp = {(int32_t)cs_value_numel(xi), (int32_t)channels, 1};
  for (int d = 2; d < xi->rank && channels > 1; d++) lp.inner *= (int32_t)xi->shape[d];
  if (channels == 1) lp.inner = lp.n;
  if (lp.inner < 1) lp.inner = 1; /* an empty tensor: n = 0, nothing to look up */
  if (st == CS_OK) {
    int inputs[2] = {lut, x_int};
    int k = pool >= 0 ? cs_table_before_pool(g, id, pool, &tail, 0, CS_OP_K_LUT_I8_CHANNELS, 2, inputs)
                      : cs_replace_chain(g, &id, 1, &tail, CS_OP_K_LUT_I8_CHANNELS, 2, inputs);
    if (k < 0) st = CS_ERR_NOMEM; /* message recorded */
    else cs_graph_node(g, k)->k.lut_channels = lp;
  }
  cs_qparams_free(&xq);
  cs_qparams_free(&tail.out);
  return st;
}

cs_status pass_fuse_qdq_prelu_lut(cs_graph *g, const cs_target *t) {
  (void)t;
  return cs_match_each(g, CS_OP_PRELU, fuse_one);
}
