/*
 * onnx_shape_layout.c — shape inference of the data-movement ops: Reshape,
 * Flatten, Transpose, Concat, Split, Slice, Squeeze, Unsqueeze, Pad, and
 * ReduceMean (its axes follow the same rules). Inputs that decide a shape
 * (Reshape's shape, Slice's starts, …) must be constants.
 */
#include "onnx_internal.h"

#include <stdlib.h>
#include <string.h>

/* Normalize `count` axes against `rank`; each at most once. Writes a mask. */
static cs_status axes_mask(cs_onnx_infer *c, cs_node *n, const int64_t *axes,
                           int count, int rank, const char *what,
                           unsigned *mask) {
  *mask = 0;
  for (int i = 0; i < count; i++) {
    int a;
    cs_status st = cs_onnx_axis(c, n, axes[i], rank, what, &a);
    if (st != CS_OK) return st;
    if (*mask & (1u << a))
      return cs_onnx_node_err(c, n, CS_ERR_INVALID, "%s %lld is repeated",
                              what, (long long)axes[i]);
    *mask |= 1u << a;
  }
  return CS_OK;
}

/* Since opset 13 these lists are inputs; the old attribute is an error
 * rather than silently ignored. */
static cs_status no_attr_since(cs_onnx_infer *c, cs_node *n, const char *name,
                               int opset) {
  if (c->opset >= opset && cs_node_attr(n, name))
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "'%s' is an input since opset %d, not an attribute "
                            "(model opset %d)",
                            name, opset, c->opset);
  return CS_OK;
}

cs_status cs_onnx_infer_reshape(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  int64_t sh[CS_MAX_RANK];
  int count;
  cs_status st = cs_onnx_const_ints(c, n, 1, "shape", sh, CS_MAX_RANK, &count);
  if (st != CS_OK) return st;
  int allowzero = cs_node_attr_int(n, "allowzero", 0) != 0;
  int64_t numel = cs_value_numel(x), known = 1;
  int infer = -1;
  int64_t out[CS_MAX_RANK];
  for (int i = 0; i < count; i++) {
    int64_t d = sh[i];
    if (d == -1) {
      if (infer >= 0)
        return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                                "shape %s has more than one -1",
                                cs_onnx_shape_str(count, sh));
      infer = i;
      continue;
    }
    if (d == 0 && !allowzero) {
      if (i >= x->rank)
        return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                                "shape %s copies dim %d (0) but the input %s "
                                "has rank %d",
                                cs_onnx_shape_str(count, sh), i,
                                cs_onnx_shape_str(x->rank, x->shape), x->rank);
      d = x->shape[i];
    }
    if (d < 0 || d > CS_ONNX_MAX_NUMEL)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID, "shape %s: invalid dim %lld",
                              cs_onnx_shape_str(count, sh), (long long)d);
    out[i] = d;
    known *= d;
    if (known > CS_ONNX_MAX_NUMEL) break; /* cannot match; reported below */
  }
  if (infer >= 0) {
    if (known == 0 || numel % known != 0)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "cannot reshape %s (%lld elements) to %s",
                              cs_onnx_shape_str(x->rank, x->shape),
                              (long long)numel, cs_onnx_shape_str(count, sh));
    out[infer] = numel / known;
  } else if (known != numel) {
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "cannot reshape %s (%lld elements) to %s",
                            cs_onnx_shape_str(x->rank, x->shape),
                            (long long)numel, cs_onnx_shape_str(count, sh));
  }
  return cs_onnx_set_out(c, n, 0, x->dtype, count, out);
}

cs_status cs_onnx_infer_flatten(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  int64_t axis = cs_node_attr_int(n, "axis", 1);
  if (axis < -x->rank || axis > x->rank)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "axis %lld is out of range for rank %d (valid: %d "
                            "to %d)",
                            (long long)axis, x->rank, -x->rank, x->rank);
  if (axis < 0) axis += x->rank;
  int64_t out[2] = {1, 1};
  for (int i = 0; i < x->rank; i++) out[i < axis ? 0 : 1] *= x->shape[i];
  return cs_onnx_set_out(c, n, 0, x->dtype, 2, out);
}

