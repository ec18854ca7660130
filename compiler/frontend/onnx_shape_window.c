/*
 * onnx_shape_window.c — Conv, MaxPool, AveragePool, GlobalAveragePool.
 *
 * Per spatial axis, with the dilated kernel extent dk = (k − 1)·d + 1:
 *   auto_pad SAME_*: out = ceil(in / s), total pad = max(0, (out−1)·s + dk − in),
 *                    SAME_UPPER puts the odd pad at the end, SAME_LOWER at
 *                    the start;  VALID: no pads;  NOTSET: the pads attribute.
 *   out = floor((in + pb + pe − dk) / s) + 1, or with ceil_mode (pools)
 *   ceil(…) + 1 minus one if that last window would start at or after
 *   in + pb (windows starting in the right padding are dropped).
 * The resolved pads are written back as an explicit "pads" attribute and
 * auto_pad becomes "NOTSET", so later stages read one form only.
 */
#include "onnx_internal.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SPATIAL (CS_MAX_RANK - 2)

typedef struct window {
  int ns; /* spatial axes */
  int64_t kernel[MAX_SPATIAL], stride[MAX_SPATIAL], dil[MAX_SPATIAL];
  int64_t pads[2 * MAX_SPATIAL];
  int ceil_mode;
} window;

/* An ints attribute of length `count` with every entry in [lo, hi], or the
 * default `dflt` for each entry when absent. */
static cs_status window_ints(cs_onnx_infer *c, cs_node *n, const char *name,
                             int count, int64_t lo, int64_t dflt,
                             int64_t *out, int *present) {
  int len = 0;
  const int64_t *v = cs_node_attr_ints(n, name, &len);
  if (present) *present = v != NULL;
  if (!v) {
    for (int i = 0; i < count; i++) out[i] = dflt;
    return CS_OK;
  }
  if (len != count)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "attribute %s has %d values, expected %d", name,
                            len, count);
  for (int i = 0; i < count; i++) {
    if (v[i] < lo || v[i] > INT32_MAX)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "attribute %s[%d] = %lld is out of range", name, i,
                              (long long)v[i]);
    out[i] = v[i];
  }
  return CS_OK;
}

static cs_status resolve_window(cs_onnx_infer *c, cs_node *n,
                                const cs_value *x, window *w,
                                int64_t *out_spatial) {
  const cs_attr *ap = cs_node_attr(n, "auto_pad");
  const char *auto_pad = ap && ap->kind == CS_ATTR_STRING && ap->s ? ap->s : "";
  int same_upper = !strcmp(auto_pad, "SAME_UPPER");
  int same_lower = !strcmp(auto_pad, "SAME_LOWER");
  int valid = !strcmp(auto_pad, "VALID");
  if (!same_upper && !same_lower && !valid && *auto_pad &&
      strcmp(auto_pad, "NOTSET"))
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "auto_pad '%s' is not one of NOTSET, SAME_UPPER, "
                            "SAME_LOWER, VALID",
                            auto_pad);
  cs_status st = window_ints(c, n, "strides", w->ns, 1, 1, w->stride, NULL);
  if (st == CS_OK)
    st = window_ints(c, n, "dilations", w->ns, 1, 1, w->dil, NULL);
  if (st == CS_OK)
    st = window_ints(c, n, "pads", 2 * w->ns, 0, 0, w->pads, NULL);
  if (st != CS_OK) return st;
  for (int i = 0; i < w->ns; i++) {
    int64_t in = x->shape[2 + i], s = w->stride[i];
    int64_t dk = (w->kernel[i] - 1) * w->dil[i] + 1;
    int64_t *pb = &w->pads[i], *pe = &w->pads[w->ns + i];
    if ((same_upper || same_lower) && w->dil[i] != 1)
      /* ONNX Runtime, the reference, refuses this for Conv and sizes pools
       * without the dilation, against the spec: refuse rather than differ. */
      return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                              "auto_pad %s with dilations > 1 is not supported",
                              auto_pad);
    if (same_upper || same_lower) {
      int64_t out = (in + s - 1) / s;
      int64_t total = (out - 1) * s + dk - in;
      if (total < 0) total = 0;
      *pb = same_upper ? total / 2 : total - total / 2;
      *pe = total - *pb;
    } else if (valid) {
      *pb = *pe = 0;
    }
    int64_t span = in + *pb + *pe - dk;
    if (span < 0)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "spatial axis %d: the kernel extent %lld is "
                              "larger than the padded input %lld",
                              i, (long long)dk, (long long)(in + *pb + *pe));
    int64_t out = (span + (w->ceil_mode ? s - 1 : 0)) / s + 1;
    if (w->ceil_mode && (out - 1) * s >= in + *pb) out--;
    out_spatial[i] = out;
  }
  /* One explicit form for the later stages. */
  st = cs_node_set_attr_ints(n, "pads", 2 * w->ns, w->pads);
  if (st == CS_OK && ap) st = cs_node_set_attr_string(n, "auto_pad", "NOTSET", 6);
  return st;
}

