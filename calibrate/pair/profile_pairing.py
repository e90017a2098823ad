"""Shared by the scripts that pair ONNX layers with kernels of a PyTorch
profile (framework_layers.py, eltwise_in_network.py)."""
import json
import os
import subprocess

from calibrate import jsonl


def extract_layers(tilewave, onnx, batch):
    """The kernels of a model at a batch, as `tilewave layers --extract` writes them."""
    # The profiles are of runs 1-6 (calibrate/measure/netbench: BatchNorm folded, conv biases removed).
    out = subprocess.run([tilewave, "layers", "--extract", onnx, "--batch", str(batch), "--runtime", "eager-folded"],
                         check=True, capture_output=True, text=True).stdout
    return jsonl.parse(out, "tilewave layers --extract")


def write_jsonl(path, rows, header=None):
    """Writes the rows (after an optional header line) all at once: no half-written file."""
    with open(path + ".tmp", "w") as f:
        if header is not None:
            f.write(json.dumps(header) + "\n")
        for r in rows:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    os.replace(path + ".tmp", path)