cs_status cs_onnx_infer_transpose(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  int len = 0;
  const int64_t *perm = cs_node_attr_ints(n, "perm", &len);
  int64_t p[CS_MAX_RANK];
  if (!perm) {
    for (int i = 0; i < x->rank; i++) p[i] = x->rank - 1 - i;
    /* Explicit for the later stages. */
    cs_status st = cs_node_set_attr_ints(n, "perm", x->rank, p);
    if (st != CS_OK) return st;
  } else {
    if (len != x->rank)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "perm has %d entries but the input has rank %d",
                              len, x->rank);
    unsigned seen = 0;
    for (int i = 0; i < len; i++) {
      if (perm[i] < 0 || perm[i] >= x->rank || (seen & (1u << perm[i])))
        return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                                "perm is not a permutation of 0..%d",
                                x->rank - 1);
      seen |= 1u << perm[i];
      p[i] = perm[i];
    }
  }
  int64_t out[CS_MAX_RANK];
  for (int i = 0; i < x->rank; i++) out[i] = x->shape[p[i]];
  return cs_onnx_set_out(c, n, 0, x->dtype, x->rank, out);
}

cs_status cs_onnx_infer_concat(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  if (!cs_node_attr(n, "axis"))
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "attribute axis is required");
  if (x->rank == 0)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "input '%s' is a scalar; Concat needs rank >= 1",
                            x->name);
  int axis;
  cs_status st = cs_onnx_axis(c, n, cs_node_attr_int(n, "axis", 0), x->rank,
                              "axis", &axis);
  if (st != CS_OK) return st;
  int64_t out[CS_MAX_RANK];
  memcpy(out, x->shape, sizeof out);
  for (int j = 1; j < n->n_inputs; j++) {
    const cs_value *y = cs_onnx_in(c, n, j);
    int ok = y->dtype == x->dtype && y->rank == x->rank;
    for (int d = 0; ok && d < x->rank; d++)
      ok = d == axis || y->shape[d] == x->shape[d];
    if (!ok)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "input %d '%s' %s%s does not match input 0 '%s' "
                              "%s%s outside axis %d",
                              j, y->name, cs_dtype_name(y->dtype),
                              cs_onnx_shape_str(y->rank, y->shape), x->name,
                              cs_dtype_name(x->dtype),
                              cs_onnx_shape_str(x->rank, x->shape), axis);
    out[axis] += y->shape[axis];
    if (out[axis] > CS_ONNX_MAX_NUMEL) break; /* set_out reports it */
  }
  return cs_onnx_set_out(c, n, 0, x->dtype, x->rank, out);
}

cs_status cs_onnx_infer_split(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  if (x->rank == 0)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "input '%s' is a scalar",
                            x->name);
  int axis;
  cs_status st = no_attr_since(c, n, "split", 13);
  if (st == CS_OK)
    st = cs_onnx_axis(c, n, cs_node_attr_int(n, "axis", 0), x->rank, "axis",
                      &axis);
  if (st != CS_OK) return st;
  int nout = n->n_outputs;
  int64_t dim = x->shape[axis];
  int64_t *sizes = calloc((size_t)nout, sizeof(int64_t));
  if (!sizes) return cs_error(CS_ERR_NOMEM, "out of memory");
  if (cs_onnx_in(c, n, 1)) {
    int count;
    st = cs_onnx_const_ints(c, n, 1, "split", sizes, nout, &count);
    int64_t sum = 0;
    for (int i = 0; st == CS_OK && i < count; i++) {
      if (sizes[i] < 0 || sizes[i] > CS_ONNX_MAX_NUMEL)
        st = cs_onnx_node_err(c, n, CS_ERR_INVALID, "split[%d] = %lld", i,
                              (long long)sizes[i]);
      sum += sizes[i];
    }
    if (st == CS_OK && (count != nout || sum != dim))
      st = cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "split has %d entries summing to %lld, but there "
                            "are %d outputs and axis %d has %lld",
                            count, (long long)sum, nout, axis, (long long)dim);
  } else {
    const cs_attr *na = cs_node_attr(n, "num_outputs");
    if (na && (na->kind != CS_ATTR_INT || na->i != nout))
      st = cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "num_outputs = %lld but the node has %d outputs",
                            (long long)na->i, nout);
    else if (!na && c->opset >= 18)
      st = cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "needs a 'split' input or the num_outputs "
                            "attribute (opset %d)",
                            c->opset);
    else if (!na && dim % nout != 0)
      st = cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "axis %d (%lld) does not split evenly into %d "
                            "outputs",
                            axis, (long long)dim, nout);
    else {
      /* Equal chunks; from opset 18 (num_outputs) the last may be smaller:
       * chunks of ceil(dim / n). */
      int64_t chunk = (dim + nout - 1) / nout;
      for (int i = 0; i < nout; i++)
        sizes[i] = i < nout - 1 ? chunk : dim - chunk * (nout - 1);
      if (sizes[nout - 1] <= 0)
        st = cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "axis %d (%lld) cannot be split into %d chunks "
                              "of %lld",
                              axis, (long long)dim, nout, (long long)chunk);
    }
  }
  for (int i = 0; st == CS_OK && i < nout; i++) {
    int64_t out[CS_MAX_RANK];
    memcpy(out, x->shape, sizeof out);
    out[axis] = sizes[i];
    st = cs_onnx_set_out(c, n, i, x->dtype, x->rank, out);
  }
  free(sizes);
  return st;
}

