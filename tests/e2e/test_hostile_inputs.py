"""Files that declare far more memory than they hold (issue 18): tiny ONNX
models with 2–16 GiB initializers (typed fields, external data), a constant
Expand to 8 GiB, a 6 GiB graph input, .npy headers of 8–64 GiB, and sparse
files that really are that large. Each must fail with exit status 1 and one
line naming the tensor or file and the size, in under 100 MB of peak RSS
(measured with wait4 from a small launcher), with the normal and the ASan build — never a signal,
never an allocator report, never gigabytes asked for on the file's word.

The reproducers are tests/fuzz/regress/{onnx,npy}/ (make_reproducers.py);
the sparse files are made here.
"""
import os
import struct
import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as oh

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REGRESS = os.path.join(ROOT, "tests", "fuzz", "regress")
BINARIES = {
    "release": os.environ.get("CSTATIC_BIN", os.path.join(ROOT, "build", "bin", "cstatic")),
    "asan": os.environ.get("CSTATIC_ASAN_BIN", os.path.join(ROOT, "build-asan", "bin", "cstatic")),
}
RSS_LIMIT_KB = 100 * 1024
CRASH_MARKERS = ("Sanitizer", "runtime error:", "Segmentation fault", "core dumped", "Aborted")
GIB = 1 << 30


@pytest.fixture(params=sorted(BINARIES))
def cstatic(request):
    exe = BINARIES[request.param]
    if not os.path.exists(exe):
        if request.param == "asan":
            pytest.skip(f"{exe} not built (make asan)")
        pytest.fail(f"{exe} not built (make build)")
    return exe


