#!/usr/bin/env python3
"""Generate the tiny ONNX models the frontend unit tests load.

Run from anywhere: `.venv/bin/python tests/unit/data/make_models.py`. The
outputs are committed (each a few KB at most); rerunning rewrites them
byte-identically (fixed seeds, no timestamps).

Malformed *files* (truncated, random bytes, empty) are made by the tests
themselves; the models here are well-formed protobufs, some of them with a
deliberately invalid graph (named *_bad_*).
"""
import os

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(1234)


def init(name, arr):
    return nh.from_array(np.asarray(arr), name)


def model(nodes, inputs, outputs, inits=(), opset=13, name="g", check=True,
          ir_version=8, extra_opsets=()):
    g = oh.make_graph(nodes, name, inputs, outputs, initializer=list(inits))
    m = oh.make_model(
        g, opset_imports=[oh.make_opsetid("", opset), *extra_opsets],
        producer_name="make_models.py", ir_version=ir_version)
    if check:
        onnx.checker.check_model(m, full_check=True)
    return m


def with_reference_outputs(m):
    """Declare each graph output with the shape ONNX Runtime computes for
    it, so loading the model checks our inference against the reference
    (ORT, not onnx.shape_inference: they differ on MaxPool ceil_mode)."""
    import onnxruntime as ort
    ort.set_default_logger_severity(3)  # ORT warns that onnx's own pool rule differs
    sess = ort.InferenceSession(m.SerializeToString(),
                                providers=["CPUExecutionProvider"])
    feeds = {i.name: rng.standard_normal(
        [d.dim_value for d in i.type.tensor_type.shape.dim]).astype(np.float32)
        for i in m.graph.input}
    res = sess.run(None, feeds)
    outs = [vi(o.name, o.type.tensor_type.elem_type, list(r.shape))
            for o, r in zip(m.graph.output, res)]
    del m.graph.output[:]
    m.graph.output.extend(outs)
    onnx.checker.check_model(m)  # full_check would apply onnx's pool rule
    return m


def save(m, fname):
    onnx.save(m, os.path.join(HERE, fname))


def vi(name, dtype, shape):
    return oh.make_tensor_value_info(name, dtype, shape)


def conv_qdq():
    """A QDQ CNN as ORT's quantize_static writes it: u8 activations, i8
    per-channel weights, i32 bias, a symbolic batch dim."""
    w = rng.integers(-127, 128, size=(4, 3, 3, 3), dtype=np.int8)
    fc = rng.integers(-127, 128, size=(10, 4), dtype=np.int8)
    inits = [
        init("x_scale", np.float32(0.02)), init("x_zp", np.uint8(128)),
        init("w_q", w), init("w_scale", np.full(4, 0.01, np.float32)),
        init("w_zp", np.zeros(4, np.int8)),
        init("b_q", np.arange(4, dtype=np.int32)),
        init("b_scale", np.full(4, 0.0002, np.float32)),
        init("b_zp", np.zeros(4, np.int32)),
        init("r_scale", np.float32(0.05)), init("r_zp", np.uint8(0)),
        init("fc_q", fc), init("fc_scale", np.float32(0.01)),
        init("fc_zp", np.int8(0)),
        init("fc_b", np.zeros(10, np.float32)),
    ]
    nodes = [
        oh.make_node("QuantizeLinear", ["input", "x_scale", "x_zp"], ["xq"], name="q_in"),
        oh.make_node("DequantizeLinear", ["xq", "x_scale", "x_zp"], ["xf"], name="dq_in"),
        oh.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zp"], ["w"], name="dq_w", axis=0),
        oh.make_node("DequantizeLinear", ["b_q", "b_scale", "b_zp"], ["b"], name="dq_b", axis=0),
        oh.make_node("Conv", ["xf", "w", "b"], ["c"], name="conv1", strides=[2, 2],
                     pads=[1, 1, 1, 1], kernel_shape=[3, 3]),
        oh.make_node("Relu", ["c"], ["r"], name="relu1"),
        oh.make_node("QuantizeLinear", ["r", "r_scale", "r_zp"], ["rq"], name="q_r"),
        oh.make_node("DequantizeLinear", ["rq", "r_scale", "r_zp"], ["rf"], name="dq_r"),
        oh.make_node("MaxPool", ["rf"], ["p"], name="pool1", kernel_shape=[2, 2],
                     strides=[2, 2], ceil_mode=1),
        oh.make_node("GlobalAveragePool", ["p"], ["gap"], name="gap"),
        oh.make_node("Flatten", ["gap"], ["flat"], name="flatten"),
        oh.make_node("DequantizeLinear", ["fc_q", "fc_scale", "fc_zp"], ["fcw"], name="dq_fc"),
        oh.make_node("Gemm", ["flat", "fcw", "fc_b"], ["logits"], name="fc", transB=1),
        oh.make_node("Softmax", ["logits"], ["prob"], name="softmax", axis=1),
    ]
    return model(nodes, [vi("input", TP.FLOAT, ["N", 3, 9, 9])],
                 [vi("prob", TP.FLOAT, [None, 10])], inits, name="conv_qdq")


