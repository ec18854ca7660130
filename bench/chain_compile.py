#!/usr/bin/env python3
"""Compile time of long chains: the 100 000-node acceptance of issue 18.

Three chains of N nodes on a float [1, 8] tensor: `relu` (Relu after Relu),
`add` (Relu and Add of a constant, alternating), `qdq` (QuantizeLinear →
DequantizeLinear → Relu, repeated: every group becomes one int8 table
lookup). Each is compiled into a fresh directory; the table gives the wall
time, the CPU time (user + system, of cstatic and its children) and the
peak RSS, the median over --repeat runs, and the number of lib*.c files
written, for each binary named with --bin (default build/bin/cstatic), side
by side. The compiles verify the IR once after the pass pipeline, as a
user's do (CSTATIC_VERIFY_EACH_PASS is removed from their environment).

    .venv/bin/python bench/chain_compile.py [--nodes 100000] [--repeat 3]
                                            [--bin build/bin/cstatic ...]

No assertion: the numbers go into the report (the machine may be shared).
"""
import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto as TP
from onnx import helper as oh
from onnx import numpy_helper as nh

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def chain(n, kind):
    nodes, inits, x = [], [], "x"
    if kind == "qdq":
        inits += [nh.from_array(np.array(0.05, np.float32), "s"), nh.from_array(np.array(0, np.int8), "z")]
        for i in range(n // 3):
            nodes += [oh.make_node("QuantizeLinear", [x, "s", "z"], [f"q{i}"], name=f"q{i}"),
                      oh.make_node("DequantizeLinear", [f"q{i}", "s", "z"], [f"d{i}"], name=f"d{i}"),
                      oh.make_node("Relu", [f"d{i}"], [f"r{i}"], name=f"r{i}")]
            x = f"r{i}"
    else:
        if kind == "add":
            inits.append(nh.from_array(np.ones((1, 8), np.float32), "c"))
        for i in range(n):
            add = kind == "add" and i % 2
            nodes.append(oh.make_node("Add" if add else "Relu", [x, "c"] if add else [x], [f"t{i}"], name=f"n{i}"))
            x = f"t{i}"
    g = oh.make_graph(nodes, f"chain_{kind}", [oh.make_tensor_value_info("x", TP.FLOAT, [1, 8])],
                      [oh.make_tensor_value_info(x, TP.FLOAT, [1, 8])], inits)
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)])


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


# The compile runs as the child of a small Python (-S) that forks it and
# reports wall time and wait4's rusage: a child of this process would carry
# this process's RSS (numpy, onnx, the models) into its ru_maxrss.
MEASURE = r"""
import os, sys, time
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
_, status, u = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), time.perf_counter() - t0, u.ru_utime + u.ru_stime, u.ru_maxrss)
"""


def compile_once(exe, model, tmp):
    out = tempfile.mkdtemp(dir=tmp)
    os.rmdir(out)
    env = {k: v for k, v in os.environ.items() if k != "CSTATIC_VERIFY_EACH_PASS"}
    p = subprocess.run([sys.executable, "-S", "-c", MEASURE, exe, "compile", model, "-o", out, "-q"],
                       capture_output=True, text=True, env=env)
    fields = p.stdout.split()
    if p.returncode != 0 or len(fields) != 4 or fields[0] != "0":
        raise SystemExit(f"{exe} compile {model} failed: {p.stderr}")
    files = sum(f.endswith(".c") for f in os.listdir(out))
    return float(fields[1]), float(fields[2]), int(fields[3]) / 1024, files


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nodes", type=int, default=100000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--kinds", nargs="+", default=["relu", "add", "qdq"])
    ap.add_argument("--bin", nargs="+", default=[os.path.join(ROOT, "build", "bin", "cstatic")])
    a = ap.parse_args()
    load = os.getloadavg()
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; load average {load[0]:.1f} at start")
    print(f"{a.nodes}-node chains, median of {a.repeat} compiles each\n")
    print("| chain | binary | wall s | CPU s (user+sys) | peak RSS MiB | lib*.c files |")
    print("|---|---|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for kind in a.kinds:
            model = os.path.join(tmp, f"chain_{kind}.onnx")
            onnx.save(chain(a.nodes, kind), model)
            for exe in a.bin:
                runs = [compile_once(exe, model, tmp) for _ in range(a.repeat)]
                wall = statistics.median(r[0] for r in runs)
                cpu = statistics.median(r[1] for r in runs)
                rss = max(r[2] for r in runs)
                print(f"| {kind} | {os.path.relpath(exe, ROOT)} | {wall:.2f} | {cpu:.2f} | {rss:.0f} | {runs[0][3]} |",
                      flush=True)
    load = os.getloadavg()
    print(f"\nload average {load[0]:.1f} at the end")


if __name__ == "__main__":
    main()
