"""Ops at every opset that changed them, 1 to 25, against ONNX Runtime on
the same file (below 7, at the opsets ORT has a kernel for).

Before the current form of an op, some inputs were attributes (Clip < 11,
Pad < 11, Slice < 10, Split/Squeeze/Unsqueeze < 13, ReduceMean < 18) and
Softmax < 13 normalized the input flattened to 2-D at its axis; Upsample
(nearest, integer scales) is a reshape, a broadcast copy and a reshape;
opsets 22 to 25 changed types and added attributes. Each case is a small float
model, one per (op, opset), compiled by cstatic and run on the same input
as ORT: these kernels round as ORT's (movement is exact, Softmax,
ReduceMean and BatchNormalization follow ORT's summation orders), so every
element must be equal.
"""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from conftest import ort_ref
from cstatic_cli import cstatic


def _model(nodes, inputs, outputs, inits, opset):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, TP.FLOAT, s) for n, s in inputs],
                     [h.make_tensor_value_info(n, TP.FLOAT, None) for n in outputs], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 7 if opset < 15 else 8 if opset < 19 else 10
    return m


def _i64(name, v):
    return nh.from_array(np.asarray(v, np.int64), name)


def _f32(name, v):
    return nh.from_array(np.asarray(v, np.float32), name)


X = [("x", [2, 3, 4, 5])]


def clip(opset):
    if opset < 11:
        return [h.make_node("Clip", ["x"], ["y"], min=-0.5, max=0.75)], X, []
    return [h.make_node("Clip", ["x", "lo", "hi"], ["y"])], X, [_f32("lo", -0.5), _f32("hi", 0.75)]


def clip_max_only(opset):
    if opset < 11:
        return [h.make_node("Clip", ["x"], ["y"], max=0.25)], X, []
    return [h.make_node("Clip", ["x", "", "hi"], ["y"])], X, [_f32("hi", 0.25)]


def pad(mode):
    def build(opset):
        pads = [0, 1, 2, 0, 0, 2, 1, 3]
        if opset < 11:
            kw = {"value": 1.5} if mode == "constant" else {}
            return [h.make_node("Pad", ["x"], ["y"], mode=mode, pads=pads, **kw)], X, []
        ins, inits = ["x", "p"], [_i64("p", pads)]
        if mode == "constant":
            ins.append("v")
            inits.append(_f32("v", 1.5))
        return [h.make_node("Pad", ins, ["y"], mode=mode)], X, inits
    return build


def pad_axes(opset):
    return ([h.make_node("Pad", ["x", "p", "", "a"], ["y"], mode="reflect")], X,
            [_i64("p", [1, 2, 2, 1]), _i64("a", [2, -1])])


def slice_(opset):
    starts, ends, axes = [1, 0, -4], [3, 2, 1000], [1, 0, 3]
    if opset < 10:
        return [h.make_node("Slice", ["x"], ["y"], starts=starts, ends=ends, axes=axes)], X, []
    return ([h.make_node("Slice", ["x", "s", "e", "a", "t"], ["y"])], X,
            [_i64("s", starts), _i64("e", ends), _i64("a", axes), _i64("t", [1, 1, 2])])


def slice_default_axes(opset):
    if opset < 10:
        return [h.make_node("Slice", ["x"], ["y"], starts=[1, 1], ends=[2, -1])], X, []
    return [h.make_node("Slice", ["x", "s", "e"], ["y"])], X, [_i64("s", [1, 1]), _i64("e", [2, -1])]


def split(opset):
    if opset < 13:
        return [h.make_node("Split", ["x"], ["y", "z"], axis=3, split=[2, 3])], X, []
    return [h.make_node("Split", ["x", "s"], ["y", "z"], axis=3)], X, [_i64("s", [2, 3])]


def split_equal(opset):
    kw = {"num_outputs": 3} if opset >= 18 else {}
    return [h.make_node("Split", ["x"], ["y", "z", "w"], axis=1, **kw)], X, []


def squeeze_unsqueeze(opset):
    if opset < 13:
        return ([h.make_node("Unsqueeze", ["x"], ["u"], axes=[0, 3]),
                 h.make_node("Squeeze", ["u"], ["y"], axes=[0])], X, [])
    return ([h.make_node("Unsqueeze", ["x", "a"], ["u"]), h.make_node("Squeeze", ["u", "b"], ["y"])], X,
            [_i64("a", [0, 3]), _i64("b", [0])])


