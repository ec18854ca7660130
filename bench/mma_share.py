"""Share of each suite model's MACs on the MMA with -mcpu=c7x -mmalib=1,
and what channel padding (MMALIBPadChannels) adds, side by side for two
cstatic binaries (e.g. main's and a branch's). Not a timing: MACs counted
from manifest.json (layers[].macs of mmalib_* kernels; padding taken out of
both sides of the share, offload.padding).

    .venv/bin/python bench/mma_share.py [--before BIN] [--after BIN]
"""
import argparse
import json
import os
import subprocess
import tempfile

SUITE = ("resnet18", "mobilenetv2", "mobilenetv3s", "shufflenetv2", "googlenet")
VARIANTS = ("ort_s8", "ort_u8", "pt2e")
MODELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "models", "out")


def share(binary, model, out):
    subprocess.run([binary, "compile", model, "-o", out, "-t", "c_static_lib -mcpu=c7x -mmalib=1", "-q"],
                   check=True)
    man = json.load(open(os.path.join(out, "manifest.json")))
    total = man["totals"]["macs"]
    mma = sum(l.get("macs", 0) for l in man["layers"] if l["kernel"].startswith("mmalib_"))
    pad = man.get("offload", {}).get("padding", {})
    added = pad.get("macs_added", 0)
    return (mma - added) / (total - added), total / (total - added), pad.get("layers", 0), pad.get("bytes_added", 0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="/work/main/build/bin/cstatic")
    ap.add_argument("--after", default="build/bin/cstatic")
    a = ap.parse_args()
    print("| model | MACs on the MMA before | after | padded layers | MACs x | bytes added |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name in SUITE:
            for v in VARIANTS:
                model = os.path.join(MODELS, f"{name}_{v}.onnx")
                if not os.path.exists(model):
                    continue
                b = share(a.before, model, os.path.join(tmp, f"b_{name}_{v}"))
                s, ratio, layers, nbytes = share(a.after, model, os.path.join(tmp, f"a_{name}_{v}"))
                print(f"| {name}_{v} | {100 * b[0]:.1f} % | {100 * s:.1f} % | {layers} | {ratio:.3f} | {nbytes} |")


if __name__ == "__main__":
    main()
