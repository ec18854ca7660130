/*
 * channel_affine_i8_body.h — the row loop of tidsp_channel_affine_i8's
 * fast variants, written once for a vector of W lanes and included once
 * per width by channel_affine_i8__host_avx512.c (W = 16) and
 * channel_affine_i8__host_avx2.c (W = 8), with these macros defined:
 *   W, VEC (float lanes), VECI (int32 lanes), T (the target attribute),
 *   VSET1, VSET1_I32, VZERO, VMUL, VADD, VDIV, VMAX, VMIN, VSUB_I32,
 *   VADD_I32, VCVT_F32 (int32 → float), VCVT_I32 (float → int32 in the
 *   current rounding mode: half to even),
 *   VLOAD_I8(p, n): the first n ≤ W int8 values at p, widened to int32,
 *   VSTORE_I8(p, n, q): the first n ≤ W int32 lanes of q (int8 values
 *   already) to p as int8,
 *   KERNEL: the variant's name, which the body defines,
 *   VPARTIAL: 1 when VLOAD_I8 / VSTORE_I8 take n < W (masked lanes): a
 *   row's last inner % W values are then one more vector; 0: they take the
 *   reference's formula (tidsp_ref_channel_affine_one).
 * The body undefines them at its end.
 *
 * Each lane runs the reference's float ops (channel_affine_internal.h) in
 * its order, then tidsp_quantize's clamp in float to
 * [−128 − y_zp, 127 − y_zp] (exact bounds; maxps gives the bound for a NaN,
 * as the reference's −128), rounding half to even, + y_zp. The multiply
 * and the add stay separate instructions: contraction is off in the
 * includers (ref_internal.h's pragma) and no fused multiply-add is written.
 */

static T void affine_rows(const tidsp_channel_affine_i8_params *p, const int8_t *x, const float *s,
                          const float *b, int8_t *y) {
  const VEC xs = VSET1(p->x_scale), ys = VSET1(p->y_scale);
  const VEC lo = VSET1((float)(INT8_MIN - p->y_zp)), hi = VSET1((float)(INT8_MAX - p->y_zp));
  const VECI xzp = VSET1_I32(p->x_zp), yzp = VSET1_I32(p->y_zp);
  const int32_t n = p->inner;
  const int relu = p->act == TIDSP_CHANNEL_AFFINE_RELU, clip = p->act == TIDSP_CHANNEL_AFFINE_CLIP;
  const VEC zero = VZERO(), c_lo = VSET1(p->lo), c_hi = VSET1(p->hi);
  int32_t o, c, i;
  for (o = 0; o < p->outer; o++) {
    for (c = 0; c < p->channels; c++) {
      const size_t base = ((size_t)o * (size_t)p->channels + (size_t)c) * (size_t)n;
      const int8_t *xr = x + base;
      int8_t *yr = y + base;
      const VEC sc = VSET1(s[c]), bc = VSET1(b[c]);
      /* i < n with partial vectors, else whole vectors only */
      for (i = 0; VPARTIAL ? i < n : i + W <= n; i += W) {
        const int32_t m = n - i < W ? n - i : W;
        VEC v = VMUL(VCVT_F32(VSUB_I32(VLOAD_I8(xr + i, m), xzp)), xs);
        v = VMUL(v, sc);
        v = VADD(v, bc);
        if (relu) /* 0 > v ? 0 : v (maxps(a, b) is a > b ? a : b) */
          v = VMAX(zero, v);
        else if (clip) /* v > lo ? v : lo, then v < hi ? v : hi */
          v = VMIN(VMAX(v, c_lo), c_hi);
        v = VDIV(v, ys);
        v = VMIN(VMAX(v, lo), hi);
        VSTORE_I8(yr + i, m, VADD_I32(VCVT_I32(v), yzp));
      }
      for (; i < n; i++)
        yr[i] = tidsp_ref_channel_affine_one(p, xr[i], s[c], b[c]);
    }
  }
}

int32_t KERNEL(const tidsp_channel_affine_i8_params *p, const int8_t *x, const float *s, const float *b, int8_t *y) {
  const int32_t st = tidsp_ref_channel_affine_check(p, x, s, b, y);
  if (st != TIDSP_OK)
    return st;
  affine_rows(p, x, s, b, y);
  return TIDSP_OK;
}

#undef KERNEL
#undef W
#undef VEC
#undef VECI
#undef T
#undef VSET1
#undef VSET1_I32
#undef VZERO
#undef VMUL
#undef VADD
#undef VDIV
#undef VMAX
#undef VMIN
#undef VSUB_I32
#undef VADD_I32
#undef VCVT_F32
#undef VCVT_I32
#undef VLOAD_I8
#undef VSTORE_I8
#undef VPARTIAL
