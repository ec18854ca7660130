"""A small pre-norm transformer encoder (ViT-style) for the end-to-end tests:
LayerNorm, multi-head self-attention (Q·Kᵀ, Softmax, ·V on activations),
a GELU MLP, residual adds, a mean over tokens and a linear head. Seeded
weights, exported as float ONNX and quantized three ways (PT2E, ORT
quantize_static int8 and uint8), like the CNN suite (generate.py).
"""
import os

import numpy as np

TOKENS, DIM, HEADS, CLASSES = 16, 64, 4, 10


def build_model(depth=2, seed=0):
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
            self.qkv, self.proj = nn.Linear(DIM, 3 * DIM), nn.Linear(DIM, DIM)
            self.fc1, self.fc2 = nn.Linear(DIM, 4 * DIM), nn.Linear(4 * DIM, DIM)
            self.act = nn.GELU()

        def forward(self, x):
            b, n, d = x.shape
            qkv = self.qkv(self.ln1(x)).reshape(b, n, 3, HEADS, d // HEADS)
            q, k, v = qkv.permute(2, 0, 3, 1, 4)
            a = ((q @ k.transpose(-2, -1)) * (d // HEADS) ** -0.5).softmax(-1)
            x = x + self.proj((a @ v).transpose(1, 2).reshape(b, n, d))
            return x + self.fc2(self.act(self.fc1(self.ln2(x))))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.blocks = nn.Sequential(*[Block() for _ in range(depth)])
            self.norm = nn.LayerNorm(DIM)
            self.head = nn.Linear(DIM, CLASSES)

        def forward(self, x):
            return self.head(self.norm(self.blocks(x)).mean(1))

    torch.manual_seed(seed)
    model = Encoder().eval()
    with torch.no_grad():  # LayerNorm affine parameters away from (1, 0)
        for m in model.modules():
            if isinstance(m, nn.LayerNorm):
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.2, 0.2)
    return model


def sample_inputs(n, seed):
    return np.random.default_rng(seed).standard_normal((n, TOKENS, DIM)).astype(np.float32)


def generate(out, seed=0):
    """Write float.onnx, pt2e.onnx, ort_s8.onnx, ort_u8.onnx into `out`."""
    import torch
    import export
    import quantize
    model = build_model(seed=seed)
    calib = sample_inputs(32, seed + 1)
    example = (torch.from_numpy(calib[:1]),)
    export.export_onnx(model, example, os.path.join(out, "float.onnx"))
    gm = quantize.pt2e_quantize(model, example, torch.from_numpy(calib))
    export.export_onnx(gm, example, os.path.join(out, "pt2e.onnx"))
    for act in ("s8", "u8"):
        quantize.ort_quantize(os.path.join(out, "float.onnx"),
                              os.path.join(out, f"ort_{act}.onnx"), calib, act)
    return model


VOCAB, CONTEXT = 96, 16


def build_decoder(depth=2, seed=0):
    """A GPT-style decoder: token + position embeddings, causal
    self-attention (masked_fill of future positions with −inf, as nanoGPT
    writes it), GELU MLP, final LayerNorm and an LM head over the vocab."""
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(DIM), nn.LayerNorm(DIM)
            self.qkv, self.proj = nn.Linear(DIM, 3 * DIM), nn.Linear(DIM, DIM)
            self.fc1, self.fc2 = nn.Linear(DIM, 4 * DIM), nn.Linear(4 * DIM, DIM)
            self.act = nn.GELU()
            self.register_buffer("causal", torch.tril(torch.ones(CONTEXT, CONTEXT)).view(1, 1, CONTEXT, CONTEXT))

        def forward(self, x):
            b, n, d = x.shape
            q, k, v = self.qkv(self.ln1(x)).reshape(b, n, 3, HEADS, d // HEADS).permute(2, 0, 3, 1, 4)
            a = (q @ k.transpose(-2, -1)) * (d // HEADS) ** -0.5
            a = a.masked_fill(self.causal[:, :, :n, :n] == 0, float("-inf")).softmax(-1)
            x = x + self.proj((a @ v).transpose(1, 2).reshape(b, n, d))
            return x + self.fc2(self.act(self.fc1(self.ln2(x))))

    class Decoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok = nn.Embedding(VOCAB, DIM)
            self.pos = nn.Embedding(CONTEXT, DIM)
            self.blocks = nn.Sequential(*[Block() for _ in range(depth)])
            self.norm = nn.LayerNorm(DIM)
            self.head = nn.Linear(DIM, VOCAB)

        def forward(self, ids):
            pos = torch.arange(ids.shape[1], device=ids.device)
            return self.head(self.norm(self.blocks(self.tok(ids) + self.pos(pos))))

    torch.manual_seed(seed)
    return Decoder().eval()


def sample_tokens(n, seed):
    return np.random.default_rng(seed).integers(0, VOCAB, (n, CONTEXT), dtype=np.int64)


def generate_decoder(out, seed=0):
    """Write decoder_float.onnx and decoder_pt2e.onnx into `out`. (ORT's
    quantize_static cannot quantize this model: it calibrates the −inf of
    the causal mask into a QuantizeLinear with an infinite scale; the test
    checks that cstatic refuses such a file by name.)"""
    import torch
    import export
    import quantize
    model = build_decoder(seed=seed)
    calib = sample_tokens(32, seed + 1)
    example = (torch.from_numpy(calib[:1]),)
    export.export_onnx(model, example, os.path.join(out, "decoder_float.onnx"))
    gm = quantize.pt2e_quantize(model, example, torch.from_numpy(calib))
    export.export_onnx(gm, example, os.path.join(out, "decoder_pt2e.onnx"))
    return model
