"""Reference kernels vs ONNX Runtime, bit for bit.

The runtime (runtime/**/*.c) is built as a shared library and its kernels
are called through ctypes on the same random data that ONNX Runtime 1.30
(CPU provider) sees in a one-node model of the matching op. Every output
must be identical: the FLOAT formulas in include/cstatic/kernels.h claim to
be ORT's, rounding step by rounding step.

ORT runs 8-bit activations as uint8 on x86 (it rewrites int8 Q/DQ pairs to
uint8 with zp + 128, which is exact), so ORT gets uint8 activations and the
kernels get the int8 equivalent q − 128, zp − 128; weights stay int8.
Each case runs ORT with all graph optimizations (what a deployed session
does, e.g. the NHWC rewrite of QLinearConv) and with none.
"""
import ctypes
import ctypes.util
import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

from conftest import ort_ref, ort_u8s8_exact, runtime_library

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MAX_RANK = 6
REQUANT_FLOAT = 0
REQUANT_Q31 = 1

# Sizes and a few offsets of the ABI structs, compiled alongside the runtime
# so that the ctypes mirrors below are checked against the C compiler.
ABI_PROBE = r"""
#include <stddef.h>
#include "cstatic/kernels.h"
#define SZ(t) size_t probe_sizeof_##t(void) { return sizeof(t); }
SZ(tidsp_requant_params) SZ(tidsp_qdq_params) SZ(tidsp_conv2d_params)
SZ(tidsp_matmul_params) SZ(tidsp_broadcast) SZ(tidsp_add_i8_params)
SZ(tidsp_mul_i8_params) SZ(tidsp_pool2d_params) SZ(tidsp_avgpool_i8_params)
SZ(tidsp_gap_i8_params)
size_t probe_offsetof_conv_rq(void) { return offsetof(tidsp_conv2d_params, rq); }
size_t probe_offsetof_add_f(void) { return offsetof(tidsp_add_i8_params, f); }
size_t probe_offsetof_mul_r(void) { return offsetof(tidsp_mul_i8_params, r); }
size_t probe_offsetof_avg_kind(void) { return offsetof(tidsp_avgpool_i8_params, kind); }
"""


# Weight range for QLinearConv/QLinearMatMul cases: 7-bit weights never
# saturate vpmaddubsw (2·255·63 < 2^15), so use them where ORT is inexact.
W_LO, W_HI = (-128, 128) if ort_u8s8_exact() else (-64, 64)

i32 = ctypes.c_int32
f32 = ctypes.c_float


class RequantParams(ctypes.Structure):
    _fields_ = [("kind", i32), ("per_channel", i32), ("out_zp", i32),
                ("out_min", i32), ("out_max", i32)]


class QdqParams(ctypes.Structure):
    _fields_ = [("outer", i32), ("channels", i32), ("inner", i32), ("dtype", i32)]


class Conv2dParams(ctypes.Structure):
    _fields_ = [(n, i32) for n in (
        "n", "c_in", "h_in", "w_in", "c_out", "h_out", "w_out", "k_h", "k_w",
        "stride_h", "stride_w", "dil_h", "dil_w", "pad_top", "pad_left",
        "groups", "x_zp", "w_zp")] + [("rq", RequantParams), ("w_row_stride", i32), ("mlas_nchw", i32),
                                          ("w_layout", i32), ("sum_in_conv", i32), ("z_h", i32),
                                          ("z_w", i32), ("z_step_h", i32), ("z_step_w", i32)]


class MatmulParams(ctypes.Structure):
    _fields_ = [("m", i32), ("k", i32), ("n", i32), ("x_zp", i32),
                ("w_zp", i32), ("rq", RequantParams), ("w_row_stride", i32)]


class Broadcast(ctypes.Structure):
    _fields_ = [("rank", i32), ("shape", i32 * MAX_RANK),
                ("a_stride", i32 * MAX_RANK), ("b_stride", i32 * MAX_RANK)]


class AddParams(ctypes.Structure):
    _fields_ = [("bc", Broadcast), ("kind", i32), ("ra", f32), ("rb", f32),
                ("f", f32), ("a_zp", i32), ("b_zp", i32), ("y_zp", i32),
                ("y_min", i32), ("y_max", i32), ("domain_offset", i32)]


class MulParams(ctypes.Structure):
    _fields_ = [("bc", Broadcast), ("kind", i32), ("r", f32), ("a_zp", i32),
                ("b_zp", i32), ("y_zp", i32), ("y_min", i32), ("y_max", i32),
                ("domain_offset", i32)]


class Pool2dParams(ctypes.Structure):
    _fields_ = [(n, i32) for n in (
        "n", "c", "h_in", "w_in", "h_out", "w_out", "k_h", "k_w", "stride_h",
        "stride_w", "dil_h", "dil_w", "pad_top", "pad_left", "pad_bottom",
        "pad_right", "count_include_pad")]


