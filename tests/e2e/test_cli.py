"""The `cstatic` command line: help texts, errors, atomic output, `run`.

Errors must be one line on stderr that names the thing (file, input index
and name, expected vs got) with a non-zero exit; usage errors exit 2.

The tests that compile and run a model need the whole pipeline (frontend,
passes, codegen, runtime). They do not skip: a missing stage is a failure.
The model is a tiny QDQ convolution built with onnx.helper.
"""
import json
import os
import subprocess

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from conftest import ort_ref
from cstatic_cli import ROOT, cstatic



def one_line_error(p, *needles, code=1):
    """A failed command: exit code, a single stderr line containing needles."""
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("cstatic: error: "), lines[0]
    for n in needles:
        assert str(n) in lines[0], (n, lines[0])
    return lines[0]


# ---- the model --------------------------------------------------------------

def qdq_conv_model(path):
    """x f32[1,2,6,6] → Q/DQ → Conv 3x3 (int8 weights, int32 bias) → Relu
    → Q/DQ → y f32[1,4,6,6]."""
    r = np.random.default_rng(7)
    w = r.integers(-60, 60, size=(4, 2, 3, 3)).astype(np.int8)
    w_scale = np.float32(0.02)
    x_scale, x_zp = np.float32(0.05), np.int8(3)
    bias = r.integers(-200, 200, size=4).astype(np.int32)
    y_scale, y_zp = np.float32(0.04), np.int8(-128)
    inits = [
        numpy_helper.from_array(np.array(x_scale), "x_scale"),
        numpy_helper.from_array(np.array(x_zp), "x_zp"),
        numpy_helper.from_array(w, "w_q"),
        numpy_helper.from_array(np.array(w_scale), "w_scale"),
        numpy_helper.from_array(np.array(np.int8(0)), "w_zp"),
        numpy_helper.from_array(bias, "b_q"),
        numpy_helper.from_array(np.array(np.float32(x_scale * w_scale)), "b_scale"),
        numpy_helper.from_array(np.array(np.int32(0)), "b_zp"),
        numpy_helper.from_array(np.array(y_scale), "y_scale"),
        numpy_helper.from_array(np.array(y_zp), "y_zp"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"], name="x_q"),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zp"], ["xd"], name="x_dq"),
        helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zp"], ["wd"], name="w_dq"),
        helper.make_node("DequantizeLinear", ["b_q", "b_scale", "b_zp"], ["bd"], name="b_dq"),
        helper.make_node("Conv", ["xd", "wd", "bd"], ["c"], name="conv", pads=[1, 1, 1, 1],
                         kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("QuantizeLinear", ["r", "y_scale", "y_zp"], ["yq"], name="y_q"),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zp"], ["y"], name="y_dq"),
    ]
    g = helper.make_graph(nodes, "tiny_qdq_conv",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 6, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return path


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    return qdq_conv_model(tmp_path_factory.mktemp("model") / "tiny.onnx")


@pytest.fixture(scope="module")
def compiled(model, tmp_path_factory):
    out = tmp_path_factory.mktemp("compiled") / "out"
    cstatic("compile", model, "-o", out, "-q")
    return out


def ort_run(model, x):
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    for key, value in ort_ref.exact_int8_config(str(model)).items():
        so.add_session_config_entry(key, value)
    return ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]


def x_input(n=1, seed=0):
    return np.random.default_rng(seed).standard_normal((n, 2, 6, 6)).astype(np.float32)


# ---- help and usage ----------------------------------------------------------

def test_top_level_help_lists_the_commands():
    p = cstatic("--help")
    for cmd in ("compile", "run", "inspect"):
        assert cmd in p.stdout
    p = cstatic(ok=False)
    assert p.returncode == 2 and "usage: cstatic" in p.stderr


@pytest.mark.parametrize("cmd", ["compile", "run", "inspect"])
def test_each_command_has_help(cmd):
    p = cstatic(cmd, "--help")
    assert p.stdout.startswith(f"usage: cstatic {cmd}")
    assert p.stderr == ""


