#include "mmalib_fold.h"

#include <math.h>

#include "scale_shift.h"

/* Beyond 2^53 a double no longer holds every integer, and the int16
 * kernels saturate |acc + bias| at 2^54 anyway (any such bias saturates the
 * output): a larger fold is a model error, not something to round. */
#define I16_BIAS_LIMIT 9007199254740992.0 /* 2^53 */

/* scale[c], shift[c] of r = d_s·w_s[c]/o_s; NULL or the declining rule. */
static const char *multiplier(double r, uint8_t *scale, uint8_t *shift, double *worst) {
  double rel;
  if (cs_float_to_scale_shift(r, scale, shift, &rel) != 0)
    return "requant multiplier d_s*w_s/o_s not representable as s*2^-sh (s<=255, sh<=31)";
  if (*scale == 0) return "requant multiplier d_s*w_s/o_s below 2^-32 (scale rounds to 0)";
  if (rel > *worst) *worst = rel;
  return NULL;
}

const char *cs_mm_fold_i8(const cs_fold_bias *b, float d_s, int32_t d_zp, const cs_qparams *wq, float o_s,
                          int32_t o_zp, const int64_t *wsum, int channels, int32_t *bias_out, uint8_t *scale,
                          uint8_t *shift, double *worst) {
  *worst = 0.0;
  for (int c = 0; c < channels; c++) {
    double ws = wq->scale[wq->count > 1 ? c : 0];
    double dw = (double)d_s * ws;
    const char *rule = multiplier(dw / (double)o_s, &scale[c], &shift[c], worst);
    if (rule) return rule;
    double bc = b->q ? (double)b->q[c] : b->f ? nearbyint(b->f[c] / dw) : 0.0;
    /* o_zp is folded through the multiplier the kernel really applies,
     * s·2^−sh, not r (the fork's round(o_zp / r)): then the scale error
     * multiplies only the real value (out − o_zp), never the zero point —
     * with ReLU outputs (o_zp = −128) that halves the worst error and cuts
     * the share of off-by-one outputs several-fold. */
    double eff = ldexp((double)scale[c], -shift[c]);
    bc += -(double)d_zp * (double)wsum[c] + nearbyint((double)o_zp / eff);
    if (bc > 2147483647.0 || bc < -2147483648.0) return "folded bias overflows int32";
    bias_out[c] = (int32_t)bc;
  }
  return NULL;
}

const char *cs_mm_fold_i16(const cs_fold_bias *b, float d_s, const cs_qparams *wq, float o_s, int channels,
                           int64_t *bias_out, uint8_t *scale, uint8_t *shift, double *worst) {
  *worst = 0.0;
  for (int c = 0; c < channels; c++) {
    float ws = wq->scale[wq->count > 1 ? c : 0];
    double dw = (double)d_s * ws;
    const char *rule = multiplier(dw / (double)o_s, &scale[c], &shift[c], worst);
    if (rule) return rule;
    double bc = 0.0;
    if (b->q) {
      const cs_qparams *bq = b->q_dq;
      int k = bq->count > 1 ? c : 0;
      if (bq->scale[k] == (float)((float)d_s * ws) && bq->zps[k] == 0) bc = (double)b->q[c]; /* acc units */
      else bc = nearbyint((double)cs_dequantize_one(b->q[c], bq->scale[k], bq->zps[k]) / dw);
    } else if (b->f) {
      bc = nearbyint((double)b->f[c] / dw);
    }
    if (!(fabs(bc) <= I16_BIAS_LIMIT)) return "folded bias beyond 2^53 (or not finite)";
    bias_out[c] = (int64_t)bc;
  }
  return NULL;
}
