"""Constant subgraphs evaluated at compile time, against ONNX Runtime.

A node whose inputs are all known when the model is compiled becomes a
constant (eval/): so an op without a runtime kernel may appear in a
constant subgraph — Swin's shifted-window attention mask (ConstantOfShape,
ScatterND, Equal, Not, Where), a Paddle model's shape arithmetic (Shape,
Gather, Cast, Concat) — and only what depends on a graph input runs. An
op without a runtime kernel computed from a graph input is refused by
name.
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh

from conftest import ort_ref
from cstatic_cli import cstatic

HH, WW, WS, SHIFT = 8, 8, 4, 2
NWIN, WA = (HH // WS) * (WW // WS), WS * WS


def _i64(name, v):
    return nh.from_array(np.asarray(v, np.int64), name)


def _f32(name, v):
    return nh.from_array(np.asarray(v, np.float32), name)


def mask_nodes(prefix="m", source=None):
    """torchvision's shifted-window mask as torch.export writes it: a zero
    image (ConstantOfShape), one ScatterND per region, windows by
    Reshape/Transpose, pairwise differences, Equal/Not/Where. `source`
    replaces the constant image by a graph input (the refused case)."""
    nodes, inits = [], []
    img = source
    if img is None:
        inits.append(_i64(f"{prefix}_shape", [HH, WW]))
        nodes.append(h.make_node("ConstantOfShape", [f"{prefix}_shape"], [f"{prefix}_img0"],
                                 value=h.make_tensor("v", TP.FLOAT, [1], [0.0])))
        img = f"{prefix}_img0"
    hb, wb, cnt = [0, HH - WS, HH - SHIFT, HH], [0, WW - WS, WW - SHIFT, WW], 0
    for i in range(3):
        for j in range(3):
            idx = [[y, x] for y in range(hb[i], hb[i + 1]) for x in range(wb[j], wb[j + 1])]
            inits += [_i64(f"{prefix}_idx{cnt}", idx), _f32(f"{prefix}_upd{cnt}", [float(cnt)] * len(idx))]
            nodes.append(h.make_node("ScatterND", [img, f"{prefix}_idx{cnt}", f"{prefix}_upd{cnt}"],
                                     [f"{prefix}_img{cnt + 1}"]))
            img = f"{prefix}_img{cnt + 1}"
            cnt += 1
    inits += [_i64(f"{prefix}_s4", [HH // WS, WS, WW // WS, WS]), _i64(f"{prefix}_s2", [NWIN, WA]),
              _i64(f"{prefix}_a1", [1]), _i64(f"{prefix}_a2", [2]), _f32(f"{prefix}_zero", 0.0),
              _f32(f"{prefix}_neg", -100.0)]
    nodes += [h.make_node("Reshape", [img, f"{prefix}_s4"], [f"{prefix}_v"]),
              h.make_node("Transpose", [f"{prefix}_v"], [f"{prefix}_t"], perm=[0, 2, 1, 3]),
              h.make_node("Reshape", [f"{prefix}_t", f"{prefix}_s2"], [f"{prefix}_w"]),
              h.make_node("Unsqueeze", [f"{prefix}_w", f"{prefix}_a1"], [f"{prefix}_u1"]),
              h.make_node("Unsqueeze", [f"{prefix}_w", f"{prefix}_a2"], [f"{prefix}_u2"]),
              h.make_node("Sub", [f"{prefix}_u1", f"{prefix}_u2"], [f"{prefix}_d"]),
              h.make_node("Equal", [f"{prefix}_d", f"{prefix}_zero"], [f"{prefix}_eq"]),
              h.make_node("Not", [f"{prefix}_eq"], [f"{prefix}_ne"]),
              h.make_node("Where", [f"{prefix}_ne", f"{prefix}_neg", f"{prefix}_zero"], [f"{prefix}_mask"])]
    return nodes, inits, f"{prefix}_mask"


def _save(tmp_path, name, nodes, inputs, outputs, inits, opset=17):
    g = h.make_graph(nodes, name, [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                     [h.make_tensor_value_info(n, t, None) for n, t in outputs], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", opset)])
    m.ir_version = 8
    path = tmp_path / f"{name}.onnx"
    onnx.save(m, path)
    return path


def _run(tmp_path, path, feeds):
    want = ort_ref.session(str(path)).run(None, feeds)
    out = tmp_path / "out"
    p = cstatic("compile", path, "-o", out)
    args = []
    for k, v in feeds.items():
        np.save(tmp_path / f"{k}.npy", v)
        args += ["--input", tmp_path / f"{k}.npy"]
    for j in range(len(want)):
        args += ["--output", tmp_path / f"y{j}.npy"]
    cstatic("run", out, *args)
    return want, [np.load(tmp_path / f"y{j}.npy") for j in range(len(want))], p.stdout, (out / "lib0.c").read_text()


def test_shifted_window_mask_folds_to_one_constant(tmp_path):
    """Attention scores + mask, then Softmax: the mask is one constant and
    the Add (and Softmax) are the only kernels."""
    nodes, inits, mask = mask_nodes()
    nodes.append(h.make_node("Add", ["scores", mask], ["y"]))
    path = _save(tmp_path, "swin_mask", nodes, [("scores", TP.FLOAT, [1, NWIN, WA, WA])],
                 [("y", TP.FLOAT)], inits)
    x = np.random.default_rng(0).standard_normal((1, NWIN, WA, WA)).astype(np.float32)
    want, got, report, src = _run(tmp_path, path, {"scores": x})
    assert np.array_equal(got[0], want[0])
    assert "(1 kernel calls)" in report, report
    assert src.count("tidsp_binary_f32(") == 1
    masked = np.mean(want[0] - x != 0)
    assert 0 < masked < 1  # a real mask


def test_shape_arithmetic_folds(tmp_path):
    """Paddle-style: Reshape(x, Concat(Gather(Shape(x)), …)) with the shape
    computed from x's static shape through Cast/Div/Mul on int64."""
    inits = [_i64("i01", [0, 1]), _i64("i2", [2]), _i64("i3", [3]), _i64("minus1", [-1]),
             _i64("two", [2])]
    nodes = [h.make_node("Shape", ["x"], ["s"]),
             h.make_node("Gather", ["s", "i01"], ["nc"]),
             h.make_node("Gather", ["s", "i2"], ["hh"]),
             h.make_node("Gather", ["s", "i3"], ["ww"]),
             h.make_node("Mul", ["hh", "ww"], ["hw"]),
             h.make_node("Div", ["hw", "two"], ["half"]),
             h.make_node("Cast", ["half"], ["half32"], to=TP.INT32),
             h.make_node("Cast", ["half32"], ["half64"], to=TP.INT64),
             h.make_node("Concat", ["nc", "half64", "minus1"], ["shape"], axis=0),
             h.make_node("Reshape", ["x", "shape"], ["r"]),
             h.make_node("Transpose", ["r"], ["y"], perm=[0, 1, 3, 2])]
    path = _save(tmp_path, "shapes", nodes, [("x", TP.FLOAT, [1, 3, 4, 6])], [("y", TP.FLOAT)], inits, opset=11)
    x = np.random.default_rng(1).standard_normal((1, 3, 4, 6)).astype(np.float32)
    want, got, report, src = _run(tmp_path, path, {"x": x})
    assert got[0].shape == (1, 3, 2, 12) and np.array_equal(got[0], want[0])
    assert "(2 kernel calls)" in report, report  # the Reshape's copy and the Transpose
    assert "tidsp_cast(" not in src and "tidsp_gather(" not in src and "tidsp_concat(" not in src


