"""Attention's products of two runtime tensors on the MMA (issue 16):
Q(MatMul(DQ(a), DQ(b))) under -mmalib=1 and the exact path runs as
k_widen_i16 (operand − zero point, padded to 32) → mmalib_batch_matmul_i16
→ k_batch_matmul_exact_requant (compiler/passes/fuse_qdq_to_int8_batch_matmul.c),
and gives ONNX Runtime's QLinearMatMul bytes.

Small QDQ graphs built with onnx.helper, random int8/uint8 data, zero
points off zero: 2-D, batched [2,3,M,K]x[2,3,K,N], a broadcast batch on
either side, Kᵀ through a Transpose, a ReLU, M/K/N not multiples of 32 —
each bit-identical with ORT on the host and on -mcpu=c7x (unstaged and
L2-staged); the offload report names the MMALIB call with its padding, and
the generated C compiles warning-free.
The swin-sized product (49x32x49) does not pay and stays on the core, the
report saying its estimate; -mmalib-exact=none keeps the core kernel.
"""

import json

import numpy as np
import pytest

from conftest import ORT_CONFIG, ort_ref
from cstatic_cli import cstatic
from test_warnings import assert_generated_c_clean

TARGETS = {
    "host": "c_static_lib -mmalib=1",
    "c7x": "c_static_lib -mcpu=c7x -mmalib=1 -l2-budget=0",
    "l2": "c_static_lib -mcpu=c7x -mmalib=1 -l2-budget=262144",
}


