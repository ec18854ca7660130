"""InjectMMALIBDMA end to end: with -mcpu=c7x -mmalib=1 the MMALIB calls
stage their input (and weights) into L2 SRAM through the DMA API
(cstatic/dma.h) and read the L2 copies; oversized conv weights go through
mmalib_conv2d_i8_sliced chunk by chunk (spec/c-static-lib-backend.txt "DMA
Injection Pipeline"); a plain conv whose input is larger than the budget
goes through it in row strips (H-tiled, beyond the spec), any other such
call stays in DDR.

Staging moves bytes, never changes them: every build below must give the
output of the unstaged build bit for bit. The host DMA engine copies on its
own thread while the model computes (runtime/dma/dma_host.c), so a missing
or misplaced wait is a real race: here, now and then, a different output;
under ThreadSanitizer (the runtime built with -fsanitize=thread), always a
report.
"""

import json
import os

import numpy as np
import pytest
from cstatic_cli import cstatic

BUDGET = 384 * 1024
# The targets pass -mmalib-exact=none: these check the int8 kernels' staging
# (the default, `all`, runs int8 layers on MMALIB's int16 kernels, whose
# staging test_mmalib_exact.py's C7x builds cover).


def float_model(path):
    """x [1,32,112,112] → conv 32→64 s2 (input > budget: H-tiled) → conv 64→64
    (input + weights fit) → depthwise 3×3 → conv 64→256 s2 → conv 256→256
    (weights 576 KB > budget: sliced) → GAP → FC 256→128."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(0)
    inits, nodes = [], []

    def conv(src, cin, cout, stride=1, groups=1, name=""):
        w = (rng.normal(size=(cout, cin // groups, 3, 3)) * np.sqrt(2.0 / (9 * cin // groups)))
        w *= np.linspace(0.5, 2.0, cout)[:, None, None, None]
        b = rng.normal(size=(cout,)) * 0.1
        inits.extend([numpy_helper.from_array(w.astype(np.float32), f"{name}_w"),
                      numpy_helper.from_array(b.astype(np.float32), f"{name}_b")])
        nodes.append(helper.make_node("Conv", [src, f"{name}_w", f"{name}_b"], [f"{name}_c"], name=name,
                                      kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[stride, stride],
                                      group=groups))
        nodes.append(helper.make_node("Relu", [f"{name}_c"], [f"{name}_r"], name=f"{name}_relu"))
        return f"{name}_r"

    t = conv("x", 32, 64, stride=2, name="conv_rows")
    t = conv(t, 64, 64, name="conv_staged")
    t = conv(t, 64, 64, groups=64, name="dw")
    t = conv(t, 64, 256, stride=2, name="conv_wide")
    t = conv(t, 256, 256, name="conv_sliced")
    nodes.append(helper.make_node("GlobalAveragePool", [t], ["gap"], name="gap"))
    nodes.append(helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"))
    fw = rng.normal(size=(128, 256)) / 16.0
    inits.append(numpy_helper.from_array(fw.astype(np.float32), "fc_w"))
    inits.append(numpy_helper.from_array((rng.normal(size=(128,)) * 0.1).astype(np.float32), "fc_b"))
    nodes.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["y"], name="fc", transB=1))
    graph = helper.make_graph(nodes, "l2dma",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 32, 112, 112])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 128])], inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    d = tmp_path_factory.mktemp("l2dma")
    f, q = d / "f.onnx", d / "q.onnx"
    float_model(str(f))

    class Reader(CalibrationDataReader):
        def __init__(self):
            rng = np.random.default_rng(1)
            self.data = iter([{"x": rng.normal(size=(1, 32, 112, 112)).astype(np.float32)} for _ in range(2)])

        def get_next(self):
            return next(self.data, None)

    quantize_static(str(f), str(q), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    extra_options={"WeightSymmetric": True})
    x = np.random.default_rng(7).normal(size=(1, 32, 112, 112)).astype(np.float32)
    np.save(d / "x.npy", x)
    return d, q


def build(d, q, target, tag):
    out = d / tag
    if not out.exists():
        out.mkdir()
        p = cstatic("compile", q, "-o", out, "-t", target)
        (out / "compile.txt").write_text(p.stdout)
        cstatic("run", out, "--input", d / "x.npy", "--output", d / f"{tag}.npy")
    man = json.loads((out / "manifest.json").read_text())
    src = "".join(f.read_text() for f in sorted(out.glob("lib*.c")))
    return np.load(d / f"{tag}.npy"), man, src, (out / "compile.txt").read_text()


def l2_of(man):
    return {s["ir_name"]: s["l2"] for s in man["layers"] if "l2" in s}


def test_staged_build_equals_unstaged_and_takes_each_decision(model):
    d, q = model
    ref, man0, src0, _ = build(d, q, "c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact=none -l2-budget=0", "nodma")
    host, man_host, _, _ = build(d, q, "c_static_lib -mmalib=1 -mmalib-exact=none", "host")
    y, man, src, text = build(d, q, "c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact=none", "dma")
    assert np.array_equal(ref, host)
    assert np.array_equal(y, ref), "L2 staging changed the output"
    # -l2-budget=0 and the generic target stage nothing
    assert man0["l2_budget"] == 0 and man0["l2_bytes"] == 0 and "tidsp_dma_copy" not in src0
    assert man["l2_budget"] == BUDGET and 0 < man["l2_bytes"] <= BUDGET
    assert man["l2_bytes"] % 128 == 0
    # -mmalib=1: activations on 128 bytes (mmalib-integration "Limitations")
    assert man["arena_align"] == man_host["arena_align"] == man0["arena_align"] == 128
    kinds = sorted(l2_of(man).values())
    # one decision of each kind, named in the manifest and the summary line
    assert sum(v.startswith("H-tiled: guard 128 B + input 415872 B > L2 budget 393216 B: 4 tiles of 14 output rows") for v in kinds) == 1, kinds
    assert sum("through mmalib_conv2d_i8_sliced" in v for v in kinds) == 1, kinds
    assert sum(v.endswith("B in L2") and "+ weights" in v for v in kinds) == 4, kinds
    assert "L2 staging (InjectMMALIBDMA, budget 393216 B" in text
    assert "4 input+weights, 0 input only, 1 sliced, 1 H-tiled (input over the budget), 0 in DDR" in text
    sliced = next(v for v in kinds if "sliced" in v)
    assert "weights 589824 B > L2 budget 393216 B: 4 chunks of 64 output channels" in sliced
    # the C: copies, a wait before every staged call, the chunk loop, the
    # scratch taken once per part and checked before the first layer
    # (the H-tiled conv: its weights once, its strips and rows by 2D copies)
    assert src.count("tidsp_dma_copy(") == 4 * 2 + 2 + 1 and src.count("tidsp_dma_wait(0, 0)") == 5
    assert "mmalib_conv2d_i8_sliced(" in src and "for (int32_t oc = 0; oc < 256; oc += 64)" in src
    assert src.count("tidsp_dma_copy_2d(") == 3 and "static const int32_t ht[4][6]" in src
    assert "if (tidsp_l2_scratch(MODEL_L2_SIZE) == NULL) return TIDSP_ERR_L2;" in src
    assert f"#define MODEL_L2_SIZE {man['l2_bytes']}u" in (d / "dma" / "lib0.h").read_text()


@pytest.mark.parametrize("budget", [300_000, 131_072, 20_000])
def test_smaller_budgets_change_the_plan_not_the_output(model, budget):
    d, q = model
    ref, _, _, _ = build(d, q, "c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact=none -l2-budget=0", "nodma")
    y, man, src, _ = build(d, q, f"c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact=none -l2-budget={budget}", f"b{budget}")
    assert np.array_equal(y, ref)
    assert man["l2_bytes"] <= budget
    l2 = l2_of(man)
    assert len(l2) == 6 and man["target"].endswith(f"-l2-budget={budget} -mmalib-exact=none")
    if budget == 20_000:  # only the FC's input fits, and its weights (32 KB) do not
        assert sum(v.startswith("DDR") for v in l2.values()) == 5, l2
        assert sum(v.startswith("input 256 B in L2; weights 32768 B read from DDR") for v in l2.values()) == 1


def test_bad_budget_is_a_clear_error(model, tmp_path):
    _, q = model
    for bad in ("abc", "-1", "99999999999", ""):
        p = cstatic("compile", q, "-o", tmp_path / "o", "-t", f"c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact=none -l2-budget={bad}",
                    ok=False)
        assert p.returncode != 0 and "-l2-budget" in p.stderr, p.stderr
        assert "expected bytes in [0, 16777216]" in p.stderr or "has no value" in p.stderr, p.stderr


def test_double_buffered_sliced_conv_and_its_trace(model, tmp_path):
    """A budget where two chunks of 64 output channels fit beside the input:
    the sliced conv copies chunk i+1 (its own group) while chunk i computes
    (wait(0, 1), then wait(0, 0) on the last), bit for bit the unstaged
    output; `cstatic run --dma-trace` writes every copy and staged call,
    and each chunk's copy is issued before the previous chunk computes."""
    d, q = model
    ref, _, _, _ = build(d, q, "c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact=none -l2-budget=0", "nodma")
    y, man, src, _ = build(d, q, "c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact=none -l2-budget=600000", "db600000")
    assert np.array_equal(y, ref), "double-buffered chunks changed the output"
    sliced = next(v for v in l2_of(man).values() if "sliced" in v)
    assert sliced.endswith("4 chunks of 64 output channels (147456 B) through mmalib_conv2d_i8_sliced, "
                           "double-buffered"), sliced
    assert src.count("tidsp_dma_commit(0)") == 2
    # the manifest's plan as numbers, for every staged layer
    dma = {s["name"]: s["dma"] for s in man["layers"] if "l2" in s}
    assert len(dma) == 6 and all("dma" in s for s in man["layers"] if "l2" in s)
    assert dma["conv_sliced"] == {"strategy": "MMALIB-sliced", "l2_input_offset": 128, "l2_input_bytes": 230400,
                                  "l2_weight_offsets": [230528, 377984], "l2_weight_bytes": 147456,
                                  "tiles": 4, "oc_tile": 64, "pipeline_depth": 2}
    assert dma["conv_staged"]["strategy"] == "MMALIB-staged" and dma["conv_staged"]["pipeline_depth"] == 1
    assert dma["conv_staged"]["tiles"] == 1 and len(dma["conv_staged"]["l2_weight_offsets"]) == 1
    assert max(o + dma[k]["l2_weight_bytes"] for k in dma for o in dma[k].get("l2_weight_offsets", [0])) \
        <= man["l2_bytes"] <= 600000
    assert "st = tidsp_dma_wait(0, next < 256 ? 1 : 0);" in src
    assert "(const int8_t *)(L2 + (buf ? 377984u : 230528u))" in src

    trace = tmp_path / "t.json"
    p = cstatic("run", d / "db600000", "--input", d / "x.npy", "--output", tmp_path / "y.npy", "--dma-trace", trace)
    assert np.array_equal(np.load(tmp_path / "y.npy"), ref)
    t = json.loads(trace.read_text())
    ev, summary = t["traceEvents"], t["cstatic"]
    copies = [e for e in ev if e["cat"] == "dma"]
    computes = [e for e in ev if e["cat"] == "compute"]
    # 4 staged layers × (input + weights), the sliced input + 4 chunks, fc's 2
    assert len(copies) == summary["copies"] == 15 and summary["dropped"] == 0
    assert sum(e["args"]["bytes"] for e in copies) == summary["bytes"]
    # the 9 staged calls, and the 5 layers (4 pads and the GAP) during which
    # the next layer's weights are prefetched on queue 1 (trace lane 2)
    assert [e["name"] for e in computes].count("conv_sliced") == 4 and len(computes) == summary["computes"] == 14
    for e in copies:
        assert e["args"]["issue"] <= e["ts"] and e["dur"] >= 0 and e["tid"] in (1, 2)
    assert sorted(e["args"]["bytes"] for e in copies if e["tid"] == 2) == [576, 18432, 32768, 36864, 147456]
    wide = [e for e in computes if e["name"] == "conv_wide"][-1]  # the conv, after its pad
    chunk_copies = [e for e in copies if e["args"]["bytes"] == 147456 and e["ts"] > wide["ts"]]
    chunk_calls = [e for e in computes if e["name"] == "conv_sliced"]
    assert len(chunk_copies) == 4  # the prologue's chunk 0, then chunks 1..3
    for k in range(3):  # chunk k+1 is issued before chunk k computes
        assert chunk_copies[k + 1]["args"]["issue"] < chunk_calls[k]["ts"]
    assert 0 <= summary["dma_hidden"] <= summary["dma_busy"]
    assert "% hidden behind 14 layer calls" in p.stdout, p.stdout
    # Every event names the CPU it ran on (-2: it moved). Confined to one
    # CPU, the copy thread runs only while the model is preempted or
    # waiting: nothing is hidden, whatever the timing (a time-sliced copy
    # inside a layer's interval is not behind it).
    assert all(type(e["args"]["cpu"]) is int and e["args"]["cpu"] >= -2 for e in ev)
    if hasattr(os, "sched_setaffinity"):
        cpus = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(cpus)})  # inherited by cstatic and its copy thread
        try:
            cstatic("run", d / "db600000", "--input", d / "x.npy", "--output", tmp_path / "y1.npy", "--dma-trace",
                    tmp_path / "t1.json")
        finally:
            os.sched_setaffinity(0, cpus)
        one = json.loads((tmp_path / "t1.json").read_text())
        assert {e["args"]["cpu"] for e in one["traceEvents"]} == {min(cpus)}
        assert one["cstatic"]["dma_busy"] > 0 and one["cstatic"]["dma_hidden"] == 0, one["cstatic"]

    # a model that copies nothing: a clear error, no trace
    host_out = d / "host"
    build(d, q, "c_static_lib -mmalib=1 -mmalib-exact=none", "host")
    p = cstatic("run", host_out, "--input", d / "x.npy", "--output", tmp_path / "h.npy", "--dma-trace",
                tmp_path / "h.json", ok=False)
    assert p.returncode != 0 and "makes no DMA copies" in p.stderr and "-mcpu=c7x -mmalib=1" in p.stderr, p.stderr
    assert not (tmp_path / "h.json").exists()