def shapes14():
    """Every shape rule of the opset-13/14 ops on one small graph (HardSwish
    needs 14)."""
    inits = [
        init("shape_a", np.array([0, -1, 4], np.int64)),
        init("split_a", np.array([1, 3], np.int64)),
        init("sl_starts", np.array([-100, 3], np.int64)),
        init("sl_ends", np.array([1000, -10], np.int64)),
        init("sl_axes", np.array([1, -1], np.int64)),
        init("sl_steps", np.array([2, -1], np.int64)),
        init("sq_axes1", np.array([1], np.int64)),
        init("vec2", rng.standard_normal(2).astype(np.float32)),
        init("unsq_axes", np.array([-1, 1], np.int64)),
        init("pads", np.array([0, 1, 2, 0, 2, 1], np.int64)),
        init("mm_b", rng.standard_normal((4, 2)).astype(np.float32)),
        init("vec", rng.standard_normal(4).astype(np.float32)),
        init("lo", np.float32(-1.0)), init("hi", np.float32(1.0)),
    ]
    nodes = [
        # x: [2, 3, 8]
        oh.make_node("Reshape", ["x", "shape_a"], ["rs"], name="reshape"),  # [2,6,4]
        oh.make_node("Transpose", ["rs"], ["tr"], name="transpose"),        # [4,6,2]
        oh.make_node("Concat", ["tr", "tr"], ["cat"], name="concat", axis=-1),  # [4,6,4]
        oh.make_node("Split", ["cat", "split_a"], ["s0", "s1"], name="split", axis=2),  # [4,6,1] [4,6,3]
        oh.make_node("Slice", ["cat", "sl_starts", "sl_ends", "sl_axes", "sl_steps"],
                     ["sl"], name="slice"),                                  # [4,3,4]
        oh.make_node("Unsqueeze", ["sl", "unsq_axes"], ["us"], name="unsqueeze"),  # [4,1,3,4,1]
        oh.make_node("Squeeze", ["us"], ["sq"], name="squeeze_all"),        # [4,3,4]
        oh.make_node("Squeeze", ["us", "sq_axes1"], ["sq1"], name="squeeze_1"),  # [4,3,4,1]
        oh.make_node("Pad", ["sq", "pads"], ["pd"], name="pad", mode="reflect"),  # [4,6,7]
        oh.make_node("ReduceMean", ["sq"], ["rm"], name="rmean", axes=[1], keepdims=0),  # [4,4]
        oh.make_node("MatMul", ["rs", "mm_b"], ["mm"], name="matmul"),      # [2,6,2]
        oh.make_node("MatMul", ["tr", "vec2"], ["mv"], name="matvec"),      # [4,6]
        oh.make_node("MatMul", ["vec", "mm_b"], ["vm"], name="vecmat"),     # [2]
        oh.make_node("Gemm", ["gA", "mm_b", "vec2"], ["gm"], name="gemm_ta", transA=1),  # [3,2]
        oh.make_node("Add", ["s1", "vec3"], ["add"], name="add"),
        oh.make_node("Clip", ["add", "lo", "hi"], ["clip"], name="clip"),
        oh.make_node("HardSigmoid", ["clip"], ["hsig"], name="hsig", alpha=0.25, beta=0.5),
        oh.make_node("HardSwish", ["hsig"], ["hsw"], name="hswish"),
        oh.make_node("Sigmoid", ["hsw"], ["sig"], name="sigmoid"),
        oh.make_node("Dropout", ["sig"], ["drop"], name="dropout"),
        oh.make_node("Identity", ["drop"], ["ident"], name="identity"),
        oh.make_node("Mul", ["ident", "s0"], ["mul"], name="mul"),
        oh.make_node("AveragePool", ["img"], ["ap"], name="avgpool", kernel_shape=[3, 3],
                     strides=[2, 2], auto_pad="SAME_UPPER", count_include_pad=1),
        oh.make_node("Conv", ["img", "cw"], ["cv"], name="conv_same_lower",
                     auto_pad="SAME_LOWER", strides=[2, 3], dilations=[1, 1], group=2),
        oh.make_node("MaxPool", ["img"], ["mp"], name="maxpool_ceil", kernel_shape=[3, 3],
                     strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
        oh.make_node("MaxPool", ["img"], ["mp2"], name="maxpool_ceil_drop", kernel_shape=[2, 2],
                     strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1),
        oh.make_node("Softmax", ["ap"], ["sm"], name="softmax"),
    ]
    inits += [
        init("vec3", rng.standard_normal(3).astype(np.float32)),
        init("cw", rng.standard_normal((6, 1, 3, 2)).astype(np.float32)),
    ]
    outs = ["rs", "tr", "cat", "s0", "s1", "sl", "us", "sq", "sq1", "pd", "rm",
            "mm", "mv", "vm", "gm", "mul", "ap", "cv", "mp", "mp2", "sm"]
    return model(nodes, [vi("x", TP.FLOAT, [2, 3, 8]), vi("gA", TP.FLOAT, [4, 3]),
                         vi("img", TP.FLOAT, [1, 2, 7, 10])],
                 [vi(o, TP.FLOAT, None) for o in outs], inits,
                 opset=14, name="shapes14", check=False)


def opset18():
    """Split num_outputs (uneven), ReduceMean axes input, Pad axes input."""
    inits = [
        init("rm_axes", np.array([-1], np.int64)),
        init("pads", np.array([1, 2], np.int64)),
        init("pad_axes", np.array([1], np.int64)),
        init("cval", np.float32(0.5)),
    ]
    nodes = [
        oh.make_node("Split", ["x"], ["a", "b", "c"], name="split3", axis=1, num_outputs=3),
        oh.make_node("ReduceMean", ["x", "rm_axes"], ["rm"], name="rmean", keepdims=1),
        oh.make_node("ReduceMean", ["x"], ["rm_all"], name="rmean_all", keepdims=0),
        oh.make_node("ReduceMean", ["x"], ["rm_noop"], name="rmean_noop",
                     noop_with_empty_axes=1),
        oh.make_node("Pad", ["x", "pads", "cval", "pad_axes"], ["pd"], name="pad_axes"),
    ]
    outs = ["a", "b", "c", "rm", "rm_all", "rm_noop", "pd"]
    return model(nodes, [vi("x", TP.FLOAT, [2, 7, 5])],
                 [vi(o, TP.FLOAT, None) for o in outs], inits,
                 opset=18, name="opset18", check=False)


def qdq21_int16():
    """Opset 21: int16 activations, output_dtype without a zero point."""
    inits = [init("s", np.float32(0.001)), init("zp16", np.int16(0))]
    nodes = [
        oh.make_node("QuantizeLinear", ["x", "s", "zp16"], ["q16"], name="q16"),
        oh.make_node("DequantizeLinear", ["q16", "s", "zp16"], ["d16"], name="dq16"),
        oh.make_node("QuantizeLinear", ["d16", "s"], ["q8"], name="q_i8",
                     output_dtype=TP.INT8),
        oh.make_node("QuantizeLinear", ["d16", "s"], ["qu8"], name="q_default"),
    ]
    return model(nodes, [vi("x", TP.FLOAT, [1, 4])],
                 [vi("q8", TP.INT8, [1, 4]), vi("qu8", TP.UINT8, [1, 4]),
                  vi("q16", TP.INT16, [1, 4])], inits, opset=21,
                 ir_version=10, name="qdq21")


def shuffle_unit():
    """ShuffleNetV2's unit as PT2E exports it, small: Concat of two DQs of
    different scales, the channel shuffle, Split, a Q on each half's way
    (EliminateQDQMixedMoves: test_codegen_oom fails each of its
    allocations)."""
    c, h, w = 4, 3, 3
    inits = [init("s0", np.float32(0.05)), init("z0", np.int8(3)), init("s1", np.float32(0.031)),
             init("z1", np.int8(-7)), init("ys", np.float32(0.04)), init("yz", np.int8(-5)),
             init("r5", np.array([1, 2, c, h, w], np.int64)), init("r4", np.array([1, 2 * c, h, w], np.int64)),
             init("sizes", np.array([c, c], np.int64))]
    nodes = [
        oh.make_node("QuantizeLinear", ["x0", "s0", "z0"], ["q0"], name="q0"),
        oh.make_node("DequantizeLinear", ["q0", "s0", "z0"], ["d0"], name="dq0"),
        oh.make_node("QuantizeLinear", ["x1", "s1", "z1"], ["q1"], name="q1"),
        oh.make_node("DequantizeLinear", ["q1", "s1", "z1"], ["d1"], name="dq1"),
        oh.make_node("Concat", ["d0", "d1"], ["cat"], name="cat", axis=1),
        oh.make_node("Reshape", ["cat", "r5"], ["v5"], name="view"),
        oh.make_node("Transpose", ["v5"], ["t5"], name="shuffle", perm=[0, 2, 1, 3, 4]),
        oh.make_node("Reshape", ["t5", "r4"], ["sh"], name="view2"),
        oh.make_node("Split", ["sh", "sizes"], ["h0", "h1"], name="split", axis=1),
        oh.make_node("QuantizeLinear", ["h0", "ys", "yz"], ["y0"], name="q_y0"),
        oh.make_node("QuantizeLinear", ["h1", "ys", "yz"], ["y1"], name="q_y1"),
    ]
    return model(nodes, [vi("x0", TP.FLOAT, [1, c, h, w]), vi("x1", TP.FLOAT, [1, c, h, w])],
                 [vi("y0", TP.INT8, [1, c, h, w]), vi("y1", TP.INT8, [1, c, h, w])], inits, opset=17,
                 name="shuffle_unit")


def roll_windows():
    """Swin's chain as PT2E exports it, small: a LayerNorm's float output
    padded, rolled (Slice, Slice, Concat) and cut into windows before a Q
    (QuantizeBeforeMoves: test_codegen_oom fails each of its allocations)."""
    inits = [init("s", np.float32(0.05)), init("z", np.int8(3)), init("ys", np.float32(0.03)),
             init("yz", np.int8(-6)), init("gamma", np.ones(4, np.float32)), init("beta", np.zeros(4, np.float32)),
             init("pads", np.array([0, 0, 0, 0, 0, 1, 1, 0], np.int64)),
             init("s0", np.array([3], np.int64)), init("e0", np.array([4], np.int64)),
             init("s1", np.array([0], np.int64)), init("e1", np.array([3], np.int64)),
             init("ax", np.array([1], np.int64)), init("w6", np.array([1, 2, 2, 2, 2, 4], np.int64)),
             init("w3", np.array([4, 4, 4], np.int64))]
    nodes = [
        oh.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], name="q"),
        oh.make_node("DequantizeLinear", ["q", "s", "z"], ["d"], name="dq"),
        oh.make_node("LayerNormalization", ["d", "gamma", "beta"], ["ln"], name="ln", axis=-1),
        oh.make_node("Pad", ["ln", "pads"], ["p"], name="pad", mode="constant"),
        oh.make_node("Slice", ["p", "s0", "e0", "ax"], ["tail"], name="tail"),
        oh.make_node("Slice", ["p", "s1", "e1", "ax"], ["head"], name="head"),
        oh.make_node("Concat", ["tail", "head"], ["roll"], name="roll", axis=1),
        oh.make_node("Reshape", ["roll", "w6"], ["v6"], name="view"),
        oh.make_node("Transpose", ["v6"], ["t6"], name="permute", perm=[0, 1, 3, 2, 4, 5]),
        oh.make_node("Reshape", ["t6", "w3"], ["win"], name="windows"),
        oh.make_node("QuantizeLinear", ["win", "ys", "yz"], ["y"], name="q_y"),
    ]
    return model(nodes, [vi("x", TP.FLOAT, [1, 3, 3, 4])], [vi("y", TP.INT8, [4, 4, 4])], inits, opset=17,
                 name="roll_windows")


