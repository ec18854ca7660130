/*
 * channel_affine_i8__host_avx2.c — tidsp_channel_affine_i8 with AVX2: the
 * row loop of channel_affine_i8_body.h (see there) on 8 values at a time;
 * a row's last inner % 8 values take the reference's formula.
 */
#include "../kernel_variants.h"
#include "../ref/channel_affine_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define W 8
#define VEC __m256
#define VECI __m256i
#define T __attribute__((target("avx2")))
#define VSET1(x) _mm256_set1_ps(x)
#define VSET1_I32(x) _mm256_set1_epi32(x)
#define VZERO() _mm256_setzero_ps()
#define VMUL(a, b) _mm256_mul_ps((a), (b))
#define VADD(a, b) _mm256_add_ps((a), (b))
#define VDIV(a, b) _mm256_div_ps((a), (b))
#define VMAX(a, b) _mm256_max_ps((a), (b))
#define VMIN(a, b) _mm256_min_ps((a), (b))
#define VSUB_I32(a, b) _mm256_sub_epi32((a), (b))
#define VADD_I32(a, b) _mm256_add_epi32((a), (b))
#define VCVT_F32(a) _mm256_cvtepi32_ps(a)
#define VCVT_I32(a) _mm256_cvtps_epi32(a)
#define VLOAD_I8(p, n) ((void)(n), _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)(p))))
/* int8 values already: the saturating packs keep them, in order (a
 * statement, not an inline function: as a function it changes GCC's
 * register choice in the loop) */
#define VSTORE_I8(p, n, q)                                                                                           \
  do {                                                                                                               \
    const __m256i q_ = (q);                                                                                          \
    const __m128i w_ = _mm_packs_epi32(_mm256_castsi256_si128(q_), _mm256_extracti128_si256(q_, 1));                 \
    (void)(n);                                                                                                       \
    _mm_storel_epi64((__m128i *)(void *)(p), _mm_packs_epi16(w_, w_));                                               \
  } while (0)
#define VPARTIAL 0
#define KERNEL tidsp_channel_affine_i8__host_avx2
#include "channel_affine_i8_body.h"

#endif /* TIDSP_HAVE_HOST_X86 */
