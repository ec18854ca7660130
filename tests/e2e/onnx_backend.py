"""ONNX's backend node tests (Debian's libonnx-testdata) through cstatic.

One node test is a directory holding model.onnx and test_data_set_*/ with
input_*.pb and output_*.pb (TensorProto). A test is ours when every op of
its graph is one the README claims (the ops with runtime kernels, and the
ones folded in constant subgraphs). Inputs that a static compiler needs as
constants (Reshape's shape, Slice's starts, Pad's pads, Clip's bounds, …:
PARAMS) are frozen into initializers from the test's own data; the others
are fed at run time. Outputs are compared as ONNX's own backend runner
compares them: floats with rtol 1e-3 and atol 1e-7 (the expected values
come from numpy, not from a particular CPU kernel), integers and bools
exactly.

Used by tests/e2e/test_onnx_backend.py, and runnable alone:
    python tests/e2e/onnx_backend.py [NAME_SUBSTRING...]
prints one line per test and the pass rate.
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = "/usr/share/libonnx-testdata/data/node"
CSTATIC = os.environ.get("CSTATIC_BIN", os.path.join(ROOT, "build", "bin", "cstatic"))

# The README's op list: ops with runtime kernels ...
KERNEL_OPS = frozenset("""
    Add And AveragePool BatchNormalization Cast Clip Concat Constant Conv
    ConvTranspose Cos
    DequantizeLinear Div Dropout Equal Erf Exp Expand Flatten Gather GatherND Gelu Gemm
    GlobalAveragePool Greater GreaterOrEqual HardSigmoid HardSwish Identity
    LayerNormalization LeakyRelu Less LessOrEqual MatMul Max MaxPool Min Mul
    Neg Not Or Pad Pow PRelu QuantizeLinear Reciprocal ReduceL2 ReduceMean Relu Reshape
    Resize ScatterND Sigmoid Sin Slice Softmax Split Sqrt Squeeze Sub Tanh Tile
    Transpose Unsqueeze Upsample Where Xor""".split())
# ... and ops evaluated at compile time only (no runtime kernel yet).
CONST_OPS = frozenset("""
    ConstantOfShape Range Shape Size""".split())

# op → input indices a static compiler needs as constants.
PARAMS = {
    "Reshape": (1,), "Slice": (1, 2, 3, 4), "Pad": (1, 2, 3), "Clip": (1, 2),
    "Squeeze": (1,), "Unsqueeze": (1,), "Split": (1,), "ReduceMean": (1,), "ReduceL2": (1,),
    "Expand": (1,), "Dropout": (1, 2), "QuantizeLinear": (1, 2),
    "DequantizeLinear": (1, 2), "Tile": (1,), "ConstantOfShape": (0,),
    "Range": (0, 1, 2), "Upsample": (1,), "Resize": (1, 2, 3),
}


def node_tests():
    """Names of the node tests whose ops the README claims (sorted)."""
    if not os.path.isdir(DATA):
        return []
    names = []
    for name in sorted(os.listdir(DATA)):
        path = os.path.join(DATA, name, "model.onnx")
        if not os.path.exists(path):
            continue
        ops = {n.op_type for n in onnx.load(path).graph.node}
        if ops and ops <= KERNEL_OPS | CONST_OPS:
            names.append(name)
    return names


def _load_pbs(pattern):
    out = []
    for p in sorted(glob.glob(pattern), key=lambda s: int(s.rsplit("_", 1)[1].split(".")[0])):
        t = onnx.TensorProto()
        with open(p, "rb") as f:
            t.ParseFromString(f.read())
        out.append(numpy_helper.to_array(t))
    return out


def _freeze(model, values):
    """Graph inputs that a PARAMS position reads, directly or through other
    nodes (a window function's size through Cast and Range), become
    initializers holding the test's value; returns the names of the inputs
    still fed at run time."""
    g = model.graph
    inits = {i.name for i in g.initializer}
    runtime = [i.name for i in g.input if i.name not in inits]
    producer = {o: n for n in g.node for o in n.output}
    frozen, stack = set(), []
    for n in g.node:
        stack += [n.input[j] for j in PARAMS.get(n.op_type, ()) if j < len(n.input) and n.input[j]]
    seen = set()
    while stack:
        name = stack.pop()
        if name in seen:
            continue
        seen.add(name)
        if name in runtime:
            frozen.add(name)
        elif name in producer:
            stack += [i for i in producer[name].input if i]
    for name in frozen:
        g.initializer.append(numpy_helper.from_array(values[name], name))
    keep = [i for i in g.input if i.name not in frozen]
    del g.input[:]
    g.input.extend(keep)
    return [name for name in runtime if name not in frozen]


def _close(got, want):
    if got.shape != want.shape:
        return f"shape {got.shape}, expected {want.shape}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype}, expected {want.dtype}"
    if want.dtype.kind == "f":
        if np.allclose(got, want, rtol=1e-3, atol=1e-7, equal_nan=True):
            return None
        bad = ~np.isclose(got, want, rtol=1e-3, atol=1e-7, equal_nan=True)
        return f"{int(bad.sum())} of {want.size} values differ (max |diff| {np.max(np.abs(got - want)[bad]):.3g})"
    return None if np.array_equal(got, want) else f"{int((got != want).sum())} of {want.size} values differ"


def _first_line(text):
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("warning:"):
            return line.replace("cstatic: error: ", "")
    return text.strip()


def run(name, tmp):
    """Run node test `name` in directory `tmp`; returns None if it passes,
    else one line saying why not."""
    src = os.path.join(DATA, name)
    model = onnx.load(os.path.join(src, "model.onnx"))
    sets = sorted(glob.glob(os.path.join(src, "test_data_set_*")))
    if not sets:
        return "no test data"
    for vi in list(model.graph.input) + list(model.graph.output):
        if vi.type.WhichOneof("value") != "tensor_type":
            return f"'{vi.name}' is a {vi.type.WhichOneof('value')}, not a tensor"
    for k, ds in enumerate(sets):
        inputs = _load_pbs(os.path.join(ds, "input_*.pb"))
        outputs = _load_pbs(os.path.join(ds, "output_*.pb"))
        m = onnx.ModelProto()
        m.CopyFrom(model)
        names = [i.name for i in m.graph.input if i.name not in {t.name for t in m.graph.initializer}]
        if len(names) != len(inputs):
            return f"{len(inputs)} inputs in the data, {len(names)} in the graph"
        values = dict(zip(names, inputs))
        fed = _freeze(m, values)
        path = os.path.join(tmp, f"{name}_{k}.onnx")
        onnx.save(m, path)
        out_dir = os.path.join(tmp, f"{name}_{k}")
        p = subprocess.run([CSTATIC, "compile", path, "-o", out_dir, "-q"], capture_output=True, text=True)
        if p.returncode:
            return "compile: " + _first_line(p.stderr)
        args = []
        for j, nm in enumerate(fed):
            f = os.path.join(tmp, f"{name}_{k}_in{j}.npy")
            np.save(f, values[nm])
            args += ["--input", f]
        outs = []
        for j in range(len(outputs)):
            outs.append(os.path.join(tmp, f"{name}_{k}_out{j}.npy"))
            args += ["--output", outs[-1]]
        p = subprocess.run([CSTATIC, "run", out_dir, *args], capture_output=True, text=True)
        if p.returncode:
            return "run: " + _first_line(p.stderr)
        for j, want in enumerate(outputs):
            why = _close(np.load(outs[j]), want)
            if why:
                return f"output {j}: {why}"
    return None


def main(argv):
    names = [n for n in node_tests() if not argv or any(a in n for a in argv)]
    tmp = tempfile.mkdtemp(prefix="cs_onnx_backend_")
    failed = 0
    try:
        for name in names:
            why = run(name, tmp)
            failed += why is not None
            print(f"{'PASS' if why is None else 'FAIL'} {name}{'' if why is None else ': ' + why}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(names) - failed} of {len(names)} pass")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
