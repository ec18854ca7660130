"""Time one model in several engines inside one process, interleaved.

usage: interleave.py SPEC.json

SPEC names the input (.npy, one batch-1 input), the number of rounds and
the engines, each one of
    {"name": ..., "kind": "cstatic", "dir": DIR}      a compiled model whose
        DIR/.build/model.so `cstatic run` has built (loaded with ctypes:
        the model's own run entry, float in and out);
    {"name": ..., "kind": "ort", "model": PATH, "config": {...}}
        an ONNX Runtime session, one intra-op thread, default graph
        optimizations, plus the given session config entries;
    {"name": ..., "kind": "executorch", "pte": PATH}
        an ExecuTorch program (XNNPACK delegate), threadpool reset to one
        thread.
After one warm-up run of each, every round runs each engine once, in
turn, so that whatever else the machine does falls on all of them alike.
Each run is timed by the thread's CPU time (time.thread_time: every
engine computes on the calling thread with one thread; time spent
descheduled on a shared machine is not the engine's) and by the wall
clock. Prints one JSON object: per engine the median and minimum of both,
and its last output (as a list) for the caller's comparisons, or the
error that kept it from running.
"""
import ctypes
import json
import os
import re
import sys
import time

import numpy as np

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
MAX_RANK = 6  # TIDSP_MAX_RANK (include/cstatic/kernels.h)


def abi_version():
    """TIDSP_MODEL_ABI_VERSION, read from the header (a copy of the number
    here went stale when the ABI moved on, and every cstatic row failed)."""
    with open(os.path.join(ROOT, "include", "cstatic", "model.h")) as f:
        return int(re.search(r"#define TIDSP_MODEL_ABI_VERSION (\d+)u", f.read()).group(1))


ABI_VERSION = abi_version()
NP_DTYPE = {1: np.float32, 2: np.int8, 3: np.uint8, 4: np.int16, 5: np.uint16,
            6: np.int32, 7: np.int64, 8: np.bool_}  # tidsp_dtype


class TensorInfo(ctypes.Structure):  # tidsp_tensor_info
    _fields_ = [("name", ctypes.c_char_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * MAX_RANK), ("numel", ctypes.c_int64),
                ("nbytes", ctypes.c_size_t), ("quantized", ctypes.c_int32),
                ("scale", ctypes.c_float), ("zero_point", ctypes.c_int32)]


ENTRY = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.c_void_p,
                         ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p))


class ModelDesc(ctypes.Structure):  # tidsp_model_desc
    _fields_ = [("abi_version", ctypes.c_uint32), ("name", ctypes.c_char_p),
                ("target", ctypes.c_char_p), ("n_inputs", ctypes.c_int32),
                ("n_outputs", ctypes.c_int32),
                ("inputs", ctypes.POINTER(TensorInfo)), ("outputs", ctypes.POINTER(TensorInfo)),
                ("raw_inputs", ctypes.POINTER(TensorInfo)),
                ("raw_outputs", ctypes.POINTER(TensorInfo)),
                ("arena_size", ctypes.c_size_t), ("arena_align", ctypes.c_size_t),
                ("live_bytes_lower_bound", ctypes.c_size_t), ("l2_size", ctypes.c_size_t),
                ("weights_size", ctypes.c_size_t), ("weights_align", ctypes.c_size_t),
                ("weights_embedded", ctypes.c_void_p), ("run", ENTRY), ("run_raw", ENTRY),
                ("check_weights", ctypes.c_void_p), ("status_str", ctypes.c_void_p),
                ("profile", ctypes.c_void_p)]


def aligned(nbytes, align):
    """A zeroed numpy byte buffer whose data is `align`-aligned."""
    raw = np.zeros(nbytes + align, np.uint8)
    start = (-raw.ctypes.data) % align
    return raw[start:start + nbytes]


