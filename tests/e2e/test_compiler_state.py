"""The compiler keeps no process-wide mutable data (issue 11; STYLE.md "State
belongs to the call that made it": no static report buffers, no global
dispatch pins).

A compile's state lives in its graph (the offload report is cs_graph.offload),
its codegen context or its call frames. What may outlive a call is read-only
(tables: .rodata, .data.rel.ro) or per thread (.tbss/.tdata: the error
message and the frontend's message scratch, ir/error.c), since one compile
runs on one thread. So no object of the compiler's libraries or CLI may
define a symbol in a writable section. The objects are the build's
(build/lib/libcs_*.a and the cstatic CLI's), read with objdump.
"""
import glob
import os
import subprocess

import pytest

from cstatic_cli import ROOT

BUILD = os.path.join(ROOT, "build")
WRITABLE = (".data", ".bss", ".data.rel", ".data.rel.local", "*COM*")


def compiler_objects():
    libs = sorted(glob.glob(os.path.join(BUILD, "lib", "libcs_*.a")))
    cli = sorted(glob.glob(os.path.join(BUILD, "CMakeFiles", "cstatic.dir", "compiler", "**", "*.o"),
                           recursive=True))
    return libs + cli


def writable_symbols(paths):
    """[(object, section, symbol)] of every data symbol in a writable section."""
    out = subprocess.run(["objdump", "-t", *paths], capture_output=True, text=True, check=True).stdout
    found, obj = [], None
    for line in out.splitlines():
        if line.endswith(":     file format elf64-x86-64") or "file format" in line:
            obj = line.split(":")[0].strip()
            continue
        parts = line.split()
        # "<value> <flags…> <section> <size> <name>": an object symbol
        if len(parts) >= 5 and " O " in line and parts[-3] in WRITABLE:
            found.append((os.path.basename(obj or "?"), parts[-3], parts[-1]))
    return found


def test_no_writable_static_data_in_the_compiler():
    paths = compiler_objects()
    if not any(p.endswith(".a") for p in paths):
        pytest.skip("the compiler's libraries are not built (build/lib/libcs_*.a)")
    bad = writable_symbols(paths)
    assert not bad, ("process-wide mutable data in the compiler (make it a field of the compile's "
                     "context, a local, const, or _Thread_local): " + repr(bad))


def test_the_check_sees_writable_data(tmp_path):
    src = tmp_path / "s.c"
    src.write_text("static int counter; int bump(void) { return ++counter; }\n"
                   "static const int table[2] = {1, 2}; int get(int i) { return table[i]; }\n")
    obj = tmp_path / "s.o"
    subprocess.run([os.environ.get("CC", "cc"), "-c", "-O0", str(src), "-o", str(obj)], check=True)
    assert [s[2] for s in writable_symbols([str(obj)])] == ["counter"]
