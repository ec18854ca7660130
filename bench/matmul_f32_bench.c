/*
 * matmul_f32_bench.c — times tidsp_matmul_f32 (the dispatched variant:
 * host_mlas on x86 with FMA) on the float attention products PT2E
 * transformers keep (B computed at run time): ViT-B/16's Q·Kᵀ and A·V
 * (12 heads, 197 tokens, 64 per head) and Swin-T's window attention
 * (49 tokens, 32 per head, 3 heads × 64 windows), and a batch-1
 * classifier (M = 1: one row of tiles) and a float MLP layer. Prints the median
 * thread CPU time per call and GMAC/s, and a checksum of the output bytes
 * (equal checksums across two builds: the same bytes).
 *
 * Not built by CMake: link it against the library to measure, e.g. a
 * branch against main's build, side by side under `taskset -c 0`:
 *   cc -O2 -Iinclude bench/matmul_f32_bench.c build/lib/libtidsp.a -lm -o /tmp/mmb
 *   taskset -c 0 /tmp/mmb [repeats]
 */
#include "f32_bench.h"

static void run(const char *name, int32_t batch, int32_t m, int32_t k, int32_t n, int repeats) {
  tidsp_matmul_f32_params p = {.batch = batch, .m = m, .k = k, .n = n,
                               .a_batch_stride = m * k, .b_batch_stride = k * n, .b_runtime = 1};
  const size_t na = (size_t)batch * m * k, nb = (size_t)batch * k * n, ny = (size_t)batch * m * n;
  float *a = malloc(na * sizeof(float)), *b = malloc(nb * sizeof(float)), *y = malloc(ny * sizeof(float));
  double *t = malloc((size_t)repeats * sizeof(double));
  uint32_t seed = 12345u, sum = 0;
  size_t i;
  int r;
  for (i = 0; i < na; i++)
    a[i] = (float)(lcg(&seed) >> 8) / 16777216.0f - 0.5f;
  for (i = 0; i < nb; i++)
    b[i] = (float)(lcg(&seed) >> 8) / 16777216.0f - 0.5f;
  for (r = 0; r < repeats; r++) {
    double t0 = now_s();
    if (tidsp_matmul_f32(&p, a, b, NULL, y) != TIDSP_OK) {
      fprintf(stderr, "%s: kernel error\n", name);
      exit(1);
    }
    t[r] = now_s() - t0;
  }
  sum = fnv_floats(y, ny, sum);
  median_s(t, repeats);
  printf("%-22s %3dx[%dx%d·%dx%d] %9.3f ms %7.2f GMAC/s  bytes %08x\n", name, (int)batch, (int)m, (int)k,
         (int)k, (int)n, 1e3 * t[repeats / 2], (double)ny * (double)k / t[repeats / 2] * 1e-9, sum);
  free(a);
  free(b);
  free(y);
  free(t);
}

int main(int argc, char **argv) {
  const int repeats = argc > 1 ? atoi(argv[1]) : 9;
  if (repeats < 1)
    return 2;
  run("vit_b_16 Q·Kᵀ", 12, 197, 64, 197, repeats);
  run("vit_b_16 A·V", 12, 197, 197, 64, repeats);
  run("swin_t Q·Kᵀ (stage 1)", 192, 49, 32, 49, repeats);
  run("swin_t A·V (stage 1)", 192, 49, 49, 32, repeats);
  run("classifier (M = 1)", 1, 1, 512, 1000, repeats);
  run("MLP 197x768x3072", 1, 197, 768, 3072, repeats);
  return 0;
}