def test_missing_wait_is_a_race_threadsanitizer_reports(model, tmp_path):
    """Under a ThreadSanitizer build of cstatic (make sanitize-slow), the
    double-buffered build with its pipeline wait removed reads a weight
    chunk the copy thread is still writing: TSan reports the race (exit 66)
    even when the output happens to come out right."""
    import shutil
    import subprocess
    from cstatic_cli import CSTATIC
    ldd = subprocess.run(["ldd", CSTATIC], capture_output=True, text=True).stdout
    if "libtsan" not in ldd:
        pytest.skip("needs a ThreadSanitizer cstatic (CSTATIC_BIN=build-tsan/bin/cstatic)")
    d, q = model
    build(d, q, "c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact=none -l2-budget=600000", "db600000")
    race = tmp_path / "race"
    shutil.copytree(d / "db600000", race)
    wait = "st = tidsp_dma_wait(0, next < 256 ? 1 : 0);"
    srcs = [f for f in race.glob("lib*.c") if wait in f.read_text()]
    assert len(srcs) == 1
    srcs[0].write_text(srcs[0].read_text().replace(wait, "st = TIDSP_OK; /* the wait, removed */"))
    # history_size=7: the kernel's read comes long before the copy's write
    # (dma_host.c lets the issuer run ahead under TSan), and the default
    # history no longer holds its stack ("failed to restore the stack").
    # TIDSP_KERNELS=ref: TSan instruments scalar loads, not the AVX-512
    # intrinsics' loads of the fast conv the host dispatches to on a VNNI
    # machine, which then reads the buffer unseen (no report at all)
    env = dict(os.environ, TSAN_OPTIONS="halt_on_error=1:exitcode=66:history_size=7", TIDSP_KERNELS="ref")
    p = cstatic("run", race, "--input", d / "x.npy", "--output", tmp_path / "y.npy", ok=False, env=env)
    assert p.returncode == 66 and "ThreadSanitizer: data race" in p.stderr, p.stderr[-2000:]
    assert "copy_thread" in p.stderr and "mmalib_conv2d_i8_sliced" in p.stderr


