#!/usr/bin/env python3
"""Generate the model suite: quantized QDQ ONNX files and their inputs.

    python tests/models/generate.py --out DIR [--models resnet18,...]
                                    [--variants pt2e,ort_s8,ort_u8]
                                    [--variants c7x_i8,c7x_i16]

writes, for each model M and variant V,
    DIR/M_V.onnx        the quantized model (batch 1, input "input"
                        [1,3,224,224] float32, output "logits" [1,1000])
    DIR/M_inputs.npy    16 seeded test images, float32 [16,3,224,224]
                        (16 batch-1 inputs stacked on the batch axis)
Existing files are kept (DIR is a cache); delete a file to regenerate it.
Everything is seeded: a rerun writes the same models.

Variants:
    pt2e    torchao PT2E + XNNPACK quantizer (int8 act, int8 per-channel
            weights, float bias), exported with torch.onnx (dynamo)
    ort_s8  ORT quantize_static on the float export, QDQ, int8 activations
    ort_u8  the same with uint8 activations
Written only when asked for with --variants (not part of the default suite):
    c7x_i8  PT2E with cstatic's C7xMMAQuantizer("int8") (int8 affine act,
            int8 per-channel symmetric weights, float bias), same export
    c7x_i16 the same with C7xMMAQuantizer("int16") (int16 symmetric act,
            int16 per-channel weights)
Each written file is checked: ONNX checker, int8 (int16) weights still feeding
DequantizeLinear, runs in ONNX Runtime; a pt2e/c7x file is also compared with
the PT2E module it came from.
"""

import argparse
import os
import sys
import tempfile
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "python"))
import archs  # noqa: E402
import export  # noqa: E402
import ort_ref  # noqa: E402
import quantize  # noqa: E402

VARIANTS = ("pt2e", "ort_s8", "ort_u8")          # the default suite
EXTRA_VARIANTS = {"c7x_i8": "int8", "c7x_i16": "int16"}  # C7xMMAQuantizer dtype
NUM_INPUTS = 16
NUM_CALIB = 8
INPUT_SEED = 1234   # test images
CALIB_SEED = 99     # calibration images (disjoint from the test images)
WEIGHT_SEED = 0


def _log(msg):
    print(msg, flush=True)


def inputs_path(out, model):
    return os.path.join(out, f"{model}_inputs.npy")


def model_path(out, model, variant):
    return os.path.join(out, f"{model}_{variant}.onnx")


def _save_npy(path, arr):
    tmp = path + ".tmp.npy"
    np.save(tmp, arr)
    os.replace(tmp, path)


def _pt2e_parity(path, gm, x, level=None):
    """Compare ORT on the exported file with the PT2E module on images x
    (ORT graph optimization `level`: default ORT_ENABLE_ALL).

    They cannot agree bit for bit: ORT quantizes the float bias to int32 and
    requantizes in integer, the module runs float convolutions, so a few
    values round the other way, and in these deep random networks one
    1-LSB difference spreads until the logits differ by about the int8
    quantization noise itself (15-30 dB SQNR measured). An export error
    (wrong scale, axis, layout or bias) gives a few dB at most, hence the
    10 dB floor.
    """
    with torch.no_grad():
        ref = torch.cat([gm(x[i:i + 1]) for i in range(len(x))]).numpy()
    # int8 QLinear ops allowed (the suite's reference configuration): ORT
    # then runs the module's int8 arithmetic as it is, not rewritten to uint8
    out = ort_ref.run(path, x.numpy(), level=level, config={"session.qdqisint8allowed": "1"})
    err = ref - out
    sqnr = 10 * np.log10(np.sum(ref.astype(np.float64) ** 2)
                         / max(np.sum(err.astype(np.float64) ** 2), 1e-30))
    top1 = int(np.sum(ref.argmax(1) == out.argmax(1)))
    if sqnr < 10.0:
        raise RuntimeError(f"{path}: ORT output differs from the PT2E module's "
                           f"(SQNR {sqnr:.1f} dB < 10 dB, top-1 {top1}/{len(x)})")
    return f"vs PT2E module: SQNR {sqnr:.1f} dB, top-1 {top1}/{len(x)}"


def ort_level(variant):
    """The ORT graph optimization level a variant's reference runs at: None
    (ORT_ENABLE_ALL) except for int16 QDQ, which runs unoptimized. ORT 1.30's
    WeightBiasQuantization (a basic-level rewrite) turns a float Conv/Gemm
    bias into int32 at scale d_s*w_s; with int16 activations and weights
    (scales ~1e-4 and ~1e-6) the bias overflows int32 and saturates
    (ResNet-18: -11 dB against the PT2E module). ORT has no integer kernel
    for int16 QDQ groups anyway, so unoptimized it runs the file's exact
    semantics: DequantizeLinear, float op, QuantizeLinear."""
    if variant == "c7x_i16":
        import onnxruntime as ort
        return ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    return None


