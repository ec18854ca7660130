"""The board's host side is ARM64 Linux: the runtime, the firmware emulator,
the client library, c7x_compute and a suite model's generated C, built for
aarch64 (`make aarch64`: build-aarch64/, cmake/aarch64-linux-gnu.cmake,
Debian's gcc-aarch64-linux-gnu) and run under qemu-user, give the bytes of
the x86-64 `cstatic run`:

- the model's generated C with the aarch64 runtime, as a program;
- an aarch64 module (--emit=module with CS_MODULE_CC) loaded by the aarch64
  firmware's own ELF loader, driven by the aarch64 c7x_compute, by C and
  C++ API programs built for aarch64, and by this (x86-64) Python process's
  client across the same socket and shared memory;
- the firmware's unit tests (loader, protocol, pools) under qemu.
The slow set adds the kernel unit tests and every deployment test file run
against the aarch64 firmware (C7X_FW_BIN / C7X_FW_WRAPPER / CS_MODULE_CC).
"""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from deploy_util import CPP_SRC, CSTATIC, ROOT, Firmware, run
from test_deploy_client import CAPI_SRC

A64 = os.path.join(ROOT, "build-aarch64")
TRIPLE = "aarch64-linux-gnu"
QEMU = ["qemu-aarch64-static", "-L", f"/usr/{TRIPLE}"]
A64_CC, A64_CXX = f"{TRIPLE}-gcc", f"{TRIPLE}-g++"

pytestmark = pytest.mark.skipif(
    not (shutil.which(QEMU[0]) and shutil.which(A64_CC) and shutil.which(A64_CXX)),
    reason="needs qemu-user-static and gcc/g++-aarch64-linux-gnu (make test installs them)")

# What the model is run on, per kind of test (a small suite model keeps
# qemu's share of the fast set small).
MODEL, VARIANT = "shufflenetv2", "pt2e"

DRIVER_SRC = r"""
/* Runs a compiled model on the host it is built for: argv: WEIGHTS OUT IN...
 * (raw bytes; OUT receives every output, concatenated). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cstatic/dma.h"
#include "lib0.h"

static void *slurp(const char *p, size_t want) {
  FILE *f = fopen(p, "rb");
  if (!f) { fprintf(stderr, "cannot read %s\n", p); exit(1); }
  void *b = aligned_alloc(64, (want + 63) / 64 * 64 + 64);
  if (fread(b, 1, want, f) != want || fgetc(f) != EOF) { fprintf(stderr, "%s: not %zu bytes\n", p, want); exit(1); }
  fclose(f);
  return b;
}

int main(int argc, char **argv) {
  const tidsp_model_desc *d = &model_desc;
  if (argc != 3 + d->n_inputs) { fprintf(stderr, "usage: WEIGHTS OUT IN x %d\n", d->n_inputs); return 2; }
  void *w = slurp(argv[1], d->weights_size);
  if (model_check_weights(w, d->weights_size) != 0) { fprintf(stderr, "bad weights\n"); return 1; }
  const void *in[64];
  void *out[64];
  for (int i = 0; i < d->n_inputs; i++) in[i] = slurp(argv[3 + i], d->inputs[i].nbytes);
  for (int j = 0; j < d->n_outputs; j++) out[j] = aligned_alloc(64, (d->outputs[j].nbytes + 63) / 64 * 64);
  void *arena = aligned_alloc(d->arena_align < 64 ? 64 : d->arena_align, (d->arena_size + 63) / 64 * 64 + 64);
  /* A -mcpu=c7x model stages layers in L2 SRAM: the platform binds it. */
  void *l2 = d->l2_size ? aligned_alloc(TIDSP_L2_ALIGN, (d->l2_size + TIDSP_L2_ALIGN - 1) / TIDSP_L2_ALIGN * TIDSP_L2_ALIGN) : NULL;
  if (d->l2_size && tidsp_l2_bind(l2, d->l2_size) != 0) { fprintf(stderr, "cannot bind L2\n"); return 1; }
  int32_t st = model_run(w, arena, in, out);
  if (st != 0) { fprintf(stderr, "model_run: %s\n", tidsp_status_str(st)); return 1; }
  FILE *f = fopen(argv[2], "wb");
  for (int j = 0; j < d->n_outputs; j++) fwrite(out[j], 1, d->outputs[j].nbytes, f);
  fclose(f);
  puts("ok");
  return 0;
}
"""


def a64(path):
    p = os.path.join(A64, path)
    assert os.path.exists(p), f"{p} is missing: build the aarch64 side with `make aarch64`"
    return p


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("aarch64")


@pytest.fixture(scope="module")
def firmware(work):
    fw = Firmware(work, binary=a64("bin/c7x_fw"), wrapper=QEMU, name="fw_a64")
    yield fw
    fw.stop()


