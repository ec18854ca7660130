/*
 * channel_affine_i16.c — tidsp_channel_affine_i16 (cstatic/kernels.h):
 * tidsp_channel_affine_i8's value less y_zp, stored as int16: a
 * BatchNormalization whose result the next MMALIB exact layer reads
 * widened writes that int16 tensor itself
 * (compiler/passes/fuse_widen_into_producer.c). One reference loop: only
 * -mmalib=1 builds (the C7x's) call it.
 */
#include "channel_affine_internal.h"

int32_t tidsp_channel_affine_i16(const tidsp_channel_affine_i8_params *p, const int8_t *x, const float *s,
                                 const float *b, int16_t *y) {
  const int32_t st = tidsp_ref_channel_affine_check(p, x, s, b, y);
  if (st != TIDSP_OK)
    return st;
  /* from the end: y may start where x does (in place, y's bytes twice
   * x's: element i is written over x's 2i and 2i + 1, already read) */
  for (int32_t o = p->outer - 1; o >= 0; o--)
    for (int32_t c = p->channels - 1; c >= 0; c--) {
      const size_t base = ((size_t)o * (size_t)p->channels + (size_t)c) * (size_t)p->inner;
      for (int32_t i = p->inner - 1; i >= 0; i--)
        y[base + (size_t)i] = (int16_t)(tidsp_ref_channel_affine_one(p, x[base + (size_t)i], s[c], b[c]) - p->y_zp);
    }
  return TIDSP_OK;
}
