"""Warning-clean C: the generated C under clang -Weverything (minus -Wpadded
and -Wdeclaration-after-statement) and gcc -Wall -Wextra -Wconversion, and
the runtime under gcc -Wall -Wextra -Wconversion, all with -Werror.

The generated C is checked for the digits model, MobileNetV3-Small (PT2E and
ORT uint8) and, in test_transformer.py, the transformer, on the generic
target, the MCU preset, the scalar kernels with profiling and the C7x
flavour (with TI's headers stood in by include/cstatic/platform/ti_stub).

The runtime: every .c file under runtime/ (the reference, MMALIB and x86
host kernels, dispatch, profile, DMA) compiles clean.
"""
import concurrent.futures
import glob
import os
import shutil
import subprocess

import pytest

from cstatic_cli import ROOT, cstatic

INCLUDE = [f"-I{ROOT}/include", f"-I{ROOT}/include/cstatic/platform/ti_stub"]
CLANG = ["clang", "-std=c11", "-Weverything", "-Wno-padded", "-Wno-declaration-after-statement", "-Werror"]
GCC = ["gcc", "-std=c11", "-Wall", "-Wextra", "-Wconversion", "-Werror"]
TARGETS = ("c_static_lib", "c_static_lib -mcpu=cortex-m", "c_static_lib -kernels=scalar -profile-layers=1",
           "c_static_lib -mcpu=c7x -mmalib=1")


def compile_c(cmd, path):
    # the front end's warnings: no code is generated (-fsyntax-only)
    p = subprocess.run([*cmd, *INCLUDE, "-fsyntax-only", str(path)], capture_output=True, text=True)
    return p.returncode, p.stderr


def assert_generated_c_clean(dirpath):
    """Every lib*.c of a compiled model, under both compilers, -Werror."""
    if not shutil.which("clang"):
        pytest.fail("clang not found: the Makefile's apt list installs it")
    files = sorted(glob.glob(os.path.join(dirpath, "lib*.c")))
    assert files
    for path in files:
        for cmd in (CLANG, GCC):
            rc, err = compile_c(cmd, path)
            assert rc == 0, f"{cmd[0]} {os.path.basename(path)} of {dirpath}:\n{err[:3000]}"


@pytest.mark.parametrize("target", TARGETS)
def test_digits_generated_c(tmp_path, target):
    out = tmp_path / "digits"
    cstatic("compile", os.path.join(ROOT, "examples", "digits", "digits_int8.onnx"), "-o", out, "-t", target, "-q")
    assert_generated_c_clean(out)


@pytest.mark.parametrize("model,variant", [("mobilenetv3s", "pt2e"), ("mobilenetv3s", "ort_u8")])
@pytest.mark.parametrize("target", TARGETS)
def test_suite_generated_c(model, variant, target, model_suite, tmp_path):
    out = tmp_path / "m"
    cstatic("compile", model_suite.model(model, variant), "-o", out, "-t", target, "-q")
    assert_generated_c_clean(out)


def test_runtime_compiles_clean_with_gcc_conversion_warnings():
    runtime = os.path.join(ROOT, "runtime")
    files = sorted(os.path.relpath(p, runtime) for p in glob.glob(f"{runtime}/**/*.c", recursive=True))
    assert len(files) > 50, files  # the glob found the runtime
    dirty = []
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda f: compile_c([*GCC, f"-I{runtime}"], os.path.join(runtime, f)), files))
    for f, (rc, err) in zip(files, results):
        if rc != 0:
            dirty.append(f"{f}:\n{err[:2000]}")
    assert not dirty, "\n".join(dirty)
