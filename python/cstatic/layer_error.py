"""The per-layer error report: where, layer by layer, cstatic (and
-mmalib=1) departs from the float network and from ONNX Runtime's int8.

    python -m cstatic.layer_error MODEL.onnx --inputs X.npy [--float FLOAT.onnx]
        [-t "c_static_lib" -t "c_static_lib -mmalib=1"] [--top N] [--order worst|graph]

or from Python: report = cstatic.layer_error.layer_errors(model, x, ...);
print(report.table()).

A layer is a QuantizeLinear output computed at run time (the int8 output of
a fused DQ -> op -> Q group, of a pooling, an add, ...). The QDQ model runs
three ways with every such tensor as an extra output:
- float: the float model given (its tensor of the Q's input name, the name
  ORT's quantize_static keeps), or else the QDQ model with every activation
  Q -> DQ pair removed (float activations, the weights as dequantized: the
  reference a PT2E export has without its float module);
- ORT int8 (session.qdqisint8allowed=1; exact int8 sums with uint8 too);
- cstatic, per target, compiled with `--outputs all-quantized` (fused groups
  stay fused: their output is the layer's). The model's own outputs are
  checked equal to a compile without the extra outputs.
Per layer and target: SQNR of the dequantized output vs float (dB), the
share of outputs equal to ORT's int8, the largest |difference| from ORT
in LSB and the mean signed difference (a systematic error: pooling does
not average it away as it does rounding noise). Worst first: the layers whose SQNR falls furthest below ORT's.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Optional, Sequence

import numpy as np

from . import model as _model

DEFAULT_TARGETS = ("c_static_lib", "c_static_lib -mmalib=1")


@dataclass
class Layer:
    """One QuantizeLinear output: name, the node computing its float input
    (op type and name), its scale and zero point (per tensor, or per axis
    as arrays), and the measures."""
    name: str
    float_name: str
    op: str
    node: str
    index: int  # position in node order
    scale: np.ndarray
    zero_point: np.ndarray
    axis: int = 1
    ort_db: float = float("nan")
    db: dict = field(default_factory=dict)        # target -> SQNR vs float (dB)
    equal: dict = field(default_factory=dict)     # target -> share equal to ORT int8
    max_lsb: dict = field(default_factory=dict)   # target -> max |y - ORT| in LSB
    mean_lsb: dict = field(default_factory=dict)  # target -> mean (y - ORT) in LSB: a bias, not noise


@dataclass
class LayerReport:
    layers: list
    targets: tuple
    model_outputs_unchanged: dict  # target -> the model's own outputs identical to a plain compile
    float_reference: str

    def worst(self, target: Optional[str] = None) -> list:
        """Layers sorted by SQNR loss vs ORT's int8 (target dB - ORT dB),
        the largest loss first; NaN (no float reference) last."""
        t = target or self.targets[-1]

        def key(l):
            d = l.db.get(t, float("nan")) - l.ort_db
            return (np.isnan(d), d if not np.isnan(d) else 0.0, l.equal.get(t, 1.0))
        return sorted(self.layers, key=key)

    def first_divergence(self, target: Optional[str] = None) -> Optional[Layer]:
        """The first layer, in node order, whose output differs from ORT's."""
        t = target or self.targets[-1]
        return next((l for l in self.layers if l.equal.get(t, 1.0) < 1.0), None)

    def table(self, top: Optional[int] = None, order: str = "worst") -> str:
        rows = self.worst() if order == "worst" else list(self.layers)
        rows = rows[:top] if top else rows
        short = [_short(t) for t in self.targets]
        head = ["#", "layer (Q output)", "op", "ORT dB"] + [f"{s} dB" for s in short] + \
               [f"{s} =ORT" for s in short] + [f"{s} max LSB" for s in short] + \
               [f"{s} mean LSB" for s in short]
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for l in rows:
            cells = [str(l.index), l.name, f"{l.op} '{l.node}'", f"{l.ort_db:.2f}"]
            cells += [f"{l.db.get(t, float('nan')):.2f}" for t in self.targets]
            cells += [f"{l.equal.get(t, float('nan')):.4f}" for t in self.targets]
            cells += [f"{l.max_lsb.get(t, 0):.0f}" for t in self.targets]
            cells += [f"{l.mean_lsb.get(t, 0):+.3f}" for t in self.targets]
            lines.append("| " + " | ".join(cells) + " |")
        notes = [f"float reference: {self.float_reference}"]
        for t in self.targets:
            f = self.first_divergence(t)
            notes.append(f"{_short(t)}: first layer differing from ORT int8: "
                         + (f"#{f.index} {f.name} ({f.op} '{f.node}', {f.equal[t]:.4f} equal)" if f else "none")
                         + ("" if self.model_outputs_unchanged.get(t, True)
                            else "; WARNING: the extra outputs changed the model's own outputs"))
        return "\n".join(lines + [""] + notes)


