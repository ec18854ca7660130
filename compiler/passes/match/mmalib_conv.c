/*
 * mmalib_conv.c — the matcher and rewrite of FuseMMALIBQDQConv2d /
 * FuseMMALIBQDQConv2dI16 / FuseMMALIBQDQDwConv2dI16 (cs_mm_fuse_conv; each
 * pass is its own file, passes/fuse_mmalib_qdq_{conv2d,conv2d_i16,dwconv2d_i16}.c):
 * convolutions offloaded to MMALIB (spec/mmalib-integration.txt "Supported
 * Operations"), one matcher for both dtypes (cs_mm_dtype):
 *
 *   Q( [Relu|Clip]( Conv( DQ(x:dt), DQ(w:dt const, zp 0), [bias] ) ) )
 *   int8:
 *     groups = 1            → mmalib_conv2d_i8            (C_out % 64 == 0)
 *     groups = C_in = C_out → mmalib_depthwise_conv2d_i8  (k 3/5/7 square,
 *                                                          stride 1–2, 2 ⇒ k ≤ 5)
 *     1 < groups ≠ C_in     → mmalib_conv2d_i8_grouped_loop (groups | C_in, C_out)
 *   int16 (symmetric only: d_zp = o_zp = 0; a ReLU is a second call,
 *   mmalib_common.h "int16"):
 *     groups = 1            → mmalib_conv2d_i16           (C_out % 32 == 0)
 *     groups = C_in = C_out → mmalib_depthwise_conv2d_i16 (3×3 only, MMALIB-882;
 *                                                          stride 1–2)
 *   and for all: stride_h = stride_w, dilation 1; N = 1 for int16.
 *   An int8 plain or depthwise conv of one image that the exact path takes
 *   (-mmalib-exact=all/strict, mmalib_exact.c) runs on the int16 kernel, so
 *   its C_out rule is % 32 (mmalib_common.h cs_mm_runs_as).
 *
 * Batch N > 1 (int8) runs as a loop over images, the way MMALIB is called
 * (one image per call): the kernel call is made once per image n on a
 * k_slice of image n of the input, writing its own [1, C_out, H, W]
 * tensor, and a k_concat along N puts the images back together. Every call
 * is the N = 1 call on the same constants, so every image's output is
 * bit-identical to the same image through a batch-1 model. The slices and
 * the concat move no bytes in the arena: the planner makes an image of a
 * batch a view of the input and writes each call's output straight into
 * its range of the concat (schedule/storage.c). At a graph edge they are
 * the copies the N = 1 layer makes anyway (the aligned staging of "the
 * graph's edge"), so no cost rule is needed beyond the N = 1 offload's.
 *
 * Everything is folded at compile time (mmalib_common.h). MMALIB pads with
 * 0, not the input zero point: when d_zp != 0 and the layer pads (int8
 * only), an explicit k_pad with d_zp is inserted before the call and the
 * conv runs unpadded (exact, instead of declining the layer). A graph
 * input or output goes through an aligned arena copy (mmalib_common.h
 * "the graph's edge").
 *
 * Every rule is checked before the graph is touched: a declined match
 * leaves it exactly as it was for FuseQDQToInt8Conv2D (or the generic
 * DQ → float Conv → Q path), and the rule goes to the offload report. The
 * int8 pass looks at every Conv; the int16 passes (after it) only at those
 * whose input is DQ(int16), the plain and the depthwise pass each at its
 * own kind.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/mmalib.h"
#include "fused_common.h"
#include "geometry.h"
#include "mmalib_common.h"
#include "mmalib_cost.h"
#include "mmalib_report.h"
#include "pattern.h"
#include "qdq_tail.h"

/* [int16][kind]; int16 has no grouped kernel (its row is never taken). */
static const cs_op kOp[2][3] = {
    {CS_OP_K_MMALIB_CONV2D_I8, CS_OP_K_MMALIB_DWCONV2D_I8, CS_OP_K_MMALIB_CONV2D_I8_GROUPED},
    {CS_OP_K_MMALIB_CONV2D_I16, CS_OP_K_MMALIB_DWCONV2D_I16, CS_OP_K_MMALIB_CONV2D_I16}};

/* The geometry rules of the spec's table; NULL if eligible. A rule that
 * declines says what would make the layer eligible where there is such a
 * change (pad C_out, batch 1). */
