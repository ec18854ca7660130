"""Hostile modules and hostile clients against the firmware emulator.

- A module whose ELF constructor writes a file (raw system calls, no
  imports: the host's dlopen would run it) is refused at DYN_LOAD, naming
  the initializers, and the file never appears; so is one with a
  destructor. The firmware serves on.
- Handles are 64-bit capabilities: a second process trying the handles
  next to a live one can neither run, query nor unload it; given the
  handle itself, it can (the CLI's load-here, infer-there flow).
- RESET kills every module, so the firmware grants it only to a sender
  presenting every loaded module's handle; a client's timeout recovery
  that is refused says so and loses nothing.
- One-byte mutations of a real module never kill the firmware's loader:
  the unit test test_fw_loader runs 10 000 in the fast suite; 100 000
  here, in the slow set.
"""
import os
import socket
import struct
import subprocess
import sys
import time

import numpy as np
import pytest

from deploy_util import BIN_DIR, CSTATIC, MODULE_CC, Firmware, compile_small_module, run

C7X_MSG_RESET = 0x9

CONSTRUCTOR_SRC = r"""
/* No imports: the constructor makes its system calls itself. */
#if defined(__x86_64__)
static long sys3(long n, long a, long b, long c) {
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return r;
}
enum { SYS_OPEN_AT = 257, SYS_WRITE = 1, SYS_CLOSE = 3 };
#elif defined(__aarch64__)
static long sys3(long n, long a, long b, long c) {
  register long x8 __asm__("x8") = n, x0 __asm__("x0") = a, x1 __asm__("x1") = b, x2 __asm__("x2") = c;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
  return x0;
}
enum { SYS_OPEN_AT = 56, SYS_WRITE = 64, SYS_CLOSE = 57 };
#endif
static long openat4(const char *p) {
#if defined(__x86_64__)
  long r;
  register long r10 __asm__("r10") = 0644;
  __asm__ volatile("syscall" : "=a"(r) : "a"((long)SYS_OPEN_AT), "D"(-100L), "S"(p), "d"(0101L), "r"(r10)
                   : "rcx", "r11", "memory");
  return r;
#else
  register long x8 __asm__("x8") = SYS_OPEN_AT, x0 __asm__("x0") = -100, x1 __asm__("x1") = (long)p,
      x2 __asm__("x2") = 0101, x3 __asm__("x3") = 0644;
  __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2), "r"(x3) : "memory");
  return x0;
#endif
}
__attribute__((KIND)) static void hostile(void) {
  long fd = openat4(PATH);
  if (fd >= 0) {
    sys3(SYS_WRITE, fd, (long)"pwned\n", 6);
    sys3(SYS_CLOSE, fd, 0, 0);
  }
}
__attribute__((visibility("default"))) int cg_main_dsp(void) { return 0; }
__attribute__((visibility("default"))) const int model_desc = 3;
"""


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("deploy_hostile")


@pytest.fixture(scope="module")
def module(work):
    out = compile_small_module(work)
    x = np.random.default_rng(31).standard_normal((1, 3, 10, 10)).astype(np.float32)
    np.save(work / "x.npy", x)
    x.tofile(work / "x.bin")
    run(CSTATIC, "run", out, "--input", work / "x.npy", "--output", work / "ref.npy")
    return {"path": out / "lib0.out", "x": x, "ref": np.load(work / "ref.npy")}


@pytest.fixture
def firmware(tmp_path, request):
    extra = getattr(request, "param", ())
    fw = Firmware(tmp_path, "--ddr-heap-mib", "64", "--staging-mib", "16", "--result-mib", "4", *extra)
    yield fw
    fw.stop()