def test_staged_module_through_the_firmware(model):
    """The firmware (its --mmalib build) gives a staged module its L2 scratch
    from the L2 SRAM pool at load and binds it around each inference: the
    output is `cstatic run`'s, and a pool smaller than the module's L2 need
    fails the load naming both sizes."""
    import deploy_util
    d, q = model
    fw_bin = os.path.join(deploy_util.BIN_DIR, "c7x_fw_mmalib")
    assert os.path.exists(fw_bin), f"{fw_bin} not built"
    out = d / "module"
    cstatic("compile", q, "-o", out, "-t", "c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact=none", "--emit=module", "-q")
    l2_bytes = json.loads((out / "manifest.json").read_text())["l2_bytes"]
    assert l2_bytes > 0
    x = np.load(d / "x.npy")
    x.tofile(d / "x.bin")
    ref, _, _, _ = build(d, q, "c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact=none -l2-budget=0", "nodma")

    saved = deploy_util.FW_BIN
    deploy_util.FW_BIN = fw_bin
    try:
        (d / "fw_big").mkdir(exist_ok=True)
        fw = deploy_util.Firmware(d / "fw_big")
        try:
            h = fw.load(out / "lib0.out")
            for _ in range(2):  # the binding holds for every inference
                fw.compute("infer", h, 0, "-i", d / "x.bin", "-o", d / "y.bin")
                assert (d / "y.bin").read_bytes() == ref.tobytes(), "firmware output differs from cstatic run"
            fw.compute("unload", h)
        finally:
            fw.stop()
        # an L2 pool (64 KiB) smaller than the module needs: the load fails, cleanly
        (d / "fw_small").mkdir(exist_ok=True)
        fw = deploy_util.Firmware(d / "fw_small", "--l2-kib", "64")
        try:
            p = fw.compute("load", out / "lib0.out", ok=False)
            assert p.returncode != 0 and str(l2_bytes) in p.stderr and "L2" in p.stderr, p.stderr
            fw.compute("ping")
        finally:
            fw.stop()
    finally:
        deploy_util.FW_BIN = saved


