/*
 * lib0.c, lib1.c …: one kernel call per layer in execution order.
 *
 * lib0.c holds the entry points (cg_main, model_run, model_check_weights;
 * cg_main_dsp on c7x: flavour.c),
 * the descriptor and the first layers; each further libN.c holds the next
 * layers as cg_main_partN(), called from cg_main, so a big model compiles
 * in parallel. A file takes layers until their text reaches
 * CS_FILE_LAYER_BYTES (cg.h): files of about the same size whatever the
 * layers are, few enough that writing them stays cheap for a model of
 * 100 000 layers. Every file defines the W_/A_ offset macros it uses and
 * nothing else.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"

static const char *ctype(cs_dtype t) {
  return t == CS_DTYPE_UNDEF ? "void" : cs_dtype_c_type(t);
}

static const char *node_name(const cs_node *n) { return n->name ? n->name : "?"; }

void cs_cg_pointer(const cs_cg *cg, cs_sbuf *b, int v, cs_dtype want, int writable,
                   cs_cg_used *used) {
  if (v < 0) {
    cs_sbuf_puts(b, "NULL");
    return;
  }
  const cs_loc *l = &cg->s.loc[v];
  const char *q = writable ? "" : "const ";
  /* W and A are byte pointers; every offset is aligned for its tensor (the
   * schedule aligns them, the entry points check W and A), which a cast
   * through void * says to -Wcast-align for the wider element types. */
  const char *via = want == CS_DTYPE_UNDEF || cs_dtype_size(want) == 1 ? ""
                    : writable                                          ? "(void *)"
                                                                        : "(const void *)";
  switch (l->kind) {
    case CS_LOC_CONST:
    case CS_LOC_ARENA:
      /* "(%s%s *)%s(W + %s)" piece by piece: every argument of every call */
      cs_sbuf_cat(b, "(", q, ctype(want), " *)", via, l->kind == CS_LOC_CONST ? "(W + " : "(A + ", cg->macro[v], ")");
      cs_cg_use(used, v);
      break;
    case CS_LOC_INPUT:
      cs_sbuf_printf(b, "(%s%s *)inputs[%d]", q, ctype(want), l->index);
      break;
    case CS_LOC_OUTPUT:
      cs_sbuf_printf(b, "(%s%s *)outputs[%d]", q, ctype(want), l->index);
      break;
    default:
      cs_sbuf_puts(b, "NULL");
      break;
  }
}

/* The node's tensors against the kernel's signature (every argument,
 * constants included), and a copy within its output. */
static cs_status check_args(const cs_cg *cg, const cs_node *n, const cs_kernel_info *ki) {
  const cs_graph *g = cg->g;
  cs_status st = cs_kernel_check(g, (int)(n - g->nodes), 1, "codegen: ");
  if (st != CS_OK) return st;
  int y = n->outputs[0];
  if (ki->call == CS_KCALL_BYTES && n->k.copy_bytes > cs_value_nbytes(cs_graph_value(g, y)))
    return cs_error(CS_ERR_INTERNAL, "codegen: copy node '%s' copies %zu bytes into '%s' of %zu",
                    node_name(n), n->k.copy_bytes, cs_graph_value(g, y)->name ? cs_graph_value(g, y)->name : "?",
                    cs_value_nbytes(cs_graph_value(g, y)));
  return CS_OK;
}

/* The layer comment: kind, ONNX nodes, output tensor. */
static void layer_comment(const cs_cg *cg, cs_sbuf *b, const char *label, const cs_node *n) {
  const cs_value *y = cs_graph_value(cg->g, n->outputs[0]);
  cs_sbuf_cat(b, "  /* ", label, ": ", cs_op_name(n->op), " from ONNX ");
  cs_c_comment_text(b, n->origin && *n->origin ? n->origin : node_name(n));
  const char *module = cs_cg_layer_source(cg, n).module;
  if (*module) {
    cs_sbuf_puts(b, "\n   * PyTorch module: ");
    cs_c_comment_text(b, module);
  }
  cs_sbuf_puts(b, "\n   * out: ");
  cs_c_comment_text(b, y->name);
  cs_sbuf_puts(b, " ");
  cs_c_shape_text(b, y);
  cs_sbuf_puts(b, " */\n");
}

/* ---- -profile-layers=1 ------------------------------------------------
 * The rows of the profile table, in execution order: model_run's input
 * conversions, cg_main's kernel calls (an elided copy has no row), the
 * output conversions. A row index of -1: not profiled. */

static int profile_input_rows(const cs_cg *cg) {
  int r = 0;
  for (int i = 0; i < cg->s.n_inputs; i++) r += cg->s.inputs[i].node >= 0;
  return r;
}

static int profile_call_rows(const cs_cg *cg, int end_step) {
  int r = 0;
  for (int k = 0; k < end_step; k++) r += !cg->s.node_elided[cg->s.order[k]];
  return r;
}

int cs_cg_profile_rows(const cs_cg *cg) {
  int r = profile_input_rows(cg) + profile_call_rows(cg, cg->s.n_steps);
  for (int j = 0; j < cg->s.n_outputs; j++) r += cg->s.outputs[j].node >= 0;
  return r;
}

