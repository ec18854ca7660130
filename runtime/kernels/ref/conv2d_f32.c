/*
 * conv2d_f32.c — float 2-D convolution, NCHW × OIHW: y = bias + Σ x·w.
 *
 * Same loop order as conv2d_i8.c: per output channel a tile of output rows
 * is accumulated; for each tap and input channel one weight is held while
 * the innermost loop runs along an output row. Padding reads as 0, so each
 * tap's rows and columns are clipped to the input instead of tested. The
 * summation order (taps outer, input channels inner) is the reference's own;
 * float results are not meant to match another library bit for bit.
 */
#include "conv_internal.h"

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
  int32_t kh, kw, ci, r, rlo, rhi, clo, chi;
  size_t i;

  for (i = 0; i < (size_t)t->rows * (size_t)t->cols; i++)
    acc[i] = b;
  for (kh = 0; kh < p->k_h; kh++) {
    const int64_t roff = (int64_t)t->oh0 * sh + (int64_t)kh * p->dil_h - p->pad_top;
    tidsp_ref_valid_range(roff, sh, p->h_in, t->rows, &rlo, &rhi);
    if (rlo >= rhi)
      continue;
    for (kw = 0; kw < p->k_w; kw++) {
      const int64_t coff = (int64_t)t->ow0 * sw + (int64_t)kw * p->dil_w - p->pad_left;
      const float *w_tap = w_co + kh * p->k_w + kw;
      tidsp_ref_valid_range(coff, sw, p->w_in, t->cols, &clo, &chi);
      if (clo >= chi)
        continue;
      for (ci = 0; ci < cpg_in; ci++) {
        const float wv = w_tap[(size_t)ci * (size_t)ksz];
        const float *xs = x_g + (size_t)ci * plane +
                          (ptrdiff_t)(((int64_t)rlo * sh + roff) * p->w_in +
                                      (int64_t)clo * sw + coff);
        for (r = rlo; r < rhi; r++) {
          tap_run(xs, sw, chi - clo, wv, acc + (size_t)r * (size_t)t->cols + clo);
          xs += (ptrdiff_t)sh * p->w_in;
        }
      }
    }
  }
}

int32_t tidsp_conv2d_f32__ref(const tidsp_conv2d_params *p, const float *x,
                              const float *w, const float *bias, float *y) {
  float acc[TIDSP_REF_CONV_TILE];
  tidsp_ref_conv_tile t;
  int32_t st, n, co, r, j, cpg_in, cpg_out, tile_rows, tile_cols;

  if (!p || !x || !w || !y)
    return TIDSP_ERR_NULL;
  st = tidsp_ref_conv2d_check(p);
  if (st != TIDSP_OK)
    return st;
  cpg_in = p->c_in / p->groups;
  cpg_out = p->c_out / p->groups;
  tidsp_ref_conv_tile_dims(p->h_out, p->w_out, &tile_rows, &tile_cols);
  for (n = 0; n < p->n; n++) {
    for (co = 0; co < p->c_out; co++) {
      const int32_t g = co / cpg_out;
      const float *x_g =
          x + ((size_t)n * (size_t)p->c_in + (size_t)g * (size_t)cpg_in) * (size_t)p->h_in * (size_t)p->w_in;
      const float *w_co = w + (size_t)co * (size_t)cpg_in * (size_t)p->k_h * (size_t)p->k_w;
      float *y_co = y + ((size_t)n * (size_t)p->c_out + (size_t)co) * (size_t)p->h_out * (size_t)p->w_out;
      for (t.oh0 = 0; t.oh0 < p->h_out; t.oh0 += tile_rows) {
        t.rows = p->h_out - t.oh0 < tile_rows ? p->h_out - t.oh0 : tile_rows;
        for (t.ow0 = 0; t.ow0 < p->w_out; t.ow0 += tile_cols) {
          t.cols = p->w_out - t.ow0 < tile_cols ? p->w_out - t.ow0 : tile_cols;
          conv_tile(p, x_g, w_co, cpg_in, bias ? bias[co] : 0.0f, &t, acc);
          for (r = 0; r < t.rows; r++) {
            float *y_row = y_co + (size_t)(t.oh0 + r) * (size_t)p->w_out + t.ow0;
            for (j = 0; j < t.cols; j++)
              y_row[j] = acc[(size_t)r * (size_t)t.cols + (size_t)j];
          }
        }
      }
    }
  }
  return TIDSP_OK;
}
