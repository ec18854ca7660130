/*
 * FuseInt16ResidualAdd — a symmetric QDQ int16 Add of two activations of one
 * shape (and its ReLU) becomes the C7x int16 residual-add kernel
 * (match/mmalib_add.c, the int8 pass's matcher at int16).
 */
#include "match/mmalib_common.h"
#include "pass_list.h"

cs_status pass_fuse_int16_residual_add(cs_graph *g, const cs_target *t) {
  return cs_mm_fuse_residual_add(g, t, &cs_mm_int16);
}
