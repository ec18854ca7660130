"""-mmalib-exact (issue 13 point 5): int8 convs whose MACs run on MMALIB's
int16 kernel and whose requantization runs on the core
(compiler/passes/match/mmalib_exact.c, runtime/kernels/ref/
mmalib_exact_requant.c) give ORT's bytes — where the int8 kernel's 8-bit
scale puts a share of the outputs 1 LSB off.

Single layers built in ONNX (test_mmalib_edge's convs and one-row FCs, and
an FC of 6 rows: int8 graph I/O,
per-channel weight scales 16x apart, ORT's int32 bias), random inputs:
- `all`, the default of -mmalib=1: bit-identical with ORT's int8 on every
  output, host and C7x (L2-staged) builds alike; the offload report names
  the int16 kernel and gives exact_requant; -mmalib-exact=none (the int8
  kernel) on the same layer is not identical (so the check can fail);
- a 5x5/7x7 depthwise (MMALIB's int16 depthwise kernel is 3x3 only) runs
  as 3x3 int16 tiles whose partial results the core kernel sums: ORT's
  bytes too, stride 1 and 2, host and C7x;
- an asymmetric stride (2, 1) or (1, 2) runs as two int16 convs at stride
  (2, 2) whose outputs a concat interleaves: ORT's bytes, host and C7x;
- a grouped conv (no int16 grouped kernel) runs as block-diagonal int16
  convs of 32 channels, the core kernel requantizing the grouped conv:
  ORT's bytes, host and C7x;
- `worst` takes exactly the layers its documented rule names:
  |g|max·max|y − o_zp| ≥ 1/2 LSB, from the offload report's own numbers.
Every target lifts the padding budget (-mmalib-pad-budget=64): these check
the exact path on each form, whatever MACs it adds.
"""

import json

import numpy as np
import pytest

from conftest import ORT_CONFIG
from cstatic_cli import cstatic
from test_mmalib_edge import conv_case, fc_case

CASES = {
    "conv3x3": lambda r: conv_case(r, 64, 64, 28, 3, 1, 1, False, o_zp=5),
    "conv_stride2_relu": lambda r: conv_case(r, 64, 64, 28, 3, 2, 1, True, o_zp=-128),
    "conv_dzp_pad": lambda r: conv_case(r, 32, 64, 28, 3, 1, 1, False, x_zp=-11),
    "dw3x3_relu": lambda r: conv_case(r, 64, 64, 28, 3, 1, 64, True, o_zp=-128),
    "dw5x5": lambda r: conv_case(r, 64, 64, 28, 5, 1, 64, False, o_zp=1),
    "dw5x5_s2_relu": lambda r: conv_case(r, 64, 64, 28, 5, 2, 64, True, o_zp=-128),
    # a zero point on the input: the widening's x − x_zp makes MMALIB's zero
    # padding ORT's border (no pad copy), here under the tiles at {0, 2}
    "dw5x5_dzp": lambda r: conv_case(r, 32, 32, 14, 5, 1, 32, False, x_zp=-37, o_zp=4),
    "dw7x7": lambda r: conv_case(r, 64, 64, 28, 7, 1, 64, False, o_zp=-3),
    "dw7x7_relu": lambda r: conv_case(r, 32, 32, 14, 7, 1, 32, True, o_zp=-128),
    # stride 2 with a 7x7 window: the int8 kernel's rule (k <= 5) declines
    # it under -mmalib-exact=none; the exact path's 3x3 tiles take it
    "dw7x7_s2": lambda r: conv_case(r, 32, 32, 28, 7, 2, 32, False, o_zp=2),
    "fc256x512": lambda r: fc_case(r, 256, 512, False),
    "fc_relu": lambda r: fc_case(r, 128, 64, True),
    "fc_rows": lambda r: fc_rows_case(r, 6, 128, 64),
    "fc_rows_npad": lambda r: fc_rows_case(r, 40, 128, 120),  # N padded to 128 (the recognizer's FCs)
    # padded to the int16 kernel's tile, 32 (issue 16): C_out 24 -> 32;
    # 40 -> 64 (a whole tile and a padded one), stride 2, ReLU; an FC of
    # K 96 (no padding at 32) and N 40 -> 64
    "conv_pad32": lambda r: conv_case(r, 32, 24, 28, 3, 1, 1, False, o_zp=5),
    "conv_pad32_s2_relu": lambda r: conv_case(r, 32, 40, 28, 3, 2, 1, True, o_zp=-128),
    "fc_rows_kn32": lambda r: fc_rows_case(r, 128, 96, 40),
    # grouped (issue 16): block-diagonal int16 convs of 32 channels —
    # RegNet's 8 channels per group, 6 groups as blocks of 4 + 2, stride 2,
    # the input zero point padded explicitly; and 2 groups of 32 (a block
    # per group, no zeros)
    "grouped_6x8_s2": lambda r: conv_case(r, 48, 48, 28, 3, 2, 6, False, x_zp=-5),
    "grouped_2x32_relu": lambda r: conv_case(r, 64, 64, 14, 3, 1, 2, True, o_zp=-128),
    # asymmetric stride (issue 16, MMALIBAsymStride): two phases at stride
    # (2, 2); an odd length has the last phase's extra column cut
    "conv_s21": lambda r: conv_case(r, 64, 64, 48, 3, (2, 1), 1, False, o_zp=5),
    "conv_s12_odd_relu": lambda r: conv_case(r, 64, 64, 47, 3, (1, 2), 1, True, o_zp=-128),
}

