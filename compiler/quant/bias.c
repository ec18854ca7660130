/*
 * bias.c — the int32 bias of a fused integer layer (DESIGN §5: zero-point
 * corrections and biases are folded at compile time, here). Finding the
 * bias in the graph is the matcher's job (passes/match/fused_common.h);
 * this file only turns the value it found into the kernel's constant.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "quant.h"

int cs_bias_i32_const(cs_graph *g, int b, int quantized, float xs, const float *ws, int ws_count, int channels,
                      const char *base) {
  int32_t *out = malloc(sizeof(int32_t) * (size_t)channels);
  if (!out) {
    cs_error(CS_ERR_NOMEM, "'%s': out of memory for %d bias values", base, channels);
    return -3;
  }
  const cs_value *bv = cs_graph_value(g, b);
  if (quantized) {
    if (!bv->data || bv->dtype != CS_DTYPE_I32 || cs_value_numel(bv) != channels) { free(out); return -2; }
    memcpy(out, bv->data, sizeof(int32_t) * (size_t)channels);
  } else {
    if (!bv->data || bv->dtype != CS_DTYPE_F32 || cs_value_numel(bv) != channels) { free(out); return -2; }
    /* b / (xs·ws[c]) rounded to nearest even, saturated to int32: the
     * integer a QDQ bias of scale xs·ws[c] would have held. */
    for (int c = 0; c < channels; c++) {
      float s = xs * ws[ws_count > 1 ? c : 0];
      float q = ((const float *)bv->data)[c] / s;
      double r = nearbyint((double)q);
      if (r > 2147483647.0) r = 2147483647.0;
      if (r < -2147483648.0) r = -2147483648.0;
      out[c] = (int32_t)r;
    }
  }
  int64_t shape[1] = {channels};
  int id = cs_add_const_named(g, base, "bias_i32", CS_DTYPE_I32, 1, shape, out);
  free(out);
  return id < 0 ? -3 : id;
}
