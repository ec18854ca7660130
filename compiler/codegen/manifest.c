/*
 * manifest.json: the compile's facts for tools and people — target, I/O of
 * both entry points, memory, weights, one record per layer, totals.
 */
#define _POSIX_C_SOURCE 200809L

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "json.h"

static const char *np_dtype(cs_dtype t) {
  switch (t) {
    case CS_DTYPE_F32: return "float32";
    case CS_DTYPE_I8: return "int8";
    case CS_DTYPE_U8: return "uint8";
    case CS_DTYPE_I16: return "int16";
    case CS_DTYPE_U16: return "uint16";
    case CS_DTYPE_I32: return "int32";
    case CS_DTYPE_I64: return "int64";
    case CS_DTYPE_BOOL: return "bool";
    case CS_DTYPE_F16: return "float16";
    case CS_DTYPE_BF16: return "uint16"; /* its bits: numpy has no bfloat16 */
    case CS_DTYPE_F64: return "float64";
    case CS_DTYPE_U32: return "uint32";
    case CS_DTYPE_U64: return "uint64";
    default: return "undefined";
  }
}

static void shape(cs_json *j, const char *key, const cs_value *v) {
  cs_json_ints(j, key, v->shape, v->rank);
}

static void io_entry(const cs_cg *cg, cs_json *j, const cs_boundary_io *io, int raw, int is_input) {
  const cs_graph *g = cg->g;
  const cs_value *v = cs_graph_value(g, raw ? io->raw_value : io->value);
  cs_json_begin_object(j, NULL);
  cs_json_string(j, "name", v->name);
  cs_json_string(j, "dtype", np_dtype(v->dtype));
  shape(j, "shape", v);
  if (io->node >= 0) {
    const cs_node *n = &g->nodes[io->node];
    cs_json_begin_object(j, "quant");
    cs_json_double(j, "scale", cs_const_get_float(cs_graph_value(g, n->inputs[0]), 0));
    cs_json_int(j, "zero_point", cs_const_get_int(cs_graph_value(g, n->inputs[1]), 0));
    cs_json_end_object(j);
    if (!raw) {
      cs_json_string(j, "conversion", is_input ? "quantize" : "dequantize");
      cs_json_string(j, "conversion_onnx_nodes", n->origin ? n->origin : n->name);
    }
  } else if (raw && v->quant && v->quant->count == 1) {
    cs_json_begin_object(j, "quant");
    cs_json_double(j, "scale", v->quant->scale[0]);
    cs_json_int(j, "zero_point", v->quant->zero_point[0]);
    cs_json_end_object(j);
  } else {
    cs_json_null(j, "quant");
  }
  cs_json_end_object(j);
}

static void entry(const cs_cg *cg, cs_json *j, const char *key, int raw) {
  const cs_schedule *s = &cg->s;
  cs_json_begin_object(j, key);
  cs_json_begin_array(j, "inputs");
  for (int i = 0; i < s->n_inputs; i++) io_entry(cg, j, &s->inputs[i], raw, 1);
  cs_json_end_array(j);
  cs_json_begin_array(j, "outputs");
  for (int i = 0; i < s->n_outputs; i++) io_entry(cg, j, &s->outputs[i], raw, 0);
  cs_json_end_array(j);
  cs_json_end_object(j);
}

/* origin "a, b" → ["a", "b"] */
static void onnx_nodes(cs_json *j, const cs_node *n) {
  cs_json_begin_array(j, "onnx_nodes");
  const char *o = n->origin && *n->origin ? n->origin : n->name;
  if (o) {
    char *copy = strdup(o);
    char *p = copy;
    while (p && *p) {
      char *sep = strstr(p, ", ");
      if (sep) *sep = '\0';
      cs_json_string(j, NULL, p);
      p = sep ? sep + 2 : NULL;
    }
    free(copy);
  }
  cs_json_end_array(j);
}

/* The records of the "layers" array: members of the top object's array. */
enum { LAYER_DEPTH = 2 };

/* The records of steps [first, end), the layers of file lib<file>.c, as a
 * fragment of the "layers" array: made by the file writer's thread once
 * the file is written (file_writer.c), while the next file's layers are
 * generated — a large model's manifest is mostly these records. */
