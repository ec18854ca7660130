/*
 * onnx_resize.c — Resize (opsets 10–25) and Upsample (opsets 7–9) in
 * nearest mode where every output element copies input element i div s
 * along each axis (s a whole-number scale): that is a repeat, written
 * with existing kernels as
 *   Reshape to [..., d, 1, ...] → Expand to [..., d, s, ...] →
 *   Reshape to [..., d·s, ...]
 * and, being data movement, it runs on the integers between QDQ.
 *
 * Which input element an output element of Resize reads is computed here
 * as ONNX Runtime computes it (upsamplebase.h: the coordinate transform
 * and the nearest rounding in float, the index clamped to the input),
 * and the rewrite is taken only when that map is the repeat for every
 * output element, so the rewrite equals ORT's Resize wherever it is
 * taken. Any other nearest map (down-scaling, scales that are not whole
 * numbers, align_corners, …) is the same index map as constant Gathers,
 * one per axis that moves.
 *
 * Linear and cubic modes (float), and tf_crop_and_resize in any mode, are
 * weighted sums written with the existing kernels: constant Gathers of the
 * neighbours, Muls by constant weights computed here as ORT computes them,
 * Adds; the extrapolation value of tf_crop_and_resize is padded on and
 * gathered last. No Resize kernel: the weights are compile-time constants
 * and the runtime work is the same multiply-adds. Both come out
 * bit-identical to ORT because the roundings are ORT's, in its order:
 * cubic is separable as ORT's bicubic (x, then y); linear is ORT's one
 * bilinear/trilinear expression (rewrite_as_nlinear: 4 or 8 terms, each
 * weight product rounded before it multiplies), or one axis at a time for
 * the ranks and scales ORT's kernel refuses.
 */
#include "onnx_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Node id becomes the first op of its rewrite, in place (so it keeps its
 * name and position): op(input 0, in1) → out, or op(input 0) → out when in1
 * is negative; its attributes go. Every caller's node has at least as many
 * inputs as it keeps. */
static void become(cs_onnx_infer *c, int id, cs_op op, int in1, int out) {
  cs_node *n = &c->g->nodes[id];
  n->op = op;
  cs_node_clear_attrs(n);
  n->n_inputs = in1 >= 0 ? 2 : 1;
  if (in1 >= 0) cs_node_set_input(c->g, id, 1, in1);
  n->outputs[0] = out;
  cs_graph_value(c->g, out)->producer = id;
}

/* Node id (input 0 = x) becomes Reshape → Expand → Reshape repeating
 * every element s[i] times along axis i. */
static cs_status rewrite_as_repeat(cs_onnx_infer *c, int id, const int64_t *s) {
  cs_node *n = &c->g->nodes[id];
  const cs_value *x = cs_graph_value(c->g, n->inputs[0]);
  int64_t a[CS_MAX_RANK], b[CS_MAX_RANK], y[CS_MAX_RANK];
  int ra = 0;
  for (int i = 0; i < x->rank; i++) {
    y[i] = x->shape[i] * s[i];
    a[ra] = x->shape[i];
    b[ra++] = x->shape[i];
    if (s[i] > 1) {
      if (ra >= CS_MAX_RANK)
        return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED, "repeating along that many axes of a rank-%d tensor "
                                "exceeds rank %d", x->rank, CS_MAX_RANK);
      a[ra] = 1;
      b[ra++] = s[i];
    }
  }
  char name[512], base[256];
  snprintf(base, sizeof base, "%s", n->name);
  int rank = x->rank, yv = n->outputs[0];
  cs_dtype dt = x->dtype;
  int64_t lra = ra, lr = rank;
  snprintf(name, sizeof name, "%s.shape_in", base);
  int sa_v = cs_graph_add_const(c->g, name, CS_DTYPE_I64, 1, &lra, a);
  snprintf(name, sizeof name, "%s.shape_rep", base);
  int sb_v = cs_graph_add_const(c->g, name, CS_DTYPE_I64, 1, &lra, b);
  snprintf(name, sizeof name, "%s.shape_out", base);
  int sy_v = cs_graph_add_const(c->g, name, CS_DTYPE_I64, 1, &lr, y);
  snprintf(name, sizeof name, "%s.split", base);
  int av = cs_graph_add_value(c->g, name, dt, ra, a);
  snprintf(name, sizeof name, "%s.repeated", base);
  int bv = cs_graph_add_value(c->g, name, dt, ra, b);
  if (sa_v < 0 || sb_v < 0 || sy_v < 0 || av < 0 || bv < 0) return CS_ERR_NOMEM; /* message recorded */
  become(c, id, CS_OP_RESHAPE, sa_v, av);
  int in2[2] = {av, sb_v}, in3[2] = {bv, sy_v};
  snprintf(name, sizeof name, "%s.expand", base);
  int ex = cs_graph_add_node(c->g, CS_OP_EXPAND, name, base, 2, in2, 1, &bv);
  snprintf(name, sizeof name, "%s.merge", base);
  int rs = cs_graph_add_node(c->g, CS_OP_RESHAPE, name, base, 2, in3, 1, &yv);
  cs_status st = cs_onnx_infer_node(c, ex); /* the caller infers node id */
  if (st == CS_OK) st = cs_onnx_infer_node(c, rs);
  return st;
}

/* Node id (input 0 = x) becomes a chain of Gathers, one per axis whose
 * index map src[i] (out[i] entries, each in [0, x.shape[i])) is not the
 * identity: a general nearest Resize (down-scaling, fractional scales,
 * align_corners, …) as data movement, on the integers between QDQ too.
 * Node id becomes the first Gather; the caller infers it. */
