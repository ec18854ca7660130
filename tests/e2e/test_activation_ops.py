"""LeakyRelu and PRelu, compiled by cstatic and compared with ONNX Runtime
bit for bit (the ops the real networks of issue 12 need: YOLO-style and OCR
detectors use LeakyRelu, facenet's MTCNN per-channel PRelu).

- float models: every output element, ±0, NaNs, infinities and subnormals
  included, equals ORT's (LeakyRelu and PRelu are one multiply and a
  select on x >= 0);
- quantized models (ORT quantize_static, int8 and uint8 activations): a
  LeakyRelu between DQ and Q becomes one int8 table, as ORT's
  QLinearLeakyRelu; a PRelu (which ORT runs in float between them) one
  table per channel of what DQ → PRelu → Q computes, also when a MaxPool
  sits between the PRelu and the Q (the pool then runs on int8): ORT's
  bytes either way;
- a float Add, Sub, Mul or Div with a one-element float constant between
  DQ and Q (PP-OCR's hard-swish x·clip(x + 3, 0, 6)/6, whose Div ORT runs
  in float): one int8 table of what DQ → op → Q computes, ORT's bytes.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

from cstatic_cli import cstatic
from test_float_ops_vs_ort import assert_bits  # one bit-for-bit comparison

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import ort_ref  # noqa: E402

OPSET = 17

SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, -1e-45, 1.2e-38, -1.2e-38,
                     3.4e38, -3.4e38, 1.0, -1.0], np.float32)
# NaNs with payloads (both signs) as bit patterns
NAN_BITS = np.array([0x7fc00001, 0xffc12345, 0x7f800001], np.uint32)


def special_input(shape, seed):
    r = np.random.default_rng(seed)
    x = (r.standard_normal(shape) * r.choice([1e-3, 1.0, 50.0], size=shape)).astype(np.float32)
    flat = x.reshape(-1)
    specials = np.concatenate([SPECIALS, NAN_BITS.view(np.float32)])
    flat[:specials.size] = specials
    return x


def save_model(path, nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, path.stem, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def run_cstatic(model, feeds, tmp_path, n_outputs=1):
    out_dir = tmp_path / f"{model.stem}_c"
    cstatic("compile", model, "-o", out_dir, "-q")
    args = []
    for name, arr in feeds.items():
        p = tmp_path / f"in_{name}.npy"
        np.save(p, arr)
        args += ["--input", p]
    outs = [tmp_path / f"out_{j}.npy" for j in range(n_outputs)]
    for p in outs:
        args += ["--output", p]
    cstatic("run", out_dir, *args)
    return [np.load(p) for p in outs], (out_dir / "lib0.c").read_text()


def run_ort(model, feeds, int8=False):
    """ORT, with every QDQ group fused into its integer kernel for a
    quantized model (as on ARM; tests/models/ORT_FUSIONS.md)."""
    config = {"session.qdqisint8allowed": "1"} if int8 else None
    return ort_ref.session(str(model), config=config).run(None, feeds)


# ---------------------------------------------------------------- LeakyRelu

@pytest.mark.parametrize("alpha", [None, 0.2, -0.5, 3.0])
def test_leaky_relu_float(tmp_path, alpha):
    attrs = {} if alpha is None else {"alpha": alpha}
    shape = [2, 3, 7, 5]
    model = save_model(tmp_path / "leaky.onnx", [helper.make_node("LeakyRelu", ["x"], ["y"], **attrs)],
                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    x = special_input(shape, 1)
    (got,), src = run_cstatic(model, {"x": x}, tmp_path)
    assert "TIDSP_UNARY_LEAKY_RELU" in src
    assert_bits(got, run_ort(model, {"x": x})[0], f"LeakyRelu alpha={alpha}")


class _Reader(CalibrationDataReader):
    def __init__(self, shapes, n=8):
        r = np.random.default_rng(10)
        self.data = iter([{k: r.standard_normal(s).astype(np.float32) for k, s in shapes.items()}
                          for _ in range(n)])

    def get_next(self):
        return next(self.data, None)


def quantized(tmp_path, name, nodes, shape_in, shape_out, inits, act):
    fp = save_model(tmp_path / f"{name}_float.onnx", nodes,
                    [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape_in)],
                    [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape_out)], inits)
    qp = tmp_path / f"{name}_{act}.onnx"
    quantize_static(str(fp), str(qp), _Reader({"x": shape_in}), quant_format=QuantFormat.QDQ, per_channel=True,
                    weight_type=QuantType.QInt8,
                    activation_type=QuantType.QInt8 if act == "s8" else QuantType.QUInt8)
    return qp


def conv_act_conv(act_node, c=8):
    """conv → activation → conv: the activation between quantized layers."""
    r = np.random.default_rng(4)
    w1 = numpy_helper.from_array((r.standard_normal((c, 4, 1, 1)) * 0.5).astype(np.float32), "w1")
    w2 = numpy_helper.from_array((r.standard_normal((c, c, 1, 1)) * 0.5).astype(np.float32), "w2")
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"]), act_node,
             helper.make_node("Conv", ["a", "w2"], ["y"])]
    return nodes, [w1, w2]


@pytest.mark.parametrize("act", ["s8", "u8"])
@pytest.mark.parametrize("alpha", [0.1, -0.3])
def test_leaky_relu_quantized_is_one_table(tmp_path, act, alpha):
    nodes, inits = conv_act_conv(helper.make_node("LeakyRelu", ["c1"], ["a"], alpha=alpha))
    model = quantized(tmp_path, "leaky_q", nodes, [1, 4, 6, 6], [1, 8, 6, 6], inits, act)
    assert any(n.op_type == "LeakyRelu" for n in onnx.load(model).graph.node)
    x = np.random.default_rng(123).standard_normal((1, 4, 6, 6)).astype(np.float32)
    (got,), src = run_cstatic(model, {"x": x}, tmp_path)
    assert "tidsp_lut_i8(" in src and "tidsp_unary_f32(" not in src
    want = run_ort(model, {"x": x}, int8=True)[0]
    assert np.array_equal(got, want), f"{np.mean(got == want):.4f} exact"


# ---------------------------------------------------------------- PRelu

@pytest.mark.parametrize("x_shape,slope_shape", [
    ([2, 3, 7, 5], [3, 1, 1]),      # per channel, as torch's PReLU exports
    ([2, 3, 7, 5], [1]),            # one slope
    ([2, 3, 7, 5], [5]),            # along the last axis (numpy rules)
    ([2, 3, 7, 5], [2, 3, 7, 5]),   # elementwise
    ([4, 6], [6]),                  # after a fully connected layer (MTCNN)
])
@pytest.mark.parametrize("slope_is_input", [False, True])
def test_prelu_float(tmp_path, x_shape, slope_shape, slope_is_input):
    r = np.random.default_rng(len(x_shape) + len(slope_shape))
    slope = (r.standard_normal(slope_shape) * 0.5).astype(np.float32)
    slope.reshape(-1)[0] = -0.5  # a negative slope turns -0 into +0 unless x >= 0 selects x
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)]
    inits = []
    if slope_is_input:
        inputs.append(helper.make_tensor_value_info("slope", TensorProto.FLOAT, slope_shape))
    else:
        inits.append(numpy_helper.from_array(slope, "slope"))
    model = save_model(tmp_path / "prelu.onnx", [helper.make_node("PRelu", ["x", "slope"], ["y"])], inputs,
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, x_shape)], inits)
    x = special_input(x_shape, 2)
    feeds = {"x": x, "slope": slope} if slope_is_input else {"x": x}
    (got,), src = run_cstatic(model, feeds, tmp_path)
    assert "tidsp_prelu_f32(" in src
    assert_bits(got, run_ort(model, feeds)[0], f"PRelu x {x_shape} slope {slope_shape}")


def test_prelu_slope_must_broadcast_to_the_input(tmp_path):
    """A slope that would widen the output is refused by name."""
    model = save_model(tmp_path / "prelu_bad.onnx", [helper.make_node("PRelu", ["x", "slope"], ["y"], name="act")],
                       [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4])],
                       [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])],
                       [numpy_helper.from_array(np.ones([2, 1, 1], np.float32), "slope")])
    p = cstatic("compile", model, "-o", tmp_path / "bad", ok=False)
    assert p.returncode != 0 and "act" in p.stderr and "slope" in p.stderr
    assert p.stderr.count("\n") <= 1 and not (tmp_path / "bad").exists()


@pytest.mark.parametrize("act", ["s8", "u8"])
@pytest.mark.parametrize("pool", [False, True], ids=["table", "table_pool"])
@pytest.mark.parametrize("slope_shape", [(8, 1, 1), (1,)], ids=["per_channel", "one"])
def test_prelu_quantized_is_a_table_per_channel(tmp_path, act, pool, slope_shape):
    r = np.random.default_rng(6)
    slope = numpy_helper.from_array((r.standard_normal(slope_shape) * 0.4).astype(np.float32), "slope")
    nodes, inits = conv_act_conv(helper.make_node("PRelu", ["c1", "slope"], ["a"]))
    if pool:  # PRelu -> MaxPool 2x2 -> the quantized conv (MTCNN's P-Net)
        nodes[1].output[0] = "p"
        nodes.insert(2, helper.make_node("MaxPool", ["p"], ["a"], kernel_shape=[2, 2], strides=[2, 2]))
    out = [1, 8, 3, 3] if pool else [1, 8, 6, 6]
    model = quantized(tmp_path, "prelu_q", nodes, [1, 4, 6, 6], out, inits + [slope], act)
    x = np.random.default_rng(321).standard_normal((1, 4, 6, 6)).astype(np.float32)
    (got,), src = run_cstatic(model, {"x": x}, tmp_path)
    assert "tidsp_lut_i8_channels(" in src and "tidsp_prelu_f32(" not in src
    assert ("tidsp_maxpool_i8(" in src) == pool and "tidsp_maxpool_f32(" not in src
    want = run_ort(model, {"x": x}, int8=True)[0]
    assert np.array_equal(got, want), f"{np.mean(got == want):.4f} exact"


def test_prelu_slope_along_another_axis_stays_float(tmp_path):
    """A slope that varies along W ([1, 1, 6]) is not one table per channel:
    the PRelu stays in float between DQ and Q, still ORT's bytes."""
    slope = numpy_helper.from_array(np.linspace(-0.5, 0.5, 6, dtype=np.float32).reshape(1, 1, 6), "slope")
    nodes, inits = conv_act_conv(helper.make_node("PRelu", ["c1", "slope"], ["a"]))
    model = quantized(tmp_path, "prelu_w", nodes, [1, 4, 6, 6], [1, 8, 6, 6], inits + [slope], "s8")
    x = np.random.default_rng(322).standard_normal((1, 4, 6, 6)).astype(np.float32)
    (got,), src = run_cstatic(model, {"x": x}, tmp_path)
    assert "tidsp_prelu_f32(" in src and "tidsp_lut_i8_channels(" not in src
    want = run_ort(model, {"x": x}, int8=True)[0]
    assert np.array_equal(got, want), f"{np.mean(got == want):.4f} exact"


