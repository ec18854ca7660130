#!/usr/bin/env python3
"""DenseNet-, EfficientNet-, Swin-, ConvNeXt- and RegNet-style networks from
torchvision's own definitions, ORT-quantized (quantize_static, QDQ, int8 and uint8
activations), for the ops-and-opsets tests (tests/e2e/test_torchvision.py).

    python tests/models/tv_nets.py --out DIR [--nets densenet_s,...]

writes DIR/tv_<net>_{float,ort_s8,ort_u8}.onnx and DIR/tv_<net>_inputs.npy
(4 seeded inputs); existing files are kept (DIR is a cache). Nets:
    densenet_s       torchvision DenseNet, growth 8, blocks (2, 2): BatchNorm
                     after every Concat
    efficientnet_s   torchvision EfficientNet, three MBConv stages: SiLU
                     gates, squeeze-excitation
    swin_s           torchvision SwinTransformer, embed 16, depths (2, 2),
                     window 4: shifted-window masks, relative position bias
    convnext_s       torchvision ConvNeXt, channels (16, 32), blocks (2, 1):
                     7x7 depthwise, LayerNorm between permutes, Linear MLPs
                     on [1, H, W, C] with GELU, layer scale
    densenet121, efficientnet_b0, swin_t, convnext_tiny, regnet_y_400mf
                     the full torchvision models (RegNetY: grouped 3x3
                     convs of group width 8, squeeze-excitation; the
                     issue 16 table's hardest case for MMALIB)
Weights are seeded and untrained; batch-norm statistics and layer-norm
affine parameters are drawn away from the identity so that the folded
convolutions and the normalisations are not trivial, and ConvNeXt's layer
scale (1e-6 at init, which would make every block vanish under int8
quantization of the residual sum) is drawn from [0.1, 0.5].
"""

import argparse
import os
import sys
from functools import partial

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

NETS = ("densenet_s", "efficientnet_s", "swin_s", "convnext_s", "densenet121", "efficientnet_b0", "swin_t",
        "convnext_tiny", "regnet_y_400mf")
SMALL = NETS[:4]
NUM_INPUTS, NUM_CALIB = 4, 8


def build(name):
    """(eval-mode module, input side) of net `name`, seeded."""
    import torch

    import tv
    torch.manual_seed(0)
    models = tv.torchvision().models
    if name == "densenet_s":
        m, hw = models.DenseNet(growth_rate=8, block_config=(2, 2), num_init_features=16, bn_size=2,
                                num_classes=10), 32
    elif name == "efficientnet_s":
        from torchvision.models.efficientnet import EfficientNet, MBConvConfig
        conf = partial(MBConvConfig, width_mult=1.0, depth_mult=1.0)
        m, hw = EfficientNet([conf(1, 3, 1, 16, 8, 1), conf(4, 3, 2, 8, 16, 2), conf(4, 5, 2, 16, 24, 1)],
                             dropout=0.2, num_classes=10), 32
    elif name == "swin_s":
        m, hw = models.SwinTransformer(patch_size=[4, 4], embed_dim=16, depths=[2, 2], num_heads=[2, 2],
                                       window_size=[4, 4], num_classes=10), 32
    elif name == "convnext_s":
        from torchvision.models.convnext import CNBlockConfig, ConvNeXt
        m, hw = ConvNeXt([CNBlockConfig(16, 32, 2), CNBlockConfig(32, None, 1)], num_classes=10), 32
    else:
        m, hw = getattr(models, name)(weights=None), 224
    for mod in m.modules():
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.running_mean.uniform_(-0.5, 0.5)
            mod.running_var.uniform_(0.5, 2.0)
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.3, 0.3)
        elif isinstance(mod, torch.nn.LayerNorm):
            mod.weight.data.uniform_(0.5, 1.5)
            mod.bias.data.uniform_(-0.3, 0.3)
        if name.startswith("convnext") and hasattr(mod, "layer_scale"):
            mod.layer_scale.data.uniform_(0.1, 0.5)
    return m.eval(), hw


def path(out, name, variant):
    return os.path.join(out, f"tv_{name}_{variant}.onnx")


def inputs_path(out, name):
    return os.path.join(out, f"tv_{name}_inputs.npy")


def generate(out, name):
    """Write the float export, both ORT-quantized files and the inputs of
    `name` unless they are there."""
    import torch

    import export
    import quantize
    todo = [v for v in ("float", "ort_s8", "ort_u8") if not os.path.exists(path(out, name, v))]
    if not todo and os.path.exists(inputs_path(out, name)):
        return
    torch.set_num_threads(1)
    model, hw = build(name)
    fp = path(out, name, "float")
    if not os.path.exists(fp):
        export.export_onnx(model, (torch.randn(1, 3, hw, hw),), fp + ".part.onnx")
        os.replace(fp + ".part.onnx", fp)
    calib = np.random.default_rng(99).standard_normal((NUM_CALIB, 3, hw, hw)).astype(np.float32)
    for act in ("s8", "u8"):
        qp = path(out, name, f"ort_{act}")
        if not os.path.exists(qp):
            quantize.ort_quantize(fp, qp + ".part.onnx", calib, act)
            os.replace(qp + ".part.onnx", qp)
    x = np.random.default_rng(1234).standard_normal((NUM_INPUTS, 3, hw, hw)).astype(np.float32)
    np.save(inputs_path(out, name), x)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--nets", default=",".join(SMALL), help="comma-separated subset of: " + ", ".join(NETS))
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    for n in filter(None, args.nets.split(",")):
        if n not in NETS:
            ap.error(f"unknown net '{n}'")
        print(f"{n}:", flush=True)
        generate(args.out, n)


if __name__ == "__main__":
    main()