static int profile_row_of_input(const cs_cg *cg, int i) {
  if (!cg->t->profile_layers) return -1;
  int r = 0;
  for (int k = 0; k < i; k++) r += cg->s.inputs[k].node >= 0;
  return r;
}

static int profile_row_of_output(const cs_cg *cg, int j) {
  if (!cg->t->profile_layers) return -1;
  int r = profile_input_rows(cg) + profile_call_rows(cg, cg->s.n_steps);
  for (int k = 0; k < j; k++) r += cg->s.outputs[k].node >= 0;
  return r;
}

/* The opening of a layer's block: "{", then the kernel's params as
 * `static const T p = {...};` (with what they need before them). Written
 * only when the params could be made. */
cs_status cs_cg_open_call_block(const cs_cg *cg, cs_sbuf *b, const cs_node *n, const cs_kernel_info *ki,
                                int *needs_math) {
  cs_sbuf pre = {0}, params = {0};
  cs_status st = CS_OK;
  if (ki->params) {
    size_t col0 = strlen("    static const  p = ") + strlen(ki->params->type);
    st = cs_kernel_params(cg->g, n, "        ", col0, "axis_len", &pre, &params, needs_math);
  }
  if (st == CS_OK) {
    cs_sbuf_puts(b, "  {\n");
    /* (puts, not printf, for the texts built above: printf's %s walks them
     * again, once per layer of a large model) */
    if (pre.len) cs_sbuf_cat(b, "    ", pre.s);
    if (ki->params) cs_sbuf_cat(b, "    static const ", ki->params->type, " p = ", params.s ? params.s : "", ";\n");
    cs_sbuf_taint(b, &pre);
    cs_sbuf_taint(b, &params);
  }
  cs_sbuf_free(&pre);
  cs_sbuf_free(&params);
  return st;
}

/* One kernel call in a block. in_expr/out_expr override the pointer of an
 * argument (model_run's boundary conversions, L2 copies); NULL entries use
 * storage. row >= 0: time the call into that row of model_layer_stats.
 * l2_step >= 0: the call of that step is staged through L2 (its DMA copies
 * precede it in the block and count in its time). traced: the call is in
 * the DMA trace (staged calls always are; a layer that prefetches the next
 * one's weights too, so the trace shows what the prefetch overlaps). */
static cs_status emit_call(cs_cg *cg, cs_sbuf *b, const cs_node *n, const char *const *in_expr,
                           const char *out_expr, cs_cg_used *used, int *needs_math, int row,
                           int l2_step, int traced) {
  const cs_kernel_info *ki = cs_kernel_info_of(n->op);
  if (!ki)
    return cs_error(CS_ERR_INTERNAL, "codegen: node '%s' op %s is not a kernel op",
                    node_name(n), cs_op_name(n->op));
  cs_status st = check_args(cg, n, ki);
  if (st != CS_OK) return st;
  cs_sbuf call = {0};
  st = cs_cg_open_call_block(cg, b, n, ki, needs_math);
  if (st != CS_OK) goto done;

  const char *fn = cs_kernel_fn(ki, cg->t);
  /* The call's form (cstatic/kernels.def): an extern is fn(pointers…, out,
   * int32s…), a copy takes its byte count, the others their params. */
  int is_extern = ki->call == CS_KCALL_EXTERN;
  if (is_extern) cs_sbuf_printf(&call, "%s(", fn);
  else if (ki->call == CS_KCALL_BYTES) cs_sbuf_printf(&call, "%s(%zuu", fn, n->k.copy_bytes);
  else {
    cs_sbuf_puts(&call, fn);
    cs_sbuf_puts(&call, "(&p");
  }
  if (ki->call == CS_KCALL_ARRAY) {
    cs_sbuf_puts(&call, ",\n        (const void *const[]){");
    for (int i = 0; i < n->n_inputs; i++) {
      cs_sbuf_puts(&call, i ? ",\n                               " : "");
      cs_cg_pointer(cg, &call, n->inputs[i], CS_DTYPE_UNDEF, 0, used);
    }
    cs_sbuf_puts(&call, "}");
  } else {
    for (int i = 0; i < n->n_inputs; i++) {
      cs_sbuf_puts(&call, is_extern && i == 0 ? "\n        " : ",\n        ");
      if (in_expr && in_expr[i]) cs_sbuf_puts(&call, in_expr[i]);
      else cs_cg_pointer(cg, &call, n->inputs[i], cs_kernel_ptr_dtype(ki->in[i]), 0, used);
    }
  }
  cs_sbuf_puts(&call, ",\n        ");
  if (out_expr) cs_sbuf_puts(&call, out_expr);
  else cs_cg_pointer(cg, &call, n->outputs[0], cs_kernel_ptr_dtype(ki->out), 1, used);
  if (is_extern && (st = cs_kernel_extern_call_args(n, "        ", &call)) != CS_OK) goto done;
  cs_sbuf_puts(&call, ")");
  if (row >= 0) cs_sbuf_puts(b, "    const uint64_t t0 = TIDSP_PROFILE_NOW();\n");
  if (l2_step >= 0) cs_cg_emit_l2_copies(cg, b, l2_step, used);
  else if (traced) cs_cg_emit_trace_begin(cg, b, n, "    ");
  cs_sbuf_cat(b, "    st = ", call.s ? call.s : "", ";\n");
  if (l2_step >= 0 || traced) cs_cg_emit_l2_trace_end(b);
  if (row >= 0) cs_sbuf_printf(b, "    tidsp_profile_record(&model_layer_stats[%d], t0);\n", row);
  cs_sbuf_puts(b, "    if (st != TIDSP_OK) return st;\n  }\n");
  cs_sbuf_taint(b, &call);
done:
  cs_sbuf_free(&call);
  return st;
}

