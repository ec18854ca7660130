/*
 * fma_exact_begin.h — opens the AVX2+FMA region of a host float kernel
 * that must round as its reference (or as ONNX Runtime's MLAS): only the
 * fused multiply-adds written as such (fmaf, _mm*_fmadd_*) are fused;
 * -std=gnu11 would otherwise let GCC contract e.g. (x·s) − mean, which the
 * reference rounds twice. Include it inside `#if TIDSP_HAVE_HOST_X86`;
 * the includer closes the region with `#pragma GCC pop_options`.
 */
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#if defined(__clang__)
#pragma clang fp contract(off)
#else
#pragma GCC optimize("fp-contract=off")
#endif
