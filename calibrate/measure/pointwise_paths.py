#!/usr/bin/env python3
"""cuDNN's paths for pointwise (1x1, stride 1) convolutions under timm's
harness: fp32 weights under torch.autocast(float16), cudnn.benchmark on, NCHW
or channels_last. The evidence for which pointwise convolutions cuDNN runs on
NCHW directly (a GEMM per image over its H x W positions) and which it moves
through nchwToNhwc / nhwcToNchw transforms into an NHWC kernel
(docs/model.md "Layout pass": the H200 corpus's profiles hold 7,240 such
convolutions that tilewave runs on NCHW), and of what either path takes.

Cases, on torch.randn data [batch, C, side, side] into K filters:
  batch 16, 64, 256; side 7, 14, 28, 56; C and K each 64 to 2048 (x2);
  NCHW, then channels_last (model and input converted, as timm's
  --channels-last does), then `nchw_matmul`: the direct path alone, the
  same product as one batched GEMM per image on NCHW memory (torch.matmul
  of the half [K, C] weight with the half [batch, C, side*side] input, as
  cuBLAS runs it), for the shapes where cuDNN's benchmark may choose the
  transforms instead.
Each case warms up (cudnn.benchmark times its algorithms on the first call),
then one profiler session over REPS calls; a row holds the call's kernels in
launch order, each the median over the calls. Rows are written as they are
measured; a deadline leaves the rest out and says so.

usage (GPU machine): python3 calibrate/measure/pointwise_paths.py --out DIR [--deadline-s 300] [--batches 16,64,256]
writes DIR/pointwise_paths.jsonl: a header row, then one row per case
{"case", "layout", "batch", "side", "C", "K", "kernels": [[name, median_us], ...] (one call, launch order),
 "call_us", "error"}
"""
import argparse
import json
import os
import sys
import time

if __name__ == "__main__" and not __package__:  # run as a path (calibrate/measure/_path_entry.py)
    import _path_entry
    _path_entry.run_as_module(__file__)
    sys.exit()

import torch  # noqa: E402  (after the path entry above)

from calibrate.gpu_state import profiled_header  # noqa: E402
from calibrate.measure.profiled_calls import REPS, call_sequence  # noqa: E402

BATCHES = (16, 64, 256)
SIDES = (7, 14, 28, 56)
CHANNELS = (64, 128, 256, 512, 1024, 2048)


def cases(batches=BATCHES):
    for layout in ("nchw", "channels_last", "nchw_matmul"):
        for batch in batches:
            for side in SIDES:
                for c in CHANNELS:
                    for k in CHANNELS:
                        yield layout, batch, side, c, k


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--deadline-s", type=float, default=300)
    ap.add_argument("--batches", default=",".join(map(str, BATCHES)), help="comma-separated (default %(default)s)")
    args = ap.parse_args()
    try:
        batches = [int(b) for b in args.batches.split(",")]
        if not batches or min(batches) < 1:
            raise ValueError
    except ValueError:
        ap.error("--batches: positive integers separated by commas, not %r" % args.batches)
    start = time.time()
    torch.backends.cudnn.benchmark = True  # timm's benchmark.py
    os.makedirs(args.out, exist_ok=True)
    done = 0
    with open(os.path.join(args.out, "pointwise_paths.jsonl"), "w") as out:
        out.write(json.dumps(profiled_header(
            "calibrate/measure/pointwise_paths.py", REPS, data="torch.randn fp32 input, fp32 Conv2d weights",
            call="nn.Conv2d(C, K, 1, bias=False) under torch.autocast(cuda, float16), inference_mode, "
                 "cudnn.benchmark; nchw_matmul: torch.matmul(half [K, C], half [batch, C, side*side])")) + "\n")
        for layout, batch, side, c, k in cases(batches):
            if time.time() - start > args.deadline_s:
                print("deadline: %d cases measured, the rest left out" % done, flush=True)
                return
            if layout == "nchw_matmul":
                w = torch.randn(k, c, device="cuda", dtype=torch.half)
                x = torch.randn(batch, c, side * side, device="cuda", dtype=torch.half)

                def call():
                    with torch.inference_mode():
                        return torch.matmul(w, x)
            else:
                fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
                conv = torch.nn.Conv2d(c, k, 1, bias=False).cuda().to(memory_format=fmt)
                x = torch.randn(batch, c, side, side, device="cuda").contiguous(memory_format=fmt)

                def call():
                    with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16):
                        return conv(x)
            kernels, error = call_sequence(call)
            row = {"case": "%s b%d %dx%d C%d K%d" % (layout, batch, side, side, c, k), "layout": layout,
                   "batch": batch, "side": side, "C": c, "K": k, "kernels": kernels,
                   "call_us": sum(us for _, us in kernels), "error": error}
            out.write(json.dumps(row) + "\n")
            out.flush()
            done += 1
            print("%-36s %9.1f us  %s" % (row["case"], row["call_us"], " | ".join(
                "%s %.1f" % (n[:40], us) for n, us in kernels) or error), flush=True)
        print("%d cases in %.0f s" % (done, time.time() - start), flush=True)


if __name__ == "__main__":
    main()
