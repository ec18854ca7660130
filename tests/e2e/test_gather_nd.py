"""GatherND against ONNX Runtime, bit for bit (runtime/kernels/ref/
gather_nd.c): batch_dims 0, 1 and 2, negative indices, runtime data with
constant indices, runtime indices, and both constant — folded at compile
time by the same kernel (swin_v2's relative-position bias table is such a
GatherND), leaving no k_gather_nd in the generated code. Out-of-range
constant indices are refused by name; runtime ones fail the run."""
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from cstatic_cli import cstatic

RNG = np.random.default_rng(9)


def model(path, data_shape, indices, batch_dims, mode, dtype=TensorProto.FLOAT, opset=13):
    """mode: 'const_idx' (x is data), 'runtime_idx' (x is indices, data a
    constant), 'folded' (both constant; x is added to the result)."""
    np_t = onnx.helper.tensor_dtype_to_np_dtype(dtype)
    data = (RNG.standard_normal(data_shape) * 10).astype(np_t)
    idx = np.asarray(indices, np.int64)
    ref = ort_gather_nd(data, idx, batch_dims)
    inits, inputs, feeds = [], [], {}
    bd = {"batch_dims": batch_dims} if batch_dims else {}  # GatherND-11 has no such attribute
    if mode == "const_idx":
        inits.append(numpy_helper.from_array(idx, "idx"))
        inputs.append(helper.make_tensor_value_info("data", dtype, list(data_shape)))
        feeds["data"] = data
        nodes = [helper.make_node("GatherND", ["data", "idx"], ["y"], name="gnd", **bd)]
    elif mode == "runtime_idx":
        inits.append(numpy_helper.from_array(data, "data"))
        inputs.append(helper.make_tensor_value_info("idx", TensorProto.INT64, list(idx.shape)))
        feeds["idx"] = idx
        nodes = [helper.make_node("GatherND", ["data", "idx"], ["y"], name="gnd", **bd)]
    else:
        inits += [numpy_helper.from_array(data, "data"), numpy_helper.from_array(idx, "idx")]
        inputs.append(helper.make_tensor_value_info("x", dtype, list(ref.shape)))
        feeds["x"] = np.ones(ref.shape, np_t)
        nodes = [helper.make_node("GatherND", ["data", "idx"], ["t"], name="gnd", **bd),
                 helper.make_node("Add", ["t", "x"], ["y"])]
    g = helper.make_graph(nodes, "gnd", inputs, [helper.make_tensor_value_info("y", dtype, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, path)
    return feeds


def ort_gather_nd(data, idx, b):
    """Only the output shape is taken from here (ORT gives the values)."""
    return np.empty(idx.shape[:-1] + data.shape[b + idx.shape[-1]:], data.dtype)


CASES = [  # (data shape, indices, batch_dims)
    ((2, 2), [[0, 0], [1, 1]], 0),                  # elements
    ((2, 2), [[1], [0]], 0),                        # rows
    ((2, 2, 2), [[[0, 1]], [[1, 0]]], 0),
    ((2, 2, 2), [[1], [0]], 1),                     # batch_dims 1
    ((2, 3, 4), [[[1, -1], [0, 2]], [[2, 3], [-3, 0]]], 1),
    ((5, 3, 4, 2), [[[[3], [-4]]], [[[0], [1]]]], 0),  # rank-4 indices, k = 1
    ((2, 3, 4, 5), [[[[1, 2]], [[0, 3]], [[-1, 0]]], [[[2, 1]], [[1, 4]], [[3, -5]]]], 2),  # batch_dims 2
    ((3, 169, 6), [[[i % 169] for i in range(0, 49 * 7, 7)]] * 3, 1),  # a bias table indexed per row
    ((169, 6), [[(i * 13) % 169] for i in range(49)], 0),
]


@pytest.mark.parametrize("mode", ["const_idx", "runtime_idx", "folded"])
@pytest.mark.parametrize("data_shape,indices,batch_dims", CASES)
def test_gather_nd_matches_ort(tmp_path, data_shape, indices, batch_dims, mode):
    path = tmp_path / "g.onnx"
    feeds = model(path, data_shape, indices, batch_dims, mode)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    (name, x), = feeds.items()
    np.save(tmp_path / "x.npy", x)
    cstatic("compile", path, "-o", tmp_path / "out", "-q")
    cstatic("run", tmp_path / "out", "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    got = np.load(tmp_path / "y.npy")
    assert got.shape == want.shape and got.tobytes() == want.tobytes()
    lib = "".join(p.read_text() for p in (tmp_path / "out").rglob("lib0*.c"))
    assert ("tidsp_gather_nd" in lib) == (mode != "folded")


@pytest.mark.parametrize("opset", [11, 12])
def test_gather_nd_older_opsets(tmp_path, opset):
    """GatherND-11 (no batch_dims) and -12 read as -13."""
    path = tmp_path / "g.onnx"
    b = 0 if opset == 11 else 1
    feeds = model(path, (2, 3, 4), [[[1, -1], [0, 2]], [[2, 3], [-3, 0]]] if b else [[1, -1], [0, 2]], b,
                  "const_idx", opset=opset)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    np.save(tmp_path / "x.npy", feeds["data"])
    cstatic("compile", path, "-o", tmp_path / "out", "-q")
    cstatic("run", tmp_path / "out", "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    assert np.load(tmp_path / "y.npy").tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [TensorProto.INT8, TensorProto.INT64, TensorProto.UINT8])
def test_gather_nd_other_dtypes(tmp_path, dtype):
    path = tmp_path / "g.onnx"
    feeds = model(path, (2, 3, 4), [[[1, -1], [0, 2]], [[2, 3], [-3, 0]]], 1, "const_idx", dtype)
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    np.save(tmp_path / "x.npy", feeds["data"])
    cstatic("compile", path, "-o", tmp_path / "out", "-q")
    cstatic("run", tmp_path / "out", "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    got = np.load(tmp_path / "y.npy")
    assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("mode", ["const_idx", "folded"])
def test_constant_index_out_of_range_is_named(tmp_path, mode):
    path = tmp_path / "g.onnx"
    model(path, (2, 3, 4), [[1, 0], [0, 4]], 0, mode)
    p = cstatic("compile", path, "-o", tmp_path / "out", ok=False)
    assert p.returncode != 0 and "gnd" in p.stderr and "= 4" in p.stderr and "[-3, 3)" in p.stderr, p.stderr
    assert not (tmp_path / "out").exists()


def test_runtime_index_out_of_range_fails_the_run(tmp_path):
    path = tmp_path / "g.onnx"
    model(path, (2, 3, 4), [[1, 0], [0, 2]], 0, "runtime_idx")
    np.save(tmp_path / "x.npy", np.array([[1, 0], [2, 0]], np.int64))
    cstatic("compile", path, "-o", tmp_path / "out", "-q")
    p = cstatic("run", tmp_path / "out", "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy", ok=False)
    assert p.returncode != 0 and "invalid kernel parameter" in p.stderr, p.stderr
    assert not (tmp_path / "y.npy").exists()


def test_bad_indices_shape_is_named(tmp_path):
    path = tmp_path / "g.onnx"
    model(path, (2, 3), [[0, 1, 2]], 0, "const_idx")
    p = cstatic("compile", path, "-o", tmp_path / "out", ok=False)
    assert p.returncode != 0 and "gnd" in p.stderr and "idx" in p.stderr, p.stderr


def test_batch_dims_before_opset_12_is_refused(tmp_path):
    path = tmp_path / "g.onnx"
    model(path, (2, 3, 4), [[1], [0]], 1, "const_idx", opset=11)
    p = cstatic("compile", path, "-o", tmp_path / "out", ok=False)
    assert p.returncode != 0 and "gnd" in p.stderr and "batch_dims" in p.stderr and "12" in p.stderr, p.stderr
