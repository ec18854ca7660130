"""The model suite's networks: torchvision's own definitions, seeded weights.

Each suite name is a torchvision model (tests/models/tv.py imports
torchvision on the CPU torch): 224x224 RGB input, 1000 classes, batch 1,
eval mode. The fast set (test_suite.py, `make test`) is ResNet-18,
MobileNetV2, MobileNetV3-Small, ShuffleNetV2 x1.0 and GoogLeNet
(aux_logits=False, transform_input=False); the slow set adds
MobileNetV3-Large, Swin-T, Swin-V2-T and ViT-B/16.

Weights are not trained. `build(name)` makes them deterministic (seeded)
and keeps activations of order 1 through the whole depth: kaiming-normal
convolutions and linears, then one seeded forward pass that sets every
BatchNorm's running statistics from the input it really sees, perturbed, with
random gamma/beta (so folding matters), and centres the classifier's logits
(see `_calibrate`). `sample_images` gives the seeded inputs. The
trained-network tests (tests/models/trained.py) are where accuracy means
something; these networks test that the compiler computes what ORT does.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_CLASSES = 1000
INPUT_SHAPE = (1, 3, 224, 224)

# ------------------------------------------------------------ construction

# suite name -> (torchvision.models function, keyword arguments)
ARCHS = {
    "resnet18": ("resnet18", {}),
    "mobilenetv2": ("mobilenet_v2", {}),
    "mobilenetv3s": ("mobilenet_v3_small", {}),
    "shufflenetv2": ("shufflenet_v2_x1_0", {}),
    "googlenet": ("googlenet", {"aux_logits": False, "transform_input": False, "init_weights": False}),
    "mobilenetv3l": ("mobilenet_v3_large", {}),
    "swin_t": ("swin_t", {}),
    "swin_v2_t": ("swin_v2_t", {}),
    "vit_b_16": ("vit_b_16", {}),
}
# Bump when build() would make different weights for the same definition:
# generate.py regenerates a cached model whose key differs (source_key).
INIT_VERSION = 1


def source_key(name):
    """What a generated file of `name` was built from: the torchvision
    version, the definition and the initialisation (generate.py keeps it
    beside the cached files and regenerates them when it changes)."""
    import tv
    fn, kwargs = ARCHS[name]
    args = ", ".join(f"{k}={v!r}" for k, v in sorted(kwargs.items()))
    return f"torchvision {tv.torchvision().__version__} models.{fn}({args}) init {INIT_VERSION}"


def _mark_residual_ends(model):
    """Mark the BatchNorm that ends each residual branch (see `_calibrate`):
    torchvision's BasicBlock.bn2, and the projection BN of MobileNet V2/V3
    inverted residuals that add their input."""
    for m in model.modules():
        if type(m).__name__ == "BasicBlock":
            m.bn2.ends_residual = True
        elif type(m).__name__ == "InvertedResidual" and getattr(m, "use_res_connect", False):
            body = m.conv if hasattr(m, "conv") else m.block
            bns = [b for b in body.modules() if isinstance(b, nn.BatchNorm2d)]
            bns[-1].ends_residual = True

def _init_params(model, gen):
    for m in model.modules():
        if isinstance(m, (nn.Conv2d, nn.Linear)):
            fan_in = m.weight[0].numel()
            std = math.sqrt(2.0 / fan_in)
            if isinstance(m, nn.Linear) and m.out_features == NUM_CLASSES:
                std = 1.0 / math.sqrt(fan_in)  # logits of order 1
            with torch.no_grad():
                m.weight.copy_(torch.randn(m.weight.shape, generator=gen) * std)
                if m.bias is not None:
                    m.bias.copy_(torch.randn(m.bias.shape, generator=gen) * 0.05)


def sample_images(n, seed):
    """n seeded float32 images [n, 3, 224, 224], roughly like normalised photos.

    Each image has its own "style": random weights for smooth random fields
    at three scales, its own per-channel contrast and colour offset. Images
    that differ only as samples of one stationary texture look alike to a
    network after global pooling; differing statistics survive to the logits.
    """
    gen = torch.Generator().manual_seed(seed)
    size = INPUT_SHAPE[2:]
    x = torch.zeros((n,) + INPUT_SHAPE[1:])
    for res in (4, 14, 56):
        field = torch.randn((n, 3, res, res), generator=gen)
        amp = torch.rand((n, 1, 1, 1), generator=gen)
        x += amp * F.interpolate(field, size=size, mode="bilinear",
                                 align_corners=False)
    x += 0.2 * torch.randn(x.shape, generator=gen)
    x = (x - x.mean((1, 2, 3), keepdim=True)) / x.std((1, 2, 3), keepdim=True)
    x *= 0.5 + torch.rand((n, 3, 1, 1), generator=gen)
    x += 0.5 * torch.randn((n, 3, 1, 1), generator=gen)
    return x.float()


# BatchNorm draws (see _calibrate): running-mean shift (in input stds),
# running-var factor range, gamma range, beta mean and std, and the factor on
# gamma/beta of the BN that ends a residual branch.
BN_MEAN_SHIFT = 0.2
BN_VAR_RANGE = (0.7, 1.4)
BN_GAMMA_RANGE = (0.6, 1.4)
BN_BETA = (1.0, 0.2)
BN_RESIDUAL_SCALE = 0.5


def _uniform(lo_hi, n, gen):
    lo, hi = lo_hi
    return lo + (hi - lo) * torch.rand(n, generator=gen)


def _calibrate(model, gen, batch=8):
    """Data-dependent init: one eval-mode forward pass over a seeded batch.

    Each BatchNorm, just before it runs, gets running_mean/var from the input
    it actually sees (so everything upstream is accounted for), perturbed,
    and random gamma/beta: folding then changes every weight and bias, and a
    wrong fold gives a wrong result, while activations stay of order 1 at
    any depth.

    Beta is centred at +1 (most ReLUs pass) and residual branches are scaled
    by 0.5. With beta centred at 0, random BN networks are chaotic: a
    perturbation grows ~1.2x per layer (measured: a 1e-4 input perturbation
    came out 10-170x larger at the logits, and int8 logits were no closer
    to float than noise); with these settings the growth is 2-10x end to end.

    The classifier's bias is set to centre its logits on this batch and its
    weight scaled so centred logits have std 2: the pooled features are all
    positive and mostly common to every image, which would otherwise give
    every image the same top class.
    """
    def bn_hook(m, args):
        x = args[0]
        mean = x.mean((0, 2, 3))
        var = x.var((0, 2, 3), unbiased=False)
        std = torch.sqrt(var + m.eps)
        c = m.num_features
        m.running_mean.copy_(mean + _uniform((-1, 1), c, gen) * BN_MEAN_SHIFT * std)
        m.running_var.copy_(var * _uniform(BN_VAR_RANGE, c, gen))
        m.weight.copy_(_uniform(BN_GAMMA_RANGE, c, gen))
        m.bias.copy_(BN_BETA[0] + BN_BETA[1] * torch.randn(c, generator=gen))
        if getattr(m, "ends_residual", False):
            m.weight.mul_(BN_RESIDUAL_SCALE)
            m.bias.mul_(BN_RESIDUAL_SCALE)

    def fc_hook(m, args):
        y = args[0] @ m.weight.t()
        k = 2.0 / (y - y.mean(0)).std()
        m.weight.mul_(k)
        m.bias.copy_(-k * y.mean(0) + 0.05 * torch.randn(m.bias.shape, generator=gen))

    hooks = [m.register_forward_pre_hook(bn_hook) for m in model.modules()
             if isinstance(m, nn.BatchNorm2d)]
    fc = [m for m in model.modules()
          if isinstance(m, nn.Linear) and m.out_features == NUM_CLASSES][-1]
    hooks.append(fc.register_forward_pre_hook(fc_hook))
    model.eval()
    seed = int(torch.randint(1 << 30, (1,), generator=gen))
    with torch.no_grad():
        model(sample_images(batch, seed))
    for h in hooks:
        h.remove()


def build(name, seed=0):
    """The named network in eval mode with deterministic, seeded weights."""
    if name not in ARCHS:
        raise ValueError(f"unknown model '{name}' (known: {', '.join(ARCHS)})")
    import tv
    fn, kwargs = ARCHS[name]
    gen = torch.Generator().manual_seed(seed)
    model = getattr(tv.torchvision().models, fn)(weights=None, **kwargs)
    _mark_residual_ends(model)
    _init_params(model, gen)
    _calibrate(model, gen)
    return model.eval()
