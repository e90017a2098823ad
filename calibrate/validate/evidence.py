#!/usr/bin/env python3
"""Prints the H200 evidence behind model terms (docs/model.md,
docs/calibration.md), from the committed data in calibrate/data/h200/.

usage: python3 -m calibrate.validate.evidence TILEWAVE {eltwise-l2,layernorm,grouped,bn-pass,reduce}

  eltwise-l2  ReLU/Add kernels timed inside networks (eltwise_in_network.jsonl)
              over the runner's time for the same kernel from DRAM, by traffic
  layernorm   PyTorch's LayerNorm kernels (framework_pytorch.jsonl): time per
              row and bandwidth, by shape
  grouped     the grouped-width sweep (grouped_measured.jsonl): rate and
              predicted/measured per group width
  bn-pass     eager PyTorch's BatchNorm pass kernels in the runtime fit set's
              profiles (runtimes/fit_heldout, fit_heldout_remainder: fit families only), by traffic:
              measured and predicted time, rate, share served by L2
  reduce      eager PyTorch's reduce_kernel for global pools and means, the same way
"""
import json
import math
import os
import statistics
import subprocess
import sys

from calibrate.pair.profile_pairing import extract_layers
from calibrate.pair import kernel_pairs
from calibrate import jsonl

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "calibrate", "data", "h200")


def data_rows(name):
    return jsonl.read(os.path.join(DATA, name))


def eltwise_l2(tw):
    runner = {(r["elems"], r["inputs"]): r["measured_us"] for r in data_rows("measured.jsonl")
              if r.get("op") == "eltwise" and r.get("dtype") == "fp16" and "measured_us" in r}
    shapes = {}
    bins = {}
    for k in data_rows("eltwise_in_network.jsonl"):
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
    for r in data_rows("framework_pytorch.jsonl"):
        if r.get("onnx_op") == "LayerNormalization":
            rows.setdefault((r["outer"], r["inner"]), []).append(r["measured_us"])
    print("rows     width  MB moved  median us  ns/row  TB/s")
    for (outer, inner), ts in sorted(rows.items()):
        t = statistics.median(ts)
        mb = 2 * outer * inner * 2 / 1e6
        print(f"{outer:8d} {inner:5d} {mb:9.1f} {t:10.1f} {1e3 * t / outer:7.2f} {mb / t:5.2f}")


def grouped_widths(rows, pred):
    """{group width: [(TFLOP/s, predicted/measured)]} of the grouped-width sweep's rows and
    `tilewave layers`' predictions of them, line for line."""
    by_width = {}
    for r, p in zip(rows, pred):
        cg = r["C"] // r["groups"]
        P = (r["H"] + 2 * r["pad"][0] - 3) // r["stride"][0] + 1
        tflops = 2 * r["N"] * P * P * r["K"] * cg * 9 / r["measured_us"] / 1e6
        by_width.setdefault(cg, []).append((tflops, p["pred_us"] / r["measured_us"]))
    return by_width


def grouped(tw):
    rows = [r for r in data_rows("grouped_measured.jsonl") if "measured_us" in r]
    out = subprocess.run([tw, "layers", os.path.join(DATA, "grouped_measured.jsonl"), "--gpu", "h200"],
                         check=True, capture_output=True, text=True).stdout.splitlines()
    by_width = grouped_widths(rows, [json.loads(x) for x in out])
    print("width  power of 2  layers  median TFLOP/s  median predicted/measured")
    for cg in sorted(by_width):
        v = by_width[cg]
        print(f"{cg:5d}  {'yes' if cg & (cg - 1) == 0 else 'no':>10}  {len(v):6d}  "
              f"{statistics.median(x[0] for x in v):14.1f}  {statistics.median(x[1] for x in v):.2f}")


def eager_fit_pairs(tw, keep):
    """Paired kernels of the eager runs of the runtime fit set (kernel_pairs.py) that `keep` accepts."""
    runtimes = os.path.join(DATA, "runtimes")
    runs = [r for r in kernel_pairs.read_runs(os.path.join(runtimes, "derived", "fit_runs.jsonl"))
            if r["runtime"] == "eager"]
    lists = kernel_pairs.kernel_lists([os.path.join(runtimes, run, "kernels.jsonl.gz") for run in ("fit_heldout", "fit_heldout_remainder")])
    return [p for p in kernel_pairs.pairs(runs, lists, tw) if keep(p)]


def by_traffic(rows):
    bins = {}
    for r in rows:
        bins.setdefault(math.floor(2 * math.log10(max(r["bytes"], 1))) / 2, []).append(r)
    print("traffic from (MB)  kernels  median meas us  median pred us  pred/meas  meas TB/s  L2-served")
    for b in sorted(bins):
        v = bins[b]
        med = lambda f: statistics.median(f(r) for r in v)  # noqa: E731
        print(f"{10 ** b / 1e6:17.4f}  {len(v):7d}  {med(lambda r: r['measured_us']):14.2f}  "
              f"{med(lambda r: r['predicted_us']):14.2f}  {med(lambda r: r['predicted_us'] / r['measured_us']):9.2f}  "
              f"{med(lambda r: r['bytes'] / r['measured_us'] / 1e6):9.2f}  "
              f"{med(lambda r: r['l2_hit_bytes'] / max(r['bytes'], 1)):9.2f}")
    print(f"all: {len(rows)} kernels, predicted {sum(r['predicted_us'] for r in rows):.0f} us, "
          f"measured {sum(r['measured_us'] for r in rows):.0f} us")


def bn_pass(tw):
    by_traffic(eager_fit_pairs(tw, lambda p: "batch_norm_transform_input" in p["measured"]))


def reduce(tw):
    by_traffic(eager_fit_pairs(tw, lambda p: p["kind"] == "reduce" and "reduce_kernel" in p["measured"]))


def main():
    topics = {"eltwise-l2": eltwise_l2, "layernorm": layernorm, "grouped": grouped, "bn-pass": bn_pass,
              "reduce": reduce}
    if len(sys.argv) != 3 or sys.argv[2] not in topics:
        sys.exit(__doc__)
    topics[sys.argv[2]](sys.argv[1])


if __name__ == "__main__":
    main()