# ------------------------------------------- an activation table before a pool

def qdq_act_pool(tmp_path, act_node, name):
    """x -> Q -> DQ -> act -> MaxPool 2x2 -> Q -> DQ -> y, as PT2E's c7x
    quantizer exports a LeakyRelu before a pool (no Q between them)."""
    s_in, z_in, s_out, z_out = 0.04, 3, 0.03, -5
    inits = [numpy_helper.from_array(np.array(v, t), n) for v, t, n in
             ((s_in, np.float32, "s_in"), (z_in, np.int8, "z_in"), (s_out, np.float32, "s_out"),
              (z_out, np.int8, "z_out"))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s_in", "z_in"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s_in", "z_in"], ["xd"]), act_node,
             helper.make_node("MaxPool", ["a"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("QuantizeLinear", ["p", "s_out", "z_out"], ["pq"]),
             helper.make_node("DequantizeLinear", ["pq", "s_out", "z_out"], ["y"])]
    return save_model(tmp_path / f"{name}.onnx", nodes,
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 4, 4])], inits)


@pytest.mark.parametrize("op,attrs,int8_pool", [("LeakyRelu", {"alpha": -0.7}, True), ("Sigmoid", {}, True),
                                                ("Sqrt", {}, False)], ids=["leaky", "sigmoid", "sqrt_nan"])
