/*
 * The MatMulNBits fold (compiler/eval/matmul_nbits.c): ONNX Runtime's
 * CompInt8 arithmetic, checked two ways:
 *   - outputs ONNX Runtime 1.30 computed (AVX-512 VNNI, 1 thread) for three
 *     small MatMuls it runs as MatMulNBits: per-column scales with a bias
 *     and a [N][K] weight, a per-tensor scale with zero point 5, per-column
 *     zero points with a bias; a row of zeros (scale 0) and a row whose
 *     largest |a| appears twice. Every value must be bit-identical, and
 *     the plain float product must differ from them (else the case would
 *     not test the quantization of A);
 *   - random cases against a scalar model written from the formula in
 *     matmul_nbits.h with the signed weights and their zero point kept
 *     apart, each rounding spelled out in double (one float rounding per
 *     step: the products and sums of two floats are exact in double).
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "eval/matmul_nbits.h"
#include "unit.h"

/* percol_bias_nk: M=4 K=3 N=6 */
static const float percol_bias_nk_a[] = {0x1.c377e0p-11f, 0x1.ac4818p-3f, -0x1.890108p-3f, -0x1.3f3028p-1f, -0x1.45e874p-2f, -0x1.6367f8p-1f, 0x0p+0f, 0x0p+0f, 0x0p+0f, -0x1.bcc1a4p-2f, -0x1.bcc1a4p-2f, 0x1.ffa21ap-3f};
static const int8_t percol_bias_nk_w[] = {56, -63, 125, -14, -6, 1, 21, 14, 2, 126, 78, 75, 51, 31, -41, 125, -9, -73};
static const float percol_bias_nk_s[] = {0x1.4010d8p-8f, 0x1.aad39ap-7f, 0x1.6dd0f2p-9f, 0x1.5a5308p-9f, 0x1.713ad4p-7f, 0x1.5483f8p-7f};
static const int8_t percol_bias_nk_z[] = {0, 0, 0, 0, 0, 0};
static const float percol_bias_nk_b[] = {-0x1.b94c16p-5f, -0x1.3ddb16p-8f, 0x1.734a78p-7f, -0x1.395f2ep-3f, -0x1.876020p-5f, -0x1.90cd2ap-4f};
static const float percol_bias_nk_y[] = {-0x1.e20b7ep-3f, -0x1.89467ap-6f, 0x1.2f7b98p-6f, -0x1.2e2be0p-3f, 0x1.d7f48cp-4f, 0x1.f9e0a4p-6f, -0x1.19dc24p-1f, 0x1.fe0080p-4f, -0x1.538fc0p-5f, -0x1.206f92p-1f, -0x1.913160p-3f, -0x1.676d80p-2f, -0x1.b94c16p-5f, -0x1.3ddb16p-8f, 0x1.734a78p-7f, -0x1.395f2ep-3f, -0x1.876020p-5f, -0x1.90cd2ap-4f, 0x1.d07018p-4f, 0x1.c8ea50p-4f, -0x1.e6a5f0p-6f, -0x1.59c1a4p-2f, -0x1.20fc70p-1f, -0x1.9f2134p-1f};
/* tensor_zp_kn: M=3 K=2 N=5 */
static const float tensor_zp_kn_a[] = {-0x1.0d2e58p+0f, 0x1.61112ap+0f, -0x1.0cbf5ep+0f, -0x1.5a57d8p-5f, 0x1.265330p+0f, -0x1.8471c8p-1f};
static const int8_t tensor_zp_kn_w[] = {8, -60, 119, 97, -81, 2, 112, 88, 53, 35};
static const float tensor_zp_kn_s[] = {0x1.930be0p-7f};
static const int8_t tensor_zp_kn_z[] = {5};
static const float tensor_zp_kn_y[] = {-0x1.6fa938p-4f, 0x1.54226ep+1f, -0x1.1adbb0p-4f, -0x1.82cf68p-2f, 0x1.9f88a8p+0f, -0x1.30d840p-5f, 0x1.91e07cp-1f, -0x1.83a3bap+0f, -0x1.365c8ep+0f, 0x1.186078p+0f, 0x1.20b420p-4f, -0x1.eb8524p+0f, 0x1.abeca2p-1f, 0x1.b43f7ap-1f, -0x1.7f2bb4p+0f};
/* percol_zp_bias_kn: M=5 K=4 N=7 */
static const float percol_zp_bias_kn_a[] = {0x1.16497cp-1f, -0x1.3cdaf0p-1f, 0x1.6000cep-2f, 0x1.87196ap-5f, -0x1.06bf0cp-2f, 0x1.99af70p-1f, 0x1.3838bap-2f, -0x1.eb3a8ep-2f, 0x1.e8597cp-6f, 0x1.d86c92p-3f, -0x1.354cf6p-4f, 0x1.17b854p-2f, -0x1.b3ed8cp-6f, 0x1.114dfap-2f, 0x1.269c04p-1f, -0x1.14c052p-2f, 0x1.4cd282p-4f, -0x1.7b8aa4p-3f, 0x1.a1087cp-5f, -0x1.e6465ep-2f};
static const int8_t percol_zp_bias_kn_w[] = {-37, -67, -115, -25, 83, -104, -25, 119, 115, -73, -127, 43, -125, -52, -1, 95, -105, 41, 8, -95, 88, 88, -5, 113, 27, 103, 117, 17};
static const float percol_zp_bias_kn_s[] = {0x1.2ea9dep-8f, 0x1.661c76p-8f, 0x1.326b24p-6f, 0x1.874fbap-7f, 0x1.580f76p-8f, 0x1.257cacp-6f, 0x1.bbf34cp-7f};
static const int8_t percol_zp_bias_kn_z[] = {1, 1, -8, -3, 8, -2, -6};
static const float percol_zp_bias_kn_b[] = {0x1.0b814cp-4f, -0x1.3c7486p-9f, 0x1.11c4d4p-4f, -0x1.166bd0p-5f, 0x1.aef372p-4f, -0x1.1b17aep-11f, 0x1.dde826p-5f};
static const float percol_zp_bias_kn_y[] = {-0x1.67c508p-2f, -0x1.a88db4p-2f, -0x1.94aba2p-1f, 0x1.e065dep-1f, 0x1.d87658p-3f, -0x1.b4f8e0p-4f, 0x1.84c73ap-1f, 0x1.67f2f0p-2f, 0x1.86b02cp-1f, -0x1.02b638p+1f, -0x1.29e46ap+0f, -0x1.69a300p-4f, -0x1.6875c8p+1f, -0x1.1a6f3cp-3f, 0x1.2efedap-2f, 0x1.507078p-4f, 0x1.ed17b0p-2f, -0x1.4c2cf4p-2f, 0x1.2eb114p-2f, 0x1.291600p-3f, -0x1.a856a0p-4f, 0x1.9e93c0p-4f, 0x1.ea2a8ep-2f, -0x1.dcde86p+0f, -0x1.bde9c0p-3f, 0x1.07a1c0p-7f, -0x1.09f8fap+1f, 0x1.17fab8p-1f, -0x1.f039b4p-3f, -0x1.b63798p-4f, -0x1.0a4490p+0f, 0x1.420f60p-4f, -0x1.119954p-3f, -0x1.ad424cp-1f, 0x1.286e80p-4f};

