/*
 * pool__host_avx2.c — tidsp_maxpool_i8, tidsp_maxpool_f32,
 * tidsp_global_avgpool_i8 and tidsp_avgpool_i8 (pool_internal.h) with
 * AVX2: the max pools follow the scheme of pool__host_avx512.c
 * (see there, and pool_internal.h) with 32-byte vectors. Without masked
 * loads, the last partial vector of an input row is handled one element at
 * a time with the same comparison; stride-2 outputs keep the even bytes of
 * each pair with a mask and vpackuswb (even floats with vshufps). int8
 * pools of strides 1 and 2 on planes that fit a stack buffer run on a padded
 * copy of each plane instead (maxpool_i8_plane).
 */
#include "pool_internal.h"

#if TIDSP_HAVE_HOST_X86
#include <immintrin.h>

#define TARGET __attribute__((target("avx2")))

enum { CAP_I8 = 4096, CAP_F32 = 2048 };

/* ---- maxpool_i8 ----------------------------------------------------------------- */

static TARGET void window_max_i8(const int8_t *buf, int32_t k_w, int32_t dil,
                                 int32_t n, int8_t *out) {
  int32_t j, k;
  for (j = 0; j < n; j += 32) {
    __m256i m = _mm256_loadu_si256((const __m256i *)(buf + j));
    for (k = 1; k < k_w; k++)
      m = _mm256_max_epi8(m, _mm256_loadu_si256((const __m256i *)(buf + j + k * dil)));
    _mm256_storeu_si256((__m256i *)(out + j), m);
  }
}

static TARGET void maxpool_i8_fast(const tidsp_pool2d_params *p,
                                   const tidsp_host_pool_row *g,
                                   const int8_t *x, int8_t *y) {
  int8_t buf[CAP_I8 + TIDSP_HOST_POOL_SLACK];
  int8_t h[CAP_I8 + TIDSP_HOST_POOL_SLACK];
  int8_t out[32];
  int8_t *row = buf + p->pad_left;
  const int64_t planes = (int64_t)p->n * p->c;
  const __m256i low_bytes = _mm256_set1_epi16(0x00FF);
  const int32_t w_vec = p->w_in & ~31;
  int64_t nc;
  int32_t oh, kh, kh_lo, kh_hi, j;
  memset(buf, TIDSP_REF_I8_MIN, (size_t)g->span + TIDSP_HOST_POOL_SLACK);
  memset(h, TIDSP_REF_I8_MIN, (size_t)g->h_len + TIDSP_HOST_POOL_SLACK);
  for (nc = 0; nc < planes; nc++) {
    const int8_t *xp = x + (size_t)nc * (size_t)p->h_in * (size_t)p->w_in;
    int8_t *yp = y + (size_t)nc * (size_t)p->h_out * (size_t)p->w_out;
    for (oh = 0; oh < p->h_out; oh++, yp += p->w_out) {
      tidsp_host_pool_taps(p, oh, &kh_lo, &kh_hi);
      memcpy(row, xp + tidsp_host_pool_row_offset(p, oh, kh_lo), (size_t)p->w_in);
      for (kh = kh_lo + 1; kh < kh_hi; kh++) {
        const int8_t *xr = xp + tidsp_host_pool_row_offset(p, oh, kh);
        for (j = 0; j < w_vec; j += 32) {
          const __m256i v = _mm256_loadu_si256((const __m256i *)(xr + j));
          _mm256_storeu_si256((__m256i *)(row + j),
                              _mm256_max_epi8(v, _mm256_loadu_si256((const __m256i *)(row + j))));
        }
        for (; j < p->w_in; j++)
          row[j] = xr[j] > row[j] ? xr[j] : row[j];
      }
      window_max_i8(buf, p->k_w, p->dil_w, g->h_len, h);
      if (p->stride_w == 1) {
        memcpy(yp, h, (size_t)p->w_out);
      } else if (p->stride_w == 2) {
        for (j = 0; j < p->w_out; j += 32) {
          /* the low (even) byte of each pair, as 0…255, packed in order */
          const __m256i e0 = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(h + 2 * j)), low_bytes);
          const __m256i e1 = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(h + 2 * j + 32)), low_bytes);
          const __m256i b = _mm256_permute4x64_epi64(_mm256_packus_epi16(e0, e1), 0xD8);
          if (p->w_out - j >= 32) {
            _mm256_storeu_si256((__m256i *)(yp + j), b);
          } else {
            _mm256_storeu_si256((__m256i *)out, b);
            memcpy(yp + j, out, (size_t)(p->w_out - j));
          }
        }
      } else {
        for (j = 0; j < p->w_out; j++)
          yp[j] = h[(size_t)j * (size_t)p->stride_w];
      }
    }
  }
}

