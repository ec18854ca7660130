/*
 * f32_bench.h — the harness the float kernel benches share
 * (conv_f32_bench.c, matmul_f32_bench.c, eltwise_f32_bench.c): thread CPU
 * time, the median of a run's repeats, a seeded fill, and an FNV-1a
 * checksum of output bytes (equal checksums across two builds: the same
 * bytes). Each bench is one file that CMake does not build; its header
 * gives the build line.
 */
#ifndef CSTATIC_F32_BENCH_H
#define CSTATIC_F32_BENCH_H

#define _POSIX_C_SOURCE 199309L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cstatic/kernels.h"

/* The calling thread's CPU time: time spent descheduled on a shared
 * machine is not the kernel's. */
static inline double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* The median of t[0..n) (sorts t). */
static inline double median_s(double *t, int n) {
  qsort(t, (size_t)n, sizeof(double), cmp_double);
  return t[n / 2];
}

static inline uint32_t lcg(uint32_t *s) { return *s = *s * 1664525u + 1013904223u; }

/* n floats uniform in [-0.5, 0.5) from seed *s. */
static inline void fill_uniform(float *x, size_t n, uint32_t *s) {
  size_t i;
  for (i = 0; i < n; i++)
    x[i] = (float)(lcg(s) >> 8) / 16777216.0f - 0.5f;
}

/* FNV-1a over the bytes of n floats, continuing from h. */
static inline uint32_t fnv_floats(const float *y, size_t n, uint32_t h) {
  size_t i;
  for (i = 0; i < n; i++) {
    const unsigned char *c = (const unsigned char *)&y[i];
    int j;
    for (j = 0; j < 4; j++)
      h = (h ^ c[j]) * 16777619u;
  }
  return h;
}

/* A kernel call that failed ends the bench. */
static inline void bench_ok(int32_t st, const char *name) {
  if (st != TIDSP_OK) {
    fprintf(stderr, "%s: kernel error %d\n", name, (int)st);
    exit(1);
  }
}

#endif