class AvgpoolI8Params(ctypes.Structure):
    _fields_ = [("pool", Pool2dParams), ("kind", i32), ("x_scale", f32),
                ("y_scale", f32), ("x_zp", i32), ("y_zp", i32), ("y_min", i32),
                ("y_max", i32), ("domain_offset", i32)]


class GapI8Params(ctypes.Structure):
    _fields_ = [("nc", i32), ("hw", i32), ("x_zp", i32), ("rq", RequantParams)]


DTYPE = {np.int8: 2, np.uint8: 3}


@pytest.fixture(scope="module")
def lib(runtime_objects, tmp_path_factory):
    L = runtime_library(runtime_objects, tmp_path_factory, ABI_PROBE, "tidsp")
    for name in ("quantize", "dequantize", "conv2d_i8", "matmul_i8", "add_i8",
                 "mul_i8", "avgpool_i8", "global_avgpool_i8"):
        getattr(L, "tidsp_" + name).restype = i32
    return L


def ptr(a):
    return a.ctypes.data_as(ctypes.c_void_p)


def f32s(x):
    return np.float32(x)


def run_ort(model, feeds, level):
    onnx.checker.check_model(model)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = level
    for key, value in ort_ref.exact_int8_config(model).items():
        so.add_session_config_entry(key, value)
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)[0]


LEVELS = [ort.GraphOptimizationLevel.ORT_ENABLE_ALL, ort.GraphOptimizationLevel.ORT_DISABLE_ALL]


def make_model(node, inputs, output, initializers, opset=21, ms=False):
    graph = helper.make_graph([node], "g", inputs, [output], initializer=initializers)
    opsets = [helper.make_opsetid("", opset)]
    if ms:
        opsets.append(helper.make_opsetid("com.microsoft", 1))
    return helper.make_model(graph, opset_imports=opsets, ir_version=10)


def const(name, arr):
    return onnx.numpy_helper.from_array(np.asarray(arr), name)


def rand_scale(rng, lo=1e-3, hi=0.1):
    return f32s(np.exp(rng.uniform(np.log(lo), np.log(hi))))


def check_equal(ours, ref, what):
    ours = np.asarray(ours)
    ref = np.asarray(ref)
    assert ours.shape == ref.shape, what
    bad = np.flatnonzero(ours.reshape(-1) != ref.reshape(-1))
    assert bad.size == 0, (f"{what}: {bad.size}/{ours.size} differ, first at {bad[0]}: "
                           f"ours {ours.reshape(-1)[bad[0]]} ort {ref.reshape(-1)[bad[0]]}")


# ---------------------------------------------------------------------------
def test_abi_struct_sizes(lib):
    for t, cls in [("tidsp_requant_params", RequantParams), ("tidsp_qdq_params", QdqParams),
                   ("tidsp_conv2d_params", Conv2dParams), ("tidsp_matmul_params", MatmulParams),
                   ("tidsp_broadcast", Broadcast), ("tidsp_add_i8_params", AddParams),
                   ("tidsp_mul_i8_params", MulParams), ("tidsp_pool2d_params", Pool2dParams),
                   ("tidsp_avgpool_i8_params", AvgpoolI8Params), ("tidsp_gap_i8_params", GapI8Params)]:
        fn = getattr(lib, "probe_sizeof_" + t)
        fn.restype = ctypes.c_size_t
        assert fn() == ctypes.sizeof(cls), t
    for fn, off in [("probe_offsetof_conv_rq", Conv2dParams.rq.offset),
                    ("probe_offsetof_add_f", AddParams.f.offset),
                    ("probe_offsetof_mul_r", MulParams.r.offset),
                    ("probe_offsetof_avg_kind", AvgpoolI8Params.kind.offset)]:
        f = getattr(lib, fn)
        f.restype = ctypes.c_size_t
        assert f() == off, fn


# ---------------------------------------------------------------------------
# QuantizeLinear / DequantizeLinear, per tensor and per axis (axis 1)

def qdq_case(rng, np_type, per_axis):
    shape = [int(rng.integers(1, 3)), int(rng.integers(1, 6)), int(rng.integers(1, 9)),
             int(rng.integers(1, 40))]
    c = shape[1] if per_axis else 1
    info = np.iinfo(np_type)
    scale = np.array([rand_scale(rng) for _ in range(c)], np.float32)
    if rng.random() < 0.3:  # powers of two make exact .5 ties reachable
        scale = np.float32(2.0) ** rng.integers(-8, -2, size=c).astype(np.float32)
    zp = rng.integers(info.min, info.max + 1, size=c).astype(np_type)
    return shape, scale, zp


