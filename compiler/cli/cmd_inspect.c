/* cstatic inspect MODEL.onnx: what the frontend sees in a model. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "eval/const_eval.h"
#include "frontend/onnx.h"

static const char usage[] =
    "usage: cstatic inspect MODEL.onnx\n"
    "\n"
    "Print a summary of an ONNX model: opset, inputs and outputs, op\n"
    "histogram, unsupported ops and the quantization scheme.\n"
    "\n"
    "options:\n"
    "  -h, --help   this text\n";

int cs_cmd_inspect(int argc, char **argv) {
  const char *model;
  int code = cs_cli_one_operand(argc, argv, "inspect", usage, "model", &model);
  if (code >= 0) return code;
  if (cs_onnx_inspect(model, cs_const_eval_node, stdout) != CS_OK) return cs_cli_fail("%s", cs_error_message());
  return CS_EXIT_OK;
}
