/*
 * add_i8.c — QLinearAdd with broadcasting.
 *
 * FLOAT mirrors ONNX Runtime's x86 kernel (MlasQLinearAddKernelAvx2Helper,
 * compiled with FMA contraction) bit for bit. ORT runs it on uint8 data
 * (int8 activations are rewritten to uint8, q + 128), so a and b enter as
 * raw uint8 values, the zero points are the uint8 ones (zp + 128) and the
 * result is saturated to the uint8 range before being shifted back.
 *
 * ORT splits the output into spans (runs of its innermost dimension of size
 * > 1). When input A is a single value over each span, it swaps the
 * operands and folds A into the kernel's constant first, which rounds
 * differently:
 *   otherwise:   v = fma(a, ra, fma(b, rb, f))
 *   A per span:  v = fma(b, rb, fma(a, ra, f_swapped))
 *   f         = fl(zc − fma(ra, za, fl(rb·zb)))   (p->f, from the compiler)
 *   f_swapped = fl(zc − fma(rb, zb, fl(ra·za)))   (derived here)
 * A per span: A's stride is 0 in the innermost output dim of size > 1, or
 * the output has a single element (ORT then treats input A as the scalar).
 * B per span needs no case of its own: folding B first is the general
 * formula.
 *
 * This is tidsp_add_i8__ref, the oracle: the public tidsp_add_i8 dispatches to
 * a host variant (runtime/kernels/dispatch.c) that must give the same bytes.
 */
#include "ref_internal.h"

int32_t tidsp_add_i8__ref(const tidsp_add_i8_params *p, const int8_t *a,
                          const int8_t *b, int8_t *y) {
  tidsp_ref_bc_iter it;
  const int32_t st = TIDSP_REF_Q_BINARY_BEGIN(&it, p, a, b, y);
  int64_t r;
  int32_t i;
  if (st != TIDSP_OK)
    return st;

  if (p->kind == TIDSP_REQUANT_FLOAT) {
    const float ra = p->ra, rb = p->rb;
    const int swapped = tidsp_ref_add_a_per_span(&p->bc);
    const float f = tidsp_ref_add_f(p, swapped);
    /* clamp bounds in the uint8 domain */
    const float lo = (float)(p->y_min + p->domain_offset);
    const float hi = (float)(p->y_max + p->domain_offset);
    for (r = 0; r < it.rows; r++, tidsp_ref_bc_next(&it)) {
      const int8_t *ar = a + it.a_off, *br = b + it.b_off;
      int8_t *yr = y + (size_t)r * (size_t)it.inner;
      for (i = 0; i < it.inner; i++) {
        const float av = (float)(ar[(ptrdiff_t)i * it.a_step] + p->domain_offset);
        const float bv = (float)(br[(ptrdiff_t)i * it.b_step] + p->domain_offset);
        float v = swapped ? fmaf(bv, rb, fmaf(av, ra, f)) : fmaf(av, ra, fmaf(bv, rb, f));
        v = v > lo ? v : lo; /* a NaN saturates low, as cvtps2dq + packus */
        v = v < hi ? v : hi;
        yr[i] = (int8_t)(tidsp_ref_rne(v) - p->domain_offset);
      }
    }
  } else { /* TIDSP_REQUANT_Q31 */
    /* The FLOAT formula in integers (softfloat.h): same constants, same
     * roundings, no FPU. */
    const tidsp_sf ra = tidsp_sf_from_float(p->ra), rb = tidsp_sf_from_float(p->rb);
    const int64_t za = p->a_zp + p->domain_offset, zb = p->b_zp + p->domain_offset;
    const int64_t zc = p->y_zp + p->domain_offset;
    const int swapped = tidsp_ref_add_a_per_span(&p->bc);
    const int64_t lo = p->y_min + p->domain_offset, hi = p->y_max + p->domain_offset;
    tidsp_sf f = tidsp_sf_from_float(p->f);
    if (swapped) { /* f_swapped = fl(zc − fma(rb, zb, fl(ra·za))) */
      tidsp_sf raza = tidsp_sf_round(ra.m * za, ra.s);
      tidsp_sf u = tidsp_sf_add((tidsp_sf){rb.m * zb, rb.s}, raza);
      f = tidsp_sf_add((tidsp_sf){zc, 0}, (tidsp_sf){-u.m, u.s});
    }
    for (r = 0; r < it.rows; r++, tidsp_ref_bc_next(&it)) {
      const int8_t *ar = a + it.a_off, *br = b + it.b_off;
      int8_t *yr = y + (size_t)r * (size_t)it.inner;
      for (i = 0; i < it.inner; i++) {
        const int64_t av = ar[(ptrdiff_t)i * it.a_step] + p->domain_offset;
        const int64_t bv = br[(ptrdiff_t)i * it.b_step] + p->domain_offset;
        tidsp_sf v;
        if (swapped) {
          v = tidsp_sf_add((tidsp_sf){av * ra.m, ra.s}, f);
          v = tidsp_sf_add((tidsp_sf){bv * rb.m, rb.s}, v);
        } else {
          v = tidsp_sf_add((tidsp_sf){bv * rb.m, rb.s}, f);
          v = tidsp_sf_add((tidsp_sf){av * ra.m, ra.s}, v);
        }
        yr[i] = (int8_t)(tidsp_ref_clamp_i64(tidsp_sf_rne_int(v), lo, hi) - p->domain_offset);
      }
    }
  }
  return TIDSP_OK;
}
