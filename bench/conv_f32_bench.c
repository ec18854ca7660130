/*
 * conv_f32_bench.c — times tidsp_conv2d_f32 (the dispatched variant:
 * host_mlas on x86 with FMA, ONNX Runtime's MLAS summation order) on the
 * float convolutions of PP-OCR det/rec (MobileNetV3: pointwise, 3×3
 * NCHWc, depthwise, the stride-2 stem, ORT-NCHW 1×1) and MTCNN's P-Net.
 * Prints the median thread CPU time per call and GMAC/s, and a checksum of
 * the output bytes (equal checksums across two builds: the same bytes).
 *
 * Not built by CMake: link it against the library to measure, e.g. a
 * branch against main's build, side by side under `taskset -c 0`:
 *   cc -O2 -Iinclude bench/conv_f32_bench.c build/lib/libtidsp.a -lm -o /tmp/cvb
 *   taskset -c 0 /tmp/cvb [repeats]
 */
#include "f32_bench.h"

/* square kernel k, stride s, pads pad on every side, groups g; nchw: the
 * MLAS blocks at which ORT keeps it in NCHW (params.mlas_nchw: ALL, or
 * TIDSP_MLAS_BLOCK8 alone for 8 to 15 input channels not a multiple of 4) */
#define ALL (TIDSP_MLAS_BLOCK16 | TIDSP_MLAS_BLOCK8)
static void run(const char *name, int32_t c_in, int32_t c_out, int32_t h, int32_t w, int32_t k,
                int32_t s, int32_t pad, int32_t g, int32_t nchw, int with_sum, int repeats) {
  tidsp_conv2d_params p;
  size_t nx, nw, ny, i;
  float *x, *wt, *bias, *sum = NULL, *y;
  double *t = malloc((size_t)repeats * sizeof(double));
  uint32_t seed = 12345u, chk = 2166136261u;
  int r;
  memset(&p, 0, sizeof p);
  p.n = 1, p.c_in = c_in, p.h_in = h, p.w_in = w, p.c_out = c_out;
  p.k_h = p.k_w = k, p.stride_h = p.stride_w = s, p.dil_h = p.dil_w = 1;
  p.pad_top = p.pad_left = pad, p.groups = g, p.mlas_nchw = nchw;
  p.h_out = (h + 2 * pad - k) / s + 1;
  p.w_out = (w + 2 * pad - k) / s + 1;
  nx = (size_t)c_in * (size_t)h * (size_t)w;
  nw = (size_t)c_out * (size_t)(c_in / g) * (size_t)k * (size_t)k;
  ny = (size_t)c_out * (size_t)p.h_out * (size_t)p.w_out;
  x = malloc(nx * sizeof(float));
  wt = malloc(nw * sizeof(float));
  bias = malloc((size_t)c_out * sizeof(float));
  y = malloc(ny * sizeof(float));
  for (i = 0; i < nx; i++)
    x[i] = (float)(lcg(&seed) >> 8) / 16777216.0f - 0.5f;
  for (i = 0; i < nw; i++)
    wt[i] = (float)(lcg(&seed) >> 8) / 16777216.0f - 0.5f;
  for (i = 0; i < (size_t)c_out; i++)
    bias[i] = (float)(lcg(&seed) >> 8) / 16777216.0f - 0.5f;
  if (with_sum) {
    p.sum_in_conv = ALL; /* the Add fused into the conv at both blocks */
    sum = malloc(ny * sizeof(float));
    for (i = 0; i < ny; i++)
      sum[i] = (float)(lcg(&seed) >> 8) / 16777216.0f - 0.5f;
  }
  for (r = 0; r < repeats; r++) {
    double t0 = now_s();
    if (tidsp_conv2d_f32(&p, x, wt, bias, sum, y) != TIDSP_OK) {
      fprintf(stderr, "%s: kernel error\n", name);
      exit(1);
    }
    t[r] = now_s() - t0;
  }
  chk = fnv_floats(y, ny, chk);
  median_s(t, repeats);
  printf("%-26s %4d->%-4d %3dx%-3d k%d s%d g%-3d %9.3f ms %7.2f GMAC/s  bytes %08x\n", name, (int)c_in,
         (int)c_out, (int)h, (int)w, (int)k, (int)s, (int)g, 1e3 * t[repeats / 2],
         (double)ny * (double)(c_in / g) * k * k / t[repeats / 2] * 1e-9, chk);
  free(x);
  free(wt);
  free(bias);
  free(sum);
  free(y);
  free(t);
}

int main(int argc, char **argv) {
  const int repeats = argc > 1 ? atoi(argv[1]) : 9;
  if (repeats < 1)
    return 2;
  run("det neck 3x3 (NCHWc)", 96, 24, 32, 80, 3, 1, 1, 1, 0, 0, repeats);
  run("det stem 3x3 s2 (NCHW in)", 3, 16, 128, 320, 3, 2, 1, 1, 0, 0, repeats);
  run("det dw 3x3 s2", 32, 32, 64, 160, 3, 2, 1, 32, 0, 0, repeats);
  run("det dw 3x3", 64, 64, 32, 80, 3, 1, 1, 64, 0, 0, repeats);
  run("det 1x1 from 12 channels", 12, 96, 32, 80, 1, 1, 0, 1, 0, 0, repeats);
  run("det 1x1 ORT-NCHW", 18, 96, 16, 40, 1, 1, 0, 1, ALL, 0, repeats);
  run("rec pointwise 480", 480, 480, 6, 80, 1, 1, 0, 1, 0, 0, repeats);
  run("rec pointwise + sum", 240, 240, 12, 80, 1, 1, 0, 1, 0, 1, repeats);
  run("pnet conv2 3x3", 16, 32, 21, 21, 3, 1, 0, 1, 0, 0, repeats);
  run("pnet conv1 3x3", 10, 16, 23, 23, 3, 1, 0, 1, TIDSP_MLAS_BLOCK8, 0, repeats);
  return 0;
}
