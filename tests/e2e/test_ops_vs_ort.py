"""Single-op QDQ models, compiled by cstatic and compared with ONNX Runtime.

Each case is a tiny float model quantized by ORT's quantize_static (QDQ,
per-channel int8 weights, int8 or uint8 activations). With -requant=float
the compiled model must match ORT bit for bit on every element, except where
ORT itself computes in float with its own kernels (noted per case with the
share of exact elements required and why).
"""

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                      QuantType, quantize_static)

import cstatic
from conftest import ort_ref

OPSET = 17


def _init(name, arr):
    return numpy_helper.from_array(np.asarray(arr), name)


def _rng(seed):
    return np.random.default_rng(seed)


def conv_model(c_in=8, c_out=16, hw=10, k=3, stride=1, pad=1, group=1, dil=1, relu=True):
    r = _rng(1)
    w = (r.standard_normal((c_out, c_in // group, k, k)) * 0.3).astype(np.float32)
    b = (r.standard_normal(c_out) * 0.1).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[pad] * 4, strides=[stride] * 2,
                              group=group, dilations=[dil] * 2, kernel_shape=[k, k])]
    last = "c"
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["r"]))
        last = "r"
    nodes.append(helper.make_node("Identity", [last], ["y"]))
    out_hw = (hw + 2 * pad - dil * (k - 1) - 1) // stride + 1
    g = helper.make_graph(nodes, "conv",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c_in, hw, hw])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c_out, out_hw, out_hw])],
                          [_init("w", w), _init("b", b)])
    return g, {"x": (1, c_in, hw, hw)}


def gemm_model(k=32, n=10):
    r = _rng(2)
    w = (r.standard_normal((n, k)) * 0.2).astype(np.float32)
    b = (r.standard_normal(n) * 0.1).astype(np.float32)
    nodes = [helper.make_node("Flatten", ["x"], ["f"]),
             helper.make_node("Gemm", ["f", "w", "b"], ["y"], transB=1)]
    g = helper.make_graph(nodes, "gemm",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, k // 4, 2, 2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])],
                          [_init("w", w), _init("b", b)])
    return g, {"x": (1, k // 4, 2, 2)}


def matmul_model(m=6, k=16, n=12):
    r = _rng(3)
    w = (r.standard_normal((k, n)) * 0.2).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["y"])]
    g = helper.make_graph(nodes, "matmul",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, m, k])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, m, n])],
                          [_init("w", w)])
    return g, {"x": (1, m, k)}


def binary_model(op="Add", b_shape=(1, 8, 5, 5), relu=False):
    nodes = [helper.make_node(op, ["a", "b"], ["s"])]
    last = "s"
    if relu:
        nodes.append(helper.make_node("Relu", ["s"], ["r"]))
        last = "r"
    nodes.append(helper.make_node("Identity", [last], ["y"]))
    g = helper.make_graph(nodes, op.lower(),
                          [helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 8, 5, 5]),
                           helper.make_tensor_value_info("b", TensorProto.FLOAT, list(b_shape))],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 5, 5])])
    return g, {"a": (1, 8, 5, 5), "b": b_shape}


def unary_model(op, **attrs):
    """conv → op → conv, so that the op sits between two quantized layers."""
    r = _rng(4)
    w1 = (r.standard_normal((8, 4, 1, 1)) * 0.5).astype(np.float32)
    w2 = (r.standard_normal((8, 8, 1, 1)) * 0.5).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"]),
             helper.make_node(op, ["c1"], ["a"], **attrs),
             helper.make_node("Conv", ["a", "w2"], ["y"])]
    g = helper.make_graph(nodes, op.lower(),
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 6, 6])],
                          [_init("w1", w1), _init("w2", w2)])
    return g, {"x": (1, 4, 6, 6)}


def pool_model(op, out_hw, **attrs):
    """conv → pool → conv: quantize_static only quantizes a pool between
    quantized layers."""
    r = _rng(5)
    w1 = (r.standard_normal((6, 3, 1, 1)) * 0.5).astype(np.float32)
    w2 = (r.standard_normal((4, 6, 1, 1)) * 0.5).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"]),
             helper.make_node(op, ["c1"], ["p"], **attrs),
             helper.make_node("Conv", ["p", "w2"], ["y"])]
    g = helper.make_graph(nodes, op.lower(),
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 11, 11])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, out_hw, out_hw])],
                          [_init("w1", w1), _init("w2", w2)])
    return g, {"x": (1, 3, 11, 11)}


def movement_model():
    """ShuffleNet's channel shuffle and split, GoogLeNet's concat."""
    nodes = [helper.make_node("Split", ["x", "split"], ["s0", "s1"], axis=1),
             helper.make_node("Relu", ["s1"], ["r1"]),
             helper.make_node("Concat", ["s0", "r1"], ["c"], axis=1),
             helper.make_node("Reshape", ["c", "shape1"], ["r"]),
             helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3, 4]),
             helper.make_node("Reshape", ["t", "shape2"], ["y"])]
    g = helper.make_graph(nodes, "shuffle",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 4, 4])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 4, 4])],
                          [_init("split", np.array([4, 4], np.int64)),
                           _init("shape1", np.array([1, 2, 4, 4, 4], np.int64)),
                           _init("shape2", np.array([1, 8, 4, 4], np.int64))])
    return g, {"x": (1, 8, 4, 4)}


def float_ops_model():
    """Ops ORT runs in float between DQ and Q: ReduceMean, Softmax."""
    nodes = [helper.make_node("ReduceMean", ["x"], ["m"], axes=[2, 3], keepdims=0),
             helper.make_node("Softmax", ["m"], ["y"], axis=-1)]
    g = helper.make_graph(nodes, "float_ops",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 5, 5])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])])
    return g, {"x": (1, 16, 5, 5)}


