/*
 * FuseMMALIBQDQConv2dI16 — a plain (groups 1) QDQ int16 Conv becomes
 * mmalib_conv2d_i16 (match/mmalib_conv.c, the int8 pass's matcher at int16).
 */
#include "match/mmalib_common.h"
#include "pass_list.h"

cs_status pass_fuse_mmalib_qdq_conv2d_i16(cs_graph *g, const cs_target *t) {
  return cs_mm_fuse_conv(g, t, &cs_mm_int16, CS_MM_CONV_PLAIN);
}
