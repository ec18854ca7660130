/*
 * test_kernel_fast_conv.c — every variant of tidsp_conv2d_i8 and
 * tidsp_matmul_i8 that this CPU can run (the rows of tidsp_kernel_variants)
 * against the __ref functions, byte for byte and status for status.
 *
 * Generated cases put each blocking parameter of the host kernels at, just
 * below and just above its tile (output channels vs MR = 4 / 6 and the
 * 128-channel accumulator block, output pixels vs the 16 / 64-lane blocks,
 * reduction length vs the 512 / 1024-tap chunks and the 2 / 4-tap groups),
 * with groups (dense, grouped, depthwise), strides 1/2/3, pads, dilations,
 * output sizes that reach past the input, nonzero x_zp and w_zp, large
 * biases (int32 wrap-around), saturating multipliers, fused-Relu ranges,
 * per-tensor and per-channel requant of every kind (every FLOAT case runs
 * again with SCALE_SHIFT, MMALIB's requantization, whose random entries
 * include shifts 0 and 31, scales 0 and 255, NULL tables and narrowed
 * ranges, and with Q31, whose entries include mults 0 and 2^24 and shifts
 * 0 and 62), and guard bytes around every
 * output; depthwise cases also run on each row's depthwise entry. Invalid
 * arguments must give the reference's status. SCALE_SHIFT also gets
 * accumulators placed by hand on its ties and limits (test_ss_edges), the
 * depthwise direct paths (test_ss_depthwise), and its invalid arguments,
 * which must leave the output unwritten (test_ss_errors); Q31 likewise
 * (test_q31_edges: ties, |acc| ≥ 2^24, output zero points; test_q31_depthwise;
 * test_q31_errors).
 *
 * The AMX variant's own edges (amx_internal.h): reduction lengths around
 * its 64-tap steps (the overlapping last step, and K < 64 with and without
 * 4 | K), its 1024-tap chunks, output channels around its 16-row tiles
 * (the shifted last tile) and 128-row blocks, more channels than it keeps
 * constants for, 1×1 … 7×7 kernels, strides 1/2 (its two gathers) and 3
 * (the generic one), wide kernels, dilation, groups; and weight rows with
 * w_row_stride padding that holds poison (every variant must read only
 * the first K bytes of a row and give the dense rows' bytes). The AMX
 * cases run on every variant; without AMX they print why AMX is skipped.
 */
#if defined(__linux__) && !defined(_DEFAULT_SOURCE)
#define _DEFAULT_SOURCE /* mmap's MAP_ANONYMOUS */
#endif
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "../../runtime/kernels/kernel_variants.h"
#include "cstatic/kernels.h"
#include "unit.h"

#define GUARD 64
#define KT_SEED 0x9E3779B97F4A7C15ull
#include "kernel_test_util.h"
#include "fast_conv_test_util.h"

/* 1 when the O16 weight layout fits the shape (kernels.h). */
static int o16_fits(const tidsp_conv2d_params *p) {
  return (p->c_out / p->groups) % 16 == 0 && (p->c_in / p->groups) % 4 == 0;
}

/* Dense OIHW weights re-ordered as kernels.h gives O16, written from that
 * formula (not from the compiler's pass): blocks of 16·K weights and 16
 * int32 Σw, exactly sized (a read past them shows under ASan). */
static int8_t *pack_o16(const int8_t *w, const tidsp_conv2d_params *p) {
  const int32_t cpg_in = p->c_in / p->groups, T = p->k_h * p->k_w, Q = cpg_in / 4;
  const size_t K = (size_t)cpg_in * (size_t)T, blk = 16 * K + 64;
  int8_t *o = malloc((size_t)(p->c_out / 16) * blk);
  int32_t co, ci, t;
  for (co = 0; co < p->c_out; co++) {
    int32_t sum = 0;
    uint8_t le[4];
    for (ci = 0; ci < cpg_in; ci++)
      for (t = 0; t < T; t++) {
        const int8_t v = w[(size_t)co * K + (size_t)ci * (size_t)T + (size_t)t];
        o[(size_t)(co / 16) * blk + ((size_t)t * (size_t)Q + (size_t)(ci / 4)) * 64 +
          (size_t)(co % 16) * 4 + (size_t)(ci % 4)] = v;
        sum += v;
      }
    for (t = 0; t < 4; t++)
      le[t] = (uint8_t)((uint32_t)sum >> (8 * t));
    memcpy(o + (size_t)(co / 16) * blk + 16 * K + (size_t)(co % 16) * 4, le, 4);
  }
  return o;
}

static void run_conv_case_kind(const conv_case *cc) {
  tidsp_conv2d_params p, p_pad, p_o16;
  size_t nx, nw, ny;
  int8_t *x, *w, *y_ref, *y, *w_pad = NULL, *w_o16 = NULL;
  int32_t *bias = NULL, i, v, st_ref;
  void *rqd;
  int32_t cpg_in = cc->c_in / cc->groups;

  rqd = conv_case_params(cc, &p);

  nx = (size_t)p.n * p.c_in * p.h_in * p.w_in;
  nw = (size_t)p.c_out * cpg_in * p.k_h * p.k_w;
  ny = (size_t)p.n * p.c_out * p.h_out * p.w_out;
  x = malloc(nx);
  w = malloc(nw); /* exactly sized: an overread shows under ASan */
  fill_i8(x, nx);
  fill_i8(w, nw);
  if (cc->with_bias) {
    bias = malloc(sizeof(int32_t) * (size_t)p.c_out);
    for (i = 0; i < p.c_out; i++)
      bias[i] = cc->big_bias ? (int32_t)(rnd() ^ (rnd() << 21)) : rnd_range(-20000, 20000);
  }
  y_ref = guarded(ny);
  st_ref = tidsp_conv2d_i8__ref(&p, x, w, bias, rqd, y_ref);
  CHECK_MSG(st_ref == TIDSP_OK, "ref status %d", (int)st_ref);
  if (cc->w_row_pad > 0) { /* the same weights in padded rows */
    const int32_t taps = cpg_in * cc->k_h * cc->k_w;
    w_pad = pad_rows(w, p.c_out, taps, cc->w_row_pad, cc->w_poison);
    p_pad = p;
    p_pad.w_row_stride = taps + cc->w_row_pad;
  }
  if (o16_fits(&p)) { /* the same weights packed O16 (kernels.h) */
    w_o16 = pack_o16(w, &p);
    p_o16 = p;
    p_o16.w_layout = TIDSP_CONV_W_O16;
  }
  /* every variant, then (v = count) the AMX tiles on every layer, the
   * ones the host_amx entry sends to the VNNI kernel included */
  for (v = 0; v <= tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v < tidsp_kernel_variant_count ? v : 0];
    const int tiles = v == tidsp_kernel_variant_count;
    const char *name = tiles ? "host_amx_tiles" : kv->name;
    int32_t st, mode;
    if (tiles ? !tidsp_host_amx_supported() : !kv->supported())
      continue;
    for (mode = 0; mode < 3; mode++) { /* dense, padded rows, O16 */
      const tidsp_conv2d_params *pp = mode == 2 ? &p_o16 : mode == 1 ? &p_pad : &p;
      const int8_t *wm = mode == 2 ? w_o16 : mode == 1 ? w_pad : w;
      if (wm == NULL)
        continue;
      y = guarded(ny);
      st = (tiles ? tidsp_conv2d_i8__host_amx_tiles : kv->conv2d_i8)(pp, x, wm, bias, rqd, y);
      CHECK_MSG(st == st_ref, "%s status %d", name, (int)st);
      CHECK_MSG(memcmp(y, y_ref, ny) == 0,
                "%s conv n%d c%d->%d g%d %dx%d k%dx%d s%d,%d d%d,%d p%d,%d out %dx%d "
                "zp %d,%d kind %d pc %d w_row_stride %d w_layout %d",
                name, p.n, p.c_in, p.c_out, p.groups, p.h_in, p.w_in, p.k_h,
                p.k_w, p.stride_h, p.stride_w, p.dil_h, p.dil_w, p.pad_top,
                p.pad_left, p.h_out, p.w_out, p.x_zp, p.w_zp, (int)p.rq.kind,
                (int)p.rq.per_channel, (int)pp->w_row_stride, (int)pp->w_layout);
      CHECK_MSG(guards_ok(y, ny), "%s wrote outside the output", name);
      guarded_free(y);
      if (tiles || !tidsp_conv2d_is_depthwise(pp))
        continue;
      /* the row's depthwise entry (what the dispatcher calls for these) */
      y = guarded(ny);
      st = kv->dwconv2d_i8(pp, x, wm, bias, rqd, y);
      CHECK_MSG(st == st_ref, "%s dwconv status %d", kv->name, (int)st);
      CHECK_MSG(memcmp(y, y_ref, ny) == 0 && guards_ok(y, ny),
                "%s dwconv c%d->%d %dx%d k%dx%d s%d,%d d%d,%d kind %d pc %d", kv->name,
                p.c_in, p.c_out, p.h_in, p.w_in, p.k_h, p.k_w, p.stride_h, p.stride_w,
                p.dil_h, p.dil_w, (int)p.rq.kind, (int)p.rq.per_channel);
      guarded_free(y);
    }
  }
  guarded_free(y_ref);
  free(x);
  free(w);
  free(w_pad);
  free(w_o16);
  free(bias);
  free(rqd);
}

/* A case as given and, when it is a plain FLOAT one, the same geometry
 * with SCALE_SHIFT requantization (MMALIB's, make_scale_shift) and with
 * Q31 (make_q31). */
static void run_conv_case(const conv_case *cc) {
  run_conv_case_kind(cc);
  if (cc->kind == TIDSP_REQUANT_FLOAT && !cc->odd_mult) {
    conv_case c = *cc;
    c.kind = TIDSP_REQUANT_SCALE_SHIFT;
    run_conv_case_kind(&c);
    c.kind = TIDSP_REQUANT_Q31;
    run_conv_case_kind(&c);
  }
}

static conv_case base_case(void) {
  conv_case c;
  memset(&c, 0, sizeof(c));
  c.n = 1;
  c.c_in = 8;
  c.c_out = 8;
  c.groups = 1;
  c.h_in = 9;
  c.w_in = 9;
  c.k_h = 3;
  c.k_w = 3;
  c.stride_h = c.stride_w = 1;
  c.dil_h = c.dil_w = 1;
  c.pad_top = c.pad_left = 1;
  c.x_zp = 3;
  c.w_zp = 0;
  c.kind = TIDSP_REQUANT_FLOAT;
  c.per_channel = 1;
  c.with_bias = 1;
  c.gain = 1.0f;
  return c;
}

/* base_case with the columns every shape table starts with: c_in, c_out,
 * h_in, w_in, k_h, k_w. */
static conv_case table_case(const int32_t *v) {
  conv_case c = base_case();
  c.c_in = v[0];
  c.c_out = v[1];
  c.h_in = v[2];
  c.w_in = v[3];
  c.k_h = v[4];
  c.k_w = v[5];
  return c;
}

/* table_case of a 15-column row: then s_h, s_w, dil, pad_t, pad_l, extra_h,
 * extra_w, groups, n. */
static conv_case table15_case(const int32_t v[15]) {
  conv_case c = table_case(v);
  c.stride_h = v[6];
  c.stride_w = v[7];
  c.dil_h = c.dil_w = v[8];
  c.pad_top = v[9];
  c.pad_left = v[10];
  c.extra_h = v[11];
  c.extra_w = v[12];
  c.groups = v[13];
  c.n = v[14];
  return c;
}

/* base_case with the geometry the newer tables give per row (dilation 1). */
static conv_case geometry_case(int32_t c_in, int32_t c_out, int32_t h_in, int32_t w_in, int32_t k_h,
                               int32_t k_w, int32_t stride, int32_t pad) {
  conv_case c = base_case();
  c.c_in = c_in;
  c.c_out = c_out;
  c.h_in = h_in;
  c.w_in = w_in;
  c.k_h = k_h;
  c.k_w = k_w;
  c.stride_h = c.stride_w = stride;
  c.pad_top = c.pad_left = pad;
  return c;
}

/* Output channels around MR (4, 6) and the 128-channel block. */
static void test_conv_channels(void) {
  static const int32_t c_outs[] = {1, 3, 4, 5, 6, 7, 11, 12, 13, 127, 128, 129, 257};
  size_t i;
  for (i = 0; i < sizeof(c_outs) / sizeof(c_outs[0]); i++) {
    conv_case c = base_case();
    c.c_out = c_outs[i];
    c.h_in = 5;
    c.w_in = 6;
    run_conv_case(&c);
  }
  {
    conv_case c = base_case();
    c.odd_mult = 1;
    c.c_out = 6;
    run_conv_case(&c);
  }
}

/* Output pixels around the 16- and 64-lane blocks, in one row and in
 * several rows per block. */
