"""cstatic benchmarks, side by side in one run (`make bench`).

  (a) the spec's single conv layer (int8 conv 64->64, 56x56, 3x3,
      per-channel): every kernel variant (bench/conv_bench.c), as GMAC/s and
      as a share of this CPU's int8 peaks (bench/vnni_peak.c, bench/amx_peak.c); (a2) the
      depthwise layers of MobileNetV2/V3 and ShuffleNetV2, each variant's
      general conv against its depthwise entry (also conv_bench);
  (b) every suite model found (and the spec layer as a QDQ model): cstatic
      with -kernels=scalar (the reference loops), cstatic fast (the default)
      and ONNX Runtime (default session options, and with every QDQ group
      fused as int8), one thread each: median latency, ratios, peak RSS of
      each process, and whether the outputs agree;
  (c) compile time per model.

Writes bench/results.md (or --out) with the CPU, the date and the exact
commands. Every process runs alone, one after the other; the medians are
over --repeat runs after one warm-up.

usage: .venv/bin/python bench/run.py [--build DIR] [--repeat N] [--out FILE]
                                     [--models GLOB ...]
"""
import argparse
import datetime
import glob
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
MODEL_DIRS = ["/tmp/lead_models", os.path.join(ROOT, "tests/models/out")]
# The spec's figures for the same layer on the AM67A C7x at 1 GHz
# (spec/mmalib-integration.txt "Performance").
SPEC_CONV_MS = {"TVM loop-based (C7x scalar)": 45.2, "MMALIB (MMA, DDR-resident)": 1.67,
                "MMALIB + L2 DMA prefetch": 0.48}

commands = []  # every command run, for the report
rows_dw = []  # conv_bench's depthwise layers


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
    isa = [f for f in ("avx2", "avx512f", "avx512_vnni", "amx_int8") if flags and f in flags.group(1).split()]
    return (f"{name.group(1).strip() if name else 'unknown'}, {os.cpu_count()} logical CPUs, "
            f"{mhz.group(1).strip() + ' MHz, ' if mhz else ''}{' '.join(isa)}")


# ---- (a) the spec's conv layer ------------------------------------------------

def conv_layer(build, repeat, tmp):
    out, _ = run([os.path.join(build, "bin/conv_bench"), str(max(repeat, 5))])
    rows = []
    for m in re.finditer(r"^\s+(\S+)\s+([0-9.]+) ms\s+([0-9.]+) GMAC/s\s+x([0-9.]+) vs ref\s+(.*)$", out, re.M):
        rows.append({"variant": m.group(1), "ms": float(m.group(2)), "gmacs": float(m.group(3)),
                     "speedup": float(m.group(4)), "check": m.group(5).strip()})
    dw = []
    for m in re.finditer(r"^dw (c\d+ \d+x\d+ k\d+ s\d+)\s+(\S+)\s+general\s+([0-9.]+) ms\s+depthwise\s+"
                         r"([0-9.]+) ms\s+x([0-9.]+)\s+(.*)$", out, re.M):
        dw.append({"layer": m.group(1), "variant": m.group(2), "general": float(m.group(3)),
                   "direct": float(m.group(4)), "check": m.group(6).strip()})
    rows_dw.clear()
    rows_dw.extend(dw)
    active = re.search(r"active variant: (\S+)", out)
    peaks = {"vnni": measure_peak("vnni_peak", ["-mavx512f", "-mavx512vnni"], tmp,
                                  "bench/vnni_peak.c, 12 independent vpdpbusd zmm chains, best of 5"),
             "amx": measure_peak("amx_peak", [], tmp,
                                 "bench/amx_peak.c, 6 independent tdpbssd tile chains, best of 5")}
    if peaks["vnni"][0] is None:
        peaks["vnni"] = (234.0, "not measurable here; ~234 GMAC/s/thread as the issue states")
    return rows, (active.group(1) if active else "?"), peaks, out


def measure_peak(name, flags, tmp, how):
    """(GMAC/s, note) of one of the peak programs, or (None, why not)."""
    exe = os.path.join(tmp, name)
    cc = os.environ.get("CC", "cc")
    try:
        run([cc, "-O2", "-std=c99", *flags, os.path.join(ROOT, f"bench/{name}.c"), "-o", exe])
        pout, _ = run([exe])
        return float(re.search(r"peak_gmacs: ([0-9.]+)", pout).group(1)), f"measured: {how}"
    except (RuntimeError, AttributeError) as e:
        return None, f"not measurable here ({str(e).splitlines()[0]})"


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
    transformer.py), quantized by ORT (int8 and uint8 activations; its PT2E
    variant trips an ORT_ENABLE_ALL optimizer bug in ORT's default session,
    see tests/e2e/test_transformer.py)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import transformer
    d = os.path.join(tmp, "transformer")
    os.makedirs(d, exist_ok=True)
    transformer.generate(d)
    x = os.path.join(d, "x.npy")
    np.save(x, transformer.sample_inputs(1, seed=5))
    return [(f"transformer_{v} (2 blocks)", os.path.join(d, f"{v}.onnx"), x) for v in ("ort_s8", "ort_u8")]


