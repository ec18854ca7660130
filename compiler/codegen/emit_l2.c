/*
 * emit_l2.c — the C of InjectMMALIBDMA (schedule/l2plan.c decides): a staged
 * MMALIB call copies its input (and weights) into the L2 scratch with
 * tidsp_dma_copy, waits, and reads the L2 copies; a sliced conv loops over
 * output-channel chunks, one weights copy and one mmalib_conv2d_{i8,i16}_sliced
 * call per chunk. `L2` is the scratch base each cg_main_partF takes from
 * tidsp_l2_scratch (cstatic/dma.h). Also the C of ScheduleC7xDMATiling's
 * OC-tiled convs (schedule/dma_tiling.c decides).
 */
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "json.h"

int cs_cg_step_staged(const cs_cg *cg, int step) {
  if (!cg->s.l2) return 0;
  cs_l2_kind k = cg->s.l2[step].kind;
  return k == CS_L2_INPUT || k == CS_L2_INPUT_WEIGHTS || k == CS_L2_SLICED || k == CS_L2_OC_TILED ||
         k == CS_L2_H_TILED || k == CS_L2_N_TILED;
}

int cs_cg_part_staged(const cs_cg *cg, int f) {
  if (!cg->s.l2) return 0;
  for (int k = cg->file_first_step[f]; k < cg->file_first_step[f + 1]; k++)
    if (cs_cg_step_staged(cg, k) || cg->s.l2[k].prefetch_next || cg->s.l2[k].out_l2) return 1;
  return 0;
}

/* Before step `step` computes: the next layer's weights it prefetches
 * (l2plan.c plan_prefetch), one group on queue 1, which the waits of this
 * step (queue 0) leave in flight; the next layer waits for it. */
void cs_cg_emit_prefetch(const cs_cg *cg, cs_sbuf *b, int step, const char *indent, cs_cg_used *used) {
  if (!cg->s.l2 || !cg->s.l2[step].prefetch_next) return;
  int k = cg->s.l2[step].prefetch_next - 1;
  const cs_l2_stage *t = &cg->s.l2[k];
  const cs_node *n = &cg->g->nodes[cg->s.order[k]];
  cs_sbuf_printf(b, "%s/* prefetch: layer %d's weights%s (%zu B), copied while this layer computes */\n", indent, k,
                 t->kind == CS_L2_OC_TILED || (t->kind == CS_L2_N_TILED && t->n_chunks > 1) ? " of tile 0" : "", t->weight_bytes);
  cs_sbuf_printf(b, "%sst = tidsp_dma_copy(1, L2 + %zu, ", indent, t->weight_off);
  cs_cg_pointer(cg, b, n->inputs[1], CS_DTYPE_UNDEF, 0, used);
  cs_sbuf_printf(b, ", %zuu, 0u);\n%sif (st != TIDSP_OK) return st;\n", t->weight_bytes, indent);
  cs_sbuf_printf(b, "%sst = tidsp_dma_commit(1);\n%sif (st != TIDSP_OK) return st;\n", indent, indent);
}

/* A prefetched step: its weights were copied on queue 1 (above). */
static void wait_prefetch(const cs_cg *cg, cs_sbuf *b, int step) {
  if (cg->s.l2[step].prefetch)
    cs_sbuf_puts(b, "    st = tidsp_dma_wait(1, 0); /* the weights prefetched on queue 1 */\n"
                    "    if (st != TIDSP_OK) return st;\n");
}


static void comment(const cs_cg *cg, cs_sbuf *b, int step) {
  char what[384];
  cs_l2_stage_describe(&cg->s.l2[step], cg->s.l2_budget, what, sizeof what);
  cs_sbuf_printf(b, "    /* %s: %s */\n",
                 cg->s.l2[step].kind == CS_L2_OC_TILED ||
                         (cg->s.l2[step].kind == CS_L2_H_TILED && !cg->s.l2[step].mmalib_h) ||
                         cg->s.l2[step].kind == CS_L2_N_TILED
                     ? "ScheduleC7xDMATiling"
                     : "InjectMMALIBDMA",
                 what);
}

static void copy(cs_sbuf *b, size_t l2_off, const char *src, size_t bytes, const char *fail) {
  cs_sbuf_printf(b, "    st = tidsp_dma_copy(0, L2 + %zu, %s, %zuu, 0u);\n    if (st != TIDSP_OK) %s;\n",
                 l2_off, src, bytes, fail);
}

/* The L2 copy of input i (0: data, 1: weights) as the kernel's pointer. */
void cs_cg_l2_pointer(const cs_cg *cg, int step, int i, cs_dtype dtype, char *buf, size_t size) {
  const cs_l2_stage *l2 = &cg->s.l2[step];
  /* wider than a byte (the exact path's int16 copies): through void *, the
   * L2 offsets being 64-byte aligned (clang's -Wcast-align) */
  snprintf(buf, size, "(const %s *)%s(L2 + %zu)", cs_dtype_c_type(dtype),
           cs_dtype_size(dtype) > 1 ? "(const void *)" : "", i == 0 ? l2->input_off : l2->weight_off);
}

const char *cs_cg_l2_output(const cs_cg *cg, int step, cs_dtype dtype, char *buf, size_t size) {
  if (!cg->s.l2 || !cg->s.l2[step].out_l2) return NULL;
  snprintf(buf, size, "(%s *)%s(L2 + %zu)", cs_dtype_c_type(dtype), cs_dtype_size(dtype) > 1 ? "(void *)" : "",
           cg->s.l2[step].out_l2_off);
  return buf;
}

