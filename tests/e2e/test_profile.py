"""Per-layer profiling (-profile-layers=1, `cstatic run --profile`) and the
scalar baseline (-kernels=scalar).

The model is a small QDQ network built here with onnx.helper and quantized
by onnxruntime's quantize_static (per-channel weights): Conv → Relu →
MaxPool → Flatten → Gemm, so that both dispatched kernels (conv2d_i8,
matmul_i8) and a plain one (maxpool) are profiled. No timing is asserted:
only that the table, the CSV and the SVG are well formed and consistent
with the manifest, and that a build without the attribute holds no
profiling code at all.
"""
import csv
import io
import json
import os
import re
import xml.etree.ElementTree as ET

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from cstatic_cli import cstatic


PROFILE_MARKERS = ("tidsp_profile", "model_layer_stats", "MODEL_PROFILE", "model_profile")


def build_qdq_model(path):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    rng = np.random.default_rng(7)
    w = (rng.standard_normal((8, 3, 3, 3)) * 0.3).astype(np.float32)
    b = (rng.standard_normal(8) * 0.1).astype(np.float32)
    fc = (rng.standard_normal((8 * 8 * 8, 10)) * 0.05).astype(np.float32)
    fb = (rng.standard_normal(10) * 0.1).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc", "fb"], ["y"], name="fc"),
    ]
    g = helper.make_graph(
        nodes, "profile_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.flatten()),
         helper.make_tensor("b", TensorProto.FLOAT, b.shape, b),
         helper.make_tensor("fc", TensorProto.FLOAT, fc.shape, fc.flatten()),
         helper.make_tensor("fb", TensorProto.FLOAT, fb.shape, fb)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    float_path = path + ".float.onnx"
    onnx.save(m, float_path)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"x": rng.standard_normal((1, 3, 16, 16)).astype(np.float32)}
                            for _ in range(8)])

        def get_next(self):
            return next(self.it, None)

    quantize_static(float_path, path, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    d = tmp_path_factory.mktemp("profile")
    model = str(d / "net.onnx")
    build_qdq_model(model)
    x = np.random.default_rng(1).standard_normal((2, 3, 16, 16)).astype(np.float32)
    np.save(d / "x.npy", x)
    return d, model


def compile_to(work, name, target):
    d, model = work
    out = d / name
    if not out.exists():
        cstatic("compile", model, "-o", out, "-t", target, "-q")
    return out


def sources(dirpath):
    return {f: (dirpath / f).read_text() for f in sorted(os.listdir(dirpath))
            if re.fullmatch(r"lib\d+\.[ch]", f)}


def run_model(work, dirpath, *extra):
    d, _ = work
    y = d / f"{dirpath.name}.y.npy"
    p = cstatic("run", dirpath, "-i", d / "x.npy", "-o", y, *extra)
    return np.load(y), p.stdout


def expected_rows(dirpath):
    """(name-independent) kernel and MACs of every profiled row, from the
    manifest: the input conversion, every non-elided layer, the output one."""
    man = json.loads((dirpath / "manifest.json").read_text())
    layers = [(l["kernel"], l.get("macs", 0)) for l in man["layers"] if not l["elided"]]
    return [("tidsp_quantize", 0)] + layers + [("tidsp_dequantize", 0)]


def expected_names(dirpath):
    """(ONNX node, output) of every profiled row: the manifest's layers
    between the boundary conversions (the model's QuantizeLinear and
    DequantizeLinear, named by ORT's quantizer)."""
    man = json.loads((dirpath / "manifest.json").read_text())
    shape = lambda t: {"int8": "i8", "float32": "f32"}[t["dtype"]] + "[" + ",".join(map(str, t["shape"])) + "]"
    return [(l["name"], shape(l["output"])) for l in man["layers"] if not l["elided"]]


def test_profile_table_csv_and_svg_are_well_formed(work):
    d, _ = work
    prof = compile_to(work, "prof", "c_static_lib -profile-layers=1")
    plain = compile_to(work, "plain", "c_static_lib")
    csv_path, svg_path = d / "layers.csv", d / "layers.svg"
    y, out = run_model(work, prof, "--repeat", "3", "--profile", "--profile-csv", csv_path,
                       "--profile-svg", svg_path)
    # Profiling observes; it does not change a single output byte.
    y_plain, _ = run_model(work, plain)
    assert np.array_equal(y, y_plain)

    want = expected_rows(prof)
    n = int(re.search(r"#define MODEL_PROFILE_LAYERS (\d+)u", (prof / "lib0.h").read_text()).group(1))
    assert n == len(want)
    kernels = [k for k, _ in want]
    assert "tidsp_conv2d_i8" in kernels and "tidsp_matmul_i8" in kernels and "tidsp_maxpool_i8" in kernels

    # The table: latency line, header, one row per layer in order, total line.
    lines = out.strip().splitlines()
    assert re.fullmatch(r"latency_ms: [0-9.]+", lines[0])
    assert lines[1].split() == ["#", "layer", "module", "output", "kernel", "MACs", "time_ms", "share", "GMAC/s"]
    rows = lines[2:2 + n]
    shares = 0.0
    for i, (row, (kernel, macs)) in enumerate(zip(rows, want)):
        f = row.split()
        assert f[0] == str(i) and f[4] == kernel and int(f[5]) == 2 * macs, row  # 2 batches
        assert float(f[6]) >= 0.0 and f[7].endswith("%")
        shares += float(f[7][:-1])
        assert (f[8] == "-") == (macs == 0), row
        assert f[2] == "-", row  # ORT's quantizer records no PyTorch module
    # the layers go by their ONNX nodes, with their output tensors
    names = [tuple(r.split()[1:4:2]) for r in rows[1:-1]]
    assert names == expected_names(prof), names
    assert [nm for nm, _ in names] == ["conv", "pool", "fc"], names
    assert abs(shares - 100.0) < 0.1 * n + 0.5
    assert re.match(rf"total: {n} layers, {2 * sum(m for _, m in want)} MACs, [0-9.]+ ms in layers, "
                    r"[0-9.]+ ms end to end", lines[2 + n]), lines[2 + n]

    # The CSV: the same rows.
    table = list(csv.reader(io.StringIO(csv_path.read_text())))
    assert table[0] == ["index", "layer", "module", "output", "kernel", "macs", "time_ms", "share", "gmac_per_s"]
    assert len(table) == n + 1
    for i, (r, (kernel, macs)) in enumerate(zip(table[1:], want)):
        assert int(r[0]) == i and r[4] == kernel and int(r[5]) == 2 * macs
        assert float(r[6]) >= 0.0 and 0.0 <= float(r[7]) <= 1.0
        assert (r[8] == "") == (macs == 0)
    assert abs(sum(float(r[7]) for r in table[1:]) - 1.0) < 1e-3
    assert [(r[1], r[3]) for r in table[2:-1]] == expected_names(prof)

    # The SVG: parses as XML, one bar and one tooltip per layer.
    root = ET.parse(svg_path).getroot()
    ns = "{http://www.w3.org/2000/svg}"
    assert root.tag == f"{ns}svg"
    bars = root.findall(f"{ns}g/{ns}rect")
    assert len(bars) == n and all(float(b.get("width")) >= 0.0 for b in bars)
    tips = [t.text for t in root.iter(f"{ns}title")]
    assert len(tips) == n and all(k in t for t, (k, _) in zip(tips, want))


def test_build_without_the_attribute_has_no_profiling_code(work):
    d, _ = work
    plain = compile_to(work, "plain", "c_static_lib")
    prof = compile_to(work, "prof", "c_static_lib -profile-layers=1")
    for name, text in sources(plain).items():
        for marker in PROFILE_MARKERS:
            assert marker not in text, (name, marker)
    assert any("tidsp_profile_record" in t for t in sources(prof).values())
    # Asking a plain build for a profile is an error that says what to do.
    p = cstatic("run", plain, "-i", d / "x.npy", "-o", d / "unused.npy", "--profile", ok=False)
    assert p.returncode == 1
    assert "-profile-layers=1" in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_kernels_scalar_calls_the_reference_loops_with_identical_outputs(work):
    fast = compile_to(work, "plain", "c_static_lib")
    scalar = compile_to(work, "scalar", "c_static_lib -kernels=scalar")
    fast_src = "".join(sources(fast).values())
    scalar_src = "".join(sources(scalar).values())
    assert "tidsp_conv2d_i8(&p" in fast_src and "__ref" not in fast_src
    assert "tidsp_conv2d_i8__ref(&p" in scalar_src and "tidsp_matmul_i8__ref(&p" in scalar_src
    assert "tidsp_conv2d_i8(&p" not in scalar_src and "tidsp_matmul_i8(&p" not in scalar_src
    man = json.loads((scalar / "manifest.json").read_text())
    assert "-kernels=scalar" in json.dumps(man)
    y_fast, _ = run_model(work, fast)
    y_scalar, _ = run_model(work, scalar)
    assert np.array_equal(y_fast, y_scalar)


def test_kernels_attribute_rejects_unknown_values(work):
    d, model = work
    p = cstatic("compile", model, "-o", d / "bad", "-t", "c_static_lib -kernels=fastest", ok=False)
    assert p.returncode != 0
    assert "-kernels" in p.stderr and "fastest" in p.stderr


def with_name_scopes(model, scopes):
    """A copy of model whose nodes carry torch.onnx's
    "pkg.torch.onnx.name_scopes" metadata, as torch 2.13's exporter writes
    it (the enclosing module paths, then the op): scopes maps a node name
    to the value."""
    m = onnx.load(model)
    for n in m.graph.node:
        if n.name in scopes:
            e = n.metadata_props.add()
            e.key, e.value = "pkg.torch.onnx.name_scopes", scopes[n.name]
    return m


def test_layers_name_the_pytorch_module_the_exporter_recorded(work):
    """The module path is the next-to-last scope; a layer made of several
    ONNX nodes (Conv → Relu → Q) goes by its Conv; text torch would not
    write (an unterminated list) gives no module; a path that would close
    a C comment stays inside it."""
    d, model = work
    m = with_name_scopes(model, {
        "conv": "['', 'features', 'features.0', 'features.0.conv', 'conv2d']",
        "relu": "['', 'features', 'features.0', 'features.0.act', 'relu']",
        "pool": "['', 'pool",
        "flatten": "['', 'flatten']",
        "fc": '["", "head", "head.*/fc", "linear"]',
    })
    path = d / "scoped.onnx"
    onnx.save(m, path)
    out = d / "scoped"
    cstatic("compile", path, "-o", out, "-t", "c_static_lib -profile-layers=1", "-q")
    man = json.loads((out / "manifest.json").read_text())
    by_name = {l["name"]: l["module"] for l in man["layers"]}
    assert by_name == {"conv": "features.0.conv", "pool": "", "flatten": "", "fc": "head.*/fc"}, by_name
    # lib0.c says it in the layer comments and still compiles (run builds it)
    src = (out / "lib0.c").read_text()
    assert "* PyTorch module: features.0.conv\n" in src and "* PyTorch module: head.* /fc\n" in src
    assert src.count("* PyTorch module: ") == 2
    csv_path = d / "scoped.csv"
    run_model(work, out, "--profile", "--profile-csv", csv_path)
    rows = list(csv.reader(io.StringIO(csv_path.read_text())))[1:]
    assert [(r[1], r[2]) for r in rows[1:-1]] == [("conv", "features.0.conv"), ("pool", ""), ("fc", "head.*/fc")]
