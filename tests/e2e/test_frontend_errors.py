"""Malformed and refused models through the CLI: `cstatic inspect FILE` and
`cstatic compile FILE -o DIR`, with the normal and the ASan build.

The contract: a file that is not a usable model gives a non-zero exit (not
a signal), exactly one error line on stderr ("cstatic: error: FILE: …")
that names the file and the problem, no sanitizer report, and `compile`
creates nothing. `inspect` describes any parseable model, including ones the
compiler refuses (it says why on its last line), so only unreadable files
make it fail.

The ASan binary is built by `make asan`; its tests are skipped when it is
absent. The models come from tests/unit/data (make_models.py); malformed
files are made here.
"""
import os
import shutil
import subprocess

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "unit", "data")
BINARIES = {
    "release": os.environ.get("CSTATIC_BIN", os.path.join(ROOT, "build", "bin", "cstatic")),
    "asan": os.environ.get("CSTATIC_ASAN_BIN", os.path.join(ROOT, "build-asan", "bin", "cstatic")),
}
CRASH_MARKERS = ("Traceback", "Sanitizer", "runtime error:", "Segmentation fault",
                 "core dumped", "Aborted")


@pytest.fixture(params=sorted(BINARIES))
def cstatic(request):
    exe = BINARIES[request.param]
    if not os.path.exists(exe):
        if request.param == "asan":
            pytest.skip(f"{exe} not built (make asan)")
        pytest.fail(f"{exe} not built (make build)")
    return exe


def run(exe, *args):
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
               UBSAN_OPTIONS="print_stacktrace=1")
    return subprocess.run([exe, *map(str, args)], capture_output=True, text=True,
                          errors="replace", timeout=120, env=env)


def error_line(p, path, *needles):
    """A clean failure: exit code > 0, one 'cstatic: error:' line naming
    `path` and each needle; nothing else on stderr but warnings."""
    assert p.returncode > 0, (p.returncode, p.stderr[-3000:])
    for marker in CRASH_MARKERS:
        assert marker not in p.stderr, p.stderr[-3000:]
    lines = [l for l in p.stderr.splitlines() if not l.startswith("warning: ")]
    assert len(lines) == 1, p.stderr
    line = lines[0]
    assert line.startswith("cstatic: error: "), line
    assert str(path) in line, (path, line)
    for n in needles:
        assert n in line, (n, line)
    return line


def compile_fails(exe, path, tmp_path, *needles):
    out = tmp_path / "out"
    before = set(os.listdir(tmp_path))
    p = run(exe, "compile", path, "-o", out)
    line = error_line(p, path, *needles)
    assert not out.exists(), "compile created the output directory"
    assert set(os.listdir(tmp_path)) == before, "compile left files behind"
    return line


# ---- files that are not models: both commands fail --------------------------

def bad_files(tmp_path):
    """(path, expected words) for every kind of unreadable model file."""
    model = open(os.path.join(DATA, "m_conv_qdq.onnx"), "rb").read()
    rng = np.random.default_rng(2024)
    cases = []
    p = tmp_path / "missing.onnx"
    cases.append((p, "No such file"))
    d = tmp_path / "a_directory.onnx"
    d.mkdir()
    cases.append((d, "is a directory"))
    p = tmp_path / "empty.onnx"
    p.write_bytes(b"")
    cases.append((p, "empty file"))
    for n in (1, 100, 5000):
        p = tmp_path / f"random{n}.onnx"
        p.write_bytes(rng.integers(0, 256, n, dtype=np.uint8).tobytes())
        cases.append((p, "not a valid ONNX model"))
    for cut in (len(model) // 3, len(model) // 2, len(model) - 7):
        p = tmp_path / f"truncated{cut}.onnx"
        p.write_bytes(model[:cut])
        cases.append((p, ""))
    return cases


def test_inspect_bad_files(cstatic, tmp_path):
    for path, words in bad_files(tmp_path):
        error_line(run(cstatic, "inspect", path), path, words)


def test_compile_bad_files(cstatic, tmp_path):
    for path, words in bad_files(tmp_path):
        compile_fails(cstatic, path, tmp_path, words)


# ---- parseable models the compiler refuses ----------------------------------

REFUSED = [
    ("m_unsupported.onnx",
     "unsupported ops: LSTM (node 'lstm_1'), Foo [domain com.x] (node 'n7'), Det (node '#3')"),
    ("m_bad_dangling.onnx", "input 'nowhere' is not produced by any node"),
    ("m_bad_cycle.onnx", "cycle through node"),
    ("m_bad_dup_output.onnx", "tensor 'y' is produced by two nodes"),
    ("m_bad_opset.onnx", "opset 26"),
    ("m_bad_out_shape.onnx", "graph output 'y' is declared with shape [1,5]"),
    ("m_bad_float16.onnx", "node 'r1' (Relu): input 'x' has dtype f16, which this op does not take"),
    ("m_bad_double.onnx", "inputs 'x' (f32) and 'w' (f64) must have the same dtype"),
    ("m_bad_reshape_runtime.onnx", "must be a constant"),
    ("m_bad_raw_size.onnx", "raw_data has 10 bytes"),
    ("m_bad_neg_dim.onnx", "dim 0 is -3"),
    ("m_bad_rank.onnx", "rank 9"),
    ("m_bad_conv_group.onnx", "node 'conv_bad_group' (Conv): group 3"),
    ("m_bad_external_abs.onnx", "is an absolute path"),
    ("m_bad_external_escape.onnx", "leaves the model's directory"),
    ("m_bad_external_short.onnx", "too short"),
    ("m_bad_ms_domain.onnx", "[domain com.microsoft]"),
]


@pytest.mark.parametrize("name,words", REFUSED, ids=[r[0] for r in REFUSED])
def test_compile_refused(cstatic, tmp_path, name, words):
    # Copy next to external.bin so relative external data still resolves.
    work = tmp_path / "models"
    work.mkdir()
    shutil.copy(os.path.join(DATA, name), work / name)
    shutil.copy(os.path.join(DATA, "external.bin"), work / "external.bin")
    compile_fails(cstatic, work / name, tmp_path, words)


@pytest.mark.parametrize("name,words", REFUSED, ids=[r[0] for r in REFUSED])
def test_inspect_describes_refused(cstatic, name, words):
    """inspect succeeds and says why the model would not compile."""
    path = os.path.join(DATA, name)
    p = run(cstatic, "inspect", path)
    assert p.returncode == 0, p.stderr
    for marker in CRASH_MARKERS:
        assert marker not in p.stderr, p.stderr
    last = p.stdout.strip().splitlines()[-1]
    assert last.startswith("frontend: refused"), p.stdout
    if last == "frontend: refused (unsupported ops)":
        listed = [l for l in p.stdout.splitlines() if l.startswith("unsupported ops: ")]
        assert len(listed) == 1 and words.split("unsupported ops: ")[-1] in listed[0], p.stdout
    else:
        assert words in last, (words, last)


def test_inspect_good_model(cstatic):
    path = os.path.join(DATA, "m_conv_qdq.onnx")
    p = run(cstatic, "inspect", path)
    assert p.returncode == 0, p.stderr
    assert "opset: 13" in p.stdout
    assert "quantization: QDQ, 2 QuantizeLinear, 5 DequantizeLinear" in p.stdout
    assert "per-axis: yes" in p.stdout
    assert "frontend: ok" in p.stdout
    # The symbolic batch dim is reported once, as a warning.
    warnings = [l for l in p.stderr.splitlines() if l.startswith("warning: ")]
    assert warnings == [f"warning: {path}: input 'input' dim 0 ('N') is symbolic; using 1"], p.stderr
