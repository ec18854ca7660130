"""The runtime files a model needs (compiler/codegen/runtime_files.c; the
manifest's "runtime_sources", `compile --emit=runtime`).

- The table is what the runtime's objects and sources say: per file the
  symbols it defines (nm of the build's object), the .c files whose symbols
  it calls and the private headers it includes. Derived here from the
  build; a difference fails and prints the rows to paste into the table
  (also: `python tests/e2e/test_runtime_files.py`).
- A model compiled with --emit=runtime builds with the host compiler from
  its directory alone (every symbol resolved: nothing is missing) and gives
  the bytes `cstatic run` gives, for the default target, the preset, the
  scalar kernels and a DSP flavour's generic twin.
"""
import concurrent.futures
import glob
import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from cstatic_cli import ROOT, cstatic

RUNTIME = os.path.join(ROOT, "runtime")
TABLE = os.path.join(ROOT, "compiler", "codegen", "runtime_files.c")
OBJDIR = os.path.join(ROOT, "build", "CMakeFiles", "tidsp_objects.dir", "runtime")
# By hand in the table (its comment says why): the C7x clock defines the
# profile clock under TI's compiler only.
HAND_DEFINES = {"profile/c7x_clock.c": {"tidsp_profile_clock"}}


def nm_all(objs, *flags):
    """{object: symbols} of one nm run over every object."""
    out = subprocess.run(["nm", "-A", *flags, *objs], capture_output=True, text=True, check=True).stdout
    syms = {o: set() for o in objs}
    for line in out.splitlines():
        obj, _, rest = line.partition(":")
        if rest.strip():
            syms[obj].add(rest.split()[-1])
    return syms


def derive():
    """{path: (defines, needs)} from the build's objects and the sources."""
    files = sorted(os.path.relpath(p, RUNTIME) for p in glob.glob(f"{RUNTIME}/**/*.[ch]", recursive=True))
    objs = {f: os.path.join(OBJDIR, f + ".o") for f in files if f.endswith(".c")}
    for obj in objs.values():
        if not os.path.exists(obj):
            pytest.fail(f"{obj} not found: build first (make build)")
    d, u = nm_all(list(objs.values()), "--defined-only", "-g"), nm_all(list(objs.values()), "-u")
    defs = {f: d[o] | HAND_DEFINES.get(f, set()) for f, o in objs.items()}
    undefs = {f: u[o] for f, o in objs.items()}
    owners = {}  # a symbol two files define (the two clocks): both are needed
    for f, ds in defs.items():
        for s in ds:
            owners.setdefault(s, set()).add(f)
    table = {}
    for f in files:
        text = open(os.path.join(RUNTIME, f)).read()
        incs = set()
        for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', text, re.M):
            p = os.path.normpath(os.path.join(os.path.dirname(f), m.group(1)))
            if os.path.exists(os.path.join(RUNTIME, p)):
                incs.add(p)
        calls = set().union(*(owners[s] for s in undefs.get(f, ()) if s in owners)) - {f}
        table[f] = (set(defs.get(f, ())), calls | incs)
    return table


def parse_table():
    text = open(TABLE).read()
    rows = {}
    for m in re.finditer(r'\{\.path = "([^"]+)",\s*\.defines = ((?:"[^"]*"\s*)+),(?:\s*/\*.*?\*/)?\s*'
                         r'\.needs = ((?:"[^"]*"\s*)+)\}', text, re.S):
        join = lambda lits: "".join(re.findall(r'"([^"]*)"', lits)).split()
        rows[m.group(1)] = (set(join(m.group(2))), set(join(m.group(3))))
    return rows


def rows_text(table):
    out = []
    for f, (d, n) in sorted(table.items()):
        def lit(field, words):
            s = " ".join(sorted(words))
            lines = textwrap.wrap(s, 95, break_long_words=False) or [""]
            pad = " " * (9 + len(field))
            return f".{field} = " + f"\n{pad}".join(
                f'"{l} "' if i < len(lines) - 1 else f'"{l}"' for i, l in enumerate(lines))
        out.append(f'    {{.path = "{f}",\n     {lit("defines", d)},\n     {lit("needs", n)}}},')
    return "\n".join(out)