# The padding of those cases: (C_out or N, its padding, MACs added) under
# the default (the int16 kernel's tile, 32) and under -mmalib-exact=none
# (the int8 kernel's, 64).
PADDED = {
    "conv_pad32": {"all": (24, 32, 8 * 32 * 9 * 28 * 28), "none": (24, 64, 40 * 32 * 9 * 28 * 28)},
    "conv_pad32_s2_relu": {"all": (40, 64, 24 * 32 * 9 * 14 * 14), "none": (40, 64, 24 * 32 * 9 * 14 * 14)},
    "fc_rows_kn32": {"all": (40, 64, 128 * 96 * 64 - 128 * 96 * 40), "none": (40, 64, 128 * 128 * 64 - 128 * 96 * 40)},
}


def fc_rows_case(rng, m, k, n):
    """x:int8 [m,K] -> DQ -> Gemm(transB=1, DQ(w [N,K]), DQ(b)) -> Q -> y:int8 [m,N] (a sequence FC)."""
    from onnx import helper
    from test_mmalib_edge import _dq, _model, _q, _quant_consts, _weights
    x_s, x_zp, o_zp = 0.05, 3, -7
    w, ws = _weights(rng, (n, k), n)
    bs = (np.float32(x_s) * ws).astype(np.float32)
    b = rng.integers(-2000, 2000, size=n).astype(np.int32)
    o_s = float(np.sqrt(k) * 150 * (np.float64(x_s) * ws.astype(np.float64)).mean())
    nodes = [_dq("x", x_s, x_zp), _dq("w", ws, 0, axis=0), _dq("b", bs, 0, axis=0),
             helper.make_node("Gemm", ["x_f", "w_f", "b_f"], ["c"], name="fc0", transB=1), _q("c", "y")]
    inits = {"w": w, "w_s": ws, "w_zp": np.zeros(n, np.int8), "b": b, "b_s": bs, "b_zp": np.zeros(n, np.int32),
             **_quant_consts("x", x_s, x_zp), **_quant_consts("y", o_s, o_zp)}
    return _model(nodes, [("x", [m, k])], ("y", [m, n]), inits), {"x": (m, k)}, None


def _build(tmp_path, case):
    import onnx
    rng = np.random.default_rng(7)
    model, inputs, _ = CASES[case](rng)
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    x = rng.integers(-128, 128, size=inputs["x"]).astype(np.int8)
    if inputs["x"][0] == 1:  # two images (an FC of several rows is one)
        x = np.concatenate([x, rng.integers(-128, 128, size=inputs["x"]).astype(np.int8)])
    np.save(tmp_path / "x.npy", x)
    import onnxruntime as ort
    so = ort.SessionOptions()
    for k, v in ORT_CONFIG.items():
        so.add_session_config_entry(k, v)
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    if inputs["x"][0] != 1:
        return path, sess.run(None, {"x": x})[0]
    ref = np.concatenate([sess.run(None, {"x": x[i:i + 1]})[0] for i in range(len(x))])
    return path, ref