/* *next_row: the profile row of the next kernel call (the layers are
 * written in execution order, once each: cs_cg_write_sources). */
static cs_status emit_layer(cs_cg *cg, cs_sbuf *b, int step, cs_cg_used *used, int *needs_math, int *next_row) {
  const cs_node *n = &cg->g->nodes[cg->s.order[step]];
  char label[32] = "layer ";
  cs_c_int32(step, label + 6); /* (not snprintf: one per layer) */
  layer_comment(cg, b, label, n);
  if (cg->s.node_elided[cg->s.order[step]]) {
    /* A comment only: the offsets are defined where a call uses them (an
     * unused macro is a -Wunused-macros warning). */
    int x = n->inputs[0], y = n->outputs[0];
    if (n->op == CS_OP_K_CONCAT) {
      cs_sbuf_printf(b, "  /* elided: the inputs were written into their ranges of %s */\n", cg->macro[y]);
      return CS_OK;
    }
    cs_sbuf_printf(b, "  /* elided: %s is %s's memory viewed as ", cg->macro[y], cg->macro[x]);
    cs_c_shape_text(b, cs_graph_value(cg->g, y));
    cs_sbuf_puts(b, " */\n");
    return CS_OK;
  }
  int row = cg->t->profile_layers ? (*next_row)++ : -1;
  const cs_kernel_info *ki = cs_kernel_info_of(n->op);
  if (!cs_cg_step_staged(cg, step)) {
    cs_cg_emit_prefetch(cg, b, step, "  ", used);
    char out[64];
    const char *out_expr = ki ? cs_cg_l2_output(cg, step, cs_kernel_ptr_dtype(ki->out), out, sizeof out) : NULL;
    return emit_call(cg, b, n, NULL, out_expr, used, needs_math, row, -1, cg->s.l2 && cg->s.l2[step].prefetch_next);
  }
  cs_status st = ki ? check_args(cg, n, ki) : cs_error(CS_ERR_INTERNAL, "codegen: node '%s' is not a kernel op",
                                                       node_name(n));
  if (st != CS_OK) return st;
  if (cg->s.l2[step].kind == CS_L2_SLICED) return cs_cg_emit_sliced_layer(cg, b, step, used, row);
  if (cg->s.l2[step].kind == CS_L2_OC_TILED)
    return cs_cg_emit_oc_tiled_layer(cg, b, step, used, row, needs_math);
  if (cg->s.l2[step].kind == CS_L2_H_TILED)
    return cg->s.l2[step].mmalib_h ? cs_cg_emit_mmalib_h_tiled_layer(cg, b, step, used, row)
                                   : cs_cg_emit_h_tiled_layer(cg, b, step, used, row, needs_math);
  if (cg->s.l2[step].kind == CS_L2_N_TILED) return cs_cg_emit_n_tiled_layer(cg, b, step, used, row);
  char in0[64], in1[64];
  const char *in_expr[8] = {0}; /* MMALIB calls take 5 tensors */
  cs_cg_l2_pointer(cg, step, 0, cs_kernel_ptr_dtype(ki->in[0]), in0, sizeof in0);
  in_expr[0] = in0;
  if (cg->s.l2[step].kind == CS_L2_INPUT_WEIGHTS) {
    cs_cg_l2_pointer(cg, step, 1, cs_kernel_ptr_dtype(ki->in[1]), in1, sizeof in1);
    in_expr[1] = in1;
  }
  return emit_call(cg, b, n, in_expr, NULL, used, needs_math, row, step, 1);
}

static void banner(const cs_cg *cg, cs_sbuf *b, const char *file, const char *what) {
  cs_sbuf_printf(b, "/*\n * %s — %s\n *\n * Generated by cstatic from ", file, what);
  cs_c_comment_text(b, cg->opt && cg->opt->model_path ? cg->opt->model_path : cg->model_name);
  cs_sbuf_puts(b, "; do not edit.\n * target: ");
  cs_c_comment_text(b, cg->target_str);
  cs_sbuf_puts(b, "\n */\n");
}

/* Used values of one storage kind, sorted by offset, then id (the blob's
 * or the arena's layout, top to bottom). by: scratch of used->n rows (the
 * offsets travel with the ids, so the comparison needs no context). */

static int used_of_kind(const cs_cg *cg, const cs_cg_used *used, cs_loc_kind kind, cs_offset_order *by, int *ids) {
  int n = 0;
  for (int k = 0; k < used->n; k++) {
    int v = used->ids[k];
    if (cg->macro[v] && cg->s.loc[v].kind == kind) by[n++] = (cs_offset_order){cg->s.loc[v].offset, v};
  }
  qsort(by, (size_t)n, sizeof *by, cs_offset_order_cmp);
  for (int i = 0; i < n; i++) ids[i] = by[i].idx;
  return n;
}

/* The "#define NAME 0x<offset>" and comment opening of an offset macro (by hand:
 * one per tensor of every file). */