def test_the_table_is_what_the_runtime_says():
    want, have = derive(), parse_table()
    diff = sorted(f for f in set(want) | set(have) if want.get(f) != have.get(f))
    assert not diff, ("compiler/codegen/runtime_files.c differs from the runtime for "
                      f"{diff}; its rows should read:\n{rows_text({f: want[f] for f in diff if f in want})}")


DIGITS = os.path.join(ROOT, "examples", "digits", "digits_int8.onnx")


def build_standalone(out, tmp_path, cflags=(), runtime_cflags=()):
    """DIR (compiled with --weights=c --emit=runtime) and a main: every
    symbol must come from DIR. Returns the executable."""
    man = json.loads((out / "manifest.json").read_text())
    model_c = sorted(str(p) for p in out.glob("*.c"))
    runtime_c = sorted(str(out / f) for f in man["runtime_sources"] if f.endswith(".c"))
    main = tmp_path / "main.c"
    main.write_text(HOST_MAIN)
    inc = [f"-I{out}", f"-I{out / 'include'}"]
    jobs = [(str(main), ())] + [(c, cflags) for c in model_c] + [(c, runtime_cflags) for c in runtime_c]

    def compile_one(i):
        c, flags = jobs[i]
        obj = str(tmp_path / f"o{i}.o")
        p = subprocess.run(["cc", "-std=c11", "-O0", *inc, *flags, "-c", c, "-o", obj],
                           capture_output=True, text=True)
        return obj, f"{c}:\n{p.stderr}" if p.returncode else None

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        results = list(pool.map(compile_one, range(len(jobs))))
    errors = [e for _, e in results if e]
    assert not errors, "\n".join(errors)
    objs = [o for o, _ in results]
    exe = tmp_path / "run"
    p = subprocess.run(["cc", *objs, "-lm", "-o", str(exe)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return exe


def run_standalone(exe, out, tmp_path, x):
    """The standalone program's output beside `cstatic run`'s on x."""
    x.tofile(tmp_path / "x.f32")
    subprocess.run([str(exe), str(tmp_path / "x.f32"), str(tmp_path / "y.f32")], check=True)
    np.save(tmp_path / "x.npy", x)
    cstatic("run", out, "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    want = np.load(tmp_path / "y.npy")
    return np.fromfile(tmp_path / "y.f32", dtype=np.float32).reshape(want.shape), want


@pytest.mark.parametrize("target", ["c_static_lib", "c_static_lib -mcpu=cortex-m",
                                    "c_static_lib -kernels=scalar -profile-layers=1"])
def test_emitted_runtime_builds_alone_and_equals_cstatic_run(tmp_path, target):
    out = tmp_path / "m"
    cstatic("compile", DIGITS, "-o", out, "-q", "-t", target, "--weights=c", "--emit=runtime")
    exe = build_standalone(out, tmp_path)
    x = np.load(os.path.join(ROOT, "examples", "digits", "test_x.npy"))[:1]
    got, want = run_standalone(exe, out, tmp_path, x)
    assert got.tobytes() == want.tobytes()


HOST_MAIN = r"""
#include <stdio.h>
#include <stdint.h>
#include "lib0.h"
static _Alignas(MODEL_ARENA_ALIGN) uint8_t arena[MODEL_ARENA_SIZE];
static float x[MODEL_INPUT0_NUMEL], y[MODEL_OUTPUT0_NUMEL];
int main(int argc, char **argv) {
  FILE *f = fopen(argv[1], "rb");
  if (!f || fread(x, sizeof x, 1, f) != 1) return 2;
  fclose(f);
  const void *in[] = {x};
  void *out[] = {y};
  if (model_check_weights(NULL, 0) != TIDSP_OK) return 3;
  int32_t st = model_run(NULL, arena, in, out);
  if (st != TIDSP_OK) { fprintf(stderr, "%s\n", tidsp_status_str(st)); return 4; }
  f = fopen(argv[2], "wb");
  return !f || fwrite(y, sizeof y, 1, f) != 1 || fclose(f) != 0;
}
"""


if __name__ == "__main__":
    sys.exit(print(rows_text(derive())))