def asym_stride():
    """A QDQ conv 32 -> 32, 3x3, stride (2, 1) on 24x24 with ReLU:
    MMALIBAsymStride's two phases at stride (2, 2) (-mcpu=c7x -mmalib=1)."""
    c = 32
    w = rng.integers(-127, 128, size=(c, c, 3, 3), dtype=np.int8)
    inits = [
        init("x_scale", np.float32(0.05)), init("x_zp", np.int8(3)),
        init("w_q", w), init("w_scale", np.linspace(0.002, 0.008, c, dtype=np.float32)),
        init("w_zp", np.zeros(c, np.int8)),
        init("b_q", rng.integers(-500, 500, size=c, dtype=np.int32)),
        init("b_scale", np.linspace(0.0001, 0.0004, c, dtype=np.float32)),
        init("b_zp", np.zeros(c, np.int32)),
        init("y_scale", np.float32(0.1)), init("y_zp", np.int8(-128)),
    ]
    nodes = [
        oh.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"], name="q_in"),
        oh.make_node("DequantizeLinear", ["xq", "x_scale", "x_zp"], ["xf"], name="dq_in"),
        oh.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zp"], ["w"], name="dq_w", axis=0),
        oh.make_node("DequantizeLinear", ["b_q", "b_scale", "b_zp"], ["b"], name="dq_b", axis=0),
        oh.make_node("Conv", ["xf", "w", "b"], ["c"], name="conv_s21", strides=[2, 1], pads=[1, 1, 1, 1],
                     kernel_shape=[3, 3]),
        oh.make_node("Relu", ["c"], ["r"], name="relu"),
        oh.make_node("QuantizeLinear", ["r", "y_scale", "y_zp"], ["yq"], name="q_y"),
        oh.make_node("DequantizeLinear", ["yq", "y_scale", "y_zp"], ["y"], name="dq_y"),
    ]
    return model(nodes, [vi("x", TP.FLOAT, [1, c, 24, 24])], [vi("y", TP.FLOAT, [1, c, 12, 24])], inits,
                 name="asym_stride")


