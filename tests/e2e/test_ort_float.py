"""Where ONNX Runtime computes in float between a DequantizeLinear and a
QuantizeLinear, and cstatic with it (-ort-exact=1, the default).

EliminateQDQTransparent sinks a dequantize below data-movement ops so that
the fusions meet it. ORT's own QDQ propagation crosses Reshape, Transpose,
Squeeze, Unsqueeze, Slice and MaxPool only: after a Flatten, Split, Gather,
Expand or a Concat that no Q follows, ORT 1.30 runs the next op in float
(its optimized graph keeps Conv, Add, Mul; measured at opsets 13, 17 and
21). There an int8 fusion differs from ORT's bytes (Add on ~8 % of the
outputs, Mul ~1.5 %, Conv rarely), so cstatic marks such a dequantize
(pattern.h CS_ATTR_ORT_FLOAT) and the conv, Add and Mul fusions leave the op
in float, whose kernels give ORT's bytes. Through the ops ORT does cross,
both fuse, and the bytes agree as before. -ort-exact=0 fuses everywhere.

Every graph: float x [1, 16, 8, 8] -> Q -> DQ -> movement -> op (int8
weights, or a second int8 operand) -> Q -> DQ -> y.
"""
import json
import os
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from cstatic_cli import cstatic

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import ort_ref  # noqa: E402

C, H, W = 16, 8, 8
ORT_CROSSES = ("reshape", "transpose", "unsqueeze_squeeze", "slice", "maxpool")
ORT_STOPS = ("flatten", "split", "gather", "expand", "concat")
# the int8 kernel of each op, and the float kernel it runs as otherwise
INT8 = {"conv": "tidsp_conv2d_i8", "add": "tidsp_add_i8", "mul": "tidsp_mul_i8"}
FLOAT = {"conv": "tidsp_conv2d_f32", "add": "tidsp_binary_f32", "mul": "tidsp_binary_f32"}


def _const(inits, name, value, dtype):
    inits.append(numpy_helper.from_array(np.array(value, dtype), name))
    return name


def build(path, movement, op, opset=17):
    """The graph above; a Flatten feeds Add/Mul only (rank 2), a Split's
    other half and an Expand's batch of 2 are graph outputs."""
    rng = np.random.default_rng(7)
    inits, outs = [], []
    _const(inits, "xs", 0.05, np.float32), _const(inits, "xz", 3, np.int8)
    _const(inits, "ys", 0.1, np.float32), _const(inits, "yz", -5, np.int8)
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"])]
    shape = [1, C, H, W]
    if movement == "reshape":
        nodes.append(helper.make_node("Reshape", ["xd", _const(inits, "rs", [1, C, H, W], np.int64)], ["m"]))
    elif movement == "transpose":
        nodes.append(helper.make_node("Transpose", ["xd"], ["m"], perm=[0, 1, 3, 2]))
    elif movement == "unsqueeze_squeeze":
        ax = _const(inits, "ax", [0], np.int64)
        nodes += [helper.make_node("Unsqueeze", ["xd", ax], ["u"]), helper.make_node("Squeeze", ["u", ax], ["m"])]
    elif movement == "slice":
        nodes.append(helper.make_node("Slice", ["xd", _const(inits, "st", [0], np.int64),
                                                _const(inits, "en", [8], np.int64), _const(inits, "sa", [1], np.int64)],
                                      ["m"]))
        shape = [1, 8, H, W]
    elif movement == "maxpool":
        nodes.append(helper.make_node("MaxPool", ["xd"], ["m"], kernel_shape=[2, 2], pads=[0, 0, 1, 1]))
    elif movement == "flatten":
        nodes.append(helper.make_node("Flatten", ["xd"], ["m"], axis=1))
        shape = [1, C * H * W]
    elif movement == "split":
        nodes.append(helper.make_node("Split", ["xd", _const(inits, "sp", [8, 8], np.int64)], ["m", "other"], axis=1))
        nodes += [helper.make_node("QuantizeLinear", ["other", "ys", "yz"], ["oq"]),
                  helper.make_node("DequantizeLinear", ["oq", "ys", "yz"], ["y_other"])]
        outs.append("y_other")
        shape = [1, 8, H, W]
    elif movement == "gather":
        nodes.append(helper.make_node("Gather", ["xd", _const(inits, "gi", list(range(8)), np.int64)], ["m"], axis=1))
        shape = [1, 8, H, W]
    elif movement == "expand":
        nodes.append(helper.make_node("Expand", ["xd", _const(inits, "es", [2, C, H, W], np.int64)], ["m"]))
        shape = [2, C, H, W]
    elif movement == "concat":
        nodes += [helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd2"]),
                  helper.make_node("Concat", ["xd", "xd2"], ["m"], axis=1)]
        shape = [1, 2 * C, H, W]
    if op == "conv":
        c_in = shape[1]
        ws = rng.uniform(0.002, 0.01, 16).astype(np.float32)
        _const(inits, "w", rng.integers(-127, 128, (16, c_in, 3, 3)), np.int8)
        _const(inits, "wsc", ws, np.float32), _const(inits, "wz", np.zeros(16), np.int8)
        _const(inits, "b", rng.integers(-500, 500, 16), np.int32)
        _const(inits, "bs", np.float32(0.05) * ws, np.float32), _const(inits, "bz", np.zeros(16), np.int32)
        nodes += [helper.make_node("DequantizeLinear", ["w", "wsc", "wz"], ["wd"], axis=0),
                  helper.make_node("DequantizeLinear", ["b", "bs", "bz"], ["bd"], axis=0),
                  helper.make_node("Conv", ["m", "wd", "bd"], ["f"], pads=[1, 1, 1, 1])]
    elif op == "matmul":
        _const(inits, "w", rng.integers(-127, 128, (W, 16)), np.int8)
        _const(inits, "wsc", 0.01, np.float32), _const(inits, "wz", 0, np.int8)
        nodes += [helper.make_node("DequantizeLinear", ["w", "wsc", "wz"], ["wd"]),
                  helper.make_node("MatMul", ["m", "wd"], ["f"])]
    elif op == "avgpool":
        nodes.append(helper.make_node("AveragePool", ["m"], ["f"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                                      count_include_pad=1))
    else:
        _const(inits, "a", rng.integers(-128, 128, shape), np.int8)
        _const(inits, "as", 0.07, np.float32), _const(inits, "az", -2, np.int8)
        nodes += [helper.make_node("DequantizeLinear", ["a", "as", "az"], ["ad"]),
                  helper.make_node(op.capitalize(), ["m", "ad"], ["f"])]
    nodes += [helper.make_node("QuantizeLinear", ["f", "ys", "yz"], ["fq"]),
              helper.make_node("DequantizeLinear", ["fq", "ys", "yz"], ["y"])]
    y_shape = {"conv": [shape[0], 16, H, W], "matmul": shape[:-1] + [16]}.get(op, shape)
    g = helper.make_graph(nodes, "ort_float", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, W])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, y_shape)] +
                          [helper.make_tensor_value_info(o, TensorProto.FLOAT, [1, 8, H, W]) for o in outs], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)
    return path