static void test_conv_pixels(void) {
  static const int32_t widths[] = {1, 2, 7, 15, 16, 17, 31, 32, 33, 63, 64, 65, 130};
  size_t i;
  for (i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
    conv_case c = base_case();
    c.w_in = widths[i];
    c.h_in = rnd_range(1, 7);
    c.c_out = 7;
    run_conv_case(&c);
    c.k_h = c.k_w = 1;
    c.pad_top = c.pad_left = 0;
    run_conv_case(&c);
  }
}

/* Reduction lengths around the 2/4-tap groups and the 512/1024-tap chunks. */
static void test_conv_reduction(void) {
  static const int32_t taps[] = {1, 2, 3, 4, 5, 511, 512, 513, 1023, 1024, 1025, 2049};
  size_t i;
  for (i = 0; i < sizeof(taps) / sizeof(taps[0]); i++) {
    conv_case c = base_case();
    c.k_h = c.k_w = 1;
    c.pad_top = c.pad_left = 0;
    c.c_in = taps[i];
    c.c_out = 9;
    c.h_in = 3;
    c.w_in = 5;
    c.w_zp = (int32_t)(i % 3) - 1;
    run_conv_case(&c);
  }
  { /* 3×3 taps around a chunk: 113·9 = 1017, 114·9 = 1026 */
    conv_case c = base_case();
    c.c_in = 114;
    c.c_out = 13;
    c.h_in = c.w_in = 6;
    c.w_zp = 5;
    run_conv_case(&c);
    c.c_in = 113;
    run_conv_case(&c);
    c.c_out = 130; /* chunks × accumulator blocks */
    c.c_in = 120;
    run_conv_case(&c);
  }
}

/* Groups, strides, pads, dilations, zero points, saturation, both kinds. */
static void test_conv_random(void) {
  int t;
  for (t = 0; t < 300; t++) {
    conv_case c = base_case();
    const int32_t shape = rnd_range(0, 2);
    int32_t cpg_in = rnd_range(1, 9), cpg_out = rnd_range(1, 9);
    c.groups = rnd_range(1, 3);
    if (shape == 1) { /* depthwise */
      cpg_in = 1;
      cpg_out = rnd_range(1, 2);
      c.groups = rnd_range(1, 20);
    }
    c.n = rnd_range(1, 2);
    c.c_in = cpg_in * c.groups;
    c.c_out = cpg_out * c.groups;
    c.k_h = rnd_range(1, 5);
    c.k_w = rnd_range(1, 5);
    c.stride_h = rnd_range(1, 3);
    c.stride_w = rnd_range(1, 3);
    c.dil_h = rnd_range(1, 2);
    c.dil_w = rnd_range(1, 2);
    c.pad_top = rnd_range(0, 3);
    c.pad_left = rnd_range(0, 3);
    c.h_in = rnd_range(1, 20);
    c.w_in = rnd_range(1, 40);
    if (out_dim(c.h_in, c.k_h, c.stride_h, c.dil_h, c.pad_top) < 1 ||
        out_dim(c.w_in, c.k_w, c.stride_w, c.dil_w, c.pad_left) < 1) {
      c.pad_top = c.pad_left = 0;
      c.k_h = c.k_w = 1;
    }
    c.extra_h = rnd() % 5 == 0;
    c.extra_w = rnd() % 5 == 0;
    c.x_zp = rnd() % 4 == 0 ? -128 : rnd_range(-128, 127);
    c.w_zp = rnd() % 2 ? 0 : rnd_range(-128, 127);
    c.kind = rnd() % 4 == 0 ? TIDSP_REQUANT_Q31 : TIDSP_REQUANT_FLOAT;
    c.per_channel = (int32_t)(rnd() % 2);
    c.with_bias = rnd() % 4 != 0;
    c.big_bias = rnd() % 5 == 0;
    c.gain = rnd() % 6 == 0 ? 50.0f : 1.0f;
    run_conv_case(&c);
  }
}

/* The spec's layer shape, smaller: 64→64 3×3, stride 1 and 2. */
static void test_conv_resnet_like(void) {
  conv_case c = base_case();
  c.c_in = c.c_out = 64;
  c.h_in = c.w_in = 14;
  c.x_zp = -128;
  run_conv_case(&c);
  c.stride_h = c.stride_w = 2;
  c.c_out = 128;
  run_conv_case(&c);
}

/* Deep layers, whose blocks chunk the reduction (the AVX2 variant keeps a
 * bounded buffer of input channel pairs, and its partial sums for a bounded
 * block of output channels): several chunks × several channel blocks, at
 * stride 1 and 2, 3×3 and 1×1, an odd channel count (the last channel has
 * no partner), both zero points and both requantization kinds. */
static void test_conv_deep(void) {
  static const int32_t shapes[][6] = {
      /* c_in, c_out, h_w, k, stride, groups */
      {256, 200, 14, 3, 1, 1}, {511, 70, 7, 3, 1, 1}, {256, 130, 14, 3, 2, 1},
      {256, 190, 28, 1, 2, 1}, {3, 64, 40, 7, 2, 1},  {96, 40, 12, 3, 1, 2},
  };
  size_t i;
  for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    conv_case c = base_case();
    c.c_in = shapes[i][0];
    c.c_out = shapes[i][1];
    c.h_in = c.w_in = shapes[i][2];
    c.k_h = c.k_w = shapes[i][3];
    c.pad_top = c.pad_left = shapes[i][3] / 2;
    c.stride_h = c.stride_w = shapes[i][4];
    c.groups = shapes[i][5];
    c.x_zp = (int32_t)i % 2 ? -128 : 17;
    c.w_zp = (int32_t)i % 3 == 1 ? -3 : 0;
    run_conv_case(&c);
  }
}

/* The AVX-512 VNNI variant's paths (conv2d_i8__host_avx512vnni.c), run on
 * every variant: blocks of 64 flat output pixels that run across row ends
 * (widths that do and do not divide 64, a last block of a few lanes), the
 * 1×1 stride-1 convs that read the input plane directly (and the 1×1 ones
 * that cannot: padding, stride, h_out < h_in), stride-2 rows read as even
 * bytes (3×3 and the 7×7 / 3×3 stems with K = 147 / 27, odd widths,
 * padding at every edge, outputs past the input), the listed row loads'
 * limits (k_h·k_w·rows > 512 and k_h·k_w > 49 fall back to bytes; stride 3
 * and dilation), reductions of one chunk (requantized from the registers)
 * and of several unequal ones with more than 256 output channels (the
 * tile), both zero points and padded weight rows. */
static void test_vnni_paths(void) {
  static const int32_t shapes[][15] = {
      /* c_in, c_out, h_in, w_in, k_h, k_w, s_h, s_w, dil, pad_t, pad_l, extra_h, extra_w, groups, n */
      {16, 24, 9, 9, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1},      /* contiguous 1×1: 64 + 17 */
      {20, 13, 56, 56, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 2},    /* 3136 = 49 blocks, batch 2 */
      {32, 7, 8, 8, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1},       /* exactly one block */
      {12, 9, 10, 7, 1, 1, 1, 1, 1, 0, 0, -3, 0, 1, 1},     /* h_out < h_in */
      {12, 9, 7, 7, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1},       /* 1×1 with padding */
      {40, 30, 15, 15, 1, 1, 2, 2, 1, 0, 0, 0, 0, 1, 1},    /* 1×1 stride 2 */
      {8, 19, 14, 14, 3, 3, 1, 1, 1, 1, 1, 0, 0, 1, 1},     /* 196 = 3 blocks + 4 */
      {10, 8, 13, 13, 3, 3, 1, 1, 1, 1, 1, 0, 0, 1, 1},
      {6, 8, 5, 65, 3, 3, 1, 1, 1, 1, 1, 0, 0, 1, 1},       /* rows wider than a block */
      {3, 64, 64, 64, 7, 7, 2, 2, 1, 3, 3, 0, 0, 1, 1},     /* ResNet stem, K = 147 */
      {3, 32, 33, 33, 3, 3, 2, 2, 1, 1, 1, 0, 0, 1, 1},     /* MobileNet stem, K = 27 */
      {5, 11, 29, 31, 3, 3, 2, 2, 1, 0, 0, 0, 0, 1, 1},     /* stride 2, odd, no padding */
      {5, 11, 17, 21, 3, 3, 2, 2, 1, 2, 3, 2, 3, 1, 1},     /* padding at every edge */
      {4, 6, 20, 130, 3, 5, 2, 2, 1, 1, 2, 0, 1, 1, 1},     /* stride 2 rows > 64 */
      {4, 6, 19, 23, 3, 3, 2, 2, 2, 2, 2, 1, 0, 1, 1},      /* stride 2, dilation 2 */
      {4, 6, 19, 23, 3, 3, 1, 2, 1, 1, 1, 0, 0, 1, 1},      /* strides 1 and 2 */
      {4, 6, 19, 23, 3, 3, 2, 1, 1, 1, 1, 0, 0, 1, 1},      /* strides 2 and 1 */
      {6, 5, 70, 1, 3, 3, 1, 1, 1, 1, 1, 0, 0, 1, 1},       /* 64 rows of 1: bytes */
      {6, 5, 70, 2, 3, 3, 1, 1, 1, 1, 1, 0, 0, 1, 1},       /* 32 rows of 2 */
      {2, 5, 12, 12, 8, 8, 1, 1, 1, 3, 4, 0, 0, 1, 1},      /* 64 taps > 49: bytes */
      {4, 6, 19, 23, 3, 3, 3, 3, 1, 1, 1, 0, 0, 1, 1},      /* stride 3: bytes */
      {200, 9, 6, 6, 2, 2, 1, 1, 1, 0, 0, 0, 0, 1, 1},      /* K = 800: chunks 400 + 400 */
      {171, 300, 5, 6, 3, 3, 1, 1, 1, 1, 1, 0, 0, 1, 1},    /* K = 1539, 300 channels */
      {86, 14, 9, 9, 3, 3, 2, 2, 1, 1, 1, 0, 0, 2, 1},      /* groups, K = 387 */
  };
  size_t i;
  for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    const int32_t *v = shapes[i];
    conv_case c = table15_case(v);
    c.x_zp = (int32_t)i % 3 == 0 ? -128 : rnd_range(-128, 127);
    c.w_zp = 0;
    run_conv_case(&c);
    c.w_zp = rnd_range(-128, 127) | 1; /* nonzero: the Σu correction */
    c.w_row_pad = (int32_t)i % 4 + 1;
    c.w_poison = 0x55;
    run_conv_case(&c);
  }
}

/* The AVX-512 VNNI phase path (conv_phase: stride 2, at most 4 input
 * channels per group, the input split once per band of output rows into
 * its 2 × 2 stride phases, one unmasked load per tap and block), run on
 * every variant: the 7×7 and 3×3 stems over several bands (a partial last
 * block per band, bands of unequal height), 1..4 input channels and 5 (not
 * taken: conv_fast), even and 1-wide kernels (no or one column of reach),
 * padding at every edge and outputs past the input (grid rows and columns
 * that read the zero point), grids narrower than a vector and outputs of
 * one row, groups and batch, both zero points (Σu), padded weight rows
 * (and, where the shape fits O16, the same weights packed O16, which the
 * channels-in-lanes path takes); a row too wide for its row buffer and a
 * band whose grid rows do not fit take conv_fast. */
static void test_vnni_phase(void) {
  static const int32_t shapes[][15] = {
      /* c_in, c_out, h_in, w_in, k_h, k_w, s_h, s_w, dil, pad_t, pad_l, extra_h, extra_w, groups, n */
      {3, 64, 100, 224, 7, 7, 2, 2, 1, 3, 3, 0, 0, 1, 1}, /* ResNet stem: 2 bands */
      {3, 32, 150, 150, 3, 3, 2, 2, 1, 1, 1, 0, 0, 1, 1}, /* MobileNet stem: 2 bands */
      {1, 7, 33, 35, 3, 3, 2, 2, 1, 1, 1, 0, 0, 1, 1},
      {2, 13, 31, 29, 5, 5, 2, 2, 1, 2, 2, 0, 0, 1, 1},
      {4, 19, 23, 41, 2, 2, 2, 2, 1, 0, 0, 0, 0, 1, 1},  /* even kernel, no padding */
      {4, 32, 23, 41, 3, 3, 2, 2, 1, 1, 1, 0, 0, 1, 1},  /* OIHW here; its O16 run: conv_cl */
      {5, 9, 23, 41, 3, 3, 2, 2, 1, 1, 1, 0, 0, 1, 1},   /* 5 channels: conv_fast */
      {3, 6, 21, 19, 1, 1, 2, 2, 1, 0, 0, 0, 0, 1, 1},   /* 1×1: no reach */
      {3, 8, 17, 21, 3, 7, 2, 2, 1, 2, 4, 2, 3, 1, 1},   /* padding at every edge, past the input */
      {3, 6, 9, 5, 3, 3, 2, 2, 1, 1, 1, 0, 0, 1, 1},     /* 3-wide grid rows */
      {3, 6, 2, 90, 3, 3, 2, 2, 1, 1, 1, 0, 0, 1, 1},    /* one output row */
      {6, 10, 19, 23, 3, 3, 2, 2, 1, 1, 1, 0, 0, 2, 2},  /* groups of 3, batch 2 */
      {1, 4, 3, 4000, 3, 3, 2, 2, 1, 1, 1, 0, 0, 1, 1},  /* row buffer too small: conv_fast */
      {4, 6, 9, 3000, 5, 5, 2, 2, 1, 2, 2, 0, 0, 1, 1},  /* one row's grid > 64 KiB: conv_fast */
  };
  size_t i;
  for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    const int32_t *v = shapes[i];
    conv_case c = table15_case(v);
    c.x_zp = (int32_t)i % 3 == 0 ? -128 : rnd_range(-128, 127);
    c.w_zp = 0;
    run_conv_case(&c);
    c.w_zp = rnd_range(-128, 127) | 1; /* nonzero: the Σu correction */
    c.x_zp = 127;
    c.w_row_pad = (int32_t)i % 4 + 1;
    c.w_poison = 0x55;
    run_conv_case(&c);
  }
}

