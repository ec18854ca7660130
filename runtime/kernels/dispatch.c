/*
 * dispatch.c — the public names of kernels that have variants, and the one
 * table that chooses among them (see kernel_variants.h).
 *
 * The choice is made at the first call of any dispatched kernel (cpuid via
 * the compiler's CPU-feature builtins) and never changes afterwards, so a
 * run is reproducible. The runtime is single-threaded per model; two threads
 * racing on the very first call would both compute and store the same
 * pointer. TIDSP_KERNELS=<name> in the environment picks a row by name
 * (e.g. "ref" to compare against the reference on the same build); an
 * unknown or unsupported name falls back to the automatic choice.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel_variants.h"

static int always(void) { return 1; }

#if TIDSP_HAVE_HOST_X86
/* __builtin_cpu_supports also checks that the OS saves the wide registers. */
static int cpu_avx512vnni(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") &&
         __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vnni");
}
static int cpu_avx2(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
}
#endif

const tidsp_kernel_variant tidsp_kernel_variants[] = {
#if TIDSP_HAVE_HOST_X86
    {"host_avx512vnni", cpu_avx512vnni, tidsp_conv2d_i8__host_avx512vnni,
     tidsp_matmul_i8__host_avx512vnni, tidsp_dwconv2d_i8__host_avx512vnni},
    {"host_avx2", cpu_avx2, tidsp_conv2d_i8__host_avx2,
     tidsp_matmul_i8__host_avx2, tidsp_dwconv2d_i8__host_avx2},
#endif
    {"ref", always, tidsp_conv2d_i8__ref, tidsp_matmul_i8__ref,
     tidsp_conv2d_i8__ref},
};
const int32_t tidsp_kernel_variant_count =
    (int32_t)(sizeof(tidsp_kernel_variants) / sizeof(tidsp_kernel_variants[0]));

static const tidsp_kernel_variant *active;

static const tidsp_kernel_variant *choose(void) {
  const char *want = getenv("TIDSP_KERNELS");
  int32_t i;
  if (want) {
    for (i = 0; i < tidsp_kernel_variant_count; i++) {
      if (strcmp(want, tidsp_kernel_variants[i].name) == 0 &&
          tidsp_kernel_variants[i].supported())
        return &tidsp_kernel_variants[i];
    }
  }
  for (i = 0; i < tidsp_kernel_variant_count; i++) {
    if (tidsp_kernel_variants[i].supported())
      return &tidsp_kernel_variants[i];
  }
  return &tidsp_kernel_variants[tidsp_kernel_variant_count - 1];
}

const tidsp_kernel_variant *tidsp_kernel_variant_active(void) {
  if (!active)
    active = choose();
  return active;
}

int32_t tidsp_conv2d_i8(const tidsp_conv2d_params *p, const int8_t *x,
                        const int8_t *w, const int32_t *bias, const void *rq,
                        int8_t *y) {
  const tidsp_kernel_variant *v = tidsp_kernel_variant_active();
  /* depthwise layers waste most of the general path's channel tiles */
  if (tidsp_conv2d_is_depthwise(p))
    return v->dwconv2d_i8(p, x, w, bias, rq, y);
  return v->conv2d_i8(p, x, w, bias, rq, y);
}

int32_t tidsp_matmul_i8(const tidsp_matmul_params *p, const int8_t *x,
                        const int8_t *w, const int32_t *bias, const void *rq,
                        int8_t *y) {
  return tidsp_kernel_variant_active()->matmul_i8(p, x, w, bias, rq, y);
}