# name → (builder, min exact share, why a share below 1 is expected)
CASES = {
    "conv3x3_relu": (lambda: conv_model(), 1.0, None),
    "conv_stride2_pad0": (lambda: conv_model(stride=2, pad=0, relu=False), 1.0, None),
    "conv_depthwise": (lambda: conv_model(c_in=8, c_out=8, group=8), 1.0, None),
    "conv_grouped_dilated": (lambda: conv_model(c_in=8, c_out=8, group=2, dil=2, pad=2), 1.0, None),
    "gemm": (gemm_model, 1.0, None),
    "matmul_3d": (matmul_model, 1.0, None),
    "add_relu": (lambda: binary_model("Add", relu=True), 1.0, None),
    "add_broadcast": (lambda: binary_model("Add", b_shape=(1, 8, 1, 1)), 1.0, None),
    "mul_broadcast": (lambda: binary_model("Mul", b_shape=(1, 8, 1, 1)), 1.0, None),
    "hardswish": (lambda: unary_model("HardSwish"), 1.0, None),
    "hardsigmoid": (lambda: unary_model("HardSigmoid", alpha=1.0 / 6, beta=0.5), 1.0, None),
    "clip6": (lambda: unary_model("Clip"), 1.0, None),
    "maxpool_ceil": (lambda: pool_model("MaxPool", 5, kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1), 1.0, None),
    "avgpool_pad": (lambda: pool_model("AveragePool", 6, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]), 1.0, None),
    "global_avgpool": (lambda: pool_model("GlobalAveragePool", 1), 1.0, None),
    "split_concat_shuffle": (movement_model, 1.0, None),
    "reducemean_softmax": (float_ops_model, 0.85,
                           "ORT fuses DQ→Softmax→Q into its uint8 QLinearSoftmax table kernel and drops "
                           "the input Q→DQ pair; cstatic runs Softmax in float (bit-exact with ORT's "
                           "float Softmax, tests/e2e/test_float_ops_vs_ort.py)"),
}


class _Reader(CalibrationDataReader):
    def __init__(self, shapes, n=8):
        r = _rng(10)
        self.data = iter([{k: r.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
                          for _ in range(n)])

    def get_next(self):
        return next(self.data, None)


def _build(tmp_path, name, act):
    graph, shapes = CASES[name][0]()
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 8
    fp = tmp_path / f"{name}_float.onnx"
    onnx.save(model, fp)
    qp = tmp_path / f"{name}_{act}.onnx"
    quantize_static(str(fp), str(qp), _Reader(shapes), quant_format=QuantFormat.QDQ, per_channel=True,
                    weight_type=QuantType.QInt8,
                    activation_type=QuantType.QInt8 if act == "s8" else QuantType.QUInt8)
    return qp, shapes


def run_cstatic(model, inputs, tmp_path, requant="float"):
    """The compiled model's outputs (a list) on the feeds `inputs`."""
    m = cstatic.compile(model, f"c_static_lib -requant={requant}", out=tmp_path / f"{model.stem}_{requant}")
    out = m.run(*(inputs[t.name] for t in m.inputs))
    return out if isinstance(out, list) else [out]


def run_ort(model, inputs):
    """ORT with every QDQ group fused: int8 QLinear ops allowed, as ORT does
    on ARM (on x86 it otherwise runs int8 layers that share an input in
    float; see tests/models/ORT_FUSIONS.md)."""
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.add_session_config_entry("session.qdqisint8allowed", "1")
    for key, value in ort_ref.exact_int8_config(str(model), {"session.qdqisint8allowed": "1"}).items():
        so.add_session_config_entry(key, value)
    sess = ort.InferenceSession(str(model), so, providers=["CPUExecutionProvider"])
    return sess.run(None, inputs)


@pytest.mark.parametrize("act", ["s8", "u8"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_op_matches_ort(tmp_path, name, act):
    model, shapes = _build(tmp_path, name, act)
    r = _rng(123)
    inputs = {k: r.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    ref = run_ort(model, inputs)
    got = run_cstatic(model, inputs, tmp_path)
    min_exact, why = CASES[name][1], CASES[name][2]
    for a, b in zip(got, ref):
        assert a.shape == b.shape and a.dtype == b.dtype
        exact = float(np.mean(a == b))
        step = np.max(np.abs(a - b))
        assert exact >= min_exact, f"{name}/{act}: {exact:.4f} exact (max diff {step}); {why or 'must be bit-exact'}"


# name → allowed output error in quantization steps. One requantized layer
# is within one step of ORT's float rounding; the pool cases sit between two
# convolutions, so a one-step difference in the pool's output can move the
# second convolution's output by one more step.
Q31_CASES = {"conv3x3_relu": 1, "gemm": 1, "add_relu": 1, "mul_broadcast": 1,
             "avgpool_pad": 2, "global_avgpool": 2}


@pytest.mark.parametrize("name", sorted(Q31_CASES))
def test_op_q31_close_to_ort(tmp_path, name):
    """Integer-only requantization stays within a step or two of ORT."""
    model, shapes = _build(tmp_path, name, "s8")
    r = _rng(321)
    inputs = {k: r.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
    ref = run_ort(model, inputs)
    got = run_cstatic(model, inputs, tmp_path, requant="q31")
    out_scale = None
    m = onnx.load(str(model))
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    for n in m.graph.node:
        if n.op_type == "DequantizeLinear" and n.input[0] not in inits:
            out_scale = float(inits[n.input[1]])  # the last activation DQ feeds the output
    for a, b in zip(got, ref):
        assert np.max(np.abs(a - b)) <= Q31_CASES[name] * out_scale * 1.0001
