"""Every pass is named after its file (issue 11; DESIGN §4: "Each pass: one
file, one public function pass_NAME"): pass_X, declared in
compiler/passes/pass_list.h, is defined in compiler/passes/X.c.

KNOWN lists the passes that still live elsewhere, with their file; an entry
that no longer holds fails too, so the list only shrinks.
"""
import glob
import os
import re

from cstatic_cli import ROOT

PASSES = os.path.join(ROOT, "compiler", "passes")
# pass -> the file that defines it, for a pass not (yet) in its own file.
# Empty: every pass is; the shared bodies of the MMALIB int8/int16 twins are
# helpers in passes/match/.
KNOWN = {}


def declared():
    with open(os.path.join(PASSES, "pass_list.h")) as f:
        return re.findall(r"^cs_status (pass_\w+)\(cs_graph \*g, const cs_target \*t\);", f.read(), re.M)


def defined_in():
    where = {}
    for path in glob.glob(os.path.join(PASSES, "*.c")):
        with open(path) as f:
            for name in re.findall(r"^cs_status (pass_\w+)\(cs_graph \*g, const cs_target \*t\) \{", f.read(), re.M):
                where.setdefault(name, []).append(os.path.basename(path))
    return where


def test_every_pass_is_named_after_its_file():
    names, where = declared(), defined_in()
    assert len(names) >= 30, names
    missing = [p for p in names if p not in where]
    assert not missing, "declared in pass_list.h, defined nowhere: %s" % missing
    twice = {p: f for p, f in where.items() if len(f) > 1}
    assert not twice, twice
    wrong = {p: where[p][0] for p in names if where[p][0] != p[len("pass_"):] + ".c" and KNOWN.get(p) != where[p][0]}
    assert not wrong, "passes not in a file of their name (pass_X goes in X.c): %s" % wrong
    stale = sorted(p for p, f in KNOWN.items() if where.get(p, [None])[0] == p[len("pass_"):] + ".c"
                   or where.get(p, [None])[0] != f)
    assert not stale, "KNOWN entries that no longer hold; remove them: %s" % stale