/* ONNX Slice: negative starts/ends count from the end, then clamp to
 * [0, dim] (step > 0) or [0, dim−1] / [−1, dim−1] (step < 0); an end of
 * INT32_MAX or INT64_MAX is the end of the axis in the step's direction. */
/* Gather: out = data[:axis] + indices.shape + data[axis+1:]. Constant
 * indices (what torch.export writes for, e.g., the as_strided of an
 * adaptive pool) are checked against [−dim, dim) here (a negative one
 * counts from the end); runtime ones (an embedding lookup) by the kernel. */
cs_status cs_onnx_infer_gather(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  cs_value *idx = (cs_value *)cs_onnx_in(c, n, 1);
  int64_t axis = cs_node_attr_int(n, "axis", 0);
  if (axis < -x->rank || axis >= x->rank || x->rank == 0)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "axis %lld is outside the data's rank %d",
                            (long long)axis, x->rank);
  if (axis < 0) axis += x->rank;
  if (cs_node_set_attr_int(n, "axis", axis) != CS_OK) return CS_ERR_NOMEM;
  if (idx->dtype != CS_DTYPE_I64 && idx->dtype != CS_DTYPE_I32)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "indices '%s' must be int32 or int64, not %s",
                            idx->name, cs_dtype_name(idx->dtype));
  if (x->rank - 1 + idx->rank > CS_MAX_RANK)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED, "output rank %d exceeds %d",
                            x->rank - 1 + idx->rank, CS_MAX_RANK);
  const int64_t dim = x->shape[axis], count = idx->data ? cs_value_numel(idx) : 0;
  for (int64_t i = 0; i < count; i++) { /* runtime indices: the kernel checks them */
    int64_t v = cs_const_get_int(idx, i);
    if (v < -dim || v >= dim)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID, "indices[%lld] = %lld is outside [%lld, %lld)",
                              (long long)i, (long long)v, (long long)-dim, (long long)dim);
  }
  int64_t out[CS_MAX_RANK];
  int r = 0;
  for (int d = 0; d < axis; d++) out[r++] = x->shape[d];
  for (int d = 0; d < idx->rank; d++) out[r++] = idx->shape[d];
  for (int d = (int)axis + 1; d < x->rank; d++) out[r++] = x->shape[d];
  return cs_onnx_set_out(c, n, 0, x->dtype, r, out);
}

