"""Helpers shared by the deployment tests (test_deploy*.py): starting a
firmware, building modules that misbehave, importing the Python client."""
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from cstatic_cli import CSTATIC, ROOT

BIN_DIR = os.path.dirname(CSTATIC)
FW_BIN = os.environ.get("C7X_FW_BIN", os.path.join(BIN_DIR, "c7x_fw"))
COMPUTE_BIN = os.environ.get("C7X_COMPUTE_BIN", os.path.join(BIN_DIR, "c7x_compute"))
RUNTIME_LIB = os.environ.get("C7X_ARM_RUNTIME_LIB",
                             os.path.join(os.path.dirname(BIN_DIR), "lib", "libc7x_arm_runtime.so"))
CC = os.environ.get("CC", "cc")
# The firmware may be another machine's build (the aarch64 one under qemu:
# test_aarch64.py runs these tests so): what runs it, and the compiler of
# the modules it loads (cstatic's own --emit=module reads CS_MODULE_CC).
FW_DIR = os.path.dirname(FW_BIN)
FW_WRAPPER = os.environ.get("C7X_FW_WRAPPER", "").split()
MODULE_CC = os.environ.get("C7X_MODULE_CC", CC)

sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("C7X_ARM_RUNTIME_LIB", RUNTIME_LIB)


def run(*args, env=None, ok=True, timeout=300):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, env=env)
    if ok:
        assert p.returncode == 0, f"{' '.join(map(str, args))} failed:\n{p.stdout}\n{p.stderr}"
    return p


def small_model(path):
    """x f32[1,3,10,10] → Conv 3→6 3x3 + Relu → MaxPool 2x2 →
    GlobalAveragePool → Flatten → Gemm 6→4 → y f32[1,4], QDQ by ORT."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    r = np.random.default_rng(7)
    inits = [
        numpy_helper.from_array((r.standard_normal((6, 3, 3, 3)) * 0.3).astype(np.float32), "w1"),
        numpy_helper.from_array((r.standard_normal(6) * 0.1).astype(np.float32), "b1"),
        numpy_helper.from_array((r.standard_normal((4, 6)) * 0.5).astype(np.float32), "wf"),
        numpy_helper.from_array((r.standard_normal(4) * 0.1).astype(np.float32), "bf"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["m1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["m1"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1),
    ]
    g = helper.make_graph(nodes, "deploy_small",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 10, 10])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    float_path = str(path) + ".float.onnx"
    onnx.save(m, float_path)

    class Calib(CalibrationDataReader):
        def __init__(self):
            rr = np.random.default_rng(5)
            self.it = iter([{"x": rr.standard_normal((1, 3, 10, 10)).astype(np.float32)}
                            for _ in range(8)])

        def get_next(self):
            return next(self.it, None)

    quantize_static(float_path, str(path), Calib(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, per_channel=True)
    return path


def compile_small_module(work, name="c7x", target="c_static_lib -mcpu=c7x"):
    """small_model compiled into work/name as a loadable module (lib0.out)."""
    out = work / name
    run(CSTATIC, "compile", small_model(work / "small.onnx"), "-o", out, "-t", target, "--emit=module", "-q")
    return out


def build_capi(work, source, name="capi"):
    """A C program against the client's C API (libc7x_arm_runtime)."""
    src = work / f"{name}.c"
    src.write_text(source)
    exe = work / name
    run(CC, "-std=c99", "-Wall", "-Werror", f"-I{ROOT}/client/include", f"-I{ROOT}/include", "-o", exe, src,
        RUNTIME_LIB, f"-Wl,-rpath,{os.path.dirname(RUNTIME_LIB)}")
    return exe


