#include "mmalib_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstatic/mmalib.h"
#include "mmalib_report.h"
#include "quant/scale_shift.h"
#include "pattern.h"

static int reach(cs_graph *g, int v, int depth) {
  if (v < 0) return 1;
  const cs_value *val = cs_graph_value(g, v);
  if (val->data) return 1;
  if (val->producer < 0 || depth > 64) return 0; /* a graph input (or too deep to prove) */
  const cs_node *n = cs_graph_node(g, val->producer);
  for (int i = 0; i < n->n_inputs; i++)
    if (!reach(g, n->inputs[i], depth + 1)) return 0;
  return 1;
}

int cs_mm_const_reachable(cs_graph *g, int v) { return reach(g, v, 0); }

const char *cs_mm_bias_of(cs_graph *g, int bias, int channels, int with_q, cs_fold_bias *b, cs_qparams *bq) {
  b->q = NULL;
  b->q_dq = NULL;
  b->f = NULL;
  if (bias < 0) return NULL;
  const cs_value *bv;
  int bdq = cs_match_producer(g, bias, CS_OP_DEQUANTIZE_LINEAR);
  if (bdq >= 0) {
    bv = cs_graph_value(g, cs_graph_node(g, bdq)->inputs[0]);
    if (!bv->data || bv->dtype != CS_DTYPE_I32) return "bias is not a compile-time constant";
    if (with_q) {
      if (cs_qparams_read(g, cs_graph_node(g, bdq), bq) != CS_OK) {
        cs_error_clear();
        return "bias DequantizeLinear qparams are not constants";
      }
      b->q_dq = bq;
      if (bq->count != 1 && bq->count != channels) return "bias scale count != output channels";
    }
    b->q = bv->data;
  } else {
    bv = cs_graph_value(g, bias);
    if (!bv->data || bv->dtype != CS_DTYPE_F32) return "bias is not a compile-time constant";
    b->f = bv->data;
  }
  if (cs_value_numel(bv) != channels) return "bias length != output channels";
  return NULL;
}

const char *cs_mm_fold(cs_graph *g, const cs_mm_dtype *d, int bias, const cs_qparams *xq, const cs_qparams *wq,
                       const cs_qparams *out, const int64_t *wsum, int channels, void *bias_out, uint8_t *scale,
                       uint8_t *shift, double *worst) {
  cs_fold_bias b;
  cs_qparams bq;
  const char *rule = cs_mm_bias_of(g, bias, channels, d->dt == CS_DTYPE_I16, &b, &bq);
  if (!rule && d->dt == CS_DTYPE_I16)
    rule = cs_mm_fold_i16(&b, xq->scale[0], wq, out->scale[0], channels, bias_out, scale, shift, worst);
  else if (!rule)
    rule = cs_mm_fold_i8(&b, xq->scale[0], xq->zp[0], wq, out->scale[0], out->zp[0], wsum, channels, bias_out, scale,
                         shift, worst);
  if (b.q_dq) cs_qparams_free(&bq);
  return rule;
}

const cs_mm_dtype cs_mm_int8 = {CS_DTYPE_I8, 8, CS_MMALIB_I8_TILE, 0, INT8_MIN, INT8_MAX, 0};
const cs_mm_dtype cs_mm_int16 = {CS_DTYPE_I16, 16, 32, 1, INT16_MIN, INT16_MAX, 0};
const cs_mm_dtype cs_mm_int8_exact = {CS_DTYPE_I8, 8, 32, 0, INT8_MIN, INT8_MAX, 1};

const cs_mm_dtype *cs_mm_runs_as(const cs_target *t, const cs_mm_dtype *d, int int16_kernel, int64_t images) {
  if (!d || d->dt != CS_DTYPE_I8) return d;
  /* the layers the exact path takes whatever their fold (all, strict: a
   * drift of 0 LSB still qualifies; worst's choice needs the fold) */
  int exact = cs_mm_exact_wanted(t, 0.0, 0.0);
  return exact && int16_kernel && images == 1 ? &cs_mm_int8_exact : &cs_mm_int8;
}

const cs_mm_dtype *cs_mm_conv_runs_as(cs_graph *g, const cs_target *t, const cs_mm_dtype *d, const cs_node *conv) {
  if (!d) d = cs_mm_dtype_of(g, conv->inputs[0]);
  const cs_value *x = cs_graph_value(g, conv->inputs[0]), *y = cs_graph_value(g, conv->outputs[0]);
  if (!d || x->rank != 4 || y->rank != 4) return d;
  int64_t groups = cs_node_attr_int(conv, "group", 1);
  int depthwise = groups > 1 && groups == x->shape[1] && y->shape[1] == x->shape[1];
  return cs_mm_runs_as(t, d, groups == 1 || depthwise, x->shape[0]);
}

