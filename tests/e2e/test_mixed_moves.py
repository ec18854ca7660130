"""Moves over dequantized tensors of different parameters (ShuffleNetV2's
unit as PT2E exports it: Concat of a float half and DQ(branch), the channel
shuffle Reshape -> Transpose -> Reshape, Split; nothing quantizes the
Concat). EliminateQDQMixedMoves runs them on the int8 codes and makes each Q
after them a table per channel (tidsp_lut_i8_select); ORT runs them in float.
The bytes must be ORT's, on every opset's Split form, for int8 and uint8
activations, on the host and the C7x target; a Q whose input's sources vary
along another axis than the channels keeps the float path.
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

C, H, W = 8, 5, 6


def shuffle_unit(path, opset, dtype, channels_last=False):
    """x0, x1 -> Q/DQ each (own scales) -> Concat -> shuffle -> Split: half 1
    -> [Transpose to NHWC] -> Q -> DQ = y0; Concat(half 0, DQ(x2)) -> Q -> DQ = y1."""
    zp = (lambda z: z + 128) if dtype == np.uint8 else (lambda z: z)
    inits = []

    def const(name, value, dt):
        inits.append(numpy_helper.from_array(np.array(value, dt), name))
        return name

    nodes = []
    for i, (s, z) in enumerate(((0.05, 3), (0.031, -7), (0.022, -128))):
        const(f"s{i}", s, np.float32), const(f"z{i}", zp(z), dtype)
        nodes += [helper.make_node("QuantizeLinear", [f"x{i}", f"s{i}", f"z{i}"], [f"q{i}"]),
                  helper.make_node("DequantizeLinear", [f"q{i}", f"s{i}", f"z{i}"], [f"d{i}"])]
    const("r5", [1, 2, C, H, W], np.int64), const("r4", [1, 2 * C, H, W], np.int64)
    nodes += [helper.make_node("Concat", ["d0", "d1"], ["cat"], axis=1),
              helper.make_node("Reshape", ["cat", "r5"], ["v5"]),
              helper.make_node("Transpose", ["v5"], ["t5"], perm=[0, 2, 1, 3, 4]),
              helper.make_node("Reshape", ["t5", "r4"], ["sh"])]
    if opset >= 18:
        nodes.append(helper.make_node("Split", ["sh"], ["h0", "h1"], axis=1, num_outputs=2))
    else:
        nodes.append(helper.make_node("Split", ["sh", const("sizes", [C, C], np.int64)], ["h0", "h1"], axis=1))
    to_q = "h1"
    if channels_last:
        nodes.append(helper.make_node("Transpose", ["h1"], ["nhwc"], perm=[0, 2, 3, 1]))
        to_q = "nhwc"
    for i, (s, z) in enumerate(((0.04, -5), (0.07, 2))):
        const(f"ys{i}", s, np.float32), const(f"yz{i}", zp(z), dtype)
    nodes += [helper.make_node("QuantizeLinear", [to_q, "ys0", "yz0"], ["yq0"]),
              helper.make_node("DequantizeLinear", ["yq0", "ys0", "yz0"], ["y0"]),
              helper.make_node("Concat", ["h0", "d2"], ["cat2"], axis=1),
              helper.make_node("QuantizeLinear", ["cat2", "ys1", "yz1"], ["yq1"]),
              helper.make_node("DequantizeLinear", ["yq1", "ys1", "yz1"], ["y1"])]
    y0_shape = [1, H, W, C] if channels_last else [1, C, H, W]
    g = helper.make_graph(nodes, "shuffle",
                          [helper.make_tensor_value_info(f"x{i}", TensorProto.FLOAT, [1, C, H, W]) for i in range(3)],
                          [helper.make_tensor_value_info("y0", TensorProto.FLOAT, y0_shape),
                           helper.make_tensor_value_info("y1", TensorProto.FLOAT, [1, 2 * C, H, W])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return path


def run_both(tmp_path, model, target):
    rng = np.random.default_rng(11)
    xs = [rng.normal(0.0, 2.0, (1, C, H, W)).astype(np.float32) for _ in range(3)]
    want = ort_ref.session(str(model)).run(["y0", "y1"], {f"x{i}": x for i, x in enumerate(xs)})
    out = tmp_path / "out"
    cstatic("compile", model, "-o", out, "-t", target, "-q")
    args = []
    for i, x in enumerate(xs):
        np.save(tmp_path / f"x{i}.npy", x)
        args += ["-i", tmp_path / f"x{i}.npy"]
    cstatic("run", out, *args, "-o", tmp_path / "y0.npy", "-o", tmp_path / "y1.npy")
    kernels = {k.removesuffix("__ref") for k in json.loads((out / "manifest.json").read_text())["totals"]["kernels"]}
    return [np.load(tmp_path / "y0.npy"), np.load(tmp_path / "y1.npy")], want, kernels


@pytest.mark.parametrize("target", ["c_static_lib", "c_static_lib -mcpu=c7x -mmalib=1"], ids=["host", "c7x"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8], ids=["s8", "u8"])
@pytest.mark.parametrize("opset", [13, 17, 21])
def test_shuffle_unit_on_codes_gives_orts_bytes(tmp_path, opset, dtype, target):
    model = shuffle_unit(tmp_path / "unit.onnx", opset, dtype)
    got, want, kernels = run_both(tmp_path, model, target)
    assert "tidsp_lut_i8_select" in kernels, kernels
    src = (tmp_path / "out" / "lib0.c").read_text()
    # float left: the outputs' two dequantizes, nothing of the moves
    assert src.count("tidsp_dequantize(") == 2 and src.count("tidsp_lut_i8_select(") == 2, kernels
    for g, w in zip(got, want):
        assert np.array_equal(g, w)


def test_sources_not_per_channel_stay_float(tmp_path):
    model = shuffle_unit(tmp_path / "unit.onnx", 17, np.int8, channels_last=True)
    got, want, kernels = run_both(tmp_path, model, "c_static_lib")
    assert "tidsp_lut_i8_select" not in kernels, kernels
    for g, w in zip(got, want):
        assert np.array_equal(g, w)


@pytest.mark.parametrize("model,variant", [("shufflenetv2", "pt2e")])
def test_shufflenet_pt2e_moves_run_on_codes(model, variant, model_suite, tmp_path):
    """The suite's ShuffleNetV2 as PT2E exports it (its bytes against ORT's:
    test_suite.py): every unit's Concat -> shuffle -> Split on int8, each Q
    after them a table, no dequantize left but the classifier's."""
    out = tmp_path / "out"
    cstatic("compile", model_suite.model(model, variant), "-o", out, "-q")
    kernels = json.loads((out / "manifest.json").read_text())["totals"]["kernels"]
    assert kernels.get("tidsp_lut_i8_select") == 16 and "tidsp_dequantize" not in kernels, kernels
