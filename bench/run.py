"""cstatic benchmarks, side by side in one run (`make bench`).

  (a) the spec's single conv layer (int8 conv 64->64, 56x56, 3x3,
      per-channel): every kernel variant this CPU runs (bench/conv_bench.c),
      as GMAC/s and as a share of this CPU's measured int8 peaks
      (bench/avx2_peak.c: the exact vpmaddwd + vpaddd sequence of the AVX2
      kernels, and ORT's inexact vpmaddubsw for reference;
      bench/vnni_peak.c; bench/amx_peak.c); ResNet-18 and MobileNetV2 layer
      shapes; (a2) the depthwise layers of MobileNetV2/V3 and ShuffleNetV2;
      (a3) int8 matrix multiplies of transformer and ConvNeXt shapes;
  (b) every suite model found (the spec layer as a QDQ model, the
      transformer encoder, the CNN suite): cstatic fast against its peers,
      all single-thread and timed in one process, interleaved
      (bench/interleave.py: every round runs each engine once; medians of
      the thread CPU time over --repeat rounds):
        ONNX Runtime with default session options (on a CPU without VNNI its
        u8s8 kernels add int16 pair sums with saturation: not exact),
        the same with session.x64quantprecision=1 (its exact mode),
        with every QDQ group fused as int8 (session.qdqisint8allowed=1, plus
        x64quantprecision for uint8 activations: the configuration cstatic
        matches bit for bit),
        ExecuTorch 1.5.1 with XNNPACK (the same seeded module quantized by
        its own XNNPACKQuantizer, one program per architecture, on the pt2e
        rows);
      then cstatic -kernels=scalar and -mmalib=1 (host emulation) by `cstatic
      run`, peak RSS of each engine in its own process, and whether the
      outputs agree; ResNet-18's and MobileNetV2's conv GMAC/s as a share of
      the measured peak of the ISA whose kernels ran (AVX2, VNNI or AMX);
  (c) compile time per model.

Writes bench/results.md (or --out) with the CPU, the date and the exact
commands. ExecuTorch programs are cached in tests/models/out/et/ (a
minute or two per architecture to make).

usage: .venv/bin/python bench/run.py [--build DIR] [--repeat N] [--out FILE]
                                     [--models GLOB ...] [--no-et]
"""
import argparse
import csv
import datetime
import glob
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = sys.executable
MODEL_DIRS = [os.path.join(ROOT, "tests/models/out")]
ET_DIR = os.path.join(ROOT, "tests/models/out/et")
# The suite's file names: <arch>_<variant>.onnx (tests/models/generate.py)
VARIANTS = ("pt2e", "ort_s8", "ort_u8")
# The spec's figures for the same layer on the AM67A C7x at 1 GHz
# (spec/mmalib-integration.txt "Performance").
SPEC_CONV_MS = {"TVM loop-based (C7x scalar)": 45.2, "MMALIB (MMA, DDR-resident)": 1.67,
                "MMALIB + L2 DMA prefetch": 0.48}
# The peer engines timed beside cstatic fast, in table order.
PEERS = ("ort", "ort_exact", "ort8", "et")
PEER_TITLE = {"ort": "ORT default", "ort_exact": "ORT exact", "ort8": "ORT int8-fused",
              "et": "ExecuTorch XNNPACK"}

commands = []  # every command run, for the report
rows_dw = []  # conv_bench's depthwise layers
rows_mm = []  # conv_bench's matrix multiplies
rows_shape = []  # conv_bench's layer shapes


def run(cmd, env=None):
    """Run cmd in its own process; return (stdout, wall seconds)."""
    commands.append(" ".join(shlex.quote(c) for c in cmd))
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
    return p.stdout, wall


def run_rss(cmd, env=None):
    """Like run(), plus the command's own peak RSS in MiB (None if unknown).

    /usr/bin/time measures it: the command is its child, forked from a tiny
    process. (wait4 on a child of this Python process would not do: a
    forked child's ru_maxrss includes the pages it shared with the parent
    before exec, so every command would look as large as the benchmark.)"""
    timer = "/usr/bin/time"
    if not os.access(timer, os.X_OK):
        out, wall = run(cmd, env)
        return out, wall, None
    with tempfile.NamedTemporaryFile("r", suffix=".rss") as rss:
        out, wall = run([timer, "-f", "%M", "-o", rss.name] + cmd, env)
        kib = rss.read().strip().splitlines()
        return out, wall, int(kib[-1]) / 1024.0 if kib else None


def latency(text):
    m = re.search(r"latency_ms: ([0-9.]+)", text)
    if not m:
        raise RuntimeError(f"no latency_ms in:\n{text}")
    return float(m.group(1))


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            info = f.read()
    except OSError:
        return platform.processor() or "unknown"
    name = re.search(r"model name\s*:\s*(.*)", info)
    flags = re.search(r"flags\s*:\s*(.*)", info)
    mhz = re.search(r"cpu MHz\s*:\s*(.*)", info)
    fam = re.search(r"cpu family\s*:\s*(\d+)", info)
    mod = re.search(r"^model\s*:\s*(\d+)", info, re.M)
    isa = [f for f in ("avx2", "fma", "avx512f", "avx512_vnni", "avx_vnni", "amx_int8")
           if flags and f in flags.group(1).split()]
    fm = f" (family {fam.group(1)} model {mod.group(1)})" if fam and mod else ""
    return (f"{name.group(1).strip() if name else 'unknown'}{fm}, {os.cpu_count()} logical CPUs, "
            f"{mhz.group(1).strip() + ' MHz, ' if mhz else ''}{' '.join(isa)}")


