/*
 * conv_bench.c — times every variant of tidsp_conv2d_i8 this CPU runs on
 * the spec's layer (int8 conv 64→64, 56×56, 3×3, stride 1, pad 1,
 * per-channel FLOAT requant) in one run, and checks that they all produce
 * the reference's bytes; then the same layer with weight rows 640 bytes
 * apart (w_row_stride: the compiler pads host weight rows with zeros to a
 * multiple of 64, which leaves this layer's 576-byte rows as they are, so
 * the rows get one spare 64-byte unit) on the fast variants
 * ("<variant>/w640" rows), and the fastest variant against the next one
 * ("ratio" line). Then ResNet-18 and MobileNetV2 layer shapes
 * (1×1 and k×k), every fast variant side by side, the first
 * also with zero-padded weight rows when K is not a multiple of 64 (the
 * compiler's host packing), bytes checked against the reference (one line
 * each starting with "shape"; the reference is left out, too slow to
 * repeat); where the O16 weight layout fits (kernels.h: channels in 16s
 * and quads) every variant also runs on O16 weights ("(/o16 … ms)" after
 * its time: the compiler packs small maps so). Then the depthwise
 * layers of MobileNetV2/V3 and ShuffleNetV2 (fewer channels): each
 * variant's general conv2d_i8 against its depthwise entry dwconv2d_i8 (the
 * one the dispatcher picks for them), one line each starting with "dw".
 * Then int8 matrix multiplies of transformer and ConvNeXt-style shapes,
 * one line each starting with "mm".
 *
 * usage: conv_bench [repeats] [shapes]   (default 21; prints the median of
 *        the thread CPU time per call; "shapes": only the "shape" lines,
 *        for comparing conv kernels quickly)
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c99 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../runtime/kernels/kernel_variants.h"

/* The calling thread's CPU time: the machine is shared, and time spent
 * descheduled is not the kernel's (on an idle machine it is wall time). */
static double now_s(void) {
  struct timespec t;
#if defined(CLOCK_THREAD_CPUTIME_ID)
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) == 0)
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
#endif
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static uint32_t lcg(uint32_t *s) { return *s = *s * 1664525u + 1013904223u; }

/* Dense OIHW weights of p (groups 1) in the O16 layout of kernels.h:
 * blocks of 16·K weights and the 16 channels' Σw (int32, x86 order). */
static int8_t *pack_o16(const int8_t *w, const tidsp_conv2d_params *p) {
  const int32_t T = p->k_h * p->k_w, Q = p->c_in / 4;
  const size_t K = (size_t)p->c_in * (size_t)T, blk = 16 * K + 64;
  int8_t *o = malloc((size_t)(p->c_out / 16) * blk);
  int32_t co, ci, t;
  for (co = 0; co < p->c_out; co++) {
    int32_t sum = 0;
    for (ci = 0; ci < p->c_in; ci++)
      for (t = 0; t < T; t++) {
        const int8_t v = w[(size_t)co * K + (size_t)ci * (size_t)T + (size_t)t];
        o[(size_t)(co / 16) * blk + ((size_t)t * (size_t)Q + (size_t)(ci / 4)) * 64 +
          (size_t)(co % 16) * 4 + (size_t)(ci % 4)] = v;
        sum += v;
      }
    memcpy(o + (size_t)(co / 16) * blk + 16 * K + (size_t)(co % 16) * 4, &sum, 4);
  }
  return o;
}

/* A copy of `rows` dense rows of `taps` bytes, `stride` bytes apart (the
 * padding zero, as the compiler writes it). */
static int8_t *pad_rows(const int8_t *w, int32_t rows, int32_t taps,
                        int32_t stride) {
  int8_t *wp = calloc((size_t)rows, (size_t)stride);
  int32_t r;
  for (r = 0; r < rows; r++)
    memcpy(wp + (size_t)r * stride, w + (size_t)r * taps, (size_t)taps);
  return wp;
}

/* Median seconds of `repeats` calls of f after one warm-up. */
static double median_s(tidsp_conv2d_i8_fn f, const tidsp_conv2d_params *p,
                       const int8_t *x, const int8_t *w, const int32_t *bias,
                       const float *mult, int8_t *y, int repeats, double *t) {
  int r;
  f(p, x, w, bias, mult, y);
  for (r = 0; r < repeats; r++) {
    double t0 = now_s();
    f(p, x, w, bias, mult, y);
    t[r] = now_s() - t0;
  }
  qsort(t, (size_t)repeats, sizeof(double), cmp_double);
  return t[repeats / 2];
}