def model_input(model_path, tmp):
    """One batch of the suite's inputs (<arch>_inputs.npy beside the model)."""
    arch = os.path.basename(model_path).split("_")[0]
    npy = os.path.join(os.path.dirname(model_path), f"{arch}_inputs.npy")
    if not os.path.exists(npy):
        return None
    x = np.load(npy)[:1].astype(np.float32)
    path = os.path.join(tmp, f"{arch}_x.npy")
    np.save(path, x)
    return path


def bench_model(name, onnx_path, x_path, build, repeat, tmp):
    cstatic = os.path.join(build, "bin/cstatic")
    r = {"name": name}
    outs = {}
    targets = {"scalar": "c_static_lib -kernels=scalar", "fast": "c_static_lib",
               "mmalib": "c_static_lib -mmalib=1"}  # the MMALIB path, emulated on the host
    for form, target in targets.items():
        d = os.path.join(tmp, f"{name}.{form}")
        shutil.rmtree(d, ignore_errors=True)
        _, wall = run([cstatic, "compile", onnx_path, "-o", d, "-t", target, "--quiet"])
        r[f"compile_{form}_s"] = wall
        y = os.path.join(tmp, f"{name}.{form}.y.npy")
        # The first run builds lib*.c with the host C compiler (cached after).
        _, wall = run([cstatic, "run", d, "-i", x_path, "-o", y])
        r[f"cc_{form}_s"] = wall
        out, _, rss = run_rss([cstatic, "run", d, "-i", x_path, "-o", y, "--repeat", str(repeat)])
        r[f"{form}_ms"] = latency(out)
        r[f"{form}_rss"] = rss
        outs[form] = np.load(y)
    # ORT as a user runs it (default session options, one thread), then with
    # every QDQ group fused as int8 (the configuration cstatic matches)
    for mode, key in (("default", "ort"), ("int8", "ort8")):
        y = os.path.join(tmp, f"{name}.{key}.y.npy")
        out, _, rss = run_rss([PY, os.path.join(ROOT, "bench/ort_run.py"), onnx_path, x_path, y,
                               str(repeat), mode])
        r[f"{key}_ms"] = latency(out)
        r[f"{key}_rss"] = rss
        outs[key] = np.load(y)
        r[f"fast_eq_{key}"] = (outs["fast"].shape == outs[key].shape
                               and np.array_equal(outs["fast"], outs[key]))
        r[f"max_abs_diff_{key}"] = float(np.max(np.abs(outs["fast"].astype(np.float64) - outs[key])))
    r["scalar_eq_fast"] = np.array_equal(outs["scalar"], outs["fast"])
    return r


# ---- report -------------------------------------------------------------------

def mib(v):
    return "n/a" if v is None else f"{v:.0f}"


def acceptance(rows, active, vnni, amx, models):
    """The speed issue's acceptance points, each with the measured value."""
    L = ["## Acceptance points of the speed issue, as measured in this run\n",
         "| point | target | measured | met |", "|---|---|---|---|"]

    def line(point, target, value, ok):
        L.append(f"| {point} | {target} | {value} | {'yes' if ok else 'NO'} |")

    fast = next((r for r in rows if r["variant"] == active), None)
    if fast:
        line(f"spec conv: {active} vs scalar", "≥ ×96", f"×{fast['speedup']:.1f}", fast["speedup"] >= 96)
        share = 100 * fast["gmacs"] / vnni
        line(f"spec conv: {active} share of the VNNI int8 peak", "≥ 50 %", f"{share:.1f} %", share >= 50)
        if amx:
            amx_share = 100 * fast["gmacs"] / amx
            line(f"spec conv: {active} share of the AMX int8 peak", "(≥ 50 % if the peak is AMX's)",
                 f"{amx_share:.1f} %", amx_share >= 50)
    by_name = {r["name"]: r for r in models if "error" not in r}
    for name in sorted(n for n in by_name if n.startswith("resnet18")):
        r = by_name[name]
        ratio = r["scalar_ms"] / r["fast_ms"]
        line(f"{name}: fast vs scalar", "≥ ×47", f"×{ratio:.1f}", ratio >= 47)
    for arch in ("resnet18", "mobilenetv2"):
        for variant, limit in (("pt2e", 0.6), ("ort_u8", 1.2)):
            r = by_name.get(f"{arch}_{variant}")
            if r:
                ratio = r["fast_ms"] / r["ort_ms"]
                line(f"{arch}_{variant}: cstatic fast latency / ORT latency", f"≤ {limit}",
                     f"{ratio:.2f} ({r['fast_ms']:.2f} / {r['ort_ms']:.2f} ms)", ratio <= limit)
    L.append("")
    return L


