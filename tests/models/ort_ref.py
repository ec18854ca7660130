"""ONNX Runtime as the suite's reference: one configuration, one place.

Only numpy and onnxruntime are imported here, so the e2e tests can use this
module without loading torch.
"""

import os

import numpy as np


def session(path, threads=1, config=None, optimized_path=None, level=None):
    """An ORT CPU session: ORT_ENABLE_ALL unless `level` is given, `threads`
    intra-op threads (1: reproducible), session config entries `config`
    (e.g. {"session.qdqisint8allowed": "1"})."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.log_severity_level = 3
    if level is not None:
        so.graph_optimization_level = level
    for key, value in (config or {}).items():
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
    inputs, so a regenerated model never meets a stale reference.
    """
    if os.path.exists(cache_path):
        t = os.path.getmtime(cache_path)
        if t >= os.path.getmtime(model_path) and t >= os.path.getmtime(inputs_path):
            return np.load(cache_path)
    out = run(model_path, np.load(inputs_path), config=config)
    tmp = cache_path + ".tmp.npy"
    np.save(tmp, out)
    os.replace(tmp, cache_path)
    return out
