/*
 * qdq_tail.h — the QDQ edges of every fusion pattern, for one integer
 * dtype (int8 for the int8 fusions; int8 or int16 for the MMALIB passes):
 *     DQ(x:dt, per-tensor constant qparams)            (the data)
 *     DQ(w:dt constant, per-tensor or per-axis)        (the weight)
 *     v → [Relu | Clip(lo, hi)] → QuantizeLinear(s, zp) : dt   (the tail)
 * In the tail, v and the activation's output must have a single consumer
 * each (the chain may not fan out or be a graph output).
 */
#ifndef CSTATIC_QDQ_TAIL_H
#define CSTATIC_QDQ_TAIL_H

#include "quant/quant.h"

typedef struct cs_qdq_tail {
  int act;       /* Relu/Clip node id, or -1 */
  int q;         /* QuantizeLinear node id */
  float lo, hi;  /* the activation's float range (±INFINITY if none) */
  cs_qparams out;
} cs_qdq_tail;

/* Returns 1 and fills tail on a match with a Q to `dt` (release tail->out
 * with cs_qparams_free), 0 otherwise. allow_act = 0 matches only v → Q. */
int cs_match_qdq_tail_as(cs_graph *g, int v, int allow_act, cs_dtype dt, cs_qdq_tail *tail);
/* cs_match_qdq_tail_as for int8. */
int cs_match_qdq_tail(cs_graph *g, int v, int allow_act, cs_qdq_tail *tail);

/* The offset of ONNX Runtime's uint8 domain for a chain ending in tail
 * (kernels.h "The uint8 domain"): 128 where the model's activations were
 * uint8 (the Q's output was canonicalized from uint8), else 0. */
int32_t cs_qdq_tail_domain_offset(cs_graph *g, const cs_qdq_tail *tail);

/* v is DequantizeLinear of a `dt` tensor with per-tensor constant qparams:
 * the DQ node id (qp filled, release with cs_qparams_free), else -1. */
int cs_match_dq_as(cs_graph *g, int v, cs_dtype dt, cs_qparams *qp);

/* Per-tensor int8 DQ parameters of a DQ node id (0 if not per-tensor int8
 * or not constant). */
int cs_match_dq_params(cs_graph *g, int dq, cs_qparams *qp);

/* DQ(x) → node → Q, the int8 pattern around a one-input op that works
 * along an axis (Softmax, LayerNormalization). */
typedef struct cs_qdq_around {
  int x;            /* the int8 input */
  cs_qparams xq;    /* its per-tensor parameters */
  cs_qdq_tail tail; /* [Relu] → Q after the node */
  int64_t axis;     /* the node's "axis" (default -1) counted from the front of x's shape; not checked */
} cs_qdq_around;

/* 1 when node id sits in that pattern (*m filled; release it with
 * cs_qdq_around_free), 0 when not (nothing held). */
int cs_match_qdq_around(cs_graph *g, int id, cs_qdq_around *m);
void cs_qdq_around_free(cs_qdq_around *m);

/* w is DQ(`dt` constant), per-tensor or per-axis on `axis`, with one zero
 * point for all channels: fills qp and the DQ node id, returns 1. */
int cs_match_weight_dq_as(cs_graph *g, int w, int axis, cs_dtype dt, cs_qparams *qp, int *wdq);

/* Take over the tail's output: remove the nodes from `first` through the
 * tail, add `op` producing the Q's output value (quant params set), and
 * return the new node id (-1 when out of memory, message recorded). */
int cs_replace_chain(cs_graph *g, const int *nodes, int n_nodes,
                     const cs_qdq_tail *tail, cs_op op, int n_inputs,
                     const int *inputs);

/* A table between a dequantize and a quantize with a MaxPool before the
 * Q: f(DQ(x)) → MaxPool → Q. Q is monotone non-decreasing, so Q(max v_i)
 * = max Q(v_i) for any values v_i (no NaN among them): the pool may take
 * the table's int8 codes instead of the floats. The MaxPool that alone
 * reads value v (one output), else -1. */
int cs_match_max_pool_after(cs_graph *g, int v);
/* Node `act` (read by MaxPool `pool` alone) becomes `op` (inputs as
 * given) writing the Q's codes, a new value t with the Q's parameters,
 * and a new DequantizeLinear with the Q's scale and zero point gives the
 * pool's reader what it read:
 *   int8_pool 0: DQ(t) → MaxPool → Q, for the max pool passes (which
 *     make it an int8 pool: they run after the caller);
 *   int8_pool 1: MaxPool(t) → DQ → Q, the int8 pool made here (as
 *     EliminateQDQTransparent would), the DQ → Q round trip left for
 *     EliminateQDQRoundTrip (for a caller after the max pool passes).
 * Returns the new node's id (-1 when out of memory, message recorded). */
int cs_table_before_pool(cs_graph *g, int act, int pool, const cs_qdq_tail *tail, int int8_pool, cs_op op,
                         int n_inputs, const int *inputs);

#endif
