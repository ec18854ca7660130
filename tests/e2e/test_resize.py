"""Resize (opsets 10-25) in nearest mode, any scale,
against ONNX Runtime on the same file: float, and ORT-quantized (QDQ, the
Resize of a feature pyramid as PaddleOCR's detector has it) in both
requant modes.

Such a Resize repeats every element s times along each axis wherever
ORT's index map (coordinate transform + nearest rounding) is i div s; the
compiler computes that map as ORT does and then writes the Resize as
Reshape → Expand → Reshape (data movement, on the integers between QDQ).
Any other nearest map (down-scaling, fractional scales, align_corners, …)
becomes one constant Gather per axis that moves, equally exact. Linear
mode (float) is ORT's bilinear/trilinear sum (2-D and 4-D NCHW or NHWC:
four terms; 3-D and 5-D: eight), each term Gathers times a constant
holding ORT's rounded weight product, added in ORT's order: bit-identical
to ORT, ±0, infinities and NaNs included. Cubic mode (float) is per
moving axis, the last first, four Gathers and Muls by ORT's weights summed
in ORT's order: bit-identical to ORT. tf_crop_and_resize pads the axis
with the extrapolation value and reads it where the coordinate falls
outside the input.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from conftest import ort_ref
from cstatic_cli import cstatic

X_SHAPE = [1, 3, 5, 6]


def _resize_model(opset, scales=None, sizes=None, shape=X_SHAPE, **attrs):
    inits = []
    if opset == 10:
        ins = ["x", "scales"]
    else:
        ins = ["x", "roi" if opset < 13 else "", "scales" if scales is not None else "",
               "sizes" if sizes is not None else ""]
        if opset < 13:
            inits.append(nh.from_array(np.zeros(0, np.float32), "roi"))
    if scales is not None:
        inits.append(nh.from_array(np.asarray(scales, np.float32), "scales"))
    if sizes is not None:
        inits.append(nh.from_array(np.asarray(sizes, np.int64), "sizes"))
    while ins[-1] == "":
        ins.pop()
    node = h.make_node("Resize", ins, ["y"], name="up", **attrs)
    g = h.make_graph([node], "resize", [h.make_tensor_value_info("x", TP.FLOAT, shape)],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 7 if opset < 15 else 8 if opset < 19 else 10
    return m


NN = {"mode": "nearest"}
# (id, opset, scales, sizes, attributes): each is a repeat in ORT's map.
REPEATS = [
    ("opset10", 10, [1, 1, 2, 3], None, NN),
    ("ppocr_asymmetric_floor", 11, [1, 1, 2, 2], None,
     {**NN, "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"}),
    ("asymmetric_round_prefer_floor_x2", 11, [1, 1, 2, 2], None,
     {**NN, "coordinate_transformation_mode": "asymmetric"}),
    ("tf_half_pixel_for_nn_floor", 11, [1, 1, 3, 2], None,
     {**NN, "coordinate_transformation_mode": "tf_half_pixel_for_nn", "nearest_mode": "floor"}),
    ("half_pixel_default", 13, [1, 1, 3, 2], None, NN),
    ("half_pixel_channels_too", 13, [1, 2, 1, 2], None, NN),
    ("align_corners_5_to_10", 13, [1, 1, 2, 1], None,  # 4·o/9 rounds to o div 2
     {**NN, "coordinate_transformation_mode": "align_corners"}),
    ("pytorch_half_pixel_sizes", 13, None, [1, 3, 10, 18], {**NN, "coordinate_transformation_mode": "pytorch_half_pixel"}),
    ("round_prefer_ceil_half_pixel", 13, [1, 1, 2, 2], None, {**NN, "nearest_mode": "round_prefer_ceil"}),
    ("axes", 18, [2, 3], None, {**NN, "axes": [2, 3]}),
    ("negative_axes_sizes", 18, None, [10, 12], {**NN, "axes": [-2, -1]}),
    ("half_pixel_symmetric", 19, [1, 1, 2, 2], None, {**NN, "coordinate_transformation_mode": "half_pixel_symmetric"}),
    ("opset25", 25, [1, 1, 2, 2], None, NN),
]


def _run(tmp_path, path, x, target="c_static_lib", config=None):
    want = ort_ref.session(str(path), config=config).run(None, {"x": x})[0]
    out = tmp_path / "out"
    cstatic("compile", path, "-o", out, "-q", "-t", target)
    np.save(tmp_path / "x.npy", x)
    cstatic("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    return np.load(tmp_path / "y.npy"), want, (out / "lib0.c").read_text()


@pytest.mark.parametrize("case", REPEATS, ids=[c[0] for c in REPEATS])
def test_nearest_repeat_matches_ort(tmp_path, case):
    _, opset, scales, sizes, attrs = case
    path = tmp_path / "m.onnx"
    onnx.save(_resize_model(opset, scales, sizes, **attrs), path)
    x = np.random.default_rng(opset).standard_normal(X_SHAPE).astype(np.float32)
    got, want, src = _run(tmp_path, path, x)
    assert got.shape == want.shape and np.array_equal(got, want), f"{np.mean(got == want):.4f} exact"
    assert "tidsp_expand" in src or "tidsp_copy" in src


# (id, opset, scales, sizes, attributes): nearest maps that are not a
# repeat: one constant Gather per axis that moves.
GATHERS = [
    ("fractional", 13, [1, 1, 1.5, 2], None, NN),
    ("downscale", 13, [1, 1, 1, 0.5], None, NN),
    ("downscale_sizes_floor", 13, None, [1, 3, 2, 4], {**NN, "nearest_mode": "floor"}),
    ("align_corners", 13, [1, 1, 1, 3], None, {**NN, "coordinate_transformation_mode": "align_corners"}),
    ("three_axes", 13, [1, 2, 2, 2], None, NN),
    ("asymmetric_round_prefer_ceil", 13, [1, 1, 2, 2], None,
     {**NN, "coordinate_transformation_mode": "asymmetric", "nearest_mode": "round_prefer_ceil"}),
    ("asymmetric_round_prefer_floor_x4", 13, [1, 1, 4, 4], None, {**NN, "coordinate_transformation_mode": "asymmetric"}),
    ("half_pixel_ceil", 13, None, [1, 3, 10, 12], {**NN, "nearest_mode": "ceil"}),
    ("opset10_fractional", 10, [1, 1, 0.6, 1.7], None, NN),
]


@pytest.mark.parametrize("case", GATHERS, ids=[c[0] for c in GATHERS])
def test_nearest_gather_matches_ort(tmp_path, case):
    _, opset, scales, sizes, attrs = case
    path = tmp_path / "m.onnx"
    onnx.save(_resize_model(opset, scales, sizes, **attrs), path)
    x = np.random.default_rng(opset).standard_normal(X_SHAPE).astype(np.float32)
    got, want, src = _run(tmp_path, path, x)
    assert got.shape == want.shape and np.array_equal(got, want), f"{np.mean(got == want):.4f} exact"
    assert "tidsp_gather" in src or "tidsp_slice" in src


LIN = {"mode": "linear"}
# (id, opset, scales, sizes, attributes[, input shape]): linear in float.
LINEARS = [
    ("half_pixel_x2", 13, [1, 1, 2, 2], None, LIN),
    ("half_pixel_fractional", 13, [1, 1, 1.7, 0.8], None, LIN),
    ("align_corners_sizes", 13, None, [1, 3, 9, 11], {**LIN, "coordinate_transformation_mode": "align_corners"}),
    ("asymmetric_down", 11, [1, 1, 0.5, 0.5], None, {**LIN, "coordinate_transformation_mode": "asymmetric"}),
    ("pytorch_half_pixel_sizes", 13, None, [1, 3, 1, 7],
     {**LIN, "coordinate_transformation_mode": "pytorch_half_pixel"}),
    ("channels_too", 13, [1, 2, 2, 1], None, LIN),  # ORT: NHWC, H and W of axes 1, 2
    ("opset10", 10, [1, 1, 2, 3], None, LIN),
    ("width_only", 13, [1, 1, 1, 2.5], None, LIN),  # the rows still weigh 1, 0 (last: 0.5, 0.5)
    ("half_pixel_symmetric", 19, [1, 1, 1.5, 2], None, {**LIN, "coordinate_transformation_mode": "half_pixel_symmetric"}),
    ("axes", 18, [2.5, 0.7], None, {**LIN, "axes": [2, 3]}),
    ("rank2", 13, [1.5, 2.0], None, LIN, [5, 7]),
    ("rank3_trilinear", 13, [1.5, 2.0, 0.7], None, LIN, [4, 5, 6]),
    ("rank5_trilinear", 13, [1, 1, 1.5, 2.0, 0.7], None, {**LIN, "coordinate_transformation_mode": "align_corners"},
     [1, 2, 4, 5, 6]),
]


@pytest.mark.parametrize("case", LINEARS, ids=[c[0] for c in LINEARS])
def test_linear_matches_ort(tmp_path, case):
    """ORT weighs the 2-D (3-D) neighbours in one expression, each weight
    product rounded first; the rewrite takes the same roundings in the same
    order: bit for bit, special values included (an infinity times a 0
    weight is NaN in both)."""
    _, opset, scales, sizes, attrs = case[:5]
    shape = case[5] if len(case) > 5 else X_SHAPE
    path = tmp_path / "m.onnx"
    onnx.save(_resize_model(opset, scales, sizes, shape=shape, **attrs), path)
    x = np.random.default_rng(opset).standard_normal(shape).astype(np.float32)
    flat = x.reshape(-1)
    flat[[3, 7, 11, 13]] = [-0.0, np.inf, -np.inf, np.nan]
    flat[flat.size // 2] = 3e38  # sums that overflow
    flat[flat.size // 2 + 1] = 3e38
    got, want, _ = _run(tmp_path, path, x)
    assert got.shape == want.shape, (got.shape, want.shape)
    same = (got == want) | (np.isnan(got) & np.isnan(want))
    assert np.array_equal(np.signbit(got[~np.isnan(got)]), np.signbit(want[~np.isnan(want)])) and same.all(), \
        f"{np.mean(same):.4f} exact"


CUB = {"mode": "cubic"}
# (id, opset, scales, sizes, attributes): cubic in float.
CUBICS = [
    ("half_pixel_x2", 13, [1, 1, 2, 2], None, CUB),
    ("half_pixel_fractional", 13, [1, 1, 1.7, 0.8], None, CUB),
    ("down_sizes", 13, None, [1, 3, 3, 4], CUB),
    ("align_corners_sizes", 13, None, [1, 3, 9, 11], {**CUB, "coordinate_transformation_mode": "align_corners"}),
    ("asymmetric", 11, [1, 1, 2, 3], None, {**CUB, "coordinate_transformation_mode": "asymmetric"}),
    ("pytorch_half_pixel_one_row", 13, None, [1, 3, 1, 7],
     {**CUB, "coordinate_transformation_mode": "pytorch_half_pixel"}),
    ("a_-0.5_exclude_outside_up", 13, [1, 1, 2.5, 1.5], None, {**CUB, "cubic_coeff_a": -0.5, "exclude_outside": 1}),
    ("exclude_outside_down", 13, [1, 1, 0.6, 0.5], None, {**CUB, "exclude_outside": 1}),
    ("width_only_exclude_outside", 13, [1, 1, 1, 2], None, {**CUB, "exclude_outside": 1}),
    ("height_only_exclude_outside", 13, [1, 1, 2, 1], None, {**CUB, "exclude_outside": 1}),
    ("axes", 18, [2, 1.5], None, {**CUB, "axes": [2, 3]}),
]


@pytest.mark.parametrize("case", CUBICS, ids=[c[0] for c in CUBICS])
def test_cubic_matches_ort_bit_for_bit(tmp_path, case):
    """ORT's bicubic sums along x then y, each tap's product in order (with
    exclude_outside: x by coeff / sum, y as x_interp · coeff / sum); the
    separable chain takes the same roundings in the same order."""
    _, opset, scales, sizes, attrs = case
    path = tmp_path / "m.onnx"
    onnx.save(_resize_model(opset, scales, sizes, **attrs), path)
    x = np.random.default_rng(opset).standard_normal(X_SHAPE).astype(np.float32)
    got, want, src = _run(tmp_path, path, x)
    assert got.shape == want.shape and np.array_equal(got, want), f"{np.mean(got == want):.4f} exact"
    assert "tidsp_gather" in src


CROP = {"coordinate_transformation_mode": "tf_crop_and_resize", "extrapolation_value": 10.0}
# (id, sizes, roi, attributes): tf_crop_and_resize, part of the box
# outside the input (extrapolated) in most.
CROPS = [
    ("linear_inside", [1, 3, 3, 3], [0, 0, 0.4, 0.6, 1, 1, 0.6, 0.8], {**CROP, "mode": "linear"}),
    ("linear_outside", [1, 3, 4, 7], [0, 0, -0.3, 0.2, 1, 1, 0.9, 1.4], {**CROP, "mode": "linear"}),
    ("cubic_outside", [1, 3, 6, 5], [0, 0, 0.1, -0.5, 1, 1, 1.2, 0.7], {**CROP, "mode": "cubic"}),
    ("nearest_outside", [1, 3, 5, 8], [0, 0, -0.2, 0.1, 1, 1, 0.8, 1.3], {**CROP, "mode": "nearest"}),
    ("one_row_default_value", [1, 3, 1, 4], [0, 0, 0.2, 0.0, 1, 1, 0.6, 1.0],
     {"coordinate_transformation_mode": "tf_crop_and_resize", "mode": "linear"}),
]


@pytest.mark.parametrize("case", CROPS, ids=[c[0] for c in CROPS])
def test_tf_crop_and_resize_matches_ort(tmp_path, case):
    _, sizes, roi, attrs = case
    m = _resize_model(13, None, sizes, **attrs)
    m.graph.node[0].input[1] = "roi"
    m.graph.initializer.append(nh.from_array(np.asarray(roi, np.float32), "roi"))
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    x = np.random.default_rng(7).standard_normal(X_SHAPE).astype(np.float32)
    got, want, _ = _run(tmp_path, path, x)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert np.array_equal(got, want), f"{np.mean(got == want):.4f} exact"
    if attrs.get("extrapolation_value") and "outside" in case[0]:
        assert np.any(got == 10.0)


# (id, opset, scales, sizes, attributes, what the message says)
REFUSED = [
    ("bicubic", 13, [1, 1, 2, 2], None, {"mode": "bicubic"}, "mode 'bicubic' is not one of ONNX's"),
    ("crop_and_resize_no_roi", 13, [1, 1, 2, 2], None, {**NN, "coordinate_transformation_mode": "tf_crop_and_resize"},
     "roi has 0 entries for 4 axes"),
    ("antialias", 18, [1, 1, 2, 2], None, {**NN, "antialias": 1}, "antialias = 1 is not supported"),
    ("not_larger", 18, None, [1, 3, 10, 12], {**NN, "keep_aspect_ratio_policy": "not_larger"},
     "keep_aspect_ratio_policy 'not_larger' is not supported"),
    ("axes_count", 18, [2, 2, 2], None, {**NN, "axes": [2, 3]}, "scales has 3 entries for 2 axes"),
]


@pytest.mark.parametrize("case", REFUSED, ids=[c[0] for c in REFUSED])
def test_other_resize_is_refused_by_name(tmp_path, case):
    _, opset, scales, sizes, attrs, msg = case
    path = tmp_path / "m.onnx"
    onnx.save(_resize_model(opset, scales, sizes, **attrs), path)
    p = cstatic("compile", path, "-o", tmp_path / "out", ok=False)
    assert p.returncode == 1 and p.stderr.count("\n") == 1, p.stderr
    assert "node 'up' (Resize)" in p.stderr and msg in p.stderr, p.stderr


def test_scales_from_a_graph_input_are_refused(tmp_path):
    node = h.make_node("Resize", ["x", "", "s"], ["y"], name="up", mode="nearest")
    g = h.make_graph([node], "resize", [h.make_tensor_value_info("x", TP.FLOAT, X_SHAPE),
                                        h.make_tensor_value_info("s", TP.FLOAT, [4])],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 7
    onnx.save(m, tmp_path / "m.onnx")
    p = cstatic("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", ok=False)
    assert p.returncode == 1 and "scales 's' must be a constant" in p.stderr, p.stderr


def _fpn_model():
    """Conv → Resize(×2, asymmetric, floor) → Add with a finer Conv branch
    → Conv: the upsampling of PaddleOCR's detector (DB's FPN)."""
    r = np.random.default_rng(3)
    inits = [nh.from_array((r.standard_normal((4, 3, 3, 3)) * 0.4).astype(np.float32), "w0"),
             nh.from_array((r.standard_normal((4, 4, 3, 3)) * 0.3).astype(np.float32), "w1"),
             nh.from_array((r.standard_normal((4, 3, 1, 1)) * 0.5).astype(np.float32), "w2"),
             nh.from_array((r.standard_normal((4, 4, 3, 3)) * 0.3).astype(np.float32), "w3"),
             nh.from_array(np.zeros(0, np.float32), "roi"),
             nh.from_array(np.array([1, 1, 2, 2], np.float32), "scales")]
    nodes = [h.make_node("Conv", ["x", "w0"], ["c0"], pads=[1, 1, 1, 1], strides=[2, 2]),
             h.make_node("Relu", ["c0"], ["r0"]),
             h.make_node("Conv", ["r0", "w1"], ["c1"], pads=[1, 1, 1, 1]),
             h.make_node("Resize", ["c1", "roi", "scales"], ["up"], name="up", mode="nearest",
                         coordinate_transformation_mode="asymmetric", nearest_mode="floor"),
             h.make_node("Conv", ["x", "w2"], ["lat"]),
             h.make_node("Add", ["up", "lat"], ["s"]),
             h.make_node("Conv", ["s", "w3"], ["y"], pads=[1, 1, 1, 1])]
    g = h.make_graph(nodes, "fpn", [h.make_tensor_value_info("x", TP.FLOAT, [1, 3, 8, 8])],
                     [h.make_tensor_value_info("y", TP.FLOAT, [1, 4, 8, 8])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 13)])
    m.ir_version = 7
    return m


@pytest.mark.parametrize("act", ["s8", "u8"])
def test_quantized_upsampling_matches_ort(tmp_path, act):
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                          QuantType, quantize_static)

    class Reader(CalibrationDataReader):
        def __init__(self):
            r = np.random.default_rng(11)
            self.it = iter([{"x": r.standard_normal((1, 3, 8, 8)).astype(np.float32)} for _ in range(8)])

        def get_next(self):
            return next(self.it, None)

    fp = tmp_path / "fpn_float.onnx"
    onnx.save(_fpn_model(), fp)
    qp = tmp_path / f"fpn_{act}.onnx"
    quantize_static(str(fp), str(qp), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    weight_type=QuantType.QInt8,
                    activation_type=QuantType.QInt8 if act == "s8" else QuantType.QUInt8)
    assert any(n.op_type == "Resize" for n in onnx.load(qp).graph.node)
    config = {"session.qdqisint8allowed": "1"}
    if act == "u8":
        config["session.x64quantprecision"] = "1"
    x = np.random.default_rng(5).standard_normal((1, 3, 8, 8)).astype(np.float32)
    for requant in ("float", "q31"):
        got, want, src = _run(tmp_path, qp, x, f"c_static_lib -requant={requant}", config)
        assert np.array_equal(got, want), f"{act}/{requant}: {np.mean(got == want):.4f} exact"
        # the repeat runs on the integers: the only float conversions are
        # the graph input's quantize and the output's dequantize
        assert "tidsp_expand(" in src and src.count("tidsp_quantize(") == 1
        assert src.count("tidsp_dequantize(") == 1


@pytest.mark.parametrize("zp_type,zp", [(TP.UINT8, 121), (TP.INT8, -7)], ids=["u8", "s8"])
@pytest.mark.parametrize("shape,scales", [([1, 3, 5, 6], [1, 1, 2, 1.5]), ([1, 5, 6, 3], [1, 1.7, 2, 1])],
                         ids=["nchw", "nhwc"])
def test_quantized_linear_matches_ort(tmp_path, shape, scales, zp_type, zp):
    """A linear Resize between DQ and Q with equal (scale, zero point): ORT
    fused (int8 groups allowed) equals ORT unoptimized on it, i.e. it runs
    dequantize → float bilinear → quantize, and so does cstatic."""
    inits = [h.make_tensor("s", TP.FLOAT, [], [0.06]), h.make_tensor("z", zp_type, [], [zp]),
             nh.from_array(np.array(scales, np.float32), "sc")]
    nodes = [h.make_node("QuantizeLinear", ["x", "s", "z"], ["q"]),
             h.make_node("DequantizeLinear", ["q", "s", "z"], ["d"]),
             h.make_node("Resize", ["d", "", "sc"], ["r"], name="up", mode="linear"),
             h.make_node("QuantizeLinear", ["r", "s", "z"], ["q2"]),
             h.make_node("DequantizeLinear", ["q2", "s", "z"], ["y"])]
    g = h.make_graph(nodes, "qresize", [h.make_tensor_value_info("x", TP.FLOAT, shape)],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
    m.ir_version = 9
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    x = (np.random.default_rng(1).standard_normal(shape) * 3).astype(np.float32)
    for requant in ("float", "q31"):
        got, want, _ = _run(tmp_path, path, x, f"c_static_lib -requant={requant}", {"session.qdqisint8allowed": "1"})
        assert np.array_equal(got, want), f"{requant}: {np.mean(got == want):.4f} exact"
