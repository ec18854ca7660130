/*
 * conv2d_f32.c — float 2-D convolution, NCHW × OIHW: y = bias + Σ x·w.
 *
 * Same loop order as conv2d_i8.c: per output channel a tile of output rows
 * is accumulated; for each tap and input channel one weight is held while
 * the innermost loop runs along an output row. Padding reads as 0, so each
 * tap's rows and columns are clipped to the input instead of tested. The
 * summation order (taps outer, input channels inner) is the reference's own;
 * float results are not meant to match another library bit for bit.
 *
 * With a `sum` tensor (a fused Add, compiler/passes/fuse_conv_add_f32.c)
 * whose params.sum_in_conv has this CPU's MLAS block bit, the taps are
 * summed from 0 and each output is ((Σ x·w) + sum) + bias: the order in
 * which ONNX Runtime adds a fused Add, so that the reference and the
 * MLAS-order variant round the same two additions in the same order.
 * Without the bit ORT did not fuse the Add on such a CPU: the output is
 * (conv + bias) + sum, the convolution then the Add.
 */
#include "conv_internal.h"
#include "../kernel_variants.h"

#define RUN_BLOCK 16

/* as[j] += xs[j·sw]·wv for j < len. */
static void tap_run(const float *restrict xs, int32_t sw, int32_t len, float wv,
                    float *restrict as) {
  int32_t j = 0, t;
  if (sw == 1) {
    for (; j + RUN_BLOCK <= len; j += RUN_BLOCK) {
      for (t = 0; t < RUN_BLOCK; t++)
        as[j + t] += xs[j + t] * wv;
    }
  }
  for (; j < len; j++)
    as[j] += xs[(ptrdiff_t)j * sw] * wv;
}

static void conv_tile(const tidsp_conv2d_params *p, const float *x_g,
                      const float *w_co, int32_t cpg_in, float b,
                      const tidsp_ref_conv_tile *t, float *acc) {
  const size_t plane = (size_t)p->h_in * (size_t)p->w_in;
  const int32_t ksz = p->k_h * p->k_w, sh = p->stride_h, sw = p->stride_w;
  tidsp_ref_conv_tap tap;
  int32_t ci, r;
  size_t i;

  for (i = 0; i < (size_t)t->rows * (size_t)t->cols; i++)
    acc[i] = b;
  tidsp_ref_conv_taps_start(&tap);
  while (tidsp_ref_conv_tap_next(p, t, &tap)) {
    const float *w_tap = w_co + tap.kh * p->k_w + tap.kw;
    for (ci = 0; ci < cpg_in; ci++) {
      const float wv = w_tap[(size_t)ci * (size_t)ksz];
      const float *xs = x_g + (size_t)ci * plane + (ptrdiff_t)tap.x_off;
      for (r = tap.rlo; r < tap.rhi; r++) {
        tap_run(xs, sw, tap.chi - tap.clo, wv, acc + (size_t)r * (size_t)t->cols + tap.clo);
        xs += (ptrdiff_t)sh * p->w_in;
      }
    }
  }
}

int32_t tidsp_conv2d_f32__ref(const tidsp_conv2d_params *p, const float *x,
                              const float *w, const float *bias, const float *sum, float *y) {
  float acc[TIDSP_REF_CONV_TILE];
  tidsp_ref_conv_tile t;
  int32_t st, n, co, r, j, cpg_in;

  if (!p || !x || !w || !y)
    return TIDSP_ERR_NULL;
  st = tidsp_ref_conv2d_check(p);
  if (st != TIDSP_OK)
    return st;
  if (sum && !(p->sum_in_conv & tidsp_mlas_block_bit())) {
    st = tidsp_conv2d_f32__ref(p, x, w, bias, NULL, y);
    if (st == TIDSP_OK)
      tidsp_ref_conv_add_sum_f32(p, sum, y);
    return st;
  }
  cpg_in = p->c_in / p->groups;
  for (n = 0; n < p->n; n++) {
    for (co = 0; co < p->c_out; co++) {
      const float *w_co = w + (size_t)co * (size_t)cpg_in * (size_t)p->k_h * (size_t)p->k_w;
      float *y_co = y + tidsp_ref_conv_y_plane(p, n, co);
      const float *s_co = sum ? sum + tidsp_ref_conv_y_plane(p, n, co) : NULL;
      tidsp_ref_conv_tiles_start(p, &t);
      while (tidsp_ref_conv_tile_next(p, &t)) {
        const float b = bias ? bias[co] : 0.0f;
        /* with a sum, the bias is added last (see the header comment) */
        conv_tile(p, x + tidsp_ref_conv_x_group(p, n, co), w_co, cpg_in, sum ? 0.0f : b, &t, acc);
        for (r = 0; r < t.rows; r++)
          for (j = 0; j < t.cols; j++) {
            const size_t at = (size_t)(t.oh0 + r) * (size_t)p->w_out + (size_t)(t.ow0 + j);
            float v = acc[(size_t)r * (size_t)t.cols + (size_t)j];
            if (s_co) {
              v = v + s_co[at];
              if (bias)
                v = v + b;
            }
            y_co[at] = v;
          }
      }
    }
  }
  return TIDSP_OK;
}