def typed_init():
    """Initializers in the typed fields; Constant nodes; an initializer that
    is also listed as a graph input."""
    f = oh.make_tensor("wf", TP.FLOAT, [2, 2], [1.0, 2.0, 3.0, 4.0])
    i8 = oh.make_tensor("wi8", TP.INT8, [3], [-128, 0, 127])
    u16 = oh.make_tensor("wu16", TP.UINT16, [2], [0, 65535])
    i64 = oh.make_tensor("shape", TP.INT64, [2], [4, 1])
    bl = oh.make_tensor("flags", TP.BOOL, [2], [1, 0])
    nodes = [
        oh.make_node("Constant", [], ["cf"], name="const_f", value_float=2.5),
        oh.make_node("Constant", [], ["ci"], name="const_ints", value_ints=[1, 4]),
        oh.make_node("Constant", [], ["ct"], name="const_t",
                     value=oh.make_tensor("t", TP.INT32, [2], [7, -7])),
        oh.make_node("Add", ["x", "wf"], ["y"], name="add"),
        oh.make_node("Mul", ["y", "cf"], ["z"], name="mul"),
        oh.make_node("Reshape", ["z", "shape"], ["r"], name="reshape"),
        oh.make_node("Reshape", ["r", "ci"], ["r2"], name="reshape2"),
        oh.make_node("Identity", ["wi8"], ["o_i8"], name="id_i8"),
        oh.make_node("Identity", ["wu16"], ["o_u16"], name="id_u16"),
        oh.make_node("Identity", ["ct"], ["o_i32"], name="id_i32"),
        oh.make_node("Identity", ["flags"], ["o_bool"], name="id_bool"),
    ]
    g = oh.make_graph(
        nodes, "typed", [vi("x", TP.FLOAT, [2, 2]), vi("wf", TP.FLOAT, [2, 2])],
        [vi("r2", TP.FLOAT, [1, 4]), vi("o_i8", TP.INT8, [3]),
         vi("o_u16", TP.UINT16, [2]), vi("o_i32", TP.INT32, [2]),
         vi("o_bool", TP.BOOL, [2])],
        initializer=[f, i8, u16, i64, bl])
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", 13)], ir_version=8,
                      producer_name="make_models.py")
    onnx.checker.check_model(m, full_check=True)
    return m


