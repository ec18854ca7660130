"""MMALIB at the graph's edge (issue 13 item 3): the spec's single-layer int8
I/O cases — the layer's input is the int8 graph input, its output the int8
graph output — offload with -mmalib=1 (the offload report says so) and are
within 1 LSB of the exact float-domain result.

The caller's I/O buffers carry no alignment guarantee, MMALIB needs 64-byte
aligned tensors: the compiler copies an edge tensor through an aligned
arena buffer (k_copy, compiler/passes/match/mmalib_common.h "the graph's edge").
Each model is built here directly in ONNX (int8 graph I/O, DQ -> layer ->
[Relu] -> Q, per-channel weight scales that differ 16x, an int32 bias in
ORT's form), and the reference is computed in float64 from the same
integers: q = clip(round(real / o_s) + o_zp).
"""

import json

import numpy as np
import pytest

from cstatic_cli import cstatic


def _dq(name, scale, zp, axis=None):
    from onnx import helper
    kw = {} if axis is None else {"axis": axis}
    return helper.make_node("DequantizeLinear", [name, name + "_s", name + "_zp"], [name + "_f"],
                            name=name + "_dq", **kw)


def _q(src, dst):
    from onnx import helper
    return helper.make_node("QuantizeLinear", [src, dst + "_s", dst + "_zp"], [dst], name=dst + "_q")


def _model(nodes, inputs, output, inits):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    graph = helper.make_graph(
        nodes, "edge",
        [helper.make_tensor_value_info(n, TensorProto.INT8, s) for n, s in inputs],
        [helper.make_tensor_value_info(output[0], TensorProto.INT8, output[1])],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m


def _quant_consts(name, s, zp):
    return {name + "_s": np.float32(s), name + "_zp": np.int8(zp)}


def _weights(rng, shape, c_out):
    w = rng.integers(-127, 128, size=shape).astype(np.int8)
    ws = (np.linspace(0.25, 4.0, c_out) * 2e-3).astype(np.float32)
    return w, ws


def conv_case(rng, c_in, c_out, hw, k, stride, groups, relu, x_s=0.05, x_zp=0, o_zp=0):
    """x:int8 [1,c_in,hw,hw] -> DQ -> Conv(DQ(w), DQ(b)) -> [Relu] -> Q -> y:int8
    (stride: one for both axes, or (s_h, s_w))."""
    w, ws = _weights(rng, (c_out, c_in // groups, k, k), c_out)
    bs = (np.float32(x_s) * ws).astype(np.float32)  # ORT: bias scale = x_s * w_s
    b = rng.integers(-2000, 2000, size=c_out).astype(np.int32)
    pad = k // 2
    sh, sw = stride if isinstance(stride, tuple) else (stride, stride)
    out_h, out_w = (hw + 2 * pad - k) // sh + 1, (hw + 2 * pad - k) // sw + 1
    acc_scale = np.float64(x_s) * ws.astype(np.float64)
    per = c_in // groups * k * k
    o_s = float(np.sqrt(per) * 150 * acc_scale.mean())  # |y| ~ 35 LSB: the range, rarely saturated
    from onnx import helper
    nodes = [_dq("x", x_s, x_zp), _dq("w", ws, 0, axis=0), _dq("b", bs, 0, axis=0),
             helper.make_node("Conv", ["x_f", "w_f", "b_f"], ["c"], name="conv0", kernel_shape=[k, k],
                              strides=[sh, sw], pads=[pad] * 4, group=groups)]
    last = "c"
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["r"], name="relu0"))
        last = "r"
    nodes.append(_q(last, "y"))
    inits = {"w": w, "w_s": ws, "w_zp": np.zeros(c_out, np.int8), "b": b, "b_s": bs,
             "b_zp": np.zeros(c_out, np.int32), **_quant_consts("x", x_s, x_zp), **_quant_consts("y", o_s, o_zp)}
    model = _model(nodes, [("x", [1, c_in, hw, hw])], ("y", [1, c_out, out_h, out_w]), inits)

    def exact(x):
        xc = np.pad(x[0].astype(np.float64) - x_zp, ((0, 0), (pad, pad), (pad, pad)))
        acc = np.zeros((c_out, out_h, out_w))
        cg, og = c_in // groups, c_out // groups
        for g in range(groups):
            xg = xc[g * cg:(g + 1) * cg]
            wg = w[g * og:(g + 1) * og].astype(np.float64)
            for dy in range(k):
                for dx in range(k):
                    patch = xg[:, dy:dy + sh * out_h:sh, dx:dx + sw * out_w:sw].reshape(cg, -1)
                    acc[g * og:(g + 1) * og] += (wg[:, :, dy, dx] @ patch).reshape(og, out_h, out_w)
        real = (acc + b[:, None, None]) * acc_scale[:, None, None]
        if relu:
            real = np.maximum(real, 0.0)
        return np.clip(np.round(real / o_s) + o_zp, -128, 127)[None]

    return model, {"x": (1, c_in, hw, hw)}, exact


def fc_case(rng, k, n, relu):
    """x:int8 [1,K] -> DQ -> Gemm(transB=1, DQ(w [N,K]), DQ(b)) -> [Relu] -> Q -> y:int8 [1,N]."""
    x_s, x_zp, o_zp = 0.05, 3, -128 if relu else -7
    w, ws = _weights(rng, (n, k), n)
    bs = (np.float32(x_s) * ws).astype(np.float32)
    b = rng.integers(-2000, 2000, size=n).astype(np.int32)
    acc_scale = np.float64(x_s) * ws.astype(np.float64)
    o_s = float(np.sqrt(k) * 150 * acc_scale.mean())
    from onnx import helper
    nodes = [_dq("x", x_s, x_zp), _dq("w", ws, 0, axis=0), _dq("b", bs, 0, axis=0),
             helper.make_node("Gemm", ["x_f", "w_f", "b_f"], ["c"], name="fc0", transB=1)]
    last = "c"
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["r"], name="relu0"))
        last = "r"
    nodes.append(_q(last, "y"))
    inits = {"w": w, "w_s": ws, "w_zp": np.zeros(n, np.int8), "b": b, "b_s": bs, "b_zp": np.zeros(n, np.int32),
             **_quant_consts("x", x_s, x_zp), **_quant_consts("y", o_s, o_zp)}
    model = _model(nodes, [("x", [1, k])], ("y", [1, n]), inits)

    def exact(x):
        acc = (x.astype(np.float64) - x_zp) @ w.T.astype(np.float64)
        real = (acc + b) * acc_scale
        if relu:
            real = np.maximum(real, 0.0)
        return np.clip(np.round(real / o_s) + o_zp, -128, 127)

    return model, {"x": (1, k)}, exact


