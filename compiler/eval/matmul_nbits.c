/*
 * matmul_nbits.c — ONNX Runtime's MatMulNBits CompInt8 arithmetic, for the
 * compile-time fold (matmul_nbits.h has the formula and its limits).
 */
/* One float operation at a time: a contracted a·b + c would not be ORT's. */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include "matmul_nbits.h"

#include <math.h>

/* The unsigned weight MLAS packs (int8 + 128) and its zero point. */
static int32_t weight_u(const cs_nbits_weight *w, int32_t k, int32_t n, int32_t kk, int32_t nn) {
  int64_t i = w->nk ? (int64_t)nn * k + kk : (int64_t)kk * n + nn;
  return w->is_signed ? (int32_t)((const int8_t *)w->w)[i] + 128 : (int32_t)((const uint8_t *)w->w)[i];
}

static int32_t zero_point_u(const cs_nbits_weight *w, int32_t nn) {
  int32_t c = w->count == 1 ? 0 : nn;
  if (!w->zp) return w->is_signed ? 128 : 0;
  return w->is_signed ? (int32_t)((const int8_t *)w->zp)[c] + 128 : (int32_t)((const uint8_t *)w->zp)[c];
}

void cs_matmul_nbits_eval(const float *a, int64_t rows, int32_t k, int32_t n, const cs_nbits_weight *w,
                          const float *bias, float *y) {
  int32_t q[CS_NBITS_MAX_K];
  for (int64_t r = 0; r < rows; r++) {
    const float *ar = a + r * k;
    /* MLAS QuantizeARow: the block's scale and its quantized values */
    float amax = 0.0f;
    for (int32_t kk = 0; kk < k; kk++) amax = fmaxf(amax, fabsf(ar[kk]));
    float sa = amax / 127.0f;
    float inv = amax != 0.0f ? 127.0f / amax : 0.0f;
    int32_t qsum = 0;
    for (int32_t kk = 0; kk < k; kk++) {
      q[kk] = (int32_t)nearbyintf(ar[kk] * inv);
      qsum += q[kk];
    }
    float a_blksum = sa * (float)qsum;
    for (int32_t nn = 0; nn < n; nn++) {
      float sb = w->scale[w->count == 1 ? 0 : nn];
      int32_t dot = 0;
      for (int32_t kk = 0; kk < k; kk++) dot += q[kk] * weight_u(w, k, n, kk, nn);
      float sab = sa * sb;
      float acc = (float)dot * sab;
      if (bias) acc = acc + bias[nn];
      float b_blksum = -sb * (float)zero_point_u(w, nn);
      float corr = a_blksum * b_blksum;
      y[r * n + nn] = acc + corr;
    }
  }
}

int cs_fold_matmul_nbits(const cs_graph *g, const cs_node *n, const void *const *in, void *const *out) {
  int count = 0;
  const int64_t *m = n->op == CS_OP_K_MATMUL_F32 ? cs_node_attr_ints(n, "ort_nbits", &count) : NULL;
  if (!m || count != 4) return 0;
  const cs_value *wv = cs_graph_value(g, (int)m[0]);
  const cs_value *sv = cs_graph_value(g, (int)m[1]);
  const cs_value *zv = m[2] >= 0 ? cs_graph_value(g, (int)m[2]) : NULL;
  const tidsp_matmul_f32_params *p = &n->k.matmul_f32;
  cs_nbits_weight w = {.w = wv->data,
                       .is_signed = wv->dtype == CS_DTYPE_I8,
                       .nk = (int)m[3],
                       .scale = (const float *)sv->data,
                       .zp = zv ? zv->data : NULL,
                       .count = (int32_t)cs_value_numel(sv)};
  cs_matmul_nbits_eval((const float *)in[0], (int64_t)p->batch * p->m, p->k, p->n, &w, (const float *)in[2],
                       (float *)out[0]);
  return 1;
}
