/*
 * mmalib_phases.h — a conv with an asymmetric stride (s_h, s_w), the larger
 * S = r·s the smaller s, as r phases at stride (S, S) interleaved
 * (MMALIBAsymStride's form, and MMALIBOutS2D's for an f × g split with f ≠
 * g). Along the axis of the smaller stride, output m·r + j is output m of
 * the conv at stride (S, S) whose window starts j·s later: its pads there
 * (begin − j·s, end_j), end_j the padding that gives every phase ⌈len/r⌉
 * positions. Each output reads the same window, weights, bias and
 * requantization as before, so it is the same integer.
 */
#ifndef CSTATIC_MMALIB_PHASES_H
#define CSTATIC_MMALIB_PHASES_H

#include "ir.h"
#include "mmalib_common.h"
#include "qdq_tail.h"

/* Most phases a rewrite makes: a larger stride ratio is not tried (each
 * phase reads the whole input once more). */
#define CS_MM_MAX_PHASES 8

/* A geometry of a conv, set on its node in place (strides, pads, its
 * output's H and W): a candidate the conv pass's rule is asked about, or
 * the node's own to put back. */
typedef struct cs_mm_geom {
  int64_t strides[2], pads[4], hw[2];
} cs_mm_geom;

/* The phases of a conv geometry: how many, along which axis. */
typedef struct cs_mm_phases {
  int r;                          /* phases: S / s */
  int axis;                       /* 0 rows, 1 columns: the smaller stride's */
  cs_mm_geom ph[CS_MM_MAX_PHASES]; /* phase j's geometry at stride (S, S) */
} cs_mm_phases;

/* The node's geometry as it stands. */
void cs_mm_geom_of(cs_graph *g, int conv_id, cs_mm_geom *c);
/* Set c on the node (CS_ERR_NOMEM when the attributes cannot be set). */
cs_status cs_mm_geom_set(cs_graph *g, int conv_id, const cs_mm_geom *c);
/* The phases of conv_id as it stands (explicit pads, batch 1): 1 and *p
 * filled when its strides differ, the larger is a multiple r ≤
 * CS_MM_MAX_PHASES of the smaller and x's begin padding along the axis is
 * at least (r − 1)·s; else 0. */
int cs_mm_phases_of(cs_graph *g, int conv_id, cs_mm_phases *p);
/* *take = whether the conv pass would offload the conv (C_out as c_out)
 * in each of p's geometries; the node is put back as it was. */
cs_status cs_mm_phases_offloaded(cs_graph *g, const cs_target *t, int conv_id, const cs_mm_dtype *d, int64_t c_out,
                                 const cs_mm_phases *p, int *take);
/* The rewrite: the conv node becomes phase 0, copies of it and its tail
 * (act, Q) phases 1…r−1, and a k_concat interleaves their outputs into the
 * tail's output (through a k_slice when r phases overshoot it). */
cs_status cs_mm_build_phases(cs_graph *g, int conv_id, const cs_qdq_tail *tail, const cs_mm_phases *p,
                             const char *base);
#endif