void cs_cg_emit_l2_copies(const cs_cg *cg, cs_sbuf *b, int step, cs_cg_used *used) {
  const cs_l2_stage *l2 = &cg->s.l2[step];
  const cs_node *n = &cg->g->nodes[cg->s.order[step]];
  cs_sbuf src = {0};
  comment(cg, b, step);
  cs_cg_pointer(cg, &src, n->inputs[0], CS_DTYPE_UNDEF, 0, used);
  copy(b, l2->input_off, src.s, l2->input_bytes, "return st");
  if (l2->kind == CS_L2_INPUT_WEIGHTS && !l2->prefetch) {
    src.len = 0;
    cs_cg_pointer(cg, &src, n->inputs[1], CS_DTYPE_UNDEF, 0, used);
    copy(b, l2->weight_off, src.s, l2->weight_bytes, "return st");
  }
  cs_cg_emit_prefetch(cg, b, step, "    ", used);
  cs_sbuf_puts(b, "    st = tidsp_dma_wait(0, 0);\n    if (st != TIDSP_OK) return st;\n");
  wait_prefetch(cg, b, step);
  cs_cg_emit_trace_begin(cg, b, n, "    ");
  cs_sbuf_taint(b, &src);
  cs_sbuf_free(&src);
}

/* The staged call's compute in the DMA trace (cstatic/dma.h; a no-op
 * unless `cstatic run --dma-trace` or the application binds one), named
 * as the profile names the layer: begin after its wait, end after it. */
void cs_cg_emit_trace_begin(const cs_cg *cg, cs_sbuf *b, const cs_node *n, const char *indent) {
  cs_sbuf_printf(b, "%sconst int32_t tr = tidsp_dma_trace_begin(", indent);
  cs_c_string(b, cs_cg_layer_source(cg, n).name);
  cs_sbuf_puts(b, ");\n");
}

void cs_cg_emit_l2_trace_end(cs_sbuf *b) { cs_sbuf_puts(b, "    tidsp_dma_trace_end(tr);\n"); }

/* The head of a double-buffered weight loop over output channels: tile
 * i+1's copy (its own group) is in flight while tile i computes; wait(0, 1)
 * leaves only it in flight, the last tile's wait(0, 0) leaves nothing. */
static void emit_double_buffered_head(const cs_cg *cg, cs_sbuf *b, const cs_l2_stage *l2, int wv, int C,
                                      int CH, size_t per_channel) {
  cs_sbuf_printf(b, "    for (int32_t oc = 0, buf = 0; oc < %d; oc += %d, buf ^= 1) {\n"
                    "      const int32_t n_oc = %d - oc < %d ? %d - oc : %d;\n"
                    "      const int32_t next = oc + %d, n_next = %d - next < %d ? %d - next : %d;\n",
                 C, CH, C, CH, C, CH, CH, C, CH, C, CH);
  cs_sbuf_printf(b, "      if (next < %d) {\n"
                    "        st = tidsp_dma_copy(0, L2 + (buf ? %zuu : %zuu), W + %s + (size_t)next * %zuu,\n"
                    "                            (size_t)n_next * %zuu, 0u);\n"
                    "        if (st != TIDSP_OK) break;\n"
                    "        st = tidsp_dma_commit(0);\n        if (st != TIDSP_OK) break;\n      }\n"
                    "      st = tidsp_dma_wait(0, next < %d ? 1 : 0);\n      if (st != TIDSP_OK) break;\n",
                 C, l2->weight_off, l2->weight_off2, cg->macro[wv], per_channel, per_channel, C);
}

cs_status cs_cg_emit_sliced_layer(const cs_cg *cg, cs_sbuf *b, int step, cs_cg_used *used, int row) {
  const cs_l2_stage *l2 = &cg->s.l2[step];
  const cs_node *n = &cg->g->nodes[cg->s.order[step]];
  int cnt = 0;
  const int64_t *a = cs_node_attr_ints(n, "mm_args", &cnt);
  int wv = n->inputs[1];
  cs_dtype dt = n->op == CS_OP_K_MMALIB_CONV2D_I16 ? CS_DTYPE_I16 : CS_DTYPE_I8;
  if ((n->op != CS_OP_K_MMALIB_CONV2D_I8 && n->op != CS_OP_K_MMALIB_CONV2D_I16) || !l2->sliced_fn || !a ||
      cnt != 12 || cg->s.loc[wv].kind != CS_LOC_CONST)
    return cs_error(CS_ERR_INTERNAL, "codegen: node '%s' (%s) cannot be sliced", n->name ? n->name : "?",
                    cs_op_name(n->op));
  size_t per_channel = l2->weight_bytes / (size_t)l2->chunk_cout;
  cs_sbuf src = {0};
  cs_sbuf_puts(b, "  {\n");
  comment(cg, b, step);
  if (row >= 0) cs_sbuf_puts(b, "    const uint64_t t0 = TIDSP_PROFILE_NOW();\n");
  cs_cg_pointer(cg, &src, n->inputs[0], CS_DTYPE_UNDEF, 0, used);
  copy(b, l2->input_off, src.s, l2->input_bytes, "return st");
  cs_cg_use(used, wv);
  int C = (int)a[3], CH = l2->chunk_cout;
  /* after the input, before the first chunk: the chunk loop waits on
   * queue 0 only */
  cs_cg_emit_prefetch(cg, b, step, "    ", used);
  if (l2->weight_off2) {
    /* The software pipeline (emit_double_buffered_head); the prologue's
     * group is the input and chunk 0. */
    cs_sbuf_printf(b, "    st = tidsp_dma_copy(0, L2 + %zu, W + %s, %zuu, 0u);\n    if (st != TIDSP_OK) return st;\n",
                   l2->weight_off, cg->macro[wv], (size_t)(CH < C ? CH : C) * per_channel);
    cs_sbuf_puts(b, "    st = tidsp_dma_commit(0);\n    if (st != TIDSP_OK) return st;\n");
    emit_double_buffered_head(cg, b, l2, wv, C, CH, per_channel);
  } else {
    cs_sbuf_printf(b, "    for (int32_t oc = 0; oc < %d; oc += %d) {\n"
                      "      const int32_t n_oc = %d - oc < %d ? %d - oc : %d;\n",
                   C, CH, C, CH, C, CH);
    cs_sbuf_printf(b, "      st = tidsp_dma_copy(0, L2 + %zu, W + %s + (size_t)oc * %zuu, (size_t)n_oc * %zuu, 0u);\n"
                      "      if (st != TIDSP_OK) break;\n"
                      "      st = tidsp_dma_wait(0, 0);\n      if (st != TIDSP_OK) break;\n",
                   l2->weight_off, cg->macro[wv], per_channel, per_channel);
  }
  char in0[64], in1[64];
  cs_cg_l2_pointer(cg, step, 0, dt, in0, sizeof in0);
  if (l2->weight_off2)
    snprintf(in1, sizeof in1, "(const %s *)(L2 + (buf ? %zuu : %zuu))", dt == CS_DTYPE_I16 ? "int16_t" : "int8_t",
             l2->weight_off2, l2->weight_off);
  else
    cs_cg_l2_pointer(cg, step, 1, dt, in1, sizeof in1);
  /* the conv's sliced entry (its AUX row in kernels.def, as the plan
   * found it), with the conv's pointer arguments */
  const cs_kernel_info *ki = cs_kernel_info_of(n->op);
  cs_cg_emit_trace_begin(cg, b, n, "      ");
  cs_sbuf_printf(b, "      st = %s(\n          %s,\n          %s", l2->sliced_fn, in0, in1);
  for (int i = 2; i < 5; i++) {
    cs_sbuf_puts(b, ",\n          ");
    if (i < n->n_inputs && n->inputs[i] >= 0) cs_cg_pointer(cg, b, n->inputs[i], cs_kernel_ptr_dtype(ki->in[i]), 0, used);
    else cs_sbuf_puts(b, "NULL"); /* an optional input absent (the int16 conv's bias) */
  }
  cs_sbuf_puts(b, ",\n          ");
  cs_cg_pointer(cg, b, n->outputs[0], dt, 1, used);
  /* the conv's int32 arguments with C_out the chunk's n_oc, then oc_start */
  static const char *const chunk[12] = {[3] = "n_oc"};
  cs_status st = cs_kernel_extern_call_args_with(n, "          ", chunk, b);
  if (st != CS_OK) {
    cs_sbuf_free(&src);
    return st;
  }
  cs_sbuf_puts(b, ",\n          /* oc_start */ oc);\n      tidsp_dma_trace_end(tr);\n"
                 "      if (st != TIDSP_OK) break;\n    }\n");
  if (row >= 0) cs_sbuf_printf(b, "    tidsp_profile_record(&model_layer_stats[%d], t0);\n", row);
  cs_sbuf_puts(b, "    if (st != TIDSP_OK) return st;\n  }\n");
  cs_sbuf_taint(b, &src);
  cs_sbuf_free(&src);
  return b->oom ? cs_error(CS_ERR_NOMEM, "codegen: out of memory") : CS_OK;
}