def qdq_params(shape, per_axis, np_type):
    if per_axis:
        return QdqParams(shape[0], shape[1], int(np.prod(shape[2:])), DTYPE[np_type])
    return QdqParams(1, 1, int(np.prod(shape)), DTYPE[np_type])


@pytest.mark.parametrize("np_type", [np.int8, np.uint8])
@pytest.mark.parametrize("per_axis", [False, True])
def test_quantize_linear(lib, np_type, per_axis):
    rng = np.random.default_rng(100 + per_axis * 2 + (np_type == np.uint8))
    for _ in range(8):
        shape, scale, zp = qdq_case(rng, np_type, per_axis)
        bshape = [1, -1, 1, 1] if per_axis else []
        x = (rng.standard_normal(shape) * 80).astype(np.float32) * scale.reshape(bshape or [1])
        flat = x.reshape(-1)
        k = min(flat.size, 6)
        # ties k + 0.5 (exact when the scale is a power of two), beyond range, NaN, ±inf
        flat[:k] = (np.arange(k) - 2.5).astype(np.float32) * scale.reshape(-1)[0]
        if flat.size > 12:
            flat[6:10] = [np.nan, np.inf, -np.inf, 1e30]
        onnx_type = TensorProto.INT8 if np_type == np.int8 else TensorProto.UINT8
        attrs = {"axis": 1} if per_axis else {}
        node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], **attrs)
        model = make_model(node, [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                           helper.make_tensor_value_info("y", onnx_type, shape),
                           [const("s", scale if per_axis else scale[0]),
                            const("z", zp if per_axis else zp[0])])
        ours = np.empty(shape, np_type)
        zp32 = zp.astype(np.int32)
        assert lib.tidsp_quantize(ctypes.byref(qdq_params(shape, per_axis, np_type)),
                                  ptr(scale), ptr(zp32), ptr(x), ptr(ours)) == 0
        for level in LEVELS:
            check_equal(ours, run_ort(model, {"x": x}, level), f"QuantizeLinear {shape} {np_type}")


@pytest.mark.parametrize("np_type", [np.int8, np.uint8])
@pytest.mark.parametrize("per_axis", [False, True])
def test_dequantize_linear(lib, np_type, per_axis):
    rng = np.random.default_rng(200 + per_axis * 2 + (np_type == np.uint8))
    info = np.iinfo(np_type)
    for _ in range(8):
        shape, scale, zp = qdq_case(rng, np_type, per_axis)
        q = rng.integers(info.min, info.max + 1, size=shape).astype(np_type)
        onnx_type = TensorProto.INT8 if np_type == np.int8 else TensorProto.UINT8
        attrs = {"axis": 1} if per_axis else {}
        node = helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], **attrs)
        model = make_model(node, [helper.make_tensor_value_info("q", onnx_type, shape)],
                           helper.make_tensor_value_info("y", TensorProto.FLOAT, shape),
                           [const("s", scale if per_axis else scale[0]),
                            const("z", zp if per_axis else zp[0])])
        ours = np.empty(shape, np.float32)
        zp32 = zp.astype(np.int32)
        assert lib.tidsp_dequantize(ctypes.byref(qdq_params(shape, per_axis, np_type)),
                                    ptr(scale), ptr(zp32), ptr(q), ptr(ours)) == 0
        for level in LEVELS:
            ref = run_ort(model, {"q": q}, level)
            check_equal(ours.view(np.uint32), ref.view(np.uint32), f"DequantizeLinear {shape}")


# ---------------------------------------------------------------------------
# QLinearConv (u8 activations for ORT, int8 for the kernel; s8 weights)

def conv_out(n, k, s, d, p0, p1):
    return (n + p0 + p1 - d * (k - 1) - 1) // s + 1


def conv_case(rng):
    kind = rng.choice(["dense", "grouped", "depthwise"])
    groups = 1 if kind == "dense" else (int(rng.integers(2, 4)) if kind == "grouped" else 0)
    cpg_in = int(rng.integers(1, 9)) if kind != "depthwise" else 1
    cpg_out = int(rng.integers(1, 9)) if kind != "depthwise" else int(rng.integers(1, 3))
    if kind == "depthwise":
        groups = int(rng.integers(2, 9))
    k_h, k_w = int(rng.integers(1, 6)), int(rng.integers(1, 6))
    s_h, s_w = int(rng.integers(1, 4)), int(rng.integers(1, 4))
    d_h, d_w = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    pads = [int(v) for v in rng.integers(0, 3, size=4)]  # top, left, bottom, right
    h = int(rng.integers(max(1, d_h * (k_h - 1) + 1 - pads[0] - pads[2]), 24))
    w = int(rng.integers(max(1, d_w * (k_w - 1) + 1 - pads[1] - pads[3]), 40))
    return dict(n=int(rng.integers(1, 3)), groups=groups, c_in=cpg_in * groups, c_out=cpg_out * groups,
                h=h, w=w, k=(k_h, k_w), s=(s_h, s_w), d=(d_h, d_w), pads=pads)


