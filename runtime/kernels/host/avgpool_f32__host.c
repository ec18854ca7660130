/*
 * avgpool_f32__host.c — tidsp_avgpool_f32 for the host rows: portable C
 * that sums a whole output row at once, tap by tap, instead of walking
 * each window on its own (ref/avgpool_f32.c, whose window walk costs more
 * than the adds: PP-OCR rec's 3×2 pooling over 480 channels).
 *
 * Each output's sum still starts at 0.0f and takes its taps in the
 * window's (kh, kw) order, then is divided by the count: the reference's
 * operations on each element, so its bytes — but for a NaN's payload
 * where two NaNs of different payloads meet in one add: x86 keeps the
 * first operand's, and C lets the compiler swap an add's operands (GCC
 * -O3 vectorizes the row sum as x + acc, the reference's is sum + x), in
 * either file and in ORT's.
 * The fast path takes windows that lie wholly inside the input (no pad
 * before, none reached after), where every window has k_h·k_w taps and
 * both counts are that; anything else, and anything the reference
 * rejects, runs the reference.
 */
#include "../kernel_variants.h"
#include "../ref/ref_internal.h"

/* outputs of one row summed per pass: their sums live on the stack */
enum { ROW = 256 };

/* Whether every window lies wholly inside the input. */
static int windows_inside(const tidsp_pool2d_params *p) {
  return p->pad_top == 0 && p->pad_left == 0 &&
         (int64_t)(p->h_out - 1) * p->stride_h + (int64_t)(p->k_h - 1) * p->dil_h < p->h_in &&
         (int64_t)(p->w_out - 1) * p->stride_w + (int64_t)(p->k_w - 1) * p->dil_w < p->w_in;
}

int32_t tidsp_avgpool_f32__host(const tidsp_pool2d_params *p, const float *x, float *y) {
  float acc[ROW];
  int32_t inside, padded, nc, oh, ow0, cnt, kh, kw, j;
  float div;
  if (tidsp_ref_pool2d_begin(p, x, y) != TIDSP_OK || !windows_inside(p))
    return tidsp_avgpool_f32__ref(p, x, y);
  tidsp_ref_pool2d_counts(p, 0, 0, &inside, &padded);
  div = (float)(p->count_include_pad ? padded : inside);
  for (nc = 0; nc < p->n * p->c; nc++) {
    const float *xp = x + (size_t)nc * (size_t)p->h_in * (size_t)p->w_in;
    float *yp = y + (size_t)nc * (size_t)p->h_out * (size_t)p->w_out;
    for (oh = 0; oh < p->h_out; oh++) {
      for (ow0 = 0; ow0 < p->w_out; ow0 += ROW) {
        cnt = p->w_out - ow0 < ROW ? p->w_out - ow0 : ROW;
        for (j = 0; j < cnt; j++)
          acc[j] = 0.0f;
        for (kh = 0; kh < p->k_h; kh++) {
          const float *xr = xp + ((size_t)oh * (size_t)p->stride_h + (size_t)kh * (size_t)p->dil_h) *
                                     (size_t)p->w_in;
          for (kw = 0; kw < p->k_w; kw++) {
            const float *xc = xr + (size_t)ow0 * (size_t)p->stride_w + (size_t)kw * (size_t)p->dil_w;
            if (p->stride_w == 1) {
              for (j = 0; j < cnt; j++)
                acc[j] = acc[j] + xc[j];
            } else {
              for (j = 0; j < cnt; j++)
                acc[j] = acc[j] + xc[(size_t)j * (size_t)p->stride_w];
            }
          }
        }
        for (j = 0; j < cnt; j++)
          yp[(size_t)oh * (size_t)p->w_out + (size_t)(ow0 + j)] = acc[j] / div;
      }
    }
  }
  return TIDSP_OK;
}
