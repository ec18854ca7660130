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
