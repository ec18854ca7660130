/*
 * test_kernel_transformer.c — the attention and normalization kernels:
 * batch_matmul_i8 (two runtime operands, B transposed, batch broadcast;
 * the dispatched kernel and __ref give the same bytes) and softmax_i8
 * against oracles that index the tensors independently, layer_norm_f32
 * against a double-precision oracle, and each kernel's refusals.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/kernels.h"
#include "unit.h"

#define KT_SEED 0x2545F4914F6CDD1Dull
#include "kernel_test_util.h"

static void test_batch_matmul(void) {
  for (int iter = 0; iter < 300; iter++) {
    tidsp_batch_matmul_i8_params p;
    memset(&p, 0, sizeof p);
    p.batch = rnd_range(1, 4);
    p.m = rnd_range(1, 9);
    p.k = rnd_range(1, 40);
    p.n = rnd_range(1, 9);
    int a_bc = p.batch > 1 && rnd() % 3 == 0, b_bc = p.batch > 1 && !a_bc && rnd() % 3 == 0;
    p.a_batch_stride = a_bc ? 0 : p.m * p.k;
    p.b_batch_stride = b_bc ? 0 : p.k * p.n;
    p.a_zp = rnd_range(-128, 127);
    p.b_zp = rnd_range(-128, 127);
    p.rq.kind = TIDSP_REQUANT_FLOAT;
    p.rq.out_zp = rnd_range(-20, 20);
    p.rq.out_min = -128;
    p.rq.out_max = 127;
    float mult = 1e-4f + rnd_unit() * 5e-3f;
    int na = (a_bc ? 1 : p.batch) * p.m * p.k, nb = (b_bc ? 1 : p.batch) * p.k * p.n;
    int ny = p.batch * p.m * p.n;
    int8_t *a = malloc((size_t)na), *b = malloc((size_t)nb), *y = guarded((size_t)ny);
    for (int i = 0; i < na; i++) a[i] = (int8_t)rnd_range(-128, 127);
    for (int i = 0; i < nb; i++) b[i] = (int8_t)rnd_range(-128, 127);
    CHECK(tidsp_batch_matmul_i8__ref(&p, a, b, &mult, y) == TIDSP_OK);
    int8_t *yf = malloc((size_t)ny);
    CHECK(tidsp_batch_matmul_i8(&p, a, b, &mult, yf) == TIDSP_OK);
    CHECK(memcmp(yf, y, (size_t)ny) == 0);
    free(yf);
    int bad = 0;
    for (int bi = 0; bi < p.batch; bi++)
      for (int i = 0; i < p.m; i++)
        for (int j = 0; j < p.n; j++) {
          int64_t acc = 0;
          for (int kk = 0; kk < p.k; kk++) {
            int av = a[(a_bc ? 0 : bi) * p.m * p.k + i * p.k + kk];
            int bv = b[(b_bc ? 0 : bi) * p.k * p.n + j * p.k + kk]; /* Bt [n][k] */
            acc += (int64_t)(av - p.a_zp) * (bv - p.b_zp);
          }
          int32_t want = tidsp_requant_one(&p.rq, &mult, 1, 0, (int32_t)acc);
          bad += y[(bi * p.m + i) * p.n + j] != want;
        }
    CHECK_MSG(bad == 0, "batch %d m %d k %d n %d: %d wrong", p.batch, p.m, p.k, p.n, bad);
    CHECK(guards_ok(y, (size_t)ny));
    free(a);
    free(b);
    guarded_free(y);
  }
  tidsp_batch_matmul_i8_params p = {1, 1, 1, 1, 1, 1, 0, 0, {TIDSP_REQUANT_FLOAT, 0, 0, -128, 127}};
  int8_t v = 1;
  float m = 1.0f;
  CHECK(tidsp_batch_matmul_i8(NULL, &v, &v, &m, &v) == TIDSP_ERR_NULL);
  p.k = 0;
  CHECK(tidsp_batch_matmul_i8(&p, &v, &v, &m, &v) == TIDSP_ERR_SHAPE);
  p.k = 1;
  p.a_zp = 200;
  CHECK(tidsp_batch_matmul_i8(&p, &v, &v, &m, &v) == TIDSP_ERR_PARAM);
}

