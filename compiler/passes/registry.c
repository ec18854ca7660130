/*
 * registry.c — the pipeline as data, in the order of
 * spec/c-static-lib-backend.txt "Relax Legalization Pipeline": fusions that
 * need the intact QDQ graph first, then QDQ elimination, legalization of
 * what is left to reference kernels, constant folding. Target attributes
 * switch groups on and off here, never inside a pass.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"
#include "passes.h"

typedef enum cs_pass_group {
  CS_GROUP_ALWAYS = 0,
  CS_GROUP_MMALIB, /* only with -mmalib=1 (the offload passes) */
  CS_GROUP_PACK_WEIGHTS, /* only with -pack-weights=1 (host fast kernels) */
  CS_GROUP_C7X, /* only with -mcpu=c7x (the C7x custom kernels) */
} cs_pass_group;

typedef struct cs_pass_entry {
  const char *name;
  cs_pass_fn fn;
  cs_pass_group group;
} cs_pass_entry;

static const cs_pass_entry kPipeline[] = {
    {"Canonicalize", pass_canonicalize, CS_GROUP_ALWAYS},
    /* float Conv → BatchNormalization: the folded weights ORT computes */
    {"FoldBatchNorm", pass_fold_batch_norm, CS_GROUP_ALWAYS},
    /* a constant MatMul ORT computes as MatMulNBits (A quantized at run
     * time): decided on the graph as ORT sees it, folded by FoldConstant */
    {"MarkMatMulNBits", pass_mark_matmul_nbits, CS_GROUP_ALWAYS},
    /* ORT's transpose optimizer: a ReduceMean's Transpose moves below it */
    {"PushTransposeReduceMean", pass_push_transpose_reduce_mean, CS_GROUP_ALWAYS},
    /* float decomposed (RMS) LayerNorm → one kernel (ORT's order) */
    {"FuseLayerNormF32", pass_fuse_layer_norm_f32, CS_GROUP_ALWAYS},
    /* 1. [MMALIB] get_mmalib_qdq_passes(): they must see intact QDQ, so
     * they run before every generic fusion and QDQ elimination. */
    {"MMALIBReportBegin", pass_mmalib_report_begin, CS_GROUP_MMALIB},
    /* the fork's conv pattern: DQ → Conv → Add(float bias) → Q */
    {"FoldConvBiasAdd", pass_fold_conv_bias_add, CS_GROUP_MMALIB},
    /* channels whose output is a constant: zero filters, multiplier 1 */
    {"MMALIBConstChannels", pass_mmalib_const_channels, CS_GROUP_MMALIB},
    /* asymmetric stride as phases at stride S, or stride s + a pick */
    {"MMALIBAsymStride", pass_mmalib_asym_stride, CS_GROUP_MMALIB},
    /* dilation as a dense kernel with zero taps between the filter's */
    {"MMALIBDilation", pass_mmalib_dilation, CS_GROUP_MMALIB},
    /* small C_out: f x g output pixels per channel (output space-to-depth) */
    {"MMALIBOutS2D", pass_mmalib_out_s2d, CS_GROUP_MMALIB},
    /* small C_out 1x1: P pixel blocks per channel (reshapes: views) */
    {"MMALIBPackPixels", pass_mmalib_pack_pixels, CS_GROUP_MMALIB},
    /* zero filters up to the MMA tile, for the conv pass right after */
    {"MMALIBPadChannels", pass_mmalib_pad_channels, CS_GROUP_MMALIB},
    {"FuseMMALIBQDQConv2d", pass_fuse_mmalib_qdq_conv2d, CS_GROUP_MMALIB},
    {"FuseMMALIBQDQFC", pass_fuse_mmalib_qdq_fc, CS_GROUP_MMALIB},
    {"FuseInt8ResidualAdd", pass_fuse_int8_residual_add, CS_GROUP_MMALIB},
    /* the int16 QDQ passes: after the int8 ones, before FuseQDQToInt8Conv2D */
    {"FuseMMALIBQDQConv2dI16", pass_fuse_mmalib_qdq_conv2d_i16, CS_GROUP_MMALIB},
    {"FuseMMALIBQDQDwConv2dI16", pass_fuse_mmalib_qdq_dwconv2d_i16, CS_GROUP_MMALIB},
    {"FuseMMALIBQDQFCI16", pass_fuse_mmalib_qdq_fc_i16, CS_GROUP_MMALIB},
    {"FuseInt16ResidualAdd", pass_fuse_int16_residual_add, CS_GROUP_MMALIB},
    /* Before the max pool passes: a table in front of a pool leaves DQ → MaxPool → Q */
    {"FuseQDQPReluLUT", pass_fuse_qdq_prelu_lut, CS_GROUP_ALWAYS},
    /* Before FuseQDQToTIDLMaxPool (with -mmalib=1 the pools it puts between DQ_P and Q_P
     * go to the TIDL kernel) and EliminateQDQTransparent, which makes its quantized
     * Concat copies int8 and sinks their dequantize below the MaxPools. */
    {"QuantizeConcatMaxPool", pass_quantize_concat_max_pool, CS_GROUP_ALWAYS},
    /* Its idea for moves: a Q before float moves that end in Qs alike */
    {"QuantizeBeforeMoves", pass_quantize_before_moves, CS_GROUP_ALWAYS},
    {"FuseQDQToTIDLMaxPool", pass_fuse_qdq_to_tidl_max_pool, CS_GROUP_MMALIB},
    {"EliminateQDQTransparent", pass_eliminate_qdq_transparent, CS_GROUP_ALWAYS},
    /* After it: the moves it leaves float are those that mix parameters */
    {"EliminateQDQMixedMoves", pass_eliminate_qdq_mixed_moves, CS_GROUP_ALWAYS},
    /* 3a. FuseQDQToC7xActivation: SiLU first (its Sigmoid is part of it) */
    {"FuseQDQToSiLU", pass_fuse_qdq_silu, CS_GROUP_ALWAYS},
    {"FuseQDQToActivationLUT", pass_fuse_qdq_activation, CS_GROUP_ALWAYS},
    {"FuseQDQToAvgPool", pass_fuse_qdq_avg_pool, CS_GROUP_ALWAYS},
    {"FuseQDQToInt8Softmax", pass_fuse_qdq_softmax, CS_GROUP_ALWAYS},
    {"FuseQDQToInt8LayerNorm", pass_fuse_qdq_layer_norm, CS_GROUP_ALWAYS},
    {"FuseQDQToInt8Conv2D", pass_fuse_qdq_to_int8_conv2d, CS_GROUP_ALWAYS},
    {"FuseQDQToInt8MatMul", pass_fuse_qdq_to_int8_matmul, CS_GROUP_ALWAYS},
    {"FuseQDQToInt8BatchMatMul", pass_fuse_qdq_to_int8_batch_matmul, CS_GROUP_ALWAYS},
    {"FuseQDQToInt8Binary", pass_fuse_qdq_to_int8_binary, CS_GROUP_ALWAYS},
    {"EliminateQDQRoundTrip", pass_eliminate_qdq_round_trip, CS_GROUP_ALWAYS},
    {"DCE", pass_dce, CS_GROUP_ALWAYS},
    /* After the fusions, and after DCE has dropped the dequantizes they
     * left unread: a clamp table folds into its producer's clamp. */
    {"FoldClampLUT", pass_fold_clamp_lut, CS_GROUP_ALWAYS},
    /* After the int8 fusions made their tables, adds and muls: kernels
     * that compute a function of one int8 tensor become one table. */
    {"FoldEltwiseTable", pass_fold_eltwise_table, CS_GROUP_ALWAYS},
    /* 10. [MMALIB] LegalizeOps(custom map): float conv/matmul → int16 MMA
     * first, then every other op as without MMALIB. */
    {"LegalizeMMALIBInt16", pass_legalize_mmalib_i16, CS_GROUP_MMALIB},
    /* 9. weight-only int8 linear layers (after the MMALIB int16 path had
     * its pick, before what is left is legalized to float kernels) */
    {"FuseDequantizeMatmul", pass_fuse_dequantize_matmul, CS_GROUP_ALWAYS},
    {"FuseSDPADecode", pass_fuse_sdpa_decode, CS_GROUP_C7X},
    /* float Conv + Add where ORT fuses them: the sum's rounding order */
    {"FuseConvAddF32", pass_fuse_conv_add_f32, CS_GROUP_ALWAYS},
    {"MarkNchwcGlobalPool", pass_mark_nchwc_global_pool, CS_GROUP_ALWAYS},
    {"FuseMatMulNBitsBias", pass_fuse_matmul_nbits_bias, CS_GROUP_ALWAYS},
    {"LegalizeOps", pass_legalize, CS_GROUP_ALWAYS},
    {"FoldConstant", pass_fold_constants, CS_GROUP_ALWAYS},
    /* a BatchNormalization between DQ and Q, now k_dequantize → Mul → Add →
     * k_quantize with its folded constants: one int8 kernel */
    {"FuseQDQChannelAffine", pass_fuse_qdq_channel_affine, CS_GROUP_ALWAYS},
    /* a float mean of a dequantized int8 tensor (squeeze-excitation):
     * the int8 tensor read directly */
    {"FuseDequantizeReduceMean", pass_fuse_dequantize_reduce_mean, CS_GROUP_ALWAYS},
    /* After FoldClampLUT (the clamp it folds is the one the twin stores)
     * and FuseQDQChannelAffine: an exact layer, a table or a channel
     * affine writes the next exact layer's int16 input itself. */
    {"FuseWidenIntoProducer", pass_fuse_widen_into_producer, CS_GROUP_MMALIB},
    {"DCE", pass_dce, CS_GROUP_ALWAYS},
    /* Last: the final kernel calls and their constant weights are known. */
    {"PackWeights", pass_pack_weights, CS_GROUP_PACK_WEIGHTS},
};