/* A tiled k_conv2d_i8's step: its plan, node, conv params, kernel and
 * weights (value id). */
typedef struct tiled_conv {
  const cs_l2_stage *l2;
  const cs_node *n;
  const tidsp_conv2d_params *p;
  const cs_kernel_info *ki;
  int wv;
} tiled_conv;

/* The opening of a tiled k_conv2d_i8's block (OC or H), when the node
 * is what that tiling needs (batch 1; OC: ungrouped, weights in the blob;
 * H: tile rows, and weights in the blob when it caches them): the params,
 * the plan's comment, the profile's start. */
static cs_status open_tiled_conv(const cs_cg *cg, cs_sbuf *b, int step, cs_l2_kind kind, int row, int *needs_math,
                                 tiled_conv *tc) {
  tc->l2 = &cg->s.l2[step];
  tc->n = &cg->g->nodes[cg->s.order[step]];
  tc->p = &tc->n->k.conv;
  tc->ki = cs_kernel_info_of(tc->n->op);
  tc->wv = tc->n->n_inputs >= 4 ? tc->n->inputs[1] : -1;
  int fits = tc->wv >= 0 && tc->p->n == 1 &&
             (kind == CS_L2_OC_TILED ? cg->s.loc[tc->wv].kind == CS_LOC_CONST && tc->p->groups == 1
                                     : tc->l2->tile_rows >= 1 &&
                                           (!tc->l2->weight_bytes || cg->s.loc[tc->wv].kind == CS_LOC_CONST));
  if (tc->n->op != CS_OP_K_CONV2D_I8 || !tc->ki || !tc->ki->params || !fits)
    return cs_error(CS_ERR_INTERNAL, "codegen: node '%s' (%s) cannot be %s-tiled",
                    tc->n->name ? tc->n->name : "?", cs_op_name(tc->n->op), kind == CS_L2_OC_TILED ? "OC" : "H");
  cs_status st = cs_cg_open_call_block(cg, b, tc->n, tc->ki, needs_math);
  if (st != CS_OK) return st;
  comment(cg, b, step);
  if (row >= 0) cs_sbuf_puts(b, "    const uint64_t t0 = TIDSP_PROFILE_NOW();\n");
  return CS_OK;
}

/* A whole OC-tiled k_conv2d_i8 (ScheduleC7xDMATiling): the prologue group
 * copies the input and tile 0's weights; in the loop, tile i+1's weights
 * (their own group) are in flight into the other buffer while tile i
 * computes: wait(0, 1) leaves only them in flight, the last tile's
 * wait(0, 0) nothing (spec "Generated Code Structure"). A tile is the
 * conv on a window of output channels: c_out = n_oc, the bias, the float
 * multipliers (per channel) and the output from channel oc on. */
