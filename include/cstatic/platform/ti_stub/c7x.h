/*
 * c7x.h — HOST STAND-IN for TI's <c7x.h>, the C7000 compiler's intrinsics
 * header (ti-cgt-c7000). It is not TI's header and holds nothing of it.
 *
 * The generated sources of the c7x flavour (-mcpu=c7x) include
 * <c7x.h> when the TI compiler builds them and this file otherwise, so
 * that the host compiler can check that C and `cstatic run` can run it.
 * The generated code uses no declaration of the header today, so the
 * stand-in only has to exist; add here, as host C, exactly what generated
 * code starts to use.
 */
#ifndef CSTATIC_TI_STUB_C7X_H
#define CSTATIC_TI_STUB_C7X_H

#if defined(__TI_COMPILER_VERSION__)
#error "cstatic/platform/ti_stub/c7x.h is the host stand-in: the TI compiler must use its own <c7x.h>"
#endif

/* Lets code (and tests) tell the stand-in from TI's header. */
#define CSTATIC_TI_STUB_C7X 1

#endif /* CSTATIC_TI_STUB_C7X_H */
