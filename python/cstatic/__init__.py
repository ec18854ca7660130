"""cstatic's Python side, deliberately thin (the compiler is the `cstatic`
CLI, in C):

    import cstatic
    q = cstatic.quantize_pt2e(net, (x[:1],), calib)     # PyTorch -> PT2E int8
    cstatic.export_qdq_onnx(q, (x[:1],), "net.onnx")    # -> QDQ ONNX
    m = cstatic.compile("net.onnx")                      # -> C, a Model
    y = m.run(x[:1].numpy())                             # run it here

- compile / load / Model (cstatic.model): drive `cstatic compile` and run
  the generated C in this process over ctypes; Model.run, .profile(),
  .manifest, .files.
- quantize_onnx (cstatic.onnx_quant): a float ONNX model -> QDQ ONNX with
  ONNX Runtime's quantize_static, preset "generic" or "c7x".
- quantize_pt2e, C7xMMAQuantizer (cstatic.quantizer): the PT2E flow in one
  call; its quantizer "generic" (int8, what any target compiles best) or
  "c7x" (the patterns the MMALIB offload passes, -mmalib=1, match).
- export_qdq_onnx / check_qdq (cstatic.export): PT2E-converted module ->
  QDQ ONNX, and the check that its weights stayed quantized.
- cli() / prefix(): the bundled `cstatic` binary and the prefix holding
  the runtime library, its headers, the CMake package and cstatic.pc.
- cstatic.c7x: C7xVirtualMachine, the C7x host client (ctypes over
  libc7x_arm_runtime).

Everything is imported on first use: `import cstatic` loads neither torch
nor onnxruntime.
"""

_LAZY = {
    "compile": "model",
    "load": "model",
    "Model": "model",
    "CompileError": "model",
    "CompileWarning": "model",
    "RunError": "model",
    "LayerTime": "model",
    "TensorInfo": "model",
    "quantize_onnx": "onnx_quant",
    "C7xMMAQuantizer": "quantizer",
    "quantize_pt2e": "quantizer",
    "export_qdq_onnx": "export",
    "check_qdq": "export",
    "cli": "_cli",
    "prefix": "_cli",
}

__all__ = sorted(_LAZY) + ["__version__"]


def __getattr__(name):
    import importlib
    if name == "__version__":
        # the CLI's version: the package and the binary are one install
        from . import _cli
        p = _cli.run("--version")
        version = p.stdout.split()[1] if p.returncode == 0 and len(p.stdout.split()) > 1 else "unknown"
        globals()["__version__"] = version
        return version
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'cstatic' has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
