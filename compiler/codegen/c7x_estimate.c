/*
 * The compiled network's cycles on the C7x, layer by layer, by the cycle
 * model of the MMALIB cost rule (ir/c7x_cost.h: the spec's one measured
 * layer). Not a timing: an estimate on the rule's own basis, so that a
 * compile can be judged as a whole — what the MMA layers, the core's MAC
 * layers and everything else (requantization, copies, activations) cost —
 * and two compiles (-mmalib=0 and 1, or two branches) compared on one
 * scale. Tensors live in DDR, but for the MMALIB calls InjectMMALIBDMA
 * stages (the step's L2 plan): by the spec's L2 figure, which the rule
 * uses too (ir/c7x_cost.h cs_c7x_call_bytes), a staged call moves no DDR
 * bytes of its own, or only its weights when they stay in DDR.
 *
 * A step's cycles:
 *  - an mmalib_* call: cs_mm_cost_mma of its geometry (mm_args) at its
 *    kernel's tile (64 int8, 32 int16) — one panel set per group, per
 *    image of a batched product; a depthwise call as the rule prices it
 *    (one output per position, K = the window: mmalib_conv.c);
 *  - a core kernel with MACs: cs_mm_cost_scalar;
 *  - any other core kernel: cs_c7x_cost_bytes;
 * each with the bytes of every tensor it reads and writes (constants
 * included), but for the exact path's requantization (exact_requant_bytes);
 * an elided copy (a view) costs nothing.
 */
#include <string.h>

#include "c7x_cost.h"
#include "cg.h"
#include "cstatic/mmalib.h"

static int is_mma(const cs_cg *cg, const cs_node *n) {
  const cs_kernel_info *ki = cs_kernel_info_of(n->op);
  return ki && !strncmp(cs_kernel_fn(ki, cg->t), "mmalib_", 7);
}

static double node_bytes(const cs_graph *g, const cs_node *n) {
  double b = 0.0;
  for (int i = 0; i < n->n_inputs; i++)
    if (n->inputs[i] >= 0) b += (double)cs_value_nbytes(cs_graph_value(g, n->inputs[i]));
  for (int i = 0; i < n->n_outputs; i++)
    if (n->outputs[i] >= 0) b += (double)cs_value_nbytes(cs_graph_value(g, n->outputs[i]));
  return b;
}

/* The exact requantization's traffic: its output (int8, or int16 for the
 * twin that writes the next layer's widened input) and the P int16
 * partial results z of those outputs (the grid's last entry; z may hold
 * padded channels it never reads). The input and weights it reads only
 * for the rare output near a rounding boundary are not counted. */
static double exact_requant_bytes(const cs_graph *g, const cs_node *n) {
  const cs_value *y = cs_graph_value(g, n->outputs[0]);
  const cs_value *grid = n->n_inputs > 3 && n->inputs[3] >= 0 ? cs_graph_value(g, n->inputs[3]) : NULL;
  int64_t parts = 1;
  if (grid && grid->data && grid->rank == 1 && grid->shape[0] > 0) parts = cs_const_get_int(grid, grid->shape[0] - 1);
  return (double)cs_value_nbytes(y) + 2.0 * (double)cs_value_numel(y) * (double)(parts > 0 ? parts : 1);
}

/* An mmalib_* call's estimate from its arguments; -1 when they are not
 * a geometry this file knows (then priced as a core kernel: never
 * silently free). */
