/*
 * FuseQDQPReluLUT — a PRelu between a dequantize and a quantize is one
 * 256-entry int8 table per channel, computed at compile time:
 *
 *   Q( PRelu( DQ(x:i8), slope ) )             → k_lut_i8_channels(lut, x)
 *   Q( MaxPool( PRelu( DQ(x:i8), slope ) ) )  → Q( MaxPool( DQ( k_lut_i8_channels(lut, x) ) ) )
 *
 * lut[c][q] = Q_y(prelu(DQ_x(q), slope[c])), prelu as the float kernel
 * computes it (runtime/kernels/ref/prelu_f32.c: v >= 0 ? v : v·slope) and
 * DQ/Q as the float path's kernels: the table gives the bytes DQ → PRelu
 * → Q gives (ONNX Runtime runs PRelu in float between them).
 *
 * A MaxPool between the PRelu and the Q (MTCNN's P-Net: PRelu → MaxPool →
 * Q, as PT2E exports it) runs on the table's int8 codes, whatever the
 * slope's sign (match/qdq_tail.h cs_table_before_pool: Q is monotone, so
 * it commutes with max; finite inputs give no NaN); DQ → MaxPool → Q with
 * equal parameters is then an int8 pool for the passes after this one
 * (FuseQDQToTIDLMaxPool on the C7x, EliminateQDQTransparent elsewhere).
 *
 * The slope must broadcast along axis 1 alone (one per channel of an
 * N·C·… tensor, or one for all): a slope that varies along another axis
 * would need a table per element.
 */
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"
#include "quant/quant.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"

/* The slope's value per channel of x (rank >= 2, C = shape[1]): 1 and
 * *channels = C or 1 when it broadcasts along axis 1 alone, else 0. */
static int slope_channels(const cs_value *x, const cs_value *s, int64_t *channels) {
  if (!s->data || s->dtype != CS_DTYPE_F32 || x->rank < 2 || s->rank > x->rank) return 0;
  *channels = 1;
  for (int i = 0; i < s->rank; i++) {
    int axis = x->rank - s->rank + i;
    if (s->shape[i] == 1) continue;
    if (axis != 1 || s->shape[i] != x->shape[1]) return 0;
    *channels = x->shape[1];
  }
  return 1;
}

/* The [channels][256] table; -1 when out of memory. */
static int prelu_lut(cs_graph *g, const char *base, const float *slope, int64_t channels, const cs_qparams *in,
                     const cs_qparams *out) {
  int64_t qmin, qmax, shape[2] = {channels, 256};
  cs_dtype_range(out->dtype, &qmin, &qmax);
  int8_t *lut = malloc((size_t)(channels * 256));
  if (!lut) {
    cs_error(CS_ERR_NOMEM, "out of memory");
    return -1;
  }
  for (int q = -128; q < 128; q++) {
    const float v = cs_dequantize_one(q, in->scale[0], in->zp[0]);
    for (int64_t c = 0; c < channels; c++) {
      const float y = v >= 0.0f ? v : v * slope[c];
      lut[c * 256 + q + 128] = (int8_t)cs_quantize_one(y, out->scale[0], out->zp[0], qmin, qmax);
    }
  }
  int id = cs_add_const_named(g, base, "lut", CS_DTYPE_I8, 2, shape, lut);
  free(lut);
  return id;
}

static cs_status fuse_one(cs_graph *g, int id) {
  const cs_node *n = cs_graph_node(g, id);
  if (n->n_inputs != 2 || n->n_outputs != 1) return CS_OK;
  const cs_value *x = cs_graph_value(g, n->inputs[0]), *s = cs_graph_value(g, n->inputs[1]);
  int64_t channels;
  if (!cs_match_is_const(g, n->inputs[1]) || !slope_channels(x, s, &channels)) return CS_OK;
  int xdq = cs_match_dq_i8(g, n->inputs[0]);
  cs_qparams xq;
  if (!cs_match_dq_params(g, xdq, &xq)) return CS_OK;
  int pool = cs_match_max_pool_after(g, n->outputs[0]); /* a pool between, if any */
  cs_qdq_tail tail;
  if (!cs_match_qdq_tail(g, pool >= 0 ? cs_graph_node(g, pool)->outputs[0] : n->outputs[0], 0, &tail)) {
    cs_qparams_free(&xq);
    return CS_OK;
  }
  char base[256];
  snprintf(base, sizeof base, "%s", n->name ? n->name : "prelu");
  int lut = prelu_lut(g, base, (const float *)s->data, channels, &xq, &tail.out);
  cs_status st = lut < 0 ? CS_ERR_NOMEM : CS_OK;
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