# ---- (a) the spec's conv layer ------------------------------------------------

def conv_layer(build, repeat, tmp):
    out, _ = run(["taskset", "-c", "0", os.path.join(build, "bin/conv_bench"), str(max(repeat, 5))])
    rows = []
    for m in re.finditer(r"^\s+(\S+)\s+([0-9.]+) ms\s+([0-9.]+) GMAC/s\s+x([0-9.]+) vs ref\s+(.*)$", out, re.M):
        rows.append({"variant": m.group(1), "ms": float(m.group(2)), "gmacs": float(m.group(3)),
                     "speedup": float(m.group(4)), "check": m.group(5).strip()})
    rows_dw.clear()
    for m in re.finditer(r"^dw (c\d+ \d+x\d+ k\d+ s\d+)\s+(\S+)\s+general\s+([0-9.]+) ms\s+depthwise\s+"
                         r"([0-9.]+) ms\s+x([0-9.]+)\s+(.*)$", out, re.M):
        rows_dw.append({"layer": m.group(1), "variant": m.group(2), "general": float(m.group(3)),
                        "direct": float(m.group(4)), "check": m.group(6).strip()})
    rows_shape.clear()
    for m in re.finditer(r"^shape (\S+)\s+(\d+)->(\d+)\s+(\d+)x\d+\s+k(\d+) s(\d+)\s+([0-9.]+) MMAC(.*)$", out, re.M):
        variants = re.findall(r"(\S+) ([0-9.]+) ms ([0-9.]+) GMAC/s", m.group(8))
        rows_shape.append({"model": m.group(1), "layer": f"{m.group(2)}→{m.group(3)} {m.group(4)}² "
                           f"k{m.group(5)} s{m.group(6)}", "mmac": float(m.group(7)),
                           "variants": variants, "bad": "DIFFERS" in m.group(8)})
    rows_mm.clear()
    for m in re.finditer(r"^mm (\S+)\s+m(\d+)\s+k(\d+)\s+n(\d+)\s+([0-9.]+) MMAC(.*)$", out, re.M):
        variants = re.findall(r"(\S+) ([0-9.]+) ms ([0-9.]+) GMAC/s", m.group(6))
        rows_mm.append({"name": m.group(1), "mkn": f"{m.group(2)}×{m.group(3)}×{m.group(4)}",
                        "mmac": float(m.group(5)), "variants": variants,
                        "bad": "DIFFERS" in m.group(6)})
    active = re.search(r"active variant: (\S+)", out)
    peaks = {"avx2": measure_peak("avx2_peak", [], tmp,
                                  "bench/avx2_peak.c: 12 independent vpmaddwd + vpaddd ymm chains, "
                                  "best of 7, thread CPU time"),
             "vnni": measure_peak("vnni_peak", ["-mavx512f", "-mavx512vnni"], tmp,
                                  "bench/vnni_peak.c, 12 independent vpdpbusd zmm chains, best of 5"),
             "amx": measure_peak("amx_peak", [], tmp,
                                 "bench/amx_peak.c, 6 independent tdpbssd tile chains, best of 5")}
    return rows, (active.group(1) if active else "?"), peaks, out


def measure_peak(name, flags, tmp, how):
    """(GMAC/s, note, other values printed) of a peak program, or (None, why not, {})."""
    exe = os.path.join(tmp, name)
    cc = os.environ.get("CC", "cc")
    try:
        run([cc, "-O2", "-std=c99", *flags, os.path.join(ROOT, f"bench/{name}.c"), "-o", exe])
        pout, _ = run(["taskset", "-c", "0", exe])
        extra = {k: float(v) for k, v in re.findall(r"^(\w+): ([0-9.]+)$", pout, re.M)}
        return extra["peak_gmacs"], f"measured: {how}", extra
    except (RuntimeError, KeyError) as e:
        return None, f"not measurable here ({str(e).splitlines()[0]})", {}


def spec_conv_model(path):
    """The spec's layer as a QDQ ONNX model (quantize_static, per-channel)."""
    import onnx
    from onnx import TensorProto, helper
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    rng = np.random.default_rng(0)
    w = (rng.standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32)
    b = (rng.standard_normal(64) * 0.1).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], name="conv"),
         helper.make_node("Relu", ["c"], ["y"], name="relu")],
        "spec_conv64", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 56, 56])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64, 56, 56])],
        [helper.make_tensor("w", TensorProto.FLOAT, w.shape, w.flatten()),
         helper.make_tensor("b", TensorProto.FLOAT, b.shape, b)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    fp = path + ".float.onnx"
    onnx.save(m, fp)

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{"x": np.abs(rng.standard_normal((1, 64, 56, 56))).astype(np.float32)}
                              for _ in range(4)])

        def get_next(self):
            return next(self.data, None)

    quantize_static(fp, path, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8)
    x = np.abs(rng.standard_normal((1, 64, 56, 56))).astype(np.float32)
    return x


