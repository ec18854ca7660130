"""The model suite's networks, written by hand at torchvision's shapes.

torchvision is not available here, so each network below follows the
torchvision definition layer for layer (224x224 RGB input, 1000 classes,
batch 1): same channel counts, kernel sizes, strides, paddings, ceil_mode
pools, activations and forward() structure; parameter counts equal
torchvision's (ResNet-18 11,689,512; MobileNetV2 3,504,872; MobileNetV3-Small
2,542,856; ShuffleNetV2 x1.0 2,278,604; GoogLeNet 6,624,904). Dropout is left
out: it is the identity in eval mode and torch.export drops it anyway.

Weights are not trained. `build(name)` makes them deterministic (seeded)
and keeps activations of order 1 through the whole depth: kaiming-normal
convolutions and linears, then one seeded forward pass that sets every
BatchNorm's running statistics from the input it really sees, perturbed, with
random gamma/beta (so folding matters), and centres the classifier's logits
(see `_calibrate`). `sample_images` gives the seeded inputs.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

NUM_CLASSES = 1000
INPUT_SHAPE = (1, 3, 224, 224)


def _make_divisible(v, divisor=8, min_value=None):
    """torchvision's channel rounding (from the TF MobileNet code)."""
    if min_value is None:
        min_value = divisor
    new_v = max(min_value, int(v + divisor / 2) // divisor * divisor)
    if new_v < 0.9 * v:  # never round down by more than 10%
        new_v += divisor
    return new_v


def _residual_end(bn):
    """Mark the BatchNorm that ends a residual branch (see `_calibrate`)."""
    bn.ends_residual = True
    return bn


# ---------------------------------------------------------------- ResNet-18

class BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes, planes, stride=1, downsample=None):
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = _residual_end(nn.BatchNorm2d(planes))
        self.downsample = downsample

    def forward(self, x):
        identity = x
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        if self.downsample is not None:
            identity = self.downsample(x)
        out += identity
        return self.relu(out)


class ResNet18(nn.Module):
    def __init__(self, num_classes=NUM_CLASSES):
        super().__init__()
        self.inplanes = 64
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        self.layer1 = self._make_layer(64, 2)
        self.layer2 = self._make_layer(128, 2, stride=2)
        self.layer3 = self._make_layer(256, 2, stride=2)
        self.layer4 = self._make_layer(512, 2, stride=2)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(512, num_classes)

    def _make_layer(self, planes, blocks, stride=1):
        downsample = None
        if stride != 1 or self.inplanes != planes:
            downsample = nn.Sequential(
                nn.Conv2d(self.inplanes, planes, 1, stride, bias=False),
                nn.BatchNorm2d(planes))
        layers = [BasicBlock(self.inplanes, planes, stride, downsample)]
        self.inplanes = planes
        layers += [BasicBlock(planes, planes) for _ in range(1, blocks)]
        return nn.Sequential(*layers)

    def forward(self, x):
        x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


# -------------------------------------------------------------- MobileNetV2

class ConvBNAct(nn.Sequential):
    """Conv2d (no bias) + BatchNorm2d + optional activation module."""

    def __init__(self, cin, cout, k=3, stride=1, groups=1, act=nn.ReLU6,
                 eps=1e-5, momentum=0.1):
        layers = [nn.Conv2d(cin, cout, k, stride, (k - 1) // 2, groups=groups,
                            bias=False),
                  nn.BatchNorm2d(cout, eps=eps, momentum=momentum)]
        if act is not None:
            layers.append(act(inplace=True))
        super().__init__(*layers)


class InvertedResidualV2(nn.Module):
    def __init__(self, inp, oup, stride, expand_ratio):
        super().__init__()
        hidden = int(round(inp * expand_ratio))
        self.use_res_connect = stride == 1 and inp == oup
        layers = []
        if expand_ratio != 1:
            layers.append(ConvBNAct(inp, hidden, k=1))
        bn = nn.BatchNorm2d(oup)
        layers += [ConvBNAct(hidden, hidden, stride=stride, groups=hidden),
                   nn.Conv2d(hidden, oup, 1, 1, 0, bias=False),
                   _residual_end(bn) if self.use_res_connect else bn]
        self.conv = nn.Sequential(*layers)

    def forward(self, x):
        if self.use_res_connect:
            return x + self.conv(x)
        return self.conv(x)


class MobileNetV2(nn.Module):
    # t (expansion), c (channels), n (repeats), s (first stride)
    SETTING = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2],
               [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]]

    def __init__(self, num_classes=NUM_CLASSES):
        super().__init__()
        inp, last = 32, 1280
        features = [ConvBNAct(3, inp, stride=2)]
        for t, c, n, s in self.SETTING:
            oup = _make_divisible(c)
            for i in range(n):
                features.append(InvertedResidualV2(inp, oup, s if i == 0 else 1, t))
                inp = oup
        features.append(ConvBNAct(inp, last, k=1))
        self.features = nn.Sequential(*features)
        self.classifier = nn.Linear(last, num_classes)

    def forward(self, x):
        x = self.features(x)
        x = F.adaptive_avg_pool2d(x, (1, 1))
        return self.classifier(torch.flatten(x, 1))