/* The kernel's output dequantized is the exact softmax within one output
 * step (plus the table's float rounding). */
static void test_softmax_i8(void) {
  for (int iter = 0; iter < 200; iter++) {
    tidsp_softmax_i8_params p;
    p.outer = rnd_range(1, 4);
    p.axis_len = rnd_range(1, 70);
    p.inner = rnd_range(1, 4);
    p.y_recip = 255.0f;
    p.y_zp = -128;
    float xs = 0.01f + rnd_unit() * 0.2f;
    double shift = log((double)(3.4028234663852886e38f / (float)p.axis_len));
    shift = (shift - 5.0 > 0.0 ? shift - 5.0 : 0.0) / xs;
    float table[256];
    for (int j = 0; j < 256; j++) table[j] = (float)exp(((double)j - 255.0 + shift) * xs);
    int n = p.outer * p.axis_len * p.inner;
    int8_t *x = malloc((size_t)n), *y = guarded((size_t)n);
    for (int i = 0; i < n; i++) x[i] = (int8_t)rnd_range(-128, 127);
    CHECK(tidsp_softmax_i8(&p, table, x, y) == TIDSP_OK);
    int bad = 0;
    for (int o = 0; o < p.outer; o++)
      for (int in = 0; in < p.inner; in++) {
        double mx = -1e9, sum = 0.0;
        for (int k = 0; k < p.axis_len; k++) {
          double v = x[(o * p.axis_len + k) * p.inner + in] * (double)xs;
          mx = v > mx ? v : mx;
        }
        for (int k = 0; k < p.axis_len; k++)
          sum += exp(x[(o * p.axis_len + k) * p.inner + in] * (double)xs - mx);
        for (int k = 0; k < p.axis_len; k++) {
          int idx = (o * p.axis_len + k) * p.inner + in;
          double want = exp(x[idx] * (double)xs - mx) / sum;
          double got = (y[idx] - p.y_zp) / 255.0;
          bad += fabs(got - want) > 0.5 / 255.0 + 1e-6;
        }
      }
    CHECK_MSG(bad == 0, "outer %d len %d inner %d: %d off", p.outer, p.axis_len, p.inner, bad);
    CHECK(guards_ok(y, (size_t)n));
    free(x);
    guarded_free(y);
  }
  tidsp_softmax_i8_params p = {1, 0, 1, 255.0f, -128};
  float t[256] = {0};
  int8_t v = 0;
  CHECK(tidsp_softmax_i8(&p, t, &v, &v) == TIDSP_ERR_SHAPE);
  p.axis_len = 1;
  p.y_zp = 300;
  CHECK(tidsp_softmax_i8(&p, t, &v, &v) == TIDSP_ERR_PARAM);
  CHECK(tidsp_softmax_i8(&p, NULL, &v, &v) == TIDSP_ERR_NULL);
}

