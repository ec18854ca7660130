/*
 * FuseMMALIBQDQConv2dI16 / FuseMMALIBQDQDwConv2dI16 — int16 convolutions
 * offloaded to MMALIB (spec/mmalib-integration.txt "Supported Operations",
 * the int16 rows; symmetric only, mmalib_common.h "int16"):
 *
 *   Q:i16( [Relu|Clip]( Conv( DQ(x:i16, zp 0), DQ(w:i16 const, zp 0), [bias] ) ), zp 0 )
 *     groups = 1              → mmalib_conv2d_i16           (C_out % 32 == 0)
 *     groups = C_in = C_out   → mmalib_depthwise_conv2d_i16 (3×3 only, MMALIB-882;
 *                                                            stride 1–2)
 *   and for both: N = 1, stride_h = stride_w, dilation 1.
 *
 * Bias int64 = round(b / (d_s·w_s[c])), scale/shift from
 * _float_to_scale_shift(d_s·w_s[c]/o_s), all at compile time. A ReLU is a
 * second call (the kernels saturate to int16 and clamp nothing else).
 *
 * A layer is looked at only when its input is DQ(int16) (the int8 pass has
 * already reported every other conv); every rule is checked before the
 * graph is touched, so a declined match is left exactly as it was for the
 * generic DQ → float Conv → Q path, and the rule goes to the offload report.
 */
#include <stdlib.h>
#include <string.h>

#include "cstatic/mmalib.h"
#include "geometry.h"
#include "mmalib_common.h"
#include "mmalib_report.h"
#include "pass_list.h"
#include "pattern.h"

typedef enum conv_kind { CONV_PLAIN, CONV_DEPTHWISE } conv_kind;

static const char *const kExtern[] = {"mmalib_conv2d_i16", "mmalib_depthwise_conv2d_i16"};
static const cs_op kOp[] = {CS_OP_K_MMALIB_CONV2D_I16, CS_OP_K_MMALIB_DWCONV2D_I16};
static const cs_offload_kind kKind[] = {CS_OFFLOAD_CONV2D, CS_OFFLOAD_DWCONV2D};

/* Depthwise: groups = C_in > 1 (the depthwise pass's layers; every other
 * conv is the plain pass's, which declines groups != 1). */
static conv_kind kind_of(cs_graph *g, const cs_node *conv) {
  const cs_value *x = cs_graph_value(g, conv->inputs[0]);
  int64_t groups = cs_node_attr_int(conv, "group", 1);
  return x->rank == 4 && groups > 1 && groups == x->shape[1] ? CONV_DEPTHWISE : CONV_PLAIN;
}

/* The geometry rules of the spec's int16 rows; NULL if eligible. */
static const char *check_geometry(const cs_value *x, const cs_value *y, const cs_window2d *w, int64_t groups,
                                  conv_kind kind, char *why, size_t whylen) {
  if (x->rank != 4 || y->rank != 4) return "not a 2-D (NCHW) convolution";
  if (x->shape[0] != 1) { snprintf(why, whylen, "N != 1 (N=%lld)", (long long)x->shape[0]); return why; }
  if (w->stride_h != w->stride_w) {
    snprintf(why, whylen, "asymmetric stride (%d x %d)", w->stride_h, w->stride_w);
    return why;
  }
  if (w->dil_h != 1 || w->dil_w != 1) {
    snprintf(why, whylen, "dilation != 1 (%d x %d)", w->dil_h, w->dil_w);
    return why;
  }
  int64_t c_in = x->shape[1], c_out = y->shape[1];
  if (kind == CONV_PLAIN) {
    if (groups != 1) {
      snprintf(why, whylen, "groups != 1 (groups=%lld; no int16 grouped kernel)", (long long)groups);
      return why;
    }
    if (c_out % 32 != 0) {
      snprintf(why, whylen, "C_out %% 32 != 0 (C_out=%lld): pad it to %lld with zero filters to offload",
               (long long)c_out, cs_mm_round_up(c_out, 32));
      return why;
    }
  } else {
    if (c_out != c_in) {
      snprintf(why, whylen, "depthwise channel multiplier != 1 (C_in=%lld, C_out=%lld)", (long long)c_in,
               (long long)c_out);
      return why;
    }
    if (w->k_h != 3 || w->k_w != 3) {
      snprintf(why, whylen, "int16 depthwise kernel not 3x3 (%dx%d; MMALIB-882)", w->k_h, w->k_w);
      return why;
    }
    if (w->stride_h < 1 || w->stride_h > 2) {
      snprintf(why, whylen, "depthwise stride not 1-2 (stride=%d)", w->stride_h);
      return why;
    }
  }
  /* The kernel derives H_out/W_out itself (floor); the graph's must agree. */
  int64_t h_out = (x->shape[2] + w->pad_top + w->pad_bottom - w->k_h) / w->stride_h + 1;
  int64_t w_out = (x->shape[3] + w->pad_left + w->pad_right - w->k_w) / w->stride_w + 1;
  if (h_out != y->shape[2] || w_out != y->shape[3]) return "output shape differs from MMALIB's floor geometry";
  return NULL;
}