# -------------------------------------------------------- MobileNetV3-Small

class SqueezeExcitation(nn.Module):
    def __init__(self, cin, csq):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(cin, csq, 1)
        self.fc2 = nn.Conv2d(csq, cin, 1)
        self.activation = nn.ReLU()
        self.scale_activation = nn.Hardsigmoid()

    def forward(self, x):
        s = self.avgpool(x)
        s = self.scale_activation(self.fc2(self.activation(self.fc1(s))))
        return s * x


class InvertedResidualV3(nn.Module):
    def __init__(self, cin, k, cexp, cout, use_se, act, stride):
        super().__init__()
        self.use_res_connect = stride == 1 and cin == cout
        bn = dict(eps=0.001, momentum=0.01)
        layers = []
        if cexp != cin:
            layers.append(ConvBNAct(cin, cexp, k=1, act=act, **bn))
        layers.append(ConvBNAct(cexp, cexp, k=k, stride=stride, groups=cexp,
                                act=act, **bn))
        if use_se:
            layers.append(SqueezeExcitation(cexp, _make_divisible(cexp // 4)))
        project = ConvBNAct(cexp, cout, k=1, act=None, **bn)
        if self.use_res_connect:
            _residual_end(project[1])
        layers.append(project)
        self.block = nn.Sequential(*layers)

    def forward(self, x):
        out = self.block(x)
        if self.use_res_connect:
            out = out + x
        return out


class MobileNetV3Small(nn.Module):
    RE, HS = nn.ReLU, nn.Hardswish
    # in, kernel, expanded, out, SE, activation, stride
    SETTING = [(16, 3, 16, 16, True, RE, 2), (16, 3, 72, 24, False, RE, 2),
               (24, 3, 88, 24, False, RE, 1), (24, 5, 96, 40, True, HS, 2),
               (40, 5, 240, 40, True, HS, 1), (40, 5, 240, 40, True, HS, 1),
               (40, 5, 120, 48, True, HS, 1), (48, 5, 144, 48, True, HS, 1),
               (48, 5, 288, 96, True, HS, 2), (96, 5, 576, 96, True, HS, 1),
               (96, 5, 576, 96, True, HS, 1)]

    def __init__(self, num_classes=NUM_CLASSES):
        super().__init__()
        bn = dict(eps=0.001, momentum=0.01)
        layers = [ConvBNAct(3, 16, stride=2, act=nn.Hardswish, **bn)]
        layers += [InvertedResidualV3(*cfg) for cfg in self.SETTING]
        layers.append(ConvBNAct(96, 576, k=1, act=nn.Hardswish, **bn))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Linear(576, 1024),
                                        nn.Hardswish(inplace=True),
                                        nn.Linear(1024, num_classes))

    def forward(self, x):
        x = torch.flatten(self.avgpool(self.features(x)), 1)
        return self.classifier(x)


# ------------------------------------------------------- ShuffleNetV2 x1.0

def channel_shuffle(x, groups):
    b, c, h, w = x.size()
    x = x.view(b, groups, c // groups, h, w)
    x = torch.transpose(x, 1, 2).contiguous()
    return x.view(b, -1, h, w)


class ShuffleUnit(nn.Module):
    def __init__(self, inp, oup, stride):
        super().__init__()
        self.stride = stride
        bf = oup // 2
        if stride > 1:
            self.branch1 = nn.Sequential(
                nn.Conv2d(inp, inp, 3, stride, 1, groups=inp, bias=False),
                nn.BatchNorm2d(inp),
                nn.Conv2d(inp, bf, 1, 1, 0, bias=False),
                nn.BatchNorm2d(bf), nn.ReLU(inplace=True))
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(inp if stride > 1 else bf, bf, 1, 1, 0, bias=False),
            nn.BatchNorm2d(bf), nn.ReLU(inplace=True),
            nn.Conv2d(bf, bf, 3, stride, 1, groups=bf, bias=False),
            nn.BatchNorm2d(bf),
            nn.Conv2d(bf, bf, 1, 1, 0, bias=False),
            nn.BatchNorm2d(bf), nn.ReLU(inplace=True))

    def forward(self, x):
        if self.stride == 1:
            x1, x2 = x.chunk(2, dim=1)
            out = torch.cat((x1, self.branch2(x2)), dim=1)
        else:
            out = torch.cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    def __init__(self, repeats=(4, 8, 4), chans=(24, 116, 232, 464, 1024),
                 num_classes=NUM_CLASSES):
        super().__init__()
        self.conv1 = nn.Sequential(nn.Conv2d(3, chans[0], 3, 2, 1, bias=False),
                                   nn.BatchNorm2d(chans[0]), nn.ReLU(inplace=True))
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        inp = chans[0]
        stages = []
        for n, oup in zip(repeats, chans[1:4]):
            units = [ShuffleUnit(inp, oup, 2)]
            units += [ShuffleUnit(oup, oup, 1) for _ in range(n - 1)]
            stages.append(nn.Sequential(*units))
            inp = oup
        self.stage2, self.stage3, self.stage4 = stages
        self.conv5 = nn.Sequential(nn.Conv2d(inp, chans[4], 1, 1, 0, bias=False),
                                   nn.BatchNorm2d(chans[4]), nn.ReLU(inplace=True))
        self.fc = nn.Linear(chans[4], num_classes)

    def forward(self, x):
        x = self.maxpool(self.conv1(x))
        x = self.conv5(self.stage4(self.stage3(self.stage2(x))))
        x = x.mean([2, 3])  # global pool, as torchvision writes it
        return self.fc(x)


# ------------------------------------------------------------------ GoogLeNet

class BasicConv2d(nn.Module):
    def __init__(self, cin, cout, **kw):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, bias=False, **kw)
        self.bn = nn.BatchNorm2d(cout, eps=0.001)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)), inplace=True)


