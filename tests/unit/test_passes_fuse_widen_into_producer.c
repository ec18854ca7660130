/*
 * FuseWidenIntoProducer: an exact-path layer (k_mmalib_exact_requant_i16),
 * an activation table (k_lut_i16) or a channel affine
 * (k_channel_affine_i16) whose int8 output only the next
 * exact layer's widening reads writes that int16 input itself, and each
 * rule declines: a second reader, a graph output, another zero point, a
 * padded or transposed widening, a table that is not a constant; an int16
 * table over an exact requantization's output (through a reshape copy or
 * not) folds into it (k_mmalib_exact_requant_lut16) and declines for a
 * second reader or a graph output. Through
 * the whole pipeline, two chained convs on the C7x with MMALIB (with
 * nothing, a Sigmoid table or a BatchNormalization between them) give the
 * bytes of the core's ORT-exact int8 convs, with one widening left (the
 * first layer's input); two convs reading one tensor share its widening
 * (compiler/passes/match/mmalib_exact.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_graph.h"
#include "passes/pass_list.h"
#include "passes/passes.h"
#include "target.h"
#include "unit.h"

enum { C = 32, H = 6, W = 6 };

typedef struct pair {
  cs_graph *g;
  int requant, widen; /* node ids */
  int y, y16;         /* their outputs */
} pair;

/* k_widen_i16 of y ([1, C, H, W] int8) less zp, one dense matrix: its
 * output (*node its id). */
static int dense_widen(cs_graph *g, int y, int32_t zp, int *node) {
  int64_t s4[4] = {1, C, H, W};
  int y16 = gb_node(g, CS_OP_K_WIDEN_I16, "conv2.widen", 1, &y, CS_DTYPE_I16, 4, s4, node);
  tidsp_widen_i16_params *wp = &cs_graph_node(g, *node)->k.widen;
  memset(wp, 0, sizeof *wp);
  wp->batch = 1;
  wp->rows = wp->out_rows = C * H;
  wp->cols = wp->out_cols = W;
  wp->zp = zp;
  return y16;
}

/* k_mmalib_exact_requant(z, x16, w, grid, mult) : y (out_zp -10) →
 * k_widen_i16(y, zp) : y16, y16 the graph output (structure only: the
 * pass reads no data). */
static pair make_pair(int32_t zp) {
  pair p;
  p.g = cs_graph_new("exact_widen");
  int64_t s4[4] = {1, C, H, W}, ws[4] = {C, C, 1, 1}, gs[1] = {4 * C + 1}, ms[1] = {C};
  int in[5] = {gb_value(p.g, "z", CS_DTYPE_I16, 4, s4), gb_value(p.g, "x16", CS_DTYPE_I16, 4, s4),
               kg_const_i8(p.g, "w", 4, ws, 3), gb_value(p.g, "grid", CS_DTYPE_I64, 1, gs),
               gb_value(p.g, "mult", CS_DTYPE_F32, 1, ms)};
  p.y = gb_node(p.g, CS_OP_K_MMALIB_EXACT_REQUANT, "conv1", 5, in, CS_DTYPE_I8, 4, s4, &p.requant);
  cs_graph_node(p.g, p.requant)->k.conv.rq.out_zp = -10;
  p.y16 = dense_widen(p.g, p.y, zp, &p.widen);
  int graph_in[4] = {in[0], in[1], in[3], in[4]};
  gb_set_io(p.g, 4, graph_in, 1, &p.y16);
  return p;
}

static void expect_fused(pair p) {
  CHECK_MSG(pass_fuse_widen_into_producer(p.g, NULL) == CS_OK && cs_graph_verify(p.g) == CS_OK, "%s",
            cs_error_message());
  const cs_node *r = cs_graph_node(p.g, p.requant);
  CHECK(cs_graph_node(p.g, p.widen)->dead);
  CHECK(r->op == CS_OP_K_MMALIB_EXACT_REQUANT_I16 && r->outputs[0] == p.y16);
  CHECK(cs_graph_value(p.g, p.y16)->producer == p.requant);
  CHECK_MSG(strstr(r->origin, "conv2.widen") != NULL, "origin '%s' names the widening", r->origin);
  cs_graph_free(p.g);
}

