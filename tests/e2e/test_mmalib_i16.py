"""MMALIB int16 offload (-mmalib=1) end to end: the int16 QDQ fusions and
the int16 legalize path.

The int16 QDQ models are built here with onnx.helper in the form the PT2E
C7xMMAQuantizer(dtype="int16") exports (opset 21): symmetric per-tensor
int16 activations (zero point 0, scale = amax/32767 from a float run of the
same graph under ONNX Runtime), symmetric per-output-channel int16 weights,
float bias. Each is compiled with -mmalib=1; the offload report (stdout and
manifest.json) must name the kernel or the declining rule, and the output
is compared with ONNX Runtime running the same QDQ file.

Tolerance of an offloaded layer, in output integers q = round(y / o_s):
    |q - q_ort| <= eps * |q_ort| + 2
eps is the layer's scale_shift_max_rel_err from the manifest: MMALIB
requantizes with a uint8 scale and a shift (_float_to_scale_shift), so the
multiplier d_s*w_s/o_s is off by up to 2^-8 relatively (eps, measured and
reported per layer); +1 for the kernel's half-up rounding against ORT's
half-even on the float result, +1 for ORT's float32 accumulation (which
itself is up to 1 LSB from the exact value). The bound is per element, so
on int16 outputs near full scale it is ~100 LSB; SQNR against ORT must be
>= 30 dB (measured ~50 dB). Declined layers run on the generic
DQ -> float op -> Q path and stay within 1 LSB of ORT.

The legalize path (float Conv / MatMul / Gemm, no quantization) is compared
with numpy float: SQNR >= 45 dB (dynamic int16 activations, int16 weights;
measured 55-80 dB).

The c7x flavour of an int16 model compiles strictly as C99 and runs like
the generic one.
"""

import glob
import json
import os
import subprocess

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from cstatic_cli import ROOT, cstatic

INCLUDE = os.path.join(ROOT, "include")
STUB_DIR = os.path.join(INCLUDE, "cstatic", "platform", "ti_stub")
CC = os.environ.get("CC", "cc")
QMAX = 32767


# ---- a tiny PT2E-like int16 QDQ builder -------------------------------------

