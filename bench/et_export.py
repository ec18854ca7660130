"""Quantize one of the suite's seeded modules with ExecuTorch's own flow and
write the program ExecuTorch runs (XNNPACK delegate), for `make bench`.

usage: et_export.py NAME OUT.pte

NAME is a suite architecture (tests/models/archs.py: resnet18,
mobilenetv2, …) or "transformer" (tests/models/transformer.py, 2 blocks).
The module, its seed, its example input and its calibration inputs are
the ones the suite's PT2E files come from (tests/models/generate.py,
transformer.generate); the quantizer is ExecuTorch's XNNPACKQuantizer
with its per-channel symmetric config (the one the suite's pt2e variant
uses, from torchao's copy), prepare/convert by torchao's PT2E, then
torch.export, to_edge_transform_and_lower with XnnpackPartitioner and
to_executorch. ExecuTorch's integer arithmetic differs from ONNX Runtime's
(its requantization rounds otherwise), so its outputs are compared with
cstatic's by SQNR, not bit for bit.
"""
import os
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
sys.path.insert(0, os.path.join(ROOT, "python"))


def module_and_data(name):
    """(eval module, example tuple, calibration tensor [n, ...])."""
    import torch
    if name == "transformer":
        import transformer
        model = transformer.build_model(seed=0)
        calib = torch.from_numpy(transformer.sample_inputs(32, 1))
        return model, (calib[:1],), calib
    import archs
    import generate
    model = archs.build(name, generate.WEIGHT_SEED)
    example = (archs.sample_images(1, generate.INPUT_SEED),)
    calib = archs.sample_images(generate.NUM_CALIB, generate.CALIB_SEED)
    return model, example, calib


def main():
    if len(sys.argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    name, out = sys.argv[1], sys.argv[2]
    import torch
    torch.set_num_threads(1)
    warnings.simplefilter("ignore")
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    from executorch.exir import to_edge_transform_and_lower
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    t0 = time.time()
    model, example, calib = module_and_data(name)
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(torch.export.export(model, example).module(), quantizer)
    for i in range(len(calib)):  # one sample at a time, like the suite
        prepared(calib[i:i + 1])
    converted = convert_pt2e(prepared)
    t1 = time.time()
    program = to_edge_transform_and_lower(torch.export.export(converted, example),
                                          partitioner=[XnnpackPartitioner()]).to_executorch()
    tmp = out + ".tmp"
    with open(tmp, "wb") as f:
        f.write(program.buffer)
    os.replace(tmp, out)
    print(f"et_export: {name}: quantized in {t1 - t0:.1f} s, lowered in {time.time() - t1:.1f} s "
          f"-> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
