"""The per-layer error report (issue 13, "find the layer"):
`cstatic compile --outputs NAME,...|all-quantized` keeps intermediate
tensors as extra graph outputs without changing what the model computes,
and python -m cstatic.layer_error (cstatic.layer_error.layer_errors) compares
each quantized layer of cstatic (and -mmalib=1) with the float network and
with ORT's int8.
"""

import io
import json
import os
import subprocess
import sys
from contextlib import redirect_stdout

import numpy as np
import pytest

import cstatic
from conftest import ROOT
from cstatic.layer_error import layer_errors, main as layer_error_main
from cstatic_cli import cstatic as cstatic_cli

DIGITS = os.path.join(ROOT, "examples", "digits")


def _two_convs(path):
    """int8 x [1,64,16,16] -> 1x1 conv -> Q 'mid' -> DQ -> 1x1 conv -> Q 'y':
    the second conv (an MMALIB layer with -mmalib=1) reads 'mid'."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(3)
    inits = {"x_s": np.float32(0.05), "x_zp": np.int8(0), "mid_s": np.float32(0.04), "mid_zp": np.int8(-3),
             "y_s": np.float32(0.03), "y_zp": np.int8(2)}
    nodes = [helper.make_node("DequantizeLinear", ["x", "x_s", "x_zp"], ["x_f"], name="x_dq")]
    src = "x_f"
    for i, out in enumerate(("mid", "y")):
        inits[f"w{i}"] = rng.integers(-127, 128, (64, 64, 1, 1)).astype(np.int8)
        inits[f"w{i}_s"] = np.full(64, 1e-3, np.float32)
        inits[f"w{i}_zp"] = np.zeros(64, np.int8)
        nodes += [helper.make_node("DequantizeLinear", [f"w{i}", f"w{i}_s", f"w{i}_zp"], [f"w{i}_f"], axis=0),
                  helper.make_node("Conv", [src, f"w{i}_f"], [f"c{i}"], name=f"conv{i}", kernel_shape=[1, 1]),
                  helper.make_node("QuantizeLinear", [f"c{i}", f"{out}_s", f"{out}_zp"], [out], name=f"{out}_q")]
        if out == "mid":
            nodes.append(helper.make_node("DequantizeLinear", ["mid", "mid_s", "mid_zp"], ["mid_f"]))
            src = "mid_f"
    g = helper.make_graph(nodes, "two_convs", [helper.make_tensor_value_info("x", TensorProto.INT8, [1, 64, 16, 16])],
                          [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 64, 16, 16])],
                          [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return rng.integers(-128, 128, (1, 64, 16, 16)).astype(np.int8)


@pytest.mark.parametrize("spec,message", [
    ("no_such_tensor", "--outputs: the model has no tensor 'no_such_tensor'"),
    ("mid,", "--outputs: empty tensor name in 'mid,'"),
    ("w0", "--outputs: tensor 'w0' is a constant, not computed by a layer"),
    ("x", "--outputs: tensor 'x' is a graph input, not computed by a layer"),
])
def test_outputs_names_a_bad_tensor(tmp_path, spec, message):
    _two_convs(tmp_path / "m.onnx")
    p = cstatic_cli("compile", str(tmp_path / "m.onnx"), "-o", str(tmp_path / "out"), "--outputs", spec, ok=False)
    assert p.returncode != 0
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], p.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("target", ["c_static_lib", "c_static_lib -mmalib=1 -mcpu=c7x"])
def test_outputs_keep_a_layer_output(tmp_path, target):
    """'mid' as an extra output: the model's own output is unchanged and
    'mid' is the first layer's output; with -mmalib=1 both convs still
    offload and the second reads 'mid' (the caller's unaligned buffer)
    through an aligned copy."""
    x = _two_convs(tmp_path / "m.onnx")
    plain = cstatic.compile(tmp_path / "m.onnx", target, out=tmp_path / "plain")
    both = cstatic.compile(tmp_path / "m.onnx", target, out=tmp_path / "both", outputs=["mid"])
    assert [t.name for t in both.outputs] == ["y", "mid"]
    y, mid = both.run(x)
    assert np.array_equal(y, plain.run(x))
    ref = cstatic.compile(tmp_path / "m.onnx", target, out=tmp_path / "all", outputs="all-quantized")
    assert [t.name for t in ref.outputs] == ["y", "mid"]
    # mid computed alone: a model cut after the first conv
    import onnx
    m = onnx.load(str(tmp_path / "m.onnx"))
    m.graph.output[0].name = "mid"
    onnx.save(m, str(tmp_path / "cut.onnx"))
    assert np.array_equal(mid, cstatic.compile(tmp_path / "cut.onnx", target, out=tmp_path / "cut").run(x))
    if "mmalib" in target:
        entries = json.load(open(tmp_path / "both" / "manifest.json"))["offload"]["layers"]
        assert sum(1 for e in entries if e.get("kernel")) == 2, entries


def test_layer_report_digits(tmp_path):
    """The report on the bundled digits CNN: cstatic equals ORT's int8 on
    every layer, the extra outputs change nothing, SQNR vs float is finite
    and the table lists every quantized layer."""
    x = np.load(os.path.join(DIGITS, "test_x.npy"))[:64]
    model = os.path.join(DIGITS, "digits_int8.onnx")
    r = layer_errors(model, x, targets=("c_static_lib", "c_static_lib -mmalib=1"))
    assert len(r.layers) >= 5
    assert r.model_outputs_unchanged == {"c_static_lib": True, "c_static_lib -mmalib=1": True}
    for layer in r.layers:
        assert layer.equal["c_static_lib"] == 1.0 and layer.max_lsb["c_static_lib"] == 0, layer
        assert layer.db["c_static_lib"] == layer.ort_db and 10 < layer.ort_db < 80, layer
        assert layer.max_lsb["c_static_lib -mmalib=1"] <= 8, layer
    assert r.first_divergence("c_static_lib") is None
    worst = r.worst()
    loss = [l.db["c_static_lib -mmalib=1"] - l.ort_db for l in worst]
    assert loss == sorted(loss)
    np.save(tmp_path / "x.npy", x)
    out = io.StringIO()
    with redirect_stdout(out):
        assert layer_error_main([model, "--inputs", str(tmp_path / "x.npy"), "-t", "c_static_lib", "--top", "3"]) == 0
    text = out.getvalue()
    assert sum(l.startswith("| ") for l in text.splitlines()) == 1 + 3 and "first layer differing from ORT int8: none" in text, text


def test_layer_report_cli_bad_input(tmp_path):
    p = subprocess.run([sys.executable, "-m", "cstatic.layer_error",
                        os.path.join(DIGITS, "digits_int8.onnx"), "--inputs", str(tmp_path / "missing.npy")],
                       capture_output=True, text=True, env={**os.environ, "PYTHONPATH": os.path.join(ROOT, "python")})
    assert p.returncode == 2 and "cannot read" in p.stderr and "missing.npy" in p.stderr, p.stderr


def test_float_reference_follows_requantize_chains():
    """Without --float the reference is the QDQ model with its activation
    Q/DQ pairs removed. A requantization Q(DQ(Q(x))) (PT2E writes one
    before swin_t's DequantizeLinear-fed adds) is followed to the float
    source: every reader of the last DQ reads x, never a removed tensor."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from cstatic.layer_error import _strip_activation_qdq
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in
             {"s1": np.float32(0.05), "s2": np.float32(0.1), "z": np.int8(0)}.items()]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s1", "z"], ["q1"]),
             helper.make_node("DequantizeLinear", ["q1", "s1", "z"], ["d1"]),
             helper.make_node("QuantizeLinear", ["d1", "s2", "z"], ["q2"]),
             helper.make_node("DequantizeLinear", ["q2", "s2", "z"], ["d2"]),
             helper.make_node("Relu", ["d2"], ["y"])]
    g = helper.make_graph(nodes, "requant", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])], inits)
    fm = _strip_activation_qdq(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]))
    assert [(n.op_type, list(n.input)) for n in fm.graph.node] == [("Relu", ["x"])]
    onnx.checker.check_model(fm)