void cs_cg_manifest_layers(const cs_cg *cg, int file, int first, int end, cs_sbuf *out) {
  const cs_graph *g = cg->g;
  cs_json *j = malloc(sizeof *j);
  if (!j) {
    out->oom = 1;
    return;
  }
  cs_json_init_fragment(j, LAYER_DEPTH, first > 0);
  char name[32];
  snprintf(name, sizeof name, "lib%d.c", file);
  for (int k = first; k < end; k++) {
    int id = cg->s.order[k];
    const cs_node *n = &g->nodes[id];
    const cs_kernel_info *ki = cs_kernel_info_of(n->op);
    const cs_value *y = cs_graph_value(g, n->outputs[0]);
    cs_json_begin_object(j, NULL);
    cs_json_int(j, "index", k);
    cs_json_string(j, "kernel", ki ? cs_kernel_fn(ki, cg->t) : "?");
    cs_json_string(j, "op", cs_op_name(n->op));
    /* the ONNX node it stands for and its PyTorch module (layer_names.c);
     * ir_name is unique, the ONNX node need not be (a pad and its conv) */
    cs_layer_source src = cs_cg_layer_source(cg, n);
    cs_json_string(j, "name", src.name);
    cs_json_string(j, "module", src.module);
    cs_json_string(j, "ir_name", n->name);
    onnx_nodes(j, n);
    cs_json_begin_object(j, "output");
    cs_json_string(j, "name", y->name);
    cs_json_string(j, "dtype", np_dtype(y->dtype));
    shape(j, "shape", y);
    cs_json_end_object(j);
    int64_t macs = cs_kernel_macs(n);
    if (macs) cs_json_int(j, "macs", macs);
    if (cg->t->mcpu == CS_MCPU_C7X) {
      cs_c7x_part part;
      cs_json_double(j, "est_c7x_cycles", cs_cg_step_c7x_cycles(cg, k, &part));
    }
    cs_json_string(j, "file", name);
    cs_json_bool(j, "elided", cg->s.node_elided[id]);
    if (cg->s.l2 && cg->s.l2[k].kind != CS_L2_NONE) {
      char what[256];
      cs_l2_stage_describe(&cg->s.l2[k], cg->s.l2_budget, what, sizeof what);
      cs_json_string(j, "l2", what);
      cs_cg_manifest_dma(cg, j, k);
    }
    cs_json_end_object(j);
  }
  int oom = 0;
  free(out->s);
  out->s = cs_json_fragment(j, &out->len, &oom);
  out->cap = out->len;
  out->oom = oom;
  free(j);
}

/* The records, file by file (lib0.c's layers first: they are the first
 * steps); a file whose records are missing is one the compile did not
 * finish, and an error. */
static int layers(const cs_cg *cg, cs_json *j, int64_t *calls, int64_t *elided) {
  cs_json_begin_array(j, "layers");
  int ok = 1;
  for (int f = 0; f < cg->n_files; f++) {
    const cs_sbuf *r = &cg->manifest_layers[f];
    int first = cg->file_first_step[f], end = cg->file_first_step[f + 1];
    if (r->oom || (end > first && !r->s)) ok = 0;
    cs_json_splice(j, r->s, r->len, end - first);
  }
  cs_json_end_array(j);
  for (int k = 0; k < cg->s.n_steps; k++) {
    if (cg->s.node_elided[cg->s.order[k]]) (*elided)++;
    else (*calls)++;
  }
  return ok;
}

static void kernel_histogram(const cs_cg *cg, cs_json *j) {
  cs_json_begin_object(j, "kernels");
  /* One walk over the layers; then the kernel ops in enum order: a stable
   * key order. */
  int64_t count[CS_OP_COUNT_] = {0};
  for (int k = 0; k < cg->s.n_steps; k++) {
    int id = cg->s.order[k];
    if (!cg->s.node_elided[id]) count[cg->g->nodes[id].op]++;
  }
  for (int op = 0; op < CS_OP_COUNT_; op++) {
    const cs_kernel_info *ki = cs_kernel_info_of((cs_op)op);
    if (ki && count[op]) cs_json_int(j, cs_kernel_fn(ki, cg->t), count[op]);
  }
  cs_json_end_object(j);
}

int64_t cs_cg_mma_macs(const cs_cg *cg) {
  int64_t macs = 0;
  for (int k = 0; k < cg->s.n_steps; k++) {
    const cs_node *n = &cg->g->nodes[cg->s.order[k]];
    const cs_kernel_info *ki = cs_kernel_info_of(n->op);
    if (ki && !strncmp(cs_kernel_fn(ki, cg->t), "mmalib_", 7)) macs += cs_kernel_macs(n);
  }
  return macs;
}

/* The share of the model's MACs on the MMA, and what channel padding
 * added (issue 16): "macs"/"macs_mma" are the kernels' (padding
 * included); the share is of the model's own MACs (padding taken out of
 * both: every padded layer runs on the MMA). */
