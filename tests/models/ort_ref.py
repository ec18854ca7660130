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