def reduce_mean(opset):
    if opset < 18:
        return [h.make_node("ReduceMean", ["x"], ["y"], axes=[2, 3], keepdims=0)], X, []
    return [h.make_node("ReduceMean", ["x", "a"], ["y"], keepdims=0)], X, [_i64("a", [2, 3])]


def reduce_mean_all(opset):
    return [h.make_node("ReduceMean", ["x"], ["y"], keepdims=1)], X, []


def softmax(axis):
    def build(opset):
        kw = {} if axis is None else {"axis": axis}
        return [h.make_node("Softmax", ["x"], ["y"], **kw)], X, []
    return build


def softmax_flat(axis):
    """Opset 13's form of the pre-13 Softmax at `axis`: over the input
    flattened to 2-D there."""
    def build(opset):
        inner = int(np.prod(X[0][1][axis:]))
        return ([h.make_node("Reshape", ["x", "s2"], ["f"]), h.make_node("Softmax", ["f"], ["g"], axis=-1),
                 h.make_node("Reshape", ["g", "s4"], ["y"])], X,
                [_i64("s2", [-1, inner]), _i64("s4", X[0][1])])
    return build


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def batch_norm(opset):
    r = np.random.default_rng(3)
    inits = [_f32("s", r.uniform(0.5, 1.5, 3)), _f32("b", r.uniform(-1, 1, 3)),
             _f32("m", r.uniform(-1, 1, 3)), _f32("v", r.uniform(0.1, 2, 3))]
    return [h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"], epsilon=1e-3)], X, inits


def movement(opset):
    """Reshape, Transpose, Flatten, Concat, Gather, Expand, Cast at any opset."""
    nodes = [h.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 3, 1]),
             h.make_node("Reshape", ["t", "s"], ["r"]),
             h.make_node("Gather", ["r", "i"], ["g"], axis=1),
             h.make_node("Concat", ["g", "g"], ["c"], axis=0),
             h.make_node("Flatten", ["c"], ["f"], axis=1),
             h.make_node("Relu", ["f"], ["y"])]
    return nodes, X, [_i64("s", [2, 20, 3]), _i64("i", [3, 1, 19])]


def upsample(opset):
    """Upsample, nearest, integer scales (opsets 7-9; deprecated at 10)."""
    scales = [1.0, 1.0, 2.0, 3.0]
    if opset < 9:
        return [h.make_node("Upsample", ["x"], ["y"], mode="nearest", scales=scales)], X, []
    return [h.make_node("Upsample", ["x", "s"], ["y"], mode="nearest")], X, [_f32("s", scales)]


def qdq(opset):
    """Quantize → dequantize round trips (opset 10: per-tensor only)."""
    nodes = [h.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             h.make_node("DequantizeLinear", ["q", "s", "z"], ["y"])]
    return nodes, X, [_f32("s", 0.02), nh.from_array(np.array(7, np.int8), "z")]


def reshape(opset):
    """Reshape's shape: an attribute before opset 5."""
    if opset < 5:
        return [h.make_node("Reshape", ["x"], ["y"], shape=[6, -1, 5])], X, []
    return [h.make_node("Reshape", ["x", "s"], ["y"])], X, [_i64("s", [6, -1, 5])]


def old_activations(opset):
    """Opset 6's activations (opsets 1-5 added consumed_inputs only)."""
    nodes = [h.make_node("HardSigmoid", ["x"], ["a"], alpha=0.3, beta=0.4),
             h.make_node("LeakyRelu", ["a"], ["b"], alpha=0.2),
             h.make_node("Sigmoid", ["x"], ["c"]),
             h.make_node("Tanh", ["c"], ["d"]),
             h.make_node("Relu", ["d"], ["e"]),
             h.make_node("Concat", ["b", "e"], ["y"], axis=1)]
    return nodes, X, []