/* One depthwise layer (c channels, h×h input, k×k, stride s, pad k/2). */
static int dw_layer(int32_t c, int32_t h, int32_t k, int32_t s, int repeats,
                    double *t) {
  tidsp_conv2d_params p;
  int8_t *x, *w, *y_ref, *y;
  int32_t *bias;
  float *mult;
  size_t nx, nw, ny, i;
  int32_t v;
  uint32_t seed = 777u;
  int bad = 0;
  memset(&p, 0, sizeof(p));
  p.n = 1;
  p.c_in = p.c_out = p.groups = c;
  p.h_in = p.w_in = h;
  p.k_h = p.k_w = k;
  p.stride_h = p.stride_w = s;
  p.dil_h = p.dil_w = 1;
  p.pad_top = p.pad_left = k / 2;
  p.h_out = p.w_out = (h + 2 * (k / 2) - k) / s + 1;
  p.x_zp = -128;
  p.w_zp = 0;
  p.rq.kind = TIDSP_REQUANT_FLOAT;
  p.rq.per_channel = 1;
  p.rq.out_zp = -128;
  p.rq.out_min = -128;
  p.rq.out_max = 127;
  nx = (size_t)c * h * h;
  nw = (size_t)c * k * k;
  ny = (size_t)c * p.h_out * p.w_out;
  x = malloc(nx);
  w = malloc(nw);
  y_ref = malloc(ny);
  y = malloc(ny);
  bias = malloc(sizeof(int32_t) * (size_t)c);
  mult = malloc(sizeof(float) * (size_t)c);
  for (i = 0; i < nx; i++)
    x[i] = (int8_t)(lcg(&seed) >> 24);
  for (i = 0; i < nw; i++)
    w[i] = (int8_t)(lcg(&seed) >> 24);
  for (i = 0; i < (size_t)c; i++) {
    bias[i] = (int32_t)(lcg(&seed) >> 20) - 2048;
    mult[i] = 2.0e-3f * (1.0f + (float)i / (float)c);
  }
  tidsp_conv2d_i8__ref(&p, x, w, bias, mult, y_ref);
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    double general, direct;
    int same;
    if (!kv->supported())
      continue;
    memset(y, 0, ny);
    general = median_s(kv->conv2d_i8, &p, x, w, bias, mult, y, repeats, t);
    same = memcmp(y, y_ref, ny) == 0;
    memset(y, 0, ny);
    direct = median_s(kv->dwconv2d_i8, &p, x, w, bias, mult, y, repeats, t);
    same = same && memcmp(y, y_ref, ny) == 0;
    bad |= !same;
    printf("dw c%d %dx%d k%d s%d  %-16s general %8.3f ms  depthwise %8.3f ms  x%.2f  %s\n",
           (int)c, (int)h, (int)h, (int)k, (int)s, kv->name, general * 1e3,
           direct * 1e3, general / direct, same ? "bit-exact" : "DIFFERS FROM REF");
  }
  free(x);
  free(w);
  free(y_ref);
  free(y);
  free(bias);
  free(mult);
  return bad;
}

/* One ResNet-18 / MobileNetV2 layer shape (c_in → c_out, h×h input, k×k,
 * stride s, pad k/2, per-channel FLOAT requant, x_zp −128): the fast
 * variants on one line, each as a multiple of the first one's
 * time, and whether each gave the reference's bytes. */
