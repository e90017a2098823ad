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

C = 768
TOTALS = tuple(1 << e for e in range(14, 29, 2))   # 16 K to 256 M values
REPS = 10
H, S = torch.float16, torch.float32


# op: (its operands' types, the call); an operand of type (H, "row") is a [C] vector broadcast over the rows.
CALLS = {
    "relu_half": ((H,), F.relu),
    "add_half": ((H, H), torch.add),
    "add_f32": ((S, S), torch.add),
    "add_mixed": ((S, H), torch.add),
    "add_bcast": ((H, (H, "row")), torch.add),
    "gelu_erf_half": ((H,), F.gelu),
    "gelu_tanh_half": ((H,), lambda x: F.gelu(x, approximate="tanh")),
    "gelu_erf_f32": ((S,), F.gelu),
    "silu_half": ((H,), F.silu),
    "sigmoid_half": ((H,), torch.sigmoid),
    "tanh_half": ((H,), torch.tanh),
    "exp_half": ((H,), torch.exp),
    "mish_half": ((H,), F.mish),
}
OPS = tuple(CALLS)


def call_of(op, total):
    """A call of `op` on fresh torch.randn operands of `total` values ([total / C, C])."""
    rows = max(1, total // C)
    types, fn = CALLS[op]
    args = [torch.randn(C, device="cuda", dtype=t[0]) if isinstance(t, tuple) else
            torch.randn(rows, C, device="cuda", dtype=t) for t in types]
    return lambda: fn(*args)


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
        out.write(json.dumps(profiled_header("calibrate/measure/eltwise_paths.py", REPS, data="torch.randn",
                                             row_width=C)) + "\n")
        done = 0
        for total in totals:
            for op in ops:
                if time.time() - start > args.deadline_s:
                    print("deadline: %d shapes measured, the rest left out" % done, flush=True)
                    return
                times, _ = profile(call_of(op, total), REPS)
                kernel, us = main_kernel(times, REPS)
                out.write(json.dumps({"op": op, "elems": max(1, total // C) * C, "kernel": kernel,
                                      "kernels": sorted(times), "median_us": statistics.median(us) if us else None,
                                      "us": us}) + "\n")
                out.flush()
                done += 1
        print("%d shapes in %.0f s" % (done, time.time() - start), flush=True)


if __name__ == "__main__":
    main()
