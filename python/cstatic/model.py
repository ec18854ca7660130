"""compile() and Model: a compiled model, run in this process.

    import cstatic
    m = cstatic.compile("model.onnx")                 # or target="c_static_lib -requant=q31"
    y = m.run(x)                                      # numpy in, numpy out
    m.manifest["arena_bytes"], m.files                # what the compiler wrote

compile() drives the `cstatic compile` CLI (DESIGN.md section 10: the
compiler is C; Python only calls it). Model.run builds the generated C for
this machine as a shared library (`cstatic build DIR`, the host build
`cstatic run` uses) and calls its model_desc.run over ctypes: the same
code, the same arena discipline, no numerics in Python. The ctypes layouts
mirror include/cstatic/model.h; the dtype codes, the rank limit and the
model ABI version are read from the installed headers, and a model built
for another ABI is refused.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import shutil
import tempfile
import threading
import warnings
import weakref
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

import numpy as np

from . import _cli

# The model ABI whose layout the ctypes structures below mirror.
_ABI_VERSION = 9

# tidsp_dtype name (TIDSP_DTYPE_<NAME>) -> numpy dtype
# (bfloat16: its bits as uint16; numpy has no bfloat16, as onnx.numpy_helper)
_NUMPY = {"F32": np.float32, "I8": np.int8, "U8": np.uint8, "I16": np.int16, "U16": np.uint16,
          "I32": np.int32, "I64": np.int64, "BOOL": np.bool_, "F16": np.float16, "BF16": np.uint16,
          "F64": np.float64, "U32": np.uint32, "U64": np.uint64}

PathLike = Union[str, "os.PathLike[str]"]


class CompileError(RuntimeError):
    """`cstatic compile` refused the model; the message is its error line."""


class CompileWarning(UserWarning):
    """A warning of `cstatic compile` (e.g. a float model: every layer runs
    in float); the compile succeeded."""


class RunError(RuntimeError):
    """The compiled model returned a non-zero tidsp_status."""

    def __init__(self, message: str, status: int):
        super().__init__(message)
        self.status = status


# ---------------------------------------------------------------- headers

class _Abi:
    """Constants read from the runtime headers beside the CLI (one truth:
    include/cstatic/*.h)."""

    def __init__(self, include_dir: str):
        def read(name):
            path = os.path.join(include_dir, "cstatic", name)
            try:
                with open(path) as f:
                    return f.read()
            except OSError as exc:
                raise RuntimeError(f"cannot read the runtime header {path}: {exc}") from exc

        tidsp, kernels, model, dma = (read(n) for n in ("tidsp.h", "kernels.h", "model.h", "dma.h"))
        self.dtypes = {int(v): _NUMPY[n] for n, v in re.findall(r"TIDSP_DTYPE_(\w+)\s*=\s*(\d+)", tidsp)
                       if n in _NUMPY}
        self.max_rank = int(re.search(r"#define TIDSP_MAX_RANK (\d+)", kernels).group(1))
        self.abi_version = int(re.search(r"#define TIDSP_MODEL_ABI_VERSION (\d+)u", model).group(1))
        self.l2_align = int(re.search(r"#define TIDSP_L2_ALIGN (\d+)", dma).group(1))
        if self.abi_version != _ABI_VERSION:
            raise RuntimeError(f"the runtime headers in {include_dir} describe model ABI "
                               f"{self.abi_version}; this cstatic package reads ABI {_ABI_VERSION} "
                               "(the package and the CLI come from different versions)")
        self._structs()

    def _structs(self):
        rank = self.max_rank

        class TensorInfo(ctypes.Structure):
            _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                        ("shape", ctypes.c_int64 * rank), ("numel", ctypes.c_int64),
                        ("nbytes", ctypes.c_size_t), ("quantized", ctypes.c_int32),
                        ("scale", ctypes.c_float), ("zero_point", ctypes.c_int32)]

        class LayerStat(ctypes.Structure):
            _fields_ = [("name", ctypes.c_char_p), ("module", ctypes.c_char_p), ("output", ctypes.c_char_p),
                        ("kernel", ctypes.c_char_p), ("macs", ctypes.c_int64),
                        ("calls", ctypes.c_uint64), ("total", ctypes.c_uint64), ("last", ctypes.c_uint64)]

        class ProfileTable(ctypes.Structure):
            _fields_ = [("n_layers", ctypes.c_int32), ("layers", ctypes.POINTER(LayerStat)),
                        ("clock_unit", ctypes.c_char_p)]

        entry = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p))

        class ModelDesc(ctypes.Structure):
            _fields_ = [("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p),
                        ("target", ctypes.c_char_p), ("n_inputs", ctypes.c_int32),
                        ("n_outputs", ctypes.c_int32), ("inputs", ctypes.POINTER(TensorInfo)),
                        ("outputs", ctypes.POINTER(TensorInfo)), ("raw_inputs", ctypes.POINTER(TensorInfo)),
                        ("raw_outputs", ctypes.POINTER(TensorInfo)), ("arena_size", ctypes.c_size_t),
                        ("arena_align", ctypes.c_size_t), ("live_bytes_lower_bound", ctypes.c_size_t),
                        ("l2_size", ctypes.c_size_t), ("weights_size", ctypes.c_size_t),
                        ("weights_align", ctypes.c_size_t), ("weights_embedded", ctypes.c_void_p),
                        ("run", entry), ("run_raw", entry),
                        ("check_weights", ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_size_t)),
                        ("status_str", ctypes.CFUNCTYPE(ctypes.c_char_p, ctypes.c_int32)),
                        ("profile", ctypes.POINTER(ProfileTable))]

        self.ModelDesc = ModelDesc


_abi_lock = threading.Lock()
_abi_cache: dict = {}


def _abi() -> _Abi:
    include_dir = os.path.join(_cli.prefix(), "include")
    with _abi_lock:
        if include_dir not in _abi_cache:
            _abi_cache[include_dir] = _Abi(include_dir)
        return _abi_cache[include_dir]


# ---------------------------------------------------------------- buffers

def _aligned(nbytes: int, align: int) -> np.ndarray:
    """A zeroed uint8 array of nbytes whose data address is a multiple of
    align (numpy guarantees only 16)."""
    align = max(int(align), 16)
    raw = np.zeros(int(nbytes) + align, dtype=np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off:off + int(nbytes)]


def _ptr(a: np.ndarray) -> int:
    return a.ctypes.data


# ---------------------------------------------------------------- the model

@dataclass(frozen=True)
class TensorInfo:
    """One input or output of model_run: its ONNX name, numpy dtype and
    shape (batch included)."""
    name: str
    dtype: np.dtype
    shape: tuple


@dataclass(frozen=True)
class LayerTime:
    """One layer of Model.profile(): a kernel call of the generated code."""
    name: str      # the ONNX node it computes (the Conv of DQ -> Conv -> Q)
    kernel: str    # the runtime function it calls
    macs: int      # multiply-accumulates per call
    calls: int     # calls since the previous profile()
    ms: float      # milliseconds over those calls
    module: str = ""  # the PyTorch module path recorded for the node ("layer1.0.conv1"), or ""
    output: str = ""  # its output tensor: dtype and shape, "i8[1,64,56,56]"


class Model:
    """A compiled model directory (`cstatic compile -o DIR`), run in this
    process.

    dir: the directory; manifest: its manifest.json as a dict (I/O, arena,
    layers, weights; docs/manifest.md); files: the generated files, as paths;
    inputs / outputs: TensorInfo of model_run's tensors; log: what the
    compile printed (compile() only).

    The shared library is built and loaded on the first run(). One run at a
    time per Model (runs are serialized): the arena is scratch that every
    inference reuses.
    """

    def __init__(self, directory: PathLike, *, log: str = "", _cleanup: Optional[str] = None):
        self.dir = os.path.abspath(os.fspath(directory))
        path = os.path.join(self.dir, "manifest.json")
        try:
            with open(path) as f:
                self.manifest: dict = json.load(f)
        except (OSError, ValueError) as exc:
            raise ValueError(f"{self.dir} is not a compiled model directory ({path}: {exc})") from exc
        self.log = log
        self._lock = threading.Lock()
        self._lib = None
        self._desc = None
        if _cleanup:  # compile(out=None): the directory lives as long as the Model
            weakref.finalize(self, shutil.rmtree, _cleanup, True)
        run = self.manifest.get("model_run", {})
        self.inputs = [self._info(t) for t in run.get("inputs", [])]
        self.outputs = [self._info(t) for t in run.get("outputs", [])]

    @staticmethod
    def _info(t: dict) -> TensorInfo:
        return TensorInfo(t["name"], np.dtype(t["dtype"]), tuple(int(d) for d in t["shape"]))

    def __repr__(self) -> str:
        ins = ", ".join(f"{t.name}: {t.dtype}{list(t.shape)}" for t in self.inputs)
        outs = ", ".join(f"{t.name}: {t.dtype}{list(t.shape)}" for t in self.outputs)
        return f"<cstatic.Model {self.manifest.get('name', '?')!r} ({ins}) -> ({outs}) in {self.dir}>"

    @property
    def files(self) -> list:
        """The generated files (lib0.h, lib*.c, weights.bin or weights.c,
        manifest.json), as absolute paths."""
        names = list(self.manifest.get("files", [])) + ["manifest.json"]
        return [os.path.join(self.dir, n) for n in names]

    @property
    def target(self) -> str:
        """The canonical target string the model was compiled for."""
        return self.manifest.get("target", "")

    # -- loading

    def _load(self):
        if self._desc is not None:
            return
        abi = _abi()
        p = _cli.run("build", self.dir)
        if p.returncode != 0:
            raise RuntimeError(p.stderr.strip() or f"cstatic build {self.dir} failed ({p.returncode})")
        so_path = p.stdout.strip().splitlines()[-1]
        try:
            lib = ctypes.CDLL(so_path, mode=os.RTLD_NOW | os.RTLD_LOCAL)
        except OSError as exc:
            hint = (" (built by a sanitizer build of cstatic: run it with `cstatic run`, or point "
                    "CSTATIC_BIN at a plain build)" if "san" in str(exc) else "")
            raise RuntimeError(f"cannot load {so_path}: {exc}{hint}") from exc
        desc = abi.ModelDesc.in_dll(lib, "model_desc")
        if desc.abi_version != abi.abi_version:
            raise RuntimeError(f"{self.dir}: model ABI version {desc.abi_version}, this cstatic runs "
                               f"{abi.abi_version} (recompile the model)")
        self._abi, self._lib, self._desc = abi, lib, desc
        self._weights = self._read_weights(desc)
        self._arena = _aligned(max(desc.arena_size, 1), max(desc.arena_align, ctypes.sizeof(ctypes.c_void_p)))
        self._l2 = None
        if desc.l2_size > 0:
            # the model's own copy of the runtime holds the L2 binding
            # (host_build.c links it in): bind through the .so's symbol
            self._l2 = _aligned(desc.l2_size, abi.l2_align)
            # written now (np.zeros leaves the pages unmapped; a write maps
            # them): it stands for SRAM, which has no page faults for the
            # first DMA copies to pay (host_model.c's bind does the same)
            self._l2.fill(0)
            bind = getattr(lib, "tidsp_l2_bind", None)
            if bind is not None:
                bind.argtypes, bind.restype = [ctypes.c_void_p, ctypes.c_size_t], ctypes.c_int32
                st = bind(_ptr(self._l2), desc.l2_size)
                if st != 0:
                    raise RunError(f"model '{self.name}': binding its {desc.l2_size}-byte L2 scratch "
                                   f"failed: {self._status(st)}", st)
        self._in_infos = [desc.inputs[i] for i in range(desc.n_inputs)]
        self._out_infos = [desc.outputs[j] for j in range(desc.n_outputs)]

    def _read_weights(self, desc) -> Optional[np.ndarray]:
        if desc.weights_embedded:
            st = desc.check_weights(None, 0)
            if st != 0:
                raise RunError(f"{self.dir}: the embedded weights fail their check", st)
            return None
        path = os.path.join(self.dir, "weights.bin")
        try:
            size = os.path.getsize(path)
            blob = _aligned(size, desc.weights_align)
            with open(path, "rb") as f:
                f.readinto(memoryview(blob))
        except OSError as exc:
            raise RunError(f"cannot read {path}: {exc.strerror}", -7) from exc
        st = desc.check_weights(_ptr(blob), size)
        if st != 0 and size != desc.weights_size:
            raise RunError(f"{path}: {self._status(st)} ({size} bytes; the model expects "
                           f"{desc.weights_size})", st)
        if st != 0:
            raise RunError(f"{path}: {self._status(st)}", st)
        return blob

    def _status(self, st: int) -> str:
        return self._desc.status_str(st).decode()

    @property
    def name(self) -> str:
        return self.manifest.get("name", "model")

    # -- running

    def _batches(self, arrays: Sequence[np.ndarray]) -> int:
        """k such that every input is k model batches (the `cstatic run`
        convention), or a ValueError naming the input."""
        k = None
        for i, (a, info) in enumerate(zip(arrays, self.inputs)):
            if a.dtype != info.dtype:
                raise TypeError(f"input {i} '{info.name}': expected dtype {info.dtype}, got {a.dtype}")
            want = info.shape
            ok = a.ndim == len(want) and a.shape[1:] == want[1:]
            if want and 0 in want:  # an empty input (a 0 dimension) is one batch of itself
                ok = ok and a.shape[0] == want[0]
            elif want:
                ok = ok and want[0] > 0 and a.shape[0] > 0 and a.shape[0] % want[0] == 0
            if not ok:
                more = " (or a multiple of its first dimension)" if want and 0 not in want else ""
                raise ValueError(f"input {i} '{info.name}': expected shape {want}{more}, got {a.shape}")
            ki = a.shape[0] // want[0] if want and 0 not in want else 1
            if k is not None and ki != k:
                raise ValueError(f"input {i} '{info.name}' holds {ki} batches but input 0 holds {k}")
            k = ki
        return k or 1

    def run(self, *inputs: Any) -> Union[np.ndarray, list]:
        """Run the model on numpy arrays (anything np.asarray takes), one
        per model input, in order, in the model's own dtypes. An input whose
        first dimension is k times the model's runs the model k times on
        consecutive slices; the outputs are stacked along axis 0.

        Returns the output array for a one-output model, else a list.
        """
        if len(inputs) != len(self.inputs):
            raise ValueError(f"model '{self.name}' has {len(self.inputs)} input"
                             f"{'' if len(self.inputs) == 1 else 's'}, got {len(inputs)}")
        arrays = [np.ascontiguousarray(np.asarray(a)) for a in inputs]
        k = self._batches(arrays)
        with self._lock:
            self._load()
            desc = self._desc
            outs = [np.empty((t.shape[0] * k,) + t.shape[1:] if t.shape else (), dtype=t.dtype)
                    for t in self.outputs]
            if k > 1 and any(not t.shape for t in self.outputs):
                raise ValueError(f"model '{self.name}' has a scalar output: cannot stack {k} batches")
            n_in, n_out = len(arrays), len(outs)
            in_ptrs = (ctypes.c_void_p * max(n_in, 1))()
            out_ptrs = (ctypes.c_void_p * max(n_out, 1))()
            weights = None if self._weights is None else _ptr(self._weights)
            for s in range(k):
                for i, a in enumerate(arrays):
                    in_ptrs[i] = _ptr(a) + s * self._in_infos[i].nbytes
                for j, o in enumerate(outs):
                    out_ptrs[j] = _ptr(o) + s * self._out_infos[j].nbytes
                st = desc.run(weights, _ptr(self._arena), in_ptrs, out_ptrs)
                if st != 0:
                    where = f" on batch slice {s} of {k}" if k > 1 else ""
                    raise RunError(f"model '{self.name}' failed{where}: {self._status(st)} "
                                   f"(status {st})", st)
        return outs[0] if len(outs) == 1 else outs

    def profile(self) -> list:
        """Per-layer times of the runs since the previous profile() (or
        since the model was loaded), as LayerTime rows in execution order;
        the counters start again from zero. Needs a model compiled with
        target "... -profile-layers=1"."""
        with self._lock:
            self._load()
            table = self._desc.profile
            if not table:
                raise ValueError(f"model '{self.name}' in {self.dir} was not compiled with per-layer "
                                 "profiling (compile it with target \"c_static_lib -profile-layers=1\")")
            t = table.contents
            unit = t.clock_unit.decode()
            # "cycles" (a -mcpu=c7x build: the C7x time-stamp counter) at the
            # C7x's 1 GHz (TIDSP_C7X_CLOCK_HZ, cstatic/profile.h)
            to_ms = {"ns": 1e-6, "cycles": 1e-6}.get(unit)
            if to_ms is None:
                raise ValueError(f"model '{self.name}': profile clock unit {unit!r} is neither ns nor cycles")
            rows = []
            for i in range(t.n_layers):
                s = t.layers[i]
                rows.append(LayerTime(s.name.decode(), s.kernel.decode(), int(s.macs), int(s.calls),
                                      float(s.total) * to_ms, s.module.decode(), s.output.decode()))
                s.calls = s.total = s.last = 0
            return rows


def compile(model: Union[PathLike, bytes, Any], target: str = "c_static_lib",
            out: Optional[PathLike] = None, *, weights: str = "bin",
            outputs: Union[None, str, Sequence[str]] = None) -> Model:
    """Compile a quantized (QDQ) ONNX model with the cstatic CLI.

    model: an .onnx path, the file's bytes, or an onnx.ModelProto.
    target: the target string, e.g. "c_static_lib -requant=q31" (see
      `cstatic compile --help` or docs/target-attributes.md).
    out: the output directory (replaced only if the compile succeeds); None
      compiles into a temporary directory that lives as long as the Model.
    weights: "bin" (weights.bin, read at run time) or "c" (weights.c,
      compiled into the model).
    outputs: intermediate tensors to output too, after the model's own
      (`--outputs`): a list of tensor names, or "all-quantized" (every
      QuantizeLinear output); python -m cstatic.layer_error uses it.

    Returns the Model; raises CompileError with the compiler's message. The
    compiler's warnings (a float model: target "... -allow-float=1" says it
    is intended) become CompileWarning warnings.
    """
    if weights not in ("bin", "c"):
        raise ValueError(f"weights must be 'bin' or 'c', not {weights!r}")
    tmp = tempfile.mkdtemp(prefix="cstatic-")
    try:
        if isinstance(model, (str, os.PathLike)):
            src = os.fspath(model)
        else:
            src = os.path.join(tmp, "model.onnx")
            data = model if isinstance(model, (bytes, bytearray)) else model.SerializeToString()
            with open(src, "wb") as f:
                f.write(data)
        dst = os.path.join(tmp, "out") if out is None else os.fspath(out)
        extra = []
        if outputs is not None:
            names = outputs if isinstance(outputs, str) else ",".join(outputs)
            extra = ["--outputs", names]
        p = _cli.run("compile", src, "-o", dst, "-t", target, f"--weights={weights}", *extra)
        if p.returncode != 0:
            msg = p.stderr.strip().removeprefix("cstatic: error: ")
            raise CompileError(msg or f"cstatic compile failed ({p.returncode})")
        for line in p.stderr.splitlines():
            if line.startswith("cstatic: warning: "):
                warnings.warn(line.removeprefix("cstatic: warning: "), CompileWarning, stacklevel=2)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    if out is not None:
        shutil.rmtree(tmp, ignore_errors=True)
        return Model(dst, log=p.stdout)
    return Model(dst, log=p.stdout, _cleanup=tmp)


def load(directory: PathLike) -> Model:
    """A Model over a directory compiled before (`cstatic compile -o DIR`)."""
    return Model(directory)