static cs_status rewrite_as_gathers(cs_onnx_infer *c, int id, const int64_t *out, int64_t *const *src) {
  cs_node *n = &c->g->nodes[id];
  const cs_value *x = cs_graph_value(c->g, n->inputs[0]);
  int rank = x->rank, yv = n->outputs[0], cur = n->inputs[0], first = 1;
  int64_t shape[CS_MAX_RANK];
  cs_dtype dt = x->dtype;
  char base[256], name[512];
  snprintf(base, sizeof base, "%s", n->name);
  for (int i = 0; i < rank; i++) shape[i] = x->shape[i];
  int last = -1;
  for (int i = 0; i < rank; i++) {
    int ident = out[i] == shape[i];
    for (int64_t o = 0; ident && o < out[i]; o++) ident = src[i][o] == o;
    if (!ident) last = i;
  }
  if (last < 0) { /* every map the identity: a copy */
    int64_t one[CS_MAX_RANK];
    for (int i = 0; i < rank; i++) one[i] = 1;
    return rewrite_as_repeat(c, id, one);
  }
  for (int i = 0; i <= last; i++) {
    int ident = out[i] == shape[i];
    for (int64_t o = 0; ident && o < out[i]; o++) ident = src[i][o] == o;
    if (ident) continue;
    shape[i] = out[i];
    snprintf(name, sizeof name, "%s.index%d", base, i);
    int idx = cs_graph_add_const(c->g, name, CS_DTYPE_I64, 1, &out[i], src[i]);
    int dst = yv;
    if (i != last) {
      snprintf(name, sizeof name, "%s.axis%d", base, i);
      dst = cs_graph_add_value(c->g, name, dt, rank, shape);
    }
    if (idx < 0 || dst < 0) return CS_ERR_NOMEM; /* message recorded */
    int g;
    if (first) {
      become(c, id, CS_OP_GATHER, idx, dst);
      g = id;
    } else {
      int ins[2] = {cur, idx};
      snprintf(name, sizeof name, "%s.gather%d", base, i);
      g = cs_graph_add_node(c->g, CS_OP_GATHER, name, base, 2, ins, 1, &dst);
      if (g < 0) return CS_ERR_NOMEM;
    }
    cs_status st = cs_node_set_attr_int(&c->g->nodes[g], "axis", i);
    if (st == CS_OK && !first) st = cs_onnx_infer_node(c, g);
    if (st != CS_OK) return st;
    first = 0;
    cur = dst;
  }
  return CS_OK;
}

/* Input j as a constant list of at most max entries (*count = 0 when the
 * input is absent or empty). */
static cs_status const_list(cs_onnx_infer *c, const cs_node *n, int j, const char *what, int max, int *count,
                            double *out) {
  *count = 0;
  if (j >= n->n_inputs || n->inputs[j] < 0) return CS_OK;
  const cs_value *v = cs_graph_value(c->g, n->inputs[j]);
  if (!v->data || (v->dtype != CS_DTYPE_F32 && v->dtype != CS_DTYPE_I64))
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED, "%s '%s' must be a constant (computed at compile time)", what,
                            v->name);
  int64_t k = cs_value_numel(v);
  if (k > max)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "%s '%s' has %lld entries (at most %d)", what, v->name,
                            (long long)k, max);
  for (int64_t i = 0; i < k; i++)
    out[i] = v->dtype == CS_DTYPE_F32 ? cs_const_get_float(v, i) : (double)cs_const_get_int(v, i);
  *count = (int)k;
  return CS_OK;
}

/* Upsample (opsets 7–9): nearest, integer scales (attribute < 9, input 1
 * from 9). */
static cs_status lower_upsample(cs_onnx_infer *c, int id) {
  cs_node *n = &c->g->nodes[id];
  const cs_value *x = cs_graph_value(c->g, n->inputs[0]);
  const char *mode = cs_node_attr_string(n, "mode", "nearest");
  if (strcmp(mode, "nearest"))
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "mode '%s' is not supported (nearest with integer scales is)", mode);
  double scales[CS_MAX_RANK];
  int ns = 0;
  const cs_attr *sa = cs_node_attr(n, "scales");
  if (n->n_inputs > 1 && n->inputs[1] >= 0) {
    cs_status st = const_list(c, n, 1, "scales", CS_MAX_RANK, &ns, scales);
    if (st != CS_OK) return st;
  } else if (sa && sa->kind == CS_ATTR_FLOATS && sa->n <= CS_MAX_RANK) {
    ns = sa->n;
    for (int i = 0; i < ns; i++) scales[i] = sa->floats[i];
  }
  if (ns != x->rank)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "scales has %d entries for input rank %d", ns, x->rank);
  int64_t s[CS_MAX_RANK];
  for (int i = 0; i < x->rank; i++) {
    s[i] = (int64_t)scales[i];
    if ((double)s[i] != scales[i] || s[i] < 1 || s[i] > CS_ONNX_MAX_NUMEL)
      return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                              "scale %g on axis %d is not a whole number >= 1 (Resize's kernel is needed)",
                              scales[i], i);
  }
  if (n->n_inputs < 2) {
    int *ins = realloc(n->inputs, sizeof(int) * 2);
    if (!ins) return cs_error(CS_ERR_NOMEM, "out of memory");
    n->inputs = ins;
    n->inputs[1] = -1;
    n->n_inputs = 2;
  }
  return rewrite_as_repeat(c, id, s);
}

typedef enum { CT_HALF_PIXEL, CT_HALF_PIXEL_SYMMETRIC, CT_ASYMMETRIC, CT_PYTORCH_HALF_PIXEL, CT_TF_HALF_PIXEL_FOR_NN,
               CT_ALIGN_CORNERS, CT_TF_CROP_AND_RESIZE } coord_mode;
