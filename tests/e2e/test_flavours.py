"""Code flavours: -mcpu=c7x and -mcpu=c66x against the generic C.

A DSP flavour is the generic C plus: the TI intrinsics header in every
lib*.c (<c7x.h> / <c6x.h>; the host stand-in in
include/cstatic/platform/ti_stub off the TI compiler), TVM_DSP_EXPORT on the
entry points, and on c7x the firmware's entry cg_main_dsp (tensor
descriptors in, model_run). -skip-runtime-checks=1 (the DSP default) drops
the entries' argument and alignment checks.

What is checked here:
- every generated .c of both flavours compiles warning-free as C99 with the
  host compiler and the stand-in headers;
- the generic target emits none of it;
- the c7x flavour run by `cstatic run` gives the generic flavour's bytes;
- cg_main_dsp called on the host (ctypes, the .so `cstatic run` built) gives
  them too, and with -skip-runtime-checks=0 rejects bad descriptors;
- -constants-byte-alignment sets the blob's and the arena's alignment.

The small model is built here with onnx.helper and ORT's quantize_static;
the suite models come from the session's model_suite fixture (conftest.py).
"""
import ctypes
import glob
import os
import re
import shutil
import struct
import subprocess

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from cstatic_cli import ROOT, cstatic

INCLUDE = os.path.join(ROOT, "include")
STUB_DIR = os.path.join(INCLUDE, "cstatic", "platform", "ti_stub")
CC = os.environ.get("CC", "cc")

FLAVOURS = {"c7x": "c7x.h", "c66x": "c6x.h"}
ENTRIES = ("model_run", "cg_main", "model_check_weights", "model_desc")

# tidsp_status values (include/cstatic/tidsp.h)
TIDSP_OK, ERR_NULL, ERR_SHAPE, ERR_DTYPE, ERR_PARAM = 0, -1, -2, -3, -4


def compile_model(model, out, target, *extra):
    cstatic("compile", model, "-o", out, "-t", target, "-q", *extra)
    return out


def sources(d):
    files = sorted(glob.glob(os.path.join(d, "*.c")))
    assert any(f.endswith("lib0.c") for f in files), f"{d}: no lib0.c"
    return files