static const char *check_geometry(const cs_mm_dtype *d, const cs_value *x, const cs_value *y, int64_t c_out,
                                  const cs_window2d *w, int64_t groups, cs_mm_conv_kind *kind, char *why,
                                  size_t whylen) {
  int i16 = d->dt == CS_DTYPE_I16;
  if (x->rank != 4 || y->rank != 4) return "not a 2-D (NCHW) convolution";
  if (x->shape[0] < 1 || (i16 && x->shape[0] != 1)) { snprintf(why, whylen, "N != 1 (N=%lld): compile it for batch 1 (a larger input batch then runs it N times)", (long long)x->shape[0]); return why; }
  if (w->stride_h != w->stride_w) {
    snprintf(why, whylen, "asymmetric stride (%d x %d): MMALIB strides H and W alike", w->stride_h, w->stride_w);
    return why;
  }
  if (w->dil_h != 1 || w->dil_w != 1) {
    snprintf(why, whylen, "dilation != 1 (%d x %d): MMALIB has no dilated convolution", w->dil_h, w->dil_w);
    return why;
  }
  int64_t c_in = x->shape[1];
  if (groups == 1) {
    if (c_out % d->mult != 0) {
      snprintf(why, whylen, "C_out %% %d != 0 (C_out=%lld): pad it to %lld with zero filters to offload", d->mult,
               (long long)c_out, cs_mm_round_up(c_out, d->mult));
      return why;
    }
    *kind = CS_MM_CONV_PLAIN;
  } else if (groups == c_in) {
    if (c_out != c_in) {
      snprintf(why, whylen, "depthwise channel multiplier != 1 (C_in=%lld, C_out=%lld)", (long long)c_in,
               (long long)c_out);
      return why;
    }
    if (i16 && (w->k_h != 3 || w->k_w != 3)) {
      snprintf(why, whylen, "int16 depthwise kernel not 3x3 (%dx%d; MMALIB-882)", w->k_h, w->k_w);
      return why;
    }
    if (w->k_h != w->k_w) { snprintf(why, whylen, "depthwise kernel not square (%dx%d)", w->k_h, w->k_w); return why; }
    if (w->k_h != 3 && w->k_h != 5 && w->k_h != 7) {
      snprintf(why, whylen, "depthwise kernel not 3x3/5x5/7x7 (%dx%d)", w->k_h, w->k_w);
      return why;
    }
    if (w->stride_h < 1 || w->stride_h > 2) {
      snprintf(why, whylen, "depthwise stride not 1-2 (stride=%d)", w->stride_h);
      return why;
    }
    /* (the exact path runs a 7x7 as 3x3 int16 tiles at the layer's stride,
     * mmalib_exact.c: stride 2 included) */
    if (w->stride_h == 2 && w->k_h > 5 && !d->exact) {
      snprintf(why, whylen, "depthwise stride 2 requires k <= 5 (k=%d): use stride 1, or a 3x3 or 5x5 kernel", w->k_h);
      return why;
    }
    *kind = CS_MM_CONV_DEPTHWISE;
  } else {
    if (i16) {
      snprintf(why, whylen, "groups != 1 (groups=%lld; no int16 grouped kernel)", (long long)groups);
      return why;
    }
    if (groups < 1 || c_in % groups != 0 || c_out % groups != 0) {
      snprintf(why, whylen, "groups %lld does not divide C_in=%lld and C_out=%lld", (long long)groups,
               (long long)c_in, (long long)c_out);
      return why;
    }
    *kind = CS_MM_CONV_GROUPED;
  }
  /* int16 accumulates in 64 bits */
  if (!i16 && c_in / groups * w->k_h * w->k_w > 131071) return "C_in*KH*KW > 131071 (int32 accumulator)";
  /* The kernel derives H_out/W_out itself (floor); the graph's must agree. */
  int64_t h_out = (x->shape[2] + w->pad_top + w->pad_bottom - w->k_h) / w->stride_h + 1;
  int64_t w_out = (x->shape[3] + w->pad_left + w->pad_right - w->k_w) / w->stride_w + 1;
  if (h_out != y->shape[2] || w_out != y->shape[3]) return "output shape differs from MMALIB's floor geometry";
  return NULL;
}

/* A grouped conv runs as one int8 call per group (grouped_loop), each of
 * C_out/g channels on 64-wide panels that MMALIB pads itself (ir/offload.h
 * CS_MMALIB_I8_TILE): the padding report records what that spends, and
 * the cost rule decides as for explicit channel padding. NULL if it pays,
 * else the declining rule (in why). `per`: weights per output channel;
 * `pos`: output positions per channel. */
static const char *grouped_pays(cs_graph *g, const cs_target *t, const cs_node *conv, const cs_value *x,
                                int64_t c_out, int64_t groups, int64_t per, int64_t pos, char *why, size_t whylen) {
  int64_t c_g = c_out / groups, c_pad = cs_mm_round_up(c_g, CS_MMALIB_I8_TILE);
  if (c_pad == c_g) return NULL;
  pos *= x->shape[0]; /* a batch: one call per image */
  cs_offload_pad p; /* MMALIB's own panel padding: no bytes of ours */
  cs_mm_pad_decision_init(&p, conv->name, "C_out per group", c_g, c_pad, c_out * per * pos,
                          groups * (c_pad - c_g) * per * pos);
  double bytes = (double)(cs_value_numel(x) + c_out * per + c_out * pos);
  double call = cs_mm_call_bytes(t, (double)cs_value_numel(x), (double)(c_out * per), (double)(c_out * pos));
  cs_mm_pad_decide(t, &p, (double)groups * cs_mm_cost_mma(per, c_g, pos, CS_MMALIB_I8_TILE, call / (double)groups),
                   cs_mm_cost_scalar(p.macs, bytes));
  cs_mmalib_report_pad(g, &p);
  if (p.padded) return NULL;
  snprintf(why, whylen, "grouped conv of %lld channels per group on %d-wide MMA panels: %s (est. %.0f MMA "
           "cycles vs %.0f scalar)", (long long)c_g, CS_MMALIB_I8_TILE,
           p.over_budget ? "over the padding budget (-mmalib-pad-budget)" : "does not pay", p.mma_cycles,
           p.scalar_cycles);
  return why;
}

