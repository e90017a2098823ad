#!/usr/bin/env python3
"""Prints the H200 evidence behind three model terms (docs/model.md,
docs/calibration.md), from the committed data in calibrate/data/h200/.

usage: calibrate/validate/evidence.py TILEWAVE {eltwise-l2,layernorm,grouped}

  eltwise-l2  ReLU/Add kernels timed inside networks (eltwise_in_network.jsonl)
              over the runner's time for the same kernel from DRAM, by traffic
  layernorm   PyTorch's LayerNorm kernels (framework_pytorch.jsonl): time per
              row and bandwidth, by shape
  grouped     the grouped-width sweep (grouped_measured.jsonl): rate and
              predicted/measured per group width
"""
import json
import math
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "pair"))
from profile_pairing import extract_layers  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "calibrate", "data", "h200")


def jsonl(name):
    with open(os.path.join(DATA, name)) as f:
        return [json.loads(line) for line in f if line.strip()]


def eltwise_l2(tw):
    runner = {(r["elems"], r["inputs"]): r["measured_us"] for r in jsonl("measured.jsonl")
              if r.get("op") == "eltwise" and r.get("dtype") == "fp16" and "measured_us" in r}
    shapes = {}
    bins = {}
    for k in jsonl("eltwise_in_network.jsonl"):
        key = (k["model"], k["batch"])
        if key not in shapes:
            onnx = os.path.join(ROOT, "onnx_models", k["model"] + ".onnx")
            shapes[key] = {x["node"]: x for x in extract_layers(tw, onnx, k["batch"])}
        layer = shapes[key][k["node"]]
        alone = runner.get((layer["elems"], layer["inputs"]))
        if alone:
            mb = layer["elems"] * 2 * (layer["inputs"] + 1) / 1e6
            bins.setdefault(round(2 * math.log10(mb)) / 2, []).append(k["measured_us"] / alone)
    print("traffic (MB, half-decade bins)  kernels  median in-network / alone")
    for b in sorted(bins):
        print(f"{10 ** b:10.1f}  {len(bins[b]):8d}  {statistics.median(bins[b]):.2f}")


def layernorm(_tw):
    rows = {}
    for r in jsonl("framework_pytorch.jsonl"):
        if r.get("onnx_op") == "LayerNormalization":
            rows.setdefault((r["outer"], r["inner"]), []).append(r["measured_us"])
    print("rows     width  MB moved  median us  ns/row  TB/s")
    for (outer, inner), ts in sorted(rows.items()):
        t = statistics.median(ts)
        mb = 2 * outer * inner * 2 / 1e6
        print(f"{outer:8d} {inner:5d} {mb:9.1f} {t:10.1f} {1e3 * t / outer:7.2f} {mb / t:5.2f}")


def grouped(tw):
    rows = [r for r in jsonl("grouped_measured.jsonl") if "measured_us" in r]
    out = subprocess.run([tw, "layers", os.path.join(DATA, "grouped_measured.jsonl"), "--gpu", "h200"],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    pred = [json.loads(x) for x in out]
    by_width = {}
    for r, p in zip(rows, pred):
        cg = r["C"] // r["groups"]
        P = (r["H"] + 2 * r["pad"][0] - 3) // r["stride"][0] + 1
        tflops = 2 * r["N"] * P * P * r["K"] * cg * 9 / r["measured_us"] / 1e6
        by_width.setdefault(cg, []).append((tflops, p["pred_us"] / r["measured_us"]))
    print("width  power of 2  layers  median TFLOP/s  median predicted/measured")
    for cg in sorted(by_width):
        v = by_width[cg]
        print(f"{cg:5d}  {'yes' if cg & (cg - 1) == 0 else 'no':>10}  {len(v):6d}  "
              f"{statistics.median(x[0] for x in v):14.1f}  {statistics.median(x[1] for x in v):.2f}")


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("eltwise-l2", "layernorm", "grouped"):
        sys.exit(__doc__)
    {"eltwise-l2": eltwise_l2, "layernorm": layernorm, "grouped": grouped}[sys.argv[2]](sys.argv[1])


if __name__ == "__main__":
    main()
