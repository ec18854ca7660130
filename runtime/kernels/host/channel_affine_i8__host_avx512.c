/*
 * channel_affine_i8__host_avx512.c — tidsp_channel_affine_i8 with AVX-512
 * (F + BW): the row loop of channel_affine_i8_body.h (see there) on 16
 * values at a time along a channel's row; a row's last partial vector is
 * masked.
 */
#include "../kernel_variants.h"
#include "../ref/channel_affine_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

static inline __mmask16 mask16(int32_t n) { return n >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << n) - 1); }

#define W 16
#define VEC __m512
#define VECI __m512i
#define T __attribute__((target("avx512f,avx512bw")))
#define VSET1(x) _mm512_set1_ps(x)
#define VSET1_I32(x) _mm512_set1_epi32(x)
#define VZERO() _mm512_setzero_ps()
#define VMUL(a, b) _mm512_mul_ps((a), (b))
#define VADD(a, b) _mm512_add_ps((a), (b))
#define VDIV(a, b) _mm512_div_ps((a), (b))
#define VMAX(a, b) _mm512_max_ps((a), (b))
#define VMIN(a, b) _mm512_min_ps((a), (b))
#define VSUB_I32(a, b) _mm512_sub_epi32((a), (b))
#define VADD_I32(a, b) _mm512_add_epi32((a), (b))
#define VCVT_F32(a) _mm512_cvtepi32_ps(a)
#define VCVT_I32(a) _mm512_cvtps_epi32(a)
#define VLOAD_I8(p, n)                                                                                               \
  _mm512_cvtepi8_epi32(_mm_castps_si128(                                                                             \
      _mm512_castps512_ps128(_mm512_castsi512_ps(_mm512_maskz_loadu_epi8((__mmask64)mask16(n), (p))))))
#define VSTORE_I8(p, n, q) _mm512_mask_cvtepi32_storeu_epi8((p), mask16(n), (q))
#define VPARTIAL 1
#define KERNEL tidsp_channel_affine_i8__host_avx512
#include "channel_affine_i8_body.h"

#endif /* TIDSP_HAVE_HOST_X86 */
