"""C7xMMAQuantizer: a PT2E quantizer whose QDQ graphs the MMALIB passes match.

The spec's entry point (spec/mmalib-integration.txt), with cstatic in place
of TVM's from_exported_program:

    import torch
    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, convert_pt2e
    from cstatic import C7xMMAQuantizer, export_qdq_onnx

    quantizer = C7xMMAQuantizer(dtype="int8")      # or "int16"
    captured = torch.export.export(model.eval(), example_inputs).module()
    prepared = prepare_pt2e(captured, quantizer)
    for x in calibration_batches:                  # calibrate
        prepared(x)
    quantized = convert_pt2e(prepared)
    export_qdq_onnx(quantized, example_inputs, "model.onnx")
    # cstatic compile model.onnx -o out -t "c_static_lib -mmalib=1"

(quantize_pt2e(model, example_inputs, calibration, "c7x") below does
the capture, prepare, calibration and convert in one call; its default,
"generic", is the XNNPACK int8 quantizer for targets without MMALIB.)

Every quantized layer then has the pattern the offload passes match:

    dequantize(data, d_scale, d_zp)
      -> op(float, dequantize(weight, w_scale, w_zp=0)) -> [+ float bias]
      -> [relu | hardtanh] -> quantize(output, o_scale, o_zp)

What is annotated (aten ops of the captured graph, matched by node.target:
torch.export no longer keeps the source_fn metadata that partition-based
annotators rely on):
- conv2d (depthwise and grouped included) and linear, each with a following
  relu / relu6 (hardtanh) fused when the op has no other user: the
  activation's output carries the output quantization, so the activation
  sits inside the pattern. BatchNorm is already folded into the conv by
  prepare_pt2e.
- add (both operands activations: the residual add, either operand order)
  with a fused relu; mul of two activations (squeeze-and-excitation).
- cat: every input and the output share one quantization (one requantization
  per branch, then a plain concatenation).
- max_pool2d, avg/adaptive-avg pool, mean, flatten/view/reshape, permute,
  transpose, squeeze, and an unfused relu/hardtanh share their input's
  quantization (max pool must: the MMALIB max pool requires equal qparams).

Quantization, per the spec:
- int8: weights int8 symmetric per output channel ([-127, 127], zero point
  0, axis 0); activations int8 per-tensor affine in [-128, 127]
  (HistogramObserver). Affine, not symmetric, because a fused ReLU must be
  the int8 saturation the MMALIB kernels apply: the observed range [0, max]
  then gives o_zp = -128.
- int16: weights int16 symmetric per output channel ([-32767, 32767]);
  activations int16 per-tensor SYMMETRIC (zero point 0, [-32767, 32767]):
  the MMALIB int16 passes accept only d_zp = o_zp = 0. MinMaxObserver: a
  histogram search over 2^16 bins buys nothing at 16 bits and is slow.
- bias: float (the compiler folds it into the integer bias).
"""

import logging

import torch
from torch.fx import Node

# torchao logs about optional CUDA extensions it cannot load on a CPU build
logging.getLogger("torchao").setLevel(logging.ERROR)

from torchao.quantization.pt2e import (HistogramObserver, MinMaxObserver,  # noqa: E402
                                       PerChannelMinMaxObserver)
from torchao.quantization.pt2e.quantizer import (QuantizationAnnotation,  # noqa: E402
                                                 QuantizationSpec, Quantizer,
                                                 SharedQuantizationSpec)

DTYPES = ("int8", "int16")

_aten = torch.ops.aten
_CONV = (_aten.conv2d.default,)
_LINEAR = (_aten.linear.default,)
_ADD = (_aten.add.Tensor, _aten.add_.Tensor)
_MUL = (_aten.mul.Tensor, _aten.mul_.Tensor)
_CAT = (_aten.cat.default,)
# activations fused into the preceding conv / linear / add
_ACT = (_aten.relu.default, _aten.relu_.default, _aten.hardtanh.default,
        _aten.hardtanh_.default)
# ops whose output takes their input's quantization
_SHARE = _ACT + (
    _aten.max_pool2d.default, _aten.avg_pool2d.default,
    _aten.adaptive_avg_pool2d.default, _aten.mean.dim, _aten.flatten.using_ints,
    _aten.view.default, _aten.reshape.default, _aten.permute.default,
    _aten.transpose.int, _aten.squeeze.dim, _aten.contiguous.default,
    _aten.clone.default,
)

