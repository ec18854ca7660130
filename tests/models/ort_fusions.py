#!/usr/bin/env python3
"""Survey what ONNX Runtime makes of each suite model (data for ORT_FUSIONS.md).

    python tests/models/ort_fusions.py --dir tests/models/out [--models ...]
           [--variants ...] [--int8-allowed]

For every DIR/<model>_<variant>.onnx it prints
1. the QDQ structure of the file itself: what sits between a Conv/Gemm and
   its QuantizeLinear, Q and DQ fan-out, Concat scale sharing, how Linear
   layers look, zero points, bias form, the last node;
2. the op histogram of ORT's optimized graph at the default level
   (ORT_ENABLE_ALL, 1 thread; saved through optimized_model_filepath);
3. every compute node ORT left in float at ORT_ENABLE_EXTENDED (the level
   where the QDQ fusions run, before the hardware-specific NCHWc / NHWC
   layout rewrites of level ALL), grouped by a reason read off the graph.
--int8-allowed sets session.qdqisint8allowed=1 (ORT otherwise keeps int8
activations only on ARM and converts them to uint8 on x86).
"""

import argparse
import collections
import os
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402
import ort_ref  # noqa: E402

QDQ = ("QuantizeLinear", "DequantizeLinear")
# ops that only move or select data; their float form is not a "float kernel"
MOVERS = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Split",
          "Slice", "Gather", "Concat", "Identity", "Shape", "Constant"}


class Graph:
    def __init__(self, model):
        self.g = model.graph
        self.inits = {t.name: numpy_helper.to_array(t) for t in self.g.initializer}
        for n in self.g.node:  # Constant nodes count as initializers
            if n.op_type == "Constant":
                self.inits[n.output[0]] = numpy_helper.to_array(n.attribute[0].t)
        self.producer = {o: n for n in self.g.node for o in n.output}
        self.consumers = collections.defaultdict(list)
        for n in self.g.node:
            for i in n.input:
                if i:
                    self.consumers[i].append(n)
        self.outputs = {o.name for o in self.g.output}

    def prod(self, name):
        return self.producer.get(name)

    def cons(self, name):
        return self.consumers.get(name, [])

    def qparams(self, node):
        """(scale, zero point, zp dtype) of a Q/DQ node with constant params."""
        s = self.inits.get(node.input[1])
        z = self.inits.get(node.input[2]) if len(node.input) > 2 else None
        return s, z, (z.dtype if z is not None else np.dtype("uint8"))


def _fmt_counter(c):
    return ", ".join(f"{k} x{v}" for k, v in sorted(c.items(), key=lambda kv: (-kv[1], str(kv[0]))))