typedef enum { NM_SIMPLE, NM_ROUND_PREFER_FLOOR, NM_ROUND_PREFER_CEIL, NM_FLOOR, NM_CEIL } nearest_mode;

/* ORT's GetOriginalCoordinateFromResizedCoordinate, float for float. */
static float original_coordinate(coord_mode m, float x, float scale, float len_out, float len_in, float roi_start,
                                 float roi_end) {
  switch (m) {
    case CT_TF_CROP_AND_RESIZE: /* ORT: the one-element case in double */
      return len_out > 1 ? roi_start * (len_in - 1) + (x * (roi_end - roi_start) * (len_in - 1)) / (len_out - 1)
                         : (float)(0.5 * (roi_start + roi_end) * (len_in - 1));
    case CT_ASYMMETRIC: return x / scale;
    case CT_PYTORCH_HALF_PIXEL: return len_out > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case CT_TF_HALF_PIXEL_FOR_NN: return (x + 0.5f) / scale;
    case CT_ALIGN_CORNERS: return len_out == 1 ? 0.0f : x * (len_in - 1) / (len_out - 1);
    case CT_HALF_PIXEL_SYMMETRIC: { /* ORT: the offset in float, the rest in double (its 0.5 is a double) */
      float output_len = scale * len_in;
      float adjustment = len_out / output_len;
      float center = len_in / 2;
      float offset = center * (1 - adjustment);
      return (float)((double)offset + ((double)x + 0.5) / (double)scale - 0.5);
    }
    case CT_HALF_PIXEL: break;
  }
  return ((x + 0.5f) / scale) - 0.5f;
}

/* ORT's GetNearestPixelFromOriginal. */
static int64_t nearest_pixel(nearest_mode m, float x, int down) {
  switch (m) {
    case NM_SIMPLE: return down ? (int64_t)ceilf(x) : (int64_t)x;
    case NM_ROUND_PREFER_CEIL: return (int64_t)roundf(x);
    case NM_FLOOR: return (int64_t)floorf(x);
    case NM_CEIL: return (int64_t)ceilf(x);
    case NM_ROUND_PREFER_FLOOR: break;
  }
  if (x == (float)(int64_t)x + 0.5f) return (int64_t)floorf(x);
  return (int64_t)roundf(x);
}

/* A new node op(ins) → a new value of dtype dt and `shape` (or value
 * `out`), with attribute axis when >= 0, inferred; its output value id, or
 * -1 (status in *st). */
static int add_op(cs_onnx_infer *c, cs_op op, const char *base, const char *suffix, int n_in, const int *ins,
                  int rank, const int64_t *shape, int out, cs_dtype dt, int axis, cs_status *st) {
  char name[512];
  snprintf(name, sizeof name, "%s.%s", base, suffix);
  if (out < 0) out = cs_graph_add_value(c->g, name, dt, rank, shape);
  int k = out < 0 ? -1 : cs_graph_add_node(c->g, op, name, base, n_in, ins, 1, &out);
  if (k < 0) {
    *st = CS_ERR_NOMEM; /* message recorded */
    return -1;
  }
  *st = axis >= 0 ? cs_node_set_attr_int(&c->g->nodes[k], "axis", axis) : CS_OK;
  if (*st == CS_OK) *st = cs_onnx_infer_node(c, k);
  return *st == CS_OK ? out : -1;
}

/* One moving axis of a separable Resize: out entries, each a weighted sum
 * of `taps` input elements along the axis: index[t·len + o] and
 * weight[t·len + o], each term divided by divisor[o] where divisor is
 * not NULL. Where keep[o] = len (pad set), output o is the extrapolation
 * value (keep[o] = o elsewhere). */
typedef struct {
  int axis, taps, pad;
  int64_t len;
  int64_t *index, *keep;
  float *weight, *divisor;
} axis_filter;

static void free_filter(axis_filter *f) {
  free(f->index);
  free(f->keep);
  free(f->weight);
  free(f->divisor);
  f->index = f->keep = NULL;
  f->weight = f->divisor = NULL;
}

/* Node id: x → Identity → a fresh value of x's shape that the rewrite
 * builds from (the Resize's output itself when nothing follows); its id,
 * or -1. */
static int start_chain(cs_onnx_infer *c, int id, int to_output) {
  cs_node *n = &c->g->nodes[id];
  const cs_value *x = cs_graph_value(c->g, n->inputs[0]);
  char name[512];
  snprintf(name, sizeof name, "%s.in", n->name);
  int cur = to_output ? n->outputs[0] : cs_graph_add_value(c->g, name, x->dtype, x->rank, x->shape);
  if (cur < 0) return -1;
  become(c, id, CS_OP_IDENTITY, -1, cur);
  return cur;
}

/* tf_crop_and_resize: per filter with extrapolated outputs, a Pad of one
 * element of the extrapolation value past the end of its axis and a
 * Gather of keep, after the weighted sums (so that no sum mixes the value
 * with others); the last op writes yv. `cur` (of `shape`) is the sums'
 * result; where no filter extrapolates it is yv already. */