_KEY = "quantization_annotation"


def _specs(dtype):
    """(activation, weight) QuantizationSpecs of one dtype (see the module
    docstring for why each choice). The observers keep their default eps
    (float32 epsilon): a floor like XNNPACK's 2^-12 would clamp every int16
    scale (a range of 4 over 32767 steps is 1.2e-4 < 2^-12) and the small
    weight scales of int8 channels."""
    if dtype == "int8":
        act = QuantizationSpec(dtype=torch.int8, quant_min=-128, quant_max=127,
                               qscheme=torch.per_tensor_affine,
                               observer_or_fake_quant_ctr=HistogramObserver)
        wmax, wdtype = 127, torch.int8
    else:
        act = QuantizationSpec(dtype=torch.int16, quant_min=-32767, quant_max=32767,
                               qscheme=torch.per_tensor_symmetric,
                               observer_or_fake_quant_ctr=MinMaxObserver)
        wmax, wdtype = 32767, torch.int16
    weight = QuantizationSpec(dtype=wdtype, quant_min=-wmax, quant_max=wmax,
                              qscheme=torch.per_channel_symmetric, ch_axis=0,
                              observer_or_fake_quant_ctr=PerChannelMinMaxObserver)
    return act, weight


def _annotated(node):
    a = node.meta.get(_KEY)
    return a is not None and a._annotated


def _annotate(node, inputs=None, output=None):
    node.meta[_KEY] = QuantizationAnnotation(input_qspec_map=dict(inputs or {}),
                                             output_qspec=output, _annotated=True)


def _is_float_activation(arg):
    """A float tensor computed by the graph (not a constant, not a scalar)."""
    if not isinstance(arg, Node) or arg.op == "get_attr":
        return False
    val = arg.meta.get("val")
    return isinstance(val, torch.Tensor) and val.dtype == torch.float32


def _fused_act(node):
    """The relu/hardtanh consuming `node`'s output, if it is the only user."""
    if len(node.users) != 1:
        return None
    user = next(iter(node.users))
    return user if user.op == "call_function" and user.target in _ACT else None


class C7xMMAQuantizer(Quantizer):
    """PT2E quantizer for cstatic's MMALIB offload (-mmalib=1).

    dtype: "int8" or "int16" (see the module docstring for the schemes).
    """

    def __init__(self, dtype="int8"):
        super().__init__()
        if dtype not in DTYPES:
            raise ValueError(f"C7xMMAQuantizer: dtype must be one of "
                             f"{', '.join(repr(d) for d in DTYPES)}, not {dtype!r}")
        self.dtype = dtype
        self.act, self.weight = _specs(dtype)
        self.annotated = 0  # nodes annotated by the last annotate()

    # -- Quantizer interface

    def annotate(self, model):
        graph = model.graph
        self.annotated = 0
        for node in list(graph.nodes):
            if node.op != "call_function" or _annotated(node):
                continue
            if node.target in _CONV or node.target in _LINEAR:
                self._weighted(node)
            elif node.target in _ADD or node.target in _MUL:
                self._binary(node)
            elif node.target in _CAT:
                self._cat(node)
        # sharing ops last, in graph order, so a chain (pool -> flatten)
        # takes the quantization of the op that produced it
        for node in graph.nodes:
            if node.op == "call_function" and node.target in _SHARE and not _annotated(node):
                self._share(node)
        return model

    def validate(self, model):
        """Raise if nothing was annotated although the graph has ops this
        quantizer handles (a capture that changed the aten op names would
        otherwise give a silently float model)."""
        handled = _CONV + _LINEAR + _ADD
        ops = [n for n in model.graph.nodes if n.op == "call_function" and n.target in handled]
        if ops and not any(_annotated(n) for n in ops):
            raise ValueError(f"C7xMMAQuantizer annotated none of the {len(ops)} conv2d/linear/"
                             f"add nodes (first: {ops[0].name}, target {ops[0].target}); "
                             f"was the model captured with torch.export.export(...).module()?")

    # -- annotators

    def _weighted(self, node):
        """conv2d / linear [-> relu | hardtanh]: data and weight quantized,
        bias left float, output quantized after the fused activation."""
        x, w = node.args[0], node.args[1]
        if not _is_float_activation(x) or not isinstance(w, Node):
            return
        act = _fused_act(node)
        if act is None:
            _annotate(node, {x: self.act, w: self.weight}, self.act)
            self.annotated += 1
        else:
            _annotate(node, {x: self.act, w: self.weight})
            _annotate(act, output=self.act)
            self.annotated += 2

    def _binary(self, node):
        """add / mul of two activations [-> relu] (add(x, skip) and
        add(skip, x) alike: both operands get the activation spec)."""
        a, b = node.args[0], node.args[1]
        if not (_is_float_activation(a) and _is_float_activation(b)):
            return
        inputs = {a: self.act, b: self.act}
        act = _fused_act(node) if node.target in _ADD else None
        if act is None or act.target not in (_aten.relu.default, _aten.relu_.default):
            _annotate(node, inputs, self.act)
            self.annotated += 1
        else:
            _annotate(node, inputs)
            _annotate(act, output=self.act)
            self.annotated += 2

    def _cat(self, node):
        """cat: all inputs and the output share the first input's edge."""
        tensors = node.args[0]
        if not tensors or not all(_is_float_activation(t) for t in tensors):
            return
        first = tensors[0]
        shared = SharedQuantizationSpec((first, node))
        inputs = {t: (self.act if t is first else shared) for t in tensors}
        _annotate(node, inputs, shared)
        self.annotated += 1

    def _share(self, node):
        """Output (and input) share the producer's output quantization."""
        prev = node.args[0] if node.args else None
        if not isinstance(prev, Node) or not _annotated(prev):
            return
        if prev.meta[_KEY].output_qspec is None:
            return
        shared = SharedQuantizationSpec(prev)
        _annotate(node, {prev: shared}, shared)
        self.annotated += 1