/* Strides 1 or 2 (the same both ways) on planes that fit PLANE_CAP: each
 * plane is copied into a padded plane P (pitch wp, pad_top rows and
 * pad_left columns of −128 before it, −128 after), where output (oh, ow)
 * has tap (kh, kw) at s·u + kh·dil_h·wp + kw·dil_w, u = oh·wp + ow: one
 * plain load per tap for 32 consecutive u across rows (stride 2: two
 * loads, then the even bytes), written with pitch wp to T and copied out
 * row by row. The rows of MobileNet's and GoogLeNet's 7- to 56-wide planes
 * were converted byte by byte before (their width is below one vector).
 * The lanes with ow ≥ w_out are computed and dropped. */
enum { PLANE_CAP = 16384, PLANE_SLACK = 160 };

typedef struct plane_geom {
  int64_t wp;     /* the padded pitch */
  int64_t n_u;    /* outputs u computed: h_out·wp rounded up to 32 */
  int64_t p_len;  /* bytes of P the loads reach */
} plane_geom;

static int plane_plan(const tidsp_pool2d_params *p, plane_geom *pg) {
  const int64_t s = p->stride_w;
  int64_t wp, rows, reach;
  if (p->stride_h != p->stride_w || s < 1 || s > 2)
    return 0;
  wp = (int64_t)p->pad_left + p->w_in;
  reach = (int64_t)(p->w_out - 1) * s + (int64_t)(p->k_w - 1) * p->dil_w + 1;
  if (reach > wp)
    wp = reach;
  rows = (int64_t)p->pad_top + p->h_in;
  reach = (int64_t)(p->h_out - 1) * s + (int64_t)(p->k_h - 1) * p->dil_h + 1;
  if (reach > rows)
    rows = reach;
  pg->wp = wp;
  pg->n_u = ((int64_t)p->h_out * wp + 31) & ~(int64_t)31;
  /* the last load: u = n_u − 32, tap (k_h − 1, k_w − 1), 32·s bytes */
  pg->p_len = s * (pg->n_u - 32) + (int64_t)(p->k_h - 1) * p->dil_h * wp + (int64_t)(p->k_w - 1) * p->dil_w + 32 * s;
  if (pg->p_len < rows * wp)
    pg->p_len = rows * wp;
  return pg->p_len <= PLANE_CAP + PLANE_SLACK && pg->n_u <= PLANE_CAP;
}