def conv_acc_numpy(x, w, x_zp, w_zp, c, h_out, w_out):
    """int64 Σ (x − x_zp)(w − w_zp) per output, by shifted slices (an oracle
    written differently from the kernel)."""
    n, c_in, h, wd = x.shape
    k_h, k_w = c["k"]
    (s_h, s_w), (d_h, d_w), (pt, pl, pb, pr), g = c["s"], c["d"], c["pads"], c["groups"]
    xp = np.full((n, c_in, h + pt + pb + s_h * h_out + d_h * k_h, wd + pl + pr + s_w * w_out + d_w * k_w),
                 x_zp, np.int64)
    xp[:, :, pt:pt + h, pl:pl + wd] = x
    xp -= x_zp
    wz = w.astype(np.int64) - w_zp
    cpg_in, cpg_out = c_in // g, w.shape[0] // g
    acc = np.zeros((n, w.shape[0], h_out, w_out), np.int64)
    for kh in range(k_h):
        for kw in range(k_w):
            patch = xp[:, :, kh * d_h:kh * d_h + s_h * h_out:s_h, kw * d_w:kw * d_w + s_w * w_out:s_w]
            for gi in range(g):
                acc[:, gi * cpg_out:(gi + 1) * cpg_out] += np.einsum(
                    "nchw,oc->nohw", patch[:, gi * cpg_in:(gi + 1) * cpg_in],
                    wz[gi * cpg_out:(gi + 1) * cpg_out, :, kh, kw])
    return acc