class Firmware:
    """c7x_fw (supervised) on a private socket."""

    def __init__(self, work, *extra, binary=None, name="fw", wrapper=None):
        """binary: the firmware executable (default c7x_fw); wrapper: what
        runs it (qemu for another machine's build; default $C7X_FW_WRAPPER)."""
        wrapper = FW_WRAPPER if wrapper is None else wrapper
        self.sock = str(work / f"{name}.sock")
        self.log_path = work / f"{name}.log"
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([*wrapper, binary or FW_BIN, "--socket", self.sock, *map(str, extra)],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        self.env = dict(os.environ, C7X_FW_SOCKET=self.sock)
        deadline = time.time() + 10
        while not os.path.exists(self.sock):
            assert self.proc.poll() is None, f"c7x_fw exited: {self.log_text()}"
            assert time.time() < deadline, "c7x_fw did not create its socket"
            time.sleep(0.02)

    def log_text(self):
        self.log.flush()
        return open(self.log_path).read()

    def stop(self):
        alive = self.proc.poll() is None
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.log.close()
        assert alive, f"c7x_fw (the supervisor) died during the tests:\n{open(self.log_path).read()}"

    def compute(self, *args, ok=True):
        return run(COMPUTE_BIN, *args, env=self.env, ok=ok)

    def load(self, path):
        p = self.compute("load", path)
        m = re.fullmatch(r"handle (\d+)\n", p.stdout)
        assert m, p.stdout
        return int(m.group(1))


def build_module_like_cstatic(src_dir, out_dir, patch=None):
    """Copy a `--emit=module` directory, apply patch(lib0_c_text) -> text,
    and build lib0.out with the recipe of compiler/codegen/module.c."""
    out_dir = str(out_dir)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    for name in ("lib0.c", "lib0.h", "weights.bin"):
        shutil.copy(os.path.join(src_dir, name), out_dir)
    lib0 = os.path.join(out_dir, "lib0.c")
    if patch:
        text = open(lib0).read()
        new = patch(text)
        assert new != text, "the patch changed nothing"
        open(lib0, "w").write(new)
    inc = os.path.join(ROOT, "include")
    obj = os.path.join(out_dir, "lib0.o")
    run(MODULE_CC, "-O2", "-std=c99", "-fPIC", "-fvisibility=hidden", "-fno-stack-protector", f"-I{inc}",
        f"-I{out_dir}", "-c", lib0, "-o", obj)
    asm = os.path.join(out_dir, "weights_embed.S")
    with open(asm, "w") as f:
        f.write("\t.section .rodata.weights,\"a\",@progbits\n\t.balign 4096\n"
                "\t.globl _binary_weights_bin_start\n\t.type _binary_weights_bin_start, @object\n"
                f"_binary_weights_bin_start:\n\t.incbin \"{os.path.join(out_dir, 'weights.bin')}\"\n"
                "\t.size _binary_weights_bin_start, . - _binary_weights_bin_start\n"
                "\t.globl _binary_weights_bin_end\n_binary_weights_bin_end:\n"
                "\t.section .rodata,\"a\",@progbits\n\t.balign 8\n"
                "\t.globl _binary_weights_bin_size\n\t.type _binary_weights_bin_size, @object\n"
                "\t.size _binary_weights_bin_size, 8\n_binary_weights_bin_size:\n"
                "\t.quad _binary_weights_bin_end - _binary_weights_bin_start\n"
                "\t.section .note.GNU-stack,\"\",@progbits\n")
    wobj = os.path.join(out_dir, "weights_embed.o")
    run(MODULE_CC, "-c", asm, "-o", wobj)
    ld = os.path.join(out_dir, "module.ld")
    with open(ld, "w") as f:
        f.write("SECTIONS { .rodata.weights : { KEEP(*(.rodata.weights)) } } INSERT AFTER .rodata;\n")
    out = os.path.join(out_dir, "lib0.out")
    run(MODULE_CC, "-shared", "-nostdlib", "-Wl,-Bsymbolic", "-Wl,-z,noexecstack", "-Wl,-soname,lib0.out",
        f"-Wl,-T,{ld}", "-o", out, obj, wobj)
    return out


def inject_into_entry(code):
    """A patch for build_module_like_cstatic: code runs first in cg_main_dsp."""
    def patch(text):
        m = re.search(r"int32_t cg_main_dsp\([^)]*\)\s*\{\n", text)
        assert m, "no cg_main_dsp in lib0.c"
        return text[:m.end()] + "  " + code + "\n" + text[m.end():]
    return patch


SEGFAULT = "{ volatile int *volatile bad = (volatile int *)16; *bad = 1; }"
SPIN_FOREVER = "{ volatile unsigned long spin = 0; for (;;) spin++; }"


CPP_SRC = r"""
// The C++ API (client/include/c7x_runtime.h) end to end, built without
// exceptions or RTTI. argv: MODULE INPUT.bin REF.bin [--profile] (REF: every
// output, concatenated). Prints the profile table when asked, then "ok";
// or exits 1 naming what differed.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include "c7x_runtime.h"

#define CHECK(c, ...) do { if (!(c)) { std::fprintf(stderr, "FAIL line %d: ", __LINE__); \
  std::fprintf(stderr, __VA_ARGS__); std::fputc('\n', stderr); std::exit(1); } } while (0)

static std::vector<unsigned char> slurp(const char *p) {
  std::FILE *f = std::fopen(p, "rb");
  CHECK(f, "cannot read %s", p);
  std::vector<unsigned char> b;
  int ch;
  while ((ch = std::fgetc(f)) != EOF) b.push_back((unsigned char)ch);
  std::fclose(f);
  return b;
}

static bool same_as_ref(const std::vector<c7x::OutputTensor> &y, const std::vector<unsigned char> &ref) {
  size_t off = 0;
  for (const c7x::OutputTensor &t : y) {
    if (off + t.nbytes > ref.size() || std::memcmp(t.dl.data, ref.data() + off, t.nbytes)) return false;
    off += t.nbytes;
  }
  return off == ref.size();
}

int main(int argc, char **argv) {
  CHECK(argc >= 4, "usage");
  bool profile = argc > 4 && !std::strcmp(argv[4], "--profile");
  std::vector<unsigned char> x = slurp(argv[2]), ref = slurp(argv[3]);
  c7x::Module m;
  CHECK(m.Run({}, nullptr) == C7X_ERR_INVALID && std::strstr(m.LastError(), "before Load"), "%s", m.LastError());
  CHECK(m.Open() == C7X_OK, "open: %s", m.LastError());
  CHECK(m.Load(argv[1]) == C7X_OK, "load: %s", m.LastError());
  CHECK(m.NumInputs() == 1 && m.NumOutputs() >= 1, "%d inputs %d outputs", m.NumInputs(), m.NumOutputs());
  DLTensor spec = m.InputSpec(0);
  size_t in_n = spec.dtype.bits / 8;
  for (int k = 0; k < spec.ndim; k++) in_n *= (size_t)spec.shape[k];
  CHECK(in_n == x.size() && spec.data == nullptr, "input is %zu bytes, the file %zu", in_n, x.size());

  // 1. An input in our own memory: copied into the staging buffer.
  DLTensor in = spec;
  in.data = x.data();
  std::vector<c7x::OutputTensor> y;
  CHECK(m.Run({in}, &y) == C7X_OK, "run: %s", m.LastError());
  CHECK(same_as_ref(y, ref), "copied input: outputs differ from cstatic run");
  size_t result_size = 0;
  unsigned char *result = (unsigned char *)c7x_client_get_output_buffer(m.Client(), &result_size);
  CHECK((unsigned char *)y[0].dl.data >= result && (unsigned char *)y[0].dl.data < result + result_size,
        "outputs are views of the result buffer");
  CHECK(y[0].dl.shape[0] == m.OutputSpec(0).shape[0] && y[0].dl.strides == nullptr, "output shape");

  // 2. CreateInput: in the staging buffer, passed in place.
  DLTensor zc;
  CHECK(m.CreateInput(0, &zc) == C7X_OK, "create_input: %s", m.LastError());
  std::memcpy(zc.data, x.data(), x.size());
  CHECK(m.Run({zc}, &y, 2) == C7X_OK, "run zero-copy: %s", m.LastError());
  CHECK(same_as_ref(y, ref), "zero-copy input: outputs differ from cstatic run");
  c7x_client_stats st;
  c7x_client_get_stats(m.Client(), &st);
  CHECK(st.inputs_zero_copy == 1 && st.inputs_copied == 1, "stats: %llu zero copy, %llu copied",
        (unsigned long long)st.inputs_zero_copy, (unsigned long long)st.inputs_copied);
  CHECK(m.LastCycles() > 0, "cycles");

  // 3. Refused: wrong dtype, strided, wrong count.
  DLTensor bad = in;
  bad.dtype.bits = 8;
  bad.dtype.code = kDLInt;
  CHECK(m.Run({bad}, &y) == C7X_ERR_TENSOR && std::strstr(m.LastError(), "dtype"), "dtype: %s", m.LastError());
  int64_t strides[6] = {2, 2, 2, 2, 2, 2};
  bad = in;
  bad.strides = strides;
  CHECK(m.Run({bad}, &y) == C7X_ERR_INVALID && std::strstr(m.LastError(), "strided"), "strides: %s", m.LastError());
  CHECK(m.Run({}, &y) == C7X_ERR_TENSOR, "count: %s", m.LastError());

  if (profile) {
    CHECK(m.Run({zc}, &y) == C7X_OK, "run: %s", m.LastError());
    std::string table;
    CHECK(m.ProfileText(&table) == C7X_OK, "profile: %s", m.LastError());
    std::fputs(table.c_str(), stdout);
  }

  // 4. Moved: the new owner runs, the old one holds nothing.
  c7x::Module m2(std::move(m));
  CHECK(!m.IsLoaded() && m.Run({in}, &y) == C7X_ERR_INVALID, "moved-from module still runs");
  CHECK(m2.Run({in}, &y) == C7X_OK && same_as_ref(y, ref), "moved module: %s", m2.LastError());
  m2.Close();
  CHECK(m2.Run({in}, &y) == C7X_ERR_INVALID, "closed module still runs");
  std::puts("ok");
  return 0;
}
"""


def build_cpp_api_test(work, cxx="g++", runtime_lib=RUNTIME_LIB, name="cppapi"):
    """The C++ API test program, built with cxx (C++14, no exceptions, no
    RTTI) against runtime_lib."""
    src = work / f"{name}.cpp"
    src.write_text(CPP_SRC)
    exe = work / name
    run(cxx, "-std=c++14", "-Wall", "-Wextra", "-Werror", "-fno-exceptions", "-fno-rtti",
        f"-I{ROOT}/client/include", f"-I{ROOT}/include", "-o", exe, src, runtime_lib,
        f"-Wl,-rpath,{os.path.dirname(runtime_lib)}")
    return exe