static TARGET void maxpool_i8_plane(const tidsp_pool2d_params *p, const plane_geom *pg,
                                    const int8_t *x, int8_t *y) {
  int8_t pbuf[PLANE_CAP + PLANE_SLACK];
  int8_t t[PLANE_CAP];
  const int64_t planes = (int64_t)p->n * p->c, wp = pg->wp;
  const int64_t s = p->stride_w, taps = (int64_t)p->k_h * p->k_w;
  const __m256i low_bytes = _mm256_set1_epi16(0x00FF);
  int8_t *interior = pbuf + (int64_t)p->pad_top * wp + p->pad_left;
  int64_t off[64];
  int64_t nc, u, k;
  int32_t r, kh, kw;
  for (kh = 0, k = 0; kh < p->k_h; kh++)
    for (kw = 0; kw < p->k_w; kw++)
      off[k++] = (int64_t)kh * p->dil_h * wp + (int64_t)kw * p->dil_w;
  memset(pbuf, TIDSP_REF_I8_MIN, (size_t)pg->p_len);
  for (nc = 0; nc < planes; nc++) {
    const int8_t *xp = x + (size_t)(nc * p->h_in * p->w_in);
    int8_t *yp = y + (size_t)(nc * p->h_out * p->w_out);
    for (r = 0; r < p->h_in; r++)
      memcpy(interior + r * wp, xp + (int64_t)r * p->w_in, (size_t)p->w_in);
    if (s == 1) {
      for (u = 0; u < pg->n_u; u += 32) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(const void *)(pbuf + u));
        for (k = 1; k < taps; k++)
          v = _mm256_max_epi8(v, _mm256_loadu_si256((const __m256i *)(const void *)(pbuf + u + off[k])));
        _mm256_storeu_si256((__m256i *)(void *)(t + u), v);
      }
    } else {
      for (u = 0; u < pg->n_u; u += 32) {
        const int8_t *b = pbuf + 2 * u;
        __m256i e0 = _mm256_loadu_si256((const __m256i *)(const void *)b);
        __m256i e1 = _mm256_loadu_si256((const __m256i *)(const void *)(b + 32));
        for (k = 1; k < taps; k++) {
          e0 = _mm256_max_epi8(e0, _mm256_loadu_si256((const __m256i *)(const void *)(b + off[k])));
          e1 = _mm256_max_epi8(e1, _mm256_loadu_si256((const __m256i *)(const void *)(b + off[k] + 32)));
        }
        /* the low (even) byte of each pair, as 0…255, packed in order */
        e0 = _mm256_and_si256(e0, low_bytes);
        e1 = _mm256_and_si256(e1, low_bytes);
        _mm256_storeu_si256((__m256i *)(void *)(t + u),
                            _mm256_permute4x64_epi64(_mm256_packus_epi16(e0, e1), 0xD8));
      }
    }
    for (r = 0; r < p->h_out; r++)
      memcpy(yp + (int64_t)r * p->w_out, t + r * wp, (size_t)p->w_out);
  }
}

int32_t tidsp_maxpool_i8__host_avx2(const tidsp_pool2d_params *p,
                                    const int8_t *x, int8_t *y) {
  tidsp_host_pool_row g;
  plane_geom pg;
  if (!p || !x || !y || !tidsp_host_pool_plan(p, CAP_I8, &g))
    return tidsp_maxpool_i8__ref(p, x, y);
  if ((int64_t)p->k_h * p->k_w <= 64 && plane_plan(p, &pg))
    maxpool_i8_plane(p, &pg, x, y);
  else
    maxpool_i8_fast(p, &g, x, y);
  return TIDSP_OK;
}

/* ---- maxpool_f32 ---------------------------------------------------------------- */

/* The fold m = t > m ? t : m from −inf over buf[j + k·dil], k < k_w. */
static TARGET void window_max_f32(const float *buf, int32_t k_w, int32_t dil,
                                  int32_t n, float *out) {
  const __m256 ninf = _mm256_set1_ps(-INFINITY);
  int32_t j, k;
  for (j = 0; j < n; j += 8) {
    __m256 m = ninf;
    for (k = 0; k < k_w; k++)
      m = _mm256_max_ps(_mm256_loadu_ps(buf + j + k * dil), m);
    _mm256_storeu_ps(out + j, m);
  }
}

