/*
 * Param structs as C designated initializers, one field per runtime struct
 * member (include/cstatic/kernels.h), so the generated code reads like the
 * header and a field added there without being added here is visible in
 * review. Floats are exact hex-float literals.
 */
#include <inttypes.h>
#include <string.h>

#include "cg.h"

/* A field list; with wrap set, lines break before 80 columns. */
typedef struct fields {
  cs_sbuf *b;
  const char *indent;
  size_t line_start; /* offset in b where the current line starts */
  int count;
  int wrap;
  int *needs_math;
} fields;

enum { LINE_WIDTH = 80 };

static void field_text(fields *f, const char *text) {
  size_t len = strlen(text);
  if (f->count > 0) {
    cs_sbuf_puts(f->b, ",");
    if (f->wrap && f->b->len - f->line_start + len + 3 > LINE_WIDTH) {
      f->line_start = f->b->len + 1;
      cs_sbuf_printf(f->b, "\n%s", f->indent);
    } else {
      cs_sbuf_puts(f->b, " ");
    }
  }
  cs_sbuf_puts(f->b, text);
  f->count++;
}

static void field_int(fields *f, const char *name, int32_t v) {
  char num[24], text[96];
  snprintf(text, sizeof text, ".%s = %s", name, cs_c_int32(v, num));
  field_text(f, text);
}

/* Enum-valued fields print their enumerator's name (no magic numbers);
 * an out-of-range value prints as a number so the kernel rejects it. */
static void field_enum(fields *f, const char *name, int32_t v, const char *const *names, int n) {
  if (v >= 0 && v < n && names[v]) {
    char text[96];
    snprintf(text, sizeof text, ".%s = %s", name, names[v]);
    field_text(f, text);
  } else {
    field_int(f, name, v);
  }
}

static const char *const requant_kinds[] = {"TIDSP_REQUANT_FLOAT", "TIDSP_REQUANT_Q31"};
static const char *const dtypes[] = {NULL, "TIDSP_DTYPE_F32", "TIDSP_DTYPE_I8", "TIDSP_DTYPE_U8",
                                     "TIDSP_DTYPE_I16", "TIDSP_DTYPE_U16", "TIDSP_DTYPE_I32",
                                     "TIDSP_DTYPE_I64", "TIDSP_DTYPE_BOOL"};
static const char *const binary_ops[] = {"TIDSP_BINARY_ADD", "TIDSP_BINARY_SUB", "TIDSP_BINARY_MUL",
                                         "TIDSP_BINARY_DIV", "TIDSP_BINARY_POW"};
static const char *const unary_ops[] = {"TIDSP_UNARY_RELU", "TIDSP_UNARY_CLIP", "TIDSP_UNARY_SIGMOID",
                                        "TIDSP_UNARY_HARDSIGMOID", "TIDSP_UNARY_HARDSWISH", "TIDSP_UNARY_ERF",
                                        "TIDSP_UNARY_GELU", "TIDSP_UNARY_GELU_TANH", "TIDSP_UNARY_SQRT",
                                        "TIDSP_UNARY_NEG", "TIDSP_UNARY_RECIPROCAL", "TIDSP_UNARY_TANH",
                                        "TIDSP_UNARY_EXP", "TIDSP_UNARY_SIN", "TIDSP_UNARY_COS"};
static const char *const pad_modes[] = {"TIDSP_PAD_CONSTANT", "TIDSP_PAD_EDGE", "TIDSP_PAD_REFLECT"};
#define ENUM(f, name, v, table) field_enum(f, name, v, table, (int)(sizeof table / sizeof table[0]))

static void field_float(fields *f, const char *name, float v) {
  char num[40], text[96];
  cs_c_float(v, num);
  if (num[0] == 'N' || num[0] == 'I' || num[1] == 'I') *f->needs_math = 1;
  snprintf(text, sizeof text, ".%s = %s", name, num);
  field_text(f, text);
}

