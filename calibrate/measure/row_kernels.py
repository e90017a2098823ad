#!/usr/bin/env python3
"""PyTorch eager's row kernels over a grid of row widths, rows and types, each
kernel timed by the profiler (the same kernel durations run.py's profiles
record): the evidence for the softmax paths of docs/model.md "Memory-bound
kernels" on shapes no network chose.

For every width (values per row) and total size, on torch.randn data:
  softmax      torch.softmax(x, -1): half in, half out (`.half()` networks)
  softmax_amp  torch.softmax(x, -1, dtype=torch.float32): half in, fp32 out
               (what autocast runs, softmax being on its fp32 list)
  softmax_f32  fp32 in and out
  layer_norm   F.layer_norm over the last axis with weight and bias, half
  layer_norm_f32  the same in fp32 (a ViT's fp32 residual stream under autocast)
  layer_norm_amp  half input under torch.autocast(float16): autocast runs
               layer_norm in fp32, so a cast, then the fp32 kernel
  softmax_dim1 torch.softmax over axis 1 of [rows, width, 8], half: the
               softmax of an axis that is not the last (PyTorch's spatial
               kernel), only for a few widths
Each shape is warmed up (3 calls), then profiled over REPS calls in its own
short profiler session; a row records every kernel name the calls launched
and the median duration of the row kernel (the kernel launched once per
call). Rows are written as they are measured, so a deadline keeps them.

usage (GPU machine): python3 calibrate/measure/row_kernels.py --out DIR [--deadline-s 300] [--ops OP,...]
(--ops: only those ops)
writes DIR/row_kernels.jsonl: a header row, then one row per shape
{"op", "width", "rows", "in", "out", "kernel", "kernels", "median_us", "us"}
"""
import argparse
import json
import os
import statistics
import sys
import time

if __name__ == "__main__" and not __package__:  # run as a path (calibrate/measure/_path_entry.py)
    import _path_entry
    _path_entry.run_as_module(__file__)
    sys.exit()

import torch  # noqa: E402  (after the path entry above)
import torch.nn.functional as F  # noqa: E402

from calibrate.gpu_state import profiled_header  # noqa: E402
from calibrate.measure.profiled_calls import main_kernel, profile  # noqa: E402; warm up, then REPS calls profiled

WIDTHS = (8, 12, 16, 24, 32, 48, 49, 64, 96, 128, 144, 196, 197, 256, 384, 401, 512, 577, 785, 1024,
          1025, 1536, 2048, 4096)
TOTALS = (1 << 18, 1 << 22, 1 << 26)   # values per tensor: L2-resident to DRAM-bound
DIM1_WIDTHS = (8, 49, 197, 1024)
REPS = 10


def cases():
    for width in WIDTHS:
        for total in TOTALS:
            rows = max(1, total // width)
            yield "softmax", width, rows, torch.float16, torch.float16
            yield "softmax_amp", width, rows, torch.float16, torch.float32
            yield "softmax_f32", width, rows, torch.float32, torch.float32
            yield "layer_norm", width, rows, torch.float16, torch.float16
            yield "layer_norm_f32", width, rows, torch.float32, torch.float32
            yield "layer_norm_amp", width, rows, torch.float16, torch.float32
    for width in DIM1_WIDTHS:
        for total in TOTALS:
            yield "softmax_dim1", width, max(1, total // (width * 8)), torch.float16, torch.float16


def call_of(op, width, rows, dtype_in, dtype_out):
    if op == "softmax_dim1":
        x = torch.randn(rows, width, 8, device="cuda", dtype=dtype_in)
        return lambda: torch.softmax(x, 1)
    x = torch.randn(rows, width, device="cuda", dtype=dtype_in)
    if op.startswith("layer_norm"):
        # autocast's layer_norm keeps fp32 weights (a module's parameters)
        w = torch.randn(width, device="cuda", dtype=dtype_out)
        b = torch.randn(width, device="cuda", dtype=dtype_out)
        if op == "layer_norm_amp":
            def amp():
                with torch.autocast("cuda", dtype=torch.float16):
                    return F.layer_norm(x, (width,), w, b)
            return amp
        return lambda: F.layer_norm(x, (width,), w, b)
    if dtype_out != dtype_in:
        return lambda: torch.softmax(x, -1, dtype=dtype_out)
    return lambda: torch.softmax(x, -1)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--deadline-s", type=float, default=300)
    ap.add_argument("--ops", help="comma-separated ops to measure (default: all)")
    args = ap.parse_args()
    only = set(args.ops.split(",")) if args.ops else None
    unknown = sorted((only or set()) - {op for op, *_ in cases()})
    if unknown:
        ap.error("--ops: unknown op %s" % ", ".join(unknown))
    start = time.time()
    os.makedirs(args.out, exist_ok=True)
    names = {torch.float16: "fp16", torch.float32: "fp32"}
    with open(os.path.join(args.out, "row_kernels.jsonl"), "w") as out:
        out.write(json.dumps(profiled_header("calibrate/measure/row_kernels.py", REPS, data="torch.randn")) + "\n")
        done = 0
        for op, width, rows, din, dout in cases():
            if only is not None and op not in only:
                continue
            if time.time() - start > args.deadline_s:
                print("deadline: %d shapes measured, the rest left out" % done, flush=True)
                break
            times, _ = profile(call_of(op, width, rows, din, dout), REPS)
            kernel, us = main_kernel(times, REPS)
            out.write(json.dumps({"op": op, "width": width, "rows": rows, "in": names[din], "out": names[dout],
                                  "kernel": kernel, "kernels": sorted(times),
                                  "median_us": statistics.median(us) if us else None, "us": us}) + "\n")
            out.flush()
            done += 1
        print("%d shapes in %.0f s" % (done, time.time() - start), flush=True)


if __name__ == "__main__":
    main()