static int shape_layer(const char *model, int32_t c_in, int32_t c_out, int32_t h,
                       int32_t k, int32_t s, int repeats, double *t) {
  tidsp_conv2d_params p, p_o16;
  int8_t *x, *w, *y_ref, *y, *w_o16 = NULL;
  int32_t *bias;
  float *mult;
  size_t nx, nw, ny, i;
  int32_t v;
  uint32_t seed = 4242u;
  const int32_t taps = c_in * k * k;
  double macs, first = 0.0;
  int bad = 0;
  memset(&p, 0, sizeof(p));
  p.n = 1;
  p.c_in = c_in;
  p.c_out = c_out;
  p.groups = 1;
  p.h_in = p.w_in = h;
  p.k_h = p.k_w = k;
  p.stride_h = p.stride_w = s;
  p.dil_h = p.dil_w = 1;
  p.pad_top = p.pad_left = k / 2;
  p.h_out = p.w_out = (h + 2 * (k / 2) - k) / s + 1;
  p.x_zp = -128;
  p.rq.kind = TIDSP_REQUANT_FLOAT;
  p.rq.per_channel = 1;
  p.rq.out_zp = -128;
  p.rq.out_min = -128;
  p.rq.out_max = 127;
  nx = (size_t)c_in * h * h;
  nw = (size_t)c_out * c_in * k * k;
  ny = (size_t)c_out * p.h_out * p.w_out;
  macs = (double)ny * c_in * k * k;
  x = malloc(nx);
  w = malloc(nw);
  y_ref = malloc(ny);
  y = malloc(ny);
  bias = malloc(sizeof(int32_t) * (size_t)c_out);
  mult = malloc(sizeof(float) * (size_t)c_out);
  for (i = 0; i < nx; i++)
    x[i] = (int8_t)(lcg(&seed) >> 24);
  for (i = 0; i < nw; i++)
    w[i] = (int8_t)(lcg(&seed) >> 24);
  for (i = 0; i < (size_t)c_out; i++) {
    bias[i] = (int32_t)(lcg(&seed) >> 20) - 2048;
    mult[i] = 4.0e-3f / (float)(c_in * k * k) * (1.0f + (float)i / (float)c_out);
  }
  tidsp_conv2d_i8__ref(&p, x, w, bias, mult, y_ref);
  if (c_out % 16 == 0 && c_in % 4 == 0) {
    w_o16 = pack_o16(w, &p);
    p_o16 = p;
    p_o16.w_layout = TIDSP_CONV_W_O16;
  }
  printf("shape %-11s %4d->%-4d %3dx%-3d k%d s%d %7.1f MMAC", model, (int)c_in,
         (int)c_out, (int)h, (int)h, (int)k, (int)s, macs * 1e-6);
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    double med;
    int same;
    if (!kv->supported() || strcmp(kv->name, "ref") == 0)
      continue;
    memset(y, 0, ny);
    med = median_s(kv->conv2d_i8, &p, x, w, bias, mult, y, repeats, t);
    same = memcmp(y, y_ref, ny) == 0;
    printf("  %s %.3f ms %.0f GMAC/s", kv->name, med * 1e3, macs / med * 1e-9);
    if (first > 0.0) { /* the table lists the fastest first */
      printf(" (first x%.2f)", med / first);
    } else {
      first = med;
      if (taps % 64) { /* the same with the compiler's padded rows */
        const int32_t stride = (taps + 63) / 64 * 64;
        int8_t *w_pad = pad_rows(w, c_out, taps, stride);
        tidsp_conv2d_params p_pad = p;
        p_pad.w_row_stride = stride;
        memset(y, 0, ny);
        med = median_s(kv->conv2d_i8, &p_pad, x, w_pad, bias, mult, y, repeats, t);
        same = same && memcmp(y, y_ref, ny) == 0;
        printf(" (/w%d %.3f ms)", (int)stride, med * 1e3);
        free(w_pad);
      }
    }
    if (w_o16) {
      memset(y, 0, ny);
      med = median_s(kv->conv2d_i8, &p_o16, x, w_o16, bias, mult, y, repeats, t);
      same = same && memcmp(y, y_ref, ny) == 0;
      printf(" (/o16 %.3f ms)", med * 1e3); /* no "GMAC/s": not a variant column for bench/run.py */
    }
    if (!same)
      printf(" DIFFERS FROM REF");
    bad |= !same;
  }
  printf("\n");
  free(w_o16);
  free(x);
  free(w);
  free(y_ref);
  free(y);
  free(bias);
  free(mult);
  return bad;
}

/* One int8 matrix multiply Y[m][n] = X[m][k]·Wᵀ (FLOAT requant, x_zp
 * −128): the fast variants on one line, as for shape_layer. A Linear
 * (attn = 0): per-column scales, w_zp 0. One batch of attention's Q·Kᵀ or
 * A·V (attn = 1, what tidsp_batch_matmul_i8 calls per batch and head): a
 * runtime B, per-tensor scale, w_zp 3. Each timed sample runs the call
 * enough times to cover about 2 MMAC, so that the clock's own cost (a
 * system call for the thread CPU time) does not swamp the small shapes;
 * the time printed is per call. */