static void test_layer_norm(void) {
  for (int iter = 0; iter < 200; iter++) {
    tidsp_layer_norm_params p = {rnd_range(1, 5), rnd_range(1, 80), 1e-5f, 0};
    int n = p.outer * p.norm, with_bias = rnd() & 1;
    float *x = malloc(sizeof(float) * (size_t)n), *y = guarded(sizeof(float) * (size_t)n);
    float *s = malloc(sizeof(float) * (size_t)p.norm), *b = malloc(sizeof(float) * (size_t)p.norm);
    for (int i = 0; i < n; i++) x[i] = (rnd_unit() - 0.5f) * 8.0f + 3.0f;
    for (int i = 0; i < p.norm; i++) {
      s[i] = 0.5f + rnd_unit();
      b[i] = rnd_unit() - 0.5f;
    }
    CHECK(tidsp_layer_norm_f32(&p, x, s, with_bias ? b : NULL, y) == TIDSP_OK);
    int bad = 0;
    for (int r = 0; r < p.outer; r++) {
      double mean = 0.0, var = 0.0;
      for (int h = 0; h < p.norm; h++) mean += x[r * p.norm + h];
      mean /= p.norm;
      for (int h = 0; h < p.norm; h++) var += (x[r * p.norm + h] - mean) * (x[r * p.norm + h] - mean);
      var /= p.norm;
      for (int h = 0; h < p.norm; h++) {
        double want = (x[r * p.norm + h] - mean) / sqrt(var + 1e-5) * s[h] + (with_bias ? b[h] : 0.0);
        bad += fabs(y[r * p.norm + h] - want) > 1e-4 * (1.0 + fabs(want));
      }
    }
    CHECK_MSG(bad == 0, "outer %d norm %d: %d off", p.outer, p.norm, bad);
    CHECK(guards_ok(y, sizeof(float) * (size_t)n));
    /* the reference loops (what -kernels=scalar and the compiler run) give
     * the dispatched variant's bytes */
    float *r = malloc(sizeof(float) * (size_t)n);
    CHECK(tidsp_layer_norm_f32__ref(&p, x, s, with_bias ? b : NULL, r) == TIDSP_OK);
    CHECK(memcmp(r, y, sizeof(float) * (size_t)n) == 0);
    free(r);
    /* in place gives the same bytes */
    float *z = malloc(sizeof(float) * (size_t)n);
    memcpy(z, x, sizeof(float) * (size_t)n);
    CHECK(tidsp_layer_norm_f32(&p, z, s, with_bias ? b : NULL, z) == TIDSP_OK);
    CHECK(memcmp(z, y, sizeof(float) * (size_t)n) == 0);
    free(z);
    free(x);
    free(s);
    free(b);
    guarded_free(y);
  }
  tidsp_layer_norm_params p = {1, 0, 1e-5f, 0};
  float v = 0.0f;
  CHECK(tidsp_layer_norm_f32(&p, &v, &v, NULL, &v) == TIDSP_ERR_SHAPE);
  CHECK(tidsp_layer_norm_f32(NULL, &v, &v, NULL, &v) == TIDSP_ERR_NULL);
  p.norm = 1;
  CHECK(tidsp_layer_norm_f32(&p, &v, NULL, NULL, &v) == TIDSP_ERR_NULL);
}

/* The int8 form equals dequantize → layer_norm_f32 → quantize, byte for
 * byte, and may run in place. */
