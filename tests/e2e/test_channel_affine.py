"""FuseQDQChannelAffine: DQ(x:int8) → Mul(s[c]) → Add(b[c]) → Q (a
BatchNormalization between DQ and Q, as DenseNet's ORT-quantized files have
it; or the Mul and Add written out) becomes one tidsp_channel_affine_i8
call, and every output stays ONNX Runtime's bit for bit.

Matched: a BN with Q after it (u8 and s8 activations), with a Relu or a
Clip (both bounds, or a minimum only) between it and Q, the Mul/Add form
(either operand order).
Declined (the float chain stays, still ORT's bytes): a per-channel DQ, a
second reader of an intermediate, a non-constant s, a per-tensor b beside a
per-channel s, a float output (no Q).
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from conftest import ort_ref
from cstatic_cli import cstatic

C, H, W = 5, 6, 19  # a 19-wide row: vector bodies and tails
FUSED = "tidsp_channel_affine_i8("
UNFUSED = "tidsp_binary_f32("


def _c(name, v, dt=np.float32):
    return nh.from_array(np.asarray(v, dt), name)


def _qparams(act, name, scale, zp):
    dt = np.uint8 if act == "u8" else np.int8
    return [_c(name + "_s", scale), _c(name + "_z", zp if act == "u8" else zp - 128, dt)]


def _model(tmp_path, act, body, extra_inits=(), extra_inputs=(), outputs=("y",), x_per_channel=False):
    """x (float) → Q → DQ → body(d) … → Q(yq) → DQ → y; body's nodes write
    't' (float), or 'y' itself when it has no Q after it."""
    r = np.random.default_rng(5)
    inits = _qparams(act, "xq", 0.04, 131) + _qparams(act, "yq", 0.03, 128)
    if x_per_channel:
        inits[0] = _c("xq_s", r.uniform(0.02, 0.05, C))
        inits[1] = _c("xq_z", np.full(C, 131 if act == "u8" else 3), np.uint8 if act == "u8" else np.int8)
    nodes = [h.make_node("QuantizeLinear", ["x", "xq_s", "xq_z"], ["xi"], axis=1),
             h.make_node("DequantizeLinear", ["xi", "xq_s", "xq_z"], ["d"], axis=1)]
    nodes += body
    if "y" not in {o for n in body for o in n.output}:
        nodes += [h.make_node("QuantizeLinear", ["t", "yq_s", "yq_z"], ["yi"]),
                  h.make_node("DequantizeLinear", ["yi", "yq_s", "yq_z"], ["y"])]
    g = h.make_graph(nodes, "g",
                     [h.make_tensor_value_info("x", TP.FLOAT, [1, C, H, W])] +
                     [h.make_tensor_value_info(n, TP.FLOAT, s) for n, s in extra_inputs],
                     [h.make_tensor_value_info(o, TP.FLOAT, None) for o in outputs],
                     inits + list(extra_inits))
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 8
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    return path


def _bn_inits():
    r = np.random.default_rng(3)
    return [_c("bs", r.uniform(-1.5, 1.5, C)), _c("bb", r.uniform(-0.5, 0.5, C)),
            _c("bm", r.uniform(-0.5, 0.5, C)), _c("bv", r.uniform(0.2, 2.0, C))]


def _check(tmp_path, path, extra_feeds=None):
    """The compiled model's outputs equal ORT's; returns lib0.c."""
    r = np.random.default_rng(11)
    feeds = {"x": (r.standard_normal((1, C, H, W)) * 2.5).astype(np.float32)}
    feeds.update(extra_feeds or {})
    out = tmp_path / "out"
    cstatic("compile", path, "-o", out, "-q")
    args = []
    for k, v in feeds.items():
        np.save(tmp_path / f"{k}.npy", v)
        args += ["--input", tmp_path / f"{k}.npy"]
    sess = ort_ref.session(str(path), config={"session.qdqisint8allowed": "1"})
    want = sess.run(None, feeds)
    outs = []
    for o in sess.get_outputs():
        outs += ["--output", tmp_path / f"y_{o.name}.npy"]
    cstatic("run", out, *args, *outs)
    for i, o in enumerate(sess.get_outputs()):
        got = np.load(tmp_path / f"y_{o.name}.npy")
        assert np.array_equal(got.view(np.uint32), want[i].view(np.uint32)), \
            f"{o.name}: {np.mean(got == want[i]):.4f} exact"
    return (out / "lib0.c").read_text()


def _bn(out="t"):
    return [h.make_node("BatchNormalization", ["d", "bs", "bb", "bm", "bv"], [out], epsilon=1e-5)]


@pytest.mark.parametrize("act", ["u8", "s8"])
def test_batchnorm_between_dq_and_q_is_fused(tmp_path, act):
    src = _check(tmp_path, _model(tmp_path, act, _bn(), _bn_inits()))
    assert src.count(FUSED) == 1 and UNFUSED not in src


@pytest.mark.parametrize("act", ["relu", "clip", "clip_min"])
def test_batchnorm_activation_q_is_fused(tmp_path, act):
    inits = _bn_inits() + [_c("lo", -0.25), _c("hi", 1.5)]
    if act == "relu":
        tail = [h.make_node("Relu", ["n"], ["t"])]
    else:
        tail = [h.make_node("Clip", ["n", "lo", "hi"] if act == "clip" else ["n", "lo"], ["t"])]
    src = _check(tmp_path, _model(tmp_path, "s8", _bn("n") + tail, inits))
    assert src.count(FUSED) == 1 and UNFUSED not in src and "tidsp_unary_f32(" not in src


@pytest.mark.parametrize("swap", [False, True])
def test_mul_add_either_order_is_fused(tmp_path, swap):
    r = np.random.default_rng(8)
    inits = [_c("ms", r.uniform(-2, 2, (C, 1, 1))), _c("ab", r.uniform(-1, 1, (C, 1, 1)))]
    body = [h.make_node("Mul", ["ms", "d"] if swap else ["d", "ms"], ["p"]),
            h.make_node("Add", ["ab", "p"] if swap else ["p", "ab"], ["t"])]
    src = _check(tmp_path, _model(tmp_path, "u8", body, inits))
    assert src.count(FUSED) == 1 and UNFUSED not in src


def test_per_channel_dq_is_declined(tmp_path):
    src = _check(tmp_path, _model(tmp_path, "s8", _bn(), _bn_inits(), x_per_channel=True))
    assert FUSED not in src and src.count(UNFUSED) == 2


def test_second_reader_is_declined(tmp_path):
    """The BN's float result is also a graph output."""
    src = _check(tmp_path, _model(tmp_path, "u8", _bn(), _bn_inits(), outputs=("y", "t")))
    assert FUSED not in src and src.count(UNFUSED) == 2


