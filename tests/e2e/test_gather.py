"""Gather against ONNX Runtime, bit for bit: constant, evenly spaced
indices become a strided slice (compiler/passes/legalize_slice.c lower_gather),
any other constant list and runtime indices (an embedding lookup) the
tidsp_gather kernel; out-of-range constant indices are refused at compile
time by name, runtime ones fail the run with a status, never a read out of
bounds.

torch.export writes a constant Gather for the as_strided of an adaptive
average pool (e.g. AdaptiveAvgPool2d((1, 1)) over an 8×8 map: ReduceMean,
Reshape, Gather with indices 0..C−1, Reshape).
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
    ([0, 1, 3], 1), ([2, 2], 1),    # not evenly spaced: the gather kernel
    ([[4, 0], [1, -3]], -1),
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
    ([0, 6], "indices[1] = 6 is outside [-6, 6)"),
    ([-7], "indices[0] = -7 is outside [-6, 6)"),
])
def test_gather_refusals_name_the_node(tmp_path, indices, needle):
    path = tmp_path / "g.onnx"
    model(path, indices, 1)
    p = cstatic("compile", path, "-o", tmp_path / "out", ok=False)
    assert p.returncode != 0 and "gather" in p.stderr and needle in p.stderr, p.stderr
    assert not (tmp_path / "out").exists()


def _embedding(path, dtype=TensorProto.INT64, quantized=False):
    """An embedding table [10, 4] looked up by runtime token ids [1, 5]."""
    table = np.random.default_rng(7).standard_normal((10, 4)).astype(np.float32)
    inits, nodes, data = [], [], "table"
    if quantized:  # an int8 table: DQ → Gather, the lookup on int8
        s = np.float32(np.abs(table).max() / 127)
        inits += [numpy_helper.from_array(np.clip(np.round(table / s), -127, 127).astype(np.int8), "tq"),
                  numpy_helper.from_array(np.array(s, np.float32), "s"),
                  numpy_helper.from_array(np.array(0, np.int8), "z")]
        nodes.append(helper.make_node("DequantizeLinear", ["tq", "s", "z"], ["table"]))
    else:
        inits.append(numpy_helper.from_array(table, "table"))
    nodes.append(helper.make_node("Gather", [data, "ids"], ["y"], name="embed", axis=0))
    g = helper.make_graph(nodes, "embed", [helper.make_tensor_value_info("ids", dtype, [1, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5, 4])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


@pytest.mark.parametrize("quantized", [False, True], ids=["float", "int8"])
@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_runtime_indices_match_ort(tmp_path, dtype, quantized):
    _embedding(tmp_path / "e.onnx", TensorProto.INT64 if dtype == np.int64 else TensorProto.INT32, quantized)
    ids = np.array([[3, 0, 9, -1, 3]], dtype=dtype)
    np.save(tmp_path / "ids.npy", ids)
    want = ort.InferenceSession(str(tmp_path / "e.onnx"), providers=["CPUExecutionProvider"]).run(
        None, {"ids": ids})[0]
    cstatic("compile", tmp_path / "e.onnx", "-o", tmp_path / "out", "-q")
    cstatic("run", tmp_path / "out", "--input", tmp_path / "ids.npy", "--output", tmp_path / "y.npy")
    got = np.load(tmp_path / "y.npy")
    assert got.shape == want.shape and got.tobytes() == want.tobytes()


def test_runtime_index_out_of_range_fails_the_run(tmp_path):
    _embedding(tmp_path / "e.onnx")
    np.save(tmp_path / "ids.npy", np.array([[1, 2, 10, 0, 0]], dtype=np.int64))
    cstatic("compile", tmp_path / "e.onnx", "-o", tmp_path / "out", "-q")
    p = cstatic("run", tmp_path / "out", "--input", tmp_path / "ids.npy", "--output", tmp_path / "y.npy",
                ok=False)
    assert p.returncode != 0 and "invalid kernel parameter" in p.stderr, p.stderr
    assert not (tmp_path / "y.npy").exists()
