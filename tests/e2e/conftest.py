"""Shared pieces of the e2e tests: the model suite and its results table.

The model suite (tests/models) is generated on demand into tests/models/out/
(a gitignored cache): the session fixture `model_suite` runs
tests/models/generate.py once for the (model, variant) pairs the collected
tests need; files already there are kept. ORT reference outputs are cached
next to the models as <model>_<variant>_ort.npy.

Every suite test adds a row to a session table, printed at the end of the
run (pytest_terminal_summary) and written to tests/models/out/suite_table.md.
"""

import concurrent.futures
import ctypes
import glob
import importlib.util
import math
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# Every compile the tests run verifies the IR after every pass, naming the
# pass that broke it (compiler/passes/registry.c); a user's compile verifies
# once after the pipeline.
os.environ.setdefault("CSTATIC_VERIFY_EACH_PASS", "1")
MODELS_SRC = os.path.join(ROOT, "tests", "models")

# The tests use this checkout's Python package (python/cstatic), which
# finds this checkout's build (build/bin/cstatic, or $CSTATIC_BIN).
sys.path.insert(0, os.path.join(ROOT, "python"))
MODELS_OUT = os.path.join(MODELS_SRC, "out")


def _ort_config(text):
    """Parse CSTATIC_ORT_CONFIG: comma-separated key=value pairs."""
    config = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ValueError(f"CSTATIC_ORT_CONFIG: '{item}' is not key=value")
        config[key.strip()] = value.strip()
    return config


# ONNX Runtime session config entries for the reference run. The default,
# session.qdqisint8allowed=1, makes ORT fuse every QDQ group into its
# integer QLinear kernels, as it does by default on ARM (the AM67A host).
# ORT's x86 defaults instead run int8-activation layers whose input fans out
# (residuals, inception and SE inputs of the pt2e/ort_s8 variants) as float
# convolutions (tests/models/ORT_FUSIONS.md §1), which no integer compiler
# can match bit for bit. CSTATIC_ORT_CONFIG="" selects those defaults.
ORT_CONFIG = _ort_config(os.environ.get("CSTATIC_ORT_CONFIG", "session.qdqisint8allowed=1"))