def _run(tmp_path, path, target, tag):
    out = tmp_path / tag
    cstatic("compile", path, "-o", out, "-t", target)
    cstatic("run", out, "--input", tmp_path / "x.npy", "--output", out / "y.npy")
    return np.load(out / "y.npy"), json.load(open(out / "manifest.json"))["offload"]["layers"]


@pytest.mark.parametrize("case", ["conv3x3", "conv_stride2_relu", "conv_dzp_pad", "dw3x3_relu", "dw5x5",
                                  "dw5x5_s2_relu", "dw5x5_dzp", "dw7x7", "dw7x7_relu", "fc256x512", "fc_relu",
                                  "fc_rows", "fc_rows_npad", "conv_pad32", "conv_pad32_s2_relu", "fc_rows_kn32",
                                  "grouped_6x8_s2", "grouped_2x32_relu"])
def test_exact_equals_ort(case, tmp_path):
    path, ref = _build(tmp_path, case)
    plain, _ = _run(tmp_path, path, "c_static_lib -mmalib-pad-budget=64 -mmalib=1 -mmalib-exact=none", "plain")
    assert (plain != ref).any(), "the 8-bit scale matched ORT everywhere: this case cannot show the exact path"
    kernel = {"dw": "mmalib_depthwise_conv2d_i16", "fc": "mmalib_matmul_bias_i16"}.get(case[:2], "mmalib_conv2d_i16")
    # -mmalib=1's default (-mmalib-exact=all)
    for target in ("c_static_lib -mmalib-pad-budget=64 -mmalib=1", "c_static_lib -mcpu=c7x -mmalib-pad-budget=64 -mmalib=1"):
        y, layers = _run(tmp_path, path, target, "c7x" if "c7x" in target else "host")
        assert [e.get("kernel") for e in layers] == [kernel], layers
        ex = layers[0]["exact_requant"]
        assert 0 <= ex["max_error_lsb"] < 2.0 ** -8 and ex["int8_scale_rel_err"] <= 2.0 ** -8, ex
        # the int16 call's quarter rate shows in its panels; a depthwise call
        # is one panel per channel either way, so staged (no DDR bytes to
        # double) its estimate is the int8 one's within the tile's load
        slower = ex["est_mma_cycles"] > ex["est_int8_mma_cycles"] or (case.startswith("dw") and
                                                                    ex["est_mma_cycles"] > 0.9 * ex["est_int8_mma_cycles"])
        assert slower and ex["est_int8_mma_cycles"] > 0 and ex["est_core_cycles"] > 0, ex
        diff = int((y != ref).sum())
        assert diff == 0, f"{target}: {diff} of {y.size} outputs differ from ORT's int8"


@pytest.mark.parametrize("case", sorted(PADDED))
def test_padded_to_the_tile_of_the_kernel_that_runs(case, tmp_path):
    """Under the default an offloaded int8 conv or FC runs as the int16
    kernel, so its C_out (N, K) is padded to 32; -mmalib-exact=none runs
    the int8 kernel and pads to 64, as before. Both staged builds (C7x
    unstaged, L2-staged) give the host's bytes, which are ORT's
    (test_exact_equals_ort), and the arena stays within 1.10x of its live
    bound."""
    path, ref = _build(tmp_path, case)
    ys = {}
    for mode, target in (("all", "c_static_lib -mmalib-pad-budget=64 -mmalib=1"), ("c7x", "c_static_lib -mcpu=c7x -mmalib-pad-budget=64 -mmalib=1 -l2-budget=0"),
                         ("l2", "c_static_lib -mcpu=c7x -mmalib-pad-budget=64 -mmalib=1 -l2-budget=262144"),
                         # priced from DDR, where padding (not 2x2 output space-to-depth) is the
                         # cheaper form of the int8 kernel's 64-wide tile
                         ("none", "c_static_lib -mmalib-pad-budget=64 -mmalib=1 -mmalib-exact=none -l2-budget=0")):
        out = tmp_path / mode
        r = cstatic("compile", path, "-o", out, "-t", target)
        man = json.load(open(out / "manifest.json"))
        dec = man["offload"]["padding"]["decisions"]
        want = PADDED[case]["none" if mode == "none" else "all"]
        assert [(d["padded"], d["c_out"], d["c_pad"], d["macs_added"]) for d in dec] == [(True, *want)], dec
        assert f"-> {want[1]}:" in r.stdout, r.stdout
        assert man["arena_ratio"] <= 1.10, mode
        kernel = man["offload"]["layers"][0]["kernel"]
        assert kernel.endswith("_i8" if mode == "none" else "_i16"), kernel
        cstatic("run", out, "--input", tmp_path / "x.npy", "--output", out / "y.npy")
        ys[mode] = np.load(out / "y.npy")
    assert ys["all"].tobytes() == ref.tobytes()
    assert ys["c7x"].tobytes() == ys["all"].tobytes() and ys["l2"].tobytes() == ys["all"].tobytes()


