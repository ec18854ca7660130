/*
 * conv_transpose_nd_f32.c — float transposed convolution (ONNX
 * ConvTranspose) over any number of spatial dims, weight [C_in,
 * C_out/groups, k…]: conv_transpose2d_f32's scatter with odometers over
 * the input positions and the taps (same loop order, so a 2-D problem
 * gives its bytes). The host rows run ONNX Runtime's order instead
 * (host/conv_transpose2d_f32__host_mlas.c).
 */
#include "conv_internal.h"

int32_t tidsp_conv_transpose_nd_f32__ref(const tidsp_conv_transpose_nd_params *p, const float *x, const float *w,
                                         const float *bias, float *y) {
  int32_t n, g, ci, co, d, cpg_in, cpg_out, ip[TIDSP_MAX_RANK], t[TIDSP_MAX_RANK];
  int64_t plane_in = 1, plane_out = 1, taps = 1, i, j, kk;
  if (!p || !x || !w || !y)
    return TIDSP_ERR_NULL;
  if (tidsp_ref_conv_transpose_nd_check(p) != TIDSP_OK)
    return TIDSP_ERR_SHAPE;
  for (d = 0; d < p->dims; d++) {
    plane_in *= p->in[d];
    plane_out *= p->out[d];
    taps *= p->k[d];
  }
  cpg_in = p->c_in / p->groups;
  cpg_out = p->c_out / p->groups;
  for (n = 0; n < p->n; n++) {
    float *yn = y + (size_t)n * (size_t)p->c_out * (size_t)plane_out;
    const float *xn = x + (size_t)n * (size_t)p->c_in * (size_t)plane_in;
    for (co = 0; co < p->c_out; co++)
      for (j = 0; j < plane_out; j++)
        yn[(size_t)co * (size_t)plane_out + (size_t)j] = bias ? bias[co] : 0.0f;
    for (g = 0; g < p->groups; g++) {
      for (ci = g * cpg_in; ci < (g + 1) * cpg_in; ci++) {
        const float *xc = xn + (size_t)ci * (size_t)plane_in;
        for (d = 0; d < p->dims; d++)
          ip[d] = 0;
        for (i = 0; i < plane_in; i++) { /* input positions, row-major (ip) */
          const float xv = xc[i];
          for (co = 0; co < cpg_out; co++) {
            const float *wk = w + ((size_t)ci * (size_t)cpg_out + (size_t)co) * (size_t)taps;
            float *yc = yn + (size_t)(g * cpg_out + co) * (size_t)plane_out;
            for (d = 0; d < p->dims; d++)
              t[d] = 0;
            for (kk = 0; kk < taps; kk++) { /* taps, row-major (t) */
              int64_t off = 0;
              int inside = 1;
              for (d = 0; d < p->dims && inside; d++) {
                const int64_t o = (int64_t)ip[d] * p->stride[d] - p->pad_begin[d] + (int64_t)t[d] * p->dil[d];
                inside = o >= 0 && o < p->out[d];
                off = off * p->out[d] + o;
              }
              if (inside)
                yc[off] += xv * wk[kk];
              for (d = p->dims - 1; d >= 0; d--) {
                if (++t[d] < p->k[d])
                  break;
                t[d] = 0;
              }
            }
          }
          for (d = p->dims - 1; d >= 0; d--) {
            if (++ip[d] < p->in[d])
              break;
            ip[d] = 0;
          }
        }
      }
    }
  }
  return TIDSP_OK;
}