static void expect_declined(pair p, const char *rule) {
  int n_nodes = p.g->n_nodes;
  CHECK_MSG(pass_fuse_widen_into_producer(p.g, NULL) == CS_OK, "%s: %s", rule, cs_error_message());
  const cs_node *r = cs_graph_node(p.g, p.requant);
  CHECK_MSG(!cs_graph_node(p.g, p.widen)->dead && p.g->n_nodes == n_nodes && r->op == CS_OP_K_MMALIB_EXACT_REQUANT &&
                r->outputs[0] == p.y,
            "%s: must decline", rule);
  cs_graph_free(p.g);
}

/* x:i8 → k_lut_i8(table) → y → k_widen_i16(zp -7) → y16, the table a
 * constant (or, const_table 0, a graph input). */
static pair make_lut_pair(int const_table) {
  pair p;
  p.g = cs_graph_new("lut_widen");
  int64_t s4[4] = {1, C, H, W}, ts[1] = {256};
  int x = gb_value(p.g, "x", CS_DTYPE_I8, 4, s4);
  int8_t t[256];
  for (int q = 0; q < 256; q++) t[q] = (int8_t)((q * 7 + 3) % 256 - 128);
  int table = const_table ? cs_graph_add_const(p.g, "table", CS_DTYPE_I8, 1, ts, t)
                          : gb_value(p.g, "table", CS_DTYPE_I8, 1, ts);
  int in[2] = {table, x};
  p.y = gb_node(p.g, CS_OP_K_LUT_I8, "sigmoid", 2, in, CS_DTYPE_I8, 4, s4, &p.requant);
  cs_graph_node(p.g, p.requant)->k.lut.n = C * H * W;
  p.y16 = dense_widen(p.g, p.y, -7, &p.widen);
  int graph_in[2] = {x, table};
  gb_set_io(p.g, const_table ? 1 : 2, graph_in, 1, &p.y16);
  return p;
}

/* The table's pair: k_lut_i16 with the table less the zero point, the
 * same bytes as before. */
/* Pair p (its one graph input an int8 [1, C, H, W]) fused into `twin`,
 * with the same output bytes as before. */
static void expect_same_bytes(pair p, cs_op twin, uint32_t seed) {
  int8_t x[C * H * W];
  kg_fill_i8(x, C * H * W, seed);
  const void *in[1] = {x};
  size_t n0 = 0, n1 = 0;
  uint8_t *before = kg_run_output(p.g, in, &n0);
  CHECK_MSG(pass_fuse_widen_into_producer(p.g, NULL) == CS_OK && cs_graph_verify(p.g) == CS_OK, "%s",
            cs_error_message());
  const cs_node *r = cs_graph_node(p.g, p.requant);
  CHECK(cs_graph_node(p.g, p.widen)->dead && r->op == twin && r->outputs[0] == p.y16);
  uint8_t *after = kg_run_output(p.g, in, &n1);
  CHECK_MSG(before && after && n0 == n1 && memcmp(before, after, n0) == 0, "%s gives other bytes",
            cs_kernel_info_of(twin)->fn);
  free(before);
  free(after);
  cs_graph_free(p.g);
}

static void test_lut(void) {
  expect_same_bytes(make_lut_pair(1), CS_OP_K_LUT_I16, 5);

  pair p = make_lut_pair(0);
  int n_nodes = p.g->n_nodes;
  CHECK(pass_fuse_widen_into_producer(p.g, NULL) == CS_OK && !cs_graph_node(p.g, p.widen)->dead &&
        p.g->n_nodes == n_nodes && cs_graph_node(p.g, p.requant)->op == CS_OP_K_LUT_I8);
  cs_graph_free(p.g);

  p = make_lut_pair(1);
  int64_t s4[4] = {1, C, H, W};
  gb_node(p.g, CS_OP_K_WIDEN_I16, "other.widen", 1, &p.y, CS_DTYPE_I16, 4, s4, NULL);
  n_nodes = p.g->n_nodes;
  CHECK(pass_fuse_widen_into_producer(p.g, NULL) == CS_OK && !cs_graph_node(p.g, p.widen)->dead &&
        cs_graph_node(p.g, p.requant)->op == CS_OP_K_LUT_I8);
  cs_graph_free(p.g);
}

/* x:i8 → k_channel_affine_i8(s, b; y_zp -7, Relu) → y → k_widen_i16(zp)
 * → y16. */
