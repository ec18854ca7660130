"""Deployment, first slice: `cstatic compile --emit=module`, the firmware
emulator (c7x_fw) and the host client (c7x_compute, libc7x_arm_runtime).

What is checked here:
- the module is one ELF shared object with weights.bin, byte for byte, in
  its own read-only .rodata.weights section between the
  _binary_weights_bin_start/_end symbols, and its undefined symbols are only
  what the firmware exports (tidsp_* runtime, a few C library functions);
- load, infer and unload as separate c7x_compute invocations (handles live
  in the firmware) give exactly the bytes of `cstatic run` on the same
  compiled directory;
- a module needing a symbol the firmware does not export fails to load,
  naming the symbol, and the firmware keeps serving;
- bad requests (wrong shape, unknown handle, malformed packets) get error
  responses, never a crash.

The firmware runs on a socket in the test's temp directory, with small
pools; binaries default to the ones next to $CSTATIC_BIN
($C7X_FW_BIN / $C7X_COMPUTE_BIN override them).
"""
import os
import re
import socket
import struct
import subprocess
import time

import numpy as np
import pytest

from deploy_util import (COMPUTE_BIN, CSTATIC, FW_BIN, FW_DIR, FW_WRAPPER, MODULE_CC, compile_small_module,
                         run, small_model)

C7X_ERR_SIZE, C7X_ERR_OP = -7, -8


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("deploy")


@pytest.fixture(scope="module")
def compiled(work):
    return compile_small_module(work)


@pytest.fixture(scope="module")
def firmware(work):
    """c7x_fw on a private socket; yields the client environment."""
    sock = str(work / "fw.sock")
    log = open(work / "fw.log", "w")
    p = subprocess.Popen([*FW_WRAPPER, FW_BIN, "--socket", sock, "--ddr-heap-mib", "64", "--staging-mib", "16",
                          "--result-mib", "4"], stdout=log, stderr=subprocess.STDOUT)
    env = dict(os.environ, C7X_FW_SOCKET=sock)
    deadline = time.time() + 10
    while not os.path.exists(sock):
        assert p.poll() is None, f"c7x_fw exited: {open(work / 'fw.log').read()}"
        assert time.time() < deadline, "c7x_fw did not create its socket"
        time.sleep(0.02)
    yield env
    alive = p.poll() is None
    p.terminate()
    p.wait(timeout=10)
    log.close()
    assert alive, f"c7x_fw died during the tests:\n{open(work / 'fw.log').read()}"


def compute(env, *args, ok=True):
    return run(COMPUTE_BIN, *args, env=env, ok=ok)


def load(env, path):
    p = compute(env, "load", path)
    m = re.fullmatch(r"handle (\d+)\n", p.stdout)
    assert m, p.stdout
    return int(m.group(1))


# ---- the module file ---------------------------------------------------------

