/*
 * unary_fns.h — a unary float node as the parameters of one
 * tidsp_unary_f32 call (the rows of cstatic/unary_ops.def). The lowering
 * to k_unary_f32 and the activation tables (FuseQDQToActivationLUT, which
 * evaluates them with that runtime kernel) both read a node through here,
 * so a table entry is the float path's value bit for bit.
 */
#ifndef CSTATIC_UNARY_FNS_H
#define CSTATIC_UNARY_FNS_H

#include "ir.h"

typedef enum cs_unary_match {
  CS_UNARY_NONE = 0,      /* not a unary float op */
  CS_UNARY_OK = 1,        /* *p holds op, alpha, beta, lo, hi (n = 0) */
  CS_UNARY_NONCONST = -1, /* Clip whose bounds are not scalar float constants */
  CS_UNARY_EMPTY = -2     /* Clip whose min is above its max (or NaN) */
} cs_unary_match;

cs_unary_match cs_unary_params_of(cs_graph *g, const cs_node *n, tidsp_unary_f32_params *p);

#endif