def run_conv_case(lib, rng, c, mode, per_channel, w_zp):
    k_h, k_w = c["k"]
    cpg_in = c["c_in"] // c["groups"]
    h_out = conv_out(c["h"], k_h, c["s"][0], c["d"][0], c["pads"][0], c["pads"][2])
    w_out = conv_out(c["w"], k_w, c["s"][1], c["d"][1], c["pads"][1], c["pads"][3])
    x_zp, y_zp = np.uint8(rng.integers(0, 256)), np.uint8(rng.integers(0, 256))
    taps = cpg_in * k_h * k_w
    if mode == "ties":  # small values: acc·M = acc·2^-m with small m ties often
        x_u8 = np.clip(int(x_zp) + rng.integers(-3, 4, size=(c["n"], c["c_in"], c["h"], c["w"])),
                       0, 255).astype(np.uint8)
        w_s8 = rng.integers(-4, 5, size=(c["c_out"], cpg_in, k_h, k_w)).astype(np.int8)
        spread = max(np.sqrt(taps) * 2 * 2.6, 120.0)
    else:
        x_u8 = rng.integers(0, 256, size=(c["n"], c["c_in"], c["h"], c["w"])).astype(np.uint8)
        w_s8 = rng.integers(W_LO, W_HI, size=(c["c_out"], cpg_in, k_h, k_w)).astype(np.int8)
        spread = np.sqrt(taps) * 74 * 74  # typical |acc|
    bias = rng.integers(-20000, 20000, size=c["c_out"]).astype(np.int32)
    if mode == "ties":
        bias = rng.integers(-50, 50, size=c["c_out"]).astype(np.int32)
    if mode == "random":
        xs = rand_scale(rng)
        ws = np.array([rand_scale(rng, 1e-3, 2e-2) for _ in range(c["c_out"])], np.float32)
        ys = f32s(xs * float(np.mean(ws)) * spread / 60.0)
    else:
        # powers of two: the multiplier is exact, so acc·M hits exact .5 ties
        xs = np.float32(2.0 ** -int(rng.integers(5, 9)))
        ws = (np.float32(2.0) ** -rng.integers(6, 9, size=c["c_out"])).astype(np.float32)
        shift = int(np.round(np.log2(spread / 60.0)))
        ys = np.float32(xs * ws[0] * np.float32(2.0) ** shift)
        if mode == "big_acc":  # |acc| > 2^24: float(acc) itself rounds
            bias = (rng.choice([-1, 1], size=c["c_out"]) * (2 ** 25 + rng.integers(0, 2 ** 20, size=c["c_out"]))).astype(np.int32)
            ys = np.float32(xs * ws[0] * np.float32(2.0) ** 19)
    if not per_channel:
        ws = np.full(c["c_out"], ws[0], np.float32)

    node = helper.make_node(
        "QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"],
        kernel_shape=[k_h, k_w], strides=list(c["s"]), dilations=list(c["d"]),
        pads=[c["pads"][0], c["pads"][1], c["pads"][2], c["pads"][3]], group=c["groups"])
    out_shape = [c["n"], c["c_out"], h_out, w_out]
    model = make_model(
        node, [helper.make_tensor_value_info("x", TensorProto.UINT8, list(x_u8.shape))],
        helper.make_tensor_value_info("y", TensorProto.UINT8, out_shape),
        [const("xs", xs), const("xz", x_zp), const("w", w_s8),
         const("ws", ws if per_channel else ws[0]),
         const("wz", np.full(c["c_out"], w_zp, np.int8) if per_channel else w_zp),
         const("ys", ys), const("yz", y_zp), const("b", bias)], opset=10)

    # the compiler's side: ORT's multiplier fl(fl(xs·ws[c]) / ys), int8 activations
    mult = ((np.float32(xs) * ws).astype(np.float32) / np.float32(ys)).astype(np.float32)
    p = Conv2dParams(c["n"], c["c_in"], c["h"], c["w"], c["c_out"], h_out, w_out, k_h, k_w,
                     c["s"][0], c["s"][1], c["d"][0], c["d"][1], c["pads"][0], c["pads"][1],
                     c["groups"], int(x_zp) - 128, int(w_zp),
                     RequantParams(REQUANT_FLOAT, 1 if per_channel else 0, int(y_zp) - 128, -128, 127))
    x_s8 = (x_u8.astype(np.int16) - 128).astype(np.int8)
    ours = np.empty(out_shape, np.int8)
    st = lib.tidsp_conv2d_i8(ctypes.byref(p), ptr(x_s8), ptr(w_s8), ptr(bias), ptr(mult), ptr(ours))
    assert st == 0, c
    ours_u8 = (ours.astype(np.int16) + 128).astype(np.uint8)
    for level in LEVELS:
        check_equal(ours_u8, run_ort(model, {"x": x_u8}, level), f"QLinearConv {mode} {c}")
    # Q31: the same multipliers as int32 significand + shift, integer only
    p.rq.kind = REQUANT_Q31
    ours_q31 = np.empty(out_shape, np.int8)
    st = lib.tidsp_conv2d_i8(ctypes.byref(p), ptr(x_s8), ptr(w_s8), ptr(bias), ptr(q31_blob(mult if per_channel else mult[:1])),
                             ptr(ours_q31))
    assert st == 0, c
    check_equal(ours_q31, ours, f"QLinearConv Q31 {mode} {c}")

    # The requantization formula, checked independently: exact acc from numpy,
    # then v = fl(float(acc)·M) → rne. Rounding ties away from zero or
    # converting acc by truncation would differ in the tie / big-acc modes.
    acc = conv_acc_numpy(x_u8.astype(np.int64), w_s8, int(x_zp), int(w_zp), c, h_out, w_out)
    acc = (acc + bias.reshape(1, -1, 1, 1)).astype(np.int32)  # no wrap at these sizes
    v = (acc.astype(np.float32) * mult.reshape(1, -1, 1, 1)).astype(np.float32)
    lo, hi = np.float32(-int(y_zp)), np.float32(255 - int(y_zp))
    y_rne = (np.rint(np.clip(v, lo, hi)) + int(y_zp)).astype(np.uint8)
    check_equal(ours_u8, y_rne, "numpy requant oracle")
    y_away = (np.trunc(np.clip(v, lo, hi) + np.copysign(np.float32(0.5), v)) + int(y_zp)).astype(np.uint8)
    unsaturated = int(np.count_nonzero((ours_u8 > 0) & (ours_u8 < 255)))
    return int(np.count_nonzero(y_away != y_rne)), unsaturated, ours_u8.size


def q31_blob(mult):
    """int32 significands then shifts: mult = m · 2^-s exactly."""
    fr, e = np.frexp(mult.astype(np.float64))
    m = np.ldexp(fr, 24).astype(np.int32)
    return np.concatenate([m, (24 - e).astype(np.int32)]).astype(np.int32)


def test_qlinearconv(lib):
    rng = np.random.default_rng(300)
    away_differs = {"random": 0, "ties": 0, "big_acc": 0}  # big_acc ties are rare by nature
    unsaturated = total = 0
    for case_i in range(60):
        mode = ["random", "random", "ties", "big_acc"][case_i % 4]
        w_zp = np.int8(0 if case_i % 3 else rng.integers(-20, 21))
        n_away, n_unsat, n = run_conv_case(lib, rng, conv_case(rng), mode,
                                           per_channel=case_i % 5 != 0, w_zp=w_zp)
        away_differs[mode] += n_away
        unsaturated, total = unsaturated + n_unsat, total + n
    # the tie mode must really produce ties, and outputs must not all clip,
    # or the comparison tests little
    assert away_differs["ties"] > 50, away_differs
    assert unsaturated > total // 2, (unsaturated, total)