static void decline(const cs_node *conv, conv_kind kind, const char *why) {
  cs_mmalib_report_add(kKind[kind], conv->name, NULL, -1.0, "%s", why);
}

static cs_status offload_one(cs_graph *g, const cs_target *t, int conv_id, conv_kind kind) {
  const cs_node *conv = cs_graph_node(g, conv_id);
  cs_qparams xq, wq;
  cs_qdq_tail tail;
  int xdq = cs_mm_dq_i16_params(g, conv->inputs[0], &xq);
  if (xdq < 0) {
    decline(conv, kind, "input is not DequantizeLinear(int16, per-tensor constant qparams)");
    return CS_OK;
  }
  int wdq = -1;
  if (!cs_mm_weight_dq_i16(g, conv->inputs[1], 0, &wq, &wdq)) {
    cs_qparams_free(&xq);
    decline(conv, kind, "weight is not DequantizeLinear(int16 constant) per-tensor or per-output-channel");
    return CS_OK;
  }
  if (!cs_mm_qdq_tail_i16(g, conv->outputs[0], &tail)) {
    cs_qparams_free(&xq);
    cs_qparams_free(&wq);
    decline(conv, kind, "no [Relu|Clip] -> QuantizeLinear(int16) tail");
    return CS_OK;
  }
  char why[200];
  const char *rule = NULL;
  cs_status st = CS_OK;
  int64_t *bias = NULL;
  uint8_t *scale = NULL, *shift = NULL;
  int64_t groups = cs_node_attr_int(conv, "group", 1);
  int x_in = cs_graph_node(g, xdq)->inputs[0];
  int w_in = cs_graph_node(g, wdq)->inputs[0];
  int y_out = cs_graph_node(g, tail.q)->outputs[0];
  cs_window2d win;
  int32_t mn, mx;
  int relu = 0;
  if ((rule = cs_mm_i16_zero_points(&wq, &xq, &tail.out, why, sizeof why))) goto done;
  if (cs_mm_const_reachable(g, x_in)) { rule = "all-constant match (ConstReachability)"; goto done; }
  if (t->constants_byte_alignment < TIDSP_MMALIB_ALIGN) {
    snprintf(why, sizeof why, "constants-byte-alignment %d < 64 (MMA needs 64-byte aligned tensors)",
             t->constants_byte_alignment);
    rule = why;
    goto done;
  }
  if (cs_window2d_from_node(g, conv, &win) != CS_OK) { cs_error_clear(); rule = "not a 2-D window"; goto done; }
  const cs_value *x = cs_graph_value(g, conv->inputs[0]);
  const cs_value *y = cs_graph_value(g, conv->outputs[0]);
  if ((rule = check_geometry(x, y, &win, groups, kind, why, sizeof why))) goto done;
  int c_out = (int)y->shape[1];
  if (wq.count != 1 && wq.count != c_out) { rule = "weight scale count != C_out"; goto done; }
  if ((relu = cs_mm_i16_act(&tail, &mn, &mx)) < 0) {
    snprintf(why, sizeof why, "fused activation clamp [%d, %d] is neither none nor ReLU", mn, mx);
    rule = why;
    goto done;
  }
  /* The kernels need 64-byte aligned activations: arena tensors are, a
   * caller's I/O buffer need not be. */
  if (cs_graph_value(g, x_in)->producer < 0) { rule = "input is a graph input (64-byte alignment not guaranteed)"; goto done; }
  if (cs_graph_is_output(g, y_out)) { rule = "output is a graph output (64-byte alignment not guaranteed)"; goto done; }
  bias = malloc(sizeof *bias * (size_t)c_out);
  scale = malloc((size_t)c_out);
  shift = malloc((size_t)c_out);
  if (!bias || !scale || !shift) { st = cs_error(CS_ERR_NOMEM, "out of memory"); goto done; }
  double worst = 0.0;
  rule = cs_mm_fold_i16(g, conv->n_inputs > 2 ? conv->inputs[2] : -1, xq.scale[0], &wq, tail.out.scale[0], c_out,
                        bias, scale, shift, &worst);
  if (rule) goto done;

  /* Eligible: rewrite. */
  char base[256];
  snprintf(base, sizeof base, "%s", conv->name ? conv->name : "conv");
  int64_t c_in = x->shape[1], h_in = x->shape[2], w_dim = x->shape[3];
  int rq[3];
  if ((st = cs_mm_add_requant_consts_i16(g, base, c_out, bias, scale, shift, rq)) != CS_OK) goto done;
  int inputs[5] = {x_in, w_in, rq[0], rq[1], rq[2]};
  int chain[1] = {conv_id};
  int id = cs_mm_replace_chain_i16(g, chain, 1, &tail, relu, kOp[kind], 5, inputs);
  if (kind == CONV_DEPTHWISE) {
    int64_t a[12] = {c_in, h_in, w_dim, win.k_h, win.k_w, win.stride_h, win.stride_w,
                     win.pad_top, win.pad_bottom, win.pad_left, win.pad_right, groups};
    st = cs_mm_set_args(g, id, 12, a);
  } else {
    int64_t a[12] = {c_in, h_in, w_dim, c_out, win.k_h, win.k_w, win.stride_h, win.stride_w,
                     win.pad_top, win.pad_bottom, win.pad_left, win.pad_right};
    st = cs_mm_set_args(g, id, 12, a);
  }
  if (st != CS_OK) goto done;
  cs_mmalib_report_add(kKind[kind], cs_graph_node(g, conv_id)->name, kExtern[kind], worst, NULL);
done:
  if (rule && st == CS_OK) decline(cs_graph_node(g, conv_id), kind, rule);
  free(bias);
  free(scale);
  free(shift);
  cs_qparams_free(&xq);
  cs_qparams_free(&wq);
  cs_qparams_free(&tail.out);
  return st;
}

static cs_status run(cs_graph *g, const cs_target *t, conv_kind want) {
  int n = g->n_nodes;
  for (int i = 0; i < n; i++) {
    const cs_node *node = cs_graph_node(g, i);
    if (node->dead || node->op != CS_OP_CONV || node->n_inputs < 2) continue;
    if (cs_mm_dq_i16(g, node->inputs[0]) < 0 || kind_of(g, node) != want) continue;
    cs_status st = offload_one(g, t, i, want);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}

cs_status pass_fuse_mmalib_qdq_conv2d_i16(cs_graph *g, const cs_target *t) { return run(g, t, CONV_PLAIN); }

cs_status pass_fuse_mmalib_qdq_dwconv2d_i16(cs_graph *g, const cs_target *t) {
  return run(g, t, CONV_DEPTHWISE);
}
