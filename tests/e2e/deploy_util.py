"""Helpers shared by the deployment tests (test_deploy*.py): starting a
firmware, building modules that misbehave, importing the Python client."""
import os
import re
import shutil
import subprocess
import sys
import time

from cstatic_cli import CSTATIC, ROOT

BIN_DIR = os.path.dirname(CSTATIC)
FW_BIN = os.environ.get("C7X_FW_BIN", os.path.join(BIN_DIR, "c7x_fw"))
COMPUTE_BIN = os.environ.get("C7X_COMPUTE_BIN", os.path.join(BIN_DIR, "c7x_compute"))
RUNTIME_LIB = os.environ.get("C7X_ARM_RUNTIME_LIB",
                             os.path.join(os.path.dirname(BIN_DIR), "lib", "libc7x_arm_runtime.so"))
CC = os.environ.get("CC", "cc")

sys.path.insert(0, os.path.join(ROOT, "python"))
os.environ.setdefault("C7X_ARM_RUNTIME_LIB", RUNTIME_LIB)


def run(*args, env=None, ok=True, timeout=300):
    p = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=timeout, env=env)
    if ok:
        assert p.returncode == 0, f"{' '.join(map(str, args))} failed:\n{p.stdout}\n{p.stderr}"
    return p


class Firmware:
    """c7x_fw (supervised) on a private socket."""

    def __init__(self, work, *extra):
        self.sock = str(work / "fw.sock")
        self.log_path = work / "fw.log"
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen([FW_BIN, "--socket", self.sock, *map(str, extra)],
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
    run(CC, "-O2", "-std=c99", "-fPIC", "-fvisibility=hidden", "-fno-stack-protector", f"-I{inc}",
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
    run(CC, "-c", asm, "-o", wobj)
    ld = os.path.join(out_dir, "module.ld")
    with open(ld, "w") as f:
        f.write("SECTIONS { .rodata.weights : { KEEP(*(.rodata.weights)) } } INSERT AFTER .rodata;\n")
    out = os.path.join(out_dir, "lib0.out")
    run(CC, "-shared", "-nostdlib", "-Wl,-Bsymbolic", "-Wl,-z,noexecstack", "-Wl,-soname,lib0.out",
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