def ort_u8s8_exact():
    """ORT's x86 u8×s8 GEMM without VNNI (vpmaddubsw) adds pairs of raw
    products into int16 with saturation; full-range weights can then differ
    from the exact sum. Exact: VNNI, or a non-x86 machine."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read()
    except OSError:
        return True
    return "avx2" not in flags or "vnni" in flags


def mlas_float_order():
    """cstatic's host float Conv/Gemm sum in the order of ORT's MLAS kernels
    (runtime/kernels/host/*_f32__host_mlas.c) on CPUs where MLAS uses fused
    multiply-adds: AVX-512F or AVX2 + FMA3. Elsewhere (MLAS's SSE/AVX
    kernels, or not x86) the reference order runs and differs from ORT."""
    try:
        with open("/proc/cpuinfo") as f:
            flags = f.read().split()
    except OSError:
        return False
    return "avx512f" in flags or ("avx2" in flags and "fma" in flags)


def _load(name):
    """Import tests/models/<name>.py under a private module name."""
    spec = importlib.util.spec_from_file_location(f"cs_models_{name}",
                                                  os.path.join(MODELS_SRC, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


ort_ref = _load("ort_ref")


class ModelSuite:
    """Paths of the generated suite and its cached ORT references."""

    def __init__(self, out):
        self.out = out

    def model(self, name, variant):
        path = os.path.join(self.out, f"{name}_{variant}.onnx")
        assert os.path.exists(path), f"{path} was not generated"
        return path

    def inputs(self, name):
        path = os.path.join(self.out, f"{name}_inputs.npy")
        assert os.path.exists(path), f"{path} was not generated"
        return path

    def ort_inexact_reason(self, name, variant):
        """Why ORT (ORT_CONFIG) is not an exact reference for this file on
        this CPU, or None when it is (ort_ref.inexact_reason: a uint8 MatMul
        on a CPU whose ORT kernel saturates, or a float Softmax whose output
        is computed on where ORT's kernel is not the one cstatic mirrors)."""
        return ort_ref.inexact_reason(self.model(name, variant))

    def ort_output(self, name, variant):
        """ORT (1 thread, ORT_CONFIG) on the suite inputs, float32 [16, 1000]."""
        tag = "".join(f"_{k.split('.')[-1]}{v}" for k, v in sorted(ORT_CONFIG.items()))
        cache = os.path.join(self.out, f"{name}_{variant}_ort{tag}.npy")
        return ort_ref.cached_run(self.model(name, variant), self.inputs(name),
                                  cache, ORT_CONFIG)


def _requested_pairs(session):
    """(model, variant) pairs of the collected tests that use the suite (the
    architecture is the `model` parameter, or `name` in test_mmalib)."""
    models, variants = set(), set()
    for item in session.items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        arch = params.get("model", params.get("name"))
        if "model_suite" in getattr(item, "fixturenames", ()) and arch and "variant" in params:
            models.add(arch)
            variants.add(params["variant"])
    return sorted(models), sorted(variants)


@pytest.fixture(scope="session")
def model_suite(request):
    models, variants = _requested_pairs(request.session)
    if models:
        cmd = [sys.executable, os.path.join(MODELS_SRC, "generate.py"), "--out", MODELS_OUT,
               "--models", ",".join(models), "--variants", ",".join(variants)]
        p = subprocess.run(cmd, capture_output=True, text=True)
        assert p.returncode == 0, (f"generating the model suite failed:\n{' '.join(cmd)}\n"
                                   f"{p.stdout}\n{p.stderr}")
    return ModelSuite(MODELS_OUT)


# ------------------------------------------------- the runtime as one .so

@pytest.fixture(scope="session")
def runtime_objects(tmp_path_factory):
    """Every runtime/**/*.c compiled once per session as the kernel tests
    build it (`cc -std=c99 -O2 -fPIC`, plus $TIDSP_CFLAGS, e.g.
    "-march=native -std=gnu11" to check that an FMA-capable build still
    rounds like ORT: the kernels forbid contraction themselves), one
    compiler per core: the test files that load the kernels through ctypes
    link these objects with their own ABI probe (runtime_library)."""
    d = tmp_path_factory.mktemp("tidsp_objects")
    srcs = sorted(glob.glob(os.path.join(ROOT, "runtime", "**", "*.c"), recursive=True))
    cmd = [os.environ.get("CC", "cc"), "-std=c99", "-O2", *os.environ.get("TIDSP_CFLAGS", "").split(),
           "-fPIC", "-I" + os.path.join(ROOT, "include"), "-c"]
    objs = [str(d / f"{i:03d}_{os.path.basename(src)[:-2]}.o") for i, src in enumerate(srcs)]

    def compile_one(src_obj):
        return subprocess.run([*cmd, src_obj[0], "-o", src_obj[1]], capture_output=True, text=True)

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        for (src, _), p in zip(zip(srcs, objs), pool.map(compile_one, zip(srcs, objs))):
            assert p.returncode == 0, f"compiling {src} failed:\n{p.stderr}"
    return objs


def runtime_library(runtime_objects, tmp_path_factory, probe_source, name):
    """The runtime's objects and one ABI probe (C source) linked as a
    shared library, loaded with ctypes."""
    d = tmp_path_factory.mktemp(name)
    probe = d / "abi_probe.c"
    probe.write_text(probe_source)
    so = d / f"lib{name}.so"
    subprocess.run([os.environ.get("CC", "cc"), "-std=c99", "-O2", *os.environ.get("TIDSP_CFLAGS", "").split(),
                    "-shared", "-fPIC", "-I" + os.path.join(ROOT, "include"), str(probe), *runtime_objects,
                    "-lm", "-o", str(so)], check=True)
    return ctypes.CDLL(str(so))


# ---------------------------------------------------------------- the table

_ROWS = []
_COLUMNS = ("model", "variant", "requant", "top-1", "exact share", "SQNR dB",
            "arena ratio", "result")


def _fmt(v):
    if isinstance(v, float):
        return "inf" if math.isinf(v) else ("-" if math.isnan(v) else f"{v:.4g}")
    return str(v)


class SuiteTable:
    """Rows of the model-suite summary; a test fills one row as it goes so
    that a failing test still shows what it measured."""

    def row(self, **cells):
        cells.setdefault("result", "incomplete")
        _ROWS.append(cells)
        return cells


@pytest.fixture(scope="session")
def suite_table():
    return SuiteTable()


def _table_lines():
    rows = sorted(_ROWS, key=lambda r: (r.get("model", ""), r.get("variant", ""),
                                        r.get("requant", "")))
    lines = ["| " + " | ".join(_COLUMNS) + " |",
             "|" + "|".join("---" for _ in _COLUMNS) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(_fmt(r.get(c, "-")) for c in _COLUMNS) + " |")
    return lines


def pytest_terminal_summary(terminalreporter):
    if not _ROWS:
        return
    lines = _table_lines()
    terminalreporter.section("model suite")
    for line in lines:
        terminalreporter.write_line(line)
    os.makedirs(MODELS_OUT, exist_ok=True)
    path = os.path.join(MODELS_OUT, "suite_table.md")
    with open(path, "w") as f:
        f.write("# Model suite: cstatic vs ONNX Runtime\n\n")
        f.write("top-1: images whose argmax agrees with ORT; exact share: output "
                "elements bit-identical to ORT; SQNR: 10 log10(sum ref^2 / "
                "sum (ref - out)^2); arena ratio: arena_bytes / "
                "live_bytes_lower_bound.\n\n")
        f.write("\n".join(lines) + "\n")
    terminalreporter.write_line(f"(written to {os.path.relpath(path, ROOT)})")
