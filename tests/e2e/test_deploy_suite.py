"""Every suite model (tests/models/out, made by tests/models/generate.py)
through the firmware emulator — c7x_compute CLI, the C API and the Python
C7xVirtualMachine — gives the bytes of `cstatic run` on the same compiled
directory. Models not generated yet are skipped, saying so.
"""
import os

import numpy as np
import pytest

from deploy_util import CC, CSTATIC, ROOT, RUNTIME_LIB, Firmware, run
from test_deploy_client import CAPI_SRC

MODELS_OUT = os.path.join(ROOT, "tests", "models", "out")
MODELS = ("resnet18", "mobilenetv2", "mobilenetv3s", "shufflenetv2", "googlenet")
VARIANTS = ("pt2e", "ort_s8", "ort_u8")


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("deploy_suite")


@pytest.fixture(scope="module")
def firmware(work):
    fw = Firmware(work)
    yield fw
    fw.stop()


@pytest.fixture(scope="module")
def capi(work):
    src = work / "capi.c"
    src.write_text(CAPI_SRC)
    exe = work / "capi"
    run(CC, "-std=c99", "-Wall", "-Werror", f"-I{ROOT}/client/include", f"-I{ROOT}/fw", "-o", exe, src,
        RUNTIME_LIB, f"-Wl,-rpath,{os.path.dirname(RUNTIME_LIB)}")
    return exe


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("model", MODELS)
def test_suite_model_through_the_firmware(model, variant, firmware, capi, work):
    from cstatic.c7x import C7xVirtualMachine
    onnx_path = os.path.join(MODELS_OUT, f"{model}_{variant}.onnx")
    inputs_path = os.path.join(MODELS_OUT, f"{model}_inputs.npy")
    if not (os.path.exists(onnx_path) and os.path.exists(inputs_path)):
        pytest.skip(f"{model}_{variant} is not in tests/models/out (run tests/models/generate.py)")
    d = work / f"{model}_{variant}"
    run(CSTATIC, "compile", onnx_path, "-o", d, "-t", "c_static_lib -mcpu=c7x", "--emit=module", "-q")
    x = np.ascontiguousarray(np.load(inputs_path)[:1])
    np.save(d / "x.npy", x)
    x.tofile(d / "x.bin")
    run(CSTATIC, "run", d, "--input", d / "x.npy", "--output", d / "ref.npy")
    ref = np.load(d / "ref.npy")
    ref.tofile(d / "ref.bin")

    # CLI: load, infer, unload as separate processes.
    h = firmware.load(d / "lib0.out")
    firmware.compute("infer", h, 0, "-i", d / "x.bin", "-o", d / "y.bin")
    assert (d / "y.bin").read_bytes() == ref.tobytes(), "c7x_compute differs from cstatic run"
    firmware.compute("unload", h)

    # C API (copied input, create_input, refused bad inputs).
    p = run(capi, d / "lib0.out", d / "x.bin", d / "ref.bin", env=firmware.env, ok=False)
    assert p.returncode == 0 and p.stdout == "ok\n", p.stderr

    # Python: copies, and zero copy.
    with C7xVirtualMachine(d / "lib0.out", socket=firmware.sock) as vm:
        assert vm["main"](x).tobytes() == ref.tobytes(), "vm['main'] differs from cstatic run"
        xi = vm.create_input()
        xi[...] = x
        assert vm.run_nocopy(xi).tobytes() == ref.tobytes(), "run_nocopy differs from cstatic run"
        assert vm.stats()["inputs_zero_copy"] == 1