const cs_mm_dtype *cs_mm_dtype_of(cs_graph *g, int data) {
  int dq = cs_match_producer(g, data, CS_OP_DEQUANTIZE_LINEAR);
  if (dq < 0) return NULL;
  cs_dtype dt = cs_graph_value(g, cs_graph_node(g, dq)->inputs[0])->dtype;
  return dt == CS_DTYPE_I8 ? &cs_mm_int8 : dt == CS_DTYPE_I16 ? &cs_mm_int16 : NULL;
}

const cs_mm_dtype *cs_mm_plain_conv(cs_graph *g, const cs_target *t, const cs_node *conv) {
  if (cs_node_attr_int(conv, "group", 1) != 1) return NULL;
  const cs_value *x = cs_graph_value(g, conv->inputs[0]), *y = cs_graph_value(g, conv->outputs[0]);
  if (x->rank != 4 || y->rank != 4 || x->shape[0] != 1) return NULL;
  return cs_mm_conv_runs_as(g, t, NULL, conv);
}

int cs_mm_weight_dq_zp0(cs_graph *g, int w, cs_dtype dt, int *wdq) {
  cs_qparams wq;
  if (!cs_match_weight_dq_as(g, w, 0, dt, &wq, wdq)) return 0;
  int zero = 1;
  for (int i = 0; i < wq.count; i++) zero &= wq.zps[i] == 0;
  cs_qparams_free(&wq);
  return zero;
}

int cs_mm_act(const cs_mm_dtype *d, const cs_qdq_tail *tail, char *why, size_t whylen) {
  int32_t mn, mx;
  cs_output_clamp(&tail->out, tail->lo, tail->hi, &mn, &mx);
  if (mx == d->qmax && mn == d->qmin) return 0;
  /* The int16 kernels clamp nothing but the int16 range: a ReLU is the
   * second call (cs_mm_replace_chain_i16). */
  if (d->dt == CS_DTYPE_I16 && mx == d->qmax && mn == 0 && tail->out.zp[0] == 0) return 1;
  if (d->dt == CS_DTYPE_I8)
    snprintf(why, whylen, "fused activation is not int8 saturation (o_zp=%d): after a ReLU, quantize the "
             "output with zero point -128", tail->out.zp[0]);
  else
    snprintf(why, whylen, "fused activation clamp [%d, %d] is neither none nor ReLU", mn, mx);
  return -1;
}

const char *cs_mm_zero_points(const cs_mm_dtype *d, const cs_qparams *wq, const cs_qparams *xq,
                              const cs_qparams *out, char *why, size_t whylen) {
  if (wq->zps[0] != 0)
    snprintf(why, whylen, "w_zp != 0 (w_zp=%d): quantize weights symmetrically (zero point 0)", wq->zps[0]);
  else if (d->symmetric && xq->zp[0] != 0)
    snprintf(why, whylen, "d_zp != 0 (d_zp=%d; int%d is symmetric only): quantize the input with zero point 0",
             xq->zp[0], d->bits);
  else if (d->symmetric && out->zp[0] != 0)
    snprintf(why, whylen, "o_zp != 0 (o_zp=%d; int%d is symmetric only): quantize the output with zero point 0",
             out->zp[0], d->bits);
  else return NULL;
  return why;
}

cs_status cs_mm_add_requant_consts(cs_graph *g, const char *base, int channels, const int32_t *bias,
                                   const uint8_t *scale, const uint8_t *shift, int *ids) {
  int64_t shape[1] = {channels};
  ids[0] = cs_add_const_named(g, base, "mm_bias", CS_DTYPE_I32, 1, shape, bias);
  ids[1] = ids[0] < 0 ? -1 : cs_add_const_named(g, base, "mm_scale", CS_DTYPE_U8, 1, shape, scale);
  ids[2] = ids[1] < 0 ? -1 : cs_add_const_named(g, base, "mm_shift", CS_DTYPE_U8, 1, shape, shift);
  return ids[2] < 0 ? CS_ERR_NOMEM : CS_OK; /* the message is recorded */
}

cs_status cs_mm_set_args(cs_graph *g, int node, int n, const int64_t *args) {
  if (node < 0) return CS_ERR_NOMEM; /* the node could not be added: message recorded */
  return cs_node_set_attr_ints(cs_graph_node(g, node), CS_MM_ARGS, n, args);
}

const char cs_mm_nomem[] = "out of memory";