static cs_status spatial_input(cs_onnx_infer *c, cs_node *n, const cs_value *x,
                               window *w) {
  if (x->rank < 3)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "input '%s' %s must be [N, C, spatial...] (rank >= "
                            "3)",
                            x->name, cs_onnx_shape_str(x->rank, x->shape));
  memset(w, 0, sizeof *w);
  w->ns = x->rank - 2;
  return CS_OK;
}

cs_status cs_onnx_infer_conv(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0), *wt = cs_onnx_in(c, n, 1);
  const cs_value *b = cs_onnx_in(c, n, 2);
  window w;
  cs_status st = spatial_input(c, n, x, &w);
  if (st != CS_OK) return st;
  if (wt->dtype != x->dtype || wt->rank != x->rank)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "weight '%s' %s%s must be %s with rank %d like the "
                            "input",
                            wt->name, cs_dtype_name(wt->dtype),
                            cs_onnx_shape_str(wt->rank, wt->shape),
                            cs_dtype_name(x->dtype), x->rank);
  int64_t group = cs_node_attr_int(n, "group", 1);
  int64_t cin = x->shape[1], m = wt->shape[0];
  if (group < 1 || cin % group != 0 || m % group != 0 ||
      wt->shape[1] != cin / group)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "group %lld does not fit input channels %lld and "
                            "weight '%s' %s (expected [M, C/group, ...] with M "
                            "and C divisible by group)",
                            (long long)group, (long long)cin, wt->name,
                            cs_onnx_shape_str(wt->rank, wt->shape));
  if (b && (b->rank != 1 || b->shape[0] != m || b->dtype != x->dtype))
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "bias '%s' %s%s must be %s[%lld]", b->name,
                            cs_dtype_name(b->dtype),
                            cs_onnx_shape_str(b->rank, b->shape),
                            cs_dtype_name(x->dtype), (long long)m);
  int present = 0;
  st = window_ints(c, n, "kernel_shape", w.ns, 1, 1, w.kernel, &present);
  if (st != CS_OK) return st;
  for (int i = 0; i < w.ns; i++) {
    if (present && w.kernel[i] != wt->shape[2 + i])
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "kernel_shape does not match weight '%s' %s",
                              wt->name, cs_onnx_shape_str(wt->rank, wt->shape));
    w.kernel[i] = wt->shape[2 + i];
  }
  if (!present && (st = cs_node_set_attr_ints(n, "kernel_shape", w.ns, w.kernel)) != CS_OK) return st;
  int64_t shape[CS_MAX_RANK] = {x->shape[0], m};
  st = resolve_window(c, n, x, &w, shape + 2);
  return st != CS_OK ? st : cs_onnx_set_out(c, n, 0, x->dtype, x->rank, shape);
}

cs_status cs_onnx_infer_pool(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  window w;
  cs_status st = spatial_input(c, n, x, &w);
  if (st != CS_OK) return st;
  if (!cs_node_attr(n, "kernel_shape"))
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "attribute kernel_shape is required");
  st = window_ints(c, n, "kernel_shape", w.ns, 1, 1, w.kernel, NULL);
  if (st != CS_OK) return st;
  w.ceil_mode = cs_node_attr_int(n, "ceil_mode", 0) != 0;
  int64_t shape[CS_MAX_RANK] = {x->shape[0], x->shape[1]};
  st = resolve_window(c, n, x, &w, shape + 2);
  if (st != CS_OK) return st;
  /* As ONNX Runtime: a pad must be smaller than the kernel, else a window
   * could hold padding only (no input to take a max or an average of). */
  for (int i = 0; i < 2 * w.ns; i++)
    if (w.pads[i] >= w.kernel[i % w.ns])
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "pad %lld on spatial axis %d is not smaller than "
                              "the kernel (%lld)",
                              (long long)w.pads[i], i % w.ns,
                              (long long)w.kernel[i % w.ns]);
  st = cs_onnx_set_out(c, n, 0, x->dtype, x->rank, shape);
  if (st == CS_OK) st = cs_onnx_set_out(c, n, 1, CS_DTYPE_I64, x->rank, shape);
  return st;
}

cs_status cs_onnx_infer_global_pool(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  window w;
  cs_status st = spatial_input(c, n, x, &w);
  if (st != CS_OK) return st;
  int64_t shape[CS_MAX_RANK];
  for (int i = 0; i < x->rank; i++) shape[i] = i < 2 ? x->shape[i] : 1;
  return cs_onnx_set_out(c, n, 0, x->dtype, x->rank, shape);
}

/* ConvTranspose (any spatial rank, NCHW…; weight [C, M/group, k…]). Per spatial axis,
 * dk = (k − 1)·d + 1 and full = s·(in − 1) + output_padding + dk:
 *   output_shape given, or auto_pad SAME_* (output in·s): total pad =
 *   full − out, SAME_UPPER puts the odd pad at the end, SAME_LOWER and
 *   NOTSET at the start, as the ONNX spec and ONNX Runtime;
 *   otherwise out = full − pb − pe.
 * The resolved pads are written back ("pads", auto_pad NOTSET). */
