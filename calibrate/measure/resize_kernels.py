#!/usr/bin/env python3
"""PyTorch eager's upsampling kernels (F.interpolate, mostly scale 2, as timm's
EfficientFormerV2 and FPN-style necks call it) over output map and planes,
each kernel timed by the profiler (profiled_calls.profile). The evidence for how
tilewave prices a Resize (docs/model.md "Memory-bound kernels"): whether
PyTorch's NCHW bilinear kernel, which gives each thread one output position
and loops over every plane (batch x channels), runs in planes x a per-plane
latency once the output positions are too few to fill the GPU, as
EfficientFormerV2-S1's 90.9 ms upsample at batch 256 suggests; and whether the
channels_last and nearest kernels spread over every output value instead.

Cases, on torch.randn data of shape [planes / 64, 64, side / 2, side / 2],
upsampled to side x side:
  bilinear_amp   fp16 input, bilinear, under torch.autocast(cuda, float16)
                 (a network's activation under timm's harness)
  bilinear_f32   fp32 input, bilinear, no autocast
  bilinear_half  fp16 input, bilinear, no autocast (.half() networks)
  nearest_half   fp16 input, nearest, no autocast
  nearest_amp    fp16 input, nearest, under autocast (on its fp32 list too?)
  nearest_f32    fp32 input, nearest, no autocast
  nearest_x4_half  fp16 input, nearest, scale 4 (HRNet's fuse layers upsample
                 by 2, 4 and 8), input side = side // 4
  bicubic_amp, bicubic_f32, bicubic_half  as the bilinear ones, bicubic (the
                 kernel CrossViT's input resize runs)
each in NCHW and channels_last, output side 14, 28, 56, 112 and planes 64 to
32,768 (x4, then 32,768). Rows are written as they are measured; a deadline
leaves the rest out and says so.

usage (GPU machine): python3 calibrate/measure/resize_kernels.py --out DIR [--deadline-s 180]
writes DIR/resize_kernels.jsonl: a header row, then one row per case
{"case", "mode", "layout", "input", "output", "planes", "kernels": [[name, launches a call, median_us], ...],
 "call_us", "error"}
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
from calibrate.measure.profiled_calls import REPS, profile  # noqa: E402; warm up, then REPS calls in one profiler session

CHANNELS = 64
SIDES = (14, 28, 56, 112)
PLANES = (64, 256, 1024, 4096, 16384, 32768)
# mode: (input type, interpolation, autocast, scale)
MODES = {"bilinear_amp": (torch.float16, "bilinear", True, 2), "bilinear_f32": (torch.float32, "bilinear", False, 2),
         "bilinear_half": (torch.float16, "bilinear", False, 2), "nearest_half": (torch.float16, "nearest", False, 2),
         "nearest_amp": (torch.float16, "nearest", True, 2), "nearest_f32": (torch.float32, "nearest", False, 2),
         "nearest_x4_half": (torch.float16, "nearest", False, 4),
         "bicubic_amp": (torch.float16, "bicubic", True, 2), "bicubic_f32": (torch.float32, "bicubic", False, 2),
         "bicubic_half": (torch.float16, "bicubic", False, 2)}


def cases():
    for mode in MODES:
        for layout in ("nchw", "channels_last"):
            for side in SIDES:
                for planes in PLANES:
                    yield mode, layout, side, planes


def call_of(mode, layout, side, planes):
    dtype, interpolation, autocast, scale = MODES[mode]
    x = torch.randn(planes // CHANNELS, CHANNELS, side // scale, side // scale, device="cuda", dtype=dtype)
    if layout == "channels_last":
        x = x.contiguous(memory_format=torch.channels_last)
    kwargs = {"align_corners": False} if interpolation != "nearest" else {}

    def call():
        with torch.inference_mode(), torch.autocast("cuda", dtype=torch.float16, enabled=autocast):
            return F.interpolate(x, scale_factor=scale, mode=interpolation, **kwargs)
    return x, call


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--deadline-s", type=float, default=180)
    args = ap.parse_args()
    start = time.time()
    os.makedirs(args.out, exist_ok=True)
    done = 0
    with open(os.path.join(args.out, "resize_kernels.jsonl"), "w") as out:
        out.write(json.dumps(profiled_header(
            "calibrate/measure/resize_kernels.py", REPS, data="torch.randn", channels=CHANNELS,
            call="F.interpolate(x, scale_factor (2; 4 for nearest_x4), mode, align_corners=False but for nearest)")) + "\n")
        for mode, layout, side, planes in cases():
            if time.time() - start > args.deadline_s:
                print("deadline: %d cases measured, the rest left out" % done, flush=True)
                return
            x, call = call_of(mode, layout, side, planes)
            times, error = profile(call)
            kernels = [[k, len(us) / REPS, statistics.median(us)] for k, us in times.items()]
            row = {"case": "%s %s side %d planes %d" % (mode, layout, side, planes), "mode": mode, "layout": layout,
                   "input": list(x.shape), "output": [x.shape[0], CHANNELS, x.shape[2] * MODES[mode][3],
                                                      x.shape[3] * MODES[mode][3]], "planes": planes,
                   "kernels": kernels, "call_us": sum(c * us for _, c, us in kernels), "error": error}
            out.write(json.dumps(row) + "\n")
            out.flush()
            done += 1
            print("%-45s %10.1f us  %s" % (row["case"], row["call_us"], " | ".join(
                "%s x%g %.1f" % (k[:50], c, us) for k, c, us in kernels) or error), flush=True)
            del x, call
        print("%d cases in %.0f s" % (done, time.time() - start), flush=True)


if __name__ == "__main__":
    main()
