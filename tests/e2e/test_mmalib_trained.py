"""The MMALIB offload on a *trained* network, against ONNX Runtime.

The offload issue asks for SQNR ≥ 30 dB and top-1 agreement ≥ 15/16 with
ORT per model. MMALIB's 8-bit scale puts each offloaded layer within 1 LSB
of ORT, not on it; on the model suite's untrained, seeded networks those
flips are amplified until the logits reach only 14-28 dB (test_mmalib.py
explains and measures that). A trained network does not amplify them: this
one, a small MobileNet-like CNN trained on scikit-learn's 8×8 digits (stem
conv, three depthwise-separable blocks with residual adds, all 64 channels,
so every conv, depthwise conv and add is offloaded), must meet the issue's
bar against ORT on the 360 test images, quantized both ways (PT2E and ORT
quantize_static), and keep the float model's accuracy.
"""
import json
import os

import numpy as np
import pytest

from conftest import ORT_CONFIG, _load, ort_ref
from cstatic_cli import ROOT, cstatic

EPOCHS = 12
CH = 64


def _net():
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        """depthwise 3×3 + relu, pointwise 1×1, + input, relu"""

        def __init__(self):
            super().__init__()
            self.dw = nn.Conv2d(CH, CH, 3, padding=1, groups=CH)
            self.pw = nn.Conv2d(CH, CH, 1)
            self.relu = nn.ReLU()

        def forward(self, x):
            return self.relu(self.pw(self.relu(self.dw(x))) + x)

    class DigitsMobile(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Conv2d(1, CH, 3, padding=1)
            self.relu = nn.ReLU()
            self.blocks = nn.Sequential(Block(), Block(), Block())
            self.pool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(CH, 10)

        def forward(self, x):
            x = self.blocks(self.relu(self.stem(x)))
            # (exported as ReduceMean, Reshape, a strided Gather, Reshape)
            return self.fc(torch.flatten(self.pool(x), 1))

    return DigitsMobile()


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(directory, float logits on the test images, test images, labels)."""
    import importlib.util

    import torch
    spec = importlib.util.spec_from_file_location(
        "cs_digits_make_model", os.path.join(ROOT, "examples", "digits", "make_model.py"))
    digits = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(digits)  # the demo's split and training loop
    torch.set_num_threads(1)
    x_tr, x_te, y_tr, y_te = digits.load_split()
    model = digits.train(x_tr, y_tr, make=_net, epochs=EPOCHS)
    out = tmp_path_factory.mktemp("trained")
    with torch.no_grad():
        float_logits = model(torch.from_numpy(x_te)).numpy()
    quantize, export = _load("quantize"), _load("export")
    example = (torch.from_numpy(x_tr[:1]),)
    calib = torch.from_numpy(x_tr[:64])
    gm = quantize.pt2e_quantize(model, example, calib)
    export.export_onnx(gm, example, str(out / "pt2e.onnx"))
    export.export_onnx(model, example, str(out / "float.onnx"))
    quantize.ort_quantize(str(out / "float.onnx"), str(out / "ort_s8.onnx"), x_tr[:64], "s8")
    np.save(out / "x.npy", x_te)
    return out, float_logits, x_te, y_te


def _sqnr(ref, y):
    ref = ref.astype(np.float64)
    return 10 * np.log10((ref ** 2).sum() / max(((y - ref) ** 2).sum(), 1e-30))


@pytest.mark.parametrize("variant", ("pt2e", "ort_s8"))
def test_trained_network_with_mmalib_meets_the_bar_against_ort(trained, variant):
    out, float_logits, x, labels = trained
    model = out / f"{variant}.onnx"
    d = out / f"mm_{variant}"
    p = cstatic("compile", model, "-o", d, "-t", "c_static_lib -mmalib=1")
    cstatic("run", d, "--input", out / "x.npy", "--output", d / "y.npy")
    y = np.load(d / "y.npy")
    ref = ort_ref.run(str(model), x, config=ORT_CONFIG)
    summary = json.loads((d / "manifest.json").read_text())["offload"]["summary"]
    sqnr = _sqnr(ref, y)
    agree = float(np.mean(y.argmax(1) == ref.argmax(1)))
    acc = {k: float(np.mean(v.argmax(1) == labels)) for k, v in
           (("float", float_logits), ("ORT", ref), ("mmalib", y))}
    print(f"{variant}: {summary}; vs ORT SQNR {sqnr:.1f} dB, top-1 agreement {agree:.4f}; "
          f"accuracy float {acc['float']:.4f} ORT {acc['ORT']:.4f} -mmalib=1 {acc['mmalib']:.4f}")
    # every conv, depthwise conv and residual add went to MMALIB, and the
    # FC, its N = 10 padded to the exact path's 32 (x1.002 the model's MACs)
    assert summary == "4 conv2d, 3 dwconv2d, 3 res_add, 1 FC", p.stdout
    assert acc["float"] > 0.9
    assert sqnr >= 30.0
    assert agree >= 15 / 16
    assert acc["mmalib"] >= acc["ORT"] - 0.01
