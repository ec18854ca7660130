/*
 * conv_transpose2d_f32.c — float 2-D transposed convolution (ONNX
 * ConvTranspose), NCHW input, weight [C_in, C_out/groups, kH, kW].
 *
 * Each output plane starts at its bias; every input pixel then scatters
 * x·w into the kH × kW output positions it reaches (oh = ih·sh − pad_top
 * + kh·dh), input channels outer, then input rows and columns, then taps.
 * Float results are this loop's own order, as conv2d_f32's: not meant to
 * match another library bit for bit (the host rows run ONNX Runtime's
 * order instead: host/conv_transpose2d_f32__host_mlas.c).
 */
#include "conv_internal.h"

int32_t tidsp_conv_transpose2d_f32__ref(const tidsp_conv2d_params *p, const float *x, const float *w,
                                        const float *bias, float *y) {
  int32_t n, g, ci, co, ih, iw, kh, kw, cpg_in, cpg_out;
  size_t plane_in, plane_out, i;

  if (!p || !x || !w || !y)
    return TIDSP_ERR_NULL;
  if (tidsp_ref_conv_transpose2d_check(p) != TIDSP_OK)
    return TIDSP_ERR_SHAPE;
  cpg_in = p->c_in / p->groups;
  cpg_out = p->c_out / p->groups;
  plane_in = (size_t)p->h_in * (size_t)p->w_in;
  plane_out = (size_t)p->h_out * (size_t)p->w_out;
  for (n = 0; n < p->n; n++) {
    float *yn = y + (size_t)n * (size_t)p->c_out * plane_out;
    const float *xn = x + (size_t)n * (size_t)p->c_in * plane_in;
    for (co = 0; co < p->c_out; co++)
      for (i = 0; i < plane_out; i++)
        yn[(size_t)co * plane_out + i] = bias ? bias[co] : 0.0f;
    for (g = 0; g < p->groups; g++) {
      for (ci = g * cpg_in; ci < (g + 1) * cpg_in; ci++) {
        const float *xc = xn + (size_t)ci * plane_in;
        for (ih = 0; ih < p->h_in; ih++) {
          for (iw = 0; iw < p->w_in; iw++) {
            const float xv = xc[(size_t)ih * (size_t)p->w_in + (size_t)iw];
            for (co = 0; co < cpg_out; co++) {
              const float *wk = w + ((size_t)ci * (size_t)cpg_out + (size_t)co) * (size_t)p->k_h * (size_t)p->k_w;
              float *yc = yn + (size_t)(g * cpg_out + co) * plane_out;
              for (kh = 0; kh < p->k_h; kh++) {
                const int64_t oh = (int64_t)ih * p->stride_h - p->pad_top + (int64_t)kh * p->dil_h;
                if (oh < 0 || oh >= p->h_out)
                  continue;
                for (kw = 0; kw < p->k_w; kw++) {
                  const int64_t ow = (int64_t)iw * p->stride_w - p->pad_left + (int64_t)kw * p->dil_w;
                  if (ow < 0 || ow >= p->w_out)
                    continue;
                  yc[(size_t)oh * (size_t)p->w_out + (size_t)ow] += xv * wk[kh * p->k_w + kw];
                }
              }
            }
          }
        }
      }
    }
  }
  return TIDSP_OK;
}
