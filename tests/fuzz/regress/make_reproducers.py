#!/usr/bin/env python3
"""Rebuild the hostile-input reproducers of issue 18 as regression inputs.

Each file is tiny and declares far more memory than it holds: ONNX
initializers of 2–16 GiB in typed fields or in external data, a constant
Expand to 8 GiB, a graph input of 8 GiB, .npy headers of 8–64 GiB. Every
one must be refused with one line naming the tensor (or file) and the size,
before anything is allocated (tests/e2e/test_hostile_inputs.py runs the CLI
on them and measures the peak RSS; the fuzz replays feed them to the
harnesses). fw/, weights/ and elf/ hold requests, blob headers and ELF
headers whose sizes and addresses wrap or lie, for the firmware handler,
the weights check and the firmware's ELF loader.

    .venv/bin/python tests/fuzz/regress/make_reproducers.py

rewrites them byte-identically (no timestamps, no randomness).
"""
import os
import struct

from onnx import TensorProto as TP
from onnx import helper as oh

HERE = os.path.dirname(os.path.abspath(__file__))
GIB = 1 << 30


def save(model, sub, name):
    d = os.path.join(HERE, sub)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(model.SerializeToString())


def model(nodes, inputs, outputs, inits=()):
    g = oh.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return oh.make_model(g, opset_imports=[oh.make_opsetid("", 17)], ir_version=8)


def identity_of(tensor, dtype, shape):
    """A graph that reads initializer `tensor` (so the frontend loads it)."""
    return model([oh.make_node("Identity", [tensor.name], ["y"], name="id")], [],
                 [oh.make_tensor_value_info("y", dtype, shape)], [tensor])


def typed(name, dtype, n, values=()):
    """A TensorProto of n elements whose typed field holds only `values`."""
    t = TP()
    t.name = name
    t.data_type = dtype
    t.dims.append(n)
    field = {TP.INT64: t.int64_data, TP.FLOAT: t.float_data, TP.INT32: t.int32_data}[dtype]
    field.extend(values)
    return t


def external(name, dtype, n, location, length=None, offset=None):
    t = TP()
    t.name = name
    t.data_type = dtype
    t.dims.append(n)
    t.data_location = TP.EXTERNAL
    for k, v in (("location", location), ("offset", offset), ("length", length)):
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, str(v)
    return t


