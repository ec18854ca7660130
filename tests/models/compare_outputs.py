#!/usr/bin/env python3
"""Compile models with two cstatic binaries and compare every output byte.

    .venv/bin/python tests/models/compare_outputs.py OLD_CSTATIC NEW_CSTATIC MODEL.onnx ...
                     [--target "c_static_lib -mcpu=c7x -mmalib=1" ...]

For each model and target, both binaries compile into fresh directories and
every file (lib*.c, lib0.h, weights.bin, manifest.json) must be identical.
The memory plan is in them (the
arena offset macros, MODEL_ARENA_SIZE): identical files are identical plans.
Used to show that a compiler change that should not change the output (the
indexed memory planner, issue 18) does not. Exits 1 on any difference.
"""
import argparse
import filecmp
import os
import subprocess
import sys
import tempfile

TARGETS = ["c_static_lib", "c_static_lib -mcpu=c7x -mmalib=1", "c_static_lib -mcpu=c66x -requant=q31",
           "c_static_lib -kernels=scalar"]


def compile_into(exe, model, target, d):
    p = subprocess.run([exe, "compile", model, "-o", d, "-q", "-t", target], capture_output=True, text=True)
    return p.returncode, p.stderr.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("old")
    ap.add_argument("new")
    ap.add_argument("models", nargs="+")
    ap.add_argument("--target", action="append")
    a = ap.parse_args()
    targets = a.target or TARGETS
    differ = compared = 0
    with tempfile.TemporaryDirectory() as tmp:
        for m in a.models:
            for t in targets:
                d_old, d_new = os.path.join(tmp, "old"), os.path.join(tmp, "new")
                r_old, e_old = compile_into(a.old, m, t, d_old)
                r_new, e_new = compile_into(a.new, m, t, d_new)
                tag = f"{os.path.basename(m)} [{t}]"
                if r_old or r_new:
                    same = r_old == r_new and e_old == e_new
                    print(f"{'same error' if same else 'DIFFERENT'}: {tag}: {e_new or e_old}")
                    differ += not same
                else:
                    files = sorted(os.listdir(d_old))
                    bad = [f for f in files if not filecmp.cmp(
                        os.path.join(d_old, f), os.path.join(d_new, f), shallow=False)]
                    if sorted(os.listdir(d_new)) != files:
                        bad.append("(file list)")
                    print(f"{'DIFFERENT ' + ' '.join(bad) if bad else 'identical'}: {tag} ({len(files)} files)")
                    differ += bool(bad)
                compared += 1
                for d in (d_old, d_new):
                    subprocess.run(["rm", "-rf", d])
    print(f"{compared} compiles compared, {differ} different")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
