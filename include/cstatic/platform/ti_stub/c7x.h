/*
 * c7x.h — HOST STAND-IN for TI's <c7x.h> (the C7000 compiler's intrinsics
 * header, shipped with ti-cgt-c7000). Not TI's header; it holds nothing of it.
 *
 * The c7x flavour (-mcpu=c7x) of a compiled model includes <c7x.h> when built by
 * the TI compiler and this file otherwise, so that the host compiler can
 * check the DSP flavour's C (and `cstatic run` can run it). The generated
 * code uses no declaration from the header today: this stand-in only has to
 * exist. Add here, as host C, exactly what generated code starts to use.
 */
#ifndef CSTATIC_TI_STUB_C7X_H
#define CSTATIC_TI_STUB_C7X_H

#if defined(__TI_COMPILER_VERSION__)
#error "cstatic/platform/ti_stub/c7x.h is the host stand-in; the TI compiler must use its own <c7x.h>"
#endif

/* Lets code (and tests) tell the stand-in from TI's header. */
#define CSTATIC_TI_STUB_C7X 1

#endif /* CSTATIC_TI_STUB_C7X_H */
