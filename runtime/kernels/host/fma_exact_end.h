/*
 * fma_exact_end.h — closes the region fma_exact_begin.h opened.
 */
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
