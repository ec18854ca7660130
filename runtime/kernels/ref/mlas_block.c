/*
 * mlas_block.c — MLAS's NCHWc channel block on this CPU: the one place
 * that asks the CPU, for every float kernel that follows ONNX Runtime's
 * layouts (the host MLAS-order kernels pick their vector width from it,
 * the reference ones the TIDSP_MLAS_BLOCK* bit of their params flags).
 *
 * MLAS picks its kernels at run time: block 16 with AVX-512F, 8 with AVX2 +
 * FMA3, and no NCHWc FMA kernels below that. Off x86 (the DSPs, Arm) there
 * is no MLAS order to follow and no cpuid: block 0, whose layout bit is
 * block 16's, the CPUs the compiler's decisions were first verified on.
 */
#include "../kernel_variants.h"

int32_t tidsp_mlas_f32_block(void) {
#if TIDSP_HAVE_HOST_X86
  /* Asked once, as dispatch.c asks for its row: two threads racing on
   * the first call both compute the same value and store it whole. */
  static int32_t block = -1;
  if (block < 0) {
    int32_t b = 0;
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f"))
      b = 16;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      b = 8;
    block = b;
  }
  return block;
#else
  return 0;
#endif
}

int32_t tidsp_mlas_block_bit(void) {
  return tidsp_mlas_f32_block() == 8 ? TIDSP_MLAS_BLOCK8 : TIDSP_MLAS_BLOCK16;
}