cs_status cs_onnx_infer_conv_transpose(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0), *wt = cs_onnx_in(c, n, 1), *b = cs_onnx_in(c, n, 2);
  window w;
  cs_status st = spatial_input(c, n, x, &w);
  if (st != CS_OK) return st;
  int64_t group = cs_node_attr_int(n, "group", 1), cin = x->shape[1];
  if (wt->dtype != x->dtype || wt->rank != x->rank || group < 1 || cin % group || wt->shape[0] != cin)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "weight '%s' %s%s must be %s [C = %lld, M/group, kH, kW] (group %lld)", wt->name,
                            cs_dtype_name(wt->dtype), cs_onnx_shape_str(wt->rank, wt->shape),
                            cs_dtype_name(x->dtype), (long long)cin, (long long)group);
  int64_t m = wt->shape[1] * group;
  if (b && (b->rank != 1 || b->shape[0] != m || b->dtype != x->dtype))
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "bias '%s' %s%s must be %s[%lld]", b->name,
                            cs_dtype_name(b->dtype), cs_onnx_shape_str(b->rank, b->shape),
                            cs_dtype_name(x->dtype), (long long)m);
  int present = 0;
  st = window_ints(c, n, "kernel_shape", w.ns, 1, 1, w.kernel, &present);
  for (int i = 0; st == CS_OK && i < w.ns; i++) {
    if (present && w.kernel[i] != wt->shape[2 + i])
      return cs_onnx_node_err(c, n, CS_ERR_INVALID, "kernel_shape does not match weight '%s' %s", wt->name,
                              cs_onnx_shape_str(wt->rank, wt->shape));
    w.kernel[i] = wt->shape[2 + i];
  }
  int64_t opad[MAX_SPATIAL], oshape[MAX_SPATIAL];
  int have_oshape = 0;
  if (st == CS_OK) st = window_ints(c, n, "strides", w.ns, 1, 1, w.stride, NULL);
  if (st == CS_OK) st = window_ints(c, n, "dilations", w.ns, 1, 1, w.dil, NULL);
  if (st == CS_OK) st = window_ints(c, n, "pads", 2 * w.ns, 0, 0, w.pads, NULL);
  if (st == CS_OK) st = window_ints(c, n, "output_padding", w.ns, 0, 0, opad, NULL);
  if (st == CS_OK) st = window_ints(c, n, "output_shape", w.ns, 1, 1, oshape, &have_oshape);
  if (st != CS_OK) return st;
  const cs_attr *ap = cs_node_attr(n, "auto_pad");
  const char *auto_pad = ap && ap->kind == CS_ATTR_STRING && ap->s ? ap->s : "";
  int same_upper = !strcmp(auto_pad, "SAME_UPPER"), same_lower = !strcmp(auto_pad, "SAME_LOWER");
  int valid = !strcmp(auto_pad, "VALID");
  if (!same_upper && !same_lower && !valid && *auto_pad && strcmp(auto_pad, "NOTSET"))
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "auto_pad '%s' is not one of NOTSET, SAME_UPPER, SAME_LOWER, VALID",
                            auto_pad);
  int64_t shape[CS_MAX_RANK] = {x->shape[0], m};
  for (int i = 0; i < w.ns; i++) {
    int64_t in = x->shape[2 + i], s = w.stride[i], dk = (w.kernel[i] - 1) * w.dil[i] + 1;
    int64_t full = s * (in - 1) + opad[i] + dk, out;
    int64_t *pb = &w.pads[i], *pe = &w.pads[w.ns + i];
    if (opad[i] >= s && opad[i] >= w.dil[i])
      return cs_onnx_node_err(c, n, CS_ERR_INVALID, "output_padding[%d] = %lld must be below the stride or the dilation",
                              i, (long long)opad[i]);
    if (have_oshape || same_upper || same_lower) {
      out = have_oshape ? oshape[i] : in * s;
      int64_t total = full - out; /* below 0: the rows past `full` hold the bias alone (ORT's max(0, …)) */
      if (total < 0) total = 0;
      *pb = same_upper ? total / 2 : total - total / 2;
      *pe = total - *pb;
    } else {
      if (valid) *pb = *pe = 0;
      out = full - *pb - *pe;
    }
    if (out < 1 || out > CS_ONNX_MAX_NUMEL)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID, "spatial axis %d: output size %lld", i, (long long)out);
    shape[2 + i] = out;
  }
  if ((st = cs_node_set_attr_ints(n, "kernel_shape", w.ns, w.kernel)) != CS_OK) return st;
  st = cs_node_set_attr_ints(n, "pads", 2 * w.ns, w.pads);
  if (st == CS_OK && ap) st = cs_node_set_attr_string(n, "auto_pad", "NOTSET", 6);
  return st != CS_OK ? st : cs_onnx_set_out(c, n, 0, x->dtype, x->rank, shape);
}