void cs_mm_fc_shape_of(cs_graph *g, int mm_id, cs_mm_fc_shape *s) {
  const cs_node *mm = cs_graph_node(g, mm_id);
  int is_gemm = mm->op == CS_OP_GEMM;
  s->data = mm->inputs[0];
  s->rs_in = s->rs_out = s->add_id = -1;
  s->bias = is_gemm && mm->n_inputs > 2 ? mm->inputs[2] : -1;
  s->tail_from = mm->outputs[0];
  if (is_gemm) return;
  int r = cs_match_producer(g, s->data, CS_OP_RESHAPE);
  if (r >= 0 && cs_match_single_consumer(g, s->data) == mm_id) {
    s->rs_in = r;
    s->data = cs_graph_node(g, r)->inputs[0];
  }
  int c = cs_match_single_consumer(g, mm->outputs[0]);
  if (s->rs_in >= 0 && c >= 0 && cs_graph_node(g, c)->op == CS_OP_RESHAPE) {
    s->rs_out = c;
    s->tail_from = cs_graph_node(g, c)->outputs[0];
    c = cs_match_single_consumer(g, s->tail_from);
  }
  if (c >= 0 && cs_graph_node(g, c)->op == CS_OP_ADD) {
    const cs_node *a = cs_graph_node(g, c);
    int other = a->inputs[0] == s->tail_from ? a->inputs[1] : a->inputs[0];
    if (cs_match_is_const(g, other) && cs_graph_value(g, other)->dtype == CS_DTYPE_F32) {
      s->add_id = c;
      s->bias = other;
      s->tail_from = a->outputs[0];
    }
  }
}

static int same_shape(const cs_value *a, const cs_value *b) {
  if (a->rank != b->rank) return 0;
  for (int d = 0; d < a->rank; d++)
    if (a->shape[d] != b->shape[d]) return 0;
  return 1;
}

const char *cs_mm_residual_add(cs_graph *g, int add_id, const cs_qdq_tail *tail, int a_in, int b_in,
                               const cs_qparams *aq, const cs_qparams *bq, int relu, cs_op op) {
  const cs_value *av = cs_graph_value(g, a_in), *bv = cs_graph_value(g, b_in);
  int y = cs_graph_node(g, tail->q)->outputs[0];
  if (cs_mm_const_reachable(g, a_in) || cs_mm_const_reachable(g, b_in))
    return "an operand is constant (ConstReachability; not a residual add)";
  if (!same_shape(av, bv) || !same_shape(av, cs_graph_value(g, y))) return "broadcasting add";
  double ra = (double)aq->scale[0] / tail->out.scale[0], rb = (double)bq->scale[0] / tail->out.scale[0];
  c7x_residual_add_params p;
  memset(&p, 0, sizeof p);
  double worst;
  if (cs_residual_add_mults(ra, rb, &p.m_x, &p.m_skip, &p.shift, &worst) != 0)
    return "input/output scale ratio out of range";
  p.zp_x = (int8_t)aq->zp[0];
  p.zp_skip = (int8_t)bq->zp[0];
  p.zp_out = (int8_t)tail->out.zp[0];
  const cs_node *add = cs_graph_node(g, add_id);
  char base[256];
  snprintf(base, sizeof base, "%s", add->name ? add->name : "add");
  int64_t shape[1] = {(int64_t)sizeof p};
  int pv = cs_add_const_named(g, base, "mm_params", CS_DTYPE_U8, 1, shape, &p);
  if (pv < 0) return cs_mm_nomem;
  int64_t n = cs_value_numel(cs_graph_value(g, y));
  int inputs[3] = {a_in, b_in, pv};
  int chain[1] = {add_id};
  int id = cs_replace_chain(g, chain, 1, tail, op, 3, inputs);
  int64_t args[2] = {n, relu};
  if (cs_mm_set_args(g, id, 2, args) != CS_OK) return cs_mm_nomem;
  cs_mmalib_report_add(g, CS_OFFLOAD_RES_ADD, cs_graph_node(g, add_id)->name, cs_kernel_info_of(op)->fn, worst,
                       NULL);
  if (op == CS_OP_K_C7X_RESIDUAL_ADD_I16) cs_mmalib_report_bound(g, cs_graph_node(g, add_id)->name, -(double)INT16_MIN);
  return NULL;
}

int cs_mm_like_value(cs_graph *g, int v, const char *name, const int64_t *shape) {
  const cs_value *src = cs_graph_value(g, v);
  int id = cs_graph_add_value(g, name, src->dtype, src->rank, shape ? shape : src->shape);
  if (id < 0) return -1;
  src = cs_graph_value(g, v);
  cs_value *dst = cs_graph_value(g, id);
  dst->from_u8 = src->from_u8;
  if (src->quant &&
      cs_value_set_quant(dst, src->quant->axis, src->quant->count, src->quant->scale, src->quant->zero_point) != CS_OK)
    return -1;
  return id;
}

