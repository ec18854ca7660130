"""`cstatic compile --emit=ti-project`: the folder TI's C7000 tools build
lib0.out from. No TI tools here, so these tests check what can be checked
without them (and the folder's README says so):

- dsp_syms.c and lib*.c compile with the host compiler against the
  stand-in headers the folder carries;
- dsp_syms.c defines exactly the firmware emulator's exports, for each
  build option (c7x_fw, c7x_fw_mmalib, c7x_fw_tidl --list-exports): both
  come from cstatic/c7x_exports.def;
- the bytes of weights.asm parse back to weights.bin exactly;
- the --import= list of c7x_dynmod.cmd is the undefined symbols of the
  module built from the same C (nm), and each is in dsp_syms.c under the
  Makefile's firmware options;
- the Makefile's commands (make -n) are the spec's two-stage link.
"""
import os
import re
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from deploy_util import BIN_DIR, CC, CSTATIC, run, small_model

FIRMWARES = {(0, 0): "c7x_fw", (1, 0): "c7x_fw_mmalib", (1, 1): "c7x_fw_tidl"}


def mmalib_model(path):
    """x f32[1,8,8,8] → Conv 8→64 3x3 + Relu → GlobalAveragePool → Flatten →
    Gemm 64→64: a conv and an FC that -mmalib=1 offloads (C_out, K, N
    multiples of 64), QDQ by ORT."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    r = np.random.default_rng(9)
    inits = [numpy_helper.from_array((r.standard_normal((64, 8, 3, 3)) * 0.2).astype(np.float32), "w"),
             numpy_helper.from_array((r.standard_normal(64) * 0.1).astype(np.float32), "b"),
             numpy_helper.from_array((r.standard_normal((64, 64)) * 0.2).astype(np.float32), "wf"),
             numpy_helper.from_array((r.standard_normal(64) * 0.1).astype(np.float32), "bf")]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1)]
    g = helper.make_graph(nodes, "ti_mmalib", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, str(path) + ".float.onnx")

    class Calib(CalibrationDataReader):
        def __init__(self):
            rr = np.random.default_rng(2)
            self.it = iter([{"x": rr.standard_normal((1, 8, 8, 8)).astype(np.float32)} for _ in range(4)])

        def get_next(self):
            return next(self.it, None)

    quantize_static(str(path) + ".float.onnx", str(path), Calib(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, per_channel=True)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("ti_project")
    small_model(d / "small.onnx")
    mmalib_model(d / "mmalib.onnx")
    return d


def emit(work, name, target, model="small"):
    out = work / name
    if not out.exists():
        p = run(CSTATIC, "compile", work / f"{model}.onnx", "-o", out, "-t", target, "--emit=ti-project")
        assert re.search(r"ti-project: .*/ti-project/ \(\d+ imports", p.stdout), p.stdout
    return out


def exports_of(firmware):
    lines = run(os.path.join(BIN_DIR, firmware), "--list-exports").stdout.splitlines()
    assert lines[0].startswith("# c7x_fw")
    return sorted(line.split()[1] for line in lines[1:])


def defined(obj):
    out = run("nm", "--defined-only", obj).stdout.split("\n")
    return sorted(f[2] for f in (l.split() for l in out) if len(f) == 3 and f[1] == "T")


def imports_of(cmd_text):
    return re.findall(r"^--import=(\S+)", cmd_text, re.M)


def makefile_option(text, name):
    return int(re.search(rf"^{name}\s*\?=\s*(\d)", text, re.M).group(1))


@pytest.mark.parametrize("model,target,fw", [("small", "c_static_lib -mcpu=c7x", (0, 0)),
                                             ("mmalib", "c_static_lib -mcpu=c7x -mmalib=1", (1, 0)),
                                             ("small", "c_static_lib -mcpu=c7x -mmalib=1", (1, 1)),
                                             ("small", "c_static_lib -mcpu=c7x -tidl-runtime=1", (1, 1))])
def test_the_folder_builds_what_the_module_needs(work, model, target, fw):
    d = emit(work, model + re.sub(r"\W+", "_", target), target, model)
    proj = d / "ti-project"
    for f in ("Makefile", "c7x_dynmod.cmd", "dsp_syms.c", "weights.asm", "lib0.c", "lib0.h", "README.md",
              "include/cstatic/model.h", "include/cstatic/platform/tidsp_dsp.h",
              "include/cstatic/platform/ti_stub/c7x.h"):
        assert (proj / f).is_file(), f
    assert (d / "lib0.out").is_file()  # the emulator's module of the same C

    # The imports: the module's undefined symbols, nothing more, nothing less.
    cmd = (proj / "c7x_dynmod.cmd").read_text()
    undefined = sorted(set(run("nm", "-D", "--undefined-only", d / "lib0.out").stdout.split()) - {"U"})
    assert imports_of(cmd) == undefined and undefined
    for opt in ("--dynamic=lib", "--relocatable", "--export=cg_main_dsp", "--export=model_desc",
                "--export=_binary_weights_bin_start", "--export=_binary_weights_bin_size"):
        assert re.search(rf"^{re.escape(opt)}$", cmd, re.M), opt
    assert re.search(r"\.rodata\.weights\s*:", cmd)

    # The Makefile's firmware options are what the imports need, and every
    # import is a stub of dsp_syms.c under them (compiled here).
    mk = (proj / "Makefile").read_text()
    assert (makefile_option(mk, "FW_MMALIB"), makefile_option(mk, "FW_TIDL")) == fw
    obj = d / "dsp_syms_default.o"
    run(CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-fno-builtin", f"-DC7X_FW_MMALIB={fw[0]}",
        f"-DC7X_FW_TIDL={fw[1]}", "-c", proj / "dsp_syms.c", "-o", obj)
    missing = set(undefined) - set(defined(obj))
    assert not missing, f"imports dsp_syms.c does not define: {missing}"
    if fw[0] and not fw[1]:
        assert any(name.startswith("mmalib_") for name in undefined)
    if "tidl-runtime" in target:
        assert "tidl_bridge_init_all" in undefined
        assert "st = tidl_bridge_init_all();" in (proj / "lib0.c").read_text()

    # The model's C compiles on the host against the folder's own headers
    # (the stand-in <c7x.h> included).
    for src in sorted(proj.glob("lib*.c")):
        run(CC, "-std=c99", "-Wall", "-Werror", f"-I{proj / 'include'}", f"-I{proj}", "-c", src,
            "-o", d / (src.stem + ".host.o"))

    # weights.asm: its .byte values are weights.bin, then the size word.
    asm = (proj / "weights.asm").read_text()
    assert '\t.sect ".rodata.weights"' in asm
    for sym in ("start", "end", "size"):
        assert f"\t.global _binary_weights_bin_{sym}\n" in asm and f"\n_binary_weights_bin_{sym}:\n" in asm
    body = asm.split("\n_binary_weights_bin_start:\n")[1].split("\n_binary_weights_bin_end:\n")[0]
    data = bytes(int(v, 16) for line in body.splitlines() for v in line.replace("\t.byte ", "").split(","))
    assert data == (d / "weights.bin").read_bytes()
    size = asm.split("\n_binary_weights_bin_size:\n")[1].splitlines()[0].replace("\t.byte ", "").split(",")
    assert int.from_bytes(bytes(int(v, 16) for v in size), "little") == len(data)

    # The two-stage link, as make would run it.
    dry = run("make", "-n", "-C", proj, "CGT=/opt/ti-cgt-c7000").stdout
    assert "/opt/ti-cgt-c7000/bin/cl7x" in dry
    assert re.search(rf"-DC7X_FW_MMALIB={fw[0]} -DC7X_FW_TIDL={fw[1]} -c dsp_syms.c", dry)
    assert re.search(r"-z --dynamic=exe .*dsp_syms\.obj --output_file=dsp_syms\.out", dry)
    assert re.search(r"-z c7x_dynmod\.cmd lib0\.obj .*weights\.obj dsp_syms\.out --output_file=lib0\.out", dry)
    assert "-Iinclude" in dry and "-c weights.asm" in dry

    readme = (proj / "README.md").read_text()
    assert "Not run" in readme and "c7x_compute load" in readme and "c7x_compute infer" in readme


def test_dsp_syms_are_the_firmware_exports(work):
    """One source of truth: for each firmware build option, the stubs of
    dsp_syms.c are exactly what that firmware emulator exports."""
    proj = emit(work, "plain", "c_static_lib -mcpu=c7x") / "ti-project"
    for (mmalib, tidl), firmware in FIRMWARES.items():
        obj = work / f"dsp_syms_{mmalib}{tidl}.o"
        run(CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-fno-builtin", f"-DC7X_FW_MMALIB={mmalib}",
            f"-DC7X_FW_TIDL={tidl}", "-c", proj / "dsp_syms.c", "-o", obj)
        stubs = sorted(set(defined(obj)) - {"dsp_syms_entry"})
        assert stubs == exports_of(firmware), firmware
    # TIDL without MMALIB is no firmware: refused, as CS_FW_TIDL is.
    p = run(CC, "-std=c99", "-fno-builtin", "-DC7X_FW_TIDL=1", "-c", proj / "dsp_syms.c", "-o",
            work / "bad.o", ok=False)
    assert p.returncode != 0 and "C7X_FW_TIDL needs C7X_FW_MMALIB" in p.stderr


def test_make_without_the_tools_says_what_is_missing(work):
    proj = emit(work, "plain", "c_static_lib -mcpu=c7x") / "ti-project"
    env = dict(os.environ)
    env.pop("TI_CGT_C7000_PATH", None)
    p = subprocess.run(["make", "-C", str(proj), "CGT=/nonexistent/cgt"], capture_output=True, text=True, env=env)
    assert p.returncode != 0 and "cl7x not found at '/nonexistent/cgt/bin/cl7x'" in p.stderr


def test_ti_project_needs_the_c7x_target_and_weights_bin(work):
    p = run(CSTATIC, "compile", work / "small.onnx", "-o", work / "nope", "--emit=ti-project", ok=False)
    assert p.returncode == 2 and "--emit=ti-project builds a C7x firmware module" in p.stderr
    p = run(CSTATIC, "compile", work / "small.onnx", "-o", work / "nope", "-t", "c_static_lib -mcpu=c7x",
            "--emit=ti-project", "--weights=c", ok=False)
    assert p.returncode == 2 and "does not go with --weights=c" in p.stderr
    assert not (work / "nope").exists()