def test_activation_table_before_a_max_pool(tmp_path, op, attrs, int8_pool):
    """The pool runs on the table's int8 codes (Q is monotone: it commutes
    with max); Sqrt gives NaNs on the codes below zero, so it and the pool
    stay in float. ORT's bytes either way."""
    model = qdq_act_pool(tmp_path, helper.make_node(op, ["xd"], ["a"], **attrs), op.lower())
    x = (np.random.default_rng(7).standard_normal((1, 4, 8, 8)) * 2.0).astype(np.float32)
    (got,), src = run_cstatic(model, {"x": x}, tmp_path)
    assert ("tidsp_lut_i8(" in src) == int8_pool and ("tidsp_unary_f32(" in src) != int8_pool
    assert ("tidsp_maxpool_i8(" in src) == int8_pool and ("tidsp_maxpool_f32(" in src) != int8_pool
    want = run_ort(model, {"x": x})[0]
    assert np.array_equal(got, want, equal_nan=True), f"{np.mean(got == want):.4f} exact"


# ------------------------------------- a float op with a constant, as a table

@pytest.mark.parametrize("act", ["s8", "u8"])
def test_hard_swish_division_is_a_table(tmp_path, act):
    """conv → x·clip(x + 3, 0, 6)/6 → conv, as paddle2onnx exports PP-OCR's
    hard-swish: ORT's quantizer makes the Add and the Mul int8 and leaves
    DQ → Div(6) → Q, which ORT runs in float; cstatic's one table gives its
    bytes."""
    consts = [numpy_helper.from_array(np.array(v, np.float32), n)
              for v, n in ((3.0, "three"), (0.0, "zero"), (6.0, "six"))]
    nodes, inits = conv_act_conv(helper.make_node("Div", ["m", "six"], ["a"]))
    nodes[1:1] = [helper.make_node("Add", ["c1", "three"], ["p3"]),
                  helper.make_node("Clip", ["p3", "zero", "six"], ["cl"]),
                  helper.make_node("Mul", ["c1", "cl"], ["m"])]
    model = quantized(tmp_path, "hswish", nodes, [1, 4, 6, 6], [1, 8, 6, 6], inits + consts, act)
    g = onnx.load(model).graph
    div = next(n for n in g.node if n.op_type == "Div")
    producer = {o: n.op_type for n in g.node for o in n.output}
    consumers = [n.op_type for n in g.node if div.output[0] in n.input]
    assert producer[div.input[0]] == "DequantizeLinear" and consumers == ["QuantizeLinear"]  # DQ → Div → Q
    x = (np.random.default_rng(124).standard_normal((1, 4, 6, 6)) * 2.0).astype(np.float32)
    (got,), src = run_cstatic(model, {"x": x}, tmp_path)
    assert "tidsp_lut_i8(" in src and "tidsp_binary_f32(" not in src
    want = run_ort(model, {"x": x}, int8=True)[0]
    assert np.array_equal(got, want), f"{np.mean(got == want):.4f} exact"


