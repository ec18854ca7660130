"""`pip install` into a fresh virtual environment, then the user guide's
five-line quickstart from another folder, compared with ONNX Runtime.

The install command is the user guide's "install" block and the script its
"quickstart" block (docs/user-guide.md), run as they are: pip builds the
project's CMake in its own isolated build environment and installs the
wheel, with its dependencies at the versions this checkout's venv has (the
Makefile's pins). Slow: a full build of the compiler and runtime, and
PyTorch installed into the new venv.
"""

import importlib.metadata
import os
import subprocess
import sys
import textwrap

import pytest

from cstatic_cli import ROOT
from test_docs import block

PINNED = ("numpy", "torch", "torchao", "onnx", "onnxscript", "onnxruntime")


def run(cmd, cwd, env, timeout=3600):
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, f"{cmd} failed ({p.returncode}):\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}"
    return p


@pytest.mark.slow
def test_pip_install_then_quickstart_equals_ort(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("".join(f"{n}=={importlib.metadata.version(n)}\n" for n in PINNED))
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "CSTATIC_BIN", "VIRTUAL_ENV", "PYTHONHOME", "C7X_ARM_RUNTIME_LIB")}
    env.update(PATH=f"{venv / 'bin'}:{env.get('PATH', '')}", VIRTUAL_ENV=str(venv),
               PIP_CONSTRAINT=str(constraints), PIP_DISABLE_PIP_VERSION_CHECK="1")

    install = block("user-guide.md", "sh", "install")
    run(["bash", "-euo", "pipefail", "-c", install], cwd=ROOT, env=env)

    # from another folder: nothing of the checkout on the path
    work = tmp_path / "elsewhere"
    work.mkdir()
    script = block("user-guide.md", "python", "quickstart") + textwrap.dedent('''
        # the check: the compiled model equals ONNX Runtime on the same file
        import os, numpy as np, onnxruntime as ort
        so = ort.SessionOptions()
        so.add_session_config_entry("session.qdqisint8allowed", "1")
        sess = ort.InferenceSession("net_int8.onnx", so, providers=["CPUExecutionProvider"])
        ref = sess.run(None, {sess.get_inputs()[0].name: x[:1].numpy()})[0]
        assert y.shape == ref.shape and np.array_equal(y, ref), (y, ref)
        print("cli", cstatic.cli())
        import cstatic.c7x
        print("c7x_lib", cstatic.c7x._find_library())
        print("equal", y.shape)
        ''')
    p = run([str(venv / "bin" / "python"), "-c", script], cwd=work, env=env)
    assert "equal (1, 10)" in p.stdout, p.stdout
    cli = next(l.split(" ", 1)[1] for l in p.stdout.splitlines() if l.startswith("cli "))
    assert cli.startswith(str(venv)) and not cli.startswith(ROOT), cli
    # the C7x client library the wheel ships, found without C7X_ARM_RUNTIME_LIB
    lib = next(l.split(" ", 1)[1] for l in p.stdout.splitlines() if l.startswith("c7x_lib "))
    assert lib.startswith(str(venv)) and os.path.exists(lib), lib
    # the console script runs the bundled binary
    out = run([str(venv / "bin" / "cstatic"), "--prefix"], cwd=work, env=env).stdout.strip()
    assert out.startswith(str(venv)), out
