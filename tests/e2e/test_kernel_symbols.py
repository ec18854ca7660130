"""No kernel's C symbol is written by hand in compiler/ or fw/ (issue 11).

What a kernel is — its symbol among the rest — is one row of
include/cstatic/kernels.def; the compiler and the firmware get the symbol
from the row (cs_kernel_info_of(op)->fn, the export table's rows). So, for
every symbol of the table (read with the C preprocessor from the rows
themselves, the fn and fn__ref names), no source file of compiler/ or fw/
may name it:

- in a string literal (a name typed again, which drifts from the row), or
- as an identifier that is not called (a hand-written table of kernels).

Allowed: comments (prose), and calls — the compiler computes its tables
with the runtime's own kernels (STYLE.md: "compile-time tables call the
runtime's own kernel", e.g. the int8 SiLU table through tidsp_unary_f32),
through the reference entry point fn__ref of a kernel that dispatches
(test_the_compiler_calls_no_dispatched_kernel).
codegen/runtime_files.c is not read: its rows are what `nm` says of the
runtime's objects, kept equal to them by test_runtime_files.py.

KNOWN lists the strings that still name a symbol, each with the way out;
an entry that no longer matches fails too, so the list only shrinks.
"""
import os
import re
import subprocess

from cstatic_cli import ROOT

DIRS = ("compiler", "fw")
# Derived from the runtime's objects by test_runtime_files.py, not by hand.
NOT_READ = {"compiler/codegen/runtime_files.c"}
# file -> symbols its string literals still name, and why they are left.
# Empty: the L2 plan takes the sliced conv from its AUX row
# (cs_kernel_sliced_fn), -tidl-kernels' help its kernels from their rows.
KNOWN = {}

ROWS = r"""
#define TIDSP_KERNEL(NAME, ir, fn, ...) @SYM fn
#define TIDSP_KERNEL_EXTERN(NAME, ir, fn, ...) @SYM fn
#define TIDSP_KERNEL_AUX(fn, group, sliced_of) @SYM fn
#include "cstatic/kernels.def"
"""


def table_symbols():
    cc = os.environ.get("CC", "cc")
    out = subprocess.run([cc, "-E", "-P", "-I", os.path.join(ROOT, "include"), "-x", "c", "-"], input=ROWS,
                         capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"@SYM\s+(\w+)", out))


def split_source(text):
    """(code with comments and literals blanked, [string literal bodies])."""
    code, strings, i, n = [], [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            code.append(" ")
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            if c == '"':
                strings.append(text[i + 1:j])
            code.append(" 0 ")
            i = j + 1
        else:
            code.append(c)
            i += 1
    return "".join(code), strings


def sources():
    for d in DIRS:
        for dirpath, _, names in os.walk(os.path.join(ROOT, d)):
            for name in sorted(names):
                if name.endswith((".c", ".h")):
                    path = os.path.join(dirpath, name)
                    rel = os.path.relpath(path, ROOT)
                    if rel not in NOT_READ:
                        yield rel, path


def hand_written(symbols):
    """{file: {symbol: 'string' | 'reference'}} of every name written by hand."""
    word = re.compile(r"\b(" + "|".join(sorted(symbols, key=len, reverse=True)) + r")(?:__ref)?\b")
    found = {}
    for rel, path in sources():
        with open(path, encoding="utf-8") as f:
            code, strings = split_source(f.read())
        hits = {}
        for s in strings:
            for m in word.finditer(s):
                hits[m.group(1)] = "string"
        for m in word.finditer(code):
            if not re.match(r"\s*\(", code[m.end():]):
                hits.setdefault(m.group(1), "reference")
        if hits:
            found[rel] = hits
    return found


def test_the_table_has_every_kind_of_row():
    syms = table_symbols()
    # one of each row kind: TIDSP_KERNEL, _EXTERN, _AUX
    assert {"tidsp_where", "mmalib_conv2d_i8", "mmalib_conv2d_i8_sliced"} <= syms, sorted(syms)
    assert len(syms) >= 50


def test_split_source_sees_strings_and_code():
    code, strings = split_source('a("tidsp_x\\" y"); /* tidsp_z */ b = \'"\'; // tidsp_w\nc;')
    assert strings == ['tidsp_x\\" y']
    assert "tidsp_z" not in code and "tidsp_w" not in code and "c;" in code


def test_no_kernel_symbol_by_hand_in_compiler_and_fw():
    found = hand_written(table_symbols())
    bad = {f: h for f, h in found.items()
           if any(kind == "reference" or s not in KNOWN.get(f, set()) for s, kind in h.items())}
    assert not bad, ("kernel symbols written by hand (take them from the kernel table, "
                     "cs_kernel_info_of(op)->fn): " + repr(bad))
    stale = {f: sorted(want - set(found.get(f, {}))) for f, want in KNOWN.items()
             if want - set(found.get(f, {}))}
    assert not stale, "KNOWN lists names these files no longer write; remove them: " + repr(stale)


DISPATCH_ROWS = r"""
#define TIDSP_KERNEL(NAME, ir, fn, ref, ...) @ROW fn ref
#include "cstatic/kernels.def"
"""


def dispatched_symbols():
    """The kernels whose entry point dispatches to CPU-specific variants
    (kernels.def "ref": PUBLIC or INTERNAL, with a fn__ref beside fn)."""
    cc = os.environ.get("CC", "cc")
    out = subprocess.run([cc, "-E", "-P", "-I", os.path.join(ROOT, "include"), "-x", "c", "-"],
                         input=DISPATCH_ROWS, capture_output=True, text=True, check=True).stdout
    return {fn for fn, ref in re.findall(r"@ROW\s+(\w+)\s+(\w+)", out) if ref in ("PUBLIC", "INTERNAL")}


def test_the_compiler_calls_no_dispatched_kernel():
    """What a compile produces never depends on the CPU it runs on: where
    the compiler runs a kernel (a table over the 256 codes, a folded
    constant: eval/kernel_exec.c) it calls the reference entry point
    fn__ref, never fn, which would run the variant this CPU dispatches to."""
    dispatched = dispatched_symbols()
    assert {"tidsp_unary_f32", "tidsp_lut_i8", "tidsp_conv2d_i8"} <= dispatched, sorted(dispatched)
    call = re.compile(r"\b(" + "|".join(sorted(dispatched, key=len, reverse=True)) + r")\s*\(")
    bad = {}
    for rel, path in sources():
        if rel.startswith("compiler" + os.sep):
            with open(path, encoding="utf-8") as f:
                code, _ = split_source(f.read())
            hits = sorted(set(call.findall(code)))
            if hits:
                bad[rel] = hits
    assert not bad, "dispatched kernels called by the compiler (call fn__ref): " + repr(bad)
