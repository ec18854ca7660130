/*
 * fast_conv_test_util.h — the pieces shared by the fast-kernel tests
 * (test_kernel_fast_conv.c, test_kernel_fast_dwconv.c): random data,
 * requant blobs of either kind, one convolution case and its geometry.
 * Include after kernel_test_util.h.
 */
#ifndef CSTATIC_FAST_CONV_TEST_UTIL_H
#define CSTATIC_FAST_CONV_TEST_UTIL_H

static void fill_i8(int8_t *v, size_t n) {
  size_t i;
  for (i = 0; i < n; i++)
    v[i] = (int8_t)rnd_range(-128, 127);
}

/* One SCALE_SHIFT entry near the multiplier f (scale·2^−shift ≈ f), or,
 * one time in three, an edge: shift 0 or 31, scale 0 or 255, or a small
 * shift where ties (…·5 after the shift) are common. */
static void make_scale_shift(float f, uint8_t *scale, uint8_t *shift) {
  int32_t sh = 0, sc;
  switch (rnd() % 15) {
  case 0: *scale = (uint8_t)rnd_range(0, 255); *shift = 0; return;
  case 1: *scale = 255; *shift = 31; return;
  case 2: *scale = (uint8_t)rnd_range(1, 255); *shift = 31; return;
  case 3: *scale = 0; *shift = (uint8_t)rnd_range(0, 31); return;
  case 4: *scale = 255; *shift = (uint8_t)rnd_range(0, 31); return;
  case 5: *scale = (uint8_t)rnd_range(1, 3); *shift = (uint8_t)rnd_range(1, 4); return;
  default: break;
  }
  while (sh < 31 && f * (float)(1u << (sh + 1)) <= 255.0f)
    sh++; /* the largest shift that keeps the scale in 8 bits */
  sc = (int32_t)(f * (float)(1u << sh) + 0.5f);
  *scale = (uint8_t)(sc < 1 ? 1 : (sc > 255 ? 255 : sc));
  *shift = (uint8_t)sh;
}

/* One Q31 entry equal to the multiplier f rounded to 24 bits
 * (mult·2^−shift), or, one time in four, an edge of what the reference
 * accepts: mult 0 or 2^24, shift 0 or 62, a small mult (few significant
 * bits, so products land on ties), a mult just below 2^24. */
static void make_q31(float f, int32_t *mult, int32_t *shift) {
  int e;
  float fr;
  switch (rnd() % 20) {
  case 0: *mult = 0; *shift = rnd_range(0, 62); return;
  case 1: *mult = 1 << 24; *shift = rnd_range(24, 40); return;
  case 2: *mult = rnd_range(1, 7); *shift = rnd_range(0, 12); return;
  case 3: *mult = (1 << 24) - rnd_range(0, 3); *shift = 62; return;
  case 4: *mult = rnd_range(0, 1 << 24); *shift = 0; return;
  default: break;
  }
  fr = frexpf(f, &e); /* f = fr·2^e, fr in [0.5, 1) */
  *mult = (int32_t)(fr * 16777216.0f); /* a 24-bit significand */
  *shift = 24 - e;
  if (*shift < 0)
    *shift = 0;
  if (*shift > 62)
    *shift = 62;
}

/* Requant data of `kind` for `channels` channels (1 when per-tensor).
 * `gain` scales the multipliers: > 1 saturates most outputs. Returns a
 * malloc'ed blob (floats; int32 mult[] then shift[]; or a
 * tidsp_scale_shift followed by its scale[] and shift[], either of which
 * may be NULL). */
static void *make_rq(tidsp_requant_params *rq, int32_t kind, int32_t channels,
                     int32_t per_channel, int32_t k_taps, float gain) {
  const int32_t n = per_channel ? channels : 1;
  int32_t i;
  /* typical scale: an output of ~±100 for a sum of k products of ~±100² */
  const float base = gain * 100.0f / (10000.0f * (float)sqrt((double)(k_taps > 0 ? k_taps : 1)));
  if (kind == TIDSP_REQUANT_SCALE_SHIFT) {
    tidsp_scale_shift *ss = malloc(sizeof(*ss) + 2 * (size_t)n);
    uint8_t *scale = (uint8_t *)(ss + 1), *shift = scale + n;
    rq->kind = kind;
    rq->per_channel = per_channel;
    rq->out_zp = 0; /* MMALIB folds it into the bias */
    rq->out_min = -128;
    rq->out_max = 127;
    if (rnd() % 4 == 0) { /* fused Relu */
      rq->out_min = 0;
    } else if (rnd() % 4 == 0) { /* a narrowed range */
      rq->out_min = rnd_range(-128, 0);
      rq->out_max = rnd_range(rq->out_min, 127);
    }
    for (i = 0; i < n; i++)
      make_scale_shift(base * (0.25f + 1.5f * rnd_unit()), &scale[i], &shift[i]);
    ss->scale = rnd() % 8 == 0 ? NULL : scale;
    ss->shift = rnd() % 8 == 0 ? NULL : shift;
    return ss;
  }
  rq->kind = kind;
  rq->per_channel = per_channel;
  rq->out_zp = rnd_range(-20, 20);
  if (rnd() % 4 == 0) { /* fused Relu */
    rq->out_min = rq->out_zp;
    rq->out_max = 127;
  } else if (rnd() % 4 == 0) { /* a narrowed range (Relu6, Clip) */
    rq->out_min = rnd_range(-128, rq->out_zp);
    rq->out_max = rnd_range(rq->out_zp, 127);
  } else {
    rq->out_min = -128;
    rq->out_max = 127;
  }
  if (kind == TIDSP_REQUANT_FLOAT) {
    float *m = malloc(sizeof(float) * (size_t)n);
    for (i = 0; i < n; i++)
      m[i] = base * (0.25f + 1.5f * rnd_unit());
    return m;
  } else {
    int32_t *m = malloc(sizeof(int32_t) * 2 * (size_t)n);
    for (i = 0; i < n; i++)
      make_q31(base * (0.25f + 1.5f * rnd_unit()), &m[i], &m[n + i]);
    return m;
  }
}

