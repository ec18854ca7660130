"""Trained PaddleOCR models as rapidocr-onnxruntime 1.4.4 ships them (raw
Paddle2ONNX files, opset 11 and 12: BatchNormalization not folded, Shape →
Gather → Concat → Reshape shape arithmetic), against ONNX Runtime: float,
and ORT-quantized (quantize_static, int8 and uint8 activations) in both
requant modes. The detector (1×3×160×160) is whole: its six Resizes
(nearest ×2, asymmetric, floor) compile as repeats (test_resize.py), its
two ConvTransposes (2×2, stride 2) run the float kernel.

The wheel is fetched with pip once into tests/models/out/wheels (never
committed); slow (`make test-slow`). The files declare symbolic input
dims; cstatic compiles one static shape, so the test writes the shape the
models are used at into the graph input first (cls 1×3×48×192, rec
1×3×48×320). Before quantize_static the float model is converted to opset
13 (its QDQ output needs per-axis DequantizeLinear) and run through ORT's
basic optimizations (ORT's own quant_pre_process cannot infer the Paddle
graph's shapes).
"""

import os
import subprocess
import sys
import zipfile

import numpy as np
import onnx
import onnx.utils
import pytest

from conftest import MODELS_OUT, mlas_float_order, ort_ref
from cstatic_cli import cstatic

pytestmark = pytest.mark.slow

WHEEL = "rapidocr_onnxruntime-1.4.4-py3-none-any.whl"
MODELS = {"cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", [1, 3, 48, 192]),
          "det": ("ch_PP-OCRv4_det_infer.onnx", [1, 3, 160, 160]),
          "rec": ("ch_PP-OCRv4_rec_infer.onnx", [1, 3, 48, 320])}


@pytest.fixture(scope="module")
def paddle_dir():
    d = os.path.join(MODELS_OUT, "paddle_ocr")
    os.makedirs(d, exist_ok=True)
    wheels = os.path.join(MODELS_OUT, "wheels")
    if not os.path.exists(os.path.join(wheels, WHEEL)):
        p = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                            "rapidocr-onnxruntime==1.4.4", "-d", wheels], capture_output=True, text=True)
        if p.returncode:
            pytest.skip(f"pip download rapidocr-onnxruntime==1.4.4 failed: {p.stderr.strip()[-300:]}")
    with zipfile.ZipFile(os.path.join(wheels, WHEEL)) as z:
        for member, _ in MODELS.values():
            dst = os.path.join(d, member)
            if not os.path.exists(dst):
                with z.open(f"rapidocr_onnxruntime/models/{member}") as f, open(dst, "wb") as out:
                    out.write(f.read())
    return d


def _fixed(d, name):
    """The float model with its input shape written in."""
    member, shape = MODELS[name]
    path = os.path.join(d, f"{name}_float.onnx")
    if not os.path.exists(path):
        m = onnx.load(os.path.join(d, member))
        dims = m.graph.input[0].type.tensor_type.shape.dim
        for i, s in enumerate(shape):
            dims[i].Clear()
            dims[i].dim_value = s
        for o in m.graph.output:
            o.type.tensor_type.ClearField("shape")
        onnx.save(m, path)
    return path


def _quantized(d, name, act):
    path = os.path.join(d, f"{name}_ort_{act}.onnx")
    if os.path.exists(path):
        return path
    import onnx.version_converter
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod,
                                          QuantFormat, QuantType, quantize_static)
    shape = MODELS[name][1]
    m13 = os.path.join(d, f"{name}_13.onnx")
    onnx.save(onnx.version_converter.convert_version(onnx.load(_fixed(d, name)), 13), m13)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = os.path.join(d, f"{name}_basic.onnx")
    ort.InferenceSession(m13, so, providers=["CPUExecutionProvider"])
    calib = np.random.default_rng(99).uniform(-1, 1, [8] + shape[1:]).astype(np.float32)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"x": calib[i:i + 1]} for i in range(len(calib))])

        def get_next(self):
            return next(self.it, None)

    quantize_static(so.optimized_model_filepath, path + ".part.onnx", Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, weight_type=QuantType.QInt8,
                    activation_type=QuantType.QInt8 if act == "s8" else QuantType.QUInt8,
                    calibrate_method=CalibrationMethod.MinMax)
    os.replace(path + ".part.onnx", path)
    return path