static void field_ints(fields *f, const char *name, const int32_t *v, int n) {
  cs_sbuf t = {0};
  char num[24];
  cs_sbuf_printf(&t, ".%s = {", name);
  for (int i = 0; i < n; i++) cs_sbuf_printf(&t, "%s%s", i ? ", " : "", cs_c_int32(v[i], num));
  cs_sbuf_puts(&t, "}");
  field_text(f, t.s ? t.s : "");
  cs_sbuf_free(&t);
}

/* Nested struct ".name = {…}": built in tmp, then added as one field; in
 * wrap mode it starts on its own line. */
static char nested_indent[64];

static fields nested_begin(fields *f, const char *name, cs_sbuf *tmp) {
  /* Continuation lines of a nested list go 4 columns deeper. */
  snprintf(nested_indent, sizeof nested_indent, "%s    ", f->indent);
  fields g = {tmp, nested_indent, 0, 0, f->wrap, f->needs_math};
  cs_sbuf_printf(tmp, ".%s = {", name);
  /* Continuation lines of the nested list are measured from this line's
   * indent, as they will be once spliced in. */
  g.line_start = 0;
  if (f->wrap) tmp->len = 0, cs_sbuf_printf(tmp, "%s.%s = {", f->indent, name);
  return g;
}

static void nested_end(fields *f, cs_sbuf *tmp) {
  cs_sbuf_puts(tmp, "}");
  const char *text = tmp->s ? tmp->s : "";
  if (f->wrap) {
    if (f->count > 0) cs_sbuf_puts(f->b, ",\n");
    else if (f->b->len > f->line_start) cs_sbuf_puts(f->b, "\n");
    f->line_start = f->b->len;
    cs_sbuf_puts(f->b, text);
    const char *nl = strrchr(text, '\n');
    if (nl) f->line_start = f->b->len - strlen(nl + 1);
    f->count++;
  } else {
    field_text(f, text);
  }
  cs_sbuf_free(tmp);
}

static void requant(fields *f, const char *name, const tidsp_requant_params *rq) {
  cs_sbuf tmp = {0};
  fields g = nested_begin(f, name, &tmp);
  ENUM(&g, "kind", rq->kind, requant_kinds);
  field_int(&g, "per_channel", rq->per_channel);
  field_int(&g, "out_zp", rq->out_zp);
  field_int(&g, "out_min", rq->out_min);
  field_int(&g, "out_max", rq->out_max);
  nested_end(f, &tmp);
}

static void layer_norm_fields(fields *f, const tidsp_layer_norm_params *p) {
  field_int(f, "outer", p->outer);
  field_int(f, "norm", p->norm);
  field_float(f, "epsilon", p->epsilon);
}

static void broadcast(fields *f, const tidsp_broadcast *bc) {
  cs_sbuf tmp = {0};
  fields g = nested_begin(f, "bc", &tmp);
  int r = bc->rank < 0 ? 0 : bc->rank > TIDSP_MAX_RANK ? TIDSP_MAX_RANK : bc->rank;
  field_int(&g, "rank", bc->rank);
  field_ints(&g, "shape", bc->shape, r);
  field_ints(&g, "a_stride", bc->a_stride, r);
  field_ints(&g, "b_stride", bc->b_stride, r);
  nested_end(f, &tmp);
}

static void pool2d_fields(fields *f, const tidsp_pool2d_params *p) {
  field_int(f, "n", p->n);
  field_int(f, "c", p->c);
  field_int(f, "h_in", p->h_in);
  field_int(f, "w_in", p->w_in);
  field_int(f, "h_out", p->h_out);
  field_int(f, "w_out", p->w_out);
  field_int(f, "k_h", p->k_h);
  field_int(f, "k_w", p->k_w);
  field_int(f, "stride_h", p->stride_h);
  field_int(f, "stride_w", p->stride_w);
  field_int(f, "dil_h", p->dil_h);
  field_int(f, "dil_w", p->dil_w);
  field_int(f, "pad_top", p->pad_top);
  field_int(f, "pad_left", p->pad_left);
  field_int(f, "pad_bottom", p->pad_bottom);
  field_int(f, "pad_right", p->pad_right);
  field_int(f, "count_include_pad", p->count_include_pad);
}

