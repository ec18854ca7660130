#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"

int cs_requant_blob(cs_graph *g, const char *base, const cs_target *t,
                    int count, const double *exact, const float *ort,
                    tidsp_requant_params *rq) {
  rq->per_channel = count > 1;
  int64_t shape[1];
  int id;
  if (t->requant == CS_REQUANT_Q31) {
    rq->kind = TIDSP_REQUANT_Q31;
    int32_t *blob = malloc(sizeof(int32_t) * 2 * (size_t)count);
    if (!blob) { cs_error(CS_ERR_NOMEM, "'%s': out of memory for %d requantization multipliers", base, count); return -1; }
    for (int c = 0; c < count; c++) {
      if (cs_q31_from_float(ort[c], &blob[c], &blob[count + c]) != CS_OK) {
        free(blob);
        cs_error_clear();
        return -2;
      }
    }
    shape[0] = 2 * count;
    id = cs_add_const_named(g, base, "rq", CS_DTYPE_I32, 1, shape, blob);
    free(blob);
  } else {
    rq->kind = TIDSP_REQUANT_FLOAT;
    shape[0] = count;
    id = cs_add_const_named(g, base, "rq", CS_DTYPE_F32, 1, shape, ort);
  }
  return id;
}

int cs_requant_blob_xwy(cs_graph *g, const char *base, const cs_target *t, int count, float alpha, float xs,
                        const float *ws, int ws_count, float ys, tidsp_requant_params *rq) {
  double *exact = malloc(sizeof(double) * (size_t)count);
  float *ort = malloc(sizeof(float) * (size_t)count);
  if (!exact || !ort) {
    free(exact);
    free(ort);
    cs_error(CS_ERR_NOMEM, "'%s': out of memory for %d requantization multipliers", base, count);
    return -1;
  }
  for (int c = 0; c < count; c++) {
    float w = ws[ws_count > 1 ? c : 0];
    exact[c] = (double)alpha * xs * (double)w / (double)ys;
    ort[c] = ((alpha * xs) * w) / ys;
  }
  int id = cs_requant_blob(g, base, t, count, exact, ort, rq);
  free(exact);
  free(ort);
  return id;
}

void cs_output_clamp(const cs_qparams *qp, float lo, float hi,
                     int32_t *out_min, int32_t *out_max) {
  int64_t qmin, qmax;
  cs_dtype_range(qp->dtype, &qmin, &qmax);
  int32_t a = (int32_t)qmin, b = (int32_t)qmax;
  if (isfinite(lo)) {
    int32_t q = cs_quantize_one(lo, qp->scale[0], qp->zp[0], qmin, qmax);
    if (q > a) a = q;
  }
  if (isfinite(hi)) {
    int32_t q = cs_quantize_one(hi, qp->scale[0], qp->zp[0], qmin, qmax);
    if (q < b) b = q;
  }
  *out_min = a;
  *out_max = b;
}

int cs_lut_const(cs_graph *g, const char *base, const tidsp_unary_f32_params *f,
                 const cs_qparams *in, const cs_qparams *out) {
  float x[256], y[256];
  cs_lut_inputs(in, x);
  if (f) {
    tidsp_unary_f32_params p = *f;
    p.n = 256;
    if (tidsp_unary_f32__ref(&p, x, y) != TIDSP_OK) return -2;
  } else {
    memcpy(y, x, sizeof y);
  }
  return cs_lut_const_values(g, base, y, out);
}

void cs_lut_inputs(const cs_qparams *in, float x[256]) {
  for (int q = -128; q < 128; q++) x[q + 128] = cs_dequantize_one(q, in->scale[0], in->zp[0]);
}

int cs_lut_const_values(cs_graph *g, const char *base, const float y[256], const cs_qparams *out) {
  int8_t lut[256];
  int64_t qmin, qmax;
  cs_dtype_range(out->dtype, &qmin, &qmax);
  for (int i = 0; i < 256; i++)
    lut[i] = (int8_t)cs_quantize_one(y[i], out->scale[0], out->zp[0], qmin, qmax);
  const int64_t n = 256;
  return cs_add_const_named(g, base, "lut", CS_DTYPE_I8, 1, &n, lut);
}