static void test_layer_norm_i8(void) {
  for (int iter = 0; iter < 200; iter++) {
    tidsp_layer_norm_i8_params p;
    memset(&p, 0, sizeof p);
    p.ln.outer = rnd_range(1, 5);
    p.ln.norm = rnd_range(1, 80);
    p.ln.epsilon = 1e-5f;
    p.x_zp = rnd_range(-30, 30);
    p.x_scale = 0.01f + rnd_unit() * 0.1f;
    p.y_zp = rnd_range(-30, 30);
    p.y_scale = 0.005f + rnd_unit() * 0.05f;
    int n = p.ln.outer * p.ln.norm, with_bias = rnd() & 1;
    int8_t *x = malloc((size_t)n), *y = guarded((size_t)n), *want = malloc((size_t)n);
    float *xf = malloc(sizeof(float) * (size_t)n), *yf = malloc(sizeof(float) * (size_t)n);
    float *s = malloc(sizeof(float) * (size_t)p.ln.norm), *b = malloc(sizeof(float) * (size_t)p.ln.norm);
    for (int i = 0; i < n; i++) x[i] = (int8_t)rnd_range(-128, 127);
    for (int i = 0; i < p.ln.norm; i++) {
      s[i] = 0.5f + rnd_unit();
      b[i] = rnd_unit() - 0.5f;
    }
    tidsp_qdq_params dq = {n, 1, 1, TIDSP_DTYPE_I8}, q = dq;
    int32_t xz = p.x_zp, yz = p.y_zp;
    CHECK(tidsp_dequantize(&dq, &p.x_scale, &xz, x, xf) == TIDSP_OK);
    CHECK(tidsp_layer_norm_f32(&p.ln, xf, s, with_bias ? b : NULL, yf) == TIDSP_OK);
    CHECK(tidsp_quantize(&q, &p.y_scale, &yz, yf, want) == TIDSP_OK);
    CHECK(tidsp_layer_norm_i8(&p, x, s, with_bias ? b : NULL, y) == TIDSP_OK);
    CHECK_MSG(memcmp(y, want, (size_t)n) == 0, "outer %d norm %d", p.ln.outer, p.ln.norm);
    int8_t *r = malloc((size_t)n);
    CHECK(tidsp_layer_norm_i8__ref(&p, x, s, with_bias ? b : NULL, r) == TIDSP_OK);
    CHECK(memcmp(r, y, (size_t)n) == 0);
    free(r);
    CHECK(guards_ok(y, (size_t)n));
    CHECK(tidsp_layer_norm_i8(&p, x, s, with_bias ? b : NULL, x) == TIDSP_OK);
    CHECK(memcmp(x, want, (size_t)n) == 0);
    free(x);
    free(want);
    free(xf);
    free(yf);
    free(s);
    free(b);
    guarded_free(y);
  }
  tidsp_layer_norm_i8_params p;
  memset(&p, 0, sizeof p);
  p.ln.outer = 1;
  p.ln.norm = 1;
  float v = 1.0f;
  int8_t q = 0;
  CHECK(tidsp_layer_norm_i8(&p, &q, &v, NULL, &q) == TIDSP_ERR_PARAM); /* y_scale 0 */
  p.y_scale = 1.0f;
  p.x_zp = 500;
  CHECK(tidsp_layer_norm_i8(&p, &q, &v, NULL, &q) == TIDSP_ERR_PARAM);
  CHECK(tidsp_layer_norm_i8(&p, &q, NULL, NULL, &q) == TIDSP_ERR_NULL);
}

/* Weight-only int8 linear: float dot products of the int8 weights, scaled
 * once per column; every K (no K mod 8 tail dropped, unlike TI's fork). */
static void test_dequantize_vecmatmul(void) {
  for (int iter = 0; iter < 200; iter++) {
    int32_t M = rnd_range(1, 6), K = rnd_range(1, 70), N = rnd_range(1, 20);
    float *act = malloc(sizeof(float) * (size_t)(M * K)), *scale = malloc(sizeof(float) * (size_t)N);
    int8_t *w = malloc((size_t)(N * K));
    float *out = guarded(sizeof(float) * (size_t)(M * N));
    for (int i = 0; i < M * K; i++) act[i] = rnd_unit() * 4.0f - 2.0f;
    for (int i = 0; i < N * K; i++) w[i] = (int8_t)rnd_range(-127, 127);
    for (int i = 0; i < N; i++) scale[i] = 0.001f + rnd_unit() * 0.01f;
    CHECK(c7x_dequantize_vecmatmul(act, w, scale, out, M, K, N) == TIDSP_OK);
    int bad = 0;
    for (int m = 0; m < M; m++)
      for (int n = 0; n < N; n++) {
        double want = 0.0, mag = 0.0;
        for (int k = 0; k < K; k++) {
          want += (double)act[m * K + k] * w[n * K + k];
          mag += fabs((double)act[m * K + k] * w[n * K + k]);
        }
        want *= scale[n];
        bad += fabs(out[m * N + n] - want) > 1e-6 * (mag * scale[n] + 1e-3);
      }
    CHECK_MSG(bad == 0, "M %d K %d N %d: %d off", M, K, N, bad);
    CHECK(guards_ok(out, sizeof(float) * (size_t)(M * N)));
    free(act);
    free(scale);
    free(w);
    guarded_free(out);
  }
  float f = 0.0f;
  int8_t q = 0;
  CHECK(c7x_dequantize_vecmatmul(&f, &q, &f, &f, 1, 0, 1) == TIDSP_ERR_SHAPE);
  CHECK(c7x_dequantize_vecmatmul(NULL, &q, &f, &f, 1, 1, 1) == TIDSP_ERR_NULL);
}

