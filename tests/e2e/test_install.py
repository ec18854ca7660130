"""`cmake --install` and a consumer project: the C package as a user gets it.

The build is installed into a temporary prefix, which is then moved (so
nothing may point back at the build or source tree). From there:
- the installed CLI compiles, and `cstatic run` and `--emit=module` work
  with the installed runtime and headers;
- examples/consumer builds with find_package(cstatic) and
  cstatic_add_model() (static runtime, weights compiled in), and with
  pkg-config (shared runtime, weights.bin), and both programs compute what
  ONNX Runtime computes on the digits model, bit for bit.
"""

import os
import shutil
import subprocess

import numpy as np
import pytest

from cstatic_cli import CSTATIC, ROOT

MODEL = os.path.join(ROOT, "examples", "digits", "digits_int8.onnx")
IMAGES = os.path.join(ROOT, "examples", "digits", "test_x.npy")
BUILD = os.path.join(ROOT, "build")  # `make build`'s tree: every installed target is built there


def run(*cmd, cwd=None, env=None, ok=True):
    p = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    if ok:
        assert p.returncode == 0, f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}"
    return p


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    """The build installed into a prefix, then moved elsewhere."""
    work = tmp_path_factory.mktemp("install")
    first = work / "first"
    run("cmake", "--install", BUILD, "--prefix", first)
    moved = work / "prefix"
    os.rename(first, moved)
    return moved


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    """(raw float32 file of the first 50 test images, ORT's logits on them)."""
    import sys
    sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
    import ort_ref
    x = np.load(IMAGES)[:50]
    path = tmp_path_factory.mktemp("images") / "images.f32"
    x.tofile(path)
    sess = ort_ref.session(MODEL, config={"session.qdqisint8allowed": "1"})
    ref = np.concatenate([sess.run(None, {"input": x[i:i + 1]})[0] for i in range(len(x))])
    return path, ref


def test_prefix_holds_the_package(prefix):
    for rel in ("bin/cstatic", "lib/libtidsp.a", "lib/libtidsp.so", "include/cstatic/model.h",
                "include/cstatic/kernels.h", "lib/cmake/cstatic/cstaticConfig.cmake",
                "lib/cmake/cstatic/cstaticConfigVersion.cmake", "lib/cmake/cstatic/cstaticAddModel.cmake",
                "lib/pkgconfig/cstatic.pc", "bin/c7x_fw", "bin/c7x_compute", "lib/libc7x_arm_runtime.so",
                "include/c7x_client.h"):
        assert (prefix / rel).exists(), f"{rel} is not installed"
    out = run(prefix / "bin" / "cstatic", "--prefix").stdout.strip()
    assert out == str(prefix)
    assert run(prefix / "bin" / "cstatic", "--version").stdout.startswith("cstatic ")


def test_installed_cli_runs_models_without_the_source_tree(prefix, tmp_path):
    cli = prefix / "bin" / "cstatic"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CS_")}
    run(cli, "compile", MODEL, "-o", tmp_path / "m", "-q", env=env)
    x = np.load(IMAGES)[:8]
    np.save(tmp_path / "x.npy", x)
    run(cli, "run", tmp_path / "m", "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy", env=env)
    run(CSTATIC, "run", tmp_path / "m", "--input", tmp_path / "x.npy", "--output", tmp_path / "ref.npy")
    assert np.array_equal(np.load(tmp_path / "y.npy"), np.load(tmp_path / "ref.npy"))
    # the .so it built includes the prefix's headers and links its runtime
    run(cli, "compile", MODEL, "-o", tmp_path / "mod", "-t", "c_static_lib -mcpu=c7x", "--emit=module", "-q",
        env=env)
    assert (tmp_path / "mod" / "lib0.out").stat().st_size > 0
    # without its runtime beside it, the CLI says what is missing
    shutil.move(prefix / "include", tmp_path / "hidden")
    try:
        p = run(cli, "run", tmp_path / "m", "--input", tmp_path / "x.npy", "--output", tmp_path / "z.npy",
                env=env, ok=False)
    finally:
        shutil.move(tmp_path / "hidden", prefix / "include")
    assert p.returncode == 1 and "runtime headers not found" in p.stderr and str(prefix) in p.stderr, p.stderr


def test_find_package_consumer(prefix, images, tmp_path):
    """examples/consumer with find_package + cstatic_add_model, then the
    model changed: the next build compiles it again."""
    src = tmp_path / "consumer"
    shutil.copytree(os.path.join(ROOT, "examples", "consumer"), src)
    model = tmp_path / "model.onnx"
    shutil.copy(MODEL, model)
    build = tmp_path / "build"
    p = run("cmake", "-S", src, "-B", build, f"-DCMAKE_PREFIX_PATH={prefix}", f"-DMODEL={model}")
    assert "cstatic: compiling" in p.stdout
    run("cmake", "--build", build)
    x_path, ref = images
    run(build / "classify", x_path, tmp_path / "y.f32")
    y = np.fromfile(tmp_path / "y.f32", dtype=np.float32).reshape(ref.shape)
    assert np.array_equal(y, ref), f"{np.mean(y == ref):.4f} of the logits equal ORT's"
    # a build with nothing changed compiles nothing; a touched model recompiles
    assert "cstatic: compiling" not in run("cmake", "--build", build).stdout
    os.utime(model, (os.path.getmtime(model) + 5,) * 2)
    assert "cstatic: compiling" in run("cmake", "--build", build).stdout


def test_pkg_config_consumer(prefix, images, tmp_path):
    if shutil.which("pkg-config") is None:
        pytest.fail("pkg-config is not installed (make test installs it)")
    run(prefix / "bin" / "cstatic", "compile", MODEL, "-o", tmp_path / "model", "-q")
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    run("make", "-f", os.path.join(ROOT, "examples", "consumer", "Makefile"), "MODEL_DIR=model",
        cwd=tmp_path, env=env)
    x_path, ref = images
    env["LD_LIBRARY_PATH"] = str(prefix / "lib")
    run(tmp_path / "classify", x_path, tmp_path / "y.f32", tmp_path / "model" / "weights.bin",
        cwd=tmp_path, env=env)
    y = np.fromfile(tmp_path / "y.f32", dtype=np.float32).reshape(ref.shape)
    assert np.array_equal(y, ref), f"{np.mean(y == ref):.4f} of the logits equal ORT's"
    # the shared runtime it linked is the prefix's
    ldd = run("ldd", tmp_path / "classify", env=env).stdout
    assert str(prefix / "lib" / "libtidsp.so") in ldd, ldd
    # weights that are not the model's are refused
    bad = tmp_path / "bad.bin"
    data = bytearray((tmp_path / "model" / "weights.bin").read_bytes())
    data[-1] ^= 1
    bad.write_bytes(bytes(data))
    p = run(tmp_path / "classify", x_path, tmp_path / "z.f32", bad, cwd=tmp_path, env=env, ok=False)
    assert p.returncode == 1 and "do not belong" in p.stderr, p.stderr
