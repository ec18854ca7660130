"""The Python API (python/cstatic): compile() and Model against ONNX Runtime
and against `cstatic run`, its errors, Model.profile(), and quantize_onnx's
presets (the "c7x" one offloaded to MMALIB as intended)."""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import cstatic
from cstatic_cli import ROOT, cstatic as cli

DIGITS = os.path.join(ROOT, "examples", "digits", "digits_int8.onnx")
IMAGES = os.path.join(ROOT, "examples", "digits", "test_x.npy")


def ort_logits(path, x):
    import sys
    sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
    import ort_ref
    sess = ort_ref.session(str(path), config={"session.qdqisint8allowed": "1"})
    name = sess.get_inputs()[0].name
    return np.concatenate([sess.run(None, {name: x[i:i + 1]})[0] for i in range(len(x))])


def small_qdq_conv(out_dir, preset="generic", c_out=64):
    """Conv(3 -> c_out, 3x3) -> Relu -> Conv(c_out -> c_out, 1x1) -> Relu,
    float, then quantize_onnx(preset): a model the MMALIB offload takes
    (C_out a multiple of 64). Returns the QDQ file's path."""
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(0)
    w1 = (rng.standard_normal((c_out, 3, 3, 3)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((c_out, c_out, 1, 1)) * 0.1).astype(np.float32)
    b = (rng.standard_normal(c_out) * 0.1).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[1, 1]),
             helper.make_node("Relu", ["c2"], ["y"])]
    g = helper.make_graph(nodes, "convs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 12, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c_out, 12, 12])],
                          [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(b, "b1"),
                           numpy_helper.from_array(w2, "w2"), numpy_helper.from_array(b, "b2")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    calib = rng.standard_normal((8, 3, 12, 12)).astype(np.float32)
    path = os.path.join(out_dir, f"convs_{preset}.onnx")
    cstatic.quantize_onnx(m, calib, preset, out=path)
    return path


@pytest.fixture(scope="module")
def digits():
    return cstatic.compile(DIGITS), np.load(IMAGES)


def test_model_run_equals_ort_and_cstatic_run(digits, tmp_path):
    m, x = digits
    assert [(t.name, t.dtype, t.shape) for t in m.inputs] == [("input", np.float32, (1, 1, 8, 8))]
    y = m.run(x)  # 360 images through the batch-1 model
    assert y.shape == (len(x), 10) and y.dtype == np.float32
    assert np.array_equal(y, ort_logits(DIGITS, x))
    np.save(tmp_path / "x.npy", x[:20])
    cli("run", m.dir, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    assert np.array_equal(np.load(tmp_path / "y.npy"), y[:20])
    assert np.array_equal(m.run(x[3:4]), y[3:4])  # one batch, and the arena is reused


def test_model_knows_its_files_and_manifest(digits):
    m, _ = digits
    names = sorted(os.path.basename(f) for f in m.files)
    assert names == ["lib0.c", "lib0.h", "manifest.json", "weights.bin"]
    assert all(os.path.exists(f) for f in m.files)
    assert m.manifest["arena_bytes"] > 0 and m.target.startswith("c_static_lib -mcpu=generic")
    assert "compiled" in m.log and "arena" in m.log
    again = cstatic.load(m.dir)
    assert again.manifest == m.manifest


def test_out_dir_and_weights_c(tmp_path):
    x = np.load(IMAGES)[:5]
    m = cstatic.compile(DIGITS, "c_static_lib -requant=q31", out=tmp_path / "q31", weights="c")
    assert m.dir == str(tmp_path / "q31") and os.path.exists(tmp_path / "q31" / "weights.c")
    assert "-requant=q31" in m.target
    assert np.array_equal(m.run(x), ort_logits(DIGITS, x))  # q31 gives the same bits
    # a model given as bytes or as a ModelProto
    assert np.array_equal(cstatic.compile(onnx.load(DIGITS)).run(x), m.run(x))


def test_temporary_directory_goes_with_the_model():
    import gc
    m = cstatic.compile(DIGITS)
    d = m.dir
    assert os.path.isdir(d)
    del m
    gc.collect()
    assert not os.path.exists(d)


def test_errors_name_the_problem(digits, tmp_path):
    m, x = digits
    with pytest.raises(cstatic.CompileError, match="nope.onnx"):
        cstatic.compile(tmp_path / "nope.onnx")
    with pytest.raises(cstatic.CompileError, match="-mcpu='z80'"):
        cstatic.compile(DIGITS, "c_static_lib -mcpu=z80")
    with pytest.raises(TypeError, match="input 0 'input': expected dtype float32, got float64"):
        m.run(x.astype(np.float64))
    with pytest.raises(ValueError, match=r"expected shape \(1, 1, 8, 8\) \(or a multiple"):
        m.run(x[:, :, :4])
    with pytest.raises(ValueError, match="has 1 input, got 2"):
        m.run(x, x)
    with pytest.raises(ValueError, match="not compiled with per-layer profiling"):
        m.profile()
    with pytest.raises(ValueError, match="not a compiled model directory"):
        cstatic.load(tmp_path)
    # corrupt weights: refused at load, naming the file
    bad = cstatic.compile(DIGITS, out=tmp_path / "bad")
    data = bytearray((tmp_path / "bad" / "weights.bin").read_bytes())
    data[-1] ^= 1
    (tmp_path / "bad" / "weights.bin").write_bytes(bytes(data))
    with pytest.raises(cstatic.RunError, match="weights.bin: weights checksum mismatch") as e:
        bad.run(x[:1])
    assert e.value.status == -10  # TIDSP_ERR_CHECKSUM


def test_profile_counts_every_layer_call(tmp_path):
    x = np.load(IMAGES)[:10]
    m = cstatic.compile(DIGITS, "c_static_lib -profile-layers=1")
    m.run(x)
    rows = m.profile()
    # the layers of cg_main, between model_run's boundary conversions
    layers = [(l["name"], l["kernel"]) for l in m.manifest["layers"] if not l["elided"]]
    assert [(r.name, r.kernel) for r in rows[1:-1]] == layers
    assert rows[0].kernel == "tidsp_quantize" and rows[-1].kernel == "tidsp_dequantize"
    assert all(r.calls == 10 for r in rows) and all(r.ms >= 0 for r in rows)
    assert sum(r.macs for r in rows) == m.manifest["totals"]["macs"]
    m.run(x[:2])
    assert all(r.calls == 2 for r in m.profile())  # counted since the previous profile()
    # named as the ONNX file names them, with the PyTorch module the
    # exporter recorded (examples/digits/make_model.py: conv1, conv2, pool, fc)
    assert [(r.name, r.module, r.output) for r in rows[1:-1]] == [
        ("node_conv2d", "conv1", "i8[1,8,8,8]"), ("node_conv2d_1", "conv2", "i8[1,16,8,8]"),
        ("node_max_pool2d", "pool", "i8[1,16,4,4]"), ("node_linear", "fc", "i8[1,10]")]
    assert [l["module"] for l in m.manifest["layers"]] == ["conv1", "conv2", "pool", "", "fc"]
    src = open(os.path.join(m.dir, "lib0.c")).read()
    assert src.count("* PyTorch module: ") == 4 and "* PyTorch module: conv2\n" in src


def test_quantize_onnx_presets(tmp_path):
    """Both presets give models that equal ORT bit for bit on the host, and
    the "c7x" one offloads its two 64-channel convs to MMALIB (the default
    exact path: MMALIB's int16 call and the core's requant, ORT's bytes)."""
    x = np.random.default_rng(1).standard_normal((4, 3, 12, 12)).astype(np.float32)
    for preset in ("generic", "c7x"):
        q = small_qdq_conv(tmp_path, preset)
        cstatic.check_qdq(q)
        assert np.array_equal(cstatic.compile(q).run(x), ort_logits(q, x)), preset
    m = cstatic.compile(q, "c_static_lib -mcpu=c7x -mmalib=1")
    kernels = [e.get("kernel") for e in m.manifest["offload"]["layers"]]
    assert kernels == ["mmalib_conv2d_i16", "mmalib_conv2d_i16"], m.manifest["offload"]
    assert all("exact_requant" in e for e in m.manifest["offload"]["layers"])
    assert np.array_equal(m.run(x), ort_logits(q, x))
    with pytest.raises(ValueError, match="preset must be one of 'generic', 'c7x'"):
        cstatic.quantize_onnx(q, x, "tflite")
    with pytest.raises(ValueError, match="c7x' quantizes activations to int8"):
        cstatic.quantize_onnx(q, x, "c7x", activation="uint8")


def test_check_qdq_passes_activation_matmuls_and_catches_folded_weights(tmp_path):
    """Attention's Q·Kᵀ (a MatMul of two quantized activations, as ORT's
    quantize_static writes it, or of two float ones, as PT2E's XNNPACK
    quantizer leaves torchvision ViT's SDPA) has no weight to check; a
    weight folded to float is still caught."""
    TP, h, nh = TensorProto, helper, numpy_helper

    def model(folded):
        w = np.random.default_rng(0).integers(-127, 128, (4, 4)).astype(np.int8)
        inits = [h.make_tensor("s", TP.FLOAT, [], [0.05]), h.make_tensor("z", TP.INT8, [], [0])]
        if folded:
            inits.append(nh.from_array(w.astype(np.float32) * np.float32(0.05), "wf"))
            weight = []
        else:
            inits.append(nh.from_array(w, "w"))
            weight = [h.make_node("DequantizeLinear", ["w", "s", "z"], ["wf"])]
        nodes = weight + [h.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
                          h.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
                          h.make_node("MatMul", ["xd", "wf"], ["p"]),
                          h.make_node("QuantizeLinear", ["p", "s", "z"], ["pq"]),
                          h.make_node("DequantizeLinear", ["pq", "s", "z"], ["pd"]),
                          h.make_node("Transpose", ["pd"], ["pt"], perm=[1, 0]),
                          h.make_node("QuantizeLinear", ["pt", "s", "z"], ["tq"]),
                          h.make_node("DequantizeLinear", ["tq", "s", "z"], ["td"]),
                          h.make_node("MatMul", ["xd", "td"], ["y"]),
                          h.make_node("Mul", ["pt", "s"], ["ps"]),
                          h.make_node("MatMul", ["x", "ps"], ["y2"])]
        g = h.make_graph(nodes, "attn", [h.make_tensor_value_info("x", TP.FLOAT, [4, 4])],
                         [h.make_tensor_value_info("y", TP.FLOAT, [4, 4]),
                          h.make_tensor_value_info("y2", TP.FLOAT, [4, 4])], inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
        m.ir_version = 8
        path = tmp_path / f"attn_{folded}.onnx"
        onnx.save(m, path)
        return str(path)

    cstatic.check_qdq(model(False))
    with pytest.raises(ValueError, match="1 of 3 weighted ops"):
        cstatic.check_qdq(model(True))