def test_range_tile_compare_fold(tmp_path):
    """Range, Tile, Less, Cast, Max/Min on constants decide a Where over a
    runtime tensor."""
    inits = [_i64("start", 0), _i64("limit", 6), _i64("delta", 1), _i64("rep", [2]),
             _i64("four", 4), _f32("zero", 0.0), _i64("lo", 1)]
    nodes = [h.make_node("Range", ["start", "limit", "delta"], ["r"]),
             h.make_node("Tile", ["r", "rep"], ["t"]),
             h.make_node("Max", ["t", "lo"], ["m"]),
             h.make_node("Less", ["m", "four"], ["keep"]),
             h.make_node("Where", ["keep", "x", "zero"], ["y"])]
    path = _save(tmp_path, "range", nodes, [("x", TP.FLOAT, [3, 12])], [("y", TP.FLOAT)], inits, opset=13)
    x = np.random.default_rng(2).standard_normal((3, 12)).astype(np.float32)
    want, got, report, _ = _run(tmp_path, path, {"x": x})
    assert np.array_equal(got[0], want[0])
    assert "(1 kernel calls)" in report, report


def test_mask_from_a_graph_input_runs(tmp_path):
    """The same mask computed from a graph input: ScatterND, Equal, Not and
    Where run as kernels (k_scatter_nd, k_binary, k_where), equal to ORT."""
    nodes, inits, mask = mask_nodes(source="img")
    nodes.append(h.make_node("Add", ["scores", mask], ["y"]))
    path = _save(tmp_path, "swin_mask_rt", nodes, [("img", TP.FLOAT, [HH, WW]),
                                                     ("scores", TP.FLOAT, [1, NWIN, WA, WA])],
                 [("y", TP.FLOAT)], inits)
    rng = np.random.default_rng(3)
    feeds = {"img": rng.standard_normal((HH, WW)).astype(np.float32),
             "scores": rng.standard_normal((1, NWIN, WA, WA)).astype(np.float32)}
    want, got, _, src = _run(tmp_path, path, feeds)
    assert np.array_equal(got[0], want[0])
    assert "tidsp_scatter_nd(" in src