def cc_strict(d, *flags):
    """Compile every generated .c of d as the brief's strict C99 check."""
    for f in sources(d):
        p = subprocess.run([CC, "-std=c99", "-Wall", "-Wextra", "-Werror", "-c", "-I", INCLUDE,
                            "-I", STUB_DIR, "-I", str(d), *flags, f, "-o", os.devnull],
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, f"{f} does not compile:\n{p.stderr}"


def read(d, name):
    with open(os.path.join(d, name)) as f:
        return f.read()


def check_flavour_text(d, flavour):
    """What a DSP flavour's files must say (and a generic one must not)."""
    hdr = read(d, "lib0.h")
    if flavour == "generic":
        assert "TVM_DSP_EXPORT" not in hdr and "platform/" not in hdr
        for f in sources(d):
            text = read(d, os.path.basename(f))
            assert "TVM_DSP_EXPORT" not in text and "c7x.h" not in text and "c6x.h" not in text
            assert "cg_main_dsp" not in text and "#pragma" not in text
        return
    ti_header = FLAVOURS[flavour]
    assert '#include "cstatic/platform/tidsp_dsp.h"' in hdr
    for f in sources(d):
        if os.path.basename(f) == "weights.c":
            continue
        text = read(d, os.path.basename(f))
        block = (f"#if defined(__TI_COMPILER_VERSION__)\n#include <{ti_header}>\n#else\n"
                 f'#include "cstatic/platform/ti_stub/{ti_header}"\n#endif\n')
        assert block in text, f"{f}: no <{ti_header}> include block"
        # No loops of its own, hence no loop pragmas (they are the kernels'),
        # but for the DMA software pipeline of a tiled layer: its one loop
        # over output-channel tiles, or (H-tiled) over output-row tiles, or
        # (N-tiled) over weight-row tiles and the activation rows
        assert "#pragma" not in text
        for layer in text.split("  /* layer ")[1:]:
            loops = re.findall(r"\b(?:for|while)\s*\(.*", layer)
            if loops and "ScheduleC7xDMATiling: H-tiled" in layer:
                assert [lp.split(";")[0] for lp in loops] == ["for (int32_t t = 0, buf = 0"], loops
            elif loops and "ScheduleC7xDMATiling: N-tiled" in layer:  # weight tiles, activation rows
                assert [lp.split(";")[0] for lp in loops] == ["for (int32_t oc = 0, buf = 0", "for (int32_t m = 0"]
            elif loops:
                assert "ScheduleC7xDMATiling: OC-tiled" in layer or "through mmalib_conv2d_i8_sliced" in layer, layer
                assert len(loops) == 1 and loops[0].startswith("for (int32_t oc = 0"), loops
    lib0 = read(d, "lib0.c")
    for name in ENTRIES:
        decl = re.search(r"TVM_DSP_EXPORT\n(extern )?(const tidsp_model_desc|int32_t) " + name + r"\b", hdr)
        assert decl, f"lib0.h: {name} is not TVM_DSP_EXPORT"
        defn = re.search(r"TVM_DSP_EXPORT\n(const tidsp_model_desc|int32_t) " + name + r"\b", lib0)
        assert defn, f"lib0.c: {name} is not TVM_DSP_EXPORT"
    has_dsp_entry = flavour == "c7x"
    assert ("TVM_DSP_EXPORT\nint32_t cg_main_dsp(" in hdr) == has_dsp_entry
    assert ("TVM_DSP_EXPORT\nint32_t cg_main_dsp(" in lib0) == has_dsp_entry
    assert "TVM_DSP_EXPORT\nint32_t cg_main_part" not in hdr  # internal, not exported


# ---- the small model -----------------------------------------------------------

def small_qdq_model(path):
    """x f32[1,3,12,12] → Conv 3→8 3x3 + Relu → Conv 8→8 3x3 stride 2 + Relu
    → GlobalAveragePool → Flatten → Gemm 8→5 → y f32[1,5], quantized with
    ORT quantize_static (QDQ, int8 activations, int8 per-channel weights)."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType,
                                          quantize_static)
    r = np.random.default_rng(11)
    inits = [
        numpy_helper.from_array((r.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32), "w1"),
        numpy_helper.from_array((r.standard_normal(8) * 0.1).astype(np.float32), "b1"),
        numpy_helper.from_array((r.standard_normal((8, 8, 3, 3)) * 0.2).astype(np.float32), "w2"),
        numpy_helper.from_array((r.standard_normal(8) * 0.1).astype(np.float32), "b2"),
        numpy_helper.from_array((r.standard_normal((5, 8)) * 0.5).astype(np.float32), "wf"),
        numpy_helper.from_array((r.standard_normal(5) * 0.1).astype(np.float32), "bf"),
    ]
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], name="conv2", pads=[1, 1, 1, 1],
                         strides=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], name="fc", transB=1),
    ]
    g = helper.make_graph(nodes, "flavour_small",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 12, 12])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    float_path = str(path) + ".float.onnx"
    onnx.save(m, float_path)

    class Calib(CalibrationDataReader):
        def __init__(self):
            rr = np.random.default_rng(5)
            self.it = iter([{"x": rr.standard_normal((1, 3, 12, 12)).astype(np.float32)}
                            for _ in range(8)])

        def get_next(self):
            return next(self.it, None)

    quantize_static(float_path, str(path), Calib(), quant_format=QuantFormat.QDQ,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8, per_channel=True)
    return path


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return small_qdq_model(tmp_path_factory.mktemp("model") / "small.onnx")


@pytest.fixture(scope="module")
def built(small, tmp_path_factory):
    """The small model in every flavour this file looks at."""
    root = tmp_path_factory.mktemp("flavours")
    return {
        "generic": compile_model(small, root / "generic", "c_static_lib"),
        "c7x": compile_model(small, root / "c7x", "c_static_lib -mcpu=c7x"),
        "c66x": compile_model(small, root / "c66x", "c_static_lib -mcpu=c66x"),
        "c7x_checked": compile_model(small, root / "c7x_checked",
                                     "c_static_lib -mcpu=c7x -skip-runtime-checks=0"),
        "c66x_weights_c": compile_model(small, root / "c66x_weights_c", "c_static_lib -mcpu=c66x",
                                        "--weights=c"),
    }


@pytest.fixture(scope="module")
def x_small():
    return np.random.default_rng(3).standard_normal((1, 3, 12, 12)).astype(np.float32)


@pytest.mark.parametrize("key", ["c7x", "c66x", "c7x_checked", "c66x_weights_c", "generic"])
def test_every_generated_file_compiles_strictly(built, key):
    cc_strict(built[key])
    check_flavour_text(built[key], key.split("_")[0])


def test_dsp_flavours_default_to_skipping_the_entry_checks(built):
    for key in ("c7x", "c66x"):
        lib0 = read(built[key], "lib0.c")
        assert "-skip-runtime-checks=1" in lib0
        assert "return TIDSP_ERR_NULL" not in lib0 and "TIDSP_ERR_ALIGN" not in lib0
        assert "tidsp_dsp_tensor_check" not in lib0
    checked = read(built["c7x_checked"], "lib0.c")
    assert checked.count("return TIDSP_ERR_ALIGN") == 2  # cg_main and model_run
    assert "tidsp_dsp_tensor_check(&inputs[0], &model_inputs[0])" in checked
    assert "tidsp_dsp_tensor_check(&outputs[0], &model_outputs[0])" in checked
    generic = read(built["generic"], "lib0.c")
    assert generic.count("return TIDSP_ERR_ALIGN") == 2


def test_exported_entries_stay_visible_in_a_hidden_visibility_build(built, tmp_path):
    """TVM_DSP_EXPORT is visibility("default") off the TI compiler: the
    entries survive -fvisibility=hidden, internal parts do not."""
    readelf = shutil.which("readelf")
    if readelf is None:
        pytest.skip("readelf not installed")
    obj = tmp_path / "lib0.o"
    cc_strict(built["c7x"])
    subprocess.run([CC, "-std=c99", "-fPIC", "-fvisibility=hidden", "-c", "-I", INCLUDE, "-I",
                    str(built["c7x"]), os.path.join(built["c7x"], "lib0.c"), "-o", str(obj)],
                   check=True, timeout=600)
    syms = subprocess.run([readelf, "-sW", str(obj)], capture_output=True, text=True,
                          check=True).stdout
    vis = {}
    for line in syms.splitlines():
        f = line.split()
        if len(f) >= 8 and f[6] != "UND":
            vis[f[7]] = f[5]
    for name in ENTRIES + ("cg_main_dsp",):
        assert vis.get(name) == "DEFAULT", (name, vis.get(name))


def run_cli(d, x, tmp_path, tag):
    xi, yo = tmp_path / f"x_{tag}.npy", tmp_path / f"y_{tag}.npy"
    np.save(xi, x)
    cstatic("run", d, "--input", xi, "--output", yo)
    return np.load(yo)


def test_c7x_and_c66x_flavours_run_like_the_generic_one(built, x_small, tmp_path):
    y_generic = run_cli(built["generic"], x_small, tmp_path, "generic")
    assert y_generic.shape == (1, 5) and y_generic.dtype == np.float32
    assert np.ptp(y_generic) > 0, "degenerate model output"
    for key in ("c7x", "c66x", "c66x_weights_c"):
        y = run_cli(built[key], x_small, tmp_path, key)
        assert y.dtype == y_generic.dtype and np.array_equal(y, y_generic), key


# ---- cg_main_dsp on the host ------------------------------------------------------

class DspTensor(ctypes.Structure):
    """tidsp_dsp_tensor (include/cstatic/platform/tidsp_dsp.h): 80 bytes."""
    _fields_ = [("data_addr", ctypes.c_uint64), ("size", ctypes.c_uint64),
                ("ndim", ctypes.c_int32), ("dtype_code", ctypes.c_int32),
                ("dtype_bits", ctypes.c_int32), ("reserved", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 6)]


def desc(arr, code=2, bits=32, shape=None):
    d = DspTensor()
    d.data_addr = arr.ctypes.data if arr is not None else 0
    d.size = arr.nbytes if arr is not None else 0
    shape = arr.shape if shape is None else shape
    d.ndim = len(shape)
    d.dtype_code, d.dtype_bits = code, bits
    for i, s in enumerate(shape):
        d.shape[i] = s
    return d


def aligned(nbytes, align):
    raw = np.zeros(nbytes + align, np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off:off + nbytes]


def header_int(d, name):
    m = re.search(r"#define " + name + r" (\d+)u?\n", read(d, "lib0.h"))
    assert m, name
    return int(m.group(1))


class DspModel:
    """The .so `cstatic run` built for d (DIR/.build/model.so)."""

    def __init__(self, d):
        so = os.path.join(d, ".build", "model.so")
        assert os.path.exists(so), f"{so}: run the model with `cstatic run` first"
        self.lib = ctypes.CDLL(so)
        f = self.lib.cg_main_dsp
        f.restype = ctypes.c_int32
        f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.POINTER(DspTensor), ctypes.c_int32,
                      ctypes.POINTER(DspTensor), ctypes.c_int32]
        blob = np.fromfile(os.path.join(d, "weights.bin"), np.uint8)
        self.weights = aligned(blob.nbytes, header_int(d, "MODEL_WEIGHTS_ALIGN"))
        self.weights[:] = blob
        self.arena = aligned(max(header_int(d, "MODEL_ARENA_SIZE"), 1),
                             header_int(d, "MODEL_ARENA_ALIGN"))

    def call(self, ins, outs, n_in=None, n_out=None, arena=None):
        in_arr = (DspTensor * max(len(ins), 1))(*ins)
        out_arr = (DspTensor * max(len(outs), 1))(*outs)
        a = self.arena if arena is None else arena
        return self.lib.cg_main_dsp(self.weights.ctypes.data, a.ctypes.data, in_arr,
                                    len(ins) if n_in is None else n_in, out_arr,
                                    len(outs) if n_out is None else n_out)


def test_cg_main_dsp_runs_the_model_from_descriptors(built, x_small, tmp_path):
    y_generic = run_cli(built["generic"], x_small, tmp_path, "generic")
    for key in ("c7x", "c7x_checked"):
        run_cli(built[key], x_small, tmp_path, key)  # builds DIR/.build/model.so
        m = DspModel(built[key])
        x = np.ascontiguousarray(x_small)
        y = np.full((1, 5), np.nan, np.float32)
        assert m.call([desc(x)], [desc(y)]) == TIDSP_OK, key
        assert np.array_equal(y, y_generic), key


def test_cg_main_dsp_checks_descriptors_unless_told_to_skip(built, x_small, tmp_path):
    run_cli(built["c7x_checked"], x_small, tmp_path, "checked")
    m = DspModel(built["c7x_checked"])
    x = np.ascontiguousarray(x_small)
    y = np.zeros((1, 5), np.float32)
    assert m.call([desc(x)], [desc(y)]) == TIDSP_OK
    assert m.call([desc(x)], [desc(y)], n_in=2) == ERR_PARAM
    assert m.call([desc(x)], [desc(y)], n_out=0) == ERR_PARAM
    assert m.call([desc(x, shape=(1, 3, 12, 13))], [desc(y)]) == ERR_SHAPE
    assert m.call([desc(x, shape=(3, 12, 12))], [desc(y)]) == ERR_SHAPE
    assert m.call([desc(x)], [desc(y, shape=(1, 4))]) == ERR_SHAPE
    assert m.call([desc(x, code=0, bits=8)], [desc(y)]) == ERR_DTYPE
    assert m.call([desc(x)], [desc(y, code=2, bits=64)]) == ERR_DTYPE
    short = desc(x)
    short.size = x.nbytes - 1
    assert m.call([short], [desc(y)]) == ERR_SHAPE
    assert m.call([desc(None, shape=x.shape)], [desc(y)]) == ERR_NULL
    misaligned = aligned(m.arena.nbytes + 1, 64)[1:]
    assert m.call([desc(x)], [desc(y)], arena=misaligned) == -5  # TIDSP_ERR_ALIGN

    # The default c7x flavour trusts its caller: a wrong count or shape
    # descriptor is not looked at (the data pointers are all it reads).
    run_cli(built["c7x"], x_small, tmp_path, "c7x")
    fast = DspModel(built["c7x"])
    y2 = np.zeros((1, 5), np.float32)
    assert fast.call([desc(x, shape=(1, 1))], [desc(y2, code=0, bits=8)], n_in=7) == TIDSP_OK
    assert np.array_equal(y, y2)


def weights_header_align(d):
    with open(os.path.join(d, "weights.bin"), "rb") as f:
        h = f.read(64)
    assert h[:4] == b"CSWB"
    return struct.unpack_from("<I", h, 12)[0], struct.unpack_from("<Q", h, 24)[0]


@pytest.mark.parametrize("align", [None, 16, 256])
def test_constants_byte_alignment_sets_the_blob_and_arena_alignment(small, tmp_path, align):
    target = "c_static_lib -mcpu=c7x" + (f" -constants-byte-alignment={align}" if align else "")
    d = compile_model(small, tmp_path / "out", target)
    want = align or 64  # the spec's c7x default
    assert header_int(d, "MODEL_WEIGHTS_ALIGN") == want
    assert header_int(d, "MODEL_ARENA_ALIGN") == want
    assert weights_header_align(d) == (want, max(64, want))
    offsets = [int(v, 16) for v in re.findall(r"#define [WA]_\w+ 0x([0-9a-f]+)", read(d, "lib0.c"))]
    assert offsets and all(o % want == 0 for o in offsets)


# ---- the suite models ---------------------------------------------------------------

SUITE_MODELS = ("resnet18", "mobilenetv2", "mobilenetv3s", "shufflenetv2", "googlenet")
SUITE_VARIANTS = ("pt2e", "ort_s8", "ort_u8")


@pytest.mark.parametrize("variant", SUITE_VARIANTS)
@pytest.mark.parametrize("model", SUITE_MODELS)
def test_suite_model_flavours_compile_strictly(model, variant, model_suite, tmp_path):
    """Every suite model's c7x and c66x C compiles with the host compiler
    against the stand-in headers, warning-free (the model_suite fixture of
    conftest.py generates the models once per session)."""
    path = model_suite.model(model, variant)
    for flavour in sorted(FLAVOURS):
        d = compile_model(path, tmp_path / flavour, f"c_static_lib -mcpu={flavour}")
        check_flavour_text(d, flavour)
        cc_strict(d)