def external(location="external.bin", offset=16, length=None, fname=None):
    """A weight in external data: 4 floats at `offset` of external.bin."""
    t = TP()
    t.name = "w"
    t.data_type = TP.FLOAT
    t.dims.extend([4])
    t.data_location = TP.EXTERNAL
    kv = [("location", location), ("offset", str(offset))]
    kv.append(("length", str(16 if length is None else length)))
    for k, v in kv:
        e = t.external_data.add()
        e.key, e.value = k, v
    nodes = [oh.make_node("Add", ["x", "w"], ["y"], name="add")]
    m = model(nodes, [vi("x", TP.FLOAT, [4])], [vi("y", TP.FLOAT, [4])], [t],
              check=False, name="external")
    save(m, fname)


def unsupported():
    nodes = [
        oh.make_node("Relu", ["x"], ["a"], name="ok_relu"),
        oh.make_node("LSTM", ["a", "W", "R"], ["b"], name="lstm_1", hidden_size=2),
        oh.make_node("Foo", ["b"], ["c"], name="n7", domain="com.x"),
        oh.make_node("Det", ["c"], ["d"]),  # unnamed
    ]
    g = oh.make_graph(nodes, "unsup",
                      [vi("x", TP.FLOAT, [1, 2, 4]), vi("W", TP.FLOAT, [1, 8, 4]),
                       vi("R", TP.FLOAT, [1, 8, 2])],
                      [vi("d", TP.FLOAT, None)])
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", 17),
                                           oh.make_opsetid("com.x", 1)],
                         ir_version=8, producer_name="make_models.py")


