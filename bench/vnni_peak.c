/*
 * vnni_peak.c — this CPU's int8 multiply-accumulate peak for one thread:
 * a loop of independent AVX-512 VNNI vpdpbusd instructions (each one 64
 * u8×s8 products summed into 16 int32 lanes), enough accumulators to hide
 * the instruction's latency. The fast conv kernel's GMAC/s is reported as
 * a share of this number.
 *
 * usage: vnni_peak [iterations]     prints "peak_gmacs: <GMAC/s>"
 * Built by bench/run.py with -O2 -mavx512f -mavx512vnni; exits 3 if the
 * CPU has no AVX-512 VNNI.
 */
#define _POSIX_C_SOURCE 199309L

#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { CHAINS = 12, MACS_PER_INSN = 64 };

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* as avx2_peak: time descheduled is not the core's */
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* noinline: the loop is timed as one unit, never folded into main. The
 * twelve accumulators are separate variables so that they live in
 * registers (an array of them ends up in memory). */
__attribute__((noinline)) static int32_t run(long iters, __m512i a, __m512i b) {
  __m512i c0 = _mm512_set1_epi32(0), c1 = _mm512_set1_epi32(1), c2 = _mm512_set1_epi32(2);
  __m512i c3 = _mm512_set1_epi32(3), c4 = _mm512_set1_epi32(4), c5 = _mm512_set1_epi32(5);
  __m512i c6 = _mm512_set1_epi32(6), c7 = _mm512_set1_epi32(7), c8 = _mm512_set1_epi32(8);
  __m512i c9 = _mm512_set1_epi32(9), c10 = _mm512_set1_epi32(10), c11 = _mm512_set1_epi32(11);
  long it;
  for (it = 0; it < iters; it++) {
    /* The asm barrier keeps every vpdpbusd: the compiler cannot see that
     * b is loop-invariant and hoist or merge the products. */
    __asm__ volatile("" : "+v"(b));
    c0 = _mm512_dpbusd_epi32(c0, a, b);
    c1 = _mm512_dpbusd_epi32(c1, a, b);
    c2 = _mm512_dpbusd_epi32(c2, a, b);
    c3 = _mm512_dpbusd_epi32(c3, a, b);
    c4 = _mm512_dpbusd_epi32(c4, a, b);
    c5 = _mm512_dpbusd_epi32(c5, a, b);
    c6 = _mm512_dpbusd_epi32(c6, a, b);
    c7 = _mm512_dpbusd_epi32(c7, a, b);
    c8 = _mm512_dpbusd_epi32(c8, a, b);
    c9 = _mm512_dpbusd_epi32(c9, a, b);
    c10 = _mm512_dpbusd_epi32(c10, a, b);
    c11 = _mm512_dpbusd_epi32(c11, a, b);
  }
  c0 = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(c0, c1), _mm512_add_epi32(c2, c3)),
                        _mm512_add_epi32(_mm512_add_epi32(c4, c5), _mm512_add_epi32(c6, c7)));
  c0 = _mm512_add_epi32(c0, _mm512_add_epi32(_mm512_add_epi32(c8, c9), _mm512_add_epi32(c10, c11)));
  return _mm512_reduce_add_epi32(c0);
}

int main(int argc, char **argv) {
  long iters = argc > 1 ? atol(argv[1]) : 20000000L;
  double best = 0.0;
  int rep;
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512vnni")) {
    fprintf(stderr, "vnni_peak: this CPU has no AVX-512 VNNI\n");
    return 3;
  }
  if (iters < 1000) {
    fprintf(stderr, "vnni_peak: iterations must be >= 1000\n");
    return 2;
  }
  /* Best of 5: the peak is what the core can do when nothing interferes. */
  for (rep = 0; rep < 5; rep++) {
    double t0 = now_s();
    volatile int32_t sink = run(iters, _mm512_set1_epi8(3), _mm512_set1_epi8(-2));
    double dt = now_s() - t0;
    double gmacs = (double)iters * CHAINS * MACS_PER_INSN / dt / 1e9;
    (void)sink;
    if (gmacs > best) best = gmacs;
  }
  printf("peak_gmacs: %.2f\n", best);
  return 0;
}
