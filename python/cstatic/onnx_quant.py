"""quantize_onnx: a float ONNX model -> QDQ ONNX with ONNX Runtime's
quantize_static, set up the way cstatic compiles best.

    q = cstatic.quantize_onnx("float.onnx", calib)          # an onnx.ModelProto
    cstatic.quantize_onnx("float.onnx", calib, preset="c7x", out="m_int8.onnx")

The presets (PRESETS below):
- "generic": QDQ format, int8 activations (per-tensor affine, MinMax
  calibration), int8 symmetric per-channel weights, int32 bias: ORT's
  defaults for quantize_static with per-channel weights. Every quantized
  layer becomes an integer kernel that matches ORT bit for bit (with
  -requant=float). activation="uint8" gives uint8 activations, which
  compile as well.
- "c7x": the pattern the -mmalib=1 offload (MMALIB's int8 kernels)
  matches, spelled out so that no change of ORT's defaults moves it:
  int8 activations (never uint8), symmetric per-channel int8 weights (zero
  point 0, which MMALIB requires), and the Relu / Clip after a conv or
  matmul kept in the graph (QDQKeepRemovableActivations), so every layer
  is Q(Relu(Conv(DQ(x), DQ(w)))) as C7xMMAQuantizer writes it; a relu's
  range [0, max] gives zero point -128, the int8 saturation MMALIB
  applies. Its numerics equal "generic"'s. Compile its result with
  -t "c_static_lib -mcpu=c7x -mmalib=1".

The float model is first run through ORT's quantization pre-processing
(symbolic shape inference and ORT's basic optimizations, which fold
BatchNormalization into Conv).
"""

from __future__ import annotations

import os
import tempfile
from typing import Any, Iterable, Mapping, Optional, Union

import numpy as np

PRESETS = ("generic", "c7x")


def _feeds(model, calibration) -> list:
    """Calibration data as a list of ORT feeds, one model batch each.

    calibration: an array [n, ...] (one-input models), a dict name -> array
    [n, ...], or an iterable of feed dicts (used as they are). Arrays are
    cut into slices of the model input's batch dimension (1 if symbolic);
    float arrays become float32, integer ones (token ids) keep their dtype.
    """
    inputs = [i for i in model.graph.input
              if i.name not in {t.name for t in model.graph.initializer}]
    if isinstance(calibration, Mapping):
        arrays = dict(calibration)
    elif isinstance(calibration, np.ndarray) or hasattr(calibration, "__array__"):
        if len(inputs) != 1:
            raise ValueError(f"the model has {len(inputs)} inputs ({', '.join(i.name for i in inputs)}): "
                             "pass calibration as a dict name -> array")
        arrays = {inputs[0].name: calibration}
    else:
        feeds = [dict(f) for f in calibration]
        if not feeds:
            raise ValueError("calibration is empty")
        return feeds
    missing = [i.name for i in inputs if i.name not in arrays]
    if missing:
        raise ValueError(f"calibration has no data for input(s) {', '.join(missing)}")
    batch = {}
    for i in inputs:
        dims = i.type.tensor_type.shape.dim
        batch[i.name] = dims[0].dim_value if dims and dims[0].HasField("dim_value") and dims[0].dim_value > 0 else 1
    conv = {}
    for name, a in arrays.items():
        a = np.ascontiguousarray(np.asarray(a))
        conv[name] = a.astype(np.float32) if a.dtype.kind == "f" else a
    n = {len(a) // batch[name] for name, a in conv.items()}
    if len(n) != 1 or 0 in n:
        raise ValueError("calibration arrays must hold the same number (>= 1) of model batches")
    count = n.pop()
    return [{name: a[k * batch[name]:(k + 1) * batch[name]] for name, a in conv.items()} for k in range(count)]


class _Reader:
    """onnxruntime.quantization.CalibrationDataReader over a list of feeds."""

    def __init__(self, feeds):
        self._feeds = feeds
        self.rewind()

    def get_next(self):
        return next(self._items, None)

    def rewind(self):
        self._items = iter(self._feeds)


def _settings(preset: str, activation: Optional[str]):
    from onnxruntime.quantization import CalibrationMethod, QuantFormat, QuantType
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {', '.join(map(repr, PRESETS))}, not {preset!r}")
    act = {"int8": QuantType.QInt8, "uint8": QuantType.QUInt8}
    if activation is not None and activation not in act:
        raise ValueError(f"activation must be 'int8' or 'uint8', not {activation!r}")
    if preset == "c7x" and activation == "uint8":
        raise ValueError("preset 'c7x' quantizes activations to int8 (MMALIB's int8 kernels)")
    settings = dict(quant_format=QuantFormat.QDQ, per_channel=True, weight_type=QuantType.QInt8,
                    activation_type=act[activation or "int8"],
                    calibrate_method=CalibrationMethod.MinMax)
    if preset == "c7x":
        settings["extra_options"] = {"WeightSymmetric": True, "ActivationSymmetric": False,
                                     "QDQKeepRemovableActivations": True}
    return settings


def quantize_onnx(float_onnx: Any, calibration: Any, preset: str = "generic",
                  out: Optional[Union[str, "os.PathLike[str]"]] = None, *,
                  activation: Optional[str] = None) -> Any:
    """Quantize a float ONNX model to QDQ ONNX for cstatic.

    float_onnx: an .onnx path or an onnx.ModelProto.
    calibration: representative inputs, run through ORT to pick the
      activation ranges: an array [n, ...] for a one-input model, a dict
      input name -> array [n, ...], or an iterable of feed dicts.
    preset: "generic" or "c7x" (see the module docstring).
    out: a path to write the QDQ model to (whole or not at all); returned.
      None: the quantized onnx.ModelProto is returned.
    activation: "int8" (the presets' choice) or "uint8", to override.
    """
    import onnx
    from onnxruntime.quantization import quantize_static
    from onnxruntime.quantization.shape_inference import quant_pre_process
    settings = _settings(preset, activation)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "float.onnx")
        if isinstance(float_onnx, (str, os.PathLike)):
            src = os.fspath(float_onnx)
        else:
            onnx.save(float_onnx, src)
        pre = os.path.join(tmp, "pre.onnx")
        try:
            quant_pre_process(src, pre)
        except TypeError:
            # ORT's symbolic shape inference fails on some exports (an Expand
            # of torchvision's swin_v2_t: "object of type 'NoneType' has no
            # len()"); ONNX's own shape inference and ORT's optimizations
            # still run without it
            quant_pre_process(src, pre, skip_symbolic_shape=True)
        feeds = _feeds(onnx.load(pre, load_external_data=False), calibration)
        dst = os.path.join(tmp, "q.onnx") if out is None else os.fspath(out) + ".tmp"
        quantize_static(pre, dst, _Reader(feeds), **settings)
        if out is None:
            return onnx.load(dst)
    os.replace(dst, os.fspath(out))
    return os.fspath(out)


__all__ = ["quantize_onnx", "PRESETS"]