static cs_status extrapolate_last(cs_onnx_infer *c, const char *base, int cur, int rank, int64_t *shape, int yv,
                                  cs_dtype dt, int n_f, const axis_filter *f, float extrapolation) {
  char suffix[64], name[512];
  cs_status st = CS_OK;
  int last_pad = -1;
  for (int k = 0; k < n_f; k++)
    if (f[k].pad) last_pad = k;
  for (int k = 0; k <= last_pad && st == CS_OK; k++) {
    if (!f[k].pad) continue;
    int i = f[k].axis;
    int64_t pads[2 * CS_MAX_RANK] = {0}, npads = 2 * rank, one = 1;
    pads[rank + i] = 1;
    snprintf(name, sizeof name, "%s.pads_%d", base, i);
    int pv = cs_graph_add_const(c->g, name, CS_DTYPE_I64, 1, &npads, pads);
    snprintf(name, sizeof name, "%s.extrapolation_%d", base, i);
    int ev = cs_graph_add_const(c->g, name, CS_DTYPE_F32, 0, &one, &extrapolation);
    snprintf(name, sizeof name, "%s.keep_%d", base, i);
    int kv = cs_graph_add_const(c->g, name, CS_DTYPE_I64, 1, &f[k].len, f[k].keep);
    if (pv < 0 || ev < 0 || kv < 0) return CS_ERR_NOMEM;
    int pi[3] = {cur, pv, ev};
    shape[i] += 1;
    snprintf(suffix, sizeof suffix, "pad_%d", i);
    int padded = add_op(c, CS_OP_PAD, base, suffix, 3, pi, rank, shape, -1, dt, -1, &st);
    if (padded < 0) return st != CS_OK ? st : CS_ERR_NOMEM;
    shape[i] -= 1;
    int gi[2] = {padded, kv};
    snprintf(suffix, sizeof suffix, "extrapolate_%d", i);
    cur = add_op(c, CS_OP_GATHER, base, suffix, 2, gi, rank, shape, k == last_pad ? yv : -1, dt, i, &st);
    if (cur < 0 && st == CS_OK) st = CS_ERR_NOMEM;
  }
  return st;
}

/* Node id (input 0 = x) becomes Identity(x) → per filter, in the order
 * given: `taps` constant Gathers, each times a constant weight column
 * (the Mul left out where every weight is 1), summed in tap order; then
 * per filter with extrapolated outputs, a Pad of one element of the
 * extrapolation value past the end of its axis and a Gather of keep (last,
 * so that no later filter mixes the value with others). The last op
 * writes the Resize's output. Linear's names are index1_/weight1_/
 * gather1_/mul1_ … add_<axis> (two taps: one Add). The caller infers node
 * id. */
static cs_status rewrite_as_filters(cs_onnx_infer *c, int id, int n_f, const axis_filter *f, float extrapolation) {
  cs_node *n = &c->g->nodes[id];
  const cs_value *x = cs_graph_value(c->g, n->inputs[0]);
  int rank = x->rank, yv = n->outputs[0];
  int64_t shape[CS_MAX_RANK];
  cs_dtype dt = x->dtype;
  char base[256], suffix[64], name[512];
  snprintf(base, sizeof base, "%s", n->name);
  for (int i = 0; i < rank; i++) shape[i] = x->shape[i];
  int cur = start_chain(c, id, n_f == 0);
  if (cur < 0) return CS_ERR_NOMEM;
  cs_status st = CS_OK;
  int last_pad = -1;
  for (int k = 0; k < n_f; k++)
    if (f[k].pad) last_pad = k;
  for (int k = 0; k < n_f && st == CS_OK; k++) {
    int i = f[k].axis, final = k == n_f - 1 && last_pad < 0;
    int64_t len = f[k].len;
    int64_t wshape[CS_MAX_RANK];
    int wrank = rank - i;
    wshape[0] = len;
    for (int d = 1; d < wrank; d++) wshape[d] = 1;
    shape[i] = len;
    int sum = -1, cd = -1;
    for (int t = 0; t < f[k].taps && st == CS_OK; t++) {
      const float *w = f[k].weight + (size_t)t * (size_t)len;
      int ones = 1;
      for (int64_t o = 0; o < len; o++) ones = ones && w[o] == 1.0f;
      snprintf(name, sizeof name, "%s.index%d_%d", base, t + 1, i);
      int ci = cs_graph_add_const(c->g, name, CS_DTYPE_I64, 1, &len, f[k].index + (size_t)t * (size_t)len);
      int cw = 0;
      if (!ones) {
        snprintf(name, sizeof name, "%s.weight%d_%d", base, t + 1, i);
        cw = cs_graph_add_const(c->g, name, CS_DTYPE_F32, wrank, wshape, w);
      }
      if (ci < 0 || cw < 0) return CS_ERR_NOMEM;
      int last_op = final && t == f[k].taps - 1;
      int ga[2] = {cur, ci};
      snprintf(suffix, sizeof suffix, "gather%d_%d", t + 1, i);
      int term = add_op(c, CS_OP_GATHER, base, suffix, 2, ga, rank, shape, last_op && ones && t == 0 ? yv : -1, dt, i,
                        &st);
      if (term >= 0 && !ones) {
        int ma[2] = {term, cw};
        snprintf(suffix, sizeof suffix, "mul%d_%d", t + 1, i);
        term = add_op(c, CS_OP_MUL, base, suffix, 2, ma, rank, shape,
                      last_op && t == 0 && !f[k].divisor ? yv : -1, dt, -1, &st);
      }
      if (term >= 0 && f[k].divisor) {
        if (cd < 0) {
          snprintf(name, sizeof name, "%s.divisor_%d", base, i);
          cd = cs_graph_add_const(c->g, name, CS_DTYPE_F32, wrank, wshape, f[k].divisor);
          if (cd < 0) return CS_ERR_NOMEM;
        }
        int da[2] = {term, cd};
        snprintf(suffix, sizeof suffix, "div%d_%d", t + 1, i);
        term = add_op(c, CS_OP_DIV, base, suffix, 2, da, rank, shape, last_op && t == 0 ? yv : -1, dt, -1, &st);
      }
      if (term >= 0 && t > 0) {
        int sa[2] = {sum, term};
        if (t == f[k].taps - 1) snprintf(suffix, sizeof suffix, "add_%d", i);
        else snprintf(suffix, sizeof suffix, "add%d_%d", t, i);
        term = add_op(c, CS_OP_ADD, base, suffix, 2, sa, rank, shape, last_op ? yv : -1, dt, -1, &st);
      }
      if (term < 0 && st == CS_OK) st = CS_ERR_NOMEM;
      sum = term;
    }
    cur = sum;
  }
  return st == CS_OK ? extrapolate_last(c, base, cur, rank, shape, yv, dt, n_f, f, extrapolation) : st;
}