def generic_quantizer():
    """The quantizer of preset "generic": PyTorch's XNNPACK quantizer with
    its symmetric per-channel config -- int8 per-tensor affine activations
    (HistogramObserver), int8 symmetric per-channel weights in [-127, 127]
    (axis 0), float bias. What the model suite and the digits example use;
    every layer it quantizes compiles to an integer kernel that matches
    ONNX Runtime bit for bit. Its home is ExecuTorch; torchao keeps the
    copy used here (torchao is needed for PT2E anyway), ExecuTorch's when
    a torchao without it is installed."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "XNNPACKQuantizer is deprecated"
        try:
            from torchao.testing.pt2e._xnnpack_quantizer import (
                XNNPACKQuantizer, get_symmetric_quantization_config)
        except ImportError:
            from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
                XNNPACKQuantizer, get_symmetric_quantization_config)
        return XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))


QUANTIZERS = ("generic", "c7x", "c7x-int16")


def _quantizer(q):
    """A Quantizer instance, or one of QUANTIZERS by name."""
    if not isinstance(q, str):
        return q
    if q == "generic":
        return generic_quantizer()
    if q == "c7x":
        return C7xMMAQuantizer("int8")
    if q == "c7x-int16":
        return C7xMMAQuantizer("int16")
    raise ValueError(f"quantizer must be a PT2E Quantizer or one of "
                     f"{', '.join(map(repr, QUANTIZERS))}, not {q!r}")


def quantize_pt2e(model, example_inputs, calibration, quantizer="generic"):
    """The PT2E flow in one call: capture, prepare_pt2e, calibrate,
    convert_pt2e; returns the converted module (in eval mode), ready for
    export_qdq_onnx.

    model: an nn.Module (captured from a deep copy, so nothing PT2E does to
    the weights reaches it); example_inputs: tuple of example tensors;
    calibration: a tensor [n, ...] run through the model example_inputs[0]'s
    batch size at a time; quantizer: "generic" (int8, for any target: see
    generic_quantizer), "c7x" / "c7x-int16" (C7xMMAQuantizer, the patterns
    the -mmalib=1 offload matches), or any PT2E Quantizer instance.
    """
    import copy

    from torchao.quantization.pt2e import move_exported_model_to_eval
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    quantizer = _quantizer(quantizer)
    gm = torch.export.export(copy.deepcopy(model).eval(), example_inputs).module()
    gm = prepare_pt2e(gm, quantizer)
    b = example_inputs[0].shape[0]
    with torch.no_grad():
        for i in range(0, len(calibration), b):
            gm(calibration[i:i + b])
    gm = convert_pt2e(gm)
    move_exported_model_to_eval(gm)
    return gm