/* Multipliers around 1 (the VNNI kernel's int16 epilogue takes the
 * channels with |m| < 1, the float clamp the others: gains that put the
 * channels' multipliers on both sides), with biases that push the
 * accumulators to ±2³¹ (acc·m past the int32 range) and without, on each
 * VNNI path: conv_fast (a contiguous 1×1 and a stride-2 3×3), the band
 * path and the phase path (rq_pack), and the channels-in-lanes path
 * (cl_rq64 / cl_rq16); out_zp, fused Relu and narrowed ranges and
 * SCALE_SHIFT as make_rq draws them. */
static void test_vnni_rq_range(void) {
  static const int32_t shapes[][6] = {
      /* c_in, c_out, h_w, k, stride, pad */
      {16, 24, 12, 1, 1, 0}, {8, 13, 15, 3, 2, 1}, {8, 16, 20, 3, 1, 1}, {3, 14, 30, 7, 2, 3},
      /* O16 (cl_rq64 on panels of 64 channels; 80: a panel of 16 after
       * one of 64), and an OIHW 1×1 on 7² (the same path, packed per call) */
      {16, 64, 9, 3, 1, 1}, {8, 80, 7, 3, 2, 1}, {32, 128, 7, 1, 1, 0},
  };
  static const float gains[] = {0.5f, 150.0f, 400.0f, 3000.0f};
  size_t i, j;
  for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    for (j = 0; j < sizeof(gains) / sizeof(gains[0]); j++) {
      const int32_t *v = shapes[i];
      conv_case c = geometry_case(v[0], v[1], v[3] == 1 ? v[2] : v[2], v[2], v[3], v[3], v[4], v[5]);
      c.gain = gains[j] * (float)sqrt((double)(v[0] * v[3] * v[3]));
      c.big_bias = (int32_t)j % 2;
      c.x_zp = rnd_range(-128, 127);
      run_conv_case(&c);
      c.big_bias = !c.big_bias;
      c.w_zp = 1 + (int32_t)j;
      run_conv_case(&c);
    }
  }
}

/* The AVX-512 VNNI band path (implicit GEMM on the padded slot grid: input
 * channels a multiple of 4, stride 1, k_h·k_w in 2..16, w_zp 0, and few
 * enough output channels that the wider grid pays), run on every variant:
 * kernels 2×2 .. 4×4 and 3×5 / 3×1 / 1×3, dilation (grid columns past
 * w_out up to 6), padding at every edge and outputs past the input (rows
 * and columns read the zero point), groups and batches, several bands
 * (rows × channels over the 64 KiB band) with a partial last block,
 * channel groups whose reordered rows refill the weight buffer (K = 8136),
 * grids wider than a block, the widest tap reach that the band's slack
 * allows (and one past it), both requantizations (run_conv_case) and
 * padded weight rows; the w_zp ≠ 0 runs take conv_fast. */
static void test_vnni_band(void) {
  static const int32_t shapes[][14] = {
      /* c_in, c_out, h_in, w_in, k_h, k_w, dil_h, dil_w, pad_t, pad_l, extra_h, extra_w, groups, n */
      {8, 8, 9, 9, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1},
      {4, 7, 30, 30, 4, 4, 1, 1, 2, 1, 0, 0, 1, 1},
      {12, 13, 17, 23, 3, 5, 1, 1, 1, 2, 0, 0, 1, 1},
      {8, 9, 20, 20, 3, 3, 2, 2, 2, 2, 0, 0, 1, 1},
      {8, 5, 15, 19, 3, 3, 1, 3, 0, 3, 0, 0, 1, 1},
      {16, 6, 11, 13, 1, 3, 1, 1, 0, 1, 2, 3, 1, 1},
      {16, 10, 12, 12, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1},
      {4, 11, 13, 70, 2, 2, 1, 1, 0, 0, 0, 0, 1, 1},
      {16, 12, 10, 10, 3, 3, 1, 1, 1, 1, 0, 0, 2, 2},
      {256, 7, 40, 40, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1},
      {904, 13, 5, 5, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1},
      {64, 20, 56, 56, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1},
      {12, 6, 3, 200, 3, 3, 1, 1, 1, 1, 0, 0, 3, 1},
      {4, 5, 6, 110, 1, 3, 1, 24, 0, 24, 0, 0, 1, 1}, /* reads 64 past the band */
      {4, 5, 6, 110, 1, 3, 1, 25, 0, 25, 0, 0, 1, 1}, /* 65: conv_fast */
  };
  size_t i;
  for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    const int32_t *v = shapes[i];
    conv_case c = table_case(v);
    c.dil_h = v[6];
    c.dil_w = v[7];
    c.pad_top = v[8];
    c.pad_left = v[9];
    c.extra_h = v[10];
    c.extra_w = v[11];
    c.groups = v[12];
    c.n = v[13];
    c.x_zp = (int32_t)i % 3 == 0 ? -128 : rnd_range(-128, 127);
    c.w_zp = 0;
    run_conv_case(&c);
    c.w_row_pad = (int32_t)i % 4 + 1;
    c.w_poison = 0x55;
    run_conv_case(&c);
    c.w_zp = rnd_range(-128, 127) | 1;
    run_conv_case(&c);
  }
}

/* OIHW 1×1 convs on small maps, which the AVX-512 VNNI kernel runs on its
 * channels-in-lanes path with the weights put in O16 order per call: K
 * with a tail of quads (36, 100), at the buffer's limit (1024) and past it
 * (1028: conv_fast), 64 outputs and 81 (conv_fast), stride 2, pads, panels
 * of 3 and 2 vectors, groups and batch; each with dense and padded rows
 * (poison in the padding) and with w_zp ≠ 0 (conv_fast's). */
static void test_vnni_1x1_oihw(void) {
  static const int32_t shapes[][8] = {
      /* c_in, c_out, h_in, w_in, stride, pad, groups, n */
      {36, 48, 7, 7, 1, 0, 1, 1},     {100, 64, 8, 8, 1, 0, 1, 1},  {1024, 16, 7, 7, 1, 0, 1, 1},
      {1028, 16, 7, 7, 1, 0, 1, 1},   {64, 32, 9, 9, 1, 0, 1, 1},   {512, 96, 14, 14, 2, 0, 1, 1},
      {64, 64, 5, 5, 1, 0, 2, 2},     {16, 160, 5, 5, 1, 1, 1, 1},  {8, 16, 1, 1, 1, 0, 1, 1},
  };
  size_t i;
  for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    const int32_t *v = shapes[i];
    conv_case c = geometry_case(v[0], v[1], v[2], v[3], 1, 1, v[4], v[5]);
    c.groups = v[6];
    c.n = v[7];
    c.x_zp = (int32_t)i % 3 == 0 ? -128 : rnd_range(-128, 127);
    c.per_channel = (int32_t)i % 4 != 3;
    c.w_zp = 0;
    run_conv_case(&c);
    c.w_row_pad = (int32_t)i % 4 + 1;
    c.w_poison = 0x55;
    run_conv_case(&c);
    c.w_zp = rnd_range(-128, 127) | 1;
    run_conv_case(&c);
  }
}

/* The O16 layout (kernels.h), which run_conv_case also gives every case it
 * fits: the AVX-512 VNNI channels-in-lanes path at its edges: pixel
 * counts 1..13 and 49 (its balanced groups of at most 6), output channel
 * panels of 1..5 vectors of 16, ResNet-18's layer4 (3×3 512→512 at 7²,
 * 3×3 and 1×1 stride 2 from 14²), groups and batch, dilation, stride 3,
 * pads wider than the kernel, x_zp at −128, a padded grid just within and
 * past its stack limit (TIDSP_CONV_O16_MAX_GRID: output rows in bands; the
 * reference's when one row's grid does not fit),
 * 1×1 convs' sampled grids (flat planes, strides 2 and 3, pads, runs past
 * 64 columns), and w_zp ≠ 0 (the reference's). Then the layout's invalid arguments. */
static void test_vnni_o16(void) {
  static const int32_t shapes[][16] = {
      /* c_in, c_out, h_in, w_in, k_h, k_w, stride, dil, pad_t, pad_l, extra_h, extra_w, groups, n, h_out_target(0), unused */
      {4, 16, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0},
      {8, 32, 3, 3, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0},
      {12, 48, 2, 5, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0},
      {16, 64, 1, 7, 1, 3, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0},
      {20, 80, 13, 1, 3, 1, 1, 1, 1, 0, 0, 0, 1, 1, 0, 0},
      {8, 16, 4, 3, 2, 2, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0},
      {64, 64, 7, 7, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0},
      {512, 512, 7, 7, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0},
      {256, 512, 14, 14, 3, 3, 2, 1, 1, 1, 0, 0, 1, 1, 0, 0},
      {256, 512, 14, 14, 1, 1, 2, 1, 0, 0, 0, 0, 1, 1, 0, 0},
      {32, 64, 9, 9, 3, 3, 1, 2, 2, 2, 0, 0, 2, 2, 0, 0},
      {16, 32, 11, 10, 3, 3, 3, 1, 4, 4, 1, 2, 1, 1, 0, 0},
      {64, 16, 31, 31, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0}, /* 33·33·64 > 64 KiB: 2 bands */
      {64, 16, 30, 30, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0}, /* 32·32·64 = 64 KiB: one */
      {64, 32, 56, 56, 3, 3, 2, 1, 1, 1, 0, 0, 1, 1, 0, 0}, /* stride 2 from 56²: 3 bands */
      {64, 16, 40, 40, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0}, /* flat 1×1 in bands */
      {192, 32, 90, 90, 1, 1, 2, 1, 1, 1, 0, 0, 2, 1, 0, 0}, /* sampled 1×1 in bands */
      {1024, 16, 30, 30, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0}, /* one row's grid > 64 KiB */
      {1024, 32, 4, 4, 5, 5, 1, 1, 2, 2, 0, 0, 1, 1, 0, 0},
      /* 1×1 (the grid holds only the pixels read): flat planes of 144
       * pixels (3 runs of 64) and 36 channels (16 + 16 + 4); stride 2 over
       * 75 output columns (two runs); stride 3 with pads (byte by byte);
       * 2 groups × 2 images; a sampled grid that fits where the padded one
       * would not (27·27·128 > 64 KiB ≥ 14·14·128) */
      {36, 48, 12, 12, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0},
      {20, 32, 3, 150, 1, 1, 2, 1, 1, 1, 0, 0, 1, 1, 0, 0},
      {8, 16, 5, 40, 1, 1, 3, 1, 2, 2, 1, 1, 1, 1, 0, 0},
      {32, 64, 6, 6, 1, 1, 1, 1, 0, 0, 0, 0, 2, 2, 0, 0},
      {128, 32, 28, 28, 1, 1, 2, 1, 0, 0, 0, 0, 1, 1, 0, 0},
      /* a padded grid of 72 columns (two runs), 12 channels */
      {12, 16, 4, 70, 3, 3, 1, 1, 1, 1, 0, 0, 1, 1, 0, 0},
  };
  size_t i;
  for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    const int32_t *v = shapes[i];
    conv_case c = table_case(v);
    c.stride_h = c.stride_w = v[6];
    c.dil_h = c.dil_w = v[7];
    c.pad_top = v[8];
    c.pad_left = v[9];
    c.extra_h = v[10];
    c.extra_w = v[11];
    c.groups = v[12];
    c.n = v[13];
    c.x_zp = (int32_t)i % 3 == 0 ? -128 : rnd_range(-128, 127);
    c.per_channel = (int32_t)i % 5 != 4;
    c.big_bias = (int32_t)i % 4 == 1;
    run_conv_case(&c);
    if (i % 4 == 2) {
      c.w_zp = rnd_range(-128, 127) | 1;
      run_conv_case(&c);
    }
  }
  {
    /* invalid: O16 where it does not fit, with a row stride, or a layout
     * that does not exist: every variant answers as the reference */
    int8_t x[4 * 9] = {0}, w[2 * (16 * 4 * 9 + 64)] = {0}, y[32 * 9]; /* 2 O16 blocks */
    float m[32];
    tidsp_conv2d_params good, p;
    int32_t k, vv;
    for (k = 0; k < 32; k++)
      m[k] = 0.01f;
    memset(&good, 0, sizeof(good));
    good.n = 1;
    good.c_in = 4;
    good.h_in = good.w_in = 3;
    good.c_out = 32;
    good.h_out = good.w_out = 3;
    good.k_h = good.k_w = 3;
    good.stride_h = good.stride_w = good.dil_h = good.dil_w = 1;
    good.pad_top = good.pad_left = 1;
    good.groups = 1;
    good.rq.kind = TIDSP_REQUANT_FLOAT;
    good.rq.per_channel = 1;
    good.rq.out_min = -128;
    good.rq.out_max = 127;
    good.w_layout = TIDSP_CONV_W_O16;
    for (k = 0; k < 6; k++) {
      int32_t st_ref;
      p = good;
      switch (k) {
      case 0: break; /* valid */
      case 1: p.c_out = 24; break;
      case 2: p.c_in = 2; p.groups = 1; break;
      case 3: p.w_row_stride = 36; break;
      case 4: p.w_layout = 2; break;
      case 5: p.w_layout = -1; break;
      }
      st_ref = tidsp_conv2d_i8__ref(&p, x, w, NULL, m, y);
      CHECK_MSG(st_ref == (k == 0 ? TIDSP_OK : TIDSP_ERR_PARAM), "ref O16 case %d: status %d",
                (int)k, (int)st_ref);
      for (vv = 0; vv < tidsp_kernel_variant_count; vv++) {
        const tidsp_kernel_variant *kv = &tidsp_kernel_variants[vv];
        if (kv->supported())
          CHECK_MSG(kv->conv2d_i8(&p, x, w, NULL, m, y) == st_ref, "%s O16 case %d", kv->name,
                    (int)k);
      }
    }
  }
}

