/*
 * reduce_mean_bench.c — a squeeze-excitation block's mean over H·W of an
 * int8 tensor, two ways side by side: tidsp_dequantize then
 * tidsp_reduce_mean_f32 (the float path, what runs without
 * FuseDequantizeReduceMean), and tidsp_reduce_mean_dq_i8 (the int8 tensor
 * read directly), in both of ONNX Runtime's summation orders, on
 * MobileNetV3's SE shapes. Prints the best of 5 rounds per call and
 * whether the two give the same bytes (they must).
 *
 * Not built by CMake:
 *   cc -O2 -Iinclude bench/reduce_mean_bench.c build/lib/libtidsp.a -lm -o /tmp/rmb
 *   taskset -c 0 /tmp/rmb
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cstatic/kernels.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void) {
  static const int shapes[][3] = {{16, 56, 56}, {96, 14, 14}, {240, 14, 14}, {576, 7, 7}};
  const float scale = 0.0213f;
  const int32_t zp = -5;
  for (int order = 0; order < 2; order++)
    for (int s = 0; s < 4; s++) {
      const int c = shapes[s][0], n = c * shapes[s][1] * shapes[s][2], reps = 20000000 / n;
      int8_t *q = malloc((size_t)n);
      float *x = aligned_alloc(64, ((size_t)n * 4 + 63) / 64 * 64), *y0 = malloc(4 * (size_t)c),
            *y1 = malloc(4 * (size_t)c);
      uint32_t seed = 1u + (uint32_t)s;
      for (int i = 0; i < n; i++) q[i] = (int8_t)((seed = seed * 1664525u + 1013904223u) >> 24);
      tidsp_qdq_params dq = {n, 1, 1, TIDSP_DTYPE_I8}, tq = {256, 1, 1, TIDSP_DTYPE_I8};
      int8_t codes[256];
      float table[256]; /* what the compiler gives the kernel: dequantize of the 256 codes */
      for (int i = 0; i < 256; i++) codes[i] = (int8_t)(i - 128);
      tidsp_dequantize(&tq, &scale, &zp, codes, table);
      tidsp_reduce_params p;
      memset(&p, 0, sizeof p);
      p.rank = 4;
      p.in_shape[0] = 1;
      for (int d = 0; d < 3; d++) p.in_shape[d + 1] = shapes[s][d];
      p.reduce_mask = 12;
      p.channels_last_order = order;
      double best[2] = {1e9, 1e9};
      for (int round = 0; round < 5; round++) {
        double t0 = now();
        for (int r = 0; r < reps; r++) {
          tidsp_dequantize(&dq, &scale, &zp, q, x);
          tidsp_reduce_mean_f32(&p, x, y0);
        }
        double t1 = now();
        for (int r = 0; r < reps; r++) tidsp_reduce_mean_dq_i8(&p, table, q, y1);
        double t2 = now();
        if (t1 - t0 < best[0]) best[0] = t1 - t0;
        if (t2 - t1 < best[1]) best[1] = t2 - t1;
      }
      printf("order %d [1,%d,%d,%d]: dequantize + reduce_mean_f32 %7.2f us, reduce_mean_dq_i8 %7.2f us, x%.2f, "
             "bytes %s\n",
             order, c, shapes[s][1], shapes[s][2], 1e6 * best[0] / reps, 1e6 * best[1] / reps, best[1] / best[0],
             memcmp(y0, y1, 4 * (size_t)c) ? "DIFFER" : "equal");
      free(q);
      free(x);
      free(y0);
      free(y1);
    }
  return 0;
}