@pytest.mark.parametrize("exact", ("none", "all"))
@pytest.mark.parametrize("variant", ("pt2e", "ort_s8", "ort_u8"))
@pytest.mark.parametrize("name", ("resnet18", "mobilenetv2", "mobilenetv3s", "shufflenetv2", "googlenet"))
def test_suite_model_staged_equals_host(name, variant, exact, model_suite, tmp_path):
    """Every suite file with -mcpu=c7x -mmalib=1 (staged, sliced, H-tiled,
    DDR layers), on MMALIB's int8 kernels and on the exact path's int16
    ones (the default), gives the -mmalib=1 host build's output on two
    inputs."""
    onnx_path = model_suite.model(name, variant)
    np.save(tmp_path / "x.npy", np.load(model_suite.inputs(name))[:2])
    ys = []
    for tag, target in (("dma", f"c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact={exact}"),
                        ("host", f"c_static_lib -mmalib=1 -mmalib-exact={exact}")):
        cstatic("compile", onnx_path, "-o", tmp_path / tag, "-t", target, "-q")
        cstatic("run", tmp_path / tag, "--input", tmp_path / "x.npy", "--output", tmp_path / f"{tag}.npy")
        ys.append(np.load(tmp_path / f"{tag}.npy"))
    man = json.loads((tmp_path / "dma" / "manifest.json").read_text())
    assert 0 < man["l2_bytes"] <= BUDGET and any("l2" in s for s in man["layers"])
    assert np.array_equal(ys[0], ys[1])


