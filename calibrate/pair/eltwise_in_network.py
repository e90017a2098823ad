#!/usr/bin/env python3
"""Elementwise kernels as they run inside networks, from whole-network profiles.

Calibration times each layer alone from DRAM; inside a network a ReLU or an
Add reads what the previous kernel just wrote, often from L2. This pairs, in
launch order, the Relu/Add nodes of each network's ONNX graph (`tilewave
layers --extract`) with PyTorch's elementwise kernels in its profile
(measure/netbench/profile_kernels.py) when the counts agree, and writes one line per
kernel: model, batch, node and its device time in the network. `tilewave
calibrate fit-networks --kernel-times` fits the L2 terms to them
(docs/model.md "Inside a network").

usage: python3 -m calibrate.pair.eltwise_in_network TILEWAVE KERNELS.jsonl OUT.jsonl [MODELS_DIR]
"""
import os
import sys

from calibrate.pair.profile_pairing import extract_layers, write_jsonl
from calibrate import jsonl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ONNX_OPS = ("Relu", "Add")
KERNEL_MARK = "elementwise_kernel"


def main():
    tilewave, kernels_path, out_path = sys.argv[1:4]
    models_dir = sys.argv[4] if len(sys.argv) > 4 else os.path.join(ROOT, "onnx_models")
    rows, skipped = [], []
    for prof in jsonl.read(kernels_path):
        layers = extract_layers(tilewave, os.path.join(models_dir, prof["model"] + ".onnx"), prof["batch"])
        ours = [x for x in layers if x["op"] == "eltwise" and x["onnx_op"] in ONNX_OPS]
        theirs = [t for name, t in prof["list"] if KERNEL_MARK in name]
        if not ours or len(ours) != len(theirs):
            skipped.append(f"{prof['model']}@{prof['batch']}: {len(ours)} Relu/Add vs {len(theirs)} kernels")
            continue
        for layer, t in zip(ours, theirs):
            rows.append({"model": prof["model"], "batch": prof["batch"], "node": layer["node"],
                         "measured_us": t})
    write_jsonl(out_path, rows)
    print(f"{len(rows)} in-network elementwise kernels -> {out_path}", file=sys.stderr)
    for s in skipped:
        print("  not paired: " + s, file=sys.stderr)


if __name__ == "__main__":
    main()