def test_unknown_command_and_option_are_usage_errors():
    one_line_error(cstatic("frobnicate", ok=False), "frobnicate", code=2)
    one_line_error(cstatic("compile", "m.onnx", "-o", "d", "--bogus", ok=False), "--bogus", code=2)
    one_line_error(cstatic("run", "d", "--repeat", "0", ok=False), "--repeat", code=2)
    one_line_error(cstatic("compile", "m.onnx", ok=False), "-o DIR", code=2)
    one_line_error(cstatic("compile", "m.onnx", "-o", "d", "--weights=zip", ok=False), "--weights", code=2)


# ---- compile ------------------------------------------------------------------

def test_compile_errors_name_the_file_and_the_target_attribute(tmp_path, model):
    missing = tmp_path / "nope.onnx"
    one_line_error(cstatic("compile", missing, "-o", tmp_path / "o", ok=False), "nope.onnx")
    one_line_error(cstatic("compile", model, "-o", tmp_path / "o", "-t", "c_static_lib -mcpu=z80", ok=False),
                   "mcpu")
    assert not (tmp_path / "o").exists()


def test_compile_summary_reports_arena_against_the_lower_bound(tmp_path, model):
    p = cstatic("compile", model, "-o", tmp_path / "o")
    line = [l for l in p.stdout.splitlines() if "arena:" in l]
    assert len(line) == 1
    m = json.loads((tmp_path / "o" / "manifest.json").read_text())
    assert f"arena: {m['arena_bytes']} bytes (live-bytes lower bound {m['live_bytes_lower_bound']}, ×" in line[0]
    assert " in " in p.stdout.splitlines()[0]  # compile time
    assert cstatic("compile", model, "-o", tmp_path / "q", "-q").stdout == ""


def test_manifest_describes_both_entries_and_every_layer(compiled):
    m = json.loads((compiled / "manifest.json").read_text())
    assert m["target"].startswith("c_static_lib")
    assert m["model"].endswith("tiny.onnx")
    x = m["model_run"]["inputs"][0]
    assert (x["name"], x["dtype"], x["shape"]) == ("x", "float32", [1, 2, 6, 6])
    raw = m["cg_main"]["inputs"][0]
    assert raw["dtype"] == "int8" and raw["quant"]["zero_point"] == 3
    assert abs(raw["quant"]["scale"] - 0.05) < 1e-9
    assert m["cg_main"]["outputs"][0]["dtype"] == "int8"
    assert m["arena_bytes"] >= m["live_bytes_lower_bound"] > 0
    # Within 10% of the bound, plus one 64-byte alignment pad (this model's
    # tensors are tiny, so padding is most of the difference).
    assert m["arena_bytes"] <= 1.10 * m["live_bytes_lower_bound"] + m["arena_align"]
    assert m["weights_bytes"] == (compiled / "weights.bin").stat().st_size
    conv = [l for l in m["layers"] if l["kernel"] == "tidsp_conv2d_i8"]
    assert len(conv) == 1 and conv[0]["macs"] == 4 * 6 * 6 * 2 * 9
    assert "conv" in conv[0]["onnx_nodes"]
    assert m["totals"]["macs"] == conv[0]["macs"]
    header = (compiled / "lib0.h").read_text()
    assert f"#define MODEL_ARENA_SIZE {m['arena_bytes']}u" in header


