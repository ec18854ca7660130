"""Time one QDQ ONNX model in ONNX Runtime, single thread, in its own process.

usage: ort_run.py MODEL.onnx INPUT.npy OUTPUT.npy REPEAT [default|int8]

Prints "latency_ms: <median>" over REPEAT runs after one warm-up, like
`cstatic run --repeat`, and writes the output of the last run. bench/run.py
reads this process's peak RSS from wait4().

"default" (the default) is ORT as a user runs it: default SessionOptions
(ORT_ENABLE_ALL, sequential) with one intra-op thread. On x86 ORT then leaves
some QDQ groups unfused (int8 activations, for example), running them as
DequantizeLinear → float op → QuantizeLinear.

"int8" adds session.qdqisint8allowed = 1, so that every QDQ group runs fused
as int8: the configuration cstatic matches bit for bit
(docs: notes/ort-numerics.md).
"""
import sys
import time

import numpy as np
import onnxruntime as ort


def main() -> int:
    model, x_path, y_path, repeat = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    mode = sys.argv[5] if len(sys.argv) > 5 else "default"
    if mode not in ("default", "int8"):
        print(f"ort_run.py: mode must be 'default' or 'int8', got '{mode}'", file=sys.stderr)
        return 2
    so = ort.SessionOptions()  # defaults: ORT_ENABLE_ALL, ORT_SEQUENTIAL
    so.intra_op_num_threads = 1
    if mode == "int8":
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
