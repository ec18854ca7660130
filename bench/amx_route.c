/*
 * amx_route.c — where the host_amx row's conv should use its tiles: for a
 * grid of convolutions (1×1 and 3×3, C_in 3–256, C_out 16–512, 56×56 and
 * 14×14 inputs, stride 1 and 2, per-channel FLOAT), the time of the AMX tiles
 * (tidsp_conv2d_i8__host_amx_tiles), of the VNNI kernel, and of the
 * host_amx entry, which picks one of them per layer
 * (conv2d_i8__host_amx.c amx_pays). One line per layer: tiles/VNNI and
 * entry/best (1.00: the entry took the faster one); then the worst and
 * the geometric mean of entry/best, and beside it the geometric means of
 * tiles/best and VNNI/best (either kernel on every layer). Then the same for int8 matrix
 * products (tidsp_matmul_i8: M rows 1–197, K 64–768, N 64–768;
 * matmul_i8__host_amx.c's choice). Thread CPU time, median of 15.
 *
 * usage: amx_route   (on a CPU without AMX it says so and exits 0)
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under -std=c99 */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../runtime/kernels/kernel_variants.h"

#if TIDSP_HAVE_HOST_X86

enum { REPEATS = 15 };

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* One call of a kernel under test: a conv or a matrix product. */
typedef int32_t (*matmul_fn)(const tidsp_matmul_params *, const int8_t *, const int8_t *, const int32_t *,
                             const void *, int8_t *);
typedef struct call {
  tidsp_conv2d_i8_fn conv;
  const tidsp_conv2d_params *cp;
  matmul_fn matmul;
  const tidsp_matmul_params *mp;
  const int8_t *x, *w;
  const int32_t *bias;
  const float *mult;
  int8_t *y;
} call;

static void run(const call *c) {
  if (c->conv)
    c->conv(c->cp, c->x, c->w, c->bias, c->mult, c->y);
  else
    c->matmul(c->mp, c->x, c->w, c->bias, c->mult, c->y);
}

/* Median seconds of REPEATS calls after one warm-up. */
static double median_s(const call *c) {
  double t[REPEATS];
  int r;
  run(c);
  for (r = 0; r < REPEATS; r++) {
    double t0 = now_s();
    run(c);
    t[r] = now_s() - t0;
  }
  qsort(t, REPEATS, sizeof(double), cmp_double);
  return t[REPEATS / 2];
}

/* Each kernel's time over the faster one's, summed over a grid. */
typedef struct tally {
  int n;
  double worst, log_entry, log_tiles, log_vnni;
} tally;

static void tally_add(tally *t, double t_tiles, double t_vnni, double t_entry) {
  const double best = t_tiles < t_vnni ? t_tiles : t_vnni;
  if (t_entry / best > t->worst) t->worst = t_entry / best;
  t->log_entry += log(t_entry / best);
  t->log_tiles += log(t_tiles / best);
  t->log_vnni += log(t_vnni / best);
  t->n++;
}

static void tally_print(const tally *t, const char *what) {
  printf("entry/best over %d %s: worst %.2f, geometric mean %.3f (tiles everywhere %.3f, VNNI everywhere %.3f)\n",
         t->n, what, t->worst, exp(t->log_entry / t->n), exp(t->log_tiles / t->n), exp(t->log_vnni / t->n));
}

/* The matrix products' grid: prints its lines, adds them to *t. */
static void matmul_grid(tally *t) {
  static const int32_t ms[] = {1, 2, 3, 4, 16, 64, 197}, ks[] = {64, 96, 128, 192, 256, 384, 768};
  static const int32_t ns[] = {64, 192, 768};
  int a, b, c;
  for (a = 0; a < (int)(sizeof ms / sizeof ms[0]); a++)
    for (b = 0; b < (int)(sizeof ks / sizeof ks[0]); b++)
      for (c = 0; c < (int)(sizeof ns / sizeof ns[0]); c++) {
        tidsp_matmul_params p;
        size_t nx, nw, i;
        int8_t *x, *w, *y;
        int32_t *bias;
        float *mult;
        double t_tiles, t_vnni, t_entry, best;
        memset(&p, 0, sizeof p);
        p.m = ms[a], p.k = ks[b], p.n = ns[c], p.x_zp = -3;
        p.rq.kind = TIDSP_REQUANT_FLOAT, p.rq.per_channel = 1, p.rq.out_min = -128, p.rq.out_max = 127;
        nx = (size_t)p.m * (size_t)p.k, nw = (size_t)p.n * (size_t)p.k;
        x = malloc(nx), w = malloc(nw), y = malloc((size_t)p.m * (size_t)p.n);
        bias = calloc((size_t)p.n, sizeof *bias), mult = malloc(sizeof *mult * (size_t)p.n);
        for (i = 0; i < nx; i++) x[i] = (int8_t)(i * 37u);
        for (i = 0; i < nw; i++) w[i] = (int8_t)(i * 11u);
        for (i = 0; i < (size_t)p.n; i++) mult[i] = 1e-4f;
        call c_tiles = {NULL, NULL, tidsp_matmul_i8__host_amx_tiles, &p, x, w, bias, mult, y};
        call c_vnni = c_tiles, c_entry = c_tiles;
        c_vnni.matmul = tidsp_matmul_i8__host_avx512vnni;
        c_entry.matmul = tidsp_matmul_i8__host_amx;
        t_tiles = median_s(&c_tiles), t_vnni = median_s(&c_vnni), t_entry = median_s(&c_entry);
        best = t_tiles < t_vnni ? t_tiles : t_vnni;
        printf("route mm %3dx%-3dx%-3d  tiles/vnni %.2f  entry/best %.2f\n", (int)p.m, (int)p.k, (int)p.n,
               t_tiles / t_vnni, t_entry / best);
        tally_add(t, t_tiles, t_vnni, t_entry);
        free(x), free(w), free(y), free(bias), free(mult);
      }
}

