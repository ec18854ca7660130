/*
 * host_clock.c — tidsp_profile_clock in nanoseconds: CLOCK_MONOTONIC on a
 * POSIX host (monotonic, so a wall-clock step never makes a layer's time
 * negative); where the C library has no monotonic clock (newlib on a
 * microcontroller) ISO C's clock(), which newlib serves through its
 * _times() syscall — a board replaces this file by its own
 * tidsp_profile_clock (a cycle counter; docs/porting.md). The C7x build
 * uses c7x_clock.c instead.
 */
#if !defined(__C7000__)
#define _POSIX_C_SOURCE 199309L

#include <time.h>

#include "cstatic/profile.h"

uint64_t tidsp_profile_clock(void) {
#if defined(CLOCK_MONOTONIC)
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
    return 0;
  return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
#else
  const clock_t c = clock();
  if (c == (clock_t)-1)
    return 0;
  return (uint64_t)c * UINT64_C(1000000000) / (uint64_t)CLOCKS_PER_SEC;
#endif
}
#else
typedef int tidsp_host_clock_unused; /* ISO C: no empty translation unit */
#endif
