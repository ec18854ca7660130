/*
 * FuseQDQToInt8Softmax — an 8-bit Softmax between a dequantize and a
 * quantize, as ONNX Runtime's QLinearSoftmax (which ORT substitutes for
 * this pattern):
 *
 *   Q( Softmax( DQ(x:i8) ) ) : i8   → k_softmax_i8(exp_table, x)
 *
 * The 256-entry exp table is computed here, as ORT builds it: for a row of
 * D elements, shift = max(0, lnf(FLT_MAX / D) − 5) / x_scale (so that D
 * table entries cannot overflow a float sum; the logarithm in float), and
 *   table[j] = (float)exp((j − 255 + shift) · x_scale)     (in double).
 * The output uses y_recip = floor(1 / y_scale), ORT's integer reciprocal.
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "pass_list.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"

static cs_status fuse(cs_graph *g, int id) {
  const cs_node *n = cs_graph_node(g, id);
  cs_qdq_around m;
  if (!cs_match_qdq_around(g, id, &m)) return CS_OK;
  const cs_value *x = cs_graph_value(g, m.x);
  const int64_t axis = m.axis;
  float xs = m.xq.scale[0], ys = m.tail.out.scale[0];
  cs_status st = CS_OK;
  if (axis >= 0 && axis < x->rank && xs > 0.0f && ys > 0.0f) {
    tidsp_softmax_i8_params p;
    memset(&p, 0, sizeof p);
    p.outer = 1;
    p.inner = 1;
    for (int d = 0; d < axis; d++) p.outer *= (int32_t)x->shape[d];
    p.axis_len = (int32_t)x->shape[axis];
    for (int d = (int)axis + 1; d < x->rank; d++) p.inner *= (int32_t)x->shape[d];
    p.y_recip = floorf(1.0f / ys);
    p.y_zp = m.tail.out.zp[0];
    /* ORT's log() here takes a float and is the float overload (logf):
     * with the double log, a table entry can move by an ulp, and a value
     * at x.5 round the other way (Swin-T: 1 element in 57 624). */
    double shift = (double)logf(FLT_MAX / (float)p.axis_len);
    shift = (shift - 5.0 > 0.0 ? shift - 5.0 : 0.0) / (double)xs;
    float table[256];
    for (int j = 0; j < 256; j++) table[j] = (float)exp(((double)j - 255.0 + shift) * (double)xs);
    char base[256];
    snprintf(base, sizeof base, "%s", n->name ? n->name : "softmax");
    int64_t shape[1] = {256};
    int t = cs_add_const_named(g, base, "exp_table", CS_DTYPE_F32, 1, shape, table);
    int inputs[2] = {t, m.x};
    int chain[1] = {id};
    int k = t < 0 ? -1 : cs_replace_chain(g, chain, 1, &m.tail, CS_OP_K_SOFTMAX_I8, 2, inputs);
    if (k < 0) st = CS_ERR_NOMEM; /* message recorded */
    else cs_graph_node(g, k)->k.softmax_i8 = p;
  }
  cs_qdq_around_free(&m);
  return st;
}

cs_status pass_fuse_qdq_softmax(cs_graph *g, const cs_target *t) {
  (void)t;
  return cs_match_each(g, CS_OP_SOFTMAX, fuse);
}
