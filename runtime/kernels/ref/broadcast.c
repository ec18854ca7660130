/*
 * broadcast.c — row iteration over a broadcast binary op's output.
 */
#include "ref_internal.h"

int32_t tidsp_ref_bc_init(tidsp_ref_bc_iter *it, const tidsp_broadcast *bc) {
  int32_t d;
  if (!it || !bc)
    return TIDSP_ERR_NULL;
  if (bc->rank < 0 || bc->rank > TIDSP_MAX_RANK)
    return TIDSP_ERR_SHAPE;
  it->bc = bc;
  it->a_off = 0;
  it->b_off = 0;
  it->rows = 1;
  it->inner = 1; /* rank 0: one element */
  it->a_step = 0;
  it->b_step = 0;
  for (d = 0; d < bc->rank; d++) {
    if (bc->shape[d] < 0)
      return TIDSP_ERR_SHAPE;
    it->idx[d] = 0;
    if (d < bc->rank - 1)
      it->rows *= bc->shape[d];
  }
  if (bc->rank > 0) {
    it->inner = bc->shape[bc->rank - 1];
    it->a_step = bc->a_stride[bc->rank - 1];
    it->b_step = bc->b_stride[bc->rank - 1];
    if (it->inner == 0)
      it->rows = 0;
  }
  return TIDSP_OK;
}