/* Node id (input 0 = x) becomes ORT's bilinear (n_f = 2) or trilinear
 * (n_f = 3) sum over the axes of f (outer first, each a 2-tap linear
 * filter): UpsampleBilinear computes
 *   y = dx2·dy2·X11 + dx1·dy2·X21 + dx2·dy1·X12 + dx1·dy1·X22
 * left to right in float (no fused multiply-add), each weight product
 * rounded before it meets X, so the separable chain (one axis at a time)
 * rounds otherwise. Here each term is Gathers (x[i1] or x[i2] per axis,
 * the outer axis first) times one constant [out_0, …, out_{n_f-1}, 1, …]
 * holding ORT's rounded weight product (the innermost axis's first:
 * fl(fl(dx·dy)·dz)), the terms added in ORT's order (the innermost axis's
 * tap fastest). Then extrapolation as rewrite_as_filters. The caller
 * infers node id. */
static cs_status rewrite_as_nlinear(cs_onnx_infer *c, int id, int n_f, const axis_filter *f, float extrapolation) {
  cs_node *n = &c->g->nodes[id];
  const cs_value *x = cs_graph_value(c->g, n->inputs[0]);
  int rank = x->rank, yv = n->outputs[0], pads = 0;
  int64_t shape[CS_MAX_RANK], wshape[CS_MAX_RANK];
  cs_dtype dt = x->dtype;
  char base[256], suffix[64], name[512];
  snprintf(base, sizeof base, "%s", n->name);
  for (int i = 0; i < rank; i++) shape[i] = x->shape[i];
  for (int k = 0; k < n_f; k++) pads |= f[k].pad;
  int wrank = rank - f[0].axis;
  size_t wn = 1;
  for (int d = 0; d < wrank; d++) wshape[d] = 1;
  for (int k = 0; k < n_f; k++) {
    wshape[f[k].axis - f[0].axis] = f[k].len;
    wn *= (size_t)f[k].len;
  }
  float *w = malloc(sizeof(float) * wn);
  if (!w) return cs_error(CS_ERR_NOMEM, "out of memory");
  int in = start_chain(c, id, 0);
  if (in < 0) {
    free(w);
    return CS_ERR_NOMEM;
  }
  /* gathered[k][bits]: x gathered along f[0..k], f[k]'s tap in bit 0
   * and f[j]'s in bit k - j */
  int gathered[3][8];
  cs_status st = CS_OK;
  for (int k = 0; k < n_f && st == CS_OK; k++) {
    int idx[2];
    for (int t = 0; t < 2; t++) {
      snprintf(name, sizeof name, "%s.index%d_%d", base, t + 1, f[k].axis);
      idx[t] = cs_graph_add_const(c->g, name, CS_DTYPE_I64, 1, &f[k].len, f[k].index + (size_t)t * (size_t)f[k].len);
      if (idx[t] < 0) st = CS_ERR_NOMEM;
    }
    shape[f[k].axis] = f[k].len;
    for (int bits = 0; bits < (2 << k) && st == CS_OK; bits++) {
      int ga[2] = {k ? gathered[k - 1][bits >> 1] : in, idx[bits & 1]};
      snprintf(suffix, sizeof suffix, "gather%d_%d", bits, f[k].axis);
      gathered[k][bits] = add_op(c, CS_OP_GATHER, base, suffix, 2, ga, rank, shape, -1, dt, f[k].axis, &st);
      if (gathered[k][bits] < 0 && st == CS_OK) st = CS_ERR_NOMEM;
    }
  }
  /* the terms: bits b has f[k]'s tap (b >> (n_f-1-k)) & 1, the innermost
   * axis's tap in bit 0 — ORT's order X11, X21, X12, X22 (X111 … X222) */
  int sum = -1;
  for (int b = 0; b < (1 << n_f) && st == CS_OK; b++) {
    size_t stride[3];
    stride[n_f - 1] = 1;
    for (int k = n_f - 2; k >= 0; k--) stride[k] = stride[k + 1] * (size_t)f[k + 1].len;
    for (size_t e = 0; e < wn; e++) {
      float p = 1.0f;
      for (int k = n_f - 1; k >= 0; k--) {
        int t = (b >> (n_f - 1 - k)) & 1;
        int64_t o = (int64_t)(e / stride[k] % (size_t)f[k].len);
        float wk = f[k].weight[(size_t)t * (size_t)f[k].len + (size_t)o];
        p = k == n_f - 1 ? wk : p * wk; /* ORT: dx·dy, then ·dz */
      }
      w[e] = p;
    }
    snprintf(name, sizeof name, "%s.weight%d", base, b);
    int cw = cs_graph_add_const(c->g, name, CS_DTYPE_F32, wrank, wshape, w);
    if (cw < 0) {
      st = CS_ERR_NOMEM;
      break;
    }
    int last = b == (1 << n_f) - 1 && !pads;
    int ma[2] = {gathered[n_f - 1][b], cw};
    snprintf(suffix, sizeof suffix, "mul%d", b);
    int term = add_op(c, CS_OP_MUL, base, suffix, 2, ma, rank, shape, -1, dt, -1, &st);
    if (term >= 0 && b > 0) {
      int sa[2] = {sum, term};
      snprintf(suffix, sizeof suffix, "add%d", b);
      term = add_op(c, CS_OP_ADD, base, suffix, 2, sa, rank, shape, last ? yv : -1, dt, -1, &st);
    }
    if (term < 0 && st == CS_OK) st = CS_ERR_NOMEM;
    sum = term;
  }
  free(w);
  return st == CS_OK ? extrapolate_last(c, base, sum, rank, shape, yv, dt, n_f, f, extrapolation) : st;
}

