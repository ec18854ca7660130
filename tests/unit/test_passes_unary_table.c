/*
 * test_passes_unary_table.c — the compiler's activation tables and the
 * runtime's float kernel agree bit for bit on every op of
 * cstatic/unary_ops.def (one implementation per function):
 *
 *  - the kernel one element at a time (as a table entry or a folded scalar
 *    is computed) equals the kernel over long runs (as generated code calls
 *    it), NaN payloads and the sign of zero included, on a dense sample of
 *    all 2^32 floats: every 4093rd bit pattern plus ±0, ±inf, NaNs with
 *    payloads, subnormals, the int8 tables' input points and the
 *    neighbours of every op's breakpoints. `test_passes_unary_table --all
 *    [NAME…]` runs every one of the 2^32 bit patterns instead, for every
 *    op or the ones named (minutes per op);
 *  - cs_lut_const's 256 entries equal the run-time float path DQ → op → Q
 *    through the dispatched kernels, for every op over a grid of input and
 *    output quantizations.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant/quant.h"
#include "unit.h"

typedef struct op_case {
  const char *name;
  tidsp_unary_f32_params p;
} op_case;

/* Every row, with its attributes' defaults (Clip: [-2.5, 6]). */
static const op_case ops[] = {
#define TIDSP_UNARY(NAME, fn, IR, op_type, alpha_attr, alpha, beta_attr, beta) \
  {#NAME, {0, TIDSP_UNARY_##NAME, alpha, beta, 0.0f, 0.0f}},
#define TIDSP_UNARY_KERNEL(NAME, fn) {#NAME, {0, TIDSP_UNARY_##NAME, 0.0f, 0.0f, -2.5f, 6.0f}},
#include "cstatic/unary_ops.def"
};
enum { N_OPS = sizeof ops / sizeof ops[0], CHUNK = 1 << 16 };

static uint32_t bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* One element at a time against one call over the whole chunk. */
static int64_t compare_chunk(const op_case *c, const float *x, int n) {
  static float batch[CHUNK];
  tidsp_unary_f32_params p = c->p;
  p.n = n;
  if (tidsp_unary_f32(&p, x, batch) != TIDSP_OK) return -1;
  int64_t bad = 0;
  p.n = 1;
  for (int i = 0; i < n; i++) {
    float one = 0.0f;
    if (tidsp_unary_f32(&p, &x[i], &one) != TIDSP_OK || bits(one) != bits(batch[i])) {
      if (!bad)
        fprintf(stderr, "%s(0x%08x): one at a time 0x%08x, in a run 0x%08x\n", c->name, bits(x[i]), bits(one),
                bits(batch[i]));
      bad++;
    }
  }
  return bad;
}

/* Special values and the points where ops change behaviour, with their
 * neighbours. */
static int special_values(float *x) {
  static const uint32_t fixed[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u,
                                   0xffc00000u, 0x7f800001u, 0xff800001u, 0x7fa5a5a5u, 0xffc0ffeeu,
                                   0x7fffffffu, 0xffffffffu, 0x00000001u, 0x80000001u, 0x007fffffu,
                                   0x807fffffu, 0x00800000u, 0x80800000u, 0x7f7fffffu, 0xff7fffffu};
  static const float points[] = {0.5f, 1.0f, 2.0f, 2.5f, 3.0f, 6.0f, 8.0f, 9.0f, 10.0f, 15.0f, 18.0f, 20.0f, 88.7f,
                                 89.0f, 1e-3f, 1e-20f, 1e20f, 3.14159265f, 1.5707964f};
  int n = 0;
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) x[n++] = from_bits(fixed[i]);
  for (size_t i = 0; i < sizeof points / sizeof points[0]; i++) {
    for (int s = -1; s <= 1; s += 2) {
      float v = (float)s * points[i];
      x[n++] = v;
      x[n++] = nextafterf(v, INFINITY);
      x[n++] = nextafterf(v, -INFINITY);
    }
  }
  /* the input points of int8 tables: s·(q − zp) */
  static const float scales[] = {0.0039215689f, 0.023529412f, 0.1f, 0.0625f, 0.31f};
  for (size_t k = 0; k < sizeof scales / sizeof scales[0]; k++)
    for (int q = -128; q < 128; q++) x[n++] = cs_dequantize_one(q, scales[k], (int32_t)k * 11 - 20);
  return n;
}

static int selected(const char *name, int argc, char **argv) {
  if (argc <= 2) return 1;
  for (int i = 2; i < argc; i++)
    if (!strcmp(argv[i], name)) return 1;
  return 0;
}