static void define_offset(cs_sbuf *b, const char *macro, size_t offset) {
  cs_sbuf_cat(b, "#define ", macro, " ");
  cs_sbuf_hex(b, offset);
  cs_sbuf_puts(b, " /* ");
}

static void emit_macros(const cs_cg *cg, cs_sbuf *b, const cs_cg_used *used) {
  const cs_graph *g = cg->g;
  int *ids = malloc(((size_t)used->n + 1) * sizeof *ids);
  cs_offset_order *by = malloc(((size_t)used->n + 1) * sizeof *by);
  if (!ids || !by) {
    free(ids);
    free(by);
    b->oom = 1;
    return;
  }
  int n = used_of_kind(cg, used, CS_LOC_CONST, by, ids);
  if (n) cs_sbuf_puts(b, "\n/* Weights: byte offsets into the weights blob (docs/weights-format.md). */\n");
  for (int i = 0; i < n; i++) {
    int v = ids[i];
    define_offset(b, cg->macro[v], cg->s.loc[v].offset);
    cs_c_shape_text(b, cs_graph_value(g, v));
    cs_sbuf_puts(b, " ");
    cs_c_comment_text(b, cs_graph_value(g, v)->name);
    cs_sbuf_puts(b, " */\n");
  }
  n = used_of_kind(cg, used, CS_LOC_ARENA, by, ids);
  if (n)
    cs_sbuf_puts(b, "\n/* Arena: byte offsets (DDR pool); tensors whose lifetimes do not overlap\n"
                    " * share bytes. Live range in layers. */\n");
  for (int i = 0; i < n; i++) {
    int v = ids[i];
    int last = cg->s.last_use[v] < cg->s.def_step[v] ? cg->s.def_step[v] : cg->s.last_use[v];
    define_offset(b, cg->macro[v], cg->s.loc[v].offset);
    cs_c_shape_text(b, cs_graph_value(g, v));
    cs_sbuf_puts(b, " layers ");
    cs_sbuf_int(b, cg->s.def_step[v]);
    cs_sbuf_puts(b, "-");
    cs_sbuf_int(b, last);
    cs_sbuf_puts(b, " ");
    cs_c_comment_text(b, cs_graph_value(g, v)->name);
    cs_sbuf_puts(b, " */\n");
  }
  free(ids);
  free(by);
}

/* "layers 3-7", "layer 3", "no layers" */
static void layer_range(char *buf, size_t n, int first, int end) {
  if (end <= first) snprintf(buf, n, "no layers");
  else if (end == first + 1) snprintf(buf, n, "layer %d", first);
  else snprintf(buf, n, "layers %d-%d", first, end - 1);
}

static const char part_params[] =
    "(const uint8_t *W, uint8_t *A, const void *const inputs[], void *const outputs[])";

/* The layers of one file, from step `first` on, into b until their text
 * reaches CS_FILE_LAYER_BYTES (at least one layer); *end: the step after
 * the last one. */
static cs_status emit_layers(cs_cg *cg, cs_sbuf *b, int first, int *end, cs_cg_used *used,
                             int *needs_math, int *next_row) {
  int k = first;
  while (k < cg->s.n_steps && (k == first || b->len < CS_FILE_LAYER_BYTES)) {
    cs_status st = emit_layer(cg, b, k++, used, needs_math, next_row);
    if (st != CS_OK) return st;
  }
  *end = k;
  return CS_OK;
}

/* cg_main_partF: the layers of file F (their text in `layers`). */
static void emit_part(const cs_cg *cg, cs_sbuf *b, int f, cs_sbuf *layers) {
  char range[64];
  layer_range(range, sizeof range, cg->file_first_step[f], cg->file_first_step[f + 1]);
  range[0] = (char)(range[0] - 'a' + 'A');
  cs_sbuf_printf(b, "\n/* %s. */\n%sint32_t cg_main_part%d%s {\n", range, f == 0 ? "static " : "", f,
                 part_params);
  cs_sbuf_puts(b, "  int32_t st = TIDSP_OK;\n  (void)W;\n  (void)A;\n  (void)inputs;\n  (void)outputs;\n");
  if (cs_cg_part_staged(cg, f))
    cs_sbuf_puts(b, "  uint8_t *const L2 = (uint8_t *)tidsp_l2_scratch(MODEL_L2_SIZE);\n"
                    "  if (L2 == NULL) return TIDSP_ERR_L2;\n");
  cs_sbuf_puts(b, "\n");
  cs_sbuf_puts(b, layers->s ? layers->s : "");
  cs_sbuf_taint(b, layers);
  cs_sbuf_puts(b, "  return st;\n}\n");
}


static void includes(const cs_cg *cg, cs_sbuf *b, int needs_math) {
  cs_sbuf_puts(b, "\n");
  if (needs_math) cs_sbuf_puts(b, "#include <math.h>\n");
  cs_sbuf_puts(b, "#include <stddef.h>\n#include <stdint.h>\n");
  cs_cg_flavour_includes(cg, b);
  cs_sbuf_puts(b, "\n#include \"lib0.h\"\n");
}

/* ---- lib0.c: entry points ------------------------------------------- */