class Inception(nn.Module):
    def __init__(self, cin, ch1x1, ch3x3red, ch3x3, ch5x5red, ch5x5, pool_proj):
        super().__init__()
        self.branch1 = BasicConv2d(cin, ch1x1, kernel_size=1)
        self.branch2 = nn.Sequential(
            BasicConv2d(cin, ch3x3red, kernel_size=1),
            BasicConv2d(ch3x3red, ch3x3, kernel_size=3, padding=1))
        # torchvision keeps a 3x3 here (a known deviation from the paper)
        self.branch3 = nn.Sequential(
            BasicConv2d(cin, ch5x5red, kernel_size=1),
            BasicConv2d(ch5x5red, ch5x5, kernel_size=3, padding=1))
        self.branch4 = nn.Sequential(
            nn.MaxPool2d(3, stride=1, padding=1, ceil_mode=True),
            BasicConv2d(cin, pool_proj, kernel_size=1))

    def forward(self, x):
        return torch.cat([self.branch1(x), self.branch2(x),
                          self.branch3(x), self.branch4(x)], 1)


class GoogLeNet(nn.Module):
    """torchvision GoogLeNet with aux_logits=False, transform_input=False."""

    def __init__(self, num_classes=NUM_CLASSES):
        super().__init__()
        self.conv1 = BasicConv2d(3, 64, kernel_size=7, stride=2, padding=3)
        self.maxpool1 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.conv2 = BasicConv2d(64, 64, kernel_size=1)
        self.conv3 = BasicConv2d(64, 192, kernel_size=3, padding=1)
        self.maxpool2 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception3a = Inception(192, 64, 96, 128, 16, 32, 32)
        self.inception3b = Inception(256, 128, 128, 192, 32, 96, 64)
        self.maxpool3 = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.inception4a = Inception(480, 192, 96, 208, 16, 48, 64)
        self.inception4b = Inception(512, 160, 112, 224, 24, 64, 64)
        self.inception4c = Inception(512, 128, 128, 256, 24, 64, 64)
        self.inception4d = Inception(512, 112, 144, 288, 32, 64, 64)
        self.inception4e = Inception(528, 256, 160, 320, 32, 128, 128)
        self.maxpool4 = nn.MaxPool2d(2, stride=2, ceil_mode=True)
        self.inception5a = Inception(832, 256, 160, 320, 32, 128, 128)
        self.inception5b = Inception(832, 384, 192, 384, 48, 128, 128)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(1024, num_classes)

    def forward(self, x):
        x = self.maxpool1(self.conv1(x))
        x = self.maxpool2(self.conv3(self.conv2(x)))
        x = self.maxpool3(self.inception3b(self.inception3a(x)))
        for m in (self.inception4a, self.inception4b, self.inception4c,
                  self.inception4d, self.inception4e):
            x = m(x)
        x = self.maxpool4(x)
        x = self.inception5b(self.inception5a(x))
        x = torch.flatten(self.avgpool(x), 1)
        return self.fc(x)


# ------------------------------------------------------------ construction

ARCHS = {
    "resnet18": ResNet18,
    "mobilenetv2": MobileNetV2,
    "mobilenetv3s": MobileNetV3Small,
    "shufflenetv2": ShuffleNetV2,
    "googlenet": GoogLeNet,
}


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
    gen = torch.Generator().manual_seed(seed)
    model = ARCHS[name]()
    _init_params(model, gen)
    _calibrate(model, gen)
    return model.eval()
