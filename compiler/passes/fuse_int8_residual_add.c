/*
 * FuseInt8ResidualAdd — a QDQ int8 Add of two activations of one shape (and
 * its ReLU) becomes the C7x residual-add kernel (the matcher and rewrite,
 * shared with the int16 pass, are match/mmalib_add.c).
 */
#include "match/mmalib_common.h"
#include "pass_list.h"

cs_status pass_fuse_int8_residual_add(cs_graph *g, const cs_target *t) {
  return cs_mm_fuse_residual_add(g, t, &cs_mm_int8);
}