cs_status cs_cg_emit_oc_tiled_layer(const cs_cg *cg, cs_sbuf *b, int step, cs_cg_used *used, int row,
                                    int *needs_math) {
  tiled_conv tc;
  cs_status st = open_tiled_conv(cg, b, step, CS_L2_OC_TILED, row, needs_math, &tc);
  if (st != CS_OK) return st;
  cs_sbuf src = {0};
  size_t per_channel = tc.l2->weight_bytes / (size_t)tc.l2->chunk_cout;
  int C = tc.p->c_out, CH = tc.l2->chunk_cout;
  cs_sbuf_printf(b, "    %s pt = p;\n", tc.ki->params->type);
  if (tc.l2->in_l2) {
    cs_sbuf_printf(b, "    /* the input is in L2 at %zu: the previous layer wrote it there */\n", tc.l2->input_off);
  } else {
    cs_cg_pointer(cg, &src, tc.n->inputs[0], CS_DTYPE_UNDEF, 0, used);
    copy(b, tc.l2->input_off, src.s, tc.l2->input_bytes, "return st");
  }
  cs_cg_use(used, tc.wv);
  if (!tc.l2->prefetch)
    cs_sbuf_printf(b, "    st = tidsp_dma_copy(0, L2 + %zu, W + %s, %zuu, 0u);\n    if (st != TIDSP_OK) return st;\n",
                   tc.l2->weight_off, cg->macro[tc.wv], (size_t)CH * per_channel);
  if (!tc.l2->in_l2 || !tc.l2->prefetch) /* the prologue's group, when it copies anything */
    cs_sbuf_puts(b, "    st = tidsp_dma_commit(0);\n    if (st != TIDSP_OK) return st;\n");
  wait_prefetch(cg, b, step);
  cs_cg_emit_prefetch(cg, b, step, "    ", used);
  emit_double_buffered_head(cg, b, tc.l2, tc.wv, C, CH, per_channel);
  cs_sbuf_puts(b, "      pt.c_out = n_oc;\n");
  cs_cg_emit_trace_begin(cg, b, tc.n, "      ");
  char in0[64];
  cs_cg_l2_pointer(cg, step, 0, CS_DTYPE_I8, in0, sizeof in0);
  cs_sbuf_printf(b, "      st = %s(&pt,\n          %s,\n          (const int8_t *)(L2 + (buf ? %zuu : %zuu))",
                 cs_kernel_fn(tc.ki, cg->t), in0, tc.l2->weight_off2, tc.l2->weight_off);
  cs_sbuf_puts(b, ",\n          ");
  cs_cg_pointer(cg, b, tc.n->inputs[2], CS_DTYPE_I32, 0, used);
  if (tc.n->inputs[2] >= 0) cs_sbuf_puts(b, " + oc");
  cs_sbuf_puts(b, ",\n          ");
  /* per channel: float multipliers, one per channel (dma_tiling.c declines the others) */
  cs_cg_pointer(cg, b, tc.n->inputs[3], tc.p->rq.per_channel ? CS_DTYPE_F32 : CS_DTYPE_UNDEF, 0, used);
  if (tc.p->rq.per_channel) cs_sbuf_puts(b, " + oc");
  cs_sbuf_puts(b, ",\n          ");
  cs_cg_pointer(cg, b, tc.n->outputs[0], CS_DTYPE_I8, 1, used);
  cs_sbuf_printf(b, " + (size_t)oc * %lldu);\n      tidsp_dma_trace_end(tr);\n      if (st != TIDSP_OK) break;\n    }\n",
                 (long long)tc.p->h_out * tc.p->w_out);
  if (row >= 0) cs_sbuf_printf(b, "    tidsp_profile_record(&model_layer_stats[%d], t0);\n", row);
  cs_sbuf_puts(b, "    if (st != TIDSP_OK) return st;\n  }\n");
  cs_sbuf_taint(b, &src);
  if (b->oom) st = cs_error(CS_ERR_NOMEM, "codegen: out of memory");
  cs_sbuf_free(&src);
  return st;
}

/* The first weights, copied on queue 1 while the previous layer computes. */
static void manifest_prefetch(const cs_cg *cg, cs_json *j, int step) {
  const cs_l2_stage *l2 = &cg->s.l2[step];
  if (!l2->prefetch) return;
  int prev = step - 1;
  while (prev > 0 && cg->s.l2[prev].prefetch_next != step + 1) prev--;
  cs_json_begin_object(j, "prefetch");
  cs_json_int(j, "queue", 1);
  cs_json_int(j, "bytes", (int64_t)l2->weight_bytes);
  cs_json_string(j, "during", cs_cg_layer_source(cg, &cg->g->nodes[cg->s.order[prev]]).name);
  cs_json_end_object(j);
}

/* An H plan in the manifest: its buffers, tile rows and each tile's rows. */
static void manifest_h(const cs_cg *cg, cs_json *j, int step) {
  const cs_l2_stage *l2 = &cg->s.l2[step];
  cs_h_geom h;
  if (!cs_h_conv_geom(cg->g, &cg->g->nodes[cg->s.order[step]], &h)) {
    j->oom = 1; /* planned H-tiled, so a conv: unreachable */
    return;
  }
  const tidsp_conv2d_params *p = &h.p;
  int64_t in[2] = {(int64_t)l2->input_off, (int64_t)l2->input_off2};
  int64_t out[2] = {(int64_t)l2->out_off, (int64_t)l2->out_off2};
  int64_t w[1] = {(int64_t)l2->weight_off};
  cs_json_ints(j, "l2_input_offsets", in, 2);
  cs_json_int(j, "l2_input_bytes", (int64_t)l2->input_bytes);
  cs_json_ints(j, "l2_output_offsets", out, 2);
  cs_json_int(j, "l2_output_bytes", (int64_t)l2->out_bytes);
  cs_json_ints(j, "l2_weight_offsets", w, l2->weight_bytes ? 1 : 0);
  cs_json_int(j, "l2_weight_bytes", (int64_t)l2->weight_bytes);
  cs_json_int(j, "tiles", l2->n_chunks);
  cs_json_int(j, "tile_rows", l2->tile_rows);
  /* each tile's first output row and first input row (the generated
   * code's tile table) */
  int nt = l2->n_chunks;
  int64_t *r0 = malloc(sizeof *r0 * (size_t)(2 * nt)), *ir = r0 ? r0 + nt : NULL;
  if (!r0) {
    j->oom = 1;
    return;
  }
  for (int t = 0; t < nt; t++) {
    cs_h_tile h = cs_h_tile_of(p, l2->tile_rows, t);
    r0[t] = h.r0;
    ir[t] = h.in_row;
  }
  cs_json_ints(j, "row_offsets", r0, nt);
  cs_json_ints(j, "input_row_offsets", ir, nt);
  free(r0);
  cs_json_int(j, "pipeline_depth", 2);
  manifest_prefetch(cg, j, step);
}

