"""MMALIB offload (-mmalib=1) end to end.

- One int8 conv 64->64, 56x56, 3x3, per-channel weight scales, symmetric
  activations (ORT quantize_static): the offloaded layer (scale/shift
  requantization, half-up rounding) is within 1 LSB of the exact
  float-domain result everywhere.
- The same conv with asymmetric activations (d_zp != 0, padded): offloaded
  through an explicit zero-point pad, still within 1 LSB.
- A max pool compiled with -tidl-kernels=0 references no *_tidl symbol.
- The suite models compile and run with -mmalib=1, printing the offload
  counts, and are as close to the float network as ORT's int8 is (SQNR
  within 1 dB, top-1 at least ORT's minus 1 of 16): the -mmalib=1
  criterion.
"""

import glob
import json
import os
import re
import subprocess

import numpy as np
import pytest

from conftest import MODELS_OUT, ORT_CONFIG, ort_ref, ort_u8s8_exact
from cstatic_cli import cstatic



def float_model(path, c=64, hw=56, k=3, pool=False, seed=0, c_out=None):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    co = c_out or c
    # Per-channel weight ranges that differ by 16x, so per-channel scales matter.
    w = rng.normal(size=(co, c, k, k)).astype(np.float32) * 0.05
    w *= np.linspace(0.25, 4.0, co, dtype=np.float32)[:, None, None, None]
    b = rng.normal(size=(co,)).astype(np.float32) * 0.1
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv0", pads=[1, 1, 1, 1],
                              kernel_shape=[k, k]),
             helper.make_node("Relu", ["c"], ["r"], name="relu0")]
    last, out_hw = "r", hw
    if pool:
        nodes.append(helper.make_node("MaxPool", ["r"], ["p"], name="pool0", kernel_shape=[3, 3],
                                      strides=[2, 2], pads=[1, 1, 1, 1]))
        last, out_hw = "p", (hw + 2 - 3) // 2 + 1
    nodes.append(helper.make_node("Identity", [last], ["y"], name="out"))
    graph = helper.make_graph(
        nodes, "mm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, co, out_hw, out_hw])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def quantize(src, dst, symmetric, c=64, hw=56, n_calib=4):
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)

    class Reader(CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(1)
            self.data = iter([{"x": rng.normal(size=(1, c, hw, hw)).astype(np.float32)}
                              for _ in range(n_calib)])

        def get_next(self):
            return next(self.data, None)

    quantize_static(src, dst, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    extra_options={"ActivationSymmetric": symmetric, "WeightSymmetric": True})


def qdq_params(path):
    """The conv's input/weight/bias/output quantization from the QDQ model."""
    import onnx
    from onnx import numpy_helper
    m = onnx.load(path)
    init = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    prod = {o: n for n in m.graph.node for o in n.output}
    conv = next(n for n in m.graph.node if n.op_type == "Conv")

    def dq(name):
        n = prod[name]
        assert n.op_type == "DequantizeLinear"
        zp = init[n.input[2]] if len(n.input) > 2 else np.zeros((), np.int8)
        return n.input[0], init[n.input[1]].astype(np.float64), zp.astype(np.int64)

    x_name, xs, xzp = dq(conv.input[0])
    w_name, ws, _ = dq(conv.input[1])
    b_name, bs, _ = dq(conv.input[2])
    out = next(n for n in m.graph.node if n.op_type == "QuantizeLinear" and
               prod.get(n.input[0]) is not None and prod[n.input[0]].op_type in ("Relu", "Conv"))
    xq_node = prod[x_name]
    return dict(xs=float(xs), xzp=int(xzp), in_s=float(init[xq_node.input[1]]),
                in_zp=int(init[xq_node.input[2]]), w=init[w_name].astype(np.int64), ws=ws,
                b=init[b_name].astype(np.int64), bs=bs, os=float(init[out.input[1]]),
                ozp=int(init[out.input[2]]))


def exact_reference(p, x):
    """The conv layer in exact float arithmetic on the quantized tensors:
    q = clip(round((sum (x_q - zp)·w_q · xs·ws + b_q·bs) / os) + ozp), ReLU
    as the clamp at ozp. Returns the quantized output (int) and the
    quantized input it was given."""
    xq = np.clip(np.round(x.astype(np.float64) / p["in_s"]) + p["in_zp"], -128, 127)
    xc = np.pad(xq[0] - p["xzp"], ((0, 0), (1, 1), (1, 1)))
    c, h, w = xq.shape[1:]
    wq = p["w"]
    acc = np.zeros((wq.shape[0], h, w), np.float64)
    for dy in range(3):
        for dx in range(3):
            patch = xc[:, dy:dy + h, dx:dx + w].reshape(c, -1)
            acc += (wq[:, :, dy, dx].astype(np.float64) @ patch).reshape(-1, h, w)
    real = acc * (p["xs"] * p["ws"])[:, None, None] + (p["b"] * p["bs"])[:, None, None]
    q = np.round(real / p["os"]) + p["ozp"]
    return np.clip(q, max(-128, p["ozp"]), 127)


@pytest.fixture(scope="module", params=[True, False], ids=["symmetric", "asymmetric"])
def conv_model(request, tmp_path_factory):
    d = tmp_path_factory.mktemp("mmconv")
    f, q = str(d / "f.onnx"), str(d / "q.onnx")
    float_model(f)
    quantize(f, q, symmetric=request.param)
    return q, request.param


def test_single_conv_within_one_lsb_of_exact(conv_model, tmp_path):
    model, symmetric = conv_model
    p = qdq_params(model)
    if symmetric:
        assert p["xzp"] == 0
    out = tmp_path / "out"
    r = cstatic("compile", model, "-o", out, "-t", "c_static_lib -mmalib=1 -mmalib-exact=none")
    print(r.stdout)
    assert "mmalib offload: 1 conv2d" in r.stdout
    man = json.load(open(out / "manifest.json"))
    layers = man["offload"]["layers"]
    conv = [e for e in layers if e["kind"] == "conv2d"]
    assert len(conv) == 1 and conv[0]["kernel"] == "mmalib_conv2d_i8", layers
    assert conv[0]["scale_shift_max_rel_err"] <= 2.0 ** -8
    src = open(out / "lib0.c").read()
    assert "mmalib_conv2d_i8(" in src and "tidsp_conv2d_i8" not in src
    if not symmetric:
        assert "tidsp_pad(" in src  # MMALIB pads with 0: explicit d_zp pad
    x = np.random.default_rng(7).normal(size=(1, 64, 56, 56)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    cstatic("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    y = np.load(tmp_path / "y.npy").astype(np.float64)
    got = np.round(y / p["os"]) + p["ozp"]
    ref = exact_reference(p, x)
    diff = np.abs(got - ref)
    print(f"max |diff| = {diff.max():.0f} LSB, {np.mean(diff > 0) * 100:.3f}% of outputs differ")
    assert diff.max() <= 1


def test_c7x_cycle_estimate_gives_the_spec_layer_figures(conv_model, tmp_path):
    """-mcpu=c7x: the manifest's est_c7x_cycles (the cost rule's model) on
    the spec's own layer (int8 conv 64->64, 3x3, 56x56): the MMALIB call
    staged into L2 (the default -l2-budget) is priced at the spec's 477 K
    cycles ("MMALIB + L2 DMA prefetch"), unstaged (-l2-budget=0) at its
    1.67 M (DDR-resident), and the core's conv at its 45.2 M, up to the
    bytes a DDR build moves that the spec's layer does not (MMALIB reads
    the input with its zero border, 64x58x58: +2.4 %; the bias and requant
    constants); per layer and per part, the sums add up."""
    model, _ = conv_model
    est = {}
    for mm, l2, kernel, spec in ((1, "", "mmalib_conv2d_i8", 477e3), (1, " -l2-budget=0", "mmalib_conv2d_i8", 1.67e6),
                                 (0, "", "tidsp_conv2d_i8", 45.2e6)):
        out = tmp_path / f"mm{mm}{l2.strip()}"
        r = cstatic("compile", model, "-o", out, "-t",
                    f"c_static_lib -mcpu=c7x -mmalib={mm} -mmalib-exact=none{l2}")
        assert "est. C7x cycles:" in r.stdout
        man = json.load(open(out / "manifest.json"))
        layer = [l for l in man["layers"] if l["kernel"] == kernel]
        assert len(layer) == 1, [l["kernel"] for l in man["layers"]]
        assert 1.0 <= layer[0]["est_c7x_cycles"] / spec < 1.03, layer[0]["est_c7x_cycles"]
        e = man["est_c7x_cycles"]
        assert e["total"] == pytest.approx(sum(l["est_c7x_cycles"] for l in man["layers"]), rel=1e-6)
        assert e["total"] == pytest.approx(e["mma"] + e["core_macs"] + e["core_other"], rel=1e-6)
        assert (e["mma"] > 0) == (mm == 1) and (e["core_macs"] > 0) == (mm == 0)
        est[mm, l2] = e["total"]
    # the spec's 27x less the core's copy of the input into its zero border
    # (tidsp_pad, ~1.1 M cycles by the model): ~16x; staged, more
    assert est[0, ""] / est[1, " -l2-budget=0"] > 10 and est[1, ""] < est[1, " -l2-budget=0"]
    host = tmp_path / "host"
    cstatic("compile", model, "-o", host, "-t", "c_static_lib -mmalib=0")
    assert "est_c7x_cycles" not in json.load(open(host / "manifest.json"))


@pytest.mark.parametrize("symmetric", [True, False], ids=["symmetric", "asymmetric"])
def test_padded_conv_within_one_lsb_of_exact(symmetric, tmp_path):
    """A conv 64 -> 96 (C_out % 64 != 0): padded to 128 zero filters
    (MMALIBPadChannels), offloaded, its 96 real channels cut off as a view;
    within 1 LSB of the exact float-domain result like every offloaded
    layer, and the manifest's offload section says what padding cost."""
    f, q = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    float_model(f, c=64, hw=28, c_out=96)
    quantize(f, q, symmetric=symmetric, hw=28)
    p = qdq_params(q)
    out = tmp_path / "out"
    r = cstatic("compile", q, "-o", out, "-t", "c_static_lib -mmalib=1 -mmalib-exact=none")
    print(r.stdout)
    assert "mmalib offload: 1 conv2d" in r.stdout
    assert "padded 'conv0' C_out 96 -> 128" in r.stdout
    man = json.load(open(out / "manifest.json"))
    off = man["offload"]
    pad = off["padding"]
    assert pad["layers"] == 1 and pad["macs_added"] == 32 * 64 * 9 * 28 * 28
    d = pad["decisions"][0]
    assert d["padded"] and (d["c_out"], d["c_pad"]) == (96, 128)
    assert d["est_mma_cycles"] < d["est_scalar_cycles"]
    assert pad["bytes_added"] == d["weight_bytes_added"] + d["act_bytes_added"] == 32 * 64 * 9 + 32 * 28 * 28
    # every MAC of the model on the MMA; the kernel's MACs include the padding
    assert off["mma_share"] == 1.0 and off["macs_mma"] == off["macs"] == 128 * 64 * 9 * 28 * 28
    assert man["arena_ratio"] <= 1.10
    x = np.random.default_rng(7).normal(size=(1, 64, 28, 28)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    cstatic("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    y = np.load(tmp_path / "y.npy").astype(np.float64)
    assert y.shape == (1, 96, 28, 28)
    got = np.round(y / p["os"]) + p["ozp"]
    diff = np.abs(got - exact_reference(p, x))
    print(f"max |diff| = {diff.max():.0f} LSB, {np.mean(diff > 0) * 100:.3f}% of outputs differ")
    assert diff.max() <= 1


@pytest.mark.parametrize("name", ("mobilenetv2", "mobilenetv3s"))
def test_mma_share_in_manifest_of_a_suite_model(model_suite, tmp_path, name):
    """MobileNetV2 (ORT int8; C_out 16/24/32/96/144/160 padded) and
    MobileNetV3-small (its 3->16 stem padded to 64, its 16->16 1x1 conv at
    56x56 not: the cost rule's DDR bytes) with
    -mcpu=c7x -mmalib=1: the manifest's share of MACs on the
    MMA is the layers' own MACs (kernels mmalib_*) over all, padding taken
    out of both; the padding totals are the sum of its decisions; the
    arena stays within 1.10x of the live bound of the padded graph."""
    onnx_path = model_suite.model(name, "ort_s8")
    out = tmp_path / "out"
    r = cstatic("compile", onnx_path, "-o", out, "-t", "c_static_lib -mcpu=c7x -mmalib=1")
    line = next(l for l in r.stdout.splitlines() if "MACs on the MMA:" in l)
    print(line)
    man = json.load(open(out / "manifest.json"))
    off = man["offload"]
    mma = sum(l.get("macs", 0) for l in man["layers"] if l["kernel"].startswith("mmalib_"))
    assert off["macs"] == man["totals"]["macs"] and off["macs_mma"] == mma
    dec = [d for d in off["padding"]["decisions"] if d["padded"]]
    added = sum(d["macs_added"] for d in dec)
    assert off["padding"]["macs_added"] == added and off["padding"]["layers"] == len(dec) > 0
    assert off["padding"]["bytes_added"] == sum(d["weight_bytes_added"] + d["act_bytes_added"] for d in dec)
    share = (mma - added) / (off["macs"] - added)
    assert abs(off["mma_share"] - share) < 1e-9
    assert f"{100 * share:.1f}%" in line
    assert share >= 0.95 and off["padding"]["macs_ratio"] <= 1.6
    assert man["arena_ratio"] <= 1.10


def test_max_pool_without_tidl_references_no_tidl_symbol(tmp_path):
    f, q = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    float_model(f, c=64, hw=16, pool=True)
    quantize(f, q, symmetric=False, hw=16)
    for tidl, want in ((0, "c7x_int8_max_pool("), (1, "c7x_int8_max_pool_tidl(")):
        out = tmp_path / f"out{tidl}"
        r = cstatic("compile", q, "-o", out, "-t", f"c_static_lib -mmalib=1 -tidl-kernels={tidl}")
        assert "max_pool2d" in r.stdout
        src = "".join(open(p).read() for p in glob.glob(str(out / "*.c")) + [str(out / "lib0.h")])
        assert want in src
        if not tidl:  # no identifier *_tidl (the target string's -tidl-kernels is text)
            assert not re.findall(r"\b[A-Za-z_]\w*_tidl\b", src)
    # and the no-TIDL build runs like ORT's quantized max pool
    x = np.random.default_rng(3).normal(size=(1, 64, 16, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    cstatic("run", tmp_path / "out0", "--input", tmp_path / "x.npy", "--output", tmp_path / "y0.npy")
    cstatic("compile", q, "-o", tmp_path / "gen", "-t", "c_static_lib")
    cstatic("run", tmp_path / "gen", "--input", tmp_path / "x.npy", "--output", tmp_path / "yg.npy")
    p = qdq_params(q)
    d = np.abs(np.load(tmp_path / "y0.npy") - np.load(tmp_path / "yg.npy")) / p["os"]
    assert d.max() <= 1.0 + 1e-3


def test_generic_target_output_is_unchanged_by_the_mmalib_passes(tmp_path):
    f, q = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    float_model(f, c=64, hw=8)
    quantize(f, q, symmetric=True, hw=8)
    r = cstatic("compile", q, "-o", tmp_path / "g", "-t", "c_static_lib")
    assert "mmalib offload" not in r.stdout
    src = open(tmp_path / "g" / "lib0.c").read()
    assert not re.findall(r"\bmmalib_\w+\(", src) and "tidsp_conv2d_i8" in src
    assert "offload" not in json.load(open(tmp_path / "g" / "manifest.json"))


SUITE = ("resnet18", "mobilenetv2", "mobilenetv3s", "shufflenetv2", "googlenet")
_SUITE_RUNS = {}
_FLOAT_LOGITS = {}


def _sqnr_top1(ref, y):
    ref, y = ref.astype(np.float64), y.astype(np.float64)
    sqnr = 10 * np.log10((ref ** 2).sum() / max(((y - ref) ** 2).sum(), 1e-30))
    return sqnr, int((y.argmax(1) == ref.argmax(1)).sum())


def _suite_run(name, variant, tmp_path_factory):
    """A suite file compiled with -mmalib=1 and run on its 16 inputs, once
    per session (both suite tests below use it): (offload summary line,
    outputs, ORT's outputs), or None when the file is not generated."""
    key = (name, variant)
    if key not in _SUITE_RUNS:
        model = os.path.join(MODELS_OUT, f"{name}_{variant}.onnx")
        inputs = os.path.join(MODELS_OUT, f"{name}_inputs.npy")
        if not (os.path.exists(model) and os.path.exists(inputs)):
            return None
        tag = "".join(f"_{k.split('.')[-1]}{v}" for k, v in sorted(ORT_CONFIG.items()))
        ref = ort_ref.cached_run(model, inputs,
                                 os.path.join(MODELS_OUT, f"{name}_{variant}_ort{tag}.npy"), ORT_CONFIG)
        d = tmp_path_factory.mktemp(f"mm_{name}_{variant}")
        r = cstatic("compile", model, "-o", d / "out", "-t", "c_static_lib -mmalib=1")
        summary = next(l for l in r.stdout.splitlines() if "mmalib offload:" in l).strip()
        cstatic("run", d / "out", "--input", inputs, "--output", d / "y.npy")
        _SUITE_RUNS[key] = (summary, np.load(d / "y.npy"), ref)
    return _SUITE_RUNS[key]


# The -mmalib=1 criterion (issue 13, point 5). Against ORT the offload
# is not bit-exact as a whole: the default exact path (-mmalib-exact=all)
# gives ORT's bytes for every offloaded conv, depthwise conv and FC, but the
# fixed-point residual add rounds half up (within 1 LSB), and with
# -mmalib-exact=none each layer is within 1 LSB of the exact float result
# (3-5% of its outputs 1 LSB off, from MMALIB's 8-bit scale). The suite's
# untrained, deep networks amplify any 1-LSB difference (one +1 on one
# element of a MobileNetV2 layer output alone gives 17-20 dB at the
# logits). What it is held to is what ORT's own int8 achieves: as close to
# the float network as ORT's int8.
SLOW_SUITE = ("mobilenetv3l", "swin_t", "swin_v2_t", "vit_b_16")
# The fast set (make test) checks one file of each suite network, every
# quantizer on at least one; the other two run in the slow set (each
# file compiles with -mmalib=1 and runs 16 images on the emulated MMA:
# 10-90 s, 10 minutes for all 15 on a 2-core machine).
FAST_VARIANT = {"resnet18": "ort_s8", "mobilenetv2": "pt2e", "mobilenetv3s": "pt2e",
                "shufflenetv2": "ort_s8", "googlenet": "ort_u8"}
# Where the criterion is not met yet (strict xfail: a fix must remove the
# entry). Empty since the exact path became -mmalib=1's default (stop 28):
# the one entry, resnet18 PT2E (top-1 10/16 against ORT's 12/16 on AVX2
# machines without VNNI, from MMALIB's 8-bit scale), now gives 12/16 = ORT
# there (AMD EPYC AVX2, 2026-12-03) and its strict xfail failed as XPASS.
CRITERION_GAPS = {}


def _criterion_cases():
    for name in SUITE + SLOW_SUITE:
        for variant in ("pt2e", "ort_s8", "ort_u8"):
            marks = [] if FAST_VARIANT.get(name) == variant else [pytest.mark.slow]
            if (name, variant) in CRITERION_GAPS:
                marks.append(pytest.mark.xfail(not ort_u8s8_exact(), strict=True,
                                               reason=CRITERION_GAPS[(name, variant)]))
            yield pytest.param(name, variant, id=f"{variant}-{name}", marks=marks)


@pytest.mark.parametrize("name,variant", list(_criterion_cases()))
def test_suite_model_with_mmalib_as_close_to_float_as_ort(name, variant, model_suite, tmp_path_factory):
    """Against the float network the file was quantized from (generate.py's
    archs.build(name, WEIGHT_SEED)), the -mmalib=1 build is as good as ORT's
    int8: SQNR within 1 dB of ORT's and top-1 (agreement with the float
    network's argmax on the 16 images) at least ORT's minus 1. A wrong
    scale, zero point, bias or layout in an offloaded layer costs more:
    halving the scale of one of MobileNetV2's 36 offloaded convs took 5.5 dB
    off."""
    run = _suite_run(name, variant, tmp_path_factory)
    # model_suite generates every (name, variant) collected here
    assert run is not None, f"{name}_{variant} was not generated"
    summary, y, ref = run
    if name not in _FLOAT_LOGITS:  # one float run per network, for its 3 files
        import torch

        from conftest import _load
        gen = _load("generate")
        model = gen.archs.build(name, gen.WEIGHT_SEED)
        x = np.load(os.path.join(MODELS_OUT, f"{name}_inputs.npy"))
        with torch.no_grad():
            _FLOAT_LOGITS[name] = np.concatenate(
                [model(torch.from_numpy(x[i:i + 1])).numpy() for i in range(len(x))])
    fl = _FLOAT_LOGITS[name]
    s_ort, t_ort = _sqnr_top1(fl, ref)
    s_mm, t_mm = _sqnr_top1(fl, y)
    print(f"{name}_{variant}: {summary}; vs float: ORT {s_ort:.1f} dB, top-1 {t_ort}/16; "
          f"-mmalib=1 {s_mm:.1f} dB, top-1 {t_mm}/16")
    assert s_mm >= s_ort - 1.0
    assert t_mm >= t_ort - 1


# ---- the suite quantized with C7xMMAQuantizer (python/cstatic/quantizer.py)
#
# Offloaded layers each model must reach: the spec's "Offloaded Layers"
# column (ResNet-18 20 conv2d + 8 res_add, MobileNet V2 19 + 17 dwconv2d +
# 10, ShuffleNet V2 1 + 19, GoogLeNet 33) without its FC, whose N = 1000
# the spec's own rule N % 64 == 0 declines; MobileNet V3-Small, not the
# spec's V3, by its layers: 7 conv2d with C_out % 64 == 0, 11 depthwise, 6
# residual adds, 1 FC (576 -> 1024). int16: the same, except that only 3x3
# depthwise convs are eligible (MMALIB-882: MobileNet V3-Small has 3). A
# count may grow (int16 takes C_out % 32), never fall.
C7X_MIN_OFFLOAD = {
    "resnet18": ({"conv2d": 20, "res_add": 8}, {"conv2d": 20, "res_add": 8}),
    "mobilenetv2": ({"conv2d": 19, "dwconv2d": 17, "res_add": 10},
                    {"conv2d": 19, "dwconv2d": 17, "res_add": 10}),
    "mobilenetv3s": ({"conv2d": 7, "dwconv2d": 11, "res_add": 6, "FC": 1},
                     {"conv2d": 7, "dwconv2d": 3, "res_add": 6, "FC": 1}),
    "shufflenetv2": ({"conv2d": 1, "dwconv2d": 19}, {"conv2d": 1, "dwconv2d": 19}),
    "googlenet": ({"conv2d": 33}, {"conv2d": 33}),
}


# Where the -mmalib=1 criterion is not met yet (strict: a fix must remove the
# entry). Measured 2026-12-02 (AMD EPYC Zen 5, VNNI), torchvision definitions:
# since channel padding (MMALIBPadChannels) 20 / 36 more layers run with the
# 8-bit scale; SQNR stays within 1 dB of ORT's, top-1 on 16 images does not.
# One image is within what an equally exact fold moves: with the 8-bit
# scale's error centred on the middle of the int8 range instead of the real
# zero (for outputs not ReLU-clamped; tried, not kept: MTCNN R/O-Net then
# fall 1-2 dB below ORT's int8), these reach 15/16 and 11/16.
# Measured 2026-12-03: with -mmalib-exact=all (C7X_I8_TARGET) the int8
# convs an int16 MMALIB kernel runs and the FCs give ORT's bytes
# (the MACs on MMALIB's int16 kernels, the requantization on the core:
# compiler/passes/match/mmalib_exact.c); top-1 vs float resnet18 10/16,
# mobilenetv2 11, mobilenetv3s 12, shufflenetv2 11, googlenet 9, against
# ORT's 11, 11, 13, 11, 9 (SQNR within 0.1 dB of ORT's). What still
# differs from ORT: the residual adds (fixed point, half up) and
# mobilenetv3s's 5x5 depthwise convs (no int16 kernel: 8-bit scale).
# Without the option (plain -mmalib=1) mobilenetv3s and shufflenetv2 were
# 11/16 and 9/16. Since 2026-12-03 (session 10) `all` is the default of
# -mmalib=1 and takes the 5x5/7x7 depthwise convs too (3x3 int16 tiles):
# plain -mmalib=1 is the target (-mmalib-exact=none: the 8-bit scale).
C7X_KNOWN_GAPS = {}
C7X_I8_TARGET = "c_static_lib -mmalib=1"


def _c7x_cases():
    for variant in ("c7x_i8", "c7x_i16"):
        for name in SUITE:
            reason = C7X_KNOWN_GAPS.get((name, variant))
            marks = pytest.mark.xfail(strict=True, reason=reason) if reason else ()
            yield pytest.param(name, variant, id=f"{variant}-{name}", marks=marks)


@pytest.fixture(scope="module")
def c7x_suite_dir(tmp_path_factory):
    """Where the c7x variants are generated (never tests/models/out)."""
    return tmp_path_factory.mktemp("c7x_suite")


@pytest.mark.slow
@pytest.mark.parametrize("name,variant", list(_c7x_cases()))
def test_suite_model_c7x_quantizer_with_mmalib(name, variant, c7x_suite_dir, tmp_path):
    """The suite quantized with C7xMMAQuantizer (int8 / int16), compiled
    with -mmalib=1 and run on the 16 suite images: prints the offload counts,
    top-1 and SQNR against ORT (int16: ORT unoptimized, see
    generate.ort_level), and requires the offload counts above.

    Accuracy: the -mmalib=1 criterion (issue 13, point 5), against the float
    network the file was quantized from: SQNR within 1 dB of ORT's int8 and
    top-1 at least ORT's minus 1 of 16. int8 is not bit-exact against ORT
    with -mmalib=1 as a whole (the default exact path gives ORT's bytes
    for convs and FCs, the fixed-point residual add is within 1 LSB), so
    it is compared with ORT on the same file. int16 is compared with ORT's int8 too, on the c7x_i8
    file of the same network (generated here when its own case did not
    run): point 5 replaces the offload issue's "30 dB and 15/16 against
    ORT's int16", which the 8-bit scale's gain error, compounding over
    20-57 layers, does not reach on these untrained nets (mobilenetv2 and
    shufflenetv2: 26.8 and 26.7 dB against ORT's int16). Measured
    2026-12-02, vs float: -mmalib=1's int16 24.5-34.7 dB, top-1 15-16/16;
    ORT's int8 12.6-19.7 dB, 9-13/16. The int16 layers' own bound
    (1 LSB + scale_shift_max_rel_err of the output magnitude, issue 13
    point 4) is checked per layer by test_mmalib_quantizer, test_mmalib_i16
    and test_ti_fork_matrix; here every offloaded int16 layer must report
    it, with a scale error of at most 2^-8.
    """
    import sys

    from conftest import MODELS_SRC

    def generate(v):
        gen = [sys.executable, os.path.join(MODELS_SRC, "generate.py"), "--out", c7x_suite_dir,
               "--models", name, "--variants", v]
        p = subprocess.run(list(map(str, gen)), capture_output=True, text=True)
        assert p.returncode == 0, f"generating {name}_{v} failed:\n{p.stdout}\n{p.stderr}"
        return c7x_suite_dir / f"{name}_{v}.onnx"
    model = generate(variant)
    inputs = c7x_suite_dir / f"{name}_inputs.npy"
    level = None
    if variant == "c7x_i16":
        import onnxruntime as ort
        level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    ref = ort_ref.run(str(model), np.load(inputs), config=ORT_CONFIG, level=level)
    out = tmp_path / "out"
    r = cstatic("compile", model, "-o", out, "-t", C7X_I8_TARGET if variant == "c7x_i8" else "c_static_lib -mmalib=1")
    summary = next(l for l in r.stdout.splitlines() if "mmalib offload:" in l).strip()
    layers = json.load(open(out / "manifest.json"))["offload"]["layers"]
    cstatic("run", out, "--input", inputs, "--output", tmp_path / "y.npy")
    y = np.load(tmp_path / "y.npy").astype(np.float64)
    ref = ref.astype(np.float64)
    s_vs_ort, t_vs_ort = _sqnr_top1(ref, y)
    print(f"{name}_{variant}: {summary}; vs ORT: top-1 {t_vs_ort}/16, SQNR {s_vs_ort:.1f} dB")
    count = {}
    for e in layers:
        if "kernel" in e:
            count[e["kind"]] = count.get(e["kind"], 0) + 1
    want = C7X_MIN_OFFLOAD[name][variant == "c7x_i16"]
    short = {k: (count.get(k, 0), n) for k, n in want.items() if count.get(k, 0) < n}
    assert not short, f"offloaded (got, want at least): {short}; declined: " + "; ".join(
        f"{e['kind']} {e['layer']}: {e['declined']}" for e in layers if "declined" in e)
    if variant == "c7x_i16":
        unbounded = [e["layer"] for e in layers if "kernel" in e and not (
            0 <= e.get("scale_shift_max_rel_err", 1.0) <= 2.0 ** -8 and "error_bound_full_scale_lsb" in e)]
        assert not unbounded, f"int16 layers without their error bound in the offload report: {unbounded}"
        i8 = c7x_suite_dir / f"{name}_c7x_i8.onnx"
        ref = ort_ref.run(str(i8 if i8.exists() else generate("c7x_i8")), np.load(inputs),
                          config=ORT_CONFIG).astype(np.float64)
    import torch

    from conftest import _load
    gen_mod = _load("generate")
    net = gen_mod.archs.build(name, gen_mod.WEIGHT_SEED)
    x = np.load(inputs)
    with torch.no_grad():
        fl = np.concatenate([net(torch.from_numpy(x[i:i + 1])).numpy() for i in range(len(x))])
    s_ort, t_ort = _sqnr_top1(fl, ref)
    s_mm, t_mm = _sqnr_top1(fl, y)
    print(f"{name}_{variant}: vs float: ORT int8 {s_ort:.1f} dB, top-1 {t_ort}/16; "
          f"-mmalib=1 {s_mm:.1f} dB, top-1 {t_mm}/16")
    assert s_mm >= s_ort - 1.0
    assert t_mm >= t_ort - 1