def elf_sections(data):
    """{name: (offset, size, flags)} and {symbol: value} of .dynsym (ELF64 LE)."""
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1
    e_type, = struct.unpack_from("<H", data, 16)
    assert e_type == 3, "not a shared object (ET_DYN)"
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    hdrs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = hdrs[shstrndx]

    def name(tab, off):
        start = tab[4] + off
        return data[start:data.index(b"\0", start)].decode()

    sections = {name(strtab, h[0]): (h[4], h[5], h[2]) for h in hdrs}
    symbols = {}
    for h in hdrs:
        if h[1] == 11:  # SHT_DYNSYM
            names = hdrs[h[6]]
            for k in range(h[5] // 24):
                st_name, st_info, st_other, st_shndx, st_value, st_size = struct.unpack_from(
                    "<IBBHQQ", data, h[4] + k * 24)
                if st_name:
                    symbols[name(names, st_name)] = (st_value, st_shndx)
    return sections, symbols


def test_module_embeds_weights_in_rodata_weights(compiled):
    data = (compiled / "lib0.out").read_bytes()
    weights = (compiled / "weights.bin").read_bytes()
    sections, symbols = elf_sections(data)
    assert ".rodata.weights" in sections, sorted(sections)
    off, size, flags = sections[".rodata.weights"]
    assert data[off:off + size] == weights
    assert flags & 0x2 and not flags & 0x1 and not flags & 0x4  # SHF_ALLOC, not WRITE/EXEC
    start, end = symbols["_binary_weights_bin_start"][0], symbols["_binary_weights_bin_end"][0]
    assert end - start == len(weights)
    for name in ("_binary_weights_bin_size", "cg_main_dsp", "model_desc"):
        assert symbols[name][1] != 0, f"{name} is not defined by the module"
    # Nothing but the module in DIR besides the C outputs.
    assert not (compiled / ".module").exists()


def test_module_needs_only_what_the_firmware_exports(compiled):
    listing = run(*FW_WRAPPER, FW_BIN, "--list-exports").stdout.splitlines()
    exports = {line.split()[1] for line in listing if not line.startswith("#")}
    _, symbols = elf_sections((compiled / "lib0.out").read_bytes())
    undefined = {n for n, (_, shndx) in symbols.items() if shndx == 0}
    assert undefined, "a model module calls the runtime"
    assert undefined <= exports, f"not exported: {sorted(undefined - exports)}"
    assert all(n.startswith("tidsp_") or n in ("memcpy", "memset", "memmove", "memcmp")
               for n in undefined), sorted(undefined)


def test_emit_module_needs_the_c7x_target(work):
    model = small_model(work / "tiny.onnx")
    p = run(CSTATIC, "compile", model, "-o", work / "generic", "--emit=module", ok=False)
    assert p.returncode == 2 and "-mcpu=c7x" in p.stderr
    assert not (work / "generic").exists()


# ---- load / infer / unload ---------------------------------------------------

def test_cli_matches_cstatic_run_bit_for_bit(compiled, firmware, work):
    x = np.random.default_rng(3).standard_normal((1, 3, 10, 10)).astype(np.float32)
    np.save(work / "x.npy", x)
    x.tofile(work / "x.bin")
    run(CSTATIC, "run", compiled, "--input", work / "x.npy", "--output", work / "ref.npy")
    ref = np.load(work / "ref.npy")

    handle = load(firmware, compiled / "lib0.out")
    info = compute(firmware, "info", handle).stdout
    assert "input 0: float32[1,3,10,10] 1200 bytes" in info and "output 0: float32[1,4]" in info
    p = compute(firmware, "infer", handle, 0, "--input", work / "x.bin", "--output",
                work / "y.bin", "--dtype", "float32")
    assert "output 0: float32[1,4] 16 bytes" in p.stdout and re.search(r"cycles: \d+", p.stdout)
    y = (work / "y.bin").read_bytes()
    assert y == ref.tobytes(), (np.frombuffer(y, np.float32), ref)

    # The handle is still there for another process; a second module gets
    # another handle and the same answer.
    h2 = load(firmware, compiled / "lib0.out")
    assert h2 != handle
    compute(firmware, "infer", h2, 0, "-i", work / "x.bin", "-o", work / "y2.bin", "--repeat", "3")
    assert (work / "y2.bin").read_bytes() == y
    assert "2 modules loaded" in compute(firmware, "status").stdout

    compute(firmware, "unload", handle)
    compute(firmware, "unload", h2)
    p = compute(firmware, "infer", handle, 0, "-i", work / "x.bin", "-o", work / "y.bin", ok=False)
    assert p.returncode == 1 and f"handle {handle}" in p.stderr
    p = compute(firmware, "unload", handle, ok=False)
    assert p.returncode == 1 and "status -12" in p.stderr
    st = compute(firmware, "status").stdout
    assert "0 modules loaded" in st
    free, total = map(int, re.search(r"DDR heap (\d+) of (\d+) bytes free", st).groups())
    assert free == total == 64 << 20  # unload gave back the module and its arena


def test_bad_inputs_get_errors_naming_them(compiled, firmware, work):
    handle = load(firmware, compiled / "lib0.out")
    np.zeros((1, 3, 10, 10), np.float32).tofile(work / "z.bin")
    p = compute(firmware, "infer", handle, 0, "-i", work / "z.bin", "-o", work / "o.bin",
                "--shape", "1,3,100", ok=False)
    assert p.returncode == 1
    assert "input 0 'x'" in p.stderr and "[1,3,10,10]" in p.stderr and "status -14" in p.stderr
    p = compute(firmware, "infer", handle, 0, "-i", work / "z.bin", "-o", work / "o.bin",
                "--dtype", "int8", ok=False)
    assert p.returncode == 1 and "needs 300" in p.stderr
    p = compute(firmware, "infer", handle, 7, "-i", work / "z.bin", "-o", work / "o.bin", ok=False)
    assert p.returncode == 1 and "model_id 7" in p.stderr
    compute(firmware, "unload", handle)


def test_missing_symbol_fails_the_load_naming_it(firmware, work):
    src = work / "needs_more.c"
    src.write_text("int tidsp_not_in_this_firmware(int);\n"
                   "__attribute__((visibility(\"default\"))) int cg_main_dsp(void) {\n"
                   "  return tidsp_not_in_this_firmware(1);\n}\n")
    mod = work / "needs_more.out"
    run(MODULE_CC, "-fPIC", "-shared", "-nostdlib", "-o", mod, src)
    p = compute(firmware, "load", mod, ok=False)
    assert p.returncode == 1
    assert "tidsp_not_in_this_firmware" in p.stderr and "status -10" in p.stderr
    assert "--tidl OFF" in p.stderr or "--tidl ON" in p.stderr
    # Symbols the firmware process has but does not export (the C
    # library's allocator, the firmware's own pool) are refused just the same:
    # the table decides, not what the host's dynamic loader could find.
    # A TIDL-off firmware (the default build) does not have the TIDL-backed
    # max pool either.
    tidl_off = "--tidl OFF" in run(*FW_WRAPPER, FW_BIN, "--list-exports").stdout.splitlines()[0]
    for sym in ("malloc", "fw_pool_alloc") + (("c7x_int8_max_pool_tidl",) if tidl_off else ()):
        src2 = work / f"needs_{sym}.c"
        src2.write_text(f"void *{sym}();\n"
                        "__attribute__((visibility(\"default\"))) void *cg_main_dsp(void) {\n"
                        f"  return {sym}(16);\n}}\n")
        mod2 = work / f"needs_{sym}.out"
        run(MODULE_CC, "-fPIC", "-shared", "-nostdlib", "-o", mod2, src2)
        p = compute(firmware, "load", mod2, ok=False)
        assert p.returncode == 1 and f"does not export: {sym}" in p.stderr, p.stderr
    # Not an ELF at all.
    (work / "junk.out").write_bytes(b"junk" * 100)
    p = compute(firmware, "load", work / "junk.out", ok=False)
    assert p.returncode == 1 and "not an ELF" in p.stderr
    compute(firmware, "ping")
    assert "0 modules loaded" in compute(firmware, "status").stdout


def test_tidl_max_pool_needs_a_tidl_firmware(compiled, firmware, work):
    """The spec's BeagleY-AI trap, caught at load: with -mmalib=1 the model's
    MaxPool becomes the TIDL-backed c7x_int8_max_pool_tidl (-tidl-kernels=1,
    the default), which a --tidl OFF firmware does not export, so the load
    fails naming it; with -tidl-kernels=0 it is the scalar c7x_int8_max_pool
    and the module loads and runs, with the output of `cstatic run`."""
    if "--tidl OFF" not in run(*FW_WRAPPER, FW_BIN, "--list-exports").stdout.splitlines()[0]:
        pytest.skip("this c7x_fw is built with TIDL")
    x = np.random.default_rng(4).standard_normal((1, 3, 10, 10)).astype(np.float32)
    np.save(work / "xmp.npy", x)
    x.tofile(work / "xmp.bin")
    for tidl in (1, 0):
        out = work / f"maxpool_tidl{tidl}"
        run(CSTATIC, "compile", work / "small.onnx", "-o", out, "-t",
            f"c_static_lib -mcpu=c7x -mmalib=1 -tidl-kernels={tidl}", "--emit=module", "-q")
        src = "".join(f.read_text() for f in sorted(out.glob("lib*.c")))
        assert ("c7x_int8_max_pool_tidl(" in src) == bool(tidl)
        assert "c7x_int8_max_pool(" in src or tidl
        if tidl:
            p = compute(firmware, "load", out / "lib0.out", ok=False)
            assert p.returncode == 1 and "does not export: c7x_int8_max_pool_tidl" in p.stderr, p.stderr
            continue
        run(CSTATIC, "run", out, "--input", work / "xmp.npy", "--output", work / "mp_ref.npy")
        handle = load(firmware, out / "lib0.out")
        compute(firmware, "infer", handle, 0, "-i", work / "xmp.bin", "-o", work / "mp.bin",
                "--dtype", "float32")
        assert (work / "mp.bin").read_bytes() == np.load(work / "mp_ref.npy").tobytes()
        compute(firmware, "unload", handle)


def test_tidl_builds_run_on_the_tidl_firmware(compiled, work):
    """-tidl-runtime=1: cg_main_dsp first calls tidl_bridge_init_all(),
    which only the TIDL firmware (c7x_fw_tidl, the board's --tidl ON)
    exports: a TIDL-off firmware refuses the module naming it, the TIDL one
    runs it with the bytes of `cstatic run`, as it runs the TIDL-backed max
    pool of -mmalib=1 -tidl-kernels=1."""
    from deploy_util import Firmware
    x = np.random.default_rng(6).standard_normal((1, 3, 10, 10)).astype(np.float32)
    np.save(work / "xt.npy", x)
    x.tofile(work / "xt.bin")
    plain = Firmware(work, name="fw_plain")
    tidl = Firmware(work, name="fw_tidl", binary=os.path.join(FW_DIR, "c7x_fw_tidl"))
    try:
        assert "--tidl ON --mmalib ON" in run(*FW_WRAPPER, os.path.join(FW_DIR, "c7x_fw_tidl"),
                                              "--list-exports").stdout
        for target, needs in (("-tidl-runtime=1", "tidl_bridge_init_all"), ("-mmalib=1", "c7x_int8_max_pool_tidl")):
            out = work / f"tidl_{needs}"
            run(CSTATIC, "compile", work / "small.onnx", "-o", out, "-t", f"c_static_lib -mcpu=c7x {target}",
                "--emit=module", "-q")
            src = (out / "lib0.c").read_text()
            assert ("st = tidl_bridge_init_all();" in src) == (target == "-tidl-runtime=1")
            if target == "-tidl-runtime=1":
                assert "-tidl-runtime=1" in (out / "lib0.h").read_text()  # MODEL_TARGET
            p = plain.compute("load", out / "lib0.out", ok=False)
            assert p.returncode == 1 and f"does not export: {needs}" in p.stderr, p.stderr
            run(CSTATIC, "run", out, "--input", work / "xt.npy", "--output", out / "ref.npy")
            h = tidl.load(out / "lib0.out")
            tidl.compute("infer", h, 0, "-i", work / "xt.bin", "-o", out / "y.bin")
            assert (out / "y.bin").read_bytes() == np.load(out / "ref.npy").tobytes()
            tidl.compute("unload", h)
    finally:
        plain.stop()
        tidl.stop()


def test_tidl_runtime_and_use_cpp_api_refusals(work):
    p = run(CSTATIC, "compile", work / "small.onnx", "-o", work / "no", "-t", "c_static_lib -tidl-runtime=1",
            ok=False)
    assert p.returncode == 1 and "-tidl-runtime=1 changes cg_main_dsp" in p.stderr and "-mcpu=c7x" in p.stderr
    p = run(CSTATIC, "compile", work / "small.onnx", "-o", work / "no", "-t", "c_static_lib -mcpu=c7x -use-cpp-api=0",
            ok=False)
    assert p.returncode == 1 and "no FFI dispatch to fall back to" in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and not (work / "no").exists()


def test_malformed_packets_get_error_responses(firmware):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    s.connect(firmware["C7X_FW_SOCKET"])
    try:
        def ask(packet):
            s.send(packet)
            r = s.recv(1024)
            t, seq, ln, status = struct.unpack_from("<IIIi", r)
            assert ln == len(r) <= 512
            text = r[16:].rstrip(b"\0").decode() if status else ""
            return t, seq, status, text

        # header length disagrees with the packet
        t, seq, status, msg = ask(struct.pack("<IIIi", 1, 5, 99, 0))
        assert (t, seq, status) == (0x1001, 5, C7X_ERR_SIZE) and "header says 99" in msg
        # longer than 512 bytes
        t, seq, status, msg = ask(struct.pack("<IIIi", 1, 6, 600, 0) + bytes(584))
        assert status == C7X_ERR_SIZE and "512" in msg
        # unknown type
        t, seq, status, msg = ask(struct.pack("<IIIi", 0x77, 7, 16, 0))
        assert (t, status) == (0x1077, C7X_ERR_OP)
        # truncated header
        t, seq, status, msg = ask(b"\x01\x00")
        assert status == C7X_ERR_SIZE
        # The transport is message-based, as RPMsg is: a message is never
        # reassembled from pieces. Delivered byte by byte, or split in two,
        # every piece is a malformed message of its own and gets its own
        # error reply; nothing is buffered across packets.
        ping = struct.pack("<IIIi", 1, 9, 16, 0)
        for b in range(len(ping)):
            t, seq, status, msg = ask(ping[b:b + 1])
            assert status == C7X_ERR_SIZE and "shorter than" in msg
        for cut in (3, 8, 15):
            for piece in (ping[:cut], ping[cut:]):
                t, seq, status, msg = ask(piece)
                assert status == C7X_ERR_SIZE
        # an INFER split after its header: the header's length names the rest
        infer_hdr = struct.pack("<IIIi", 0x21, 10, 16 + 16 + 80, 0)
        t, seq, status, msg = ask(infer_hdr)
        assert (t, seq, status) == (0x1021, 10, C7X_ERR_SIZE) and "header says 112" in msg
        # and a good PING still works on the same connection
        t, seq, status, _ = ask(struct.pack("<IIIi", 1, 8, 16, 0))
        assert (t, seq, status) == (0x1001, 8, 0)
    finally:
        s.close()


def test_many_tensors_through_the_firmware(tmp_path):
    """A module with 8 inputs and 9 outputs (as a decode step with the KV
    caches of several layers has): the client pages DYN_INFO (17 tensors,
    six per message), sends the input descriptors through the staging
    buffer (INFER_LARGE: more than five do not fit a message) and reads the
    output descriptors from the result buffer; every output equals
    `cstatic run`'s."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper

    import deploy_util
    from cstatic_cli import cstatic
    n = 8
    nodes, outs = [], []
    acc = "a0"
    for i in range(1, n):
        nodes.append(helper.make_node("Add", [acc, f"a{i}"], [f"s{i}"]))
        acc = f"s{i}"
    nodes.append(helper.make_node("Identity", [acc], ["sum"]))
    outs.append(helper.make_tensor_value_info("sum", TensorProto.FLOAT, [4]))
    for i in range(n):
        nodes.append(helper.make_node("Mul", [f"a{i}", "two"], [f"d{i}"]))
        outs.append(helper.make_tensor_value_info(f"d{i}", TensorProto.FLOAT, [4]))
    g = helper.make_graph(nodes, "many", [helper.make_tensor_value_info(f"a{i}", TensorProto.FLOAT, [4])
                                          for i in range(n)], outs,
                          [helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, tmp_path / "many.onnx")
    target = "c_static_lib -mcpu=c7x"
    cstatic("compile", tmp_path / "many.onnx", "-o", tmp_path / "mod", "-t", target, "--emit=module", "-q")
    cstatic("compile", tmp_path / "many.onnx", "-o", tmp_path / "host", "-t", target, "-q")
    rng = np.random.default_rng(0)
    run_args, fw_args = [], []
    for i in range(n):
        a = rng.standard_normal(4).astype(np.float32)
        np.save(tmp_path / f"a{i}.npy", a)
        a.tofile(tmp_path / f"a{i}.bin")
        run_args += ["--input", tmp_path / f"a{i}.npy"]
        fw_args += ["-i", tmp_path / f"a{i}.bin"]
    names = ["sum"] + [f"d{i}" for i in range(n)]
    cstatic("run", tmp_path / "host", *run_args, *[a for o in names for a in ("--output", tmp_path / f"{o}.npy")])
    (tmp_path / "fw").mkdir()
    fw = deploy_util.Firmware(tmp_path / "fw")
    try:
        h = fw.load(tmp_path / "mod" / "lib0.out")
        info = fw.compute("info", h).stdout
        assert info.count("input") >= n and info.count("output") >= n + 1, info
        fw.compute("infer", h, 0, *fw_args, *[a for o in names for a in ("-o", tmp_path / f"{o}.bin")])
        for o in names:
            want = np.load(tmp_path / f"{o}.npy").astype(np.float32)
            assert (tmp_path / f"{o}.bin").read_bytes() == want.tobytes(), f"output {o} differs"
        fw.compute("unload", h)
        # the Python client too (C7xVirtualMachine over the same library)
        from cstatic.c7x import C7xVirtualMachine
        with C7xVirtualMachine(tmp_path / "mod" / "lib0.out", socket=fw.sock) as vm:
            assert len(vm.input_specs) == n and len(vm.output_specs) == n + 1
            ys = vm["main"](*[np.load(tmp_path / f"a{i}.npy") for i in range(n)])
            for o, y in zip(names, ys):
                assert y.tobytes() == np.load(tmp_path / f"{o}.npy").astype(np.float32).tobytes(), o
    finally:
        fw.stop()


# -l2-budget values at which the small model's conv (input 300 B, weights
# 162 B) is DMA-tiled, each needing over half of a 1 KiB L2 pool
BUDGETS = (700, 900)


def test_modules_share_the_l2_scratch(work):
    """The loaded modules share one L2 region, as large as the largest
    module's need (the firmware runs one request at a time): two -mcpu=c7x
    modules whose L2 needs sum beyond a 1 KiB pool, each fitting it, load
    side by side and each gives the bytes of `cstatic run` (the refusal of
    a module whose need alone exceeds the pool: test_fw_l2)."""
    from deploy_util import Firmware
    x = np.random.default_rng(8).standard_normal((1, 3, 10, 10)).astype(np.float32)
    np.save(work / "xl2.npy", x)
    x.tofile(work / "xl2.bin")
    need = {}
    for budget in BUDGETS:
        out = compile_small_module(work, name=f"l2_{budget}", target=f"c_static_lib -mcpu=c7x -l2-budget={budget}")
        need[budget] = int(re.search(r"#define MODEL_L2_SIZE (\d+)", (out / "lib0.h").read_text()).group(1))
        run(CSTATIC, "run", out, "--input", work / "xl2.npy", "--output", out / "ref.npy")
    assert max(need.values()) <= 1024 < sum(need.values()), need
    fw = Firmware(work, "--l2-kib", 1, "--ddr-heap-mib", 64, name="fw_l2")
    try:
        handles = {b: fw.load(work / f"l2_{b}" / "lib0.out") for b in BUDGETS}
        assert "2 modules loaded" in fw.compute("status").stdout
        for b, h in handles.items():
            fw.compute("infer", h, 0, "-i", work / "xl2.bin", "-o", work / f"yl2_{b}.bin")
            assert (work / f"yl2_{b}.bin").read_bytes() == np.load(work / f"l2_{b}" / "ref.npy").tobytes()
        free = int(re.search(r"L2 (\d+) of 1024 bytes free", fw.compute("status").stdout).group(1))
        assert free == 1024 - max(need.values())
        for h in handles.values():
            fw.compute("unload", h)
        assert "L2 1024 of 1024 bytes free" in fw.compute("status").stdout
    finally:
        fw.stop()
