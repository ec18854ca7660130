"""cstatic's Python side, deliberately thin (the compiler is the `cstatic`
CLI):

- cstatic.c7x: C7xVirtualMachine, the C7x host client (ctypes over
  libc7x_arm_runtime).
- C7xMMAQuantizer (cstatic.quantizer): the PT2E quantizer whose QDQ graphs
  the MMALIB offload passes (-mmalib=1) match; quantize_pt2e: capture,
  prepare, calibrate and convert in one call.
- export_qdq_onnx / check_qdq (cstatic.export): PT2E-converted module ->
  QDQ ONNX, and the check that its weights stayed quantized.

The quantizer and exporter need torch and torchao; they are imported on
first use, so `import cstatic` (e.g. for the C7x client) does not load
torch.
"""

_LAZY = {
    "C7xMMAQuantizer": "quantizer",
    "quantize_pt2e": "quantizer",
    "export_qdq_onnx": "export",
    "check_qdq": "export",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cstatic' has no attribute {name!r}")
    import importlib
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
