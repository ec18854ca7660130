"""ONNX Runtime as the suite's reference: one configuration, one place.

Only numpy and onnxruntime are imported here, so the e2e tests can use this
module without loading torch.
"""

import os

import numpy as np


# The reference sums int8 products exactly on every CPU. On x86 without VNNI
# (AVX2: vpmaddubsw) ORT's u8s8 GEMM adds pairs of products in int16 with
# saturation; it runs that kernel for uint8 activations, and for int8 ones
# too unless int8 QLinear ops are allowed (it rewrites them to uint8). The
# session config entry "session.x64quantprecision" makes those kernels widen
# to int16 first (exact, as its VNNI, AMX and ARM kernels are). ORT's native
# int8 path (session.qdqisint8allowed=1) is exact already and has no int8
# kernel under that option, so it is set only where uint8 kernels run.
EXACT_INT8 = {"session.x64quantprecision": "1"}


def _has_uint8_activations(model):
    """True when a QuantizeLinear of `model` (a path, bytes or ModelProto)
    produces uint8 (a uint8 zero point, or none: uint8 is the default)."""
    import onnx
    if isinstance(model, (str, os.PathLike)):
        model = onnx.load(str(model), load_external_data=False)
    elif isinstance(model, bytes):
        model = onnx.load_from_string(model)
    zp_type = {t.name: t.data_type for t in model.graph.initializer}
    for n in model.graph.node:
        if n.op_type == "QuantizeLinear":
            zp = n.input[2] if len(n.input) > 2 and n.input[2] else None
            if zp is None or zp_type.get(zp) == onnx.TensorProto.UINT8:
                return True
    return False


def exact_int8_config(model, config=None):
    """EXACT_INT8 when ORT would run `model` on uint8 kernels with this
    session config, else {} (see above)."""
    int8_allowed = (config or {}).get("session.qdqisint8allowed") == "1"
    return EXACT_INT8 if not int8_allowed or _has_uint8_activations(model) else {}


def has_u8_matmul(model):
    """True when `model` (a path) has a MatMul and uint8 activations: ORT
    then runs its uint8 QLinearMatMul (see u8_matmul_is_exact)."""
    import onnx
    m = onnx.load(str(model), load_external_data=False)
    return any(n.op_type == "MatMul" for n in m.graph.node) and _has_uint8_activations(m)


_U8_MATMUL_EXACT = []


def u8_matmul_is_exact():
    """Is ORT's uint8 x int8 QLinearMatMul exact on this CPU? Without VNNI,
    MLAS's AVX2 kernel adds adjacent u8*s8 products into int16 with
    saturation (vpmaddubsw), and session.x64quantprecision does not make
    every QLinearMatMul exact (it does QLinearConv and QGemm): measured on
    AMD EPYC AVX2+FMA, a Swin patch-merging layer is 79 % exact, 100 %
    equal to an emulation of the saturation. The probe is such a layer:
    random uint8 activations (zero point 128), random int8 weights with
    per-column scales, K = 64, at opset 21 as the exported models (at opset
    17 ORT does make it exact). Computed once per process."""
    if _U8_MATMUL_EXACT:
        return _U8_MATMUL_EXACT[0]
    from onnx import TensorProto as TP
    from onnx import helper as h
    from onnx import numpy_helper as nh
    r = np.random.default_rng(0)
    x = r.integers(0, 256, (16, 64)).astype(np.uint8)
    w = r.integers(-127, 128, (64, 32)).astype(np.int8)
    ws = r.uniform(0.5, 1.5, 32).astype(np.float32)
    nodes = [h.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             h.make_node("DequantizeLinear", ["w", "ws", "wz"], ["wf"], axis=1),
             h.make_node("MatMul", ["xf", "wf"], ["m"]),
             h.make_node("QuantizeLinear", ["m", "ys", "yz"], ["y"])]
    inits = [nh.from_array(w, "w"), nh.from_array(np.float32(1.0), "xs"), nh.from_array(np.uint8(128), "xz"),
             nh.from_array(ws, "ws"), nh.from_array(np.zeros(32, np.int8), "wz"),
             nh.from_array(np.float32(400.0), "ys"), nh.from_array(np.uint8(128), "yz")]
    g = h.make_graph(nodes, "probe", [h.make_tensor_value_info("x", TP.UINT8, [16, 64])],
                     [h.make_tensor_value_info("y", TP.UINT8, [16, 32])], inits)
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 21)])
    m.ir_version = 10
    sess = session(m.SerializeToString(), config={"session.qdqisint8allowed": "1"})
    y = sess.run(None, {"x": x})[0]
    acc = (x.astype(np.int64) - 128) @ w.astype(np.int64)
    mult = (ws / np.float32(400.0)).astype(np.float32)
    want = np.clip(np.rint((acc.astype(np.float32) * mult).astype(np.float32)) + 128, 0, 255)
    _U8_MATMUL_EXACT.append(bool(np.array_equal(y, want)))
    return _U8_MATMUL_EXACT[0]