/* Embedding lookups: rows copied per index, negative indices from the end,
 * an out-of-range index refused before anything is written. */
static void test_gather(void) {
  for (int iter = 0; iter < 200; iter++) {
    tidsp_gather_params p = {rnd_range(1, 4), rnd_range(1, 12), rnd_range(0, 24), rnd_range(0, 9),
                             (rnd() & 1) ? 8 : 4};
    int nd = p.outer * p.axis_dim * p.inner_bytes, ny = p.outer * p.count * p.inner_bytes;
    uint8_t *data = malloc((size_t)nd + 1), *y = guarded((size_t)ny + 1);
    int64_t idx64[9];
    int32_t idx32[9];
    for (int i = 0; i < nd; i++) data[i] = (uint8_t)rnd();
    for (int i = 0; i < p.count; i++) idx64[i] = idx32[i] = rnd_range(-p.axis_dim, p.axis_dim - 1);
    const void *idx = p.index_bytes == 8 ? (const void *)idx64 : (const void *)idx32;
    CHECK(tidsp_gather(&p, data, idx, y) == TIDSP_OK);
    int bad = 0;
    for (int o = 0; o < p.outer; o++)
      for (int i = 0; i < p.count; i++) {
        int64_t v = idx64[i] < 0 ? idx64[i] + p.axis_dim : idx64[i];
        bad += memcmp(y + (o * p.count + i) * p.inner_bytes, data + (o * p.axis_dim + v) * p.inner_bytes,
                      (size_t)p.inner_bytes) != 0;
      }
    CHECK_MSG(bad == 0, "outer %d dim %d inner %d count %d", p.outer, p.axis_dim, p.inner_bytes, p.count);
    CHECK(guards_ok(y, (size_t)ny + 1));
    if (p.count > 0) { /* one index past the end: refused, y untouched */
      memset(y, 0x5A, (size_t)ny);
      idx64[p.count - 1] = idx32[p.count - 1] = p.axis_dim;
      CHECK(tidsp_gather(&p, data, idx, y) == TIDSP_ERR_PARAM);
      int touched = 0;
      for (int i = 0; i < ny; i++) touched += y[i] != 0x5A;
      CHECK(touched == 0);
    }
    free(data);
    guarded_free(y);
  }
  tidsp_gather_params p = {1, 1, 1, 1, 2};
  int64_t i0 = 0;
  uint8_t b = 0;
  CHECK(tidsp_gather(&p, &b, &i0, &b) == TIDSP_ERR_PARAM);
  p.index_bytes = 8;
  p.axis_dim = 0;
  CHECK(tidsp_gather(&p, &b, &i0, &b) == TIDSP_ERR_SHAPE);
  CHECK(tidsp_gather(NULL, &b, &i0, &b) == TIDSP_ERR_NULL);
}

/* Where with every operand broadcast in turn (a causal mask [1,1,T,T]
 * against scores [1,H,T,T], a scalar fill): each output equals the
 * operand its condition picks, found by unravelling the output index. */