static pair make_affine_pair(int32_t zp) {
  pair p;
  p.g = cs_graph_new("affine_widen");
  int64_t s4[4] = {1, C, H, W}, cs[1] = {C};
  int x = gb_value(p.g, "x", CS_DTYPE_I8, 4, s4);
  float sv[C], bv[C];
  for (int c = 0; c < C; c++) {
    sv[c] = 0.5f + 0.0625f * (float)(c % 11);
    bv[c] = 0.03125f * (float)(c % 7) - 0.1f;
  }
  int in[3] = {x, cs_graph_add_const(p.g, "s", CS_DTYPE_F32, 1, cs, sv),
               cs_graph_add_const(p.g, "b", CS_DTYPE_F32, 1, cs, bv)};
  p.y = gb_node(p.g, CS_OP_K_CHANNEL_AFFINE_I8, "bn", 3, in, CS_DTYPE_I8, 4, s4, &p.requant);
  tidsp_channel_affine_i8_params *ap = &cs_graph_node(p.g, p.requant)->k.channel_affine;
  memset(ap, 0, sizeof *ap);
  ap->outer = 1;
  ap->channels = C;
  ap->inner = H * W;
  ap->x_scale = 0.02f;
  ap->y_scale = 0.015f;
  ap->x_zp = 3;
  ap->y_zp = -7;
  ap->act = TIDSP_CHANNEL_AFFINE_RELU;
  p.y16 = dense_widen(p.g, p.y, zp, &p.widen);
  gb_set_io(p.g, 1, &x, 1, &p.y16);
  return p;
}

/* The channel affine's pair: k_channel_affine_i16, the same bytes as
 * before; another zero point declines. */
static void test_channel_affine(void) {
  expect_same_bytes(make_affine_pair(-7), CS_OP_K_CHANNEL_AFFINE_I16, 9);

  pair p = make_affine_pair(-6);
  int n_nodes = p.g->n_nodes;
  CHECK(pass_fuse_widen_into_producer(p.g, NULL) == CS_OK && !cs_graph_node(p.g, p.widen)->dead &&
        p.g->n_nodes == n_nodes && cs_graph_node(p.g, p.requant)->op == CS_OP_K_CHANNEL_AFFINE_I8);
  cs_graph_free(p.g);
}

/* Rule 4: k_mmalib_exact_requant : y → [k_copy (reshape) →] k_lut_i16
 * (a constant table) : y16, y16 the graph output; `extra`: 1 y read by
 * a second node too, 2 y a graph output. The requant becomes
 * k_mmalib_exact_requant_lut16 with the table (structure only). */
static void check_table_into_requant(int reshape, int extra) {
  pair p = make_pair(-10);
  cs_graph *g = p.g;
  cs_graph_remove_node(g, p.widen);
  int64_t s4[4] = {1, C, H, W}, s2[2] = {C * H, W}, ts[1] = {256};
  int y = p.y, copy = -1;
  if (reshape) {
    y = gb_node(g, CS_OP_K_COPY, "reshape", 1, &p.y, CS_DTYPE_I8, 2, s2, &copy);
    cs_graph_node(g, copy)->k.copy_bytes = C * H * W;
  }
  int16_t t16[256];
  for (int q = 0; q < 256; q++) t16[q] = (int16_t)(q * 3 - 400);
  int in[2] = {cs_graph_add_const(g, "t16", CS_DTYPE_I16, 1, ts, t16), y}, lut;
  int y16 = gb_node(g, CS_OP_K_LUT_I16, "gelu", 2, in, CS_DTYPE_I16, reshape ? 2 : 4, reshape ? s2 : s4, &lut);
  if (extra == 1) gb_node(g, CS_OP_K_LUT_I16, "other", 2, in, CS_DTYPE_I16, 4, s4, NULL);
  free(g->outputs);
  free(g->inputs);
  const int *r_in = cs_graph_node(g, p.requant)->inputs;
  int ins[4] = {r_in[0], r_in[1], r_in[3], r_in[4]}, outs[2] = {y16, p.y};
  gb_set_io(g, 4, ins, extra == 2 ? 2 : 1, outs);
  CHECK_MSG(pass_fuse_widen_into_producer(g, NULL) == CS_OK && cs_graph_verify(g) == CS_OK, "%s",
            cs_error_message());
  const cs_node *r = cs_graph_node(g, p.requant);
  int fused = !extra;
  CHECK_MSG((r->op == CS_OP_K_MMALIB_EXACT_REQUANT_LUT16) == fused && cs_graph_node(g, lut)->dead == fused &&
                (!fused || (r->n_inputs == 6 && r->inputs[5] == in[0] && r->outputs[0] == y16 &&
                            (copy < 0 || cs_graph_node(g, copy)->dead))),
            "reshape %d, extra %d: %s", reshape, extra, fused ? "must fold the table" : "must decline");
  cs_graph_free(g);
}