static int bits_equal(const float *x, const float *y, int n) { return memcmp(x, y, sizeof(float) * (size_t)n) == 0; }

/* The float product a · dequantized(w) + bias: what folding did before. */
static void plain(const float *a, int m, int k, int n, const cs_nbits_weight *w, const float *bias, float *y) {
  for (int r = 0; r < m; r++)
    for (int c = 0; c < n; c++) {
      int s = w->count == 1 ? 0 : c;
      float acc = 0.0f;
      for (int i = 0; i < k; i++) {
        int8_t q = ((const int8_t *)w->w)[w->nk ? c * k + i : i * n + c];
        int8_t z = w->zp ? ((const int8_t *)w->zp)[s] : 0;
        acc += a[r * k + i] * ((float)(q - z) * w->scale[s]);
      }
      y[r * n + c] = bias ? acc + bias[c] : acc;
    }
}

static void golden(const char *name, const float *a, int m, int k, int n, const int8_t *wq, int nk, const float *s,
                   const int8_t *z, int count, const float *bias, const float *want) {
  cs_nbits_weight w = {.w = wq, .is_signed = 1, .nk = nk, .scale = s, .zp = z, .count = count};
  float y[64], p[64];
  cs_matmul_nbits_eval(a, m, k, n, &w, bias, y);
  CHECK_MSG(bits_equal(y, want, m * n), "%s: not ORT's MatMulNBits output", name);
  plain(a, m, k, n, &w, bias, p);
  CHECK_MSG(!bits_equal(p, want, m * n), "%s: the float product already equals ORT's", name);
}

