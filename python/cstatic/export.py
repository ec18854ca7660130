"""PyTorch -> QDQ ONNX export, and the check every exported file must pass.

    export_qdq_onnx(converted, example_inputs, "q.onnx")   # PT2E module
    check_qdq("q.onnx")                                   # raises if folded

One exporter for everything: torch.onnx.export(dynamo=True) at opset 21 with
its default onnxscript optimizer. Opset 21 is the first with int16 (and
uint16) QuantizeLinear/DequantizeLinear, which the C7xMMAQuantizer's int16
flavour needs; int8 files use it too, so there is one path. On torch 2.13 /
onnxscript 0.7.2 the optimizer keeps 8/16-bit weights feeding
DequantizeLinear (older onnxscript folded them into float weights);
`check_qdq` counts them so a regression shows up as an error instead of a
silently float model. The optimizer also removes the Cast nodes the raw
export puts on every scale and zero point, and merges PT2E's
one-DQ-per-consumer copies into one DQ with several consumers (common
subexpression elimination).
"""

import collections
import contextlib
import io
import logging
import os
import warnings

# the exporter logs one line per torchvision op it cannot register, and
# torch's pytree logs deprecations: noise in every export
for _name in ("torch.onnx", "torch.utils._pytree"):
    logging.getLogger(_name).setLevel(logging.ERROR)

OPSET = 21

# ONNX ops that take a weight as input 1 (Conv W, Gemm B, MatMul B)
_WEIGHTED_OPS = ("Conv", "Gemm", "MatMul")


def export_qdq_onnx(model, example_inputs, path, input_names=None, output_names=None,
                    opset=OPSET):
    """Export `model` to the ONNX file `path`; returns `path`.

    model: a PT2E-converted GraphModule (convert_pt2e's result, re-captured
    here with torch.export as the exporter wants), a torch.export
    ExportedProgram, or a float nn.Module. example_inputs: tuple of example
    tensors. input_names / output_names: ONNX names for the graph's inputs
    and outputs (default: the exporter's). opset >= 21 is required for int16
    QDQ. The file is written whole or not at all; the exporter's chatter is
    shown only if the export fails.
    """
    import torch
    if not isinstance(example_inputs, tuple):
        raise TypeError(f"example_inputs must be a tuple of tensors, not "
                        f"{type(example_inputs).__name__}")
    if isinstance(model, torch.fx.GraphModule):
        model = torch.export.export(model, example_inputs)
    chatter = io.StringIO()
    try:
        with contextlib.redirect_stdout(chatter), warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            prog = torch.onnx.export(model, example_inputs, dynamo=True,
                                     opset_version=opset,
                                     input_names=input_names,
                                     output_names=output_names)
    except Exception as exc:
        raise RuntimeError(f"ONNX export to {path} failed: {exc}\n"
                           f"{chatter.getvalue()}") from exc
    tmp = path + ".tmp"
    prog.save(tmp)
    os.replace(tmp, path)
    return path


def op_histogram(model):
    return collections.Counter(n.op_type for n in model.graph.node)


def _is_activation(name, producer, graph_inputs):
    """Whether tensor `name` depends on a graph input (is computed from the
    data, not only from initializers)."""
    seen, todo = set(), [name]
    while todo:
        t = todo.pop()
        if t in graph_inputs:
            return True
        if t in seen or t not in producer:
            continue
        seen.add(t)
        todo.extend(i for i in producer[t].input if i)
    return False


def check_qdq(path):
    """Check a QDQ file: valid ONNX, and every weighted op's weight is an
    8- or 16-bit integer initializer feeding a DequantizeLinear (not folded
    to float).

    Returns a small dict of facts (op histogram, weight DQ count) for logs.
    """
    import onnx
    model = onnx.load(path)
    onnx.checker.check_model(model, full_check=True)
    g = model.graph
    inits = {t.name: t for t in g.initializer}
    producer = {o: n for n in g.node for o in n.output}
    int_types = (onnx.TensorProto.INT8, onnx.TensorProto.UINT8, onnx.TensorProto.INT16)
    graph_inputs = {i.name for i in g.input} - set(inits)
    weighted = [n for n in g.node if n.op_type in _WEIGHTED_OPS]
    if not weighted:
        raise ValueError(f"{path}: no Conv/Gemm/MatMul node")
    bad = []
    for n in weighted:
        src = producer.get(n.input[1])
        # ORT puts a Transpose between a Linear's weight DQ and MatMul
        if src is not None and src.op_type == "Transpose":
            src = producer.get(src.input[0])
        # attention's Q·Kᵀ and A·V: a MatMul of two activations (quantized,
        # or left float by the quantizer as XNNPACK's leaves SDPA's) has no
        # weight to check
        if n.op_type == "MatMul" and _is_activation(n.input[1], producer, graph_inputs):
            continue
        ok = (src is not None and src.op_type == "DequantizeLinear"
              and src.input[0] in inits
              and inits[src.input[0]].data_type in int_types)
        if not ok:
            bad.append(n.name or n.output[0])
    if bad:
        raise ValueError(f"{path}: {len(bad)} of {len(weighted)} weighted ops "
                         f"do not take an int8/int16 weight through DequantizeLinear "
                         f"(first: {bad[0]}); was the QDQ folded to float?")
    return {"ops": op_histogram(model), "weight_dqs": len(weighted)}