int main(void) {
  static const int32_t c_ins[] = {3, 16, 24, 32, 48, 64, 96, 128, 192, 256};
  static const int32_t c_outs[] = {16, 24, 32, 48, 64, 96, 128, 192, 256, 512};
  static const int32_t ks[] = {1, 3}, sides[] = {56, 14};
  tally convs = {0, 0.0, 0.0, 0.0, 0.0}, products = {0, 0.0, 0.0, 0.0, 0.0};
  int a, b, ki, si, st;
  if (!tidsp_host_amx_supported()) {
    printf("amx_route: this CPU/OS has no AMX-INT8 tiles for us\n");
    return 0;
  }
  for (st = 1; st <= 2; st++)
    for (ki = 0; ki < 2; ki++)
      for (si = 0; si < 2; si++)
        for (a = 0; a < (int)(sizeof c_ins / sizeof c_ins[0]); a++)
          for (b = 0; b < (int)(sizeof c_outs / sizeof c_outs[0]); b++) {
            tidsp_conv2d_params p;
            const int32_t k = ks[ki], side = sides[si];
            size_t nx, nw, ny, i;
            int8_t *x, *w, *y;
            int32_t *bias;
            float *mult;
            double t_tiles, t_vnni, t_entry, best;
            if (k == 3 && c_ins[a] > 64)
              continue;
            memset(&p, 0, sizeof p);
            p.n = 1, p.c_in = c_ins[a], p.c_out = c_outs[b], p.groups = 1;
            p.h_in = p.w_in = side;
            p.h_out = p.w_out = (side - 1) / st + 1;
            p.k_h = p.k_w = k, p.stride_h = p.stride_w = st, p.dil_h = p.dil_w = 1;
            p.pad_top = p.pad_left = k / 2, p.x_zp = -3;
            p.rq.kind = TIDSP_REQUANT_FLOAT, p.rq.per_channel = 1, p.rq.out_min = -128, p.rq.out_max = 127;
            nx = (size_t)p.c_in * (size_t)(side * side);
            nw = (size_t)p.c_out * (size_t)p.c_in * (size_t)(k * k);
            ny = (size_t)p.c_out * (size_t)(p.h_out * p.w_out);
            x = malloc(nx), w = malloc(nw), y = malloc(ny);
            bias = calloc((size_t)p.c_out, sizeof *bias), mult = malloc(sizeof *mult * (size_t)p.c_out);
            for (i = 0; i < nx; i++) x[i] = (int8_t)(i * 37u);
            for (i = 0; i < nw; i++) w[i] = (int8_t)(i * 11u);
            for (i = 0; i < (size_t)p.c_out; i++) mult[i] = 1e-4f;
            call c_tiles = {tidsp_conv2d_i8__host_amx_tiles, &p, NULL, NULL, x, w, bias, mult, y};
            call c_vnni = c_tiles, c_entry = c_tiles;
            c_vnni.conv = tidsp_conv2d_i8__host_avx512vnni;
            c_entry.conv = tidsp_conv2d_i8__host_amx;
            t_tiles = median_s(&c_tiles), t_vnni = median_s(&c_vnni), t_entry = median_s(&c_entry);
            best = t_tiles < t_vnni ? t_tiles : t_vnni;
            printf("route s%d k%d %2dx%-2d %3d->%-3d K %4d  tiles/vnni %.2f  entry/best %.2f\n", st, (int)k, (int)side,
                   (int)side, (int)p.c_in, (int)p.c_out, (int)(p.c_in * k * k), t_tiles / t_vnni, t_entry / best);
            tally_add(&convs, t_tiles, t_vnni, t_entry);
            free(x), free(w), free(y), free(bias), free(mult);
          }
  tally_print(&convs, "layers");
  matmul_grid(&products);
  tally_print(&products, "products");
  return 0;
}

#else /* no x86 host kernels in this build */

int main(void) {
  printf("amx_route: no x86 host kernels in this build\n");
  return 0;
}

#endif
