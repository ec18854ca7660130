"""PyTorch -> ONNX export and the checks every generated file must pass.

One exporter for everything: torch.onnx.export(dynamo=True) at opset 21 with
its default onnxscript optimizer. On torch 2.13 / onnxscript 0.7.2 that
optimizer keeps int8 weights feeding DequantizeLinear (older onnxscript
folded them into float weights); `check_qdq` counts them so a regression
shows up as an error instead of a silently float model. The optimizer also
removes the Cast nodes the raw export puts on every scale and zero point,
and merges PT2E's one-DQ-per-consumer copies into one DQ with several
consumers (common subexpression elimination).
"""

import collections
import contextlib
import io
import logging
import os
import warnings

import onnx
import torch

# the exporter logs one line per torchvision op it cannot register, and
# torch's pytree logs deprecations: noise in every generator run
for _name in ("torch.onnx", "torch.utils._pytree"):
    logging.getLogger(_name).setLevel(logging.ERROR)

OPSET = 21
INPUT_NAME = "input"
OUTPUT_NAME = "logits"

# ONNX ops that take a weight as input 1 (Conv W, Gemm B, MatMul B)
_WEIGHTED_OPS = ("Conv", "Gemm", "MatMul")


def export_onnx(model, example, path):
    """Export `model` (nn.Module or PT2E-converted GraphModule) to `path`.

    The exporter's progress chatter goes to a buffer that is shown only if
    the export fails.
    """
    if isinstance(model, torch.fx.GraphModule):
        # a converted PT2E module is re-captured, as the exporter wants
        model = torch.export.export(model, example)
    chatter = io.StringIO()
    try:
        with contextlib.redirect_stdout(chatter), warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            prog = torch.onnx.export(model, example, dynamo=True,
                                     opset_version=OPSET,
                                     input_names=[INPUT_NAME],
                                     output_names=[OUTPUT_NAME])
    except Exception as exc:
        raise RuntimeError(f"ONNX export to {path} failed: {exc}\n"
                           f"{chatter.getvalue()}") from exc
    tmp = path + ".tmp"
    prog.save(tmp)
    os.replace(tmp, path)


def op_histogram(model):
    return collections.Counter(n.op_type for n in model.graph.node)


def check_qdq(path):
    """Check a QDQ file: valid ONNX, and every weighted op's weight is an
    8-bit initializer feeding a DequantizeLinear (not folded to float).

    Returns a small dict of facts (op histogram, weight DQ count) for logs.
    """
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    int8_types = (onnx.TensorProto.INT8, onnx.TensorProto.UINT8)
    weighted = [n for n in g.node if n.op_type in _WEIGHTED_OPS]
    if not weighted:
        raise ValueError(f"{path}: no Conv/Gemm/MatMul node")
    bad = []
    for n in weighted:
        src = producer.get(n.input[1])
        # ORT puts a Transpose between a Linear's weight DQ and MatMul
        if src is not None and src.op_type == "Transpose":
            src = producer.get(src.input[0])
        ok = (src is not None and src.op_type == "DequantizeLinear"
              and src.input[0] in inits
              and inits[src.input[0]].data_type in int8_types)
        if not ok:
            bad.append(n.name or n.output[0])
    if bad:
        raise ValueError(f"{path}: {len(bad)} of {len(weighted)} weighted ops "
                         f"do not take an int8 weight through DequantizeLinear "
                         f"(first: {bad[0]}); was the QDQ folded to float?")
    return {"ops": op_histogram(model), "weight_dqs": len(weighted)}
