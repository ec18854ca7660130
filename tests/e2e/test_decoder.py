"""A small GPT-style decoder LLM (tests/models/transformer.py build_decoder:
token ids → token and position embeddings (Gather on runtime ids), causal
self-attention masked with −inf through Where, GELU MLP, LM head over a
96-token vocabulary) through cstatic, against ONNX Runtime, on 8 prompts of
16 tokens.

- PT2E int8: bit-identical to ORT with the suite's configuration, so every
  next-token prediction agrees;
- float: ≥ 100 dB (ORT's float MatMul is MLAS SGEMM in its own order);
- PT2E int8 with -mmalib=1: every Linear but the 96-way head offloaded, the
  offload issue's bar (≥ 30 dB, ≥ 15/16 of the next-token predictions);
- ORT's quantize_static calibrates the mask's −inf into a QuantizeLinear
  with an infinite scale: cstatic refuses that file naming the node, never a
  silent wrong answer;
- one KV-cache decode step (float; torch's scaled_dot_product_attention with
  the caches as inputs and outputs): ≥ 100 dB against ORT on every output.
"""
import json
import os
import sys

import numpy as np
import pytest

from conftest import ORT_CONFIG, ort_ref
import cstatic as cstatic_api
from cstatic_cli import ROOT, cstatic

sys.path.insert(0, os.path.join(ROOT, "tests", "models"))
sys.path.insert(0, os.path.join(ROOT, "python"))


@pytest.fixture(scope="module")
def decoder(tmp_path_factory):
    import transformer
    out = tmp_path_factory.mktemp("decoder")
    transformer.generate_decoder(str(out))
    ids = transformer.sample_tokens(8, seed=5)
    np.save(out / "ids.npy", ids)
    return out, ids


def _ort(path, ids):
    s = ort_ref.session(str(path), config=ORT_CONFIG)
    name = s.get_inputs()[0].name
    return np.concatenate([s.run(None, {name: ids[i:i + 1]})[0] for i in range(len(ids))])


def _run(out, variant, target="c_static_lib"):
    d = out / f"out_{variant}_{target.replace(' ', '_').replace('=', '')}"
    m = cstatic_api.compile(out / f"decoder_{variant}.onnx", target, out=d)
    return m.run(np.load(out / "ids.npy")), d


def _sqnr(ref, y):
    ref = ref.astype(np.float64)
    return 10 * np.log10((ref ** 2).sum() / max(((y - ref) ** 2).sum(), 1e-30))


def test_pt2e_decoder_equals_ort(decoder):
    out, ids = decoder
    ref = _ort(out / "decoder_pt2e.onnx", ids)
    y, _ = _run(out, "pt2e")
    y = y.reshape(ref.shape)
    print(f"decoder pt2e: identical {np.mean(y == ref):.4f}")
    assert y.tobytes() == ref.tobytes()


def test_float_decoder_close_to_ort(decoder):
    out, ids = decoder
    ref = _ort(out / "decoder_float.onnx", ids)
    y, _ = _run(out, "float")
    y = y.reshape(ref.shape)
    print(f"decoder float: SQNR {_sqnr(ref, y):.1f} dB")
    assert _sqnr(ref, y) >= 100.0
    assert (y.argmax(-1) == ref.argmax(-1)).all()


def test_pt2e_decoder_with_mmalib(decoder):
    out, ids = decoder
    ref = _ort(out / "decoder_pt2e.onnx", ids)
    y, d = _run(out, "pt2e", "c_static_lib -mmalib=1")
    y = y.reshape(ref.shape)
    summary = json.loads((d / "manifest.json").read_text())["offload"]["summary"]
    agree = float(np.mean(y.argmax(-1) == ref.argmax(-1)))
    print(f"decoder pt2e -mmalib=1: {summary}; SQNR {_sqnr(ref, y):.1f} dB, next-token agreement {agree:.4f}")
    # 9 FC: the vocabulary head (N = 96) is N-padded to 128 onto the MMA since the FC N padding (mmalib_fc.c);
    # 2 matmul: the attention's Q·Kᵀ and A·V, runtime products on the MMA (fuse_qdq_to_int8_batch_matmul.c)
    assert summary == "4 res_add, 9 FC, 2 matmul", summary
    assert _sqnr(ref, y) >= 30.0
    assert agree >= 15 / 16