def matmul_model(a_shape, b_shape, dt, zps, transpose_b=False, relu=False):
    """a, b: graph inputs, int8 ('s8'), or float quantized to uint8 inside
    ('u8': ORT's uint8 activations); DQ each, MatMul, [Relu], Q → y. With
    transpose_b, b is given as [..., N, K] and a Transpose of the quantized
    tensor swaps its last two axes (attention's Kᵀ)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    tp, npt = (TensorProto.INT8, np.int8) if dt == "s8" else (TensorProto.UINT8, np.uint8)
    k = a_shape[-1]
    a_s, b_s = 0.02, 0.03
    # spreads the outputs over most of the int8 range
    y_s = a_s * b_s * np.sqrt(k) * 5400 / 40
    nodes, a_in, b_in = [], "a", "b"
    in_tp = tp
    if dt == "u8":
        in_tp = TensorProto.FLOAT
        nodes += [helper.make_node("QuantizeLinear", ["a", "a_s", "a_zp"], ["a_q"], name="a_q"),
                  helper.make_node("QuantizeLinear", ["b", "b_s", "b_zp"], ["b_q"], name="b_q")]
        a_in, b_in = "a_q", "b_q"
    if transpose_b:
        perm = list(range(len(b_shape)))
        perm[-2:] = perm[-1], perm[-2]
        nodes.append(helper.make_node("Transpose", [b_in], ["b_t"], name="k_t", perm=perm))
        b_in = "b_t"
    nodes += [helper.make_node("DequantizeLinear", [a_in, "a_s", "a_zp"], ["a_f"], name="a_dq"),
              helper.make_node("DequantizeLinear", [b_in, "b_s", "b_zp"], ["b_f"], name="b_dq"),
              helper.make_node("MatMul", ["a_f", "b_f"], ["c"], name="qk")]
    if relu:
        nodes.append(helper.make_node("Relu", ["c"], ["c_r"], name="relu"))
    nodes.append(helper.make_node("QuantizeLinear", ["c_r" if relu else "c", "y_s", "y_zp"], ["y"], name="y_q"))
    out_tp, out = tp, "y"
    if dt == "u8":  # and float out: uint8 values inside the graph (DQ is one-to-one: the same bytes)
        nodes.append(helper.make_node("DequantizeLinear", ["y", "y_s", "y_zp"], ["y_f"], name="y_dq"))
        out_tp, out = TensorProto.FLOAT, "y_f"
    inits = {"a_s": np.float32(a_s), "a_zp": npt(zps[0]), "b_s": np.float32(b_s), "b_zp": npt(zps[1]),
             "y_s": np.float32(y_s), "y_zp": npt(zps[2])}
    n = b_shape[-2] if transpose_b else b_shape[-1]
    lead = np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2]))
    graph = helper.make_graph(nodes, "attn_mm",
                              [helper.make_tensor_value_info("a", in_tp, a_shape),
                               helper.make_tensor_value_info("b", in_tp, b_shape)],
                              [helper.make_tensor_value_info(out, out_tp, [*lead, a_shape[-2], n])],
                              [numpy_helper.from_array(np.asarray(v), n) for n, v in inits.items()])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    return m, npt, (a_s, zps[0]), (b_s, zps[1])


# name: (a shape, b shape as given, dtype, (a_zp, b_zp, y_zp), Kᵀ via Transpose, ReLU)
CASES = {
    "2d": ((150, 300), (300, 130), "s8", (3, -5, 2), False, False),
    "batched_kt": ((2, 3, 150, 300), (2, 3, 140, 300), "s8", (-7, 4, 0), True, False),
    "batched_kt_u8": ((2, 2, 150, 300), (2, 2, 140, 300), "u8", (125, 133, 128), True, False),
    "bcast_b_u8": ((2, 3, 150, 300), (300, 140), "u8", (131, 120, 128), False, False),
    "bcast_a_u8_relu": ((150, 300), (2, 3, 300, 130), "u8", (140, 110, 100), False, True),
    "aligned": ((128, 256), (256, 160), "s8", (0, 0, -3), False, False),
}


def _build(tmp_path, case):
    import onnx
    a_shape, b_shape, dt, zps, tb, relu = CASES[case]
    model, npt, aq, bq = matmul_model(a_shape, b_shape, dt, zps, tb, relu)
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    info = np.iinfo(npt)
    rng = np.random.default_rng(11)
    a = rng.integers(info.min, info.max + 1, size=a_shape).astype(npt)
    b = rng.integers(info.min, info.max + 1, size=b_shape).astype(npt)
    if dt == "u8":  # float inputs on the uint8 grid (and a little beyond it: saturation)
        a = ((a.astype(np.float32) - aq[1]) * np.float32(aq[0]) * np.float32(1.02)).astype(np.float32)
        b = ((b.astype(np.float32) - bq[1]) * np.float32(bq[0]) * np.float32(1.02)).astype(np.float32)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    ref = ort_ref.session(str(path), config=ORT_CONFIG).run(None, {"a": a, "b": b})[0]
    return path, ref


def _run(tmp_path, path, target, tag):
    out = tmp_path / tag
    cstatic("compile", path, "-o", out, "-t", target)
    cstatic("run", out, "--input", tmp_path / "a.npy", "--input", tmp_path / "b.npy", "--output", out / "y.npy")
    return np.load(out / "y.npy"), json.load(open(out / "manifest.json"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_on_the_mma_equals_ort(case, tmp_path):
    path, ref = _build(tmp_path, case)
    a_shape, b_shape, _, _, tb, _ = CASES[case]
    m, k = a_shape[-2:]
    n = b_shape[-2] if tb else b_shape[-1]
    batch = int(np.prod(ref.shape[:-2]))
    pad = lambda v: -(-v // 32) * 32  # noqa: E731
    for tag, target in TARGETS.items():
        y, man = _run(tmp_path, path, target, tag)
        if tag == "c7x":  # the three calls' generated C, -Werror (test_warnings.py)
            assert_generated_c_clean(tmp_path / tag)
        layers = man["offload"]["layers"]
        assert [(e["kind"], e.get("kernel")) for e in layers] == [("matmul", "mmalib_batch_matmul_i16")], layers
        assert layers[0]["exact_requant"]["est_core_cycles"] > 0, layers
        hist = man["totals"]["kernels"]
        assert hist.get("tidsp_widen_i16") == 2 and hist.get("mmalib_batch_matmul_i16") == 1, hist
        assert hist.get("tidsp_batch_matmul_exact_requant") == 1 and "tidsp_batch_matmul_i8" not in hist, hist
        if tb:  # Kᵀ's Transpose is folded into the widening
            assert "tidsp_transpose" not in hist, hist
        # the MMA runs the padded product; the padding is reported
        pads = man["offload"]["padding"]
        added = batch * (pad(m) * pad(k) * pad(n) - m * k * n)
        assert pads["macs_added"] == added, pads
        assert man["offload"]["macs_mma"] == batch * pad(m) * pad(k) * pad(n), man["offload"]
        assert y.dtype == ref.dtype and y.shape == ref.shape, (y.dtype, y.shape)
        diff = int((y != ref).sum())
        assert diff == 0, f"{tag}: {diff} of {y.size} outputs differ from ORT's"


def test_exact_none_keeps_the_core_kernel(tmp_path):
    path, ref = _build(tmp_path, "2d")
    y, man = _run(tmp_path, path, "c_static_lib -mmalib=1 -mmalib-exact=none", "none")
    assert all(e.get("kernel") != "mmalib_batch_matmul_i16" for e in man["offload"]["layers"]), man["offload"]
    assert man["offload"]["macs_mma"] == 0
    assert "tidsp_batch_matmul_i8" in man["totals"]["kernels"], man["totals"]["kernels"]
    assert y.tobytes() == ref.tobytes()


def test_tiny_product_does_not_pay(tmp_path):
    """Products of 2x4 by 4x2, 3 heads: a whole 32x32 panel and its load
    for 16 MACs a head, so the cost rule keeps them on the core and the
    report says its estimate."""
    CASES["tiny_qk"] = ((1, 3, 2, 4), (1, 3, 2, 4), "s8", (1, -2, 0), True, False)
    try:
        path, ref = _build(tmp_path, "tiny_qk")
    finally:
        del CASES["tiny_qk"]
    y, man = _run(tmp_path, path, TARGETS["host"], "host")
    (entry,) = man["offload"]["layers"]
    assert entry["kind"] == "matmul" and "kernel" not in entry, entry
    assert entry["declined"].startswith("does not pay: MMA estimate"), entry
    assert man["offload"]["macs_mma"] == 0
    assert y.tobytes() == ref.tobytes()


def test_module_on_the_mmalib_firmware(tmp_path):
    """Deployed: the -mcpu=c7x -mmalib=1 module (lib0.out) resolves the new
    calls against the MMALIB firmware's export table (c7x_fw_mmalib), is
    refused by the plain firmware naming the MMALIB symbol, and its
    inference gives ORT's bytes."""
    import os
    from deploy_util import COMPUTE_BIN, FW_DIR, Firmware, run
    path, ref = _build(tmp_path, "batched_kt")
    out = tmp_path / "mod"
    cstatic("compile", path, "-o", out, "-t", TARGETS["c7x"], "--emit=module", "-q")
    for arr in ("a", "b"):
        np.load(tmp_path / f"{arr}.npy").tofile(tmp_path / f"{arr}.bin")
    plain = Firmware(tmp_path, "--ddr-heap-mib", "64", name="plain")
    try:
        p = run(COMPUTE_BIN, "load", out / "lib0.out", env=plain.env, ok=False)
        assert p.returncode != 0 and "mmalib_batch_matmul_i16" in p.stderr, p.stderr
    finally:
        plain.stop()
    fw = Firmware(tmp_path, "--ddr-heap-mib", "64", binary=os.path.join(FW_DIR, "c7x_fw_mmalib"), name="mm")
    try:
        handle = fw.load(out / "lib0.out")
        fw.compute("infer", handle, 0, "-i", tmp_path / "a.bin", "-i", tmp_path / "b.bin", "-o", tmp_path / "y.bin",
                   "--dtype", "int8")
        assert (tmp_path / "y.bin").read_bytes() == ref.tobytes()
        fw.compute("unload", handle)
    finally:
        fw.stop()


