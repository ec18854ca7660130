/*
 * host_clock.c — tidsp_profile_clock on a POSIX host: CLOCK_MONOTONIC in
 * nanoseconds (monotonic, so a wall-clock step never makes a layer's time
 * negative). The C7x build uses c7x_clock.c instead.
 */
#if !defined(__C7000__)
#define _POSIX_C_SOURCE 199309L

#include <time.h>

#include "cstatic/profile.h"

uint64_t tidsp_profile_clock(void) {
  struct timespec ts;
  if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
    return 0;
  return (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
}
#else
typedef int tidsp_host_clock_unused; /* ISO C: no empty translation unit */
#endif
