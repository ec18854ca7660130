"""Messages that say what to do: each names the problem and the change
that fixes it, and the fix it proposes works.

- a float model (no QDQ) compiles with a warning naming the quantizers;
  -allow-float=1 (the target attribute) says float is intended;
- an opset outside the supported range names ONNX's version converter with
  a command that, run as printed, gives a model that compiles;
- a misspelled target attribute gets "did you mean" with the nearest name;
- an MMALIB decline says what would make the layer eligible (pad C_out);
- a weights.bin whose bytes changed is a checksum mismatch (test_cli.py:
  test_corrupt_weights_are_refused, test_python_api.py).
"""
import os
import re
import shlex
import subprocess
import sys
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import cstatic
from cstatic_cli import CSTATIC, ROOT, cstatic as cli

FLOAT_DIGITS = os.path.join(ROOT, "examples", "digits", "digits_float.onnx")
INT8_DIGITS = os.path.join(ROOT, "examples", "digits", "digits_int8.onnx")


def warnings_of(p):
    return [l for l in p.stderr.splitlines() if l.startswith("cstatic: warning: ")]


def test_float_model_warns_and_says_how_to_quantize(tmp_path):
    p = cli("compile", FLOAT_DIGITS, "-o", tmp_path / "f", "-q")
    (w,) = warnings_of(p)
    for needle in ("digits_float.onnx is a float model", "every layer runs in float",
                   "cstatic.quantize_onnx", "cstatic.quantize_pt2e", "-allow-float=1"):
        assert needle in w, (needle, w)
    # asked for: silent, and the same code (the attribute changes no C)
    p = cli("compile", FLOAT_DIGITS, "-o", tmp_path / "g", "-q", "-t", "c_static_lib -allow-float=1")
    assert p.stderr == ""
    assert (tmp_path / "f" / "lib0.c").read_text().replace("\n", "") == \
        (tmp_path / "g" / "lib0.c").read_text().replace(" -allow-float=1", "").replace("\n", "")
    # a quantized model: no warning
    assert warnings_of(cli("compile", INT8_DIGITS, "-o", tmp_path / "q", "-q")) == []


def test_python_compile_turns_the_warning_into_a_compile_warning(tmp_path):
    with pytest.warns(cstatic.CompileWarning, match="float model: every layer runs in float|is a float model"):
        cstatic.compile(FLOAT_DIGITS, out=tmp_path / "a")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cstatic.compile(FLOAT_DIGITS, "c_static_lib -allow-float=1", out=tmp_path / "b")


def relu_model(path, opset):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])
    g = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "g", [x], [y])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 3
    onnx.save(m, path)


def test_opset_outside_the_range_suggests_the_version_converter(tmp_path):
    # every opset from the first one is read (opset 1's Relu is today's)
    relu_model(tmp_path / "old.onnx", 1)
    cli("compile", tmp_path / "old.onnx", "-o", tmp_path / "out0", "-q", "-t", "-allow-float=1")
    relu_model(tmp_path / "new.onnx", 26)
    # from the model's folder, so that the printed command names it as given
    p = subprocess.run([CSTATIC, "compile", "new.onnx", "-o", "out", "-t", "-allow-float=1"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 1
    line = p.stderr.strip()
    lo, hi = map(int, re.search(r"supported: (\d+) to (\d+)", line).groups())
    assert "opset 26 of the default ONNX domain is not supported" in line and lo == 1 and hi < 26
    # too new: the suggestion goes down to the newest supported opset
    assert f"convert_version(onnx.load('new.onnx'), {hi})" in line
    # the command as printed, with the Python that has onnx
    cmd = shlex.split(re.search(r"python (-c \".*\")", line).group(1))
    subprocess.run([sys.executable, *cmd], cwd=tmp_path, check=True)
    converted = tmp_path / f"model_opset{hi}.onnx"
    assert onnx.load(converted).opset_import[0].version == hi
    cli("compile", converted, "-o", tmp_path / "out", "-q", "-t", "-allow-float=1")


@pytest.mark.parametrize("typo, meant", [("-mcpus=c7x", "-mcpu=c7x"), ("-kernel=scalar", "-kernels=scalar"),
                                         ("-profile=1", "-profile-layers=1"),
                                         ("-allowfloat=1", "-allow-float=1")])
def test_misspelled_attribute_gets_did_you_mean(tmp_path, typo, meant):
    p = cli("compile", INT8_DIGITS, "-o", tmp_path / "o", "-t", f"c_static_lib {typo}", ok=False)
    assert p.returncode == 1 and len(p.stderr.strip().splitlines()) == 1
    assert f"did you mean {meant}?" in p.stderr, p.stderr
    # the suggestion compiles
    cli("compile", INT8_DIGITS, "-o", tmp_path / "o", "-q", "-t", f"c_static_lib {meant}")


def test_mmalib_decline_says_what_makes_the_layer_eligible(tmp_path):
    from test_python_api import small_qdq_conv
    # C_out 2: channel padding does not pay (the compiler pads C_out 120
    # itself), so the rule is printed, with the tile of the kernel that
    # would run the layer: 32 for the default exact path's int16 kernel,
    # 64 for the int8 kernel (-mmalib-exact=none)
    import json
    model = small_qdq_conv(tmp_path / "m", preset="c7x", c_out=2)
    for exact, tile in (("", 32), (" -mmalib-exact=none", 64)):
        p = cli("compile", model, "-o", tmp_path / "o", "-t", "c_static_lib -mcpu=c7x -mmalib=1" + exact)
        assert f"C_out % {tile} != 0 (C_out=2): pad it to {tile} with zero filters to offload" in p.stdout, p.stdout
        reasons = [e.get("declined", "") for e in
                   json.loads((tmp_path / "o" / "manifest.json").read_text())["offload"]["layers"]]
        assert any(f"pad it to {tile}" in r for r in reasons), reasons