static void test_rules(void) {
  expect_fused(make_pair(-10));
  expect_declined(make_pair(-9), "another zero point");

  pair p = make_pair(-10);
  cs_graph_node(p.g, p.widen)->k.widen.out_cols = W + 2; /* padded to a tile */
  expect_declined(p, "padded widening");

  p = make_pair(-10);
  cs_graph_node(p.g, p.widen)->k.widen.transpose = 1;
  expect_declined(p, "transposed widening");

  p = make_pair(-10);
  int outs[2] = {p.y16, p.y};
  free(p.g->outputs);
  free(p.g->inputs);
  const int *r_in = cs_graph_node(p.g, p.requant)->inputs;
  int ins[4] = {r_in[0], r_in[1], r_in[3], r_in[4]};
  gb_set_io(p.g, 4, ins, 2, outs);
  expect_declined(p, "y a graph output");

  p = make_pair(-10);
  int64_t s4[4] = {1, C, H, W};
  gb_node(p.g, CS_OP_K_WIDEN_I16, "other.widen", 1, &p.y, CS_DTYPE_I16, 4, s4, NULL);
  expect_declined(p, "a second reader");
}

/* x → Q → DQ → conv1 (8 → 32, 3x3, pad 1) → Q(zp -10) → DQ → conv2
 * (32 → 32, 3x3, pad 1) → Q → DQ → y, with `second_reader`: conv1's DQ
 * output a graph output too. The kernel graph for `target`. */
enum { MID_NONE, MID_SIGMOID, MID_BN };
static cs_graph *two_convs(const char *target, int second_reader, int mid) {
  cs_graph *g = cs_graph_new("two_convs");
  int64_t xs[4] = {1, 8, H, W}, w1s[4] = {C, 8, 3, 3}, w2s[4] = {C, C, 3, 3}, ys[4] = {1, C, H, W};
  int64_t pads[4] = {1, 1, 1, 1};
  int x = gb_value(g, "x", CS_DTYPE_F32, 4, xs);
  int q = gb_q(g, "q_in", x, gb_scalar_f32(g, "s_in", 0.04f), gb_scalar_i8(g, "z_in", 3));
  int dq = gb_dq(g, "dq_in", q, gb_scalar_f32(g, "s_in2", 0.04f), gb_scalar_i8(g, "z_in2", 3));
  int w1 = gb_dq(g, "dq_w1", kg_const_i8(g, "w1", 4, w1s, 7), gb_scalar_f32(g, "w1_s", 0.003f),
                 gb_scalar_i8(g, "w1_z", 0));
  int c1_in[2] = {dq, w1}, c1;
  int y1 = gb_node(g, CS_OP_CONV, "conv1", 2, c1_in, CS_DTYPE_F32, 4, ys, &c1);
  cs_node_set_attr_ints(cs_graph_node(g, c1), "pads", 4, pads);
  int q1 = gb_q(g, "q1", y1, gb_scalar_f32(g, "s1", 0.05f), gb_scalar_i8(g, "z1", -10));
  int d1 = gb_dq(g, "d1", q1, gb_scalar_f32(g, "s1b", 0.05f), gb_scalar_i8(g, "z1b", -10));
  if (mid == MID_SIGMOID) { /* DQ → Sigmoid → Q(1/256, -128) → DQ: a table */
    int sg = gb_node(g, CS_OP_SIGMOID, "sigmoid", 1, &d1, CS_DTYPE_F32, 4, ys, NULL);
    int qs = gb_q(g, "qs", sg, gb_scalar_f32(g, "ss", 1.0f / 256), gb_scalar_i8(g, "zs", -128));
    d1 = gb_dq(g, "ds", qs, gb_scalar_f32(g, "ssb", 1.0f / 256), gb_scalar_i8(g, "zsb", -128));
  } else if (mid == MID_BN) { /* DQ → BatchNormalization → Q(0.04, 6) → DQ: a channel affine */
    int64_t cs[1] = {C};
    float sc[C], bb[C], mean[C], var[C];
    for (int c = 0; c < C; c++) {
      sc[c] = 0.75f + 0.03125f * (float)(c % 9);
      bb[c] = 0.0625f * (float)(c % 5) - 0.125f;
      mean[c] = 0.01f * (float)(c % 13);
      var[c] = 0.5f + 0.125f * (float)(c % 3);
    }
    int bin[5] = {d1, cs_graph_add_const(g, "bn_s", CS_DTYPE_F32, 1, cs, sc),
                  cs_graph_add_const(g, "bn_b", CS_DTYPE_F32, 1, cs, bb),
                  cs_graph_add_const(g, "bn_mean", CS_DTYPE_F32, 1, cs, mean),
                  cs_graph_add_const(g, "bn_var", CS_DTYPE_F32, 1, cs, var)};
    int bn;
    int yb = gb_node(g, CS_OP_BATCH_NORMALIZATION, "bn", 5, bin, CS_DTYPE_F32, 4, ys, &bn);
    cs_node_add_attr(cs_graph_node(g, bn), "epsilon", CS_ATTR_FLOAT)->f = 1e-5f;
    int qb = gb_q(g, "qb", yb, gb_scalar_f32(g, "sb", 0.04f), gb_scalar_i8(g, "zb", 6));
    d1 = gb_dq(g, "db", qb, gb_scalar_f32(g, "sbb", 0.04f), gb_scalar_i8(g, "zbb", 6));
  }
  int w2 = gb_dq(g, "dq_w2", kg_const_i8(g, "w2", 4, w2s, 11), gb_scalar_f32(g, "w2_s", 0.002f),
                 gb_scalar_i8(g, "w2_z", 0));
  int c2_in[2] = {d1, w2}, c2;
  int y2 = gb_node(g, CS_OP_CONV, "conv2", 2, c2_in, CS_DTYPE_F32, 4, ys, &c2);
  cs_node_set_attr_ints(cs_graph_node(g, c2), "pads", 4, pads);
  int q2 = gb_q(g, "q2", y2, gb_scalar_f32(g, "s2", 0.06f), gb_scalar_i8(g, "z2", 5));
  int y = gb_dq(g, "d2", q2, gb_scalar_f32(g, "s2b", 0.06f), gb_scalar_i8(g, "z2b", 5));
  int outs[2] = {y, d1};
  gb_set_io(g, 1, &x, second_reader ? 2 : 1, outs);
  cs_target t;
  CHECK_MSG(cs_target_parse(target, &t) == CS_OK, "%s: %s", target, cs_error_message());
  CHECK_MSG(cs_passes_run(g, &t, NULL) == CS_OK, "%s: %s", target, cs_error_message());
  return g;
}

