"""The microcontroller preset (-mcpu=cortex-m) cross-built for Cortex-M7
and Cortex-M0 with arm-none-eabi-gcc and newlib (Debian's gcc-arm-none-eabi,
libnewlib-arm-none-eabi; the Makefile installs them).

`cstatic compile --emit=runtime --weights=c` puts the model and exactly
the runtime files it calls into in one directory; examples/mcu/main.c
around it builds with nothing else. The test builds the preset and the
default target that way, prints text/data/bss (`pytest -s` shows them),
and checks:
- the preset's text without the weights is at most 0.6x the default's;
- the preset links no dispatch table, no getenv, no x86 rows, no clock;
  with -profile-layers=1 it links the clock, and host_clock.c compiles
  with newlib (no CLOCK_MONOTONIC there);
- every runtime file it was given is used: each defines a function the
  linked program keeps (--gc-sections drops what is not called).
"""
import json
import os
import shutil
import subprocess

import pytest

from cstatic_cli import ROOT, cstatic

DIGITS = os.path.join(ROOT, "examples", "digits", "digits_int8.onnx")
MAIN = os.path.join(ROOT, "examples", "mcu", "main.c")
CC = "arm-none-eabi-gcc"
CORES = {
    "cortex-m7": ["-mcpu=cortex-m7", "-mthumb", "-mfpu=fpv5-sp-d16", "-mfloat-abi=hard"],
    "cortex-m0": ["-mcpu=cortex-m0", "-mthumb", "-mfloat-abi=soft"],
}
PRESET, DEFAULT = "c_static_lib -mcpu=cortex-m", "c_static_lib"


@pytest.fixture(scope="module")
def toolchain():
    if not shutil.which(CC):
        pytest.fail(f"{CC} not found: `make test` installs gcc-arm-none-eabi and libnewlib-arm-none-eabi")
    return CC


def compile_standalone(out, target):
    cstatic("compile", DIGITS, "-o", out, "-q", "-t", target, "--weights=c", "--emit=runtime")
    return json.loads((out / "manifest.json").read_text())


def runtime_c_files(out):
    return sorted(str(p) for p in (out / "runtime").rglob("*.c"))


def cross_build(out, core, elf):
    """examples/mcu/main.c + DIR's C, nothing else."""
    cmd = [CC, *CORES[core], "-std=c11", "-Os", "-ffunction-sections", "-fdata-sections", "-Wall", "-Werror",
           f"-I{out}", f"-I{out / 'include'}", MAIN, *sorted(str(p) for p in out.glob("*.c")),
           *runtime_c_files(out), "-Wl,--gc-sections", "--specs=nano.specs", "--specs=nosys.specs", "-lm",
           "-o", str(elf)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    size = subprocess.run(["arm-none-eabi-size", str(elf)], capture_output=True, text=True, check=True)
    text, data, bss = map(int, size.stdout.splitlines()[1].split()[:3])
    return {"text": text, "data": data, "bss": bss}


def symbols(elf):
    out = subprocess.run(["arm-none-eabi-nm", "-S", str(elf)], capture_output=True, text=True, check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            syms[parts[3]] = int(parts[1], 16)
    return syms


@pytest.mark.parametrize("core", sorted(CORES))
def test_preset_is_small_and_links_only_what_it_calls(toolchain, tmp_path, core):
    sizes = {}
    for name, target in (("preset", PRESET), ("default", DEFAULT)):
        out = tmp_path / name
        man = compile_standalone(out, target)
        # the directory holds exactly the manifest's runtime files
        copied = sorted(str(p.relative_to(out)) for p in (out / "runtime").rglob("*") if p.is_file())
        assert copied == sorted(man["runtime_sources"])
        elf = tmp_path / f"{name}.elf"
        s = cross_build(out, core, elf)
        syms = symbols(elf)
        s["weights"] = syms["model_weights"]
        s["text_without_weights"] = s["text"] - s["weights"]
        sizes[name] = (s, syms, out)
    (pre, pre_syms, pre_out), (dflt, dflt_syms, _) = sizes["preset"], sizes["default"]
    ratio = pre["text_without_weights"] / dflt["text_without_weights"]
    print(f"\n{core} digits_int8 (arm-none-eabi-gcc -Os, newlib-nano):")
    for name, (s, _, _) in sizes.items():
        print(f"  {name:8s} text {s['text']:6d}  data {s['data']:4d}  bss {s['bss']:5d}  "
              f"weights {s['weights']:5d}  text without weights {s['text_without_weights']:6d}")
    print(f"  preset / default text without weights: {ratio:.3f}")
    assert ratio <= 0.6, (core, pre, dflt)
    # scalar kernels called by name: no dispatch table, no getenv, no clock
    for sym in ("tidsp_kernel_variants", "getenv", "tidsp_profile_clock", "tidsp_conv2d_i8"):
        assert sym not in pre_syms, sym
    assert "tidsp_conv2d_i8__ref" in pre_syms
    assert "getenv" in dflt_syms and "tidsp_kernel_variants" in dflt_syms  # what the preset leaves out
    # every runtime .c given to the link is reached from the model's C
    # through the symbols it calls (the files the generated code needs, no more)
    needed = reached_runtime_files(pre_out, core, tmp_path / "objs")
    assert needed == set(runtime_c_files(pre_out)), sorted(set(runtime_c_files(pre_out)) - needed)


def nm_symbols(obj, *flags):
    out = subprocess.run(["arm-none-eabi-nm", *flags, str(obj)], capture_output=True, text=True, check=True).stdout
    return {l.split()[-1] for l in out.splitlines() if l.strip()}


def reached_runtime_files(out, core, objdir):
    """The runtime .c files whose symbols the model's lib*.c call, directly
    or through other runtime files."""
    objdir.mkdir()
    defs, undefs = {}, {}
    for i, c in enumerate(sorted(str(p) for p in out.glob("*.c")) + runtime_c_files(out)):
        obj = objdir / f"{i}.o"
        subprocess.run([CC, *CORES[core], "-std=c11", "-Os", f"-I{out}", f"-I{out / 'include'}", "-c", c,
                        "-o", str(obj)], check=True)
        defs[c], undefs[c] = nm_symbols(obj, "--defined-only", "-g"), nm_symbols(obj, "-u")
    owner = {sym: c for c, ds in defs.items() for sym in ds}
    todo = [c for c in defs if "/runtime/" not in c]
    seen = set(todo)
    while todo:
        for sym in undefs[todo.pop()]:
            c = owner.get(sym)
            if c and c not in seen:
                seen.add(c)
                todo.append(c)
    return {c for c in seen if "/runtime/" in c}


def test_profiled_preset_builds_with_newlib_clock(toolchain, tmp_path):
    out = tmp_path / "prof"
    man = compile_standalone(out, PRESET + " -profile-layers=1")
    assert "runtime/profile/host_clock.c" in man["runtime_sources"]
    syms = symbols(tmp_path / "p.elf") if cross_build(out, "cortex-m7", tmp_path / "p.elf") else {}
    assert "tidsp_profile_clock" in syms and "model_layer_stats" in syms