static TARGET void maxpool_f32_fast(const tidsp_pool2d_params *p,
                                    const tidsp_host_pool_row *g,
                                    const float *x, float *y) {
  float buf[CAP_F32 + TIDSP_HOST_POOL_SLACK];
  float h[CAP_F32 + TIDSP_HOST_POOL_SLACK];
  float *row = buf + p->pad_left;
  const int64_t planes = (int64_t)p->n * p->c;
  const int32_t o_vec = p->w_out & ~7;
  int64_t nc;
  int32_t oh, kh, kh_lo, kh_hi, j;
  for (j = 0; j < g->span + TIDSP_HOST_POOL_SLACK; j++)
    buf[j] = -INFINITY;
  for (j = 0; j < g->h_len + TIDSP_HOST_POOL_SLACK; j++)
    h[j] = -INFINITY;
  for (nc = 0; nc < planes; nc++) {
    const float *xp = x + (size_t)nc * (size_t)p->h_in * (size_t)p->w_in;
    float *yp = y + (size_t)nc * (size_t)p->h_out * (size_t)p->w_out;
    for (oh = 0; oh < p->h_out; oh++, yp += p->w_out) {
      for (j = 0; j < p->w_out; j++)
        yp[j] = -INFINITY;
      tidsp_host_pool_taps(p, oh, &kh_lo, &kh_hi);
      for (kh = kh_lo; kh < kh_hi; kh++) {
        memcpy(row, xp + tidsp_host_pool_row_offset(p, oh, kh), sizeof(float) * (size_t)p->w_in);
        window_max_f32(buf, p->k_w, p->dil_w, g->h_len, h);
        /* fold this row's window maxima t into the output: t > m ? t : m */
        if (p->stride_w == 1) {
          for (j = 0; j < o_vec; j += 8)
            _mm256_storeu_ps(yp + j, _mm256_max_ps(_mm256_loadu_ps(h + j), _mm256_loadu_ps(yp + j)));
        } else if (p->stride_w == 2) {
          for (j = 0; j < o_vec; j += 8) {
            /* even lanes of h[2j, 2j + 16): per 128-bit lane, then in order */
            const __m256 e = _mm256_shuffle_ps(_mm256_loadu_ps(h + 2 * j),
                                               _mm256_loadu_ps(h + 2 * j + 8), 0x88);
            const __m256 t = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8));
            _mm256_storeu_ps(yp + j, _mm256_max_ps(t, _mm256_loadu_ps(yp + j)));
          }
        } else {
          j = 0;
        }
        for (; j < p->w_out; j++) {
          const float t = h[(size_t)j * (size_t)p->stride_w];
          yp[j] = t > yp[j] ? t : yp[j];
        }
      }
    }
  }
}

int32_t tidsp_maxpool_f32__host_avx2(const tidsp_pool2d_params *p,
                                     const float *x, float *y) {
  tidsp_host_pool_row g;
  if (!p || !x || !y || !tidsp_host_pool_plan(p, CAP_F32, &g))
    return tidsp_maxpool_f32__ref(p, x, y);
  maxpool_f32_fast(p, &g, x, y);
  return TIDSP_OK;
}

/* ---- global_avgpool_i8 ---------------------------------------------------------- */

static TARGET int64_t sum_i8(const int8_t *x, int32_t n) {
  const __m256i bias = _mm256_set1_epi8((char)0x80);
  const __m256i zero = _mm256_setzero_si256();
  __m256i acc = zero;
  int64_t s, lanes[4];
  int32_t i;
  for (i = 0; i + 32 <= n; i += 32) {
    const __m256i v = _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(x + i)), bias);
    acc = _mm256_add_epi64(acc, _mm256_sad_epu8(v, zero)); /* Σ (x + 128) */
  }
  _mm256_storeu_si256((__m256i *)lanes, acc);
  s = lanes[0] + lanes[1] + lanes[2] + lanes[3] - (int64_t)128 * i;
  for (; i < n; i++)
    s += x[i];
  return s;
}

int32_t tidsp_global_avgpool_i8__host_avx2(const tidsp_gap_i8_params *p, const void *rq, const int8_t *x,
                                           int8_t *y) {
  return tidsp_host_global_avgpool_i8(p, rq, x, y, sum_i8);
}

/* ---- avgpool_i8 ----------------------------------------------------------------- */