# ---- (b), (c) models ----------------------------------------------------------

def find_models(patterns):
    found = {}
    if patterns:
        for p in patterns:
            for f in sorted(glob.glob(p)):
                found.setdefault(os.path.basename(f), f)
        return list(found.values())
    for d in MODEL_DIRS:
        for f in sorted(glob.glob(os.path.join(d, "*.onnx"))):
            base = os.path.basename(f)
            if ".part." in base or base.endswith(".float.onnx"):
                continue
            found.setdefault(base, f)  # the first directory wins
    return list(found.values())


def transformer_models(tmp):
    """The test suite's two-block transformer encoder (tests/models/
    transformer.py), quantized three ways (its PT2E variant trips an
    ORT_ENABLE_ALL optimizer bug in ORT's default session, see
    tests/e2e/test_transformer.py: that cell shows ORT's error)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import transformer
    d = os.path.join(tmp, "transformer")
    os.makedirs(d, exist_ok=True)
    transformer.generate(d)
    x = os.path.join(d, "x.npy")
    np.save(x, transformer.sample_inputs(1, seed=5))
    return [(f"transformer_{v} (2 blocks)", os.path.join(d, f"{v}.onnx"), x, "transformer" if v == "pt2e" else None)
            for v in ("pt2e", "ort_s8", "ort_u8")]


def suite_arch(model_path):
    """<arch> of a suite file <arch>_<variant>.onnx (swin_v2_t_ort_u8 ->
    swin_v2_t), or None for any other file."""
    base = os.path.basename(model_path)[:-len(".onnx")]
    for v in VARIANTS:
        if base.endswith("_" + v):
            return base[:-len(v) - 1]
    return None


def model_input(model_path, tmp):
    """One batch of the suite's inputs (<arch>_inputs.npy beside the model)."""
    arch = suite_arch(model_path)
    if arch is None:
        return None
    npy = os.path.join(os.path.dirname(model_path), f"{arch}_inputs.npy")
    if not os.path.exists(npy):
        return None
    x = np.load(npy)[:1].astype(np.float32)
    path = os.path.join(tmp, f"{arch}_x.npy")
    np.save(path, x)
    return path