def has_float_softmax(model):
    """True when a Softmax of `model` (a path) feeds something other than a
    QuantizeLinear: ORT then runs its float MLAS Softmax and the float
    result flows on (PT2E leaves the attention probabilities unquantized
    before the P·V MatMul). A DQ -> Softmax -> Q group is int8 in both."""
    import onnx
    g = onnx.load(str(model), load_external_data=False).graph
    readers = {}
    for n in g.node:
        for x in n.input:
            readers.setdefault(x, []).append(n.op_type)
    outputs = {o.name for o in g.output}
    return any(n.op_type == "Softmax" and (n.output[0] in outputs or any(
        r != "QuantizeLinear" for r in readers.get(n.output[0], []))) for n in g.node)


def _fma32(a, b, c):
    """fmaf on float32 arrays: the product of two floats is exact in
    float64; the sum is rounded to float64, then to float32 (a double
    rounding that differs from fmaf only on an exact float32 tie)."""
    f64 = np.float64
    return (a.astype(f64) * np.float32(b).astype(f64) + np.asarray(c, np.float32).astype(f64)).astype(np.float32)


def mirrored_softmax(x):
    """Softmax over the last axis of float32 `x` as cstatic's float kernel
    computes it (runtime/kernels/ref/softmax_f32.c, ort_float.h: MLAS's
    AVX512F kernel): MLAS's exp polynomial on x - max, the sum in 16 lanes
    with its reduction tree, y = e * fl(1 / s)."""
    x = np.asarray(x, np.float32)
    v = np.maximum(np.float32(-103.9720840454), x + (-x.max(axis=-1, keepdims=True)))
    bias = np.float32(12582912.0)  # 1.5 * 2^23: rounds to an integer
    m = _fma32(v, 1.44269504088896341, bias) - bias
    r = _fma32(m, -6.93145752e-1, v)
    r = _fma32(m, -1.42860677e-6, r)
    p = np.full_like(v, float.fromhex("0x1.694000p-10"))
    for c in ("0x1.125edcp-7", "0x1.555b5ap-5", "0x1.555450p-3", "0x1.fffff6p-2", "0x1p0", "0x1p0"):
        p = _fma32(p, r, float.fromhex(c))
    e = np.ldexp(p, m.astype(np.int32)).astype(np.float32)
    lane = np.zeros(x.shape[:-1] + (16,), np.float32)
    for k in range(x.shape[-1]):
        lane[..., k % 16] += e[..., k]
    t = lane[..., 8:] + lane[..., :8]
    s = ((t[..., 0] + t[..., 1]) + (t[..., 2] + t[..., 3])) + ((t[..., 4] + t[..., 5]) + (t[..., 6] + t[..., 7]))
    return e * (np.float32(1.0) / s)[..., None]


def softmax_probe_input():
    """The probe's Softmax input: 64 rows of 49 (a Swin window's attention
    row), logits of the size attention has (|x| up to ~20) and some masked
    (-100 added, as Swin's shifted windows do)."""
    r = np.random.default_rng(0)
    x = r.normal(0.0, 6.0, (64, 49)).astype(np.float32)
    x[r.random(x.shape) < 0.25] -= np.float32(100.0)
    return x


_FLOAT_SOFTMAX_MIRRORED = []