def _short(target: str) -> str:
    rest = target.replace("c_static_lib", "").strip()
    return rest or "cstatic"


# ------------------------------------------------------------------ the model

def _const_names(g) -> set:
    names = {t.name for t in g.initializer}
    for n in g.node:
        if n.op_type == "Constant":
            names.update(n.output)
    return names


def _layers(m) -> list:
    """The model's activation QuantizeLinear nodes as Layers, node order."""
    from onnx import numpy_helper
    g = m.graph
    consts = _const_names(g)
    init = {t.name: numpy_helper.to_array(t) for t in g.initializer}
    for n in g.node:
        if n.op_type == "Constant":
            for a in n.attribute:
                if a.name == "value":
                    init[n.output[0]] = numpy_helper.to_array(a.t)
    producer = {o: n for n in g.node for o in n.output}
    out = []
    for i, n in enumerate(g.node):
        if n.op_type != "QuantizeLinear" or n.input[0] in consts:
            continue
        src = producer.get(n.input[0])
        if src is not None and all(x in consts or not x for x in src.input):
            continue  # computed from constants only: folded, not a layer
        scale = np.asarray(init.get(n.input[1], np.float32(1)), np.float32)
        zp = np.asarray(init[n.input[2]]) if len(n.input) > 2 and n.input[2] in init else np.uint8(0)
        axis = next((a.i for a in n.attribute if a.name == "axis"), 1)
        out.append(Layer(n.output[0], n.input[0], src.op_type if src is not None else "input",
                         (src.name or src.output[0]) if src is not None else n.input[0], i, scale,
                         np.asarray(zp), axis))
    return out


def _with_outputs(m, names, dtypes):
    """A copy of model m with the tensors `names` (numpy dtypes) added as
    graph outputs (shape left to the runtime)."""
    import onnx
    from onnx import helper
    m2 = onnx.ModelProto()
    m2.CopyFrom(m)
    have = {o.name for o in m2.graph.output}
    for name, dt in zip(names, dtypes):
        if name not in have:
            m2.graph.output.append(helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dt)), None))
    return m2


def _strip_activation_qdq(m):
    """The QDQ model with every activation Q -> DQ pair removed: the DQ's
    consumers read the Q's float input. Weight DQs stay (dequantized
    weights); a Q whose output something else reads stays too."""
    import onnx
    m2 = onnx.ModelProto()
    m2.CopyFrom(m)
    g = m2.graph
    consts = _const_names(g)
    q_in = {n.output[0]: n.input[0] for n in g.node if n.op_type == "QuantizeLinear" and n.input[0] not in consts}
    nodes = list(g.node)  # index by position: protobuf hands out new wrappers on each access
    alias, drop = {}, set()
    for i, n in enumerate(nodes):
        if n.op_type == "DequantizeLinear" and n.input[0] in q_in:
            alias[n.output[0]] = q_in[n.input[0]]
            drop.add(i)
    graph_out = {o.name for o in g.output}
    readers = {}
    for i, n in enumerate(nodes):
        if i not in drop:
            for x in n.input:
                readers.setdefault(x, []).append(n.op_type)
    keep = []
    for i, n in enumerate(nodes):
        if i in drop:
            continue
        if (n.op_type == "QuantizeLinear" and n.output[0] in q_in and n.output[0] not in graph_out
                and all(r == "DequantizeLinear" for r in readers.get(n.output[0], []))):
            continue
        c = onnx.NodeProto()
        c.CopyFrom(n)
        keep.append(c)
    def resolve(x):  # Q(DQ(Q(x))) chains (a requantization): follow to the float source
        while x in alias:
            x = alias[x]
        return x

    for n in keep:
        for k, x in enumerate(n.input):
            n.input[k] = resolve(x)
    del g.node[:]
    g.node.extend(keep)
    for o in g.output:
        if o.name in alias:  # a DQ output that is a graph output: an Identity keeps the name
            g.node.append(onnx.helper.make_node("Identity", [resolve(o.name)], [o.name]))
    return m2