def add_case(rng, shape, relu):
    """a, b:int8 -> DQ each -> Add -> [Relu] -> Q -> y:int8 (both operands graph inputs)."""
    a_s, a_zp, b_s, b_zp, o_s = 0.04, -5, 0.07, 9, 0.09
    o_zp = -128 if relu else 2
    from onnx import helper
    nodes = [_dq("a", a_s, a_zp), _dq("b", b_s, b_zp),
             helper.make_node("Add", ["a_f", "b_f"], ["s"], name="add0")]
    last = "s"
    if relu:
        nodes.append(helper.make_node("Relu", ["s"], ["r"], name="relu0"))
        last = "r"
    nodes.append(_q(last, "y"))
    inits = {**_quant_consts("a", a_s, a_zp), **_quant_consts("b", b_s, b_zp), **_quant_consts("y", o_s, o_zp)}
    model = _model(nodes, [("a", list(shape)), ("b", list(shape))], ("y", list(shape)), inits)

    def exact(a, b):
        real = (a.astype(np.float64) - a_zp) * np.float64(np.float32(a_s)) + \
               (b.astype(np.float64) - b_zp) * np.float64(np.float32(b_s))
        if relu:
            real = np.maximum(real, 0.0)
        return np.clip(np.round(real / np.float64(np.float32(o_s))) + o_zp, -128, 127)

    return model, {"a": shape, "b": shape}, exact


