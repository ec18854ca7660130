"""Deployment, second slice: the host client's C API and the Python
C7xVirtualMachine against the firmware emulator.

- C API (a small C program linked with libc7x_arm_runtime.so) and Python
  give the bytes of `cstatic run`;
- zero copy: a create_input() tensor is passed in place (the client's
  counters: inputs_zero_copy, not bytes_copied), run_nocopy() outputs are
  views of the result buffer that the next run overwrites, vm["main"]
  outputs are copies that it does not;
- wrong input count, dtype or size is refused before anything is written
  to the staging buffer;
- two clients in two threads, and two processes, infer at the same time
  and each gets its own results.
"""
import ctypes
import os
import subprocess
import threading

import numpy as np
import pytest

from deploy_util import CSTATIC, Firmware, build_capi, build_cpp_api_test, compile_small_module, run

CAPI_SRC = r"""
/* The C API end to end: argv: MODULE INPUT.bin REF.bin (REF: every output,
 * concatenated). Prints "ok" or exits 1 naming what differed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "c7x_client.h"

#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, "FAIL line %d: ", __LINE__); \
  fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); exit(1); } } while (0)

static void *slurp(const char *p, size_t *n) {
  FILE *f = fopen(p, "rb");
  CHECK(f, "cannot read %s", p);
  fseek(f, 0, SEEK_END); *n = (size_t)ftell(f); fseek(f, 0, SEEK_SET);
  void *b = malloc(*n ? *n : 1);
  CHECK(fread(b, 1, *n, f) == *n, "short read %s", p);
  fclose(f);
  return b;
}

static int same_as_ref(const c7x_tensor_desc *out, int n, const unsigned char *ref, size_t ref_n) {
  size_t off = 0;
  for (int j = 0; j < n; j++) {
    if (off + out[j].data_size > ref_n || memcmp(out[j].data, ref + off, out[j].data_size)) return 0;
    off += out[j].data_size;
  }
  return off == ref_n;
}

int main(int argc, char **argv) {
  CHECK(argc == 4, "usage");
  size_t in_n, ref_n;
  unsigned char *x = slurp(argv[2], &in_n), *ref = slurp(argv[3], &ref_n);
  c7x_client *c = c7x_client_open();
  CHECK(c, "open: %s", c7x_client_open_error());
  uint64_t h;
  int s = c7x_client_dyn_load(c, argv[1], &h);
  CHECK(s == C7X_OK, "load: %s", c7x_client_last_error(c));
  c7x_tensor_desc want[6], outs[64];
  int n_in = 6, n_out = 64;
  s = c7x_client_dyn_info(c, h, want, &n_in, outs, &n_out);
  CHECK(s == C7X_OK && n_in == 1 && want[0].data_size == in_n, "info: %s", c7x_client_last_error(c));

  /* 1. an input in our own memory: copied once into the staging buffer. */
  c7x_tensor_desc in = want[0];
  in.data = x;
  n_out = 64;
  s = c7x_client_infer(c, h, 0, &in, 1, outs, &n_out, NULL);
  CHECK(s == C7X_OK, "infer: %s", c7x_client_last_error(c));
  CHECK(same_as_ref(outs, n_out, ref, ref_n), "copied input: outputs differ from cstatic run");
  c7x_client_stats st;
  c7x_client_get_stats(c, &st);
  CHECK(st.inputs_copied == 1 && st.bytes_copied == in_n && st.inputs_zero_copy == 0, "stats after copy");

  /* 2. create_input: passed in place, nothing copied. */
  size_t staging_size;
  unsigned char *staging = c7x_client_get_input_buffer(c, &staging_size);
  in.data = c7x_client_create_input(c, in_n);
  CHECK(in.data && (unsigned char *)in.data >= staging + c7x_client_get_input_data_offset(c),
        "create_input must not overlap the module image");
  memcpy(in.data, x, in_n);
  n_out = 64;
  s = c7x_client_infer(c, h, 0, &in, 1, outs, &n_out, NULL);
  CHECK(s == C7X_OK, "infer zero-copy: %s", c7x_client_last_error(c));
  CHECK(same_as_ref(outs, n_out, ref, ref_n), "zero-copy input: outputs differ from cstatic run");
  c7x_client_get_stats(c, &st);
  CHECK(st.inputs_zero_copy == 1 && st.inputs_copied == 1 && st.bytes_copied == in_n, "stats after zero copy");
  size_t result_size;
  unsigned char *result = c7x_client_get_output_buffer(c, &result_size);
  CHECK((unsigned char *)outs[0].data >= result && (unsigned char *)outs[0].data < result + result_size,
        "outputs are views of the result buffer");

  /* 3. refused before anything is written: the staging bytes after the
   * create_input tensor (where a copy would go) stay as they are. */
  unsigned char *after = (unsigned char *)in.data + ((in_n + 63) & ~(size_t)63);
  memset(after, 0xA5, in_n);
  c7x_tensor_desc bad = want[0];
  bad.data = x;
  n_out = 64;
  s = c7x_client_infer(c, h, 0, &bad, 0, outs, &n_out, NULL);
  CHECK(s == C7X_ERR_TENSOR && strstr(c7x_client_last_error(c), "takes 1 input"), "count: %d %s", s, c7x_client_last_error(c));
  bad.dtype_code = 0; bad.dtype_bits = 8; /* int8 */
  s = c7x_client_infer(c, h, 0, &bad, 1, outs, &n_out, NULL);
  CHECK(s == C7X_ERR_TENSOR && strstr(c7x_client_last_error(c), "dtype int8"), "dtype: %d %s", s, c7x_client_last_error(c));
  bad = want[0];
  bad.data = x;
  bad.data_size = in_n - 4;
  s = c7x_client_infer(c, h, 0, &bad, 1, outs, &n_out, NULL);
  CHECK(s == C7X_ERR_TENSOR && strstr(c7x_client_last_error(c), "bytes"), "size: %d %s", s, c7x_client_last_error(c));
  for (size_t k = 0; k < in_n; k++) CHECK(after[k] == 0xA5, "a refused request wrote the staging buffer at %zu", k);
  c7x_client_get_stats(c, &st);
  CHECK(st.bytes_copied == in_n && st.infers == 2, "refused requests copied or ran");

  CHECK(c7x_client_dyn_unload(c, h) == C7X_OK, "unload: %s", c7x_client_last_error(c));
  c7x_client_close(c);
  puts("ok");
  return 0;
}
"""


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return tmp_path_factory.mktemp("deploy_client")