def test_failed_compile_creates_no_directory(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not a protobuf")
    out = tmp_path / "out"
    one_line_error(cstatic("compile", bad, "-o", out, ok=False), "bad.onnx")
    assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == ["bad.onnx"]  # no temporary left behind


def test_failed_compile_keeps_an_existing_directory(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage")
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("previous output")
    cstatic("compile", bad, "-o", out, ok=False)
    assert (out / "keep.txt").read_text() == "previous output"
    assert sorted(os.listdir(tmp_path)) == ["bad.onnx", "out"]


def test_successful_compile_replaces_an_existing_directory(tmp_path, model):
    out = tmp_path / "out"
    out.mkdir()
    (out / "stale.txt").write_text("old")
    cstatic("compile", model, "-o", str(out) + "/", "-q")
    assert not (out / "stale.txt").exists()
    assert {"lib0.c", "lib0.h", "weights.bin", "manifest.json"} <= set(os.listdir(out))
    assert sorted(os.listdir(tmp_path)) == ["out"]


def test_output_path_that_is_a_file_is_an_error(tmp_path, model):
    f = tmp_path / "file"
    f.write_text("x")
    one_line_error(cstatic("compile", model, "-o", f, ok=False), str(f), "not a directory")
    assert f.read_text() == "x"


def test_inspect_summarizes_the_model(model):
    p = cstatic("inspect", model)
    assert "Conv" in p.stdout
    one_line_error(cstatic("inspect", "/nonexistent.onnx", ok=False), "/nonexistent.onnx")


# ---- run ----------------------------------------------------------------------

def test_run_matches_onnx_runtime(compiled, model, tmp_path):
    x = x_input()
    np.save(tmp_path / "x.npy", x)
    cstatic("run", compiled, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    y = np.load(tmp_path / "y.npy")
    want = ort_run(model, x)
    assert y.dtype == np.float32 and y.shape == want.shape
    np.testing.assert_array_equal(y, want)  # -requant=float is ORT-exact


def test_run_reuses_the_cached_build(compiled, tmp_path):
    np.save(tmp_path / "x.npy", x_input())
    args = ("run", compiled, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    cstatic(*args)
    so = compiled / ".build" / "model.so"
    before = so.stat().st_mtime_ns
    cstatic(*args)
    assert so.stat().st_mtime_ns == before


def test_batch_multiple_runs_slices_and_concatenates(compiled, tmp_path):
    x = x_input(3, seed=1)
    np.save(tmp_path / "x3.npy", x)
    cstatic("run", compiled, "--input", tmp_path / "x3.npy", "--output", tmp_path / "y3.npy")
    y3 = np.load(tmp_path / "y3.npy")
    assert y3.shape == (3, 4, 6, 6)
    for i in range(3):
        np.save(tmp_path / "xi.npy", x[i:i + 1])
        cstatic("run", compiled, "--input", tmp_path / "xi.npy", "--output", tmp_path / "yi.npy")
        np.testing.assert_array_equal(np.load(tmp_path / "yi.npy")[0], y3[i])


def test_repeat_prints_the_median_latency(compiled, tmp_path):
    np.save(tmp_path / "x.npy", x_input())
    p = cstatic("run", compiled, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy", "--repeat", "5")
    lines = [l for l in p.stdout.splitlines() if l.startswith("latency_ms: ")]
    assert len(lines) == 1 and float(lines[0].split()[1]) >= 0


def test_wrong_dtype_names_the_input_and_both_dtypes(compiled, tmp_path):
    np.save(tmp_path / "x.npy", x_input().astype(np.float64))
    p = cstatic("run", compiled, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy", ok=False)
    one_line_error(p, "input 0", "'x'", "float32", "float64")
    assert not (tmp_path / "y.npy").exists()


def test_wrong_shape_names_the_input_and_both_shapes(compiled, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((1, 2, 6, 7), np.float32))
    p = cstatic("run", compiled, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy", ok=False)
    one_line_error(p, "input 0", "'x'", "(1, 2, 6, 6)", "(1, 2, 6, 7)")
    np.save(tmp_path / "x.npy", np.zeros((2, 2, 6, 6, 1), np.float32))
    one_line_error(cstatic("run", compiled, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy",
                           ok=False), "input 0")


def test_wrong_number_of_inputs_or_outputs_is_an_error(compiled, tmp_path):
    np.save(tmp_path / "x.npy", x_input())
    x = tmp_path / "x.npy"
    one_line_error(cstatic("run", compiled, "--input", x, ok=False), "1 output", "got 0")
    one_line_error(cstatic("run", compiled, "--input", x, "--output", tmp_path / "a.npy", "--output",
                           tmp_path / "b.npy", ok=False), "1 output", "got 2")
    one_line_error(cstatic("run", compiled, "--input", x, "--input", x, "--output", tmp_path / "a.npy",
                           ok=False), "1 input", "got 2")


def _npy_header(descr, shape, fortran=False, version=1):
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)
    pre = 10 if version == 1 else 12
    pad = (64 - (pre + len(d) + 1) % 64) % 64
    d = d + " " * pad + "\n"
    if version == 1:
        return b"\x93NUMPY\x01\x00" + len(d).to_bytes(2, "little") + d.encode()
    return b"\x93NUMPY" + bytes([version, 0]) + len(d).to_bytes(4, "little") + d.encode()


@pytest.mark.parametrize("name,content,needle", [
    ("fortran", _npy_header("<f4", (1, 2, 6, 6), fortran=True) + bytes(288), "Fortran"),
    ("bigendian", _npy_header(">f4", (1, 2, 6, 6)) + bytes(288), "big-endian"),
    ("object", _npy_header("|O", (1, 2, 6, 6)) + bytes(576), "object"),
    ("truncated", _npy_header("<f4", (1, 2, 6, 6)) + bytes(100), "truncated"),
    ("badheader", b"\x93NUMPY\x01\x00\x10\x00{'descr': <f4'}  \n", "header"),
    ("notnpy", b"PK\x03\x04 this is a zip", "not a .npy"),
    ("unknownversion", b"\x93NUMPY\x07\x00" + bytes(60), "version"),
])
def test_bad_npy_files_are_one_line_errors_naming_the_file(compiled, tmp_path, name, content, needle):
    f = tmp_path / f"{name}.npy"
    f.write_bytes(content)
    p = cstatic("run", compiled, "--input", f, "--output", tmp_path / "y.npy", ok=False)
    one_line_error(p, f"{name}.npy", needle)


def test_npy_format_versions_2_and_3_are_read(compiled, model, tmp_path):
    x = x_input(seed=4)
    for v in (2, 3):
        f = tmp_path / f"v{v}.npy"
        f.write_bytes(_npy_header("<f4", (1, 2, 6, 6), version=v) + x.tobytes())
        cstatic("run", compiled, "--input", f, "--output", tmp_path / "y.npy")
        np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), ort_run(model, x))


def test_corrupt_weights_are_refused(model, tmp_path):
    out = tmp_path / "out"
    cstatic("compile", model, "-o", out, "-q")
    w = bytearray((out / "weights.bin").read_bytes())
    w[-1] ^= 0x55
    (out / "weights.bin").write_bytes(bytes(w))
    np.save(tmp_path / "x.npy", x_input())
    p = cstatic("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy", ok=False)
    # the size is right, so it is the checksum that says the bytes changed
    one_line_error(p, "weights.bin", "weights checksum mismatch", "corrupted")
    assert "bytes; the model expects" not in p.stderr
    # a short file is a size problem, and says both sizes
    (out / "weights.bin").write_bytes(bytes(w[:-64]))
    p = cstatic("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy", ok=False)
    one_line_error(p, "weights.bin", f"({len(w) - 64} bytes; the model expects {len(w)})")


def test_weights_compiled_in_give_the_same_result(model, compiled, tmp_path):
    out = tmp_path / "embedded"
    cstatic("compile", model, "-o", out, "--weights=c", "-q")
    assert (out / "weights.c").exists() and not (out / "weights.bin").exists()
    assert "#define MODEL_WEIGHTS_EMBEDDED 1" in (out / "lib0.h").read_text()
    np.save(tmp_path / "x.npy", x_input(seed=2))
    cstatic("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / "a.npy")
    cstatic("run", compiled, "--input", tmp_path / "x.npy", "--output", tmp_path / "b.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), np.load(tmp_path / "b.npy"))


def test_run_on_a_directory_that_is_not_a_model(tmp_path):
    one_line_error(cstatic("run", tmp_path / "missing", "--input", "x.npy", "--output", "y.npy", ok=False),
                   "missing")
    (tmp_path / "empty").mkdir()
    one_line_error(cstatic("run", tmp_path / "empty", "--input", "x.npy", "--output", "y.npy", ok=False),
                   "empty", "lib0.c")


def test_generated_sources_compile_warning_free(compiled, tmp_path):
    for f in ("lib0.c",):
        p = subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic",
                            f"-I{ROOT}/include", f"-I{compiled}", "-c", str(compiled / f), "-o",
                            str(tmp_path / "o.o")], capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
