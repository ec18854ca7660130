"""Deployment faults: a module that crashes or runs away kills only the
firmware (as a DSP fault does); the client reports it within a second with
a clear error, the supervisor restarts the firmware on the same socket,
and the next request (after loading again: handles die with the firmware,
as on the board) is served.

The misbehaving modules are the small test model's generated C with one
line added at the top of cg_main_dsp (a store to address 16, or a loop
that never ends), built with the recipe of compiler/codegen/module.c.
"""
import time

import numpy as np
import pytest

from deploy_util import (CSTATIC, SEGFAULT, SPIN_FOREVER, Firmware, build_module_like_cstatic,
                         inject_into_entry, run, compile_small_module)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("deploy_faults")


@pytest.fixture(scope="module")
def modules(work):
    good = compile_small_module(work)
    x = np.random.default_rng(21).standard_normal((1, 3, 10, 10)).astype(np.float32)
    np.save(work / "x.npy", x)
    run(CSTATIC, "run", good, "--input", work / "x.npy", "--output", work / "ref.npy")
    return {
        "good": good / "lib0.out",
        "segv": build_module_like_cstatic(good, work / "segv", inject_into_entry(SEGFAULT)),
        "spin": build_module_like_cstatic(good, work / "spin", inject_into_entry(SPIN_FOREVER)),
        "x": x,
        "ref": np.load(work / "ref.npy"),
    }


@pytest.fixture
def firmware(tmp_path, request):
    extra = getattr(request, "param", ())
    fw = Firmware(tmp_path, "--ddr-heap-mib", "64", "--staging-mib", "16", "--result-mib", "4", *extra)
    yield fw
    fw.stop()


def test_rebuilt_module_is_the_compilers(modules, work):
    # The recipe here is module.c's: unpatched, it rebuilds lib0.out byte for byte.
    same = build_module_like_cstatic(modules["good"].parent, work / "same")
    assert open(same, "rb").read() == modules["good"].read_bytes()


def test_segfault_is_reported_and_the_firmware_restarts(modules, firmware):
    from cstatic.c7x import C7X_ERR_FAULT, C7xFault, C7xVirtualMachine
    x, ref = modules["x"], modules["ref"]
    bystander = C7xVirtualMachine(modules["good"], socket=firmware.sock)
    assert bystander["main"](x).tobytes() == ref.tobytes()
    bad = C7xVirtualMachine(modules["segv"], socket=firmware.sock)
    handle = bad.handle
    t0 = time.monotonic()
    with pytest.raises(C7xFault) as e:
        bad["main"](x)
    took = time.monotonic() - t0
    assert took < 1.0, f"the fault took {took:.2f} s to report"
    assert e.value.status == C7X_ERR_FAULT
    assert f"firmware fault while running handle {handle} (model 'deploy_small'): killed by SIGSEGV" in str(e.value)
    assert bad.handle is None  # died with the firmware

    # The bystander's module died too: its next request says why, then it
    # loads again and is served.
    with pytest.raises(C7xFault, match="killed by SIGSEGV"):
        bystander["main"](x)
    assert bystander["main"](x).tobytes() == ref.tobytes()
    assert bystander.stats()["faults"] == 1
    # A new client is served as well; the faulty module faults again.
    with C7xVirtualMachine(modules["good"], socket=firmware.sock) as vm:
        assert vm["main"](x).tobytes() == ref.tobytes()
    with pytest.raises(C7xFault, match="SIGSEGV"):
        bad["main"](x)
    bad.close()
    bystander.close()

    # The CLI: the same error, exit status 1; the firmware serves on.
    h = firmware.load(modules["segv"])
    x.tofile(firmware.log_path.parent / "x.bin")
    p = firmware.compute("infer", h, 0, "-i", firmware.log_path.parent / "x.bin", "-o",
                         firmware.log_path.parent / "y.bin", ok=False)
    assert p.returncode == 1 and f"running handle {h}" in p.stderr and "SIGSEGV" in p.stderr
    assert "status -16" in p.stderr
    firmware.compute("ping")
    p = firmware.compute("fault")
    assert p.stdout.startswith("restarts 3: firmware fault while running handle") and "SIGSEGV" in p.stdout
    log = firmware.log_text()
    assert log.count("killed by SIGSEGV") == 3 and "(restart 3)" in log