static void tensor_info(const cs_cg *cg, cs_sbuf *b, int v, int quant_from_node, int raw) {
  const cs_graph *g = cg->g;
  const cs_value *val = cs_graph_value(g, v);
  char num[40], num2[24];
  cs_sbuf_puts(b, "    {.name = ");
  cs_c_string(b, val->name);
  cs_sbuf_printf(b, ", .dtype = %s, .rank = %d, .shape = {", cs_cg_tidsp_dtype_name(val->dtype),
                 val->rank);
  for (int i = 0; i < val->rank; i++) cs_sbuf_printf(b, "%s%" PRId64, i ? ", " : "", val->shape[i]);
  cs_sbuf_printf(b, "},\n     .numel = %" PRId64 ", .nbytes = %zu", cs_value_numel(val),
                 cs_value_nbytes(val));
  /* Quant params: the boundary conversion's (both entries describe the
   * same real values), else the tensor's own per-tensor annotation. */
  float scale = 1.0f;
  int32_t zp = 0;
  int quantized = 0;
  if (quant_from_node >= 0) {
    const cs_node *n = &g->nodes[quant_from_node];
    scale = (float)cs_const_get_float(cs_graph_value(g, n->inputs[0]), 0);
    zp = (int32_t)cs_const_get_int(cs_graph_value(g, n->inputs[1]), 0);
    quantized = 1;
  } else if (raw && val->quant && val->quant->count == 1) {
    scale = val->quant->scale[0];
    zp = val->quant->zero_point[0];
    quantized = 1;
  }
  cs_sbuf_printf(b, ", .quantized = %d, .scale = %s, .zero_point = %s}", quantized,
                 cs_c_float(scale, num), cs_c_int32(zp, num2));
}

static void tensor_infos(const cs_cg *cg, cs_sbuf *b, const char *name, int n,
                         const cs_boundary_io *io, int raw) {
  if (n == 0) return;
  cs_sbuf_printf(b, "static const tidsp_tensor_info %s[%d] = {\n", name, n);
  for (int i = 0; i < n; i++) {
    tensor_info(cg, b, raw ? io[i].raw_value : io[i].value, io[i].node, raw);
    cs_sbuf_puts(b, i + 1 < n ? ",\n" : "\n");
  }
  cs_sbuf_puts(b, "};\n");
}

/* Unless -skip-runtime-checks=1 (the DSP default): null and misaligned
 * blobs and arenas are caller errors the kernels would not detect. */
static void argument_checks(const cs_cg *cg, cs_sbuf *b) {
  if (cg->t->skip_runtime_checks) return;
  cs_sbuf_printf(b, "  if (W == NULL%s || inputs == NULL || outputs == NULL) return TIDSP_ERR_NULL;\n",
                 cg->s.arena_size ? " || A == NULL" : "");
  cs_sbuf_puts(b, "  if (((uintptr_t)W & (MODEL_WEIGHTS_ALIGN - 1u)) != 0 ||\n"
                  "      ((uintptr_t)A & (MODEL_ARENA_ALIGN - 1u)) != 0)\n"
                  "    return TIDSP_ERR_ALIGN;\n");
}

static cs_status emit_cg_main(cs_cg *cg, cs_sbuf *b, cs_cg_used *used) {
  const cs_schedule *s = &cg->s;
  int embedded = cg->opt && cg->opt->weights_as_c;
  cs_sbuf_printf(b, "\n/* The raw entry: integer tensors in and out (lib0.h lists them). */\n"
                    "%sint32_t cg_main(const void *weights, void *arena, const void *const inputs[],\n"
                    "                void *const outputs[]) {\n",
                 cs_cg_export(cg));
  cs_sbuf_printf(b, "  const uint8_t *W = (const uint8_t *)%s;\n",
                 embedded ? "(weights != NULL ? weights : model_weights)" : "weights");
  cs_sbuf_puts(b, "  uint8_t *A = (uint8_t *)arena;\n  int32_t st;\n");
  argument_checks(cg, b);
  /* Before the first layer: a missing L2 scratch fails the call, not a
   * layer half-way through. */
  if (s->l2_size)
    cs_sbuf_puts(b, "  if (tidsp_l2_scratch(MODEL_L2_SIZE) == NULL) return TIDSP_ERR_L2;\n");
  for (int f = 0; f < cg->n_files; f++)
    cs_sbuf_printf(b, "  st = cg_main_part%d(W, A, inputs, outputs);\n  if (st != TIDSP_OK) return st;\n", f);
  for (int j = 0; j < s->n_outputs; j++) {
    if (!s->output_copy[j]) continue;
    int r = s->outputs[j].raw_value;
    cs_sbuf_printf(b, "  /* output %d is also ", j);
    cs_c_comment_text(b, cs_graph_value(cg->g, r)->name);
    cs_sbuf_puts(b, ", which is not written in place */\n");
    cs_sbuf_printf(b, "  st = %s(%zuu, ", cs_kernel_info_of(CS_OP_K_COPY)->fn,
                   cs_value_nbytes(cs_graph_value(cg->g, r)));
    cs_cg_pointer(cg, b, r, CS_DTYPE_UNDEF, 0, used);
    cs_sbuf_printf(b, ", outputs[%d]);\n  if (st != TIDSP_OK) return st;\n", j);
  }
  cs_sbuf_puts(b, "  return TIDSP_OK;\n}\n");
  return CS_OK;
}