def test_exact_path_slices_int16_weights(model):
    """The exact path (-mmalib-exact=all, the default) runs the int8 convs
    on MMALIB's int16 kernel: twice the bytes, so at the default budget
    every input here but the FC's exceeds L2. With 512 KiB, conv_sliced's
    401 KB input fits and its 1.18 MB of int16 weights go through
    mmalib_conv2d_i16_sliced chunk by chunk (conv_wide's too: 295 KB beside
    its 401 KB input): the output of the unstaged build and of the host
    build bit for bit."""
    d, q = model
    ref, _, _, _ = build(d, q, "c_static_lib -mcpu=c7x -mmalib=1 -l2-budget=0", "exact_nodma")
    host, _, _, _ = build(d, q, "c_static_lib -mmalib=1", "exact_host")
    y, man, src, text = build(d, q, "c_static_lib -mcpu=c7x -mmalib=1 -l2-budget=524288", "exact_dma")
    print(text)
    assert np.array_equal(ref, host) and np.array_equal(y, ref), "L2 staging changed the output"
    kinds = l2_of(man)
    print(kinds)
    sliced = {k: v for k, v in kinds.items() if "through mmalib_conv2d_i16_sliced" in v}
    assert len(sliced) == 2 and any("weights 1179648 B > L2 budget 524288 B" in v for v in sliced.values()), kinds
    assert "mmalib_conv2d_i16_sliced(" in src and "mmalib_conv2d_i8_sliced(" not in src
    assert "2 sliced" in text


