#!/usr/bin/env python3
"""Build the bundled demo model: a small CNN for scikit-learn's 8x8 digits.

    python examples/digits/make_model.py     (with the cstatic package
                                              installed, or PYTHONPATH=python)

Trains (seeded, fixed train/test split), quantizes with the cstatic
package's PT2E flow (cstatic.quantize_pt2e, its "generic" quantizer: int8
activations, int8 per-channel weights), exports QDQ ONNX
(cstatic.export_qdq_onnx) and writes, next to this script:
    digits_int8.onnx      the quantized model, input "input" f32[1,1,8,8]
                          (pixels / 16), output "logits" f32[1,10]
    digits_float.onnx     the float model before quantization (the input of
                          cstatic.quantize_onnx in docs/user-guide.md)
    test_x.npy            f32[N,1,8,8] test images (N test images stacked on
                          the batch axis: `cstatic run` runs the batch-1
                          model N times)
    test_y.npy            int64[N] their labels
    float_accuracy.json   test accuracy of the float model (and, for
                          reference, of the PT2E module and of ONNX Runtime
                          on digits_int8.onnx)
Training is seeded, on one thread, with deterministic kernels; even so, two
runs on this project's AVX2 machine gave weights that differ in their last
bits (the same accuracies), so the committed files are the reference and a
rerun is a new model.
"""

import json
import os

import numpy as np
import torch
import torch.nn as nn

import cstatic

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

SEED = 0
TEST_FRACTION = 0.2
EPOCHS = 40
BATCH = 32
NUM_CALIB = 128


class DigitsNet(nn.Module):
    """conv3x3(1->8) relu, conv3x3(8->16) relu, maxpool 2, linear(256->10)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 4 * 4, 10)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = self.pool(torch.relu(self.conv2(x)))
        return self.fc(torch.flatten(x, 1))


def load_split():
    """The digits as f32 [n,1,8,8] in [0, 1] and int64 labels, split once
    (stratified, seeded) into train and test."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split
    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None, :, :]
    y = d.target.astype(np.int64)
    return train_test_split(x, y, test_size=TEST_FRACTION, random_state=SEED, stratify=y)


def train(x, y, make=DigitsNet, epochs=EPOCHS):
    """Seeded Adam training of make() on (x, y); returns it in eval mode
    (also used by tests/e2e/test_mmalib_trained.py for its own network)."""
    torch.manual_seed(SEED)
    model = make()
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    gen = torch.Generator().manual_seed(SEED)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(xt), generator=gen)
        for i in range(0, len(xt), BATCH):
            idx = order[i:i + BATCH]
            opt.zero_grad()
            nn.functional.cross_entropy(model(xt[idx]), yt[idx]).backward()
            opt.step()
    return model.eval()


def accuracy(logits, y):
    return float(np.mean(np.argmax(logits, axis=1) == y))


def ort_logits(path, x):
    """ONNX Runtime on every image of x, one at a time (int8 QLinear
    kernels allowed, as ORT runs QDQ models on ARM)."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.add_session_config_entry("session.qdqisint8allowed", "1")
    sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
    return np.concatenate([sess.run(None, {"input": x[i:i + 1]})[0] for i in range(len(x))])


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    x_train, x_test, y_train, y_test = load_split()
    model = train(x_train, y_train)
    with torch.no_grad():
        float_acc = accuracy(model(torch.from_numpy(x_test)).numpy(), y_test)

    example = (torch.from_numpy(x_train[:1]),)
    calib = torch.from_numpy(x_train[:NUM_CALIB])
    names = dict(input_names=["input"], output_names=["logits"])
    cstatic.export_qdq_onnx(model, example, os.path.join(HERE, "digits_float.onnx"), **names)
    gm = cstatic.quantize_pt2e(model, example, calib)  # the "generic" quantizer
    with torch.no_grad():
        pt2e_logits = torch.cat([gm(torch.from_numpy(x_test[i:i + 1]))
                                 for i in range(len(x_test))]).numpy()
    onnx_path = os.path.join(HERE, "digits_int8.onnx")
    cstatic.export_qdq_onnx(gm, example, onnx_path, **names)
    facts = cstatic.check_qdq(onnx_path)
    ort_acc = accuracy(ort_logits(onnx_path, x_test), y_test)

    np.save(os.path.join(HERE, "test_x.npy"), np.ascontiguousarray(x_test))
    np.save(os.path.join(HERE, "test_y.npy"), y_test)
    info = {"float_accuracy": round(float_acc, 6),
            "pt2e_module_accuracy": round(accuracy(pt2e_logits, y_test), 6),
            "ort_int8_accuracy": round(ort_acc, 6),
            "test_images": int(len(y_test)), "train_images": int(len(y_train)),
            "seed": SEED}
    with open(os.path.join(HERE, "float_accuracy.json"), "w") as f:
        json.dump(info, f, indent=2)
        f.write("\n")
    print(f"wrote {os.path.relpath(onnx_path, ROOT)} ({os.path.getsize(onnx_path)} bytes, "
          f"{sum(facts['ops'].values())} nodes), digits_float.onnx, test_x.npy {x_test.shape}, "
          f"test_y.npy, float_accuracy.json")
    print(f"test accuracy: float {float_acc:.4f}, PT2E module {info['pt2e_module_accuracy']:.4f}, "
          f"ORT int8 {ort_acc:.4f} ({len(y_test)} images)")


if __name__ == "__main__":
    main()