def _run_ort(m, x, names, config):
    """ONNX Runtime on model m with `names` as outputs, one batch item per
    run (models are exported for batch 1), stacked."""
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.log_severity_level = 3  # the outputs added leave initializers unused: not worth a warning each
    for k, v in (config or {}).items():
        so.add_session_config_entry(k, v)
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    inp = sess.get_inputs()[0]
    b = inp.shape[0] if isinstance(inp.shape[0], int) and inp.shape[0] > 0 else len(x)
    outs = [sess.run(names, {inp.name: x[i:i + b]}) for i in range(0, len(x), b)]
    return [np.concatenate([o[j] for o in outs]) for j in range(len(names))]


def _ort_int8_config(m) -> dict:
    """ORT's native int8 QDQ path, and exact sums for uint8 activations
    (x86 without VNNI pairs products in saturating int16 otherwise)."""
    import onnx
    zp_type = {t.name: t.data_type for t in m.graph.initializer}
    u8 = any(n.op_type == "QuantizeLinear" and (len(n.input) < 3 or not n.input[2]
             or zp_type.get(n.input[2]) == onnx.TensorProto.UINT8) for n in m.graph.node)
    cfg = {"session.qdqisint8allowed": "1"}
    if u8:
        cfg["session.x64quantprecision"] = "1"
    return cfg


def _dequant(l: Layer, y: np.ndarray) -> np.ndarray:
    s, z = l.scale.astype(np.float64), l.zero_point.astype(np.float64)
    if s.ndim == 1 and s.size > 1:  # per axis
        shape = [1] * y.ndim
        shape[l.axis % y.ndim] = s.size
        s, z = s.reshape(shape), z.reshape(shape)
    return (y.astype(np.float64) - z) * s


def _sqnr(ref: np.ndarray, y: np.ndarray) -> float:
    ref = ref.astype(np.float64).ravel()
    err = ((y.ravel() - ref) ** 2).sum()
    return float(10 * np.log10(max((ref ** 2).sum(), 1e-30) / max(err, 1e-30)))


