"""The `cstatic` binary the Python API drives, and where it lives.

One prefix holds the CLI, the runtime library and its headers (bin/,
lib/, include/; cmake/install.cmake). It is found in this order:

1. $CSTATIC_BIN, the binary itself (tests point it at an ASan build);
2. the installed package: the wheel puts the prefix inside the package
   directory (cstatic/bin/cstatic);
3. a source checkout: python/cstatic beside build/ (`make build`).

`main()` is the `cstatic` console script of the wheel: it runs the bundled
binary with the same arguments.
"""

import os
import subprocess
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


class CstaticNotFound(RuntimeError):
    """No cstatic binary: not installed with the package, not built."""


def cli() -> str:
    """Path of the cstatic binary (see the module docstring for the order)."""
    env = os.environ.get("CSTATIC_BIN")
    if env:
        if not os.path.exists(env):
            raise CstaticNotFound(f"CSTATIC_BIN={env} does not exist")
        return env
    candidates = [os.path.join(_HERE, "bin", "cstatic"),
                  os.path.join(os.path.dirname(os.path.dirname(_HERE)), "build", "bin", "cstatic")]
    # an editable install keeps the CMake-installed files in site-packages
    # while the Python files stay in the source tree: look along __path__
    import cstatic
    for d in getattr(cstatic, "__path__", []):
        candidates.append(os.path.join(d, "bin", "cstatic"))
    for path in candidates:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    raise CstaticNotFound("the cstatic binary was not found (looked in "
                          + ", ".join(dict.fromkeys(candidates))
                          + "): install the package with `pip install .`, or run `make build` "
                          "in a source checkout, or set CSTATIC_BIN")


def prefix() -> str:
    """The prefix the CLI belongs to: PREFIX/bin/cstatic, PREFIX/lib,
    PREFIX/include and, when installed, PREFIX/lib/cmake/cstatic (for
    `cmake -DCMAKE_PREFIX_PATH=...`) and PREFIX/lib/pkgconfig."""
    return os.path.dirname(os.path.dirname(os.path.realpath(cli())))


def run(*args, timeout=None) -> subprocess.CompletedProcess:
    """`cstatic args...` with text output captured (the caller reads the
    return code)."""
    return subprocess.run([cli(), *map(str, args)], capture_output=True, text=True, timeout=timeout)


def main() -> int:
    """The `cstatic` console script: exec the bundled binary."""
    try:
        path = cli()
    except CstaticNotFound as exc:
        print(f"cstatic: error: {exc}", file=sys.stderr)
        return 1
    os.execv(path, [path, *sys.argv[1:]])
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main())