static void test_where(void) {
  for (int iter = 0; iter < 200; iter++) {
    tidsp_where_params p;
    memset(&p, 0, sizeof p);
    int r = rnd_range(1, 4), n = 1;
    int32_t cs[4], xs[4], ys[4]; /* operand dims: 1 or the output's */
    p.bc.rank = r;
    p.elem_size = 4;
    for (int d = 0; d < r; d++) {
      p.bc.shape[d] = rnd_range(1, 5);
      n *= p.bc.shape[d];
      cs[d] = rnd() & 1 ? p.bc.shape[d] : 1;
      xs[d] = rnd() & 1 ? p.bc.shape[d] : 1;
      ys[d] = rnd() & 1 ? p.bc.shape[d] : 1;
    }
    int nc = 1, nx = 1, ny = 1;
    for (int d = r - 1; d >= 0; d--) { /* row-major strides, 0 where broadcast */
      p.c_stride[d] = cs[d] == 1 ? 0 : nc;
      p.bc.a_stride[d] = xs[d] == 1 ? 0 : nx;
      p.bc.b_stride[d] = ys[d] == 1 ? 0 : ny;
      nc *= cs[d], nx *= xs[d], ny *= ys[d];
    }
    uint8_t *c = malloc((size_t)nc);
    float *x = malloc(sizeof(float) * (size_t)nx), *y = malloc(sizeof(float) * (size_t)ny);
    float *out = guarded(sizeof(float) * (size_t)n);
    for (int i = 0; i < nc; i++) c[i] = (uint8_t)(rnd() & 1);
    for (int i = 0; i < nx; i++) x[i] = (float)i;
    for (int i = 0; i < ny; i++) y[i] = -1.0f - (float)i;
    CHECK(tidsp_where(&p, c, x, y, out) == TIDSP_OK);
    int bad = 0;
    for (int i = 0; i < n; i++) {
      int rem = i, oc = 0, ox = 0, oy = 0;
      for (int d = r - 1; d >= 0; d--) {
        int id = rem % p.bc.shape[d];
        rem /= p.bc.shape[d];
        oc += id * p.c_stride[d], ox += id * p.bc.a_stride[d], oy += id * p.bc.b_stride[d];
      }
      bad += out[i] != (c[oc] ? x[ox] : y[oy]);
    }
    CHECK_MSG(bad == 0, "rank %d: %d wrong", r, bad);
    CHECK(guards_ok(out, sizeof(float) * (size_t)n));
    free(c);
    free(x);
    free(y);
    guarded_free(out);
  }
  tidsp_where_params p;
  memset(&p, 0, sizeof p);
  float v = 0.0f;
  uint8_t c = 1;
  CHECK(tidsp_where(&p, &c, &v, &v, &v) == TIDSP_ERR_SHAPE); /* elem_size 0 */
  CHECK(tidsp_where(NULL, &c, &v, &v, &v) == TIDSP_ERR_NULL);
}

/* One attention decode step against a double oracle: grouped KV heads
 * (nq a multiple of nkv), with and without a mask (−inf entries). */
static void test_sdpa_decode(void) {
  for (int iter = 0; iter < 150; iter++) {
    int32_t nkv = rnd_range(1, 3), nq = nkv * rnd_range(1, 3), hd = rnd_range(1, 20), L = rnd_range(1, 24);
    int with_mask = rnd() & 1;
    float *q = malloc(sizeof(float) * (size_t)(nq * hd)), *k = malloc(sizeof(float) * (size_t)(nkv * L * hd));
    float *v = malloc(sizeof(float) * (size_t)(nkv * L * hd)), *mask = malloc(sizeof(float) * (size_t)L);
    float *out = guarded(sizeof(float) * (size_t)(nq * hd));
    for (int i = 0; i < nq * hd; i++) q[i] = rnd_unit() * 2.0f - 1.0f;
    for (int i = 0; i < nkv * L * hd; i++) k[i] = rnd_unit() * 2.0f - 1.0f, v[i] = rnd_unit() * 2.0f - 1.0f;
    for (int j = 0; j < L; j++) mask[j] = j > 0 && (rnd() % 4 == 0) ? -INFINITY : rnd_unit() - 0.5f;
    CHECK(c7x_sdpa_decode(q, k, v, with_mask ? mask : NULL, out, nq, nkv, hd, L) == TIDSP_OK);
    int bad = 0;
    for (int h = 0; h < nq; h++) {
      const float *kh = k + (size_t)(h / (nq / nkv)) * L * hd, *vh = v + (size_t)(h / (nq / nkv)) * L * hd;
      double s[24], mx = -INFINITY, sum = 0.0;
      for (int j = 0; j < L; j++) {
        double d = 0.0;
        for (int i = 0; i < hd; i++) d += (double)q[h * hd + i] * kh[j * hd + i];
        s[j] = d / sqrt((double)hd) + (with_mask ? mask[j] : 0.0);
        mx = s[j] > mx ? s[j] : mx;
      }
      for (int j = 0; j < L; j++) sum += exp(s[j] - mx);
      for (int i = 0; i < hd; i++) {
        double want = 0.0;
        for (int j = 0; j < L; j++) want += exp(s[j] - mx) / sum * vh[j * hd + i];
        bad += fabs(out[h * hd + i] - want) > 1e-5;
      }
    }
    CHECK_MSG(bad == 0, "nq %d nkv %d hd %d L %d mask %d: %d off", nq, nkv, hd, L, with_mask, bad);
    CHECK(guards_ok(out, sizeof(float) * (size_t)(nq * hd)));
    free(q);
    free(k);
    free(v);
    free(mask);
    guarded_free(out);
  }
  float f = 0.0f;
  CHECK(c7x_sdpa_decode(&f, &f, &f, NULL, &f, 3, 2, 1, 1) == TIDSP_ERR_SHAPE); /* nq % nkv */
  CHECK(c7x_sdpa_decode(&f, &f, &f, NULL, &f, 1, 1, 0, 1) == TIDSP_ERR_SHAPE);
  CHECK(c7x_sdpa_decode(NULL, &f, &f, NULL, &f, 1, 1, 1, 1) == TIDSP_ERR_NULL);
}