def et_available():
    try:
        out = subprocess.run([PY, "-c", "import executorch.runtime, executorch.exir"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        return out.returncode == 0
    except OSError:
        return False


def et_program(name):
    """The cached ExecuTorch program of a suite module (made if missing), or
    (None, why not)."""
    os.makedirs(ET_DIR, exist_ok=True)
    pte = os.path.join(ET_DIR, f"{name}.pte")
    # A failed export is remembered beside the cache (it costs minutes and
    # fails the same way each run); delete the .failed file to try again.
    failed = pte + ".failed"
    if os.path.exists(failed):
        with open(failed) as f:
            return None, f.read().strip() + " (cached: delete " + failed + " to retry)"
    if not os.path.exists(pte):
        print(f"  exporting {name} with ExecuTorch ...", flush=True)
        try:
            run(["taskset", "-c", "0", PY, os.path.join(ROOT, "bench/et_export.py"), name, pte])
        except RuntimeError as e:
            why = str(e).strip().splitlines()[-1][:200]
            with open(failed, "w") as f:
                f.write(why + "\n")
            return None, why
    return pte, None


def ort_configs(onnx_path):
    """Session config entries of the three ORT engines."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
    import ort_ref
    int8 = {"session.qdqisint8allowed": "1"}
    return {"ort": {}, "ort_exact": dict(ort_ref.EXACT_INT8),
            "ort8": {**ort_ref.exact_int8_config(onnx_path, int8), **int8}}


def sqnr_db(ref, out):
    ref = np.asarray(ref, np.float64).ravel()
    out = np.asarray(out, np.float64).ravel()
    if ref.shape != out.shape:
        return None
    err = np.sum((ref - out) ** 2)
    return float("inf") if err == 0 else float(10 * np.log10(np.sum(ref ** 2) / err))


def bench_model(name, onnx_path, x_path, et_arch, build, repeat, tmp, use_et):
    cstatic = os.path.join(build, "bin/cstatic")
    r = {"name": name, "errors": {}}
    outs = {}
    targets = {"fast": "c_static_lib", "scalar": "c_static_lib -kernels=scalar",
               "mmalib": "c_static_lib -mmalib=1"}  # the MMALIB path, emulated on the host
    dirs = {}
    for form, target in targets.items():
        d = os.path.join(tmp, f"{name}.{form}")
        dirs[form] = d
        shutil.rmtree(d, ignore_errors=True)
        _, wall = run([cstatic, "compile", onnx_path, "-o", d, "-t", target, "--quiet"])
        r[f"compile_{form}_s"] = wall
        y = os.path.join(tmp, f"{name}.{form}.y.npy")
        # The first run builds lib*.c with the host C compiler (cached after).
        _, wall = run([cstatic, "run", d, "-i", x_path, "-o", y])
        r[f"cc_{form}_s"] = wall
        # scalar and mmalib: a few runs of `cstatic run`; fast: only its RSS
        # here (its time is the interleaved one below)
        reps = {"fast": 2, "scalar": 3, "mmalib": 5}[form]
        out, _, rss = run_rss(["taskset", "-c", "0", cstatic, "run", d, "-i", x_path, "-o", y,
                               "--repeat", str(reps)])
        r[f"{form}_run_ms"] = latency(out)
        r[f"{form}_rss"] = rss
        outs[form] = np.load(y)
    with open(os.path.join(dirs["fast"], "manifest.json")) as f:
        r["weights_mib"] = json.load(f)["weights_bytes"] / 2**20
    # Peak RSS of each ORT configuration and of ExecuTorch, each alone
    cfgs = ort_configs(onnx_path)
    engines = [{"name": "cstatic", "kind": "cstatic", "dir": dirs["fast"]}]
    for key in ("ort", "ort_exact", "ort8"):
        engines.append({"name": key, "kind": "ort", "model": onnx_path, "config": cfgs[key]})
    pte = None
    if et_arch and use_et:
        pte, why = et_program(et_arch)
        if pte:
            engines.append({"name": "et", "kind": "executorch", "pte": pte})
        else:
            r["errors"]["et"] = f"no ExecuTorch program: {why}"
    for e in engines[1:]:
        spec = os.path.join(tmp, f"{name}.{e['name']}.rss.json")
        with open(spec, "w") as f:
            json.dump({"input": x_path, "rounds": 2, "engines": [e]}, f)
        try:
            out, _, rss = run_rss(["taskset", "-c", "0", PY, os.path.join(ROOT, "bench/interleave.py"), spec])
            res = json.loads(out)[e["name"]]
            if "error" in res:
                r["errors"][e["name"]] = res["error"]
            else:
                r[f"{e['name']}_rss"] = rss
        except (RuntimeError, ValueError) as ex:
            r["errors"][e["name"]] = str(ex).strip().splitlines()[-1][:200]
    # The interleaved timing: every engine in one process, one run each per round
    spec = os.path.join(tmp, f"{name}.interleave.json")
    with open(spec, "w") as f:
        json.dump({"input": x_path, "rounds": repeat,
                   "engines": [e for e in engines if e["name"] not in r["errors"]]}, f)
    out, _ = run(["taskset", "-c", "0", PY, os.path.join(ROOT, "bench/interleave.py"), spec])
    res = json.loads(out)
    for key, v in res.items():
        if "error" in v:
            r["errors"][key] = v["error"]
            continue
        r[f"{key}_ms"] = v["cpu_ms"]
        r[f"{key}_min_ms"] = v["cpu_min_ms"]
        r[f"{key}_wall_ms"] = v["wall_ms"]
        outs[key] = np.asarray(v["output"])
    if "cstatic" in r["errors"]:
        raise RuntimeError(f"cstatic in the interleaved run: {r['errors']['cstatic']}")
    r["fast_ms"] = r.pop("cstatic_ms")
    r["fast_wall_ms"] = r.pop("cstatic_wall_ms")
    fast = outs.pop("cstatic").reshape(outs["fast"].shape)
    r["fast_eq_run"] = np.array_equal(fast, outs["fast"])
    for key in ("ort", "ort_exact", "ort8"):
        if key in outs:
            o = outs[key].reshape(-1)
            r[f"fast_eq_{key}"] = o.shape == fast.reshape(-1).shape and np.array_equal(fast.reshape(-1), o)
            r[f"sqnr_{key}"] = sqnr_db(o, fast)
    if "et" in outs:
        r["sqnr_et"] = sqnr_db(outs["et"], fast)
    r["scalar_eq_fast"] = np.array_equal(outs["scalar"], outs["fast"])
    peers = {k: r[f"{k}_ms"] for k in PEERS if f"{k}_ms" in r}
    if peers:
        r["fastest_peer"] = min(peers, key=peers.get)
        exact = {k: v for k, v in peers.items() if k != "ort"}
        if exact:
            r["fastest_exact_peer"] = min(exact, key=exact.get)
    return r


def conv_share(name, onnx_path, x_path, build, tmp, cpu_ms):
    """ResNet-18 / MobileNetV2: the share of the model's time spent in its
    convolutions (a -profile-layers=1 build's per-layer medians: wall
    clock, but their ratio is what is used) and the conv MACs, so that conv
    GMAC/s = conv MACs / (the interleaved CPU-time median × that share)."""
    cstatic = os.path.join(build, "bin/cstatic")
    d = os.path.join(tmp, f"{name}.profile")
    shutil.rmtree(d, ignore_errors=True)
    run([cstatic, "compile", onnx_path, "-o", d, "-t", "c_static_lib -profile-layers=1", "--quiet"])
    csv_path = os.path.join(tmp, f"{name}.profile.csv")
    run(["taskset", "-c", "0", cstatic, "run", d, "-i", x_path, "-o", os.path.join(tmp, "p.npy"),
         "--repeat", "15", "--profile-csv", csv_path])
    conv_ms = total_ms = conv_macs = 0.0
    with open(csv_path) as f:
        for row in csv.DictReader(f):
            t = float(row["time_ms"])
            total_ms += t
            if "conv2d" in row["kernel"]:
                conv_ms += t
                conv_macs += float(row["macs"] or 0)
    share = conv_ms / total_ms if total_ms else 0.0
    return {"share": share, "macs": conv_macs,
            "gmacs": conv_macs / (cpu_ms * share) * 1e-6 if share else 0.0}


# ---- report -------------------------------------------------------------------

def mib(v):
    return "n/a" if v is None else f"{v:.0f}"


def ms_cell(r, key):
    if f"{key}_ms" in r:
        return f"{r[key + '_ms']:.2f}"
    if key in r["errors"]:
        return "error¹" if key != "et" else "n/a²"
    return "–"


def active_peak(active, peaks):
    """(ISA name, measured GMAC/s) of the variant the dispatcher chose: a
    share is taken of the peak of the instructions that really ran."""
    isa = {"host_avx512vnni": "vnni", "host_amx": "amx"}.get(active, "avx2")
    title = {"vnni": "AVX-512 VNNI", "amx": "AMX", "avx2": "AVX2"}[isa]
    return title, peaks[isa][0]


def acceptance(active, peaks, models, shares):
    """The speed issue's acceptance points that this machine can show, each
    with the measured value."""
    isa, peak = active_peak(active, peaks)
    L = ["## Acceptance points of the speed issue, as measured in this run\n",
         "The issue's points name AVX-512 VNNI and AMX machines; the conv share is taken of the "
         f"measured peak of the ISA whose kernels ran here ({isa}); on a CPU with AVX2 only the "
         "comparable points are the ratio to the fastest peer and that share.\n",
         "| point | target (issue) | measured here | met |", "|---|---|---|---|"]

    def line(point, target, value, ok):
        L.append(f"| {point} | {target} | {value} | {'yes' if ok else 'NO'} |")

    by_name = {r["name"]: r for r in models}
    for arch in ("resnet18", "mobilenetv2"):
        for variant in ("pt2e", "ort_u8"):
            r = by_name.get(f"{arch}_{variant}")
            if r and "fastest_peer" in r:
                p = r["fastest_peer"]
                ratio = r["fast_ms"] / r[f"{p}_ms"]
                line(f"{arch}_{variant}: cstatic / fastest peer", "≤ 0.8",
                     f"{ratio:.2f} ({r['fast_ms']:.2f} ms / {PEER_TITLE[p]} {r[p + '_ms']:.2f} ms)",
                     ratio <= 0.8)
    for name, s in shares.items():
        if peak:
            pct = 100 * s["gmacs"] / peak
            line(f"{name}: conv GMAC/s share of the {isa} peak", "≥ 75 % (of VNNI's, on VNNI)",
                 f"{pct:.0f} % ({s['gmacs']:.1f} of {peak:.1f} GMAC/s)", pct >= 75)
    others = [r for r in models if not r["name"].startswith(("resnet18", "mobilenetv2"))
              and "fastest_peer" in r]
    for r in others:
        p = r["fastest_peer"]
        line(f"{r['name']}: faster than every peer", "< 1.0", f"{r['fast_ms'] / r[p + '_ms']:.2f}",
             r["fast_ms"] < r[f"{p}_ms"])
    for r in models:
        rss = [r.get(f"{k}_rss") for k in ("ort", "ort8") if r.get(f"{k}_rss")]
        if r.get("fast_rss") and rss:
            ratio = r["fast_rss"] / min(rss)
            # The model's own constants are a floor no engine goes below; where
            # they alone exceed 0.2x ORT's RSS (ViT-B: 83 of ORT's 240 MiB) the
            # ratio cannot be met, so the row also says what is beyond them.
            w = r.get("weights_mib", 0.0)
            value = (f"{ratio:.2f} ({r['fast_rss']:.0f} MiB, of which weights {w:.1f}; "
                     f"beyond the weights {(r['fast_rss'] - w) / (min(rss) - w):.2f} of ORT's)")
            line(f"{r['name']}: peak RSS / ORT's", "≤ 0.2", value, ratio <= 0.2)
    L.append("")
    return L


def report(args, cpu, conv, models, shares, started, elapsed):
    rows, active, peaks, conv_out = conv
    avx2, avx2_note, avx2_extra = peaks["avx2"]
    vnni, vnni_note, _ = peaks["vnni"]
    amx, amx_note, _ = peaks["amx"]
    L = []
    L.append("# cstatic benchmarks\n")
    L.append(f"- date: {started:%Y-%m-%d %H:%M} (local), {elapsed:.0f} s for the whole run")
    L.append(f"- CPU: {cpu}")
    L.append(f"- kernel variant that ran (the dispatcher's choice on this CPU): **{active}**")
    import onnxruntime
    et_v = "not installed"
    try:
        from importlib.metadata import version
        et_v = version("executorch")
    except Exception:
        pass
    L.append(f"- OS: {platform.platform()}; Python {platform.python_version()}; "
             f"onnxruntime {onnxruntime.__version__}; executorch {et_v}")
    L.append(f"- build: {args.build} (cstatic and the runtime as CMake built them; generated "
             "code built by `cstatic run` with `cc -O2 -std=c99`)")
    L.append("- every process is pinned to CPU 0 (`taskset -c 0`), one thread; model times are "
             f"medians of {args.repeat} interleaved rounds of thread CPU time (bench/interleave.py); "
             "the machine may be shared with other jobs: compare within a row (one process, the "
             "same rounds), not across runs\n")
    L.append("## (a) the spec's conv layer: int8 conv 64→64, 56×56, 3×3, stride 1, per-channel\n")
    peak_lines = []
    if avx2:
        peak_lines.append(f"exact AVX2 (vpmaddwd + vpaddd, the sequence of the host_avx2 kernels): "
                          f"**{avx2:.1f} GMAC/s** ({avx2_note}); for reference, ONNX Runtime's inexact "
                          f"u8s8 sequence (vpmaddubsw saturating int16 pair sums, + vpmaddwd + vpaddd): "
                          f"{avx2_extra.get('maddubs_gmacs', 0):.1f} GMAC/s")
    peak_lines.append(f"AVX-512 VNNI: " + (f"**{vnni:.1f} GMAC/s** ({vnni_note})" if vnni else vnni_note))
    peak_lines.append(f"AMX: " + (f"**{amx:.1f} GMAC/s** ({amx_note})" if amx else amx_note))
    L.append("int8 peaks of one core: " + "; ".join(peak_lines) + ".\n")
    peak = {"host_avx2": avx2, "host_avx512vnni": vnni, "host_amx": amx}
    L.append("| kernel variant | time (ms) | GMAC/s | share of its ISA's peak | speedup vs scalar | bytes |")
    L.append("|---|---:|---:|---:|---:|---|")
    for r in rows:
        base = r["variant"].split("/")[0]
        pk = peak.get(base)
        share = f"{100 * r['gmacs'] / pk:.1f} %" if pk else "–"
        L.append(f"| {r['variant']}{' (fast default)' if r['variant'] == active else ''}"
                 f"{' (scalar)' if r['variant'] == 'ref' else ''} | {r['ms']:.3f} | {r['gmacs']:.2f} | "
                 f"{share} | ×{r['speedup']:.2f} | {r['check']} |")
    L.append("\nFor scale, the spec's figures for this layer on the AM67A C7x at 1 GHz: "
             + ", ".join(f"{k} {v} ms" for k, v in SPEC_CONV_MS.items())
             + " (96× MMALIB+DMA vs scalar there).\n")
    if rows_shape:
        L.append("### ResNet-18 and MobileNetV2 layer shapes (conv_bench, per-channel FLOAT)\n")
        L.append("| model | layer | MMAC | " + " | ".join(v for v, _, _ in rows_shape[0]["variants"])
                 + " | bytes |")
        L.append("|---|---|---:|" + "---:|" * len(rows_shape[0]["variants"]) + "---|")
        for s in rows_shape:
            cells = []
            for v, ms, g in s["variants"]:
                pk = peak.get(v)
                cells.append(f"{float(ms):.3f} ms, {float(g):.0f} GMAC/s"
                             + (f" ({100 * float(g) / pk:.0f} %)" if pk else ""))
            L.append(f"| {s['model']} | {s['layer']} | {s['mmac']:.1f} | " + " | ".join(cells)
                     + f" | {'DIFFERS' if s['bad'] else 'bit-exact'} |")
        L.append("")
    if rows_dw:
        L.append("## (a2) depthwise layers: each variant's general conv2d_i8 vs its depthwise entry\n")
        L.append("MobileNetV2/V3 and ShuffleNetV2 depthwise layer shapes (c channels, input h×w, "
                 "k×k, stride s, pad k/2, per-channel FLOAT requant; bench/conv_bench.c). The "
                 "dispatcher sends depthwise convolutions (c_in = groups) to the depthwise entry.\n")
        L.append("| layer | variant | general (ms) | depthwise (ms) | speedup | bytes |")
        L.append("|---|---|---:|---:|---:|---|")
        for r in rows_dw:
            L.append(f"| {r['layer']} | {r['variant']} | {r['general']:.3f} | {r['direct']:.3f} | "
                     f"×{r['general'] / r['direct']:.2f} | {r['check']} |")
        L.append("")
    if rows_mm:
        L.append("## (a3) int8 matrix multiplies (tidsp_matmul_i8, per-column FLOAT requant)\n")
        L.append("The suite's transformer encoder (16 tokens, width 64), a ConvNeXt-style Linear "
                 "pair on [1, 56·56, 96], a ViT-B/16 MLP, a classifier head (m×k×n).\n")
        L.append("| shape | m×k×n | MMAC | " + " | ".join(v for v, _, _ in rows_mm[0]["variants"])
                 + " | bytes |")
        L.append("|---|---|---:|" + "---:|" * len(rows_mm[0]["variants"]) + "---|")
        for s in rows_mm:
            cells = []
            for v, ms, g in s["variants"]:
                pk = peak.get(v)
                cells.append(f"{float(ms):.4f} ms, {float(g):.1f} GMAC/s"
                             + (f" ({100 * float(g) / pk:.0f} %)" if pk else ""))
            L.append(f"| {s['name']} | {s['mkn']} | {s['mmac']:.1f} | " + " | ".join(cells)
                     + f" | {'DIFFERS' if s['bad'] else 'bit-exact'} |")
        L.append("")
    L.append("## (b) models: cstatic against ONNX Runtime and ExecuTorch (1 thread, interleaved)\n")
    L.append("Latency is one inference of batch 1 (224×224 inputs for the CNN suite), the median "
             "thread CPU time over the interleaved rounds (cstatic fast: the compiled model's "
             "`model_run`, loaded with ctypes; ORT and ExecuTorch through their Python APIs, which "
             "compute on the calling thread with one thread).\n")
    L.append("- **ORT default**: default `SessionOptions` (ORT_ENABLE_ALL), one intra-op thread. "
             "On a CPU without VNNI its u8s8 GEMM (vpmaddubsw) adds pairs of products in int16 with "
             "saturation: faster, and **not exact** (the int8-activation files are rewritten to "
             "uint8 and go the same way).")
    L.append("- **ORT exact**: the same with `session.x64quantprecision=1`, which makes those "
             "kernels widen to int16 first (exact). ORT 1.30 refuses this option for the PT2E files "
             "(¹: \"Attempt to replace the existing tensor\").")
    L.append("- **ORT int8-fused**: `session.qdqisint8allowed=1` (every QDQ group a fused int8 "
             "kernel), plus `x64quantprecision` for uint8 activations (tests/models/ort_ref.py): "
             "the configuration cstatic matches bit for bit.")
    L.append("- **ExecuTorch XNNPACK**: executorch 1.5.1, the same seeded module quantized by "
             "ExecuTorch's XNNPACKQuantizer (per-channel symmetric) and lowered with "
             "XnnpackPartitioner, threadpool reset to one thread (bench/et_export.py); on the pt2e "
             "rows (² elsewhere). It rounds otherwise than ORT: its output is compared by SQNR.\n")
    L.append("| model | cstatic fast | ORT default | ORT exact | ORT int8-fused | ExecuTorch XNNPACK | "
             "cstatic / fastest peer | cstatic / fastest exact peer | scalar | -mmalib=1 | "
             "RSS cstatic / ORT / ET (MiB) | fast = ORT int8 | fast = ORT exact | vs ET (SQNR) |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|")

    def eq(r, key):
        if f"fast_eq_{key}" not in r:
            return "–"
        return "bit-exact" if r[f"fast_eq_{key}"] else f"{r[f'sqnr_{key}']:.1f} dB"

    for r in models:
        if "fatal" in r:
            L.append(f"| {r['name']} | error: {r['fatal']} |" + " |" * 13)
            continue
        fp = r.get("fastest_peer")
        fe = r.get("fastest_exact_peer")
        vs = f"{r['fast_ms'] / r[fp + '_ms']:.2f} ({PEER_TITLE[fp]})" if fp else "–"
        vse = f"{r['fast_ms'] / r[fe + '_ms']:.2f} ({PEER_TITLE[fe]})" if fe else "–"
        et_sq = r.get("sqnr_et")
        L.append(f"| {r['name']} | **{r['fast_ms']:.2f}** | {ms_cell(r, 'ort')} | "
                 f"{ms_cell(r, 'ort_exact')} | {ms_cell(r, 'ort8')} | {ms_cell(r, 'et')} | {vs} | {vse} | "
                 f"{r['scalar_run_ms']:.1f} | {r['mmalib_run_ms']:.2f} | "
                 f"{mib(r.get('fast_rss'))} / {mib(r.get('ort_rss'))} / {mib(r.get('et_rss'))} | "
                 f"{eq(r, 'ort8')} | {eq(r, 'ort_exact')} | "
                 f"{'–' if et_sq is None else f'{et_sq:.1f} dB'} |")
    L.append("\nTimes in ms. \"cstatic / fastest peer\" below 1: cstatic is faster. "
             "\"scalar\" (-kernels=scalar) and \"-mmalib=1\" (the MMALIB kernels in host emulation) "
             "are medians of `cstatic run --repeat` (wall clock, 3 and 5 runs). RSS: the whole "
             "process, each engine alone (cstatic: the `cstatic run` CLI with the model, weights, "
             "arena and .npy I/O; ORT and ExecuTorch: the Python interpreter with their "
             "libraries).\n")
    errs = [(r["name"], k, v) for r in models for k, v in r.get("errors", {}).items()]
    if errs:
        L.append("Engines that did not run:\n")
        for n, k, v in errs:
            L.append(f"- {n}, {PEER_TITLE.get(k, k)}: {v}")
        L.append("")
    if shares:
        L.append("### Conv throughput inside the models\n")
        L.append("The share of the model's time in its convolutions (a -profile-layers=1 build's "
                 "per-layer medians) × the interleaved CPU-time median = the conv time; "
                 "conv GMAC/s = conv MACs / conv time.\n")
        isa, peak = active_peak(active, peaks)
        L.append(f"| model | conv MACs (G) | conv share of the time | conv GMAC/s | share of the {isa} peak |")
        L.append("|---|---:|---:|---:|---:|")
        for name, s in shares.items():
            pct = f"{100 * s['gmacs'] / peak:.0f} %" if peak else "–"
            L.append(f"| {name} | {s['macs'] * 1e-9:.2f} | {100 * s['share']:.0f} % | "
                     f"{s['gmacs']:.1f} | {pct} |")
        L.append("")
    L.extend(acceptance(active, peaks, [r for r in models if "fatal" not in r], shares))
    L.append("## (c) compile time\n")
    L.append("`cstatic compile` (ONNX → C, weights, manifest) and the first `cstatic run`, which "
             "builds the generated C with the host compiler and runs once.\n")
    L.append("| model | cstatic compile (s) | first run incl. C build (s) | "
             "scalar: compile / first run (s) |")
    L.append("|---|---:|---:|---:|")
    for r in models:
        if "fatal" in r:
            continue
        L.append(f"| {r['name']} | {r['compile_fast_s']:.2f} | {r['cc_fast_s']:.2f} | "
                 f"{r['compile_scalar_s']:.2f} / {r['cc_scalar_s']:.2f} |")
    L.append("\n## Commands\n")
    L.append("```")
    pyrel = os.path.relpath(PY, ROOT) if PY.startswith(ROOT) else PY
    L.append(f"make bench   # = {pyrel} bench/run.py")
    L.append(" ".join(shlex.quote(a) for a in [pyrel] + sys.argv))
    L.append("```\n\nEvery process it ran, in order:\n\n```")
    L.extend(commands)
    L.append("```\n\nconv_bench's own output:\n\n```")
    L.append(conv_out.rstrip())
    L.append("```")
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="CMake build directory")
    ap.add_argument("--repeat", type=int, default=21,
                    help="interleaved rounds per model (median; at least 15)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/results.md"))
    ap.add_argument("--models", nargs="*", help="ONNX files (default: every suite model found)")
    ap.add_argument("--no-et", action="store_true", help="leave ExecuTorch out")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    if args.repeat < 15:
        sys.exit("bench: --repeat must be at least 15")
    for exe in ("bin/cstatic", "bin/conv_bench"):
        if not os.path.exists(os.path.join(args.build, exe)):
            sys.exit(f"bench: {os.path.join(args.build, exe)} not found (build it: make build)")
    use_et = not args.no_et and et_available()
    if not args.no_et and not use_et:
        print("bench: executorch is not importable; its column stays empty (make bench installs it)",
              file=sys.stderr)
    started, t0 = datetime.datetime.now(), time.perf_counter()
    cpu = cpu_model()
    with tempfile.TemporaryDirectory(prefix="cstatic-bench-") as tmp:
        print("(a) conv layer ...", flush=True)
        conv = conv_layer(args.build, args.repeat, tmp)
        work = []
        spec = os.path.join(tmp, "spec_conv64.onnx")
        x = spec_conv_model(spec)
        np.save(os.path.join(tmp, "spec_x.npy"), x)
        work.append(("spec_conv64 (1 layer)", spec, os.path.join(tmp, "spec_x.npy"), None))
        work.extend(transformer_models(tmp))
        for m in find_models(args.models):
            xp = model_input(m, tmp)
            if xp is None:
                print(f"  skip {m}: no <arch>_inputs.npy beside it", flush=True)
                continue
            base = os.path.basename(m)[:-5]
            # ExecuTorch exports the same seeded module (bench/et_export.py)
            work.append((base, m, xp, suite_arch(m) if base.endswith("_pt2e") else None))
        models, shares = [], {}
        for name, path, xp, et_arch in work:
            print(f"(b) {name} ...", flush=True)
            try:
                r = bench_model(name.split(" ")[0], path, xp, et_arch, args.build, args.repeat, tmp, use_et)
                r["name"] = name
                models.append(r)
                if name in ("resnet18_pt2e", "mobilenetv2_pt2e"):
                    shares[name] = conv_share(name, path, xp, args.build, tmp, r["fast_ms"])
            except (RuntimeError, KeyError, ValueError) as e:
                models.append({"name": name, "fatal": str(e).strip().splitlines()[0][:200]})
                print(f"  {e}", file=sys.stderr, flush=True)
        text = report(args, cpu, conv, models, shares, started, time.perf_counter() - t0)
    with open(args.out, "w") as f:
        f.write(text)
    print(text)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
