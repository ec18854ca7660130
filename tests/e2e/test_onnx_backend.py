"""ONNX's backend node tests (Debian's libonnx-testdata, installed by
`make test`) for every op the README claims, through cstatic: compiled,
run, outputs compared as ONNX's own runner compares them (onnx_backend.py
says how; parameters a static compiler needs are frozen into
initializers).

A test in EXPECTED_FAILURES must fail (strict xfail): when one starts to
pass, move it out of the table, and out of the README's list. The pass
rate over all of them is printed and written to
tests/models/out/onnx_backend.md.
"""

import os
import shutil

import pytest

import onnx_backend

EXPECTED_FAILURES = {
    'string tensors are not supported (numbers only)': (
        "test_cast_FLOAT_to_STRING", "test_cast_STRING_to_FLOAT",
        "test_castlike_FLOAT_to_STRING_expanded", "test_castlike_STRING_to_FLOAT_expanded",
    ),
    "ONNX's data truncates float to bfloat16 (0x3ef5eeb0 -> 0x3ef5); ONNX Runtime and cstatic "
    "round to nearest even (0x3ef6)": ("test_cast_FLOAT_to_BFLOAT16",),
    "ONNX's data for input 'like' is uint16[1] where the graph declares bfloat16[3, 4]": (
        "test_castlike_BFLOAT16_to_FLOAT_expanded", "test_castlike_FLOAT_to_BFLOAT16_expanded",
    ),
    'Dropout in training mode with ratio > 0: its mask is random (refused; ratio 0 runs)': (
        "test_training_dropout", "test_training_dropout_default",
        "test_training_dropout_default_mask", "test_training_dropout_mask",
    ),
    'sequence and optional values are not supported': (
        "test_identity_opt", "test_identity_sequence",
    ),
    "ONNX Runtime (the reference) and ONNX's data disagree on align_corners with down-scaling scales: ORT divides "
    "by the output size less one (linear: [1, 4]), ONNX's reference by the unrounded in*scale less one "
    "([1, 3.142857]); cstatic equals ORT bit for bit": (
        "test_resize_downsample_scales_cubic_align_corners", "test_resize_downsample_scales_linear_align_corners",
    ),
}

_REASON = {name: why for why, names in EXPECTED_FAILURES.items() for name in names}
_RESULTS = {}
NAMES = onnx_backend.node_tests()


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("onnx_backend")
    yield d
    shutil.rmtree(d, ignore_errors=True)
    if _RESULTS:
        _write_summary()


def _write_summary():
    passed = sum(why is None for why in _RESULTS.values())
    lines = [f"# ONNX backend node tests: {passed} of {len(_RESULTS)} pass\n",
             "Node tests of libonnx-testdata whose ops the README claims "
             "(tests/e2e/test_onnx_backend.py).\n"]
    for why, names in EXPECTED_FAILURES.items():
        ran = [n for n in names if n in _RESULTS]
        if ran:
            lines.append(f"- {why} ({len(ran)}): {', '.join(ran)}")
    out = os.path.join(onnx_backend.ROOT, "tests", "models", "out")
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "onnx_backend.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"\nONNX backend node tests: {passed} of {len(_RESULTS)} pass")


@pytest.mark.skipif(not NAMES, reason=f"libonnx-testdata is not installed ({onnx_backend.DATA})")
@pytest.mark.parametrize("name", NAMES or ["none"])
def test_node(workdir, name):
    why = onnx_backend.run(name, str(workdir))
    _RESULTS[name] = why
    if name in _REASON:
        if why is None:
            pytest.fail(f"{name} passes now: take it out of EXPECTED_FAILURES ({_REASON[name]})")
        pytest.xfail(f"{_REASON[name]}: {why}")
    assert why is None, why


def test_expected_failures_are_node_tests():
    """The table names real tests of the selection (no stale entries)."""
    if not NAMES:
        pytest.skip("libonnx-testdata is not installed")
    stale = sorted(set(_REASON) - set(NAMES))
    assert not stale, stale
