"""Output space-to-depth (MMALIBOutS2D, issue 16) end to end: an
ORT-quantized conv with few output channels computes 2x2 output pixels per
channel on the MMA (stride 2s, kernel k+s, zero taps), a transpose (and a
crop when 2 does not divide the output) puts them back in NCHW. Through the
CLI: the manifest's padding decision, every MAC on the MMA, the arena
within 1.10x of the live bound, and the output within 1 LSB of the exact
float-domain result, as every offloaded layer. Staged, channel padding
is the cheaper estimate of these layers (x4 to x8 their MACs); the padding
budget (-mmalib-pad-budget=3.9, or 3 where padding is x3.2) refuses it, so
the second round takes the space-to-depth: the form a model over its
budget gets.
"""
import json

import numpy as np
import pytest

# The targets pass -mmalib-exact=none: these check the int8 kernels (the
# default, `all`, runs int8 layers on MMALIB's int16 kernels:
# test_mmalib_exact.py).

from cstatic_cli import cstatic
from test_mmalib import qdq_params, quantize


def conv_model(path, c_in, c_out, k, s, hw, seed=0, pads=None):
    """Conv k x k stride s (pads (top, left, bottom, right), k // 2 each by
    default) -> Relu; returns the output's side (square when the pads
    are)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(c_out, c_in, k, k)).astype(np.float32) * 0.1
    w *= np.linspace(0.25, 4.0, c_out, dtype=np.float32)[:, None, None, None]
    b = rng.normal(size=(c_out,)).astype(np.float32) * 0.1
    pads = pads or [k // 2] * 4
    ho = (hw + pads[0] + pads[2] - k) // s + 1
    wo = (hw + pads[1] + pads[3] - k) // s + 1
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv0", pads=pads, kernel_shape=[k, k],
                              strides=[s, s]),
             helper.make_node("Relu", ["c"], ["r"], name="relu0"),
             helper.make_node("Identity", ["r"], ["y"], name="out")]
    graph = helper.make_graph(
        nodes, "s2d",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c_in, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c_out, ho, wo])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)
    return ho


def exact_reference(p, x, k, s, ho, pads=None, wo=None):
    """The layer in exact float arithmetic on the quantized tensors (ReLU as
    the clamp at the output zero point)."""
    xq = np.clip(np.round(x.astype(np.float64) / p["in_s"]) + p["in_zp"], -128, 127)
    pads = pads or [k // 2] * 4
    wo = wo or ho
    xc = np.pad(xq[0] - p["xzp"], ((0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    wq = p["w"].astype(np.float64)
    acc = np.zeros((wq.shape[0], ho, wo))
    for dy in range(k):
        for dx in range(k):
            patch = xc[:, dy:dy + s * (ho - 1) + 1:s, dx:dx + s * (wo - 1) + 1:s].reshape(xc.shape[0], -1)
            acc += (wq[:, :, dy, dx] @ patch).reshape(-1, ho, wo)
    real = acc * (p["xs"] * p["ws"])[:, None, None] + (p["b"] * p["bs"])[:, None, None]
    return np.clip(np.round(real / p["os"]) + p["ozp"], max(-128, p["ozp"]), 127)


# (C_in, C_out, k, stride, H = W): PP-OCR det's stem (3 -> 16, stride 2,
# 32x32 out: 2x2 = 64 channels); 8 -> 8 5x5 at 47x47 (2x2 = 32 channels
# padded to 64 and cut by a view, 48x48 computed, the last row and column
# cropped).
CASES = [(3, 16, 3, 2, 64), (8, 8, 5, 1, 47)]


@pytest.mark.parametrize("symmetric", [True, False], ids=["symmetric", "asymmetric"])
@pytest.mark.parametrize("case", CASES, ids=["stem_3to16_s2", "8to8_k5_crop"])
def test_s2d_conv_within_one_lsb_of_exact(case, symmetric, tmp_path):
    c_in, c_out, k, s, hw = case
    f, q = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    ho = conv_model(f, c_in, c_out, k, s, hw)
    quantize(f, q, symmetric=symmetric, c=c_in, hw=hw)
    p = qdq_params(q)
    out = tmp_path / "out"
    r = cstatic("compile", q, "-o", out, "-t", "c_static_lib -mmalib-pad-budget=3.9 -mmalib=1 -mmalib-exact=none")
    print(r.stdout)
    assert "mmalib offload: 1 conv2d" in r.stdout
    c_s2d = c_out * 4
    c_pad = -(-c_s2d // 64) * 64
    assert f"padded 'conv0' C_out s2d 2x2 {c_out} -> {c_pad}" in r.stdout
    man = json.load(open(out / "manifest.json"))
    off = man["offload"]
    pad = off["padding"]
    d = pad["decisions"][0]
    assert pad["layers"] == 1 and d["padded"] and d["what"] == "C_out s2d 2x2"
    assert (d["c_out"], d["c_pad"]) == (c_out, c_pad) and d["est_mma_cycles"] < d["est_scalar_cycles"]
    y2 = -(-ho // 2)
    model_macs = c_out * ho * ho * c_in * k * k
    assert d["macs"] == model_macs and d["macs_added"] == c_pad * y2 * y2 * c_in * (k + s) ** 2 - model_macs
    assert off["mma_share"] == 1.0 and off["macs_mma"] == off["macs"] == model_macs + d["macs_added"]
    assert man["arena_ratio"] <= 1.10
    src = open(out / "lib0.c").read()
    assert "mmalib_conv2d_i8(" in src and "tidsp_transpose(" in src and "tidsp_conv2d_i8" not in src
    assert ("tidsp_slice(" in src) == (ho % 2 == 1)
    x = np.random.default_rng(7).normal(size=(1, c_in, hw, hw)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    cstatic("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    y = np.load(tmp_path / "y.npy").astype(np.float64)
    assert y.shape == (1, c_out, ho, ho)
    got = np.round(y / p["os"]) + p["ozp"]
    diff = np.abs(got - exact_reference(p, x, k, s, ho))
    print(f"max |diff| = {diff.max():.0f} LSB, {np.mean(diff > 0) * 100:.3f}% of outputs differ")
    assert diff.max() <= 1


# (pads, the split): 16 -> 32 3x3 at 16x16. Padding to the 64-wide tile
# is x2 its MACs, over the default budget (1.6); a 1 x 2 split computes two
# columns per channel (64 channels, kernel 3x4, stride (1, 2)): x4/3. MMALIB
# strides H and W alike, so the stride (1, 2) conv runs as two stride-2
# phases a row apart, interleaved. Without a top pad the first phase
# would start above the input: the 2 x 1 split (phases a column apart).
SPLITS = [([1, 1, 1, 1], (1, 2)), ([0, 1, 0, 1], (2, 1))]


@pytest.mark.parametrize("symmetric", [True, False], ids=["symmetric", "asymmetric"])
@pytest.mark.parametrize("pads,split", SPLITS, ids=["1x2", "2x1"])
def test_split_conv_within_one_lsb_of_exact(pads, split, symmetric, tmp_path):
    c_in, c_out, k, hw = 16, 32, 3, 16
    f, q = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    ho = conv_model(f, c_in, c_out, k, 1, hw, pads=pads)
    wo = hw + pads[1] + pads[3] - k + 1
    quantize(f, q, symmetric=symmetric, c=c_in, hw=hw)
    p = qdq_params(q)
    x = np.random.default_rng(7).normal(size=(1, c_in, hw, hw)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    fh, fw = split
    ys = {}
    for tag, target in (("host", "c_static_lib -mmalib=1 -mmalib-exact=none"),
                        ("c7x", "c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact=none -l2-budget=0"),
                        ("l2", "c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact=none")):
        out = tmp_path / tag
        r = cstatic("compile", q, "-o", out, "-t", target)
        print(r.stdout)
        assert f"padded 'conv0' C_out s2d {fh}x{fw} {c_out} -> 64" in r.stdout
        assert "mmalib offload: 2 conv2d" in r.stdout  # the two phases
        man = json.load(open(out / "manifest.json"))
        off = man["offload"]
        [d] = off["padding"]["decisions"]
        assert d["padded"] and d["what"] == f"C_out s2d {fh}x{fw}" and d["c_pad"] == 64
        model_macs = c_out * ho * wo * c_in * k * k
        assert d["macs"] == model_macs
        assert d["macs_added"] == 64 * (ho // fh) * (wo // fw) * c_in * (k + fh - 1) * (k + fw - 1) - model_macs
        assert off["padding"]["macs_ratio"] <= 1.6 and off["mma_share"] == 1.0
        assert man["arena_ratio"] <= 1.10
        cstatic("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / f"y_{tag}.npy")
        ys[tag] = np.load(tmp_path / f"y_{tag}.npy")
    y = ys["host"].astype(np.float64)
    assert y.shape == (1, c_out, ho, wo)
    got = np.round(y / p["os"]) + p["ozp"]
    diff = np.abs(got - exact_reference(p, x, k, 1, ho, pads, wo))
    print(f"max |diff| = {diff.max():.0f} LSB, {np.mean(diff > 0) * 100:.3f}% of outputs differ")
    assert diff.max() <= 1
    assert ys["c7x"].tobytes() == ys["host"].tobytes() and ys["l2"].tobytes() == ys["host"].tobytes()


@pytest.mark.parametrize("relu", [True, False], ids=["relu", "linear"])
def test_int16_s2d_conv_matches_ort(relu, tmp_path):
    """int16 (the 32-wide tile): a 16 -> 8 3x3 conv at 32x32 as 2x2 = 32
    channels, stride 2, kernel 4x4; ReLU as the int16 path's second call.
    Within the int16 offload tolerance of ORT (test_mmalib_i16.py)."""
    from test_mmalib_i16 import Net, check_vs_ort, compile_run, layers_of, x_input
    net = Net([1, 16, 32, 32], seed=3)
    name = net.conv("x", 8, k=3, relu=relu)
    x = x_input(net.x_shape)
    model, qp = net.qdq_model(x)
    # the budget refuses channel padding (x4 the MACs, the cheaper estimate)
    path, out, stdout, man, y = compile_run(tmp_path, model, x, target="c_static_lib -mmalib-pad-budget=3.9 -mmalib=1")
    print(stdout)
    assert f"padded '{name}' C_out s2d 2x2 8 -> 32" in stdout
    e = layers_of(man)[name]
    assert e["kind"] == "conv2d" and e["kernel"] == "mmalib_conv2d_i16", e
    assert man["offload"]["mma_share"] == 1.0
    check_vs_ort(path, y, x, qp[name][0], e["scale_shift_max_rel_err"], what="int16 s2d")


def test_s2d_c7x_and_l2_staged_builds_equal_the_host(tmp_path):
    """The cropped case (copy view, 6-D transpose, crop) built for the C7x,
    unstaged and with an L2 budget (the staged DMA plan), gives the host
    build's output bit for bit."""
    f, q = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    ho = conv_model(f, 8, 8, 5, 1, 47)
    quantize(f, q, symmetric=False, c=8, hw=47)
    x = np.random.default_rng(11).normal(size=(1, 8, 47, 47)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    ys = {}
    for tag, target in (("host", "c_static_lib -mmalib-pad-budget=3.9 -mmalib=1 -mmalib-exact=none"), ("c7x", "c_static_lib -mcpu=c7x -mmalib-pad-budget=3.9 -mmalib=1 -mmalib-exact=none -l2-budget=0"),
                        ("l2", "c_static_lib -mcpu=c7x -mmalib-pad-budget=3.9 -mmalib=1 -mmalib-exact=none -l2-budget=262144")):
        out = tmp_path / tag
        r = cstatic("compile", q, "-o", out, "-t", target)
        assert "C_out s2d 2x2 8 -> 64" in r.stdout, (tag, r.stdout)
        cstatic("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / f"y_{tag}.npy")
        ys[tag] = np.load(tmp_path / f"y_{tag}.npy")
        if tag == "l2":
            man = json.load(open(out / "manifest.json"))
            print("l2 bytes", man["l2_bytes"])
    assert ys["host"].shape == (1, 8, ho, ho)
    assert ys["c7x"].tobytes() == ys["host"].tobytes() and ys["l2"].tobytes() == ys["host"].tobytes()


def pool_model(path, c_in, c_out, hw, act, seed=0):
    """MTCNN P-Net's stem: Conv 3x3 unpadded -> PRelu (a slope per channel,
    some negative) or Relu -> MaxPool 2x2 stride 2 (ceil mode, as PyTorch's
    MTCNN exports it; the window tiles the even output exactly)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(c_out, c_in, 3, 3)).astype(np.float32) * 0.2
    b = rng.normal(size=(c_out,)).astype(np.float32) * 0.1
    ho = hw - 2
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], name="conv0", kernel_shape=[3, 3])]
    if act == "prelu":
        slope = np.linspace(-0.3, 0.6, c_out, dtype=np.float32).reshape(c_out, 1, 1)
        inits.append(numpy_helper.from_array(slope, "slope"))
        nodes.append(helper.make_node("PRelu", ["c", "slope"], ["a"], name="act0"))
    else:
        nodes.append(helper.make_node("Relu", ["c"], ["a"], name="act0"))
    nodes.append(helper.make_node("MaxPool", ["a"], ["y"], name="pool0", kernel_shape=[2, 2], strides=[2, 2],
                                  ceil_mode=1))
    graph = helper.make_graph(
        nodes, "s2d_pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c_in, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, c_out, ho // 2, ho // 2])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


@pytest.mark.parametrize("act", ["prelu", "relu"])
def test_s2d_into_pool_gives_ort_bytes(act, tmp_path):
    """The pool takes the depth-to-space (no transpose): 3 -> 10 at 48x48
    computes 2x2 pixels per channel (40 channels, padded to 64 on the
    exact path's 32-wide tile) at 23x23, the pool reads the four phases of
    a window as rows 23 apart. ORT's bytes on the host build and on the
    C7x builds, unstaged and L2-staged; fewer MACs than padding to 32."""
    import onnxruntime as ort
    from conftest import ORT_CONFIG
    f, q = str(tmp_path / "f.onnx"), str(tmp_path / "q.onnx")
    pool_model(f, 3, 10, 48, act)
    quantize(f, q, symmetric=False, c=3, hw=48)
    x = np.random.default_rng(5).normal(size=(1, 3, 48, 48)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    so = ort.SessionOptions()
    for k, v in ORT_CONFIG.items():
        so.add_session_config_entry(k, v)
    ref = ort.InferenceSession(q, so, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    cstatic("compile", q, "-o", tmp_path / "plain", "-t", "c_static_lib")
    cstatic("run", tmp_path / "plain", "--input", tmp_path / "x.npy", "--output", tmp_path / "plain.npy")
    plain = np.load(tmp_path / "plain.npy")
    # equal values; ORT's output dequantizes some zeros as -0.0 where
    # cstatic gives +0.0 and the reverse, the plain build as this one
    assert np.array_equal(plain, ref)
    for tag, target in (("host", "c_static_lib -mmalib-pad-budget=3 -mmalib=1"), ("c7x", "c_static_lib -mcpu=c7x -mmalib-pad-budget=3 -mmalib=1 -l2-budget=0"),
                        ("l2", "c_static_lib -mcpu=c7x -mmalib-pad-budget=3 -mmalib=1 -l2-budget=262144")):
        out = tmp_path / tag
        r = cstatic("compile", q, "-o", out, "-t", target)
        assert "padded 'conv0' C_out s2d 2x2 into pool 10 -> 64" in r.stdout, (tag, r.stdout)
        man = json.load(open(out / "manifest.json"))
        d = man["offload"]["padding"]["decisions"][0]
        assert d["what"] == "C_out s2d 2x2 into pool" and d["macs"] == 10 * 46 * 46 * 27
        assert d["macs_added"] == 64 * 23 * 23 * 48 - d["macs"] < (32 - 10) * 46 * 46 * 27
        assert d["est_mma_cycles"] < d["est_scalar_cycles"] and man["arena_ratio"] <= 1.10
        src = "".join(open(p).read() for p in out.glob("lib*.c"))
        assert "mmalib_conv2d_i16(" in src and "tidsp_transpose(" not in src
        cstatic("run", out, "--input", tmp_path / "x.npy", "--output", out / "y.npy")
        y = np.load(out / "y.npy")
        assert y.tobytes() == plain.tobytes(), (tag, np.mean(y == plain))
