"""C7xVirtualMachine: run a C7x module (`cstatic compile -t "c_static_lib
-mcpu=c7x" --emit=module` → DIR/lib0.out) on the firmware (c7x_fw, or the
board's) through libc7x_arm_runtime.so, by ctypes.

    vm = C7xVirtualMachine("DIR/lib0.out")
    y = vm["main"](x)          # outputs copied: safe to keep
    ys = vm.run_nocopy(x)      # numpy views of the result buffer: valid
                               # until this VM's next run
    x = vm.create_input()      # an array inside the staging buffer: runs
    x[...] = data              # pass it without copying (vm.stats())
    print(vm.profile())        # per-layer C7x cycles of the last run (a
                               # module compiled with -profile-layers=1)

Outputs: one array for a one-output model, else a list. Errors raise
C7xError (status, firmware message); C7xFault when the firmware died under
the request (crash, timeout): the firmware was restarted, and the VM loads
its module again on the next call. A client timeout whose reset the
firmware refuses (other clients' modules are loaded) is a C7xError with
status C7X_ERR_TIMEOUT: nothing was lost.

The library: $C7X_ARM_RUNTIME_LIB, else libc7x_arm_runtime.so in the build
tree next to $CSTATIC_BIN (../lib), else in the installed package's lib/
(what the wheel ships), else in the repository's build/lib, else in the
lib/ of an editable install (pip install -e .), else the dynamic loader's
search path.
The socket: the socket argument, else $C7X_FW_SOCKET, else
/tmp/c7x_fw.sock.

The status codes (C7X_OK, C7X_ERR_HANDLE, ...) are the library's: this
module's attributes of those names are read from c7x_status_table() on
first use (cstatic/c7x_protocol.h is their only definition).
"""
import ctypes
import os
import threading

import numpy as np

C7X_MAX_NDIM = 6


class _C7xTensorDesc(ctypes.Structure):
    """c7x_tensor_desc (client/include/c7x_client.h)."""
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("data_size", ctypes.c_size_t),
        ("ndim", ctypes.c_int32),
        ("dtype_code", ctypes.c_int32),  # DLPack: 0 int, 1 uint, 2 float
        ("dtype_bits", ctypes.c_int32),
        ("_pad", ctypes.c_int32),
        ("shape", ctypes.c_int64 * C7X_MAX_NDIM),
    ]


class _C7xClientStats(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in
                ("infers", "inputs_zero_copy", "inputs_copied", "bytes_copied", "faults", "reconnects")]


# The layout the C library was built with; a mismatch would corrupt every
# call, so refuse to import instead.
assert ctypes.sizeof(_C7xTensorDesc) == 80, ctypes.sizeof(_C7xTensorDesc)
assert _C7xTensorDesc.shape.offset == 32

_DTYPES = {  # numpy dtype ↔ (DLPack code, bits)
    np.dtype(np.float32): (2, 32), np.dtype(np.float16): (2, 16),
    np.dtype(np.int8): (0, 8), np.dtype(np.uint8): (1, 8),
    np.dtype(np.int16): (0, 16), np.dtype(np.uint16): (1, 16),
    np.dtype(np.int32): (0, 32), np.dtype(np.int64): (0, 64),
}
_CODES = {v: k for k, v in _DTYPES.items()}


class _C7xProfile(ctypes.Structure):
    """c7x_profile (client/include/c7x_client.h)."""
    _fields_ = [("num_layers", ctypes.c_uint32), ("runs", ctypes.c_uint32), ("clock_hz", ctypes.c_uint64),
                ("infer_cycles", ctypes.c_uint64), ("clock_unit", ctypes.c_char * 8)]


class _C7xProfileRow(ctypes.Structure):
    """c7x_profile_row (cstatic/c7x_protocol.h): 232 bytes, packed."""
    _pack_ = 1
    _fields_ = [("name", ctypes.c_char * 72), ("module", ctypes.c_char * 64), ("output", ctypes.c_char * 40),
                ("kernel", ctypes.c_char * 40), ("macs", ctypes.c_int64), ("cycles", ctypes.c_uint64)]


