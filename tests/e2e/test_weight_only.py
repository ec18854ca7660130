"""Weight-only int8 linear layers (the spec's FuseDequantizeMatmul, the LLM
path): float activations, int8 weights behind a DequantizeLinear. cstatic
keeps the weights int8 (c7x_dequantize_vecmatmul) instead of folding them to
float, and must match the model's float semantics to float rounding: ONNX
Runtime with basic optimizations, which multiplies by the dequantized float
weights (MLAS SGEMM sums in its own blocked order, so no bit-exactness:
≥ 100 dB SQNR). ORT's extended optimizations are no reference here: they
rewrite DQ(int8) → MatMul into com.microsoft MatMulNBits (bits 8, block 32,
accuracy_level 4), which also quantizes the activations; measured on this
model, that is 45.8 dB from the basic result, while cstatic is 131 dB from
it (and 134 dB from a float64 numpy evaluation).

The model is an MLP block of a decoder (LayerNorm, up projection, GELU, down
projection, residual), written the two ways an exporter emits a transposed
weight: DequantizeLinear → Transpose → MatMul and a [K][N] weight read
directly, with per-column scales.
"""
import json

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from conftest import ort_ref
import cstatic

D, H, T = 64, 256, 8


def _linear(name, x, k, n, rng, transposed, nodes, inits):
    w = rng.standard_normal((n, k)).astype(np.float32) / np.sqrt(k)
    scale = (np.abs(w).max(axis=1) / 127).astype(np.float32)
    q = np.clip(np.round(w / scale[:, None]), -127, 127).astype(np.int8)
    if transposed:  # w [N][K], per-row scale, DQ → Transpose
        inits += [numpy_helper.from_array(q, f"{name}_w"), numpy_helper.from_array(scale, f"{name}_s"),
                  numpy_helper.from_array(np.zeros(n, np.int8), f"{name}_z")]
        nodes += [helper.make_node("DequantizeLinear", [f"{name}_w", f"{name}_s", f"{name}_z"], [f"{name}_wf"],
                                   axis=0),
                  helper.make_node("Transpose", [f"{name}_wf"], [f"{name}_wt"], perm=[1, 0])]
        wt = f"{name}_wt"
    else:  # w [K][N], per-column scale
        inits += [numpy_helper.from_array(np.ascontiguousarray(q.T), f"{name}_w"),
                  numpy_helper.from_array(scale, f"{name}_s"),
                  numpy_helper.from_array(np.zeros(n, np.int8), f"{name}_z")]
        nodes.append(helper.make_node("DequantizeLinear", [f"{name}_w", f"{name}_s", f"{name}_z"], [f"{name}_wt"],
                                      axis=1))
        wt = f"{name}_wt"
    b = (rng.standard_normal(n) * 0.1).astype(np.float32)
    inits.append(numpy_helper.from_array(b, f"{name}_b"))
    nodes += [helper.make_node("MatMul", [x, wt], [f"{name}_mm"]),
              helper.make_node("Add", [f"{name}_mm", f"{name}_b"], [f"{name}_y"])]
    return f"{name}_y", q.nbytes


def _model(path, seed=0):
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    inits += [numpy_helper.from_array(rng.uniform(0.5, 1.5, D).astype(np.float32), "ln_s"),
              numpy_helper.from_array((rng.standard_normal(D) * 0.1).astype(np.float32), "ln_b")]
    nodes.append(helper.make_node("LayerNormalization", ["x", "ln_s", "ln_b"], ["ln"], axis=-1, epsilon=1e-5))
    up, b1 = _linear("up", "ln", D, H, rng, True, nodes, inits)
    nodes.append(helper.make_node("Gelu", [up], ["act"]))
    down, b2 = _linear("down", "act", H, D, rng, False, nodes, inits)
    nodes.append(helper.make_node("Add", ["x", down], ["y"]))
    g = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, T, D])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, T, D])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 21)])
    m.ir_version = 10
    onnx.checker.check_model(m)
    onnx.save(m, path)
    return b1 + b2


def test_weight_only_mlp_keeps_int8_weights_and_matches_ort(tmp_path):
    int8_bytes = _model(str(tmp_path / "mlp.onnx"))
    x = np.random.default_rng(3).standard_normal((4, T, D)).astype(np.float32)
    d = tmp_path / "out"
    y = cstatic.compile(tmp_path / "mlp.onnx", out=d).run(x)
    import onnxruntime as ort
    ref = ort_ref.run(str(tmp_path / "mlp.onnx"), x,
                      level=ort.GraphOptimizationLevel.ORT_ENABLE_BASIC).reshape(y.shape)
    sqnr = 10 * np.log10((ref.astype(np.float64) ** 2).sum() / max(((y - ref) ** 2).sum(), 1e-30))
    lib = "".join(p.read_text() for p in sorted(d.glob("lib*.c")))
    weights = (d / "weights.bin").stat().st_size
    layers = json.loads((d / "manifest.json").read_text())["layers"]
    print(f"weight-only MLP: SQNR {sqnr:.1f} dB vs ORT; weights.bin {weights} B "
          f"(int8 weights {int8_bytes} B, as float {4 * int8_bytes} B); {len(layers)} layers")
    assert lib.count("c7x_dequantize_vecmatmul(") == 2
    assert sqnr >= 100.0
    # the two weight matrices stay int8: well under their float size
    assert weights < int8_bytes + 8192