@pytest.mark.parametrize("budget,tiled", [(393_216, {"conv_rows": 8, "conv_staged": 6, "dw": 5, "conv_wide": 28}),
                                          (131_072, {"conv_rows": 56, "dw": 19}), (60_000, {"dw": 56})])
def test_inputs_over_the_budget_go_through_in_row_strips(model, budget, tiled):
    """Beyond the spec: a plain or depthwise MMALIB conv whose input alone
    exceeds the budget (the exact path's int16 convs here: 401-803 KB) is
    H-tiled, its input strips and output rows double-buffered through L2
    and its weights cached, one call per tile on the strip with the tile's
    own pads; a conv whose weights would not fit beside the buffers
    (conv_sliced's 1.2 MB; all but dw's 1152 B at 131 072 and 60 000 B)
    still reads DDR. Bit for bit the unstaged build's output."""
    d, q = model
    ref, _, _, _ = build(d, q, "c_static_lib -mcpu=c7x -mmalib=1 -l2-budget=0", "exact_nodma")
    y, man, src, text = build(d, q, f"c_static_lib -mcpu=c7x -mmalib=1 -l2-budget={budget}", f"exact_h{budget}")
    assert np.array_equal(y, ref), "H tiles changed the output"
    layers = {s["name"]: s for s in man["layers"] if "l2" in s}
    h = {k: s for k, s in layers.items() if s["dma"]["strategy"] == "H"}
    assert {k: s["dma"]["tiles"] for k, s in h.items()} == tiled, {k: s["l2"] for k, s in layers.items()}
    for k, s in h.items():
        kernel = "mmalib_depthwise_conv2d_i16" if k == "dw" else "mmalib_conv2d_i16"
        assert s["kernel"] == kernel and s["l2"].startswith("H-tiled: guard"), s["l2"]
        assert s["dma"]["tiles"] >= 2 and s["dma"]["l2_weight_bytes"] > 0 and s["dma"]["pipeline_depth"] == 2
        assert s["dma"]["l2_input_offsets"][0] >= 128  # above the MMALIB guard
    assert all(s["l2"].startswith("DDR: guard") for k, s in layers.items() if k not in h and k != "fc")
    assert f"{len(h)} H-tiled (input over the budget)" in text
    assert src.count("tidsp_dma_copy_2d(") == 3 * len(h) and man["l2_bytes"] <= budget


def test_exact_sliced_module_through_the_firmware(model):
    """The exact path's sliced int16 conv resolves in the --mmalib
    firmware (kernels.def's AUX row exports mmalib_conv2d_i16_sliced), and
    its H-tiled one runs its 2D copies there: the module gives the unstaged
    build's output."""
    import deploy_util
    d, q = model
    fw_bin = os.path.join(deploy_util.BIN_DIR, "c7x_fw_mmalib")
    out = d / "exact_module"
    cstatic("compile", q, "-o", out, "-t", "c_static_lib -mcpu=c7x -mmalib=1 -l2-budget=524288", "--emit=module",
            "-q")
    manifest = (out / "manifest.json").read_text()
    assert "through mmalib_conv2d_i16_sliced" in manifest and "H-tiled: guard 256 B + input 802816 B" in manifest
    x = np.load(d / "x.npy")
    x.tofile(d / "x.bin")
    ref, _, _, _ = build(d, q, "c_static_lib -mcpu=c7x -mmalib=1 -l2-budget=0", "exact_nodma")
    saved = deploy_util.FW_BIN
    deploy_util.FW_BIN = fw_bin
    try:
        (d / "fw_exact").mkdir(exist_ok=True)
        fw = deploy_util.Firmware(d / "fw_exact", "--l2-kib", "512")
        try:
            h = fw.load(out / "lib0.out")
            fw.compute("infer", h, 0, "-i", d / "x.bin", "-o", d / "y_exact.bin")
            assert (d / "y_exact.bin").read_bytes() == ref.tobytes(), "firmware output differs from cstatic run"
            fw.compute("unload", h)
        finally:
            fw.stop()
    finally:
        deploy_util.FW_BIN = saved


