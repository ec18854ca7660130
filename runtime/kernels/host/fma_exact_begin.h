/*
 * fma_exact_begin.h — opens the AVX2+FMA region of a host float kernel
 * that must round as its reference (or as ONNX Runtime's MLAS): only the
 * fused multiply-adds written as such (fmaf, _mm*_fmadd_*) are fused;
 * -std=gnu11 would otherwise let GCC contract e.g. (x·s) − mean, which the
 * reference rounds twice. Include it inside `#if TIDSP_HAVE_HOST_X86`;
 * the includer closes the region with fma_exact_end.h.
 */
#if defined(__clang__)
/* clang has no GCC target pragma: the same region as an attribute on
 * every function it defines */
#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#pragma clang fp contract(off)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma")
#pragma GCC optimize("fp-contract=off")
#endif
