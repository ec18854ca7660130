/*
 * avx2_peak.c — this CPU's exact int8 multiply-accumulate peak for one
 * thread with AVX2 (no VNNI): a loop of the instruction sequence the
 * host_avx2 conv and matmul micro-kernels run, on enough independent
 * accumulators to hide its latency:
 *   vpmaddwd t, x, w ; vpaddd acc, acc, t
 * (x and w int8 values widened to int16: 8 lanes × 2 exact products per
 * vpmaddwd, summed into int32 without saturation: 16 MACs per pair of
 * instructions). For reference it also times the inexact sequence of
 * ONNX Runtime's default u8s8 kernels on such CPUs,
 *   vpmaddubsw t, u8, s8 ; vpmaddwd t, t, ones ; vpaddd acc, acc, t
 * (32 MACs, but vpmaddubsw adds each pair of u8·s8 products in int16 with
 * saturation, so it is exact only when the pair sums fit int16).
 *
 * The loops are inline assembly: compiled from intrinsics, the twelve
 * identical vpmaddwd of an iteration would be computed once. Each loop is
 * timed by the thread's CPU time (the clock the kernels' benchmarks use),
 * best of 7.
 *
 * usage: avx2_peak [iterations]   prints "peak_gmacs: <GMAC/s>" (vpmaddwd
 * + vpaddd) and "maddubs_gmacs: <GMAC/s>"; exits 3 if the CPU has no AVX2.
 * Built by bench/run.py with -O2 (no -mavx2 needed: the loops are asm).
 */
#define _POSIX_C_SOURCE 199309L

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { CHAINS = 12, REPS = 7 };

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define CLOBBER                                                                              \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",  \
      "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc"
/* acc += madd(x = ymm12, w = ymm13) via the temporary ymm14 */
#define MADD(acc) "vpmaddwd %%ymm13, %%ymm12, %%ymm14\n\tvpaddd %%ymm14, %%" acc ", %%" acc "\n\t"
/* acc += madd(maddubs(u8 = ymm12, s8 = ymm13), ones = ymm15) */
#define MADDUBS(acc)                                                                         \
  "vpmaddubsw %%ymm13, %%ymm12, %%ymm14\n\tvpmaddwd %%ymm15, %%ymm14, %%ymm14\n\t"          \
  "vpaddd %%ymm14, %%" acc ", %%" acc "\n\t"
#define TWELVE(M)                                                                            \
  M("ymm0") M("ymm1") M("ymm2") M("ymm3") M("ymm4") M("ymm5") M("ymm6") M("ymm7") M("ymm8") \
      M("ymm9") M("ymm10") M("ymm11")

__attribute__((noinline)) static void run_madd(long iters) {
  __asm__ volatile("vpxor %%xmm12, %%xmm12, %%xmm12\n\tvpxor %%xmm13, %%xmm13, %%xmm13\n\t"
                   "1:\n\t" TWELVE(MADD) "dec %0\n\tjnz 1b\n\tvzeroupper"
                   : "+r"(iters)
                   :
                   : CLOBBER);
}

__attribute__((noinline)) static void run_maddubs(long iters) {
  __asm__ volatile("vpxor %%xmm12, %%xmm12, %%xmm12\n\tvpxor %%xmm13, %%xmm13, %%xmm13\n\t"
                   "vpxor %%xmm15, %%xmm15, %%xmm15\n\t"
                   "1:\n\t" TWELVE(MADDUBS) "dec %0\n\tjnz 1b\n\tvzeroupper"
                   : "+r"(iters)
                   :
                   : CLOBBER);
}

/* Best GMAC/s of REPS timed runs of f, macs_per_iter MACs per iteration. */
static double best_gmacs(void (*f)(long), long iters, double macs_per_iter) {
  double best = 0.0;
  int rep;
  for (rep = 0; rep < REPS; rep++) {
    const double t0 = now_s();
    double dt, g;
    f(iters);
    dt = now_s() - t0;
    g = dt > 0.0 ? (double)iters * macs_per_iter / dt * 1e-9 : 0.0;
    if (g > best)
      best = g;
  }
  return best;
}

int main(int argc, char **argv) {
  const long iters = argc > 1 ? atol(argv[1]) : 20000000L;
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2")) {
    fprintf(stderr, "avx2_peak: this CPU has no AVX2\n");
    return 3;
  }
  if (iters < 1000) {
    fprintf(stderr, "avx2_peak: iterations must be >= 1000, got '%s'\n", argv[1]);
    return 2;
  }
  printf("peak_gmacs: %.2f\n", best_gmacs(run_madd, iters, CHAINS * 16.0));
  printf("maddubs_gmacs: %.2f\n", best_gmacs(run_maddubs, iters, CHAINS * 32.0));
  return 0;
}
