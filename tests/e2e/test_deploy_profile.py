"""Per-layer profiling through the firmware: a ResNet-18 module compiled
with -profile-layers=1 reports, for its last inference, one row per layer
(layer: its ONNX node, PyTorch module and output tensor; kernel, MACs,
C7x cycles from the time-stamp counter, time) —
through `c7x_compute infer --profile [--profile-csv F]`, `c7x_compute
profile`, C7xVirtualMachine.profile() and c7x::Module::ProfileText(), all
in the table `cstatic run --profile` prints (one formatter,
runtime/profile/report.c). No timing is asserted, only that every row is
there, measured, and consistent.
"""
import csv
import io
import json
import re

import numpy as np
import pytest

from deploy_util import CSTATIC, Firmware, build_cpp_api_test, compile_small_module, run

HEADER = ["#", "layer", "module", "output", "kernel", "MACs", "cycles", "time_ms", "share", "GMAC/s"]
CSV_HEADER = ["index", "layer", "module", "output", "kernel", "macs", "cycles", "time_ms", "share", "gmac_per_s"]


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("deploy_profile")


@pytest.fixture(scope="module")
def firmware(work):
    fw = Firmware(work)
    yield fw
    fw.stop()


def expected_rows(d):
    """Kernel and MACs of every profiled row, from the manifest: the input
    conversion, every non-elided layer, the output one."""
    man = json.loads((d / "manifest.json").read_text())
    layers = [(l["kernel"], l.get("macs", 0)) for l in man["layers"] if not l["elided"]]
    return [("tidsp_quantize", 0)] + layers + [("tidsp_dequantize", 0)]


def expected_names(d):
    """(ONNX node, PyTorch module or "-", output) of the profiled rows
    between the boundary conversions: the manifest's layers."""
    man = json.loads((d / "manifest.json").read_text())
    short = {"int8": "i8", "uint8": "u8", "float32": "f32", "int32": "i32"}
    out = lambda t: short[t["dtype"]] + "[" + ",".join(map(str, t["shape"])) + "]"
    return [(l["name"], l["module"] or "-", out(l["output"])) for l in man["layers"] if not l["elided"]]


def table_rows(text, n):
    """The table's header and its n layer rows (split on whitespace)."""
    lines = [l for l in text.splitlines() if l.strip()]
    at = next(i for i, l in enumerate(lines) if l.split()[:2] == ["#", "layer"])
    return lines[at].split(), [l.split() for l in lines[at + 1:at + 1 + n]], lines[at + 1 + n]


