"""Float moves that end in a QuantizeLinear (Swin as PT2E exports it: its
LayerNorm's float output padded, rolled -- Slice, Slice, Concat on H, then
on W -- and cut into windows -- Reshape, Transpose, Reshape -- before the Q
of the attention's input). QuantizeBeforeMoves puts the Q before them, so
they run on int8; ORT runs them in float. The bytes must be ORT's, for a
padded and an unpadded map, int8 and uint8, on the host and the C7x target.
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

C, WIN, SHIFT = 8, 4, 2
MOVES = ("tidsp_pad", "tidsp_slice", "tidsp_concat", "tidsp_transpose")


def swin_chain(path, hw, dtype):
    """x [1, hw, hw, C] -> Q/DQ -> LayerNorm -> Pad to a multiple of WIN ->
    roll by SHIFT on H and W -> windows [n, WIN*WIN, C] -> Q -> DQ = y."""
    zp = (lambda z: z + 128) if dtype == np.uint8 else (lambda z: z)
    rng = np.random.default_rng(5)
    inits = []

    def const(name, value, dt):
        inits.append(numpy_helper.from_array(np.array(value, dt), name))
        return name

    side = -(-hw // WIN) * WIN
    n_win = (side // WIN) ** 2
    const("xs", 0.05, np.float32), const("xz", zp(3), dtype), const("ys", 0.03, np.float32), const("yz", zp(-6), dtype)
    const("gamma", rng.normal(1.0, 0.2, C), np.float32), const("beta", rng.normal(0.0, 0.2, C), np.float32)
    const("pads", [0, 0, 0, 0, 0, side - hw, side - hw, 0], np.int64)
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("LayerNormalization", ["xd", "gamma", "beta"], ["ln"], axis=-1, epsilon=1e-5),
             helper.make_node("Pad", ["ln", "pads"], ["p"], mode="constant")]
    cur = "p"
    for axis in (1, 2):
        a = f"ax{axis}"
        const(a, [axis], np.int64), const(f"s0_{axis}", [side - SHIFT], np.int64)
        const(f"e0_{axis}", [side], np.int64), const(f"s1_{axis}", [0], np.int64)
        const(f"e1_{axis}", [side - SHIFT], np.int64)
        nodes += [helper.make_node("Slice", [cur, f"s0_{axis}", f"e0_{axis}", a], [f"tail{axis}"]),
                  helper.make_node("Slice", [cur, f"s1_{axis}", f"e1_{axis}", a], [f"head{axis}"]),
                  helper.make_node("Concat", [f"tail{axis}", f"head{axis}"], [f"roll{axis}"], axis=axis)]
        cur = f"roll{axis}"
    const("w6", [1, side // WIN, WIN, side // WIN, WIN, C], np.int64), const("w3", [n_win, WIN * WIN, C], np.int64)
    nodes += [helper.make_node("Reshape", [cur, "w6"], ["v6"]),
              helper.make_node("Transpose", ["v6"], ["t6"], perm=[0, 1, 3, 2, 4, 5]),
              helper.make_node("Reshape", ["t6", "w3"], ["win"]),
              helper.make_node("QuantizeLinear", ["win", "ys", "yz"], ["yq"]),
              helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"])]
    g = helper.make_graph(nodes, "swin_chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, hw, hw, C])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n_win, WIN * WIN, C])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return path


@pytest.mark.parametrize("target", ["c_static_lib", "c_static_lib -mcpu=c7x -mmalib=1"], ids=["host", "c7x"])
@pytest.mark.parametrize("dtype", [np.int8, np.uint8], ids=["s8", "u8"])
@pytest.mark.parametrize("hw", [8, 7], ids=["unpadded", "padded"])
def test_swin_chain_moves_on_int8_give_orts_bytes(tmp_path, hw, dtype, target):
    model = swin_chain(tmp_path / "chain.onnx", hw, dtype)
    x = np.random.default_rng(9).normal(0.0, 2.0, (1, hw, hw, C)).astype(np.float32)
    want = ort_ref.session(str(model)).run(["y"], {"x": x})[0]
    out = tmp_path / "out"
    cstatic("compile", model, "-o", out, "-t", target, "-q")
    np.save(tmp_path / "x.npy", x)
    cstatic("run", out, "-i", tmp_path / "x.npy", "-o", tmp_path / "y.npy")
    layers = json.loads((out / "manifest.json").read_text())["layers"]
    float_moves = [l["name"] for l in layers if l["kernel"] in MOVES and l["output"]["dtype"] != "int8"]
    assert not float_moves, float_moves
    assert np.array_equal(np.load(tmp_path / "y.npy"), want)