static void offload_share(const cs_cg *cg, const cs_offload_report *r, cs_json *j) {
  int pad_layers;
  int64_t pad_macs, pad_bytes;
  cs_offload_pad_totals(r, &pad_layers, &pad_macs, &pad_bytes);
  int64_t mma = cs_cg_mma_macs(cg), model = cg->total_macs - pad_macs;
  cs_json_int(j, "macs", cg->total_macs);
  cs_json_int(j, "macs_mma", mma);
  cs_json_double(j, "mma_share", model > 0 ? (double)(mma - pad_macs) / (double)model : 0.0);
  cs_json_begin_object(j, "padding");
  cs_json_int(j, "layers", pad_layers);
  cs_json_int(j, "macs_added", pad_macs);
  cs_json_int(j, "bytes_added", pad_bytes);
  cs_json_double(j, "macs_ratio", model > 0 ? (double)cg->total_macs / (double)model : 1.0);
  cs_json_begin_array(j, "decisions");
  for (int i = 0; i < r->n_pad; i++) {
    const cs_offload_pad *p = &r->pads[i];
    cs_json_begin_object(j, NULL);
    cs_json_string(j, "layer", p->layer);
    cs_json_string(j, "what", p->what ? p->what : "C_out");
    cs_json_bool(j, "padded", p->padded);
    cs_json_bool(j, "over_budget", p->over_budget);
    cs_json_int(j, "c_out", p->c_out);
    cs_json_int(j, "c_pad", p->c_pad);
    cs_json_int(j, "macs", p->macs);
    cs_json_int(j, "macs_added", p->macs_added);
    cs_json_int(j, "weight_bytes_added", p->weight_bytes_added);
    cs_json_int(j, "act_bytes_added", p->act_bytes_added);
    cs_json_double(j, "est_mma_cycles", p->mma_cycles);
    cs_json_double(j, "est_scalar_cycles", p->scalar_cycles);
    cs_json_end_object(j);
  }
  cs_json_end_array(j);
  cs_json_end_object(j);
}

/* -mmalib=1: per conv/matmul/add/pool, the kernel it became or the rule
 * that declined it, the summary line of the spec's table, the MMA share. */
static void offload(const cs_cg *cg, cs_json *j) {
  const cs_offload_report *r = cg->opt ? cg->opt->offload : NULL;
  if (!cg->t->mmalib || !r) return;
  char summary[256];
  cs_mmalib_report_summary(r, summary, sizeof summary);
  cs_json_begin_object(j, "offload");
  cs_json_string(j, "summary", summary);
  offload_share(cg, r, j);
  cs_json_begin_array(j, "layers");
  for (int i = 0; i < r->n; i++) {
    const cs_offload_entry *e = &r->entries[i];
    cs_json_begin_object(j, NULL);
    cs_json_string(j, "kind", cs_offload_kind_name(e->kind));
    cs_json_string(j, "layer", e->layer);
    if (e->kernel[0]) cs_json_string(j, "kernel", e->kernel);
    else cs_json_string(j, "declined", e->reason);
    if (e->scale_rel_err >= 0) cs_json_double(j, "scale_shift_max_rel_err", e->scale_rel_err);
    if (e->bound_full_scale_lsb >= 0) cs_json_double(j, "error_bound_full_scale_lsb", e->bound_full_scale_lsb);
    if (e->exact) {
      cs_json_begin_object(j, "exact_requant");
      cs_json_double(j, "max_error_lsb", e->exact_err_lsb);
      cs_json_double(j, "int8_scale_rel_err", e->exact_int8_rel_err);
      cs_json_double(j, "est_mma_cycles", e->exact_mma_cycles);
      cs_json_double(j, "est_int8_mma_cycles", e->exact_int8_mma_cycles);
      cs_json_double(j, "est_core_cycles", e->exact_core_cycles);
      cs_json_end_object(j);
    }
    cs_json_end_object(j);
  }
  cs_json_end_array(j);
  cs_json_end_object(j);
}

/* -mcpu=c7x: the whole network's estimated cycles (c7x_estimate.c). */
static void c7x_estimate(const cs_cg *cg, cs_json *j) {
  if (cg->t->mcpu != CS_MCPU_C7X) return;
  double c[CS_C7X_PARTS];
  cs_cg_c7x_estimate(cg, c);
  cs_json_begin_object(j, "est_c7x_cycles");
  cs_json_double(j, "total", c[CS_C7X_MMA] + c[CS_C7X_CORE_MACS] + c[CS_C7X_CORE_OTHER]);
  cs_json_double(j, "mma", c[CS_C7X_MMA]);
  cs_json_double(j, "core_macs", c[CS_C7X_CORE_MACS]);
  cs_json_double(j, "core_other", c[CS_C7X_CORE_OTHER]);
  cs_json_end_object(j);
}

