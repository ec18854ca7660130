/*
 * FuseMMALIBQDQConv2d — every QDQ int8 Conv MMALIB can take (plain, depthwise,
 * grouped) becomes its MMALIB call; the matcher and rewrite, shared with the
 * int16 passes, are match/mmalib_conv.c.
 */
#include "match/mmalib_common.h"
#include "pass_list.h"

cs_status pass_fuse_mmalib_qdq_conv2d(cs_graph *g, const cs_target *t) {
  return cs_mm_fuse_conv(g, t, &cs_mm_int8, CS_MM_CONV_ANY);
}
