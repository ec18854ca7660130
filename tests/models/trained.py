"""Trained networks for the suite, their weights fetched by pip (never
committed, never a hub download), and seeded inputs that resemble theirs.

- PP-OCR (rapidocr-onnxruntime 1.4.4's ONNX files): the text-direction
  classifier (cls, 1x3x48x192) and the PP-OCRv4 recognizer (rec,
  1x3x48x320, CTC over the character list kept in the file's metadata)
  and the PP-OCRv4 text detector (det, DBNet, 1x3x128x320 pages: a text
  probability map of the same size).
- MTCNN (facenet-pytorch 2.6.0's P/R/O-Net state dicts) loaded into the
  module definitions below (the package itself is not installed: its pins
  would pull another torch; only its wheel is read); exported to float ONNX
  and ORT-quantized (quantize_static, int8 and uint8 activations) by
  mtcnn_float / mtcnn_quantized.
- The bundled digits CNN (examples/digits: digits_float.onnx,
  digits_int8.onnx and its test split).

Wheels go to DIR/wheels (`pip download --no-deps`), extracted files to
DIR/trained; both are caches (tests/models/out, gitignored).
"""

import io
import os
import subprocess
import sys
import zipfile

import numpy as np

RAPIDOCR = ("rapidocr-onnxruntime==1.4.4", "rapidocr_onnxruntime-1.4.4-py3-none-any.whl")
FACENET = ("facenet-pytorch==2.6.0", "facenet_pytorch-2.6.0-py3-none-any.whl")
OCR_FILES = {"cls": ("ch_ppocr_mobile_v2.0_cls_infer.onnx", (1, 3, 48, 192)),
             "rec": ("ch_PP-OCRv4_rec_infer.onnx", (1, 3, 48, 320)),
             "det": ("ch_PP-OCRv4_det_infer.onnx", (1, 3, 128, 320))}
DB_THRESHOLD = 0.3  # PaddleOCR's det_db_thresh: the map's text pixels
MTCNN_SIDE = {"pnet": 48, "rnet": 24, "onet": 48}   # P-Net is fully convolutional: 48x48 -> 19x19 map


class FetchError(RuntimeError):
    pass


def wheel(out, which):
    """Path of the wheel `which` (RAPIDOCR or FACENET) in out/wheels,
    downloaded by pip once."""
    spec, name = which
    d = os.path.join(out, "wheels")
    path = os.path.join(d, name)
    if not os.path.exists(path):
        os.makedirs(d, exist_ok=True)
        p = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", spec, "-d", d],
                           capture_output=True, text=True)
        if p.returncode or not os.path.exists(path):
            raise FetchError(f"pip download {spec} failed: {p.stderr.strip()[-300:]}")
    return path


# ------------------------------------------------------------------ PP-OCR

def ocr_float(out, name):
    """The PP-OCR `name` ("cls" or "rec") float file with its input shape
    written in (cstatic compiles one static shape), and its metadata."""
    import onnx
    member, shape = OCR_FILES[name]
    d = os.path.join(out, "trained")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"ocr_{name}_float.onnx")
    if not os.path.exists(path):
        with zipfile.ZipFile(wheel(out, RAPIDOCR)) as z:
            m = onnx.load_from_string(z.read(f"rapidocr_onnxruntime/models/{member}"))
        dims = m.graph.input[0].type.tensor_type.shape.dim
        for i, s in enumerate(shape):
            dims[i].Clear()
            dims[i].dim_value = s
        for o in m.graph.output:
            o.type.tensor_type.ClearField("shape")
        onnx.save(m, path + ".part")
        os.replace(path + ".part", path)
    return path


def ocr_characters(path):
    """The recognizer's CTC alphabet: index 0 is the blank, then the
    file's 'character' metadata, then a space (PaddleOCR's use_space_char)."""
    import onnx
    m = onnx.load(path, load_external_data=False)
    chars = next(p.value for p in m.metadata_props if p.key == "character").split("\n")
    return ["<blank>"] + chars + [" "]


def ctc_decode(probs, chars):
    """Greedy CTC: argmax per step, repeats collapsed, blanks dropped.
    probs [T, C] -> string."""
    idx = probs.argmax(-1)
    keep = [i for t, i in enumerate(idx) if i != 0 and (t == 0 or i != idx[t - 1])]
    return "".join(chars[i] for i in keep)


_COMMON = ("hello", "world", "cstatic", "tensor", "quantize", "Texas", "signal", "matrix", "kernel", "window",
           "market", "garden", "number", "PYTHON", "Runtime", "export", "vision", "camera", "bridge", "summer",
           "orange", "silver", "planet", "random", "custom", "offset", "buffer", "shadow", "DSP 7x", "2026",
           "value 42", "layer")