def source_structure(model):
    """Facts about the QDQ file as written (before ORT touches it)."""
    G = Graph(model)
    lines = []
    nodes = G.g.node
    qs = [n for n in nodes if n.op_type == "QuantizeLinear"]
    dqs = [n for n in nodes if n.op_type == "DequantizeLinear"]
    w_dq = [n for n in dqs if n.input[0] in G.inits and G.inits[n.input[0]].dtype in (np.int8, np.uint8)]
    b_dq = [n for n in dqs if n.input[0] in G.inits and G.inits[n.input[0]].dtype == np.int32]
    a_dq = [n for n in dqs if n not in w_dq and n not in b_dq]
    lines.append(f"Q {len(qs)}, DQ {len(dqs)} (activation {len(a_dq)}, weight {len(w_dq)}, int32 bias {len(b_dq)})")

    # activation zero points / dtypes
    zps = collections.Counter()
    for q in qs:
        _, z, dt = G.qparams(q)
        zps[(str(dt), int(z) if z is not None and z.size == 1 else "vec")] += 1
    dts = collections.Counter(k[0] for k in zps.elements())
    lines.append("activation Q dtype: " + _fmt_counter(dts)
                 + f"; zero points: {len(zps)} distinct, "
                 + "most common " + ", ".join(f"{z}(x{n})" for (d, z), n in zps.most_common(4)))
    wz = set()
    axes = collections.Counter()
    for d in w_dq:
        _, z, dt = G.qparams(d)
        wz.update(np.unique(z).tolist() if z is not None else [0])
        ax = [a.i for a in d.attribute if a.name == "axis"]
        w = G.inits[d.input[0]]
        axes[f"{w.ndim}D axis={ax[0] if ax else 1}" + (" per-channel" if np.size(G.inits[d.input[1]]) > 1 else " per-tensor")] += 1
    lines.append(f"weights: {_fmt_counter(axes)}; weight zero points {sorted(wz)}")

    # Q / DQ fan-out
    q_fan = collections.Counter(len(G.cons(q.output[0])) for q in qs)
    dq_fan = collections.Counter(len(G.cons(d.output[0])) for d in a_dq)
    lines.append(f"Q consumers per Q: {_fmt_counter(q_fan)}; consumers per activation DQ: {_fmt_counter(dq_fan)}")

    # what follows each Conv/Gemm/MatMul until its Q
    tails = collections.Counter()
    for n in nodes:
        if n.op_type not in ("Conv", "Gemm", "MatMul"):
            continue
        chain, cur = [n.op_type], n
        while True:
            users = G.cons(cur.output[0])
            if cur.output[0] in G.outputs:
                chain.append("<graph output>")
                break
            if len(users) != 1:
                chain.append(f"<{len(users)} consumers: {'/'.join(sorted(u.op_type for u in users))}>")
                break
            cur = users[0]
            chain.append(cur.op_type)
            if cur.op_type in QDQ or len(chain) > 4:
                break
        tails["->".join(chain)] += 1
    lines.append("after a weighted op: " + _fmt_counter(tails))

    # bias form
    bias = collections.Counter()
    for n in nodes:
        if n.op_type in ("Conv", "Gemm") and len(n.input) > 2 and n.input[2]:
            p = G.prod(n.input[2])
            if n.input[2] in G.inits:
                bias[f"{n.op_type}: float initializer"] += 1
            elif p is not None and p.op_type == "DequantizeLinear":
                bias[f"{n.op_type}: DQ({G.inits[p.input[0]].dtype})"] += 1
            else:
                bias[f"{n.op_type}: {p.op_type if p else '?'}"] += 1
    if bias:
        lines.append("bias: " + _fmt_counter(bias))

    # Linear layers
    lin = collections.Counter()
    for n in nodes:
        if n.op_type == "Gemm":
            attrs = {a.name: onnx.helper.get_attribute_value(a) for a in n.attribute}
            lin[f"Gemm(transB={attrs.get('transB', 0)}, beta={attrs.get('beta', 1.0)})"] += 1
        elif n.op_type == "MatMul":
            p = G.prod(n.input[1])
            lin["MatMul(B from " + (p.op_type if p else "init") + ")"] += 1
    if lin:
        lines.append("linear layers: " + _fmt_counter(lin))

    # Concat: input DQ (s, zp) vs output Q (s, zp)
    cc = collections.Counter()
    for n in nodes:
        if n.op_type != "Concat":
            continue
        ins = [G.prod(i) for i in n.input]
        users = G.cons(n.output[0])
        if not all(p is not None and p.op_type == "DequantizeLinear" for p in ins) or \
                len(users) != 1 or users[0].op_type != "QuantizeLinear":
            cc["not DQ..->Concat->Q"] += 1
            continue
        qs_ = [G.qparams(p) for p in ins] + [G.qparams(users[0])]
        same = all(np.array_equal(a[0], qs_[-1][0]) and np.array_equal(a[1], qs_[-1][1]) for a in qs_[:-1])
        cc["all inputs share the output's (s, zp)" if same else "inputs' (s, zp) differ from output"] += 1
    if cc:
        lines.append("Concat: " + _fmt_counter(cc))

    # scale-preserving ops: same (s, zp) on both sides?
    keep = collections.Counter()
    for n in nodes:
        if n.op_type not in ("MaxPool", "Reshape", "Transpose", "Flatten", "Split", "ReduceMean", "AveragePool", "GlobalAveragePool"):
            continue
        p = G.prod(n.input[0])
        users = G.cons(n.output[0])
        if p is None or p.op_type != "DequantizeLinear" or not users or any(u.op_type != "QuantizeLinear" for u in users):
            keep[f"{n.op_type}: not DQ->op->Q"] += 1
            continue
        a, b = G.qparams(p), G.qparams(users[0])
        same = np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
        keep[f"{n.op_type}: {'same' if same else 'different'} (s, zp)"] += 1
    if keep:
        lines.append("DQ->op->Q: " + _fmt_counter(keep))

    # last node(s)
    for o in G.g.output:
        p = G.prod(o.name)
        chain = []
        while p is not None and len(chain) < 3:
            chain.insert(0, p.op_type)
            p = G.prod(p.input[0])
        lines.append(f"output '{o.name}': ...->" + "->".join(chain))
    return lines


def ort_optimize(path, level, int8_allowed, out):
    config = {"session.qdqisint8allowed": "1"} if int8_allowed else None
    ort_ref.session(path, 1, config, optimized_path=out, level=level)
    return onnx.load(out)