def pool(opset):
    """MaxPool, GlobalAveragePool, Transpose, Flatten since opset 1 (their
    later versions added attributes only)."""
    nodes = [h.make_node("Transpose", ["x"], ["t"], perm=[0, 1, 3, 2]),
             h.make_node("MaxPool", ["t"], ["p"], kernel_shape=[2, 2], strides=[1, 2], pads=[0, 1, 1, 0]),
             h.make_node("GlobalAveragePool", ["p"], ["g"]),
             h.make_node("Flatten", ["g"], ["y"], axis=1)]
    return nodes, X, []


# Each op at the opsets around its changes (1 is the oldest).
CASES = {
    "clip": (clip, [6, 7, 10, 11]),
    "clip_max_only": (clip_max_only, [7, 11]),
    "pad_constant": (pad("constant"), [2, 7, 10, 11, 19]),
    "pad_edge": (pad("edge"), [7, 21]),
    "pad_reflect": (pad("reflect"), [7, 23]),
    "pad_axes": (pad_axes, [18, 25]),
    "slice": (slice_, [10, 13]),
    "slice_default_axes": (slice_default_axes, [1, 7, 9, 10]),
    "split": (split, [2, 7, 12, 13, 18]),
    "split_equal": (split_equal, [7, 13, 18]),
    "squeeze_unsqueeze": (squeeze_unsqueeze, [1, 7, 12, 13, 25]),
    "reduce_mean": (reduce_mean, [1, 7, 17, 18, 25]),
    "reduce_mean_all": (reduce_mean_all, [7, 18]),
    "softmax_default_axis": (softmax(None), [7, 12, 13]),
    "softmax_axis1": (softmax(1), [11, 13]),
    "softmax_axis2": (softmax(2), [12, 13]),
    "softmax_last": (softmax(-1), [7, 13]),
    "softmax_flat_axis1": (softmax_flat(1), [13]),
    "softmax_flat_axis2": (softmax_flat(2), [13]),
    "batch_norm": (batch_norm, [7, 9, 14, 15, 25]),
    "movement": (movement, [7, 13, 25]),
    "reshape": (reshape, [1, 4, 5]),
    "old_activations": (old_activations, [6]),
    "pool": (pool, [1, 7]),
    "qdq": (qdq, [10, 13, 21, 23, 25]),
    "upsample": (upsample, [7, 9]),
}

PARAMS = [(name, opset) for name, (_, opsets) in sorted(CASES.items()) for opset in opsets]


def _run_both(tmp_path, name, opset, x):
    """(ORT's outputs, cstatic's outputs) of case `name` at `opset` on x."""
    nodes, inputs, inits = CASES[name][0](opset)
    m = _model(nodes, inputs, list(nodes[-1].output), inits, opset)
    path = tmp_path / f"{name}_{opset}.onnx"
    onnx.save(m, path)
    want = ort_ref.session(str(path)).run(None, {"x": x})
    out = tmp_path / f"{name}_{opset}"
    cstatic("compile", path, "-o", out, "-q")
    np.save(tmp_path / "x.npy", x)
    args = []
    for j in range(len(want)):
        args += ["--output", tmp_path / f"{name}_{opset}_y{j}.npy"]
    cstatic("run", out, "--input", tmp_path / "x.npy", *args)
    return want, [np.load(tmp_path / f"{name}_{opset}_y{j}.npy") for j in range(len(want))]


@pytest.mark.parametrize("name,opset", PARAMS, ids=[f"{n}-opset{o}" for n, o in PARAMS])
def test_op_at_opset_matches_ort(tmp_path, name, opset):
    if name.startswith("softmax") and "avx512f" not in _cpu_flags():
        pytest.skip("the float Softmax mirrors MLAS's AVX512F exp kernel (test_float_ops_vs_ort.py); "
                    "test_softmax_before_13_is_the_flattened_softmax checks the legacy form on any CPU")
    x = np.random.default_rng(opset).standard_normal(X[0][1]).astype(np.float32)
    want, got = _run_both(tmp_path, name, opset, x)
    for j, (w, g) in enumerate(zip(want, got)):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, w.shape)
        assert np.array_equal(g, w), f"{name} opset {opset} output {j}: {np.mean(g == w):.4f} exact"


