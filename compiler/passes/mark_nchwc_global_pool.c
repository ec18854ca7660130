/*
 * MarkNchwcGlobalPool — which summation order a float GlobalAveragePool
 * takes in ONNX Runtime. ORT's NchwcTransformer turns it into an NCHWc
 * pooling (each channel's plane summed in order) only when its input is
 * already an NCHWc tensor, or a graph input (ORT reorders that one), and
 * its channels are whole NCHWc blocks; otherwise MLAS's global pooling
 * kernel sums in four lanes. Measured on ORT 1.30: a 16-channel pooling
 * after a Conv is NCHWc; after a Neg or a Div it is not (PP-OCR's
 * squeeze-excitation blocks pool a hard-swish written as Add/Clip/Mul/Div).
 *
 * The layout depends on MLAS's channel block (16 on AVX-512F, 8 on AVX2:
 * 24 channels after a Conv are NCHWc at 8, measured on ORT 1.30 on a
 * Zen 3). The pass sets the node's "ort_nchwc" attribute to the
 * TIDSP_MLAS_BLOCK* bits of the blocks at which the input is such a
 * tensor; LegalizeOps adds the channel condition and passes the orders to
 * the kernel (tidsp_gap_f32_params.nchwc), which picks its CPU's.
 */
#include "pass_list.h"
#include "match/ort_nchwc.h"
#include "match/pattern.h"

static cs_status mark(cs_graph *g, int id) {
  cs_node *n = cs_graph_node(g, id);
  if (n->n_inputs != 1) return CS_OK;
  int x = n->inputs[0];
  const cs_value *v = cs_graph_value(g, x);
  int graph_input = v->producer < 0 && !v->data;
  int blocks = (graph_input || cs_ort_nchwc_value(g, x, CS_ORT_NCHWC_BLOCK) ? TIDSP_MLAS_BLOCK16 : 0) |
               (graph_input || cs_ort_nchwc_value(g, x, CS_ORT_NCHWC_BLOCK_AVX2) ? TIDSP_MLAS_BLOCK8 : 0);
  if (!blocks) return CS_OK;
  return cs_node_set_attr_int(n, "ort_nchwc", blocks);
}

cs_status pass_mark_nchwc_global_pool(cs_graph *g, const cs_target *t) {
  (void)t;
  return cs_match_each(g, CS_OP_GLOBAL_AVERAGE_POOL, mark);
}
