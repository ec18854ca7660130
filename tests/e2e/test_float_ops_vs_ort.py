"""Float fallback kernels vs ONNX Runtime, bit for bit.

In a QDQ model, ORT runs some ops in float between DequantizeLinear and
QuantizeLinear (ReduceMean, Softmax, pooling, Sigmoid, …). The reference
kernels mirror ORT 1.30's CPU kernels (Eigen's and MLAS's summation orders,
MLAS's exp and logistic polynomials; see runtime/kernels/ref/ort_float.h),
so every output here must equal ORT's exactly.

The runtime (runtime/**/*.c) is built as a shared library and called through
ctypes on the same random data ORT sees in a one-node float model (all graph
optimizations, one thread). Buffers are 64-byte aligned on both sides, as
arena tensors and ORT's buffers are: Eigen's sum order depends on the
address modulo 16.

Machine dependence: the Softmax exp follows MLAS's AVX512F kernel and the
Sigmoid MLAS's FMA3 kernel; on a CPU without AVX512F (or without FMA) ORT
dispatches to other kernels, and those two tests are skipped.
"""
import ctypes
import os

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import runtime_library
from test_kernels_vs_ort import Broadcast, broadcast_params  # one mirror of tidsp_broadcast

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MAX_RANK = 6
i32 = ctypes.c_int32
f32 = ctypes.c_float

ABI_PROBE = r"""
#include <stddef.h>
#include "cstatic/kernels.h"
#define SZ(t) size_t probe_sizeof_##t(void) { return sizeof(t); }
SZ(tidsp_reduce_params) SZ(tidsp_softmax_params) SZ(tidsp_gap_f32_params)
SZ(tidsp_pool2d_params) SZ(tidsp_unary_f32_params) SZ(tidsp_binary_f32_params)
SZ(tidsp_matmul_f32_params) SZ(tidsp_layer_norm_params)
"""


class ReduceParams(ctypes.Structure):
    _fields_ = [("rank", i32), ("in_shape", i32 * MAX_RANK), ("reduce_mask", i32),
                ("channels_last_order", i32)]


class SoftmaxParams(ctypes.Structure):
    _fields_ = [("outer", i32), ("axis_len", i32), ("inner", i32)]


class GapParams(ctypes.Structure):
    _fields_ = [("nc", i32), ("hw", i32), ("nchwc", i32)]


class Pool2dParams(ctypes.Structure):
    _fields_ = [(n, i32) for n in (
        "n", "c", "h_in", "w_in", "h_out", "w_out", "k_h", "k_w", "stride_h", "stride_w",
        "dil_h", "dil_w", "pad_top", "pad_left", "pad_bottom", "pad_right", "count_include_pad")]


class UnaryParams(ctypes.Structure):
    _fields_ = [("n", i32), ("op", i32), ("alpha", f32), ("beta", f32), ("lo", f32), ("hi", f32)]


class LayerNormParams(ctypes.Structure):
    _fields_ = [("outer", i32), ("norm", i32), ("epsilon", f32), ("variant", i32)]


class BinaryParams(ctypes.Structure):
    _fields_ = [("bc", Broadcast), ("op", i32)]


class MatmulParams(ctypes.Structure):
    _fields_ = [(n, i32) for n in ("batch", "m", "k", "n", "a_batch_stride", "b_batch_stride", "b_runtime")]


UNARY = {"Relu": 0, "Clip": 1, "Sigmoid": 2, "HardSigmoid": 3, "HardSwish": 4, "Erf": 5,
         "Gelu": 6, "GeluTanh": 7, "Sqrt": 8, "Neg": 9, "Reciprocal": 10, "Tanh": 11, "Exp": 12,
         "Sin": 13, "Cos": 14}
BINARY = {"Add": 0, "Sub": 1, "Mul": 2, "Div": 3}