def key_path(out, model):
    return os.path.join(out, f"{model}_source.txt")


def _drop_stale(out, name):
    """Delete the cached files of `name` that were built from another
    definition than archs.source_key(name) says (a torchvision update, a new
    initialisation, or the hand-written modules the suite used before)."""
    key = archs.source_key(name)
    kp = key_path(out, name)
    if os.path.exists(kp):
        with open(kp) as f:
            if f.read() == key:
                return
    # the models and the ORT outputs cached beside them (M_<variant>*)
    flows = {v.split("_")[0] for v in VARIANTS + tuple(EXTRA_VARIANTS)}
    stale = [f for f in os.listdir(out)
             if f.startswith(f"{name}_") and f[len(name) + 1:].split("_")[0].split(".")[0] in flows]
    for f in stale:
        os.remove(os.path.join(out, f))
    if stale:
        _log(f"  removed {len(stale)} files of {name} built from another definition")
    with open(kp + ".tmp", "w") as f:
        f.write(key)
    os.replace(kp + ".tmp", kp)


def generate_model(out, name, variants, check_images=4):
    _drop_stale(out, name)
    inp = inputs_path(out, name)
    if not os.path.exists(inp):
        x = archs.sample_images(NUM_INPUTS, INPUT_SEED).numpy()
        _save_npy(inp, x)
        _log(f"  wrote {inp} {x.shape}")
    todo = [v for v in variants if not os.path.exists(model_path(out, name, v))]
    if not todo:
        return
    model = archs.build(name, WEIGHT_SEED)
    example = (archs.sample_images(1, INPUT_SEED),)
    calib = archs.sample_images(NUM_CALIB, CALIB_SEED)
    test = torch.from_numpy(np.load(inp)[:check_images])
    float_path = None
    with tempfile.TemporaryDirectory() as tmp:
        for v in todo:
            t0 = time.time()
            path = model_path(out, name, v)
            part = path + ".part.onnx"
            if v == "pt2e" or v in EXTRA_VARIANTS:
                quantizer = None
                if v in EXTRA_VARIANTS:
                    from cstatic import C7xMMAQuantizer
                    quantizer = C7xMMAQuantizer(EXTRA_VARIANTS[v])
                gm = quantize.pt2e_quantize(model, example, calib, quantizer)
                export.export_onnx(gm, example, part)
                facts = export.check_qdq(part)
                note = _pt2e_parity(part, gm, test, ort_level(v))
            else:
                if float_path is None:
                    float_path = os.path.join(tmp, "float.onnx")
                    export.export_onnx(model, example, float_path)
                quantize.ort_quantize(float_path, part, calib.numpy(), v[4:])
                facts = export.check_qdq(part)
                # with the suite's reference config: ORT 1.30 cannot create a
                # session on the uint8 transformers (swin_t) with
                # x64quantprecision alone ("Attempt to replace the existing
                # tensor"), and does with int8 QDQ groups allowed beside it
                ort_ref.run(part, test.numpy(), config={"session.qdqisint8allowed": "1"})
                note = "runs in ORT"
            os.replace(part, path)
            _log(f"  wrote {path} ({os.path.getsize(path) / 1e6:.1f} MB, "
                 f"{sum(facts['ops'].values())} nodes, "
                 f"{facts['weight_dqs']} quantized weights; {note}) "
                 f"in {time.time() - t0:.1f} s")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="output (cache) directory")
    ap.add_argument("--models", default=",".join(archs.ARCHS),
                    help="comma-separated subset of: " + ", ".join(archs.ARCHS))
    ap.add_argument("--variants", default=",".join(VARIANTS),
                    help="comma-separated subset of: "
                    + ", ".join(VARIANTS + tuple(EXTRA_VARIANTS)))
    args = ap.parse_args(argv)
    models = [m for m in args.models.split(",") if m]
    variants = [v for v in args.variants.split(",") if v]
    for m in models:
        if m not in archs.ARCHS:
            ap.error(f"unknown model '{m}' (known: {', '.join(archs.ARCHS)})")
    for v in variants:
        if v not in VARIANTS and v not in EXTRA_VARIANTS:
            known = ", ".join(VARIANTS + tuple(EXTRA_VARIANTS))
            ap.error(f"unknown variant '{v}' (known: {known})")
    # one thread: the machine is shared, and float results (hence calibrated
    # scales) then do not depend on the core count
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    t0 = time.time()
    for m in models:
        _log(f"{m}:")
        generate_model(args.out, m, variants)
    _log(f"done in {time.time() - t0:.1f} s")


if __name__ == "__main__":
    main()