/* One boundary conversion of model_run, by node `node`: input i quantized
 * from inputs[i] into the arena (A_RAW_INPUTi), or output i dequantized
 * from the arena (A_RAW_OUTPUTi) into outputs[i]; its layer comment
 * ("input 0") and the call. */
static cs_status emit_boundary_call(cs_cg *cg, cs_sbuf *b, int is_output, int i, int node, cs_cg_used *used,
                                    int *needs_math) {
  const cs_node *n = &cg->g->nodes[node];
  char label[48], in_x[64], out_y[64];
  snprintf(label, sizeof label, "%s %d", is_output ? "output" : "input", i);
  if (is_output) {
    snprintf(in_x, sizeof in_x, "(const void *)(A + A_RAW_OUTPUT%d)", i);
    snprintf(out_y, sizeof out_y, "(float *)outputs[%d]", i);
  } else {
    snprintf(in_x, sizeof in_x, "(const float *)inputs[%d]", i);
    snprintf(out_y, sizeof out_y, "(void *)(A + A_RAW_INPUT%d)", i);
  }
  int profile_row = is_output ? profile_row_of_output(cg, i) : profile_row_of_input(cg, i);
  layer_comment(cg, b, label, n);
  const char *in_expr[3] = {NULL, NULL, in_x};
  return emit_call(cg, b, n, in_expr, out_y, used, needs_math, profile_row, -1, 0);
}

static cs_status emit_model_run(cs_cg *cg, cs_sbuf *b, cs_cg_used *used, int *needs_math) {
  const cs_schedule *s = &cg->s;
  int embedded = cg->opt && cg->opt->weights_as_c;
  int ni = s->n_inputs > 0 ? s->n_inputs : 1, no = s->n_outputs > 0 ? s->n_outputs : 1;
  cs_sbuf_printf(b, "\n/* The model's own dtypes: quantize the inputs, run cg_main, dequantize the\n"
                    " * outputs. The raw tensors are staged in the arena. */\n"
                    "%sint32_t model_run(const void *weights, void *arena, const void *const inputs[],\n"
                    "                  void *const outputs[]) {\n",
                 cs_cg_export(cg));
  cs_sbuf_printf(b, "  const uint8_t *W = (const uint8_t *)%s;\n",
                 embedded ? "(weights != NULL ? weights : model_weights)" : "weights");
  cs_sbuf_printf(b, "  uint8_t *A = (uint8_t *)arena;\n  const void *raw_in[%d];\n  void *raw_out[%d];\n"
                    "  int32_t st;\n", ni, no);
  argument_checks(cg, b);
  if (s->n_inputs == 0) cs_sbuf_puts(b, "  raw_in[0] = NULL;\n");
  if (s->n_outputs == 0) cs_sbuf_puts(b, "  raw_out[0] = NULL;\n");
  for (int i = 0; i < s->n_inputs; i++) {
    const cs_boundary_io *io = &s->inputs[i];
    if (io->node < 0) {
      cs_sbuf_printf(b, "  raw_in[%d] = inputs[%d];\n", i, i);
      continue;
    }
    cs_status st = emit_boundary_call(cg, b, 0, i, io->node, used, needs_math);
    if (st != CS_OK) return st;
    cs_sbuf_printf(b, "  raw_in[%d] = A + A_RAW_INPUT%d;\n", i, i);
  }
  for (int j = 0; j < s->n_outputs; j++) {
    if (s->outputs[j].node < 0) cs_sbuf_printf(b, "  raw_out[%d] = outputs[%d];\n", j, j);
    else cs_sbuf_printf(b, "  raw_out[%d] = A + A_RAW_OUTPUT%d;\n", j, j);
  }
  cs_sbuf_puts(b, "  st = cg_main(W, A, raw_in, raw_out);\n  if (st != TIDSP_OK) return st;\n");
  for (int j = 0; j < s->n_outputs; j++) {
    const cs_boundary_io *io = &s->outputs[j];
    if (io->node < 0) continue;
    cs_status st = emit_boundary_call(cg, b, 1, j, io->node, used, needs_math);
    if (st != CS_OK) return st;
  }
  cs_sbuf_puts(b, "  return TIDSP_OK;\n}\n");
  return CS_OK;
}

static void emit_staging_macros(const cs_cg *cg, cs_sbuf *b) {
  const cs_schedule *s = &cg->s;
  int any = 0;
  for (int i = 0; i < s->n_inputs; i++) any |= s->inputs[i].node >= 0;
  for (int j = 0; j < s->n_outputs; j++) any |= s->outputs[j].node >= 0;
  if (!any) return;
  cs_sbuf_puts(b, "\n/* Arena: model_run's staging of cg_main's raw inputs and outputs. */\n");
  for (int i = 0; i < s->n_inputs; i++) {
    if (s->inputs[i].node < 0) continue;
    cs_sbuf_printf(b, "#define A_RAW_INPUT%d 0x%zx /* ", i, s->input_staging[i]);
    cs_c_shape_text(b, cs_graph_value(cg->g, s->inputs[i].raw_value));
    cs_sbuf_puts(b, " */\n");
  }
  for (int j = 0; j < s->n_outputs; j++) {
    if (s->outputs[j].node < 0) continue;
    cs_sbuf_printf(b, "#define A_RAW_OUTPUT%d 0x%zx /* ", j, s->output_staging[j]);
    cs_c_shape_text(b, cs_graph_value(cg->g, s->outputs[j].raw_value));
    cs_sbuf_puts(b, " */\n");
  }
}

