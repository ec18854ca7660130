/*
 * c7x_clock.c — tidsp_profile_clock on C7x: the 64-bit time-stamp counter
 * (__TSC, one tick per CPU cycle), read without a system call so that the
 * probe costs a few cycles. Only the TI compiler builds it; the host uses
 * host_clock.c.
 */
#if defined(__C7000__)
#include <c7x.h>

#include "cstatic/profile.h"

uint64_t tidsp_profile_clock(void) { return (uint64_t)__TSC; }
#else
typedef int tidsp_c7x_clock_unused; /* ISO C: no empty translation unit */
#endif
