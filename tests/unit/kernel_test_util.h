/*
 * kernel_test_util.h — what every kernel test needs: a seeded xorshift
 * generator and output buffers with guard bytes on both sides that catch
 * overruns. Define GUARD (bytes per side) and KT_SEED before including.
 */
#ifndef CSTATIC_KERNEL_TEST_UTIL_H
#define CSTATIC_KERNEL_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef GUARD
#define GUARD 32
#endif
#define GUARD_BYTE 0xA5

static uint64_t rng_state = KT_SEED;

static inline uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 11);
}

/* Uniform in [lo, hi]. */
static inline int32_t rnd_range(int32_t lo, int32_t hi) {
  return lo + (int32_t)(rnd() % (uint32_t)(hi - lo + 1));
}

/* Uniform in [0, 1). */
static inline float rnd_unit(void) { return (float)(rnd() & 0xFFFFFF) / 16777216.0f; }

/* n bytes with GUARD guard bytes before and after. */
static inline void *guarded(size_t n) {
  uint8_t *b = malloc(n + 2 * GUARD);
  memset(b, GUARD_BYTE, n + 2 * GUARD);
  return b + GUARD;
}

static inline int guards_ok(const void *p, size_t n) {
  const uint8_t *b = (const uint8_t *)p;
  size_t i;
  for (i = 0; i < GUARD; i++) {
    if (b[-1 - (ptrdiff_t)i] != GUARD_BYTE || b[n + i] != GUARD_BYTE)
      return 0;
  }
  return 1;
}

static inline void guarded_free(void *p) { free((uint8_t *)p - GUARD); }

#endif