class CstaticEngine:
    def __init__(self, d, x):
        so = os.path.join(d, ".build", "model.so")
        self.lib = ctypes.CDLL(so)
        desc = ModelDesc.in_dll(self.lib, "model_desc")
        if desc.abi_version != ABI_VERSION:
            raise RuntimeError(f"{so}: model ABI {desc.abi_version}, expected {ABI_VERSION}")
        if desc.n_inputs != 1 or desc.l2_size:
            raise RuntimeError(f"{so}: needs one input and no L2 region")
        with open(os.path.join(d, "weights.bin"), "rb") as f:
            blob = f.read()
        self.weights = aligned(len(blob), max(desc.weights_align, 64))
        self.weights[:] = np.frombuffer(blob, np.uint8)
        self.arena = aligned(max(desc.arena_size, 1), max(desc.arena_align, 64))
        ti = desc.inputs[0]
        self.x = np.ascontiguousarray(x.astype(NP_DTYPE[ti.dtype]))
        if self.x.nbytes != ti.nbytes:
            raise RuntimeError(f"input has {self.x.nbytes} bytes, the model wants {ti.nbytes}")
        self.outs = []
        for i in range(desc.n_outputs):
            to = desc.outputs[i]
            self.outs.append(np.zeros([to.shape[k] for k in range(to.rank)], NP_DTYPE[to.dtype]))
        self.in_ptrs = (ctypes.c_void_p * 1)(self.x.ctypes.data)
        self.out_ptrs = (ctypes.c_void_p * len(self.outs))(*[o.ctypes.data for o in self.outs])
        self.run_fn = desc.run
        self.w_ptr = ctypes.c_void_p(self.weights.ctypes.data)
        self.a_ptr = ctypes.c_void_p(self.arena.ctypes.data)

    def __call__(self):
        st = self.run_fn(self.w_ptr, self.a_ptr, self.in_ptrs, self.out_ptrs)
        if st != 0:
            raise RuntimeError(f"model_run returned status {st}")
        return self.outs[0]


class OrtEngine:
    def __init__(self, model, config, x):
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = 1
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.log_severity_level = 3
        for k, v in (config or {}).items():
            so.add_session_config_entry(k, v)
        self.sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        self.feed = {self.sess.get_inputs()[0].name: x.astype(np.float32)}

    def __call__(self):
        return self.sess.run(None, self.feed)[0]


class ExecutorchEngine:
    def __init__(self, pte, x):
        import torch
        from executorch.extension.pybindings.portable_lib import _unsafe_reset_threadpool
        from executorch.runtime import Runtime
        _unsafe_reset_threadpool(1)
        self.method = Runtime.get().load_program(pte).load_method("forward")
        self.args = [torch.from_numpy(np.ascontiguousarray(x.astype(np.float32)))]

    def __call__(self):
        return self.method.execute(self.args)[0].numpy()


def main():
    with open(sys.argv[1]) as f:
        spec = json.load(f)
    x = np.load(spec["input"])
    engines, result = {}, {}
    for e in spec["engines"]:
        try:
            if e["kind"] == "cstatic":
                engines[e["name"]] = CstaticEngine(e["dir"], x)
            elif e["kind"] == "ort":
                engines[e["name"]] = OrtEngine(e["model"], e.get("config"), x)
            elif e["kind"] == "executorch":
                engines[e["name"]] = ExecutorchEngine(e["pte"], x)
            else:
                raise RuntimeError(f"unknown engine kind {e['kind']}")
            engines[e["name"]]()  # warm-up
        except Exception as ex:  # reported per engine, the others still run
            engines.pop(e["name"], None)
            result[e["name"]] = {"error": str(ex).strip().splitlines()[0][:300]}
    cpu = {n: [] for n in engines}
    wall = {n: [] for n in engines}
    last = {}
    for _ in range(spec["rounds"]):
        for n, run in engines.items():
            w0, c0 = time.perf_counter(), time.thread_time()
            y = run()
            c1, w1 = time.thread_time(), time.perf_counter()
            cpu[n].append((c1 - c0) * 1e3)
            wall[n].append((w1 - w0) * 1e3)
            last[n] = y
    for n in engines:
        result[n] = {"cpu_ms": float(np.median(cpu[n])), "cpu_min_ms": float(np.min(cpu[n])),
                     "wall_ms": float(np.median(wall[n])), "wall_min_ms": float(np.min(wall[n])),
                     "output": np.asarray(last[n], np.float64).ravel().tolist()}
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