def onnx_reproducers():
    # Typed fields: 2 GiB and 16 GiB of int64 declared, nothing (or 3 values) stored.
    save(identity_of(typed("w", TP.INT64, 2 * GIB // 8), TP.INT64, [2 * GIB // 8]), "onnx",
         "typed_int64_2gib.onnx")
    save(identity_of(typed("w", TP.INT64, 2**31 - 1, [1, 2, 3]), TP.INT64, [2**31 - 1]), "onnx",
         "typed_int64_16gib.onnx")
    save(identity_of(typed("w", TP.FLOAT, 2**31 - 1), TP.FLOAT, [2**31 - 1]), "onnx",
         "typed_float_8gib.onnx")
    save(identity_of(typed("w", TP.INT32, 2**31 - 1, [7]), TP.INT32, [2**31 - 1]), "onnx",
         "typed_int32_8gib.onnx")
    # External data: a missing file, a 16-byte file, a declared length that
    # does not match, an offset past the end.
    save(identity_of(external("w", TP.INT64, 2 * GIB // 8, "missing.bin"), TP.INT64, [2 * GIB // 8]),
         "onnx", "external_2gib_missing.onnx")
    save(identity_of(external("w", TP.FLOAT, 2**31 - 1, "short.bin"), TP.FLOAT, [2**31 - 1]), "onnx",
         "external_8gib_short.onnx")
    save(identity_of(external("w", TP.FLOAT, 2**30, "short.bin", length=16), TP.FLOAT, [2**30]), "onnx",
         "external_4gib_length_16.onnx")
    save(identity_of(external("w", TP.INT64, 2**31 - 1, "short.bin", offset=2**62), TP.INT64, [2**31 - 1]),
         "onnx", "external_16gib_offset.onnx")
    # A constant Expand: a scalar broadcast to 2^31 − 1 floats (8 GiB) that
    # FoldConstant would compute (the 97-byte model).
    e = model([oh.make_node("Constant", [], ["x"], value_float=1.0),
               oh.make_node("Constant", [], ["s"], value_ints=[2**31 - 1]),
               oh.make_node("Expand", ["x", "s"], ["y"], name="e")], [],
              [oh.make_tensor_value_info("y", TP.FLOAT, None)])
    save(e, "onnx", "expand_8gib.onnx")
    # A graph input of 6 GiB (shape × dtype of a non-constant tensor).
    save(model([oh.make_node("Relu", ["x"], ["y"], name="r")],
               [oh.make_tensor_value_info("x", TP.FLOAT, [3, 2**29])],
               [oh.make_tensor_value_info("y", TP.FLOAT, [3, 2**29])]), "onnx", "input_6gib.onnx")
    with open(os.path.join(HERE, "onnx", "short.bin"), "wb") as f:
        f.write(bytes(range(16)))


def npy(header_dict, body=b"", version=1):
    text = header_dict.encode("latin1")
    if version == 1:
        pre = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text) + 1)
    else:
        pre = b"\x93NUMPY" + bytes([version, 0]) + struct.pack("<I", len(text) + 1)
    return pre + text + b"\n" + body


def npy_reproducers():
    d = os.path.join(HERE, "npy")
    os.makedirs(d, exist_ok=True)
    cases = {
        # 8 GiB of float32 declared, 4 bytes stored (the 338-byte file class).
        "f32_8gib_short.npy": npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1073741824), }"
                                  + " " * 200, b"\0" * 4),
        "i8_64gib_empty.npy": npy("{'descr': '<i8', 'fortran_order': False, 'shape': (8589934592,), }"),
        "u1_16gib_v2.npy": npy("{'descr': '|u1', 'fortran_order': False, 'shape': (4, 4, 1073741824), }",
                               b"\1" * 64, version=2),
        "f32_shape_overflow.npy": npy("{'descr': '<f4', 'fortran_order': False, "
                                      "'shape': (4294967296, 4294967296, 4294967296), }"),
        "header_longer_than_file.npy": b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f4'",
    }
    for name, data in cases.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def fw_reproducers():
    """Requests whose sizes or addresses wrap or overrun (fuzz_fw's layout:
    flags, length, request, staging bytes; flag 1 = the loaded handle;
    protocol 2: 64-bit handles)."""
    staging = 0xC0000000

    def frame(type_, body=b"", flags=1, length=None, extra=b""):
        req = struct.pack("<IIIi", type_, 9, 16 + len(body) if length is None else length, 0) + body
        return bytes([flags]) + struct.pack("<H", len(req)) + req + extra

    def wire(addr, size, shape=(1, 1, 8, 8), code=2, bits=32, ndim=None):
        return struct.pack("<QQiiii", addr, size, len(shape) if ndim is None else ndim, code, bits, 0) + \
            struct.pack("<6q", *(list(shape) + [0] * (6 - len(shape))))

    head = lambda n: struct.pack("<QIIII", 0, 0, n, 0, 0)  # handle (flag 1 fills it), model, inputs, flags
    cases = {
        "infer_addr_wraps.bin": frame(0x21, head(1) + wire(2**64 - 16, 256)),
        "infer_size_wraps.bin": frame(0x21, head(1) + wire(staging + 8, 2**64 - 4)),
        "infer_inputs_4g.bin": frame(0x21, head(0xFFFFFFFF) + wire(staging, 256)),
        "infer_ndim_negative.bin": frame(0x21, head(1) + wire(staging, 256, ndim=-3)),
        "infer_ndim_huge.bin": frame(0x21, head(1) + wire(staging, 256, ndim=1 << 30)),
        "infer_shape_overflow.bin": frame(0x21, head(1) + wire(staging, 256, shape=(2**62, 2**62, 4, 1))),
        "infer_large_descs_huge.bin": frame(0x23, head(1) + struct.pack("<QII", staging, 0xFFFFFFFF, 0)),
        "infer_large_descs_wrap.bin": frame(0x23, head(64) + struct.pack("<QII", 2**64 - 8, 4096, 0)),
        "info_first_huge.bin": frame(0x14, struct.pack("<QII", 0, 0xFFFFFFFF, 0)),
        "load_size_huge.bin": frame(0x10, struct.pack("<IIII", 0xFFFFFFFF, 0, 0, 0)),
        "load_garbage.bin": frame(0x10, struct.pack("<IIII", 64, 0, 0, 0), extra=b"\x7fELF" + b"\xff" * 60),
        "reset_wrong_handle.bin": frame(0x9, struct.pack("<Q", 12345), flags=0),
        "length_513.bin": frame(0x1, b"\0" * 497, flags=0),
        "length_lies.bin": frame(0x21, head(1), length=0xFFFFFFF0),
    }
    d = os.path.join(HERE, "fw")
    os.makedirs(d, exist_ok=True)
    for name, data in cases.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def weights_reproducers():
    """Blob headers that lie about their sizes (fuzz_weights' layout: the
    blob, then count u32, log2 alignment u8, checksum u64)."""
    def blob(total=None, payload=64, size=128, align=64, count=1, checksum=0, reserved=b""):
        h = b"CSWB" + struct.pack("<IIIQQQ", 1, count, align, size if total is None else total, payload, checksum)
        h += reserved.ljust(24, b"\0")
        return (h + b"\0" * (size - len(h)))[:size]

    def trailer(count=1, align_log2=6, checksum=0):
        return struct.pack("<IBQ", count, align_log2, checksum)

    fnv = 0xcbf29ce484222325
    for _ in range(64):
        fnv = ((fnv ^ 0) * 0x100000001b3) % 2**64
    cases = {
        "payload_past_end.bin": blob(payload=2**63) + trailer(),
        "payload_inside_header.bin": blob(payload=8) + trailer(),
        "total_lies.bin": blob(total=2**40) + trailer(),
        "shorter_than_header.bin": blob(size=40) + trailer(),
        "reserved_not_zero.bin": blob(checksum=fnv, reserved=b"\1") + trailer(checksum=fnv),
        "valid.bin": blob(checksum=fnv) + trailer(checksum=fnv),
    }
    d = os.path.join(HERE, "weights")
    os.makedirs(d, exist_ok=True)
    for name, data in cases.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


