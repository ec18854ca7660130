/*
 * print.c — the IR as text, one line per node (`--dump-ir`):
 *
 *   %12 = k_conv2d_i8(%3, @w_conv1, @b_conv1) {stride=[2,2]} <…> : i8[1,64,112,112]  # /conv1/Conv
 *
 * %N is a value id, @name a constant, _ an absent optional input; {…} are
 * attributes, <…> a kernel op's runtime parameters, and the type after ':'
 * carries the quantization when the value has one.
 */
#include "ir.h"

#include <inttypes.h>
#include <string.h>

static void print_type(const cs_value *v, FILE *f) {
  fprintf(f, "%s[", cs_dtype_name(v->dtype));
  for (int i = 0; i < v->rank; i++)
    fprintf(f, "%s%" PRId64, i ? "," : "", v->shape[i]);
  fputc(']', f);
  const cs_quant *q = v->quant;
  if (!q || !q->scale) return;
  if (q->axis < 0)
    fprintf(f, " q(s=%g, zp=%d)", (double)q->scale[0],
            q->zero_point ? (int)q->zero_point[0] : 0);
  else
    fprintf(f, " q(axis=%d, n=%d, s0=%g, zp0=%d)", q->axis, q->count,
            (double)q->scale[0], q->zero_point ? (int)q->zero_point[0] : 0);
}

static void print_ref(const cs_graph *g, int id, FILE *f) {
  if (id < 0) {
    fputc('_', f);
  } else if (id >= g->n_values) {
    fprintf(f, "%%<bad %d>", id);
  } else if (g->values[id].data) {
    fprintf(f, "@%s", g->values[id].name);
  } else {
    fprintf(f, "%%%d", id);
  }
}

static void print_attr(const cs_attr *a, FILE *f) {
  fprintf(f, "%s=", a->name);
  switch (a->kind) {
    case CS_ATTR_INT: fprintf(f, "%" PRId64, a->i); break;
    case CS_ATTR_FLOAT: fprintf(f, "%g", (double)a->f); break;
    case CS_ATTR_STRING: fprintf(f, "\"%s\"", a->s ? a->s : ""); break;
    case CS_ATTR_INTS:
      fputc('[', f);
      for (int i = 0; i < a->n; i++)
        fprintf(f, "%s%" PRId64, i ? "," : "", a->ints[i]);
      fputc(']', f);
      break;
    case CS_ATTR_FLOATS:
      fputc('[', f);
      for (int i = 0; i < a->n; i++)
        fprintf(f, "%s%g", i ? "," : "", (double)a->floats[i]);
      fputc(']', f);
      break;
  }
}

static const char *rq_kind(const tidsp_requant_params *rq) {
  return rq->kind == TIDSP_REQUANT_Q31 ? "q31" : "float";
}

static void print_i32s(const char *label, int n, const int32_t *x, FILE *f) {
  fprintf(f, " %s=[", label);
  for (int i = 0; i < n && i < TIDSP_MAX_RANK; i++)
    fprintf(f, "%s%d", i ? "," : "", (int)x[i]);
  fputc(']', f);
}