@pytest.mark.parametrize("firmware", [("--timeout-ms", "300")], indirect=True)
def test_runaway_module_times_out_in_the_firmware(modules, firmware):
    from cstatic.c7x import C7X_ERR_TIMEOUT, C7xFault, C7xVirtualMachine
    x, ref = modules["x"], modules["ref"]
    spin = C7xVirtualMachine(modules["spin"], socket=firmware.sock)
    t0 = time.monotonic()
    with pytest.raises(C7xFault) as e:
        spin["main"](x)
    took = time.monotonic() - t0
    assert 0.29 < took < 1.3, took
    assert e.value.status == C7X_ERR_TIMEOUT
    assert "request timed out after 0.300 s (c7x_fw --timeout-ms 300) while running handle" in str(e.value)
    spin.close()
    with C7xVirtualMachine(modules["good"], socket=firmware.sock) as vm:
        assert vm["main"](x).tobytes() == ref.tobytes()
        # A normal request well inside the limit is not affected.
        assert vm.run(x, repeat=5).tobytes() == ref.tobytes()


def test_runaway_module_times_out_in_the_client(modules, firmware):
    """No firmware limit: the client's own timeout resets the firmware."""
    from cstatic.c7x import C7X_ERR_TIMEOUT, C7xFault, C7xVirtualMachine
    x, ref = modules["x"], modules["ref"]
    spin = C7xVirtualMachine(modules["spin"], socket=firmware.sock, timeout_s=0.3)
    t0 = time.monotonic()
    with pytest.raises(C7xFault) as e:
        spin["main"](x)
    took = time.monotonic() - t0
    assert 0.29 < took < 1.3, took
    assert e.value.status == C7X_ERR_TIMEOUT
    assert "request timed out after 0.300 s (client timeout)" in str(e.value)
    assert "firmware reset by a client while running handle" in str(e.value)
    spin.close()
    with C7xVirtualMachine(modules["good"], socket=firmware.sock, timeout_s=5) as vm:
        assert vm["main"](x).tobytes() == ref.tobytes()
    assert "firmware reset by a client" in firmware.log_text()
    assert "restarts 1: firmware reset by a client" in firmware.compute("fault").stdout


def test_fresh_firmware_has_no_fault(firmware):
    assert firmware.compute("fault").stdout == "restarts 0\n"


def test_malformed_reset_is_an_error_not_a_reset(firmware):
    import socket
    import struct
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(5)
    s.connect(firmware.sock)
    try:
        s.send(struct.pack("<IIIi", 0x9, 1, 20, 0) + bytes(4))  # RESET with a body
        t, seq, ln, status = struct.unpack_from("<IIIi", s.recv(1024))
        assert (t, seq, status) == (0x1009, 1, -8)
        s.send(struct.pack("<IIIi", 0x9, 2, 99, 0))  # length field disagrees
        t, seq, ln, status = struct.unpack_from("<IIIi", s.recv(1024))
        assert (t, seq, status) == (0x1009, 2, -7)
    finally:
        s.close()
    assert firmware.compute("fault").stdout == "restarts 0\n"


def test_each_loaded_module_runs_its_own_code(modules, firmware):
    """Every cstatic module has the soname lib0.out: a second module must
    not be taken for the first one still loaded (the crashing one must
    crash), as a loader that matches loaded objects by name would."""
    x, ref = modules["x"], modules["ref"]
    d = firmware.log_path.parent
    x.tofile(d / "x.bin")
    for _ in range(2):
        h_good = firmware.load(modules["good"])
        h_bad = firmware.load(modules["segv"])
        p = firmware.compute("infer", h_bad, 0, "-i", d / "x.bin", "-o", d / "y.bin", ok=False)
        assert p.returncode == 1 and f"running handle {h_bad}" in p.stderr and "SIGSEGV" in p.stderr, p.stdout
    h_good = firmware.load(modules["good"])
    h_spin = firmware.load(modules["spin"])
    h_good2 = firmware.load(modules["good"])
    for h in (h_good, h_good2):
        firmware.compute("infer", h, 0, "-i", d / "x.bin", "-o", d / "y.bin")
        assert (d / "y.bin").read_bytes() == ref.tobytes()
    firmware.compute("unload", h_spin)


def test_supervisor_stops_its_firmware(modules, tmp_path):
    import os
    import signal
    fw = Firmware(tmp_path)
    # The supervisor's child is the firmware; SIGTERM to the supervisor ends both.
    fw.compute("ping")  # the firmware child is up
    children = open(f"/proc/{fw.proc.pid}/task/{fw.proc.pid}/children").read().split()
    assert len(children) == 1
    fw.stop()
    child = int(children[0])
    for _ in range(100):
        if not os.path.exists(f"/proc/{child}") or open(f"/proc/{child}/stat").read().split()[2] == "Z":
            break
        time.sleep(0.02)
    else:
        os.kill(child, signal.SIGKILL)
        pytest.fail("the firmware outlived its supervisor")
    assert not os.path.exists(fw.sock)