def qdq_binary(tmp_path, op, c, c_first):
    """x -> Q -> DQ -> op with the float constant c -> Q -> DQ -> y."""
    s_in, z_in, s_out, z_out = 0.04, 3, 0.03, -5
    inits = [numpy_helper.from_array(np.array(v, t), n) for v, t, n in
             ((s_in, np.float32, "s_in"), (z_in, np.int8, "z_in"), (s_out, np.float32, "s_out"),
              (z_out, np.int8, "z_out"), (c, np.float32, "c"))]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s_in", "z_in"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s_in", "z_in"], ["xd"]),
             helper.make_node(op, ["c", "xd"] if c_first else ["xd", "c"], ["a"]),
             helper.make_node("QuantizeLinear", ["a", "s_out", "z_out"], ["aq"]),
             helper.make_node("DequantizeLinear", ["aq", "s_out", "z_out"], ["y"])]
    return save_model(tmp_path / f"{op.lower()}_{int(c_first)}.onnx", nodes,
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 8, 8])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 8, 8])], inits)


@pytest.mark.parametrize("op,c", [("Add", 0.7), ("Sub", -1.3), ("Mul", -2.5), ("Div", 6.0), ("Div", 0.0)],
                         ids=["add", "sub", "mul", "div", "div_by_zero"])
@pytest.mark.parametrize("c_first", [False, True], ids=["x_op_c", "c_op_x"])
def test_float_op_with_a_constant_is_a_table(tmp_path, op, c, c_first):
    """Either side, a division by zero included (±inf saturate, 0/0 is a
    NaN, quantized as ORT's QuantizeLinear does)."""
    model = qdq_binary(tmp_path, op, c, c_first)
    x = (np.random.default_rng(8).standard_normal((1, 4, 8, 8)) * 3.0).astype(np.float32)
    x.reshape(-1)[:3] = [0.0, 0.12, -0.12]  # the zero point's code, 0/0 for c = 0
    (got,), src = run_cstatic(model, {"x": x}, tmp_path)
    assert "tidsp_lut_i8(" in src and "tidsp_binary_f32(" not in src
    want = run_ort(model, {"x": x})[0]
    assert np.array_equal(got, want, equal_nan=True), f"{np.mean(got == want):.4f} exact"