/* One convolution case, run on every supported variant. */
typedef struct conv_case {
  int32_t n, c_in, c_out, groups, h_in, w_in, k_h, k_w;
  int32_t stride_h, stride_w, dil_h, dil_w, pad_top, pad_left;
  int32_t extra_h, extra_w; /* outputs past the natural size */
  int32_t x_zp, w_zp, kind, per_channel, with_bias, big_bias;
  int32_t odd_mult; /* FLOAT multipliers NaN, +inf, −inf, 0 on channels 0..3 */
  float gain;
  /* w_row_stride = taps + w_row_pad when w_row_pad > 0 (0: dense rows);
   * the padding bytes hold w_poison, which no kernel may read */
  int32_t w_row_pad, w_poison;
} conv_case;

/* A copy of `rows` dense weight rows of `taps` bytes, rows taps + pad
 * bytes apart, the pad bytes set to poison. Exactly sized (the last row
 * ends at its last weight): a read past it shows under ASan. */
static inline int8_t *pad_rows(const int8_t *w, int32_t rows, int32_t taps,
                               int32_t pad, int32_t poison) {
  const size_t stride = (size_t)taps + (size_t)pad;
  const size_t n = rows > 0 ? (size_t)(rows - 1) * stride + (size_t)taps : 1;
  int8_t *wp = malloc(n ? n : 1);
  int32_t r;
  memset(wp, poison, n);
  for (r = 0; r < rows; r++)
    memcpy(wp + (size_t)r * stride, w + (size_t)r * taps, (size_t)taps);
  return wp;
}

/* Multipliers no compiler emits, whose clamp order still decides the
 * output (NaN must end at out_min, as in ORT's max_ps/min_ps). */
static void set_odd_mults(float *m, int32_t n) {
  const float odd[4] = {NAN, INFINITY, -INFINITY, 0.0f};
  int32_t i;
  for (i = 0; i < n && i < 4; i++)
    m[i] = odd[i];
}

static int32_t out_dim(int32_t in, int32_t k, int32_t s, int32_t d, int32_t pad) {
  int32_t eff = d * (k - 1) + 1, o = (in + 2 * pad - eff) / s + 1;
  return o < 0 ? 0 : o;
}

/* The kernel parameters of a case (output size from the geometry plus the
 * case's extra rows/columns) and its requant data (make_rq; odd multipliers
 * when the case asks). */
static void *conv_case_params(const conv_case *cc, tidsp_conv2d_params *p) {
  void *rqd;
  memset(p, 0, sizeof(*p));
  p->n = cc->n;
  p->c_in = cc->c_in;
  p->h_in = cc->h_in;
  p->w_in = cc->w_in;
  p->c_out = cc->c_out;
  p->k_h = cc->k_h;
  p->k_w = cc->k_w;
  p->stride_h = cc->stride_h;
  p->stride_w = cc->stride_w;
  p->dil_h = cc->dil_h;
  p->dil_w = cc->dil_w;
  p->pad_top = cc->pad_top;
  p->pad_left = cc->pad_left;
  p->groups = cc->groups;
  p->h_out = out_dim(cc->h_in, cc->k_h, cc->stride_h, cc->dil_h, cc->pad_top) + cc->extra_h;
  p->w_out = out_dim(cc->w_in, cc->k_w, cc->stride_w, cc->dil_w, cc->pad_left) + cc->extra_w;
  p->x_zp = cc->x_zp;
  p->w_zp = cc->w_zp;
  rqd = make_rq(&p->rq, cc->kind, cc->c_out, cc->per_channel,
                cc->c_in / cc->groups * cc->k_h * cc->k_w, cc->gain);
  if (cc->odd_mult && cc->kind == TIDSP_REQUANT_FLOAT)
    set_odd_mults(rqd, cc->per_channel ? cc->c_out : 1);
  return rqd;
}

#endif
