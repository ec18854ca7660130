"""Write the spec's standalone conv stack, quantized as tests/e2e/test_dma_tiling.py
quantizes it, with an input, for bench/dma_overlap.py.

usage: conv_stack.py OUT_DIR [--relu]

OUT_DIR/stack_q.onnx (or relu_q.onnx: a ReLU after each conv, the H-tiled
variant) and OUT_DIR/x_stack.npy. Then, e.g.:
    build/bin/cstatic compile OUT_DIR/stack_q.onnx -o OUT_DIR/c7x -t "c_static_lib -mcpu=c7x"
    .venv/bin/python bench/dma_overlap.py OUT_DIR/c7x OUT_DIR/x_stack.npy 9
"""
import os
import pathlib
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from test_dma_tiling import conv_stack, quantize  # noqa: E402  (one definition of the stack: the test's)


def main(argv):
    if len(argv) not in (1, 2) or (len(argv) == 2 and argv[1] != "--relu"):
        sys.exit(__doc__)
    out, relu = pathlib.Path(argv[0]), len(argv) == 2
    out.mkdir(parents=True, exist_ok=True)
    tag = "relu" if relu else "stack"
    conv_stack(out / f"{tag}_f.onnx", relu=relu)
    rng = np.random.default_rng(1)  # the test fixture's calibration feeds, then its input
    feeds = [{"x": rng.normal(size=(1, 3, 56, 56)).astype(np.float32)} for _ in range(2)]
    q = quantize(out, out / f"{tag}_f.onnx", feeds, tag)
    np.save(out / "x_stack.npy", rng.normal(size=(1, 3, 56, 56)).astype(np.float32))
    print(q)


if __name__ == "__main__":
    main(sys.argv[1:])