@pytest.fixture(scope="module")
def compiled(work):
    return compile_small_module(work)


@pytest.fixture(scope="module")
def firmware(work):
    fw = Firmware(work, "--ddr-heap-mib", "64", "--staging-mib", "16", "--result-mib", "4")
    os.environ["C7X_FW_SOCKET"] = fw.sock  # for the Python client in this process
    yield fw
    os.environ.pop("C7X_FW_SOCKET", None)
    fw.stop()


@pytest.fixture(scope="module")
def capi(work):
    return build_capi(work, CAPI_SRC)


@pytest.fixture(scope="module")
def cppapi(work):
    return build_cpp_api_test(work)


def reference(compiled, work, x, name):
    np.save(work / f"{name}.npy", x)
    run(CSTATIC, "run", compiled, "--input", work / f"{name}.npy", "--output", work / f"{name}_ref.npy")
    return np.load(work / f"{name}_ref.npy")


def test_c7x_py_checks_the_descriptor_layout():
    from cstatic import c7x
    assert ctypes.sizeof(c7x._C7xTensorDesc) == 80
    offsets = {n: getattr(c7x._C7xTensorDesc, n).offset for n, _ in c7x._C7xTensorDesc._fields_}
    assert offsets == {"data": 0, "data_size": 8, "ndim": 16, "dtype_code": 20, "dtype_bits": 24,
                       "_pad": 28, "shape": 32}
    src = open(c7x.__file__).read()
    assert "assert ctypes.sizeof(_C7xTensorDesc) == 80" in src  # at import, as the spec says