def build_hostile(work, kind):
    """A module whose constructor (kind "constructor") or destructor
    writes work/pwned_<kind>."""
    target = work / f"pwned_{kind}"
    src = work / f"{kind}.c"
    src.write_text(CONSTRUCTOR_SRC.replace("KIND", kind).replace("PATH", f'"{target}"'))
    mod = work / f"{kind}.out"
    run(MODULE_CC, "-O1", "-fPIC", "-shared", "-nostdlib", "-fno-stack-protector", "-o", mod, src)
    return mod, target


@pytest.mark.parametrize("kind,dt", [("constructor", "DT_INIT_ARRAY"), ("destructor", "DT_FINI_ARRAY")])
def test_module_with_initializers_is_refused_and_never_runs(kind, dt, module, firmware, work):
    mod, target = build_hostile(work, kind)
    # The control: the host's dynamic loader does run it.
    subprocess.run([sys.executable, "-c", f"import ctypes; h = ctypes.CDLL({str(mod)!r})"], check=True)
    assert target.read_text() == "pwned\n", "the test module's code did not run under dlopen"
    target.unlink()

    p = firmware.compute("load", mod, ok=False)
    assert p.returncode == 1 and dt in p.stderr and "status -9" in p.stderr, p.stderr
    assert "runs no module code" in p.stderr
    time.sleep(0.1)
    assert not target.exists(), "the module's code ran inside the firmware"
    # Served on, never restarted; the real module loads and runs.
    assert firmware.compute("fault").stdout == "restarts 0\n"
    h = firmware.load(module["path"])
    firmware.compute("infer", h, 0, "-i", work / "x.bin", "-o", work / "y.bin")
    assert (work / "y.bin").read_bytes() == module["ref"].tobytes()
    firmware.compute("unload", h)
    assert "0 modules loaded" in firmware.compute("status").stdout
    assert not target.exists()


def test_neighbouring_handles_reach_nothing(module, firmware, work):
    from cstatic.c7x import C7X_ERR_HANDLE, C7xError, C7xVirtualMachine
    x, ref = module["x"], module["ref"]
    vm = C7xVirtualMachine(module["path"], socket=firmware.sock)
    h = vm.handle
    assert 0 < h < 1 << 64
    assert vm["main"](x).tobytes() == ref.tobytes()
    m = (1 << 64) - 1
    tries = sorted({(h + 1) & m, (h - 1) & m, (h + 2) & m, (h - 2) & m, h ^ 1, h ^ (1 << 63), h >> 32,
                    h & 0xffffffff, 1, 2} - {h})
    d = firmware.log_path.parent
    for t in tries:  # another process, trying its luck
        for cmd in (("info", t), ("infer", t, 0, "-i", work / "x.bin", "-o", d / "stolen.bin"), ("unload", t)):
            p = firmware.compute(*cmd, ok=False)
            assert p.returncode == 1 and "status -12" in p.stderr and f"handle {t} " in p.stderr, (cmd, p.stderr)
    assert not (d / "stolen.bin").exists()
    assert "1 modules loaded" in firmware.compute("status").stdout
    assert vm["main"](x).tobytes() == ref.tobytes()

    # The handle itself, passed on, works in the other process ...
    firmware.compute("infer", h, 0, "-i", work / "x.bin", "-o", d / "passed.bin")
    assert (d / "passed.bin").read_bytes() == ref.tobytes()
    assert firmware.compute("info", hex(h)).stdout.startswith("input 0: float32[1,3,10,10]")
    # ... including unloading it: the owner hears "bad handle".
    firmware.compute("unload", h)
    with pytest.raises(C7xError) as e:
        vm["main"](x)
    assert e.value.status == C7X_ERR_HANDLE and f"no module with handle {h} is loaded" in str(e.value)
    vm.close()


def reset_packet(seq, handles):
    body = struct.pack("<II", len(handles), 0) + b"".join(struct.pack("<Q", h) for h in handles)
    return struct.pack("<IIIi", C7X_MSG_RESET, seq, 16 + len(body), 0) + body


