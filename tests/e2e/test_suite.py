"""The model suite end to end: cstatic against ONNX Runtime on the same file.

For each model (torchvision's ResNet-18, MobileNetV2, MobileNetV3-Small,
ShuffleNetV2 x1.0 and GoogLeNet at 224x224, seeded weights: tests/models/
archs.py; slow: MobileNetV3-Large, Swin-T, Swin-V2-T, ViT-B/16), each
quantization flow (PT2E,
ORT quantize_static with int8 / uint8 activations) and each requantization
form, compile with the CLI, run the 16 suite images (one batch-1 inference
each) and compare the float32 [16, 1000] logits with ORT's:
- float: the multiplier applied as ORT does, so the result must be ORT's
  bit for bit: top-1 on 16/16 and >= 99% of the logits bit-identical;
- q31: integer multiplier + shift; a value that lands within float rounding
  of a .5 boundary may round the other way: top-1 >= 15/16 and SQNR >= 35 dB.
The schedule must also keep the arena within 10% of the live-bytes bound.

Every case fills a row of the session table (conftest.py). The fast set
runs in `make test` (with the fast kernels it takes a few minutes), the
slow set in `make test-slow`. Where ORT is not an exact reference on this
CPU (ort_ref.inexact_reason) a case skips, saying why: the transformers'
ort_u8 cases where ORT's uint8 QLinearMatMul saturates (no VNNI:
ort_ref.u8_matmul_is_exact), their pt2e cases where ORT's float Softmax,
whose output PT2E leaves unquantized before the P·V MatMul, is not MLAS's
AVX512F kernel that cstatic mirrors (AVX2 only: ort_ref.float_softmax_is_mirrored).
"""

import json
import math

import numpy as np
import pytest
import cstatic

MODELS = ("resnet18", "mobilenetv2", "mobilenetv3s", "shufflenetv2", "googlenet")
SLOW_MODELS = ("mobilenetv3l", "swin_t", "swin_v2_t", "vit_b_16")
VARIANTS = ("pt2e", "ort_s8", "ort_u8")
REQUANTS = ("float", "q31")

NUM_IMAGES = 16
ARENA_SLACK = 1.10
ACCEPT = {  # requant -> (min top-1 agreements, min exact share, min SQNR dB)
    "float": (16, 0.99, None),
    "q31": (15, None, 35.0),
}


def _cases():
    cases = []
    for m in MODELS + SLOW_MODELS:
        for v in VARIANTS:
            for r in REQUANTS:
                slow = m in SLOW_MODELS
                marks = (pytest.mark.slow,) if slow else ()
                cases.append(pytest.param(m, v, r, id=f"{m}-{v}-{r}", marks=marks))
    return cases


def compare(ref, out):
    """top-1 agreements, share of bit-identical elements, SQNR in dB."""
    top1 = int(np.sum(ref.argmax(axis=1) == out.argmax(axis=1)))
    exact = float(np.mean(ref.view(np.uint32) == out.view(np.uint32)))
    err = np.sum((ref.astype(np.float64) - out.astype(np.float64)) ** 2)
    sig = np.sum(ref.astype(np.float64) ** 2)
    sqnr = math.inf if err == 0 else 10.0 * math.log10(sig / err)
    return top1, exact, sqnr


@pytest.mark.parametrize("model,variant,requant", _cases())
def test_model_matches_ort(model, variant, requant, model_suite, suite_table, tmp_path):
    row = suite_table.row(model=model, variant=variant, requant=requant)
    onnx_path = model_suite.model(model, variant)
    inputs = model_suite.inputs(model)
    reason = model_suite.ort_inexact_reason(model, variant)
    if reason:
        row["result"] = "skip: ORT not exact here"
        pytest.skip(reason)
    ref = model_suite.ort_output(model, variant)
    assert ref.shape == (NUM_IMAGES, 1000) and ref.dtype == np.float32

    out_dir = tmp_path / "compiled"
    row["result"] = "compile failed"
    compiled = cstatic.compile(onnx_path, f"c_static_lib -requant={requant}", out=out_dir)
    row["result"] = "run failed"
    out = compiled.run(np.load(inputs))  # NUM_IMAGES images through the batch-1 model
    row["result"] = "bad output"

    assert out.shape == ref.shape and out.dtype == np.float32, \
        f"cstatic output {out.dtype}{list(out.shape)}, ORT {ref.dtype}{list(ref.shape)}"
    top1, exact, sqnr = compare(ref, out)
    row.update({"top-1": f"{top1}/{NUM_IMAGES}", "exact share": exact, "SQNR dB": sqnr})

    with open(out_dir / "manifest.json") as f:
        manifest = json.load(f)
    arena, bound = manifest["arena_bytes"], manifest["live_bytes_lower_bound"]
    ratio = arena / bound if bound else math.inf
    row["arena ratio"] = ratio

    min_top1, min_exact, min_sqnr = ACCEPT[requant]
    failures = []
    if top1 < min_top1:
        failures.append(f"top-1 agrees on {top1}/{NUM_IMAGES} (need {min_top1})")
    if min_exact is not None and exact < min_exact:
        failures.append(f"bit-identical share {exact:.4f} (need {min_exact})")
    if min_sqnr is not None and sqnr < min_sqnr:
        failures.append(f"SQNR {sqnr:.1f} dB (need {min_sqnr})")
    if ratio > ARENA_SLACK:
        failures.append(f"arena {arena} B is {ratio:.3f}x the live-bytes bound {bound} B "
                        f"(need <= {ARENA_SLACK})")
    row["result"] = "FAIL" if failures else "ok"
    assert not failures, f"{model} {variant} requant={requant}: " + "; ".join(failures)


def test_softmax_probe_mirrors_cstatic(tmp_path):
    """ort_ref.mirrored_softmax, the known answer of the float Softmax probe
    (ort_ref.float_softmax_is_mirrored), is bit for bit what cstatic's
    compiled float Softmax gives on the probe's input; and on a CPU with
    AVX512F, where ORT runs the MLAS kernel both mirror, the probe finds
    ORT equal too, so the pt2e transformer cases run there."""
    from onnx import TensorProto, helper
    from conftest import ort_ref
    x = ort_ref.softmax_probe_input()
    g = helper.make_graph([helper.make_node("Softmax", ["x"], ["y"], axis=-1)], "softmax",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(x.shape))])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    got = cstatic.compile(m, "c_static_lib -allow-float=1", out=tmp_path / "softmax").run(x)
    want = ort_ref.mirrored_softmax(x)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), \
        f"{int(np.sum(got.view(np.uint32) != want.view(np.uint32)))} of {x.size} outputs differ from the mirror"
    try:
        with open("/proc/cpuinfo") as f:
            avx512f = "avx512f" in f.read().split()
    except OSError:  # not Linux: no claim about the CPU
        avx512f = False
    if avx512f:
        assert ort_ref.float_softmax_is_mirrored(), "ORT's Softmax on this AVX512F CPU differs from the mirror"