def report(args, cpu, conv, models, started, elapsed):
    rows, active, peaks, conv_out = conv
    vnni, vnni_note = peaks["vnni"]
    amx, amx_note = peaks["amx"]
    L = []
    L.append("# cstatic benchmarks\n")
    L.append(f"- date: {started:%Y-%m-%d %H:%M} (local), {elapsed:.0f} s for the whole run")
    L.append(f"- CPU: {cpu}")
    L.append(f"- OS: {platform.platform()}; Python {platform.python_version()}; "
             f"onnxruntime {__import__('onnxruntime').__version__}")
    L.append(f"- build: {args.build} (cstatic and the runtime as CMake built them; generated "
             "code built by `cstatic run` with `cc -O2 -std=c99`)")
    L.append(f"- every number is a median of {args.repeat} runs after one warm-up, single thread, "
             "one process at a time; the machine (2 vCPUs) is shared with other jobs, and runs of this script minutes apart differed by up to 2× on some rows: compare within a row, not across runs\n")
    L.append("## (a) the spec's conv layer: int8 conv 64→64, 56×56, 3×3, stride 1, per-channel\n")
    L.append(f"int8 peak of one core with the vector unit (AVX-512 VNNI): **{vnni:.1f} GMAC/s** ({vnni_note}); "
             + (f"with the matrix unit (AMX): **{amx:.1f} GMAC/s** ({amx_note})." if amx else
                f"AMX: {amx_note}.") + "\n")
    L.append("| kernel variant | time (ms) | GMAC/s | share of VNNI peak | share of AMX peak | "
             "speedup vs scalar | bytes |")
    L.append("|---|---:|---:|---:|---:|---:|---|")
    for r in rows:
        amx_share = f"{100 * r['gmacs'] / amx:.1f} %" if amx else "n/a"
        L.append(f"| {r['variant']}{' (fast default)' if r['variant'] == active else ''}"
                 f"{' (scalar)' if r['variant'] == 'ref' else ''} | {r['ms']:.3f} | {r['gmacs']:.2f} | "
                 f"{100 * r['gmacs'] / vnni:.1f} % | {amx_share} | ×{r['speedup']:.2f} | {r['check']} |")
    L.append("\nFor scale, the spec's figures for this layer on the AM67A C7x at 1 GHz: "
             + ", ".join(f"{k} {v} ms" for k, v in SPEC_CONV_MS.items())
             + " (96× MMALIB+DMA vs scalar there).\n")
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
    L.append("## (b) models: cstatic scalar vs cstatic fast vs ONNX Runtime (1 thread)\n")
    L.append("Latency is one inference of batch 1 (224×224 inputs for the suite models). "
             "Peak RSS is the whole process (cstatic: the `cstatic run` CLI with the model, "
             "weights, arena and .npy I/O; ORT: the Python interpreter, numpy and onnxruntime).\n")
    L.append("ORT is ONNX Runtime as a user runs it: default `SessionOptions` "
             "(ORT_ENABLE_ALL) with `intra_op_num_threads = 1`. \"ORT int8\" adds "
             "`session.qdqisint8allowed = 1`, which runs every QDQ group fused as int8 — the "
             "configuration cstatic matches bit for bit (without it, ORT on x86 does not run "
             "int8-activation QDQ groups as fused int8 kernels, so for the _s8 and _pt2e models it "
             "times a different — often much faster — computation, and some of their outputs differ "
             "from the int8-fused ones: last column).\n")
    L.append("\"-mmalib=1 ms\" is the same file compiled for the MMALIB offload and run in host "
             "emulation (the mmalib_* kernels on the fast conv/matmul, bit-exact with their "
             "scalar reference; not ORT's numbers, see the offload issue).\n")
    L.append("| model | scalar ms | fast ms | -mmalib=1 ms | ORT ms | ORT int8 ms | fast vs scalar | "
             "fast vs ORT | fast vs ORT int8 | RSS scalar / fast / ORT (MiB) | scalar = fast | "
             "fast = ORT int8 | fast = ORT |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---|---|---|")

    def eq(r, key):
        return "bit-exact" if r[f"fast_eq_{key}"] else f"max abs diff {r[f'max_abs_diff_{key}']:.3g}"

    def vs(r, key):
        return f"×{r[key + '_ms'] / r['fast_ms']:.2f} ({'faster' if r['fast_ms'] < r[key + '_ms'] else 'slower'})"

    for r in models:
        if "error" in r:
            L.append(f"| {r['name']} | error: {r['error']} | | | | | | | | | | | |")
            continue
        L.append(f"| {r['name']} | {r['scalar_ms']:.2f} | {r['fast_ms']:.2f} | {r['mmalib_ms']:.2f} | "
                 f"{r['ort_ms']:.2f} | "
                 f"{r['ort8_ms']:.2f} | ×{r['scalar_ms'] / r['fast_ms']:.2f} | {vs(r, 'ort')} | "
                 f"{vs(r, 'ort8')} | "
                 f"{mib(r['scalar_rss'])} / {mib(r['fast_rss'])} / {mib(r['ort_rss'])} | "
                 f"{'yes' if r['scalar_eq_fast'] else 'NO'} | {eq(r, 'ort8')} | {eq(r, 'ort')} |")
    L.append("\n\"fast vs ORT\" is ORT's time divided by cstatic fast's (above 1: cstatic is faster).\n")
    L.extend(acceptance(rows, active, vnni, amx, models))
    L.append("## (c) compile time\n")
    L.append("`cstatic compile` (ONNX → C, weights, manifest) and the first `cstatic run`, which "
             "builds the generated C with the host compiler and runs once.\n")
    L.append("| model | cstatic compile (s) | first run incl. C build (s) | "
             "scalar: compile / first run (s) |")
    L.append("|---|---:|---:|---:|")
    for r in models:
        if "error" in r:
            continue
        L.append(f"| {r['name']} | {r['compile_fast_s']:.2f} | {r['cc_fast_s']:.2f} | "
                 f"{r['compile_scalar_s']:.2f} / {r['cc_scalar_s']:.2f} |")
    L.append("\n## Commands\n")
    L.append("```")
    L.append(f"make bench   # = {os.path.relpath(PY, ROOT) if PY.startswith(ROOT) else PY} bench/run.py")
    L.append(" ".join(shlex.quote(a) for a in [os.path.relpath(PY, ROOT) if PY.startswith(ROOT) else PY]
                      + sys.argv))
    L.append("```\n\nEvery process it ran, in order:\n\n```")
    L.extend(commands)
    L.append("```\n\nconv_bench's own output:\n\n```")
    L.append(conv_out.rstrip())
    L.append("```")
    return "\n".join(L) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="CMake build directory")
    ap.add_argument("--repeat", type=int, default=7, help="timed runs per measurement (median)")
    ap.add_argument("--out", default=os.path.join(ROOT, "bench/results.md"))
    ap.add_argument("--models", nargs="*", help="ONNX files (default: every suite model found)")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    for exe in ("bin/cstatic", "bin/conv_bench"):
        if not os.path.exists(os.path.join(args.build, exe)):
            sys.exit(f"bench: {os.path.join(args.build, exe)} not found (build it: make build)")
    started, t0 = datetime.datetime.now(), time.perf_counter()
    cpu = cpu_model()
    with tempfile.TemporaryDirectory(prefix="cstatic-bench-") as tmp:
        print("(a) conv layer ...", flush=True)
        conv = conv_layer(args.build, args.repeat, tmp)
        work = []
        spec = os.path.join(tmp, "spec_conv64.onnx")
        x = spec_conv_model(spec)
        np.save(os.path.join(tmp, "spec_x.npy"), x)
        work.append(("spec_conv64 (1 layer)", spec, os.path.join(tmp, "spec_x.npy")))
        work.extend(transformer_models(tmp))
        for m in find_models(args.models):
            xp = model_input(m, tmp)
            if xp is None:
                print(f"  skip {m}: no <arch>_inputs.npy beside it", flush=True)
                continue
            work.append((os.path.basename(m)[:-5], m, xp))
        models = []
        for name, path, xp in work:
            print(f"(b) {name} ...", flush=True)
            try:
                models.append(bench_model(name.split(" ")[0], path, xp, args.build, args.repeat, tmp))
                models[-1]["name"] = name
            except RuntimeError as e:
                models.append({"name": name, "error": str(e).splitlines()[0]})
                print(f"  {e}", file=sys.stderr, flush=True)
        text = report(args, cpu, conv, models, started, time.perf_counter() - t0)
    with open(args.out, "w") as f:
        f.write(text)
    print(text)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
