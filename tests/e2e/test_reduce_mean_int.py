"""ReduceMean over H, W between DQ and Q (PyTorch's AdaptiveAvgPool2d(1),
x.mean([2, 3])) and -ort-exact.

ONNX Runtime has no QDQ rule for ReduceMean: it dequantizes, sums in float
and quantizes. The integer global average pool (acc = sum(x) - zx*HW, times
fl(xs / fl(ys*HW)), rounded half to even) gives the same bytes except where
the exact mean is a half (acc*xs/(ys*HW) = k + 1/2): ORT's float roundings
push those to either side. So the default target (-ort-exact=1) keeps the
float kernel, bit-identical with ORT; -ort-exact=0 (the default of
-mcpu=cortex-m) takes the integer pool, whose bytes are the integer
formula's exactly and within 1 LSB of ORT. The float mean reads the int8
tensor itself (tidsp_reduce_mean_dq_i8: the floats DQ would write, in
ORT's order), so ORT's bytes hold without the float copy. The scales below
make halves frequent (ys = xs/2, xs/4 with HW = 4, 16; 2xs with 49): the
mismatch count is printed (pytest -s).
"""
import json
import os
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from cstatic_cli import cstatic

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import ort_ref  # noqa: E402

INT_GAP = "tidsp_global_avgpool_i8"
# ORT's float mean: of the dequantized tensor, or read from the int8 one
# (FuseDequantizeReduceMean: the same floats in the same order)
FLOAT_MEANS = {"tidsp_reduce_mean_f32", "tidsp_reduce_mean_dq_i8"}


def float_mean(kernels):
    return bool(kernels & FLOAT_MEANS)


def mean_model(path, shape, xs, xz, ys, yz, axes=(2, 3), keepdims=1, opset=18):
    """float x -> Q(xs, xz) -> DQ -> ReduceMean(axes) -> Q(ys, yz): int8 y."""
    init = [numpy_helper.from_array(np.array(xs, np.float32), "xs"),
            numpy_helper.from_array(np.array(xz, np.int8), "xz"),
            numpy_helper.from_array(np.array(ys, np.float32), "ys"),
            numpy_helper.from_array(np.array(yz, np.int8), "yz")]
    if opset >= 18:
        init.append(numpy_helper.from_array(np.array(axes, np.int64), "axes"))
        mean = helper.make_node("ReduceMean", ["d", "axes"], ["m"], keepdims=keepdims, name="mean")
    else:
        mean = helper.make_node("ReduceMean", ["d"], ["m"], axes=list(axes), keepdims=keepdims, name="mean")
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["q"], name="q_in"),
             helper.make_node("DequantizeLinear", ["q", "xs", "xz"], ["d"], name="dq_in"),
             mean,
             helper.make_node("QuantizeLinear", ["m", "ys", "yz"], ["y"], name="q_out")]
    norm = {a % len(shape) for a in axes}
    out = [1 if d in norm else n for d, n in enumerate(shape) if keepdims or d not in norm]
    g = helper.make_graph(nodes, "mean", [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("y", TensorProto.INT8, out)], init)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, path)
    return path


def compile_run(tmp_path, model, target, x, tag):
    out = tmp_path / tag
    cstatic("compile", model, "-o", out, "-t", target, "-q")
    np.save(tmp_path / f"{tag}.x.npy", x)
    cstatic("run", out, "-i", tmp_path / f"{tag}.x.npy", "-o", tmp_path / f"{tag}.y.npy")
    # the kernels called, by name (the scalar kernels' __ref suffix dropped)
    kernels = {k.removesuffix("__ref") for k in json.loads((out / "manifest.json").read_text())["totals"]["kernels"]}
    return np.load(tmp_path / f"{tag}.y.npy"), kernels


def integer_gap(q, xs, xz, ys, yz):
    """The integer pool's formula (ORT's QLinearGlobalAveragePool)."""
    n, c, h, w = q.shape
    acc = q.reshape(n, c, h * w).astype(np.int64).sum(-1) - xz * h * w
    mult = np.float32(np.float32(xs) / np.float32(np.float32(ys) * np.float32(h * w)))
    return np.clip(np.rint(acc.astype(np.float32) * mult) + yz, -128, 127).astype(np.int8)


CASES = [  # (H, W), ys / xs
    ((2, 2), 0.5), ((4, 4), 0.25), ((7, 7), 2.0)]


@pytest.mark.parametrize("hw,ratio", CASES)
def test_default_is_ort_float_and_ort_exact_0_is_the_integer_pool(tmp_path, hw, ratio):
    rng = np.random.default_rng(hash((hw, ratio)) % 2**32)
    shape = [2, 96, *hw]
    xs = np.float32(0.0371)
    ys, xz, yz = np.float32(xs * ratio), -7, 3
    model = mean_model(str(tmp_path / "m.onnx"), shape, xs, xz, ys, yz)
    x = (rng.standard_normal(shape) * 2.0).astype(np.float32)
    sess = ort_ref.session(model)
    ref = sess.run(None, {"x": x})[0]

    y, kernels = compile_run(tmp_path, model, "c_static_lib", x, "exact")
    assert "tidsp_reduce_mean_dq_i8" in kernels and INT_GAP not in kernels, kernels
    assert np.array_equal(y, ref)

    # the integer input the pool sees: ORT's own QuantizeLinear of x
    q_model = onnx.load(model)
    q_model.graph.output[0].CopyFrom(helper.make_tensor_value_info("q", TensorProto.INT8, shape))
    del q_model.graph.node[1:]
    q = ort_ref.session(q_model.SerializeToString()).run(None, {"x": x})[0]
    want = integer_gap(q, xs, xz, ys, yz).reshape(ref.shape)
    for target in ("c_static_lib -ort-exact=0", "c_static_lib -mcpu=cortex-m", "c_static_lib -mcpu=cortex-m7 -requant=float"):
        tag = target.split()[-1].replace("=", "_")
        y, kernels = compile_run(tmp_path, model, target, x, tag)
        assert INT_GAP in kernels and not float_mean(kernels), (target, kernels)
        assert np.array_equal(y, want), target
    diff = np.abs(want.astype(int) - ref.astype(int))
    assert diff.max() <= 1
    print(f"\nReduceMean {hw} ys/xs={ratio}: integer pool vs ORT: {int((diff > 0).sum())}/{diff.size} "
          f"outputs differ by 1 LSB")