@pytest.fixture(scope="module")
def compiled(model_suite, work):
    """The suite model compiled for the C7x flavour, with its module built
    for aarch64, and the x86-64 `cstatic run` of it."""
    d = work / MODEL
    env = dict(os.environ, CS_MODULE_CC=A64_CC)
    run(CSTATIC, "compile", model_suite.model(MODEL, VARIANT), "-o", d, "-t", "c_static_lib -mcpu=c7x",
        "--emit=module", "-q", env=env)
    assert "ARM aarch64" in run("file", d / "lib0.out").stdout
    x = np.ascontiguousarray(np.load(model_suite.inputs(MODEL))[:1])
    np.save(d / "x.npy", x)
    x.tofile(d / "x.bin")
    run(CSTATIC, "run", d, "--input", d / "x.npy", "--output", d / "ref.npy")
    np.load(d / "ref.npy").tofile(d / "ref.bin")
    return d


@pytest.mark.parametrize("variant", [VARIANT])
@pytest.mark.parametrize("model", [MODEL])
def test_generated_c_and_runtime_on_aarch64(model, variant, compiled, work):
    """lib*.c and the aarch64 libtidsp.a in one program, under qemu."""
    d = compiled
    src = work / "driver.c"
    src.write_text(DRIVER_SRC)
    exe = work / "driver_a64"
    run(A64_CC, "-std=c11", "-O2", "-Wall", "-Werror", f"-I{ROOT}/include", f"-I{d}", "-o", exe, src,
        *sorted(d.glob("lib*.c")), a64("lib/libtidsp.a"), "-lm")
    p = run(*QEMU, exe, d / "weights.bin", work / "y_native.bin", d / "x.bin")
    assert p.stdout == "ok\n"
    assert (work / "y_native.bin").read_bytes() == (d / "ref.bin").read_bytes(), \
        "aarch64 model_run differs from x86-64 cstatic run"


@pytest.mark.parametrize("variant", [VARIANT])
@pytest.mark.parametrize("model", [MODEL])
def test_aarch64_module_through_the_aarch64_firmware(model, variant, compiled, firmware, work):
    d = compiled
    ref = (d / "ref.bin").read_bytes()
    # c7x_compute (aarch64, under qemu): load, infer, unload.
    compute = [*QEMU, a64("bin/c7x_compute")]
    p = run(*compute, "load", d / "lib0.out", env=firmware.env)
    h = p.stdout.split()[1]
    run(*compute, "infer", h, 0, "-i", d / "x.bin", "-o", work / "y_cli.bin", env=firmware.env)
    assert (work / "y_cli.bin").read_bytes() == ref, "aarch64 c7x_compute differs from x86-64 cstatic run"
    run(*compute, "unload", h, env=firmware.env)

    # The C and C++ APIs, built for aarch64 against its libc7x_arm_runtime.
    lib = a64("lib/libc7x_arm_runtime.so")
    for name, compiler, text, std in (("capi", A64_CC, CAPI_SRC, "-std=c99"),
                                      ("cppapi", A64_CXX, CPP_SRC, "-std=c++14")):
        src = work / (name + (".c" if compiler == A64_CC else ".cpp"))
        src.write_text(text)
        exe = work / f"{name}_a64"
        extra = ["-fno-exceptions", "-fno-rtti"] if compiler == A64_CXX else []
        run(compiler, std, "-Wall", "-Werror", *extra, f"-I{ROOT}/client/include", f"-I{ROOT}/include", "-o", exe,
            src, lib, f"-Wl,-rpath,{os.path.dirname(lib)}")
        p = run(*QEMU, exe, d / "lib0.out", d / "x.bin", d / "ref.bin", env=firmware.env, ok=False)
        assert p.returncode == 0 and p.stdout == "ok\n", f"{name}: {p.stderr}"

    # This x86-64 process's Python client: the wire format and the shared
    # region are the same across machines.
    from cstatic.c7x import C7xVirtualMachine
    x = np.load(d / "x.npy")
    with C7xVirtualMachine(d / "lib0.out", socket=firmware.sock) as vm:
        assert vm["main"](x).tobytes() == ref


def test_firmware_unit_tests_under_qemu():
    p = subprocess.run(["ctest", "--output-on-failure", "-R", "^test_fw_"], cwd=a64("."), capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0 and "100% tests passed" in p.stdout, p.stdout + p.stderr


@pytest.mark.slow
def test_kernel_unit_tests_under_qemu():
    p = subprocess.run(["ctest", "--output-on-failure", "-j2", "-R", "^test_kernel_"], cwd=a64("."),
                       capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0 and "100% tests passed" in p.stdout, p.stdout + p.stderr


@pytest.mark.slow
def test_deployment_tests_against_the_aarch64_firmware():
    """The deployment test files, with the aarch64 firmware under qemu and
    modules built for aarch64 (the clients stay x86-64: the protocol and
    the shared region do not depend on the machine)."""
    env = dict(os.environ, C7X_FW_BIN=a64("bin/c7x_fw"), C7X_FW_WRAPPER=" ".join(QEMU), CS_MODULE_CC=A64_CC,
               C7X_MODULE_CC=A64_CC)
    files = ["tests/e2e/test_deploy.py", "tests/e2e/test_deploy_client.py", "tests/e2e/test_deploy_profile.py"]
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=3600)
    assert p.returncode == 0, p.stdout[-6000:] + p.stderr[-2000:]