static void each_op_is_one_function(int all, int argc, char **argv) {
  float *x = malloc(sizeof(float) * CHUNK);
  for (int o = 0; o < N_OPS; o++) {
    if (all && !selected(ops[o].name, argc, argv)) continue;
    int64_t bad = 0, seen = 0;
    int n = special_values(x);
    bad += compare_chunk(&ops[o], x, n);
    seen += n;
    const uint64_t step = all ? 1 : 4093;
    n = 0;
    for (uint64_t u = all ? 0 : 1234; u <= 0xffffffffu; u += step) {
      x[n++] = from_bits((uint32_t)u);
      if (n == CHUNK) {
        bad += compare_chunk(&ops[o], x, n);
        seen += n;
        n = 0;
      }
    }
    bad += compare_chunk(&ops[o], x, n);
    seen += n;
    CHECK_MSG(bad == 0, "%s: %lld of %lld inputs differ", ops[o].name, (long long)bad, (long long)seen);
    if (all) printf("%-12s %lld inputs, %lld differ\n", ops[o].name, (long long)seen, (long long)bad);
  }
  free(x);
}

/* cs_lut_const against DQ → op → Q through the run-time (dispatched)
 * kernels, for one op and one pair of quantizations; 1 when equal. */
static int table_matches(const op_case *c, float si, int32_t zi, float so, int32_t zo) {
  int8_t q[256], via_kernels[256];
  float xf[256], yf[256];
  for (int i = 0; i < 256; i++) q[i] = (int8_t)(i - 128);
  cs_qparams in = {CS_DTYPE_I8, -1, 1, &si, {zi}, NULL, NULL}, out = {CS_DTYPE_I8, -1, 1, &so, {zo}, NULL, NULL};
  in.zps = in.zp;
  out.zps = out.zp;
  cs_graph *g = cs_graph_new("lut");
  int lut = cs_lut_const(g, c->name, &c->p, &in, &out);
  tidsp_qdq_params qp = {256, 1, 1, TIDSP_DTYPE_I8};
  tidsp_unary_f32_params up = c->p;
  up.n = 256;
  int ok = lut >= 0 && tidsp_dequantize(&qp, &si, &zi, q, xf) == TIDSP_OK &&
           tidsp_unary_f32(&up, xf, yf) == TIDSP_OK && tidsp_quantize(&qp, &so, &zo, yf, via_kernels) == TIDSP_OK &&
           !memcmp(cs_graph_value(g, lut)->data, via_kernels, 256);
  cs_graph_free(g);
  if (!ok)
    fprintf(stderr, "%s: table (in %a/%d, out %a/%d) differs from DQ -> op -> Q\n", c->name, (double)si, (int)zi,
            (double)so, (int)zo);
  return ok;
}

/* Every op over a grid of quantizations, then 2000 seeded random ones
 * (scales from 2^-10 to 2, any zero point): a one-ulp difference between
 * two implementations of an op flips a table entry only near a rounding
 * boundary, so it takes many tables to show. */
static void tables_are_the_float_path(void) {
  static const float in_scales[] = {0.003f, 0.02f, 0.0625f, 0.1f, 0.37f};
  static const int32_t in_zps[] = {-128, -7, 0, 13, 127};
  static const float out_scales[] = {1.0f / 256.0f, 0.01f, 0.05f, 0.2f};
  static const int32_t out_zps[] = {-128, 0, 3, -100};
  for (int o = 0; o < N_OPS; o++) {
    int bad = 0, n = 0;
    for (size_t a = 0; a < sizeof in_scales / sizeof in_scales[0]; a++)
      for (size_t b = 0; b < sizeof in_zps / sizeof in_zps[0]; b++)
        for (size_t c = 0; c < sizeof out_scales / sizeof out_scales[0]; c++, n++)
          bad += !table_matches(&ops[o], in_scales[a], in_zps[b], out_scales[c], out_zps[c]);
    uint32_t seed = 77u + (uint32_t)o;
    for (int k = 0; k < 2000 && bad < 3; k++, n++) {
      float r[4];
      for (int j = 0; j < 4; j++) {
        seed = seed * 1664525u + 1013904223u;
        r[j] = (float)(seed >> 8) / 16777216.0f;
      }
      bad += !table_matches(&ops[o], exp2f(-10.0f + 11.0f * r[0]), (int32_t)(r[1] * 256.0f) - 128,
                            exp2f(-10.0f + 11.0f * r[2]), (int32_t)(r[3] * 256.0f) - 128);
    }
    CHECK_MSG(bad == 0, "%s: %d of %d tables differ from the float path", ops[o].name, bad, n);
  }
}

int main(int argc, char **argv) {
  int all = argc > 1 && !strcmp(argv[1], "--all");
  CHECK((int)N_OPS == (int)TIDSP_UNARY_COUNT_);
  for (int o = 0; o < N_OPS; o++) CHECK(ops[o].p.op == o); /* rows in op-code order */
  each_op_is_one_function(all, argc, argv);
  tables_are_the_float_path();
  UNIT_MAIN_END();
}
