/*
 * pass_list.h — the passes of the pipeline, one file each. Each has the
 * same signature; registry.c orders them.
 */
#ifndef CSTATIC_PASS_LIST_H
#define CSTATIC_PASS_LIST_H

#include "ir.h"
#include "target.h"

typedef cs_status (*cs_pass_fn)(cs_graph *g, const cs_target *t);

cs_status pass_canonicalize(cs_graph *g, const cs_target *t);
cs_status pass_fold_batch_norm(cs_graph *g, const cs_target *t); /* ORT's ConvBNFusion */
cs_status pass_push_transpose_reduce_mean(cs_graph *g, const cs_target *t); /* ORT's transpose optimizer */
cs_status pass_fuse_layer_norm_f32(cs_graph *g, const cs_target *t); /* ORT's (Simplified)LayerNormFusion */
/* ReduceMean node rm starts a decomposed float LayerNorm FuseLayerNormF32
 * fuses (fuse_layer_norm_f32.c). */
int cs_match_layer_norm_f32(cs_graph *g, int rm);
/* MMALIB offload (-mmalib=1; each in its file, the shared bodies in match/mmalib_*.c). */
cs_status pass_mmalib_report_begin(cs_graph *g, const cs_target *t);
cs_status pass_fold_conv_bias_add(cs_graph *g, const cs_target *t); /* Conv → Add(bias) */
cs_status pass_mmalib_const_channels(cs_graph *g, const cs_target *t); /* constant channels made exact */
cs_status pass_mmalib_asym_stride(cs_graph *g, const cs_target *t); /* stride (2,1) as phases or 1 + a pick */
cs_status pass_mmalib_dilation(cs_graph *g, const cs_target *t); /* dilation as a dense kernel, zero taps */
cs_status pass_mmalib_out_s2d(cs_graph *g, const cs_target *t); /* small C_out: f·g pixels per channel */
cs_status pass_mmalib_pack_pixels(cs_graph *g, const cs_target *t); /* small C_out 1x1: pixel blocks */
cs_status pass_mmalib_pad_channels(cs_graph *g, const cs_target *t); /* C_out up to the tile */
cs_status pass_fuse_mmalib_qdq_conv2d(cs_graph *g, const cs_target *t); /* conv, depthwise, grouped */
cs_status pass_fuse_mmalib_qdq_fc(cs_graph *g, const cs_target *t); /* Gemm / MatMul as an FC */
cs_status pass_fuse_int8_residual_add(cs_graph *g, const cs_target *t); /* Add of two activations */
cs_status pass_fuse_mmalib_qdq_conv2d_i16(cs_graph *g, const cs_target *t); /* int16 twins: symmetric only */
cs_status pass_fuse_mmalib_qdq_dwconv2d_i16(cs_graph *g, const cs_target *t); /* 3x3 only */
cs_status pass_fuse_mmalib_qdq_fc_i16(cs_graph *g, const cs_target *t);
cs_status pass_fuse_int16_residual_add(cs_graph *g, const cs_target *t); /* d_zp = skip_zp = o_zp = 0 */
cs_status pass_legalize_mmalib_i16(cs_graph *g, const cs_target *t); /* the int16 legalize path */
cs_status pass_fuse_qdq_to_tidl_max_pool(cs_graph *g, const cs_target *t); /* -tidl-kernels=0: the C7x one */
cs_status pass_fuse_qdq_prelu_lut(cs_graph *g, const cs_target *t); /* Q(PRelu(DQ)) → a table per channel */
cs_status pass_quantize_concat_max_pool(cs_graph *g, const cs_target *t); /* Q(MaxPool(Concat(DQ…))) on int8 */
cs_status pass_quantize_before_moves(cs_graph *g, const cs_target *t); /* Q(moves(f)) → Q(moves(DQ(Q(f)))) */
cs_status pass_eliminate_qdq_transparent(cs_graph *g, const cs_target *t);
cs_status pass_eliminate_qdq_mixed_moves(cs_graph *g, const cs_target *t); /* moves of mixed DQs on int8 */
cs_status pass_fuse_qdq_silu(cs_graph *g, const cs_target *t); /* x·Sigmoid(x) → one table */
cs_status pass_fuse_qdq_activation(cs_graph *g, const cs_target *t);
cs_status pass_fuse_qdq_avg_pool(cs_graph *g, const cs_target *t);
cs_status pass_fuse_qdq_softmax(cs_graph *g, const cs_target *t);
cs_status pass_fuse_qdq_layer_norm(cs_graph *g, const cs_target *t);
cs_status pass_fuse_qdq_to_int8_conv2d(cs_graph *g, const cs_target *t);
cs_status pass_fuse_qdq_to_int8_matmul(cs_graph *g, const cs_target *t);
cs_status pass_fuse_qdq_to_int8_batch_matmul(cs_graph *g, const cs_target *t); /* two runtime operands */
cs_status pass_fuse_qdq_to_int8_binary(cs_graph *g, const cs_target *t);
cs_status pass_eliminate_qdq_round_trip(cs_graph *g, const cs_target *t);
cs_status pass_fold_clamp_lut(cs_graph *g, const cs_target *t);
cs_status pass_fold_eltwise_table(cs_graph *g, const cs_target *t); /* int8 kernels of one x → one table */
cs_status pass_fuse_widen_into_producer(cs_graph *g, const cs_target *t); /* -mmalib=1 */
cs_status pass_dce(cs_graph *g, const cs_target *t);
cs_status pass_fuse_dequantize_matmul(cs_graph *g, const cs_target *t); /* weight-only int8 */
cs_status pass_fuse_sdpa_decode(cs_graph *g, const cs_target *t); /* -mcpu=c7x */
cs_status pass_fuse_conv_add_f32(cs_graph *g, const cs_target *t); /* ORT's NCHWc Conv + Add (Sum) */
cs_status pass_mark_nchwc_global_pool(cs_graph *g, const cs_target *t); /* ORT's GAP summation order */
cs_status pass_mark_matmul_nbits(cs_graph *g, const cs_target *t); /* ORT's MatMulNBits, folded */
cs_status pass_fuse_matmul_nbits_bias(cs_graph *g, const cs_target *t); /* its bias Add */
cs_status pass_legalize(cs_graph *g, const cs_target *t);
cs_status pass_fold_constants(cs_graph *g, const cs_target *t);
cs_status pass_pack_weights(cs_graph *g, const cs_target *t); /* -pack-weights=1 */
cs_status pass_fuse_qdq_channel_affine(cs_graph *g, const cs_target *t); /* DQ → Mul → Add → Q (a BN) */
cs_status pass_fuse_dequantize_reduce_mean(cs_graph *g, const cs_target *t); /* DQ → ReduceMean on int8 */

/* Before a pass computes a constant result (FoldConstant, any evaluator of
 * constant subgraphs): may the graph hold output v of node n? CS_OK, or
 * CS_ERR_NOMEM naming the node, the tensor, its size and the memory limit
 * (fold_constants.c). Nothing is allocated. */
cs_status cs_fold_check_result(const cs_graph *g, const cs_node *n, const cs_value *v);

#endif
