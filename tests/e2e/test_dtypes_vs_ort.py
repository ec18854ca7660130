"""float16, bfloat16, double, uint32 and uint64 through Cast, Max/Min and
Pow against ONNX Runtime on the same file, bit for bit (ORT rounds
narrowing casts to nearest even, as tidsp_cast). ORT's Python API has no
bfloat16, so bf16 values come back through a Cast to float in the graph."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h

from conftest import ort_ref
from cstatic_cli import cstatic

NP = {TP.FLOAT: np.float32, TP.FLOAT16: np.float16, TP.DOUBLE: np.float64,
      TP.UINT32: np.uint32, TP.UINT64: np.uint64, TP.INT64: np.int64}


def _edge_floats(n=4096):
    r = np.random.default_rng(7)
    bits = r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32).copy()
    # ties and neighbours of float16 and bfloat16, subnormals, overflow, specials
    h16 = np.arange(0, 0x7bff, 37, dtype=np.uint16).view(np.float16).astype(np.float64)
    mids = ((h16[:-1] + np.nextafter(h16[:-1].astype(np.float16), np.float16(np.inf)).astype(np.float64)) / 2)
    bf_ties = ((np.arange(0, 0x7f80, 97, dtype=np.uint32) << 16) | 0x8000).view(np.float32)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 65504, 65519.99, 65520, 2**-24, 2**-25, 3 * 2**-25,
                        1e-40, -1e-45, 3.4028235e38], np.float32)
    return np.concatenate([x, mids.astype(np.float32), -mids.astype(np.float32), bf_ties, special])


def _run(tmp_path, nodes, inputs, outputs, feeds, ort=True):
    g = h.make_graph(nodes, "g", [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_tensor_value_info(n, t, None) for n, t in outputs])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
    m.ir_version = 9
    path = tmp_path / "m.onnx"
    onnx.save(m, path)
    want = ort_ref.session(str(path)).run(None, feeds) if ort else None
    cstatic("compile", path, "-o", tmp_path / "out", "-q", "-t", "-allow-float=1")
    args = []
    for j, (n, _, _) in enumerate(inputs):
        np.save(tmp_path / f"in{j}.npy", feeds[n])
        args += ["--input", tmp_path / f"in{j}.npy"]
    for j in range(len(outputs)):
        args += ["--output", tmp_path / f"out{j}.npy"]
    cstatic("run", tmp_path / "out", *args)
    return want, [np.load(tmp_path / f"out{j}.npy") for j in range(len(outputs))]


def _same_bits(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    if want.dtype.kind == "f":
        g, w = got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}")
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan)
        bad = (g != w) & ~nan
        assert not bad.any(), f"{int(bad.sum())} of {want.size} differ, first at {np.argmax(bad)}: " \
                              f"{got[bad][:4]} vs {want[bad][:4]}"
    else:
        assert np.array_equal(got, want)


@pytest.mark.parametrize("chain", [
    [TP.FLOAT16], [TP.BFLOAT16], [TP.DOUBLE, TP.FLOAT16], [TP.FLOAT16, TP.DOUBLE],
    [TP.BFLOAT16, TP.DOUBLE], [TP.UINT32], [TP.UINT64, TP.DOUBLE], [TP.DOUBLE, TP.UINT64],
], ids=lambda c: "_".join(TP.DataType.Name(t) for t in c))
def test_cast_chain_matches_ort(tmp_path, chain):
    """float32 → each dtype of the chain in turn → float32."""
    x = _edge_floats()
    if any(t in (TP.UINT32, TP.UINT64) for t in chain):
        x = np.abs(np.nan_to_num(x, nan=0, posinf=0, neginf=0)).clip(0, 2**31) # ORT's float→uint overflow is UB
    nodes, prev = [], "x"
    for k, t in enumerate(chain + [TP.FLOAT]):
        nodes.append(h.make_node("Cast", [prev], [f"c{k}"], to=t))
        prev = f"c{k}"
    want, got = _run(tmp_path, nodes, [("x", TP.FLOAT, [x.size])], [(prev, TP.FLOAT)], {"x": x})
    _same_bits(got[0], want[0])


@pytest.mark.parametrize("dt", [TP.FLOAT16, TP.DOUBLE, TP.UINT32, TP.UINT64])
def test_max_min_match_ort(tmp_path, dt):
    r = np.random.default_rng(dt)
    if dt in (TP.UINT32, TP.UINT64):
        info = np.iinfo(NP[dt])
        a = r.integers(0, info.max, [3, 5], dtype=NP[dt], endpoint=True)
        b = r.integers(0, info.max, [5], dtype=NP[dt], endpoint=True)
    else:
        a = (r.standard_normal([3, 5]) * 100).astype(NP[dt])
        b = (r.standard_normal([5]) * 100).astype(NP[dt])
    nodes = [h.make_node("Max", ["a", "b"], ["mx"]), h.make_node("Min", ["a", "b"], ["mn"])]
    want, got = _run(tmp_path, nodes, [("a", dt, [3, 5]), ("b", dt, [5])], [("mx", dt), ("mn", dt)],
                     {"a": a, "b": b})
    for g, w in zip(got, want):
        _same_bits(g, w)


@pytest.mark.parametrize("dt", [TP.UINT32, TP.UINT64])
def test_pow_unsigned_exponent_matches_ort_int64(tmp_path, dt):
    """ORT has no Pow with an unsigned exponent: its int64-exponent Pow on
    the same values is the reference."""
    x = np.random.default_rng(3).uniform(-3, 3, [4, 6]).astype(np.float32)
    e = np.arange(6, dtype=NP[dt])
    want, _ = _run(tmp_path, [h.make_node("Pow", ["x", "e"], ["y"])],
                   [("x", TP.FLOAT, [4, 6]), ("e", TP.INT64, [6])], [("y", TP.FLOAT)],
                   {"x": x, "e": e.astype(np.int64)})
    (tmp_path / "out").rename(tmp_path / "out_i64")
    _, got = _run(tmp_path, [h.make_node("Pow", ["x", "e"], ["y"])],
                  [("x", TP.FLOAT, [4, 6]), ("e", dt, [6])], [("y", TP.FLOAT)], {"x": x, "e": e}, ort=False)
    _same_bits(got[0], want[0])


@pytest.mark.parametrize("dt", [TP.FLOAT, TP.INT64])
def test_pow_exponent_varying_along_the_row_matches_ort(tmp_path, dt):
    """ORT multiplies out an exponent of 2 or 3 only where it is one value
    over the row (a scalar span); an exponent that varies goes to pow."""
    x = np.random.default_rng(4).uniform(-3, 3, [4, 6]).astype(np.float32)
    e = np.array([0, 1, 2, 3, 4, 5], NP[dt])
    col = np.array([[2], [3], [2], [3]], NP[dt])
    nodes = [h.make_node("Pow", ["x", "e"], ["y"]), h.make_node("Pow", ["x", "c"], ["z"])]
    want, got = _run(tmp_path, nodes, [("x", TP.FLOAT, [4, 6]), ("e", dt, [6]), ("c", dt, [4, 1])],
                     [("y", TP.FLOAT), ("z", TP.FLOAT)], {"x": x, "e": e, "c": col})
    for g, w in zip(got, want):
        _same_bits(g, w)


def test_op_without_a_kernel_for_the_dtype_names_it(tmp_path):
    g = h.make_graph([h.make_node("Relu", ["x"], ["y"], name="act")], "g",
                     [h.make_tensor_value_info("x", TP.DOUBLE, [2])], [h.make_tensor_value_info("y", TP.DOUBLE, None)])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
    onnx.save(m, tmp_path / "m.onnx")
    p = cstatic("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", ok=False)
    assert p.returncode == 1 and "node 'act' (Relu): input 'x' has dtype f64, which this op does not take" in p.stderr


def test_python_api_carries_the_new_dtypes():
    """cstatic.compile/run take float16 arrays and give bfloat16 as its bits
    (uint16), as the manifest names them."""
    import cstatic
    g = h.make_graph([h.make_node("Max", ["a", "b"], ["y"]), h.make_node("Cast", ["y"], ["z"], to=TP.BFLOAT16)],
                     "g", [h.make_tensor_value_info(n, TP.FLOAT16, [4]) for n in "ab"],
                     [h.make_tensor_value_info("z", TP.BFLOAT16, [4])])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 19)])
    model = cstatic.compile(m, "c_static_lib -allow-float=1")
    a = np.array([1, -2, 3.5, np.nan], np.float16)
    b = np.array([0.5, -1, 4, 1], np.float16)
    z = model.run(a, b)
    assert z.dtype == np.uint16 and list(z[:3]) == [0x3F80, 0xBF80, 0x4080] and (z[3] & 0x7FC0) == 0x7FC0