def test_ort_quantized_decoder_with_infinite_scale_is_refused(decoder, tmp_path):
    import quantize
    import transformer
    out, _ = decoder
    q = tmp_path / "decoder_ort_s8.onnx"
    quantize.ort_quantize(str(out / "decoder_float.onnx"), str(q), transformer.sample_tokens(8, 1), "s8")
    p = cstatic("compile", q, "-o", tmp_path / "out", ok=False)
    assert p.returncode != 0 and "masked_fill" in p.stderr and "= inf" in p.stderr, p.stderr
    assert not (tmp_path / "out").exists()


def _decode_step_model(path, mask_input=True):
    """One decode step of an attention layer with a KV cache, as an LLM runs
    it token by token: the new token's hidden state, the cached keys and
    values of the 15 earlier positions and an additive mask in (or the mask
    a constant of the model); the attention output and the grown caches out
    (torch's scaled_dot_product_attention, exported by dynamo)."""
    import torch
    import torch.nn as nn

    import export
    d, h, past = 64, 4, 15
    hd = d // h

    class Step(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            m = torch.zeros(1, 1, 1, past + 1)
            m[..., :3] = float("-inf")
            self.register_buffer("mask", m)

        def forward(self, x, past_k, past_v, mask=None):
            if mask is None:
                mask = self.mask
            q, k, v = self.qkv(x).reshape(1, 1, 3, h, hd).permute(2, 0, 3, 1, 4)
            k, v = torch.cat([past_k, k], 2), torch.cat([past_v, v], 2)
            a = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
            return self.proj(a.transpose(1, 2).reshape(1, 1, d)), k, v

    torch.manual_seed(0)
    ex = (torch.randn(1, 1, d), torch.randn(1, h, past, hd), torch.randn(1, h, past, hd))
    names = ["x", "past_k", "past_v"]
    if mask_input:
        ex += (torch.zeros(1, 1, 1, past + 1),)
        names.append("mask")
    export.export_qdq_onnx(Step().eval(), ex, str(path), input_names=names, output_names=["y", "k", "v"])
    rng = np.random.default_rng(1)
    ins = {"x": rng.standard_normal((1, 1, d)), "past_k": rng.standard_normal((1, h, past, hd)),
           "past_v": rng.standard_normal((1, h, past, hd)), "mask": np.zeros((1, 1, 1, past + 1))}
    ins = {k: v.astype(np.float32) for k, v in ins.items()}
    ins["mask"][..., :3] = -np.inf  # the first three positions masked out
    if not mask_input:
        del ins["mask"]
    return ins


@pytest.mark.parametrize("target", ("c_static_lib", "c_static_lib -mcpu=c7x"))
def test_kv_cache_decode_step_matches_ort(tmp_path, target):
    """On the host the attention runs as float kernels rounded as ORT's;
    with -mcpu=c7x it is one c7x_sdpa_decode call (FuseSDPADecode)."""
    import onnxruntime as ort
    ins = _decode_step_model(tmp_path / "step.onnx")
    args = []
    for k, v in ins.items():
        np.save(tmp_path / f"{k}.npy", v)
        args += ["--input", tmp_path / f"{k}.npy"]
    cstatic("compile", tmp_path / "step.onnx", "-o", tmp_path / "out", "-t", target, "-q")
    lib = "".join(p.read_text() for p in sorted((tmp_path / "out").glob("lib*.c")))
    assert lib.count("c7x_sdpa_decode(") == (1 if "c7x" in target else 0)
    cstatic("run", tmp_path / "out", *args, "--output", tmp_path / "y.npy", "--output", tmp_path / "k.npy",
            "--output", tmp_path / "v.npy")
    ref = ort.InferenceSession(str(tmp_path / "step.onnx"), providers=["CPUExecutionProvider"]).run(None, ins)
    for name, want in zip(("y", "k", "v"), ref):
        got = np.load(tmp_path / f"{name}.npy")
        print(f"decode step {name}: SQNR {_sqnr(want, got):.1f} dB")
        assert got.shape == want.shape and _sqnr(want, got) >= 100.0


def test_llama_style_rmsnorm_mlp_matches_ort(tmp_path):
    """LLaMA's RMSNorm (x · rsqrt(mean(x²) + ε) · w: Pow, ReduceMean, Add,
    Sqrt, Reciprocal/Div, Mul as torch exports it) and its SiLU-gated MLP
    (down(silu(gate(x)) · up(x))), float: ≥ 100 dB against ORT (which fuses
    the norm into its SimplifiedLayerNormalization kernel at this level)."""
    import onnxruntime as ort
    import torch
    import torch.nn as nn

    import export

    class RMSNorm(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.w = nn.Parameter(torch.rand(d) + 0.5)

        def forward(self, x):
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w

    class Block(nn.Module):
        def __init__(self, d=64, h=172):
            super().__init__()
            self.norm = RMSNorm(d)
            self.gate, self.up, self.down = nn.Linear(d, h, bias=False), nn.Linear(d, h, bias=False), \
                nn.Linear(h, d, bias=False)

        def forward(self, x):
            y = self.norm(x)
            return x + self.down(nn.functional.silu(self.gate(y)) * self.up(y))

    torch.manual_seed(0)
    x = np.random.default_rng(2).standard_normal((1, 8, 64)).astype(np.float32)
    export.export_qdq_onnx(Block().eval(), (torch.from_numpy(x),), str(tmp_path / "m.onnx"),
                           input_names=["x"], output_names=["y"])
    np.save(tmp_path / "x.npy", x)
    cstatic("compile", tmp_path / "m.onnx", "-o", tmp_path / "out", "-q")
    cstatic("run", tmp_path / "out", "--input", tmp_path / "x.npy", "--output", tmp_path / "y.npy")
    want = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    got = np.load(tmp_path / "y.npy")
    print(f"RMSNorm + SiLU MLP: SQNR {_sqnr(want, got):.1f} dB")
    assert _sqnr(want, got) >= 100.0


def test_kv_cache_decode_step_through_the_firmware(tmp_path):
    """The decode step as a C7x module (c7x_sdpa_decode resolved against the
    firmware's exports), driven as on the board: four inputs (hidden state,
    both caches, the mask), three outputs (attention output, both grown
    caches; DYN_INFO answers the seven in two pages), each byte-identical to
    the same build run on the host."""
    import deploy_util
    ins = _decode_step_model(tmp_path / "step.onnx")
    target = "c_static_lib -mcpu=c7x"
    cstatic("compile", tmp_path / "step.onnx", "-o", tmp_path / "mod", "-t", target, "--emit=module", "-q")
    cstatic("compile", tmp_path / "step.onnx", "-o", tmp_path / "host", "-t", target, "-q")
    run_args, fw_args = [], []
    for k, v in ins.items():
        np.save(tmp_path / f"{k}.npy", v)
        v.tofile(tmp_path / f"{k}.bin")
        run_args += ["--input", tmp_path / f"{k}.npy"]
        fw_args += ["-i", tmp_path / f"{k}.bin"]
    outs = ("y", "k", "v")
    cstatic("run", tmp_path / "host", *run_args,
            *[a for o in outs for a in ("--output", tmp_path / f"{o}.npy")])
    (tmp_path / "fw").mkdir()
    fw = deploy_util.Firmware(tmp_path / "fw")
    try:
        h = fw.load(tmp_path / "mod" / "lib0.out")
        fw.compute("infer", h, 0, *fw_args, *[a for o in outs for a in ("-o", tmp_path / f"{o}.bin")])
        for o in outs:
            want = np.load(tmp_path / f"{o}.npy").astype(np.float32)
            assert (tmp_path / f"{o}.bin").read_bytes() == want.tobytes(), f"output {o} differs from cstatic run"
        fw.compute("unload", h)
    finally:
        fw.stop()


@pytest.mark.parametrize("target", ("c_static_lib", "c_static_lib -mcpu=c7x"))
def test_llama_style_gqa_rotary_decode_step_matches_ort(tmp_path, target):
    """A LLaMA-style attention decode step: rotary position embedding from
    a runtime position (Sin, Cos, Neg, Concat of halves), grouped-query
    attention (8 query heads over 2 KV heads: the caches expanded with
    Expand + Reshape, as repeat_kv writes it), the grown caches out; the
    position an int64 input cast to float. Float, against ORT: ≥ 100 dB on
    every output. With -mcpu=c7x the attention is one c7x_sdpa_decode call
    reading the two KV heads unrepeated."""
    import onnxruntime as ort
    import torch
    import torch.nn as nn

    import export
    d, h, kvh, past = 64, 8, 2, 11
    hd = d // h

    class Step(nn.Module):
        def __init__(self):
            super().__init__()
            self.wq, self.wk, self.wv = nn.Linear(d, d, False), nn.Linear(d, kvh * hd, False), \
                nn.Linear(d, kvh * hd, False)
            self.wo = nn.Linear(d, d, False)
            self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, hd, 2).float() / hd)))

        @staticmethod
        def rot(t):
            a, b = t[..., : hd // 2], t[..., hd // 2:]
            return torch.cat([-b, a], -1)

        def forward(self, x, pos, past_k, past_v):
            q = self.wq(x).view(1, 1, h, hd).transpose(1, 2)
            k = self.wk(x).view(1, 1, kvh, hd).transpose(1, 2)
            v = self.wv(x).view(1, 1, kvh, hd).transpose(1, 2)
            f = pos[:, None].float() * self.inv_freq[None, :]
            emb = torch.cat([f, f], -1)
            cos, sin = emb.cos(), emb.sin()
            q, k = q * cos + self.rot(q) * sin, k * cos + self.rot(k) * sin
            k, v = torch.cat([past_k, k], 2), torch.cat([past_v, v], 2)
            n = k.shape[2]
            kr = k[:, :, None].expand(1, kvh, h // kvh, n, hd).reshape(1, h, n, hd)
            vr = v[:, :, None].expand(1, kvh, h // kvh, n, hd).reshape(1, h, n, hd)
            a = torch.nn.functional.scaled_dot_product_attention(q, kr, vr)
            return self.wo(a.transpose(1, 2).reshape(1, 1, d)), k, v

    torch.manual_seed(0)
    rng = np.random.default_rng(3)
    ins = {"x": rng.standard_normal((1, 1, d)), "pos": np.array([past], np.int64),
           "past_k": rng.standard_normal((1, kvh, past, hd)), "past_v": rng.standard_normal((1, kvh, past, hd))}
    ins = {k: v if v.dtype == np.int64 else v.astype(np.float32) for k, v in ins.items()}
    export.export_qdq_onnx(Step().eval(), tuple(torch.from_numpy(v) for v in ins.values()),
                           str(tmp_path / "llama.onnx"), input_names=list(ins), output_names=["y", "k", "v"])
    args = []
    for k, v in ins.items():
        np.save(tmp_path / f"{k}.npy", v)
        args += ["--input", tmp_path / f"{k}.npy"]
    cstatic("compile", tmp_path / "llama.onnx", "-o", tmp_path / "out", "-t", target, "-q")
    lib = "".join(p.read_text() for p in sorted((tmp_path / "out").glob("lib*.c")))
    assert lib.count("c7x_sdpa_decode(") == (1 if "c7x" in target else 0)
    cstatic("run", tmp_path / "out", *args, *[a for o in "ykv" for a in ("--output", tmp_path / f"{o}.npy")])
    ref = ort.InferenceSession(str(tmp_path / "llama.onnx"), providers=["CPUExecutionProvider"]).run(None, ins)
    for name, want in zip("ykv", ref):
        got = np.load(tmp_path / f"{name}.npy")
        print(f"llama decode step {name}: SQNR {_sqnr(want, got):.1f} dB")
        assert got.shape == want.shape and _sqnr(want, got) >= 100.0
