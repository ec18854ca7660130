/*
 * conv2d_f32_tile_body.h — one register tile of conv2d_f32__host_mlas.c,
 * written once and included there per vector width (AVX-512F: W = 16,
 * AVX2 + FMA3: W = 8), with these macros defined (the body undefines them
 * at its end):
 *   W, CO (channels per tile), NV (vectors per channel), CO_KEEP, VEC,
 *   VMASK (a lane mask: __mmask16 or a vector of lanes), T (the target
 *   attribute), SFX(name) (the width's suffix), UNROLL_CO (a `GCC unroll`
 *   pragma over the tile's channels), VZERO, VADD, VSET1, VBCAST(p) (*p in
 *   every lane), VLOAD_MASK(p, m) (masked lanes read nothing and are 0),
 *   VSTORE_MASK(p, m, v) (masked lanes write nothing), MASK_ALL;
 *   TILE_CONSTS: the width's own constants, declared;
 *   TILE_VARS: acc[CO][NV], xv[NV], out[CO_KEEP][NV] and the width's lane
 *   state (masks, gather columns), declared in the order that keeps each
 *   width's stack layout;
 *   TILE_MASKS: for the tap at input column off of row xr, each vector's
 *   lanes inside the row, and `any` declared, nonzero when some lane is;
 *   TILE_LOAD_X(j): xv[j] = vector j of the input at xc + off (stride sw);
 *   TILE_FMA(co, j): acc[co][j] = fmaf(xv[j], wv, acc[co][j]) in the lanes
 *   whose tap is inside, the others kept.
 * The hooks are statements, not inline functions: as functions they change
 * GCC's register allocation, and the widths compile to the instructions
 * they had as functions of their own.
 *
 * Channels nco ≤ CO, nv vectors of which the last has the lanes of `last`;
 * dw: every channel has its own input (depthwise). Constants in every call
 * (SFX(tile_any)), so that the accumulators are registers.
 */

INLINE T void SFX(tile)(const conv_tile *t, int32_t nco, int32_t nv, int mode, VMASK last, int unit) {
  const tidsp_conv2d_params *p = t->p;
  const size_t plane = (size_t)p->h_in * (size_t)p->w_in;
  /* unit: a compile-time 1 for stride 1, whose instance has no stride branches */
  const int32_t ksz = p->k_h * p->k_w, sw = unit ? 1 : p->stride_w;
  TILE_CONSTS
  const int dw = mode == TILE_DW, keep = mode == TILE_KEEP;
  TILE_VARS
  int32_t c0, c1, kh, kw, ci, co, j;

  if (keep) {
#pragma GCC unroll 4
    for (co = 0; co < nco; co++) {
#pragma GCC unroll 2
      for (j = 0; j < nv; j++)
        out[co % CO_KEEP][j] = VZERO(); /* the first group sets it */
    }
  }
  for (c0 = 0; c0 < t->cpg_in; c0 = c1) {
    c1 = t->cpg_in - c0 < t->group ? t->cpg_in : c0 + t->group;
    UNROLL_CO
    for (co = 0; co < nco; co++) {
#pragma GCC unroll 2
      for (j = 0; j < nv; j++)
        acc[co][j] = VZERO();
    }
    for (kh = 0; kh < p->k_h; kh++) {
      const int64_t ih = (int64_t)t->oh * p->stride_h + (int64_t)kh * p->dil_h - p->pad_top;
      if (ih < 0 || ih >= p->h_in)
        continue;
      for (kw = 0; kw < p->k_w; kw++) {
        /* input column of the tile's first pixel, and of each lane */
        const int32_t off = t->ow0 * sw + kw * p->dil_w - p->pad_left;
        const float *xr = t->x + (ptrdiff_t)(ih * p->w_in); /* the input row */
        TILE_MASKS
        if (!any)
          continue;
        for (ci = c0; ci < c1; ci++) {
          const float *xs = xr + (size_t)ci * plane;
          const float *ws = t->w + (size_t)ci * (size_t)ksz + (size_t)(kh * p->k_w + kw);
          UNROLL_CO
          for (co = 0; co < nco; co++) {
            const VEC wv = VBCAST(ws + (size_t)co * t->w_co);
            if (dw || co == 0) {
              const float *xc = xs + (dw ? (size_t)co * t->x_co : 0);
#pragma GCC unroll 2
              for (j = 0; j < nv; j++)
                TILE_LOAD_X(j);
            }
            /* part = fmaf(x, w, part) in the lanes whose tap is inside */
#pragma GCC unroll 2
            for (j = 0; j < nv; j++)
              TILE_FMA(co, j);
          }
        }
      }
    }
    UNROLL_CO
    for (co = 0; co < nco; co++) {
      float *yr = t->y + (size_t)co * t->y_co;
#pragma GCC unroll 2
      for (j = 0; j < nv; j++) {
        const VMASK m = j == nv - 1 ? last : MASK_ALL;
        VEC v = acc[co][j];
        if (keep) { /* out in registers until the last group */
          if (c0 != 0)
            out[co % CO_KEEP][j] = VADD(v, out[co % CO_KEEP][j]);
          else
            out[co % CO_KEEP][j] = t->s ? VADD(v, VLOAD_MASK(t->s + (size_t)co * t->y_co + W * j, m)) : v;
          continue;
        }
        if (c0 != 0) /* out = partᵢ + out */
          v = VADD(v, VLOAD_MASK(yr + W * j, m));
        else if (t->s) /* MLAS sums the first group into the output holding the sum */
          v = VADD(v, VLOAD_MASK(t->s + (size_t)co * t->y_co + W * j, m));
        if (c1 == t->cpg_in && t->bias)
          v = VADD(v, VSET1(t->bias[co]));
        VSTORE_MASK(yr + W * j, m, v);
      }
    }
  }
  if (keep) {
#pragma GCC unroll 4
    for (co = 0; co < nco; co++) {
#pragma GCC unroll 2
      for (j = 0; j < nv; j++) {
        const VMASK m = j == nv - 1 ? last : MASK_ALL;
        VEC v = out[co % CO_KEEP][j];
        if (t->bias)
          v = VADD(v, VSET1(t->bias[co]));
        VSTORE_MASK(t->y + (size_t)co * t->y_co + W * j, m, v);
      }
    }
  }
}

#undef W
#undef CO
#undef NV
#undef CO_KEEP
#undef VEC
#undef VMASK
#undef T
#undef SFX
#undef UNROLL_CO
#undef VZERO
#undef VADD
#undef VSET1
#undef VBCAST
#undef VLOAD_MASK
#undef VSTORE_MASK
#undef MASK_ALL
#undef TILE_CONSTS
#undef TILE_VARS
#undef TILE_MASKS
#undef TILE_LOAD_X
#undef TILE_FMA
