/*
 * c7x.h — HOST STAND-IN for TI's <c7x.h>, the C7000 compiler's intrinsics
 * header (ti-cgt-c7000). It is not TI's header and holds nothing of it.
 *
 * The generated sources of the c7x flavour (-mcpu=c7x) include
 * <c7x.h> when the TI compiler builds them and this file otherwise, so
 * that the host compiler can check that C and `cstatic run` can run it.
 * It holds, as host C, exactly what generated code uses of the header:
 *
 *   __TSC  the 64-bit time-stamp counter (-profile-layers=1, through
 *          cstatic/profile.h's TIDSP_PROFILE_NOW). On C7x a control
 *          register, one tick per CPU cycle. Here an emulated C7x at
 *          TIDSP_C7X_CLOCK_HZ (1 GHz): one cycle per nanosecond of the
 *          runtime's monotonic clock, tidsp_profile_clock() — the clock the
 *          firmware emulator counts its INFER cycles in, and a symbol it
 *          exports, so a module needs nothing else to read it.
 */
#ifndef CSTATIC_TI_STUB_C7X_H
#define CSTATIC_TI_STUB_C7X_H

#if defined(__TI_COMPILER_VERSION__)
#error "cstatic/platform/ti_stub/c7x.h is the host stand-in: the TI compiler must use its own <c7x.h>"
#endif

/* It stands for a system header (TI's compiler defines __TSC there), so
 * the compilers treat it as one: the reserved name is the header's, not
 * the generated C's (clang -Weverything checks the generated C). */
#pragma GCC system_header

/* Lets code (and tests) tell the stand-in from TI's header. */
#define CSTATIC_TI_STUB_C7X 1

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

uint64_t tidsp_profile_clock(void);
#define __TSC (tidsp_profile_clock())

#ifdef __cplusplus
}
#endif

#endif /* CSTATIC_TI_STUB_C7X_H */
