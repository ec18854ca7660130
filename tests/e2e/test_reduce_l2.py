"""ReduceL2 (float) against ONNX Runtime, bit for bit: ORT sums the squares
sequentially per output in row-major order of the reduced elements, or with
Eigen's vectorized norm when every element goes to one output
(runtime/kernels/ref/reduce_l2_f32.c). swin_v2's cosine attention takes
the norm of q and k along their last axis ([1, heads, 49, 32]); the other
cases cover every path and both forms of axes (attribute before opset 18,
input from 18; ReduceL2-1, -11, -13 and -18)."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from cstatic_cli import cstatic


def model(path, shape, axes, keepdims, opset, noop=None):
    attrs = {"keepdims": keepdims}
    inits, ins = [], ["x"]
    if axes is not None and opset < 18:
        attrs["axes"] = axes
    elif axes is not None:
        inits.append(numpy_helper.from_array(np.asarray(axes, np.int64), "axes"))
        ins.append("axes")
    if noop is not None:
        attrs["noop_with_empty_axes"] = noop
    nodes = [helper.make_node("ReduceL2", ins, ["y"], name="norm", **attrs)]
    g = helper.make_graph(nodes, "l2", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, path)


CASES = [  # (shape, axes, keepdims)
    ((1, 3, 49, 32), [-1], 1),     # swin_v2's q/k norm
    ((1, 24, 49, 32), [3], 1),
    ((2, 5, 7), [1], 0),           # a middle axis (KRK)
    ((4, 6, 5), [0], 1),           # a leading axis (RK)
    ((3, 4, 5, 6), [0, 2], 1),     # non-adjacent axes
    ((3, 4, 5, 6), [1, 3], 0),
    ((37, 3), [0, 1], 0),          # every element to one output: Eigen's norm
    ((1, 53, 1), [1], 1),          # the same after dropping size-1 dims
    ((5, 1, 4), [1], 1),           # only a size-1 axis
    ((6, 9), None, 1),             # no axes: all
]


@pytest.mark.parametrize("opset", [1, 11, 13, 18])
@pytest.mark.parametrize("shape,axes,keepdims", CASES)
def test_reduce_l2_matches_ort(tmp_path, shape, axes, keepdims, opset):
    path = tmp_path / "l2.onnx"
    model(path, shape, axes, keepdims, opset)
    x = (np.random.default_rng(5).standard_normal(shape) * 3).astype(np.float32)
    x.flat[::7] *= 1e-3  # magnitudes far apart, so the order shows in the last bit
    np.save(tmp_path / "x.npy", x)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    cstatic("compile", path, "-o", tmp_path / "out", "-q")
    cstatic("run", tmp_path / "out", "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    got = np.load(tmp_path / "y.npy")
    assert got.shape == want.shape and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("empty_input", [False, True])
def test_noop_with_empty_axes_as_ort(tmp_path, empty_input):
    """Opset 18, no axes, noop_with_empty_axes=1: ONNX says the input as it
    is, but ORT 1.30 returns sqrt(x·x) per element (|x|; 0 where x·x
    underflows), with no axes input or an empty one. cstatic follows ORT."""
    path = tmp_path / "l2.onnx"
    model(path, (3, 4), [] if empty_input else None, 1, 18, noop=1)
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    x[0, 0] = -3e-30
    np.save(tmp_path / "x.npy", x)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    cstatic("compile", path, "-o", tmp_path / "out", "-q")
    cstatic("run", tmp_path / "out", "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    got = np.load(tmp_path / "y.npy")
    assert got.shape == want.shape and got.tobytes() == want.tobytes()
    assert got[0, 0] == 0 and (got >= 0).all()


def test_axes_attribute_at_opset_18_is_refused(tmp_path):
    path = tmp_path / "l2.onnx"
    model(path, (3, 4), None, 1, 18)
    m = onnx.load(path)
    m.graph.node[0].attribute.append(helper.make_attribute("axes", [1]))
    onnx.save(m, path)
    p = cstatic("compile", path, "-o", tmp_path / "out", ok=False)
    assert p.returncode != 0 and "norm" in p.stderr and "axes" in p.stderr, p.stderr