cs_status cs_onnx_infer_slice(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  int64_t starts[CS_MAX_RANK], ends[CS_MAX_RANK], axes[CS_MAX_RANK],
      steps[CS_MAX_RANK];
  int ns, ne, na, nst;
  cs_status st = cs_onnx_const_ints(c, n, 1, "starts", starts, CS_MAX_RANK, &ns);
  if (st == CS_OK)
    st = cs_onnx_const_ints(c, n, 2, "ends", ends, CS_MAX_RANK, &ne);
  if (st != CS_OK) return st;
  if (ns != ne)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "starts has %d entries but ends has %d", ns, ne);
  if (cs_onnx_in(c, n, 3)) {
    st = cs_onnx_const_ints(c, n, 3, "axes", axes, CS_MAX_RANK, &na);
    if (st == CS_OK && na != ns)
      st = cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "axes has %d entries but starts has %d", na, ns);
  } else {
    for (int i = 0; i < ns; i++) axes[i] = i;
  }
  if (st == CS_OK && cs_onnx_in(c, n, 4)) {
    st = cs_onnx_const_ints(c, n, 4, "steps", steps, CS_MAX_RANK, &nst);
    if (st == CS_OK && nst != ns)
      st = cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "steps has %d entries but starts has %d", nst, ns);
  } else {
    for (int i = 0; i < ns; i++) steps[i] = 1;
  }
  unsigned mask;
  if (st == CS_OK) st = axes_mask(c, n, axes, ns, x->rank, "axis", &mask);
  if (st != CS_OK) return st;
  int64_t out[CS_MAX_RANK];
  memcpy(out, x->shape, sizeof out);
  for (int i = 0; i < ns; i++) {
    int a = (int)(axes[i] < 0 ? axes[i] + x->rank : axes[i]);
    int64_t dim = x->shape[a], step = steps[i];
    if (step == 0 || step < -INT32_MAX || step > INT32_MAX)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID, "steps[%d] = %lld", i,
                              (long long)step);
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    /* As ONNX Runtime: an INT_MAX end means "to the end" in the direction
     * of the step (the spec only says so for forward steps). */
    if (ends[i] == INT32_MAX || ends[i] == INT64_MAX) e = step < 0 ? -1 : dim;
    int64_t len;
    if (step > 0) {
      s = s < 0 ? 0 : s > dim ? dim : s;
      e = e < 0 ? 0 : e > dim ? dim : e;
      len = e > s ? (e - s + step - 1) / step : 0;
    } else {
      s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
      e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
      len = s > e ? (s - e + (-step) - 1) / (-step) : 0;
    }
    out[a] = len;
  }
  return cs_onnx_set_out(c, n, 0, x->dtype, x->rank, out);
}

cs_status cs_onnx_infer_squeeze(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  cs_status st = no_attr_since(c, n, "axes", 13);
  if (st != CS_OK) return st;
  unsigned mask = 0;
  if (cs_onnx_in(c, n, 1)) {
    int64_t axes[CS_MAX_RANK];
    int na;
    st = cs_onnx_const_ints(c, n, 1, "axes", axes, CS_MAX_RANK, &na);
    if (st == CS_OK) st = axes_mask(c, n, axes, na, x->rank, "axis", &mask);
    if (st != CS_OK) return st;
  }
  if (mask == 0) { /* no axes, or an empty list (as ONNX Runtime): all 1s */
    for (int d = 0; d < x->rank; d++)
      if (x->shape[d] == 1) mask |= 1u << d;
  } else {
    for (int d = 0; d < x->rank; d++)
      if ((mask & (1u << d)) && x->shape[d] != 1)
        return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                                "cannot squeeze axis %d of '%s' %s: its size "
                                "is %lld, not 1",
                                d, x->name,
                                cs_onnx_shape_str(x->rank, x->shape),
                                (long long)x->shape[d]);
  }
  int64_t out[CS_MAX_RANK];
  int r = 0;
  for (int d = 0; d < x->rank; d++)
    if (!(mask & (1u << d))) out[r++] = x->shape[d];
  return cs_onnx_set_out(c, n, 0, x->dtype, r, out);
}

cs_status cs_onnx_infer_unsqueeze(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  cs_status st = no_attr_since(c, n, "axes", 13);
  int64_t axes[CS_MAX_RANK];
  int na = 0;
  if (st == CS_OK)
    st = cs_onnx_const_ints(c, n, 1, "axes", axes, CS_MAX_RANK, &na);
  if (st != CS_OK) return st;
  int r = x->rank + na;
  if (r > CS_MAX_RANK)
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "output rank %d exceeds %d", r, CS_MAX_RANK);
  unsigned mask;
  st = axes_mask(c, n, axes, na, r, "axis", &mask);
  if (st != CS_OK) return st;
  int64_t out[CS_MAX_RANK];
  for (int d = 0, k = 0; d < r; d++) out[d] = mask & (1u << d) ? 1 : x->shape[k++];
  return cs_onnx_set_out(c, n, 0, x->dtype, r, out);
}

