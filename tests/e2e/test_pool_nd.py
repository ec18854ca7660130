"""Pooling on the N-D kernel (k_pool_nd, runtime/kernels/ref/pool_nd.c)
against ONNX Runtime on the same file: 3-D MaxPool and AveragePool,
MaxPool on uint8 and int8, and MaxPool's Indices output (row- and
column-major storage_order), 1-D to 3-D. Max and Indices are exact; the
average sums in ORT's own loop order (AveragePool-19 and later)."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

from conftest import ort_ref
from cstatic_cli import cstatic

NP = {TP.FLOAT: np.float32, TP.UINT8: np.uint8, TP.INT8: np.int8}


def _model(op, shape, dtype, opset, indices=False, **attrs):
    outs = ["y", "i"] if indices else ["y"]
    node = h.make_node(op, ["x"], outs, name="pool", **attrs)
    vo = [h.make_tensor_value_info("y", dtype, None)]
    if indices:
        vo.append(h.make_tensor_value_info("i", TP.INT64, None))
    g = h.make_graph([node], "pool", [h.make_tensor_value_info("x", dtype, shape)], vo)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8 if opset < 19 else 10
    return m


def _input(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == TP.FLOAT:
        return rng.standard_normal(shape).astype(np.float32)
    info = np.iinfo(NP[dtype])
    return rng.integers(info.min, info.max + 1, shape).astype(NP[dtype])


def _run(tmp_path, m, x):
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    want = ort_ref.session(str(path)).run(None, {"x": x})
    out = tmp_path / "out"
    cstatic("compile", path, "-o", out, "-q", "-t", "c_static_lib -allow-float=1")
    np.save(tmp_path / "x.npy", x)
    args = []
    for j in range(len(want)):
        args += ["--output", tmp_path / f"y{j}.npy"]
    cstatic("run", out, "--input", tmp_path / "x.npy", *args)
    return [np.load(tmp_path / f"y{j}.npy") for j in range(len(want))], want, (out / "lib0.c").read_text()


# (id, op, input shape, dtype, opset, with Indices, attributes)
CASES = [
    ("max3d_default", "MaxPool", [1, 3, 8, 9, 10], TP.FLOAT, 12, False, {"kernel_shape": [2, 2, 2]}),
    ("max3d_pads_strides_dil", "MaxPool", [2, 2, 9, 7, 8], TP.FLOAT, 12, False,
     {"kernel_shape": [3, 2, 3], "strides": [2, 1, 2], "pads": [1, 0, 1, 1, 1, 0], "dilations": [1, 2, 1]}),
    ("max3d_ceil", "MaxPool", [1, 2, 7, 6, 5], TP.FLOAT, 12, False,
     {"kernel_shape": [2, 3, 2], "strides": [2, 2, 2], "ceil_mode": 1}),
    ("avg3d_opset19", "AveragePool", [1, 3, 8, 9, 10], TP.FLOAT, 19, False,
     {"kernel_shape": [2, 3, 2], "strides": [1, 2, 2], "pads": [1, 1, 0, 0, 1, 1]}),
    ("avg3d_count_include_pad", "AveragePool", [1, 2, 6, 7, 5], TP.FLOAT, 19, False,
     {"kernel_shape": [3, 3, 3], "pads": [1, 1, 1, 1, 1, 1], "count_include_pad": 1}),
    ("max2d_uint8", "MaxPool", [1, 3, 9, 9], TP.UINT8, 12, False,
     {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ("max3d_uint8", "MaxPool", [1, 2, 5, 6, 7], TP.UINT8, 12, False, {"kernel_shape": [2, 2, 3]}),
    ("indices2d", "MaxPool", [2, 3, 8, 9], TP.FLOAT, 12, True,
     {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 0, 1, 1]}),
    ("indices2d_column_major", "MaxPool", [2, 3, 8, 9], TP.FLOAT, 12, True,
     {"kernel_shape": [3, 2], "strides": [2, 1], "storage_order": 1}),
    ("indices2d_int8", "MaxPool", [1, 4, 7, 7], TP.INT8, 12, True, {"kernel_shape": [2, 2], "dilations": [2, 1]}),
    ("indices2d_uint8", "MaxPool", [1, 4, 7, 7], TP.UINT8, 12, True, {"kernel_shape": [3, 3], "strides": [2, 2]}),
    ("indices1d", "MaxPool", [2, 3, 11], TP.FLOAT, 12, True, {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    ("indices3d", "MaxPool", [1, 2, 5, 6, 7], TP.FLOAT, 12, True, {"kernel_shape": [2, 3, 2], "strides": [1, 2, 2]}),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_pool_matches_ort(tmp_path, case):
    _, op, shape, dtype, opset, indices, attrs = case
    x = _input(shape, dtype, len(shape) * 7 + opset)
    if dtype != TP.FLOAT:  # repeated values: ties pick the first tap, as ORT
        x = (x // 16 * 16).astype(x.dtype)
    got, want, src = _run(tmp_path, _model(op, shape, dtype, opset, indices, **attrs), x)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape, g.dtype, w.dtype)
        assert np.array_equal(g, w), f"{np.mean(g == w):.4f} equal"
    assert "tidsp_pool_nd(" in src


def test_unread_indices_cost_nothing(tmp_path):
    """An Indices output nothing reads gets no kernel call."""
    m = _model("MaxPool", [1, 2, 6, 6], TP.FLOAT, 12, True, kernel_shape=[2, 2])
    m.graph.output.pop()
    got, want, src = _run(tmp_path, m, _input([1, 2, 6, 6], TP.FLOAT, 1))
    assert np.array_equal(got[0], want[0])
    assert "tidsp_pool_nd(" not in src