# The command runs as the child of a small Python (started with -S) that
# forks it and reports its wait4 rusage: the peak RSS of a child spawned
# from this process directly would include this process's (the whole
# pytest session, torch and all): Linux carries the memory a process held
# before exec into ru_maxrss (vfork: the parent's).
MEASURE = r"""
import os, sys
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def run_measured(exe, *args):
    """Run exe; return (returncode, stderr, its peak RSS in KB)."""
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    p = subprocess.run([sys.executable, "-S", "-c", MEASURE, exe, *map(str, args)], capture_output=True,
                       text=True, errors="replace", env=env)
    assert p.returncode == 0 and p.stdout.strip(), (p.returncode, p.stdout, p.stderr[-3000:])
    rc, rss = map(int, p.stdout.split())
    return rc, p.stderr, rss


def refused(exe, args, *needles):
    rc, err, rss = run_measured(exe, *args)
    assert rc == 1, (rc, err[-3000:])
    for marker in CRASH_MARKERS:
        assert marker not in err, err[-3000:]
    lines = [l for l in err.splitlines() if not l.startswith("warning: ")]
    assert len(lines) == 1 and lines[0].startswith("cstatic: error: "), err
    for n in needles:
        assert n in lines[0], (n, lines[0])
    assert rss < RSS_LIMIT_KB, f"peak RSS {rss} KB for {args}: {lines[0]}"
    return lines[0]


# file → what its one error line must name (the tensor, and the size)
ONNX_CASES = {
    "typed_int64_2gib.onnx": ("'w'", "268435456 elements"),
    "typed_int64_16gib.onnx": ("'w'", "2147483647 elements"),
    "typed_float_8gib.onnx": ("'w'", "2147483647 elements"),
    "typed_int32_8gib.onnx": ("'w'", "2147483647 elements"),
    "external_2gib_missing.onnx": ("'w'", "missing.bin"),
    "external_8gib_short.onnx": ("'w'", "8589934588 bytes"),
    "external_4gib_length_16.onnx": ("'w'", "4294967296 bytes"),
    "external_16gib_offset.onnx": ("'w'", "17179869176 bytes"),
    "expand_8gib.onnx": ("'y'", "8.0 GiB", "Expand", "memory limit"),
    "input_6gib.onnx": ("'x'", "6.0 GiB", "memory limit"),
    # make fuzz: a float Concat axis read as absent, 0 to shape inference
    # and 1 to EliminateQDQMixedMoves, which copied past its maps
    "concat_float_axis.onnx": ("'cat'", "Concat", "attribute 'axis' has type FLOAT"),
}


def test_every_onnx_reproducer_is_listed():
    found = {f for f in os.listdir(os.path.join(REGRESS, "onnx")) if f.endswith(".onnx")}
    assert found == set(ONNX_CASES)


@pytest.mark.parametrize("name", sorted(ONNX_CASES))
def test_onnx_reproducer_fails_cleanly_in_bounded_memory(cstatic, name, tmp_path):
    path = os.path.join(REGRESS, "onnx", name)
    refused(cstatic, ["compile", path, "-o", tmp_path / "out"], path, *ONNX_CASES[name])
    assert not (tmp_path / "out").exists()


NPY_CASES = {
    "f32_8gib_short.npy": ("8.0 GiB", "holds 4 bytes"),
    "i8_64gib_empty.npy": ("64.0 GiB", "holds 0 bytes"),
    "u1_16gib_v2.npy": ("16.0 GiB", "holds 64 bytes"),
    "f32_shape_overflow.npy": ("2^59 elements",),
    "header_longer_than_file.npy": ("header length 65535",),
}


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    """A compiled one-Relu model (float32 [1, 8]) for `cstatic run`."""
    d = tmp_path_factory.mktemp("tiny")
    g = oh.make_graph([oh.make_node("Relu", ["x"], ["y"])], "tiny",
                      [oh.make_tensor_value_info("x", TP.FLOAT, [1, 8])],
                      [oh.make_tensor_value_info("y", TP.FLOAT, [1, 8])])
    onnx.save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]), d / "tiny.onnx")
    subprocess.run([BINARIES["release"], "compile", d / "tiny.onnx", "-o", d / "out", "-q"], check=True)
    x = d / "x.npy"
    np.save(x, np.ones((1, 8), np.float32))
    # Build the host .so once, outside the measured runs.
    subprocess.run([BINARIES["release"], "run", d / "out", "--input", x, "--output", d / "y.npy"], check=True)
    return d / "out"


def test_every_npy_reproducer_is_listed():
    assert set(os.listdir(os.path.join(REGRESS, "npy"))) == set(NPY_CASES)


@pytest.mark.parametrize("name", sorted(NPY_CASES))
def test_npy_reproducer_fails_cleanly_in_bounded_memory(cstatic, tiny_model, name, tmp_path):
    path = os.path.join(REGRESS, "npy", name)
    refused(cstatic, ["run", tiny_model, "--input", path, "--output", tmp_path / "y.npy"], path, *NPY_CASES[name])


def sparse(path, size):
    with open(path, "wb") as f:
        f.truncate(size)


def external_model(d, n_tensors, elems, location="big.bin"):
    """n_tensors float32 initializers of `elems` each, all read from the
    (sparse) external file, all used (Concat)."""
    inits = []
    for i in range(n_tensors):
        t = TP(name=f"w{i}", data_type=TP.FLOAT, dims=[elems], data_location=TP.EXTERNAL)
        for k, v in (("location", location), ("offset", "0"), ("length", str(4 * elems))):
            e = t.external_data.add()
            e.key, e.value = k, v
        inits.append(t)
    nodes = [oh.make_node("Concat", [t.name for t in inits], ["y"], axis=0, name="cat")]
    g = oh.make_graph(nodes, "ext", [], [oh.make_tensor_value_info("y", TP.FLOAT, [n_tensors * elems])], inits)
    path = d / "ext.onnx"
    path.write_bytes(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)]).SerializeToString())
    return path


def test_sparse_external_file_beyond_the_limit(cstatic, tmp_path):
    """The file really holds 6 GiB (sparse): the range check passes, the
    memory limit refuses it before the read."""
    sparse(tmp_path / "big.bin", 6 * GIB)
    model = external_model(tmp_path, 1, 6 * GIB // 4)
    refused(cstatic, ["compile", model, "-o", tmp_path / "out"], "'w0'", "6.0 GiB", "memory limit")


def test_sparse_model_file_beyond_the_limit(cstatic, tmp_path):
    """A model file is read whole: a 6 GiB (sparse) one is refused before
    it is read."""
    model = tmp_path / "huge.onnx"
    sparse(model, 6 * GIB)
    refused(cstatic, ["compile", model, "-o", tmp_path / "out"], str(model), "6.0 GiB", "memory limit")


def test_constants_together_beyond_the_limit(cstatic, tmp_path):
    """Each 40 MiB constant fits a 64 MiB limit; the second one does not fit
    beside the first."""
    sparse(tmp_path / "big.bin", 40 << 20)
    model = external_model(tmp_path, 3, (40 << 20) // 4)
    line = refused(cstatic, ["compile", model, "-o", tmp_path / "out", "--max-memory", "64M"],
                   "'w1'", "40.0 MiB", "already held", "64.0 MiB")
    assert "--max-memory" in line


def test_max_memory_raises_the_limit(tmp_path):
    """The same 6 GiB input compiles with --max-memory 8G: the limit, not a
    hard-coded size, decided."""
    p = subprocess.run([BINARIES["release"], "compile", os.path.join(REGRESS, "onnx", "input_6gib.onnx"),
                        "-o", tmp_path / "out", "-q", "--max-memory", "8G"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr


def test_max_memory_needs_a_size(tmp_path):
    for bad in ("", "0", "-1", "4X", "G", "1e400"):
        p = subprocess.run([BINARIES["release"], "compile", "m.onnx", "-o", tmp_path / "o", f"--max-memory={bad}"],
                           capture_output=True, text=True)
        assert p.returncode == 2 and "--max-memory needs a size" in p.stderr, (bad, p.stderr)


def test_sparse_npy_beyond_the_limit(cstatic, tiny_model, tmp_path):
    """An 8 GiB .npy that is really 8 GiB long (sparse): refused by the
    limit, not allocated."""
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1073741824), }"
    header += b" " * (64 - (10 + len(header) + 1) % 64) + b"\n"
    path = tmp_path / "big.npy"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header)
        f.truncate(10 + len(header) + 8 * GIB)
    refused(cstatic, ["run", tiny_model, "--input", path, "--output", tmp_path / "y.npy"],
            str(path), "8.0 GiB", "memory limit")


def test_run_limit_counts_every_allocation(tiny_model, tmp_path):
    """--max-memory in `run` covers the inputs, weights, arena and outputs:
    an input of 64 KiB of batches does not fit in 32K."""
    x = tmp_path / "x.npy"
    np.save(x, np.ones((2048, 8), np.float32))
    rc, err, _ = run_measured(BINARIES["release"], "run", tiny_model, "--input", x, "--output",
                              tmp_path / "y.npy", "--max-memory", "32K")
    assert rc == 1 and "memory limit" in err, err
    rc, err, _ = run_measured(BINARIES["release"], "run", tiny_model, "--input", x, "--output",
                              tmp_path / "y.npy", "--max-memory", "1M")
    assert rc == 0, err