class Net:
    """A float graph built layer by layer, and its int16 QDQ twin.

    Activations are named tensors; every op reads DQ(Q(t)) of its activation
    inputs and its (optionally ReLU'd) output is quantized, as convert_pt2e
    leaves a C7xMMAQuantizer model. Scales come from a float run (ORT) on
    the calibration input. zp_override: {tensor: (scale, zp)} to make an
    asymmetric (declined) layer.
    """

    def __init__(self, x_shape, seed=0):
        self.rng = np.random.default_rng(seed)
        self.x_shape = list(x_shape)
        self.layers = []
        self.shapes = {"x": list(x_shape)}
        self.n = 0

    def _name(self, kind):
        self.n += 1
        return f"{kind}{self.n}"

    def conv(self, src, c_out, k=3, stride=1, pad=None, groups=1, relu=True, name=None):
        c_in = self.shapes[src][1]
        pad = k // 2 if pad is None else pad
        w = self.rng.normal(size=(c_out, c_in // groups, k, k)).astype(np.float32)
        w *= (0.5 / np.sqrt(c_in // groups * k * k)) * np.linspace(0.5, 2.0, c_out, dtype=np.float32)[:, None, None, None]
        b = (self.rng.normal(size=c_out) * 0.1).astype(np.float32)
        name = name or self._name("conv")
        h, wd = self.shapes[src][2:]
        ho, wo = (h + 2 * pad - k) // stride + 1, (wd + 2 * pad - k) // stride + 1
        self.layers.append(dict(op="Conv", name=name, src=[src], w=w, b=b, relu=relu, attrs=dict(
            kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4, group=groups)))
        self.shapes[name] = [1, c_out, ho, wo]
        return name

    def gemm(self, src, n_out, relu=False, matmul=False, name=None):
        k = self.shapes[src][-1]
        w = (self.rng.normal(size=(n_out, k)) / np.sqrt(k)).astype(np.float32)
        b = (self.rng.normal(size=n_out) * 0.1).astype(np.float32)
        name = name or self._name("fc")
        self.layers.append(dict(op="MatMul" if matmul else "Gemm", name=name, src=[src], w=w, b=b, relu=relu,
                                attrs={} if matmul else dict(transB=1)))
        self.shapes[name] = self.shapes[src][:-1] + [n_out]
        return name

    def add(self, a, b, relu=False, name=None):
        name = name or self._name("add")
        self.layers.append(dict(op="Add", name=name, src=[a, b], relu=relu))
        self.shapes[name] = self.shapes[a]
        return name

    def gap_flatten(self, src, name=None):
        name = name or self._name("gap")
        self.layers.append(dict(op="GlobalAveragePool", name=name, src=[src], relu=False))
        self.shapes[name] = self.shapes[src][:2] + [1, 1]
        flat = name + "_flat"
        self.layers.append(dict(op="Flatten", name=flat, src=[name], relu=False))
        self.shapes[flat] = self.shapes[src][:2]
        return flat

    # -- graphs --

    def _float_nodes(self, inits):
        nodes = []
        for L in self.layers:
            op, name = L["op"], L["name"]
            out = name + ("_pre" if L["relu"] else "")
            if op in ("Conv", "Gemm"):
                inits += [numpy_helper.from_array(L["w"], name + "_w"), numpy_helper.from_array(L["b"], name + "_b")]
                nodes.append(helper.make_node(op, [L["src"][0], name + "_w", name + "_b"], [out], name=name,
                                              **L["attrs"]))
            elif op == "MatMul":
                inits += [numpy_helper.from_array(L["w"].T.copy(), name + "_w"),
                          numpy_helper.from_array(L["b"], name + "_b")]
                nodes.append(helper.make_node("MatMul", [L["src"][0], name + "_w"], [name + "_mm"], name=name))
                nodes.append(helper.make_node("Add", [name + "_mm", name + "_b"], [out], name=name + "_bias"))
            else:
                nodes.append(helper.make_node(op, L["src"], [out], name=name))
            if L["relu"]:
                nodes.append(helper.make_node("Relu", [out], [name], name=name + "_relu"))
        return nodes

    def float_model(self, outputs=None):
        inits = []
        nodes = self._float_nodes(inits)
        outs = outputs or [self.layers[-1]["name"]]
        g = helper.make_graph(nodes, "f", [helper.make_tensor_value_info("x", TensorProto.FLOAT, self.x_shape)],
                              [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outs], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
        m.ir_version = 10
        return m

    def calibrate(self, x):
        """amax of every activation (x and each layer's output) from ORT."""
        names = ["x"] + [L["name"] for L in self.layers]
        m = self.float_model(outputs=names[1:])
        s = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        vals = dict(zip(names[1:], s.run(None, {"x": x})))
        vals["x"] = x
        return {k: float(np.abs(v).max()) for k, v in vals.items()}

    def qdq_model(self, x, zp_override=None):
        """The int16 QDQ graph; returns (model, {tensor: (scale, zp)})."""
        amax = self.calibrate(x)
        qp = {t: (np.float32(a / QMAX), 0) for t, a in amax.items()}
        for L in self.layers:  # a Flatten shares its input's quantization (PT2E's SharedQuantizationSpec)
            if L["op"] == "Flatten":
                qp[L["name"]] = qp[L["src"][0]]
        qp.update(zp_override or {})
        inits, nodes = [], []

        def q_dq(t):  # t (float) -> t_q (int16) -> t_dq (float)
            s, z = qp[t]
            inits.extend([numpy_helper.from_array(np.float32(s), t + "_s"),
                          numpy_helper.from_array(np.int16(z), t + "_z")])
            nodes.append(helper.make_node("QuantizeLinear", [t, t + "_s", t + "_z"], [t + "_q"], name=t + "_Q"))
            nodes.append(helper.make_node("DequantizeLinear", [t + "_q", t + "_s", t + "_z"], [t + "_dq"],
                                          name=t + "_DQ"))

        def weight(name, w, axis):
            ws = (np.abs(w).max(axis=tuple(i for i in range(w.ndim) if i != axis)) / QMAX).astype(np.float32)
            shape = [1] * w.ndim
            shape[axis] = -1
            wq = np.clip(np.round(w / ws.reshape(shape)), -QMAX, QMAX).astype(np.int16)
            inits.extend([numpy_helper.from_array(wq, name + "_wq"), numpy_helper.from_array(ws, name + "_ws"),
                          numpy_helper.from_array(np.zeros(ws.shape, np.int16), name + "_wz")])
            nodes.append(helper.make_node("DequantizeLinear", [name + "_wq", name + "_ws", name + "_wz"],
                                          [name + "_wdq"], name=name + "_wDQ", axis=axis))
            return name + "_wdq"

        q_dq("x")
        for L in self.layers:
            op, name = L["op"], L["name"]
            src = [s + "_dq" for s in L["src"]]
            out = name + ("_pre" if L["relu"] else "")
            if op in ("Conv", "Gemm"):
                inits.append(numpy_helper.from_array(L["b"], name + "_b"))
                nodes.append(helper.make_node(op, [src[0], weight(name, L["w"], 0), name + "_b"], [out], name=name,
                                              **L["attrs"]))
            elif op == "MatMul":
                inits.append(numpy_helper.from_array(L["b"], name + "_b"))
                nodes.append(helper.make_node("MatMul", [src[0], weight(name, L["w"].T.copy(), 1)], [name + "_mm"],
                                              name=name))
                nodes.append(helper.make_node("Add", [name + "_mm", name + "_b"], [out], name=name + "_bias"))
            else:
                nodes.append(helper.make_node(op, src, [out], name=name))
            if L["relu"]:
                nodes.append(helper.make_node("Relu", [out], [name], name=name + "_relu"))
            q_dq(name)
        last = self.layers[-1]["name"]
        nodes.append(helper.make_node("Identity", [last + "_dq"], ["y"], name="out"))
        g = helper.make_graph(nodes, "q16", [helper.make_tensor_value_info("x", TensorProto.FLOAT, self.x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, self.shapes[last])], inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
        m.ir_version = 10
        onnx.checker.check_model(m, full_check=True)
        return m, qp


def feeds_of(x):
    """x: one array (the input "x") or {name: array} in the model's input order."""
    return x if isinstance(x, dict) else {"x": x}


def ort_run(model_path, x):
    s = ort.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    return s.run(None, feeds_of(x))[0]


def compile_run(tmp_path, model, x, target="c_static_lib -mmalib=1", tag="out"):
    path = str(tmp_path / f"{tag}.onnx")
    onnx.save(model, path)
    out = tmp_path / tag
    r = cstatic("compile", path, "-o", out, "-t", target)
    args = []
    for name, v in feeds_of(x).items():
        np.save(tmp_path / f"{tag}_{name}.npy", v)
        args += ["--input", tmp_path / f"{tag}_{name}.npy"]
    cstatic("run", out, *args, "--output", tmp_path / f"{tag}_y.npy")
    man = json.load(open(out / "manifest.json"))
    return path, out, r.stdout, man, np.load(tmp_path / f"{tag}_y.npy")


def layers_of(man):
    return {e["layer"]: e for e in man["offload"]["layers"]}


def sqnr_db(ref, got):
    ref, got = ref.astype(np.float64), got.astype(np.float64)
    return 10 * np.log10((ref ** 2).sum() / max(((got - ref) ** 2).sum(), 1e-30))


def check_vs_ort(path, y, x, o_s, eps, extra=2, what=""):
    """y (ours) against ORT on the same QDQ file, in output integers."""
    ref = ort_run(path, x)
    q, q_ref = np.round(y / o_s), np.round(ref / o_s)
    excess = np.abs(q - q_ref) - eps * np.abs(q_ref)
    db = sqnr_db(ref, y)
    print(f"{what}: max |dq| {np.abs(q - q_ref).max():.0f} LSB of max |q| {np.abs(q_ref).max():.0f}, "
          f"max beyond eps*|q| {excess.max():.2f}, {np.mean(q != q_ref) * 100:.1f}% differ, SQNR {db:.1f} dB")
    assert np.abs(q_ref).max() > 1000, "degenerate test: tiny outputs"
    assert excess.max() <= extra
    assert db >= 30.0


def x_input(shape, seed=5):
    return np.random.default_rng(seed).normal(size=shape).astype(np.float32)


# ---- offloaded single layers ------------------------------------------------

LAYERS = {
    # name: (builder, expected kind, kernel)
    "conv3x3_relu": (lambda n: n.conv("x", 32, relu=True), "conv2d", "mmalib_conv2d_i16"),
    "conv3x3_s2": (lambda n: n.conv("x", 64, stride=2, relu=False), "conv2d", "mmalib_conv2d_i16"),
    "dwconv3x3_relu": (lambda n: n.conv("x", 16, groups=16, relu=True), "dwconv2d", "mmalib_depthwise_conv2d_i16"),
    "dwconv3x3_s2": (lambda n: n.conv("x", 16, groups=16, stride=2, relu=False), "dwconv2d",
                     "mmalib_depthwise_conv2d_i16"),
}


@pytest.mark.parametrize("case", sorted(LAYERS))
def test_int16_conv_layers_are_offloaded_and_match_ort(case, tmp_path):
    build, kind, kernel = LAYERS[case]
    net = Net([1, 16, 12, 12], seed=1)
    name = build(net)
    x = x_input(net.x_shape)
    model, qp = net.qdq_model(x)
    path, out, stdout, man, y = compile_run(tmp_path, model, x)
    assert f"mmalib offload: 1 {kind}" in stdout
    e = layers_of(man)[name]
    assert e["kind"] == kind and e["kernel"] == kernel, e
    assert 0 < e["scale_shift_max_rel_err"] <= 2.0 ** -8
    src = open(out / "lib0.c").read()
    assert f"{kernel}(" in src and "tidsp_conv2d_f32" not in src
    assert ("c7x_int16_residual_add_relu(" in src) == net.layers[-1]["relu"]  # the ReLU call
    check_vs_ort(path, y, x, qp[name][0], e["scale_shift_max_rel_err"], what=case)


@pytest.mark.parametrize("matmul", [False, True], ids=["gemm", "matmul_add"])
def test_int16_fc_is_offloaded_and_matches_ort(matmul, tmp_path):
    net = Net([1, 64], seed=2)
    name = net.gemm("x", 32, matmul=matmul, relu=True)
    x = x_input(net.x_shape)
    model, qp = net.qdq_model(x)
    path, out, stdout, man, y = compile_run(tmp_path, model, x)
    assert "mmalib offload: 1 FC" in stdout
    e = layers_of(man)[name]
    assert e["kernel"] == "mmalib_matmul_bias_i16", e
    assert len(man["offload"]["layers"]) == 1  # the bias Add is part of the FC
    assert "mmalib_matmul_bias_i16(" in open(out / "lib0.c").read()
    check_vs_ort(path, y, x, qp[name][0], e["scale_shift_max_rel_err"], what=f"fc matmul={matmul}")


def add_model(swap, relu, rng):
    """y = Q([Relu](Add(DQ(Q(a)), DQ(Q(b))))), int16 symmetric, the operands
    in either order: two graph inputs, so that the add alone is compared
    (the residual add needs no MMA alignment)."""
    a = rng.normal(size=(1, 32, 8, 8)).astype(np.float32)
    b = (rng.normal(size=(1, 32, 8, 8)) * 2.5).astype(np.float32)
    s = {"a": np.float32(np.abs(a).max() / QMAX), "b": np.float32(np.abs(b).max() / QMAX)}
    y = np.maximum(a + b, 0) if relu else a + b
    s["y"] = np.float32(np.abs(y).max() / QMAX)
    inits, nodes = [], []
    for t in ("a", "b"):
        inits += [numpy_helper.from_array(s[t], t + "_s"), numpy_helper.from_array(np.int16(0), t + "_z")]
        nodes += [helper.make_node("QuantizeLinear", [t, t + "_s", t + "_z"], [t + "_q"], name=t + "_Q"),
                  helper.make_node("DequantizeLinear", [t + "_q", t + "_s", t + "_z"], [t + "_dq"], name=t + "_DQ")]
    ops = ["b_dq", "a_dq"] if swap else ["a_dq", "b_dq"]
    nodes.append(helper.make_node("Add", ops, ["sum"], name="res_add"))
    last = "sum"
    if relu:
        nodes.append(helper.make_node("Relu", ["sum"], ["sum_r"], name="res_relu"))
        last = "sum_r"
    inits += [numpy_helper.from_array(s["y"], "y_s"), numpy_helper.from_array(np.int16(0), "y_z")]
    nodes += [helper.make_node("QuantizeLinear", [last, "y_s", "y_z"], ["y_q"], name="y_Q"),
              helper.make_node("DequantizeLinear", ["y_q", "y_s", "y_z"], ["y"], name="y_DQ")]
    vi = [helper.make_tensor_value_info(t, TensorProto.FLOAT, [1, 32, 8, 8]) for t in ("a", "b")]
    g = helper.make_graph(nodes, "add16", vi, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 8, 8])],
                          inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.checker.check_model(m, full_check=True)
    return m, {"a": a, "b": b}, s["y"]


@pytest.mark.parametrize("swap", [False, True], ids=["x_skip", "skip_x"])
@pytest.mark.parametrize("relu", [False, True], ids=["linear", "relu"])
def test_int16_residual_add_both_orders(swap, relu, tmp_path):
    model, feeds, o_s = add_model(swap, relu, np.random.default_rng(3))
    path, out, stdout, man, y = compile_run(tmp_path, model, feeds)
    assert "mmalib offload: 1 res_add" in stdout
    e = layers_of(man)["res_add"]
    assert e["kernel"] == "c7x_int16_residual_add_relu", e
    assert e["scale_shift_max_rel_err"] <= 2.0 ** -24
    src = open(out / "lib0.c").read()
    call = src[src.index("c7x_int16_residual_add_relu("):]
    call = call[:call.index(";")]
    assert f"/* has_relu */ {int(relu)}" in call
    # the multipliers are exact to 2^-30: only the roundings differ
    check_vs_ort(path, y, feeds, o_s, 0.0, extra=1, what=f"add swap={swap} relu={relu}")


def test_int16_block_offloads_every_layer_kind(tmp_path):
    """conv → dwconv → conv + skip add → GAP → FC: every MMALIB int16 kind in
    one network, the int16 GlobalAveragePool on the generic path between."""
    net = Net([1, 16, 12, 12], seed=4)
    c1 = net.conv("x", 32, relu=True)
    d = net.conv(c1, 32, groups=32, relu=True)
    c2 = net.conv(d, 32, k=1, relu=False)
    s = net.add(c2, c1, relu=True)
    f = net.gap_flatten(s)
    name = net.gemm(f, 32)
    x = x_input(net.x_shape)
    model, qp = net.qdq_model(x)
    path, out, stdout, man, y = compile_run(tmp_path, model, x)
    assert "mmalib offload: 2 conv2d, 1 dwconv2d, 1 res_add, 1 FC" in stdout
    ref = ort_run(path, x)
    db = sqnr_db(ref, y)
    q, q_ref = np.round(y / qp[name][0]), np.round(ref / qp[name][0])
    print(f"block: SQNR {db:.1f} dB, max |dq| {np.abs(q - q_ref).max():.0f} of {np.abs(q_ref).max():.0f}")
    assert db >= 30.0


# ---- declined layers: generic path, report names the rule ------------------

def test_asymmetric_int16_conv_is_declined(tmp_path):
    net = Net([1, 16, 10, 10], seed=6)
    name = net.conv("x", 32, relu=False)
    x = x_input(net.x_shape)
    lo, hi = float(x.min()), float(x.max())
    s = np.float32((hi - lo) / 65535)
    model, qp = net.qdq_model(x, zp_override={"x": (s, int(np.round(-32768 - lo / s)))})
    path, out, stdout, man, y = compile_run(tmp_path, model, x)
    e = layers_of(man)[name]
    assert "kernel" not in e and "d_zp != 0" in e["declined"], e
    assert "mmalib offload: none" in stdout
    assert "tidsp_conv2d_f32(" in open(out / "lib0.c").read()
    q, q_ref = np.round(y / qp[name][0]), np.round(ort_run(path, x) / qp[name][0])
    assert np.abs(q - q_ref).max() <= 1


@pytest.mark.parametrize("case", ["dwconv5x5", "c_out1"])
def test_int16_rule_declines_fall_back_to_the_generic_path(case, tmp_path):
    net = Net([1, 16, 10, 10], seed=7)
    if case == "dwconv5x5":
        name, rule = net.conv("x", 16, k=5, groups=16, relu=True), "not 3x3 (5x5; MMALIB-882)"
    else:
        # C_out 1: padding to 32 does not pay (C_out 48 is padded to 64)
        name, rule = net.conv("x", 1, relu=True), "C_out % 32 != 0 (C_out=1)"
    x = x_input(net.x_shape)
    model, qp = net.qdq_model(x)
    path, out, stdout, man, y = compile_run(tmp_path, model, x)
    e = layers_of(man)[name]
    assert rule in e.get("declined", ""), e
    assert len(man["offload"]["layers"]) == 1
    src = open(out / "lib0.c").read()
    assert "mmalib_" not in src and "tidsp_conv2d_f32(" in src
    q, q_ref = np.round(y / qp[name][0]), np.round(ort_run(path, x) / qp[name][0])
    assert np.abs(q - q_ref).max() <= 1


# ---- the int16 legalize path: float ops -> int16 MMA ------------------------

def float_graph(kind, rng):
    if kind == "conv":
        x_shape, w = [1, 16, 14, 14], rng.normal(size=(32, 16, 3, 3)).astype(np.float32) * 0.1
        b = rng.normal(size=32).astype(np.float32) * 0.1
        node = helper.make_node("Conv", ["x", "w", "b"], ["y"], name="fconv", pads=[1, 1, 1, 1], kernel_shape=[3, 3])
    else:
        x_shape, w = [64, 96], rng.normal(size=(96, 32)).astype(np.float32) * 0.1
        b = None
        node = helper.make_node("MatMul", ["x", "w"], ["y"], name="fmatmul")
    inits = [numpy_helper.from_array(w, "w")] + ([numpy_helper.from_array(b, "b")] if b is not None else [])
    g = helper.make_graph([node], "f", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    return m, x_shape, w, b


def numpy_conv(x, w, b):
    xp = np.pad(x[0].astype(np.float64), ((0, 0), (1, 1), (1, 1)))
    c, h, wd = x.shape[1:]
    acc = np.zeros((w.shape[0], h, wd))
    for dy in range(3):
        for dx in range(3):
            acc += np.einsum("oc,chw->ohw", w[:, :, dy, dx].astype(np.float64), xp[:, dy:dy + h, dx:dx + wd])
    return (acc + b[:, None, None])[None]


@pytest.mark.parametrize("kind", ["conv", "matmul"])
def test_float_layers_take_the_int16_legalize_path(kind, tmp_path):
    rng = np.random.default_rng(8)
    model, x_shape, w, b = float_graph(kind, rng)
    x = (rng.normal(size=x_shape) * 3).astype(np.float32)
    path, out, stdout, man, y = compile_run(tmp_path, model, x)
    layer = "fconv" if kind == "conv" else "fmatmul"
    kernel = "mmalib_conv2d_i16" if kind == "conv" else "mmalib_matmul_i16"
    e = layers_of(man)[layer]
    assert e["kernel"] == kernel, e
    assert f"{kernel}(" in open(out / "lib0.c").read()
    ref = numpy_conv(x, w, b) if kind == "conv" else x.astype(np.float64) @ w.astype(np.float64)
    db = sqnr_db(ref, y)
    print(f"legalize {kind}: SQNR {db:.1f} dB vs numpy float")
    assert db >= 45.0
    # without -mmalib=1 the same file stays float
    cstatic("compile", path, "-o", tmp_path / "generic", "-t", "c_static_lib")
    assert "mmalib_" not in open(tmp_path / "generic" / "lib0.c").read()


# ---- the c7x flavour ----------------------------------------------------------

def test_c7x_flavour_of_an_int16_model_builds_and_runs_like_the_host(tmp_path):
    net = Net([1, 16, 8, 8], seed=9)
    a = net.conv("x", 32, relu=True)
    b = net.conv(a, 32, groups=32, relu=False)
    net.add(a, b, relu=True)
    x = x_input(net.x_shape)
    model, _ = net.qdq_model(x)
    _, host_out, _, _, y_host = compile_run(tmp_path, model, x, tag="host")
    _, c7x_out, stdout, _, y_c7x = compile_run(tmp_path, model, x, target="c_static_lib -mcpu=c7x -mmalib=1",
                                               tag="c7x")
    assert "mmalib offload: 1 conv2d, 1 dwconv2d, 1 res_add" in stdout
    assert y_c7x.tobytes() == y_host.tobytes()
    for f in sorted(glob.glob(str(c7x_out / "*.c"))):
        p = subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-c", "-I", INCLUDE, "-I", STUB_DIR,
                            "-I", str(c7x_out), f, "-o", os.devnull], capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, f"{f} does not compile:\n{p.stderr}"


# ---- a PT2E int16 model (C7xMMAQuantizer) -------------------------------------

@pytest.mark.slow  # torch.export + the ONNX exporter: ~20 s
def test_pt2e_int16_model_is_fully_offloaded(tmp_path):
    """C7xMMAQuantizer(dtype="int16") → convert_pt2e → export_qdq_onnx (opset
    21): every conv, the depthwise conv, the residual add and the linear
    become MMALIB int16 calls; within 30 dB of ONNX Runtime on the file."""
    torch = pytest.importorskip("torch")
    import sys
    sys.path.insert(0, os.path.join(ROOT, "python"))
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from cstatic.export import export_qdq_onnx
    from cstatic.quantizer import C7xMMAQuantizer

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(16, 32, 3, padding=1)
            self.dw = torch.nn.Conv2d(32, 32, 3, padding=1, groups=32)
            self.c2 = torch.nn.Conv2d(32, 32, 1)
            self.fc = torch.nn.Linear(32, 64)

        def forward(self, x):
            a = torch.relu(self.c1(x))
            y = torch.relu(a + self.c2(torch.relu(self.dw(a))))
            return self.fc(torch.flatten(torch.nn.functional.adaptive_avg_pool2d(y, 1), 1))

    torch.manual_seed(0)
    example = (torch.randn(1, 16, 12, 12),)
    prepared = prepare_pt2e(torch.export.export(Block().eval(), example).module(), C7xMMAQuantizer(dtype="int16"))
    for _ in range(4):
        prepared(torch.randn(1, 16, 12, 12))
    path = export_qdq_onnx(convert_pt2e(prepared), example, str(tmp_path / "block16.onnx"), input_names=["x"])
    x = torch.randn(1, 16, 12, 12).numpy()
    _, out, stdout, man, y = compile_run(tmp_path, onnx.load(path), x)
    assert "mmalib offload: 2 conv2d, 1 dwconv2d, 1 res_add, 1 FC" in stdout
    assert all("kernel" in e for e in man["offload"]["layers"]), man["offload"]
    db = sqnr_db(ort_run(path, x), y)
    print(f"PT2E int16 block: SQNR {db:.1f} dB vs ORT")
    assert db >= 30.0