assert ctypes.sizeof(_C7xProfileRow) == 232, ctypes.sizeof(_C7xProfileRow)


class C7xLayerTime:
    """One layer of C7xVirtualMachine.profile(): a kernel call of the
    module, in its last inference: `name` the ONNX node it computes,
    `module` the PyTorch module path recorded for it (or ""), `output` its
    output tensor ("i8[1,64,56,56]")."""
    __slots__ = ("name", "module", "output", "kernel", "macs", "cycles", "ms")

    def __init__(self, name, module, output, kernel, macs, cycles, ms):
        self.name, self.module, self.output, self.kernel = name, module, output, kernel
        self.macs, self.cycles, self.ms = macs, cycles, ms

    def __repr__(self):
        return (f"C7xLayerTime(name={self.name!r}, module={self.module!r}, output={self.output!r}, "
                f"kernel={self.kernel!r}, macs={self.macs}, cycles={self.cycles}, ms={self.ms:.6f})")


class C7xProfile:
    """The per-layer profile of a module's last inference (a module
    compiled with -profile-layers=1): `layers` (C7xLayerTime, in execution
    order), `runs` (inferences of that request), `infer_cycles` and
    `latency_ms` (the inference as a whole), `clock_hz`. str() is the table
    `cstatic run --profile` and `c7x_compute infer --profile` print (the
    same C formatter); csv() its CSV."""

    def __init__(self, lib, info, rows, n):
        self._lib, self._info, self._rows, self._n = lib, info, rows, n
        self.runs = int(info.runs)
        self.clock_hz = int(info.clock_hz)
        self.clock_unit = info.clock_unit.decode()
        self.infer_cycles = int(info.infer_cycles)
        to_ms = 1e3 / self.clock_hz if self.clock_hz else 0.0
        self.latency_ms = self.infer_cycles * to_ms
        text = lambda b: b.decode(errors="replace")
        self.layers = [C7xLayerTime(text(r.name), text(r.module), text(r.output), text(r.kernel), int(r.macs),
                                    int(r.cycles), r.cycles * to_ms)
                       for r in rows[:n]]

    def _format(self, csv):
        need = self._lib.c7x_profile_format(ctypes.byref(self._info), self._rows, self._n, csv, None, 0)
        buf = ctypes.create_string_buffer(need + 1)
        self._lib.c7x_profile_format(ctypes.byref(self._info), self._rows, self._n, csv, buf, need + 1)
        return buf.value.decode(errors="replace")

    def table(self):
        return self._format(0)

    def csv(self):
        return self._format(1)

    def __str__(self):
        return self.table()


class _C7xStatusInfo(ctypes.Structure):
    """c7x_status_info (client/include/c7x_client.h)."""
    _fields_ = [("value", ctypes.c_int32), ("name", ctypes.c_char_p), ("text", ctypes.c_char_p)]


_statuses = None


def _status_table():
    """{name: value} of every status, from the C library."""
    global _statuses
    if _statuses is None:
        lib = _load_library()
        n = ctypes.c_size_t()
        rows = lib.c7x_status_table(ctypes.byref(n))
        _statuses = {rows[i].name.decode(): rows[i].value for i in range(n.value)}
    return _statuses


def _status(name):
    return _status_table()[name]


def __getattr__(name):  # C7X_OK, C7X_ERR_* (PEP 562)
    if name.startswith("C7X_") and name in _status_table():
        return _status_table()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def status_text(status):
    """The library's text of a status ("bad handle")."""
    return _load_library().c7x_strerror(status).decode()


class C7xError(RuntimeError):
    def __init__(self, status, message):
        super().__init__(f"{message} (status {status})")
        self.status = status
        self.message = message


class C7xFault(C7xError):
    """The firmware died during the request; it was restarted."""