static int clamp_rank(int32_t r) { return r < 0 ? 0 : r > TIDSP_MAX_RANK ? TIDSP_MAX_RANK : r; }

static cs_status params_body(const cs_node *n, fields *fp, const char *name, cs_sbuf *pre) {
  fields f = *fp;
  const cs_kparams *k = &n->k;
  switch (n->op) {
    case CS_OP_K_QUANTIZE:
    case CS_OP_K_DEQUANTIZE:
      field_int(&f, "outer", k->qdq.outer);
      field_int(&f, "channels", k->qdq.channels);
      field_int(&f, "inner", k->qdq.inner);
      ENUM(&f, "dtype", k->qdq.dtype, dtypes);
      break;
    case CS_OP_K_CONV2D_I8:
    case CS_OP_K_CONV2D_F32: {
      const tidsp_conv2d_params *p = &k->conv;
      field_int(&f, "n", p->n);
      field_int(&f, "c_in", p->c_in);
      field_int(&f, "h_in", p->h_in);
      field_int(&f, "w_in", p->w_in);
      field_int(&f, "c_out", p->c_out);
      field_int(&f, "h_out", p->h_out);
      field_int(&f, "w_out", p->w_out);
      field_int(&f, "k_h", p->k_h);
      field_int(&f, "k_w", p->k_w);
      field_int(&f, "stride_h", p->stride_h);
      field_int(&f, "stride_w", p->stride_w);
      field_int(&f, "dil_h", p->dil_h);
      field_int(&f, "dil_w", p->dil_w);
      field_int(&f, "pad_top", p->pad_top);
      field_int(&f, "pad_left", p->pad_left);
      field_int(&f, "groups", p->groups);
      if (n->op == CS_OP_K_CONV2D_I8) {
        field_int(&f, "x_zp", p->x_zp);
        field_int(&f, "w_zp", p->w_zp);
        requant(&f, "rq", &p->rq);
        if (p->w_row_stride) field_int(&f, "w_row_stride", p->w_row_stride);
      }
      break;
    }
    case CS_OP_K_MATMUL_I8:
      field_int(&f, "m", k->matmul.m);
      field_int(&f, "k", k->matmul.k);
      field_int(&f, "n", k->matmul.n);
      field_int(&f, "x_zp", k->matmul.x_zp);
      field_int(&f, "w_zp", k->matmul.w_zp);
      requant(&f, "rq", &k->matmul.rq);
      if (k->matmul.w_row_stride) field_int(&f, "w_row_stride", k->matmul.w_row_stride);
      break;
    case CS_OP_K_BATCH_MATMUL_I8: {
      const tidsp_batch_matmul_i8_params *p = &k->batch_matmul;
      field_int(&f, "batch", p->batch);
      field_int(&f, "m", p->m);
      field_int(&f, "k", p->k);
      field_int(&f, "n", p->n);
      field_int(&f, "a_batch_stride", p->a_batch_stride);
      field_int(&f, "b_batch_stride", p->b_batch_stride);
      field_int(&f, "a_zp", p->a_zp);
      field_int(&f, "b_zp", p->b_zp);
      requant(&f, "rq", &p->rq);
      break;
    }
    case CS_OP_K_MATMUL_F32:
      field_int(&f, "batch", k->matmul_f32.batch);
      field_int(&f, "m", k->matmul_f32.m);
      field_int(&f, "k", k->matmul_f32.k);
      field_int(&f, "n", k->matmul_f32.n);
      field_int(&f, "a_batch_stride", k->matmul_f32.a_batch_stride);
      field_int(&f, "b_batch_stride", k->matmul_f32.b_batch_stride);
      break;
    case CS_OP_K_ADD_I8: {
      const tidsp_add_i8_params *p = &k->add;
      broadcast(&f, &p->bc);
      ENUM(&f, "kind", p->kind, requant_kinds);
      field_float(&f, "ra", p->ra);
      field_float(&f, "rb", p->rb);
      field_float(&f, "f", p->f);
      field_int(&f, "a_zp", p->a_zp);
      field_int(&f, "b_zp", p->b_zp);
      field_int(&f, "y_zp", p->y_zp);
      field_int(&f, "y_min", p->y_min);
      field_int(&f, "y_max", p->y_max);
      field_int(&f, "domain_offset", p->domain_offset);
      break;
    }
    case CS_OP_K_MUL_I8: {
      const tidsp_mul_i8_params *p = &k->mul;
      broadcast(&f, &p->bc);
      ENUM(&f, "kind", p->kind, requant_kinds);
      field_float(&f, "r", p->r);
      field_int(&f, "a_zp", p->a_zp);
      field_int(&f, "b_zp", p->b_zp);
      field_int(&f, "y_zp", p->y_zp);
      field_int(&f, "y_min", p->y_min);
      field_int(&f, "y_max", p->y_max);
      field_int(&f, "domain_offset", p->domain_offset);
      break;
    }
    case CS_OP_K_BINARY_F32:
      broadcast(&f, &k->binary.bc);
      ENUM(&f, "op", k->binary.op, binary_ops);
      break;
    case CS_OP_K_LUT_I8:
      field_int(&f, "n", k->lut.n);
      break;
    case CS_OP_K_UNARY_F32:
      field_int(&f, "n", k->unary.n);
      ENUM(&f, "op", k->unary.op, unary_ops);
      field_float(&f, "alpha", k->unary.alpha);
      field_float(&f, "beta", k->unary.beta);
      field_float(&f, "lo", k->unary.lo);
      field_float(&f, "hi", k->unary.hi);
      break;
    case CS_OP_K_MAXPOOL_I8:
    case CS_OP_K_MAXPOOL_F32:
    case CS_OP_K_AVGPOOL_F32:
      pool2d_fields(&f, &k->pool);
      break;
    case CS_OP_K_AVGPOOL_I8: {
      const tidsp_avgpool_i8_params *p = &k->avgpool;
      cs_sbuf tmp = {0};
      fields g2 = nested_begin(&f, "pool", &tmp);
      pool2d_fields(&g2, &p->pool);
      nested_end(&f, &tmp);
      ENUM(&f, "kind", p->kind, requant_kinds);
      field_float(&f, "x_scale", p->x_scale);
      field_float(&f, "y_scale", p->y_scale);
      field_int(&f, "x_zp", p->x_zp);
      field_int(&f, "y_zp", p->y_zp);
      field_int(&f, "y_min", p->y_min);
      field_int(&f, "y_max", p->y_max);
      field_int(&f, "domain_offset", p->domain_offset);
      break;
    }
    case CS_OP_K_GAP_I8:
      field_int(&f, "nc", k->gap.nc);
      field_int(&f, "hw", k->gap.hw);
      field_int(&f, "x_zp", k->gap.x_zp);
      requant(&f, "rq", &k->gap.rq);
      break;
    case CS_OP_K_GAP_F32:
      field_int(&f, "nc", k->gap_f32.nc);
      field_int(&f, "hw", k->gap_f32.hw);
      break;
    case CS_OP_K_REDUCE_MEAN_F32: {
      int r = clamp_rank(k->reduce.rank);
      field_int(&f, "rank", k->reduce.rank);
      field_ints(&f, "in_shape", k->reduce.in_shape, r);
      field_int(&f, "reduce_mask", k->reduce.reduce_mask);
      field_int(&f, "channels_last_order", k->reduce.channels_last_order);
      break;
    }
    case CS_OP_K_SOFTMAX_F32:
      field_int(&f, "outer", k->softmax.outer);
      field_int(&f, "axis_len", k->softmax.axis_len);
      field_int(&f, "inner", k->softmax.inner);
      break;
    case CS_OP_K_SOFTMAX_I8:
      field_int(&f, "outer", k->softmax_i8.outer);
      field_int(&f, "axis_len", k->softmax_i8.axis_len);
      field_int(&f, "inner", k->softmax_i8.inner);
      field_float(&f, "y_recip", k->softmax_i8.y_recip);
      field_int(&f, "y_zp", k->softmax_i8.y_zp);
      break;
    case CS_OP_K_LAYER_NORM_F32:
      layer_norm_fields(&f, &k->layer_norm);
      break;
    case CS_OP_K_LAYER_NORM_I8: {
      cs_sbuf tmp = {0};
      fields ln = nested_begin(&f, "ln", &tmp);
      layer_norm_fields(&ln, &k->layer_norm_i8.ln);
      nested_end(&f, &tmp);
      field_int(&f, "x_zp", k->layer_norm_i8.x_zp);
      field_float(&f, "x_scale", k->layer_norm_i8.x_scale);
      field_int(&f, "y_zp", k->layer_norm_i8.y_zp);
      field_float(&f, "y_scale", k->layer_norm_i8.y_scale);
      break;
    }
    case CS_OP_K_TRANSPOSE: {
      int r = clamp_rank(k->transpose.rank);
      field_int(&f, "rank", k->transpose.rank);
      field_ints(&f, "in_shape", k->transpose.in_shape, r);
      field_ints(&f, "perm", k->transpose.perm, r);
      field_int(&f, "elem_size", k->transpose.elem_size);
      break;
    }
    case CS_OP_K_SLICE: {
      int r = clamp_rank(k->slice.rank);
      field_int(&f, "rank", k->slice.rank);
      field_ints(&f, "in_shape", k->slice.in_shape, r);
      field_ints(&f, "out_shape", k->slice.out_shape, r);
      field_ints(&f, "start", k->slice.start, r);
      field_ints(&f, "step", k->slice.step, r);
      field_int(&f, "elem_size", k->slice.elem_size);
      break;
    }
    case CS_OP_K_CONCAT: {
      int cnt = 0;
      const int64_t *len = cs_node_attr_ints(n, "axis_len", &cnt);
      if (!len || cnt != n->n_inputs || cnt != k->concat.n_inputs)
        return cs_error(CS_ERR_INTERNAL,
                        "codegen: concat node '%s' has %d axis_len entries for %d inputs "
                        "(n_inputs param %d)",
                        n->name ? n->name : "?", len ? cnt : 0, n->n_inputs,
                        (int)k->concat.n_inputs);
      cs_sbuf_printf(pre, "static const int32_t %s[%d] = {", name, cnt);
      for (int i = 0; i < cnt; i++) {
        if (len[i] < 0 || len[i] > INT32_MAX)
          return cs_error(CS_ERR_INTERNAL, "codegen: concat node '%s' axis_len[%d] = %" PRId64
                          " is out of range", n->name ? n->name : "?", i, len[i]);
        cs_sbuf_printf(pre, "%s%" PRId64, i ? ", " : "", len[i]);
      }
      cs_sbuf_puts(pre, "};\n");
      field_int(&f, "n_inputs", k->concat.n_inputs);
      field_int(&f, "outer", k->concat.outer);
      field_int(&f, "inner_bytes", k->concat.inner_bytes);
      char text[128];
      snprintf(text, sizeof text, ".axis_len = %s", name);
      field_text(&f, text);
      break;
    }
    case CS_OP_K_CAST:
      field_int(&f, "n", k->cast.n);
      ENUM(&f, "from", k->cast.from, dtypes);
      ENUM(&f, "to", k->cast.to, dtypes);
      break;
    case CS_OP_K_EXPAND: {
      int r = clamp_rank(k->expand.rank);
      field_int(&f, "rank", k->expand.rank);
      field_ints(&f, "shape", k->expand.shape, r);
      field_ints(&f, "in_stride", k->expand.in_stride, r);
      field_int(&f, "elem_size", k->expand.elem_size);
      break;
    }
    case CS_OP_K_WHERE: {
      broadcast(&f, &k->where.bc);
      int r = clamp_rank(k->where.bc.rank);
      field_ints(&f, "c_stride", k->where.c_stride, r);
      field_int(&f, "elem_size", k->where.elem_size);
      break;
    }
    case CS_OP_K_GATHER:
      field_int(&f, "outer", k->gather.outer);
      field_int(&f, "axis_dim", k->gather.axis_dim);
      field_int(&f, "inner_bytes", k->gather.inner_bytes);
      field_int(&f, "count", k->gather.count);
      field_int(&f, "index_bytes", k->gather.index_bytes);
      break;
    case CS_OP_K_PAD: {
      const tidsp_pad_params *p = &k->pad;
      int r = clamp_rank(p->rank);
      field_int(&f, "rank", p->rank);
      field_ints(&f, "in_shape", p->in_shape, r);
      field_ints(&f, "pad_begin", p->pad_begin, r);
      field_ints(&f, "pad_end", p->pad_end, r);
      field_int(&f, "elem_size", p->elem_size);
      ENUM(&f, "mode", p->mode, pad_modes);
      char text[128];
      int len = snprintf(text, sizeof text, ".value = {");
      for (int i = 0; i < 8; i++)
        len += snprintf(text + len, sizeof text - (size_t)len, "%s0x%02x", i ? ", " : "", p->value[i]);
      snprintf(text + len, sizeof text - (size_t)len, "}");
      field_text(&f, text);
      break;
    }
    default:
      return cs_error(CS_ERR_INTERNAL, "codegen: node '%s' op %s has no param struct",
                      n->name ? n->name : "?", cs_op_name(n->op));
  }
  *fp = f;
  return CS_OK;
}