@pytest.mark.parametrize("opset", [7, 11, 12])
@pytest.mark.parametrize("axis", [1, 2])
def test_softmax_before_13_is_the_flattened_softmax(tmp_path, opset, axis):
    """Softmax < 13 at an inner axis equals, bit for bit, opset 13's Softmax
    of the input flattened to 2-D there (what ORT computes for it too)."""
    x = np.random.default_rng(opset + axis).standard_normal(X[0][1]).astype(np.float32)
    ort_old, got_old = _run_both(tmp_path, f"softmax_axis{axis}", opset, x)
    ort_flat, got_flat = _run_both(tmp_path, f"softmax_flat_axis{axis}", 13, x)
    assert np.array_equal(ort_old[0], ort_flat[0])  # ORT: the same function
    assert np.array_equal(got_old[0], got_flat[0])
    assert np.allclose(got_old[0], ort_old[0], rtol=1e-5, atol=1e-7)  # and not another one


def test_opset_out_of_range_is_refused(tmp_path):
    m = _model(*clip(7)[:1], X, ["y"], [], 7)
    m.opset_import[0].version = 26
    onnx.save(m, tmp_path / "m.onnx")
    p = cstatic("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", ok=False)
    assert p.returncode != 0 and "opset 26 of the default ONNX domain is not supported (supported: 1 to 25)" in p.stderr


@pytest.mark.parametrize("opset", [1, 6])
def test_binary_op_before_7_without_legacy_broadcast_is_numpy(tmp_path, opset):
    """Add/Mul below 7 (ORT has no kernel for them): equal shapes, or
    broadcast = 1 over B's trailing axes, are numpy's Add/Mul."""
    b = np.random.default_rng(1).standard_normal([4, 5]).astype(np.float32)
    kw = {"consumed_inputs": [0, 0]} if opset < 6 else {}
    nodes = [h.make_node("Add", ["x", "x"], ["a"], **kw),
             h.make_node("Mul", ["a", "b"], ["y"], broadcast=1, axis=2, **kw)]
    onnx.save(_model(nodes, X, ["y"], [_f32("b", b)], opset), tmp_path / "m.onnx")
    x = np.random.default_rng(2).standard_normal(X[0][1]).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    cstatic("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", "-q")
    cstatic("run", tmp_path / "out", "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    assert np.array_equal(np.load(tmp_path / "y.npy"), (x + x) * b)


@pytest.mark.parametrize("node,message", [
    (h.make_node("Mul", ["x", "b"], ["y"], broadcast=1, axis=1, name="n"),
     "node 'n' (Mul): Mul-6's legacy broadcast of B [3,4] along axis 1 of A [2,3,4,5] is not read"),
    (h.make_node("Add", ["x", "b"], ["y"], name="n"),
     "node 'n' (Add): A [2,3,4,5] and B [3,4] differ and broadcast is 0 (opset 6 needs equal shapes)"),
    (h.make_node("BatchNormalization", ["x", "s", "s", "s", "s"], ["y"], name="n"),
     "node 'n' (BatchNormalization): BatchNormalization-6 with is_test = 0 (its default) is the training form"),
    (h.make_node("Dropout", ["x"], ["y"], is_test=0, name="n"),
     "node 'n' (Dropout): Dropout-6 with is_test = 0 (its default) is the training form"),
])
def test_before_7_forms_that_differ_are_refused(tmp_path, node, message):
    inits = [_f32("b", np.ones([3, 4])), _f32("s", np.ones([3]))]
    onnx.save(_model([node], X, ["y"], inits, 6), tmp_path / "m.onnx")
    p = cstatic("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", ok=False)
    assert p.returncode == 1 and message in p.stderr, p.stderr


def test_cast_before_6_is_refused(tmp_path):
    m = _model([h.make_node("Cast", ["x"], ["y"], to="FLOAT", name="n")], X, ["y"], [], 5)
    onnx.save(m, tmp_path / "m.onnx")
    p = cstatic("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", ok=False)
    assert p.returncode == 1 and "node 'n' (Cast): Cast-5 is not read ('to' is a type name)" in p.stderr, p.stderr


def test_attribute_after_it_became_an_input_is_refused(tmp_path):
    m = _model([h.make_node("Clip", ["x"], ["y"], min=-0.5)], X, ["y"], [], 11)
    onnx.save(m, tmp_path / "m.onnx")
    p = cstatic("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", ok=False)
    assert p.returncode != 0 and "'min' is an input since opset 11" in p.stderr