def test_runtime_scale_is_declined(tmp_path):
    r = np.random.default_rng(2)
    body = [h.make_node("Mul", ["d", "sv"], ["p"]), h.make_node("Add", ["p", "ab"], ["t"])]
    path = _model(tmp_path, "u8", body, [_c("ab", r.uniform(-1, 1, (C, 1, 1)))], extra_inputs=[("sv", [C, 1, 1])])
    src = _check(tmp_path, path, {"sv": r.uniform(-2, 2, (C, 1, 1)).astype(np.float32)})
    assert FUSED not in src and src.count(UNFUSED) == 2


def test_per_tensor_bias_is_declined(tmp_path):
    """s per channel, b one value: not the kernel's form."""
    r = np.random.default_rng(7)
    inits = [_c("ms", r.uniform(-2, 2, (C, 1, 1))), _c("ab", [0.375])]
    body = [h.make_node("Mul", ["d", "ms"], ["p"]), h.make_node("Add", ["p", "ab"], ["t"])]
    src = _check(tmp_path, _model(tmp_path, "u8", body, inits))
    assert FUSED not in src


def test_float_output_is_declined(tmp_path):
    src = _check(tmp_path, _model(tmp_path, "u8", _bn("y"), _bn_inits()))
    assert FUSED not in src and src.count(UNFUSED) == 2