def _run(tmp_path, model, x, target="c_static_lib"):
    out = tmp_path / "out"
    cstatic("compile", model, "-o", out, "-q", "-t", target)
    np.save(tmp_path / "x.npy", x)
    cstatic("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    return np.load(tmp_path / "y.npy")


def _inputs(name):
    rng = np.random.default_rng(5)
    if name != "det":
        return rng.uniform(-1, 1, [2] + MODELS[name][1][1:]).astype(np.float32)
    # the detector sees a page: dark strokes on light paper, normalized as
    # PaddleOCR does (on noise its map is all but 0 and compares nothing)
    h, w = MODELS[name][1][2:]
    img = np.full((2, h, w), 0.9, np.float32)
    for b in range(2):
        for _ in range(12):
            r, c = rng.integers(0, h - 10), rng.integers(0, w - 40)
            img[b, r:r + rng.integers(3, 8), c:c + rng.integers(10, 40)] = 0.1
    return np.repeat((img[:, None] - 0.45) / 0.225, 3, axis=1).astype(np.float32)


_FLOAT = {}


def _float_result(tmp_path, paddle_dir, name):
    """(cstatic's output, ORT's) on the float model, once per model for
    both float tests."""
    if name not in _FLOAT:
        model = _fixed(paddle_dir, name)
        x = _inputs(name)
        _FLOAT[name] = (_run(tmp_path, model, x), ort_ref.run(model, x))
    return _FLOAT[name]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_float_model(tmp_path, paddle_dir, name):
    """Float kernels: close to ORT (measured 136 dB cls, 115 dB det, 121 dB
    rec)."""
    got, ref = _float_result(tmp_path, paddle_dir, name)
    sqnr = 10 * np.log10(np.sum(ref.astype(np.float64) ** 2) / max(np.sum((got.astype(np.float64) - ref) ** 2), 1e-30))
    print(f"PP-OCR {name} float: cstatic == ORT on {float(np.mean(got == ref)):.4f}, SQNR {sqnr:.1f} dB")
    assert sqnr > 90, f"{sqnr:.1f} dB"
    if name == "det":  # a probability map: the text mask at DB's threshold
        assert np.array_equal(got > 0.3, ref > 0.3)
    else:
        assert np.array_equal(got.argmax(-1), ref.argmax(-1))


NO_MLAS_ORDER = "this CPU's MLAS has no fused multiply-adds: the reference order runs (conftest.mlas_float_order)"


# All three 100 % bit-identical to ORT where MLAS has FMA: cls since its
# NCHW squeeze-excitation convs take MLAS's generic-conv order
# (conv2d_f32__host_mlas.c), det since ConvTranspose takes ORT's
# (conv_transpose2d_f32__host_mlas.c), rec since its SVTR transformer
# blocks run as ORT rewrites them (LayerNormFusion, SimplifiedLayerNormFusion
# after the transpose optimizer's move, SkipLayerNormFusion:
# passes/fuse_layer_norm_f32.c, push_transpose_reduce_mean.c).
@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(not mlas_float_order(), strict=True, reason=NO_MLAS_ORDER))
    for n in sorted(MODELS)])
def test_float_bit_identical(tmp_path, paddle_dir, name):
    got, ref = _float_result(tmp_path, paddle_dir, name)
    exact = float(np.mean(got == ref))
    assert exact >= 0.99, f"PP-OCR {name} float: cstatic bit-identical to ORT on {exact:.4f}"


# cls's last feature map (its last conv block's hard-swish, 200 x 2 x 96
# per image, before the pooling and the 2-class classifier): the 4
# probabilities above alone would hide a difference that rounds away
CLS_FEATURES = "hardswish_17.tmp_0"


@pytest.mark.xfail(not mlas_float_order(), strict=True, reason=NO_MLAS_ORDER)
def test_float_cls_features_bit_identical(tmp_path, paddle_dir):
    full = _fixed(paddle_dir, "cls")
    m = onnx.load(full)
    assert any(CLS_FEATURES in n.output for n in m.graph.node), f"{CLS_FEATURES} not in {full}"
    sub = str(tmp_path / "cls_features.onnx")
    onnx.utils.extract_model(full, sub, [m.graph.input[0].name], [CLS_FEATURES], check_model=False)
    x = _inputs("cls")
    got, ref = _run(tmp_path, sub, x), ort_ref.run(sub, x)
    exact = float(np.mean(got == ref))
    print(f"PP-OCR cls float features ({got.size} values): cstatic == ORT on {exact:.4f}")
    assert exact >= 0.99, f"PP-OCR cls float features: bit-identical to ORT on {exact:.4f}"


@pytest.mark.parametrize("requant", ["float", "q31"])
@pytest.mark.parametrize("act", ["s8", "u8"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_quantized_model_matches_ort(tmp_path, paddle_dir, name, act, requant):
    model = _quantized(paddle_dir, name, act)
    x = _inputs(name)
    config = {"session.qdqisint8allowed": "1"}
    if act == "u8":
        config["session.x64quantprecision"] = "1"
    ref = ort_ref.run(model, x, config=config)
    got = _run(tmp_path, model, x, f"c_static_lib -requant={requant}")
    exact = float(np.mean(got == ref))
    assert exact >= 0.99, f"{name} {act} {requant}: {exact:.4f} bit-identical"