/* The AVX2 kernel's O16 path (it reads O16 in the layout's own order,
 * (tap, quad) steps, 8 output channels per 8×8 transpose, such 8-channel
 * units kept in a ring of two; run on every variant): step counts of a
 * chunk below 8 (1×1 with 1-3 quads), not a multiple of 8 (the last 8
 * steps redone), a reduction in chunks whose pair count is rounded up to
 * whole quads (cp = 130 and 116: 66 + 64 and 58 + 58 pairs) with a
 * smaller last chunk, and output channel counts whose 6-channel tiles
 * straddle the 8-channel units and 16-channel blocks (48, 80, 112) or end
 * inside one (32). */
static void test_avx2_o16(void) {
  static const int32_t shapes[][8] = {
      /* c_in, c_out, h_in, w_in, k_h, k_w, stride, pad */
      {4, 32, 3, 5, 1, 1, 1, 0},    {8, 48, 4, 4, 1, 1, 1, 0},    {12, 16, 6, 5, 1, 1, 2, 0},
      {36, 32, 6, 6, 1, 3, 1, 1},   {20, 80, 5, 9, 3, 3, 1, 1},   {260, 32, 5, 5, 3, 3, 1, 1},
      {232, 112, 6, 6, 3, 3, 2, 1}, {96, 48, 7, 7, 5, 5, 1, 2},   {260, 16, 3, 3, 1, 1, 1, 0},
  };
  size_t i;
  for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    const int32_t *v = shapes[i];
    conv_case c = geometry_case(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]);
    c.x_zp = (int32_t)i % 2 ? -128 : rnd_range(-128, 127);
    c.per_channel = (int32_t)i % 3 != 2;
    run_conv_case(&c);
  }
}

/* ---- the AMX variant's edges (run on every variant) ---------------------- */

/* 1 when the host_amx row runs here; else says once why its cases only
 * test the other variants. */
static int amx_here(void) {
  static int said;
  int32_t v;
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    if (strcmp(tidsp_kernel_variants[v].name, "host_amx") == 0 &&
        tidsp_kernel_variants[v].supported())
      return 1;
  }
  if (!said)
    printf("host_amx: skipped, this CPU/OS has no AMX-INT8 tiles for us "
           "(its cases still run on the other variants)\n");
  said = 1;
  return 0;
}

/* Pads rows to the next multiple of 64 bytes (what the compiler does for
 * the host), or by `odd` bytes when that is 0, with a poison byte. */
static void pad_like_compiler(conv_case *c, int32_t taps, int32_t odd, int32_t poison) {
  c->w_row_pad = taps % 64 ? 64 - taps % 64 : odd;
  c->w_poison = poison;
}

/* Reduction lengths around the 64-tap steps and 1024-tap chunks (1×1), and
 * the K of common k×k layers (3×3×3 = 27, 7×7×3 = 147, …). */
static void test_amx_reduction(void) {
  static const int32_t ks[] = {1, 2, 3, 4, 5, 7, 8, 12, 60, 61, 62, 63, 64, 65, 66,
                               67, 68, 127, 128, 129, 130, 191, 192, 193, 1023,
                               1024, 1025, 1087, 1088, 1089, 2048, 2049, 3001};
  static const int32_t kk[][3] = {{1, 3, 1}, {3, 3, 1}, {7, 3, 1}, {8, 3, 1},
                                  {14, 3, 2}, {15, 3, 1}, {1, 5, 1}, {2, 5, 2},
                                  {3, 5, 1}, {3, 7, 2}, {4, 7, 1}}; /* c_in, k, s */
  size_t i;
  (void)amx_here();
  for (i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
    conv_case c = base_case();
    c.k_h = c.k_w = 1;
    c.pad_top = c.pad_left = 0;
    c.c_in = ks[i];
    c.c_out = i % 2 ? 17 : 33;
    c.h_in = 3;
    c.w_in = i % 3 ? 5 : 21;
    c.x_zp = rnd_range(-128, 127);
    c.w_zp = i % 3 == 1 ? 0 : rnd_range(-128, 127);
    if (i % 2)
      pad_like_compiler(&c, ks[i], 64, 0x7F);
    run_conv_case(&c);
  }
  for (i = 0; i < sizeof(kk) / sizeof(kk[0]); i++) {
    conv_case c = base_case();
    c.c_in = kk[i][0];
    c.k_h = c.k_w = kk[i][1];
    c.stride_h = c.stride_w = kk[i][2];
    c.pad_top = c.pad_left = kk[i][1] / 2;
    c.c_out = i % 2 ? 16 : 24;
    c.h_in = 7;
    c.w_in = 9 + (int32_t)i;
    c.w_zp = i % 2 ? 0 : -3;
    if (i % 3 == 0)
      pad_like_compiler(&c, c.c_in * c.k_h * c.k_w, 5, -128);
    run_conv_case(&c);
  }
}

/* Output channels around the 16-row tiles (shifted last tile, fewer than
 * 16) and the 128-row blocks, with K < 64 (copied A rows when 4 ∤ K),
 * K = 64 and a K tail; and more channels than the per-call constants. */
static void test_amx_channels(void) {
  static const int32_t c_outs[] = {1, 2, 3, 15, 16, 17, 31, 32, 33, 47, 48, 63,
                                   64, 65, 127, 128, 129, 143, 144, 145, 160, 257};
  static const int32_t c_ins[] = {3, 4, 10}; /* 3×3: K = 27, 36, 90 */
  size_t i, j;
  for (i = 0; i < sizeof(c_outs) / sizeof(c_outs[0]); i++) {
    for (j = 0; j < sizeof(c_ins) / sizeof(c_ins[0]); j++) {
      conv_case c = base_case();
      c.c_in = c_ins[j];
      c.c_out = c_outs[i];
      c.h_in = 3;
      c.w_in = j == 1 ? 4 : 9;
      c.w_zp = j == 2 ? 7 : 0;
      c.per_channel = (int32_t)((i + j) % 2);
      if (i % 4 == 0)
        pad_like_compiler(&c, c.c_in * 9, 3, 0x55);
      run_conv_case(&c);
    }
  }
  { /* channels past TIDSP_AMX_CMAX (2048) */
    conv_case c = base_case();
    c.k_h = c.k_w = 1;
    c.pad_top = c.pad_left = 0;
    c.c_in = 5;
    c.c_out = 2050;
    c.h_in = 1;
    c.w_in = 3;
    c.w_zp = 2;
    run_conv_case(&c);
    c.k_h = c.k_w = 3; /* K = 45: copied rows, per block */
    c.pad_top = c.pad_left = 1;
    c.c_out = 2100;
    c.h_in = c.w_in = 2;
    run_conv_case(&c);
    c.c_in = 8; /* K = 72: a tail step */
    c.c_out = 2065;
    c.w_zp = 0;
    run_conv_case(&c);
  }
}

/* Kernel sizes 1/3/5/7, strides 1/2 (the fast gathers, with one or several
 * output rows per block) and 3 (the generic gather), dilation, output
 * widths around the 16-pixel tiles and 64-pixel blocks, a kernel wider
 * than the per-block column geometry, and groups. */
static void test_amx_geometry(void) {
  static const int32_t widths[] = {5, 13, 16, 17, 31, 33, 64, 65, 70, 129, 131};
  static const int32_t ksz[] = {1, 3, 5, 7};
  size_t i, j;
  int t;
  for (i = 0; i < sizeof(widths) / sizeof(widths[0]); i++) {
    for (j = 0; j < sizeof(ksz) / sizeof(ksz[0]); j++) {
      conv_case c = base_case();
      c.k_h = c.k_w = ksz[j];
      c.stride_h = c.stride_w = (int32_t)(1 + (i + j) % 3);
      c.dil_h = c.dil_w = (int32_t)(1 + (i * 3 + j) % 2);
      c.pad_top = c.pad_left = (int32_t)(ksz[j] / 2 * c.dil_h);
      c.c_in = (int32_t)(2 + j * 3);
      c.c_out = (int32_t)(12 + 5 * j);
      c.w_in = widths[i];
      c.h_in = (int32_t)(1 + i % 6);
      c.x_zp = rnd_range(-128, 127);
      c.w_zp = j % 2 ? 0 : rnd_range(-128, 127);
      if (out_dim(c.h_in, c.k_h, c.stride_h, c.dil_h, c.pad_top) < 1)
        c.h_in = c.dil_h * (c.k_h - 1) + 1;
      run_conv_case(&c);
    }
  }
  { /* wider than KW_MAX = 16 taps */
    conv_case c = base_case();
    c.k_h = 1;
    c.k_w = 17;
    c.pad_top = 0;
    c.pad_left = 8;
    c.w_in = 40;
    c.h_in = 3;
    run_conv_case(&c);
    c.stride_w = 2;
    run_conv_case(&c);
  }
  for (t = 0; t < 24; t++) { /* grouped, not depthwise */
    conv_case c = base_case();
    const int32_t cpg_in = (int32_t[]){3, 16, 20, 70}[t % 4];
    const int32_t cpg_out = (int32_t[]){1, 5, 16, 17, 40, 33}[t % 6];
    c.groups = 2 + t % 3;
    c.c_in = cpg_in * c.groups;
    c.c_out = cpg_out * c.groups;
    c.k_h = c.k_w = t % 2 ? 1 : 3;
    c.pad_top = c.pad_left = c.k_h / 2;
    c.stride_h = c.stride_w = 1 + t % 2;
    c.h_in = 5;
    c.w_in = 11;
    c.n = 1 + t % 2;
    c.w_zp = t % 3 ? 0 : 4;
    if (t % 5 == 0)
      pad_like_compiler(&c, cpg_in * c.k_h * c.k_w, 2, 0x7F);
    run_conv_case(&c);
  }
}