def elf_reproducers():
    """ELF64 headers that lie about where and how big their tables are
    (fuzz_elf: the image is the input)."""
    def ehdr(phoff=64, phnum=1, phentsize=56, shoff=0, shnum=0, machine=62, type_=3):
        ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + b"\0" * 8
        return ident + struct.pack("<HHIQQQIHHHHHH", type_, machine, 1, 0, phoff, shoff, 0, 64, phentsize,
                                   phnum, 64, shnum, 0)

    def phdr(type_=1, off=0, vaddr=0, filesz=0, memsz=0, flags=5, align=4096):
        return struct.pack("<IIQQQQQQ", type_, flags, off, vaddr, vaddr, filesz, memsz, align)

    cases = {
        "phoff_past_end.bin": ehdr(phoff=2**63),
        "phnum_huge.bin": ehdr(phnum=0xFFFF) + phdr(),
        "phentsize_small.bin": ehdr(phentsize=8) + phdr(),
        "segment_past_end.bin": ehdr() + phdr(off=2**40, filesz=4096, memsz=4096),
        "memsz_wraps.bin": ehdr() + phdr(vaddr=2**64 - 4096, filesz=0, memsz=8192),
        "filesz_over_memsz.bin": ehdr() + phdr(filesz=120, memsz=8),
        "dynamic_empty.bin": ehdr(phnum=2) + phdr(filesz=176, memsz=176) + phdr(type_=2, off=0, filesz=0),
        "aarch64_truncated.bin": ehdr(machine=183)[:40],
    }
    d = os.path.join(HERE, "elf")
    os.makedirs(d, exist_ok=True)
    for name, data in cases.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    onnx_reproducers()
    npy_reproducers()
    fw_reproducers()
    weights_reproducers()
    elf_reproducers()
    for sub in ("onnx", "npy", "fw", "weights", "elf"):
        for name in sorted(os.listdir(os.path.join(HERE, sub))):
            print(f"{sub}/{name}: {os.path.getsize(os.path.join(HERE, sub, name))} bytes")