# ---------------------------------------------------------------------------
# QLinearMatMul: A u8 [m][k] (int8 for the kernel), B s8 [k][n] per column

def test_qlinearmatmul(lib):
    rng = np.random.default_rng(400)
    for case_i in range(25):
        m, k, n = (int(v) for v in rng.integers(1, [40, 300, 40]))
        a_u8 = rng.integers(0, 256, size=(m, k)).astype(np.uint8)
        b_s8 = rng.integers(W_LO, W_HI, size=(k, n)).astype(np.int8)
        a_s, a_zp = rand_scale(rng), np.uint8(rng.integers(0, 256))
        per_col = case_i % 2 == 0
        b_s = np.array([rand_scale(rng, 1e-3, 2e-2) for _ in range(n)], np.float32)
        if not per_col:
            b_s[:] = b_s[0]
        b_zp = np.int8(0 if case_i % 3 else rng.integers(-10, 11))
        y_s = f32s(a_s * float(np.mean(b_s)) * np.sqrt(k) * 74 * 74 / 60.0)
        y_zp = np.uint8(rng.integers(0, 256))
        node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
        model = make_model(
            node, [helper.make_tensor_value_info("a", TensorProto.UINT8, [m, k])],
            helper.make_tensor_value_info("y", TensorProto.UINT8, [m, n]),
            [const("as", a_s), const("az", a_zp), const("b", b_s8),
             const("bs", b_s if per_col else b_s[0]),
             const("bz", np.full(n, b_zp, np.int8) if per_col else b_zp),
             const("ys", y_s), const("yz", y_zp)], opset=21)
        mult = ((np.float32(a_s) * b_s).astype(np.float32) / np.float32(y_s)).astype(np.float32)
        p = MatmulParams(m, k, n, int(a_zp) - 128, int(b_zp),
                         RequantParams(REQUANT_FLOAT, 1 if per_col else 0, int(y_zp) - 128, -128, 127))
        a_s8 = (a_u8.astype(np.int16) - 128).astype(np.int8)
        w = np.ascontiguousarray(b_s8.T)  # the kernel takes W [n][k]
        ours = np.empty((m, n), np.int8)
        assert lib.tidsp_matmul_i8(ctypes.byref(p), ptr(a_s8), ptr(w), None, ptr(mult), ptr(ours)) == 0
        ours_u8 = (ours.astype(np.int16) + 128).astype(np.uint8)
        for level in LEVELS:
            check_equal(ours_u8, run_ort(model, {"a": a_u8}, level), f"QLinearMatMul {m}x{k}x{n}")


# ---------------------------------------------------------------------------
# com.microsoft QLinearAdd / QLinearMul with broadcasting

def broadcast_params(shape_a, shape_b):
    out = np.broadcast_shapes(tuple(shape_a), tuple(shape_b))
    rank = len(out)
    bc = Broadcast()
    bc.rank = rank

    def strides(shape):
        shape = [1] * (rank - len(shape)) + list(shape)
        st, acc = [0] * rank, 1
        for d in range(rank - 1, -1, -1):
            st[d] = 0 if shape[d] == 1 and out[d] != 1 else acc
            acc *= shape[d]
        return st

    for d, (s, sa, sb) in enumerate(zip(out, strides(shape_a), strides(shape_b))):
        bc.shape[d], bc.a_stride[d], bc.b_stride[d] = s, sa, sb
    return bc, list(out)


BROADCAST_SHAPES = [
    ([2, 8, 5, 33], [2, 8, 5, 33]),      # same shape (one span)
    ([1, 8, 5, 7], [1, 8, 1, 1]),        # per-channel B: B per span
    ([1, 8, 1, 1], [1, 8, 5, 7]),        # per-channel A: A per span (ORT swaps)
    ([3, 1, 6], [1, 4, 6]),              # both broadcast, innermost shared
    ([3, 4, 1], [1, 4, 6]),              # A per span of 6
    ([37], [1]),                         # scalar B
    ([1], [45]),                         # scalar A
    ([1], [1]),                          # one element
    ([1, 1, 1], [1]),                    # one element, ranks differ
    ([2, 1, 1], [2, 1, 1]),              # trailing ones, 2 elements
    ([5, 1], [1, 1]),                    # B scalar, trailing one
    ([4, 65], [65]),                     # B repeats, ranks differ
    ([130], [130]),                      # > 128: AVX2 blocks plus tail
]


