/*
 * matmul_f32_tile_body.h — one register tile of matmul_f32__host_mlas.c,
 * written once and included there per vector width (AVX-512F: 16 lanes,
 * AVX2 + FMA3: 8), with these macros defined (the body undefines them at
 * its end):
 *   W (lanes), NV (vectors per tile row), VEC, VMASK (a lane mask: __mmask16
 *   or a vector of lanes), T (the target attribute), SFX(name) (the width's
 *   suffix), UNROLL_NV (a `GCC unroll NV` pragma),
 *   VZERO, VLOAD, VADD, VFMA(a, b, c) = a·b + c rounded once,
 *   VBCAST(p): *p in every lane,
 *   VLOAD_MASK(p, m) (masked lanes read nothing and are 0),
 *   VSTORE_MASK(p, m, v) (masked lanes write nothing), MASK_ALL.
 * Rows mr ≤ MR, nv vectors of which the last has the lanes of `last`; mr
 * and nv are constants in every call (SFX(tile_any)), so that the
 * accumulators are registers.
 */

INLINE T void SFX(tile)(const tile_args *t, int32_t mr, int32_t nv, VMASK last) {
  VEC acc[MR][NV], bv[NV];
  int32_t i, j, kk;
#pragma GCC unroll 6
  for (i = 0; i < mr; i++) {
    UNROLL_NV
    for (j = 0; j < nv; j++)
      acc[i][j] = VZERO();
  }
  for (kk = 0; kk < t->kn; kk++) {
    const float *br = t->b + (size_t)kk * (size_t)t->ldb;
    UNROLL_NV
    for (j = 0; j < nv; j++)
      bv[j] = j == nv - 1 ? VLOAD_MASK(br + W * j, last) : VLOAD(br + W * j);
#pragma GCC unroll 6
    for (i = 0; i < mr; i++) {
      /* part = fmaf(a, b, part): the same rounding, W columns at once */
      const VEC av = VBCAST(t->a + (size_t)i * (size_t)t->lda + (size_t)kk);
      UNROLL_NV
      for (j = 0; j < nv; j++)
        acc[i][j] = VFMA(av, bv[j], acc[i][j]);
    }
  }
#pragma GCC unroll 6
  for (i = 0; i < mr; i++) {
    float *yr = t->y + (size_t)i * (size_t)t->ldy;
    UNROLL_NV
    for (j = 0; j < nv; j++) {
      const VMASK mk = j == nv - 1 ? last : MASK_ALL;
      VEC v = acc[i][j];
      if (!t->first) /* out = part + out */
        v = VADD(v, VLOAD_MASK(yr + W * j, mk));
      else if (t->bias) /* out starts at the bias: part + bias */
        v = VADD(v, VLOAD_MASK(t->bias + W * j, mk));
      VSTORE_MASK(yr + W * j, mk, v);
    }
  }
}

#undef W
#undef NV
#undef VEC
#undef VMASK
#undef T
#undef SFX
#undef UNROLL_NV
#undef VZERO
#undef VLOAD
#undef VADD
#undef VFMA
#undef VBCAST
#undef VLOAD_MASK
#undef VSTORE_MASK
#undef MASK_ALL
