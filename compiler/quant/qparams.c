#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"

int32_t cs_quantize_one(float x, float s, int32_t zp, int64_t lo, int64_t hi) {
  float v = x / s;
  if (isnan(v)) return (int32_t)lo;
  float fl = (float)(lo - zp), fh = (float)(hi - zp);
  if (v < fl) v = fl;
  if (v > fh) v = fh;
  return (int32_t)lrintf(v) + zp;
}

float cs_dequantize_one(int32_t q, float s, int32_t zp) {
  return (float)(q - zp) * s;
}

static cs_dtype default_q_dtype(void) { return CS_DTYPE_U8; }

cs_status cs_qparams_read(cs_graph *g, const cs_node *n, cs_qparams *qp) {
  memset(qp, 0, sizeof *qp);
  if (n->n_inputs < 2 || n->inputs[1] < 0)
    return cs_error(CS_ERR_INVALID, "node '%s': %s has no scale input", n->name, cs_op_name(n->op));
  const cs_value *s = cs_graph_value(g, n->inputs[1]);
  if (!s->data || s->dtype != CS_DTYPE_F32)
    return cs_error(CS_ERR_UNSUPPORTED, "node '%s': scale '%s' is not a float32 constant", n->name, s->name);
  const cs_value *x = cs_graph_value(g, n->inputs[0]);
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  qp->dtype = n->op == CS_OP_QUANTIZE_LINEAR ? y->dtype : x->dtype;
  int64_t count = cs_value_numel(s);
  const cs_value *zpv = (n->n_inputs >= 3 && n->inputs[2] >= 0) ? cs_graph_value(g, n->inputs[2]) : NULL;
  if (zpv && !zpv->data)
    return cs_error(CS_ERR_UNSUPPORTED, "node '%s': zero point '%s' is not a constant", n->name, zpv->name);
  if (zpv && cs_value_numel(zpv) != count)
    return cs_error(CS_ERR_INVALID, "node '%s': zero point '%s' has %lld elements, scale has %lld",
                    n->name, zpv->name, (long long)cs_value_numel(zpv), (long long)count);
  if (qp->dtype == CS_DTYPE_UNDEF) qp->dtype = zpv ? zpv->dtype : default_q_dtype();
  qp->scale = (const float *)s->data;
  qp->count = (int)count;
  if (count == 1 && s->rank <= 1) {
    qp->axis = -1;
    qp->zp[0] = zpv ? (int32_t)cs_const_get_int(zpv, 0) : 0;
    qp->zps = qp->zp;
  } else {
    /* The axis indexes the data input (float for Q, integer for DQ). */
    const cs_value *data = x;
    int64_t axis = cs_node_attr_int(n, "axis", 1);
    if (axis < 0) axis += data->rank;
    if (axis < 0 || axis >= data->rank || data->shape[axis] != count)
      return cs_error(CS_ERR_INVALID, "node '%s': per-axis scale of %lld elements does not match axis %lld of '%s'",
                      n->name, (long long)count, (long long)axis, data->name);
    qp->axis = (int)axis;
    qp->zps_owned = malloc(sizeof(int32_t) * (size_t)count);
    if (!qp->zps_owned) {
      g->alloc_failed = 1; /* callers decline on any error: fail after the pass */
      return cs_error(CS_ERR_NOMEM, "node '%s': out of memory for %lld zero points", n->name, (long long)count);
    }
    for (int64_t i = 0; i < count; i++) qp->zps_owned[i] = zpv ? (int32_t)cs_const_get_int(zpv, i) : 0;
    qp->zps = qp->zps_owned;
    qp->zp[0] = qp->zps[0];
  }
  for (int64_t i = 0; i < count; i++) {
    if (!(qp->scale[i] > 0.0f) || !isfinite(qp->scale[i])) {
      cs_qparams_free(qp);
      return cs_error(CS_ERR_UNSUPPORTED, "node '%s': scale '%s'[%lld] = %g is not a positive finite number",
                      n->name, s->name, (long long)i, (double)((const float *)s->data)[i]);
    }
  }
  return CS_OK;
}

void cs_qparams_free(cs_qparams *qp) {
  free(qp->zps_owned);
  qp->zps_owned = NULL;
}

int cs_qparams_per_tensor(const cs_qparams *qp) { return qp->axis < 0 && qp->count == 1; }

int cs_qparams_equal(const cs_qparams *a, const cs_qparams *b) {
  return cs_qparams_per_tensor(a) && cs_qparams_per_tensor(b) && a->dtype == b->dtype &&
         a->scale[0] == b->scale[0] && a->zp[0] == b->zp[0];
}

cs_status cs_q31_from_float(float f, int32_t *mult, int32_t *shift) {
  if (!(f > 0.0f) || !isfinite(f))
    return cs_error(CS_ERR_UNSUPPORTED, "requantization multiplier %g is not a positive finite number", (double)f);
  int e;
  float fr = frexpf(f, &e); /* f = fr · 2^e, fr in [0.5, 1) */
  int32_t m = (int32_t)ldexpf(fr, 24); /* exact: a float has 24 significant bits */
  int s = 24 - e;
  while (s > 62 && (m & 1) == 0) { m >>= 1; s--; }
  if (s > 62) {
    /* f < 2^-38 (a dead channel: weight scale ~1e-17 in trained models):
     * fl(acc · f) is below 2^31 · 2^-38 for every int32 acc and rounds to
     * 0, in float as here. */
    *mult = 0;
    *shift = 0;
    return CS_OK;
  }
  if (s < 0)
    return cs_error(CS_ERR_UNSUPPORTED, "requantization multiplier %g is out of the Q31 range", (double)f);
  *mult = m;
  *shift = s;
  return CS_OK;
}