/* An activation in L2 (schedule/dma_tiling_resident.c): the producer
 * names where it writes its output and for which layer, the consumer from
 * which layer its input comes (copied by no DMA). */
static void manifest_resident(const cs_cg *cg, cs_json *j, int step) {
  const cs_l2_stage *l2 = &cg->s.l2[step];
  int other = step;
  if (l2->out_l2) {
    do other++;
    while (other < cg->s.n_steps && !cg->s.l2[other].in_l2);
    cs_json_int(j, "l2_output_offset", (int64_t)l2->out_l2_off);
    if (other < cg->s.n_steps)
      cs_json_string(j, "l2_output_for", cs_cg_layer_source(cg, &cg->g->nodes[cg->s.order[other]]).name);
  }
  if (l2->in_l2) {
    do other--;
    while (other >= 0 && !cg->s.l2[other].out_l2);
    if (other >= 0)
      cs_json_string(j, "l2_input_from", cs_cg_layer_source(cg, &cg->g->nodes[cg->s.order[other]]).name);
  }
}

/* The manifest's per-layer "dma": the plan as numbers (docs/manifest.md). */
void cs_cg_manifest_dma(const cs_cg *cg, cs_json *j, int step) {
  const cs_l2_stage *l2 = &cg->s.l2[step];
  const char *strategy = l2->kind == CS_L2_DDR || l2->kind == CS_L2_UNTILED ? "none"
                         : l2->kind == CS_L2_SLICED                        ? "MMALIB-sliced"
                         : l2->kind == CS_L2_OC_TILED                      ? "OC"
                         : l2->kind == CS_L2_H_TILED                       ? "H"
                         : l2->kind == CS_L2_N_TILED                       ? "N"
                                                                           : "MMALIB-staged";
  cs_json_begin_object(j, "dma");
  cs_json_string(j, "strategy", strategy);
  if (l2->kind == CS_L2_H_TILED) {
    manifest_h(cg, j, step);
  } else if (l2->kind != CS_L2_DDR && l2->kind != CS_L2_UNTILED) {
    if (l2->kind != CS_L2_N_TILED) { /* N: the activations are not copied */
      cs_json_int(j, "l2_input_offset", (int64_t)l2->input_off);
      cs_json_int(j, "l2_input_bytes", (int64_t)l2->input_bytes);
    }
    int64_t w[2] = {(int64_t)l2->weight_off, (int64_t)l2->weight_off2};
    int nw = l2->weight_bytes == 0 ? 0 : l2->weight_off2 ? 2 : 1;
    cs_json_ints(j, "l2_weight_offsets", w, nw);
    cs_json_int(j, "l2_weight_bytes", (int64_t)l2->weight_bytes);
    int tiled = l2->kind == CS_L2_SLICED || l2->kind == CS_L2_OC_TILED || l2->kind == CS_L2_N_TILED;
    cs_json_int(j, "tiles", tiled ? l2->n_chunks : 1);
    if (tiled) cs_json_int(j, l2->kind == CS_L2_N_TILED ? "n_tile" : "oc_tile", l2->chunk_cout);
    cs_json_int(j, "pipeline_depth", l2->weight_off2 ? 2 : 1);
    manifest_prefetch(cg, j, step);
  }
  manifest_resident(cg, j, step);
  cs_json_end_object(j);
}

/* One H tile's rows: NCHW has one row range per channel, so one 2D copy
 * of `channels` rows (tidsp_dma_copy_2d: one descriptor, as the C7x DMA's
 * multi-dimensional transfer), its own group. dst/src are C expressions
 * of the first channel's range; the pitches are bytes per channel. */
static void emit_row_copies(cs_sbuf *b, const char *indent, int queue, int channels, const char *dst,
                            const char *dst_pitch, const char *src, const char *src_pitch, const char *bytes,
                            const char *fail) {
  cs_sbuf_printf(b, "%sst = tidsp_dma_copy_2d(%d, %s, %s, %s, %s, %s, %du, 0u);\n"
                    "%sif (st != TIDSP_OK) %s;\n"
                    "%sst = tidsp_dma_commit(%d);\n%sif (st != TIDSP_OK) %s;\n",
                 indent, queue, dst, dst_pitch, src, src_pitch, bytes, channels, indent, fail, indent, queue, indent,
                 fail);
}

/* An H-tiled layer's pipeline up to its call (both H emitters): the
 * weights when cached and not prefetched, tile 0's strip, the prefetch
 * wait and issue, then the loop head: tile t+1's strip into the other
 * buffer, the waits for tile t's strip and for tile t-2's rows out. wi:
 * bytes of an input row; X the input as bytes. */
