"""The cstatic binary under test and the one way the end-to-end tests call
it: CSTATIC_BIN if set (e.g. a build-lead/ or ASan build), else
build/bin/cstatic."""
import os
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CSTATIC = os.environ.get("CSTATIC_BIN", os.path.join(ROOT, "build", "bin", "cstatic"))


def cstatic(*args, ok=True, env=None, timeout=3600):
    """`cstatic args…` with its output captured; with ok (the default) a
    non-zero exit fails the test and shows both streams."""
    if not os.path.exists(CSTATIC):
        pytest.fail(f"{CSTATIC} not found: build it first (make build)")
    cmd = [CSTATIC, *map(str, args)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    if ok:
        assert p.returncode == 0, f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
    return p