def test_reset_needs_every_loaded_module(module, firmware):
    from cstatic.c7x import C7X_ERR_DENIED, C7X_ERR_FAULT, C7xFault, C7xVirtualMachine
    x, ref = module["x"], module["ref"]
    a = C7xVirtualMachine(module["path"], socket=firmware.sock)
    b = C7xVirtualMachine(module["path"], socket=firmware.sock)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    s.connect(firmware.sock)
    try:
        for seq, handles, missing in ((1, [], 2), (2, [a.handle], 1), (3, [a.handle, a.handle ^ 1], 1),
                                      (4, [b.handle ^ 1, a.handle], 1)):
            s.send(reset_packet(seq, handles))
            t, rseq, ln, status = struct.unpack_from("<IIIi", r := s.recv(1024))
            text = r[16:].rstrip(b"\0").decode()
            assert (t, rseq, status) == (0x1009, seq, C7X_ERR_DENIED), text
            assert f"RESET refused: {missing} of the 2 loaded modules are not among the {len(handles)} handle" in text
        assert firmware.compute("fault").stdout == "restarts 0\n"
        assert a["main"](x).tobytes() == ref.tobytes() and b["main"](x).tobytes() == ref.tobytes()
        # Every handle: granted, the firmware goes (the connection closes).
        s.send(reset_packet(5, [b.handle, a.handle]))
        try:
            assert s.recv(1024) == b""
        except ConnectionResetError:
            pass
    finally:
        s.close()
    assert "restarts 1: firmware reset by a client" in firmware.compute("fault").stdout
    with pytest.raises(C7xFault) as e:
        a["main"](x)
    assert e.value.status == C7X_ERR_FAULT
    assert a["main"](x).tobytes() == ref.tobytes()  # loaded again
    a.close()
    b.close()


@pytest.mark.parametrize("firmware", [("--timeout-ms", "1500")], indirect=True)
def test_client_timeout_cannot_reset_other_clients_modules(module, firmware, work):
    """A runaway module's client times out; its RESET is refused (another
    client's module is loaded), so it says so and keeps its handle; the
    firmware's own watchdog ends the runaway."""
    from cstatic.c7x import C7X_ERR_TIMEOUT, C7xError, C7xFault, C7xVirtualMachine
    from deploy_util import SPIN_FOREVER, build_module_like_cstatic, inject_into_entry
    x, ref = module["x"], module["ref"]
    spin_path = build_module_like_cstatic(module["path"].parent, work / "spin", inject_into_entry(SPIN_FOREVER))
    bystander = C7xVirtualMachine(module["path"], socket=firmware.sock)
    spin = C7xVirtualMachine(spin_path, socket=firmware.sock, timeout_s=0.3)
    handle = spin.handle
    with pytest.raises(C7xError) as e:
        spin["main"](x)
    # the client's 0.3 s timeout, not the firmware's 1.5 s watchdog, ended the call: a timeout, not a fault
    assert not isinstance(e.value, C7xFault) and e.value.status == C7X_ERR_TIMEOUT
    assert "request timed out after 0.300 s (client timeout); the firmware was not reset: RESET refused: 1 of " \
           "the 2 loaded modules" in str(e.value)
    assert spin.handle == handle
    # The watchdog (1.5 s) ends the runaway: every module dies with it.
    with pytest.raises(C7xFault, match=r"timed out after 1\.500 s \(c7x_fw --timeout-ms 1500\)"):
        bystander["main"](x)
    assert bystander["main"](x).tobytes() == ref.tobytes()
    spin.close()
    bystander.close()


@pytest.mark.slow
def test_100k_mutations_of_a_real_module():
    exe = os.path.join(BIN_DIR, "test_fw_loader")
    p = subprocess.run([exe], capture_output=True, text=True, timeout=1200,
                       env=dict(os.environ, CS_FW_MUTATIONS="100000"),
                       cwd=os.path.dirname(os.path.dirname(BIN_DIR)))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "mutations: 100000 in" in p.stdout and "0 failed" in p.stdout, p.stdout
