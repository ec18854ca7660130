/*
 * conv2d_f32_nchw_body.h — one K stride of MLAS's SGEMM FMA order (the
 * NCHW im2col path of conv2d_f32__host_mlas.c, M > 1 output channels)
 * over W output pixels at a time, written once and included there per
 * vector width before conv2d_f32_tile_body.h, with its macros (W, VEC, T,
 * SFX, VZERO, VADD, VBCAST) and these, which this body undefines:
 *   VLOADU(p), VSTOREU(p, v): unaligned W floats;
 *   VFMADD(a, b, c): a·b + c rounded once (fmaf in every lane).
 *
 * colT holds the stride's taps [k0, k1) transposed, W pixels a row (lane
 * l: pixel pix0 + l; lanes past cnt are 0 and never stored). Each lane of
 * channel co runs the scalar chain part = fmaf(tap, w, part) from 0 in tap
 * order, then out = part (+ s) in the first stride, part + out in later
 * ones: the same operations in the same order, so the same bytes.
 * NCHW_CO channels at a time: independent chains, for the FMA latency.
 */
#define NCHW_CO 4

/* v is channel co's part of pixels [pix0, pix0 + cnt): out = v + the sum
 * (first stride) or v + out (later strides); a tail of cnt < W lanes
 * through a buffer, the lanes past cnt neither read nor written */
INLINE T void SFX(nchw_put)(VEC v, int32_t co, int32_t n, int32_t pix0, int32_t cnt, int first,
                            const float *s, float *y) {
  float *o = y + (size_t)co * (size_t)n + (size_t)pix0;
  const float *prev = first ? (s ? s + (size_t)co * (size_t)n + (size_t)pix0 : NULL) : o;
  float tmp[W];
  int32_t l;
  if (cnt == W) {
    VSTOREU(o, prev ? VADD(v, VLOADU(prev)) : v);
    return;
  }
  for (l = 0; l < W; l++)
    tmp[l] = prev && l < cnt ? prev[l] : 0.0f;
  VSTOREU(tmp, prev ? VADD(v, VLOADU(tmp)) : v);
  for (l = 0; l < cnt; l++)
    o[l] = tmp[l];
}

/* every channel of the group ([M][K] weights at w_g, k taps a row) over
 * the taps [k0, k1) gathered in colT for the cnt pixels at pix0 */
static T void SFX(nchw_stride)(const float *colT, const float *w_g, int32_t k, int32_t k0, int32_t k1,
                               int32_t m, int32_t n, int32_t pix0, int32_t cnt, const float *s,
                               float *y) {
  const int first = k0 == 0;
  int32_t co = 0, kk, i;
  for (; co + NCHW_CO <= m; co += NCHW_CO) {
    const float *w_r = w_g + (size_t)co * (size_t)k;
    VEC acc[NCHW_CO];
    _Pragma("GCC unroll 4") for (i = 0; i < NCHW_CO; i++) acc[i] = VZERO();
    for (kk = k0; kk < k1; kk++) {
      const VEC c = VLOADU(colT + (size_t)(kk - k0) * W);
      _Pragma("GCC unroll 4") for (i = 0; i < NCHW_CO; i++)
        acc[i] = VFMADD(c, VBCAST(w_r + (size_t)i * (size_t)k + kk), acc[i]);
    }
    for (i = 0; i < NCHW_CO; i++)
      SFX(nchw_put)(acc[i], co + i, n, pix0, cnt, first, s, y);
  }
  for (; co < m; co++) {
    const float *w_r = w_g + (size_t)co * (size_t)k;
    VEC acc = VZERO();
    for (kk = k0; kk < k1; kk++)
      acc = VFMADD(VLOADU(colT + (size_t)(kk - k0) * W), VBCAST(w_r + kk), acc);
    SFX(nchw_put)(acc, co, n, pix0, cnt, first, s, y);
  }
}

#undef NCHW_CO
#undef VLOADU
#undef VSTOREU
#undef VFMADD