# The spec's single-layer int8 I/O cases: (id, builder, kind, kernel).
CASES = [
    ("conv64_56x56_3x3", lambda r: conv_case(r, 64, 64, 56, 3, 1, 1, False, o_zp=5), "conv2d", "mmalib_conv2d_i8"),
    ("conv64_56x56_3x3_c7x", lambda r: conv_case(r, 64, 64, 56, 3, 1, 1, False, o_zp=5), "conv2d",
     "mmalib_conv2d_i8"),
    ("conv_stride2_relu", lambda r: conv_case(r, 64, 64, 56, 3, 2, 1, True, o_zp=-128), "conv2d", "mmalib_conv2d_i8"),
    ("conv_dzp_pad", lambda r: conv_case(r, 32, 64, 28, 3, 1, 1, False, x_zp=-11), "conv2d", "mmalib_conv2d_i8"),
    # C_out 40: padded to 64 zero filters (MMALIBPadChannels); the cut of the
    # real 40 channels is the copy into the graph's output
    ("conv_cout40_padded", lambda r: conv_case(r, 32, 40, 28, 3, 1, 1, False, o_zp=3), "conv2d", "mmalib_conv2d_i8"),
    ("conv_cout40_padded_c7x", lambda r: conv_case(r, 32, 40, 28, 3, 1, 1, True, o_zp=-128), "conv2d",
     "mmalib_conv2d_i8"),
    ("dw3x3", lambda r: conv_case(r, 64, 64, 28, 3, 1, 64, True, o_zp=-128), "dwconv2d", "mmalib_depthwise_conv2d_i8"),
    ("dw5x5", lambda r: conv_case(r, 64, 64, 28, 5, 1, 64, False, o_zp=1), "dwconv2d", "mmalib_depthwise_conv2d_i8"),
    ("dw7x7", lambda r: conv_case(r, 64, 64, 28, 7, 1, 64, False, o_zp=-3), "dwconv2d", "mmalib_depthwise_conv2d_i8"),
    ("fc256x512", lambda r: fc_case(r, 256, 512, False), "FC", "mmalib_matmul_bias_i8"),
    ("fc256x512_c7x", lambda r: fc_case(r, 256, 512, False), "FC", "mmalib_matmul_bias_i8"),
    ("fc_relu", lambda r: fc_case(r, 128, 64, True), "FC", "mmalib_matmul_bias_i8"),
    ("res_add_relu", lambda r: add_case(r, (1, 64, 56, 56), True), "res_add", "c7x_int8_residual_add_relu"),
    ("res_add", lambda r: add_case(r, (1, 64, 28, 28), False), "res_add", "c7x_int8_residual_add_relu"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_single_layer_int8_io_offloads_within_one_lsb(case, tmp_path):
    import onnx
    name, build, kind, kernel = case
    rng = np.random.default_rng(11)
    model, inputs, exact = build(rng)
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    out = tmp_path / "out"
    # *_c7x: the C7x flavour, whose MMALIB calls are staged into L2 as well
# -mmalib-exact=none: these check the int8 kernels (the default, `all`,
# runs int8 layers on MMALIB's int16 kernels: test_mmalib_exact.py)
    target = "c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact=none" if name.endswith("_c7x") else "c_static_lib -mmalib=1 -mmalib-exact=none"
    r = cstatic("compile", path, "-o", out, "-t", target)
    print(r.stdout)
    assert f"mmalib offload: 1 {kind}" in r.stdout, r.stdout
    layers = json.load(open(out / "manifest.json"))["offload"]["layers"]
    assert [e.get("kernel") for e in layers] == [kernel], layers
    src = open(out / "lib0.c").read()
    # an MMA kernel reads and writes the graph's I/O through aligned arena
    # copies (the explicit d_zp pad writes the arena itself; the residual
    # add is no MMA kernel)
    copies = 0 if kind == "res_add" else 1 if "dzp" in name else 2
    assert src.count("tidsp_copy(") == copies, src.count("tidsp_copy(")
    feeds, args = [], []
    for i, (name, shape) in enumerate(inputs.items()):
        x = rng.integers(-128, 128, size=shape).astype(np.int8)
        np.save(tmp_path / f"{name}.npy", x)
        feeds.append(x)
        args += ["--input", tmp_path / f"{name}.npy"]
    cstatic("run", out, *args, "--output", tmp_path / "y.npy")
    y = np.load(tmp_path / "y.npy")
    ref = exact(*feeds)
    assert y.dtype == np.int8 and y.shape == ref.shape
    diff = np.abs(y.astype(np.int64) - ref)
    print(f"{kind}: max |y - exact| = {diff.max()} LSB, {np.mean(diff > 0) * 100:.2f} % off by one; "
          f"outputs span [{ref.min():.0f}, {ref.max():.0f}]")
    assert diff.max() <= 1
    assert ref.max() - ref.min() > 100  # the test exercises most of the int8 range
    assert np.mean(ref == 127) < 0.1  # ... mostly unsaturated (-128 is also a ReLU's zero)
