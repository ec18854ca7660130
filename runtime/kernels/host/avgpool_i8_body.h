/*
 * avgpool_i8_body.h — avgpool_i8_float, the FLOAT formula of
 * pool_internal.h with W floats per vector, written once and included by
 * pool__host_avx512.c (W = 16) and pool__host_avx2.c (W = 8) with these
 * macros defined (the body undefines them at its end):
 *   W, VEC (float lanes), VECI (int32 lanes), T (the target attribute),
 *   VSET1, VSET1_I32, VZERO, VLOAD, VLOAD_I32, VSTORE, VADD, VDIV, VMAX,
 *   VMIN, VMULLO_I32, VSUB_I32, VCVT_F32 (int32 → float), VCVT_I32 (float
 *   → int32, half to even),
 *   TAP_CONSTS: declarations of the constants TAP uses,
 *   TAP(t, b): t = the vector sum[j + lane] adds for one tap, b[lane·s]
 *   for the lanes < w_out − j (the others may hold anything: their sums
 *   are not stored),
 *   DEQUANT_ROW(row, xr): row[iw] = fl(x_scale · (xr[iw] − x_zp)) for
 *   iw < w_in,
 *   STORE_I8(p, n, q): the first n ≤ W int32 lanes of q (int8 values
 *   already) to p as int8 (n ≥ W: all W).
 *   KERNEL: the variant's name (tidsp_avgpool_i8__host_*), which the body
 *   defines.
 * Locals of the body the hooks may read: s, j, w_in, w_out, xs, xzp.
 */

static T void avgpool_i8_float(const tidsp_avgpool_i8_params *ap, const int8_t *x, int8_t *y) {
  /* buf: the padded row; a vector may read up to 2·W floats past span */
  float buf[CAP_F32 + 2 * TIDSP_HOST_POOL_SLACK];
  float sum[CAP_F32 + W];
  int32_t cols[CAP_F32 + W];
  const tidsp_pool2d_params *p = &ap->pool;
  const int64_t planes = (int64_t)p->n * p->c;
  const int32_t k_w = p->k_w, dw = p->dil_w, w_in = p->w_in, w_out = p->w_out, s = p->stride_w;
  const int32_t taps = p->k_h * p->k_w;
  const VEC xs = VSET1(ap->x_scale), ys = VSET1(ap->y_scale);
  const VEC zp = VSET1((float)(ap->y_zp + ap->domain_offset));
  const VEC lo = VSET1((float)(ap->y_min + ap->domain_offset));
  const VEC hi = VSET1((float)(ap->y_max + ap->domain_offset));
  const VECI xzp = VSET1_I32(ap->x_zp), off = VSET1_I32(ap->domain_offset);
  TAP_CONSTS
  float *row = buf + p->pad_left;
  int64_t nc;
  int32_t oh, kh, kh_lo, kh_hi, j, k;
  memset(buf, 0, sizeof buf);
  memset(sum, 0, sizeof sum);
  for (j = 0; j < w_out + W; j++) /* the lanes past w_out divide by 1 */
    cols[j] = j < w_out ? tidsp_host_pool_cols_inside(p, j) : 1;
  for (nc = 0; nc < planes; nc++) {
    const int8_t *xp = x + (size_t)nc * (size_t)p->h_in * (size_t)w_in;
    int8_t *yp = y + (size_t)nc * (size_t)p->h_out * (size_t)w_out;
    for (oh = 0; oh < p->h_out; oh++, yp += w_out) {
      tidsp_host_pool_taps(p, oh, &kh_lo, &kh_hi);
      for (kh = kh_lo; kh < kh_hi; kh++) {
        const int8_t *xr = xp + tidsp_host_pool_row_offset(p, oh, kh);
        DEQUANT_ROW(row, xr);
        for (j = 0; j < w_out; j += W) { /* sum[j + t] += the row's taps, kw order */
          const float *b = buf + (size_t)j * (size_t)s;
          VEC acc = kh == kh_lo ? VZERO() : VLOAD(sum + j);
          for (k = 0; k < k_w; k++, b += dw) {
            VEC t;
            TAP(t, b);
            acc = VADD(acc, t);
          }
          VSTORE(sum + j, acc);
        }
      }
      for (j = 0; j < w_out; j += W) {
        const VECI c = ap->pool.count_include_pad ? VSET1_I32(taps)
                                                  : VMULLO_I32(VSET1_I32(kh_hi - kh_lo), VLOAD_I32(cols + j));
        VEC v = VDIV(VLOAD(sum + j), VCVT_F32(c));
        v = VADD(VDIV(v, ys), zp);
        v = VMIN(VMAX(v, lo), hi); /* v > lo ? v : lo, then v < hi ? v : hi */
        STORE_I8(yp + j, w_out - j, VSUB_I32(VCVT_I32(v), off));
      }
    }
  }
}

int32_t KERNEL(const tidsp_avgpool_i8_params *p, const void *rq, const int8_t *x, int8_t *y) {
  tidsp_host_pool_row g;
  if (!tidsp_host_avgpool_i8_ok(p, x, y, CAP_F32, &g))
    return tidsp_avgpool_i8__ref(p, rq, x, y);
  avgpool_i8_float(p, x, y);
  return TIDSP_OK;
}

#undef DEQUANT_ROW
#undef KERNEL
#undef STORE_I8
#undef T
#undef TAP
#undef TAP_CONSTS
#undef VADD
#undef VCVT_F32
#undef VCVT_I32
#undef VDIV
#undef VEC
#undef VECI
#undef VLOAD
#undef VLOAD_I32
#undef VMAX
#undef VMIN
#undef VMULLO_I32
#undef VSET1
#undef VSET1_I32
#undef VSTORE
#undef VSUB_I32
#undef VZERO
#undef W