/* The runtime parameter struct of a kernel op, in short form. */
static void print_kparams(const cs_node *n, FILE *f) {
  const cs_kparams *k = &n->k;
  fputs(" <", f);
  switch (n->op) {
    case CS_OP_K_QUANTIZE:
    case CS_OP_K_DEQUANTIZE:
      fprintf(f, "outer=%d channels=%d inner=%d dtype=%d", (int)k->qdq.outer,
              (int)k->qdq.channels, (int)k->qdq.inner, (int)k->qdq.dtype);
      break;
    case CS_OP_K_CONV2D_I8:
    case CS_OP_K_CONV2D_F32: {
      const tidsp_conv2d_params *c = &k->conv;
      fprintf(f,
              "n=%d in=%dx%dx%d out=%dx%dx%d k=%dx%d s=%dx%d d=%dx%d "
              "pad=%d,%d g=%d",
              (int)c->n, (int)c->c_in, (int)c->h_in, (int)c->w_in,
              (int)c->c_out, (int)c->h_out, (int)c->w_out, (int)c->k_h,
              (int)c->k_w, (int)c->stride_h, (int)c->stride_w, (int)c->dil_h,
              (int)c->dil_w, (int)c->pad_top, (int)c->pad_left,
              (int)c->groups);
      if (n->op == CS_OP_K_CONV2D_I8)
        fprintf(f, " x_zp=%d w_zp=%d rq=%s%s zp=%d [%d,%d]", (int)c->x_zp,
                (int)c->w_zp, rq_kind(&c->rq), c->rq.per_channel ? "/pc" : "",
                (int)c->rq.out_zp, (int)c->rq.out_min, (int)c->rq.out_max);
      if (n->op == CS_OP_K_CONV2D_I8 && c->w_row_stride)
        fprintf(f, " w_row_stride=%d", (int)c->w_row_stride);
      break;
    }
    case CS_OP_K_MATMUL_I8: {
      const tidsp_matmul_params *m = &k->matmul;
      fprintf(f, "m=%d k=%d n=%d x_zp=%d w_zp=%d rq=%s%s zp=%d [%d,%d]",
              (int)m->m, (int)m->k, (int)m->n, (int)m->x_zp, (int)m->w_zp,
              rq_kind(&m->rq), m->rq.per_channel ? "/pc" : "",
              (int)m->rq.out_zp, (int)m->rq.out_min, (int)m->rq.out_max);
      if (m->w_row_stride) fprintf(f, " w_row_stride=%d", (int)m->w_row_stride);
      break;
    }
    case CS_OP_K_BATCH_MATMUL_I8: {
      const tidsp_batch_matmul_i8_params *m = &k->batch_matmul;
      fprintf(f, "batch=%d m=%d k=%d n=%d a_stride=%d b_stride=%d a_zp=%d b_zp=%d rq=%s zp=%d [%d,%d]",
              (int)m->batch, (int)m->m, (int)m->k, (int)m->n, (int)m->a_batch_stride,
              (int)m->b_batch_stride, (int)m->a_zp, (int)m->b_zp, rq_kind(&m->rq), (int)m->rq.out_zp,
              (int)m->rq.out_min, (int)m->rq.out_max);
      break;
    }
    case CS_OP_K_MATMUL_F32: {
      const tidsp_matmul_f32_params *m = &k->matmul_f32;
      fprintf(f, "batch=%d m=%d k=%d n=%d a_stride=%d b_stride=%d",
              (int)m->batch, (int)m->m, (int)m->k, (int)m->n,
              (int)m->a_batch_stride, (int)m->b_batch_stride);
      break;
    }
    case CS_OP_K_ADD_I8:
      print_i32s("shape", k->add.bc.rank, k->add.bc.shape, f);
      fprintf(f, " zp=%d,%d->%d [%d,%d] %s", (int)k->add.a_zp,
              (int)k->add.b_zp, (int)k->add.y_zp, (int)k->add.y_min,
              (int)k->add.y_max, k->add.kind == TIDSP_REQUANT_Q31 ? "q31" : "float");
      break;
    case CS_OP_K_MUL_I8:
      print_i32s("shape", k->mul.bc.rank, k->mul.bc.shape, f);
      fprintf(f, " zp=%d,%d->%d [%d,%d] %s", (int)k->mul.a_zp,
              (int)k->mul.b_zp, (int)k->mul.y_zp, (int)k->mul.y_min,
              (int)k->mul.y_max, k->mul.kind == TIDSP_REQUANT_Q31 ? "q31" : "float");
      break;
    case CS_OP_K_BINARY_F32:
      fprintf(f, "op=%d", (int)k->binary.op);
      print_i32s("shape", k->binary.bc.rank, k->binary.bc.shape, f);
      break;
    case CS_OP_K_LUT_I8: fprintf(f, "n=%d", (int)k->lut.n); break;
    case CS_OP_K_UNARY_F32:
      fprintf(f, "n=%d op=%d alpha=%g beta=%g lo=%g hi=%g", (int)k->unary.n,
              (int)k->unary.op, (double)k->unary.alpha, (double)k->unary.beta,
              (double)k->unary.lo, (double)k->unary.hi);
      break;
    case CS_OP_K_MAXPOOL_I8:
    case CS_OP_K_MAXPOOL_F32:
    case CS_OP_K_AVGPOOL_F32:
    case CS_OP_K_AVGPOOL_I8: {
      const tidsp_pool2d_params *p =
          n->op == CS_OP_K_AVGPOOL_I8 ? &k->avgpool.pool : &k->pool;
      fprintf(f,
              "n=%d c=%d in=%dx%d out=%dx%d k=%dx%d s=%dx%d d=%dx%d "
              "pad=%d,%d,%d,%d cip=%d",
              (int)p->n, (int)p->c, (int)p->h_in, (int)p->w_in, (int)p->h_out,
              (int)p->w_out, (int)p->k_h, (int)p->k_w, (int)p->stride_h,
              (int)p->stride_w, (int)p->dil_h, (int)p->dil_w,
              (int)p->pad_top, (int)p->pad_left, (int)p->pad_bottom,
              (int)p->pad_right, (int)p->count_include_pad);
      if (n->op == CS_OP_K_AVGPOOL_I8)
        fprintf(f, " zp=%d->%d", (int)k->avgpool.x_zp, (int)k->avgpool.y_zp);
      break;
    }
    case CS_OP_K_GAP_I8:
      fprintf(f, "nc=%d hw=%d x_zp=%d y_zp=%d", (int)k->gap.nc, (int)k->gap.hw,
              (int)k->gap.x_zp, (int)k->gap.rq.out_zp);
      break;
    case CS_OP_K_GAP_F32:
      fprintf(f, "nc=%d hw=%d", (int)k->gap_f32.nc, (int)k->gap_f32.hw);
      break;
    case CS_OP_K_REDUCE_MEAN_F32:
      print_i32s("in", k->reduce.rank, k->reduce.in_shape, f);
      fprintf(f, " mask=0x%x", (unsigned)k->reduce.reduce_mask);
      break;
    case CS_OP_K_SOFTMAX_F32:
      fprintf(f, "outer=%d axis_len=%d inner=%d", (int)k->softmax.outer,
              (int)k->softmax.axis_len, (int)k->softmax.inner);
      break;
    case CS_OP_K_SOFTMAX_I8:
      fprintf(f, "outer=%d axis_len=%d inner=%d y_recip=%g y_zp=%d", (int)k->softmax_i8.outer,
              (int)k->softmax_i8.axis_len, (int)k->softmax_i8.inner, (double)k->softmax_i8.y_recip,
              (int)k->softmax_i8.y_zp);
      break;
    case CS_OP_K_LAYER_NORM_F32:
      fprintf(f, "outer=%d norm=%d epsilon=%g", (int)k->layer_norm.outer, (int)k->layer_norm.norm,
              (double)k->layer_norm.epsilon);
      break;
    case CS_OP_K_LAYER_NORM_I8:
      fprintf(f, "outer=%d norm=%d epsilon=%g x_zp=%d y_zp=%d", (int)k->layer_norm_i8.ln.outer,
              (int)k->layer_norm_i8.ln.norm, (double)k->layer_norm_i8.ln.epsilon, (int)k->layer_norm_i8.x_zp,
              (int)k->layer_norm_i8.y_zp);
      break;
    case CS_OP_K_TRANSPOSE:
      print_i32s("in", k->transpose.rank, k->transpose.in_shape, f);
      print_i32s("perm", k->transpose.rank, k->transpose.perm, f);
      fprintf(f, " elem=%d", (int)k->transpose.elem_size);
      break;
    case CS_OP_K_SLICE:
      print_i32s("in", k->slice.rank, k->slice.in_shape, f);
      print_i32s("start", k->slice.rank, k->slice.start, f);
      print_i32s("step", k->slice.rank, k->slice.step, f);
      fprintf(f, " elem=%d", (int)k->slice.elem_size);
      break;
    case CS_OP_K_CONCAT:
      fprintf(f, "n_inputs=%d outer=%d inner_bytes=%d", (int)k->concat.n_inputs,
              (int)k->concat.outer, (int)k->concat.inner_bytes);
      break;
    case CS_OP_K_CAST:
      fprintf(f, "n=%d from=%d to=%d", (int)k->cast.n, (int)k->cast.from, (int)k->cast.to);
      break;
    case CS_OP_K_EXPAND:
      print_i32s("out", k->expand.rank, k->expand.shape, f);
      fprintf(f, " elem=%d", (int)k->expand.elem_size);
      break;
    case CS_OP_K_WHERE:
      print_i32s("out", k->where.bc.rank, k->where.bc.shape, f);
      fprintf(f, " elem=%d", (int)k->where.elem_size);
      break;
    case CS_OP_K_GATHER:
      fprintf(f, "outer=%d axis_dim=%d inner_bytes=%d count=%d index_bytes=%d", (int)k->gather.outer,
              (int)k->gather.axis_dim, (int)k->gather.inner_bytes, (int)k->gather.count,
              (int)k->gather.index_bytes);
      break;
    case CS_OP_K_PAD:
      print_i32s("in", k->pad.rank, k->pad.in_shape, f);
      print_i32s("begin", k->pad.rank, k->pad.pad_begin, f);
      print_i32s("end", k->pad.rank, k->pad.pad_end, f);
      fprintf(f, " mode=%d elem=%d", (int)k->pad.mode, (int)k->pad.elem_size);
      break;
    case CS_OP_K_COPY: fprintf(f, "bytes=%zu", k->copy_bytes); break;
    default: break;
  }
  fputc('>', f);
}