def qlinear_binary_case(lib, rng, op, shape_a, shape_b, relu):
    a_u8 = rng.integers(0, 256, size=shape_a).astype(np.uint8)
    b_u8 = rng.integers(0, 256, size=shape_b).astype(np.uint8)
    a_s, b_s = rand_scale(rng, 1e-3, 0.2), rand_scale(rng, 1e-3, 0.2)
    if op == "QLinearAdd":
        y_s = rand_scale(rng, 1e-3, 0.2)
    else:
        y_s = f32s(a_s * b_s * np.exp(rng.uniform(3, 8)))
    a_zp, b_zp, y_zp = (np.uint8(v) for v in rng.integers(0, 256, size=3))
    node = helper.make_node(op, ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"],
                            domain="com.microsoft")
    bc, out_shape = broadcast_params(shape_a, shape_b)
    model = make_model(
        node, [helper.make_tensor_value_info("a", TensorProto.UINT8, list(shape_a)),
               helper.make_tensor_value_info("b", TensorProto.UINT8, list(shape_b))],
        helper.make_tensor_value_info("y", TensorProto.UINT8, out_shape),
        [const("as", a_s), const("az", a_zp), const("bs", b_s), const("bz", b_zp),
         const("ys", y_s), const("yz", y_zp)], opset=17, ms=True)
    # int8 view for the kernel; y_min narrowed as a fused Relu would (zp)
    y_min = int(y_zp) - 128 if relu else -128
    if op == "QLinearAdd":
        ra, rb = f32s(a_s / y_s), f32s(b_s / y_s)
        # ORT's constant, contracted by its compiler: zc − fma(ra, za, fl(rb·zb))
        f = f32s(np.float32(y_zp) - fma32(ra, np.float32(a_zp), f32s(rb * np.float32(b_zp))))
        p = AddParams(bc, REQUANT_FLOAT, ra, rb, f, int(a_zp) - 128, int(b_zp) - 128,
                      int(y_zp) - 128, y_min, 127, 128)
        fn = lib.tidsp_add_i8
    else:
        r = f32s(f32s(a_s * b_s) / y_s)
        p = MulParams(bc, REQUANT_FLOAT, r, int(a_zp) - 128, int(b_zp) - 128,
                      int(y_zp) - 128, y_min, 127, 128)
        fn = lib.tidsp_mul_i8
    a_s8 = (a_u8.astype(np.int16) - 128).astype(np.int8)
    b_s8 = (b_u8.astype(np.int16) - 128).astype(np.int8)
    for kind in (REQUANT_FLOAT, REQUANT_Q31):  # Q31: the same formula in integers
        p.kind = kind
        ours = np.empty(out_shape, np.int8)
        assert fn(ctypes.byref(p), ptr(a_s8), ptr(b_s8), ptr(ours)) == 0
        ours_u8 = (ours.astype(np.int16) + 128).astype(np.uint8)
        for level in LEVELS:
            ref = run_ort(model, {"a": a_u8, "b": b_u8}, level)
            if relu:
                ref = np.maximum(ref, y_zp)
            check_equal(ours_u8, ref, f"{op} kind {kind} {shape_a} {shape_b}")


_libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
_libm.fmaf.restype = ctypes.c_float
_libm.fmaf.argtypes = [ctypes.c_float] * 3


def fma32(a, b, c):
    return np.float32(_libm.fmaf(float(a), float(b), float(c)))


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
def test_qlinear_binary(lib, op):
    rng = np.random.default_rng(500 + (op == "QLinearMul"))
    for shape_a, shape_b in BROADCAST_SHAPES:
        for rep in range(4):
            qlinear_binary_case(lib, rng, op, shape_a, shape_b, relu=rep == 3)


@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
def test_qlinear_binary_near_ties(lib, op):
    """Every (a, b) pair at many random scales: the candidates that differ
    from ORT's formula in one rounding (no FMA, no swap, int8 zero point)
    disagree on a few of these, so this case fails if the kernel drifts."""
    rng = np.random.default_rng(600 + (op == "QLinearMul"))
    for shape_a, shape_b in [([256, 256], [256, 256]), ([256, 1], [256, 256]), ([256, 256], [256, 1])]:
        for _ in range(10):
            qlinear_binary_case(lib, rng, op, shape_a, shape_b, relu=False)


# ---------------------------------------------------------------------------
# com.microsoft QLinearGlobalAveragePool and QLinearAveragePool

