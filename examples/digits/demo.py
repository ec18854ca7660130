#!/usr/bin/env python3
"""`make demo`: compile the bundled digits model with cstatic and run it.

    .venv/bin/python examples/digits/demo.py      (from the repository root)

1. build/bin/cstatic compile examples/digits/digits_int8.onnx -o TMP/digits
2. build/bin/cstatic run TMP/digits --input test_x.npy --output TMP/pred.npy
   (the batch-1 model runs once per test image)
3. prints the test accuracy of the float model (recorded by make_model.py),
   of the compiled int8 model, and of ONNX Runtime on the same ONNX file,
   and the arena size the compiler planned (manifest.json).
Exits non-zero if a step fails, or if the compiled model's accuracy is more
than MAX_ACCURACY_GAP below ONNX Runtime's on the same file. CSTATIC_BIN
overrides the cstatic binary.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CSTATIC = os.environ.get("CSTATIC_BIN", os.path.join(ROOT, "build", "bin", "cstatic"))
MODEL = os.path.join(HERE, "digits_int8.onnx")
TEST_X = os.path.join(HERE, "test_x.npy")
TEST_Y = os.path.join(HERE, "test_y.npy")
FLOAT_INFO = os.path.join(HERE, "float_accuracy.json")
# the host build requantizes as ORT does, so the two should agree; one
# image in a hundred is the most a correct compile may lose
MAX_ACCURACY_GAP = 0.01


class DemoError(Exception):
    pass


def _show(arg):
    """An argument as printed: paths inside the repository made relative."""
    if os.path.isabs(arg) and os.path.commonpath([arg, ROOT]) == ROOT:
        return os.path.relpath(arg, ROOT)
    return arg


def step(title, cmd):
    print("$ " + " ".join(_show(c) for c in cmd))
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except OSError as exc:
        raise DemoError(f"{title}: cannot run {cmd[0]}: {exc}") from exc
    except subprocess.TimeoutExpired as exc:
        raise DemoError(f"{title}: {cmd[0]} did not finish in {exc.timeout} s") from exc
    if p.stdout.strip():
        print("  " + p.stdout.strip().replace("\n", "\n  "))
    if p.returncode != 0:
        raise DemoError(f"{title} failed (exit {p.returncode}):\n{p.stderr.strip()}")


def accuracy(logits, y, what):
    if logits.ndim != 2 or logits.shape != (len(y), 10):
        raise DemoError(f"{what}: expected logits of shape [{len(y)}, 10], got {list(logits.shape)}")
    return float(np.mean(np.argmax(logits, axis=1) == y))


def ort_logits(x):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    # exact int8 sums on every CPU (ORT's AVX2 u8s8 kernel saturates int16
    # pair sums without this; see tests/models/ort_ref.py)
    so.add_session_config_entry("session.x64quantprecision", "1")
    sess = ort.InferenceSession(MODEL, so, providers=["CPUExecutionProvider"])
    name = sess.get_inputs()[0].name
    return np.concatenate([sess.run(None, {name: x[i:i + 1]})[0] for i in range(len(x))])


def demo(tmp):
    for path in (MODEL, TEST_X, TEST_Y, FLOAT_INFO):
        if not os.path.exists(path):
            raise DemoError(f"{path} is missing (examples/digits/make_model.py writes it)")
    if not os.path.exists(CSTATIC):
        raise DemoError(f"{CSTATIC} not found: run `make build` first")
    x, y = np.load(TEST_X), np.load(TEST_Y)
    with open(FLOAT_INFO) as f:
        float_acc = json.load(f)["float_accuracy"]

    out_dir = os.path.join(tmp, "digits")
    pred_path = os.path.join(tmp, "pred.npy")
    step("compile", [CSTATIC, "compile", MODEL, "-o", out_dir])
    step("run", [CSTATIC, "run", out_dir, "--input", TEST_X, "--output", pred_path])

    if not os.path.exists(pred_path):
        raise DemoError(f"run: {pred_path} was not written")
    pred = np.load(pred_path)
    compiled_acc = accuracy(pred, y, "cstatic run output")
    ort_out = ort_logits(x)
    ort_acc = accuracy(ort_out, y, "ONNX Runtime output")
    agree = float(np.mean(np.argmax(pred, axis=1) == np.argmax(ort_out, axis=1)))

    manifest_path = os.path.join(out_dir, "manifest.json")
    try:
        with open(manifest_path) as f:
            manifest = json.load(f)
        arena = int(manifest["arena_bytes"])
        bound = int(manifest["live_bytes_lower_bound"])
    except (OSError, ValueError, KeyError) as exc:
        raise DemoError(f"{manifest_path}: cannot read arena_bytes / "
                        f"live_bytes_lower_bound: {exc}") from exc

    print()
    print(f"digits test set: {len(y)} images, 8x8, 10 classes")
    print(f"  float model accuracy        {float_acc:.4f}")
    print(f"  compiled int8 accuracy      {compiled_acc:.4f}  (cstatic, host)")
    print(f"  ONNX Runtime int8 accuracy  {ort_acc:.4f}  (same ONNX file)")
    print(f"  top-1 agreement cstatic/ORT {agree:.4f}")
    ratio = f" ({arena / bound:.3f}x)" if bound else ""
    print(f"  arena {arena} bytes, live-bytes lower bound {bound} bytes{ratio}")
    if compiled_acc < ort_acc - MAX_ACCURACY_GAP:
        raise DemoError(f"compiled accuracy {compiled_acc:.4f} is more than "
                        f"{MAX_ACCURACY_GAP} below ONNX Runtime's {ort_acc:.4f}")


def main():
    tmp = tempfile.mkdtemp(prefix="cstatic-demo-")
    try:
        demo(tmp)
    except DemoError as exc:
        print(f"demo: error: {exc}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
