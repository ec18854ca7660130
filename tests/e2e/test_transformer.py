"""A transformer encoder (tests/models/transformer.py: LayerNorm, multi-head
self-attention, GELU MLP, residual adds) through cstatic, against ONNX
Runtime.

The quantized variants must equal ORT bit for bit, the way ORT runs them
with the suite's configuration (ORT_ENABLE_ALL, session.qdqisint8allowed=1):
QGemm for the linear layers, QLinearMatMul for Q·Kᵀ and A·V (two runtime
operands), QLinearSoftmax for the attention weights, QLinearAdd/Mul where
ORT fuses them, and float LayerNormalization, Erf/Gelu and Div between
DequantizeLinear and QuantizeLinear. The float model cannot be bit-exact
(ORT's float MatMul is MLAS SGEMM with FMA and its own blocking), so it is
held to 100 dB SQNR and the same top-1.

(ORT's own default session, ORT_ENABLE_ALL without qdqisint8allowed, cannot
load the PT2E variant: its MatMul+Add → Gemm rewrite of the 3-D Linear
inserts a QuantizeLinear whose output_dtype INT8 contradicts its UINT8 zero
point. The suite's configuration loads it.)
"""
import os
import sys

import numpy as np
import pytest

from conftest import ORT_CONFIG, ort_ref
import cstatic as cstatic_api
from cstatic_cli import ROOT, cstatic

sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
sys.path.insert(0, os.path.join(ROOT, "python"))


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    import transformer
    out = tmp_path_factory.mktemp("transformer")
    transformer.generate(str(out))
    x = transformer.sample_inputs(16, seed=5)
    np.save(out / "x.npy", x)
    return out, x


def _run(out, variant, target="c_static_lib"):
    return cstatic_api.compile(out / f"{variant}.onnx", target).run(np.load(out / "x.npy"))


def _sqnr(ref, y):
    ref = ref.astype(np.float64)
    return 10 * np.log10((ref ** 2).sum() / max(((y - ref) ** 2).sum(), 1e-30))


@pytest.mark.parametrize("variant", ("pt2e", "ort_s8", "ort_u8"))
def test_quantized_transformer_equals_ort(models, variant):
    out, x = models
    ref = ort_ref.run(str(out / f"{variant}.onnx"), x, config=ORT_CONFIG)
    y = _run(out, variant).reshape(ref.shape)
    same = float(np.mean(y == ref))
    print(f"{variant}: identical {same:.4f}, SQNR {_sqnr(ref, y):.1f} dB")
    assert same == 1.0


@pytest.mark.parametrize("variant", ("pt2e", "ort_s8", "ort_u8"))
@pytest.mark.parametrize("target", ("c_static_lib", "c_static_lib -mcpu=cortex-m"))
def test_transformer_generated_c_is_warning_clean(models, variant, target, tmp_path):
    from test_warnings import assert_generated_c_clean
    out, _ = models
    cstatic("compile", out / f"{variant}.onnx", "-o", tmp_path / "c", "-t", target, "-q")
    assert_generated_c_clean(tmp_path / "c")


def test_float_transformer_close_to_ort(models):
    out, x = models
    ref = ort_ref.run(str(out / "float.onnx"), x, config=ORT_CONFIG)
    y = _run(out, "float", "c_static_lib -allow-float=1").reshape(ref.shape)
    print(f"float: SQNR {_sqnr(ref, y):.1f} dB")
    assert _sqnr(ref, y) >= 100.0
    assert (y.argmax(1) == ref.argmax(1)).all()


@pytest.mark.parametrize("variant", ("pt2e", "ort_s8", "ort_u8"))
def test_transformer_with_mmalib(models, variant):
    """-mmalib=1: every Linear (K, N multiples of 64; the 10-class head's N
    padded to 64, which pays once the call is staged) becomes an MMALIB FC
    and every residual add
    c7x_int8_residual_add_relu; attention's int8 products of two runtime
    tensors run on the MMA too (mmalib_batch_matmul_i16, ORT's bytes): both
    per block where ORT quantized them, one (Q·Kᵀ) where PT2E left A·V in
    float.
    MMALIB's 8-bit scale keeps each FC within 1 LSB of ORT, so the bar is
    the offload issue's: SQNR ≥ 30 dB and top-1 agreement ≥ 15/16."""
    import json
    out, x = models
    d = out / f"mm_{variant}"
    cstatic("compile", out / f"{variant}.onnx", "-o", d, "-t", "c_static_lib -mmalib=1")
    cstatic("run", d, "--input", out / "x.npy", "--output", d / "y.npy")
    ref = ort_ref.run(str(out / f"{variant}.onnx"), x, config=ORT_CONFIG)
    y = np.load(d / "y.npy").reshape(ref.shape)
    summary = json.loads((d / "manifest.json").read_text())["offload"]["summary"]
    agree = int((y.argmax(1) == ref.argmax(1)).sum())
    print(f"{variant} -mmalib=1: {summary}; SQNR {_sqnr(ref, y):.1f} dB, top-1 {agree}/16")
    assert summary == f"4 res_add, 9 FC, {2 if variant == 'pt2e' else 4} matmul", summary
    assert _sqnr(ref, y) >= 30.0
    assert agree >= 15


@pytest.mark.parametrize("fw_name,target", (("c7x_fw", "c_static_lib -mcpu=c7x"),
                                            ("c7x_fw_mmalib", "c_static_lib -mcpu=c7x -mmalib=1")))
def test_transformer_module_through_the_firmware(models, fw_name, target):
    """The encoder as a C7x module (LayerNorm, attention and softmax kernels
    resolved against the firmware's export table; with -mmalib=1 also the
    MMALIB FCs and the L2 staging): the firmware's output is the host
    build's, byte for byte."""
    import deploy_util
    out, x = models
    fw_bin = os.path.join(deploy_util.BIN_DIR, fw_name)
    assert os.path.exists(fw_bin), f"{fw_bin} not built"
    tag = fw_name
    mod = out / f"module_{tag}"
    cstatic("compile", out / "ort_s8.onnx", "-o", mod, "-t", target, "--emit=module", "-q")
    host = out / f"host_{tag}"
    cstatic("compile", out / "ort_s8.onnx", "-o", host, "-t", target, "-q")
    x1 = out / "x1.npy"
    np.save(x1, x[:1])
    cstatic("run", host, "--input", x1, "--output", host / "y.npy")
    ref = np.load(host / "y.npy").astype(np.float32)
    x[:1].astype(np.float32).tofile(out / "x1.bin")
    saved = deploy_util.FW_BIN
    deploy_util.FW_BIN = fw_bin
    try:
        work = out / f"fw_{tag}"
        work.mkdir(exist_ok=True)
        fw = deploy_util.Firmware(work)
        try:
            h = fw.load(mod / "lib0.out")
            fw.compute("infer", h, 0, "-i", out / "x1.bin", "-o", out / "y1.bin")
            assert (out / "y1.bin").read_bytes() == ref.tobytes(), "firmware output differs from cstatic run"
            fw.compute("unload", h)
        finally:
            fw.stop()
    finally:
        deploy_util.FW_BIN = saved