/* Invalid arguments: every variant answers like the reference. */
static void test_conv_errors(void) {
  conv_case cc = base_case();
  tidsp_conv2d_params good, p;
  int8_t x[2 * 9 * 9] = {0}, w[2 * 2 * 9] = {0}, y[2 * 9 * 9];
  float m[2] = {0.01f, 0.02f};
  int32_t q31[2] = {-1, 3};
  int32_t v, k;
  (void)cc;
  memset(&good, 0, sizeof(good));
  good.n = 1;
  good.c_in = 2;
  good.h_in = good.w_in = 9;
  good.c_out = 2;
  good.h_out = good.w_out = 9;
  good.k_h = good.k_w = 3;
  good.stride_h = good.stride_w = good.dil_h = good.dil_w = 1;
  good.pad_top = good.pad_left = 1;
  good.groups = 1;
  good.rq.kind = TIDSP_REQUANT_FLOAT;
  good.rq.per_channel = 1;
  good.rq.out_min = -128;
  good.rq.out_max = 127;
  for (k = 0; k < 15; k++) {
    const void *rqd = m;
    const int8_t *xp = x, *wp = w;
    int8_t *yp = y;
    int32_t st_ref;
    p = good;
    switch (k) {
    case 0: xp = NULL; break;
    case 1: rqd = NULL; break;
    case 2: p.groups = 3; break;
    case 3: p.x_zp = 128; break;
    case 4: p.w_zp = -129; break;
    case 5: p.rq.kind = 7; break;
    case 6: p.rq.out_min = 5; p.rq.out_max = 4; break;
    case 7: p.rq.out_max = 128; break;
    case 8: p.rq.kind = TIDSP_REQUANT_Q31; p.rq.per_channel = 0; rqd = q31; break;
    case 9: p.stride_h = 0; break;
    case 10: p.h_out = 0; break; /* nothing to do: OK */
    case 11: p.c_in = 40000; p.groups = 1; break; /* too many taps */
    case 12: p.w_row_stride = 2 * 9 - 1; break; /* shorter than a row */
    case 13: p.w_row_stride = -1; break;
    case 14: p.w_row_stride = 2 * 9; break; /* exactly a row: OK */
    }
    st_ref = tidsp_conv2d_i8__ref(&p, xp, wp, NULL, rqd, yp);
    if (k >= 12)
      CHECK_MSG(st_ref == (k == 14 ? TIDSP_OK : TIDSP_ERR_SHAPE),
                "ref w_row_stride case %d: status %d", (int)k, (int)st_ref);
    for (v = 0; v < tidsp_kernel_variant_count; v++) {
      const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
      if (!kv->supported())
        continue;
      CHECK_MSG(kv->conv2d_i8(&p, xp, wp, NULL, rqd, yp) == st_ref,
                "%s error case %d", kv->name, (int)k);
    }
    CHECK_MSG(tidsp_conv2d_i8(&p, xp, wp, NULL, rqd, yp) == st_ref,
              "dispatched error case %d", (int)k);
  }
}

/* Small planes with several output rows per 64-pixel block: strides 1/2
 * in each direction, dilation, pads wider than the kernel reach, outputs
 * narrower and wider than the input (the AMX gathers group block rows into
 * 128-byte windows, or take them as consecutive bytes). */
static void test_amx_windows(void) {
  int t;
  for (t = 0; t < 80; t++) {
    conv_case c = base_case();
    c.c_in = rnd_range(1, 6);
    c.c_out = rnd_range(1, 20);
    c.k_h = rnd_range(1, 5);
    c.k_w = rnd_range(1, 5);
    c.stride_h = rnd_range(1, 2);
    c.stride_w = rnd_range(1, 2);
    c.dil_h = rnd_range(1, 2);
    c.dil_w = rnd_range(1, 2);
    c.pad_top = rnd_range(0, 3);
    c.pad_left = rnd_range(0, 3);
    c.h_in = rnd_range(1, 16);
    c.w_in = rnd_range(1, 40);
    c.n = rnd_range(1, 2);
    if (out_dim(c.h_in, c.k_h, c.stride_h, c.dil_h, c.pad_top) < 1 ||
        out_dim(c.w_in, c.k_w, c.stride_w, c.dil_w, c.pad_left) < 1) {
      c.k_h = c.k_w = 1;
      c.pad_top = c.pad_left = rnd_range(0, 2);
    }
    c.extra_h = rnd() % 3 == 0;
    c.extra_w = rnd() % 3 == 0;
    c.x_zp = rnd_range(-128, 127);
    c.w_zp = t % 2 ? 0 : rnd_range(-128, 127);
    run_conv_case(&c);
  }
}

#if defined(__linux__)
/* n bytes that end (at_end) or start exactly at an inaccessible page: a
 * kernel that reads one byte past (or before) them faults. */
typedef struct fenced {
  uint8_t *map;
  size_t map_len;
  int8_t *data;
} fenced;

static fenced fence(const int8_t *src, size_t n, int at_end) {
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  const size_t body = (n + page - 1) / page * page;
  fenced f;
  f.map_len = body + 2 * page;
  f.map = mmap(NULL, f.map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (f.map == MAP_FAILED) {
    f.map = NULL;
    f.data = NULL;
    return f;
  }
  mprotect(f.map, page, PROT_NONE);
  mprotect(f.map + page + body, page, PROT_NONE);
  f.data = (int8_t *)(at_end ? f.map + page + body - n : f.map + page);
  memcpy(f.data, src, n);
  return f;
}

static void unfence(fenced *f) {
  if (f->map)
    munmap(f->map, f->map_len);
}

/* Every variant on inputs and weights fenced by inaccessible pages, on the
 * shapes whose tails the AMX kernels handle by copying or shifting: a read
 * outside the tensors would crash the test. */
static void test_fenced(void) {
  static const int32_t shapes[][8] = {
      /* c_in, c_out, k, stride, h, w, w_row_pad, groups */
      {3, 17, 3, 1, 5, 7, 0, 1},   /* K = 27 < 64, 4 ∤ K: copied A rows */
      {3, 33, 3, 2, 9, 11, 0, 1},  /* stride 2 windows */
      {1, 5, 1, 1, 4, 4, 0, 1},    /* K = 1 */
      {7, 19, 3, 1, 6, 9, 0, 1},   /* K = 63 */
      {15, 18, 3, 2, 7, 13, 5, 1}, /* K = 135: shifted last step, padded */
      {65, 20, 1, 1, 3, 70, 0, 1}, /* K = 65, two pixel blocks */
      {10, 34, 3, 1, 8, 8, 0, 2},  /* groups, 17 rows per group */
  };
  size_t i;
  int at_end;
  for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
    for (at_end = 0; at_end <= 1; at_end++) {
      tidsp_conv2d_params p;
      const int32_t *sh = shapes[i];
      const int32_t taps = sh[0] / sh[7] * sh[2] * sh[2];
      const int32_t stride = taps + sh[6];
      size_t nx, nw, ny;
      int8_t *x, *w, *y_ref, *y;
      fenced fx, fw;
      float *m;
      int32_t v, c;
      memset(&p, 0, sizeof(p));
      p.n = 1;
      p.c_in = sh[0];
      p.c_out = sh[1];
      p.groups = sh[7];
      p.k_h = p.k_w = sh[2];
      p.stride_h = p.stride_w = sh[3];
      p.dil_h = p.dil_w = 1;
      p.pad_top = p.pad_left = sh[2] / 2;
      p.h_in = sh[4];
      p.w_in = sh[5];
      p.h_out = out_dim(p.h_in, p.k_h, p.stride_h, 1, p.pad_top);
      p.w_out = out_dim(p.w_in, p.k_w, p.stride_w, 1, p.pad_left);
      p.x_zp = 5;
      p.w_zp = (int32_t)i % 2 ? 3 : 0;
      p.w_row_stride = sh[6] ? stride : 0;
      p.rq.kind = TIDSP_REQUANT_FLOAT;
      p.rq.per_channel = 1;
      p.rq.out_min = -128;
      p.rq.out_max = 127;
      nx = (size_t)p.c_in * p.h_in * p.w_in;
      nw = (size_t)(p.c_out - 1) * (size_t)stride + (size_t)taps;
      ny = (size_t)p.c_out * p.h_out * p.w_out;
      x = malloc(nx);
      w = malloc(nw);
      m = malloc(sizeof(float) * (size_t)p.c_out);
      fill_i8(x, nx);
      fill_i8(w, nw);
      for (c = 0; c < p.c_out; c++)
        m[c] = 0.002f;
      fx = fence(x, nx, at_end);
      fw = fence(w, nw, at_end);
      y_ref = guarded(ny);
      CHECK(fx.data && fw.data);
      CHECK(tidsp_conv2d_i8__ref(&p, x, w, NULL, m, y_ref) == TIDSP_OK);
      for (v = 0; v < tidsp_kernel_variant_count && fx.data && fw.data; v++) {
        const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
        if (!kv->supported())
          continue;
        y = guarded(ny);
        CHECK(kv->conv2d_i8(&p, fx.data, fw.data, NULL, m, y) == TIDSP_OK);
        CHECK_MSG(memcmp(y, y_ref, ny) == 0, "%s fenced conv case %d", kv->name, (int)i);
        guarded_free(y);
      }
      { /* the same weights as a matrix multiply: X = the first rows of x */
        tidsp_matmul_params mp;
        const int32_t mm_m = (int32_t)(nx / (size_t)taps) < 40 ? (int32_t)(nx / (size_t)taps) : 40;
        int8_t *my_ref = guarded((size_t)mm_m * p.c_out), *my;
        fenced fmx = fence(x, (size_t)mm_m * taps, at_end);
        memset(&mp, 0, sizeof(mp));
        mp.m = mm_m;
        mp.k = taps;
        mp.n = p.c_out;
        mp.x_zp = p.x_zp;
        mp.w_zp = p.w_zp;
        mp.rq = p.rq;
        mp.w_row_stride = p.w_row_stride;
        CHECK(tidsp_matmul_i8__ref(&mp, x, w, NULL, m, my_ref) == TIDSP_OK);
        for (v = 0; v < tidsp_kernel_variant_count && fmx.data && fw.data; v++) {
          const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
          if (!kv->supported())
            continue;
          my = guarded((size_t)mm_m * p.c_out);
          CHECK(kv->matmul_i8(&mp, fmx.data, fw.data, NULL, m, my) == TIDSP_OK);
          CHECK_MSG(memcmp(my, my_ref, (size_t)mm_m * p.c_out) == 0, "%s fenced matmul case %d",
                    kv->name, (int)i);
          guarded_free(my);
        }
        unfence(&fmx);
        guarded_free(my_ref);
      }
      unfence(&fx);
      unfence(&fw);
      guarded_free(y_ref);
      free(x);
      free(w);
      free(m);
    }
  }
}
#else
static void test_fenced(void) {
  printf("fenced tests: skipped (no mmap on this platform)\n");
}
#endif

/* ---- matmul -------------------------------------------------------------- */

typedef struct mm_case {
  int32_t m, k, n, x_zp, w_zp, kind, per_channel, with_bias, big_bias;
  float gain;
  int32_t odd_mult;
  int32_t w_row_pad, w_poison; /* as in conv_case */
} mm_case;

static mm_case mm(int32_t m, int32_t k, int32_t n, int32_t x_zp, int32_t w_zp) {
  mm_case c;
  memset(&c, 0, sizeof(c));
  c.m = m;
  c.k = k;
  c.n = n;
  c.x_zp = x_zp;
  c.w_zp = w_zp;
  c.kind = TIDSP_REQUANT_FLOAT;
  c.per_channel = 1;
  c.with_bias = 1;
  c.gain = 1.0f;
  return c;
}

static void run_matmul_case_kind(const mm_case *c) {
  tidsp_matmul_params p, p_pad;
  const int32_t m = c->m, k = c->k, n = c->n;
  int8_t *x = malloc((size_t)m * k + 1), *w = malloc((size_t)n * k + 1), *w_pad = NULL;
  int8_t *y_ref = guarded((size_t)m * n), *y;
  int32_t *bias = NULL, i, v, st_ref;
  void *rqd;
  memset(&p, 0, sizeof(p));
  p.m = m;
  p.k = k;
  p.n = n;
  p.x_zp = c->x_zp;
  p.w_zp = c->w_zp;
  rqd = make_rq(&p.rq, c->kind, n, c->per_channel, k, c->gain);
  if (c->odd_mult && c->kind == TIDSP_REQUANT_FLOAT)
    set_odd_mults(rqd, c->per_channel ? n : 1);
  fill_i8(x, (size_t)m * k);
  fill_i8(w, (size_t)n * k);
  if (c->with_bias) {
    bias = malloc(sizeof(int32_t) * (size_t)n);
    for (i = 0; i < n; i++)
      bias[i] = c->big_bias ? (int32_t)(rnd() ^ (rnd() << 21)) : rnd_range(-20000, 20000);
  }
  st_ref = tidsp_matmul_i8__ref(&p, x, w, bias, rqd, y_ref);
  CHECK_MSG(st_ref == TIDSP_OK, "ref matmul status %d", (int)st_ref);
  if (c->w_row_pad > 0) {
    w_pad = pad_rows(w, n, k, c->w_row_pad, c->w_poison);
    p_pad = p;
    p_pad.w_row_stride = k + c->w_row_pad;
  }
  /* every variant, then (v = count) the AMX tiles on every product */
  for (v = 0; v <= tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v < tidsp_kernel_variant_count ? v : 0];
    const int tiles = v == tidsp_kernel_variant_count;
    const char *name = tiles ? "host_amx_tiles" : kv->name;
    int32_t st, padded;
    if (tiles ? !tidsp_host_amx_supported() : !kv->supported())
      continue;
    for (padded = 0; padded <= (w_pad != NULL); padded++) {
      y = guarded((size_t)m * n);
      st = (tiles ? tidsp_matmul_i8__host_amx_tiles : kv->matmul_i8)(padded ? &p_pad : &p, x, padded ? w_pad : w,
                                                                   bias, rqd, y);
      CHECK_MSG(st == st_ref, "%s matmul status %d", name, (int)st);
      CHECK_MSG(memcmp(y, y_ref, (size_t)m * n) == 0,
                "%s matmul m%d k%d n%d zp %d,%d kind %d pc %d w_row_stride %d", name,
                m, k, n, c->x_zp, c->w_zp, c->kind, c->per_channel,
                padded ? (int)p_pad.w_row_stride : 0);
      CHECK_MSG(guards_ok(y, (size_t)m * n), "%s matmul wrote outside", name);
      guarded_free(y);
    }
  }
  guarded_free(y_ref);
  free(x);
  free(w);
  free(w_pad);
  free(bias);
  free(rqd);
}

