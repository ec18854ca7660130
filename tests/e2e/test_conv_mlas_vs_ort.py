"""Float Conv, Gemm and MatMul with constant weights, one op per model,
compiled by cstatic and run on the host against ONNX Runtime's default
session (ORT_ENABLE_ALL: Conv through MLAS's NCHWc kernels, Gemm/MatMul
through MLAS's packed SGEMM): bit-identical on every output where the host
kernels follow MLAS's order (runtime/kernels/host/conv2d_f32__host_mlas.c,
matmul_f32__host_mlas.c; a CPU whose MLAS has fused multiply-adds,
conftest.mlas_float_order). The shapes cover each of MLAS's channel
groupings (NCHW input below the block, NCHWc blocks with zero-padded
channels, the pointwise kernel's 128-channel groups), pads, strides,
dilations and Gemm K strides of 256 with and without a bias, and the
convolutions ORT keeps in NCHW (NCHW_CONVS: MLAS's im2col + SGEMM, with
its matrix-vector kernels for one output pixel or one output channel per
group). tests/unit/test_kernel_mlas_f32.c checks the kernels against a
scalar model of the same order.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import cstatic
from conftest import mlas_float_order, ort_ref

pytestmark = pytest.mark.skipif(not mlas_float_order(),
                                reason="this CPU's MLAS has no fused multiply-adds: the reference order runs")

CONVS = [
    # (c_in, c_out, h, w, kernel, strides, pads [t, l, b, r], dilations[, groups])
    (3, 10, 24, 24, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1)),   # MTCNN P-Net conv1: NCHW input
    (10, 16, 11, 11, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1)),
    (16, 32, 9, 9, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1)),     # NCHWc, one block
    (28, 48, 11, 11, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1)),   # channels padded to a block multiple
    (64, 128, 3, 3, (2, 2), (1, 1), (0, 0, 0, 0), (1, 1)),
    (48, 20, 10, 9, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),    # pads and strides
    (24, 8, 12, 12, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2)),    # dilation
    (32, 4, 19, 19, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),    # pointwise
    (300, 6, 5, 7, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),     # pointwise, three channel groups
    (40, 6, 6, 6, (1, 1), (1, 1), (1, 1, 1, 1), (1, 1)),      # 1x1 with pads: not pointwise
    (32, 32, 12, 12, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 32),   # depthwise (PP-OCR's)
    (48, 48, 12, 11, (5, 5), (2, 2), (2, 2, 2, 2), (1, 1), 48),
    (8, 8, 12, 12, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 8),       # on a graph input: MLAS's generic conv,
    (24, 24, 9, 9, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 24),      # the same order for these shapes
    (64, 32, 8, 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2),       # grouped, whole blocks per group
    (96, 48, 7, 7, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 3),
    (64, 64, 6, 6, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 2),       # grouped pointwise
    (512, 32, 3, 3, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 2),      # two 128-channel groups per group
]


# Convolutions ORT keeps in NCHW (ungrouped with 16 or more input channels
# not a multiple of 4, depthwise with channels not a multiple of 4, other
# grouped ones; compiler/passes/match/ort_nchwc.c): MLAS's generic conv,
# im2col + SGEMM with K in (channel, kernel row, kernel column) order. Its
# SGEMM sums K in strides of 128 (more when few output pixels), one FMA
# chain each; one output channel per group takes the M = 1 kernel (blocks
# of 4 taps, multiply then add) and one output pixel the N = 1 kernel (8
# lanes, a reduction tree per block of 4/2/1 rows): PP-OCR cls's
# squeeze-excitation convs (22 -> 88 on a 1x1 output).
NCHW_CONVS = [
    (22, 88, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),    # PP-OCR cls conv2d_68: N = 1 kernel, 4-row blocks
    (22, 87, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),    # ... then a 2-row and a 1-row block
    (18, 7, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),
    (22, 9, 3, 3, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1)),     # 1x1 output from a 3x3 kernel (im2col)
    (22, 40, 8, 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),    # N = 64 < K = 198: one K stride of 256
    (22, 30, 20, 20, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),  # N >= K = 198: K strides of 128
    (150, 20, 8, 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),   # K = 1350: six strides of 256
    (22, 24, 6, 6, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),    # pointwise: SGEMM on the input itself
    (30, 90, 5, 7, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1)),    # strides and pads
    (10, 10, 12, 12, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 10),  # depthwise: the M = 1 kernel
    (10, 10, 12, 12, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 10),
    (6, 6, 9, 9, (5, 5), (1, 1), (2, 2, 2, 2), (1, 1), 6),
    (18, 18, 1, 1, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 18),
    (6, 6, 6, 5, (3, 5), (1, 1), (0, 0, 0, 0), (1, 1), 6),       # full-width kernel: B transposed, N = 1 kernel over pixels
    (150, 1, 4, 4, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),    # one output channel, K strides of 1024
    (1102, 1, 3, 3, (1, 1), (1, 1), (0, 0, 0, 0), (1, 1)),   # ... pointwise: all of K in one M = 1 call
    (20, 10, 5, 5, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2),     # grouped, not whole blocks
    (32, 16, 8, 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 4),
    (6, 3, 4, 4, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 3),
    # MLAS's block decides (16 with AVX-512F, 8 with AVX2 only): ORT keeps
    # these in NCHW at one block, NCHWc at the other (the kernel reads the
    # bit of its CPU's block, params.mlas_nchw)
    (14, 16, 9, 9, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1)),       # NCHW input at 16, a plain conv at 8
    (16, 16, 8, 8, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 2),    # a plain conv at 16, whole 8-blocks at 8
    (48, 48, 6, 6, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), 6),
]


def _run(tmp_path, model, x):
    y = cstatic.compile(model.SerializeToString(), "c_static_lib -allow-float=1", out=tmp_path / "out").run(x)
    return y[0] if isinstance(y, (list, tuple)) else y


def _same(got, ref, what):
    bad = np.flatnonzero(got.view(np.int32) != ref.view(np.int32))
    assert bad.size == 0, f"{what}: {bad.size}/{got.size} differ from ORT, first {got.flat[bad[0]]!r} vs {ref.flat[bad[0]]!r}"


def _conv_id(c):
    return f"{c[0]}to{c[1]}_{c[2]}x{c[3]}_k{c[4][0]}x{c[4][1]}s{c[5][0]}p{c[6][0]}d{c[7][0]}g{c[8] if len(c) > 8 else 1}"


@pytest.mark.parametrize("case", CONVS + NCHW_CONVS, ids=_conv_id)
def test_conv(tmp_path, case):
    c_in, c_out, h, w, k, s, pads, d = case[:8]
    groups = case[8] if len(case) > 8 else 1
    rng = np.random.default_rng(c_in * 31 + c_out)
    x = rng.standard_normal((1, c_in, h, w)).astype(np.float32)
    wt = (rng.standard_normal((c_out, c_in // groups) + k) / np.sqrt(c_in * k[0] * k[1])).astype(np.float32)
    b = rng.standard_normal(c_out).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=list(k), strides=list(s),
                            pads=list(pads), dilations=list(d), group=groups)
    graph = helper.make_graph([node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(wt, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    ref = ort_ref.session(model.SerializeToString()).run(None, {"x": x})[0]
    _same(_run(tmp_path, model, x), ref, f"Conv {case}")


@pytest.mark.parametrize("m,k,n,op", [(1, 576, 128, "Gemm"), (1, 1152, 256, "Gemm"), (3, 257, 10, "Gemm"),
                                      (2, 130, 7, "Gemm"), (4, 600, 33, "MatMul")])
def test_gemm(tmp_path, m, k, n, op):
    rng = np.random.default_rng(m * 7 + k + n)
    a = rng.standard_normal((m, k)).astype(np.float32)
    wt = (rng.standard_normal((n, k)) / np.sqrt(k)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    if op == "Gemm":  # torch.nn.Linear's export: B transposed, a bias
        node = helper.make_node("Gemm", ["a", "w", "b"], ["y"], transB=1)
        inits = [numpy_helper.from_array(wt, "w"), numpy_helper.from_array(b, "b")]
    else:
        node = helper.make_node("MatMul", ["a", "w"], ["y"])
        inits = [numpy_helper.from_array(np.ascontiguousarray(wt.T), "w")]
    graph = helper.make_graph([node], "mm", [helper.make_tensor_value_info("a", TensorProto.FLOAT, a.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    ref = ort_ref.session(model.SerializeToString()).run(None, {"a": a})[0]
    _same(_run(tmp_path, model, a), ref, f"{op} {m}x{k}x{n}")


# Conv + Add: ORT's NchwcTransformer feeds the other operand of an Add into
# a single-use NCHWc convolution when both operands are NCHWc tensors, and
# MLAS sums ((conv + operand) + bias); elsewhere the Add runs after the
# conv's bias (compiler/passes/fuse_conv_add_f32.c). Each graph is
# x -> conv "c1" (3x3) -> t1, then the listed nodes; conv names are
# c<i> with weights w<i>/b<i>, made by _conv() (c1 1x1 for a name ending
# in _1x1).
SUM_GRAPHS = {
    # c2's output read by the Add alone, t1 is NCHWc (c1's output): fused
    # (with 22 channels ORT keeps both convs NCHW, not a multiple of 4, and
    # fuses the Add as FusedConv's Z, whatever the operand)
    "residual_1x1": [("Conv", "c2", ["t1"], "t2", 1, 1), ("Add", ["t2", "t1"], "y")],
    "residual": [("Conv", "c2", ["t1"], "t2", 1, 1), ("Add", ["t2", "t1"], "y")],
    "residual_sum_first": [("Conv", "c2", ["t1"], "t2", 1, 1), ("Add", ["t1", "t2"], "y")],
    "relu_after": [("Conv", "c2", ["t1"], "t2", 3, 1), ("Add", ["t2", "t1"], "s"), ("Relu", ["s"], "y")],
    # a Relu over a single-use conv is ORT's FusedConv: still NCHWc
    "addend_fused_relu": [("Relu", ["t1"], "r1"), ("Conv", "c2", ["r1"], "t2", 3, 1), ("Add", ["t2", "r1"], "y")],
    # (ORT pads a depthwise conv's channels when they are a multiple of 4)
    "depthwise": [("Conv", "c2", ["t1"], "t2", 3, "dw"), ("Add", ["t2", "t1"], "y")],
    "depthwise_addend_graph_input": [("Conv", "c2", ["t1"], "t2", 3, "dw"), ("Add", ["t2", "x2"], "y")],
    # both operands single-use convs: ORT fuses into input 0's conv
    "two_convs": [("Conv", "c2", ["t1"], "t2", 1, 1), ("Conv", "c3", ["t1"], "t3", 3, 1), ("Add", ["t2", "t3"], "y")],
    # residual chain: the second Add's operand is the first Add's output
    "chain": [("Conv", "c2", ["t1"], "t2", 1, 1), ("Add", ["t2", "t1"], "s"),
              ("Conv", "c3", ["s"], "t3", 3, 1), ("Add", ["t3", "s"], "y")],
    # ORT 1.30 fuses a HardSwish into the conv too
    "addend_hardswish": [("HardSwish", ["t1"], "h1"), ("Conv", "c2", ["h1"], "t2", 1, 1), ("Add", ["t2", "h1"], "y")],
    # not fused by ORT: the operand is a graph input, or a Neg (runs in NCHW)
    "addend_graph_input": [("Conv", "c2", ["t1"], "t2", 1, 1), ("Add", ["t2", "x2"], "y")],
    "addend_graph_input_1x1": [("Conv", "c2", ["t1"], "t2", 1, 1), ("Add", ["t2", "x2"], "y")],
    "addend_neg": [("Neg", ["t1"], "h1"), ("Conv", "c2", ["h1"], "t2", 1, 1), ("Add", ["t2", "h1"], "y")],
    # a squeeze-excitation-like conv on a pooled 1x1 tensor: with 22 or 30
    # channels ORT runs it as MLAS's NCHW conv (N = 1 kernel), the Add as
    # its Z (the SGEMM's beta = 1), at either block; with 10/18 a depthwise
    # NCHW conv (M = 1 kernel) takes the Add the same way. 24 pooled
    # channels are NCHWc at block 8 only: ORT fuses the Add into the NCHWc
    # conv at 8, runs it after the conv at 16 (measured at 8, ORT 1.30)
    "pooled_residual": [("GlobalAveragePool", ["t1"], "g"), ("Conv", "c2", ["g"], "t2", 1, 1), ("Add", ["t2", "g"], "y")],
    # the conv's output also read elsewhere: not fused
    "conv_used_twice": [("Conv", "c2", ["t1"], "t2", 1, 1), ("Add", ["t2", "t1"], "s"), ("Mul", ["s", "t2"], "y")],
}


def _sum_model(nodes, c, h, w, rng, k1=3):
    inits = []

    def conv(name, inp, out, k, groups):
        g = c if groups == "dw" else groups
        wt = (rng.standard_normal((c, c // g, k, k)) / np.sqrt(c * k * k / g)).astype(np.float32)
        inits.extend([numpy_helper.from_array(wt, "w" + name[1:]),
                      numpy_helper.from_array(rng.standard_normal(c).astype(np.float32), "b" + name[1:])])
        return helper.make_node("Conv", [inp, "w" + name[1:], "b" + name[1:]], [out], name=name,
                                kernel_shape=[k, k], pads=[k // 2] * 4, group=g)

    onnx_nodes = [conv("c1", "x", "t1", k1, 1)]
    for spec in nodes:
        if spec[0] == "Conv":
            onnx_nodes.append(conv(spec[1], spec[2][0], spec[3], spec[4], spec[5]))
        else:
            onnx_nodes.append(helper.make_node(spec[0], spec[1], [spec[2]]))
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, c, h, w))]
    if any("x2" in s[1] for s in nodes if s[0] != "Conv"):
        inputs.append(helper.make_tensor_value_info("x2", TensorProto.FLOAT, (1, c, h, w)))
    graph = helper.make_graph(onnx_nodes, "sum", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8), len(inputs)


@pytest.mark.parametrize("name,c", [(name, c) for name in SUM_GRAPHS if not name.endswith("_1x1") for c in (16, 48)] +
                         [("residual_1x1", 22), ("residual_1x1", 20), ("addend_graph_input_1x1", 22),
                          ("depthwise", 24), ("depthwise", 20), ("depthwise_addend_graph_input", 24),
                          ("pooled_residual", 22), ("pooled_residual", 30), ("pooled_residual", 24),
                          ("depthwise", 10), ("depthwise", 18)])
def test_conv_add(tmp_path, name, c):
    rng = np.random.default_rng(c + len(name))
    model, n_in = _sum_model(SUM_GRAPHS[name], c, 9, 10, rng, k1=1 if name.endswith("_1x1") else 3)
    feeds = {"x": rng.standard_normal((1, c, 9, 10)).astype(np.float32)}
    if n_in > 1:
        feeds["x2"] = rng.standard_normal((1, c, 9, 10)).astype(np.float32)
    ref = ort_ref.session(model.SerializeToString()).run(None, feeds)[0]
    y = cstatic.compile(model.SerializeToString(), "c_static_lib -allow-float=1",
                        out=tmp_path / "out").run(*feeds.values())
    _same(y[0] if isinstance(y, (list, tuple)) else y, ref, f"{name} c{c}")


# Adds ORT fuses at one MLAS block only, or in another way at each (the
# compiler fuses where either block does and the kernel adds the sum
# after the conv at a block whose ORT did not; fuse_conv_add_f32.c).
# Optimized graphs of ORT 1.30 on an AVX2 + FMA3 CPU (block 8):
#   in10_residual: c1 10->16 is a plain NCHW conv, c2 an NCHWc one, the Add
#     separate (at 16 c1 is an NCHWc conv on NCHW input: fused);
#   in10_residual_relu_gap: the same, and the Relu and the pool in NCHW;
#   grouped_nobias: 2 groups of 8 channels, no bias: NCHWc conv with the sum
#     (at 16 a plain NCHW conv, which ConvAddActivationFusion skips
#     without a bias);
#   residual10: both convs plain NCHW at 8, the Add as FusedConv's Z (at 16
#     NCHWc convs on NCHW input, the NCHWc Sum).
# Each entry: input channels, then (op, inputs, output[, c_in, c_out, k,
# groups, bias]) rows.
BY_BLOCK = {
    "in10_residual": (10, [("Conv", ["x"], "t1", 10, 16, 3, 1, True), ("Conv", ["t1"], "t2", 16, 16, 1, 1, True),
                           ("Add", ["t2", "t1"], "y")]),
    "in10_residual_relu_gap": (10, [("Conv", ["x"], "t1", 10, 16, 3, 1, True),
                                    ("Conv", ["t1"], "t2", 16, 16, 1, 1, True), ("Add", ["t2", "t1"], "s"),
                                    ("Relu", ["s"], "r"), ("GlobalAveragePool", ["r"], "g"), ("Mul", ["r", "g"], "y")]),
    "grouped_nobias": (16, [("Conv", ["x"], "t1", 16, 16, 3, 1, True), ("Conv", ["t1"], "t2", 16, 16, 3, 2, False),
                            ("Add", ["t2", "t1"], "y")]),
    "residual10": (10, [("Conv", ["x"], "t1", 10, 10, 3, 1, True), ("Conv", ["t1"], "t2", 10, 10, 1, 1, True),
                        ("Add", ["t2", "t1"], "y")]),
}


@pytest.mark.parametrize("name", list(BY_BLOCK))
def test_conv_add_by_block(tmp_path, name):
    c_x, rows = BY_BLOCK[name]
    rng = np.random.default_rng(len(name))
    nodes, inits = [], []
    for i, r in enumerate(rows):
        if r[0] != "Conv":
            nodes.append(helper.make_node(r[0], r[1], [r[2]]))
            continue
        _, ins, out, c_in, c_out, k, groups, bias = r
        wt = (rng.standard_normal((c_out, c_in // groups, k, k)) / np.sqrt(c_in * k * k / groups)).astype(np.float32)
        inits.append(numpy_helper.from_array(wt, f"w{i}"))
        ins = ins + [f"w{i}"]
        if bias:
            inits.append(numpy_helper.from_array(rng.standard_normal(c_out).astype(np.float32), f"b{i}"))
            ins.append(f"b{i}")
        nodes.append(helper.make_node("Conv", ins, [out], kernel_shape=[k, k], pads=[k // 2] * 4, group=groups))
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, (1, c_x, 9, 10))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    x = rng.standard_normal((1, c_x, 9, 10)).astype(np.float32)
    ref = ort_ref.session(model.SerializeToString()).run(None, {"x": x})[0]
    _same(_run(tmp_path, model, x), ref, name)


# GlobalAveragePool: ORT pools an NCHWc tensor (a conv's output, an
# elementwise op of NCHWc tensors) or a graph input with whole channel
# blocks in NCHWc order, anything else with MLAS's four-lane kernel
# (passes/mark_nchwc_global_pool.c). Graphs as SUM_GRAPHS (x -> c1 -> t1).
GAP_GRAPHS = {
    "after_conv": [("GlobalAveragePool", ["t1"], "y")],
    "after_conv_se": [("GlobalAveragePool", ["t1"], "g"), ("Mul", ["t1", "g"], "y")],
    "after_hardsigmoid_mul": [("HardSigmoid", ["t1"], "h"), ("Mul", ["t1", "h"], "u"),
                              ("GlobalAveragePool", ["u"], "g"), ("Mul", ["u", "g"], "y")],
    "after_neg": [("Neg", ["t1"], "u"), ("GlobalAveragePool", ["u"], "y")],
    "after_neg_se": [("Neg", ["t1"], "u"), ("GlobalAveragePool", ["u"], "g"), ("Mul", ["u", "g"], "y")],
    "graph_input": [("GlobalAveragePool", ["x2"], "g"), ("Add", ["t1", "g"], "y")],
}


@pytest.mark.parametrize("c", [16, 24, 32])
@pytest.mark.parametrize("name", list(GAP_GRAPHS))
def test_global_average_pool(tmp_path, name, c):
    rng = np.random.default_rng(c * 3 + len(name))
    model, n_in = _sum_model(GAP_GRAPHS[name], c, 11, 13, rng)
    feeds = {"x": rng.standard_normal((1, c, 11, 13)).astype(np.float32)}
    if n_in > 1:
        feeds["x2"] = rng.standard_normal((1, c, 11, 13)).astype(np.float32)
    ref = ort_ref.session(model.SerializeToString()).run(None, feeds)[0]
    y = cstatic.compile(model.SerializeToString(), "c_static_lib -allow-float=1",
                        out=tmp_path / "out").run(*feeds.values())
    _same(y[0] if isinstance(y, (list, tuple)) else y, ref, f"{name} c{c}")


# MatMul/Gemm whose B is a runtime tensor: ORT cannot prepack it and runs
# MLAS's unpacked SGEMM, whose K stride follows N and K (128 when N >= K,
# up to 1024 for N <= 16; matmul_f32__host_mlas.c). Each case below sums in
# a K stride other than the packed path's 256, except the attention shapes
# of Swin (A·V) and ViT (Q·Kᵀ, A·V), which sum K in one stride.
RUNTIME_B = [
    # (a shape, b shape, op, transB)
    ((20, 200), (200, 300), "MatMul", 0),            # N >= K > 128: strides of 128
    ((2, 5, 300), (2, 300, 100), "MatMul", 0),       # batched, N in (64, K): 128
    ((1, 2, 197, 197), (1, 2, 197, 197), "MatMul", 0),
    ((20, 600), (600, 30), "MatMul", 0),             # N <= 32: 512
    ((10, 2000), (2000, 8), "MatMul", 0),            # N <= 16: 1024
    ((7, 700), (40, 700), "Gemm", 1),                # transposed B and a bias (beta = 1): 256
    ((64, 3, 49, 49), (64, 3, 49, 32), "MatMul", 0),  # Swin's A·V
    ((1, 12, 197, 64), (1, 12, 64, 197), "MatMul", 0),  # ViT's Q·Kᵀ
    ((1, 12, 197, 197), (1, 12, 197, 64), "MatMul", 0),  # ViT's A·V
]


@pytest.mark.parametrize("case", RUNTIME_B, ids=lambda c: f"{c[2]}_{'x'.join(map(str, c[0]))}_{'x'.join(map(str, c[1]))}")
def test_matmul_runtime_b(tmp_path, case):
    a_shape, b_shape, op, trans_b = case
    rng = np.random.default_rng(sum(a_shape) * 13 + sum(b_shape))
    a = rng.standard_normal(a_shape).astype(np.float32)
    b = rng.standard_normal(b_shape).astype(np.float32)
    inputs = [helper.make_tensor_value_info("a", TensorProto.FLOAT, a.shape),
              helper.make_tensor_value_info("b", TensorProto.FLOAT, b.shape)]
    inits = []
    if op == "Gemm":
        bias = rng.standard_normal(b_shape[0]).astype(np.float32)
        node = helper.make_node("Gemm", ["a", "b", "c"], ["y"], transB=trans_b)
        inits = [numpy_helper.from_array(bias, "c")]
    else:
        node = helper.make_node("MatMul", ["a", "b"], ["y"])
    graph = helper.make_graph([node], "mm", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    ref = ort_ref.session(model.SerializeToString()).run(None, {"a": a, "b": b})[0]
    got = cstatic.compile(model.SerializeToString(), "c_static_lib -allow-float=1", out=tmp_path / "out").run(a, b)
    got = got[0] if isinstance(got, (list, tuple)) else got
    _same(np.asarray(got).reshape(ref.shape), ref, f"{op} {a_shape} @ {b_shape} (runtime B)")


# PyTorch's SDPA export scales Q and Kᵀ by sqrt(1/sqrt(d)) each; ORT's
# MatMulScaleFusion folds such constant scalar Muls into FusedMatMul's
# alpha = fl(s_a·s_b) applied to the raw product (ViT's attention scores).
# The compiler does the same for K <= 128 (legalize_matmul.c).
@pytest.mark.parametrize("scaled", ["both", "a", "b"])
def test_matmul_scaled_inputs(tmp_path, scaled):
    rng = np.random.default_rng(len(scaled))
    q = rng.standard_normal((1, 4, 50, 64)).astype(np.float32)
    k = rng.standard_normal((1, 4, 64, 50)).astype(np.float32)
    s = np.array([np.float32(0.125) ** np.float32(0.5)], np.float32)
    nodes, a_in, b_in = [], "q", "k"
    if scaled in ("both", "a"):
        nodes.append(helper.make_node("Mul", ["q", "s"], ["qs"]))
        a_in = "qs"
    if scaled in ("both", "b"):
        nodes.append(helper.make_node("Mul", ["s", "k"], ["ks"]))
        b_in = "ks"
    nodes.append(helper.make_node("MatMul", [a_in, b_in], ["y"]))
    graph = helper.make_graph(nodes, "sdpa", [helper.make_tensor_value_info("q", TensorProto.FLOAT, q.shape),
                                              helper.make_tensor_value_info("k", TensorProto.FLOAT, k.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(s, "s")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    ref = ort_ref.session(model.SerializeToString()).run(None, {"q": q, "k": k})[0]
    got = cstatic.compile(model.SerializeToString(), "c_static_lib -allow-float=1", out=tmp_path / "out").run(q, k)
    got = got[0] if isinstance(got, (list, tuple)) else got
    _same(np.asarray(got).reshape(ref.shape), ref, f"MatMul with {scaled} input(s) scaled")


# Float ConvTranspose: ORT runs, per group, MLAS's SGEMM of the transposed
# weights by the input (a runtime B: the unpacked SGEMM's K stride, from
# K = c_in/groups and N = h_in·w_in) into columns, then col2im adds each
# output's taps in kernel-row, kernel-column order onto 0, then the bias
# (conv_transpose2d_f32__host_mlas.c). The reference scatters in another
# order: every case here fails with TIDSP_KERNELS=ref.
CONV_TRANSPOSES = [
    # (c_in, c_out, h, w, kernel, strides, pads [t, l, b, r], dilations, groups, output_padding, bias)
    (24, 24, 40, 40, (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), 1, (0, 0), False),  # PP-OCR det's two
    (24, 1, 20, 20, (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), 1, (0, 0), True),
    (16, 8, 9, 7, (3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1, (0, 0), True),      # 9 overlapping taps
    (32, 16, 8, 8, (4, 4), (2, 2), (1, 1, 1, 1), (1, 1), 1, (0, 0), True),     # the usual 2x upsampler
    (12, 6, 7, 6, (3, 3), (2, 2), (1, 0, 2, 1), (1, 1), 1, (1, 1), True),      # unequal pads, output_padding
    (8, 6, 6, 6, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), 1, (0, 0), True),       # dilation
    (12, 8, 6, 5, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 4, (0, 0), True),      # groups
    (300, 4, 5, 6, (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), 1, (0, 0), True),     # K = 300, N = 30: strides of 512
    (200, 3, 15, 15, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), 1, (0, 0), False),  # N >= K: strides of 128
]


@pytest.mark.parametrize("case", CONV_TRANSPOSES,
                         ids=lambda c: f"{c[0]}to{c[1]}_{c[2]}x{c[3]}_k{c[4][0]}s{c[5][0]}p{c[6][0]}d{c[7][0]}g{c[8]}")
def test_conv_transpose(tmp_path, case):
    c_in, c_out, h, w, k, s, pads, d, groups, out_pad, with_bias = case
    rng = np.random.default_rng(c_in * 17 + c_out + h)
    x = rng.standard_normal((1, c_in, h, w)).astype(np.float32)
    wt = (rng.standard_normal((c_in, c_out // groups) + k) / np.sqrt(c_in)).astype(np.float32)
    inits = [numpy_helper.from_array(wt, "w")]
    if with_bias:
        inits.append(numpy_helper.from_array(rng.standard_normal(c_out).astype(np.float32), "b"))
    node = helper.make_node("ConvTranspose", ["x", "w"] + (["b"] if with_bias else []), ["y"], kernel_shape=list(k),
                            strides=list(s), pads=list(pads), dilations=list(d), group=groups,
                            output_padding=list(out_pad))
    graph = helper.make_graph([node], "convt", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    ref = ort_ref.session(model.SerializeToString()).run(None, {"x": x})[0]
    _same(_run(tmp_path, model, x), ref, f"ConvTranspose {case}")


def test_conv_transpose_then_add(tmp_path):
    """PP-OCR det's form: a ConvTranspose without a bias, then an Add of a
    [1, C, 1, 1] constant (ORT runs the Add after the col2im)."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 24, 10, 10)).astype(np.float32)
    wt = (rng.standard_normal((24, 24, 2, 2)) / 5).astype(np.float32)
    b = rng.standard_normal((1, 24, 1, 1)).astype(np.float32)
    nodes = [helper.make_node("ConvTranspose", ["x", "w"], ["t"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Add", ["t", "b"], ["y"])]
    graph = helper.make_graph(nodes, "convt_add", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(wt, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    ref = ort_ref.session(model.SerializeToString()).run(None, {"x": x})[0]
    _same(_run(tmp_path, model, x), ref, "ConvTranspose then Add")


def test_conv_transpose_1d(tmp_path):
    """A 1-D ConvTranspose: ORT takes its N-D col2im (same tap order), the
    compiler a 2-D one of height 1."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 20, 33)).astype(np.float32)
    wt = (rng.standard_normal((20, 6, 5)) / 4).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], kernel_shape=[5], strides=[2], pads=[2, 1])
    graph = helper.make_graph([node], "convt1d", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(wt, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    ref = ort_ref.session(model.SerializeToString()).run(None, {"x": x})[0]
    _same(np.asarray(_run(tmp_path, model, x)).reshape(ref.shape), ref, "ConvTranspose 1-D")