def _find_library():
    path = os.environ.get("C7X_ARM_RUNTIME_LIB")
    if path:
        return path
    candidates = []
    cstatic_bin = os.environ.get("CSTATIC_BIN")
    if cstatic_bin:
        candidates.append(os.path.join(os.path.dirname(os.path.dirname(cstatic_bin)), "lib"))
    here = os.path.dirname(os.path.abspath(__file__))
    candidates.append(os.path.join(here, "lib"))  # pip install: the package is the prefix
    candidates.append(os.path.join(os.path.dirname(os.path.dirname(here)), "build", "lib"))
    # pip install -e: the CMake-installed files are in site-packages, the
    # Python files stay in the source tree; __path__ holds both (as _cli.cli)
    import cstatic
    candidates.extend(os.path.join(d, "lib") for d in getattr(cstatic, "__path__", []))
    for d in candidates:
        p = os.path.join(d, "libc7x_arm_runtime.so")
        if os.path.exists(p):
            return p
    return "libc7x_arm_runtime.so"


_lib = None


def _load_library():
    global _lib
    if _lib is not None:
        return _lib
    lib = ctypes.CDLL(_find_library())
    P, T = ctypes.c_void_p, ctypes.POINTER(_C7xTensorDesc)
    I, U32, U64, SZ = ctypes.c_int, ctypes.c_uint32, ctypes.c_uint64, ctypes.c_size_t
    sigs = {
        "c7x_client_open_path": (P, [ctypes.c_char_p]),
        "c7x_client_open_error": (ctypes.c_char_p, []),
        "c7x_client_open_status": (I, []),
        "c7x_strerror": (ctypes.c_char_p, [I]),
        "c7x_status_table": (ctypes.POINTER(_C7xStatusInfo), [ctypes.POINTER(SZ)]),
        "c7x_client_close": (None, [P]),
        "c7x_client_last_error": (ctypes.c_char_p, [P]),
        "c7x_client_set_timeout": (None, [P, I]),
        "c7x_client_get_stats": (None, [P, ctypes.POINTER(_C7xClientStats)]),
        "c7x_client_get_output_buffer": (P, [P, ctypes.POINTER(SZ)]),
        "c7x_client_get_input_buffer": (P, [P, ctypes.POINTER(SZ)]),
        "c7x_client_create_input": (P, [P, SZ]),
        "c7x_client_reset_inputs": (None, [P]),
        "c7x_client_dyn_load": (I, [P, ctypes.c_char_p, ctypes.POINTER(U64)]),
        "c7x_client_dyn_unload": (I, [P, U64]),
        "c7x_client_dyn_info": (I, [P, U64, T, ctypes.POINTER(I), T, ctypes.POINTER(I)]),
        "c7x_client_infer_flags": (I, [P, U64, U32, T, I, T, ctypes.POINTER(I),
                                       ctypes.POINTER(ctypes.c_uint64), U32]),
        "c7x_client_profile": (I, [P, U64, ctypes.POINTER(_C7xProfile), ctypes.POINTER(_C7xProfileRow),
                                   ctypes.POINTER(I)]),
        "c7x_profile_format": (SZ, [ctypes.POINTER(_C7xProfile), ctypes.POINTER(_C7xProfileRow), I, I,
                                    ctypes.c_char_p, SZ]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    _lib = lib
    return lib


def _shape(d):
    return tuple(int(d.shape[k]) for k in range(d.ndim))


def _dtype(d):
    key = (d.dtype_code, d.dtype_bits)
    if key not in _CODES:
        raise C7xError(_status("C7X_ERR_TENSOR"), f"dtype code {d.dtype_code} bits {d.dtype_bits} has no numpy type")
    return _CODES[key]


class _Function:
    def __init__(self, vm):
        self._vm = vm

    def __call__(self, *inputs):
        return self._vm.run(*inputs)


class C7xVirtualMachine:
    MAX_TENSORS = 64  # per side (C7X_MAX_TENSORS)
    MAX_OUTPUTS = MAX_TENSORS

    def __init__(self, module_path, socket=None, timeout_s=None):
        self._lib = _load_library()
        self._lock = threading.RLock()  # one request at a time per client
        self._client = None
        self._module_path = os.fspath(module_path)
        if not os.path.isfile(self._module_path):
            raise FileNotFoundError(f"C7x module {self._module_path} does not exist")
        c = self._lib.c7x_client_open_path(os.fsencode(socket) if socket else None)
        if not c:
            raise C7xError(self._lib.c7x_client_open_status(), self._lib.c7x_client_open_error().decode())
        self._client = c
        if timeout_s is not None:
            self._lib.c7x_client_set_timeout(c, max(1, int(timeout_s * 1000)))
        self._handle = None
        self._load()

    # ---- module ------------------------------------------------------------
    def _faults(self):
        s = _C7xClientStats()
        self._lib.c7x_client_get_stats(self._client, ctypes.byref(s))
        return s.faults

    def _call(self, what, fn, *args):
        """fn(client, *args); a failure raises C7xFault when the firmware
        died under it (the client counted a fault: every handle is gone),
        else C7xError (a timeout whose reset the firmware refused, too)."""
        faults = self._faults()
        status = fn(self._client, *args)
        if status == 0:
            return
        msg = self._lib.c7x_client_last_error(self._client).decode(errors="replace")
        if self._faults() != faults:
            self._handle = None  # died with the firmware; reload on the next call
            raise C7xFault(status, f"{what}: {msg}")
        raise C7xError(status, f"{what}: {msg}")

    def _load(self):
        h = ctypes.c_uint64()
        self._call(f"loading {self._module_path}", self._lib.c7x_client_dyn_load,
                   os.fsencode(self._module_path), ctypes.byref(h))
        self._handle = h.value
        ins = (_C7xTensorDesc * self.MAX_TENSORS)()
        outs = (_C7xTensorDesc * self.MAX_TENSORS)()
        n_in, n_out = ctypes.c_int(self.MAX_TENSORS), ctypes.c_int(self.MAX_TENSORS)
        self._call("module info", self._lib.c7x_client_dyn_info, self._handle, ins, ctypes.byref(n_in),
                   outs, ctypes.byref(n_out))
        self.input_specs = [(_shape(ins[i]), _dtype(ins[i])) for i in range(n_in.value)]
        self.output_specs = [(_shape(outs[j]), _dtype(outs[j])) for j in range(n_out.value)]

    @property
    def handle(self):
        return self._handle

    def __getitem__(self, name):
        if name != "main":
            raise KeyError(f"a C7x module has one function, 'main', not {name!r}")
        return _Function(self)

    # ---- tensors -----------------------------------------------------------
    def create_input(self, shape=None, dtype=None, index=0):
        """A zeroed array inside the staging buffer (default: input index's
        shape and dtype). Runs pass it without copying; it stays valid
        memory until close() (its contents are lost if the firmware
        restarts, or the module is loaded again)."""
        with self._lock:
            return self._create_input_locked(shape, dtype, index)

    def _create_input_locked(self, shape, dtype, index):
        self._require_open()
        if self._handle is None:
            self._load()
        if shape is None or dtype is None:
            spec_shape, spec_dtype = self.input_specs[index]
            shape = spec_shape if shape is None else shape
            dtype = spec_dtype if dtype is None else dtype
        shape, dtype = tuple(int(s) for s in shape), np.dtype(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
        p = self._lib.c7x_client_create_input(self._client, max(nbytes, 1))
        if not p:
            raise C7xError(_status("C7X_ERR_NOMEM"), self._lib.c7x_client_last_error(self._client).decode())
        buf = (ctypes.c_uint8 * nbytes).from_address(p)
        a = np.frombuffer(buf, dtype=dtype).reshape(shape)
        a[...] = 0
        return a

    def stats(self):
        """The client's counters: infers, inputs_zero_copy, inputs_copied,
        bytes_copied, faults, reconnects."""
        self._require_open()
        s = _C7xClientStats()
        self._lib.c7x_client_get_stats(self._client, ctypes.byref(s))
        return {n: int(getattr(s, n)) for n, _ in _C7xClientStats._fields_}

    # ---- running -----------------------------------------------------------
    def _require_open(self):
        if not self._client:
            raise C7xError(_status("C7X_ERR_INVALID"), "the C7xVirtualMachine is closed")

    def _infer(self, inputs, repeat):
        with self._lock:
            return self._infer_locked(inputs, repeat)

    def _infer_locked(self, inputs, repeat):
        self._require_open()
        if self._handle is None:
            self._load()
        if len(inputs) != len(self.input_specs):
            raise ValueError(f"the module takes {len(self.input_specs)} input(s), got {len(inputs)}")
        descs = (_C7xTensorDesc * max(1, len(inputs)))()
        keep = []
        for i, (x, (shape, dtype)) in enumerate(zip(inputs, self.input_specs)):
            if not isinstance(x, np.ndarray):
                raise TypeError(f"input {i}: expected a numpy array, got {type(x).__name__}")
            if x.dtype != dtype:
                raise TypeError(f"input {i}: dtype {x.dtype}, the module takes {dtype}")
            if x.shape != shape:
                raise ValueError(f"input {i}: shape {x.shape}, the module takes {shape}")
            x = np.ascontiguousarray(x)  # a view of x if it already is
            keep.append(x)
            d = descs[i]
            d.data = x.ctypes.data
            d.data_size = x.nbytes
            d.ndim = x.ndim
            d.dtype_code, d.dtype_bits = _DTYPES[x.dtype]
            for k, s in enumerate(x.shape):
                d.shape[k] = s
        outs = (_C7xTensorDesc * self.MAX_OUTPUTS)()
        n_out = ctypes.c_int(self.MAX_OUTPUTS)
        cycles = ctypes.c_uint64()
        self._call(f"running handle {self._handle}", self._lib.c7x_client_infer_flags, self._handle, 0, descs,
                   len(inputs), outs, ctypes.byref(n_out), ctypes.byref(cycles), repeat)
        self.last_cycles = cycles.value
        views = []
        for j in range(n_out.value):
            d = outs[j]
            buf = (ctypes.c_uint8 * d.data_size).from_address(d.data)
            views.append(np.frombuffer(buf, dtype=_dtype(d)).reshape(_shape(d)))
        return views

    @staticmethod
    def _result(arrays):
        return arrays[0] if len(arrays) == 1 else arrays

    def run(self, *inputs, repeat=1):
        """Outputs copied out of the result buffer: safe to keep."""
        return self._result([np.copy(v) for v in self._infer(inputs, repeat)])

    def run_nocopy(self, *inputs, repeat=1):
        """Outputs as views of the result buffer: the next run overwrites
        them."""
        return self._result(self._infer(inputs, repeat))

    def profile(self):
        """The per-layer profile of the module's last inference
        (C7xProfile: print() it for the table of `cstatic run --profile`).
        Needs a module compiled with target "c_static_lib -mcpu=c7x
        -profile-layers=1" and a run before."""
        with self._lock:
            self._require_open()
            if self._handle is None:
                raise C7xError(_status("C7X_ERR_HANDLE"), "the module is not loaded (the firmware restarted): "
                               "run it again before asking for its profile")
            info = _C7xProfile()
            n = ctypes.c_int(0)
            self._call(f"profile of handle {self._handle}", self._lib.c7x_client_profile, self._handle,
                       ctypes.byref(info), None, ctypes.byref(n))
            if info.runs == 0:
                raise C7xError(_status("C7X_ERR_INVALID"), f"handle {self._handle} has not run an inference yet")
            rows = (_C7xProfileRow * max(1, info.num_layers))()
            n = ctypes.c_int(info.num_layers)
            self._call(f"profile of handle {self._handle}", self._lib.c7x_client_profile, self._handle,
                       ctypes.byref(info), rows, ctypes.byref(n))
            return C7xProfile(self._lib, info, rows, n.value)

    # ---- lifetime ----------------------------------------------------------
    def close(self):
        """Unload the module and disconnect. Views from run_nocopy() and
        create_input() arrays must not be used afterwards."""
        with self._lock:
            self._close_locked()

    def _close_locked(self):
        if self._client:
            if self._handle is not None:
                self._lib.c7x_client_dyn_unload(self._client, self._handle)
            self._lib.c7x_client_close(self._client)
            self._client = None
            self._handle = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            if hasattr(self, "_lock"):
                self.close()
        except Exception:
            pass