def _int_tensors(G):
    """Names of the tensors an ORT-optimized graph holds as 8/16-bit ints:
    outputs of Q / QLinear* / QGemm and of data movers and MaxPool fed by
    them (ORT dropped their Q/DQ pair). Relies on topological node order."""
    ints = set()
    for n in G.g.node:
        t = n.op_type
        if t == "QuantizeLinear" or t.startswith("QLinear") or t == "QGemm":
            ints.update(n.output)
        elif (t in MOVERS or t in ("MaxPool", "NhwcMaxPool")) and n.input \
                and n.input[0] in ints:
            ints.update(n.output)
    return ints


def float_reasons(model):
    """Group the compute nodes of an ORT-optimized graph that run in float,
    by their inputs' quantized type and what consumes their output; also
    list the ops ORT runs directly on integers with Q/DQ dropped."""
    G = Graph(model)
    ints = _int_tensors(G)
    out, on_ints = collections.Counter(), collections.Counter()
    for n in G.g.node:
        t = n.op_type
        if t in QDQ or t.startswith("QLinear") or t == "QGemm" or n.domain not in ("", "ai.onnx"):
            continue
        acts = [i for i in n.input if i and i not in G.inits]
        acts = [i for i in acts if not (G.prod(i) is not None and G.prod(i).op_type == "DequantizeLinear"
                                        and G.prod(i).input[0] in G.inits)]  # weight/bias DQ
        if acts and all(i in ints for i in acts):
            on_ints[t] += 1
            continue
        if t in MOVERS:
            continue
        ins = []
        for i in acts:
            p = G.prod(i)
            if p is not None and p.op_type == "DequantizeLinear":
                _, _, dt = G.qparams(p)
                src = G.prod(p.input[0])
                fan = len(G.cons(src.output[0])) if src is not None and src.op_type == "QuantizeLinear" else 0
                ins.append(f"DQ {dt}" + (f" (its Q feeds {fan} DQs)" if fan > 1 else ""))
            else:
                ins.append("float from " + (p.op_type if p else "graph input"))
        users = G.cons(n.output[0])
        if n.output[0] in G.outputs:
            tail = "graph output"
        elif len(users) == 1 and users[0].op_type == "QuantizeLinear":
            q = users[0]
            tail = f"Q {G.qparams(q)[2]}" + (f" (feeds {len(G.cons(q.output[0]))} DQs)"
                                              if len(G.cons(q.output[0])) > 1 else "")
        else:
            tail = "/".join(sorted(u.op_type for u in users)) or "nothing"
        out[f"{t} [{'; '.join(ins) or '-'}] -> {tail}"] += 1
    return out, on_ints


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True)
    ap.add_argument("--models", default=",".join(generate.archs.ARCHS))
    ap.add_argument("--variants", default=",".join(generate.VARIANTS))
    ap.add_argument("--int8-allowed", action="store_true",
                    help="set session.qdqisint8allowed=1")
    args = ap.parse_args(argv)
    import onnxruntime as ort
    print(f"onnxruntime {ort.__version__}" + (", session.qdqisint8allowed=1" if args.int8_allowed else ""))
    L = ort.GraphOptimizationLevel
    with tempfile.TemporaryDirectory() as tmp:
        for m in args.models.split(","):
            for v in args.variants.split(","):
                path = generate.model_path(args.dir, m, v)
                if not os.path.exists(path):
                    print(f"\n## {m} {v}: {path} missing (run generate.py)")
                    continue
                print(f"\n## {m} {v}")
                for line in source_structure(onnx.load(path)):
                    print("  " + line)
                full = ort_optimize(path, L.ORT_ENABLE_ALL, args.int8_allowed,
                                    os.path.join(tmp, "all.onnx"))
                hist = collections.Counter(
                    (n.domain + ":" if n.domain not in ("", "ai.onnx") else "") + n.op_type
                    for n in full.graph.node)
                print("  ORT_ENABLE_ALL ops: " + _fmt_counter(hist))
                ext = ort_optimize(path, L.ORT_ENABLE_EXTENDED, args.int8_allowed,
                                   os.path.join(tmp, "ext.onnx"))
                hist = collections.Counter(n.op_type for n in ext.graph.node)
                print("  ORT_ENABLE_EXTENDED ops: " + _fmt_counter(hist))
                reasons, on_ints = float_reasons(ext)
                if on_ints:
                    print("  on integers, Q/DQ dropped: " + _fmt_counter(on_ints))
                if reasons:
                    print("  float nodes left (EXTENDED):")
                    for k, c in sorted(reasons.items(), key=lambda kv: -kv[1]):
                        print(f"    {c:3d} x {k}")


if __name__ == "__main__":
    main()
