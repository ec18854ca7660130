"""Batch N > 1 on the MMA (issue 16): an int8 QDQ conv whose input has N
images runs as one MMALIB call per image (a k_slice of image n, the batch-1
call on the same constants, a k_concat along N), and the planner makes the
slices and the concat views (no bytes move in the arena). Through the CLI:
N calls in the generated code, the offload and the MMA share in the
manifest, every image within 1 LSB of the exact float-domain result, each
image bit-identical to the same model at batch 1, and the C7x builds
(unstaged, L2-staged) bit-identical to the host build.
"""
import json

import numpy as np
import onnx
import pytest

# The targets pass -mmalib-exact=none: these check the int8 kernels (the
# default, `all`, runs int8 layers on MMALIB's int16 kernels:
# test_mmalib_exact.py).
from onnx import TensorProto, helper, numpy_helper

from cstatic_cli import cstatic
from test_mmalib_s2d import exact_reference, qdq_params


def conv_chain(path, n, c_in, widths, hw, seed=0):
    """x [n, c_in, hw, hw] -> (3x3 conv pad 1 + ReLU) per width -> y."""
    rng = np.random.default_rng(seed)
    nodes, inits, cur, c = [], [], "x", c_in
    for i, c_out in enumerate(widths):
        w = rng.normal(size=(c_out, c, 3, 3)).astype(np.float32) * (0.3 / np.sqrt(c))
        w = (w * np.linspace(0.25, 4.0, c_out)[:, None, None, None]).astype(np.float32)
        b = rng.normal(size=(c_out,)).astype(np.float32) * 0.1
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes += [helper.make_node("Conv", [cur, f"w{i}", f"b{i}"], [f"c{i}"], name=f"conv{i}", pads=[1] * 4,
                                   kernel_shape=[3, 3]),
                  helper.make_node("Relu", [f"c{i}"], ["r" if len(widths) == 1 else f"r{i}"], name=f"relu{i}")]
        cur, c = nodes[-1].output[0], c_out
    nodes.append(helper.make_node("Identity", [cur], ["y"], name="out"))
    graph = helper.make_graph(nodes, "batch", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c_in, hw, hw])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, c, hw, hw])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def quantize_batch(src, dst, n, c, hw, symmetric):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(1)
            self.data = iter([{"x": rng.normal(size=(n, c, hw, hw)).astype(np.float32)} for _ in range(2)])

        def get_next(self):
            return next(self.data, None)

    quantize_static(src, dst, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    extra_options={"ActivationSymmetric": symmetric, "WeightSymmetric": True})


def as_batch_one(src, dst):
    """The same quantized model with batch 1 (no op of it depends on N)."""
    m = onnx.load(src)
    del m.graph.value_info[:]
    for v in list(m.graph.input) + list(m.graph.output):
        v.type.tensor_type.shape.dim[0].dim_value = 1
    onnx.save(m, dst)


def run(tmp_path, model, target, x, tag):
    out = tmp_path / tag
    r = cstatic("compile", model, "-o", out, "-t", target)
    np.save(tmp_path / f"x_{tag}.npy", x)
    cstatic("run", out, "--input", tmp_path / f"x_{tag}.npy", "--output", tmp_path / f"y_{tag}.npy")
    return r.stdout, json.load(open(out / "manifest.json")), open(out / "lib0.c").read(), np.load(tmp_path / f"y_{tag}.npy")


@pytest.mark.parametrize("symmetric", [True, False], ids=["symmetric", "asymmetric"])
@pytest.mark.parametrize("n", [2, 3])
def test_batch_conv_one_call_per_image_within_one_lsb(n, symmetric, tmp_path):
    c_in, c_out, hw = 8, 64, 12
    f, q, q1 = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx"), str(tmp_path / "q1.onnx")
    conv_chain(f, n, c_in, [c_out], hw)
    quantize_batch(f, q, n, c_in, hw, symmetric)
    as_batch_one(q, q1)
    p = qdq_params(q)
    x = np.random.default_rng(7).normal(size=(n, c_in, hw, hw)).astype(np.float32)
    stdout, man, src, y = run(tmp_path, q, "c_static_lib -mmalib=1 -mmalib-exact=none", x, "batch")
    print(stdout)
    assert "mmalib offload: 1 conv2d" in stdout
    assert src.count("mmalib_conv2d_i8(") == n and "tidsp_conv2d_i8" not in src
    off = man["offload"]
    macs = n * c_out * hw * hw * c_in * 9
    assert off["mma_share"] == 1.0 and off["macs_mma"] == off["macs"] == macs
    assert man["arena_ratio"] <= 1.10
    assert y.shape == (n, c_out, hw, hw)
    got = np.round(y.astype(np.float64) / p["os"]) + p["ozp"]
    for i in range(n):
        diff = np.abs(got[i] - exact_reference(p, x[i:i + 1], 3, 1, hw))
        print(f"image {i}: max |diff| = {diff.max():.0f} LSB, {np.mean(diff > 0) * 100:.3f}% differ")
        assert diff.max() <= 1
    # every image as the batch-1 model computes it, bit for bit
    for i in range(n):
        _, _, _, y1 = run(tmp_path, q1, "c_static_lib -mmalib=1 -mmalib-exact=none", x[i:i + 1], f"one{i}")
        assert y1.tobytes() == y[i:i + 1].tobytes()


def test_batch_chain_views_and_c7x_builds_equal_the_host(tmp_path):
    """Two convs at N = 3: the middle tensor's images are views (the first
    conv's calls write into the concat, the second's read slices of it; no
    k_slice or k_concat call between them), and the C7x builds, unstaged
    and L2-staged, give the host build's output bit for bit."""
    n, c_in, hw = 3, 8, 16
    f, q = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    conv_chain(f, n, c_in, [64, 64], hw, seed=4)
    quantize_batch(f, q, n, c_in, hw, True)  # symmetric: no explicit pad between the convs
    x = np.random.default_rng(11).normal(size=(n, c_in, hw, hw)).astype(np.float32)
    ys = {}
    for tag, target in (("host", "c_static_lib -mmalib=1 -mmalib-exact=none"), ("c7x", "c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact=none -l2-budget=0"),
                        ("l2", "c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact=none -l2-budget=262144")):
        stdout, man, src, ys[tag] = run(tmp_path, q, target, x, tag)
        assert "mmalib offload: 2 conv2d" in stdout, (tag, stdout)
        assert src.count("mmalib_conv2d_i8(") == 2 * n
        # the input's images are copies (cg_main's raw input is the
        # caller's buffer); the middle tensor's slices and both concats
        # (the output's is followed by the Identity's copy) are views
        kinds = sorted(l["kernel"] for l in man["layers"] if l.get("elided"))
        print(tag, "elided:", kinds, "arena", man["arena_bytes"], "ratio", man["arena_ratio"])
        assert kinds.count("tidsp_slice") == n and kinds.count("tidsp_concat") == 2
        assert sum(l["kernel"] == "tidsp_slice" for l in man["layers"]) == 2 * n
        assert man["arena_ratio"] <= 1.10
    assert ys["host"].shape == (n, 64, hw, hw)
    assert ys["c7x"].tobytes() == ys["host"].tobytes() and ys["l2"].tobytes() == ys["host"].tobytes()