def ort_y(path, x):
    """ORT's y for every image of x, and whether its optimized graph still
    has the float op."""
    opt = str(path) + ".opt.onnx"
    sess = ort_ref.session(str(path), config={"session.qdqisint8allowed": "1"}, optimized_path=opt)
    ops = {n.op_type for n in onnx.load(opt).graph.node}
    y = np.concatenate([sess.run(["y"], {"x": x[i:i + 1]})[0] for i in range(len(x))])
    return y, ops


def cstatic_y(tmp_path, model, x, target, tag):
    out = tmp_path / tag
    cstatic("compile", model, "-o", out, "-t", target, "-q")
    np.save(tmp_path / "x.npy", x)
    n_out = len(onnx.load(str(model)).graph.output)
    outs = sum((["-o", str(tmp_path / f"{tag}.y{j}.npy")] for j in range(n_out)), [])
    cstatic("run", out, "-i", tmp_path / "x.npy", *outs)
    man = json.loads((out / "manifest.json").read_text())
    kernels = {k.removesuffix("__ref") for k in man["totals"]["kernels"]}
    return np.load(tmp_path / f"{tag}.y0.npy"), kernels, man


def inputs():
    return np.random.default_rng(3).normal(0.0, 2.0, (4, C, H, W)).astype(np.float32)


def cases():
    for movement in ORT_CROSSES + ORT_STOPS:
        for op in ("conv", "add", "mul"):
            if op == "conv" and movement in ("flatten", "expand"):
                continue  # a rank-2 input; a batch of 2 (N = 1 only)
            yield movement, op


@pytest.mark.parametrize("movement,op", list(cases()))
def test_bytes_are_orts(tmp_path, movement, op):
    """cstatic gives ORT's bytes; it fuses the op to int8 exactly where ORT
    does (QLinear*), and leaves it float where ORT does."""
    model = build(tmp_path / "m.onnx", movement, op)
    x = inputs()
    ref, ort_ops = ort_y(model, x)
    ort_float = op.capitalize() in ort_ops
    assert ort_float == (movement in ORT_STOPS), f"ORT's optimized graph: {sorted(ort_ops)}"
    y, kernels, _ = cstatic_y(tmp_path, model, x, "c_static_lib", "cs")
    assert (INT8[op] in kernels) == (not ort_float) and (FLOAT[op] in kernels) == ort_float, sorted(kernels)
    diff = int((y.reshape(ref.shape) != ref).sum())
    assert diff == 0, f"{diff} of {ref.size} outputs differ from ORT's"


@pytest.mark.parametrize("opset", [13, 21])
@pytest.mark.parametrize("movement", ORT_STOPS)
def test_ort_stops_at_every_opset(tmp_path, movement, opset):
    """The same five ops stop ORT's propagation at opsets 13 and 21 (an
    Add: the most outputs differ there when fused)."""
    model = build(tmp_path / "m.onnx", movement, "add", opset)
    x = inputs()
    ref, ort_ops = ort_y(model, x)
    assert "Add" in ort_ops, sorted(ort_ops)
    y, kernels, _ = cstatic_y(tmp_path, model, x, "c_static_lib", "cs")
    assert FLOAT["add"] in kernels and INT8["add"] not in kernels, sorted(kernels)
    assert np.array_equal(y.reshape(ref.shape), ref)


