"""BatchNormalization and Gemm with alpha, beta and a broadcast bias,
against ONNX Runtime.

- A BN after a float Conv is folded into it as ORT's ConvBNFusion computes
  the folded weights: the compiled model equals, bit for bit, the compiled
  model ORT's basic optimizations write (whose Conv carries ORT's folded
  weights). The float convolution itself sums in another order than
  MLAS's, so against ORT's output it is close, not equal.
- A BN that no Conv absorbs (DenseNet's, after a Concat) is ORT's
  BatchNorm kernel: equal to ORT bit for bit, float and between QDQ.
- Gemm: alpha·A·B + beta·C in ORT's order, C of any broadcastable shape
  (a constant or a runtime tensor); int8 between QDQ with alpha.
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from conftest import ort_ref
from cstatic_cli import cstatic


def _f32(name, v):
    return nh.from_array(np.asarray(v, np.float32), name)


def _save(path, nodes, inputs, inits, opset=13):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, TP.FLOAT, s) for n, s in inputs],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def _cstatic(tmp_path, path, feeds, tag):
    out = tmp_path / f"out_{tag}"
    cstatic("compile", path, "-o", out, "-q")
    args = []
    for k, v in feeds.items():
        np.save(tmp_path / f"{k}.npy", v)
        args += ["--input", tmp_path / f"{k}.npy"]
    cstatic("run", out, *args, "--output", tmp_path / f"y_{tag}.npy")
    return np.load(tmp_path / f"y_{tag}.npy"), (out / "lib0.c").read_text()


def _bn_inits(c, seed=3):
    r = np.random.default_rng(seed)
    return [_f32("s", r.uniform(0.5, 1.5, c)), _f32("b", r.uniform(-0.5, 0.5, c)),
            _f32("m", r.uniform(-0.5, 0.5, c)), _f32("v", r.uniform(0.2, 2.0, c))]


@pytest.mark.parametrize("bias", [True, False])
def test_conv_batchnorm_folds_as_ort(tmp_path, bias):
    r = np.random.default_rng(1)
    c = 8
    inits = _bn_inits(c) + [_f32("w", r.standard_normal((c, 4, 3, 3)) * 0.3), _f32("cb", r.standard_normal(c) * 0.1)]
    nodes = [h.make_node("Conv", ["x", "w", "cb"] if bias else ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             h.make_node("BatchNormalization", ["c", "s", "b", "m", "v"], ["y"], epsilon=1e-3)]
    path = _save(tmp_path / "m.onnx", nodes, [("x", [1, 4, 9, 9])], inits)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = str(tmp_path / "ort_folded.onnx")
    ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    assert [n.op_type for n in onnx.load(tmp_path / "ort_folded.onnx").graph.node] == ["Conv"]
    x = r.standard_normal((1, 4, 9, 9)).astype(np.float32)
    got, src = _cstatic(tmp_path, path, {"x": x}, "bn")
    ours_of_ort, _ = _cstatic(tmp_path, tmp_path / "ort_folded.onnx", {"x": x}, "ort")
    assert np.array_equal(got, ours_of_ort)  # the same folded weights
    assert "tidsp_binary_f32(" not in src     # the BN is gone
    want = ort_ref.session(str(path)).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)  # float conv: another summation order


def densenet_block(c=6, growth=4):
    """DenseNet's dense layer: BN → ReLU → Conv on a Concat of features."""
    r = np.random.default_rng(2)
    inits = [_f32("w0", r.standard_normal((c, 3, 3, 3)) * 0.3), _f32("w1", r.standard_normal((growth, c, 3, 3)) * 0.3),
             _f32("w2", r.standard_normal((4, c + growth, 1, 1)) * 0.3)]
    bn1 = [_f32(f"{k}1", v.astype(np.float32)) for k, v in
           zip("sbmv", (r.uniform(0.5, 1.5, c), r.uniform(-.5, .5, c), r.uniform(-.5, .5, c), r.uniform(.2, 2, c)))]
    cc = c + growth
    bn2 = [_f32(f"{k}2", v.astype(np.float32)) for k, v in
           zip("sbmv", (r.uniform(0.5, 1.5, cc), r.uniform(-.5, .5, cc), r.uniform(-.5, .5, cc), r.uniform(.2, 2, cc)))]
    nodes = [h.make_node("Conv", ["x", "w0"], ["f0"], pads=[1, 1, 1, 1]),
             h.make_node("BatchNormalization", ["f0", "s1", "b1", "m1", "v1"], ["n1"]),
             h.make_node("Relu", ["n1"], ["a1"]),
             h.make_node("Conv", ["a1", "w1"], ["f1"], pads=[1, 1, 1, 1]),
             h.make_node("Concat", ["f0", "f1"], ["cat"], axis=1),
             h.make_node("BatchNormalization", ["cat", "s2", "b2", "m2", "v2"], ["n2"]),
             h.make_node("Relu", ["n2"], ["a2"]),
             h.make_node("Conv", ["a2", "w2"], ["y"])]
    return nodes, inits + bn1 + bn2


