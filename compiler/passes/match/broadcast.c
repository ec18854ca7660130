#include <string.h>

#include "broadcast.h"

static int strides_for(const cs_value *v, const cs_value *y, int32_t *stride) {
  int off = y->rank - v->rank;
  if (off < 0) return 0;
  int64_t s = 1;
  for (int d = y->rank - 1; d >= 0; d--) {
    int vd = d - off;
    if (vd < 0) { stride[d] = 0; continue; }
    int64_t dim = v->shape[vd];
    if (dim == y->shape[d]) {
      stride[d] = (int32_t)s;
    } else if (dim == 1) {
      stride[d] = 0;
    } else {
      return 0;
    }
    s *= dim;
  }
  return 1;
}

int cs_broadcast_init(const cs_value *a, const cs_value *b, const cs_value *y,
                      tidsp_broadcast *bc) {
  memset(bc, 0, sizeof *bc);
  if (y->rank > TIDSP_MAX_RANK) return 0;
  bc->rank = y->rank;
  for (int d = 0; d < y->rank; d++) bc->shape[d] = (int32_t)y->shape[d];
  return strides_for(a, y, bc->a_stride) && strides_for(b, y, bc->b_stride);
}