cs_status cs_cg_write_manifest(cs_cg *cg, const char *path) {
  FILE *f = fopen(path, "wb");
  if (!f) return cs_error(CS_ERR_IO, "cannot write %s", path);
  const cs_schedule *s = &cg->s;
  const cs_graph *g = cg->g;
  cs_json jj, *j = &jj;
  cs_json_init(j, f);
  cs_json_begin_object(j, NULL);
  cs_json_string(j, "format", "cstatic-manifest");
  cs_json_int(j, "version", 1);
  cs_json_string(j, "name", cg->model_name);
  cs_json_string(j, "target", cg->target_str);
  cs_json_string(j, "model", cg->opt && cg->opt->model_path ? cg->opt->model_path : "");
  entry(cg, j, "model_run", 0);
  entry(cg, j, "cg_main", 1);
  cs_json_int(j, "arena_bytes", (int64_t)s->arena_size);
  cs_json_int(j, "arena_align", (int64_t)s->arena_align);
  cs_json_int(j, "live_bytes_lower_bound", (int64_t)s->live_lower_bound);
  cs_json_double(j, "arena_ratio",
                 s->live_lower_bound ? (double)s->arena_size / (double)s->live_lower_bound : 1.0);
  cs_json_int(j, "weights_bytes", (int64_t)s->weights_size);
  /* InjectMMALIBDMA: the budget and the L2 scratch the model needs
   * (l2_budget 0: no staging). */
  cs_json_int(j, "l2_budget", (int64_t)s->l2_budget);
  cs_json_int(j, "l2_bytes", (int64_t)s->l2_size);

  cs_json_begin_object(j, "weights");
  int as_c = cg->opt && cg->opt->weights_as_c;
  cs_json_string(j, "file", as_c ? "weights.c" : "weights.bin");
  cs_json_string(j, "format", "CSWB v1 (docs/weights-format.md)");
  cs_json_int(j, "bytes", (int64_t)s->weights_size);
  cs_json_int(j, "align", (int64_t)s->weights_align);
  cs_json_int(j, "count", s->n_weights);
  char sum[24];
  snprintf(sum, sizeof sum, "0x%016" PRIx64, cg->weights_checksum);
  cs_json_string(j, "checksum_fnv1a64", sum);
  cs_json_begin_array(j, "tensors");
  for (int i = 0; i < s->n_weights; i++) {
    int v = s->weights[i];
    cs_json_begin_object(j, NULL);
    cs_json_string(j, "name", cs_graph_value(g, v)->name);
    cs_json_string(j, "macro", cg->macro[v]);
    cs_json_int(j, "offset", (int64_t)s->loc[v].offset);
    cs_json_int(j, "bytes", (int64_t)cs_value_nbytes(cs_graph_value(g, v)));
    cs_json_string(j, "dtype", np_dtype(cs_graph_value(g, v)->dtype));
    shape(j, "shape", cs_graph_value(g, v));
    cs_json_end_object(j);
  }
  cs_json_end_array(j);
  cs_json_end_object(j);

  cs_json_begin_array(j, "files");
  cs_json_string(j, NULL, "lib0.h");
  for (int i = 0; i < cg->n_files; i++) {
    char file[32];
    snprintf(file, sizeof file, "lib%d.c", i);
    cs_json_string(j, NULL, file);
  }
  cs_json_string(j, NULL, as_c ? "weights.c" : "weights.bin");
  cs_json_end_array(j);

  /* The runtime files the C above needs (runtime_files.c), besides the
   * public headers of include/cstatic. */
  cs_json_begin_array(j, "runtime_sources");
  for (int i = 0; i < cs_runtime_file_count(); i++) {
    if (!cg->runtime_used[i]) continue;
    char rel[256];
    snprintf(rel, sizeof rel, "runtime/%s", cs_runtime_file_path(i));
    cs_json_string(j, NULL, rel);
  }
  cs_json_end_array(j);

  int64_t calls = 0, elided = 0;
  int complete = layers(cg, j, &calls, &elided);
  cs_json_begin_object(j, "totals");
  cs_json_int(j, "layers", s->n_steps);
  cs_json_int(j, "kernel_calls", calls);
  cs_json_int(j, "elided_copies", elided);
  cs_json_int(j, "macs", cg->total_macs);
  kernel_histogram(cg, j);
  cs_json_end_object(j);
  c7x_estimate(cg, j);
  offload(cg, j);
  cs_json_end_object(j);
  int bad = ferror(f);
  if (fclose(f) != 0) bad = 1;
  if (!complete) return cs_error(CS_ERR_NOMEM, "codegen: out of memory writing %s", path);
  if (bad) return cs_error(CS_ERR_IO, "cannot write %s (disk full?)", path);
  return CS_OK;
}