/* Depthwise: groups = C_in > 1 (the report's dwconv2d kind); the geometry
 * check tells plain from grouped. */
static cs_mm_conv_kind kind_of(cs_graph *g, const cs_node *conv) {
  const cs_value *x = cs_graph_value(g, conv->inputs[0]);
  int64_t groups = cs_node_attr_int(conv, "group", 1);
  return x->rank == 4 && groups > 1 && groups == x->shape[1] ? CS_MM_CONV_DEPTHWISE : CS_MM_CONV_PLAIN;
}

static void decline(cs_graph *g, const cs_node *conv, cs_mm_conv_kind kind, const char *why) {
  cs_mmalib_report_add(g, kind == CS_MM_CONV_DEPTHWISE ? CS_OFFLOAD_DWCONV2D : CS_OFFLOAD_CONV2D, conv->name, NULL, -1.0,
                       "%s", why);
}

/* A rule found before anything was read: reported, or (dry run) handed back. */
static void early_decline(cs_graph *g, const cs_node *conv, cs_mm_conv_kind kind, const char *why, const char **dry_rule,
                          char *dry_why, size_t dry_len) {
  if (!dry_rule) {
    decline(g, conv, kind, why);
    return;
  }
  snprintf(dry_why, dry_len, "%s", why);
  *dry_rule = dry_why;
}


/* A value like v (dtype, quantization, uint8 domain) holding image n of
 * it: shape [1, …], named "<v>.mm_image<n>"; -1 when out of memory. */
static int image_of(cs_graph *g, int v, int64_t n) {
  const cs_value *src = cs_graph_value(g, v);
  char name[512];
  snprintf(name, sizeof name, "%s.mm_image%lld", src->name ? src->name : "t", (long long)n);
  int64_t shape[CS_MAX_RANK];
  memcpy(shape, src->shape, sizeof shape);
  shape[0] = 1;
  return cs_mm_like_value(g, v, name, shape);
}

/* The offloaded call `id` on x [nb, …] → y [nb, …] becomes one call per
 * image: k_slice(x, image n) → call n (the same constants and arguments) →
 * y_n, and k_concat(y_0 … y_nb−1) along N → y. */
static cs_status image_loop(cs_graph *g, int id, int64_t nb) {
  int x = cs_graph_node(g, id)->inputs[0], y = cs_graph_node(g, id)->outputs[0];
  int *ys = malloc(sizeof(int) * (size_t)nb);
  cs_status st = ys ? CS_OK : cs_error(CS_ERR_NOMEM, "out of memory");
  for (int64_t n = 0; n < nb && st == CS_OK; n++) {
    const cs_node *call = cs_graph_node(g, id);
    const char *origin = call->origin ? call->origin : call->name;
    int xn = image_of(g, x, n), yn = image_of(g, y, n);
    const int64_t start[CS_MAX_RANK] = {n};
    if (xn < 0 || yn < 0 || cs_add_slice(g, origin, x, xn, start, NULL) < 0) { st = CS_ERR_NOMEM; break; }
    int c = id;
    if (n == 0) { /* the original call takes image 0 */
      cs_node_set_input(g, id, 0, xn);
      cs_graph_node(g, id)->outputs[0] = yn;
      cs_graph_value(g, yn)->producer = id;
      cs_graph_value(g, y)->producer = -1;
    } else {
      call = cs_graph_node(g, id);
      int in[8], n_in = call->n_inputs < 8 ? call->n_inputs : 8;
      memcpy(in, call->inputs, sizeof(int) * (size_t)n_in);
      in[0] = xn;
      c = cs_add_kernel(g, call->op, origin, n_in, in, yn);
      const cs_attr *a = c >= 0 ? cs_node_attr(cs_graph_node(g, id), CS_MM_ARGS) : NULL;
      if (!a || cs_mm_set_args(g, c, a->n, a->ints) != CS_OK) { st = CS_ERR_NOMEM; break; }
    }
    ys[n] = yn;
  }
  if (st == CS_OK && cs_add_concat_steps(g, cs_graph_node(g, id)->origin, (int)nb, ys, y, 1) < 0) st = CS_ERR_NOMEM;
  free(ys);
  return st;
}

/* c_out_as = 0: offload the layer or report its decline. c_out_as > 0:
 * only check it as if its C_out were c_out_as (zero filters added, the
 * channel padding of mmalib_pad_channels.c): the graph and the report
 * stay as they were, *dry_rule gets the declining rule (copied into
 * dry_why) or NULL. */
