#!/usr/bin/env python3
"""Run each libFuzzer harness of build-fuzz for a given time (`make fuzz`).

    .venv/bin/python tests/fuzz/run_fuzzers.py BUILD_FUZZ SECONDS [HARNESS ...]

With FUZZ_RUNS=N in the environment a harness also stops after N
executions (the long runs: 10 M executions or 30 minutes, whichever first).

Each harness fuzzes BUILD_FUZZ/work/<h>/ (kept between runs, so coverage
accumulates) seeded with BUILD_FUZZ/corpus/<h>/ (make_corpus.py), one
process at a time. Crashes, leaks, timeouts and out-of-memory inputs land in
BUILD_FUZZ/crashes/<h>/; each one found should be minimized
(fuzz_<h> -minimize_crash=1) and committed to tests/fuzz/regress/<h>/ with
its fix, so the fast tests replay it from then on. Prints executions and
time per harness; exits 1 if any harness found something.
"""
import glob
import os
import re
import subprocess
import sys
import time

HARNESSES = ("onnx", "npy", "weights", "fw", "elf")
# Per input: the whole compiler on a model, or one request; far below these.
TIMEOUT_S = {"onnx": 60, "npy": 10, "weights": 10, "fw": 30, "elf": 10}
MAX_LEN = {"onnx": 65536, "npy": 4096, "weights": 65536, "fw": 65536, "elf": 65536}


def main():
    build, seconds = sys.argv[1], int(sys.argv[2])
    names = sys.argv[3:] or HARNESSES
    env = dict(os.environ)
    if os.path.isdir("/dev/shm"):
        env.setdefault("TMPDIR", "/dev/shm")  # fuzz_onnx's codegen output
    env.setdefault("CS_FUZZ_FW_MODULE", os.path.join(build, "fuzz", "fw_module", "lib0.out"))
    found = 0
    rows = []
    for h in names:
        exe = os.path.join(build, "bin", f"fuzz_{h}")
        work = os.path.join(build, "work", h)
        crashes = os.path.join(build, "crashes", h)
        os.makedirs(work, exist_ok=True)
        os.makedirs(crashes, exist_ok=True)
        before = set(os.listdir(crashes))
        runs = [f"-runs={os.environ['FUZZ_RUNS']}"] if os.environ.get("FUZZ_RUNS") else []
        cmd = [exe, *runs, f"-max_total_time={seconds}", f"-timeout={TIMEOUT_S[h]}", "-rss_limit_mb=2048",
               f"-max_len={MAX_LEN[h]}", "-print_final_stats=1", f"-artifact_prefix={crashes}/",
               work, os.path.join(build, "corpus", h)]
        t0 = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True, errors="replace", env=env)
        dt = time.time() - t0
        log = os.path.join(build, "work", f"{h}.log")
        with open(log, "w") as f:
            f.write(p.stderr)
        execs = re.search(r"stat::number_of_executed_units:\s*(\d+)", p.stderr)
        cov = re.findall(r"cov: (\d+)", p.stderr)
        new = sorted(set(os.listdir(crashes)) - before)
        status = "ok" if p.returncode == 0 and not new else f"FOUND {len(new) or 'a problem'} (rc {p.returncode})"
        found += status != "ok"
        rows.append((h, int(execs.group(1)) if execs else 0, dt, cov[-1] if cov else "?", status, new, log))
    print(f"{'harness':8} {'executions':>12} {'seconds':>8} {'exec/s':>8} {'coverage':>9}  result")
    for h, n, dt, cov, status, new, log in rows:
        print(f"{h:8} {n:12d} {dt:8.0f} {n / max(dt, 1e-9):8.0f} {cov:>9}  {status}")
        for c in new:
            print(f"    {os.path.join(build, 'crashes', h, c)}  (log: {log})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