def test_batchnorm_after_concat_float(tmp_path):
    """The BN after the Concat (and the one whose Conv output is also read by
    the Concat) is ORT's BatchNorm kernel: equal to ORT's after it. The
    convolutions around it sum in their own order, so the block's output is
    compared with ORT run on the same BN input (a cut after the BN)."""
    nodes, inits = densenet_block()
    cut = nodes[:6]
    cut[-1] = h.make_node("BatchNormalization", ["cat", "s2", "b2", "m2", "v2"], ["y"])
    inputs = [("f0", [1, 6, 7, 7]), ("f1", [1, 4, 7, 7])]
    path = _save(tmp_path / "bn_concat.onnx", [cut[4], cut[5]], inputs, inits)
    r = np.random.default_rng(4)
    feeds = {k: r.standard_normal(s).astype(np.float32) for k, s in inputs}
    got, src = _cstatic(tmp_path, path, feeds, "cat")
    want = ort_ref.session(str(path)).run(None, feeds)[0]
    assert np.array_equal(got, want)
    assert src.count("tidsp_binary_f32(") == 2  # one Mul, one Add


@pytest.mark.parametrize("act", ["s8", "u8"])
def test_densenet_block_quantized(tmp_path, act):
    """ORT-quantized dense block: the BN after the Concat runs between DQ and
    Q in float (ORT has no QLinear BN); every output equals ORT's."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                          QuantType, quantize_static)
    from onnxruntime.quantization.shape_inference import quant_pre_process
    nodes, inits = densenet_block()
    fp = _save(tmp_path / "dense.onnx", nodes, [("x", [1, 3, 7, 7])], inits)
    pre = tmp_path / "dense_pre.onnx"
    quant_pre_process(str(fp), str(pre))

    class Reader(CalibrationDataReader):
        def __init__(self):
            r = np.random.default_rng(9)
            self.it = iter([{"x": r.standard_normal((1, 3, 7, 7)).astype(np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.it, None)

    qp = tmp_path / f"dense_{act}.onnx"
    quantize_static(str(pre), str(qp), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    weight_type=QuantType.QInt8,
                    activation_type=QuantType.QInt8 if act == "s8" else QuantType.QUInt8)
    assert "BatchNormalization" in {n.op_type for n in onnx.load(qp).graph.node}
    x = np.random.default_rng(6).standard_normal((1, 3, 7, 7)).astype(np.float32)
    config = {"session.qdqisint8allowed": "1"}
    if act == "u8":
        config["session.x64quantprecision"] = "1"  # exact u8·s8 GEMM without VNNI
    want = ort_ref.session(str(qp), config=config).run(None, {"x": x})[0]
    got, _ = _cstatic(tmp_path, qp, {"x": x}, act)
    assert np.array_equal(got, want), f"{np.mean(got == want):.4f} exact"


GEMMS = {
    "alpha_beta_mn": (dict(alpha=0.5, beta=2.0, transB=1), (4, 5)),
    "alpha_beta_scalar": (dict(alpha=1.5, beta=0.25, transB=1), (1,)),
    "bias_m1": (dict(transB=1), (4, 1)),
    "alpha_n": (dict(alpha=3.0, transB=1), (5,)),
    "beta_transA": (dict(beta=-1.0, transA=1), (1, 5)),
}


@pytest.mark.parametrize("name", sorted(GEMMS))
@pytest.mark.parametrize("c_input", [False, True], ids=["c_const", "c_runtime"])
def test_gemm_alpha_beta_bias(tmp_path, name, c_input):
    """Equal, bit for bit, to the same computation written out (MatMul, Mul
    by alpha, Add of beta·C: ORT's order); against ORT within the float
    product's rounding (MLAS sums K terms in another order)."""
    kw, cshape = GEMMS[name]
    r = np.random.default_rng(len(name))
    a_shape = (6, 4) if kw.get("transA") else (4, 6)
    b = r.standard_normal((5, 6) if kw.get("transB") else (6, 5)).astype(np.float32)
    cval = r.standard_normal(cshape).astype(np.float32)
    inits = [_f32("B", b)] + ([] if c_input else [_f32("C", cval)])
    inputs = [("a", list(a_shape))] + ([("C", list(cshape))] if c_input else [])
    path = _save(tmp_path / "gemm.onnx", [h.make_node("Gemm", ["a", "B", "C"], ["y"], **kw)], inputs, inits)
    x = r.standard_normal(a_shape).astype(np.float32)
    feeds = {"a": x, **({"C": cval} if c_input else {})}
    got, _ = _cstatic(tmp_path, path, feeds, "gemm")
    alpha, beta = np.float32(kw.get("alpha", 1.0)), np.float32(kw.get("beta", 1.0))
    a2 = x.T if kw.get("transA") else x
    b2 = b.T if kw.get("transB") else b
    mm = [h.make_node("MatMul", ["a2", "b2"], ["p"]), h.make_node("Mul", ["p", "alpha"], ["q"]),
          h.make_node("Mul", ["C", "beta"], ["bc"]), h.make_node("Add", ["q", "bc"], ["y"])]
    dpath = _save(tmp_path / "decomposed.onnx", mm, [("a2", list(a2.shape)), ("C", list(cshape))],
                  [_f32("b2", b2), _f32("alpha", alpha), _f32("beta", beta)])
    ref, _ = _cstatic(tmp_path, dpath, {"a2": np.ascontiguousarray(a2), "C": cval}, "dec")
    assert np.array_equal(got, ref)
    want = ort_ref.session(str(path)).run(None, feeds)[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


QGEMMS = {  # name → (Gemm attributes, bias, ORT fuses it into QGemm)
    "bias": (dict(transB=1), True, True),
    "alpha": (dict(alpha=0.5, transB=1), False, True),
    "alpha_bias": (dict(alpha=0.5, transB=1), True, False),  # ORT 1.30: alpha would scale the bias too
    "beta_bias": (dict(beta=0.5, transB=1), True, True),     # quantize_static folds beta into C
}


@pytest.mark.parametrize("requant", ["float", "q31"])
@pytest.mark.parametrize("act", ["s8", "u8"])
@pytest.mark.parametrize("name", sorted(QGEMMS))
def test_quantized_gemm_alpha_beta(tmp_path, name, act, requant):
    """ORT-quantized Gemm: int8 where ORT fuses it into QGemm (alpha with
    no bias, a bias with alpha = beta = 1), DQ → float Gemm → Q where it
    does not; every output equal to ORT's."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                          QuantType, quantize_static)
    kw, bias, fused = QGEMMS[name]
    r = np.random.default_rng(3)
    inits = [_f32("B", r.standard_normal((8, 16)))] + ([_f32("C", r.standard_normal(8))] if bias else [])
    nodes = [h.make_node("Relu", ["x"], ["xr"]),
             h.make_node("Gemm", ["xr", "B"] + (["C"] if bias else []), ["g"], **kw),
             h.make_node("Relu", ["g"], ["y"])]
    fp = _save(tmp_path / "gemm.onnx", nodes, [("x", [1, 16])], inits, opset=17)

    class Reader(CalibrationDataReader):
        def __init__(self):
            rr = np.random.default_rng(8)
            self.it = iter([{"x": rr.standard_normal((1, 16)).astype(np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.it, None)

    qp = tmp_path / f"gemm_{act}.onnx"
    quantize_static(str(fp), str(qp), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    weight_type=QuantType.QInt8,
                    activation_type=QuantType.QInt8 if act == "s8" else QuantType.QUInt8)
    config = {"session.qdqisint8allowed": "1"}
    if act == "u8":
        config["session.x64quantprecision"] = "1"
    x = np.random.default_rng(4).standard_normal((6, 16)).astype(np.float32)
    want = np.concatenate([ort_ref.session(str(qp), config=config).run(None, {"x": x[i:i + 1]})[0]
                           for i in range(len(x))])
    out = tmp_path / "out"
    cstatic("compile", qp, "-o", out, "-q", "-t", f"c_static_lib -requant={requant}")
    got = []
    for i in range(len(x)):
        np.save(tmp_path / "x.npy", x[i:i + 1])
        cstatic("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
        got.append(np.load(tmp_path / "y.npy"))
    got = np.concatenate(got)
    assert np.array_equal(got, want), f"{np.mean(got == want):.4f} exact"
    src = (out / "lib0.c").read_text()
    assert ("tidsp_matmul_i8(" in src) == fused and ("tidsp_matmul_f32(" in src) == (not fused)