/* A new value like v named "<v>.mm_aligned"; -1 when out of memory. */
static int aligned_twin(cs_graph *g, int v) {
  const cs_value *src = cs_graph_value(g, v);
  char name[512];
  snprintf(name, sizeof name, "%s.mm_aligned", src->name ? src->name : "io");
  return cs_mm_like_value(g, v, name, NULL);
}

int cs_mm_stage_input(cs_graph *g, int x, const char *origin) {
  const cs_value *xv = cs_graph_value(g, x);
  if (xv->data || (xv->producer >= 0 && !cs_graph_is_output(g, x))) return x;
  int a = aligned_twin(g, x);
  if (a < 0) return -1;
  int k = cs_add_kernel(g, CS_OP_K_COPY, origin, 1, &x, a);
  if (k < 0) return -1;
  cs_graph_node(g, k)->k.copy_bytes = cs_value_nbytes(cs_graph_value(g, a));
  return a;
}

cs_status cs_mm_stage_output(cs_graph *g, int y) {
  if (!cs_graph_is_output(g, y)) return CS_OK;
  int p = cs_graph_value(g, y)->producer;
  int a = aligned_twin(g, y);
  if (a < 0 || p < 0) return CS_ERR_NOMEM; /* message recorded */
  cs_node *pn = cs_graph_node(g, p);
  for (int i = 0; i < pn->n_outputs; i++)
    if (pn->outputs[i] == y) pn->outputs[i] = a;
  cs_graph_value(g, a)->producer = p;
  cs_graph_value(g, y)->producer = -1;
  int k = cs_add_kernel(g, CS_OP_K_COPY, pn->origin ? pn->origin : cs_graph_value(g, y)->name, 1, &a, y);
  if (k < 0) return CS_ERR_NOMEM;
  cs_graph_node(g, k)->k.copy_bytes = cs_value_nbytes(cs_graph_value(g, y));
  return CS_OK;
}

int cs_mm_replicated(cs_graph *g, const char *base, const char *suffix, int src, int64_t c, int64_t rep, int64_t n,
                     int fill_last) {
  const cs_value *v = cs_graph_value(g, src);
  int64_t shape[CS_MAX_RANK];
  int rank = v->rank ? v->rank : 1;
  memcpy(shape, v->shape, sizeof shape);
  if (!v->rank) shape[0] = 1;
  size_t row = cs_dtype_size(v->dtype);
  for (int d = 1; d < rank; d++) row *= (size_t)shape[d];
  unsigned char *data = calloc((size_t)n * row + 1, 1);
  if (!data) {
    cs_error(CS_ERR_NOMEM, "out of memory");
    return -1;
  }
  const unsigned char *from = v->data;
  for (int64_t ch = 0; ch < n; ch++) {
    int64_t oc = ch < c * rep ? ch / rep : fill_last ? c - 1 : -1;
    if (oc >= 0) memcpy(data + (size_t)ch * row, from + (size_t)oc * row, row);
  }
  shape[0] = n;
  int id = cs_add_const_named(g, base, suffix, v->dtype, rank, shape, data);
  free(data);
  return id;
}

cs_status cs_mm_replicate_dq(cs_graph *g, int dq, const char *base, const char *prefix, const char *what, int64_t c,
                             int64_t rep, int64_t n, int data) {
  char suffix[64];
  int n_in = cs_graph_node(g, dq)->n_inputs;
  for (int j = data ? 0 : 1; j < n_in && j < 3; j++) {
    int in = cs_graph_node(g, dq)->inputs[j];
    if (in < 0) continue;
    const cs_value *v = cs_graph_value(g, in);
    if (j > 0 && (v->rank != 1 || v->shape[0] != c)) continue; /* per-tensor */
    snprintf(suffix, sizeof suffix, "%s_%s%s", prefix, what, j == 0 ? "" : j == 1 ? "_scale" : "_zp");
    int id = cs_mm_replicated(g, base, suffix, in, c, rep, n, j == 1);
    if (id < 0) return CS_ERR_NOMEM;
    cs_node_set_input(g, dq, j, id);
  }
  return CS_OK;
}

cs_status cs_mm_each_conv(cs_graph *g, const cs_target *t, cs_mm_conv_rewrite consider) {
  int n = g->n_nodes;
  for (int i = 0; i < n; i++) {
    const cs_node *node = cs_graph_node(g, i);
    if (node->dead || node->op != CS_OP_CONV || node->n_inputs < 2) continue;
    cs_status st = consider(g, t, i);
    if (st != CS_OK) return st;
  }
  return CS_OK;
}