def test_c_api_matches_cstatic_run(compiled, firmware, capi, work):
    x = np.random.default_rng(11).standard_normal((1, 3, 10, 10)).astype(np.float32)
    ref = reference(compiled, work, x, "capi_x")
    x.tofile(work / "capi_x.bin")
    ref.tofile(work / "capi_ref.bin")
    p = run(capi, compiled / "lib0.out", work / "capi_x.bin", work / "capi_ref.bin", env=firmware.env, ok=False)
    assert p.returncode == 0 and p.stdout == "ok\n", p.stderr


def test_cpp_api_matches_cstatic_run(compiled, firmware, cppapi, work):
    """c7x::Module (client/include/c7x_runtime.h, built with g++ -std=c++14
    -fno-exceptions -fno-rtti): copied and CreateInput inputs give the bytes
    of `cstatic run`, outputs are result-buffer views, bad inputs are
    refused naming the fault, a moved Module runs and a closed one not."""
    x = np.random.default_rng(13).standard_normal((1, 3, 10, 10)).astype(np.float32)
    ref = reference(compiled, work, x, "cpp_x")
    x.tofile(work / "cpp_x.bin")
    ref.tofile(work / "cpp_ref.bin")
    p = run(cppapi, compiled / "lib0.out", work / "cpp_x.bin", work / "cpp_ref.bin", env=firmware.env, ok=False)
    assert p.returncode == 0 and p.stdout == "ok\n", p.stderr


def test_python_vm_matches_cstatic_run_and_copies(compiled, firmware, work):
    from cstatic.c7x import C7xVirtualMachine
    rng = np.random.default_rng(12)
    x1 = rng.standard_normal((1, 3, 10, 10)).astype(np.float32)
    x2 = rng.standard_normal((1, 3, 10, 10)).astype(np.float32)
    r1, r2 = reference(compiled, work, x1, "py1"), reference(compiled, work, x2, "py2")
    with C7xVirtualMachine(compiled / "lib0.out") as vm:
        assert vm.input_specs == [((1, 3, 10, 10), np.dtype(np.float32))]
        assert vm.output_specs == [((1, 4), np.dtype(np.float32))]
        y1 = vm["main"](x1)
        assert y1.tobytes() == r1.tobytes()
        y2 = vm["main"](x2)
        assert y2.tobytes() == r2.tobytes()
        assert y1.tobytes() == r1.tobytes(), "vm['main'] outputs are copies: the next run leaves them"
        assert y1.flags.owndata or y1.base is not None and not isinstance(y1.base, ctypes.Array)
        s = vm.stats()
        assert s["inputs_copied"] == 2 and s["bytes_copied"] == 2 * x1.nbytes and s["inputs_zero_copy"] == 0
        # Refused in Python, before the library is called.
        with pytest.raises(TypeError, match="dtype int8"):
            vm["main"](x1.astype(np.int8))
        with pytest.raises(ValueError, match="shape"):
            vm["main"](x1[:, :2])
        with pytest.raises(ValueError, match="takes 1 input"):
            vm["main"](x1, x2)
        with pytest.raises(KeyError):
            vm["other"]
        assert vm.stats()["infers"] == 2


