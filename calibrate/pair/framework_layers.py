#!/usr/bin/env python3
"""Pooling and LayerNorm layers as a framework runs them, from whole-network
kernel profiles.

PyTorch runs NHWC max and average pooling and LayerNorm with its own kernels,
not cuDNN's or the runner's (calibrate/data/h200/network_kernels.jsonl.gz, from
measure/netbench/profile_kernels.py); on the H200 its pooling is several times slower
than cuDNN's, and its LayerNorm over short rows is bound by the row rate.
This pairs, in launch order, each network's kernels of one kind with the
layers of that kind in its ONNX graph (`tilewave layers --extract`) when the
counts agree, and writes them as measured layers (source "pytorch_profile").

usage: python3 -m calibrate.pair.framework_layers TILEWAVE KERNELS.jsonl OUT.jsonl
"""
import os
import sys

from calibrate.pair.profile_pairing import extract_layers, write_jsonl
from calibrate import jsonl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# kind -> ((layer field, value), substring of PyTorch's kernel name)
KINDS = {"max pool": (("mode", "max"), "max_pool_forward_nhwc"),
         "avg pool": (("mode", "avg"), "avg_pool2d_out_cuda_frame_nhwc"),
         "layer norm": (("onnx_op", "LayerNormalization"), "layer_norm_kernel")}


def main():
    tilewave, kernels_path, out_path = sys.argv[1:4]
    rows, skipped = [], []
    for prof in jsonl.read(kernels_path):
        onnx = os.path.join(ROOT, "onnx_models", prof["model"] + ".onnx")
        layers = extract_layers(tilewave, onnx, prof["batch"])
        for kind, ((field, value), kernel_mark) in KINDS.items():
            ours = [dict(x) for x in layers if x.get(field) == value]
            theirs = [t for name, t in prof["list"] if kernel_mark in name]
            if len(ours) != len(theirs):
                skipped.append(f"{prof['model']}@{prof['batch']} {kind}: {len(ours)} ONNX vs {len(theirs)} kernels")
                continue
            for layer, t in zip(ours, theirs):
                layer.update({"measured_us": t, "status": "ok", "source": "pytorch_profile"})
                rows.append(layer)
    write_jsonl(out_path, rows, {"header": True, "source": "pytorch_profile", "profile": kernels_path,
                                 "note": "device times of one eager forward under torch.profiler"})
    print(f"{len(rows)} pool and layer-norm layers -> {out_path}", file=sys.stderr)
    for s in skipped:
        print("  not paired: " + s, file=sys.stderr)


if __name__ == "__main__":
    main()