cs_status cs_kernel_params(const cs_graph *g, const cs_node *n, const char *indent, size_t col0,
                           const char *name, cs_sbuf *pre, cs_sbuf *b, int *needs_math) {
  (void)g;
  /* One line when it fits, else one field list per line after "{". */
  cs_sbuf line = {0}, scratch = {0};
  fields f = {&line, indent, 0, 0, 0, needs_math};
  cs_sbuf_puts(&line, "{");
  cs_status st = params_body(n, &f, name, pre);
  cs_sbuf_puts(&line, "}");
  if (st == CS_OK && col0 + line.len + 1 <= LINE_WIDTH && !line.oom) {
    cs_sbuf_puts(b, line.s);
    cs_sbuf_free(&line);
    return CS_OK;
  }
  cs_sbuf_free(&line);
  if (st != CS_OK) return st;
  cs_sbuf_printf(b, "{\n%s", indent);
  f = (fields){b, indent, b->len - strlen(indent), 0, 1, needs_math};
  st = params_body(n, &f, name, &scratch); /* pre was written by the first pass */
  cs_sbuf_free(&scratch);
  cs_sbuf_puts(b, "}");
  return st;
}

/* MMALIB extern kernels: the int32 arguments after the output pointer,
 * one per line with its name from the header, e.g. "/ * C_in * / 64". */
