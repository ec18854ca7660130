/*
 * onnx.h — the ONNX frontend: a .onnx file → IR graph.
 */
#ifndef CSTATIC_FRONTEND_ONNX_H
#define CSTATIC_FRONTEND_ONNX_H

#include <stdio.h>

#include "ir.h"

/* Parse, validate and build the IR with every shape inferred. On error
 * returns non-OK with cs_error_message() naming the file and the problem
 * (every unsupported op with its node name in one message). Initializers
 * (raw, typed, external data next to the model) become constants;
 * Constant nodes too. */
cs_status cs_onnx_load(const char *path, cs_graph **out);

/* `cstatic inspect`: a readable summary (opset, I/O, op histogram,
 * unsupported ops, quantization scheme) written to f. */
cs_status cs_onnx_inspect(const char *path, FILE *f);

#endif