static int mm_shape(const char *name, int32_t m, int32_t k, int32_t n, int attn, int repeats,
                    double *t) {
  tidsp_matmul_params p;
  int8_t *x, *w, *y_ref, *y;
  int32_t *bias;
  float *mult;
  size_t i;
  int32_t v, r;
  uint32_t seed = 99u;
  const double macs = (double)m * k * n;
  const int inner = macs >= 2e6 ? 1 : (int)(2e6 / macs) + 1;
  int bad = 0, u;
  memset(&p, 0, sizeof(p));
  p.m = m;
  p.k = k;
  p.n = n;
  p.x_zp = -128;
  p.w_zp = attn ? 3 : 0;
  p.rq.kind = TIDSP_REQUANT_FLOAT;
  p.rq.per_channel = !attn;
  p.rq.out_zp = -128;
  p.rq.out_min = -128;
  p.rq.out_max = 127;
  x = malloc((size_t)m * k);
  w = malloc((size_t)n * k);
  y_ref = malloc((size_t)m * n);
  y = malloc((size_t)m * n);
  bias = malloc(sizeof(int32_t) * (size_t)n);
  mult = malloc(sizeof(float) * (size_t)n);
  for (i = 0; i < (size_t)m * k; i++)
    x[i] = (int8_t)(lcg(&seed) >> 24);
  for (i = 0; i < (size_t)n * k; i++)
    w[i] = (int8_t)(lcg(&seed) >> 24);
  for (i = 0; i < (size_t)n; i++) {
    bias[i] = (int32_t)(lcg(&seed) >> 20) - 2048;
    mult[i] = 4.0e-3f / (float)k * (1.0f + (float)i / (float)n);
  }
  tidsp_matmul_i8__ref(&p, x, w, bias, mult, y_ref);
  printf("mm %-15s m%-5d k%-5d n%-5d %7.2f MMAC", name, (int)m, (int)k, (int)n, macs * 1e-6);
  for (v = 0; v < tidsp_kernel_variant_count; v++) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    double med;
    if (!kv->supported() || strcmp(kv->name, "ref") == 0)
      continue;
    memset(y, 0, (size_t)m * n);
    kv->matmul_i8(&p, x, w, bias, mult, y); /* warm-up */
    for (r = 0; r < repeats; r++) {
      const double t0 = now_s();
      for (u = 0; u < inner; u++)
        kv->matmul_i8(&p, x, w, bias, mult, y);
      t[r] = (now_s() - t0) / inner;
    }
    qsort(t, (size_t)repeats, sizeof(double), cmp_double);
    med = t[repeats / 2];
    printf("  %s %.5f ms %.1f GMAC/s%s", kv->name, med * 1e3, macs / med * 1e-9,
           memcmp(y, y_ref, (size_t)m * n) == 0 ? "" : " DIFFERS FROM REF");
    bad |= memcmp(y, y_ref, (size_t)m * n) != 0;
  }
  printf("\n");
  free(x);
  free(w);
  free(y_ref);
  free(y);
  free(bias);
  free(mult);
  return bad;
}

