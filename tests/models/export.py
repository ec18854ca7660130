"""PyTorch -> ONNX export for the model suite, with the suite's I/O names.

The exporter and the QDQ check are cstatic's (python/cstatic/export.py:
torch.onnx dynamo export at opset 21, and `check_qdq`, which fails when the
weights were folded to float); this module only fixes the names every
suite file uses: input "input", output "logits".
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "python"))
from cstatic.export import OPSET, check_qdq, export_qdq_onnx, op_histogram  # noqa: E402,F401

INPUT_NAME = "input"
OUTPUT_NAME = "logits"


def export_onnx(model, example, path):
    """Export `model` (nn.Module or PT2E-converted GraphModule) to `path`."""
    export_qdq_onnx(model, example, path, input_names=[INPUT_NAME],
                    output_names=[OUTPUT_NAME])