/* A case as given and, when it is a plain FLOAT one, with SCALE_SHIFT
 * and with Q31. */
static void run_matmul_case(const mm_case *c) {
  run_matmul_case_kind(c);
  if (c->kind == TIDSP_REQUANT_FLOAT && !c->odd_mult) {
    mm_case s = *c;
    s.kind = TIDSP_REQUANT_SCALE_SHIFT;
    run_matmul_case_kind(&s);
    s.kind = TIDSP_REQUANT_Q31;
    run_matmul_case_kind(&s);
  }
}

static void test_matmul(void) {
  static const int32_t ks[] = {0, 1, 3, 15, 16, 17, 63, 64, 65, 128, 513, 40000};
  static const int32_t ns[] = {1, 3, 4, 5, 8, 9, 1000};
  size_t a, b;
  int t;
  for (a = 0; a < sizeof(ks) / sizeof(ks[0]); a++) {
    for (b = 0; b < sizeof(ns) / sizeof(ns[0]); b++) {
      mm_case c;
      if (ks[a] * ns[b] > 1000000)
        continue;
      c = mm(rnd_range(1, 3), ks[a], ns[b], rnd_range(-128, 127),
             (int32_t)(b % 2) * rnd_range(-128, 127));
      c.per_channel = (int32_t)(a % 2);
      run_matmul_case(&c);
    }
  }
  {
    mm_case c = mm(1, 40000, 3, -128, 77);
    c.big_bias = 1;
    run_matmul_case(&c);
    c = mm(3, 70, 9, 5, 0);
    c.odd_mult = 1;
    run_matmul_case(&c);
  }
  { /* blocks of rows and columns, chunked reductions, tails of each */
    static const int32_t shapes[][3] = {{49, 96, 384}, {100, 300, 70}, {97, 513, 17},
                                        {3136 / 32, 65, 129}, {16, 64, 192}, {7, 1030, 64}};
    size_t i;
    for (i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
      mm_case c = mm(shapes[i][0], shapes[i][1], shapes[i][2], (int32_t)i % 2 ? -128 : 9,
                     (int32_t)i % 3 == 2 ? 4 : 0);
      run_matmul_case(&c);
    }
  }
  for (t = 0; t < 100; t++) {
    mm_case c = mm(rnd_range(1, 9), rnd_range(1, 200), rnd_range(1, 20),
                   rnd_range(-128, 127), rnd() % 2 ? 0 : rnd_range(-128, 127));
    c.kind = rnd() % 4 == 0 ? TIDSP_REQUANT_Q31 : TIDSP_REQUANT_FLOAT;
    c.per_channel = (int32_t)(rnd() % 2);
    c.with_bias = rnd() % 4 != 0;
    c.big_bias = rnd() % 5 == 0;
    c.gain = rnd() % 6 == 0 ? 50.0f : 1.0f;
    run_matmul_case(&c);
  }
}

/* Weight rows w_row_stride apart with poison in the padding, on random
 * layers and matrix products: every variant must give the dense bytes. */
static void test_row_stride(void) {
  static const int32_t poisons[] = {0x7F, -128, 0x55, -1};
  int t;
  for (t = 0; t < 40; t++) {
    conv_case c = base_case();
    c.c_in = rnd_range(1, 24);
    c.c_out = rnd_range(1, 40);
    c.k_h = c.k_w = rnd_range(1, 3) * 2 - 1;
    c.pad_top = c.pad_left = c.k_h / 2;
    c.h_in = rnd_range(2, 6);
    c.w_in = rnd_range(2, 20);
    c.x_zp = rnd_range(-128, 127);
    c.w_zp = t % 2 ? 0 : rnd_range(-128, 127);
    c.kind = t % 5 == 0 ? TIDSP_REQUANT_Q31 : TIDSP_REQUANT_FLOAT;
    c.w_row_pad = t % 3 == 0 ? rnd_range(1, 9) : 0;
    if (c.w_row_pad == 0)
      pad_like_compiler(&c, c.c_in * c.k_h * c.k_w, 64, 0);
    c.w_poison = poisons[t % 4];
    run_conv_case(&c);
  }
  for (t = 0; t < 30; t++) {
    mm_case c = mm(rnd_range(1, 40), rnd_range(1, 300), rnd_range(1, 40),
                   rnd_range(-128, 127), t % 2 ? 0 : rnd_range(-128, 127));
    c.w_row_pad = t % 3 == 0 ? rnd_range(1, 9) : (64 - c.k % 64);
    c.w_poison = poisons[t % 4];
    c.per_channel = t % 2;
    run_matmul_case(&c);
  }
}

/* The AMX matrix multiply's edges: every m up to 33 (rows of X are its
 * B columns, 16 per tile), m around its 64-row blocks, k around the 64-tap
 * steps and 1024-tap chunks, n around the 16-row tiles and 128-row blocks,
 * and more columns than its per-call constants. */
static void test_matmul_amx_edges(void) {
  static const int32_t ks[] = {1, 3, 4, 5, 63, 64, 65, 127, 128, 129, 1025};
  static const int32_t ns[] = {1, 15, 16, 17, 31, 33, 64, 129};
  static const int32_t ms[] = {63, 64, 65, 130};
  int32_t m;
  size_t i;
  (void)amx_here();
  for (m = 1; m <= 33; m++) {
    mm_case c = mm(m, ks[rnd() % 11], ns[rnd() % 8], rnd_range(-128, 127),
                   m % 2 ? 0 : rnd_range(-128, 127));
    c.per_channel = m % 3 != 0;
    c.gain = m % 7 == 0 ? 50.0f : 1.0f;
    run_matmul_case(&c);
  }
  for (i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
    mm_case c = mm(ms[i % 4], ks[i], ns[i % 8], rnd_range(-128, 127), (int32_t)i - 5);
    if (i % 2)
      c.w_row_pad = 64 - ks[i] % 64;
    c.w_poison = 0x7F;
    run_matmul_case(&c);
  }
  {
    mm_case c = mm(3, 5, 2050, 9, -4); /* past TIDSP_AMX_CMAX = 2048 */
    run_matmul_case(&c);
    c = mm(2, 70, 2049, -128, 0);
    run_matmul_case(&c);
    c = mm(17, 2049, 20, 1, 1); /* three chunks */
    run_matmul_case(&c);
  }
}

/* The VNNI matrix multiply's edges: rows around its 6-row tiles, 48-row
 * batches of row sums and 252-row blocks (K > 1536); columns around its
 * 64-column strips and the groups of up to 4 strips packed together (fewer
 * when K is large: K = 300 → 3 a group, K = 1025 → 1); k around the 4-tap
 * groups, the 64-byte packing steps, the one-chunk limit 1536 and the
 * 512-tap chunks past it; w_zp = −128 (no row sums), both requantization
 * kinds, per-tensor and per-channel, one and two rows (dot products), and
 * padded weight rows with poison. */
static void test_matmul_vnni_edges(void) {
  static const int32_t ms[] = {1, 2, 5, 6, 7, 11, 12, 13, 47, 48, 49, 95, 96, 97, 193};
  static const int32_t ks[] = {1, 2, 3, 4, 5, 7, 63, 64, 65, 127, 300, 1025, 1535, 1537, 2049};
  static const int32_t ns[] = {1, 15, 16, 17, 33, 48, 63, 64, 65, 129, 200, 255, 256, 257, 300};
  size_t i;
  for (i = 0; i < sizeof(ms) / sizeof(ms[0]); i++) {
    const int32_t k = ks[(i * 7) % 15], n = ns[(i * 11) % 15];
    mm_case c;
    if ((int64_t)ms[i] * k * n > 6000000)
      continue;
    c = mm(ms[i], k, n, rnd_range(-128, 127), i % 3 == 0 ? 0 : (i % 3 == 1 ? -128 : 77));
    c.per_channel = i % 2 == 0;
    c.with_bias = i % 4 != 3;
    if (i % 5 == 1) {
      c.w_row_pad = 64 - k % 64;
      c.w_poison = 0x7F;
    }
    run_matmul_case(&c);
  }
  for (i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) { /* every k on a few row and column tails */
    mm_case c = mm(i % 2 ? 13 : 1, ks[i], i % 3 ? 65 : 17, rnd_range(-128, 127),
                   i % 2 ? rnd_range(-128, 127) : 0);
    c.per_channel = i % 2 == 1;
    run_matmul_case(&c);
  }
  {
    mm_case c = mm(100, 2049, 70, -128, 0); /* five chunks, the last of one tap */
    run_matmul_case(&c);
    c = mm(253, 1537, 20, 7, 0); /* two row blocks (252 + 1) × four chunks */
    run_matmul_case(&c);
    c = mm(2, 1536, 40, -3, 11); /* the most taps in one chunk, on the two-row path */
    c.per_channel = 0;
    run_matmul_case(&c);
    c = mm(7, 1536, 70, 0, 1); /* and on the panel: one strip fills the buffer */
    run_matmul_case(&c);
    c = mm(97, 1025, 129, 3, -128);
    c.w_row_pad = 64 - 1025 % 64;
    c.w_poison = -1;
    run_matmul_case(&c);
    c = mm(50, 300, 200, -7, 5); /* groups of 3 strips, then 1 */
    c.gain = 50.0f;
    run_matmul_case(&c);
    c = mm(49, 0, 70, 4, 9); /* no taps: the bias alone */
    run_matmul_case(&c);
    c = mm(16, 16, 16, -128, 3); /* one head of the encoder's attention */
    c.per_channel = 0;
    run_matmul_case(&c);
    c = mm(20, 40, 33, 12, 0);
    c.big_bias = 1;
    run_matmul_case(&c);
  }
}

static void test_matmul_errors(void) {
  tidsp_matmul_params p;
  int8_t v8[4] = {0};
  float m = 0.5f;
  int32_t k, v;
  for (k = 0; k < 9; k++) {
    int32_t st_ref;
    const void *rqd = &m;
    memset(&p, 0, sizeof(p));
    p.m = 1;
    p.k = 2;
    p.n = 2;
    p.rq.out_min = -128;
    p.rq.out_max = 127;
    switch (k) {
    case 0: p.n = 0; break;
    case 1: rqd = NULL; break;
    case 2: p.x_zp = 200; break;
    case 3: p.rq.out_min = -129; break;
    case 4: p.m = 0; break; /* nothing to do: OK */
    case 5: p.k = -1; break;
    case 6: p.w_row_stride = 1; break; /* shorter than a row of k = 2 */
    case 7: p.w_row_stride = -2; break;
    case 8: p.w_row_stride = 2; break; /* exactly a row: OK */
    }
    st_ref = tidsp_matmul_i8__ref(&p, v8, v8, NULL, rqd, v8);
    CHECK_MSG((k == 6 || k == 7) == (st_ref == TIDSP_ERR_SHAPE) || k == 0 || k == 5,
              "ref matmul error case %d: status %d", (int)k, (int)st_ref);
    for (v = 0; v < tidsp_kernel_variant_count; v++) {
      const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
      if (!kv->supported())
        continue;
      CHECK_MSG(kv->matmul_i8(&p, v8, v8, NULL, rqd, v8) == st_ref,
                "%s matmul error case %d", kv->name, (int)k);
    }
  }
}

/* ---- SCALE_SHIFT requantization ------------------------------------------ */

/* True when no byte of a guarded(n) buffer was written. */
static int untouched(const void *y, size_t n) {
  const uint8_t *b = (const uint8_t *)y;
  size_t i;
  for (i = 0; i < n; i++) {
    if (b[i] != GUARD_BYTE)
      return 0;
  }
  return 1;
}

/* Every supported variant's conv2d_i8 (and dwconv2d_i8 for depthwise
 * parameters) against the reference: status, bytes, guards, and on an
 * error no byte written. */