def float_softmax_is_mirrored():
    """Does ORT's float Softmax on this CPU compute what cstatic's does
    (mirrored_softmax: MLAS's AVX512F kernel)? MLAS picks its Softmax
    kernel by CPU: on AVX2 + FMA without AVX512F (measured on AMD EPYC
    Zen 3) it runs another exp and sum, a few ulp apart on about a quarter
    of a Swin attention layer's outputs and 0 where AVX512F gives a
    subnormal, and a PT2E transformer's unquantized attention
    probabilities then flip int8 steps downstream. Computed once per
    process."""
    if _FLOAT_SOFTMAX_MIRRORED:
        return _FLOAT_SOFTMAX_MIRRORED[0]
    from onnx import TensorProto as TP
    from onnx import helper as h
    x = softmax_probe_input()
    g = h.make_graph([h.make_node("Softmax", ["x"], ["y"], axis=-1)], "probe",
                     [h.make_tensor_value_info("x", TP.FLOAT, list(x.shape))],
                     [h.make_tensor_value_info("y", TP.FLOAT, list(x.shape))])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", 21)])
    m.ir_version = 10
    y = session(m.SerializeToString()).run(None, {"x": x})[0]
    _FLOAT_SOFTMAX_MIRRORED.append(bool(np.array_equal(y.view(np.uint32), mirrored_softmax(x).view(np.uint32))))
    return _FLOAT_SOFTMAX_MIRRORED[0]


def inexact_reason(model):
    """Why ORT (session.qdqisint8allowed=1) is not an exact reference for
    cstatic on `model` (a path) on this CPU, or None when it is."""
    if has_u8_matmul(model) and not u8_matmul_is_exact():
        return ("ORT's uint8 QLinearMatMul saturates int16 pair sums on this CPU (no VNNI): "
                "not an exact reference (ort_ref.u8_matmul_is_exact)")
    if has_float_softmax(model) and not float_softmax_is_mirrored():
        return ("ORT's float Softmax on this CPU is not MLAS's AVX512F kernel that cstatic mirrors, and the "
                "model computes on its float output (ort_ref.float_softmax_is_mirrored)")
    return None


def session(path, threads=1, config=None, optimized_path=None, level=None):
    """An ORT CPU session: ORT_ENABLE_ALL unless `level` is given, `threads`
    intra-op threads (1: reproducible), exact int8 accumulation
    (exact_int8_config) and the session config entries `config` (e.g.
    {"session.qdqisint8allowed": "1"})."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    if level is not None:
        so.graph_optimization_level = level
    for key, value in {**exact_int8_config(path, config), **(config or {})}.items():
        so.add_session_config_entry(key, value)
    if optimized_path:
        so.optimized_model_filepath = optimized_path
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def run(path, inputs, threads=1, config=None, level=None):
    """Run a batch-1 model over every image of `inputs` [k, ...] and stack
    the outputs along axis 0 (the `cstatic run` convention)."""
    sess = session(path, threads, config, level=level)
    name = sess.get_inputs()[0].name
    inputs = np.ascontiguousarray(inputs, dtype=np.float32)
    outs = [sess.run(None, {name: inputs[i:i + 1]})[0] for i in range(len(inputs))]
    return np.concatenate(outs, axis=0)


def cached_run(model_path, inputs_path, cache_path, config=None):
    """`run` on the inputs in `inputs_path`, cached in `cache_path` (.npy).

    The cache is reused only when it is newer than both the model and the
    inputs, so a regenerated model never meets a stale reference, and when
    it was made with the same ORT version and session configuration (kept
    beside it in `cache_path` + ".key").
    """
    import onnxruntime as ort
    key = repr((ort.__version__, sorted({**exact_int8_config(model_path, config), **(config or {})}.items())))
    key_path = cache_path + ".key"
    if os.path.exists(cache_path) and os.path.exists(key_path):
        t = os.path.getmtime(cache_path)
        with open(key_path) as f:
            same_key = f.read() == key
        if same_key and t >= os.path.getmtime(model_path) and t >= os.path.getmtime(inputs_path):
            return np.load(cache_path)
    out = run(model_path, np.load(inputs_path), config=config)
    tmp = cache_path + ".tmp.npy"
    np.save(tmp, out)
    with open(key_path, "w") as f:
        f.write(key)
    os.replace(tmp, cache_path)
    return out
