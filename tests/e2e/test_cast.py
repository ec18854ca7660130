"""Cast against ONNX Runtime, bit for bit: float32 → int8/int32/int64/bool
(truncation toward zero, in-range values: ONNX leaves out-of-range casts
undefined, cstatic saturates), int64 → float32/int32/int8 (wrap), bool →
float32 — the conversions exported models use for masks, positions and
indices."""
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

from cstatic_cli import cstatic

CASTS = [("x", TensorProto.INT32), ("x", TensorProto.INT8), ("x", TensorProto.INT64), ("x", TensorProto.BOOL),
         ("ids", TensorProto.FLOAT), ("ids", TensorProto.INT32), ("ids", TensorProto.INT8)]


def test_cast_matches_ort(tmp_path):
    nodes, outs = [], []
    for i, (src, to) in enumerate(CASTS):
        nodes.append(helper.make_node("Cast", [src], [f"y{i}"], to=to))
        outs.append(helper.make_tensor_value_info(f"y{i}", to, None))
    nodes += [helper.make_node("Cast", ["x"], ["b"], to=TensorProto.BOOL),
              helper.make_node("Cast", ["b"], ["bf"], to=TensorProto.FLOAT)]
    outs.append(helper.make_tensor_value_info("bf", TensorProto.FLOAT, None))
    g = helper.make_graph(nodes, "cast", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64]),
                                          helper.make_tensor_value_info("ids", TensorProto.INT64, [8])], outs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, tmp_path / "cast.onnx")
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.uniform(-120, 120, 60), [0.0, -0.0, 0.5, -0.99]]).astype(np.float32)
    ids = np.array([0, 1, -1, 300, -300, 70000, 2 ** 40 + 5, -(2 ** 33)], dtype=np.int64)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "ids.npy", ids)
    names = [f"y{i}" for i in range(len(CASTS))] + ["bf"]
    cstatic("compile", tmp_path / "cast.onnx", "-o", tmp_path / "out", "-q")
    cstatic("run", tmp_path / "out", "--input", tmp_path / "x.npy", "--input", tmp_path / "ids.npy",
            *[a for o in names for a in ("--output", tmp_path / f"{o}.npy")])
    want = ort.InferenceSession(str(tmp_path / "cast.onnx"), providers=["CPUExecutionProvider"]).run(
        None, {"x": x, "ids": ids})
    for name, w in zip(names, want):
        got = np.load(tmp_path / f"{name}.npy")
        assert got.dtype == w.dtype and got.tobytes() == w.tobytes(), (name, got[:8], w[:8])
