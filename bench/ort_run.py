"""Time one QDQ ONNX model in ONNX Runtime, single thread, in its own process.

usage: ort_run.py MODEL.onnx INPUT.npy OUTPUT.npy REPEAT

Prints "latency_ms: <median>" over REPEAT runs after one warm-up, like
`cstatic run --repeat`, and writes the output of the last run. bench/run.py
reads this process's peak RSS from wait4().

The session is the configuration cstatic matches bit for bit
(docs: notes/ort-numerics.md): every optimisation on (ORT_ENABLE_ALL), one
intra-op thread, sequential execution, and every QDQ group run fused as int8
(session.qdqisint8allowed = 1).
"""
import sys
import time

import numpy as np
import onnxruntime as ort


def main() -> int:
    model, x_path, y_path, repeat = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    so.add_session_config_entry("session.qdqisint8allowed", "1")
    sess = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
    x = np.load(x_path)
    feed = {sess.get_inputs()[0].name: x}
    y = sess.run(None, feed)[0]  # warm-up
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        y = sess.run(None, feed)[0]
        times.append((time.perf_counter() - t0) * 1e3)
    np.save(y_path, y)
    print(f"latency_ms: {float(np.median(times)):.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
