/*
 * cs_codegen_emit: schedule the graph, name its tensors, split the layers
 * into files, then run each writer. The writers only read the context.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "cg.h"
#include "cstatic/mmalib.h"

static cs_status check_out_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return cs_error(CS_ERR_IO, "output directory %s does not exist or cannot be read", dir);
  struct dirent *e;
  int empty = 1;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) empty = 0;
  closedir(d);
  if (!empty) return cs_error(CS_ERR_IO, "output directory %s is not empty", dir);
  return CS_OK;
}

static size_t pow2_at_least(size_t v, size_t min) { return v < min ? min : v; }

static void cg_free(cs_cg *cg) {
  if (cg->macro)
    for (int v = 0; v < cg->g->n_values; v++) free(cg->macro[v]);
  free(cg->macro);
  free(cg->file_first_step);
  free(cg->model_name);
  free(cg->sources);
  free(cg->layer_src);
  if (cg->manifest_layers)
    for (int f = 0; f < cg->n_files; f++) free(cg->manifest_layers[f].s);
  free(cg->manifest_layers);
  cs_schedule_free(&cg->s);
}

cs_status cs_codegen_emit(cs_graph *g, const cs_target *t, const cs_codegen_options *opt,
                          const char *out_dir) {
  static const cs_codegen_options no_options;
  if (!opt) opt = &no_options;
  cs_status st = check_out_dir(out_dir);
  if (st == CS_OK) st = cs_graph_verify(g);
  if (st != CS_OK) return st;

  cs_cg cg;
  memset(&cg, 0, sizeof cg);
  cg.g = g;
  cg.t = t;
  cg.opt = opt;
  cs_target_format(t, cg.target_str, sizeof cg.target_str);
  cg.model_name = strdup(g->name && *g->name ? g->name : "model");
  if (!cg.model_name) return cs_error(CS_ERR_NOMEM, "codegen: out of memory");
  if (opt->offload && opt->offload->lost) {
    free(cg.model_name);
    return cs_error(CS_ERR_NOMEM, "codegen: out of memory: the MMALIB offload report lost %d decisions",
                    opt->offload->lost);
  }

  /* Tensors are aligned to the target's constants alignment, at least 16
   * bytes so that every kernel's int32/float pointers are aligned. */
  size_t align = pow2_at_least((size_t)(t->constants_byte_alignment > 0 ? t->constants_byte_alignment : 64), 16);
  cs_schedule_options so = {
      .arena_align = align,
      .weights_align = align,
      .weights_base = CS_WEIGHTS_HEADER_BYTES,
      .alias_copies = !opt->no_copy_alias,
      .l2_budget = cs_target_stages_l2(t) ? (size_t)t->l2_budget : 0,
  };
  /* -mmalib=1: intermediate activations on 128 bytes (mmalib-integration
   * "Limitations"; more than MMA's 64). */
  if (t->mmalib) so.arena_align = pow2_at_least(so.arena_align, TIDSP_MMALIB_ACT_ALIGN);
  st = cs_schedule_build(g, &so, &cg.s);
  if (st == CS_OK) st = cs_cg_assign_names(&cg);
  if (st == CS_OK) st = cs_cg_index_sources(&cg);
  if (st == CS_OK) {
    cg.weights_checksum = cs_cg_weights_checksum(&cg);
    for (int k = 0; k < cg.s.n_steps; k++) cg.total_macs += cs_kernel_macs(&g->nodes[cg.s.order[k]]);
  }
  char path[4096];
  if (st == CS_OK) st = cs_cg_write_sources(&cg, out_dir);
  if (st == CS_OK) {
    snprintf(path, sizeof path, "%s/lib0.h", out_dir);
    st = cs_cg_write_header(&cg, path);
  }
  if (st == CS_OK) st = cs_cg_write_weights(&cg, out_dir);
  if (st == CS_OK) {
    snprintf(path, sizeof path, "%s/manifest.json", out_dir);
    st = cs_cg_write_manifest(&cg, path);
  }
  if (st == CS_OK && opt->stats) {
    cs_codegen_stats *s = opt->stats;
    memset(s, 0, sizeof *s);
    s->arena_bytes = cg.s.arena_size;
    s->live_bytes_lower_bound = cg.s.live_lower_bound;
    s->weights_bytes = cg.s.weights_size;
    s->layers = cg.s.n_steps;
    for (int k = 0; k < cg.s.n_steps; k++) s->kernel_calls += !cg.s.node_elided[cg.s.order[k]];
    s->files = cg.n_files;
    s->macs = cg.total_macs;
    s->macs_mma = cs_cg_mma_macs(&cg);
    if (cg.t->mcpu == CS_MCPU_C7X) {
      double c[CS_C7X_PARTS];
      cs_cg_c7x_estimate(&cg, c);
      s->est_c7x_mma = c[CS_C7X_MMA];
      s->est_c7x_core_macs = c[CS_C7X_CORE_MACS];
      s->est_c7x_core_other = c[CS_C7X_CORE_OTHER];
    }
    memcpy(s->runtime_used, cg.runtime_used, sizeof s->runtime_used);
    s->l2_budget = cg.s.l2_budget;
    s->l2_bytes = cg.s.l2_size;
    for (int k = 0; cg.s.l2 && k < cg.s.n_steps; k++) {
      cs_l2_kind kind = cg.s.l2[k].kind;
      s->l2_input_weights += kind == CS_L2_INPUT_WEIGHTS;
      s->l2_input += kind == CS_L2_INPUT;
      s->l2_sliced += kind == CS_L2_SLICED;
      s->l2_ddr += kind == CS_L2_DDR;
      s->l2_oc_tiled += kind == CS_L2_OC_TILED;
      s->l2_h_tiled += kind == CS_L2_H_TILED && !cg.s.l2[k].mmalib_h;
      s->l2_mm_h_tiled += kind == CS_L2_H_TILED && cg.s.l2[k].mmalib_h;
      s->l2_n_tiled += kind == CS_L2_N_TILED;
      s->l2_untiled += kind == CS_L2_UNTILED;
    }
  }
  cg_free(&cg);
  return st;
}