static float f32(double x) { return (float)x; }

/* The scalar model: signed weights, the zero point apart. */
static float model_one(const float *a, int k, const int8_t *wcol, int wstride, float sb, int zp, float bias,
                       int has_bias) {
  float amax = 0.0f;
  for (int i = 0; i < k; i++) amax = fabsf(a[i]) > amax ? fabsf(a[i]) : amax;
  float sa = f32((double)amax / 127.0);
  float inv = amax == 0.0f ? 0.0f : f32(127.0 / (double)amax);
  long qsum = 0, dot_signed = 0;
  for (int i = 0; i < k; i++) {
    long q = lrint((double)f32((double)a[i] * inv)); /* ties to even: the default rounding mode */
    qsum += q;
    dot_signed += q * (long)wcol[i * wstride];
  }
  long dot_u = dot_signed + 128 * qsum; /* Σ q·(w + 128) */
  float acc = f32((double)(float)dot_u * f32((double)sa * sb));
  if (has_bias) acc = f32((double)acc + bias);
  float corr = f32((double)f32((double)sa * (double)(float)qsum) * f32(-(double)sb * (zp + 128)));
  return f32((double)acc + corr);
}

static void random_cases(void) {
  srand(11);
  int failures = 0;
  for (int t = 0; t < 200; t++) {
    int m = 1 + rand() % 6, k = 1 + rand() % CS_NBITS_MAX_K, n = 1 + rand() % 9, per_col = rand() % 2;
    int has_bias = rand() % 2;
    float a[6 * CS_NBITS_MAX_K], s[9], bias[9], y[54];
    int8_t wq[CS_NBITS_MAX_K * 9], z[9];
    for (int i = 0; i < m * k; i++) a[i] = ((float)(rand() % 20001) - 10000.0f) / (float)(1 + rand() % 5000);
    if (t % 7 == 0) memset(a, 0, sizeof(float) * (size_t)k); /* a zero row: scale 0 */
    for (int i = 0; i < k * n; i++) wq[i] = (int8_t)(rand() % 256 - 128);
    for (int c = 0; c < 9; c++) {
      s[c] = (float)(1 + rand() % 1000) / 65536.0f;
      z[c] = (int8_t)(rand() % 21 - 10);
      bias[c] = ((float)(rand() % 2001) - 1000.0f) / 997.0f;
    }
    cs_nbits_weight w = {.w = wq, .is_signed = 1, .nk = 0, .scale = s, .zp = z, .count = per_col ? n : 1};
    cs_matmul_nbits_eval(a, m, k, n, &w, has_bias ? bias : NULL, y);
    for (int r = 0; r < m; r++)
      for (int c = 0; c < n; c++) {
        int sc = per_col ? c : 0;
        float want = model_one(a + r * k, k, wq + c, n, s[sc], z[sc], bias[c], has_bias);
        if (memcmp(&want, &y[r * n + c], sizeof want) != 0) failures++;
      }
  }
  CHECK_MSG(failures == 0, "%d outputs differ from the scalar model", failures);
}

int main(void) {
  golden("percol_bias_nk", percol_bias_nk_a, 4, 3, 6, percol_bias_nk_w, 1, percol_bias_nk_s, percol_bias_nk_z, 6,
         percol_bias_nk_b, percol_bias_nk_y);
  golden("tensor_zp_kn", tensor_zp_kn_a, 3, 2, 5, tensor_zp_kn_w, 0, tensor_zp_kn_s, tensor_zp_kn_z, 1, NULL,
         tensor_zp_kn_y);
  golden("percol_zp_bias_kn", percol_zp_bias_kn_a, 5, 4, 7, percol_zp_bias_kn_w, 0, percol_zp_bias_kn_s,
         percol_zp_bias_kn_z, 7, percol_zp_bias_kn_b, percol_zp_bias_kn_y);
  random_cases();
  UNIT_MAIN_END();
}
