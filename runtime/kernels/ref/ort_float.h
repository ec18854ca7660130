/*
 * ort_float.h — the float building blocks of ONNX Runtime's CPU kernels
 * (x86-64 build, version 1.30), one rounding at a time, for the float
 * fallback kernels (not public).
 *
 * Why: in a QDQ model, ops that ORT runs in float between a dequantize and a
 * quantize (ReduceMean, Softmax, pooling, Sigmoid, …) are quantized right
 * after; a last-bit difference in the float result flips a quantization step
 * now and then. These helpers reproduce ORT's summation orders and
 * polynomials exactly (established by reading ORT's source and confirmed on
 * random data against onnxruntime 1.30, tests/e2e/test_float_ops_vs_ort.py):
 *
 *  - Eigen's vectorized sum (ReduceMean/ReduceSum over a contiguous block):
 *    ORT's Eigen is compiled for SSE2, 4 floats per packet. The sum starts at
 *    the first 16-byte-aligned element, runs two packet accumulators over
 *    pairs of packets, then one more packet, adds the accumulators
 *    lane-wise, reduces the packet as (l0 + l2) + (l1 + l3), and finally adds
 *    the unaligned head and the tail one by one. The order therefore depends
 *    on the address modulo 16: arena tensors are 64-byte aligned like ORT's
 *    buffers, so using the real address gives ORT's order.
 *  - MLAS's 4-lane sums (GlobalAveragePool): lane j sums elements j, j+4, …
 *    from zero, the lanes reduce as (l0 + l2) + (l1 + l3), the tail is added
 *    one by one.
 *  - MLAS's exp for Softmax (the AVX512F kernel, chosen on AVX512F CPUs) and
 *    logistic (the FMA3 kernel): polynomials evaluated with fused
 *    multiply-adds, written here with fmaf().
 */
#ifndef TIDSP_ORT_FLOAT_H
#define TIDSP_ORT_FLOAT_H

#include "ref_internal.h"

/* (l0 + l2) + (l1 + l3): SSE2's horizontal add of one packet (Eigen predux
 * and MlasReduceAddFloat32x4 agree). */
static inline float tidsp_ort_hsum4(const float l[4]) {
  float a = l[0] + l[2];
  float b = l[1] + l[3];
  return a + b;
}

/* What a sum adds: the floats themselves, their squares (each rounded),
 * or int8 codes read through a table of their dequantized floats (the
 * values tidsp_dequantize would write). Callers pass a constant, so each
 * inlined loop keeps only its own load. */
enum { TIDSP_ORT_VALUES, TIDSP_ORT_SQUARES, TIDSP_ORT_DQ_TABLE };

/* Eigen's sum (see above) of n ≥ 1 values: of the floats at x (`what`
 * VALUES or SQUARES: squaredNorm sums the rounded squares in the same
 * order), or of dq[q[i] + 128] (DQ_TABLE). `head` is the count of values
 * before the first 16-byte boundary of the float buffer they are (or
 * would be) in. */
static inline float tidsp_ort_eigen_redux_at(const float *x, const int8_t *q, const float *dq, int64_t n,
                                             int64_t head, int what) {
  int64_t body, body2, i;
  float p0[4], p1[4], res;
  int j;
#define X(i) (what == TIDSP_ORT_DQ_TABLE ? dq[q[i] + 128] : what == TIDSP_ORT_SQUARES ? x[i] * x[i] : x[i])

  if (head > n)
    head = n;
  body = ((n - head) / 4) * 4;
  body2 = ((n - head) / 8) * 8;
  if (body == 0) {
    res = X(0);
    for (i = 1; i < n; i++)
      res += X(i);
    return res;
  }
  for (j = 0; j < 4; j++)
    p0[j] = X(head + j);
  if (body > 4) {
    for (j = 0; j < 4; j++)
      p1[j] = X(head + 4 + j);
    for (i = head + 8; i < head + body2; i += 8) {
      for (j = 0; j < 4; j++) {
        p0[j] += X(i + j);
        p1[j] += X(i + 4 + j);
      }
    }
    for (j = 0; j < 4; j++)
      p0[j] += p1[j];
    if (body > body2) {
      for (j = 0; j < 4; j++)
        p0[j] += X(head + body2 + j);
    }
  }
  res = tidsp_ort_hsum4(p0);
  for (i = 0; i < head; i++)
    res += X(i);
  for (i = head + body; i < n; i++)
    res += X(i);
  return res;
#undef X
}

/* Values before the first 16-byte boundary: of the floats at x (at least
 * 4-byte aligned), or of element `index` of a 64-byte-aligned float tensor
 * (ORT's buffers, and the arena's). */
static inline int64_t tidsp_ort_head_of(const float *x) {
  return (int64_t)((4u - (unsigned)(((uintptr_t)x >> 2) & 3u)) & 3u);
}
static inline int64_t tidsp_ort_head_at(int64_t index) { return (4 - (index & 3)) & 3; }

