/*
 * matmul_i8__host_amx.c — tidsp_matmul_i8 with Intel AMX.
 *
 * Y[i][j] = Σ_k (x[i][k] − x_zp)(w[j][k] − w_zp): the rows of W are the A
 * tiles as stored (amx_internal.h: any w_row_stride, tails without reading
 * past a row) and Xᵀ is the B operand, packed per block of 64 rows of X:
 *   panel[step][tile t][k/4 within the step][16 rows of X][k%4]
 * i.e. for each 16 rows of X and step, the 16 × 16 matrix of their 4-byte
 * groups transposed (unpacks and 128-bit shuffles). Rows are read with
 * masked loads that stop at k, rows past m are zeros. The sums C[j][i]
 * come back per row of W; one vector gather per 16 columns of Y collects
 * them into a row of Y for the requantization and a contiguous store.
 *
 * Zero points, modulo 2³² like the reference's reduction of its exact sum:
 *   Σ (x − x_zp)(w − w_zp) = Σ x·w − x_zp·Σw − w_zp·Σx + k·x_zp·w_zp
 * with Σw per row of W (once per call up to TIDSP_AMX_CMAX rows) and Σx
 * per row of X (only when w_zp ≠ 0); the bias is added modulo 2³², then
 * the FLOAT requantization with the reference's float operations, or
 * SCALE_SHIFT in int64 lanes (rq_internal.h), 16 columns of Y (channels) a
 * vector.
 *
 * Stack ~105 KiB (panel, accumulators, constants). Q31 takes the FLOAT
 * epilogue (rq_internal.h). k = 0 and inputs the reference rejects go to
 * tidsp_matmul_i8__ref, as
 * does every call where AMX is unavailable (tidsp_host_amx_supported).
 * Products the tiles do not pay for (fewer than 256 taps, one or two rows)
 * go to the VNNI kernel; tidsp_matmul_i8__host_amx_tiles takes every product.
 */
#include <string.h>

#include "amx_internal.h"
#include "zmm_transpose.h"

#if TIDSP_HAVE_HOST_X86

#define TARGET TIDSP_AMX_TARGET

/* Packs steps [s0, s1) of the mb rows of X at xb (k bytes each). */
static TARGET void pack_panel(const int8_t *xb, int32_t mb, int32_t K,
                              int32_t ns, int32_t ka, int32_t s0, int32_t s1,
                              uint8_t *panel) {
  int32_t s, t, i, q;
  for (s = s0; s < s1; s++) {
    const int32_t off = tidsp_amx_step_off(K, ns, s);
    const int32_t real = tidsp_amx_step_first(s);
    /* bytes [off, off + 64) of a row that hold taps of this step */
    const int32_t lo = real - off, hi = K - off < 64 ? K - off : 64;
    const __mmask64 m = (hi - lo == 64 ? ~(__mmask64)0 : (((__mmask64)1 << (hi - lo)) - 1)) << lo;
    uint8_t *dst = panel + (size_t)(s - s0) * 4 * TIDSP_AMX_TILE_BYTES;
    for (t = 0; t < 4 && 16 * t < mb; t++) {
      __m512i r[16];
      for (i = 0; i < 16; i++) {
        const int32_t row = 16 * t + i;
        r[i] = row < mb ? _mm512_maskz_loadu_epi8(
                              m, (const void *)((uintptr_t)(xb + (size_t)row * (size_t)K) + (uintptr_t)off))
                        : _mm512_setzero_si512();
      }
      tidsp_zmm_transpose16(r);
      for (q = 0; q < ka / 4; q++)
        _mm512_store_si512((void *)(dst + (size_t)t * TIDSP_AMX_TILE_BYTES + 64 * q), r[q]);
    }
  }
}

/* The sums of the block's mb rows of X for the W rows whose accumulator
 * rows start at the 16 offsets voff (in int32), plus vcc and minus
 * w_zp·Σx: row l of X in the lanes. */