/* ORT's cubic coefficients (GetCubicCoeffs) at fractional offset s. */
static void cubic_coeffs(float s, float a, float *w) {
  float t = fabsf(s);
  w[0] = ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a;
  w[1] = ((a + 2) * t - (a + 3)) * t * t + 1;
  w[2] = ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1;
  w[3] = ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a;
}

typedef struct {
  int mode; /* 0 nearest, 1 linear, 3 cubic (taps: 1, 2, 4) */
  int ct, nm, exclude_outside, extrapolate;
  float cubic_a;
} filter_kind;

/* The filter of one axis as ORT weighs it. Linear (UpsampleBilinear /
 * UpsampleLinear setup): the coordinate clamped to [0, in − 1], i1 its
 * integer part, i2 = min(i1 + 1, in − 1), x[i1]·|c − i2| + x[i2]·|c − i1|,
 * both weights 0.5 where i1 = i2. Cubic (ResizeBiCubic): the four
 * elements floor(c) − 1 … floor(c) + 2, clamped to the input, weighed by
 * GetCubicCoeffs(c − floor(c), A); exclude_outside zeroes the weights of
 * the ones outside and divides by their sum: the weights themselves on
 * the first axis summed (ORT's x), each weighted term on the others
 * (divide set: ORT's y, x_interp · coeff / sum). tf_crop_and_resize
 * (extrapolate): a coordinate outside [0, in − 1] gives the extrapolation
 * value (keep). */
static cs_status make_filter(const filter_kind *k, int axis, int64_t in, int64_t len, float scale, float roi_start,
                             float roi_end, int divide, axis_filter *f) {
  int taps = k->mode == 3 ? 4 : k->mode == 1 ? 2 : 1;
  f->axis = axis;
  f->taps = taps;
  f->len = len;
  f->pad = 0;
  divide = divide && k->mode == 3 && k->exclude_outside;
  f->divisor = divide ? malloc(sizeof(float) * (size_t)len) : NULL;
  f->index = malloc(sizeof(int64_t) * (size_t)(taps * len));
  f->keep = malloc(sizeof(int64_t) * (size_t)len);
  f->weight = malloc(sizeof(float) * (size_t)(taps * len));
  if (!f->index || !f->keep || !f->weight || (divide && !f->divisor)) {
    free_filter(f);
    return cs_error(CS_ERR_NOMEM, "out of memory");
  }
  for (int64_t o = 0; o < len; o++) {
    int64_t idx[4];
    float w[4];
    /* ORT: an axis of scale 1 reads its own index, roi or not */
    float v = scale == 1.0f ? (float)o
                            : original_coordinate((coord_mode)k->ct, (float)o, scale, (float)len, (float)in, roi_start,
                                                  roi_end);
    if (f->divisor) f->divisor[o] = 1.0f;
    f->keep[o] = o;
    if (k->extrapolate && (v < 0.0f || v > (float)(in - 1))) { /* overwritten last */
      f->pad = 1;
      f->keep[o] = len;
      for (int t = 0; t < taps; t++) {
        idx[t] = 0;
        w[t] = t == 0 ? 1.0f : 0.0f;
      }
    } else if (k->mode == 3) {
      float fl = floorf(v);
      int64_t base = (int64_t)fl;
      cubic_coeffs(v - fl, k->cubic_a, w);
      float sum = 0.0f;
      for (int t = 0; t < 4; t++) {
        int64_t j = base - 1 + t;
        if (k->exclude_outside && (j < 0 || j >= in)) w[t] = 0.0f;
        sum += w[t];
        idx[t] = j < 0 ? 0 : j >= in ? in - 1 : j;
      }
      if (f->divisor) f->divisor[o] = sum;
      else if (k->exclude_outside)
        for (int t = 0; t < 4; t++) w[t] /= sum;
    } else if (k->mode == 1) {
      v = v < 0.0f ? 0.0f : v > (float)(in - 1) ? (float)(in - 1) : v;
      idx[0] = (int64_t)v < in - 1 ? (int64_t)v : in - 1;
      idx[1] = idx[0] + 1 < in - 1 ? idx[0] + 1 : in - 1;
      w[0] = fabsf(v - (float)idx[1]); /* x[i1]'s weight is |c − i2| */
      w[1] = fabsf(v - (float)idx[0]);
      if (idx[0] == idx[1]) w[0] = w[1] = 0.5f;
    } else { /* nearest (with extrapolation: tf_crop_and_resize) */
      idx[0] = nearest_pixel((nearest_mode)k->nm, v, scale < 1.0f);
      idx[0] = idx[0] < 0 ? 0 : idx[0] >= in ? in - 1 : idx[0];
      w[0] = 1.0f;
    }
    for (int t = 0; t < taps; t++) {
      f->index[(size_t)t * (size_t)len + (size_t)o] = idx[t];
      f->weight[(size_t)t * (size_t)len + (size_t)o] = w[t];
    }
  }
  return CS_OK;
}