/* One row's constants: the layer's ONNX node and PyTorch module, its output
 * tensor's type and shape, the function it calls, its MACs. */
static void profile_row(const cs_cg *cg, cs_sbuf *b, const cs_node *n) {
  cs_layer_source src = cs_cg_layer_source(cg, n);
  cs_sbuf out = {0};
  cs_c_shape_text(&out, cs_graph_value(cg->g, n->outputs[0]));
  cs_sbuf_puts(b, "    {");
  cs_c_string(b, src.name);
  cs_sbuf_puts(b, ", ");
  cs_c_string(b, src.module);
  cs_sbuf_puts(b, ", ");
  cs_c_string(b, out.s ? out.s : "");
  cs_sbuf_free(&out);
  cs_sbuf_puts(b, ", ");
  cs_c_string(b, cs_kernel_fn(cs_kernel_info_of(n->op), cg->t));
  cs_sbuf_printf(b, ", %" PRId64 ", 0, 0, 0},\n", cs_kernel_macs(n));
}

/* The profile table (-profile-layers=1): constants per row, zero counters. */
static void emit_profile_table(const cs_cg *cg, cs_sbuf *b) {
  const cs_schedule *s = &cg->s;
  const cs_graph *g = cg->g;
  if (!cg->t->profile_layers) return;
  cs_sbuf_puts(b, "\n/* ---- per-layer profiling (-profile-layers=1, cstatic/profile.h) ---- */\n\n");
  cs_sbuf_printf(b, "%stidsp_layer_stat model_layer_stats[MODEL_PROFILE_LAYERS] = {\n"
                    "    /* name, module, output, kernel, macs, calls, total, last */\n",
                 cs_cg_export(cg));
  for (int i = 0; i < s->n_inputs; i++)
    if (s->inputs[i].node >= 0) profile_row(cg, b, &g->nodes[s->inputs[i].node]);
  for (int k = 0; k < s->n_steps; k++)
    if (!s->node_elided[s->order[k]]) profile_row(cg, b, &g->nodes[s->order[k]]);
  for (int j = 0; j < s->n_outputs; j++)
    if (s->outputs[j].node >= 0) profile_row(cg, b, &g->nodes[s->outputs[j].node]);
  cs_sbuf_puts(b, "};\n\nstatic const tidsp_profile_table model_profile = {\n"
                  "    .n_layers = MODEL_PROFILE_LAYERS,\n    .layers = model_layer_stats,\n"
                  "    .clock_unit = TIDSP_PROFILE_CLOCK_UNIT};\n");
}

static void emit_descriptor(const cs_cg *cg, cs_sbuf *b) {
  const cs_schedule *s = &cg->s;
  int embedded = cg->opt && cg->opt->weights_as_c;
  cs_sbuf_puts(b, "\n/* ---- descriptor: lets a host program drive any compiled model ---- */\n\n");
  tensor_infos(cg, b, "model_inputs", s->n_inputs, s->inputs, 0);
  tensor_infos(cg, b, "model_outputs", s->n_outputs, s->outputs, 0);
  tensor_infos(cg, b, "model_raw_inputs", s->n_inputs, s->inputs, 1);
  tensor_infos(cg, b, "model_raw_outputs", s->n_outputs, s->outputs, 1);
  cs_sbuf_printf(b, "\n%sint32_t model_check_weights(const void *weights, size_t size) {\n",
                 cs_cg_export(cg));
  if (embedded)
    cs_sbuf_puts(b, "  if (weights == NULL) {\n    weights = model_weights;\n"
                    "    size = MODEL_WEIGHTS_SIZE;\n  }\n");
  cs_sbuf_puts(b, "  return tidsp_weights_check(weights, size, MODEL_WEIGHTS_SIZE, MODEL_WEIGHTS_COUNT,\n"
                  "                             MODEL_WEIGHTS_ALIGN, MODEL_WEIGHTS_CHECKSUM);\n}\n");
  cs_sbuf_printf(b, "\n%sconst tidsp_model_desc model_desc = {\n", cs_cg_export(cg));
  cs_sbuf_puts(b, "    .abi_version = TIDSP_MODEL_ABI_VERSION,\n"
                  "    .name = MODEL_NAME,\n    .target = MODEL_TARGET,\n"
                  "    .n_inputs = MODEL_NUM_INPUTS,\n    .n_outputs = MODEL_NUM_OUTPUTS,\n");
  cs_sbuf_printf(b, "    .inputs = %s,\n    .outputs = %s,\n    .raw_inputs = %s,\n    .raw_outputs = %s,\n",
                 s->n_inputs ? "model_inputs" : "NULL", s->n_outputs ? "model_outputs" : "NULL",
                 s->n_inputs ? "model_raw_inputs" : "NULL",
                 s->n_outputs ? "model_raw_outputs" : "NULL");
  cs_sbuf_printf(b, "    .arena_size = MODEL_ARENA_SIZE,\n    .arena_align = MODEL_ARENA_ALIGN,\n"
                    "    .live_bytes_lower_bound = MODEL_LIVE_BYTES_LOWER_BOUND,\n"
                    "    .l2_size = MODEL_L2_SIZE,\n"
                    "    .weights_size = MODEL_WEIGHTS_SIZE,\n    .weights_align = MODEL_WEIGHTS_ALIGN,\n"
                    "    .weights_embedded = %s,\n"
                    "    .run = model_run,\n    .run_raw = cg_main,\n"
                    "    .check_weights = model_check_weights,\n"
                    "    .status_str = tidsp_status_str%s};\n",
                 embedded ? "model_weights" : "NULL",
                 cg->t->profile_layers ? ",\n    .profile = &model_profile" : "");
}