static inline float tidsp_ort_eigen_redux(const float *x, int64_t n, int sq) {
  return tidsp_ort_eigen_redux_at(x, NULL, NULL, n, tidsp_ort_head_of(x), sq ? TIDSP_ORT_SQUARES : TIDSP_ORT_VALUES);
}

static inline float tidsp_ort_eigen_sum(const float *x, int64_t n) { return tidsp_ort_eigen_redux(x, n, 0); }

/* The generic order of ReduceSum / ReduceSumSquare (ReduceMean, ReduceL2's
 * sum): walk the n_in elements of x once, adding each (its square when sq)
 * to its one of the n_out outputs y; for one output, that is the row-major
 * order of its elements. */
static inline void tidsp_ort_reduce_rowmajor(const tidsp_reduce_params *p, const float *x, float *y, int64_t n_in,
                                             int64_t n_out, int sq) {
  int32_t idx[TIDSP_MAX_RANK] = {0};
  int64_t out_stride[TIDSP_MAX_RANK];
  int64_t acc = 1, i, o;
  int32_t d;
  for (d = p->rank - 1; d >= 0; d--) {
    const int reduced = (p->reduce_mask >> d) & 1;
    out_stride[d] = reduced ? 0 : acc;
    if (!reduced)
      acc *= p->in_shape[d];
  }
  for (o = 0; o < n_out; o++)
    y[o] = 0.0f;
  o = 0;
  for (i = 0; i < n_in; i++) {
    y[o] += sq ? x[i] * x[i] : x[i];
    for (d = p->rank - 1; d >= 0; d--) {
      o += out_stride[d];
      if (++idx[d] < p->in_shape[d])
        break;
      o -= out_stride[d] * p->in_shape[d];
      idx[d] = 0;
    }
  }
}

/* Σ x[i] in index order, from 0. */
static inline float tidsp_ort_seq_sum(const float *x, int64_t n) {
  float res = 0.0f;
  int64_t i;
  for (i = 0; i < n; i++)
    res += x[i];
  return res;
}

/* MLAS's 4-lane sum of n ≥ 0 floats (MlasPoolGlobalKernel's order). */
static inline float tidsp_ort_mlas_sum4(const float *x, int64_t n) {
  float l[4] = {0.0f, 0.0f, 0.0f, 0.0f}, res;
  int64_t i = 0;
  int j;
  for (; i + 4 <= n; i += 4) {
    for (j = 0; j < 4; j++)
      l[j] += x[i + j];
  }
  res = tidsp_ort_hsum4(l);
  for (; i < n; i++)
    res += x[i];
  return res;
}

/* MLAS's exp(v) of the softmax kernel, v = x − max ≤ 0 (AVX512F form):
 *   v = max(v, −103.972084)
 *   m = fma(v, log2(e), bias) − bias          (round to an integer)
 *   r = fma(m, −ln2_hi, v); r = fma(m, −ln2_lo, r)
 *   p = poly_0; p = fma(p, r, poly_k) for k = 1..4; p = fma(p, r, 1) twice
 *   e = p · 2^m                               (vscalefps: one rounding)
 * The constants are MLAS's (MlasExpConstants). */
static inline float tidsp_ort_softmax_exp(float v) {
  const float lower = -103.9720840454f;
  const float bias = 12582912.0f; /* 1.5 · 2^23: rounds to an integer */
  const float log2e = 1.44269504088896341f;
  const float ln2_hi = -6.93145752e-1f;
  const float ln2_lo = -1.42860677e-6f;
  float m, r, p;
  v = lower > v ? lower : v; /* vmaxps(lower, v): a NaN v stays NaN */
  m = fmaf(v, log2e, bias) - bias;
  r = fmaf(m, ln2_hi, v);
  r = fmaf(m, ln2_lo, r);
  p = 0x1.694000p-10f;
  p = fmaf(p, r, 0x1.125edcp-7f);
  p = fmaf(p, r, 0x1.555b5ap-5f);
  p = fmaf(p, r, 0x1.555450p-3f);
  p = fmaf(p, r, 0x1.fffff6p-2f);
  p = fmaf(p, r, 1.0f);
  p = fmaf(p, r, 1.0f);
  return ldexpf(p, (int)m);
}

/* MLAS's logistic (the FMA3 kernel): an odd rational polynomial of x
 * clamped to [−18, 18], p/q + 0.5, clamped below at 0. */
static inline float tidsp_ort_logistic(float x) {
  float x2, p, q, v;
  x = -18.0f > x ? -18.0f : x; /* vmaxps/vminps keep a NaN x */
  x = 18.0f < x ? 18.0f : x;
  x2 = x * x;
  p = fmaf(x2, 4.37031012579801e-11f, 1.15627324459942e-07f);
  p = fmaf(x2, p, 6.08574864600143e-05f);
  p = fmaf(x2, p, 8.51377133304701e-03f);
  p = fmaf(x2, p, 2.48287947061529e-01f);
  q = fmaf(x2, 6.10247389755681e-13f, 5.76102136993427e-09f);
  q = fmaf(x2, q, 6.29106785017040e-06f);
  q = fmaf(x2, q, 1.70198817374094e-03f);
  q = fmaf(x2, q, 1.16817656904453e-01f);
  q = fmaf(x2, q, 9.93151921023180e-01f);
  p = x * p;
  v = p / q + 0.5f;
  return 0.0f > v ? 0.0f : v; /* vmaxps(0, v) */
}

