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
