#!/usr/bin/env python3
"""PyTorch eager's elementwise kernels over a range of sizes, each kernel timed
by the profiler (as row_kernels.py times row kernels): the evidence for the
elementwise paths of docs/model.md "Memory-bound kernels" (vectorised,
unrolled over operands of two types, strided over a broadcast operand) and for
activations whose arithmetic may outweigh their traffic (GELU's erf).

For every total size, on torch.randn data, [N, C] with C = 768:
  relu_half      F.relu, half: the vectorised path's traffic
  add_half       half + half: vectorised
  add_f32        fp32 + fp32: vectorised
  add_mixed      fp32 + half -> fp32 (a ViT's residual under autocast): unrolled
  add_bcast      half + a [C] half vector: strided
  gelu_erf_half  F.gelu (erf), half
  gelu_tanh_half F.gelu(approximate="tanh"), half
  gelu_erf_f32   F.gelu (erf), fp32
  silu_half      F.silu, half
  sigmoid_half, tanh_half, exp_half   torch.sigmoid, torch.tanh, torch.exp, half
  mish_half      F.mish, half (a softplus and a tanh)
Each shape is warmed up (3 calls), then profiled over REPS calls; a row
records every kernel name and the median duration of the kernel launched
once per call. Rows are written as they are measured.

usage (GPU machine): python3 calibrate/measure/eltwise_paths.py --out DIR [--deadline-s 200]
       [--ops OP,...] [--totals N,...]   (only those ops; tensor sizes in values)
writes DIR/eltwise_paths.jsonl: a header row, then
{"op", "elems", "kernel", "kernels", "median_us", "us"}
"""
import argparse
import json
import os
import statistics
import time

import torch
import torch.nn.functional as F

C = 768
TOTALS = tuple(1 << e for e in range(14, 29, 2))   # 16 K to 256 M values
REPS = 10
H, S = torch.float16, torch.float32


def call_of(op, total):
    rows = max(1, total // C)
    def t(dtype):
        return torch.randn(rows, C, device="cuda", dtype=dtype)
    if op == "relu_half":
        x = t(H)
        return lambda: F.relu(x)
    if op == "add_half":
        x, y = t(H), t(H)
        return lambda: x + y
    if op == "add_f32":
        x, y = t(S), t(S)
        return lambda: x + y
    if op == "add_mixed":
        x, y = t(S), t(H)
        return lambda: x + y
    if op == "add_bcast":
        x, b = t(H), torch.randn(C, device="cuda", dtype=H)
        return lambda: x + b
    if op == "gelu_erf_half":
        x = t(H)
        return lambda: F.gelu(x)
    if op == "gelu_tanh_half":
        x = t(H)
        return lambda: F.gelu(x, approximate="tanh")
    if op == "gelu_erf_f32":
        x = t(S)
        return lambda: F.gelu(x)
    if op == "silu_half":
        x = t(H)
        return lambda: F.silu(x)
    if op == "sigmoid_half":
        x = t(H)
        return lambda: torch.sigmoid(x)
    if op == "tanh_half":
        x = t(H)
        return lambda: torch.tanh(x)
    if op == "exp_half":
        x = t(H)
        return lambda: torch.exp(x)
    if op == "mish_half":
        x = t(H)
        return lambda: F.mish(x)
    raise ValueError(op)


OPS = ("relu_half", "add_half", "add_f32", "add_mixed", "add_bcast", "gelu_erf_half", "gelu_tanh_half",
       "gelu_erf_f32", "silu_half", "sigmoid_half", "tanh_half", "exp_half", "mish_half")


def profile(fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(REPS):
            fn()
        torch.cuda.synchronize()
    return [(e.name, e.device_time) for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--deadline-s", type=float, default=200)
    ap.add_argument("--ops", help="comma-separated ops to measure (default: all)")
    ap.add_argument("--totals", help="comma-separated tensor sizes in values (default: 16 K to 256 M by 4x)")
    args = ap.parse_args()
    ops = args.ops.split(",") if args.ops else OPS
    unknown = [o for o in ops if o not in OPS]
    if unknown:
        ap.error("unknown op(s) %s; ops: %s" % (", ".join(unknown), ", ".join(OPS)))
    try:
        totals = tuple(int(float(v)) for v in args.totals.split(",")) if args.totals else TOTALS
    except ValueError:
        ap.error("--totals: comma-separated numbers of values, got %r" % args.totals)
    if any(v < 1 or v > 1 << 31 for v in totals):
        ap.error("--totals: each size from 1 to 2^31 values")
    start = time.time()
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "eltwise_paths.jsonl"), "w") as out:
        out.write(json.dumps({"header": True, "tool": "calibrate/measure/eltwise_paths.py", "torch": torch.__version__,
                              "gpu": torch.cuda.get_device_name(), "reps": REPS, "data": "torch.randn",
                              "row_width": C}) + "\n")
        done = 0
        for total in totals:
            for op in ops:
                if time.time() - start > args.deadline_s:
                    print("deadline: %d shapes measured, the rest left out" % done, flush=True)
                    return
                kernels = profile(call_of(op, total))
                counts = {}
                for name, _ in kernels:
                    counts[name] = counts.get(name, 0) + 1
                once = [n for n, c in counts.items() if c == REPS]
                kernel = max(once, key=lambda n: sum(us for m, us in kernels if m == n)) if once else None
                us = [t for n, t in kernels if n == kernel]
                out.write(json.dumps({"op": op, "elems": max(1, total // C) * C, "kernel": kernel,
                                      "kernels": sorted(counts), "median_us": statistics.median(us) if us else None,
                                      "us": us}) + "\n")
                out.flush()
                done += 1
        print("%d shapes in %.0f s" % (done, time.time() - start), flush=True)


if __name__ == "__main__":
    main()