/* The first axis of ORT's linear kernel for this rank and these scales
 * (Upsample::BaseCompute): 2-D → bilinear over both axes; 4-D with
 * scales 1 on N and C → bilinear over H, W (NCHW), with 1 on N and the
 * last → over axes 1, 2 (NHWC); 3-D → trilinear over all three; 5-D with 1
 * on N and C → over axes 2–4. -1 for any other (ORT refuses those; they
 * are done one axis at a time). */
static int nlinear_first_axis(int rank, const float *scale) {
  if (rank == 2 || rank == 3) return 0;
  if (rank == 4 && scale[0] == 1.0f) return scale[1] == 1.0f ? 2 : scale[3] == 1.0f ? 1 : -1;
  if (rank == 5 && scale[0] == 1.0f && scale[1] == 1.0f) return 2;
  return -1;
}

static int pick(const char *s, const char *const *names, int count) {
  for (int i = 0; i < count; i++)
    if (!strcmp(s, names[i])) return i;
  return -1;
}

/* Resize (opsets 10–25): X, scales (10) | X, roi, scales, sizes (11+). */
static cs_status lower_resize(cs_onnx_infer *c, int id) {
  cs_node *n = &c->g->nodes[id];
  const cs_value *x = cs_graph_value(c->g, n->inputs[0]);
  int rank = x->rank;
  const char *mode = cs_node_attr_string(n, "mode", "nearest");
  static const char *const mode_names[] = {"nearest", "linear", "", "cubic"};
  int md = pick(mode, mode_names, 4);
  if (md < 0 || md == 2)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "mode '%s' is not one of ONNX's (nearest, linear, cubic)", mode);
  if (md && x->dtype != CS_DTYPE_F32)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED, "mode '%s' on %s is not supported yet (float is)", mode,
                            cs_dtype_name(x->dtype));
  /* tf_half_pixel_for_nn: ORT's spelling of ONNX's tf_half_pixel_for_nearest */
  static const char *const ct_names[] = {"half_pixel",         "half_pixel_symmetric",      "asymmetric",
                                         "pytorch_half_pixel", "tf_half_pixel_for_nearest", "align_corners",
                                         "tf_crop_and_resize", "tf_half_pixel_for_nn"};
  static const char *const nm_names[] = {"", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  const char *ct_name = c->opset > 10 ? cs_node_attr_string(n, "coordinate_transformation_mode", "half_pixel")
                                      : "asymmetric";
  const char *nm_name = c->opset > 10 ? cs_node_attr_string(n, "nearest_mode", "round_prefer_floor") : "";
  int ct = pick(ct_name, ct_names, 8), nm = pick(nm_name, nm_names, 5);
  if (ct == 7) ct = CT_TF_HALF_PIXEL_FOR_NN;
  if (ct < 0)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED, "coordinate_transformation_mode '%s' is not supported",
                            ct_name);
  if (nm < 0 || (c->opset > 10 && nm == NM_SIMPLE))
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "nearest_mode '%s' is not one of ONNX's", nm_name);
  if (cs_node_attr_int(n, "antialias", 0))
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED, "antialias = 1 is not supported");
  const char *policy = cs_node_attr_string(n, "keep_aspect_ratio_policy", "stretch");

  /* Axes the scales/sizes name (opset 18+), all axes before. */
  int n_axes = 0;
  int axes[CS_MAX_RANK];
  const int64_t *ax = cs_node_attr_ints(n, "axes", &n_axes);
  if (!ax) n_axes = rank;
  if (n_axes > rank)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "axes has %d entries for input rank %d", n_axes, rank);
  for (int i = 0; i < n_axes; i++) {
    int64_t a = ax ? ax[i] : i;
    if (a < 0) a += rank;
    if (a < 0 || a >= rank)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID, "axis %lld is out of range for rank %d",
                              (long long)(ax ? ax[i] : i), rank);
    axes[i] = (int)a;
  }

  double in_scales[CS_MAX_RANK], in_sizes[CS_MAX_RANK];
  int ns = 0, nz = 0;
  cs_status st = const_list(c, n, c->opset > 10 ? 2 : 1, "scales", CS_MAX_RANK, &ns, in_scales);
  if (st == CS_OK && c->opset > 10) st = const_list(c, n, 3, "sizes", CS_MAX_RANK, &nz, in_sizes);
  if (st != CS_OK) return st;
  if ((ns > 0) == (nz > 0))
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "needs exactly one of scales and sizes (got %s)",
                            ns ? "both" : "neither");
  if ((ns ? ns : nz) != n_axes)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "%s has %d entries for %d axes", ns ? "scales" : "sizes",
                            ns ? ns : nz, n_axes);
  if (nz && strcmp(policy, "stretch"))
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED, "keep_aspect_ratio_policy '%s' is not supported (stretch is)",
                            policy);

  /* ORT: scales given → out = (int64)(scale · in) in float; sizes given →
   * scale = (float)out / (float)in. */
  float scale[CS_MAX_RANK];
  int64_t out[CS_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    scale[i] = 1.0f;
    out[i] = x->shape[i];
  }
  for (int k = 0; k < n_axes; k++) {
    int i = axes[k];
    if (ns) {
      scale[i] = (float)in_scales[k];
      if (!(scale[i] > 0.0f) || !(scale[i] * (float)x->shape[i] <= (float)CS_ONNX_MAX_NUMEL))
        return cs_onnx_node_err(c, n, CS_ERR_INVALID, "scale %g on axis %d is not a positive size factor",
                                in_scales[k], i);
      out[i] = (int64_t)(scale[i] * (float)x->shape[i]);
    } else {
      if (!(in_sizes[k] >= 1.0) || in_sizes[k] > (double)CS_ONNX_MAX_NUMEL)
        return cs_onnx_node_err(c, n, CS_ERR_INVALID, "size %g on axis %d is not a valid size", in_sizes[k], i);
      out[i] = (int64_t)in_sizes[k];
      scale[i] = (float)out[i] / (float)x->shape[i];
    }
  }

  if (md || ct == CT_TF_CROP_AND_RESIZE) {
    filter_kind k = {md, ct, nm, (int)cs_node_attr_int(n, "exclude_outside", 0), ct == CT_TF_CROP_AND_RESIZE,
                     cs_node_attr_float(n, "cubic_coeff_a", -0.75f)};
    float roi[2 * CS_MAX_RANK];
    for (int i = 0; i < rank; i++) {
      roi[i] = 0.0f;
      roi[rank + i] = 1.0f;
    }
    if (k.extrapolate) { /* roi: starts then ends of the axes scales/sizes name */
      double r[2 * CS_MAX_RANK];
      int nr = 0;
      st = const_list(c, n, 1, "roi", 2 * CS_MAX_RANK, &nr, r);
      if (st != CS_OK) return st;
      if (nr != 2 * n_axes)
        return cs_onnx_node_err(c, n, CS_ERR_INVALID, "roi has %d entries for %d axes (tf_crop_and_resize needs "
                                "a start and an end per axis)", nr, n_axes);
      for (int j = 0; j < n_axes; j++) {
        roi[axes[j]] = (float)r[j];
        roi[rank + axes[j]] = (float)r[n_axes + j];
      }
    }
    /* axes that move, the last first for cubic: ORT's bicubic sums along
     * x, then y, in that order; none where the output's shape is the
     * input's (ORT copies then) */
    int same = 1;
    for (int i = 0; i < rank; i++) same = same && out[i] == x->shape[i];
    axis_filter f[CS_MAX_RANK] = {0};
    int n_f = 0;
    int first = md == 1 && !same ? nlinear_first_axis(rank, scale) : -1;
    if (first >= 0) { /* ORT's bilinear/trilinear kernel: every axis of it, moving or not */
      int n_ax = rank == 2 || rank == 4 ? 2 : 3;
      for (int j = 0; j < n_ax && st == CS_OK; j++) {
        int i = first + j;
        st = make_filter(&k, i, x->shape[i], out[i], scale[i], roi[i], roi[rank + i], 0, &f[n_f]);
        if (st == CS_OK) n_f++;
      }
      if (st == CS_OK) st = rewrite_as_nlinear(c, id, n_f, f, cs_node_attr_float(n, "extrapolation_value", 0.0f));
      for (int j = 0; j < n_f; j++) free_filter(&f[j]);
      return st;
    }
    for (int j = 0; j < rank && st == CS_OK; j++) {
      int i = md == 3 ? rank - 1 - j : j;
      if (same || (out[i] == x->shape[i] && scale[i] == 1.0f)) continue; /* ORT: scale 1 reads x as is, roi or not */
      st = make_filter(&k, i, x->shape[i], out[i], scale[i], roi[i], roi[rank + i], i != rank - 1, &f[n_f]);
      if (st == CS_OK) n_f++;
    }
    if (st == CS_OK) st = rewrite_as_filters(c, id, n_f, f, cs_node_attr_float(n, "extrapolation_value", 0.0f));
    for (int j = 0; j < n_f; j++) free_filter(&f[j]);
    return st;
  }

  /* ORT's index map per axis; a repeat where it is one (the existing
   * kernels, as before), else a Gather per axis. */
  int64_t s[CS_MAX_RANK] = {0}, *src[CS_MAX_RANK] = {0};
  int repeat = 1;
  cs_status st2 = CS_OK;
  for (int i = 0; i < rank && st2 == CS_OK; i++) {
    int64_t in = x->shape[i];
    s[i] = in > 0 ? out[i] / in : 0;
    src[i] = malloc(sizeof(int64_t) * (size_t)out[i]);
    if (!src[i]) {
      st2 = cs_error(CS_ERR_NOMEM, "out of memory");
      break;
    }
    int ok = in > 0 && s[i] >= 1 && s[i] * in == out[i];
    for (int64_t o = 0; o < out[i]; o++) {
      float orig = original_coordinate((coord_mode)ct, (float)o, scale[i], (float)out[i], (float)in, 0.0f, 1.0f);
      int64_t v = nearest_pixel((nearest_mode)nm, orig, scale[i] < 1.0f);
      if (v >= in) v = in - 1;
      if (v < 0) v = 0;
      src[i][o] = v;
      ok = ok && v == o / s[i];
    }
    repeat = repeat && ok;
  }
  int extra = 0; /* the repeat's view adds an axis per repeated one */
  for (int i = 0; i < rank; i++) extra += s[i] > 1;
  if (rank + extra > CS_MAX_RANK) repeat = 0;
  if (st2 == CS_OK) st2 = repeat ? rewrite_as_repeat(c, id, s) : rewrite_as_gathers(c, id, out, src);
  for (int i = 0; i < rank; i++) free(src[i]);
  return st2;
}

cs_status cs_onnx_lower_resize(cs_onnx_infer *c, int id) {
  return c->g->nodes[id].op == CS_OP_UPSAMPLE ? lower_upsample(c, id) : lower_resize(c, id);
}