cs_status cs_kernel_extern_call_args(const cs_node *n, const char *indent, cs_sbuf *b) {
  const char *names = cs_kernel_extern_args(n->op);
  int cnt = 0;
  const int64_t *v = cs_node_attr_ints(n, "mm_args", &cnt);
  int want = 0;
  for (const char *p = names; p && *p; p++) want += *p == ',';
  if (names) want++;
  if (!names || !v || cnt != want)
    return cs_error(CS_ERR_INTERNAL, "codegen: node '%s' (%s) has %d int32 arguments, its extern takes %d",
                    n->name ? n->name : "?", cs_op_name(n->op), v ? cnt : 0, want);
  const char *p = names;
  for (int i = 0; i < cnt; i++) {
    size_t len = strcspn(p, ",");
    char num[24];
    if (v[i] < INT32_MIN || v[i] > INT32_MAX)
      return cs_error(CS_ERR_INTERNAL, "codegen: node '%s' argument %.*s = %lld is not an int32",
                      n->name ? n->name : "?", (int)len, p, (long long)v[i]);
    cs_sbuf_printf(b, ",\n%s/* %.*s */ %s", indent, (int)len, p, cs_c_int32((int32_t)v[i], num));
    p += len;
    while (*p == ',' || *p == ' ') p++;
  }
  return CS_OK;
}