static void check_conv_variants(const tidsp_conv2d_params *p, const int8_t *x,
                                const int8_t *w, const int32_t *bias, const void *rqd,
                                size_t ny, const char *what) {
  int8_t *y_ref = guarded(ny), *y;
  const int32_t st_ref = tidsp_conv2d_i8__ref(p, x, w, bias, rqd, y_ref);
  int32_t v, entry;
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    if (!kv->supported())
      continue;
    for (entry = 0; entry <= tidsp_conv2d_is_depthwise(p); entry++) {
      int32_t st;
      y = guarded(ny);
      st = (entry ? kv->dwconv2d_i8 : kv->conv2d_i8)(p, x, w, bias, rqd, y);
      CHECK_MSG(st == st_ref, "%s %s %s: status %d, ref %d", kv->name,
                entry ? "dwconv" : "conv", what, (int)st, (int)st_ref);
      CHECK_MSG(memcmp(y, y_ref, ny) == 0, "%s %s %s: bytes differ", kv->name,
                entry ? "dwconv" : "conv", what);
      if (st_ref != TIDSP_OK)
        CHECK_MSG(untouched(y, ny), "%s %s %s: wrote on an error", kv->name,
                  entry ? "dwconv" : "conv", what);
      CHECK_MSG(guards_ok(y, ny), "%s %s %s: wrote outside", kv->name,
                entry ? "dwconv" : "conv", what);
      guarded_free(y);
    }
  }
  guarded_free(y_ref);
}

static void check_matmul_variants(const tidsp_matmul_params *p, const int8_t *x,
                                  const int8_t *w, const int32_t *bias, const void *rqd,
                                  const char *what) {
  const size_t ny = p->m > 0 && p->n > 0 ? (size_t)p->m * (size_t)p->n : 1;
  int8_t *y_ref = guarded(ny), *y;
  const int32_t st_ref = tidsp_matmul_i8__ref(p, x, w, bias, rqd, y_ref);
  int32_t v;
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    int32_t st;
    if (!kv->supported())
      continue;
    y = guarded(ny);
    st = kv->matmul_i8(p, x, w, bias, rqd, y);
    CHECK_MSG(st == st_ref, "%s matmul %s: status %d, ref %d", kv->name, what, (int)st,
              (int)st_ref);
    CHECK_MSG(memcmp(y, y_ref, ny) == 0, "%s matmul %s: bytes differ", kv->name, what);
    if (st_ref != TIDSP_OK)
      CHECK_MSG(untouched(y, ny), "%s matmul %s: wrote on an error", kv->name, what);
    CHECK_MSG(guards_ok(y, ny), "%s matmul %s: wrote outside", kv->name, what);
    guarded_free(y);
  }
  guarded_free(y_ref);
}

/* One SCALE_SHIFT edge pair per channel: every scale of SS_SCALES with
 * every shift of SS_SHIFTS, three channels each (see test_ss_edges). */
static const uint8_t SS_SCALES[] = {0, 1, 2, 3, 12, 127, 128, 255};
static const uint8_t SS_SHIFTS[] = {0, 1, 2, 3, 7, 8, 15, 16, 23, 30, 31};
#define SS_PAIRS ((int32_t)(sizeof(SS_SCALES) * sizeof(SS_SHIFTS)))

/* A bias that puts acc = bias + x·w (x = 0 at pixel 0) on a tie of
 * (scale, shift) near the output t: acc·scale ≡ 2^(sh−1) mod 2^sh. With
 * scale = 2^a·odd that is acc = (2j + 1)·2^(sh−1−a) (a < sh); for shift 0
 * (no rounding) or a ≥ sh there are no ties, and acc is just near t. Where
 * t·2^sh / scale is past int32 (large shifts, small scales), the tie
 * nearest 0 of t's sign. */
static int32_t tie_bias(int32_t scale, int32_t sh, int32_t t) {
  const int64_t lim = INT32_MAX - 256; /* room for x·w */
  int32_t a = 0;
  int64_t unit, j, acc;
  if (scale == 0)
    return t * 977; /* any: the output is 0 */
  if (sh == 0)
    return t / scale;
  while (((scale >> a) & 1) == 0)
    a++;
  if (a >= sh) { /* acc·scale is a multiple of 2^sh */
    acc = ((int64_t)t * ((int64_t)1 << sh)) / scale;
    return (int32_t)(acc > lim ? lim : (acc < -lim ? -lim : acc));
  }
  unit = (int64_t)1 << (sh - 1 - a);
  j = ((int64_t)t * ((int64_t)1 << sh)) / ((int64_t)scale * 2 * unit);
  acc = (2 * j + 1) * unit;
  if (acc > lim || acc < -lim)
    acc = t >= 0 ? unit : -unit;
  return (int32_t)acc;
}

/* The edge tests' layer: a 1×1 conv of one input channel into ch on
 * h × w pixels, and the same as an (h·w) × 1 by 1 × ch matmul, requantized
 * by `kind` (ranges and tables set by the caller). */
static void pointwise_edge_params(int32_t kind, int32_t h, int32_t w, int32_t ch, tidsp_conv2d_params *p,
                                  tidsp_matmul_params *mp) {
  memset(p, 0, sizeof(*p));
  p->n = 1;
  p->c_in = 1;
  p->h_in = p->h_out = h;
  p->w_in = p->w_out = w;
  p->c_out = ch;
  p->k_h = p->k_w = 1;
  p->stride_h = p->stride_w = p->dil_h = p->dil_w = 1;
  p->groups = 1;
  p->rq.kind = kind;
  memset(mp, 0, sizeof(*mp));
  mp->m = h * w;
  mp->k = 1;
  mp->n = ch;
  mp->rq.kind = kind;
}

/* SCALE_SHIFT with accumulators placed by hand: a 1×1 convolution of one
 * input channel with x_zp = w_zp = 0 has acc = bias[co] + x·w[co], so with
 * w = ±1 the bias decides where the 256 input values put the accumulators.
 * Three channels per (scale, shift) pair: ties near a positive output (x =
 * 0 at pixel 0 lands on one; for shifts ≤ 8 the 256 consecutive values
 * meet ties of both signs anyway), ties near a negative one, and a bias
 * that wraps or saturates (int32 limits, ±2^30, random). Output ranges:
 * full, Relu, narrowed; per-channel and per-tensor (each pair as entry 0);
 * NULL scale and/or shift. The same accumulators through the matrix
 * multiply (k = 1, W = the weights, X = the input plane). */
static void test_ss_edges(void) {
  enum { CH = 3 * SS_PAIRS, H = 5, W = 70 };
  static const int32_t wild[] = {INT32_MAX, INT32_MAX - 100, INT32_MIN, INT32_MIN + 100,
                                 1 << 30, -(1 << 30), (1 << 30) + 1, -(1 << 30) - 1,
                                 1 << 23, -(1 << 23), 0};
  static const int32_t ranges[][2] = {{-128, 127}, {0, 127}, {-5, 7}, {-128, -128}, {127, 127}};
  tidsp_conv2d_params p;
  tidsp_matmul_params mp;
  tidsp_scale_shift ss;
  uint8_t scale[CH], shift[CH];
  int8_t x[H * W], w[CH];
  int32_t bias[CH], c, i, r, pc, nulls;
  char what[96];
  for (i = 0; i < H * W; i++)
    x[i] = (int8_t)(i < 3 ? (i == 0 ? 0 : (i == 1 ? 1 : -1)) : rnd_range(-128, 127));
  for (c = 0; c < CH; c++) {
    const int32_t pair = c / 3, kind = c % 3;
    const int32_t sc = SS_SCALES[pair / (int32_t)sizeof(SS_SHIFTS)];
    const int32_t sh = SS_SHIFTS[pair % (int32_t)sizeof(SS_SHIFTS)];
    scale[c] = (uint8_t)sc;
    shift[c] = (uint8_t)sh;
    w[c] = (int8_t)(kind == 2 ? rnd_range(-128, 127) : (rnd() % 2 ? 1 : -1));
    if (kind == 0)
      bias[c] = tie_bias(sc, sh, rnd_range(0, 100));
    else if (kind == 1)
      bias[c] = tie_bias(sc, sh, rnd_range(-100, -1));
    else
      bias[c] = rnd() % 2 ? wild[rnd() % (sizeof(wild) / sizeof(wild[0]))]
                          : (int32_t)(rnd() ^ (rnd() << 21));
  }
  pointwise_edge_params(TIDSP_REQUANT_SCALE_SHIFT, H, W, CH, &p, &mp);
  for (r = 0; r < (int32_t)(sizeof(ranges) / sizeof(ranges[0])); r++) {
    for (nulls = 0; nulls < 4; nulls++) {
      ss.scale = nulls & 1 ? NULL : scale;
      ss.shift = nulls & 2 ? NULL : shift;
      p.rq.per_channel = 1;
      p.rq.out_min = mp.rq.out_min = ranges[r][0];
      p.rq.out_max = mp.rq.out_max = ranges[r][1];
      mp.rq.per_channel = 1;
      snprintf(what, sizeof(what), "ss edges [%d, %d] nulls %d", ranges[r][0], ranges[r][1],
               (int)nulls);
      check_conv_variants(&p, x, w, bias, &ss, (size_t)CH * H * W, what);
      check_matmul_variants(&mp, x, w, bias, &ss, what);
    }
  }
  /* per-tensor: entry 0 for all channels; the table starts at each pair */
  p.rq.per_channel = mp.rq.per_channel = 0;
  p.rq.out_min = mp.rq.out_min = -128;
  p.rq.out_max = mp.rq.out_max = 127;
  for (pc = 0; pc < CH; pc += 3) {
    ss.scale = scale + pc;
    ss.shift = shift + pc;
    snprintf(what, sizeof(what), "ss per-tensor scale %d shift %d", scale[pc], shift[pc]);
    check_conv_variants(&p, x, w, bias, &ss, (size_t)CH * H * W, what);
    check_matmul_variants(&mp, x, w, bias, &ss, what);
  }
}

/* Depthwise layers with requantization `kind` on the rows' depthwise
 * entries: the direct paths' specialized 3×3 / 5×5 / 7×7 kernels (w_zp = 0)
 * at strides 1 and 2, their generic kernel (w_zp ≠ 0, other sizes),
 * channel multipliers, horizontal dilation (the int16-pair path), several
 * strips and bands, stride 3 (the general conv), and with `wide` a 500
 * column row. */
static void depthwise_cases(int32_t kind, int wide) {
  static const int32_t shapes[][6] = {
      /* k, stride, h_in, w_in, channels per group, dilation */
      {3, 1, 9, 13, 1, 1},  {3, 2, 17, 33, 1, 1}, {5, 1, 12, 40, 2, 1},
      {5, 2, 11, 70, 1, 1}, {7, 1, 15, 20, 1, 1}, {7, 2, 23, 31, 1, 1},
      {4, 1, 8, 8, 1, 1},   {3, 1, 10, 30, 1, 2}, {3, 3, 10, 30, 1, 1},
      {1, 1, 5, 9, 3, 1},   {3, 1, 60, 500, 1, 1} /* wide: last */};
  size_t i, n = sizeof(shapes) / sizeof(shapes[0]) - (wide ? 0 : 1);
  int32_t zp, pc;
  for (i = 0; i < n; i++) {
    for (zp = 0; zp < 2; zp++) {
      for (pc = 0; pc < 2; pc++) {
        conv_case c = base_case();
        c.groups = c.c_in = 6;
        c.c_out = 6 * shapes[i][4];
        c.k_h = c.k_w = shapes[i][0];
        c.stride_h = c.stride_w = shapes[i][1];
        c.h_in = shapes[i][2];
        c.w_in = shapes[i][3];
        c.dil_h = c.dil_w = shapes[i][5];
        c.pad_top = c.pad_left = shapes[i][0] / 2;
        c.x_zp = rnd_range(-128, 127);
        c.w_zp = zp ? rnd_range(-128, 127) : 0;
        c.kind = kind;
        c.per_channel = pc;
        c.big_bias = rnd() % 4 == 0;
        c.gain = rnd() % 4 == 0 ? 30.0f : 1.0f;
        run_conv_case_kind(&c);
      }
    }
  }
}

static void test_ss_depthwise(void) { depthwise_cases(TIDSP_REQUANT_SCALE_SHIFT, 1); }

/* The valid layer the error tests break one argument of: a 3×3 conv of
 * C = 3 channels on 6×6 and a 5×9 by 9×3 matmul, requantized by `kind`
 * per channel to int8 with output zero point out_zp. */