def bad(nodes, inputs, outputs, inits=(), opset=13):
    """A well-formed protobuf with an invalid or refused graph."""
    g = oh.make_graph(nodes, "bad", inputs, outputs, initializer=list(inits))
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)],
                         ir_version=8, producer_name="make_models.py")


def bad_models():
    x = [vi("x", TP.FLOAT, [1, 4])]
    y = [vi("y", TP.FLOAT, [1, 4])]
    relu = lambda i, o, n: oh.make_node("Relu", [i], [o], name=n)
    save(bad([relu("nowhere", "y", "r1")], x, y), "m_bad_dangling.onnx")
    save(bad([relu("y", "a", "r1"), relu("a", "y", "r2")], x, y), "m_bad_cycle.onnx")
    save(bad([relu("x", "y", "r1"), relu("x", "y", "r2")], x, y), "m_bad_dup_output.onnx")
    save(bad([relu("x", "y", "r1")], x, y, opset=26), "m_bad_opset.onnx")
    save(bad([relu("x", "y", "r1")], x, [vi("y", TP.FLOAT, [1, 5])]),
         "m_bad_out_shape.onnx")
    save(bad([relu("x", "y", "r1")], [vi("x", TP.FLOAT16, [1, 4])],
             [vi("y", TP.FLOAT16, [1, 4])]), "m_bad_float16.onnx")
    save(bad([oh.make_node("Reshape", ["x", "s"], ["y"], name="reshape_rt")],
             x + [vi("s", TP.INT64, [2])], y), "m_bad_reshape_runtime.onnx")
    rd = init("w", np.zeros(4, np.float32))
    rd.raw_data = rd.raw_data[:10]
    save(bad([oh.make_node("Add", ["x", "w"], ["y"], name="add")], x, y, [rd]),
         "m_bad_raw_size.onnx")
    nd = TP(name="w", data_type=TP.FLOAT, dims=[-3, 2])
    save(bad([oh.make_node("Add", ["x", "w"], ["y"], name="add")], x, y, [nd]),
         "m_bad_neg_dim.onnx")
    save(bad([relu("x", "y", "r1")], [vi("x", TP.FLOAT, [1] * 9)],
             [vi("y", TP.FLOAT, [1] * 9)]), "m_bad_rank.onnx")
    dbl = init("w", np.zeros(4, np.float64))
    save(bad([oh.make_node("Add", ["x", "w"], ["y"], name="add")], x, y, [dbl]),
         "m_bad_double.onnx")
    save(bad([oh.make_node("Conv", ["img", "cw"], ["y"], name="conv_bad_group", group=3)],
             [vi("img", TP.FLOAT, [1, 4, 5, 5])], [vi("y", TP.FLOAT, None)],
             [init("cw", np.zeros((6, 2, 3, 3), np.float32))]), "m_bad_conv_group.onnx")
    save(bad([oh.make_node("Identity", ["s"], ["s2"], name="id_shape"),
              oh.make_node("Reshape", ["x", "s2"], ["y"], name="reshape_rt")],
             x + [vi("s", TP.INT64, [2])], y), "m_bad_reshape_computed.onnx")
    save(bad([oh.make_node("MaxPool", ["img"], ["y"], name="pool_pad", kernel_shape=[2, 2],
                           pads=[2, 0, 0, 0])],
             [vi("img", TP.FLOAT, [1, 1, 4, 4])], [vi("y", TP.FLOAT, None)]),
         "m_bad_pool_pad.onnx")
    sub = oh.make_graph([], "sub", [], [])
    save(bad([oh.make_node("Relu", ["x"], ["y"], name="relu_graph_attr", body=sub)], x, y),
         "m_bad_attr_graph.onnx")
    # an integer attribute of another type (a fuzzed file: its Concat axis,
    # read as absent, was 0 to shape inference and 1 to a pass)
    save(bad([oh.make_node("Concat", ["x", "x"], ["y"], name="cat_float_axis", axis=1.0)], x,
             [vi("y", TP.FLOAT, None)]), "m_bad_float_axis.onnx")
    save(bad([oh.make_node("ReduceMean", ["x"], ["y"], name="rmean18", axes=[1])], x,
             [vi("y", TP.FLOAT, None)], opset=18), "m_bad_axes_attr18.onnx")
    save(bad([oh.make_node("Add", ["x8", "w"], ["y"], name="add")],
             [vi("x8", TP.INT8, [3])], [vi("y", TP.INT8, [3])],
             [TP(name="w", data_type=TP.INT8, dims=[3], int32_data=[1, 300, 2])]), "m_bad_int32_range.onnx")
    save(bad([oh.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"], name="q_zero_scale")],
             x, [vi("y", TP.INT8, [1, 4])], [init("s", np.float32(0)), init("zp", np.int8(0))]),
         "m_bad_scale_zero.onnx")
    save(bad([oh.make_node("Split", ["x"], ["a", "b"], name="split18", axis=1)], x,
             [vi("a", TP.FLOAT, None), vi("b", TP.FLOAT, None)], opset=18),
         "m_bad_split18.onnx")
    g = oh.make_graph([oh.make_node("QuantizeLinear", ["x", "s", "zp"], ["y"], name="q_ms",
                                    domain="com.microsoft")], "ms", x,
                      [vi("y", TP.INT16, [1, 4])],
                      [init("s", np.float32(0.1)), init("zp", np.int16(0))])
    save(oh.make_model(g, opset_imports=[oh.make_opsetid("", 17),
                                         oh.make_opsetid("com.microsoft", 1)],
                       ir_version=8), "m_bad_ms_domain.onnx")


def main():
    save(conv_qdq(), "m_conv_qdq.onnx")
    save(with_reference_outputs(shapes14()), "m_shapes14.onnx")
    save(with_reference_outputs(opset18()), "m_opset18.onnx")
    save(qdq21_int16(), "m_qdq21.onnx")
    save(typed_init(), "m_typed_init.onnx")
    save(shuffle_unit(), "m_shuffle_unit.onnx")
    save(roll_windows(), "m_roll_windows.onnx")
    with open(os.path.join(HERE, "external.bin"), "wb") as f:
        f.write(np.arange(-4, 4, dtype=np.float32).tobytes())  # 32 bytes
    external(fname="m_external.onnx")
    external(location="/etc/passwd", fname="m_bad_external_abs.onnx")
    external(location="../data/external.bin", fname="m_bad_external_escape.onnx")
    external(offset=24, fname="m_bad_external_short.onnx")
    external(location="missing.bin", fname="m_bad_external_missing.onnx")
    save(unsupported(), "m_unsupported.onnx")
    bad_models()
    save(asym_stride(), "m_asym_stride.onnx")


if __name__ == "__main__":
    main()
