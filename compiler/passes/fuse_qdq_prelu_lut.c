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
 * Q, as PT2E exports it): Q is monotone non-decreasing, so Q(max v_i) =
 * max Q(v_i) for any values v_i — the pool can take the table's int8
 * values instead of the floats, whatever the slope's sign. The table
 * writes the Q's codes, a new DequantizeLinear with the Q's parameters
 * gives the pool what it read; DQ → MaxPool → Q with equal parameters is
 * then an int8 pool for the passes after this one (FuseQDQToTIDLMaxPool
 * on the C7x, EliminateQDQTransparent elsewhere).
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

/* The pool variant's graph: the PRelu's node becomes the table writing t
 * (the Q's codes), and a dequantize of t with the Q's parameters writes
 * the value the pool reads. */
static cs_status table_before_pool(cs_graph *g, int prelu, const cs_qdq_tail *tail, int lut, int x_int,
                                   tidsp_lut_channels_params lp) {
  const cs_node *p = cs_graph_node(g, prelu), *q = cs_graph_node(g, tail->q);
  int v = p->outputs[0], q_scale = q->inputs[1], q_zp = q->n_inputs > 2 ? q->inputs[2] : -1;
  const cs_value *vv = cs_graph_value(g, v), *qy = cs_graph_value(g, q->outputs[0]);
  char name[512], *origin = cs_origin_join(g, &prelu, 1);
  if (!origin) return CS_ERR_NOMEM;
  snprintf(name, sizeof name, "%s.q", vv->name ? vv->name : "prelu");
  int t = cs_graph_add_value(g, name, CS_DTYPE_I8, vv->rank, vv->shape);
  int ok = t >= 0 && cs_value_set_quant(cs_graph_value(g, t), -1, 1, tail->out.scale, tail->out.zps) == CS_OK;
  if (ok) cs_graph_value(g, t)->from_u8 = qy->from_u8;
  cs_graph_remove_node(g, prelu);
  int ins[2] = {lut, x_int}, dq_in[3] = {t, q_scale, q_zp};
  int k = ok ? cs_add_kernel(g, CS_OP_K_LUT_I8_CHANNELS, origin, 2, ins, t) : -1;
  if (k >= 0) cs_graph_node(g, k)->k.lut_channels = lp;
  snprintf(name, sizeof name, "%s.dq", origin);
  int dq = k >= 0 ? cs_graph_add_node(g, CS_OP_DEQUANTIZE_LINEAR, name, origin, q_zp >= 0 ? 3 : 2, dq_in, 1, &v) : -1;
  free(origin);
  return dq >= 0 ? CS_OK : cs_error(CS_ERR_NOMEM, "out of memory");
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
  /* the pool between, if any: the PRelu's only reader, one output */
  int pool = cs_match_single_consumer(g, n->outputs[0]);
  if (pool >= 0 && (cs_graph_node(g, pool)->op != CS_OP_MAX_POOL || cs_graph_node(g, pool)->n_outputs != 1 ||
                    cs_graph_node(g, pool)->inputs[0] != n->outputs[0]))
    pool = -1;
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
  if (channels == 1) lp.inner = lp.n > 0 ? lp.n : 1;
  if (st == CS_OK && pool >= 0) {
    st = table_before_pool(g, id, &tail, lut, x_int, lp);
  } else if (st == CS_OK) {
    int inputs[2] = {lut, x_int};
    int k = cs_replace_chain(g, &id, 1, &tail, CS_OP_K_LUT_I8_CHANNELS, 2, inputs);
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