/* The C7x graph g and the core's ref give the same bytes on one input
 * (x[i] from `mul`); both freed. */
static void expect_core_bytes(cs_graph *g, cs_graph *ref, int mul, const char *what) {
  float x[8 * H * W];
  for (int i = 0; i < 8 * H * W; i++) x[i] = (float)((i * mul) % 101 - 50) * 0.05f;
  const void *in[1] = {x};
  size_t n0 = 0, n1 = 0;
  uint8_t *got = kg_run_output(g, in, &n0), *want = kg_run_output(ref, in, &n1);
  CHECK_MSG(got && want && n0 == n1 && memcmp(got, want, n0) == 0,
            "%s: the C7x exact path differs from the core's ORT-exact convs", what);
  free(got);
  free(want);
  cs_graph_free(g);
  cs_graph_free(ref);
}

static void check_pipeline(int second_reader, int mid) {
  const char *c7x = "c_static_lib -mcpu=c7x -mmalib=1 -constants-byte-alignment=64";
  cs_graph *g = two_convs(c7x, second_reader, mid);
  cs_graph *ref = two_convs("c_static_lib -requant=float", second_reader, mid);
  int sigmoid = mid == MID_SIGMOID, bn = mid == MID_BN;
  int fused = !second_reader, twins = fused && !mid, tables = fused && sigmoid, affines = fused && bn;
  /* a table made int16 folds into conv1's requantization (rule 4) */
  CHECK_MSG(gb_count_op(g, CS_OP_K_MMALIB_EXACT_REQUANT_I16) == twins &&
                gb_count_op(g, CS_OP_K_MMALIB_EXACT_REQUANT_LUT16) == tables &&
                gb_count_op(g, CS_OP_K_MMALIB_EXACT_REQUANT) == 2 - twins - tables &&
                gb_count_op(g, CS_OP_K_LUT_I16) == 0 && gb_count_op(g, CS_OP_K_LUT_I8) == sigmoid - tables &&
                gb_count_op(g, CS_OP_K_CHANNEL_AFFINE_I16) == affines &&
                gb_count_op(g, CS_OP_K_CHANNEL_AFFINE_I8) == bn - affines &&
                gb_count_op(g, CS_OP_K_WIDEN_I16) == 2 - fused,
            "second reader %d, mid %d: %d twins, %d table twins, %d requants, %d int16 tables, %d int16 affines, "
            "%d widenings",
            second_reader, mid, gb_count_op(g, CS_OP_K_MMALIB_EXACT_REQUANT_I16),
            gb_count_op(g, CS_OP_K_MMALIB_EXACT_REQUANT_LUT16), gb_count_op(g, CS_OP_K_MMALIB_EXACT_REQUANT),
            gb_count_op(g, CS_OP_K_LUT_I16),
            gb_count_op(g, CS_OP_K_CHANNEL_AFFINE_I16), gb_count_op(g, CS_OP_K_WIDEN_I16));
  char what[64];
  snprintf(what, sizeof what, "second reader %d, mid %d", second_reader, mid);
  expect_core_bytes(g, ref, 37, what);
}

