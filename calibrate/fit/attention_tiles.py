#!/usr/bin/env python3
"""The fused attention kernel's time by its tiles (docs/validation.md
"Attention: the fused kernel's time"), on calibrate/measure/attention_sweep.py's
folders: what tilewave predicts for each measured call today, and what a
form built on the kernel's own tiling gives, fitted on one seeded sample of
shapes and judged on another.

Under autocast on Hopper, PyTorch 2.11 runs every fused call of the sweep in
cuDNN's `sdpa_sm90_flash_fprop_wgmma_f16` kernel: a `64x128x64` variant up to
a head size of 64, a `64x128x128` one above. tilewave prices it today as a
GEMM (docs/model.md "Attention": M = queries, N = value width, K = keys x
(d + d_v) / d_v), near the tensor cores' rate. The form below instead counts
the kernel's work units: a CTA owns a tile of 128 queries of one (batch,
head) and walks the keys in blocks of 128; the SMs run CTAs back to back, so
the time is

    t = t0 + max(1, CTAs / SMs) x (cta_us[v] + key_blocks x (block_us[v] + mask_us))
    CTAs = batch x heads x ceil(q / 128), key_blocks = ceil(kv / 128)

with v the variant (head size up to 64, or above), and mask_us the cost of
an additive mask or bool mask per key block: one value when the mask's rows
(kv values) are an even count, another when odd (rows that cannot be read
two values at a time). SMs is the GPU's (132 on the H100 and H200), not
fitted. Seven constants, fitted by scipy's least_squares on the log of
time; the tile of 128 queries and 128 keys fits better than 64 by 64,
64 by 128 or 128 by 64 (the same fit over each: the `other tiles` line). The table judges each
sample with the constants fitted on `core_and_sample`; `held_out_sample`
is 1,520 other shapes of the same grid drawn with another seed, `repeat` the
first sample measured again in the same call.

usage: python3 -m calibrate.fit.attention_tiles calibrate/data/h100/attention_sweep [--tilewave build/analyzer/tilewave] [--gpu h100]
         [--other calibrate/data/h200/sdpa_paths/sdpa_paths.jsonl [--other-gpu h200]]
(the Python module from PYTHONPATH=build/analyzer/python, or the build that holds --tilewave)
"""
import argparse
import gzip
import json
import math
import os
import statistics

import numpy as np
from scipy.optimize import least_squares

from calibrate.module import tilewave_module

FIT = "core_and_sample"
SAMPLES = (FIT, "held_out_sample", "repeat")
TILE_Q, TILE_KV = 128, 128
OTHER_TILES = ((64, 64), (64, 128), (128, 64))
SMS = 132
PARAMS = ("t0_us", "cta_us_d64", "block_us_d64", "cta_us_d128", "block_us_d128", "mask_us_even", "mask_us_odd")


def rows(folder):
    """The sweep's rows that ran a fused kernel."""
    path = os.path.join(folder, "attention_sweep.jsonl.gz")
    with gzip.open(path, "rt") as f:
        out = [json.loads(line) for line in f]
    return [r for r in out if "case" in r and r.get("fused_us")]


def shape(r):
    b, h, q, d = r["q"]
    return {"bh": b * h, "q": q, "kv": r["k"][2], "d": d, "mask": (r["mask"] or ["none"])[0]}


def tile_form(p, s, tile=(TILE_Q, TILE_KV)):
    t0, cta_small, block_small, cta_large, block_large, mask_even, mask_odd = p
    cta, block = (cta_large, block_large) if s["d"] > 64 else (cta_small, block_small)
    if s["mask"] != "none":
        block += mask_even if s["kv"] % 2 == 0 else mask_odd
    ctas = s["bh"] * math.ceil(s["q"] / tile[0])
    return t0 + max(1.0, ctas / SMS) * (cta + math.ceil(s["kv"] / tile[1]) * block)


def fit_tile_form(fit_rows, tile=(TILE_Q, TILE_KV)):
    shapes = [shape(r) for r in fit_rows]
    measured = np.log([r["fused_us"] for r in fit_rows])
    res = least_squares(lambda p: np.log([tile_form(p, s, tile) for s in shapes]) - measured,
                        [2.0, 1.0, 0.5, 1.0, 0.5, 0.5, 0.5], bounds=([0.0] * len(PARAMS), [50.0] * len(PARAMS)))
    return list(res.x)


def tilewave_times(tilewave, fit_rows, gpu):
    layers = [{"op": "attention", "batch_heads": s["bh"], "q_len": s["q"], "kv_len": s["kv"], "head_dim": s["d"],
               "dtype": "fp16"} for s in map(shape, fit_rows)]
    return [p["time_us"] for p in tilewave.predict_layers(layers, gpu=gpu)]