def layer_errors(model, inputs: np.ndarray, *, float_model=None, targets: Sequence[str] = DEFAULT_TARGETS,
                 ort_config: Optional[dict] = None, workdir=None) -> LayerReport:
    """The per-layer report of the QDQ `model` (path or ModelProto) on
    `inputs` (the model's one input, batches stacked on axis 0) for each
    cstatic target. float_model: the float ONNX model the QDQ one was
    quantized from (tensor names as ORT's quantize_static keeps them);
    None: the QDQ model with its activation Q/DQ pairs removed."""
    import onnx
    m = onnx.load(os.fspath(model)) if isinstance(model, (str, os.PathLike)) else model
    x = np.ascontiguousarray(inputs)
    layers = _layers(m)
    if not layers:
        raise ValueError("the model has no activation QuantizeLinear: nothing to compare layer by layer")
    with tempfile.TemporaryDirectory(prefix="cstatic-layers-") as tmp:
        work = os.fspath(workdir) if workdir else tmp
        os.makedirs(work, exist_ok=True)
        src = os.path.join(work, "model.onnx")
        onnx.save(m, src)
        own = [o.name for o in m.graph.output]
        cs, unchanged = {}, {}
        for k, t in enumerate(targets):
            mk = _model.compile(src, t, out=os.path.join(work, f"t{k}_layers"), outputs="all-quantized")
            ys = mk.run(x)
            ys = ys if isinstance(ys, list) else [ys]
            cs[t] = {info.name: y for info, y in zip(mk.outputs, ys)}
            plain = _model.compile(src, t, out=os.path.join(work, f"t{k}"))
            yp = plain.run(x)
            yp = yp if isinstance(yp, list) else [yp]
            unchanged[t] = all(np.array_equal(a, cs[t][info.name]) for info, a in zip(plain.outputs, yp))
        layers = [l for l in layers if all(l.name in cs[t] for t in targets)]
        dtypes = [cs[targets[0]][l.name].dtype for l in layers]
        q_ort = _run_ort(_with_outputs(m, [l.name for l in layers], dtypes), x, [l.name for l in layers],
                         ort_config if ort_config is not None else _ort_int8_config(m))
        if float_model is not None:
            fm = onnx.load(os.fspath(float_model)) if isinstance(float_model, (str, os.PathLike)) else float_model
            ref_name = "the float model"
        else:
            fm = _strip_activation_qdq(m)
            ref_name = "the QDQ model without its activation Q/DQ pairs (weights dequantized)"
        known = {v for n in fm.graph.node for v in n.output} | {i.name for i in fm.graph.input}
        fl_names = [l.float_name for l in layers if l.float_name in known]
        fl = dict(zip(fl_names, _run_ort(_with_outputs(fm, fl_names, [np.float32] * len(fl_names)), x,
                                         fl_names, {}))) if fl_names else {}
    for l, yo in zip(layers, q_ort):
        ref = fl.get(l.float_name)
        if ref is not None and ref.shape != yo.shape:
            ref = None
        if ref is not None:
            l.ort_db = _sqnr(ref, _dequant(l, yo))
        for t in targets:
            y = cs[t][l.name].reshape(yo.shape)
            if ref is not None:
                l.db[t] = _sqnr(ref, _dequant(l, y))
            d = y.astype(np.int64) - yo.astype(np.int64)
            l.equal[t] = float(np.mean(d == 0))
            l.max_lsb[t] = float(np.abs(d).max()) if d.size else 0.0
            l.mean_lsb[t] = float(d.mean()) if d.size else 0.0
    return LayerReport(layers, tuple(targets), unchanged, ref_name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m cstatic.layer_error",
                                 description="Per-layer error of cstatic vs the float network and ORT int8.")
    ap.add_argument("model", help="the QDQ ONNX model")
    ap.add_argument("--inputs", required=True, help=".npy of the model's input, batches stacked on axis 0")
    ap.add_argument("--float", dest="float_model", help="the float ONNX model it was quantized from")
    ap.add_argument("-t", "--target", action="append", help="cstatic target (repeatable; default: "
                    + " and ".join(repr(t) for t in DEFAULT_TARGETS) + ")")
    ap.add_argument("--top", type=int, default=0, help="show only the N worst layers")
    ap.add_argument("--order", choices=("worst", "graph"), default="worst")
    a = ap.parse_args(argv)
    try:
        x = np.load(a.inputs)
    except (OSError, ValueError) as exc:
        print(f"cstatic.layer_error: error: cannot read {a.inputs}: {exc}", file=sys.stderr)
        return 2
    try:
        r = layer_errors(a.model, x, float_model=a.float_model, targets=tuple(a.target or DEFAULT_TARGETS))
    except (_model.CompileError, ValueError, OSError) as exc:
        print(f"cstatic.layer_error: error: {exc}", file=sys.stderr)
        return 1
    print(r.table(a.top or None, a.order))
    return 0


if __name__ == "__main__":
    sys.exit(main())
