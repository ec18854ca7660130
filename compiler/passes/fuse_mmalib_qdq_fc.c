/*
 * FuseMMALIBQDQFC — a QDQ int8 Gemm / MatMul as a fully-connected layer becomes
 * mmalib_matmul_bias_i8 (the matcher and rewrite, shared with the int16 pass,
 * are match/mmalib_fc.c).
 */
#include "match/mmalib_common.h"
#include "pass_list.h"

cs_status pass_fuse_mmalib_qdq_fc(cs_graph *g, const cs_target *t) { return cs_mm_fuse_fc(g, t, &cs_mm_int8); }
