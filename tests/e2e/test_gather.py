"""Gather with constant indices (the frontend and its lowering to a strided
slice, compiler/passes/legalize.c lower_gather) against ONNX Runtime, bit
for bit, and the index lists it refuses, by name.

torch.export writes such a Gather for the as_strided of an adaptive average
pool (e.g. AdaptiveAvgPool2d((1, 1)) over an 8×8 map: ReduceMean, Reshape,
Gather with indices 0..C−1, Reshape).
"""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from cstatic_cli import cstatic

SHAPE = (2, 6, 5)


def model(path, indices, axis, quantized=False):
    idx = numpy_helper.from_array(np.asarray(indices, dtype=np.int64), "idx")
    data_shape = list(SHAPE)
    out_shape = data_shape[:axis % 3] + list(np.asarray(indices).shape) + data_shape[axis % 3 + 1:]
    inits = [idx]
    if quantized:  # DQ -> Gather -> Q: the gather runs on the int8 tensor
        inits += [numpy_helper.from_array(np.array(0.05, np.float32), "s"),
                  numpy_helper.from_array(np.array(3, np.int8), "z")]
        nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
                 helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
                 helper.make_node("Gather", ["xd", "idx"], ["g"], name="gather", axis=axis),
                 helper.make_node("QuantizeLinear", ["g", "s", "z"], ["gq"]),
                 helper.make_node("DequantizeLinear", ["gq", "s", "z"], ["y"])]
    else:
        nodes = [helper.make_node("Gather", ["x", "idx"], ["y"], name="gather", axis=axis)]
    g = helper.make_graph(nodes, "gather", [helper.make_tensor_value_info("x", TensorProto.FLOAT, data_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


CASES = [  # (indices, axis)
    (list(range(6)), 1),            # identity, as torch writes it
    ([[[0]], [[1]], [[2]]], 1),     # 3-D indices (the as_strided shape)
    ([4, 2, 0], 1),                 # step 2, from the end backwards
    ([-1, -2], 1),                  # negative indices
    (3, 1),                         # a scalar index: the axis disappears
    ([1], 0), ([0, 2, 4], -1),      # other axes
]


@pytest.mark.parametrize("quantized", [False, True], ids=["float", "int8"])
@pytest.mark.parametrize("indices,axis", CASES)
def test_gather_matches_ort(tmp_path, indices, axis, quantized):
    path = tmp_path / "g.onnx"
    model(path, indices, axis, quantized)
    x = np.random.default_rng(3).standard_normal(SHAPE).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    cstatic("compile", path, "-o", tmp_path / "out", "-q")
    cstatic("run", tmp_path / "out", "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    got = np.load(tmp_path / "y.npy")
    assert got.shape == want.shape and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("indices,needle", [
    ([0, 1, 3], "indices are not evenly spaced"),
    ([2, 2], "indices are not evenly spaced"),
    ([0, 6], "indices[1] = 6 is outside [-6, 6)"),
])
def test_gather_refusals_name_the_node(tmp_path, indices, needle):
    path = tmp_path / "g.onnx"
    model(path, indices, 1)
    p = cstatic("compile", path, "-o", tmp_path / "out", ok=False)
    assert p.returncode != 0 and "gather" in p.stderr and needle in p.stderr, p.stderr
    assert not (tmp_path / "out").exists()


def test_runtime_indices_are_refused(tmp_path):
    g = helper.make_graph([helper.make_node("Gather", ["x", "i"], ["y"], name="gather", axis=0)], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 3]),
                           helper.make_tensor_value_info("i", TensorProto.INT64, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, tmp_path / "g.onnx")
    p = cstatic("compile", tmp_path / "g.onnx", "-o", tmp_path / "out", ok=False)
    assert p.returncode != 0 and "gather" in p.stderr and "must be a constant" in p.stderr, p.stderr