def test_qlinear_global_average_pool(lib):
    rng = np.random.default_rng(700)
    for _ in range(20):
        n, c, h, w = (int(v) for v in rng.integers(1, [3, 20, 15, 15]))
        x_u8 = rng.integers(0, 256, size=(n, c, h, w)).astype(np.uint8)
        x_s, y_s = rand_scale(rng), rand_scale(rng)
        x_zp, y_zp = (np.uint8(v) for v in rng.integers(0, 256, size=2))
        node = helper.make_node("QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"],
                                domain="com.microsoft", channels_last=0)
        model = make_model(node, [helper.make_tensor_value_info("x", TensorProto.UINT8, [n, c, h, w])],
                           helper.make_tensor_value_info("y", TensorProto.UINT8, [n, c, 1, 1]),
                           [const("xs", x_s), const("xz", x_zp), const("ys", y_s), const("yz", y_zp)],
                           opset=17, ms=True)
        mult = np.array([f32s(x_s / f32s(y_s * np.float32(h * w)))], np.float32)
        p = GapI8Params(n * c, h * w, int(x_zp) - 128,
                        RequantParams(REQUANT_FLOAT, 0, int(y_zp) - 128, -128, 127))
        x_s8 = (x_u8.astype(np.int16) - 128).astype(np.int8)
        ours = np.empty((n, c, 1, 1), np.int8)
        assert lib.tidsp_global_avgpool_i8(ctypes.byref(p), ptr(mult), ptr(x_s8), ptr(ours)) == 0
        ours_u8 = (ours.astype(np.int16) + 128).astype(np.uint8)
        for level in LEVELS:
            check_equal(ours_u8, run_ort(model, {"x": x_u8}, level), "QLinearGlobalAveragePool")


def test_qlinear_average_pool(lib):
    rng = np.random.default_rng(800)
    for case_i in range(40):
        k_h, k_w = (int(v) for v in rng.integers(1, 5, size=2))
        s_h, s_w = (int(v) for v in rng.integers(1, 4, size=2))
        pads = [int(v) for v in rng.integers(0, 2, size=4)]  # top, left, bottom, right
        pads = [min(pv, k - 1) for pv, k in zip(pads, [k_h, k_w, k_h, k_w])]
        n, c = int(rng.integers(1, 3)), int(rng.integers(1, 6))
        h = int(rng.integers(k_h, 20))
        w = int(rng.integers(k_w, 20))
        ceil = case_i % 3 == 0
        include_pad = case_i % 2
        rnd = np.ceil if ceil else np.floor
        h_out = int(rnd((h + pads[0] + pads[2] - k_h) / s_h)) + 1
        w_out = int(rnd((w + pads[1] + pads[3] - k_w) / s_w)) + 1
        if ceil:  # ONNX: the last window must start inside the input or left padding
            h_out -= (h_out - 1) * s_h >= h + pads[0]
            w_out -= (w_out - 1) * s_w >= w + pads[1]
        if k_h == h and k_w == w and not any(pads):
            k_w = 1  # the whole-image case runs ORT's global path: tested above
            w_out = (w - 1) // s_w + 1 if not ceil else -(-(w - 1) // s_w) + 1
        x_u8 = rng.integers(0, 256, size=(n, c, h, w)).astype(np.uint8)
        x_s, y_s = rand_scale(rng), rand_scale(rng)
        x_zp, y_zp = (np.uint8(v) for v in rng.integers(0, 256, size=2))
        node = helper.make_node("QLinearAveragePool", ["x", "xs", "xz", "ys", "yz"], ["y"],
                                domain="com.microsoft", kernel_shape=[k_h, k_w], strides=[s_h, s_w],
                                pads=[pads[0], pads[1], pads[2], pads[3]], ceil_mode=int(ceil),
                                count_include_pad=include_pad)
        model = make_model(node, [helper.make_tensor_value_info("x", TensorProto.UINT8, [n, c, h, w])],
                           helper.make_tensor_value_info("y", TensorProto.UINT8, [n, c, h_out, w_out]),
                           [const("xs", x_s), const("xz", x_zp), const("ys", y_s), const("yz", y_zp)],
                           opset=17, ms=True)
        pool = Pool2dParams(n, c, h, w, h_out, w_out, k_h, k_w, s_h, s_w, 1, 1,
                            pads[0], pads[1], pads[2], pads[3], include_pad)
        p = AvgpoolI8Params(pool, REQUANT_FLOAT, x_s, y_s, int(x_zp) - 128, int(y_zp) - 128, -128, 127, 128)
        x_s8 = (x_u8.astype(np.int16) - 128).astype(np.int8)
        ours = np.empty((n, c, h_out, w_out), np.int8)
        assert lib.tidsp_avgpool_i8(ctypes.byref(p), None, ptr(x_s8), ptr(ours)) == 0
        ours_u8 = (ours.astype(np.int16) + 128).astype(np.uint8)
        for level in LEVELS:
            check_equal(ours_u8, run_ort(model, {"x": x_u8}, level),
                        f"QLinearAveragePool k{k_h}x{k_w} s{s_h}x{s_w} pads{pads} ceil{ceil} cip{include_pad}")
