#!/usr/bin/env python3
"""Pooling layers as a framework runs them, from whole-network kernel profiles.

PyTorch runs NHWC max and average pooling with its own kernels, not cuDNN's
(calibrate/data/h200/network_kernels.jsonl, from netbench/profile_kernels.py),
and on the H200 those are several times slower than the cuDNN pooling the
runner times. This pairs, in launch order, each network's pooling kernels
with the pool layers of its ONNX graph (`tilewave layers --extract`) when the
counts agree, and writes them as measured layers (source "pytorch_profile").

usage: calibrate/framework_pool_layers.py TILEWAVE KERNELS.jsonl OUT.jsonl
"""
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KERNEL_MARK = {"max": "max_pool_forward_nhwc", "avg": "avg_pool2d_out_cuda_frame_nhwc"}


def main():
    tilewave, kernels_path, out_path = sys.argv[1:4]
    rows, skipped = [], []
    with open(kernels_path) as f:
        for line in f:
            prof = json.loads(line)
            onnx = os.path.join(ROOT, "onnx_models", prof["model"] + ".onnx")
            layers = subprocess.run([tilewave, "layers", "--extract", onnx, "--batch", str(prof["batch"])],
                                    check=True, capture_output=True, text=True).stdout.splitlines()
            for mode, mark in KERNEL_MARK.items():
                ours = [json.loads(x) for x in layers if '"op":"pool"' in x and f'"mode":"{mode}"' in x]
                theirs = [t for name, t in prof["list"] if mark in name]
                if len(ours) != len(theirs):
                    skipped.append(f"{prof['model']}@{prof['batch']} {mode}: {len(ours)} ONNX vs {len(theirs)} kernels")
                    continue
                for layer, t in zip(ours, theirs):
                    layer.update({"measured_us": t, "status": "ok", "source": "pytorch_profile"})
                    rows.append(layer)
    with open(out_path + ".tmp", "w") as f:
        f.write(json.dumps({"header": True, "source": "pytorch_profile", "profile": kernels_path,
                            "note": "device times of one eager forward under torch.profiler"}) + "\n")
        for r in rows:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    os.replace(out_path + ".tmp", out_path)
    print(f"{len(rows)} pool layers -> {out_path}", file=sys.stderr)
    for s in skipped:
        print("  not paired: " + s, file=sys.stderr)


if __name__ == "__main__":
    main()