# (case, phases' axis length: W_out for (2, 1), H_out for (1, 2))
@pytest.mark.parametrize("case,length", [("conv_s21", 48), ("conv_s12_odd_relu", 47)])
def test_asymmetric_stride_as_phases_gives_ort_bytes(case, length, tmp_path):
    """Stride (2, 1) / (1, 2): the layer at stride (2, 2) twice, phase 1's
    window one column (row) later, a concat interleaving their outputs (and
    a cut of the extra one when the length is odd): two int16 exact layers,
    ORT's bytes on the host, the C7x unstaged and L2-staged; the report's
    decision counts the layer's own positions (odd: one more per row or
    column); -mmalib-exact=none (the int8 kernel, the same phases; at an
    even length: odd, its cheaper form is the stride-1 conv and a pick) is
    within 1 LSB of ORT; the arena within 1.10x of its live bound."""
    path, ref = _build(tmp_path, case)
    other = ref.shape[2] * ref.shape[3] // length
    pos, pos1 = other * length, other * (length + length % 2)
    targets = [("host", "c_static_lib -mmalib-pad-budget=64 -mmalib=1"), ("c7x", "c_static_lib -mcpu=c7x -mmalib-pad-budget=64 -mmalib=1 -l2-budget=0"),
               ("l2", "c_static_lib -mcpu=c7x -mmalib-pad-budget=64 -mmalib=1 -l2-budget=262144")]
    if length % 2 == 0:
        targets.append(("none", "c_static_lib -mmalib-pad-budget=64 -mmalib=1 -mmalib-exact=none"))
    for tag, target in targets:
        out = tmp_path / tag
        cstatic("compile", path, "-o", out, "-t", target)
        man = json.load(open(out / "manifest.json"))
        d = man["offload"]["padding"]["decisions"]
        assert [(x["what"], x["padded"], x["c_out"], x["c_pad"]) for x in d] == [("positions", True, pos, pos1)], d
        assert d[0]["macs_added"] == 64 * 64 * 9 * (pos1 - pos) and d[0]["est_mma_cycles"] < d[0]["est_scalar_cycles"]
        kernel = "mmalib_conv2d_i8" if tag == "none" else "mmalib_conv2d_i16"
        assert [e.get("kernel") for e in man["offload"]["layers"]] == [kernel] * 2, man["offload"]["layers"]
        assert man["offload"]["mma_share"] == 1.0 and man["arena_ratio"] <= 1.10, tag
        cstatic("run", out, "--input", tmp_path / "x.npy", "--output", out / "y.npy")
        y = np.load(out / "y.npy")
        if tag == "none":
            assert np.abs(y.astype(np.int32) - ref.astype(np.int32)).max() <= 1
        else:
            assert y.tobytes() == ref.tobytes(), tag


