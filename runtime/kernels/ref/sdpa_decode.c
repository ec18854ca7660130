/*
 * sdpa_decode.c — c7x_sdpa_decode: attention for one new token over the
 * cached keys and values, in one call (no score tensor in the arena). The
 * scores of a row live in `out`'s place one head at a time would need L
 * floats; instead the softmax runs in two passes over the keys (max, then
 * exp-sum and the weighted sum of values), recomputing each score, so the
 * kernel needs no scratch. A fully masked row (every score −inf) gives NaN,
 * as softmax does.
 */
#include <math.h>

#include "ref_internal.h"

static float score(const float *q, const float *k, int32_t hd, float inv_sqrt, const float *mask, int32_t j) {
  float dot = 0.0f;
  int32_t i;
  for (i = 0; i < hd; i++)
    dot += q[i] * k[i];
  return dot * inv_sqrt + (mask ? mask[j] : 0.0f);
}

int32_t c7x_sdpa_decode(const float *q, const float *k, const float *v,
                        const float *mask, float *out, int32_t nq,
                        int32_t nkv, int32_t hd, int32_t L) {
  int32_t h, j, i;
  float inv_sqrt;
  if (!q || !k || !v || !out)
    return TIDSP_ERR_NULL;
  if (nq < 1 || nkv < 1 || hd < 1 || L < 1 || nq % nkv != 0)
    return TIDSP_ERR_SHAPE;
  inv_sqrt = 1.0f / sqrtf((float)hd);
  for (h = 0; h < nq; h++) {
    const float *qh = q + (size_t)h * (size_t)hd;
    const size_t kv = (size_t)(h / (nq / nkv)) * (size_t)L * (size_t)hd;
    float *o = out + (size_t)h * (size_t)hd;
    float mx = -INFINITY, sum = 0.0f, inv;
    for (j = 0; j < L; j++) {
      const float s = score(qh, k + kv + (size_t)j * (size_t)hd, hd, inv_sqrt, mask, j);
      mx = s > mx ? s : mx;
    }
    for (i = 0; i < hd; i++)
      o[i] = 0.0f;
    for (j = 0; j < L; j++) {
      const float e = expf(score(qh, k + kv + (size_t)j * (size_t)hd, hd, inv_sqrt, mask, j) - mx);
      const float *vj = v + kv + (size_t)j * (size_t)hd;
      sum += e;
      for (i = 0; i < hd; i++)
        o[i] += e * vj[i];
    }
    inv = 1.0f / sum;
    for (i = 0; i < hd; i++)
      o[i] *= inv;
  }
  return TIDSP_OK;
}
