/*
 * amx_peak.c — this CPU's AMX int8 multiply-accumulate peak for one thread:
 * a loop of tdpbssd instructions (each one a 16×64 by 64×16 int8 product,
 * 16·16·64 = 16384 multiply-accumulates into a 16×16 int32 tile) on six
 * independent accumulator tiles, sources loaded once. The AMX conv kernel's
 * GMAC/s is reported as a share of this number beside the VNNI peak
 * (bench/vnni_peak.c), because a kernel that uses the matrix unit is bounded
 * by it, not by the vector unit.
 *
 * usage: amx_peak [iterations]     prints "peak_gmacs: <GMAC/s>"
 * Built by bench/run.py with -O2; exits 3 if the CPU or the OS does not
 * offer AMX-INT8 (Linux grants the tile state per process with
 * arch_prctl(ARCH_REQ_XCOMP_PERM)).
 */
#define _GNU_SOURCE

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__x86_64__) && defined(__linux__)
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>

enum { CHAINS = 6, MACS_PER_INSN = 16 * 16 * 64 };

typedef struct tile_config {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} tile_config;

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); /* as avx2_peak: time descheduled is not the core's */
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int amx_available(void) {
  unsigned a, b, c, d;
  __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(7), "c"(0));
  if (!((d >> 24) & 1) || !((d >> 25) & 1)) /* AMX-TILE, AMX-INT8 */
    return 0;
  /* ARCH_REQ_XCOMP_PERM (0x1023) for XFEATURE_XTILEDATA (18) */
  return syscall(SYS_arch_prctl, 0x1023, 18) == 0;
}

/* Tiles 0–5 accumulate, 6 and 7 are the sources. */
__attribute__((noinline, target("amx-tile,amx-int8"))) static int32_t run(long iters) {
  static int8_t a[16 * 64] __attribute__((aligned(64)));
  static int8_t b[16 * 64] __attribute__((aligned(64)));
  static int32_t c[16 * 16] __attribute__((aligned(64)));
  tile_config cfg;
  long it;
  int t;
  memset(&cfg, 0, sizeof cfg);
  cfg.palette = 1;
  for (t = 0; t < 8; t++) {
    cfg.colsb[t] = 64;
    cfg.rows[t] = 16;
  }
  memset(a, 3, sizeof a);
  memset(b, -2, sizeof b);
  _tile_loadconfig(&cfg);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  _tile_zero(4);
  _tile_zero(5);
  _tile_loadd(6, a, 64);
  _tile_loadd(7, b, 64);
  for (it = 0; it < iters; it++) {
    _tile_dpbssd(0, 6, 7);
    _tile_dpbssd(1, 6, 7);
    _tile_dpbssd(2, 6, 7);
    _tile_dpbssd(3, 6, 7);
    _tile_dpbssd(4, 6, 7);
    _tile_dpbssd(5, 6, 7);
  }
  _tile_stored(0, c, 64);
  _tile_release();
  return c[0];
}

int main(int argc, char **argv) {
  long iters = argc > 1 ? atol(argv[1]) : 2000000L;
  double best = 0.0;
  int rep;
  if (!amx_available()) {
    fprintf(stderr, "amx_peak: this CPU or OS offers no AMX-INT8\n");
    return 3;
  }
  if (iters < 1000) {
    fprintf(stderr, "amx_peak: iterations must be >= 1000\n");
    return 2;
  }
  for (rep = 0; rep < 5; rep++) {
    double t0 = now_s();
    volatile int32_t sink = run(iters);
    double dt = now_s() - t0;
    double gmacs = (double)iters * CHAINS * MACS_PER_INSN / dt / 1e9;
    (void)sink;
    if (gmacs > best) best = gmacs;
  }
  printf("peak_gmacs: %.2f\n", best);
  return 0;
}
#else
int main(void) {
  fprintf(stderr, "amx_peak: AMX is measured on x86-64 Linux only\n");
  return 3;
}
#endif
