"""SiLU gates and squeeze-excitation scales between QDQ, against ONNX
Runtime with every QDQ group fused (session.qdqisint8allowed=1).

x·Sigmoid(x) becomes one 256-entry table (FuseQDQToSiLU); these models
feed every int8 value through it, so each table entry is compared with
ORT's. With the input scale 0.117593795 (zero point −9) a Sigmoid table
computed with 1/(1 + expf(−x)) differs from ORT's (MLAS's logistic) in
one entry after quantization to 1/255, and that entry changes the SiLU
output for output scale 0.05: the table must be built with MLAS's
logistic, as QLinearSigmoid's is. A squeeze-excitation block (a tensor
times a per-channel Sigmoid of its pooled values) runs as QLinearMul with
broadcasting.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from conftest import ort_ref
from cstatic_cli import cstatic

XS = np.float32(0.117593795)
XZ = -9
SS, SZ = np.float32(1.0 / 255.0), -128
YS, YZ = np.float32(0.05), -107


def _qdq(name, src, scale, zp):
    return [h.make_node("QuantizeLinear", [src, f"{name}_s", f"{name}_z"], [f"{name}_q"]),
            h.make_node("DequantizeLinear", [f"{name}_q", f"{name}_s", f"{name}_z"], [f"{name}_dq"])], \
        [nh.from_array(np.array(scale, np.float32), f"{name}_s"), nh.from_array(np.array(zp, np.int8), f"{name}_z")]


def silu_model(quantized, swap):
    """x → QDQ → x·Sigmoid(x) → QDQ: ORT's form has a QDQ after the
    Sigmoid (QLinearSigmoid + QLinearMul), PT2E's float form does not."""
    nodes, inits = _qdq("x", "x", XS, XZ)
    nodes.append(h.make_node("Sigmoid", ["x_dq"], ["sig"]))
    side = "sig"
    if quantized:
        n2, i2 = _qdq("s", "sig", SS, SZ)
        nodes += n2
        inits += i2
        side = "s_dq"
    nodes.append(h.make_node("Mul", [side, "x_dq"] if swap else ["x_dq", side], ["m"]))
    n3, i3 = _qdq("y", "m", YS, YZ)
    nodes += n3
    inits += i3
    nodes.append(h.make_node("Identity", ["y_dq"], ["y"]))
    g = h.make_graph(nodes, "silu", [h.make_tensor_value_info("x", TP.FLOAT, [1, 4, 8, 8])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [1, 4, 8, 8])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def se_model():
    """Squeeze-excitation: x · Sigmoid(Conv(Relu(Conv(GlobalAveragePool(x))))),
    quantized by ORT (QLinearGlobalAveragePool, QLinearConv, QLinearSigmoid,
    QLinearMul broadcasting a [1, C, 1, 1] scale)."""
    r = np.random.default_rng(7)
    c, cr = 8, 4
    inits = [nh.from_array((r.standard_normal((cr, c, 1, 1)) * 0.5).astype(np.float32), "w1"),
             nh.from_array((r.standard_normal(cr) * 0.1).astype(np.float32), "b1"),
             nh.from_array((r.standard_normal((c, cr, 1, 1)) * 0.5).astype(np.float32), "w2"),
             nh.from_array((r.standard_normal(c) * 0.1).astype(np.float32), "b2"),
             nh.from_array((r.standard_normal((c, c, 3, 3)) * 0.3).astype(np.float32), "w0"),
             nh.from_array((r.standard_normal((c, c, 3, 3)) * 0.3).astype(np.float32), "w3")]
    nodes = [h.make_node("Conv", ["x", "w0"], ["f"], pads=[1, 1, 1, 1]),
             h.make_node("Sigmoid", ["f"], ["fs"]),
             h.make_node("Mul", ["f", "fs"], ["a"]),          # SiLU
             h.make_node("GlobalAveragePool", ["a"], ["p"]),
             h.make_node("Conv", ["p", "w1", "b1"], ["c1"]),
             h.make_node("Relu", ["c1"], ["r1"]),
             h.make_node("Conv", ["r1", "w2", "b2"], ["c2"]),
             h.make_node("Sigmoid", ["c2"], ["g"]),
             h.make_node("Mul", ["a", "g"], ["se"]),          # the SE scale
             h.make_node("Conv", ["se", "w3"], ["y"], pads=[1, 1, 1, 1])]
    g = h.make_graph(nodes, "se", [h.make_tensor_value_info("x", TP.FLOAT, [1, c, 6, 6])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [1, c, 6, 6])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    return m


def _every_q(shape):
    """Inputs that quantize to every int8 value (and some beyond)."""
    q = np.arange(-128, 128)
    v = XS * (np.resize(q, int(np.prod(shape))) - XZ)
    return v.reshape(shape).astype(np.float32)


def _compare(tmp_path, path, x, requant="float", u8=False):
    # uint8 activations: ORT's u8·s8 GEMM on AVX2 without VNNI saturates
    # int16 pair sums unless weights go to u8 (x64quantprecision).
    config = {"session.qdqisint8allowed": "1"}
    if u8:
        config["session.x64quantprecision"] = "1"
    want = ort_ref.session(str(path), config=config).run(None, {"x": x})[0]
    out = tmp_path / f"out_{requant}"
    cstatic("compile", path, "-o", out, "-q", "-t", f"c_static_lib -requant={requant}")
    np.save(tmp_path / "x.npy", x)
    cstatic("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    return np.load(tmp_path / "y.npy"), want, (out / "lib0.c").read_text()


@pytest.mark.parametrize("requant", ["float", "q31"])
@pytest.mark.parametrize("swap", [0, 1])
@pytest.mark.parametrize("quantized", [0, 1], ids=["float_form", "ort_form"])
def test_silu_is_one_table_equal_to_ort(tmp_path, quantized, swap, requant):
    path = tmp_path / "silu.onnx"
    onnx.save(silu_model(quantized, swap), path)
    x = _every_q([1, 4, 8, 8])
    got, want, src = _compare(tmp_path, path, x, requant)
    assert np.array_equal(got, want), f"{np.mean(got == want):.4f} exact"
    assert src.count("tidsp_lut_i8(") == 1 and "tidsp_mul_i8(" not in src and "tidsp_unary_f32(" not in src


@pytest.mark.parametrize("act", ["s8", "u8"])
def test_squeeze_excitation_matches_ort(tmp_path, act):
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                          QuantType, quantize_static)

    class Reader(CalibrationDataReader):
        def __init__(self):
            r = np.random.default_rng(11)
            self.it = iter([{"x": r.standard_normal((1, 8, 6, 6)).astype(np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.it, None)

    fp = tmp_path / "se_float.onnx"
    onnx.save(se_model(), fp)
    qp = tmp_path / f"se_{act}.onnx"
    quantize_static(str(fp), str(qp), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    weight_type=QuantType.QInt8,
                    activation_type=QuantType.QInt8 if act == "s8" else QuantType.QUInt8)
    x = np.random.default_rng(5).standard_normal((1, 8, 6, 6)).astype(np.float32)
    for requant in ("float", "q31"):
        got, want, src = _compare(tmp_path, qp, x, requant, u8=act == "u8")
        assert np.array_equal(got, want), f"{act}/{requant}: {np.mean(got == want):.4f} exact"
        assert "silu_lut" in src and "tidsp_mul_i8(" in src