static void emit_h_tile_in(const cs_cg *cg, cs_sbuf *b, int step, cs_cg_used *used, const tidsp_conv2d_params *p,
                           int wv, long long wi) {
  const cs_l2_stage *l2 = &cg->s.l2[step];
  int T = l2->n_chunks;
  if (l2->weight_bytes && !l2->prefetch) {
    cs_cg_use(used, wv);
    cs_sbuf_printf(b, "    st = tidsp_dma_copy(0, L2 + %zu, W + %s, %zuu, 0u);\n    if (st != TIDSP_OK) return st;\n",
                   l2->weight_off, cg->macro[wv], l2->weight_bytes);
  }
  char pitch[64], x_pitch[64], src[96], dst[96], bytes[64];
  snprintf(x_pitch, sizeof x_pitch, "%lldu", (long long)p->h_in * wi);
  snprintf(dst, sizeof dst, "L2 + %zu", l2->input_off);
  snprintf(pitch, sizeof pitch, "%lldu", (long long)cs_h_tile_of(p, l2->tile_rows, 0).rows_in * wi);
  snprintf(src, sizeof src, "X + (size_t)ht[0][2] * %lldu", wi);
  snprintf(bytes, sizeof bytes, "(size_t)ht[0][3] * %lldu", wi);
  emit_row_copies(b, "    ", 0, p->c_in, dst, pitch, src, x_pitch, bytes, "return st");
  wait_prefetch(cg, b, step);
  cs_cg_emit_prefetch(cg, b, step, "    ", used);
  cs_sbuf_printf(b, "    for (int32_t t = 0, buf = 0; t < %d; t++, buf ^= 1) {\n"
                    "      if (t + 1 < %d) {\n"
                    "        /* tile t+1's strip into the other buffer */\n",
                 T, T);
  snprintf(dst, sizeof dst, "L2 + (buf ? %zuu : %zuu)", l2->input_off, l2->input_off2);
  snprintf(pitch, sizeof pitch, "(size_t)ht[t + 1][3] * %lldu", wi);
  snprintf(src, sizeof src, "X + (size_t)ht[t + 1][2] * %lldu", wi);
  snprintf(bytes, sizeof bytes, "(size_t)ht[t + 1][3] * %lldu", wi);
  emit_row_copies(b, "        ", 0, p->c_in, dst, pitch, src, x_pitch, bytes, "break");
  cs_sbuf_printf(b, "      }\n"
                    "      st = tidsp_dma_wait(0, t + 1 < %d ? 1 : 0); /* tile t's strip (and the weights) */\n"
                    "      if (st != TIDSP_OK) break;\n"
                    "      st = tidsp_dma_wait(2, 1); /* tile t-2's rows are out: its output buffer is free */\n"
                    "      if (st != TIDSP_OK) break;\n",
                 T);
}

/* The end of an H tile's body and of the layer's block: tile t's rows
 * out of L2 on queue 2 (a 2D copy, wo bytes an output row) while tile t+1
 * computes; after the loop, the last rows drained (also on an error, so
 * no copy outlives the layer), the profile, the status. */
static cs_status emit_h_tile_out(cs_sbuf *b, const cs_l2_stage *l2, const tidsp_conv2d_params *p, long long wo,
                                 int row) {
  char dst[96], src[96], pitch[64], y_pitch[64], bytes[64];
  snprintf(dst, sizeof dst, "Y + (size_t)ht[t][0] * %lldu", wo);
  snprintf(y_pitch, sizeof y_pitch, "%lldu", (long long)p->h_out * wo);
  snprintf(src, sizeof src, "L2 + (buf ? %zuu : %zuu)", l2->out_off2, l2->out_off);
  snprintf(pitch, sizeof pitch, "(size_t)ht[t][1] * %lldu", wo);
  snprintf(bytes, sizeof bytes, "(size_t)ht[t][1] * %lldu", wo);
  emit_row_copies(b, "      ", 2, p->c_out, dst, y_pitch, src, pitch, bytes, "break");
  cs_sbuf_puts(b, "    }\n"
                  "    {\n      const int32_t drained = tidsp_dma_wait(2, 0); /* the last tiles' rows */\n"
                  "      if (st == TIDSP_OK) st = drained;\n    }\n");
  if (row >= 0) cs_sbuf_printf(b, "    tidsp_profile_record(&model_layer_stats[%d], t0);\n", row);
  cs_sbuf_puts(b, "    if (st != TIDSP_OK) return st;\n  }\n");
  return b->oom ? cs_error(CS_ERR_NOMEM, "codegen: out of memory") : CS_OK;
}

/* A whole H-tiled k_conv2d_i8 (ScheduleC7xDMATiling, dma_tiling_h.c): the
 * software pipeline of emit_double_buffered_head over output-row tiles.
 * Prologue: the weights (when cached) and tile 0's input strip, one group
 * on queue 0. Body: tile t+1's strip in flight into the other buffer while
 * tile t computes (wait(0, 1); the last tile's wait(0, 0)); tile t's rows
 * go out of L2 on queue 2 while tile t+1 computes, its buffer reused two
 * tiles later (wait(2, 1) before computing into it). Epilogue: wait(2, 0),
 * also on an error, so no copy outlives the layer. A tile is the conv on
 * its strip: h_in, pad_top and h_out from the tile table (cs_h_tile_of). */
