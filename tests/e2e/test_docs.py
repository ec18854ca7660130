"""The documentation is checked like code.

- Every command the docs show runs: each page's ```sh and ```python blocks
  run in order in one scratch directory (links to the repository's
  examples/, build/, include/ and runtime/; `cstatic`, `c7x_fw`,
  `c7x_compute` and `python` on PATH; this checkout's Python package). A
  block with a tag (```sh install, ```python quickstart) is run by the test
  the tag names instead (TAGGED below), in a fresh virtual environment.
- The reference pages agree with what they describe: target-attributes.md
  with `cstatic compile --help` (the one table in compiler/target.c),
  c-api.md with the headers, manifest.md with a real manifest.json.
- The README and the pages link only to files a clone has.
"""

import json
import os
import re
import subprocess
import sys

import pytest

from cstatic_cli import CSTATIC, ROOT, cstatic

DOCS = os.path.join(ROOT, "docs")
PAGES = sorted(f for f in os.listdir(DOCS) if f.endswith(".md"))
RUNNABLE = ("sh", "python")
# tag -> the test that runs blocks with that tag
TAGGED = {"install": "tests/e2e/test_package.py", "quickstart": "tests/e2e/test_package.py"}
FENCE = re.compile(r"^```(\w*)[ \t]*([\w-]*)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def blocks(path):
    """(language, tag, text) of every fenced block of a markdown file."""
    with open(path) as f:
        return [(m.group(1), m.group(2), m.group(3)) for m in FENCE.finditer(f.read())]


def block(page, lang, tag):
    """The one block of `page` with this language and tag."""
    found = [t for lg, tg, t in blocks(os.path.join(DOCS, page)) if lg == lang and tg == tag]
    assert len(found) == 1, f"docs/{page}: expected one ```{lang} {tag} block, found {len(found)}"
    return found[0]


@pytest.fixture
def scratch(tmp_path):
    """A working directory that looks like the repository root to the docs'
    commands, and the environment they run in."""
    for name in ("examples", "build", "include", "runtime"):
        os.symlink(os.path.join(ROOT, name), tmp_path / name)
    bindir = tmp_path / ".bin"
    bindir.mkdir()
    build_bin = os.path.join(ROOT, "build", "bin")
    for name, target in (("cstatic", CSTATIC), ("c7x_fw", os.path.join(build_bin, "c7x_fw")),
                         ("c7x_compute", os.path.join(build_bin, "c7x_compute")),
                         ("python", sys.executable)):
        os.symlink(target, bindir / name)
    env = dict(os.environ, PATH=f"{bindir}:{os.environ.get('PATH', '')}",
               PYTHONPATH=os.path.join(ROOT, "python"), CSTATIC_BIN=CSTATIC)
    env.pop("C7X_FW_SOCKET", None)
    return tmp_path, env


def run_block(lang, text, cwd, env, where):
    if lang == "sh":
        cmd = ["bash", "-euo", "pipefail", "-c", text]
    else:
        cmd = [sys.executable, "-c", text]
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, (f"{where}: this block failed ({p.returncode}):\n{text}\n"
                               f"--- stdout\n{p.stdout}\n--- stderr\n{p.stderr}")
    return p


@pytest.mark.parametrize("page", [p for p in PAGES
                                  if any(lg in RUNNABLE and not tg
                                         for lg, tg, _ in blocks(os.path.join(DOCS, p)))])
def test_every_command_of_the_page_runs(page, scratch):
    cwd, env = scratch
    for i, (lang, tag, text) in enumerate(blocks(os.path.join(DOCS, page))):
        if lang in RUNNABLE and not tag:
            run_block(lang, text, cwd, env, f"docs/{page} block {i + 1} (```{lang})")


def test_tagged_blocks_are_run_elsewhere():
    """A shown command is never left unrun: a tagged block names a test
    that runs it, and shell or Python blocks only come as sh / python."""
    for page in PAGES:
        for lang, tag, text in blocks(os.path.join(DOCS, page)):
            assert lang not in ("bash", "console", "shell"), \
                f"docs/{page}: a ```{lang} block is not run; write it as ```sh"
            if lang in RUNNABLE and tag:
                assert tag in TAGGED, f"docs/{page}: ```{lang} {tag}: no test runs the tag '{tag}'"
                test = os.path.join(ROOT, TAGGED[tag])
                with open(test) as f:
                    assert f"\"{tag}\"" in f.read(), f"{TAGGED[tag]} does not run the '{tag}' block"


def test_cmake_excerpts_are_from_the_example():
    """The user guide's CMake excerpt is the example's own lines."""
    with open(os.path.join(ROOT, "examples", "consumer", "CMakeLists.txt")) as f:
        example = {line.strip() for line in f}
    for page in PAGES:
        for lang, _, text in blocks(os.path.join(DOCS, page)):
            if lang == "cmake":
                for line in filter(None, (l.strip() for l in text.splitlines())):
                    assert line in example, f"docs/{page}: '{line}' is not in examples/consumer/CMakeLists.txt"


# ---- the reference pages against what they describe -------------------

def test_target_attribute_page_matches_compile_help():
    help_text = cstatic("compile", "--help").stdout
    from_help = dict(re.findall(r"^  -([a-z0-9-]+)=\S+  \(default: ([^;)]+)", help_text, re.M))
    assert len(from_help) >= 11, help_text
    with open(os.path.join(DOCS, "target-attributes.md")) as f:
        rows = re.findall(r"^\| `-([a-z0-9-]+)` \| [^|]+ \| `([^`]+)`", f.read(), re.M)
    from_page = dict(rows)
    assert len(rows) == len(from_page), "an attribute is listed twice"
    assert from_page == from_help, (f"docs/target-attributes.md and `cstatic compile --help` disagree: "
                                    f"page {from_page}, help {from_help}")


API_HEADERS = ("tidsp.h", "model.h", "dma.h", "profile.h", "platform/tidsp_dsp.h")
DECL = re.compile(r"^(?:typedef\s+(?:struct|enum)\s+(tidsp_\w+)"
                  r"|typedef\s+[^;(]*\(\s*\*\s*(tidsp_\w+)\)"
                  r"|#define\s+((?:TIDSP|TVM)_\w+)"
                  r"|\s*(TIDSP_DTYPE_\w+)\s*="
                  r"|\s*X\((TIDSP_\w+),"
                  r"|[A-Za-z][\w\s\*]*?\b(tidsp_\w+)\s*\()", re.M)


def header_names(text):
    names = set()
    for m in DECL.finditer(text):
        names.update(g for g in m.groups() if g)
    return names


def test_c_api_page_names_every_declaration_and_nothing_else():
    with open(os.path.join(DOCS, "c-api.md")) as f:
        page = f.read()
    declared = set()
    for h in API_HEADERS:
        with open(os.path.join(ROOT, "include", "cstatic", h)) as f:
            declared |= header_names(f.read())
    assert {"tidsp_model_desc", "tidsp_l2_bind", "TIDSP_OK", "tidsp_model_entry"} <= declared, declared
    missing = sorted(n for n in declared if not re.search(rf"\b{n}\b", page))
    assert not missing, f"docs/c-api.md does not describe {missing}"
    everything = ""
    for d, _, files in os.walk(os.path.join(ROOT, "include")):
        for name in files:
            with open(os.path.join(d, name)) as f:
                everything += f.read()
    unknown = sorted({n for n in re.findall(r"\b(?:tidsp|TIDSP|TVM)_\w+", page)
                      if not re.search(rf"\b{n}\b", everything)})
    assert not unknown, f"docs/c-api.md names {unknown}, which no header declares"


def test_c_api_page_generated_names_exist(tmp_path):
    """The lib0.h names the page lists are the ones the compiler writes."""
    model = os.path.join(ROOT, "examples", "digits", "digits_int8.onnx")
    text = ""
    for tag, target, extra in (("g", "c_static_lib", "--weights=c"), ("c7x", "c_static_lib -mcpu=c7x", "")):
        cstatic("compile", model, "-o", tmp_path / tag, "-t", target, *filter(None, [extra]), "-q")
        text += (tmp_path / tag / "lib0.h").read_text()
    with open(os.path.join(DOCS, "c-api.md")) as f:
        page = f.read()
    names = set(re.findall(r"\b(MODEL_[A-Z0-9_]*[A-Z0-9]|model_\w+|cg_main\w*)\b", page))
    assert "MODEL_ARENA_SIZE" in names and "model_run" in names
    unknown = sorted(n for n in names if not re.search(rf"\b{n}\b", text))
    assert not unknown, f"docs/c-api.md names {unknown}, which lib0.h does not declare"


def manifest_keys(obj, out):
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.add(k)
            manifest_keys(v, out)
    elif isinstance(obj, list):
        for v in obj:
            manifest_keys(v, out)
    return out


def test_manifest_page_describes_every_key(tmp_path):
    """Every key of a plain compile and of an MMALIB-offloaded, L2-staged
    one (a 64-channel conv, which MMALIB takes)."""
    from test_python_api import small_qdq_conv
    mm = small_qdq_conv(tmp_path / "conv", preset="c7x")
    keys = set()
    for tag, model, target in (("plain", os.path.join(ROOT, "examples", "digits", "digits_int8.onnx"),
                                "c_static_lib"),
                               ("mm", mm, "c_static_lib -mcpu=c7x -mmalib=1 -profile-layers=1")):
        cstatic("compile", model, "-o", tmp_path / tag, "-t", target, "-q")
        with open(tmp_path / tag / "manifest.json") as f:
            m = json.load(f)
        keys |= manifest_keys(m, set())
        keys -= set(m["totals"]["kernels"])  # runtime function names, not keys
    with open(os.path.join(DOCS, "manifest.md")) as f:
        page = f.read()
    assert {"offload", "scale_shift_max_rel_err", "l2", "macs"} <= keys, keys
    missing = sorted(k for k in keys if f"`{k}`" not in page)
    assert not missing, f"docs/manifest.md does not describe {missing}"


# ---- links ---------------------------------------------------------------

LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("path", ["README.md"] + [f"docs/{p}" for p in PAGES])
def test_links_point_at_files_of_the_clone(path):
    with open(os.path.join(ROOT, path)) as f:
        text = f.read()
    base = os.path.dirname(os.path.join(ROOT, path))
    for target in LINK.findall(text):
        if re.match(r"[a-z]+://", target):
            continue
        full = os.path.normpath(os.path.join(base, target))
        assert os.path.commonpath([full, ROOT]) == ROOT, f"{path} links outside the clone: {target}"
        assert os.path.exists(full), f"{path} links to {target}, which does not exist"
    assert "../shared" not in text and "shared/DESIGN" not in text, f"{path} points at ../shared"


def test_readme_links_every_page():
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    missing = [p for p in PAGES if f"docs/{p}" not in readme]
    assert not missing, f"README.md does not link {missing}"
