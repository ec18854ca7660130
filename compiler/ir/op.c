/*
 * op.c — op names from ops.def, and the ONNX op_type → op map.
 */
#include "ir.h"

#include <string.h>

static const char *const op_names[CS_OP_COUNT_] = {
#define CS_OP(e, s) s,
#include "ops.def"
#undef CS_OP
};

const char *cs_op_name(cs_op op) {
  if ((int)op < 0 || op >= CS_OP_COUNT_) return "?";
  return op_names[op];
}

int cs_op_is_kernel(cs_op op) {
  /* ops.def lists kernel ops last and names them "k_…". */
  return (int)op >= 0 && op < CS_OP_COUNT_ && op_names[op][0] == 'k' &&
         op_names[op][1] == '_';
}

int cs_op_from_onnx(const char *op_type) {
  if (!op_type) return -1;
  /* (the first letter before strcmp: every node of a model comes here) */
  for (int i = 0; i < CS_OP_COUNT_; i++) {
    if (op_names[i][0] != op_type[0] || cs_op_is_kernel((cs_op)i)) continue; /* kernels: never from ONNX */
    if (!strcmp(op_names[i], op_type)) return i;
  }
  return -1;
}