@pytest.mark.parametrize("axes,keepdims,opset,integer", [
    ((-2, -1), 1, 18, True),   # PyTorch writes negative axes
    ((2, 3), 0, 13, True),     # axes as the attribute; [N, C] out: the same bytes
    ((1,), 1, 18, False),      # over channels: not a pool
    ((3,), 1, 18, False),      # one spatial axis
    ((1, 2, 3), 1, 18, False),
])
def test_only_the_spatial_mean_becomes_the_pool(tmp_path, axes, keepdims, opset, integer):
    shape = [1, 16, 4, 4]
    model = mean_model(str(tmp_path / "m.onnx"), shape, 0.05, 0, 0.05, 0, axes, keepdims, opset)
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    y, kernels = compile_run(tmp_path, model, "c_static_lib -ort-exact=0", x, "int")
    assert (INT_GAP in kernels) == integer and float_mean(kernels) != integer, kernels
    ref = ort_ref.session(model).run(None, {"x": x})[0]
    assert y.shape == ref.shape and np.abs(y.astype(int) - ref.astype(int)).max() <= 1


def test_pt2e_adaptive_avg_pool_on_the_mcu_preset(tmp_path):
    """A PT2E export of AdaptiveAvgPool2d(1): DQ -> ReduceMean -> Q, which
    the MCU preset runs on the integer pool and the default target in
    float, as ORT does."""
    torch = pytest.importorskip("torch")
    import cstatic
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(1),
                              torch.nn.Flatten(), torch.nn.Linear(16, 10)).eval()
    x = torch.randn(32, 3, 12, 12)
    path = str(tmp_path / "gap.onnx")
    cstatic.export_qdq_onnx(cstatic.quantize_pt2e(net, (x[:1],), x), (x[:1],), path)
    assert "ReduceMean" in {n.op_type for n in onnx.load(path).graph.node}
    xs = x[:1].numpy()
    ref = ort_ref.session(path).run(None, {onnx.load(path).graph.input[0].name: xs})[0]
    y, kernels = compile_run(tmp_path, path, "c_static_lib", xs, "exact")
    assert float_mean(kernels) and np.array_equal(y, ref)
    y, kernels = compile_run(tmp_path, path, "c_static_lib -mcpu=cortex-m", xs, "mcu")
    assert INT_GAP in kernels and not float_mean(kernels), kernels
    assert np.argmax(y) == np.argmax(ref)


@pytest.mark.parametrize("act", ["s8", "u8"])
def test_squeeze_excitation_mean_reads_the_int8_tensor(tmp_path, act):
    """conv -> x.mean([2, 3]) -> conv, ORT-quantized (x.mean exports as
    ReduceMean, which ORT runs in float): between int8 convolutions ORT
    sums in NHWC order, which the fused kernel keeps; ORT's bytes."""
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    r = np.random.default_rng(11)
    w1 = numpy_helper.from_array((r.standard_normal((24, 8, 3, 3)) * 0.3).astype(np.float32), "w1")
    w2 = numpy_helper.from_array((r.standard_normal((6, 24, 1, 1)) * 0.3).astype(np.float32), "w2")
    axes = numpy_helper.from_array(np.array([2, 3], np.int64), "axes")
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("ReduceMean", ["c1", "axes"], ["m"], keepdims=1),
             helper.make_node("Conv", ["m", "w2"], ["y"])]
    g = helper.make_graph(nodes, "se", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 13, 11])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 6, 1, 1])], [w1, w2, axes])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    fp, qp = tmp_path / "se.onnx", tmp_path / f"se_{act}.onnx"
    onnx.save(m, fp)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{"x": r.standard_normal((1, 8, 13, 11)).astype(np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.data, None)

    quantize_static(str(fp), str(qp), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    weight_type=QuantType.QInt8,
                    activation_type=QuantType.QInt8 if act == "s8" else QuantType.QUInt8)
    assert "ReduceMean" in {n.op_type for n in onnx.load(qp).graph.node}
    x = r.standard_normal((1, 8, 13, 11)).astype(np.float32)
    y, kernels = compile_run(tmp_path, str(qp), "c_static_lib", x, "se")
    assert "tidsp_reduce_mean_dq_i8" in kernels and "tidsp_dequantize" not in kernels, kernels
    ref = ort_ref.session(str(qp), config={"session.qdqisint8allowed": "1"}).run(None, {"x": x})[0]
    assert np.array_equal(y, ref)