cs_status cs_onnx_infer_pad(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  const cs_attr *ma = cs_node_attr(n, "mode");
  const char *mode = ma && ma->kind == CS_ATTR_STRING && ma->s ? ma->s : "constant";
  int reflect = !strcmp(mode, "reflect");
  if (!strcmp(mode, "wrap"))
    return cs_onnx_node_err(c, n, CS_ERR_UNSUPPORTED,
                            "mode 'wrap' is not supported (constant, edge, "
                            "reflect are)");
  if (!reflect && strcmp(mode, "constant") && strcmp(mode, "edge"))
    return cs_onnx_node_err(c, n, CS_ERR_INVALID, "unknown mode '%s'", mode);
  int64_t pads[2 * CS_MAX_RANK], axes[CS_MAX_RANK];
  int np, na;
  cs_status st =
      cs_onnx_const_ints(c, n, 1, "pads", pads, 2 * CS_MAX_RANK, &np);
  if (st != CS_OK) return st;
  if (cs_onnx_in(c, n, 3)) {
    unsigned mask;
    st = cs_onnx_const_ints(c, n, 3, "axes", axes, CS_MAX_RANK, &na);
    if (st == CS_OK) st = axes_mask(c, n, axes, na, x->rank, "axis", &mask);
    if (st != CS_OK) return st;
  } else {
    na = x->rank;
    for (int i = 0; i < na; i++) axes[i] = i;
  }
  if (np != 2 * na)
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "pads has %d entries, expected %d (2 per axis)", np,
                            2 * na);
  const cs_value *cv = cs_onnx_in(c, n, 2);
  if (cv && (cv->dtype != x->dtype || cs_value_numel(cv) != 1 || cv->rank > 1))
    return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                            "constant_value '%s' must be a %s scalar", cv->name,
                            cs_dtype_name(x->dtype));
  int64_t out[CS_MAX_RANK];
  memcpy(out, x->shape, sizeof out);
  for (int i = 0; i < na; i++) {
    int a = (int)(axes[i] < 0 ? axes[i] + x->rank : axes[i]);
    int64_t b = pads[i], e = pads[na + i], dim = x->shape[a];
    if (b < -CS_ONNX_MAX_NUMEL || b > CS_ONNX_MAX_NUMEL ||
        e < -CS_ONNX_MAX_NUMEL || e > CS_ONNX_MAX_NUMEL)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "pads on axis %d (%lld, %lld) are out of range",
                              a, (long long)b, (long long)e);
    /* edge/reflect read the input left after negative pads (cropping). */
    int64_t kept = dim + (b < 0 ? b : 0) + (e < 0 ? e : 0);
    if (strcmp(mode, "constant") && kept < 1)
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "%s mode on axis %d: the negative pads leave "
                              "nothing of the input to extend",
                              mode, a);
    if (reflect && (b > kept - 1 || e > kept - 1))
      return cs_onnx_node_err(c, n, CS_ERR_INVALID,
                              "reflect pads (%lld, %lld) on axis %d must be "
                              "smaller than its size %lld",
                              (long long)b, (long long)e, a, (long long)kept);
    out[a] = dim + b + e;
  }
  return cs_onnx_set_out(c, n, 0, x->dtype, x->rank, out);
}

cs_status cs_onnx_infer_reduce_mean(cs_onnx_infer *c, cs_node *n) {
  const cs_value *x = cs_onnx_in(c, n, 0);
  int64_t axes[CS_MAX_RANK];
  int na = 0;
  cs_status st = no_attr_since(c, n, "axes", 18);
  if (st != CS_OK) return st;
  /* Before opset 18 axes was an attribute; onnx_legacy.c made it input 1. */
  if (cs_onnx_in(c, n, 1)) {
    st = cs_onnx_const_ints(c, n, 1, "axes", axes, CS_MAX_RANK, &na);
    if (st != CS_OK) return st;
  }
  int keepdims = cs_node_attr_int(n, "keepdims", 1) != 0;
  int noop = c->opset >= 18 && cs_node_attr_int(n, "noop_with_empty_axes", 0);
  unsigned mask = 0;
  if (na == 0) {
    if (noop) return cs_onnx_set_out(c, n, 0, x->dtype, x->rank, x->shape);
    mask = (1u << x->rank) - 1;
  } else {
    st = axes_mask(c, n, axes, na, x->rank, "axis", &mask);
    if (st != CS_OK) return st;
  }
  int64_t out[CS_MAX_RANK];
  int r = 0;
  for (int d = 0; d < x->rank; d++) {
    if (!(mask & (1u << d))) out[r++] = x->shape[d];
    else if (keepdims) out[r++] = 1;
  }
  return cs_onnx_set_out(c, n, 0, x->dtype, r, out);
}