@pytest.fixture(scope="module")
def lib(runtime_objects, tmp_path_factory):
    L = runtime_library(runtime_objects, tmp_path_factory, ABI_PROBE, "tidsp_float")
    for name, cls in (("tidsp_reduce_params", ReduceParams), ("tidsp_softmax_params", SoftmaxParams),
                      ("tidsp_gap_f32_params", GapParams), ("tidsp_pool2d_params", Pool2dParams),
                      ("tidsp_unary_f32_params", UnaryParams),
                      ("tidsp_binary_f32_params", BinaryParams),
                      ("tidsp_matmul_f32_params", MatmulParams),
                      ("tidsp_layer_norm_params", LayerNormParams)):
        fn = getattr(L, "probe_sizeof_" + name)
        fn.restype = ctypes.c_size_t
        assert fn() == ctypes.sizeof(cls), name
    for name in ("reduce_mean_f32", "softmax_f32", "global_avgpool_f32", "avgpool_f32",
                 "unary_f32", "binary_f32", "matmul_f32", "layer_norm_f32"):
        getattr(L, "tidsp_" + name).restype = i32
    return L


def aligned(arr, offset=0):
    """A float32 copy of arr whose data starts `offset` floats after a
    64-byte boundary."""
    arr = np.asarray(arr, np.float32)
    raw = np.empty(arr.size + 16 + offset, np.float32)
    start = (-(raw.ctypes.data // 4)) % 16 + offset
    out = raw[start:start + arr.size].reshape(arr.shape)
    out[...] = arr
    return out


def empty(shape):
    return aligned(np.zeros(shape, np.float32))


def ptr(a):
    return a.ctypes.data_as(ctypes.c_void_p)


def run_ort(node, inputs, opset, inits=()):
    ins = [helper.make_tensor_value_info(k, TensorProto.FLOAT, list(v.shape)) for k, v in inputs.items()]
    outs = [helper.make_tensor_value_info(node.output[0], TensorProto.FLOAT, None)]
    g = helper.make_graph([node], "g", ins, outs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    s = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    return s.run(None, inputs)[0]


def assert_bits(got, want, what):
    got = np.asarray(got, np.float32).reshape(-1)
    want = np.asarray(want, np.float32).reshape(-1)
    assert got.shape == want.shape, what
    bad = np.flatnonzero(got.view(np.int32) != want.view(np.int32))
    assert bad.size == 0, (f"{what}: {bad.size}/{got.size} differ, first at {bad[0]}: "
                           f"{got[bad[0]]!r} vs ORT {want[bad[0]]!r}")


def rand(rng, shape, scale=None):
    scale = scale if scale is not None else float(rng.choice([1e-3, 1.0, 30.0]))
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def _cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            return f.read().split()
    except OSError:
        return []


# ---------------------------------------------------------------- ReduceMean

def reduce_mean_case(lib, rng, shape, axes, keepdims, opset, offset=0):
    x = aligned(rand(rng, shape), offset)
    if opset >= 18:
        node = helper.make_node("ReduceMean", ["x", "axes"], ["y"], keepdims=keepdims)
        inits = [numpy_helper.from_array(np.array(axes, np.int64), "axes")]
    else:
        node = helper.make_node("ReduceMean", ["x"], ["y"], axes=axes, keepdims=keepdims)
        inits = []
    want = run_ort(node, {"x": x}, opset, inits)
    p = ReduceParams()
    p.rank = len(shape)
    for d, s in enumerate(shape):
        p.in_shape[d] = s
    p.reduce_mask = sum(1 << (a % len(shape)) for a in axes)
    y = empty(want.shape)
    assert lib.tidsp_reduce_mean_f32(ctypes.byref(p), ptr(x), ptr(y)) == 0
    assert_bits(y, want, f"ReduceMean {shape} axes {axes} offset {offset}")


@pytest.mark.parametrize("shape", [(1, 116, 7, 7), (2, 32, 14, 14), (1, 64, 28, 28), (1, 8, 1, 49),
                                   (1, 16, 1, 196), (3, 5, 3, 5), (1, 24, 2, 3), (1, 1, 1, 1)])
def test_reduce_mean_spatial(lib, shape):
    """x.mean([2, 3]): the KR path (Eigen's sum per contiguous H·W block)."""
    rng = np.random.default_rng(sum(shape))
    for keepdims in (0, 1):
        reduce_mean_case(lib, rng, shape, [2, 3], keepdims, 17)
        reduce_mean_case(lib, rng, shape, [-2, -1], keepdims, 18)


def test_reduce_mean_trailing_random(lib):
    rng = np.random.default_rng(11)
    for _ in range(60):
        rank = int(rng.integers(1, 6))
        shape = tuple(int(v) for v in rng.integers(1, 23, size=rank))
        n_red = int(rng.integers(1, rank + 1))
        reduce_mean_case(lib, rng, shape, list(range(rank - n_red, rank)),
                         int(rng.integers(0, 2)), int(rng.choice([13, 18])))


@pytest.mark.parametrize("shape", [(1, 96, 14, 14), (1, 576, 7, 7), (1, 16, 56, 56)])
def test_reduce_mean_channels_last_order(lib, shape):
    """After ORT's NHWC transform (downstream of int8 convs) the spatial mean
    is ReduceMean over axes [1, 2] of NHWC; channels_last_order reproduces
    it from the NCHW tensor."""
    rng = np.random.default_rng(sum(shape) + 1)
    x = aligned(rand(rng, shape))
    nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    node = helper.make_node("ReduceMean", ["x"], ["y"], axes=[1, 2], keepdims=1)
    want = run_ort(node, {"x": nhwc}, 17, []).reshape(shape[0], shape[1], 1, 1)
    p = ReduceParams()
    p.rank = 4
    for d, v in enumerate(shape):
        p.in_shape[d] = v
    p.reduce_mask = 12
    p.channels_last_order = 1
    y = empty(want.shape)
    assert lib.tidsp_reduce_mean_f32(ctypes.byref(p), ptr(x), ptr(y)) == 0
    assert_bits(y, want, f"ReduceMean NHWC order {shape}")


def test_reduce_mean_misaligned(lib):
    """Eigen's order depends on the address: an input that starts 1..3
    floats past a 16-byte boundary gives ORT another order; ours follows."""
    rng = np.random.default_rng(12)
    for offset in (1, 2, 3):
        reduce_mean_case(lib, rng, (1, 8, 7, 7), [2, 3], 1, 17, offset)
        reduce_mean_case(lib, rng, (3, 37), [1], 0, 17, offset)


@pytest.mark.parametrize("shape,axes", [
    ((40, 6), [0]), ((700, 5), [0]), ((3, 4, 8, 5), [0, 1]),      # RK
    ((3, 4, 5), [0, 2]), ((5, 6, 3, 9), [0, 2, 3]),               # RKR
    ((2, 3, 4, 5), [1, 3]), ((2, 3, 4, 5), [0, 2]),               # non-adjacent
    ((4, 1, 6), [1]), ((1, 5, 1, 7), [0, 2])])                    # size-1 dims only
def test_reduce_mean_other_axes(lib, shape, axes):
    rng = np.random.default_rng(len(shape) * 7 + sum(axes))
    reduce_mean_case(lib, rng, shape, axes, 1, 17)


# ---------------------------------------------------------------- Softmax

needs_avx512f = pytest.mark.skipif("avx512f" not in _cpu_flags(),
                                   reason="mirrors MLAS's AVX512F softmax kernel")


@needs_avx512f
def test_softmax_last_axis(lib):
    rng = np.random.default_rng(21)
    lengths = [1, 2, 3, 7, 10, 15, 16, 17, 31, 47, 48, 49, 64, 95, 96, 100, 143, 1000]
    for n in lengths:
        rows = int(rng.integers(1, 5))
        for scale in (1.0, 10.0, 100.0):
            x = aligned(rand(rng, (rows, n), scale))
            want = run_ort(helper.make_node("Softmax", ["x"], ["y"], axis=-1), {"x": x}, 13)
            p = SoftmaxParams(rows, n, 1)
            y = empty(x.shape)
            assert lib.tidsp_softmax_f32(ctypes.byref(p), ptr(x), ptr(y)) == 0
            assert_bits(y, want, f"Softmax rows {rows} len {n} scale {scale}")


@needs_avx512f
def test_softmax_other_axis(lib):
    """ORT transposes the axis last and runs the same per-row kernel."""
    rng = np.random.default_rng(22)
    for shape, axis in (((2, 10, 3), 1), ((5, 4, 6), 0), ((1, 33, 2, 2), 1)):
        x = aligned(rand(rng, shape, 5.0))
        want = run_ort(helper.make_node("Softmax", ["x"], ["y"], axis=axis), {"x": x}, 13)
        p = SoftmaxParams(int(np.prod(shape[:axis])), shape[axis], int(np.prod(shape[axis + 1:])))
        y = empty(x.shape)
        assert lib.tidsp_softmax_f32(ctypes.byref(p), ptr(x), ptr(y)) == 0
        assert_bits(y, want, f"Softmax {shape} axis {axis}")


# ---------------------------------------------------------------- pooling

# ORT's NCHWc block: 16 floats with AVX-512F, 8 with AVX2 only. On a graph
# input ORT pools in NCHWc (each plane summed in order) when the channels
# are whole blocks, else with MLAS's four-lane kernel; the compiler passes
# that choice for each block as the params' nchwc bits (TIDSP_MLAS_BLOCK16
# = 1, TIDSP_MLAS_BLOCK8 = 2; passes/mark_nchwc_global_pool.c), and the
# kernel reads its CPU's.
def _gap_nchwc_bits(c):
    return (1 if c % 16 == 0 else 0) | (2 if c % 8 == 0 else 0)


@pytest.mark.parametrize("shape", [(1, 32, 7, 7), (1, 16, 14, 14), (1, 3, 5, 3), (1, 8, 1, 1),
                                   (1, 4, 2, 2), (1, 5, 13, 17), (1, 24, 7, 7), (1, 1024, 7, 7),
                                   (2, 16, 7, 7), (2, 8, 7, 7)])
def test_global_average_pool(lib, shape):
    n, c, h, w = shape
    rng = np.random.default_rng(sum(shape) + 31)
    x = aligned(rand(rng, shape))
    want = run_ort(helper.make_node("GlobalAveragePool", ["x"], ["y"]), {"x": x}, 17)
    p = GapParams(shape[0] * shape[1], shape[2] * shape[3], _gap_nchwc_bits(c))
    y = empty(want.shape)
    assert lib.tidsp_global_avgpool_f32(ctypes.byref(p), ptr(x), ptr(y)) == 0
    assert_bits(y, want, f"GlobalAveragePool {shape}")


def pool_out(n, k, s, pb, pe, ceil):
    v = n + pb + pe - k
    o = (-(-v // s) if ceil else v // s) + 1
    if ceil and (o - 1) * s >= n + pb:  # ONNX: the last window must start inside
        o -= 1
    return o


AVGPOOL_CASES = [
    # (shape, kernel, strides, pads [t, l, b, r], ceil, count_include_pad)
    ((1, 8, 7, 7), (7, 7), (1, 1), (0, 0, 0, 0), 0, 0),      # whole image: global kernel
    ((1, 8, 14, 14), (2, 2), (2, 2), (0, 0, 0, 0), 0, 0),
    ((2, 4, 9, 11), (3, 3), (1, 1), (1, 1, 1, 1), 0, 0),
    ((2, 4, 9, 11), (3, 3), (1, 1), (1, 1, 1, 1), 0, 1),
    ((1, 4, 10, 10), (3, 3), (2, 2), (1, 1, 1, 1), 1, 0),
    ((1, 4, 10, 10), (3, 3), (2, 2), (1, 1, 1, 1), 1, 1),
    ((1, 3, 8, 9), (5, 2), (3, 1), (2, 0, 1, 1), 0, 0),
    ((1, 3, 12, 12), (3, 3), (3, 3), (0, 0, 0, 0), 0, 0),    # stride 3: generic kernel
    ((1, 3, 12, 13), (4, 4), (3, 3), (1, 2, 1, 0), 1, 1),
    ((1, 2, 40, 40), (33, 2), (1, 1), (0, 0, 0, 0), 0, 0),   # kernel > 32: generic
    ((1, 2, 6, 6), (6, 6), (1, 1), (1, 1, 1, 1), 0, 1),
    # channels a multiple of 16: ORT's NCHWc pooling
    ((1, 16, 7, 7), (7, 7), (1, 1), (0, 0, 0, 0), 0, 0),
    ((1, 32, 14, 14), (2, 2), (2, 2), (0, 0, 0, 0), 0, 0),
    ((1, 16, 9, 11), (3, 3), (1, 1), (1, 1, 1, 1), 0, 0),
    ((1, 16, 9, 11), (3, 3), (1, 1), (1, 1, 1, 1), 0, 1),
    ((1, 16, 10, 10), (3, 3), (2, 2), (1, 1, 1, 1), 1, 0),
    ((1, 16, 10, 10), (3, 3), (2, 2), (1, 1, 1, 1), 1, 1),
    ((2, 48, 12, 13), (4, 4), (3, 3), (1, 2, 1, 0), 1, 1),
]


@pytest.mark.parametrize("case", AVGPOOL_CASES)
@pytest.mark.parametrize("opset", [11, 19])
def test_average_pool(lib, case, opset):
    """AveragePool-19: ORT's own loop; earlier opsets: NCHWc pooling when the
    channels are a multiple of 16 (same order), else MLAS (not mirrored)."""
    shape, k, s, pads, ceil, cip = case
    if opset < 19 and shape[1] % 16:
        pytest.skip("ORT runs AveragePool-11 on these channels in MLAS's order (not mirrored)")
    rng = np.random.default_rng(sum(shape) + sum(k) + 7 * ceil + cip)
    x = aligned(rand(rng, shape))
    node = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=list(k), strides=list(s),
                            pads=[pads[0], pads[1], pads[2], pads[3]], ceil_mode=ceil,
                            count_include_pad=cip)
    want = run_ort(node, {"x": x}, opset)
    p = Pool2dParams()
    p.n, p.c, p.h_in, p.w_in = shape
    p.h_out = pool_out(shape[2], k[0], s[0], pads[0], pads[2], ceil)
    p.w_out = pool_out(shape[3], k[1], s[1], pads[1], pads[3], ceil)
    assert want.shape == (shape[0], shape[1], p.h_out, p.w_out)
    p.k_h, p.k_w = k
    p.stride_h, p.stride_w = s
    p.dil_h = p.dil_w = 1
    p.pad_top, p.pad_left, p.pad_bottom, p.pad_right = pads
    p.count_include_pad = cip
    y = empty(want.shape)
    assert lib.tidsp_avgpool_f32(ctypes.byref(p), ptr(x), ptr(y)) == 0
    assert_bits(y, want, f"AveragePool {case}")


# ---------------------------------------------------------------- elementwise

def unary_case(lib, x, op, node, opset, alpha=0.0, beta=0.0, lo=0.0, hi=0.0):
    x = aligned(x)
    want = run_ort(node, {"x": x}, opset)
    p = UnaryParams(x.size, UNARY[op], alpha, beta, lo, hi)
    y = empty(x.shape)
    assert lib.tidsp_unary_f32(ctypes.byref(p), ptr(x), ptr(y)) == 0
    assert_bits(y, want, f"{op} alpha {alpha} beta {beta}")


def unary_inputs(rng):
    return np.concatenate([rand(rng, 3000, 4.0), rand(rng, 1000, 20.0), rand(rng, 1000, 1e-3),
                           np.array([0.0, -0.0, 18.0, -18.0, 3.0, -3.0, 1e30, -1e30], np.float32),
                           np.linspace(-8, 8, 1027).astype(np.float32)])


@pytest.mark.skipif("fma" not in _cpu_flags(), reason="mirrors MLAS's FMA3 logistic kernel")
def test_sigmoid(lib):
    rng = np.random.default_rng(41)
    x = unary_inputs(rng)
    unary_case(lib, x, "Sigmoid", helper.make_node("Sigmoid", ["x"], ["y"]), 17)
    unary_case(lib, x[:13], "Sigmoid", helper.make_node("Sigmoid", ["x"], ["y"]), 17)


def test_hard_sigmoid_swish_relu_clip(lib):
    rng = np.random.default_rng(42)
    x = unary_inputs(rng)
    for alpha, beta in ((0.2, 0.5), (1 / 6, 0.5), (0.37, -0.1)):
        node = helper.make_node("HardSigmoid", ["x"], ["y"], alpha=alpha, beta=beta)
        unary_case(lib, x, "HardSigmoid", node, 17, float(np.float32(alpha)), float(np.float32(beta)))
    unary_case(lib, x, "HardSwish", helper.make_node("HardSwish", ["x"], ["y"]), 17)
    unary_case(lib, x, "Relu", helper.make_node("Relu", ["x"], ["y"]), 17)
    clip = helper.make_node("Clip", ["x", "lo", "hi"], ["y"])
    lo, hi = np.float32(-1.5), np.float32(2.25)
    x32 = aligned(x)
    want = run_ort(clip, {"x": x32}, 17, [numpy_helper.from_array(np.array(lo), "lo"),
                                          numpy_helper.from_array(np.array(hi), "hi")])
    p = UnaryParams(x32.size, UNARY["Clip"], 0.0, 0.0, float(lo), float(hi))
    y = empty(x32.shape)
    assert lib.tidsp_unary_f32(ctypes.byref(p), ptr(x32), ptr(y)) == 0
    assert_bits(y, want, "Clip")



def _edge_inputs(rng):
    """unary_inputs plus the branch points of MLAS's erf (0.921875, 3.725,
    3.925, scaled by √2 for Gelu) a few ulp either side, ±0 and infinities."""
    pts = []
    for c in (0.921875, 3.725, 3.925, 0.921875 * 2 ** 0.5, 3.925 * 2 ** 0.5, 9.0):
        v = np.float32(c)
        for k in range(-3, 4):
            pts += [np.nextafter(v, np.float32(np.inf) if k > 0 else np.float32(-np.inf)) if k else v]
    pts = np.array(pts, np.float32)
    return np.concatenate([unary_inputs(rng), pts, -pts,
                           np.array([np.inf, -np.inf, 1e-40, -1e-40], np.float32)])


@pytest.mark.skipif("avx512f" not in _cpu_flags(), reason="mirrors MLAS's AVX512F erf kernel")
def test_erf_gelu(lib):
    rng = np.random.default_rng(43)
    x = _edge_inputs(rng)
    unary_case(lib, x, "Erf", helper.make_node("Erf", ["x"], ["y"]), 17)
    unary_case(lib, x, "Gelu", helper.make_node("Gelu", ["x"], ["y"]), 20)
    unary_case(lib, x, "GeluTanh", helper.make_node("Gelu", ["x"], ["y"], approximate="tanh"), 20)
    # ORT fuses the decomposed form (as torch exports nn.GELU before opset
    # 20) into its Gelu kernel: the same bits as the Gelu op
    xs = aligned(x)
    inits = [numpy_helper.from_array(np.array(v, np.float32), n)
             for n, v in (("sqrt2", 1.4142135381698608), ("one", 1.0), ("half", 0.5))]
    nodes = [helper.make_node("Div", ["x", "sqrt2"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "one"], ["a"]), helper.make_node("Mul", ["x", "a"], ["m"]),
             helper.make_node("Mul", ["m", "half"], ["y"])]
    g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [x.size])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    want = ort.InferenceSession(m.SerializeToString(), so,
                                providers=["CPUExecutionProvider"]).run(None, {"x": xs})[0]
    p = UnaryParams(x.size, UNARY["Gelu"], 0.0, 0.0, 0.0, 0.0)
    y = empty(x.shape)
    assert lib.tidsp_unary_f32(ctypes.byref(p), ptr(xs), ptr(y)) == 0
    assert_bits(y, want, "Div/Erf/Add/Mul/Mul (fused by ORT)")


@pytest.mark.skipif("avx2" not in _cpu_flags() or "fma" not in _cpu_flags(),
                    reason="mirrors MLAS's AVX2 LayerNorm kernel")
@pytest.mark.parametrize("norm", (1, 3, 7, 8, 9, 12, 13, 64, 197, 768))
def test_layer_norm(lib, norm):
    rng = np.random.default_rng(60 + norm)
    for eps, with_bias, offset in ((1e-5, True, 0.0), (1e-6, False, 3.0), (1e-12, True, -500.0)):
        x = aligned(rand(rng, (5, norm)) + np.float32(offset))
        scale = aligned(rng.uniform(0.5, 1.5, norm).astype(np.float32))
        bias = aligned(rand(rng, norm, 0.3))
        inits = [numpy_helper.from_array(scale.copy(), "s")]
        ins = ["x", "s"]
        if with_bias:
            inits.append(numpy_helper.from_array(bias.copy(), "b"))
            ins.append("b")
        node = helper.make_node("LayerNormalization", ins, ["y"], axis=-1, epsilon=eps)
        want = run_ort(node, {"x": x}, 17, inits)
        p = LayerNormParams(5, norm, eps)
        y = empty(x.shape)
        assert lib.tidsp_layer_norm_f32(ctypes.byref(p), ptr(x), ptr(scale),
                                        ptr(bias) if with_bias else None, ptr(y)) == 0
        assert_bits(y, want, f"LayerNormalization norm {norm} eps {eps} bias {with_bias}")


@pytest.mark.skipif("fma" not in _cpu_flags(), reason="mirrors MLAS's FMA3 tanh kernel")
def test_tanh_sqrt_neg_reciprocal(lib):
    rng = np.random.default_rng(44)
    x = _edge_inputs(rng)
    unary_case(lib, x, "Tanh", helper.make_node("Tanh", ["x"], ["y"]), 17)
    unary_case(lib, x, "Neg", helper.make_node("Neg", ["x"], ["y"]), 17)
    unary_case(lib, x, "Reciprocal", helper.make_node("Reciprocal", ["x"], ["y"]), 17)
    unary_case(lib, np.abs(x), "Sqrt", helper.make_node("Sqrt", ["x"], ["y"]), 17)


@pytest.mark.parametrize("op", ["Exp", "Sin", "Cos"])
def test_exp_sin_cos_within_an_ulp(lib, op):
    """The C library's expf/sinf/cosf against ORT's Eigen versions: not
    mirrored, so within 2 ulp (measured: 86–93 % identical, at most 1 ulp)."""
    rng = np.random.default_rng(45)
    x = aligned(np.concatenate([rand(rng, 4000, 3.0), np.linspace(-20, 20, 999).astype(np.float32)]))
    want = run_ort(helper.make_node(op, ["x"], ["y"]), {"x": x}, 17)
    p = UnaryParams(x.size, UNARY[op], 0.0, 0.0, 0.0, 0.0)
    y = empty(x.shape)
    assert lib.tidsp_unary_f32(ctypes.byref(p), ptr(x), ptr(y)) == 0
    ulp = np.abs(y.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
    tiny = np.abs(want) < 1e-6  # sin/cos near their zeros: absolute error instead
    assert ulp[~tiny].max() <= 2, (op, int(ulp[~tiny].max()))
    assert not tiny.any() or np.abs(y - want)[tiny].max() <= 1e-7, op
    print(f"{op}: {np.mean(ulp == 0):.4f} identical, max {int(ulp[~tiny].max())} ulp")


def test_pow(lib):
    rng = np.random.default_rng(70)
    for e in (2.0, 3.0, 0.5, -0.5, 1.7):
        a = aligned(np.abs(rand(rng, 500, 3.0)) + np.float32(1e-3))
        b = aligned(np.array([e], np.float32))
        want = run_ort(helper.make_node("Pow", ["a", "b"], ["y"]), {"a": a, "b": b}, 17)
        bc, out = broadcast_params([500], [1])
        p = BinaryParams(bc, 4)
        y = empty(out)
        assert lib.tidsp_binary_f32(ctypes.byref(p), ptr(a), ptr(b), ptr(y)) == 0
        assert_bits(y, want, f"Pow exponent {e}")


@pytest.mark.parametrize("op", list(BINARY))
def test_binary(lib, op):
    rng = np.random.default_rng(51 + BINARY[op])
    for sa, sb in (([2, 8, 5, 7], [2, 8, 5, 7]), ([1, 8, 5, 7], [1, 8, 1, 1]),
                   ([1, 8, 1, 1], [1, 8, 5, 7]), ([3, 1, 6], [1, 4, 6]), ([37], [1])):
        a, b = aligned(rand(rng, sa)), aligned(rand(rng, sb))
        want = run_ort(helper.make_node(op, ["a", "b"], ["y"]), {"a": a, "b": b}, 17)
        bc, out = broadcast_params(sa, sb)
        p = BinaryParams(bc, BINARY[op])
        y = empty(out)
        assert lib.tidsp_binary_f32(ctypes.byref(p), ptr(a), ptr(b), ptr(y)) == 0
        assert_bits(y, want, f"{op} {sa} {sb}")