static void error_case_params(int32_t kind, int32_t out_zp, tidsp_conv2d_params *good,
                              tidsp_matmul_params *gm) {
  enum { C = 3, HW = 6 };
  memset(good, 0, sizeof(*good));
  good->n = 1;
  good->c_in = C;
  good->h_in = good->w_in = good->h_out = good->w_out = HW;
  good->c_out = C;
  good->k_h = good->k_w = 3;
  good->stride_h = good->stride_w = good->dil_h = good->dil_w = 1;
  good->pad_top = good->pad_left = 1;
  good->groups = 1;
  good->x_zp = 7;
  good->rq.kind = kind;
  good->rq.per_channel = 1;
  good->rq.out_zp = out_zp;
  good->rq.out_min = -128;
  good->rq.out_max = 127;
  memset(gm, 0, sizeof(*gm));
  gm->m = 5;
  gm->k = 9;
  gm->n = C;
  gm->x_zp = -3;
  gm->w_zp = 2;
  gm->rq = good->rq;
}

/* Arguments the reference rejects for SCALE_SHIFT (out_zp ≠ 0, a shift
 * over 31 in an entry the call reads, a range outside int8 or empty, no
 * data) give its status on every variant and write nothing; a bad shift
 * past entry 0 of a per-tensor table is never read and is fine. */
static void test_ss_errors(void) {
  enum { C = 3, HW = 6 };
  tidsp_conv2d_params good, p;
  tidsp_matmul_params gm, mp;
  uint8_t scale[C] = {3, 200, 255}, shift[C];
  tidsp_scale_shift ss;
  int8_t x[C * HW * HW], w[C * C * 9];
  int32_t bias[C] = {100, -5000, 70000}, k;
  char what[64];
  fill_i8(x, sizeof(x));
  fill_i8(w, sizeof(w));
  error_case_params(TIDSP_REQUANT_SCALE_SHIFT, 0, &good, &gm);
  for (k = 0; k < 13; k++) {
    const void *rqd = &ss;
    shift[0] = 4;
    shift[1] = 9;
    shift[2] = 31;
    ss.scale = scale;
    ss.shift = shift;
    p = good;
    switch (k) {
    case 0: break; /* valid */
    case 1: p.rq.out_zp = 1; break;
    case 2: p.rq.out_zp = -1; p.rq.out_min = -1; break;
    case 3: shift[0] = 32; break;
    case 4: shift[1] = 32; break;
    case 5: shift[2] = 255; break;
    case 6: p.rq.per_channel = 0; shift[0] = 32; break;
    case 7: p.rq.per_channel = 0; shift[1] = 32; shift[2] = 200; break; /* unread: OK */
    case 8: p.rq.out_max = 128; break;
    case 9: p.rq.out_min = 3; p.rq.out_max = 2; break;
    case 10: rqd = NULL; break;
    case 11: p.groups = C; shift[1] = 32; break; /* depthwise */
    case 12: p.groups = C; break;                /* depthwise, valid */
    }
    snprintf(what, sizeof(what), "ss error case %d", (int)k);
    check_conv_variants(&p, x, w, bias, rqd, (size_t)C * HW * HW, what);
    mp = gm;
    mp.rq = p.rq;
    check_matmul_variants(&mp, x, w, bias, rqd, what);
  }
}

/* ---- Q31 requantization --------------------------------------------------- */

/* Q31 entries (mult, shift) that the edge channels pair: mults with few
 * significant bits (products land on ties exactly), powers of two, the
 * 24-bit limits 2^23 .. 2^24, and shifts 0 (saturating), the usual range
 * and the largest, 62. */
static const int32_t Q31_MULTS[] = {0, 1, 3, 5, 1 << 23, (1 << 23) + 1, 12582911,
                                    (1 << 24) - 1, 1 << 24};
static const int32_t Q31_SHIFTS[] = {0, 1, 2, 8, 23, 24, 25, 31, 32, 40, 47, 55, 62};
#define Q31_PAIRS ((int32_t)(sizeof(Q31_MULTS) / sizeof(Q31_MULTS[0]) * \
                             (sizeof(Q31_SHIFTS) / sizeof(Q31_SHIFTS[0]))))

/* A bias that puts acc = bias + x·w (x = 0 at pixel 0) where acc·m is
 * t + 1/2, m = mult·2^−shift, or as near as an integer gets (m > 1: the
 * neighbours x·w = ±1 step over several outputs anyway); limited to int32
 * with room for x·w. */
static int32_t q31_tie_bias(int32_t mult, int32_t shift, int32_t t) {
  const double lim = (double)(INT32_MAX - 256);
  double acc;
  if (mult == 0)
    return t * 977; /* any: the output is the zero point */
  acc = floor(((double)t + 0.5) / ldexp((double)mult, -shift) + 0.5);
  return (int32_t)(acc > lim ? lim : (acc < -lim ? -lim : acc));
}

/* Q31 with accumulators placed by hand, as test_ss_edges does for
 * SCALE_SHIFT: every (mult, shift) pair of Q31_MULTS × Q31_SHIFTS on four
 * channels (near a tie of a positive output, of a negative one, of a
 * positive one at |acc| ≥ 2^24, where float32 rounds the accumulator
 * before the product, and a bias that wraps or saturates). Output ranges
 * with zero points: full, Relu, narrowed, single values at both ends of
 * int8; per-channel and per-tensor (each pair as entry 0). The same
 * accumulators through the matrix multiply. */
static void test_q31_edges(void) {
  enum { CH = 4 * Q31_PAIRS, H = 5, W = 70 };
  static const int32_t wild[] = {INT32_MAX, INT32_MAX - 100, INT32_MIN, INT32_MIN + 100,
                                 1 << 30, -(1 << 30), (1 << 24) + 1, -(1 << 24) - 3,
                                 1 << 23, -(1 << 23), 0};
  static const int32_t ranges[][3] = {/* zp, min, max */
                                      {0, -128, 127}, {-7, -7, 127}, {3, -5, 7},
                                      {-128, -128, -128}, {127, 127, 127}, {100, -128, 127},
                                      {-128, -128, 127}};
  const int32_t nsh = (int32_t)(sizeof(Q31_SHIFTS) / sizeof(Q31_SHIFTS[0]));
  tidsp_conv2d_params p;
  tidsp_matmul_params mp;
  int32_t q[2 * CH], one[2], bias[CH], c, i, r;
  int8_t x[H * W], w[CH];
  char what[96];
  for (i = 0; i < H * W; i++)
    x[i] = (int8_t)(i < 3 ? (i == 0 ? 0 : (i == 1 ? 1 : -1)) : rnd_range(-128, 127));
  for (c = 0; c < CH; c++) {
    const int32_t pair = c / 4, kind = c % 4;
    const int32_t m = Q31_MULTS[pair / nsh], sh = Q31_SHIFTS[pair % nsh];
    q[c] = m;
    q[CH + c] = sh;
    w[c] = (int8_t)(kind == 3 ? rnd_range(-128, 127) : (rnd() % 2 ? 1 : -1));
    if (kind == 0)
      bias[c] = q31_tie_bias(m, sh, rnd_range(0, 100));
    else if (kind == 1)
      bias[c] = q31_tie_bias(m, sh, rnd_range(-100, -1));
    else if (kind == 2) /* m < 2^−18, t ≥ 64: |acc| > 2^24 with an in-range output */
      bias[c] = (m > 0 && ldexp((double)m, -sh) < 0x1p-18)
                    ? q31_tie_bias(m, sh, rnd_range(64, 100))
                    : (rnd() % 2 ? 1 : -1) * rnd_range(1 << 24, 1 << 30);
    else
      bias[c] = rnd() % 2 ? wild[rnd() % (sizeof(wild) / sizeof(wild[0]))]
                          : (int32_t)(rnd() ^ (rnd() << 21));
  }
  pointwise_edge_params(TIDSP_REQUANT_Q31, H, W, CH, &p, &mp);
  for (r = 0; r < (int32_t)(sizeof(ranges) / sizeof(ranges[0])); r++) {
    p.rq.per_channel = mp.rq.per_channel = 1;
    p.rq.out_zp = mp.rq.out_zp = ranges[r][0];
    p.rq.out_min = mp.rq.out_min = ranges[r][1];
    p.rq.out_max = mp.rq.out_max = ranges[r][2];
    snprintf(what, sizeof(what), "q31 edges zp %d [%d, %d]", ranges[r][0], ranges[r][1],
             ranges[r][2]);
    check_conv_variants(&p, x, w, bias, q, (size_t)CH * H * W, what);
    check_matmul_variants(&mp, x, w, bias, q, what);
  }
  /* per-tensor: entry 0 for all channels, each pair in turn */
  p.rq.per_channel = mp.rq.per_channel = 0;
  p.rq.out_zp = mp.rq.out_zp = 5;
  p.rq.out_min = mp.rq.out_min = -128;
  p.rq.out_max = mp.rq.out_max = 127;
  for (c = 0; c < CH; c += 4) {
    one[0] = q[c];
    one[1] = q[CH + c];
    snprintf(what, sizeof(what), "q31 per-tensor mult %d shift %d", (int)one[0], (int)one[1]);
    check_conv_variants(&p, x, w, bias, one, (size_t)CH * H * W, what);
    check_matmul_variants(&mp, x, w, bias, one, what);
  }
}

/* The same depthwise layers with Q31 (but the wide row). */
static void test_q31_depthwise(void) { depthwise_cases(TIDSP_REQUANT_Q31, 0); }

/* Q31 entries the reference rejects (mult < 0 or > 2^24, shift < 0 or
 * > 62, in an entry the call reads), an output zero point or range outside
 * int8, no data: the reference's status on every variant, nothing
 * written; a bad entry past entry 0 of a per-tensor table is never read. */
static void test_q31_errors(void) {
  enum { C = 3, HW = 6 };
  tidsp_conv2d_params good, p;
  tidsp_matmul_params gm, mp;
  int32_t q[2 * C];
  int8_t x[C * HW * HW], w[C * C * 9];
  int32_t bias[C] = {100, -5000, 70000}, k;
  char what[64];
  fill_i8(x, sizeof(x));
  fill_i8(w, sizeof(w));
  error_case_params(TIDSP_REQUANT_Q31, -3, &good, &gm);
  for (k = 0; k < 15; k++) {
    const void *rqd = q;
    q[0] = 9000000;
    q[1] = 1 << 24;
    q[2] = 0;
    q[3] = 30;
    q[4] = 62;
    q[5] = 0;
    p = good;
    switch (k) {
    case 0: break; /* valid */
    case 1: q[0] = -1; break;
    case 2: q[1] = (1 << 24) + 1; break;
    case 3: q[2] = INT32_MIN; break;
    case 4: q[3] = 63; break;
    case 5: q[5] = -1; break;
    case 6: p.rq.per_channel = 0; q[0] = -5; break;
    case 7: p.rq.per_channel = 0; q[1] = 63; break; /* shift of entry 0: bad */
    case 8: p.rq.per_channel = 0; q[1] = 9; q[2] = -1; q[4] = 99; break; /* unread: OK */
    case 9: p.rq.out_zp = 128; break;
    case 10: p.rq.out_max = 128; break;
    case 11: p.rq.out_min = 3; p.rq.out_max = 2; break;
    case 12: rqd = NULL; break;
    case 13: p.groups = C; q[4] = 63; break; /* depthwise */
    case 14: p.groups = C; break;            /* depthwise, valid */
    }
    snprintf(what, sizeof(what), "q31 error case %d", (int)k);
    check_conv_variants(&p, x, w, bias, rqd, (size_t)C * HW * HW, what);
    mp = gm;
    mp.rq = p.rq;
    check_matmul_variants(&mp, x, w, bias, rqd, what);
  }
}

/* The table ends with the reference and the dispatcher picks a supported
 * row. */
static void test_table(void) {
  const tidsp_kernel_variant *a = tidsp_kernel_variant_active();
  int32_t v;
  CHECK(tidsp_kernel_variant_count >= 1);
  CHECK(strcmp(tidsp_kernel_variants[tidsp_kernel_variant_count - 1].name, "ref") == 0);
  CHECK(a != NULL && a->supported());
  for (v = 0; v < tidsp_kernel_variant_count; v++)
    printf("variant %s: %s%s\n", tidsp_kernel_variants[v].name,
           tidsp_kernel_variants[v].supported() ? "supported" : "not supported",
           &tidsp_kernel_variants[v] == a ? " (active)" : "");
}

int main(void) {
  test_table();
  test_conv_channels();
  test_conv_pixels();
  test_conv_reduction();
  test_conv_random();
  test_conv_resnet_like();
  test_conv_deep();
  test_vnni_paths();
  test_vnni_phase();
  test_vnni_rq_range();
  test_vnni_band();
  test_vnni_o16();
  test_avx2_o16();
  test_vnni_1x1_oihw();
  test_amx_reduction();
  test_amx_channels();
  test_amx_geometry();
  test_amx_windows();
  test_fenced();
  test_row_stride();
  test_conv_errors();
  test_matmul();
  test_matmul_amx_edges();
  test_matmul_vnni_edges();
  test_matmul_errors();
  test_ss_edges();
  test_ss_depthwise();
  test_ss_errors();
  test_q31_edges();
  test_q31_depthwise();
  test_q31_errors();
  UNIT_MAIN_END();
}
