"""Training-mode forms that are deterministic, against ONNX Runtime on the
same file: BatchNormalization with training_mode = 1 (Y normalized by the
batch's own mean and population variance, and the running mean/variance
outputs) and Dropout in training mode with ratio 0 (every element kept,
mask all true). Dropout with ratio > 0 in training draws a random mask:
refused, naming the ratio."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from conftest import ort_ref
from cstatic_cli import cstatic


def _save(tmp_path, nodes, x_shape, outputs, inits, opset=15):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info("x", TP.FLOAT, x_shape)],
                     [h.make_tensor_value_info(n, TP.FLOAT if n != "mask" else TP.BOOL, None) for n in outputs],
                     inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    return path


def _run(tmp_path, path, x, n_out):
    cstatic("compile", path, "-o", tmp_path / "out", "-q")
    np.save(tmp_path / "x.npy", x)
    args = []
    for j in range(n_out):
        args += ["--output", tmp_path / f"y{j}.npy"]
    cstatic("run", tmp_path / "out", "--input", tmp_path / "x.npy", *args)
    return [np.load(tmp_path / f"y{j}.npy") for j in range(n_out)]


@pytest.mark.parametrize("shape,momentum", [([2, 3, 4, 5], None), ([4, 6, 7], 0.7), ([5, 2], 0.99)])
def test_batch_norm_training_mode_matches_ort(tmp_path, shape, momentum):
    r = np.random.default_rng(len(shape))
    c = shape[1]
    inits = [nh.from_array(r.uniform(0.5, 1.5, c).astype(np.float32), "s"),
             nh.from_array(r.uniform(-1, 1, c).astype(np.float32), "b"),
             nh.from_array(r.uniform(-1, 1, c).astype(np.float32), "m"),
             nh.from_array(r.uniform(0.1, 2, c).astype(np.float32), "v")]
    kw = {} if momentum is None else {"momentum": momentum}
    node = h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"],
                       training_mode=1, epsilon=1e-3, **kw)
    path = _save(tmp_path, [node], shape, ["y", "rm", "rv"], inits)
    x = (r.standard_normal(shape) * 3 + 1).astype(np.float32)
    want = ort_ref.session(str(path)).run(None, {"x": x})
    got = _run(tmp_path, path, x, 3)
    for w, g in zip(want, got):
        assert g.shape == w.shape and g.dtype == w.dtype
        # float sums in another order than ORT's Eigen reductions: close, not bit-exact
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_batch_norm_training_mode_y_only(tmp_path):
    """Without the running outputs, Y alone (the form of a model exported in train())."""
    r = np.random.default_rng(9)
    inits = [nh.from_array(np.ones(3, np.float32), n) for n in "sv"] + \
            [nh.from_array(np.zeros(3, np.float32), n) for n in "bm"]
    node = h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], training_mode=1)
    path = _save(tmp_path, [node], [4, 3, 2, 2], ["y"], inits)
    x = r.standard_normal([4, 3, 2, 2]).astype(np.float32)
    (got,) = _run(tmp_path, path, x, 1)
    mean, var = x.mean(axis=(0, 2, 3), keepdims=True), x.var(axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(got, (x - mean) / np.sqrt(var + 1e-5), rtol=1e-5, atol=1e-5)


def test_dropout_training_zero_ratio_is_identity_with_a_true_mask(tmp_path):
    inits = [nh.from_array(np.array(0.0, np.float32), "r"), nh.from_array(np.array(True), "t")]
    node = h.make_node("Dropout", ["x", "r", "t"], ["y", "mask"], seed=3)
    path = _save(tmp_path, [node], [3, 4, 5], ["y", "mask"], inits, opset=13)
    x = np.random.default_rng(1).standard_normal([3, 4, 5]).astype(np.float32)
    want = ort_ref.session(str(path)).run(None, {"x": x})
    got = _run(tmp_path, path, x, 2)
    assert np.array_equal(got[0], x) and np.array_equal(got[0], want[0])
    assert got[1].dtype == np.bool_ and got[1].all() and np.array_equal(got[1], want[1])


@pytest.mark.parametrize("ratio,shown", [(0.25, "ratio is 0.25"), (None, "ratio is 0.5 (the default)")])
def test_dropout_training_random_is_refused(tmp_path, ratio, shown):
    inits = [nh.from_array(np.array(True), "t")]
    ins = ["x", "", "t"]
    if ratio is not None:
        inits.append(nh.from_array(np.array(ratio, np.float32), "r"))
        ins[1] = "r"
    node = h.make_node("Dropout", ins, ["y"], name="drop")
    path = _save(tmp_path, [node], [3, 4], ["y"], inits, opset=13)
    p = cstatic("compile", path, "-o", tmp_path / "out", ok=False)
    assert p.returncode == 1
    assert f"node 'drop' (Dropout): training_mode is true and {shown}: its mask is random" in p.stderr, p.stderr
