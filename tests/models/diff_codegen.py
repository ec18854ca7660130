#!/usr/bin/env python3
"""Compile models with two cstatic binaries and compare what they write.

    python tests/models/diff_codegen.py --old OLD/cstatic [--new build/bin/cstatic]
                                        [--models tests/models/out] [--target T ...]

For every DIR/*.onnx and every target (default: the generic target,
"-mcpu=c7x -mmalib=1" and "-kernels=scalar"), both binaries compile the
model into temporary directories; every file they write (lib*.c, lib0.h,
weights.bin, manifest.json) must be byte-identical. Prints one line per
model and target and, for a difference, the first differing line of each
differing text file. A model that one binary refuses must be refused by the
other too (with the same message). Exit status 1 if anything differs.

Use it to show that a refactoring leaves the generated code alone: build
the old revision into another directory and pass its binary as --old.
"""

import argparse
import difflib
import os
import subprocess
import sys
import tempfile

DEFAULT_TARGETS = ("c_static_lib", "c_static_lib -mcpu=c7x -mmalib=1", "c_static_lib -kernels=scalar")
TEXT_SUFFIXES = (".c", ".h", ".json")


def compile_model(binary, model, target, out):
    p = subprocess.run([binary, "compile", model, "-o", out, "-t", target, "-q"],
                       capture_output=True, text=True)
    return p.returncode, p.stderr.strip()


def first_difference(a, b, name):
    if not name.endswith(TEXT_SUFFIXES):
        n = min(len(a), len(b))
        i = next((k for k in range(n) if a[k] != b[k]), n)
        return f"{name}: {len(a)} vs {len(b)} bytes, first difference at byte {i}"
    al = a.decode("utf-8", "replace").splitlines()
    bl = b.decode("utf-8", "replace").splitlines()
    for line in difflib.unified_diff(al, bl, lineterm="", n=0):
        if line.startswith(("-", "+")) and not line.startswith(("---", "+++")):
            return f"{name}: {line[:160]}"
    return f"{name}: differs"


def compare(old, new, model, target, work):
    dirs = [os.path.join(work, "old"), os.path.join(work, "new")]
    runs = [compile_model(b, model, target, d) for b, d in zip((old, new), dirs)]
    if runs[0][0] or runs[1][0]:
        same = runs[0] == runs[1]
        return same, [] if same else [f"old: {runs[0]}", f"new: {runs[1]}"], "refused"
    names = sorted(set(os.listdir(dirs[0])) | set(os.listdir(dirs[1])))
    diffs = []
    for name in names:
        paths = [os.path.join(d, name) for d in dirs]
        if not all(os.path.isfile(p) for p in paths):
            diffs.append(f"{name}: written by one binary only")
            continue
        a, b = (open(p, "rb").read() for p in paths)
        if a != b:
            diffs.append(first_difference(a, b, name))
    return not diffs, diffs, f"{len(names)} files"


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="the reference cstatic binary")
    ap.add_argument("--new", default=os.path.join(root, "build", "bin", "cstatic"))
    ap.add_argument("--models", default=os.path.join(here, "out"), help="directory of .onnx files")
    ap.add_argument("--target", action="append", help="a target string (repeatable)")
    args = ap.parse_args(argv)
    targets = args.target or list(DEFAULT_TARGETS)
    models = sorted(os.path.join(args.models, f) for f in os.listdir(args.models) if f.endswith(".onnx"))
    if not models:
        print(f"no .onnx files in {args.models}", file=sys.stderr)
        return 2
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            for target in targets:
                work = tempfile.mkdtemp(dir=tmp)
                same, diffs, what = compare(args.old, args.new, model, target, work)
                failures += not same
                print(f"{'same' if same else 'DIFF'}  {os.path.basename(model)}  [{target}]  {what}", flush=True)
                for d in diffs:
                    print(f"      {d}")
    print(f"{len(models) * len(targets) - failures} of {len(models) * len(targets)} compiles identical")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