@pytest.mark.parametrize("movement", ORT_STOPS)
def test_ort_exact_0_fuses_through_every_op(tmp_path, movement):
    """-ort-exact=0 takes the int8 Add whatever ORT does: bytes within one
    step of ORT's, and some differ (the fused formula is not ORT's float
    one: this is what -ort-exact=1 avoids)."""
    model = build(tmp_path / "m.onnx", movement, "add")
    x = inputs()
    ref, _ = ort_y(model, x)
    y, kernels, _ = cstatic_y(tmp_path, model, x, "c_static_lib -ort-exact=0", "fast")
    assert INT8["add"] in kernels and FLOAT["add"] not in kernels, sorted(kernels)
    d = np.abs(y.reshape(ref.shape) - ref)
    assert d.max() <= 0.1 + 1e-6 and (d > 0).any()


def test_c7x_target_gives_orts_bytes_too(tmp_path):
    """With -mcpu=c7x -mmalib=1: a conv after a Split stays a float conv,
    after a Slice it is the int8 conv; ORT's bytes both ways."""
    x = inputs()
    for movement, kernel in (("split", FLOAT["conv"]), ("slice", INT8["conv"])):
        model = build(tmp_path / f"{movement}.onnx", movement, "conv")
        ref, _ = ort_y(model, x)
        y, kernels, _ = cstatic_y(tmp_path, model, x, "c_static_lib -mcpu=c7x -mmalib=1", f"c7x_{movement}")
        assert kernel in kernels, sorted(kernels)
        assert np.array_equal(y.reshape(ref.shape), ref), movement


@pytest.mark.xfail(strict=True, reason="after a Split ORT runs a float MatMul (SGEMM on the weight's runtime "
                   "DequantizeLinear; one row: its matrix-vector kernel) and a float AveragePool whose orders "
                   "cstatic's float path does not follow, so cstatic keeps its int8 fusions: ~0.2 % and ~3 % "
                   "of the outputs differ, by 1 LSB (match/pattern.h cs_match_ort_keeps_float)")
@pytest.mark.parametrize("op", ["matmul", "avgpool"])
def test_fc_and_average_pool_after_split(tmp_path, op):
    model = build(tmp_path / "m.onnx", "split", op)
    x = inputs()
    ref, ort_ops = ort_y(model, x)
    assert {"matmul": "MatMul", "avgpool": "AveragePool"}[op] in ort_ops
    y, _, _ = cstatic_y(tmp_path, model, x, "c_static_lib", "cs")
    assert np.array_equal(y.reshape(ref.shape), ref)


# A Pad between a DQ and a Q (Swin pads after its LayerNorm): the pad value
# becomes the int8 code that dequantizes to it exactly, and the Pad runs on
# int8 (EliminateQDQTransparent); a value no code gives stays float.
PAD_VALUE_EXACT = float(np.float32(4) * np.float32(0.05))  # DQ(7) with xs 0.05, xz 3


@pytest.mark.parametrize("mode,value,on_int8", [("constant", None, True), ("constant", PAD_VALUE_EXACT, True),
                                                ("constant", 0.123, False), ("edge", None, True),
                                                ("reflect", None, True)],
                         ids=["zero", "exact_value", "no_code", "edge", "reflect"])
def test_pad_between_dq_and_q(tmp_path, mode, value, on_int8):
    inits = []
    _const(inits, "xs", 0.05, np.float32), _const(inits, "xz", 3, np.int8)
    _const(inits, "ys", 0.1, np.float32), _const(inits, "yz", -5, np.int8)
    pad_in = ["xd", _const(inits, "pads", [0, 0, 1, 2, 0, 0, 2, 1], np.int64)]
    if value is not None:
        pad_in.append(_const(inits, "pv", value, np.float32))
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("Pad", pad_in, ["p"], mode=mode),
             helper.make_node("QuantizeLinear", ["p", "ys", "yz"], ["pq"]),
             helper.make_node("DequantizeLinear", ["pq", "ys", "yz"], ["y"])]
    g = helper.make_graph(nodes, "pad", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, W])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, C, H + 3, W + 3])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    path = tmp_path / "pad.onnx"
    onnx.save(m, path)
    x = inputs()[:1]
    want = ort_ref.session(str(path)).run(["y"], {"x": x})[0]
    y, kernels, _ = cstatic_y(tmp_path, path, x, "c_static_lib", "pad")
    src = (tmp_path / "pad" / "lib0.c").read_text()
    # on int8: only the graph input's quantize and the output's dequantize stay
    assert (src.count("tidsp_quantize(") == 1 and src.count("tidsp_dequantize(") == 1) == on_int8, kernels
    assert np.array_equal(y, want)