/* x → Q → DQ read by two convs (8 → 32, 3x3 pad 1 and 1x1), each → Q →
 * DQ → a graph output: the kernel graph for `target`. */
static cs_graph *two_readers(const char *target) {
  cs_graph *g = cs_graph_new("two_readers");
  int64_t xs[4] = {1, 8, H, W}, was[4] = {C, 8, 3, 3}, wbs[4] = {C, 8, 1, 1}, ys[4] = {1, C, H, W};
  int64_t pads[4] = {1, 1, 1, 1};
  int x = gb_value(g, "x", CS_DTYPE_F32, 4, xs);
  int q = gb_q(g, "q_in", x, gb_scalar_f32(g, "s_in", 0.04f), gb_scalar_i8(g, "z_in", 3));
  int dq = gb_dq(g, "dq_in", q, gb_scalar_f32(g, "s_in2", 0.04f), gb_scalar_i8(g, "z_in2", 3));
  int outs[2];
  for (int j = 0; j < 2; j++) {
    char n[6][16];
    const char *what[6] = {"w", "dq_w", "w_s", "w_z", "conv", "q"};
    for (int k = 0; k < 6; k++) snprintf(n[k], sizeof n[k], "%s%d", what[k], j);
    int w = gb_dq(g, n[1], kg_const_i8(g, n[0], 4, j ? wbs : was, 7 + (uint32_t)j), gb_scalar_f32(g, n[2], 0.003f),
                  gb_scalar_i8(g, n[3], 0));
    int c_in[2] = {dq, w}, c;
    int y = gb_node(g, CS_OP_CONV, n[4], 2, c_in, CS_DTYPE_F32, 4, ys, &c);
    if (!j) cs_node_set_attr_ints(cs_graph_node(g, c), "pads", 4, pads);
    int yq = gb_q(g, n[5], y, gb_scalar_f32(g, j ? "so1" : "so0", 0.05f), gb_scalar_i8(g, j ? "zo1" : "zo0", -10));
    outs[j] = gb_dq(g, j ? "dq_o1" : "dq_o0", yq, gb_scalar_f32(g, j ? "so1b" : "so0b", 0.05f),
                    gb_scalar_i8(g, j ? "zo1b" : "zo0b", -10));
  }
  gb_set_io(g, 1, &x, 2, outs);
  cs_target t;
  CHECK_MSG(cs_target_parse(target, &t) == CS_OK, "%s: %s", target, cs_error_message());
  CHECK_MSG(cs_passes_run(g, &t, NULL) == CS_OK, "%s: %s", target, cs_error_message());
  return g;
}

/* Two exact layers reading one int8 tensor share its widening: one
 * k_widen_i16, and the core's ORT-exact bytes. */
static void check_shared_widening(void) {
  cs_graph *g = two_readers("c_static_lib -mcpu=c7x -mmalib=1 -constants-byte-alignment=64");
  cs_graph *ref = two_readers("c_static_lib -requant=float");
  CHECK_MSG(gb_count_op(g, CS_OP_K_WIDEN_I16) == 1 && gb_count_op(g, CS_OP_K_MMALIB_EXACT_REQUANT) == 2,
            "%d widenings, %d requants", gb_count_op(g, CS_OP_K_WIDEN_I16),
            gb_count_op(g, CS_OP_K_MMALIB_EXACT_REQUANT));
  expect_core_bytes(g, ref, 53, "two readers of one widening");
}

int main(void) {
  test_rules();
  test_lut();
  test_channel_affine();
  for (int i = 0; i < 6; i++) check_table_into_requant(i & 1, i >> 1);
  for (int i = 0; i < 6; i++) check_pipeline(i & 1, i >> 1);
  check_shared_widening();
  UNIT_MAIN_END();
}