#define W 8
#define VEC __m256
#define VECI __m256i
#define T TARGET
#define VSET1(x) _mm256_set1_ps(x)
#define VSET1_I32(x) _mm256_set1_epi32(x)
#define VZERO() _mm256_setzero_ps()
#define VLOAD(p) _mm256_loadu_ps(p)
#define VLOAD_I32(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define VSTORE(p, v) _mm256_storeu_ps((p), (v))
#define VADD(a, b) _mm256_add_ps((a), (b))
#define VDIV(a, b) _mm256_div_ps((a), (b))
#define VMAX(a, b) _mm256_max_ps((a), (b))
#define VMIN(a, b) _mm256_min_ps((a), (b))
#define VMULLO_I32(a, b) _mm256_mullo_epi32((a), (b))
#define VSUB_I32(a, b) _mm256_sub_epi32((a), (b))
#define VCVT_F32(a) _mm256_cvtepi32_ps(a)
#define VCVT_I32(a) _mm256_cvtps_epi32(a)
#define TAP_CONSTS                                                                                                   \
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);                                                    \
  const __m256i gidx = _mm256_mullo_epi32(lane, _mm256_set1_epi32(s));
/* The hooks are statements, as in pool__host_avx512.c (see there). */
/* stride 1: plain loads of the row buffer, stride 2: the even lanes of two
 * vectors (per 128-bit lane, then in order), other strides: a gather
 * masked to the row's outputs */
#define TAP(t, b)                                                                                                    \
  do {                                                                                                               \
    if (s == 1) {                                                                                                    \
      t = _mm256_loadu_ps(b);                                                                                        \
    } else if (s == 2) {                                                                                             \
      const __m256 e_ = _mm256_shuffle_ps(_mm256_loadu_ps(b), _mm256_loadu_ps((b) + 8), 0x88);                       \
      t = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e_), 0xD8));                                       \
    } else {                                                                                                         \
      const __m256i live_ = _mm256_cmpgt_epi32(_mm256_set1_epi32(w_out - j), lane);                                  \
      t = _mm256_mask_i32gather_ps(_mm256_setzero_ps(), (b), gidx, _mm256_castsi256_ps(live_), 4);                   \
    }                                                                                                                \
  } while (0)
/* 8 at a time, the same product one lane at a time for the rest */
#define DEQUANT_ROW(row, xr)                                                                                         \
  do {                                                                                                               \
    int32_t dj_;                                                                                                     \
    for (dj_ = 0; dj_ + 8 <= w_in; dj_ += 8) {                                                                       \
      const __m256i q_ = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)((xr) + dj_)));         \
      _mm256_storeu_ps((row) + dj_, _mm256_mul_ps(xs, _mm256_cvtepi32_ps(_mm256_sub_epi32(q_, xzp))));               \
    }                                                                                                                \
    for (; dj_ < w_in; dj_++)                                                                                        \
      (row)[dj_] = ap->x_scale * (float)((xr)[dj_] - ap->x_zp);                                                      \
  } while (0)
/* int8 values already: the saturating packs keep them, in order */
#define STORE_I8(p, n, q)                                                                                            \
  do {                                                                                                               \
    int8_t tail_[16];                                                                                                \
    const __m256i q_ = (q);                                                                                          \
    __m128i b_ = _mm_packs_epi32(_mm256_castsi256_si128(q_), _mm256_extracti128_si256(q_, 1));                       \
    b_ = _mm_packs_epi16(b_, b_);                                                                                    \
    if ((n) >= 8) {                                                                                                  \
      _mm_storel_epi64((__m128i *)(void *)(p), b_);                                                                  \
    } else {                                                                                                         \
      _mm_storeu_si128((__m128i *)(void *)tail_, b_);                                                                \
      memcpy((p), tail_, (size_t)(n));                                                                               \
    }                                                                                                                \
  } while (0)
#define KERNEL tidsp_avgpool_i8__host_avx2
#include "avgpool_i8_body.h"

#endif /* TIDSP_HAVE_HOST_X86 */