def errors(predicted, measured):
    ratio = [p / m for p, m in zip(predicted, measured)]
    err = sorted(abs(x - 1) for x in ratio)
    return (f"{100 * statistics.median(err):.1f}% | {100 * float(np.percentile(err, 90)):.1f}% | "
            f"{statistics.median(ratio):.2f}")


def other_gpu_lines(path, p, tilewave, gpu):
    """The form, with the constants of FIT, and tilewave today on calibrate/measure/sdpa_paths.py's fused calls of
    another GPU (whose fused kernel is read from its kernels)."""
    with open(path) as f:
        found = [json.loads(line) for line in f]
    header = found[0]
    calls = []
    for r in found[1:]:
        fused = [k for k in r.get("kernels", []) if "sdpa" in k[0] or "flash" in k[0] or "fmha" in k[0]]
        if fused and len(r["q"]) == 4:
            calls.append({"case": r["case"], "q": r["q"], "k": r["k"], "mask": r["mask"], "fused_us": fused[0][2]})
    measured = [r["fused_us"] for r in calls]
    return [f"the {header['gpu']}'s {len(calls)} fused calls of sdpa_paths.py (torch {header['torch']}): today {gpu}'s file "
            + errors(tilewave_times(tilewave, calls, gpu), measured).replace(" | ", ", ")
            + "; tile form " + errors([tile_form(p, shape(r)) for r in calls], measured).replace(" | ", ", ")
            + " (median, p90, ratio)"]


def table_lines(sweep_dir, tilewave, gpu, other=None, other_gpu=None):
    data = {name: rows(os.path.join(sweep_dir, name)) for name in SAMPLES}
    p = fit_tile_form(data[FIT])
    first = {r["case"]: r["fused_us"] for r in data[FIT]}
    lines = ["| sample | mask | calls | today: median | p90 | ratio | tile form: median | p90 | ratio |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name in SAMPLES:
        for mask in ("all", "none", "float32", "bool"):
            sel = [r for r in data[name] if mask == "all" or shape(r)["mask"] == mask]
            measured = [r["fused_us"] for r in sel]
            lines.append(f"| {name} | {mask} | {len(sel)} | {errors(tilewave_times(tilewave, sel, gpu), measured)} | "
                         f"{errors([tile_form(p, shape(r)) for r in sel], measured)} |")
    header = json.loads(gzip.open(os.path.join(sweep_dir, FIT, "attention_sweep.jsonl.gz"), "rt").readline())
    kernels = sorted({r["fused"].split("_kernel")[0] for name in SAMPLES for r in data[name]})
    same = [abs(r["fused_us"] / first[r["case"]] - 1) for r in data["repeat"] if r["case"] in first]
    return ([f"{sum(len(v) for v in data.values())} fused calls on the {header['gpu']} (torch {header['torch']}, "
             f"cuDNN {header['cudnn']}); kernels: {', '.join(k.split('sdpa_')[-1] for k in kernels)}", ""]
            + lines + ["", "tile form fitted on " + FIT + ": "
                       + ", ".join(f"{n} {v:.3f}" for n, v in zip(PARAMS, p)),
                       f"repeat against {FIT}, the same shapes: median |difference| {100 * statistics.median(same):.1f}%"
                       f" over {len(same)} calls",
                       "other tiles (queries x keys), each fitted on " + FIT + ", median error on held_out_sample: "
                       + ", ".join(f"{q}x{kv} {held_out_median(data, (q, kv))}" for q, kv in OTHER_TILES)]
            + (other_gpu_lines(other, p, tilewave, other_gpu) if other else []))


def held_out_median(data, tile):
    p = fit_tile_form(data[FIT], tile)
    err = [abs(tile_form(p, shape(r), tile) / r["fused_us"] - 1) for r in data["held_out_sample"]]
    return f"{100 * statistics.median(err):.1f}%"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sweep_dir", help="an attention_sweep folder (calibrate/data/h100/attention_sweep)")
    ap.add_argument("--tilewave", help="the CLI whose build holds the Python module (where `import tilewave` finds none)")
    ap.add_argument("--gpu", default="h100", help="the GPU file tilewave predicts with (the sweep's GPU)")
    ap.add_argument("--other", help="an sdpa_paths.jsonl of another GPU of the same SM count, judged with the form's "
                                    "constants as fitted here (calibrate/data/h200/sdpa_paths/sdpa_paths.jsonl)")
    ap.add_argument("--other-gpu", default="h200", help="the GPU file for --other's tilewave column")
    args = ap.parse_args()
    for line in table_lines(args.sweep_dir, tilewave_module(args.tilewave), args.gpu, args.other, args.other_gpu):
        print(line)


if __name__ == "__main__":
    main()