@pytest.mark.parametrize("variant", ["pt2e"])
@pytest.mark.parametrize("model", ["resnet18"])
def test_resnet18_profile_through_the_firmware(model, variant, model_suite, firmware, work):
    from cstatic.c7x import C7xVirtualMachine
    d = work / "resnet18_prof"
    run(CSTATIC, "compile", model_suite.model(model, variant), "-o", d, "-t",
        "c_static_lib -mcpu=c7x -profile-layers=1", "--emit=module", "-q")
    assert "TIDSP_PROFILE_NOW()" in (d / "lib0.c").read_text()  # the C7x time-stamp counter
    want = expected_rows(d)
    names = expected_names(d)
    n = len(want)
    # PT2E: torch.onnx recorded each node's module; the first block's first conv
    assert ("node_conv2d_1", "layer1.0.conv1", "i8[1,64,56,56]") in names, names
    assert n > 20 and sum(1 for k, _ in want if k == "tidsp_conv2d_i8") == 20  # ResNet-18's convolutions
    x = np.ascontiguousarray(np.load(model_suite.inputs(model))[:1])
    np.save(d / "x.npy", x)
    x.tofile(d / "x.bin")
    host = run(CSTATIC, "run", d, "--input", d / "x.npy", "--output", d / "ref.npy", "--profile").stdout
    ref = np.load(d / "ref.npy")

    # c7x_compute infer --profile: the outputs of cstatic run, then the table.
    h = firmware.load(d / "lib0.out")
    out = firmware.compute("infer", h, 0, "-i", d / "x.bin", "-o", d / "y.bin", "--repeat", "2", "--profile",
                           "--profile-csv", d / "layers.csv").stdout
    assert (d / "y.bin").read_bytes() == ref.tobytes(), "profiling changed the outputs"
    header, rows, total = table_rows(out, n)
    assert header == HEADER
    assert table_rows(host, n)[0] == HEADER, "cstatic run --profile prints another table"
    assert len(rows) == n
    # the layers named as the host names them: ONNX node, module, output
    assert [tuple(f[1:4]) for f in rows[1:-1]] == names
    assert [f[1:4] for f in rows] == [f[1:4] for f in table_rows(host, n)[1]]
    for i, (f, (kernel, macs)) in enumerate(zip(rows, want)):
        assert f[0] == str(i) and f[4] == kernel and int(f[5]) == macs, f
        cycles, ms = int(f[6]), float(f[7])
        assert cycles > 0, f"layer {i} ({kernel}) was not measured: {f}"
        # the C7x's 1 GHz; the table prints ms to 4 decimals, so half a unit of the last digit (plus the
        # double rounding of a value that lands on the half, e.g. 650 cycles -> 0.0006)
        assert abs(ms - cycles * 1e-6) <= 5e-5 + 1e-12, f
    m = re.match(rf"total: {n} layers, {sum(m for _, m in want)} MACs, ([0-9.]+) ms in layers, ([0-9.]+) ms end to end",
                 " ".join(total.split()))
    assert m, total
    assert 0 < float(m.group(1)) <= float(m.group(2)) * 1.001 + 1e-3, total

    # The CSV: the same rows, cycles and all.
    table = list(csv.reader(io.StringIO((d / "layers.csv").read_text())))
    assert table[0] == CSV_HEADER
    assert [(r[1], r[2] or "-", r[3], r[4], int(r[5]), int(r[6])) for r in table[1:]] == \
        [(f[1], f[2], f[3], f[4], int(f[5]), int(f[6])) for f in rows]

    # c7x_compute profile: the same last inference.
    again = firmware.compute("profile", h).stdout
    assert table_rows(again, n)[1] == rows

    # Python and C++: the same rows from the same formatter.
    with C7xVirtualMachine(d / "lib0.out", socket=firmware.sock) as vm:
        assert vm["main"](x).tobytes() == ref.tobytes()
        p = vm.profile()
        assert p.runs == 1 and p.clock_hz == 10**9 and p.infer_cycles > 0
        assert [(l.kernel, l.macs) for l in p.layers] == want
        assert [(l.name, l.module or "-", l.output) for l in p.layers[1:-1]] == names
        assert all(l.cycles > 0 and abs(l.ms - l.cycles * 1e-6) < 1e-9 for l in p.layers)
        text = str(p)
        assert table_rows(text, n)[0] == HEADER
        assert [r[4] for r in table_rows(text, n)[1]] == [k for k, _ in want]
        assert [tuple(r[1:4]) for r in table_rows(text, n)[1][1:-1]] == names
        assert p.csv().splitlines()[0] == ",".join(CSV_HEADER)
    cpp = build_cpp_api_test(work)
    ref.tofile(d / "ref.bin")
    out = run(cpp, d / "lib0.out", d / "x.bin", d / "ref.bin", "--profile", env=firmware.env).stdout
    assert out.endswith("ok\n")
    assert [r[4] for r in table_rows(out, n)[1]] == [k for k, _ in want]
    assert [tuple(r[1:4]) for r in table_rows(out, n)[1][1:-1]] == names
    firmware.compute("unload", h)


def test_profile_of_a_module_without_profiling_says_how(firmware, work):
    """A module compiled without -profile-layers=1: PROFILE is refused
    naming the attribute, and `infer --profile` still writes the outputs."""
    d = compile_small_module(work, "plain")
    x = np.random.default_rng(3).standard_normal((1, 3, 10, 10)).astype(np.float32)
    x.tofile(d / "x.bin")
    h = firmware.load(d / "lib0.out")
    p = firmware.compute("profile", h, ok=False)
    assert p.returncode == 1 and "-profile-layers=1" in p.stderr and len(p.stderr.strip().splitlines()) == 1
    p = firmware.compute("infer", h, 0, "-i", d / "x.bin", "-o", d / "y.bin", "--profile", ok=False)
    assert p.returncode == 1 and "-profile-layers=1" in p.stderr and (d / "y.bin").stat().st_size == 16
    firmware.compute("unload", h)
    # A profiled module that has not run yet has nothing to show.
    dp = work / "small_prof"
    run(CSTATIC, "compile", work / "small.onnx", "-o", dp, "-t", "c_static_lib -mcpu=c7x -profile-layers=1",
        "--emit=module", "-q")
    h = firmware.load(dp / "lib0.out")
    p = firmware.compute("profile", h, ok=False)
    assert p.returncode == 1 and "has not run an inference yet" in p.stderr
    firmware.compute("unload", h)