@pytest.mark.slow
@pytest.mark.parametrize("act", ["s8", "u8"])
def test_tv_swin_s_on_c7x_mmalib(tmp_path, act):
    """The small torchvision Swin (tests/models/tv_nets.py) under -mcpu=c7x
    -mmalib=1: its eight attention products (Q·Kᵀ and A·V of 4x4 windows,
    2 heads of 8) run on the MMA, padded to 32 (the report's matmul
    entries, each with its exact_requant block and its padding decision),
    and the network gives ORT's bytes."""
    import os
    import subprocess
    import sys
    from conftest import MODELS_OUT, MODELS_SRC, ort_ref
    p = subprocess.run([sys.executable, os.path.join(MODELS_SRC, "tv_nets.py"), "--out", MODELS_OUT, "--nets",
                        "swin_s"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    model = os.path.join(MODELS_OUT, f"tv_swin_s_ort_{act}.onnx")
    if act == "u8" and ort_ref.has_u8_matmul(model) and not ort_ref.u8_matmul_is_exact():
        pytest.skip("ORT's uint8 QLinearMatMul saturates int16 pair sums on this CPU (no VNNI); "
                    "not an exact reference")
    inputs = os.path.join(MODELS_OUT, "tv_swin_s_inputs.npy")
    config = {"session.qdqisint8allowed": "1"}
    if act == "u8":
        config["session.x64quantprecision"] = "1"
    ref = ort_ref.cached_run(model, inputs, os.path.join(MODELS_OUT, f"tv_swin_s_ort_{act}_ref.npy"), config)
    out = tmp_path / "out"
    cstatic("compile", model, "-o", out, "-q", "-t", "c_static_lib -mcpu=c7x -mmalib=1")
    cstatic("run", out, "--input", inputs, "--output", tmp_path / "y.npy")
    layers = json.load(open(out / "manifest.json"))["offload"]["layers"]
    mm = [e for e in layers if e["kind"] == "matmul"]
    assert len(mm) == 8 and all(e.get("kernel") == "mmalib_batch_matmul_i16" and "exact_requant" in e
                                for e in mm), mm
    assert np.load(tmp_path / "y.npy").tobytes() == ref.tobytes()


def test_q31_requant_equals_ort(tmp_path):
    """-requant=q31 (the integer form of the same multiplier): the core
    kernel requantizes z's ends with it, ORT's bytes again."""
    path, ref = _build(tmp_path, "bcast_b_u8")
    y, man = _run(tmp_path, path, "c_static_lib -mcpu=c7x -mmalib=1 -requant=q31", "q31")
    assert [e.get("kernel") for e in man["offload"]["layers"]] == ["mmalib_batch_matmul_i16"]
    assert y.tobytes() == ref.tobytes()
