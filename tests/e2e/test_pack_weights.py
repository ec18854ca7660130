"""Pre-packed weights (-pack-weights=1) give the same outputs, bit for bit,
as dense weights (-pack-weights=0).

Two suite models, compiled both ways and run on the first suite images with
the kernels this CPU dispatches to (and once more with the reference kernels,
TIDSP_KERNELS=ref, which must honour w_row_stride as well):
- mobilenetv2 (pt2e): 1x1 and 3x3 convolutions (some with K a multiple of 64,
  left dense), depthwise ones (never packed); its 1x1 convolutions on 7x7
  maps get the O16 layout (below);
- shufflenetv2 (ort_s8): 1x1 convolutions on 24/58/116/232 channels, padded,
  but the last one (conv5, 464 -> 1024 on 7x7), which gets the O16 layout;
- resnet18 (pt2e): its 3x3 convolutions (all but the 3-channel stem) and its
  1x1 downsample to 7x7 get the O16 layout ("<weight>.o16", kernels.h
  TIDSP_CONV_W_O16: the AVX-512 VNNI kernel's channels-in-lanes path), the
  others padded rows.
The models with O16 weights also run on the AVX2 kernels
(TIDSP_KERNELS=host_avx2), which convert O16 per call.
The packed build's manifest must list the padded copies ("<weight>.packed",
[rows, multiple of 64]), the dense build none.
"""
import json
import os

import numpy as np
import pytest
from cstatic_cli import cstatic

NUM_IMAGES = 2
ROW_ALIGN = 64
O16_MODELS = ("mobilenetv2", "shufflenetv2", "resnet18")  # all have convs PackWeights packs O16


def packed_tensors(out_dir):
    with open(os.path.join(out_dir, "manifest.json")) as f:
        man = json.load(f)
    return man, [t for t in man["weights"]["tensors"] if t["name"].endswith(".packed")]


def o16_tensors(man):
    return [t for t in man["weights"]["tensors"] if t["name"].endswith(".o16")]


@pytest.mark.parametrize("model,variant", [("mobilenetv2", "pt2e"), ("shufflenetv2", "ort_s8"),
                                           ("resnet18", "pt2e")])
def test_packed_weights_same_outputs(model, variant, model_suite, tmp_path):
    onnx_path = model_suite.model(model, variant)
    x = np.load(model_suite.inputs(model))[:NUM_IMAGES]
    inputs = tmp_path / "x.npy"
    np.save(inputs, x)

    outs, dense_bytes = {}, None
    for pack in (0, 1):
        out_dir = tmp_path / f"pack{pack}"
        cstatic("compile", onnx_path, "-o", out_dir, "-t", f"c_static_lib -pack-weights={pack}", "-q")
        man, packed = packed_tensors(out_dir)
        if pack:
            assert packed, "no weight was packed"
            for t in packed:
                assert t["dtype"] == "int8" and len(t["shape"]) == 2, t
                assert t["shape"][1] % ROW_ALIGN == 0, t
                assert t["bytes"] == t["shape"][0] * t["shape"][1], t
            assert man["weights"]["bytes"] > dense_bytes, "packed weights must be larger"
            o16 = o16_tensors(man)
            assert bool(o16) == (model in O16_MODELS), [t["name"] for t in o16]
            for t in o16:  # [c_out/16][16·K + 64]: 16 channels' weights, then their sums
                assert t["dtype"] == "int8" and len(t["shape"]) == 2, t
                assert t["shape"][1] % 64 == 0 and t["bytes"] == t["shape"][0] * t["shape"][1], t
            if o16:
                lib = "".join(p.read_text() for p in out_dir.glob("lib*.c"))
                assert lib.count(".w_layout = TIDSP_CONV_W_O16") == len(o16), "one O16 node per O16 weight"
        else:
            assert not packed and not o16_tensors(man), [t["name"] for t in packed]
            dense_bytes = man["weights"]["bytes"]
        y = tmp_path / f"y{pack}.npy"
        cstatic("run", out_dir, "--input", inputs, "--output", y)
        outs[pack] = np.load(y)
        if pack:
            y_ref = tmp_path / "y_ref.npy"
            cstatic("run", out_dir, "--input", inputs, "--output", y_ref,
                    env={**os.environ, "TIDSP_KERNELS": "ref"})
            outs["ref"] = np.load(y_ref)
            if model in O16_MODELS:
                y_avx2 = tmp_path / "y_avx2.npy"
                cstatic("run", out_dir, "--input", inputs, "--output", y_avx2,
                        env={**os.environ, "TIDSP_KERNELS": "host_avx2"})
                outs["avx2"] = np.load(y_avx2)

    assert outs[0].shape == outs[1].shape == (NUM_IMAGES, 1000)
    assert outs[0].tobytes() == outs[1].tobytes(), "packed and dense weights disagree"
    assert outs["ref"].tobytes() == outs[1].tobytes(), "reference kernels disagree on packed weights"
    if "avx2" in outs:
        assert outs["avx2"].tobytes() == outs[1].tobytes(), "AVX2 kernels disagree on O16 weights"