static int group_enabled(cs_pass_group grp, const cs_target *t) {
  switch (grp) {
    case CS_GROUP_ALWAYS: return 1;
    case CS_GROUP_MMALIB: return t->mmalib;
    case CS_GROUP_PACK_WEIGHTS: return t->pack_weights;
    case CS_GROUP_C7X: return t->mcpu == CS_MCPU_C7X;
  }
  return 0;
}

/* The structural checks (cs_graph_verify) after pass `name`; NULL: after
 * the whole pipeline. */
static cs_status verify_after(cs_graph *g, const char *name) {
  cs_status st = cs_graph_verify(g);
  if (st == CS_ERR_NOMEM) return st; /* the verifier's own allocations failed */
  if (st == CS_OK) return CS_OK;
  char why[512];
  snprintf(why, sizeof why, "%s", cs_error_message());
  if (name) return cs_error(CS_ERR_INTERNAL, "IR invalid after pass %s: %s", name, why);
  return cs_error(CS_ERR_INTERNAL, "IR invalid after the passes (CSTATIC_VERIFY_EACH_PASS=1 names the pass): %s",
                  why);
}

/* The verifier runs once after the pipeline (and codegen runs it again
 * before it writes anything). After every pass, which names the pass
 * that broke the graph, it runs when CSTATIC_VERIFY_EACH_PASS is set to
 * anything but "" or "0" (the unit and e2e tests set it) or the IR is
 * dumped: about twenty verifies of a 100 000-node graph were a fifth of
 * its compile time. */
