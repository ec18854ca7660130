"""Pixel packing (MMALIBPackPixels, issue 16) end to end: an ORT-quantized
1x1 conv with few output channels computes P blocks of output pixels per
channel on the MMA (block-diagonal filters, K = C_in·P, N = C_out·P), the
input and output reshapes being views of the same bytes. Through the CLI:
the manifest's padding decision, every MAC on the MMA, no copy in the
generated code but the graph input's staging, the arena within 1.10x of the live bound, the output
within 1 LSB of the exact float-domain result (as every offloaded layer),
and the C7x builds (unstaged, L2-staged) equal to the host build. Every target
lifts the padding budget (-mmalib-pad-budget=64): these check the rewrite,
whatever MACs it adds (x8 and x4 here; the budget: test_mmalib_budget.py).
"""
import json

import numpy as np
import pytest

from conftest import ORT_CONFIG
from cstatic_cli import cstatic
from test_mmalib import qdq_params, quantize
from test_mmalib_s2d import conv_model, exact_reference

# (C_in, C_out, H = W, P): PP-OCR cls's 8 -> 8 (P = 8: K = N = 64);
# MobileNetV3's 16 -> 16 at 56x56 (P = 4: K = N = 64), both of which
# channel padding prices above the scalar core.
CASES = [(8, 8, 48, 8), (16, 16, 56, 4)]


@pytest.mark.parametrize("symmetric", [True, False], ids=["symmetric", "asymmetric"])
@pytest.mark.parametrize("case", CASES, ids=["8to8_48", "16to16_56"])
def test_packed_conv_within_one_lsb_of_exact(case, symmetric, tmp_path):
    c_in, c_out, hw, pp = case
    f, q = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    conv_model(f, c_in, c_out, 1, 1, hw)
    quantize(f, q, symmetric=symmetric, c=c_in, hw=hw)
    p = qdq_params(q)
    out = tmp_path / "out"
    # the int8 kernel (the default exact path calls the int16 one: the
    # staged test below runs that)
    r = cstatic("compile", q, "-o", out, "-t", "c_static_lib -mmalib-pad-budget=64 -mmalib=1 -mmalib-exact=none")
    print(r.stdout)
    assert "mmalib offload: 1 conv2d" in r.stdout
    assert f"padded 'conv0' C_out pack {c_out} -> 64" in r.stdout
    man = json.load(open(out / "manifest.json"))
    off = man["offload"]
    pad = off["padding"]
    d = next(d for d in pad["decisions"] if d["padded"])
    assert pad["layers"] == 1 and d["what"] == "C_out pack" and (d["c_out"], d["c_pad"]) == (c_out, 64)
    assert d["est_mma_cycles"] < 0.95 * d["est_scalar_cycles"]
    model_macs = c_out * c_in * hw * hw
    assert d["macs"] == model_macs and d["macs_added"] == 64 * c_in * pp * hw * hw // pp - model_macs
    assert off["mma_share"] == 1.0 and off["macs_mma"] == off["macs"] == model_macs + d["macs_added"]
    assert man["arena_ratio"] <= 1.10
    src = open(out / "lib0.c").read()
    # the copies are the graph's edges', as with channel padding: the input
    # (the aligned staging every MMALIB conv of a graph input has; here it
    # is the reshape too) and, when the conv's Q is the model's output
    # (asymmetric: ReLU fused as the clamp), the cut into the caller's buffer
    assert "mmalib_conv2d_i8(" in src and "tidsp_conv2d_i8" not in src
    assert src.count("tidsp_copy(") == (1 if symmetric else 2)
    # ... and the output's reshape inside the arena is a view (elided)
    copies = [l for l in man["layers"] if l["kernel"] == "tidsp_copy"]
    assert len(copies) == 2 and sum(bool(l.get("elided")) for l in copies) == (1 if symmetric else 0)
    x = np.random.default_rng(7).normal(size=(1, c_in, hw, hw)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    cstatic("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    y = np.load(tmp_path / "y.npy").astype(np.float64)
    assert y.shape == (1, c_out, hw, hw)
    got = np.round(y / p["os"]) + p["ozp"]
    diff = np.abs(got - exact_reference(p, x, 1, 1, hw))
    print(f"max |diff| = {diff.max():.0f} LSB, {np.mean(diff > 0) * 100:.3f}% of outputs differ")
    assert diff.max() <= 1


def test_packed_c7x_and_l2_staged_builds_equal_the_host(tmp_path):
    """8 -> 8 at 48x48 built for the C7x, unstaged and with an L2 budget
    (the staged DMA plan reads the packed view), gives the host build's
    output bit for bit. Under the default the exact path runs it on the
    int16 kernel, whose tile is 32: P = 4 (K = N = 32), and the output is
    ORT's, bit for bit."""
    f, q = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    conv_model(f, 8, 8, 1, 1, 48)
    quantize(f, q, symmetric=False, c=8, hw=48)
    x = np.random.default_rng(11).normal(size=(1, 8, 48, 48)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    ys = {}
    for tag, target in (("host", "c_static_lib -mmalib-pad-budget=64 -mmalib=1"), ("c7x", "c_static_lib -mcpu=c7x -mmalib-pad-budget=64 -mmalib=1 -l2-budget=0"),
                        ("l2", "c_static_lib -mcpu=c7x -mmalib-pad-budget=64 -mmalib=1 -l2-budget=262144")):
        out = tmp_path / tag
        r = cstatic("compile", q, "-o", out, "-t", target)
        assert "C_out pack 8 -> 32" in r.stdout, (tag, r.stdout)
        assert "mmalib_conv2d_i16" in r.stdout, (tag, r.stdout)
        cstatic("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / f"y_{tag}.npy")
        ys[tag] = np.load(tmp_path / f"y_{tag}.npy")
        man = json.load(open(out / "manifest.json"))
        assert man["arena_ratio"] <= 1.10, tag
    assert ys["host"].shape == (1, 8, 48, 48)
    assert ys["c7x"].tobytes() == ys["host"].tobytes() and ys["l2"].tobytes() == ys["host"].tobytes()
    import onnxruntime as ort
    so = ort.SessionOptions()
    for k, v in ORT_CONFIG.items():
        so.add_session_config_entry(k, v)
    ref = ort.InferenceSession(q, so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert ys["host"].tobytes() == ref.tobytes()