def test_const_only_op_from_a_graph_input_is_refused_by_name(tmp_path):
    """ConstantOfShape has no runtime kernel: computed from a graph input
    it is refused, named, and the ops with kernels are not listed."""
    nodes = [h.make_node("Cast", ["n"], ["s"], to=TP.INT64),
             h.make_node("ConstantOfShape", ["s"], ["c"], value=h.make_tensor("v", TP.FLOAT, [1], [0.0])),
             h.make_node("Add", ["x", "c"], ["y"])]
    path = _save(tmp_path, "cos_rt", nodes, [("n", TP.FLOAT, [1]), ("x", TP.FLOAT, [4])], [("y", TP.FLOAT)], [])
    p = cstatic("compile", path, "-o", tmp_path / "out", ok=False)
    assert p.returncode == 1
    err = [line for line in p.stderr.splitlines() if line.startswith("cstatic: error:")]
    assert len(err) == 1, p.stderr
    assert "ConstantOfShape" in err[0], err[0]
    assert "Cast (node" not in err[0], err[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("bad", ["index", "size"])
def test_bad_constant_subgraph_is_an_error(tmp_path, bad):
    if bad == "index":
        inits = [_f32("d", [1, 2, 3]), _i64("i", [[7]]), _f32("u", [5])]
        nodes = [h.make_node("ScatterND", ["d", "i", "u"], ["c"]), h.make_node("Add", ["x", "c"], ["y"])]
        path = _save(tmp_path, "bad_index", nodes, [("x", TP.FLOAT, [3])], [("y", TP.FLOAT)], inits, opset=13)
        needle = "index 7 on axis 0"
    else:
        inits = [_i64("s", [1 << 14, 1 << 14])]
        nodes = [h.make_node("ConstantOfShape", ["s"], ["c"]), h.make_node("Add", ["x", "c"], ["y"])]
        path = _save(tmp_path, "bad_size", nodes, [("x", TP.FLOAT, [1])], [("y", TP.FLOAT)], inits, opset=13)
        needle = "1073741824 bytes; compile-time evaluation is limited"
    p = cstatic("compile", path, "-o", tmp_path / "out", ok=False)
    assert p.returncode == 1 and needle in p.stderr, p.stderr
