"""3-D ConvTranspose (k_conv_transpose_nd_f32) against ONNX Runtime on the
same file: strides, dilations, pads, output_padding, output_shape, groups,
bias or none. ORT runs it as a GEMM and col2im; on a CPU whose MLAS has
fused multiply-adds (conftest.mlas_float_order) the host kernel sums in that
order (host/conv_transpose2d_f32__host_mlas.c) and must be bit-identical;
the reference's own order is equal up to float rounding (its sums are
checked against a double oracle in tests/unit/test_kernel_conv_transpose.c)."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from conftest import mlas_float_order, ort_ref
from cstatic_cli import cstatic

# (id, x shape, weight shape [C, M/group, k...], bias, attributes)
CASES = [
    ("default", [1, 1, 3, 4, 5], [1, 2, 3, 3, 3], False, {}),
    ("strides_pads_bias", [2, 2, 3, 4, 3], [2, 3, 2, 3, 2], True,
     {"strides": [2, 1, 3], "pads": [1, 0, 1, 0, 1, 1]}),
    ("dilations_output_padding", [1, 2, 3, 3, 4], [2, 2, 2, 2, 3], True,
     {"strides": [2, 2, 2], "dilations": [2, 1, 1], "output_padding": [1, 0, 1]}),
    ("groups", [1, 4, 3, 3, 3], [4, 1, 3, 2, 2], True, {"group": 2, "strides": [1, 2, 1]}),
    ("output_shape_same_upper", [1, 1, 3, 3, 3], [1, 2, 3, 3, 3], False,
     {"strides": [2, 2, 2], "output_shape": [6, 6, 6], "auto_pad": "SAME_UPPER"}),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_conv_transpose_3d_matches_ort(tmp_path, case):
    _, xs, ws, bias, attrs = case
    rng = np.random.default_rng(len(xs) + sum(ws))
    inits = [nh.from_array(rng.standard_normal(ws).astype(np.float32), "w")]
    ins = ["x", "w"]
    if bias:
        inits.append(nh.from_array(rng.standard_normal(ws[1] * attrs.get("group", 1)).astype(np.float32), "b"))
        ins.append("b")
    node = h.make_node("ConvTranspose", ins, ["y"], name="ct", **attrs)
    g = h.make_graph([node], "ct", [h.make_tensor_value_info("x", TP.FLOAT, xs)],
                     [h.make_tensor_value_info("y", TP.FLOAT, None)], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 17)])
    m.ir_version = 8
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    x = rng.standard_normal(xs).astype(np.float32)
    want = ort_ref.session(str(path)).run(None, {"x": x})[0]
    out = tmp_path / "out"
    cstatic("compile", path, "-o", out, "-q", "-t", "c_static_lib -allow-float=1")
    np.save(tmp_path / "x.npy", x)
    cstatic("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    got = np.load(tmp_path / "y.npy")
    assert got.shape == want.shape, (got.shape, want.shape)
    err = float(np.max(np.abs(got - want) / (1.0 + np.abs(want))))
    assert err <= 1e-5, f"max relative diff {err:.3g}, {np.mean(got == want):.4f} exact"
    if mlas_float_order():
        assert np.array_equal(got.view(np.int32), want.view(np.int32)), f"{np.mean(got == want):.4f} bit-identical"
    assert "tidsp_conv_transpose_nd_f32(" in (out / "lib0.c").read_text()