static int verify_each_pass(FILE *dump) {
  const char *e = getenv("CSTATIC_VERIFY_EACH_PASS");
  return dump || (e && *e && strcmp(e, "0") != 0);
}

cs_status cs_passes_run(cs_graph *g, const cs_target *t, FILE *dump) {
  int each = verify_each_pass(dump);
  if (dump) {
    fprintf(dump, "// ---- IR after import ----\n");
    cs_graph_print(g, dump);
  }
  for (size_t i = 0; i < sizeof kPipeline / sizeof kPipeline[0]; i++) {
    const cs_pass_entry *p = &kPipeline[i];
    if (!group_enabled(p->group, t)) continue;
    cs_status st = p->fn(g, t);
    if (st != CS_OK) return st;
    if (g->alloc_failed)
      return cs_error(CS_ERR_NOMEM, "out of memory in pass %s (a match could not be checked)", p->name);
    if (each && (st = verify_after(g, p->name)) != CS_OK) return st;
    if (dump) {
      fprintf(dump, "// ---- IR after %s ----\n", p->name);
      cs_graph_print(g, dump);
    }
  }
  if (!each) {
    cs_status st = verify_after(g, NULL);
    if (st != CS_OK) return st;
  }
  for (int i = 0; i < g->n_nodes; i++) {
    const cs_node *n = &g->nodes[i];
    if (!n->dead && !cs_op_is_kernel(n->op))
      return cs_error(CS_ERR_INTERNAL, "node '%s' (%s) was not lowered to a kernel", n->name, cs_op_name(n->op));
  }
  return CS_OK;
}
