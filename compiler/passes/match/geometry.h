/*
 * geometry.h — Conv/Pool window geometry from ONNX attributes and the
 * inferred shapes (auto_pad resolved, ceil mode already in the output
 * shape). Shared by the fusions and legalization.
 */
#ifndef CSTATIC_GEOMETRY_H
#define CSTATIC_GEOMETRY_H

#include "ir.h"

typedef struct cs_window2d {
  int32_t k_h, k_w, stride_h, stride_w, dil_h, dil_w;
  int32_t pad_top, pad_left, pad_bottom, pad_right;
} cs_window2d;

/* For a 4-D NCHW Conv/MaxPool/AveragePool node: kernel from the
 * kernel_shape attr (or the weight's dims for Conv), strides, dilations,
 * pads (explicit or auto_pad). Returns CS_ERR_UNSUPPORTED naming the node
 * for non-2-D windows. */
cs_status cs_window2d_from_node(cs_graph *g, const cs_node *n, cs_window2d *w);

#endif