static cs_status offload_one(cs_graph *g, const cs_target *t, int conv_id, const cs_mm_dtype *d, int64_t c_out_as,
                             const char **dry_rule, char *dry_why, size_t dry_len) {
  const cs_node *conv = cs_graph_node(g, conv_id);
  int dry = c_out_as > 0;
  /* the kernel that runs it: its tile is the C_out rule's (mmalib_common.h
   * cs_mm_runs_as: 32 on the exact path's int16 kernel) */
  d = cs_mm_conv_runs_as(g, t, d, conv);
  int i16 = d->dt == CS_DTYPE_I16;
  cs_mm_conv_kind kind = kind_of(g, conv);
  int64_t groups = cs_node_attr_int(conv, "group", 1);
  char why[200];
  cs_qparams xq, wq;
  cs_qdq_tail tail;
  int xdq = cs_match_dq_as(g, conv->inputs[0], d->dt, &xq);
  if (xdq < 0) {
    snprintf(why, sizeof why, "input is not DequantizeLinear(int%d, per-tensor constant qparams)%s", d->bits,
             i16 ? "" : ": quantize activations to int8 per tensor (cstatic.quantize_onnx preset \"c7x\", or "
                        "C7xMMAQuantizer)");
    early_decline(g, conv, kind, why, dry ? dry_rule : NULL, dry_why, dry_len);
    return CS_OK;
  }
  int wdq = -1;
  if (!cs_match_weight_dq_as(g, conv->inputs[1], 0, d->dt, &wq, &wdq)) {
    cs_qparams_free(&xq);
    snprintf(why, sizeof why, "weight is not DequantizeLinear(int%d constant) per-tensor or per-output-channel%s",
             d->bits, i16 ? "" : ": quantize weights to int8 (preset \"c7x\")");
    early_decline(g, conv, kind, why, dry ? dry_rule : NULL, dry_why, dry_len);
    return CS_OK;
  }
  if (!cs_match_qdq_tail_as(g, conv->outputs[0], 1, d->dt, &tail)) {
    cs_qparams_free(&xq);
    cs_qparams_free(&wq);
    snprintf(why, sizeof why, "no [Relu|Clip] -> QuantizeLinear(int%d) tail%s", d->bits,
             i16 ? "" : ": quantize the output to int8");
    early_decline(g, conv, kind, why, dry ? dry_rule : NULL, dry_why, dry_len);
    return CS_OK;
  }
  const char *rule = NULL;
  cs_status st = CS_OK;
  void *bias = NULL;
  uint8_t *scale = NULL, *shift = NULL;
  int64_t *wsum = NULL;
  cs_mm_exact_plan plan;
  memset(&plan, 0, sizeof plan);
  /* a grouped conv on the exact path: block-diagonal int16 convs */
  int n_blocks = 0;
  int(*block_ins)[5] = NULL;
  int64_t(*block_args)[12] = NULL;
  cs_window2d win;
  int relu = 0;
  int x_in = cs_graph_node(g, xdq)->inputs[0];
  int w_in = cs_graph_node(g, wdq)->inputs[0];
  int y_out = cs_graph_node(g, tail.q)->outputs[0];
  if ((rule = cs_mm_zero_points(d, &wq, &xq, &tail.out, why, sizeof why))) goto done;
  if (cs_mm_const_reachable(g, x_in)) { rule = "all-constant match (ConstReachability)"; goto done; }
  if (t->constants_byte_alignment < TIDSP_MMALIB_ALIGN) {
    snprintf(why, sizeof why, "constants-byte-alignment %d < 64 (MMA needs 64-byte aligned tensors): use "
             "-constants-byte-alignment=64", t->constants_byte_alignment);
    rule = why;
    goto done;
  }
  if (cs_window2d_from_node(g, conv, &win) != CS_OK) { cs_error_clear(); rule = "not a 2-D window"; goto done; }
  const cs_value *x = cs_graph_value(g, conv->inputs[0]);
  const cs_value *y = cs_graph_value(g, conv->outputs[0]);
  if ((rule = check_geometry(d, x, y, dry ? c_out_as : y->shape[1], &win, groups, &kind, why, sizeof why)))
    goto done;
  int c_out = (int)y->shape[1];
  int64_t pos = y->shape[2] * y->shape[3], w_out_dim = y->shape[3]; /* (y is not read after the graph grows) */
  if (wq.count != 1 && wq.count != c_out) { rule = "weight scale count != C_out"; goto done; }
  if ((relu = cs_mm_act(d, &tail, why, sizeof why)) < 0) { rule = why; goto done; }
  int padded = win.pad_top || win.pad_bottom || win.pad_left || win.pad_right;
  int explicit_pad = padded && xq.zp[0] != 0;
  /* Fold. */
  const cs_value *wv = cs_graph_value(g, w_in);
  int64_t per = cs_value_numel(wv) / c_out;
  bias = malloc((i16 ? sizeof(int64_t) : sizeof(int32_t)) * (size_t)c_out);
  scale = malloc((size_t)c_out);
  shift = malloc((size_t)c_out);
  wsum = calloc((size_t)c_out, sizeof *wsum);
  if (!bias || !scale || !shift || !wsum) { st = cs_error(CS_ERR_NOMEM, "out of memory"); goto done; }
  int32_t d_zp = xq.zp[0];
  double worst = 0.0;
  int b_in = conv->n_inputs > 2 ? conv->inputs[2] : -1;
  if (!i16)
    for (int c = 0; c < c_out; c++)
      for (int64_t i = 0; i < per; i++) wsum[c] += ((const int8_t *)wv->data)[c * per + i];
  rule = cs_mm_fold(g, d, b_in, &xq, &wq, &tail.out, wsum, c_out, bias, scale, shift, &worst);
  if (rule || dry) goto done;
  /* The exact-requant path (mmalib_exact.c) where the target asks for it
   * and int16 kernels run the layer (one image; plain, or depthwise: 3x3
   * as one call, 5x5/7x7 as 3x3 tiles); a layer it cannot take stays on
   * the int8 kernel. */
  int exact = 0;
  int per_block = kind == CS_MM_CONV_GROUPED ? cs_mm_exact_group_blocks(c_out, groups) : 0;
  int int16_runs = x->shape[0] == 1 && (kind == CS_MM_CONV_PLAIN || kind == CS_MM_CONV_DEPTHWISE || per_block);
  int32_t o_zp = tail.out.zp[0];
  double span = (double)(127 - o_zp > o_zp + 128 ? 127 - o_zp : o_zp + 128); /* max |y − o_zp| */
  if (!i16 && cs_mm_exact_wanted(t, worst, worst * span) && (int16_runs || t->mmalib_exact == CS_MM_EXACT_STRICT)) {
    /* strict: what no int16 kernel runs stays on the core, ORT-exact,
     * rather than on the int8 kernel's 8-bit scale. */
    if ((kind == CS_MM_CONV_GROUPED && !per_block) || x->shape[0] != 1) {
      snprintf(why, sizeof why, "-mmalib-exact: %s has no int16 MMALIB kernel; left to the core's exact int8 conv",
               x->shape[0] != 1 ? "a batch N > 1" : "a grouped conv whose C_out per group neither divides nor is a "
                                                    "multiple of 32");
      rule = why;
      goto done;
    }
    int64_t *acc = malloc(sizeof *acc * (size_t)c_out);
    if (!acc) { st = cs_error(CS_ERR_NOMEM, "out of memory"); goto done; }
    for (int c = 0; c < c_out; c++) /* the fold's bias without its o_zp term (integers: exact) */
      acc[c] = (int64_t)((const int32_t *)bias)[c] -
               (int64_t)nearbyint((double)tail.out.zp[0] / ldexp((double)scale[c], -shift[c]));
    const char *er = cs_mm_exact_plan_init(&plan, c_out, xq.scale[0], d_zp, &wq, wsum, tail.out.scale[0],
                                           tail.out.zp[0], acc);
    free(acc);
    if (er == cs_mm_nomem) { st = cs_error(CS_ERR_NOMEM, "out of memory"); goto done; }
    exact = er == NULL;
    if (!exact && d->exact && kind == CS_MM_CONV_PLAIN && c_out % cs_mm_int8.mult != 0) {
      /* C_out was checked against the int16 tile: the int8 kernel cannot take it */
      snprintf(why, sizeof why, "C_out %% %d != 0 (C_out=%d) and the exact path declines it (%s)", cs_mm_int8.mult,
               c_out, er);
      rule = why;
      goto done;
    }
    if (!exact && d->exact && kind == CS_MM_CONV_DEPTHWISE && win.stride_h == 2 && win.k_h > 5) {
      snprintf(why, sizeof why, "depthwise stride 2 requires k <= 5 (k=%d) and the exact path declines it (%s)",
               win.k_h, er);
      rule = why;
      goto done;
    }
  }

  if (kind == CS_MM_CONV_GROUPED && !exact &&
      (rule = grouped_pays(g, t, conv, x, c_out, groups, per, pos, why, sizeof why)))
    goto done;

  /* Eligible: rewrite. */
  char base[256];
  snprintf(base, sizeof base, "%s", conv->name ? conv->name : "conv");
  int64_t nb = x->shape[0], c_in = x->shape[1], h_in = x->shape[2], w_in_dim = x->shape[3];
  cs_window2d kw = win;
  int act_in = x_in;
  if (explicit_pad && !exact) {
    /* MMALIB pads with 0; pad with the input zero point explicitly (the
     * exact path's widening subtracts it instead: mmalib_exact.c). */
    int64_t pshape[4] = {nb, c_in, h_in + win.pad_top + win.pad_bottom, w_in_dim + win.pad_left + win.pad_right};
    char pname[300];
    snprintf(pname, sizeof pname, "%s.mm_padded", base);
    int pv = cs_graph_add_value(g, pname, d->dt, 4, pshape);
    if (pv < 0) {
      st = CS_ERR_NOMEM; /* message recorded */
      goto done;
    }
    tidsp_pad_params pp;
    memset(&pp, 0, sizeof pp);
    pp.rank = 4;
    int64_t ishape[4] = {nb, c_in, h_in, w_in_dim};
    for (int d = 0; d < 4; d++) pp.in_shape[d] = (int32_t)ishape[d];
    pp.pad_begin[2] = win.pad_top;
    pp.pad_end[2] = win.pad_bottom;
    pp.pad_begin[3] = win.pad_left;
    pp.pad_end[3] = win.pad_right;
    pp.elem_size = 1;
    pp.mode = TIDSP_PAD_CONSTANT;
    pp.value[0] = (uint8_t)(int8_t)d_zp;
    int pid = cs_add_kernel(g, CS_OP_K_PAD, base, 1, &act_in, pv);
    if (pid < 0 || cs_value_set_quant(cs_graph_value(g, pv), -1, 1, xq.scale, xq.zps) != CS_OK) {
      st = CS_ERR_NOMEM;
      goto done;
    }
    cs_graph_node(g, pid)->k.pad = pp;
    act_in = pv;
    h_in = pshape[2];
    w_in_dim = pshape[3];
    kw.pad_top = kw.pad_bottom = kw.pad_left = kw.pad_right = 0;
  }
  /* A graph input or output goes through an aligned arena copy
   * (mmalib_common.h "the graph's edge"; an explicit pad output is arena). */
  /* (The exact path's k_widen_i16 is that copy.) */
  if (nb == 1 && !exact && (act_in = cs_mm_stage_input(g, act_in, base)) < 0) {
    st = CS_ERR_NOMEM;
    goto done;
  }
  int inputs[5];
  n_blocks = exact && per_block ? (int)((groups + per_block - 1) / per_block) : 0;
  /* a 5x5/7x7 depthwise on the exact path: 3x3 int16 tiles */
  cs_mm_exact_tile tiles[CS_MM_EXACT_MAX_TILES];
  int tile_ins[CS_MM_EXACT_MAX_TILES][5], n_tiles = 0;
  int64_t h_out = pos / w_out_dim;
  if (exact && kind == CS_MM_CONV_DEPTHWISE && kw.k_h != 3) {
    n_tiles = cs_mm_exact_dw_tiles(kw.k_h, kw.stride_h, (int)h_in, (int)w_in_dim, kw.pad_top, kw.pad_left,
                                   (int)h_out, (int)w_out_dim, tiles);
    if (n_tiles < 1) { /* (a window wholly in the padding: not an ONNX conv) */
      rule = "-mmalib-exact: no 3x3 tile of the depthwise window reads the input";
      goto done;
    }
    if (cs_mm_exact_dw_inputs(g, base, act_in, w_in, &plan, tiles, n_tiles, tile_ins) != 0) {
      st = CS_ERR_NOMEM;
      goto done;
    }
    memcpy(inputs, tile_ins[0], sizeof inputs);
  } else if (n_blocks) {
    block_ins = malloc(sizeof *block_ins * (size_t)n_blocks);
    block_args = malloc(sizeof *block_args * (size_t)n_blocks);
    int64_t a[12] = {c_in, h_in, w_in_dim, c_out, kw.k_h, kw.k_w, kw.stride_h, kw.stride_w,
                     kw.pad_top, kw.pad_bottom, kw.pad_left, kw.pad_right};
    if (!block_ins || !block_args) { st = cs_error(CS_ERR_NOMEM, "out of memory"); goto done; }
    if (cs_mm_exact_group_inputs(g, base, act_in, w_in, &plan, groups, per_block, a, block_ins, block_args) != 0) {
      st = CS_ERR_NOMEM;
      goto done;
    }
    memcpy(inputs, block_ins[0], sizeof inputs);
  } else if (exact) {
    if (cs_mm_exact_inputs(g, base, act_in, w_in, &plan, inputs) != 0) { st = CS_ERR_NOMEM; goto done; }
  } else {
    int rq[3];
    st = i16 ? cs_mm_add_requant_consts_i16(g, base, c_out, bias, scale, shift, rq)
             : cs_mm_add_requant_consts(g, base, c_out, bias, scale, shift, rq);
    if (st != CS_OK) goto done;
    int in[5] = {act_in, w_in, rq[0], rq[1], rq[2]};
    memcpy(inputs, in, sizeof in);
  }
  int chain[1] = {conv_id};
  cs_op op = kOp[i16 || exact][kind];
  int id = i16 ? cs_mm_replace_chain_i16(g, chain, 1, &tail, relu, op, 5, inputs)
               : cs_replace_chain(g, chain, 1, &tail, op, 5, inputs);
  int64_t args[13];
  int na = 0;
  if (kind == CS_MM_CONV_DEPTHWISE) {
    int64_t a[] = {c_in, h_in, w_in_dim, kw.k_h, kw.k_w, kw.stride_h, kw.stride_w,
                   kw.pad_top, kw.pad_bottom, kw.pad_left, kw.pad_right, groups};
    na = (int)(sizeof a / sizeof a[0]);
    memcpy(args, a, sizeof a);
    if (n_tiles) cs_mm_exact_tile_args(&tiles[0], c_in, h_in, w_in_dim, kw.stride_h, args);
  } else {
    int64_t a[] = {c_in, h_in, w_in_dim, c_out, kw.k_h, kw.k_w, kw.stride_h, kw.stride_w,
                   kw.pad_top, kw.pad_bottom, kw.pad_left, kw.pad_right, groups};
    na = kind == CS_MM_CONV_GROUPED && !n_blocks ? 13 : 12;
    memcpy(args, a, sizeof a);
    if (n_blocks) memcpy(args, block_args[0], sizeof block_args[0]);
  }
  if ((st = cs_mm_set_args(g, id, na, args)) != CS_OK) goto done;
  /* N > 1: a call per image; the slices and the concat are the edge's
   * copies, so the edge needs no staging of its own. */
  if (exact) {
    /* the core's k_quantize writes y: no output staging */
    tidsp_conv2d_params cp;
    memset(&cp, 0, sizeof cp);
    cp.n = 1;
    cp.c_in = (int32_t)c_in;
    cp.h_in = (int32_t)h_in;
    cp.w_in = (int32_t)w_in_dim;
    cp.c_out = c_out;
    cp.h_out = (int32_t)h_out;
    cp.w_out = (int32_t)w_out_dim;
    cp.k_h = kw.k_h;
    cp.k_w = kw.k_w;
    cp.stride_h = kw.stride_h;
    cp.stride_w = kw.stride_w;
    cp.dil_h = cp.dil_w = 1;
    cp.pad_top = kw.pad_top;
    cp.pad_left = kw.pad_left;
    cp.groups = kind == CS_MM_CONV_DEPTHWISE ? (int32_t)c_in : (int32_t)groups;
    if (id < 0 || (n_tiles    ? cs_mm_exact_dw_finish(g, id, base, &plan, tiles, n_tiles, tile_ins, w_in,
                                                      &cp, tail.out.zp[0])
                   : n_blocks ? cs_mm_exact_group_finish(g, id, base, &plan, n_blocks, block_ins, block_args, w_in,
                                                         &cp, tail.out.zp[0])
                              : cs_mm_exact_requant(g, id, base, &plan, w_in, &cp, tail.out.zp[0])) != 0) {
      st = CS_ERR_NOMEM;
      goto done;
    }
  } else if ((st = nb > 1 ? image_loop(g, id, nb) : cs_mm_stage_output(g, y_out)) != CS_OK) {
    goto done;
  }
  cs_mmalib_report_add(g, kind == CS_MM_CONV_DEPTHWISE ? CS_OFFLOAD_DWCONV2D : CS_OFFLOAD_CONV2D,
                       cs_graph_node(g, conv_id)->name, cs_kernel_info_of(op)->fn, exact ? 0.0 : worst, NULL);
  if (exact) {
    /* the cost (mmalib_cost.h): MMA panels of 32 (int16) against 64, int16
     * bytes, and the core's two passes (widen x; requantize z, reading
     * z and writing y) */
    int64_t k_red = (kind == CS_MM_CONV_DEPTHWISE ? 1 : c_in / groups) * kw.k_h * kw.k_w;
    int64_t n_in = c_in * h_in * w_in_dim, n_out = c_out * pos;
    double wbytes = (double)cs_value_numel(cs_graph_value(g, w_in));
    int64_t n_mm = kind == CS_MM_CONV_DEPTHWISE ? 1 : c_out;
    double mma16 = 0.0;
    double mma8 = cs_mm_cost_mma(k_red, n_mm, pos, 64, cs_mm_call_bytes(t, (double)n_in, wbytes, (double)n_out));
    double core = cs_mm_cost_scalar(n_in + 2 * n_out, 3.0 * (double)n_in + 3.0 * (double)n_out);
    if (n_tiles) { /* a 3x3 call per tile on its window (the crop of
                    * x16 its pads give); the core reads every tile's z */
      for (int j = 0; j < n_tiles; j++) {
        const cs_mm_exact_tile *tl = &tiles[j];
        int64_t n_win = c_in * TIDSP_MMALIB_CROP_LEN(h_in, tl->pad_t, tl->pad_b) *
                        TIDSP_MMALIB_CROP_LEN(w_in_dim, tl->pad_l, tl->pad_r);
        mma16 += cs_mm_cost_mma(9, 1, pos, 32,
                                cs_mm_call_bytes(t, 2.0 * (double)n_win, 18.0 * (double)c_in, 2.0 * (double)n_out));
      }
      core += cs_mm_cost_scalar((int64_t)(n_tiles - 1) * n_out, 2.0 * (double)(n_tiles - 1) * (double)n_out);
    } else if (n_blocks) { /* a call per block on its input channels */
      int64_t bw = block_args[0][3];
      mma8 = (double)groups * cs_mm_cost_mma(k_red, c_out / groups, pos, 64,
                                             cs_mm_call_bytes(t, (double)n_in, wbytes, (double)n_out) / (double)groups);
      for (int j = 0; j < n_blocks; j++) {
        int64_t k_j = block_args[j][0] * kw.k_h * kw.k_w;
        mma16 += cs_mm_cost_mma(k_j, bw, pos, 32,
                                cs_mm_call_bytes(t, 2.0 * (double)(block_args[j][0] * h_in * w_in_dim),
                                                 2.0 * (double)(bw * k_j), 2.0 * (double)(bw * pos)));
      }
    } else {
      mma16 = cs_mm_cost_mma(k_red, n_mm, pos, 32,
                             cs_mm_call_bytes(t, 2.0 * (double)n_in, 2.0 * wbytes, 2.0 * (double)n_out));
    }
    cs_mmalib_report_exact(g, cs_graph_node(g, conv_id)->name, worst, plan.max_err, mma16, mma8, core);
    if (n_blocks && per_block > 1) {
      /* each group's outputs fill a tile-wide block's columns (zeros
       * against the block's other groups): MACs added like padding's */
      int64_t bw = block_args[0][3], computed = 0, w_elems = 0;
      for (int j = 0; j < n_blocks; j++) {
        computed += bw * block_args[j][0] * kw.k_h * kw.k_w * pos;
        w_elems += bw * block_args[j][0] * kw.k_h * kw.k_w;
      }
      cs_offload_pad pe;
      cs_mm_pad_decision_init(&pe, cs_graph_node(g, conv_id)->name, "C_out per group", c_out / groups, bw,
                              k_red * c_out * pos, computed - k_red * c_out * pos);
      pe.padded = 1;
      pe.weight_bytes_added = 2 * (w_elems - k_red * c_out);
      pe.act_bytes_added = 2 * (bw * n_blocks - c_out) * pos;
      pe.mma_cycles = mma16;
      pe.scalar_cycles = core;
      pe.fixed = 1;
      cs_mmalib_report_pad(g, &pe);
    }
    if (n_tiles) {
      /* the tiles compute 9 taps each, the window's zero taps past k
       * included: MACs added like padding's, taken out of both sides of
       * the MMA share (manifest "offload.padding", what "taps") */
      cs_offload_pad pe;
      cs_mm_pad_decision_init(&pe, cs_graph_node(g, conv_id)->name, "taps", kw.k_h * kw.k_w, 9 * n_tiles,
                              c_in * pos * kw.k_h * kw.k_w, c_in * pos * (9 * n_tiles - kw.k_h * kw.k_w));
      pe.padded = 1;
      pe.weight_bytes_added = 2 * c_in * (9 * n_tiles - kw.k_h * kw.k_w);
      pe.act_bytes_added = 2 * (int64_t)(n_tiles - 1) * n_out;
      pe.mma_cycles = mma16;
      pe.scalar_cycles = core;
      pe.fixed = 1;
      cs_mmalib_report_pad(g, &pe);
    }
  }
  if (i16) cs_mmalib_report_bound(g, cs_graph_node(g, conv_id)->name, -(double)INT16_MIN);
done:
  if (dry) {
    *dry_rule = rule ? dry_why : NULL;
    if (rule) snprintf(dry_why, dry_len, "%s", rule);
  } else if (rule && st == CS_OK) {
    decline(g, cs_graph_node(g, conv_id), kind, rule);
  }
  free(bias);
  free(scale);
  free(shift);
  free(wsum);
  free(block_ins);
  free(block_args);
  cs_mm_exact_plan_free(&plan);
  cs_qparams_free(&xq);
  cs_qparams_free(&wq);
  cs_qparams_free(&tail.out);
  return st;
}

cs_status cs_mm_fuse_conv(cs_graph *g, const cs_target *t, const cs_mm_dtype *d, cs_mm_conv_kind kind) {
  int n = g->n_nodes;
  for (int i = 0; i < n; i++) {
    const cs_node *node = cs_graph_node(g, i);
    if (node->dead || node->op != CS_OP_CONV || node->n_inputs < 2) continue;
    if (d->dt != CS_DTYPE_I8) {
      int dq = cs_match_producer(g, node->inputs[0], CS_OP_DEQUANTIZE_LINEAR);
      if (dq < 0 || cs_graph_value(g, cs_graph_node(g, dq)->inputs[0])->dtype != d->dt) continue;
    }
    if (kind != CS_MM_CONV_ANY && kind_of(g, node) != kind) continue;
    cs_status st = offload_one(g, t, i, d, 0, NULL, NULL, 0);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}

cs_status cs_mm_conv_padded_rule(cs_graph *g, const cs_target *t, int conv_id, const cs_mm_dtype *d,
                                 int64_t c_out_as, const char **rule, char *why, size_t whylen) {
  *rule = NULL;
  return offload_one(g, t, conv_id, d, c_out_as, rule, why, whylen);
}