static inline __attribute__((always_inline)) TARGET __m512i gather_sums(
    const tidsp_matmul_params *p, const int32_t *acc, __m512i voff, __m512i vcc,
    const int32_t *xsum, int32_t l) {
  /* Without -O, GCC's avx512fintrin.h defines the gather as a macro that
   * passes its all-ones mask 0xFFFF to a builtin taking a short. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-conversion"
  __m512i a = _mm512_i32gather_epi32(_mm512_add_epi32(voff, _mm512_set1_epi32(l)),
                                     (const void *)acc, 4);
#pragma GCC diagnostic pop
  a = _mm512_add_epi32(a, vcc);
  if (p->w_zp != 0)
    a = _mm512_sub_epi32(a, _mm512_set1_epi32((int)((uint32_t)p->w_zp * (uint32_t)xsum[l])));
  return a;
}

/* Requantizes the block's sums of W rows [r_lo, r_hi) (columns r of Y) for
 * its mb rows of X and stores them into Y's rows yb (n bytes apart).
 * cconst[r − c_base]; xsum[i] = Σx of row i of the block. */
static TARGET void requant_store(const tidsp_matmul_params *p,
                                 const tidsp_amx_gemm *g, int32_t *acc,
                                 int32_t r_lo, int32_t r_hi,
                                 const uint32_t *cconst, int32_t c_base,
                                 const tidsp_host_rq *q, const int32_t *xsum,
                                 int32_t mb, int8_t *yb) {
  const __m512 lo = _mm512_set1_ps(q->lo);
  const __m512 hi = _mm512_set1_ps(q->hi);
  const __m512i zp = _mm512_set1_epi32(q->zp);
  int32_t r0, i, l;
  for (r0 = r_lo; r0 < r_hi; r0 += 16) {
    const int32_t nr = r_hi - r0 < 16 ? r_hi - r0 : 16;
    const __mmask16 mk = (__mmask16)((1u << nr) - 1u);
    int32_t off[16], cc[16];
    __m512i voff, vcc;
    for (i = 0; i < 16; i++) {
      const int32_t r = r0 + (i < nr ? i : 0);
      off[i] = (int32_t)(tidsp_amx_acc_row(g, acc, r_lo, r_hi, r) - acc);
      cc[i] = (int32_t)cconst[r - c_base];
    }
    voff = _mm512_loadu_si512(off);
    vcc = _mm512_loadu_si512(cc);
    if (tidsp_host_rq_is_ss(q)) { /* lane i: channel r0 + i */
      tidsp_host_ss16_consts k;
      tidsp_host_ss16_lanes(&k, q, r0, nr);
      for (l = 0; l < mb; l++)
        _mm_mask_storeu_epi8(yb + (size_t)l * (size_t)p->n + r0, mk,
                             tidsp_host_ss16(gather_sums(p, acc, voff, vcc, xsum, l), &k));
    } else {
      float buf[16];
      const __m512 vm = q->per_channel
                            ? _mm512_maskz_loadu_ps(mk, tidsp_host_rq_mults(q, r0, nr, buf))
                            : _mm512_set1_ps(tidsp_host_rq_mult(q, 0));
      for (l = 0; l < mb; l++)
        _mm_mask_storeu_epi8(
            yb + (size_t)l * (size_t)p->n + r0, mk,
            tidsp_amx_rq16(gather_sums(p, acc, voff, vcc, xsum, l), vm, lo, hi, zp));
    }
  }
}

static TARGET void matmul_amx(const tidsp_matmul_params *p, const int8_t *x,
                              const int8_t *w, const int32_t *bias,
                              const tidsp_host_rq *q, int8_t *y) {
  uint8_t panel[TIDSP_AMX_PANEL_BYTES] __attribute__((aligned(64)));
  int32_t acc[TIDSP_AMX_ACC_INTS] __attribute__((aligned(64)));
  uint32_t cconst[TIDSP_AMX_CMAX];
  int32_t xsum[TIDSP_AMX_LANES];
  tidsp_amx_gemm g;
  const int32_t K = p->k, N = p->n;
  const int whole = N <= TIDSP_AMX_CMAX; /* constants once per call */
  int32_t i0, r_lo, s0, i;

  /* the A copy (4 ∤ K < 64) lives past the one step such a panel uses */
  tidsp_amx_gemm_init(&g, w, tidsp_host_matmul_w_stride(p), N, K,
                      (int8_t *)panel + 4 * TIDSP_AMX_TILE_BYTES);
  tidsp_amx_configure(g.mr, g.ka);
  if (whole)
    tidsp_amx_row_consts(&g, 0, N, bias, p->x_zp, p->w_zp, cconst);
  for (i0 = 0; i0 < p->m; i0 += TIDSP_AMX_LANES) {
    const int32_t mb = p->m - i0 < TIDSP_AMX_LANES ? p->m - i0 : TIDSP_AMX_LANES;
    const int8_t *xb = x + (size_t)i0 * (size_t)K;
    int packed = 0; /* the panel holds the whole reduction */
    if (p->w_zp != 0) {
      for (i = 0; i < mb; i++)
        xsum[i] = tidsp_zmm_row_sum(xb + (size_t)i * (size_t)K, K);
    }
    for (r_lo = 0; r_lo < N; r_lo += TIDSP_AMX_COB) {
      const int32_t r_hi = N - r_lo < TIDSP_AMX_COB ? N : r_lo + TIDSP_AMX_COB;
      if (!whole)
        tidsp_amx_row_consts(&g, r_lo, r_hi, bias, p->x_zp, p->w_zp, cconst);
      for (s0 = 0; s0 < g.ns; s0 += TIDSP_AMX_SC) {
        const int32_t s1 = g.ns - s0 < TIDSP_AMX_SC ? g.ns : s0 + TIDSP_AMX_SC;
        if (!packed) {
          pack_panel(xb, mb, K, g.ns, g.ka, s0, s1, panel);
          packed = s0 == 0 && s1 == g.ns;
        }
        tidsp_amx_block(&g, r_lo, r_hi, panel, s0, s1, (mb + 15) / 16, acc);
      }
      TIDSP_AMX_BARRIER(acc);
      requant_store(p, &g, acc, r_lo, r_hi, cconst, whole ? 0 : r_lo, q, xsum, mb,
                    y + (size_t)i0 * (size_t)N);
    }
  }
  _tile_release();
}

/* Products the tiles do not pay for: fewer than 256 taps (too few tile
 * products per packed panel of Xᵀ to pay for the packing), or one or two
 * rows of X (14 of a tile's 16 rows empty). The VNNI kernel, which every
 * AMX CPU runs, is faster there (bench/conv_bench.c "mm" lines on a Xeon
 * with AMX, AMX time over VNNI's: ConvNeXt's fc1 3136×96×384 ×1.7, ViT's
 * QKᵀ 197×64×197 ×3.9 and P·V 197×197×64 ×1.4, a 16-row 64×192 ×1.7,
 * ResNet-18's 1×512×1000 classifier ×2.0; AMX ahead from 256 taps and 3
 * rows on: 16×256×64 ×0.94, 4×768×768 ×0.65, 3136×384×96 ×0.79).
 * bench/amx_route.c's grid of 147 products (M 1–197, K 64–768, N
 * 64–768): one row ×1.8–2.6 and two ×1.2–1.8 slower on the tiles at every
 * K; the kernel chosen takes 1.004–1.007× the faster one's time
 * (geometric mean, three runs; the tiles everywhere 1.36×, VNNI
 * everywhere 1.10×). */
#define AMX_MIN_K 256
#define AMX_MIN_M 3

int32_t tidsp_matmul_i8__host_amx(const tidsp_matmul_params *p,
                                  const int8_t *x, const int8_t *w,
                                  const int32_t *bias, const void *rq,
                                  int8_t *y) {
  /* (AMX here implies AVX-512 VNNI and BW: conv2d_i8__host_amx.c's probe, cached) */
  if (p && (p->k < AMX_MIN_K || p->m < AMX_MIN_M) && tidsp_host_amx_supported())
    return tidsp_matmul_i8__host_avx512vnni(p, x, w, bias, rq, y);
  return tidsp_matmul_i8__host_amx_tiles(p, x, w, bias, rq, y);
}

int32_t tidsp_matmul_i8__host_amx_tiles(const tidsp_matmul_params *p, const int8_t *x, const int8_t *w,
                                        const int32_t *bias, const void *rq, int8_t *y) {
  tidsp_host_rq q;
  if (!tidsp_host_amx_supported() || !tidsp_host_matmul_fast_ok(p, x, w, rq, y) ||
      p->k == 0)
    return tidsp_matmul_i8__ref(p, x, w, bias, rq, y);
  tidsp_host_rq_init(&q, &p->rq, rq, p->n);
  matmul_amx(p, x, w, bias, &q, y);
  return TIDSP_OK;
}

#endif /* TIDSP_HAVE_HOST_X86 */
