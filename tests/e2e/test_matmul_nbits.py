"""A constant MatMul that ONNX Runtime runs as MatMulNBits: cstatic folds it
and must compute what ORT computes at run time.

ORT rewrites MatMul(A, DequantizeLinear(int8 weight)) into com.microsoft
MatMulNBits (bits 8, block 32, accuracy_level 4), which quantizes A to int8
row by row before the product, so the result is not the float product.
ORT does not fold it even when A is a constant: it never folds a
DequantizeLinear. Swin-V2's continuous position bias is this case (a
Linear 2 -> 512 of its constant coordinate table, then ReLU, Linear,
16·sigmoid); with the float fold ~10 % of that bias was 1-2 steps off
ORT's and the network 25 % bit-identical.

Each model here computes such a MatMul from constants (through a Reshape,
or straight from a DQ of rank > 2 with the bias Add MatMulAddFusion moves
in: the Swin-V2 form), adds the graph input x, and is compared bit for bit
with ORT's default session. The test also checks that ORT's optimized graph
really has the MatMulNBits, so a change in ORT shows here, not as a
mystery elsewhere. compiler/passes/mark_matmul_nbits.c, eval/matmul_nbits.c.
"""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import ORT_CONFIG, ort_ref
import cstatic

F = np.float32


def _model(path, m, k, n, form, bias, per_column, zp, seed, relu_q=False):
    """y = f(constants) + x, f a MatMul of a constant A by DQ(int8 w)
    (relu_q: then ReLU and a Q/DQ pair, Swin-V2's cpb MLP up to its first
    quantized tensor, which the QDQ MatMul fusion must leave to this fold)."""
    rng = np.random.default_rng(seed)
    aq = rng.integers(-128, 128, (1, m, k)).astype(np.int8)
    w = rng.integers(-127, 128, (n, k)).astype(np.int8)  # [N][K]
    ws = rng.uniform(0.002, 0.02, n if per_column else ()).astype(F)
    wz = (rng.integers(-6, 7, n if per_column else ()) if zp else np.zeros(n if per_column else (), int)).astype(np.int8)
    inits = [numpy_helper.from_array(aq, "aq"), numpy_helper.from_array(np.array(0.0083, F), "as"),
             numpy_helper.from_array(np.array(0, np.int8), "az"), numpy_helper.from_array(ws, "ws"),
             numpy_helper.from_array(wz, "wz"), numpy_helper.from_array(np.array([m, k], np.int64), "shape")]
    nodes = [helper.make_node("DequantizeLinear", ["aq", "as", "az"], ["a3"])]
    if form == "dq3":  # A straight from the DQ, rank 3 (Swin-V2's cpb MLP, whose A is rank 4)
        a = "a3"
    else:  # through a Reshape to 2-D
        nodes.append(helper.make_node("Reshape", ["a3", "shape"], ["a"]))
        a = "a"
    if form == "kn":  # DQ over w [K][N], axis 1
        inits.append(numpy_helper.from_array(np.ascontiguousarray(w.T), "w"))
        nodes.append(helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wt"], axis=1))
    else:  # DQ over w [N][K], axis 0, then Transpose (PT2E's Linear)
        inits.append(numpy_helper.from_array(w, "w"))
        nodes += [helper.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=0),
                  helper.make_node("Transpose", ["wf"], ["wt"], perm=[1, 0])]
    nodes.append(helper.make_node("MatMul", [a, "wt"], ["mm"]))
    out = "mm"
    if bias:
        inits.append(numpy_helper.from_array((rng.standard_normal(n) * 0.1).astype(F), "b"))
        nodes.append(helper.make_node("Add", ["mm", "b"], ["mb"]))
        out = "mb"
    if relu_q:
        inits += [numpy_helper.from_array(np.array(0.018, F), "qs"), numpy_helper.from_array(np.array(-128, np.int8), "qz")]
        nodes += [helper.make_node("Relu", [out], ["r"]), helper.make_node("QuantizeLinear", ["r", "qs", "qz"], ["rq"]),
                  helper.make_node("DequantizeLinear", ["rq", "qs", "qz"], ["rd"])]
        out = "rd"
    yshape = [1, m, n]  # x broadcasts a 2-D product to [1, m, n]
    nodes.append(helper.make_node("Add", [out, "x"], ["y"]))
    g = helper.make_graph(nodes, "nbits", [helper.make_tensor_value_info("x", TensorProto.FLOAT, yshape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, yshape)], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return yshape


CASES = [  # id: (m, k, n, form, bias, per_column, zero points, relu_q)
    pytest.param(225, 2, 512, "dq3", True, True, False, True, id="swin_v2_cpb"),
    pytest.param(225, 2, 512, "dq3", True, True, False, False, id="swin_v2_cpb-float"),
    pytest.param(7, 1, 16, "dq3", True, True, False, False, id="dq3-k1"),
    pytest.param(9, 3, 24, "nk", True, True, False, False, id="reshape-nk-bias"),
    pytest.param(5, 4, 12, "nk", False, True, False, False, id="reshape-nk"),
    pytest.param(6, 2, 10, "kn", True, False, True, False, id="reshape-kn-tensor-zp"),
    pytest.param(4, 4, 8, "kn", False, True, True, False, id="reshape-kn-column-zp"),
]


@pytest.mark.parametrize("m,k,n,form,bias,per_column,zp,relu_q", CASES)
def test_constant_matmul_nbits_matches_ort(m, k, n, form, bias, per_column, zp, relu_q, tmp_path):
    path = tmp_path / "nbits.onnx"
    yshape = _model(str(path), m, k, n, form, bias, per_column, zp, seed=m * 100 + k * 10 + n, relu_q=relu_q)
    ort_ref.session(str(path), config=ORT_CONFIG, optimized_path=str(tmp_path / "opt.onnx"))
    ort_ops = [nd.op_type for nd in onnx.load(str(tmp_path / "opt.onnx")).graph.node]
    assert "MatMulNBits" in ort_ops, f"ORT no longer runs this MatMul as MatMulNBits: {ort_ops}"

    x = np.random.default_rng(1).standard_normal(yshape).astype(F)
    ref = ort_ref.run(str(path), x, config=ORT_CONFIG)
    out = cstatic.compile(path, "c_static_lib", out=tmp_path / "out").run(x)
    assert out.shape == ref.shape
    diff = int(np.sum(out.view(np.uint32) != ref.view(np.uint32)))
    assert diff == 0, f"{diff} of {ref.size} outputs differ from ORT's MatMulNBits (max |d| " \
                      f"{np.max(np.abs(out - ref)):.3g})"