static void print_small_data(const cs_value *v, FILE *f) {
  int64_t n = cs_value_numel(v);
  if (n > 8) return;
  fputs(" = [", f);
  for (int64_t i = 0; i < n; i++) {
    if (i) fputs(", ", f);
    if (v->dtype == CS_DTYPE_F32)
      fprintf(f, "%g", cs_const_get_float(v, i));
    else
      fprintf(f, "%" PRId64, cs_const_get_int(v, i));
  }
  fputc(']', f);
}

void cs_graph_print(const cs_graph *g, FILE *f) {
  int live = 0;
  for (int i = 0; i < g->n_nodes; i++) live += !g->nodes[i].dead;
  fprintf(f, "graph \"%s\" (opset %d, %d nodes, %d values)\n", g->name,
          g->opset, live, g->n_values);
  for (int i = 0; i < g->n_inputs; i++) {
    int id = g->inputs[i];
    if (id < 0 || id >= g->n_values) {
      fprintf(f, "  input  <bad id %d>\n", id);
      continue;
    }
    fprintf(f, "  input  %%%d \"%s\" : ", id, g->values[id].name);
    print_type(&g->values[id], f);
    fputc('\n', f);
  }
  for (int i = 0; i < g->n_values; i++) {
    const cs_value *v = &g->values[i];
    if (!v->data) continue;
    fprintf(f, "  const  @%s : ", v->name);
    print_type(v, f);
    print_small_data(v, f);
    fputc('\n', f);
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const cs_node *n = &g->nodes[i];
    if (n->dead) continue;
    fputs("  ", f);
    for (int j = 0; j < n->n_outputs; j++) {
      if (j) fputs(", ", f);
      print_ref(g, n->outputs[j], f);
    }
    fprintf(f, "%s%s(", n->n_outputs ? " = " : "", cs_op_name(n->op));
    for (int j = 0; j < n->n_inputs; j++) {
      if (j) fputs(", ", f);
      print_ref(g, n->inputs[j], f);
    }
    fputc(')', f);
    if (n->n_attrs) {
      fputs(" {", f);
      for (int a = 0; a < n->n_attrs; a++) {
        if (a) fputs(", ", f);
        print_attr(&n->attrs[a], f);
      }
      fputc('}', f);
    }
    if (cs_op_is_kernel(n->op)) print_kparams(n, f);
    fputs(" : ", f);
    for (int j = 0; j < n->n_outputs; j++) {
      int id = n->outputs[j];
      if (j) fputs(", ", f);
      if (id >= 0 && id < g->n_values) print_type(&g->values[id], f);
      else fputs("?", f);
    }
    fprintf(f, "  # %s\n", n->origin ? n->origin : n->name);
  }
  for (int i = 0; i < g->n_outputs; i++) {
    int id = g->outputs[i];
    fputs("  output ", f);
    print_ref(g, id, f);
    if (id >= 0 && id < g->n_values) {
      fprintf(f, " \"%s\" : ", g->values[id].name);
      print_type(&g->values[id], f);
    }
    fputc('\n', f);
  }
}