def test_zero_copy_input_and_nocopy_views(compiled, firmware, work):
    from cstatic.c7x import C7xVirtualMachine
    rng = np.random.default_rng(13)
    x1 = rng.standard_normal((1, 3, 10, 10)).astype(np.float32)
    x2 = rng.standard_normal((1, 3, 10, 10)).astype(np.float32)
    r1, r2 = reference(compiled, work, x1, "zc1"), reference(compiled, work, x2, "zc2")
    with C7xVirtualMachine(compiled / "lib0.out") as vm:
        xi = vm.create_input()
        assert xi.shape == (1, 3, 10, 10) and xi.dtype == np.float32
        xi[...] = x1
        before = vm.stats()
        v1 = vm.run_nocopy(xi)
        after = vm.stats()
        assert v1.tobytes() == r1.tobytes()
        # Not copied: the client passed the staging tensor in place.
        assert after["inputs_zero_copy"] == before["inputs_zero_copy"] + 1
        assert after["bytes_copied"] == before["bytes_copied"]
        assert after["inputs_copied"] == before["inputs_copied"]
        # A view of the result buffer, not memory of its own ...
        assert not v1.flags.owndata
        keep = v1.copy()
        xi[...] = x2  # written in place, again no copy
        v2 = vm.run_nocopy(xi)
        assert v2.tobytes() == r2.tobytes()
        # ... which the next run overwrote, as the spec says.
        assert v1.tobytes() == r2.tobytes() and keep.tobytes() == r1.tobytes()
        assert v1.__array_interface__["data"][0] == v2.__array_interface__["data"][0]
        assert vm.stats()["bytes_copied"] == before["bytes_copied"]
        # vm["main"] on a staging tensor: no input copy, and a copied output.
        y = vm["main"](xi)
        assert not np.shares_memory(y, v2) and y.tobytes() == r2.tobytes()
        assert vm.stats()["inputs_zero_copy"] == before["inputs_zero_copy"] + 3


def test_two_clients_concurrently_get_their_own_results(compiled, firmware, work):
    from cstatic.c7x import C7xVirtualMachine
    rng = np.random.default_rng(14)
    xs = [rng.standard_normal((1, 3, 10, 10)).astype(np.float32) for _ in range(2)]
    refs = [reference(compiled, work, x, f"cc{i}") for i, x in enumerate(xs)]
    assert refs[0].tobytes() != refs[1].tobytes()
    errors = []
    start = threading.Barrier(2)

    def worker(i):
        try:
            with C7xVirtualMachine(compiled / "lib0.out") as vm:
                xi = vm.create_input()
                xi[...] = xs[i]
                start.wait()
                for k in range(300):
                    v = vm.run_nocopy(xi) if k % 2 else vm["main"](xs[i])
                    if v.tobytes() != refs[i].tobytes():
                        errors.append(f"client {i}, run {k}: got another client's result")
                        return
        except Exception as e:  # reported below
            errors.append(f"client {i}: {e!r}")

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors

    # And two processes through the CLI at the same time.
    h = firmware.load(compiled / "lib0.out")
    for i, x in enumerate(xs):
        x.tofile(work / f"cc{i}.bin")
    procs = [subprocess.Popen(["sh", "-c", f"for k in 1 2 3 4 5 6 7 8 9 10; do {firmware_cmd(firmware)} infer {h} 0 "
                               f"-i {work}/cc{i}.bin -o {work}/cc{i}_out$k.bin >/dev/null || exit 1; done"],
                              env=firmware.env) for i in range(2)]
    assert [p.wait(timeout=60) for p in procs] == [0, 0]
    for i in range(2):
        for k in range(1, 11):
            assert (work / f"cc{i}_out{k}.bin").read_bytes() == refs[i].tobytes()
    firmware.compute("unload", h)


def firmware_cmd(fw):
    from deploy_util import COMPUTE_BIN
    return COMPUTE_BIN


def test_connections_beyond_the_limit_are_refused_clearly(compiled, firmware):
    import socket
    import time
    held = []
    try:
        for _ in range(32):  # FW_MAX_CONNS
            s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
            s.connect(firmware.sock)
            held.append(s)
        time.sleep(0.1)
        p = firmware.compute("ping", ok=False)
        # The firmware says why before it closes; the client prints it.
        assert p.returncode == 1, p.stderr
        assert "refused the connection: it serves at most 32 clients at once and 32 are connected" in p.stderr
        assert "status -4" in p.stderr, p.stderr
        from cstatic.c7x import C7X_ERR_BUSY, C7xError, C7xVirtualMachine
        with pytest.raises(C7xError, match="serves at most 32 clients") as e:
            C7xVirtualMachine(compiled / "lib0.out", socket=firmware.sock)
        assert e.value.status == C7X_ERR_BUSY
    finally:
        for s in held:
            s.close()
    for _ in range(100):  # the firmware's threads notice the closed sockets
        if firmware.compute("ping", ok=False).returncode == 0:
            break
        time.sleep(0.02)
    assert "pong" in firmware.compute("ping").stdout