/* The next file ends its layers before step `end`. */
static cs_status add_file(cs_cg *cg, int end, int *cap) {
  if (cg->n_files + 1 >= *cap) {
    int c = *cap * 2;
    int *first = realloc(cg->file_first_step, sizeof *first * (size_t)c);
    if (!first) return cs_error(CS_ERR_NOMEM, "codegen: out of memory");
    cg->file_first_step = first;
    *cap = c;
  }
  cg->file_first_step[++cg->n_files] = end;
  return CS_OK;
}

/* File f: banner, includes, the offset macros its body uses, the body. */
static cs_status write_source(cs_cg *cg, cs_file_writer *w, const char *out_dir, int f, cs_sbuf *body,
                              const cs_cg_used *used, int needs_math) {
  cs_sbuf out = {0};
  char file[32], what[96], range[64];
  snprintf(file, sizeof file, "lib%d.c", f);
  layer_range(range, sizeof range, cg->file_first_step[f], cg->file_first_step[f + 1]);
  snprintf(what, sizeof what, "%s%s", f == 0 ? "entry points, descriptor and " : "", range);
  banner(cg, &out, file, what);
  includes(cg, &out, needs_math);
  emit_macros(cg, &out, used);
  if (f == 0) emit_staging_macros(cg, &out);
  cs_sbuf_puts(&out, body->s ? body->s : "");
  cs_sbuf_taint(&out, body);
  return cs_file_writer_put(w, out_dir, file, &out, f, cg->file_first_step[f], cg->file_first_step[f + 1]);
}

static void used_clear(cs_cg_used *u) {
  for (int k = 0; k < u->n; k++) u->mark[u->ids[k]] = 0;
  u->n = 0;
}

/* The split is decided while the layers are written: lib0.c's layers
 * first (kept until the end: its cg_main calls every part), then lib1.c,
 * lib2.c … each written as soon as it is full, then lib0.c. */
cs_status cs_cg_write_sources(cs_cg *cg, const char *out_dir) {
  const cs_graph *g = cg->g;
  size_t nv = (size_t)g->n_values + 1;
  cs_cg_used u0 = {calloc(nv, 1), malloc(sizeof(int) * nv), 0}, u = {calloc(nv, 1), malloc(sizeof(int) * nv), 0};
  int cap = 16;
  free(cg->file_first_step);
  cg->n_files = 0;
  cg->file_first_step = malloc(sizeof(int) * (size_t)cap);
  cs_status st = CS_OK;
  free(cg->manifest_layers);
  cg->manifest_layers = calloc((size_t)cg->s.n_steps + 1, sizeof *cg->manifest_layers);
  cs_file_writer *w = cg->manifest_layers ? cs_file_writer_start(cg) : NULL;
  if (!w || !u0.mark || !u0.ids || !u.mark || !u.ids || !cg->file_first_step)
    st = cs_error(CS_ERR_NOMEM, "codegen: out of memory");
  else
    cg->file_first_step[0] = 0;
  int math0 = 0, end = 0, next_row = profile_input_rows(cg);
  cs_sbuf layers0 = {0}, body0 = {0};
  if (st == CS_OK) st = emit_layers(cg, &layers0, 0, &end, &u0, &math0, &next_row);
  if (st == CS_OK) st = add_file(cg, end, &cap);
  while (st == CS_OK && end < cg->s.n_steps) {
    int needs_math = 0;
    cs_sbuf layers = {0}, body = {0};
    used_clear(&u);
    st = emit_layers(cg, &layers, end, &end, &u, &needs_math, &next_row);
    if (st == CS_OK) st = add_file(cg, end, &cap);
    if (st == CS_OK) {
      emit_part(cg, &body, cg->n_files - 1, &layers);
      st = write_source(cg, w, out_dir, cg->n_files - 1, &body, &u, needs_math);
    }
    cs_sbuf_free(&layers);
    cs_sbuf_free(&body);
  }
  if (st == CS_OK) {
    emit_part(cg, &body0, 0, &layers0);
    st = emit_cg_main(cg, &body0, &u0);
  }
  if (st == CS_OK) st = emit_model_run(cg, &body0, &u0, &math0);
  if (st == CS_OK) emit_profile_table(cg, &body0);
  if (st == CS_OK) emit_descriptor(cg, &body0);
  if (st == CS_OK) cs_cg_flavour_dsp_entry(cg, &body0);
  if (st == CS_OK) st = write_source(cg, w, out_dir, 0, &body0, &u0, math0);
  cs_status st_w = cs_file_writer_finish(w);
  if (st == CS_OK) st = st_w;
  cs_sbuf_free(&layers0);
  cs_sbuf_free(&body0);
  free(u0.mark);
  free(u0.ids);
  free(u.mark);
  free(u.ids);
  return st;
}
