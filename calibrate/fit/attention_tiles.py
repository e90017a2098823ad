#!/usr/bin/env python3
"""Fits the fused attention kernel's tile terms (docs/model.md "Attention";
docs/validation.md "Attention: the fused kernel's time") on
calibrate/measure/attention_sweep.py's folders, and judges them.

Under autocast on Hopper, PyTorch 2.11 runs every fused call of the sweep in
cuDNN's `sdpa_sm90_flash_fprop_wgmma_f16` kernel: a `64x128x64` variant up to
a head size of 64, a `64x128x128` one above. tilewave prices it by that
kernel's work units: a CTA owns 128 queries of one (batch, head) and walks
the keys in blocks of 128, and the SMs run the CTAs back to back:

    t = attention_floor_us + max(1, CTAs / SMs) x (cta_us + key_blocks x (block_us + mask_us))
    CTAs = batch x heads x ceil(q / 128), key_blocks = ceil(kv / 128)

with cta_us and block_us of the variant (`attention_cta_us`,
`attention_block_us`; `attention_wide_*` above a head size of 64) and
mask_us where a mask is read (`attention_mask_block_us` for rows of an even
length, `attention_mask_odd_block_us` for odd ones). A GPU file without
them prices the kernel as a GEMM, near the tensor cores' rate.

The seven are fitted by scipy's least_squares on the log of time, each
evaluation tilewave's own cost of every call (the module's predict_layers
on a copy of the GPU file holding the candidate values), on
`core_and_sample`; the table judges each sample with the GPU file's values
and with the fitted ones. `held_out_sample` is 1,520 other shapes of the same
grid drawn with another seed, `repeat` the first sample measured again in
the same call, and --other another GPU's sdpa_paths.py calls.

usage: python3 -m calibrate.fit.attention_tiles calibrate/data/h100/attention_sweep [--tilewave build/analyzer/tilewave]
         [--gpu h100] [--other calibrate/data/h200/sdpa_paths/sdpa_paths.jsonl [--other-gpu h200]] [--write]
(--write: the seven go into gpu_models/h200.json's "eager" set with their provenance, through
tilewave.write_gpu; the H100 and H200 share SM count and clock, and --other checks the H200)
"""
import argparse
import os
import statistics
import sys

import numpy as np
from scipy.optimize import least_squares

from calibrate.cli import InputError
from calibrate.fit.sweep_fit import add_common_args, errors, layer_times, read_sweep, report
from calibrate.module import tilewave_module
from calibrate.pair.harness_runs import commit

FIT = "core_and_sample"
SAMPLES = (FIT, "held_out_sample", "repeat")
PARAMS = ("attention_floor_us", "attention_cta_us", "attention_block_us", "attention_wide_cta_us",
          "attention_wide_block_us", "attention_mask_block_us", "attention_mask_odd_block_us")
COMMAND = ("python3 -m calibrate.fit.attention_tiles calibrate/data/h100/attention_sweep "
           "--other calibrate/data/h200/sdpa_paths/sdpa_paths.jsonl --write")


def rows(folder):
    """The sweep's rows that ran a fused kernel."""
    _, out = read_sweep(os.path.join(folder, "attention_sweep.jsonl.gz"), ("gpu", "torch", "cudnn"), ())
    return [r for r in out if isinstance(r, dict) and "case" in r and r.get("fused_us")]


def layer(r):
    """A call as tilewave's layer form: the fused kernel's problem, masked where a mask is passed."""
    b, h, q, d = r["q"]
    out = {"op": "attention", "batch_heads": b * h, "q_len": q, "kv_len": r["k"][2], "head_dim": d, "dtype": "fp16"}
    if r["mask"]:
        out["masked"] = True
    return out


def tilewave_times(tw, calls, gpu, values=None):
    """tilewave's time of each call on GPU file `gpu`, with `values` (PARAMS' order) in place of its own."""
    return layer_times(tw, [layer(r) for r in calls], gpu, PARAMS, values)


def fit(tw, calls, gpu):
    measured = np.log([r["fused_us"] for r in calls])
    res = least_squares(lambda p: np.log(tilewave_times(tw, calls, gpu, p)) - measured,
                        [2.0, 1.0, 1.0, 1.0, 2.0, 1.5, 5.0], bounds=([0.0] * len(PARAMS), [20.0] * 6 + [40.0]),
                        diff_step=1e-3)
    return [round(float(v), 4) for v in res.x]


