"""The two quantization flows of the model suite.

- `pt2e_quantize`: PyTorch 2 Export quantization (cstatic.quantize_pt2e)
  with torchao and, by default, the XNNPACK quantizer torchao keeps for its
  tests: int8 per-tensor affine activations
  (HistogramObserver), int8 symmetric per-channel weights in [-127, 127]
  (axis 0), float bias. BN is folded into the conv by prepare_pt2e.
- `ort_quantize`: ONNX Runtime's quantize_static on a float ONNX file, QDQ
  format, per-channel int8 weights, int8 or uint8 activations (MinMax),
  int32 bias.
Both calibrate on the batches they are given, one image at a time.
"""

import logging
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "python"))

# torchao logs about optional CUDA extensions it cannot load on a CPU build
logging.getLogger("torchao").setLevel(logging.ERROR)


def pt2e_quantize(model, example, calib, quantizer=None):
    """PT2E-quantize an eval-mode `model`; returns the converted module.

    example: tuple of example inputs for capture; calib: tensor [n, ...] of
    calibration inputs, run one at a time at the example's batch size;
    quantizer: cstatic's "generic" (XNNPACK) quantizer unless given (the c7x variants
    pass cstatic's C7xMMAQuantizer). The flow itself is cstatic's
    quantize_pt2e, which captures a copy: the captured module shares
    parameter storage with `model`, which the ORT variants export
    afterwards; whatever PT2E does to its weights must not reach `model`.
    """
    from cstatic import quantize_pt2e
    return quantize_pt2e(model, example, calib, quantizer or "generic")


def ort_quantize(float_path, out_path, calib, activation):
    """quantize_static `float_path` to `out_path`: cstatic.quantize_onnx's
    "generic" preset, with activations "s8" (QInt8) or "u8" (QUInt8).

    calib: array [n, ...] fed one sample at a time (float inputs as
    float32; token ids keep their integer dtype). The float model is first
    run through ORT's quantization pre-processing (symbolic shape inference
    and ORT's basic graph optimisations, which fold BatchNormalization into
    Conv).
    """
    from cstatic import quantize_onnx
    quantize_onnx(float_path, calib, "generic", out=out_path,
                  activation={"s8": "int8", "u8": "uint8"}[activation])