def test_dw7x7_stride2_runs_as_tiles(tmp_path):
    """A 7x7 depthwise conv at stride 2: the int8 kernel's rule (stride 2
    needs k <= 5) declines it to the core under -mmalib-exact=none; the
    exact path runs it as nine 3x3 int16 calls at stride 2 (the offload
    report names the int16 depthwise kernel), ORT's bytes on host and C7x
    alike."""
    path, ref = _build(tmp_path, "dw7x7_s2")
    plain, layers = _run(tmp_path, path, "c_static_lib -mmalib-pad-budget=64 -mmalib=1 -mmalib-exact=none", "plain")
    assert "stride 2 requires k <= 5" in layers[0].get("declined", ""), layers
    assert plain.tobytes() == ref.tobytes()  # the core's int8 conv: ORT's
    for target in ("c_static_lib -mmalib-pad-budget=64 -mmalib=1", "c_static_lib -mcpu=c7x -mmalib-pad-budget=64 -mmalib=1"):
        y, layers = _run(tmp_path, path, target, "c7x" if "c7x" in target else "host")
        assert [e.get("kernel") for e in layers] == ["mmalib_depthwise_conv2d_i16"], layers
        assert y.tobytes() == ref.tobytes(), target
    # the report: the tiles' taps decision, and whether its estimate is
    # above the core's (then it says the rule did not choose it)
    r = cstatic("compile", path, "-o", tmp_path / "report", "-t", "c_static_lib -mcpu=c7x -mmalib-pad-budget=64 -mmalib=1")
    d = json.load(open(tmp_path / "report" / "manifest.json"))["offload"]["padding"]["decisions"]
    assert [(x["what"], x["c_out"], x["c_pad"]) for x in d] == [("taps", 49, 81)], d
    line = next(l for l in r.stdout.splitlines() if "taps 49 -> 81" in l)
    above = d[0]["est_mma_cycles"] > d[0]["est_scalar_cycles"]
    assert ("not gated by the rule" in line) == above, line


def test_worst_follows_its_rule(tmp_path):
    import onnx
    chosen = {}
    for case in ("conv3x3", "conv_stride2_relu", "dw3x3_relu"):
        rng = np.random.default_rng(7)
        model, _, _ = CASES[case](rng)
        path = tmp_path / f"{case}.onnx"
        onnx.save(model, str(path))
        from onnx import numpy_helper
        o_zp = int(numpy_helper.to_array(next(i for i in model.graph.initializer if i.name == "y_zp")))
        span = max(127 - o_zp, o_zp + 128)
        for mode in ("none", "worst"):
            out = tmp_path / f"{case}_{mode}"
            cstatic("compile", path, "-o", out, "-t", f"c_static_lib -mmalib-pad-budget=64 -mmalib=1 -mmalib-exact={mode}")
            layers = json.load(open(out / "manifest.json"))["offload"]["layers"]
            if mode == "none":
                g = layers[0]["scale_shift_max_rel_err"]
            else:
                chosen[case] = "exact_requant" in layers[0]
                assert chosen[case] == (g * span >= 0.5), (case, g, o_zp, layers[0])
    # the rule splits these: ReLU-clamped outputs (o_zp = -128) with |g| >= 1/510, not the symmetric one
    assert not chosen["conv3x3"] and any(chosen.values()), chosen


@pytest.mark.parametrize("relu", [False, True], ids=["plain", "relu"])
def test_residual_add_strict_is_ort_exact(relu, tmp_path):
    """The int8 residual add: the default keeps the spec's fixed-point kernel
    (within 1 LSB: its half-up rounding against ORT's float to even);
    -mmalib-exact=strict declines it, saying why, to the core's add, which
    gives ORT's bytes."""
    import onnx
    import onnxruntime as ort
    from test_mmalib_edge import add_case
    rng = np.random.default_rng(5)
    shape = (1, 64, 28, 28)
    model, _, _ = add_case(rng, shape, relu)
    path = tmp_path / "add.onnx"
    onnx.save(model, str(path))
    a = rng.integers(-128, 128, size=shape).astype(np.int8)
    b = rng.integers(-128, 128, size=shape).astype(np.int8)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    so = ort.SessionOptions()
    for k, v in ORT_CONFIG.items():
        so.add_session_config_entry(k, v)
    ref = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"]).run(None, {"a": a, "b": b})[0]
    got = {}
    for mode in ("all", "strict"):
        out = tmp_path / mode
        cstatic("compile", path, "-o", out, "-t", f"c_static_lib -mmalib-pad-budget=64 -mmalib=1 -mmalib-exact={mode}")
        cstatic("run", out, "--input", tmp_path / "a.npy", "--input", tmp_path / "b.npy", "--output", out / "y.npy")
        got[mode] = np.load(out / "y.npy")
        layers = json.load(open(out / "manifest.json"))["offload"]["layers"]
        if mode == "all":
            assert [e.get("kernel") for e in layers] == ["c7x_int8_residual_add_relu"], layers
        else:
            assert "kernel" not in layers[0] and "-mmalib-exact=strict" in layers[0]["declined"], layers
    assert np.abs(got["all"].astype(int) - ref).max() <= 1
    assert (got["strict"] == ref).all(), "strict: the core's add differs from ORT's int8"