/* Cast's edges: float → int truncates and saturates (NaN → 0), int → int
 * wraps, anything → bool is != 0; Expand broadcasts like numpy. */
static void test_cast_expand(void) {
  const float f[6] = {1.9f, -1.9f, 300.0f, -300.0f, NAN, 0.0f};
  int8_t i8[6];
  uint8_t b[6];
  tidsp_cast_params c = {6, TIDSP_DTYPE_F32, TIDSP_DTYPE_I8};
  CHECK(tidsp_cast(&c, f, i8) == TIDSP_OK);
  CHECK(i8[0] == 1 && i8[1] == -1 && i8[2] == 127 && i8[3] == -128 && i8[4] == 0 && i8[5] == 0);
  c.to = TIDSP_DTYPE_BOOL;
  CHECK(tidsp_cast(&c, f, b) == TIDSP_OK);
  CHECK(b[0] == 1 && b[4] == 1 && b[5] == 0); /* NaN != 0 */
  const int64_t v[3] = {300, -1, (int64_t)1 << 40};
  int32_t i32[3];
  float g[3];
  c = (tidsp_cast_params){3, TIDSP_DTYPE_I64, TIDSP_DTYPE_I8};
  CHECK(tidsp_cast(&c, v, i8) == TIDSP_OK && i8[0] == 44 && i8[1] == -1 && i8[2] == 0); /* wraps */
  c.to = TIDSP_DTYPE_I32;
  CHECK(tidsp_cast(&c, v, i32) == TIDSP_OK && i32[0] == 300 && i32[2] == 0);
  c.to = TIDSP_DTYPE_F32;
  CHECK(tidsp_cast(&c, v, g) == TIDSP_OK && g[0] == 300.0f && g[2] == 1099511627776.0f);
  c.to = 99;
  CHECK(tidsp_cast(&c, v, g) == TIDSP_ERR_DTYPE);
  /* Expand [3,1] → [2,3,4] */
  const float x[3] = {1.0f, 2.0f, 3.0f};
  float y[24];
  tidsp_expand_params e = {3, {2, 3, 4}, {0, 1, 0}, 4};
  CHECK(tidsp_expand(&e, x, y) == TIDSP_OK);
  int bad = 0;
  for (int i = 0; i < 24; i++) bad += y[i] != x[(i / 4) % 3];
  CHECK(bad == 0);
  e.elem_size = 0;
  CHECK(tidsp_expand(&e, x, y) == TIDSP_ERR_SHAPE);
}

int main(void) {
  test_cast_expand();
  test_sdpa_decode();
  test_where();
  test_gather();
  test_dequantize_vecmatmul();
  test_layer_norm_i8();
  test_batch_matmul();
  test_softmax_i8();
  test_layer_norm();
  UNIT_MAIN_END();
}
