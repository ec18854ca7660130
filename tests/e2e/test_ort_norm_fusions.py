"""ONNX Runtime's float normalization rewrites, mirrored by the compiler so
that a decomposed layer normalization rounds as ORT's default session
computes it (ORT_ENABLE_ALL, 1 thread), bit for bit:

- LayerNormFusion: ReduceMean → Sub → Pow(2) → ReduceMean → Add(eps) →
  Sqrt → Div → Mul(scale) → Add(bias) is one LayerNormalization
  (passes/fuse_layer_norm_f32.c), whose kernel sums in its own order.

Each case is one small float graph (opset 17, the exporters' form) fed
from a graph input; every case here differs from ORT when the compiler
runs the decomposed ops instead.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import cstatic
from conftest import mlas_float_order, ort_ref

pytestmark = pytest.mark.skipif(not mlas_float_order(),
                                reason="ORT's LayerNormalization order is the one of its AVX2/AVX-512 kernels")


def _model(nodes, x_shape, inits, opset=17):
    graph = helper.make_graph(nodes, "norm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def _ln_nodes(x, y, operands_swapped=False, eps="eps"):
    """The decomposed LayerNormalization over the last axis, as Paddle2ONNX
    and older PyTorch write it."""
    mul = ["w", "nrm"] if operands_swapped else ["nrm", "w"]
    add = ["b", "nw"] if operands_swapped else ["nw", "b"]
    return [helper.make_node("ReduceMean", [x], ["m"], axes=[-1]),
            helper.make_node("Sub", [x, "m"], ["d"]),
            helper.make_node("Pow", ["d", "two"], ["p"]),
            helper.make_node("ReduceMean", ["p"], ["v"], axes=[-1]),
            helper.make_node("Add", ["v", eps], ["ve"]),
            helper.make_node("Sqrt", ["ve"], ["s"]),
            helper.make_node("Div", ["d", "s"], ["nrm"]),
            helper.make_node("Mul", mul, ["nw"]),
            helper.make_node("Add", add, [y])]


def _ln_inits(n, rng, eps=1e-5):
    return [numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "w"),
            numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "b"),
            numpy_helper.from_array(np.array(2.0, np.float32), "two"),
            numpy_helper.from_array(np.array(eps, np.float32), "eps")]


def _check(tmp_path, model, x, what):
    ref = ort_ref.session(model.SerializeToString()).run(None, {"x": x})[0]
    got = cstatic.compile(model.SerializeToString(), "c_static_lib -allow-float=1", out=tmp_path / "out").run(x)
    got = np.asarray(got[0] if isinstance(got, (list, tuple)) else got).reshape(ref.shape)
    bad = np.flatnonzero(got.view(np.int32) != ref.view(np.int32))
    assert bad.size == 0, f"{what}: {bad.size}/{got.size} differ from ORT, first {got.flat[bad[0]]!r} vs {ref.flat[bad[0]]!r}"


# (x shape, operands swapped, epsilon): PP-OCRv4 rec's SVTR block
# (40 tokens × 120), a row with a tail of 5 after the 8-lane chains, short
# rows (ORT's scalar path), epsilon 1e-6.
LN_CASES = [((1, 40, 120), False, 1e-5), ((1, 40, 120), True, 1e-5), ((2, 7, 37), False, 1e-5),
            ((3, 6), True, 1e-5), ((4, 64), False, 1e-6)]


@pytest.mark.parametrize("case", LN_CASES, ids=lambda c: f"{'x'.join(map(str, c[0]))}{'_swapped' if c[1] else ''}_eps{c[2]:g}")
def test_layer_norm_fusion(tmp_path, case):
    shape, swapped, eps = case
    rng = np.random.default_rng(shape[-1])
    model = _model(_ln_nodes("x", "y", swapped), shape, _ln_inits(shape[-1], rng, eps))
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    _check(tmp_path, model, x, f"decomposed LayerNorm {shape}")


def _rms_nodes(x, y):
    """RMS norm as exporters write it (T5-style): no mean, no bias."""
    return [helper.make_node("Pow", [x, "two"], ["p"]),
            helper.make_node("ReduceMean", ["p"], ["v"], axes=[-1]),
            helper.make_node("Add", ["v", "eps"], ["ve"]),
            helper.make_node("Sqrt", ["ve"], ["s"]),
            helper.make_node("Div", [x, "s"], ["nrm"]),
            helper.make_node("Mul", ["nrm", "w"], [y])]


# SimplifiedLayerNormFusion: ORT's kernel sums 8 fused chains from 16
# elements on, a plain float sum below.
@pytest.mark.parametrize("shape", [(1, 40, 120), (2, 9, 37), (3, 16), (4, 10)], ids=lambda s: "x".join(map(str, s)))
def test_simplified_layer_norm_fusion(tmp_path, shape):
    rng = np.random.default_rng(shape[-1] + 1)
    model = _model(_rms_nodes("x", "y"), shape, _ln_inits(shape[-1], rng))
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    _check(tmp_path, model, x, f"decomposed RMS norm {shape}")


# A LayerNorm over a Transpose (PP-OCRv4 rec's first SVTR block, opset 11:
# the flattened feature map [1, 120, 40] transposed to 40 tokens of 120):
# below opset 17 ORT's transpose optimizer moves the Transpose below the
# ReduceMean and the Sub first, so the mean sums over the strided axis and
# the rest becomes SimplifiedLayerNormalization + Add(bias)
# (passes/push_transpose_reduce_mean.c); from opset 17 on ORT fuses the
# LayerNormalization first and the Transpose stays. (Batch 1: with more,
# the moved mean is a K-R-K reduction, which ORT sums with a GEMM the
# reduce kernel does not mirror.)
@pytest.mark.parametrize("case", [((1, 120, 40), (0, 2, 1), False, 11), ((1, 120, 40), (0, 2, 1), True, 13),
                                  ((1, 24, 5, 6), (0, 2, 3, 1), False, 16), ((1, 7, 9), (0, 2, 1), False, 12),
                                  ((1, 120, 40), (0, 2, 1), True, 17), ((3, 7, 9), (0, 2, 1), False, 17)],
                         ids=lambda c: f"{'x'.join(map(str, c[0]))}_perm{''.join(map(str, c[1]))}"
                                       f"{'_residual' if c[2] else ''}_opset{c[3]}")
def test_layer_norm_of_transpose(tmp_path, case):
    shape, perm, residual, opset = case
    n = shape[perm[-1]]
    rng = np.random.default_rng(n + 2)
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], perm=list(perm))] + _ln_nodes("xt", "ln" if residual else "y")
    if residual:  # the Transpose also feeds the block's residual Add
        nodes.append(helper.make_node("Add", ["xt", "ln"], ["y"]))
    model = _model(nodes, shape, _ln_inits(n, rng), opset=opset)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    _check(tmp_path, model, x, f"LayerNorm of Transpose{perm} {shape} opset {opset}")


# The move alone, at every opset: a mean over a transposed axis sums in the
# original layout's order (KR becomes RK).
@pytest.mark.parametrize("case", [((1, 120, 40), (0, 2, 1), [-1], 17), ((1, 8, 5, 6), (0, 2, 3, 1), [-1], 13),
                                  ((33, 17), (1, 0), [0], 17)],
                         ids=lambda c: f"{'x'.join(map(str, c[0]))}_perm{''.join(map(str, c[1]))}_opset{c[3]}")
def test_reduce_mean_of_transpose(tmp_path, case):
    shape, perm, axes, opset = case
    rng = np.random.default_rng(len(shape))
    nodes = [helper.make_node("Transpose", ["x"], ["xt"], perm=list(perm)),
             helper.make_node("ReduceMean", ["xt"], ["y"], axes=axes)]
    model = _model(nodes, shape, [], opset=opset)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    _check(tmp_path, model, x, f"ReduceMean{axes} of Transpose{perm} {shape}")


# SkipLayerNormFusion: a LayerNorm over a residual Add of two 3-D tensors
# that only it reads (PP-OCRv4 rec's last SVTR LayerNorm, epsilon 1e-6) is
# ORT's SkipLayerNormalization: Welford's statistics at every row length.
# Where the sum is read elsewhere too (the residual stream of the blocks
# before) ORT keeps the LayerNormalization, and so does the compiler.
@pytest.mark.parametrize("case", [((1, 40, 120), False, 1e-6, 11), ((2, 9, 37), False, 1e-5, 13),
                                  ((1, 40, 120), True, 1e-6, 11), ((1, 6, 64), False, 1e-5, 17)],
                         ids=lambda c: f"{'x'.join(map(str, c[0]))}{'_sum_read_twice' if c[1] else ''}_opset{c[3]}")
def test_skip_layer_norm_fusion(tmp_path, case):
    shape, shared, eps, opset = case
    rng = np.random.default_rng(shape[-1] + 3)
    nodes = [helper.make_node("Add", ["x", "r"], ["xs"])] + _ln_nodes("xs", "ln" if shared else "y")
    if shared:
        nodes.append(helper.make_node("Add", ["xs", "ln"], ["y"]))
    inits = _ln_inits(shape[-1], rng, eps)
    graph = helper.make_graph(nodes, "skip", [helper.make_tensor_value_info(v, TensorProto.FLOAT, shape) for v in "xr"],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    r = rng.standard_normal(shape).astype(np.float32)
    ref = ort_ref.session(model.SerializeToString()).run(None, {"x": x, "r": r})[0]
    got = cstatic.compile(model.SerializeToString(), "c_static_lib -allow-float=1", out=tmp_path / "out").run(x, r)
    got = np.asarray(got[0] if isinstance(got, (list, tuple)) else got).reshape(ref.shape)
    bad = np.flatnonzero(got.view(np.int32) != ref.view(np.int32))
    assert bad.size == 0, f"Add + LayerNorm {shape}: {bad.size}/{got.size} differ from ORT"


# Add(eps, var): ORT 1.30 fuses it too, but takes its default epsilon 1e-5
# instead of the constant (the graph's is 1e-6 here); the compiler does the
# same (fuse_layer_norm_f32.c, eps_of). Also x − mean read elsewhere: no
# LayerNorm, an RMS norm of it (SimplifiedLayerNormFusion).
@pytest.mark.parametrize("case", ["eps_first", "centered_is_output"])
def test_layer_norm_fusion_corners(tmp_path, case):
    shape = (1, 12, 48)
    rng = np.random.default_rng(7)
    nodes = _ln_nodes("x", "y")
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]
    if case == "eps_first":
        nodes[4] = helper.make_node("Add", ["eps", "v"], ["ve"])
    else:
        outputs.append(helper.make_tensor_value_info("d", TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "ln", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)], outputs,
                              _ln_inits(shape[-1], rng, 1e-6))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    x = (rng.standard_normal(shape) * 3 + 1).astype(np.float32)
    _check(tmp_path, model, x, case)
