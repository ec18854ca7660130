/*
 * EliminateQDQRoundTrip — a dequantize feeding a quantize directly:
 *
 *   Q_b( DQ_a(x:i8) ) : i8  →  x                 when a and b are equal
 *                          →  k_lut_i8(lut, x)   otherwise (a rescale)
 *
 * After the fusions, this is what remains between consecutive layers.
 */
#include <stdlib.h>
#include <string.h>

#include "pass_list.h"
#include "match/pattern.h"
#include "match/qdq_tail.h"

cs_status pass_eliminate_qdq_round_trip(cs_graph *g, const cs_target *t) {
  (void)t;
  int count = g->n_nodes;
  for (int i = 0; i < count; i++) {
    const cs_node *q = cs_graph_node(g, i);
    if (q->dead || q->op != CS_OP_QUANTIZE_LINEAR) continue;
    int dq = cs_match_dq_i8(g, q->inputs[0]);
    cs_qparams in;
    if (!cs_match_dq_params(g, dq, &in)) continue;
    cs_qparams out;
    if (cs_qparams_read(g, q, &out) != CS_OK) { cs_error_clear(); cs_qparams_free(&in); continue; }
    int qout = q->outputs[0];
    int x_int = cs_graph_node(g, dq)->inputs[0];
    if (cs_qparams_per_tensor(&out) && out.dtype == CS_DTYPE_I8) {
      if (cs_qparams_equal(&in, &out) && !cs_graph_is_output(g, qout)) {
        cs_graph_remove_node(g, i);
        cs_graph_replace_uses(g, qout, x_int);
      } else {
        char base[512];
        snprintf(base, sizeof base, "%s", q->name);
        int lut = cs_lut_const(g, base, NULL, &in, &out);
        char *origin = lut >= 0 ? cs_origin_join(g, (int[]){dq, i}, 2) : NULL;
        int k = -1;
        if (origin) {
          cs_graph_remove_node(g, i);
          int lin[2] = {lut, x_int};
          k = cs_add_kernel(g, CS_OP_K_LUT_I8, origin, 2, lin, qout);
          free(origin);
        }
        if (k >= 0) cs_graph_node(g, k)->k.lut.n = (int32_t)cs_value_numel(cs_graph_value(g, x_int));
        if (k < 0 || cs_value_set_quant(cs_graph_value(g, qout), -1, 1, out.scale, out.zps) != CS_OK) {
          cs_qparams_free(&in);
          cs_qparams_free(&out);
          return CS_ERR_NOMEM; /* message recorded */
        }
      }
    }
    cs_qparams_free(&in);
    cs_qparams_free(&out);
  }
  return CS_OK;
}