cs_status cs_cg_emit_h_tiled_layer(const cs_cg *cg, cs_sbuf *b, int step, cs_cg_used *used, int row,
                                   int *needs_math) {
  tiled_conv tc;
  cs_status st = open_tiled_conv(cg, b, step, CS_L2_H_TILED, row, needs_math, &tc);
  if (st != CS_OK) return st;
  int T = tc.l2->n_chunks;
  /* the tile table: output row, output rows, input row, input rows, pad_top */
  cs_sbuf_printf(b, "    static const int32_t ht[%d][5] = {", T);
  for (int t = 0; t < T; t++) {
    cs_h_tile h = cs_h_tile_of(tc.p, tc.l2->tile_rows, t);
    cs_sbuf_printf(b, "%s{%d, %d, %d, %d, %d}", t ? (t % 6 ? ", " : ",\n        ") : "", h.r0, h.rows_out, h.in_row,
                   h.rows_in, h.pad_top);
  }
  cs_sbuf_puts(b, "};\n");
  cs_sbuf_printf(b, "    %s pt = p;\n    const int8_t *const X = ", tc.ki->params->type);
  cs_cg_pointer(cg, b, tc.n->inputs[0], CS_DTYPE_I8, 0, used);
  cs_sbuf_puts(b, ";\n    int8_t *const Y = ");
  char out_l2[64];
  if (cs_cg_l2_output(cg, step, CS_DTYPE_I8, out_l2, sizeof out_l2)) cs_sbuf_puts(b, out_l2);
  else cs_cg_pointer(cg, b, tc.n->outputs[0], CS_DTYPE_I8, 1, used);
  cs_sbuf_puts(b, ";\n");
  emit_h_tile_in(cg, b, step, used, tc.p, tc.wv, tc.p->w_in);
  cs_sbuf_puts(b, "      pt.h_in = ht[t][3];\n      pt.pad_top = ht[t][4];\n      pt.h_out = ht[t][1];\n");
  cs_cg_emit_trace_begin(cg, b, tc.n, "      ");
  char w_ptr[64];
  cs_sbuf wsrc = {0};
  if (tc.l2->weight_bytes) snprintf(w_ptr, sizeof w_ptr, "(const int8_t *)(L2 + %zu)", tc.l2->weight_off);
  else cs_cg_pointer(cg, &wsrc, tc.wv, CS_DTYPE_I8, 0, used);
  cs_sbuf_printf(b, "      st = %s(&pt,\n          (const int8_t *)(L2 + (buf ? %zuu : %zuu)),\n          %s,\n          ",
                 cs_kernel_fn(tc.ki, cg->t), tc.l2->input_off2, tc.l2->input_off, tc.l2->weight_bytes ? w_ptr : wsrc.s);
  cs_sbuf_taint(b, &wsrc);
  cs_sbuf_free(&wsrc);
  cs_cg_pointer(cg, b, tc.n->inputs[2], CS_DTYPE_I32, 0, used);
  cs_sbuf_puts(b, ",\n          ");
  cs_cg_pointer(cg, b, tc.n->inputs[3], tc.p->rq.per_channel ? CS_DTYPE_F32 : CS_DTYPE_UNDEF, 0, used);
  cs_sbuf_printf(b, ",\n          (int8_t *)(L2 + (buf ? %zuu : %zuu)));\n"
                    "      tidsp_dma_trace_end(tr);\n      if (st != TIDSP_OK) break;\n"
                    "      /* tile t's rows out, while tile t+1 computes */\n",
                 tc.l2->out_off2, tc.l2->out_off);
  return emit_h_tile_out(b, tc.l2, tc.p, tc.p->w_out, row);
}

/* A whole H-tiled MMALIB conv or depthwise conv (InjectMMALIBDMA, its
 * input over the budget; dma_tiling_h.c): the pipeline of
 * cs_cg_emit_h_tiled_layer, each tile the layer's mmalib_conv2d_{i8,i16}
 * (mmalib_depthwise_conv2d_{i8,i16}) call on its strip: H_in the strip's
 * rows, pad_top and pad_bottom the tile's (so exactly its rows come out),
 * every other argument the layer's. Pitches and sizes in bytes: an int16
 * row is 2·W bytes. */
cs_status cs_cg_emit_mmalib_h_tiled_layer(const cs_cg *cg, cs_sbuf *b, int step, cs_cg_used *used, int row) {
  const cs_l2_stage *l2 = &cg->s.l2[step];
  const cs_node *n = &cg->g->nodes[cg->s.order[step]];
  const cs_kernel_info *ki = cs_kernel_info_of(n->op);
  cs_h_geom h;
  int wv = n->n_inputs > 1 ? n->inputs[1] : -1;
  /* dma_tiling_h.c plans an MMALIB call only with its weights cached */
  if (!ki || !cs_h_conv_geom(cg->g, n, &h) || !h.mmalib || wv < 0 || l2->tile_rows < 1 || !l2->weight_bytes ||
      cg->s.loc[wv].kind != CS_LOC_CONST)
    return cs_error(CS_ERR_INTERNAL, "codegen: node '%s' (%s) cannot be H-tiled", n->name ? n->name : "?",
                    cs_op_name(n->op));
  const tidsp_conv2d_params *p = &h.p;
  cs_dtype dt = h.in_elem == 2 ? CS_DTYPE_I16 : CS_DTYPE_I8;
  const char *ct = cs_dtype_c_type(dt), *via = dt == CS_DTYPE_I16 ? "(void *)" : "";
  int T = l2->n_chunks;
  long long wi = (long long)p->w_in * (long long)h.in_elem, wo = (long long)p->w_out * (long long)h.out_elem;
  cs_sbuf_puts(b, "  {\n");
  comment(cg, b, step);
  if (row >= 0) cs_sbuf_puts(b, "    const uint64_t t0 = TIDSP_PROFILE_NOW();\n");
  /* output row, output rows, input row, input rows, pad_top, pad_bottom */
  cs_sbuf_printf(b, "    static const int32_t ht[%d][6] = {", T);
  for (int t = 0; t < T; t++) {
    cs_h_tile ht = cs_h_tile_of(p, l2->tile_rows, t);
    cs_sbuf_printf(b, "%s{%d, %d, %d, %d, %d, %d}", t ? (t % 5 ? ", " : ",\n        ") : "", ht.r0, ht.rows_out,
                   ht.in_row, ht.rows_in, ht.pad_top, ht.pad_bottom);
  }
  cs_sbuf_puts(b, "};\n    const uint8_t *const X = (const uint8_t *)");
  cs_cg_pointer(cg, b, n->inputs[0], dt, 0, used);
  cs_sbuf_puts(b, ";\n    uint8_t *const Y = (uint8_t *)");
  cs_cg_pointer(cg, b, n->outputs[0], dt, 1, used);
  cs_sbuf_puts(b, ";\n");
  emit_h_tile_in(cg, b, step, used, p, wv, wi);
  cs_cg_emit_trace_begin(cg, b, n, "      ");
  cs_sbuf_printf(b, "      st = %s(\n          (const %s *)(const void *)(L2 + (buf ? %zuu : %zuu)),\n          ",
                 cs_kernel_fn(ki, cg->t), ct, l2->input_off2, l2->input_off);
  cs_sbuf_printf(b, "(const %s *)%s(L2 + %zu)", ct, dt == CS_DTYPE_I16 ? "(const void *)" : "", l2->weight_off);
  for (int i = 2; i < 5; i++) {
    cs_sbuf_puts(b, ",\n          ");
    if (i < n->n_inputs && n->inputs[i] >= 0) cs_cg_pointer(cg, b, n->inputs[i], cs_kernel_ptr_dtype(ki->in[i]), 0, used);
    else cs_sbuf_puts(b, "NULL"); /* an optional input absent (the int16 conv's bias) */
  }
  cs_sbuf_printf(b, ",\n          (%s *)%s(L2 + (buf ? %zuu : %zuu))", ct, via, l2->out_off2, l2->out_off);
  /* the call's int32 arguments: the tile's H_in, pad_top and pad_bottom
   * from the table, the rest the layer's mm_args */
  static const char *const conv_tile[12] = {[1] = "ht[t][3]", [8] = "ht[t][4]", [9] = "ht[t][5]"};
  static const char *const dw_tile[12] = {[1] = "ht[t][3]", [7] = "ht[t][4]", [8] = "ht[t][5]"};
  cs_status st = cs_kernel_extern_call_args_with(n, "          ", h.depthwise ? dw_tile : conv_tile, b);
  if (st != CS_OK) return st;
  cs_sbuf_puts(b, ");\n      tidsp_dma_trace_end(tr);\n      if (st != TIDSP_OK) break;\n"
                  "      /* tile t's rows out, while tile t+1 computes */\n");
  return emit_h_tile_out(b, l2, p, wo, row);
}