int main(int argc, char **argv) {
  const int repeats = argc > 1 ? atoi(argv[1]) : 21;
  const int shapes_only = argc > 2 && strcmp(argv[2], "shapes") == 0;
  tidsp_conv2d_params p, p_pad;
  int8_t *x, *w, *w_pad, *y_ref, *y;
  int32_t *bias;
  float *mult;
  double *t, macs, ref_median = 0.0, med_of[8] = {0};
  const char *name_of[8] = {0};
  size_t nx, nw, ny, i;
  int32_t v, nmed = 0, taps, stride;
  uint32_t s = 12345u;
  int bad = 0;

  if (repeats < 1) {
    fprintf(stderr, "conv_bench: repeats must be >= 1, got '%s'\n", argv[1]);
    return 2;
  }
  memset(&p, 0, sizeof(p));
  p.n = 1;
  p.c_in = 64;
  p.h_in = p.w_in = 56;
  p.c_out = 64;
  p.h_out = p.w_out = 56;
  p.k_h = p.k_w = 3;
  p.stride_h = p.stride_w = 1;
  p.dil_h = p.dil_w = 1;
  p.pad_top = p.pad_left = 1;
  p.groups = 1;
  p.x_zp = -128; /* a post-Relu activation */
  p.w_zp = 0;
  p.rq.kind = TIDSP_REQUANT_FLOAT;
  p.rq.per_channel = 1;
  p.rq.out_zp = -128;
  p.rq.out_min = -128;
  p.rq.out_max = 127;
  nx = (size_t)p.c_in * p.h_in * p.w_in;
  nw = (size_t)p.c_out * p.c_in * p.k_h * p.k_w;
  ny = (size_t)p.c_out * p.h_out * p.w_out;
  x = malloc(nx);
  w = malloc(nw);
  y_ref = malloc(ny);
  y = malloc(ny);
  bias = malloc(sizeof(int32_t) * (size_t)p.c_out);
  mult = malloc(sizeof(float) * (size_t)p.c_out);
  t = malloc(sizeof(double) * (size_t)repeats);
  for (i = 0; i < nx; i++)
    x[i] = (int8_t)((s = s * 1664525u + 1013904223u) >> 24);
  for (i = 0; i < nw; i++)
    w[i] = (int8_t)((s = s * 1664525u + 1013904223u) >> 24);
  for (i = 0; i < (size_t)p.c_out; i++) {
    bias[i] = (int32_t)((s = s * 1664525u + 1013904223u) >> 16) - 32768;
    mult[i] = 2.0e-4f * (1.0f + (float)i / 64.0f);
  }
  /* padded weight rows: 576 taps already fill 9 units of 64 bytes (the
   * compiler's host packing keeps them), so one spare unit */
  taps = p.c_in * p.k_h * p.k_w;
  stride = (taps + 63) / 64 * 64 + 64;
  w_pad = pad_rows(w, p.c_out, taps, stride);
  p_pad = p;
  p_pad.w_row_stride = stride;
  macs = (double)ny * p.c_in * p.k_h * p.k_w;
  if (tidsp_conv2d_i8__ref(&p, x, w, bias, mult, y_ref) != TIDSP_OK) {
    fprintf(stderr, "conv_bench: the reference rejected the layer\n");
    return 1;
  }
  printf("conv 64->64 56x56 3x3 s1 p1, per-channel FLOAT, %.1f MMAC, median of %d "
         "(thread CPU time)\n",
         macs * 1e-6, repeats);
  /* the table lists the fastest first and ends with ref: time ref first */
  for (v = tidsp_kernel_variant_count - 1; v >= 0 && !shapes_only; v--) {
    const tidsp_kernel_variant *kv = &tidsp_kernel_variants[v];
    double med;
    int same, padded;
    if (!kv->supported()) {
      printf("  %-20s not supported on this CPU\n", kv->name);
      continue;
    }
    for (padded = 0; padded <= (v < tidsp_kernel_variant_count - 1); padded++) {
      char label[32];
      memset(y, 0, ny);
      med = median_s(kv->conv2d_i8, padded ? &p_pad : &p, x, padded ? w_pad : w, bias,
                     mult, y, repeats, t);
      if (v == tidsp_kernel_variant_count - 1)
        ref_median = med;
      same = memcmp(y, y_ref, ny) == 0;
      bad |= !same;
      if (padded)
        snprintf(label, sizeof(label), "%s/w%d", kv->name, (int)stride);
      else
        snprintf(label, sizeof(label), "%s", kv->name);
      printf("  %-20s %8.3f ms  %7.2f GMAC/s  x%.2f vs ref  %s\n", label, med * 1e3,
             macs / med * 1e-9, ref_median / med, same ? "bit-exact" : "DIFFERS FROM REF");
      if (!padded && nmed < 8) {
        name_of[nmed] = kv->name;
        med_of[nmed++] = med;
      }
    }
  }
  printf("active variant: %s\n", tidsp_kernel_variant_active()->name);
  /* timed slowest first: the last two are the fastest and the next one */
  if (nmed >= 3)
    printf("ratio %s vs %s: x%.2f, vs ref: x%.2f (same run)\n", name_of[nmed - 1],
           name_of[nmed - 2], med_of[nmed - 2] / med_of[nmed - 1],
           med_of[0] / med_of[nmed - 1]);
  /* ResNet-18 (stem, stages 1-4 3×3, downsampling 1×1 s2) and MobileNetV2
   * (stem, expansion and projection 1×1, the last 1×1) */
  bad |= shape_layer("resnet18", 3, 64, 224, 7, 2, repeats, t);
  bad |= shape_layer("resnet18", 64, 64, 56, 3, 1, repeats, t);
  bad |= shape_layer("resnet18", 64, 128, 56, 3, 2, repeats, t);
  bad |= shape_layer("resnet18", 64, 128, 56, 1, 2, repeats, t);
  bad |= shape_layer("resnet18", 128, 128, 28, 3, 1, repeats, t);
  bad |= shape_layer("resnet18", 256, 256, 14, 3, 1, repeats, t);
  bad |= shape_layer("resnet18", 128, 256, 28, 3, 2, repeats, t);
  bad |= shape_layer("resnet18", 256, 512, 14, 3, 2, repeats, t);
  bad |= shape_layer("resnet18", 256, 512, 14, 1, 2, repeats, t);
  bad |= shape_layer("resnet18", 512, 512, 7, 3, 1, repeats, t);
  bad |= shape_layer("mobilenetv2", 3, 32, 224, 3, 2, repeats, t);
  bad |= shape_layer("mobilenetv2", 16, 96, 112, 1, 1, repeats, t);
  bad |= shape_layer("mobilenetv2", 96, 24, 56, 1, 1, repeats, t);
  bad |= shape_layer("mobilenetv2", 144, 24, 56, 1, 1, repeats, t);
  bad |= shape_layer("mobilenetv2", 32, 192, 28, 1, 1, repeats, t);
  bad |= shape_layer("mobilenetv2", 320, 1280, 7, 1, 1, repeats, t);
  /* the 1×1 convs of the small maps (MobileNetV2's last stages, GoogLeNet's
   * inception 4 and 5): at 7×7 the VNNI kernel runs them channels-in-lanes
   * with OIHW weights too (packed per call; the compiler keeps them OIHW) */
  bad |= shape_layer("mobilenetv2", 160, 960, 7, 1, 1, repeats, t);
  bad |= shape_layer("mobilenetv2", 960, 160, 7, 1, 1, repeats, t);
  bad |= shape_layer("mobilenetv2", 96, 576, 14, 1, 1, repeats, t);
  bad |= shape_layer("mobilenetv2", 576, 96, 14, 1, 1, repeats, t);
  bad |= shape_layer("googlenet", 832, 384, 7, 1, 1, repeats, t);
  bad |= shape_layer("googlenet", 528, 256, 14, 1, 1, repeats, t);
  if (shapes_only)
    goto done;
  /* MobileNetV2 112/56/28/14 (96→144→192→576 channels in the model),
   * MobileNetV3-small 5×5, ShuffleNetV2 stride 2 */
  bad |= dw_layer(32, 112, 3, 1, repeats, t);
  bad |= dw_layer(96, 112, 3, 2, repeats, t);
  bad |= dw_layer(144, 56, 3, 1, repeats, t);
  bad |= dw_layer(192, 28, 3, 1, repeats, t);
  bad |= dw_layer(576, 14, 3, 1, repeats, t);
  bad |= dw_layer(96, 28, 5, 2, repeats, t);
  bad |= dw_layer(116, 56, 3, 2, repeats, t);
  /* the suite's transformer encoder (16 tokens, width 64, 4 heads of 16),
   * a ConvNeXt-style Linear pair on 56×56 tokens of width 96, ViT-B/16's
   * MLP pair (197 tokens, 768 → 3072 → 768) and one head of its attention
   * (64 wide), the encoder's attention, a decode-like 4-row product, and a
   * classifier head (one row) */
  bad |= mm_shape("encoder_qkv", 16, 64, 192, 0, repeats, t);
  bad |= mm_shape("encoder_fc2", 16, 256, 64, 0, repeats, t);
  bad |= mm_shape("convnext_fc1", 3136, 96, 384, 0, repeats, t);
  bad |= mm_shape("convnext_fc2", 3136, 384, 96, 0, repeats, t);
  bad |= mm_shape("vit_b_mlp", 197, 768, 3072, 0, repeats, t);
  bad |= mm_shape("vit_b_fc2", 197, 3072, 768, 0, repeats, t);
  bad |= mm_shape("vit_b_attn_qk", 197, 64, 197, 1, repeats, t);
  bad |= mm_shape("vit_b_attn_av", 197, 197, 64, 1, repeats, t);
  bad |= mm_shape("encoder_attn_qk", 16, 16, 16, 1, repeats, t);
  bad |= mm_shape("rows4_768", 4, 768, 768, 0, repeats, t);
  bad |= mm_shape("resnet18_fc", 1, 512, 1000, 0, repeats, t);
done:
  free(x);
  free(w);
  free(w_pad);
  free(y_ref);
  free(y);
  free(bias);
  free(mult);
  free(t);
  return bad;
}