def other_calls(path):
    """calibrate/measure/sdpa_paths.py's 4-D fused calls of another GPU (the fused kernel read from each row's
    kernels), and its header."""
    header, found = read_sweep(path, ("gpu",), ("case", "q", "k", "mask"))
    calls = []
    for r in found:
        fused = [k for k in r.get("kernels", []) if "sdpa" in k[0] or "flash" in k[0] or "fmha" in k[0]]
        if fused and len(r["q"]) == 4:
            calls.append({"case": r["case"], "q": r["q"], "k": r["k"], "mask": r["mask"], "fused_us": fused[0][2]})
    return header, calls


def table_lines(sweep_dir, tw, gpu, other=None, other_gpu=None, values=None):
    """The table, with the constants `values` (PARAMS' order; fitted on FIT when None)."""
    data = {name: rows(os.path.join(sweep_dir, name)) for name in SAMPLES}
    p = values if values is not None else fit(tw, data[FIT], gpu)
    lines = [f"| sample | mask | calls | {gpu}'s file: median | p90 | ratio | fitted: median | p90 | ratio |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name in SAMPLES:
        for mask in ("all", "none", "float32", "bool"):
            sel = [r for r in data[name] if mask == "all" or (r["mask"] or ["none"])[0] == mask]
            measured = [r["fused_us"] for r in sel]
            lines.append(f"| {name} | {mask} | {len(sel)} | {errors(tilewave_times(tw, sel, gpu), measured)} | "
                         f"{errors(tilewave_times(tw, sel, gpu, p), measured)} |")
    header, _ = read_sweep(os.path.join(sweep_dir, FIT, "attention_sweep.jsonl.gz"), ("gpu", "torch", "cudnn"), ())
    kernels = sorted({r["fused"].split("_kernel")[0] for name in SAMPLES for r in data[name]})
    first = {r["case"]: r["fused_us"] for r in data[FIT]}
    same = [abs(r["fused_us"] / first[r["case"]] - 1) for r in data["repeat"] if r["case"] in first]
    out = ([f"{sum(len(v) for v in data.values())} fused calls on the {header['gpu']} (torch {header['torch']}, "
            f"cuDNN {header['cudnn']}); kernels: {', '.join(k.split('sdpa_')[-1] for k in kernels)}", ""]
           + lines + ["", "fitted on " + FIT + ": " + ", ".join(f"{n} {v:.3f}" for n, v in zip(PARAMS, p)),
                      f"repeat against {FIT}, the same shapes: median |difference| {100 * statistics.median(same):.1f}%"
                      f" over {len(same)} calls"])
    if other:
        head, calls = other_calls(other)
        measured = [r["fused_us"] for r in calls]
        out.append(f"the {head['gpu']}'s {len(calls)} fused calls of sdpa_paths.py (torch {head['torch']}): "
                   f"{other_gpu}'s file " + errors(tilewave_times(tw, calls, other_gpu), measured).replace(" | ", ", ")
                   + "; fitted " + errors(tilewave_times(tw, calls, other_gpu, p), measured).replace(" | ", ", ")
                   + " (median, p90, ratio)")
    return out, p


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    add_common_args(ap, "an attention_sweep folder (calibrate/data/h100/attention_sweep)")
    ap.add_argument("--other", help="an sdpa_paths.jsonl of another GPU of the same SM count and clock, judged with "
                                    "the constants fitted here (calibrate/data/h200/sdpa_paths/sdpa_paths.jsonl)")
    ap.add_argument("--other-gpu", default="h200", help="the GPU file for --other")
    args = ap.parse_args()
    try:
        lines, values = table_lines(args.sweep_dir, tilewave_module(args.tilewave), args.gpu, args.other, args.other_gpu)
    except InputError as e:
        sys.exit("attention_tiles.py: %s" % e)
    report(args, lines, PARAMS, values,
           f"{COMMAND} (commit {commit()}): calibrate/data/h100/attention_sweep/{FIT}, fused "
           "scaled_dot_product_attention calls under autocast fp16 on an H100 SXM (the H200's SM count "
           "and clock; checked on the H200's calibrate/data/h200/sdpa_paths calls)")


if __name__ == "__main__":
    main()