def random_conv(seed, d):
    """A seeded random conv or depthwise conv (ReLU or not), ORT-quantized
    int8 QDQ, and an input: (model path, input path, geometry)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
    rng = np.random.default_rng(seed)
    dw = bool(rng.random() < 0.35)
    c = int(rng.choice([8, 16, 32, 48]))
    co = c if dw else int(rng.choice([8, 16, 64, 96]))
    h, w = int(rng.integers(12, 70)), int(rng.integers(12, 70))
    k = 3 if dw else int(rng.choice([1, 3, 5]))
    s = int(rng.choice([1, 2]))
    pads = [int(p) for p in rng.integers(0, k // 2 + 1, size=4)]
    wt = rng.normal(size=(co, 1 if dw else c, k, k)) * np.sqrt(2.0 / (k * k * (1 if dw else c)))
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[k, k], strides=[s, s], pads=pads,
                              group=c if dw else 1),
             helper.make_node("Relu" if rng.random() < 0.5 else "Identity", ["c"], ["y"])]
    graph = helper.make_graph(nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, h, w])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(wt.astype(np.float32), "w"),
                               numpy_helper.from_array((rng.normal(size=(co,)) * 0.1).astype(np.float32), "b")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, d / "f.onnx")

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.data = iter([{"x": rng.normal(size=(1, c, h, w)).astype(np.float32)} for _ in range(2)])

        def get_next(self):
            return next(self.data, None)

    quantize_static(str(d / "f.onnx"), str(d / "q.onnx"), Reader(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QInt8, weight_type=QuantType.QInt8,
                    extra_options={"WeightSymmetric": True})
    np.save(d / "x.npy", rng.normal(size=(1, c, h, w)).astype(np.float32))
    exact = "all" if rng.random() < 0.6 else "none"
    budget = int(c * h * w * (2 if exact == "all" else 1) * rng.uniform(0.3, 0.95))
    return d / "q.onnx", d / "x.npy", dict(dw=dw, c=c, co=co, h=h, w=w, k=k, s=s, pads=pads, exact=exact,
                                           budget=budget)


@pytest.mark.parametrize("seed", [pytest.param(s, marks=() if s < 8 else pytest.mark.slow) for s in range(48)])
def test_random_conv_over_the_budget_equals_unstaged(seed, tmp_path):
    """Seeded random geometries (1x1/3x3/5x5, stride 1/2, asymmetric pads,
    depthwise, int8 or the exact path's int16) at a budget below the input:
    whatever the plan (H tiles, DDR, the core's own tiling), the unstaged
    build's output bit for bit."""
    q, x, geom = random_conv(seed, tmp_path)
    ys = []
    for tag, budget in (("ref", 0), ("staged", geom["budget"])):
        target = f"c_static_lib -mcpu=c7x -mmalib=1 -mmalib-exact={geom['exact']} -l2-budget={budget}"
        cstatic("compile", q, "-o", tmp_path / tag, "-t", target, "-q")
        cstatic("run", tmp_path / tag, "--input", x, "--output", tmp_path / f"{tag}.npy")
        ys.append(np.load(tmp_path / f"{tag}.npy"))
    man = json.loads((tmp_path / "staged" / "manifest.json").read_text())
    assert man["l2_bytes"] <= geom["budget"], geom
    assert np.array_equal(ys[0], ys[1]), (geom, [s["l2"] for s in man["layers"] if "l2" in s])