/* MLAS's erf, as ORT 1.30 runs it on AVX512F CPUs (the AVX512F kernel,
 * per element): |x| clamped to 3.925 (a NaN passes through), an odd
 * polynomial in |x| for |x| ≤ 0.921875, else 1 − exp(−q(|x|)) with MLAS's
 * exp; every Horner step is one fused multiply-add; the sign is or-ed back.
 * (AVX2-only CPUs run MLAS's FMA3 kernel, which clamps at 3.725: erf of
 * |x| in (3.725, 3.925] may differ in the last bit there.) */
static inline float tidsp_ort_erf(float x) {
  static const float small[6] = {-5.99104969e-4f, 4.99339588e-3f, -2.67667342e-2f,
                                 1.12818025e-1f, -3.76124859e-1f, 1.28379151e-1f};
  static const float big[7] = {1.72948930e-5f, -3.83208680e-4f, 3.88393435e-3f,
                               -2.42545605e-2f, 1.06777847e-1f, 6.34846687e-1f,
                               1.28717512e-1f};
  static const float expc[7] = {1.38319808e-3f, 8.37550033e-3f, 4.16689515e-2f,
                                1.66664466e-1f, 4.99999851e-1f, 1.0f, 1.0f};
  const float rnd = 12582912.0f; /* 1.5 · 2^23: rounds to an integer */
  float a = fabsf(x), s, r, b, m, f, e;
  int i;
  if (a != a)
    return x;
  a = a < 3.925f ? a : 3.925f;
  if (!(a > 0.921875f)) {
    s = a * a;
    r = small[0];
    for (i = 1; i < 6; i++)
      r = fmaf(r, s, small[i]);
    r = fmaf(r, a, a);
    return copysignf(r, x);
  }
  b = big[0];
  for (i = 1; i < 7; i++)
    b = fmaf(b, a, big[i]);
  b = -fmaf(b, a, a);
  b = b > -88.3762626647949f ? b : -88.3762626647949f;
  m = fmaf(1.44269504088896341f, b, rnd) - rnd;
  f = fmaf(m, -6.93145752e-1f, b);
  f = fmaf(m, -1.42860677e-6f, f);
  e = expc[0];
  for (i = 1; i < 7; i++)
    e = fmaf(e, f, expc[i]);
  return copysignf(1.0f - ldexpf(e, (int)m), x);
}

/* MLAS's tanh (MlasComputeTanh): clamp to ±9, an odd rational polynomial
 * (degree 13 over 6) with fused multiply-adds, one true division. */
static inline float tidsp_ort_tanh(float v) {
  static const float p_c[7] = {-2.76076847742355e-16f, 2.00018790482477e-13f,
                               -8.60467152213735e-11f, 5.12229709037114e-08f,
                               1.48572235717979e-05f, 6.37261928875436e-04f,
                               4.89352455891786e-03f};
  static const float q_c[4] = {1.19825839466702e-06f, 1.18534705686654e-04f,
                               2.26843463243900e-03f, 4.89352518554385e-03f};
  float s, p, q;
  int i;
  if (v != v)
    return v;
  v = v > -9.0f ? v : -9.0f;
  v = v < 9.0f ? v : 9.0f;
  s = v * v;
  p = fmaf(s, p_c[0], p_c[1]);
  for (i = 2; i < 7; i++)
    p = fmaf(p, s, p_c[i]);
  p = p * v;
  q = fmaf(s, q_c[0], q_c[1]);
  for (i = 2; i < 4; i++)
    q = fmaf(q, s, q_c[i]);
  return p / q;
}

/* ORT's Gelu kernel (opset 20; also what its GeluFusion makes of
 * Div(√2) → Erf → Add(1) → Mul(x) → Mul(0.5)): x·(1/√2) is a multiply,
 * then (0.5·x)·(erf + 1) with separate roundings. */
static inline float tidsp_ort_gelu(float x) {
  if (x != x)
    return x;
  return (0.5f * x) * (tidsp_ort_erf(x * 0.70710678118654752440f) + 1.0f);
}

/* approximate = "tanh": u = x·((c·x)·x + b), c = 0.044715·b, no FMA. */
static inline float tidsp_ort_gelu_tanh(float x) {
  const float b = 0.7978845608028654f, c = 0.035677408136300125f;
  const float u = x * ((c * x) * x + b);
  return (0.5f * x) * (tidsp_ort_tanh(u) + 1.0f);
}

#endif /* TIDSP_ORT_FLOAT_H */