static double mma_cycles(const cs_node *n, double bytes, int input_in_ddr) {
  int cnt = 0;
  const int64_t *a = cs_node_attr_ints(n, "mm_args", &cnt);
  if (!a) return -1.0;
  switch (n->op) {
    case CS_OP_K_MMALIB_FC_I8:
    case CS_OP_K_MMALIB_FC_I16:
    case CS_OP_K_MMALIB_MATMUL_I16: /* M, K, N */
      if (cnt < 3) return -1.0;
      return cs_mm_cost_mma(a[1], a[2], a[0], n->op == CS_OP_K_MMALIB_FC_I8 ? 64 : 32, bytes);
    case CS_OP_K_MMALIB_BATCH_MATMUL_I16: /* batch, M, K, N */
      if (cnt < 4 || a[0] < 1) return -1.0;
      return (double)a[0] * cs_mm_cost_mma(a[2], a[3], a[1], 32, bytes / (double)a[0]);
    case CS_OP_K_MMALIB_DWCONV2D_I8:
    case CS_OP_K_MMALIB_DWCONV2D_I16:
    case CS_OP_K_MMALIB_CONV2D_I8:
    case CS_OP_K_MMALIB_CONV2D_I8_GROUPED:
    case CS_OP_K_MMALIB_CONV2D_I16: {
      int dw = n->op == CS_OP_K_MMALIB_DWCONV2D_I8 || n->op == CS_OP_K_MMALIB_DWCONV2D_I16;
      if (cnt < 12) return -1.0;
      int64_t kh = a[dw ? 3 : 4], kw = a[dw ? 4 : 5], s = a[dw ? 5 : 6];
      const int64_t *p = a + (dw ? 7 : 8);
      if (s < 1) return -1.0;
      int64_t pos = ((a[1] + p[0] + p[1] - kh) / s + 1) * ((a[2] + p[2] + p[3] - kw) / s + 1);
      int tile = n->op == CS_OP_K_MMALIB_CONV2D_I16 || n->op == CS_OP_K_MMALIB_DWCONV2D_I16 ? 32 : 64;
      if (dw) {
        /* negative pads crop the input (cstatic/mmalib.h): the window's
         * bytes are read, not the whole input's */
        int64_t rows = TIDSP_MMALIB_CROP_LEN(a[1], p[0], p[1]), cols = TIDSP_MMALIB_CROP_LEN(a[2], p[2], p[3]);
        int elem = n->op == CS_OP_K_MMALIB_DWCONV2D_I16 ? 2 : 1;
        if (input_in_ddr) bytes -= (double)elem * (double)a[0] * (double)(a[1] * a[2] - rows * cols);
        return cs_mm_cost_mma(kh * kw, 1, pos, tile, bytes);
      }
      int64_t groups = cnt == 13 && a[12] > 0 ? a[12] : 1;
      return (double)groups *
             cs_mm_cost_mma(a[0] / groups * kh * kw, a[3] / groups, pos, tile, bytes / (double)groups);
    }
    default: return -1.0;
  }
}

double cs_cg_step_c7x_cycles(const cs_cg *cg, int k, cs_c7x_part *part) {
  int id = cg->s.order[k];
  const cs_node *n = &cg->g->nodes[id];
  *part = CS_C7X_CORE_OTHER;
  if (cg->s.node_elided[id]) return 0.0;
  double bytes = node_bytes(cg->g, n);
  if (is_mma(cg, n)) {
    cs_l2_kind staged = cg->s.l2 ? cg->s.l2[k].kind : CS_L2_NONE;
    int in_l2 = staged == CS_L2_INPUT_WEIGHTS || staged == CS_L2_SLICED || staged == CS_L2_INPUT ||
                staged == CS_L2_H_TILED;
    if (in_l2) /* CS_L2_INPUT: the weights stay in DDR (an H-tiled MMALIB call caches them) */
      bytes = staged == CS_L2_INPUT && n->n_inputs > 1 && n->inputs[1] >= 0
                  ? (double)cs_value_nbytes(cs_graph_value(cg->g, n->inputs[1]))
                  : 0.0;
    double c = mma_cycles(n, bytes, !in_l2);
    if (c >= 0.0) {
      *part = CS_C7X_MMA;
      return c;
    }
  }
  if (n->op == CS_OP_K_MMALIB_EXACT_REQUANT || n->op == CS_OP_K_MMALIB_EXACT_REQUANT_I16 ||
      n->op == CS_OP_K_MMALIB_EXACT_REQUANT_LUT16)
    return cs_c7x_cost_bytes(exact_requant_bytes(cg->g, n));
  int64_t macs = cs_kernel_macs(n);
  if (macs > 0) {
    *part = CS_C7X_CORE_MACS;
    return cs_mm_cost_scalar(macs, bytes);
  }
  return cs_c7x_cost_bytes(bytes);
}

void cs_cg_c7x_estimate(const cs_cg *cg, double cycles[CS_C7X_PARTS]) {
  for (int p = 0; p < CS_C7X_PARTS; p++) cycles[p] = 0.0;
  for (int k = 0; k < cg->s.n_steps; k++) {
    cs_c7x_part part;
    double c = cs_cg_step_c7x_cycles(cg, k, &part);
    cycles[part] += c;
  }
}
