/*
 * qdq_tail.h — the end of every QDQ fusion pattern:
 *     v → [Relu | Clip(lo, hi)] → QuantizeLinear(s, zp) : int8
 * v and the activation's output must have a single consumer each (the
 * chain may not fan out or be a graph output).
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

/* Returns 1 and fills tail on a match (release tail->out with
 * cs_qparams_free), 0 otherwise. allow_act = 0 matches only v → Q. */
int cs_match_qdq_tail(cs_graph *g, int v, int allow_act, cs_qdq_tail *tail);

/* Per-tensor int8 DQ parameters of a DQ node id (0 if not per-tensor int8
 * or not constant). */
int cs_match_dq_params(cs_graph *g, int dq, cs_qparams *qp);

/* Take over the tail's output: remove the nodes from `first` through the
 * tail, add `op` producing the Q's output value (quant params set), and
 * return the new node id (-1 when out of memory, message recorded). */
int cs_replace_chain(cs_graph *g, const int *nodes, int n_nodes,
                     const cs_qdq_tail *tail, cs_op op, int n_inputs,
                     const int *inputs);

#endif