def words(n, seed, common=True):
    """n words to render: the common words above first (unless not
    `common`: calibration words differ from the test words), then seeded
    random strings of letters and digits (4-9 characters; the recognizer
    reads characters, not a vocabulary)."""
    rng = np.random.default_rng(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
    out = list(_COMMON[:n]) if common else []
    while len(out) < n:
        out.append("".join(rng.choice(list(alphabet), int(rng.integers(4, 10)))))
    return out


def _font(size):
    from PIL import ImageFont
    return ImageFont.load_default(size=size)


def render_words(words, shape, seed, flip=None):
    """Words rendered dark-on-light (grey levels, a little noise and blur,
    seeded), as PaddleOCR feeds them: [n, 3, H, W] float32 in [-1, 1],
    text scaled to the height and left-aligned, the rest of the width the
    background. flip: per word, rotate the image by 180 degrees (the
    direction classifier's second class)."""
    from PIL import Image, ImageDraw, ImageFilter
    rng = np.random.default_rng(seed)
    _, _, h, w = shape
    out = np.empty((len(words), 3, h, w), np.float32)
    for k, word in enumerate(words):
        font = _font(int(rng.integers(28, 36)))
        bg, fg = int(rng.integers(190, 250)), int(rng.integers(0, 70))
        left, top, right, bottom = ImageDraw.Draw(Image.new("L", (1, 1))).textbbox((0, 0), word, font=font)
        img = Image.new("L", (right - left + 12, bottom - top + 12), bg)
        ImageDraw.Draw(img).text((6 - left, 6 - top), word, fill=fg, font=font)
        tw = min(w, max(1, round(img.width * h / img.height)))
        img = img.resize((tw, h), Image.BILINEAR).filter(ImageFilter.GaussianBlur(0.4))
        canvas = np.full((h, w), bg, np.float32)
        canvas[:, :tw] = np.asarray(img, np.float32)
        canvas += rng.normal(0, 4, canvas.shape)
        if flip is not None and flip[k]:
            canvas = canvas[::-1, ::-1]
        x = (np.clip(canvas, 0, 255) / 255.0 - 0.5) / 0.5
        out[k] = np.broadcast_to(x, (3, h, w))
    return out


def render_pages(n, shape, seed):
    """n seeded pages [n, 3, H, W] as PaddleOCR's detector takes them
    (ImageNet mean/std), each 2-4 lines of words (dark on light, sizes and
    places random), and their text masks [n, H, W] (bool: the words' ink
    boxes, what a detector should find)."""
    from PIL import Image, ImageDraw, ImageFilter
    rng = np.random.default_rng(seed)
    _, _, h, w = shape
    mean = np.array([0.485, 0.456, 0.406], np.float32)[:, None, None]
    std = np.array([0.229, 0.224, 0.225], np.float32)[:, None, None]
    out = np.empty((n, 3, h, w), np.float32)
    masks = np.zeros((n, h, w), bool)
    for k in range(n):
        bg = int(rng.integers(185, 250))
        img = Image.new("L", (w, h), bg)
        draw = ImageDraw.Draw(img)
        top = int(rng.integers(4, 16))
        for line in words(int(rng.integers(2, 5)), seed * 1000 + k, common=False):
            size = int(rng.integers(16, 30))
            font = _font(size)
            left = int(rng.integers(4, max(5, w // 3)))
            l, t, r, b = draw.textbbox((left, top), line, font=font)
            if b >= h - 2:
                break
            draw.text((left, top), line, fill=int(rng.integers(0, 80)), font=font)
            masks[k, max(t, 0):b, max(l, 0):min(r, w)] = True
            top = b + int(rng.integers(6, 18))
        img = img.filter(ImageFilter.GaussianBlur(0.5))
        page = np.asarray(img, np.float32) + rng.normal(0, 3, (h, w))
        out[k] = (np.clip(page, 0, 255)[None] / 255.0 - mean) / std
    return out, masks


def ocr_quantized(out, name, calib, percentile=None):
    """ORT quantize_static of the PP-OCR `name` file (QDQ, int8
    activations, per-channel int8 weights) calibrated on `calib` (rendered
    text): activation ranges by MinMax, or with `percentile` by ORT's
    Percentile method (each range clipped to that percentile of the
    calibration values' magnitudes; the file name says which). The file is
    first converted to opset 13 (per-axis DequantizeLinear) and run through
    ORT's basic optimizations (BN folded; quant_pre_process cannot infer
    the Paddle graph's shapes)."""
    import onnx
    import onnx.version_converter
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat,
                                          QuantType, quantize_static)
    d = os.path.join(out, "trained")
    path = os.path.join(d, f"ocr_{name}_ort_s8{'' if percentile is None else f'_pct{percentile}'}.onnx")
    if os.path.exists(path):
        return path
    m13 = os.path.join(d, f"ocr_{name}_13.onnx")
    onnx.save(onnx.version_converter.convert_version(onnx.load(ocr_float(out, name)), 13), m13)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = os.path.join(d, f"ocr_{name}_basic.onnx")
    ort.InferenceSession(m13, so, providers=["CPUExecutionProvider"])

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter([{"x": calib[i:i + 1]} for i in range(len(calib))])

        def get_next(self):
            return next(self.it, None)

    method = ({"calibrate_method": CalibrationMethod.MinMax} if percentile is None else
              {"calibrate_method": CalibrationMethod.Percentile, "extra_options": {"CalibPercentile": percentile}})
    quantize_static(so.optimized_model_filepath, path + ".part.onnx", Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, weight_type=QuantType.QInt8, activation_type=QuantType.QInt8, **method)
    os.replace(path + ".part.onnx", path)
    return path


# ------------------------------------------------------------------- MTCNN

def mtcnn(out, name):
    """MTCNN's `name` ("pnet", "rnet", "onet") in eval mode with
    facenet-pytorch's trained weights. Outputs as facenet-pytorch orders
    them: (box regression, face probability[, landmarks])."""
    import torch
    import torch.nn as nn

    class PNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.prelu1 = nn.Conv2d(3, 10, 3), nn.PReLU(10)
            self.pool1 = nn.MaxPool2d(2, 2, ceil_mode=True)
            self.conv2, self.prelu2 = nn.Conv2d(10, 16, 3), nn.PReLU(16)
            self.conv3, self.prelu3 = nn.Conv2d(16, 32, 3), nn.PReLU(32)
            self.conv4_1, self.softmax4_1 = nn.Conv2d(32, 2, 1), nn.Softmax(dim=1)
            self.conv4_2 = nn.Conv2d(32, 4, 1)

        def forward(self, x):
            x = self.pool1(self.prelu1(self.conv1(x)))
            x = self.prelu3(self.conv3(self.prelu2(self.conv2(x))))
            return self.conv4_2(x), self.softmax4_1(self.conv4_1(x))

    class RNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.prelu1 = nn.Conv2d(3, 28, 3), nn.PReLU(28)
            self.pool1 = nn.MaxPool2d(3, 2, ceil_mode=True)
            self.conv2, self.prelu2 = nn.Conv2d(28, 48, 3), nn.PReLU(48)
            self.pool2 = nn.MaxPool2d(3, 2, ceil_mode=True)
            self.conv3, self.prelu3 = nn.Conv2d(48, 64, 2), nn.PReLU(64)
            self.dense4, self.prelu4 = nn.Linear(576, 128), nn.PReLU(128)
            self.dense5_1, self.softmax5_1 = nn.Linear(128, 2), nn.Softmax(dim=1)
            self.dense5_2 = nn.Linear(128, 4)

        def forward(self, x):
            x = self.pool1(self.prelu1(self.conv1(x)))
            x = self.pool2(self.prelu2(self.conv2(x)))
            x = self.prelu3(self.conv3(x)).permute(0, 3, 2, 1).contiguous()
            x = self.prelu4(self.dense4(x.view(x.shape[0], -1)))
            return self.dense5_2(x), self.softmax5_1(self.dense5_1(x))

    class ONet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1, self.prelu1 = nn.Conv2d(3, 32, 3), nn.PReLU(32)
            self.pool1 = nn.MaxPool2d(3, 2, ceil_mode=True)
            self.conv2, self.prelu2 = nn.Conv2d(32, 64, 3), nn.PReLU(64)
            self.pool2 = nn.MaxPool2d(3, 2, ceil_mode=True)
            self.conv3, self.prelu3 = nn.Conv2d(64, 64, 3), nn.PReLU(64)
            self.pool3 = nn.MaxPool2d(2, 2, ceil_mode=True)
            self.conv4, self.prelu4 = nn.Conv2d(64, 128, 2), nn.PReLU(128)
            self.dense5, self.prelu5 = nn.Linear(1152, 256), nn.PReLU(256)
            self.dense6_1, self.softmax6_1 = nn.Linear(256, 2), nn.Softmax(dim=1)
            self.dense6_2 = nn.Linear(256, 4)
            self.dense6_3 = nn.Linear(256, 10)

        def forward(self, x):
            x = self.pool1(self.prelu1(self.conv1(x)))
            x = self.pool2(self.prelu2(self.conv2(x)))
            x = self.pool3(self.prelu3(self.conv3(x)))
            x = self.prelu4(self.conv4(x)).permute(0, 3, 2, 1).contiguous()
            x = self.prelu5(self.dense5(x.view(x.shape[0], -1)))
            return self.dense6_2(x), self.softmax6_1(self.dense6_1(x)), self.dense6_3(x)

    net = {"pnet": PNet, "rnet": RNet, "onet": ONet}[name]()
    with zipfile.ZipFile(wheel(out, FACENET)) as z:
        state = torch.load(io.BytesIO(z.read(f"facenet_pytorch/data/{name}.pt")), weights_only=True)
    net.load_state_dict(state)
    return net.eval()


MTCNN_OUTPUTS = ("box", "prob", "landmarks")   # P/R-Net: the first two


def mtcnn_outputs(name):
    return MTCNN_OUTPUTS[:3 if name == "onet" else 2]


def mtcnn_float(out, name):
    """MTCNN's `name` exported to float ONNX (cstatic's exporter: torch's
    dynamo export at opset 21; input "input", outputs mtcnn_outputs) at its
    MTCNN_SIDE, batch 1, cached in out/trained."""
    import torch
    from cstatic.export import export_qdq_onnx
    d = os.path.join(out, "trained")
    os.makedirs(d, exist_ok=True)
    path = os.path.join(d, f"mtcnn_{name}_float.onnx")
    if not os.path.exists(path):
        side = MTCNN_SIDE[name]
        example = (torch.from_numpy(face_crops(1, side, 0)),)
        export_qdq_onnx(mtcnn(out, name), example, path + ".part.onnx", input_names=["input"],
                        output_names=list(mtcnn_outputs(name)))
        os.replace(path + ".part.onnx", path)
    return path


def mtcnn_quantized(out, name, act, calib):
    """ORT quantize_static of mtcnn_float(name) (cstatic.quantize_onnx's
    "generic" preset: QDQ, per-channel int8 weights, MinMax; activations
    `act` "s8" or "u8"), calibrated on `calib` [n, 3, side, side] (face
    crops), cached in out/trained."""
    from cstatic import quantize_onnx
    path = os.path.join(out, "trained", f"mtcnn_{name}_ort_{act}.onnx")
    if not os.path.exists(path):
        quantize_onnx(mtcnn_float(out, name), calib, "generic", out=path + ".part.onnx",
                      activation={"s8": "int8", "u8": "uint8"}[act])
        os.replace(path + ".part.onnx", path)
    return path


def face_crops(n, side, seed):
    """n seeded face-like crops [n, 3, side, side], normalised as MTCNN's
    input ((pixel - 127.5) / 128): a skin-toned ellipse with darker eyes,
    brows and mouth, shaded, at a random offset, scale and tilt, on a
    smooth random background; every fourth crop has no face (background
    only), as a detector sees both."""
    rng = np.random.default_rng(seed)
    yy, xx = np.mgrid[0:side, 0:side].astype(np.float32) / side
    out = np.empty((n, 3, side, side), np.float32)
    for k in range(n):
        bg = rng.uniform(30, 220, 3)[:, None, None] + 25 * np.sin(
            rng.uniform(2, 9) * xx + rng.uniform(0, 6)) * np.cos(rng.uniform(2, 9) * yy)
        img = np.broadcast_to(bg, (3, side, side)).copy()
        if k % 4 != 3:
            cx, cy = 0.5 + rng.normal(0, 0.04, 2)
            r = rng.uniform(0.34, 0.44)
            t = rng.normal(0, 0.15)
            u, v = (xx - cx) * np.cos(t) + (yy - cy) * np.sin(t), -(xx - cx) * np.sin(t) + (yy - cy) * np.cos(t)
            skin = np.array([rng.uniform(150, 235), rng.uniform(105, 180), rng.uniform(80, 150)])[:, None, None]
            shade = 1.0 - 0.35 * (u / r) - 0.2 * (v / r) ** 2
            face = (u / (0.8 * r)) ** 2 + (v / r) ** 2 < 1
            img = np.where(face, skin * shade, img)
            dark = np.zeros_like(xx, dtype=bool)
            for ex in (-0.3 * r, 0.3 * r):
                dark |= ((u - ex) / (0.12 * r)) ** 2 + ((v + 0.2 * r) / (0.07 * r)) ** 2 < 1     # eyes
                dark |= (np.abs(u - ex) < 0.15 * r) & (np.abs(v + 0.38 * r) < 0.025 * r + 0.5 / side)  # brows
            dark |= (np.abs(u) < 0.28 * r) & (np.abs(v - 0.45 * r) < 0.04 * r + 0.5 / side)       # mouth
            img = np.where(dark & face, img * 0.35, img)
        img += rng.normal(0, 3, img.shape)
        out[k] = (np.clip(img, 0, 255) - 127.5) / 128.0
    return out.astype(np.float32)
