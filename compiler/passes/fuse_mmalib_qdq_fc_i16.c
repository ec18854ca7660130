/*
 * FuseMMALIBQDQFCI16 — a QDQ int16 Gemm / MatMul as a fully-connected layer
 * becomes mmalib_matmul_bias_i16 (match/mmalib_fc.c, the int8 pass's matcher
 * at int16).
 */
#include "match/mmalib_common.h"
#include "pass_list.h"

cs_status pass_fuse_mmalib_qdq_fc_i16(cs_graph *g, const cs_target *t) { return cs_mm_fuse_fc(g, t, &cs_mm_int16); }
