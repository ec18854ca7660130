"""Empty tensors (a 0 dimension), against ONNX Runtime.

A node whose every result is empty computes nothing observable, whatever
its inputs: the compiler makes its results empty constants and drops it
(a Slice past the end, a Reshape or Split of an empty input), so the
planner, the generated code and the kernels never see an empty tensor. An
empty graph input is one batch of itself for `cstatic run` and
Model.run. A node that would make elements from an empty tensor (Concat,
a reduction, MatMul over K = 0, …), or an empty result beside a non-empty
one (Split into [0, n]), is refused naming the node and the tensor.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

import cstatic as cs_api
from conftest import ort_ref
from cstatic_cli import cstatic


def _model(path, nodes, inputs, outputs, inits=(), opset=17):
    g = h.make_graph(nodes, "empty", inputs, outputs, list(inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def _io(name, shape, dtype=TP.FLOAT):
    return h.make_tensor_value_info(name, dtype, shape)


def _cli(tmp_path, model, xs):
    out = tmp_path / "out"
    cstatic("compile", model, "-o", out, "-q")
    args = []
    for i, x in enumerate(xs):
        np.save(tmp_path / f"x{i}.npy", x)
        args += ["--input", tmp_path / f"x{i}.npy"]
    sess = ort_ref.session(str(model))
    n_out = len(sess.get_outputs())
    for j in range(n_out):
        args += ["--output", tmp_path / f"y{j}.npy"]
    cstatic("run", out, *args)
    want = sess.run(None, {i.name: x for i, x in zip(sess.get_inputs(), xs)})
    return [np.load(tmp_path / f"y{j}.npy") for j in range(n_out)], want


def _same(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype and np.array_equal(g, w), (g.shape, w.shape)


def test_slice_past_the_end_is_an_empty_output(tmp_path):
    inits = [nh.from_array(np.array([1], np.int64), n) for n in ("starts", "ends", "axes")]
    nodes = [h.make_node("Slice", ["x", "starts", "ends", "axes"], ["y"]),
             h.make_node("Relu", ["x"], ["z"])]
    model = _model(tmp_path / "m.onnx", nodes, [_io("x", [4, 3, 2])], [_io("y", None), _io("z", None)], inits)
    x = np.random.default_rng(0).standard_normal((4, 3, 2)).astype(np.float32)
    got, want = _cli(tmp_path, model, [x])
    assert want[0].shape == (4, 0, 2)
    _same(got, want)
    # the Python API: the same, and a batch of 3 stacks the empty output too
    m = cs_api.compile(str(model), "c_static_lib -allow-float=1", out=tmp_path / "api")
    y, z = m.run(np.concatenate([x] * 3))
    assert y.shape == (12, 0, 2) and np.array_equal(z, np.maximum(np.concatenate([x] * 3), 0))


@pytest.mark.parametrize("allowzero", [0, 1])
def test_empty_input_reshaped(tmp_path, allowzero):
    shape = nh.from_array(np.array([3, 4, 0] if allowzero else [3, 0, -1], np.int64), "shape")
    nodes = [h.make_node("Reshape", ["x", "shape"], ["y"], allowzero=allowzero)]
    model = _model(tmp_path / "m.onnx", nodes, [_io("x", [0, 3, 4])], [_io("y", None)], [shape])
    got, want = _cli(tmp_path, model, [np.zeros((0, 3, 4), np.float32)])
    _same(got, want)
    m = cs_api.compile(str(model), "c_static_lib -allow-float=1", out=tmp_path / "api")
    assert m.run(np.zeros((0, 3, 4), np.float32)).shape == want[0].shape
    with pytest.raises(ValueError, match="expected shape"):
        m.run(np.zeros((1, 3, 4), np.float32))


def test_split_of_an_empty_input(tmp_path):
    split = nh.from_array(np.array([0, 0, 0], np.int64), "split")
    nodes = [h.make_node("Split", ["x", "split"], ["a", "b", "c"], axis=0)]
    model = _model(tmp_path / "m.onnx", nodes, [_io("x", [0, 5])], [_io(n, None) for n in "abc"], [split],
                   opset=18)
    got, want = _cli(tmp_path, model, [np.zeros((0, 5), np.float32)])
    _same(got, want)


def test_empty_input_of_a_kernel_is_refused_by_name(tmp_path):
    nodes = [h.make_node("Concat", ["e", "x"], ["y"], axis=0, name="cat")]
    model = _model(tmp_path / "m.onnx", nodes, [_io("e", [0, 3]), _io("x", [2, 3])], [_io("y", None)])
    p = cstatic("compile", model, "-o", tmp_path / "out", ok=False)
    assert p.returncode == 1 and p.stderr.count("\n") == 1, p.stderr
    assert "node 'cat' (Concat)" in p.stderr and "input 'e' is empty (shape [0,3])" in p.stderr, p.stderr


def test_an_empty_part_beside_others_is_refused_by_name(tmp_path):
    split = nh.from_array(np.array([0, 4], np.int64), "split")
    nodes = [h.make_node("Split", ["x", "split"], ["a", "b"], axis=0, name="parts")]
    model = _model(tmp_path / "m.onnx", nodes, [_io("x", [4, 2])], [_io("a", None), _io("b", None)], [split],
                   opset=18)
    p = cstatic("compile", model, "-o", tmp_path / "out", ok=False)
    assert p.returncode == 1 and "node 'parts' (Split)" in p.stderr and "output 'a' would be empty" in p.stderr, \
        p.stderr