/* A whole N-tiled c7x_dequantize_vecmatmul (ScheduleC7xDMATiling,
 * dma_tiling_n.c). One tile: the matrix copied (or prefetched on queue 1),
 * one call on the L2 copy. More: the OC-tiled conv's pipeline over weight
 * rows (emit_double_buffered_head: the prologue's group is tile 0's rows,
 * tile i+1's in flight while tile i computes), a tile being the kernel on
 * n_oc output columns from oc, one call per activation row. */
cs_status cs_cg_emit_n_tiled_layer(const cs_cg *cg, cs_sbuf *b, int step, cs_cg_used *used, int row) {
  const cs_l2_stage *l2 = &cg->s.l2[step];
  const cs_node *n = &cg->g->nodes[cg->s.order[step]];
  const cs_kernel_info *ki = cs_kernel_info_of(n->op);
  int cnt = 0;
  const int64_t *a = cs_node_attr_ints(n, "mm_args", &cnt);
  int wv = n->inputs[1];
  if (n->op != CS_OP_K_DEQUANT_VECMATMUL || !ki || !a || cnt != 3 || cg->s.loc[wv].kind != CS_LOC_CONST)
    return cs_error(CS_ERR_INTERNAL, "codegen: node '%s' (%s) cannot be N-tiled", n->name ? n->name : "?",
                    cs_op_name(n->op));
  long long M = a[0], K = a[1], N = a[2];
  cs_sbuf_puts(b, "  {\n");
  comment(cg, b, step);
  if (row >= 0) cs_sbuf_puts(b, "    const uint64_t t0 = TIDSP_PROFILE_NOW();\n");
  cs_sbuf_puts(b, "    const float *const X = ");
  cs_cg_pointer(cg, b, n->inputs[0], CS_DTYPE_F32, 0, used);
  cs_sbuf_puts(b, ";\n    const float *const S = ");
  cs_cg_pointer(cg, b, n->inputs[2], CS_DTYPE_F32, 0, used);
  cs_sbuf_puts(b, ";\n    float *const Y = ");
  cs_cg_pointer(cg, b, n->outputs[0], CS_DTYPE_F32, 1, used);
  cs_sbuf_puts(b, ";\n");
  cs_cg_use(used, wv);
  int CH = l2->chunk_cout;
  if (!l2->prefetch)
    cs_sbuf_printf(b, "    st = tidsp_dma_copy(0, L2 + %zu, W + %s, %zuu, 0u);\n    if (st != TIDSP_OK) return st;\n",
                   l2->weight_off, cg->macro[wv], l2->weight_bytes);
  cs_sbuf_puts(b, "    st = tidsp_dma_commit(0);\n    if (st != TIDSP_OK) return st;\n");
  wait_prefetch(cg, b, step);
  cs_cg_emit_prefetch(cg, b, step, "    ", used);
  if (l2->n_chunks == 1) {
    cs_sbuf_puts(b, "    st = tidsp_dma_wait(0, 0);\n    if (st != TIDSP_OK) return st;\n");
    cs_cg_emit_trace_begin(cg, b, n, "    ");
    cs_sbuf_printf(b, "    st = %s(X, (const int8_t *)(L2 + %zu), S, Y, %lld, %lld, %lld);\n"
                      "    tidsp_dma_trace_end(tr);\n",
                   ki->fn, l2->weight_off, M, K, N);
  } else {
    emit_double_buffered_head(cg, b, l2, wv, (int)N, CH, (size_t)K);
    cs_cg_emit_trace_begin(cg, b, n, "      ");
    cs_sbuf_printf(b, "      for (int32_t m = 0; m < %lld && st == TIDSP_OK; m++)\n"
                      "        st = %s(X + (size_t)m * %lldu, (const int8_t *)(L2 + (buf ? %zuu : %zuu)), S + oc,\n"
                      "            Y + (size_t)m * %lldu + oc, 1, %lld, n_oc);\n"
                      "      tidsp_dma_trace_end(tr);\n      if (st != TIDSP_OK) break;\n    }\n",
                   M, ki->fn, K, l2->weight_off2, l2->weight_off, N, K);
  }
  if (row >= 0) cs_sbuf_printf(b, "    tidsp_profile_record(&model_layer_stats[%d], t0);\n", row);
  cs_sbuf_puts(b, "    if (st != TIDSP_OK) return st;\n  }\n");
  return b->oom ? cs_error(CS_ERR_NOMEM, "codegen: out of memory") : CS_OK;
}
